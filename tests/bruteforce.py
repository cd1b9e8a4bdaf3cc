"""Brute-force reference for exact decoders: every tree of a small sentence, and its score.

``all_trees`` enumerates every heads array of n <= 7 words and keeps those that
:func:`dparse.trees.tree_mask` (the check every decoder test uses) accepts. Higher-order tests can
score the same trees with their own parts, e.g. sibling scores summed over ``all_trees(...)``;
``tree_score2`` and ``best_score2`` do so for sibling and grandparent parts (docs/design.md,
'Score arrays and parts').

Tree counts: (n+1)^(n-1) trees, n^(n-1) with a single root child (Cayley); for n = 7 that is
262144 and 823543 candidates to filter, a few tenths of a second once per session (cached).
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from dparse.constraints import Constraints
from dparse.trees import tree_mask

MAX_WORDS = 7


@functools.cache
def all_trees(n: int, projective: bool, single_root: bool) -> NDArray[np.int32]:
    """Every valid tree of n words (1 <= n <= 7): int32 [T, n+1], heads[:, 0] == -1.

    projective: only projective trees; single_root: only trees with one word attached to the
    root. The array is cached and read-only.
    """
    if not 1 <= n <= MAX_WORDS:
        raise ValueError(f"brute force needs 1 <= n <= {MAX_WORDS}, got {n}")
    # candidates: each word m takes one of the n heads other than itself, the digit d of a
    # mixed-radix code standing for head d (d < m) or d + 1 (d >= m); one chunk per head of
    # word 1 keeps the arrays small (n^(n-1) rows each)
    words = np.arange(2, n + 1)
    digits = np.arange(n ** (n - 1))[:, None] // n ** (words - 2) % n
    rest = (digits + (digits >= words)).astype(np.int32)
    kept = []
    for first in range(n + 1):
        if first == 1:
            continue
        cand = np.empty((len(rest), n + 1), dtype=np.int32)
        cand[:, 0] = -1
        cand[:, 1] = first
        cand[:, 2:] = rest
        kept.append(cand[tree_mask(cand, single_root=single_root, projective=projective)])
    trees = np.concatenate(kept)
    trees.flags.writeable = False
    return trees


@functools.cache
def _arc_index(n: int, projective: bool, single_root: bool) -> NDArray[np.intp]:
    """Flat indices into a [n+1, n+1] arc matrix of each tree's arcs: [T, n]."""
    trees = all_trees(n, projective, single_root)
    return (trees[:, 1:].astype(np.intp) * (n + 1) + np.arange(1, n + 1)).copy()


def tree_score(heads: NDArray[np.integer], arc: NDArray[np.floating]) -> NDArray[np.float64]:
    """Sum of ``arc[heads[..., m], m]`` over words m: heads int [..., n+1] -> float64 [...]."""
    n = heads.shape[-1] - 1
    return np.asarray(arc, dtype=np.float64)[heads[..., 1:], np.arange(1, n + 1)].sum(axis=-1)


def best_score(arc: NDArray[np.floating], *, projective: bool, single_root: bool) -> float:
    """Maximum tree score over :func:`all_trees` for the [n+1, n+1] matrix ``arc``."""
    n = arc.shape[0] - 1
    flat = np.ascontiguousarray(arc, dtype=np.float64).ravel()
    return float(flat[_arc_index(n, projective, single_root)].sum(axis=1).max())


# -- second-order parts ---------------------------------------------------------------------------


