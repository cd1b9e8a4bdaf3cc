"""Post-search improvements by greedy arc swaps, straightforward Python reference.

Tchernowitz, Yedidsion and Reichart (2016), "Effective Greedy Inference for Graph-based
Non-Projective Dependency Parsing", Section 6 ("Post-search improvements"): after the greedy
search returns a tree T, perform up to ``rounds`` (the paper's s) rounds of local arc swaps. In
each round, for every word v with (u, v) in T and every other allowed head u' of v
(u' != u, u' != v, arc[u', v] finite):

- case 1, u' not in the subtree of v: T' = T - {(u, v)} + {(u', v)};
- case 2, u' in the subtree of v: with w the first node on the path from v to u' (the child of
  v whose subtree holds u'; w = u' when (v, u') in T),
  T' = T - {(u, v), (v, w)} + {(u', v), (u, w)}, only if arc[u, w] is finite.

With ``single_root`` the swaps whose result does not attach exactly one word to node 0 are
skipped (case 2 never changes the root's children count; case 1 can). After inspecting every
candidate, the swap with the largest score increase is performed if that increase is > tol;
otherwise the search stops early. Candidates are scanned v ascending, then u' ascending, and
one replaces the best so far only if its increase is larger by more than tol, so (near-)ties go
to the first. tol = ``TIE_TOLERANCE`` * (1 + the largest |weight| of an allowed arc or of a
sibling or grandparent part all of whose arcs are allowed), so float rounding never decides.

Score (docs/design.md, 'Score arrays and parts'): the sum of arc[h, m] over
the tree's arcs, plus sib[h, m, s] for each pair of consecutive modifiers m, s of h on one side
(m == h: s is the innermost modifier on its side; no stop part), plus grand[g, h, m] for each
chain g -> h -> m with h != 0. Arcs scored -inf or NaN are disallowed: they are never swapped
in, and the number of them is compared first, a tree with fewer being better (they can only
come from the input tree); then the sum of the allowed arcs' scores and of the sibling and
grandparent parts whose arcs are all allowed. Parts with a disallowed arc count for nothing and
are never read (a first-order pruner's scores leave them unset or zero); the others must be
finite (ValueError).

dparse/graph/improve.pyx is the fast version; it returns the same trees.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dparse.decoders import as_scores
from dparse.graph.greedy_reference import TIE_TOLERANCE
from dparse.trees import check_tree, root_words

__all__ = ["allowed_arcs", "improve_tree", "prepare", "subtree", "tolerance", "tree_score"]

Heads = NDArray[np.int32]
Scores = NDArray[np.float64]


def prepare(
    heads: ArrayLike,
    arc: ArrayLike,
    sib: ArrayLike | None,
    grand: ArrayLike | None,
    rounds: int,
) -> tuple[Heads, Scores, Scores | None, Scores | None]:
    """Checks shapes, dtypes and ``rounds``; returns a new int32 copy of heads [n+1] and the
    score arrays as C-contiguous float64 (arc [n+1, n+1], sib and grand [n+1, n+1, n+1] or
    None). Whether heads is a tree is left to the caller (:func:`dparse.trees.check_tree`)."""
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    arc = as_scores(arc)
    size = arc.shape[0]
    parts = []
    for name, part in (("sib", sib), ("grand", grand)):
        if part is not None:
            part = as_scores(part, name, ndim=3)
            if part.shape[0] != size:
                raise ValueError(f"{name} scores have shape {part.shape}, expected axes of {size}")
        parts.append(part)
    h = np.asarray(heads)
    if h.shape != (size,) or not np.issubdtype(h.dtype, np.integer):
        raise ValueError(
            f"heads must be an integer array of shape ({size},) for arc scores of shape "
            f"{arc.shape}, got {h.dtype} {h.shape}"
        )
    if h.dtype != np.int32 and not ((h >= -1) & (h < size)).all():
        check_tree(h)  # out of range: raises, naming the word
    return h.astype(np.int32), arc, parts[0], parts[1]


def allowed_arcs(arc: Scores) -> NDArray[np.bool_]:
    """Which arcs h -> m may be in a tree: finite score, m >= 1, h != m; bool [n+1, n+1].
    ValueError for +inf."""
    arcs = np.ones(arc.shape, dtype=bool)  # the arcs h -> m with m >= 1, h != m
    arcs[:, 0] = False
    np.fill_diagonal(arcs, False)
    if np.isposinf(arc[arcs]).any():
        raise ValueError("arc scores must not be +inf")
    return arcs & np.isfinite(arc)


def tolerance(
    arc: Scores, allowed: NDArray[np.bool_], sib: Scores | None, grand: Scores | None
) -> float:
    """TIE_TOLERANCE * (1 + the largest |weight| of an allowed arc or of a part over allowed
    arcs); ValueError if such a part is not finite."""
    size = arc.shape[0]
    node = np.arange(size)
    a, b, c = node[:, None, None], node[None, :, None], node[None, None, :]  # the three axes
    between = ((a < b) & (b < c)) | ((c < b) & (b < a))
    masks = {
        # sib[h, m, s]: h -> s allowed, and m == h or h -> m allowed with m between h and s
        "sib": allowed[:, None, :] & ((b == a) | (allowed[:, :, None] & between)),
        # grand[g, h, m]: g -> h and h -> m allowed (so h != 0), m != g
        "grand": allowed[:, :, None] & allowed[None, :, :] & (a != c),
    }
    largest = float(np.abs(arc[allowed]).max(initial=0.0))
    for name, part in (("sib", sib), ("grand", grand)):
        if part is not None:
            weights = part[masks[name]]
            if not np.isfinite(weights).all():
                raise ValueError(f"{name} scores must be finite (a part over allowed arcs is not)")
            largest = max(largest, float(np.abs(weights).max(initial=0.0)))
    return TIE_TOLERANCE * (1.0 + largest)


def tree_score(
    heads: Heads,
    arc: Scores,
    allowed: NDArray[np.bool_],
    sib: Scores | None = None,
    grand: Scores | None = None,
) -> tuple[int, float]:
    """(number of disallowed arcs, score of the rest) of the tree ``heads`` [n+1]: the allowed
    arcs' scores plus the sibling and grandparent parts (module conventions) whose arcs are
    all allowed."""
    size = len(heads)
    disallowed, total = 0, 0.0
    for m in range(1, size):
        h = heads[m]
        if not allowed[h, m]:
            disallowed += 1
            continue
        total += arc[h, m]
        if grand is not None and h != 0 and allowed[heads[h], h]:
            total += grand[heads[h], h, m]
    if sib is not None:
        for h in range(size):
            left = [m for m in range(h - 1, 0, -1) if heads[m] == h]  # innermost first
            right = [m for m in range(h + 1, size) if heads[m] == h]
            for side in (left, right):
                for previous, m in zip([h, *side], side, strict=False):
                    if allowed[h, m] and (previous == h or allowed[h, previous]):
                        total += sib[h, previous, m]
    return disallowed, float(total)


def subtree(heads: Heads, v: int) -> set[int]:
    """The nodes of the subtree of T rooted at v (v included)."""
    nodes, stack = set(), [v]
    while stack:
        x = stack.pop()
        nodes.add(x)
        stack.extend(m for m in range(1, len(heads)) if heads[m] == x)
    return nodes


def improve_tree(
    heads: ArrayLike,
    arc: ArrayLike,
    sib: ArrayLike | None = None,
    grand: ArrayLike | None = None,
    rounds: int = 5,
    single_root: bool = True,
) -> Heads:
    """Up to ``rounds`` rounds of the best arc swap (module doc) on the tree ``heads`` int
    [n+1] under arc float64 [n+1, n+1] and optional sib, grand float64 [n+1, n+1, n+1].

    Returns a new int32 [n+1] tree (the input is not modified). ValueError for malformed
    scores or if heads is not a tree (with ``single_root``: one with exactly one root word).
    """
    tree, arc, sib, grand = prepare(heads, arc, sib, grand, rounds)
    check_tree(tree, single_root=single_root)
    allowed = allowed_arcs(arc)
    tol = tolerance(arc, allowed, sib, grand)
    size = len(tree)
    for _ in range(rounds):
        disallowed, score = tree_score(tree, arc, allowed, sib, grand)
        best: tuple[int, float, Heads] | None = None
        for v in range(1, size):
            u = int(tree[v])
            inside = subtree(tree, v)
            for u2 in range(size):
                if u2 in (u, v) or not allowed[u2, v]:
                    continue
                new = tree.copy()
                new[v] = u2
                if u2 in inside:  # case 2: w, the child of v on the path to u', goes to u
                    w = u2
                    while tree[w] != v:
                        w = int(tree[w])
                    if not allowed[u, w]:
                        continue
                    new[w] = u
                if single_root and root_words(new) != 1:
                    continue
                new_disallowed, new_score = tree_score(new, arc, allowed, sib, grand)
                fixed, gain = disallowed - new_disallowed, new_score - score
                if (fixed > 0 or gain > tol) and (
                    best is None or fixed > best[0] or (fixed == best[0] and gain > best[1] + tol)
                ):
                    best = (fixed, gain, new)
        if best is None:
            break
        tree = best[2]
    return tree
