"""The one check of dependency trees that every decoder and every test relies on.

A sentence of n words has nodes 0..n, node 0 the artificial root. A parse is an integer array
``heads`` of length n + 1 with ``heads[0] == -1`` and ``heads[m]`` in 0..n the head of word m.
It is a tree when no word heads itself and following heads from any word reaches the root (no
cycle). ``single_root`` further requires exactly one word attached to the root. A tree is
projective when no two of its arcs cross, the root arcs included (node 0 sits left of word 1);
equivalently every subtree spans a contiguous stretch of words.

:func:`tree_mask` is the implementation, vectorised over any leading axes so that brute-force
enumeration (tests/bruteforce.py) uses the very same check; :func:`is_tree`,
:func:`is_projective`, :func:`check_tree` and :func:`tree_problem` apply it to one heads array.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_tree", "is_projective", "is_tree", "tree_mask", "tree_problem"]


def tree_mask(
    heads: ArrayLike, *, single_root: bool = False, projective: bool = False
) -> NDArray[np.bool_]:
    """Which heads arrays are valid (single-root, projective) trees.

    heads: integer array [..., n+1]. Returns bool [...]. A non-integer array, or one without
    a last axis of length >= 1, is never a tree. n = 0 (``[-1]``) is the empty tree: valid
    unless single_root.
    """
    h = np.asarray(heads)
    if h.ndim == 0 or h.shape[-1] == 0 or not np.issubdtype(h.dtype, np.integer):
        return np.zeros(h.shape[:-1] if h.ndim else (), dtype=bool)
    lead = h.shape[:-1]
    h = h.reshape(-1, h.shape[-1]).astype(np.int64, copy=False)
    n = h.shape[1] - 1
    words = np.arange(1, n + 1)
    body = h[:, 1:]
    ok = (h[:, 0] == -1) & np.all((body >= 0) & (body <= n) & (body != words), axis=1)
    # pointer doubling: after k rounds up[m] is m's ancestor 2^k steps up (the root is its own
    # head); a word lies on no cycle iff it reaches the root within n steps
    up = np.where(ok[:, None], h, 0)
    up[:, 0] = 0
    for _ in range(max(n - 1, 0).bit_length()):
        up = np.take_along_axis(up, up, axis=1)
    ok &= np.all(up == 0, axis=1)
    if single_root:
        ok &= np.count_nonzero(body == 0, axis=1) == 1
    if projective and n > 1:
        rows = np.flatnonzero(ok)
        lo = np.minimum(body[rows], words)
        hi = np.maximum(body[rows], words)
        # arcs i and j cross iff lo_i < lo_j < hi_i < hi_j
        cross = (
            (lo[:, :, None] < lo[:, None, :])
            & (lo[:, None, :] < hi[:, :, None])
            & (hi[:, :, None] < hi[:, None, :])
        )
        ok[rows] = ~cross.any(axis=(1, 2))
    return ok.reshape(lead)


def root_words(heads: ArrayLike) -> int:
    """How many words ``heads`` (int [n+1], entry 0 the root's own) attach to the root."""
    return int(np.count_nonzero(np.asarray(heads)[1:] == 0))


def is_tree(heads: ArrayLike, single_root: bool = False) -> bool:
    """True iff ``heads`` (int [n+1]) is a valid tree; single_root: exactly one root child."""
    return bool(tree_mask(heads, single_root=single_root)) if np.ndim(heads) == 1 else False


def is_projective(heads: ArrayLike) -> bool:
    """True iff ``heads`` (int [n+1]) is a valid tree and projective (no crossing arcs)."""
    return bool(tree_mask(heads, projective=True)) if np.ndim(heads) == 1 else False


def check_tree(heads: ArrayLike, *, single_root: bool = False, projective: bool = False) -> None:
    """Raises ValueError saying why ``heads`` (int [n+1]) is not a valid tree of the kind asked."""
    problem = tree_problem(heads, single_root=single_root, projective=projective)
    if problem is not None:
        raise ValueError(f"not a valid tree {np.asarray(heads).tolist()}: {problem}")


def tree_problem(
    heads: ArrayLike, *, single_root: bool = False, projective: bool = False
) -> str | None:
    """Why ``heads`` (int [n+1]) is not a valid tree of the kind asked (the first rule it
    breaks, e.g. ``cycle through words [2, 3]``), or None if it is one."""
    if np.ndim(heads) == 1 and tree_mask(heads, single_root=single_root, projective=projective):
        return None
    return _diagnose(heads, single_root, projective)


def _diagnose(heads: ArrayLike, single_root: bool, projective: bool) -> str:
    """The first rule ``heads`` breaks (called once :func:`tree_mask` has rejected it)."""
    h = np.asarray(heads)
    if h.ndim != 1 or h.size == 0 or not np.issubdtype(h.dtype, np.integer):
        return f"heads must be a non-empty 1-D integer array, got {h.dtype} {h.shape}"
    n = h.size - 1
    if h[0] != -1:
        return f"heads[0] must be -1 (the root has no head), got {h[0]}"
    for m in range(1, n + 1):
        if not 0 <= h[m] <= n:
            return f"head {h[m]} of word {m} is outside 0..{n}"
        if h[m] == m:
            return f"word {m} is its own head"
    for m in range(1, n + 1):
        path = [m]
        while h[path[-1]] != 0 and len(path) <= n:
            path.append(int(h[path[-1]]))
        if h[path[-1]] != 0:
            start = path.index(path[-1])
            return f"cycle through words {path[start:-1]}"
    children = [m for m in range(1, n + 1) if h[m] == 0]
    if single_root and len(children) != 1:
        return f"{len(children)} words attached to the root {children}, expected exactly one"
    for m1 in range(1, n + 1 if projective else 1):
        for m2 in range(1, n + 1):
            lo1, hi1 = sorted((int(h[m1]), m1))
            lo2, hi2 = sorted((int(h[m2]), m2))
            if lo1 < lo2 < hi1 < hi2:
                return f"arcs {h[m1]} -> {m1} and {h[m2]} -> {m2} cross (not projective)"
    return "unknown problem"
