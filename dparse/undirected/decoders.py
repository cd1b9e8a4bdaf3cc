"""Undirected maximum spanning tree decoders (Levi, Reichart and Rappoport 2016).

Registered decoders:

- ``umst``: ``decode(w)`` takes a symmetric float64 [n+1, n+1] matrix of *undirected* edge
  weights (only the upper triangle w[i, j], i < j, is read; NaN or -inf: no edge) and returns
  the maximum spanning tree (Karger-Klein-Tarjan) oriented from node 0 as a heads array. Exact
  with ``single_root=False``; with ``single_root=True`` extra root children are re-attached by
  :func:`single_root_repair` (a heuristic).
- ``umst-df`` (f = mean), ``umst-df-max``, ``umst-df-min``: the U-MST-df encoding, a decoder of
  *directed* arc scores arc[h, m]: the undirected weight of {i, j} is f(arc[i, j], arc[j, i]),
  then as ``umst``. Approximate with respect to the directed scores.

The cores are in dparse/undirected/umst.pyx.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from dparse.decoders import Decoder, Heads, Scores, register_decoder
from dparse.undirected.umst import undirected_mst

__all__ = ["COMBINERS", "DirectedUMST", "UndirectedMST", "combine", "single_root_repair"]

# f(arc[i, j], arc[j, i]) -> undirected weight of {i, j}; "mean" is the paper's best choice
COMBINERS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "mean": lambda a, b: 0.5 * (a + b),
    "max": np.maximum,
    "min": np.minimum,
}


def combine(arc: Scores, f: str = "mean") -> Scores:
    """Undirected weights float64 [n+1, n+1] from directed scores arc[h, m] by f (U-MST-df).

    An edge is missing (NaN) when either direction is disallowed (-inf or NaN) under "mean" and
    "min", when both are under "max". Arcs into the root count as disallowed.
    """
    a = np.array(arc, dtype=np.float64)
    a[:, 0] = -np.inf
    np.fill_diagonal(a, -np.inf)
    a[np.isnan(a)] = -np.inf
    a[1:, 0] = a[0, 1:]  # an edge {0, m} has one direction, 0 -> m: it stands for both
    with np.errstate(invalid="ignore"):
        w = COMBINERS[f](a, a.T)
    w[~np.isfinite(w)] = np.nan
    return w


def single_root_repair(heads: Heads, w: Scores) -> Heads:
    """Makes node 0 have one child: keeps the child with the best root edge; every other root
    child c is re-hung by the best edge {x, y} from its subtree to a node outside it (not 0;
    the subtree is re-rooted at x), else under the kept child. w: undirected weights as for
    ``umst``. O(n^2) per re-hung child; a heuristic, used only when the tree has several root
    children."""
    heads = heads.copy()
    n1 = len(heads)
    children = [m for m in range(1, n1) if heads[m] == 0]
    if len(children) <= 1:
        return heads
    upper = np.triu(np.nan_to_num(w, nan=-np.inf), 1)
    sym = np.where(np.tri(n1, dtype=bool), upper.T, upper)
    keep = max(children, key=lambda c: (sym[0, c], -c))
    for c in children:
        if c == keep:
            continue
        inside = _subtree(heads, c)
        cand = sym[np.ix_(inside, np.arange(n1))].copy()
        cand[:, inside] = -np.inf
        cand[:, 0] = -np.inf
        k = int(np.argmax(cand))
        x, y = inside[k // n1], k % n1
        if not np.isfinite(cand.flat[k]):
            x, y = c, keep
        # re-root the subtree at x: reverse the path x .. c, then hang x under y
        prev, node = y, x
        while node != 0:
            nxt = heads[node]
            heads[node] = prev
            if node == c:
                break
            prev, node = node, nxt
    return heads


def _subtree(heads: Heads, root: int) -> np.ndarray:
    """The nodes of ``root``'s subtree, root first."""
    kids: dict[int, list[int]] = {}
    for m in range(1, len(heads)):
        kids.setdefault(int(heads[m]), []).append(m)
    out, stack = [], [root]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(kids.get(x, ()))
    return np.array(out)


def undirected_decode(w: Scores, single_root: bool) -> Heads:
    """KKT maximum spanning tree of undirected weights w, oriented from 0 (see ``umst``)."""
    heads = undirected_mst(w, "kkt")
    if single_root:
        heads = single_root_repair(heads, w)
    return heads


@register_decoder
class UndirectedMST(Decoder):
    """``umst``: maximum spanning tree of symmetric undirected weights, oriented from node 0."""

    name = "umst"
    exact = False  # exact only for single_root=False
    projective = False

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return undirected_decode(arc, single_root)


class DirectedUMST(Decoder):
    """``umst-df[-f]``: directed scores combined by f into undirected weights (U-MST-df)."""

    exact = False
    projective = False
    f: ClassVar[str]

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return undirected_decode(combine(arc, self.f), single_root)


@register_decoder
class DirectedUMSTMean(DirectedUMST):
    name = "umst-df"
    f = "mean"


@register_decoder
class DirectedUMSTMax(DirectedUMST):
    name = "umst-df-max"
    f = "max"


@register_decoder
class DirectedUMSTMin(DirectedUMST):
    name = "umst-df-min"
    f = "min"
