"""The training losses of a batch, each averaged over its scored words (those with a gold
head; labels: those with a gold head and a known label). Arc scores are [B, N+1, N+1] (head
first), ``heads`` and ``labels`` int64 [B, N+1] (-1 where not annotated or padding)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from dparse.neural.crf import arc_mask, log_partition, tree_scores


def head_selection_loss(scores: torch.Tensor, heads: torch.Tensor,
                        lengths: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each word's gold head among the nodes of its sentence (itself left
    out): the local loss of Dozat and Manning (2017)."""
    allowed = arc_mask(lengths, scores.shape[-1])
    logits = scores.masked_fill(~allowed, float("-inf")).transpose(1, 2)  # [B, m, h]
    scored = heads >= 0
    return F.cross_entropy(logits[scored], heads[scored])


def crf_loss(scores: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor, *,
             projective: bool, single_root: bool) -> torch.Tensor:
    """The negative log-likelihood of the gold trees under the tree CRF
    (:mod:`dparse.neural.crf`), per word: log Z minus the gold tree's score. Sentences with an
    unannotated head are left out (their gold tree is not a tree)."""
    complete = ((heads >= 0) | (torch.arange(heads.shape[1], device=heads.device)[None, :]
                                > lengths[:, None]))
    complete[:, 0] = True
    whole = complete.all(dim=1)
    if not whole.any():
        return scores.sum() * 0.0
    scores, heads, lengths = scores[whole].double(), heads[whole], lengths[whole]
    nll = log_partition(scores, lengths, projective=projective, single_root=single_root)
    nll = nll - tree_scores(scores, heads, lengths)
    return (nll.sum() / lengths.sum()).float()


def label_loss(label_scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each word's gold label; ``label_scores`` [B, N+1, L] at its gold
    head. Also a tag head's loss: ``label_scores`` its tag scores, ``labels`` the gold tags."""
    scored = labels >= 0
    if not scored.any():
        return label_scores.sum() * 0.0
    return F.cross_entropy(label_scores[scored], labels[scored])
