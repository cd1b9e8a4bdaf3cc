"""The second-order scorers of a neural parser (``neural.order: 2``): sibling and grandparent
parts for the second-order graph decoders (eisner2-sib, eisner2-sibgp, dd2, bgi, bgi-pp, cube),
over the arcs that the network's first-order scores keep.

Each kind of part is a low-rank triaffine product (:class:`Triaffine`) of three MLP
projections of the encoder's node vectors, ones appended (bias units, so that the product
holds every pairwise and single term too): with P_r = [mlp_r(x); 1] @ W_r ([T, rank], one
per role r), a part (i, j, k) scores sum over the rank of P_0[i] * P_1[j] * P_2[k]. The roles,
as the decoders index the arrays (docs/design.md, 'Score arrays and parts'):

- ``sib[h, m, s]``: head h, the nearer sibling m, the modifier s (m == h: s is h's innermost
  modifier on its side, scored with the nearer-sibling projection of h itself);
- ``grand[g, h, m]``: grandparent g, head h, modifier m.

Pruning (as the linear second-order model's pruner, :mod:`dparse.graph.pruner`): each word
keeps its heads whose probability under the head softmax of the first-order arc scores is at
least ``neural.prune_threshold`` times its best head's, at most ``neural.prune_top_k`` of them
(:func:`dparse.prune.keep_heads`); the other arcs score -inf and only the parts whose arcs are
all kept are scored (:func:`candidate_parts`), the part arrays being 0 elsewhere, so that the
memory and time of scoring a sentence grow with its kept arcs, not with n^3. Training keeps the
gold arcs as well (:class:`BatchParts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from dparse.graph.ensemble import tree_parts
from dparse.graph.model import PartScratch
from dparse.neural.biaffine import MLP, with_one
from dparse.prune import head_softmax, keep_heads

KINDS = ("sib", "grand")  # the part kinds a second-order network scores, in this order
CHUNK = 1 << 16  # parts scored at once in numpy (bounds the temporaries: CHUNK x rank)
Index = tuple[np.ndarray, np.ndarray, np.ndarray]


class Triaffine(nn.Module):
    """Scores of triples (i, j, k) of nodes: sum_r P_0[i, r] P_1[j, r] P_2[k, r] with
    P_q = [mlp_q(x); 1] @ factors[q] (``factors`` [3, dim+1, dim]: rank ``dim``). The first
    two factors start random, the third at 0: every part scores 0 at first, and each factor's
    gradient is not 0."""

    def __init__(self, size: int, dim: int, dropout: float) -> None:
        super().__init__()
        self.mlps = nn.ModuleList(MLP(size, dim, dropout) for _ in range(3))
        self.factors = nn.Parameter(torch.zeros(3, dim + 1, dim))
        with torch.no_grad():
            nn.init.normal_(self.factors[:2], std=(dim + 1) ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The projections [3, B, T, dim] of the node vectors x [B, T, D]."""
        return torch.stack([with_one(mlp(x)) @ self.factors[q]
                            for q, mlp in enumerate(self.mlps)])


class SecondOrderScorer(nn.Module):
    """A :class:`Triaffine` for each kind of :data:`KINDS`, over the encoder's vectors, with
    the pruning settings (``top_k``, ``threshold``) of the arcs they score."""

    def __init__(self, size: int, dim: int, dropout: float, top_k: int,
                 threshold: float) -> None:
        super().__init__()
        self.kinds = nn.ModuleDict({kind: Triaffine(size, dim, dropout) for kind in KINDS})
        self.top_k, self.threshold = top_k, threshold

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Each kind's projections [3, B, T, dim]."""
        return {kind: scorer(x) for kind, scorer in self.kinds.items()}

    def kept_arcs(self, arc: np.ndarray) -> np.ndarray:
        """:func:`kept_arcs` under this scorer's settings."""
        return kept_arcs(arc, self.top_k, self.threshold)


def kept_arcs(arc: np.ndarray, top_k: int, threshold: float) -> np.ndarray:
    """uint8 [n+1, n+1]: the arcs h -> m that second order scores, from first-order arc scores
    float64 [n+1, n+1] (-inf: not an arc): each word's heads with a head-softmax probability of
    at least ``threshold`` times its best head's, at most ``top_k`` of them, and always its
    best head and a child of the root (:func:`dparse.prune.keep_heads`); never the diagonal."""
    arc = arc.copy()
    np.fill_diagonal(arc, -np.inf)
    possible = np.isfinite(arc)
    possible[:, 0] = False
    return keep_heads(head_softmax(arc), possible, top_k, threshold, relative=True)


