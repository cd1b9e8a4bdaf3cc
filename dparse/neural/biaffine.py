"""Biaffine scorers (Dozat and Manning 2017) over the encoder's node vectors [B, T, D].

``ArcScorer``: ``scores[b, h, m]`` float32 [B, T, T], the arc h -> m (head first, as the
graph decoders read arcs). ``LabelScorer``: each arc's label scores for given heads
(``at_heads``: [B, T, L], word m's labels with head ``heads[b, m]``), and the MLP features
its weights meet (``features``), from which a parse scores the labels of the arcs it needs
(:mod:`dparse.neural.labels`)."""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    """One linear layer, a leaky ReLU and dropout: [..., D] -> [..., out]."""

    def __init__(self, size: int, out: int, dropout: float) -> None:
        super().__init__()
        self.linear = nn.Linear(size, out)
        self.act = nn.LeakyReLU(0.1)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.act(self.linear(x)))


def with_one(x: torch.Tensor) -> torch.Tensor:
    """x [..., D] with a column of ones appended: [..., D+1] (the biaffine's bias terms)."""
    return torch.cat([x, x.new_ones(x.shape[:-1] + (1,))], dim=-1)


class ArcScorer(nn.Module):
    """s(h, m) = [dep_m; 1]^T W head_h: a bilinear term and a head prior."""

    def __init__(self, size: int, dim: int, dropout: float) -> None:
        super().__init__()
        self.head = MLP(size, dim, dropout)
        self.dep = MLP(size, dim, dropout)
        self.weight = nn.Parameter(torch.zeros(dim + 1, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dep = with_one(self.dep(x)) @ self.weight  # [B, T, dim]
        return self.head(x) @ dep.transpose(1, 2)  # [B, T(h), T(m)]


class LabelScorer(nn.Module):
    """s(h, m, l) = [dep_m; 1]^T W_l [head_h; 1] for each of L labels."""

    def __init__(self, size: int, dim: int, n_labels: int, dropout: float) -> None:
        super().__init__()
        self.head = MLP(size, dim, dropout)
        self.dep = MLP(size, dim, dropout)
        self.weight = nn.Parameter(torch.zeros(n_labels, dim + 1, dim + 1))

    def at_heads(self, x: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        """Label scores [B, T, L] of word m with head heads[b, m] (int64 [B, T], >= 0)."""
        head = with_one(self.head(x))
        chosen = head.gather(1, heads[:, :, None].expand(-1, -1, head.shape[-1]))
        return torch.einsum("btd,lde,bte->btl", with_one(self.dep(x)), self.weight, chosen)

    def features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The dependent and head features [B, T, dim+1] (ones appended): s(h, m, l) =
        dep[m] @ weight[l] @ head[h]."""
        return with_one(self.dep(x)), with_one(self.head(x))