def second_order_parts(
    heads: NDArray[np.integer],
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The sibling parts (h, m, s) and grandparent parts (g, h, m) of one tree (int [n+1]).

    Each head's modifiers on one side, from the innermost outwards, m1, m2, ..., mk give
    (h, h, m1), (h, m1, m2), ..., (h, m(k-1), mk); every arc h -> m with h != 0 gives
    (heads[h], h, m).
    """
    n = len(heads) - 1
    sib = []
    for h in range(n + 1):
        left = [m for m in range(h - 1, 0, -1) if heads[m] == h]  # innermost first
        right = [m for m in range(h + 1, n + 1) if heads[m] == h]
        for side in (left, right):
            previous = h
            for m in side:
                sib.append((h, previous, m))
                previous = m
    grand = [(int(heads[heads[m]]), int(heads[m]), m) for m in range(1, n + 1) if heads[m] != 0]
    return sib, grand


def relevant_entries2(
    n: int, single_root: bool
) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
    """Masks of the arc, sib and grand entries that some projective tree of n words uses."""
    N = n + 1
    arc = np.ones((N, N), dtype=bool)
    arc[:, 0] = False
    np.fill_diagonal(arc, False)
    h, m, s = np.indices((N, N, N))
    between = ((h < m) & (m < s)) | ((s < m) & (m < h))
    if single_root:
        between &= h > 0
    sib = (s > 0) & (s != h) & ((m == h) | between)
    g, h, m = np.indices((N, N, N))
    grand = (h > 0) & (m > 0) & (h != m) & ((g < np.minimum(h, m)) | (g > np.maximum(h, m)))
    return arc, sib, grand


def tree_score2(
    heads: NDArray[np.integer],
    arc: NDArray[np.floating],
    sib: NDArray[np.floating] | None = None,
    grand: NDArray[np.floating] | None = None,
) -> float:
    """Score of one tree (int [n+1]) under arc [n+1, n+1], sibling and grandparent scores
    [n+1, n+1, n+1] (None: no such parts), naively summed over :func:`second_order_parts`."""
    total = sum(float(arc[heads[m], m]) for m in range(1, len(heads)))
    return total + _parts_score((sib, grand), second_order_parts(heads))


def _parts_score(arrays: tuple[NDArray[np.floating] | None, ...],
                 parts: tuple[list[tuple[int, ...]], ...]) -> float:
    """The sum of ``array[p]`` over each kind's parts p, for the kinds whose array is given."""
    return sum(sum(float(a[p]) for p in kind) for a, kind in zip(arrays, parts, strict=True)
               if a is not None)


@functools.cache
def _part_index(
    n: int, projective: bool, single_root: bool, order: int
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Flat indices of each tree's parts of the two kinds of ``order``: 2, sibling and
    grandparent parts into [n+1]^3 arrays; 3, tri-sibling and grand-sibling parts into [n+1]^4
    arrays. [T, n] each (a tree has at most n parts of a kind), padded with one past the end
    (a zero pad)."""
    trees = all_trees(n, projective, single_root)
    parts_of, dims = (second_order_parts, 3) if order == 2 else (third_order_parts, 4)
    index = (np.full((len(trees), n), (n + 1) ** dims, dtype=np.intp),
             np.full((len(trees), n), (n + 1) ** dims, dtype=np.intp))
    for t, heads in enumerate(trees):
        for flat, parts in zip(index, parts_of(heads), strict=True):
            if parts:
                flat[t, : len(parts)] = np.ravel_multi_index(tuple(np.array(parts).T),
                                                             (n + 1,) * dims)
    return index


def best_score2(
    arc: NDArray[np.floating],
    sib: NDArray[np.floating] | None = None,
    grand: NDArray[np.floating] | None = None,
    *,
    projective: bool,
    single_root: bool,
) -> float:
    """Maximum :func:`tree_score2` over :func:`all_trees` (None: no such parts)."""
    return best_score3(arc, sib, grand, projective=projective, single_root=single_root)


# -- generalized Eisner (cube pruning) parts ------------------------------------------------------


def cube_parts(heads: NDArray[np.integer]) -> dict[str, list[tuple[int, ...]]]:
    """The parts of one tree (int [n+1]) that the ``cube`` decoder scores (see
    dparse/graph/generalized_eisner.pyx): every arc (h, m), sibling part and tri-sibling part
    (:func:`second_order_parts`, :func:`third_order_parts`); grandchild parts (g, h, m) and
    grand-sibling parts (g, h, s, m) only for m the outermost modifier of h on its side.
    """
    n = len(heads) - 1
    sib, grand = second_order_parts(heads)
    trisib, gsib = third_order_parts(heads)

    def outermost(h: int, m: int) -> bool:
        beyond = range(m + 1, n + 1) if m > h else range(1, m)
        return not any(heads[x] == h for x in beyond)

    return {
        "arc": [(int(heads[m]), m) for m in range(1, n + 1)],
        "sib": sib,
        "trisib": trisib,
        "grand": [(g, h, m) for g, h, m in grand if outermost(h, m)],
        "gsib": [(g, h, s, m) for g, h, s, m in gsib if outermost(h, m)],
    }


def cube_tree_score(heads: NDArray[np.integer], arc: NDArray[np.floating],
                    **scores: NDArray[np.floating] | None) -> float:
    """Score of one tree under :func:`cube_parts`: ``arc`` [n+1, n+1] and the keyword arrays
    sib, grand [n+1]^3, trisib, gsib [n+1]^4 (absent or None: no such parts)."""
    arrays = {"arc": arc, **scores}
    return float(sum(
        float(arrays[kind][part])
        for kind, parts in cube_parts(heads).items()
        if arrays.get(kind) is not None
        for part in parts
    ))


@functools.cache
def _cube_index(n: int, single_root: bool) -> dict[str, NDArray[np.intp]]:
    """Flat indices of each projective tree's :func:`cube_parts` into the arrays of each kind:
    [T, P] per kind, padded with one past the end (a zero pad)."""
    trees = all_trees(n, True, single_root)
    ndim = {"arc": 2, "sib": 3, "grand": 3, "trisib": 4, "gsib": 4}
    per_tree = [cube_parts(heads) for heads in trees]
    index = {}
    for kind, dims in ndim.items():
        size = (n + 1) ** dims
        width = max(1, max(len(parts[kind]) for parts in per_tree))
        flat = np.full((len(trees), width), size, dtype=np.intp)
        for t, parts in enumerate(per_tree):
            if parts[kind]:
                flat[t, : len(parts[kind])] = np.ravel_multi_index(
                    tuple(np.array(parts[kind]).T), (n + 1,) * dims
                )
        index[kind] = flat
    return index


def best_cube_score(arc: NDArray[np.floating], *, single_root: bool,
                    **scores: NDArray[np.floating] | None) -> float:
    """Maximum :func:`cube_tree_score` over every projective tree (n <= 7)."""
    n = arc.shape[0] - 1
    total = np.zeros(len(all_trees(n, True, single_root)))
    for kind, flat in _cube_index(n, single_root).items():
        array = arc if kind == "arc" else scores.get(kind)
        if array is not None:
            padded = np.append(np.asarray(array, dtype=np.float64).ravel(), 0.0)
            total += padded[flat].sum(axis=1)
    return float(total.max())


# -- third-order parts (eisner3) ------------------------------------------------------------------


def third_order_parts(
    heads: NDArray[np.integer],
) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]]:
    """The tri-sibling parts (h, a, b, c) and grand-sibling parts (g, h, m, s) of one tree
    (int [n+1]), as docs/design.md, 'Score arrays and parts' defines them.

    Each head's modifiers on one side, innermost first, m1, ..., mk give the chain [h, m1, ...,
    mk]: every three consecutive entries a, b, c give (h, a, b, c); every sibling part (h, m, s)
    (two consecutive entries, so m == h for the innermost) gives (heads[h], h, m, s) if h != 0.
    """
    n = len(heads) - 1
    trisib, gsib = [], []
    for h in range(n + 1):
        left = [m for m in range(h - 1, 0, -1) if heads[m] == h]  # innermost first
        right = [m for m in range(h + 1, n + 1) if heads[m] == h]
        for side in (left, right):
            chain = [h, *side]
            trisib += [(h, *chain[i : i + 3]) for i in range(len(chain) - 2)]
            if h != 0:
                gsib += [(int(heads[h]), h, *chain[i : i + 2]) for i in range(len(chain) - 1)]
    return trisib, gsib


def tree_score3(
    heads: NDArray[np.integer],
    arc: NDArray[np.floating],
    sib: NDArray[np.floating] | None = None,
    grand: NDArray[np.floating] | None = None,
    trisib: NDArray[np.floating] | None = None,
    gsib: NDArray[np.floating] | None = None,
) -> float:
    """Score of one tree (int [n+1]) under arc [n+1, n+1], sib and grand [n+1]^3, trisib and
    gsib [n+1]^4 (None: no such parts), naively summed over :func:`second_order_parts` and
    :func:`third_order_parts`."""
    return tree_score2(heads, arc, sib, grand) + _parts_score((trisib, gsib),
                                                              third_order_parts(heads))


def tree_scores(
    arc: NDArray[np.floating],
    sib: NDArray[np.floating] | None = None,
    grand: NDArray[np.floating] | None = None,
    trisib: NDArray[np.floating] | None = None,
    gsib: NDArray[np.floating] | None = None,
    *,
    projective: bool,
    single_root: bool,
) -> NDArray[np.float64]:
    """:func:`tree_score3` of every tree of :func:`all_trees`, in its order: float64 [T]."""
    n = arc.shape[0] - 1
    flat = np.ascontiguousarray(arc, dtype=np.float64).ravel()
    scores = flat[_arc_index(n, projective, single_root)].sum(axis=1)
    for order, arrays in ((2, (sib, grand)), (3, (trisib, gsib))):
        if all(a is None for a in arrays):
            continue
        for part, index in zip(arrays, _part_index(n, projective, single_root, order),
                               strict=True):
            if part is not None:
                padded = np.append(np.asarray(part, dtype=np.float64).ravel(), 0.0)
                scores += padded[index].sum(axis=1)
    return scores


def best_score3(
    arc: NDArray[np.floating],
    sib: NDArray[np.floating] | None = None,
    grand: NDArray[np.floating] | None = None,
    trisib: NDArray[np.floating] | None = None,
    gsib: NDArray[np.floating] | None = None,
    *,
    projective: bool,
    single_root: bool,
) -> float:
    """Maximum :func:`tree_score3` over :func:`all_trees` (None: no such parts)."""
    return float(tree_scores(arc, sib, grand, trisib, gsib, projective=projective,
                             single_root=single_root).max())


def random_constraints(rng: np.random.Generator, n: int, projective: bool,
                       single_root: bool) -> Constraints:
    """Fixed arcs: a random share of a random tree's (a random tree of any kind now and then,
    so that some sets are impossible for the decoder); forbidden arcs at random."""
    c = Constraints.free(n)
    kind = (projective, single_root) if rng.random() < 0.8 else (False, False)
    trees = all_trees(n, *kind)
    tree = trees[rng.integers(len(trees))]
    fixed = rng.random(n + 1) < rng.uniform(0.0, 0.6)
    fixed[0] = False
    c.heads[fixed] = tree[fixed]
    c.forbidden = rng.random((n + 1, n + 1)) < rng.uniform(0.0, 0.4)
    if rng.random() < 0.8:  # mostly sets the tree satisfies
        c.forbidden[tree[1:], np.arange(1, n + 1)] = False
    c.labels = [None] * (n + 1)
    return c


def satisfying(c: Constraints, projective: bool, single_root: bool) -> np.ndarray:
    """The brute-force trees [T, n+1] of the decoder's kind that satisfy ``c``."""
    n = len(c)
    trees = all_trees(n, projective, single_root)
    words = np.arange(1, n + 1)
    fixed = c.heads[1:] >= 0
    ok = np.all(trees[:, 1:][:, fixed] == c.heads[1:][fixed], axis=1)
    ok &= ~c.forbidden[trees[:, 1:], words].any(axis=1)
    return trees[ok]