def candidate_parts(allowed: np.ndarray) -> dict[str, Index]:
    """The parts whose arcs ``allowed`` (uint8 or bool [n+1, n+1], h -> m kept; the diagonal
    and column 0 must be 0) all keeps, as index arrays (int64, usable as ``sib[index]``):

    - ``sib`` (h, m, s): (h, h, s) for each kept h -> s, and (h, m, s) for kept h -> m and
      h -> s with m strictly between h and s;
    - ``grand`` (g, h, m): kept g -> h and h -> m with h a word (g == m included: a part no
      tree holds, harmless).

    Their number is the sum over heads of their kept modifiers' pairs on each side plus the
    sum over words of kept heads times kept modifiers: no n^3 array is made."""
    keep = np.asarray(allowed, dtype=bool)
    heads, mods = np.nonzero(keep)  # sorted by head, then modifier
    row_start = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    upto = np.cumsum(keep, axis=1)  # upto[h, j]: kept modifiers of h among 0..j
    right = mods > heads
    # the kept modifiers of h strictly between h and s are, in h's row, the ones of ranks
    # lo .. hi-1 (0-based): right of h, columns h+1..s-1; left, columns s+1..h-1
    lo = np.where(right, upto[heads, heads], upto[heads, mods])
    hi = np.where(right, upto[heads, mods - 1], upto[heads, np.maximum(heads - 1, 0)])
    arc_of, offset = _expand(hi - lo)
    between = mods[row_start[heads[arc_of]] + lo[arc_of] + offset]
    sib = (np.concatenate([heads, heads[arc_of]]), np.concatenate([heads, between]),
           np.concatenate([mods, mods[arc_of]]))
    # grandparents: for each kept h -> m with h a word, every kept g -> h
    _, grands = np.nonzero(keep.T)  # the g of each kept g -> h, sorted by h
    col_start = np.concatenate([[0], np.cumsum(keep.sum(axis=0))])
    inner = np.nonzero(heads > 0)[0]
    arc_of, offset = _expand(col_start[heads[inner] + 1] - col_start[heads[inner]])
    arcs = inner[arc_of]
    g = grands[col_start[heads[arcs]] + offset]
    return {"sib": sib, "grand": (g, heads[arcs], mods[arcs])}


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, offset) int64 [sum(counts)]: entry i of ``counts`` repeated counts[i] times,
    with offsets 0..counts[i]-1."""
    counts = counts.astype(np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, offset


def fill_parts(factors: dict[str, np.ndarray], allowed: np.ndarray,
               arrays: dict[str, np.ndarray]) -> None:
    """Write into each array of ``arrays`` (kind -> float64 [n+1]^3, C-contiguous, zero
    where nothing is written) the scores of its kind's :func:`candidate_parts` under
    ``allowed``, from the sentence's projections ``factors`` (kind -> float32 [3, n+1, rank])."""
    index = candidate_parts(allowed)
    for kind, out in arrays.items():
        i, j, k = index[kind]
        p0, p1, p2 = factors[kind]
        n1 = out.shape[0]
        flat = out.reshape(-1)
        for start in range(0, len(i), CHUNK):
            a, b, c = i[start:start + CHUNK], j[start:start + CHUNK], k[start:start + CHUNK]
            flat[(a * n1 + b) * n1 + c] = (p0[a] * p1[b] * p2[c]).sum(axis=1)


@dataclass
class BatchParts:
    """A batch's second-order projections (kind -> [3, B, T, rank], with their gradients) and
    the scorer that made them (its pruning): what the second-order hinge loss reads."""

    factors: dict[str, torch.Tensor]
    scorer: SecondOrderScorer

    def arrays(self, b: int, arc: np.ndarray, gold: np.ndarray, kinds: Sequence[str],
               scratch: PartScratch) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The arcs kept for sentence b (uint8 [n+1, n+1]: those of :func:`kept_arcs` under
        its first-order scores ``arc`` float64 [n+1, n+1], and the gold tree's, ``gold`` int
        [n+1]) and its part arrays of ``kinds`` over them (made in ``scratch``)."""
        allowed = self.scorer.kept_arcs(arc)
        allowed[gold[1:], np.arange(1, len(gold))] = 1
        arrays = dict(zip(kinds, scratch.take(len(arc), len(kinds)), strict=True))
        n1 = len(arc)
        factors = {kind: self.factors[kind][:, b, :n1].detach().cpu().numpy()
                   for kind in kinds}
        fill_parts(factors, allowed, arrays)
        return allowed, arrays

    def tree_scores(self, trees: Sequence[tuple[int, np.ndarray]], kinds: Sequence[str]
                    ) -> torch.Tensor:
        """The sum of each tree's parts of ``kinds`` [len(trees)] (differentiable): a tree is
        (b, heads int [n+1]) of sentence b, its parts those of
        :func:`dparse.graph.ensemble.tree_parts`."""
        some = next(iter(self.factors.values()))
        total = some.new_zeros(len(trees))
        parts = [tree_parts(heads) for _, heads in trees]
        for q, kind in enumerate(KINDS):
            if kind not in kinds:
                continue
            owners, batch, index = [], [], []
            for t, (b, _) in enumerate(trees):
                part = parts[t][q]
                owners.append(np.full(len(part[0]), t))
                batch.append(np.full(len(part[0]), b))
                index.append(np.stack(part))
            p = self.factors[kind]
            bs = torch.as_tensor(np.concatenate(batch), device=p.device)
            i, j, k = (torch.as_tensor(a, device=p.device) for a in np.concatenate(index, 1))
            scores = (p[0, bs, i] * p[1, bs, j] * p[2, bs, k]).sum(dim=-1)
            total = total.index_add(0, torch.as_tensor(np.concatenate(owners),
                                                       device=p.device), scores)
        return total
