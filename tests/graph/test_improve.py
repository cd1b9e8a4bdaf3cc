"""Post-search arc swaps (Tchernowitz et al. 2016, Section 6): dparse/graph/improve.pyx and the
Python reference dparse/graph/improve_reference.py.

The C version returns the reference's trees (random instances with ties, negative scores,
disallowed arcs, with and without sibling and grandparent parts). Both are checked against an
independent enumeration of the swaps: every valid tree (tests/bruteforce.py) one head away
(case 1) or two heads away in the case-2 pattern; one round takes the best of them, and after
enough rounds none of them improves (local optimality). Scores come from bruteforce.tree_score2,
disallowed arcs counted first. The suite runs under another seed with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from bruteforce import all_trees, tree_score2
from dparse.graph.improve import improve_tree as improve_fast

from dparse.graph.improve_reference import allowed_arcs, improve_tree, tree_score
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative"]
PARTS = ["arc", "sib", "grand", "both"]
IMPLEMENTATIONS = [improve_tree, improve_fast]


def random_scores(
    rng: np.random.Generator, n: int, kind: str, parts: str, pruned: float = 0.3
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """arc [n+1, n+1] with a share ``pruned`` of -inf, and sib, grand [n+1]^3 as ``parts`` asks:
    normal, tied (integers in -1..1) or all negative scores."""

    def draw(*shape: int) -> np.ndarray:
        if kind == "normal":
            return rng.normal(size=shape)
        if kind == "ties":
            return rng.integers(-1, 2, size=shape).astype(np.float64)
        return -rng.exponential(2.0, size=shape).round(1)

    arc = draw(n + 1, n + 1)
    arc[rng.random(arc.shape) < pruned] = -np.inf
    sib = draw(n + 1, n + 1, n + 1) if parts in ("sib", "both") else None
    grand = draw(n + 1, n + 1, n + 1) if parts in ("grand", "both") else None
    return arc, sib, grand


def random_tree(rng: np.random.Generator, n: int, single_root: bool) -> np.ndarray:
    """A random tree (often non-projective): words in random order, each attached to an earlier
    one (or to the root)."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1, dtype=np.int32)
    heads[order[0]] = 0
    for i in range(1, n):
        earlier = order[:i] if single_root else np.append(order[:i], 0)
        heads[order[i]] = rng.choice(earlier)
    return heads


def score(heads: np.ndarray, arc: np.ndarray, sib, grand) -> tuple[int, float]:
    """(disallowed arcs, tree_score2 with the disallowed arcs and the parts over them set to
    0): the order the swaps improve."""
    ok = np.isfinite(arc)
    bad = sum(not ok[heads[m], m] for m in range(1, len(heads)))
    diagonal = np.eye(len(heads), dtype=bool)[:, :, None]
    if sib is not None:  # sib[h, m, s] needs h -> s, and h -> m unless m == h
        sib = np.where(ok[:, None, :] & (diagonal | ok[:, :, None]), sib, 0.0)
    if grand is not None:  # grand[g, h, m] needs g -> h and h -> m
        grand = np.where(ok[:, :, None] & ok[None, :, :], grand, 0.0)
    return bad, tree_score2(heads, np.where(ok, arc, 0.0), sib, grand)


def tolerance(arc: np.ndarray, sib, grand) -> float:
    """A margin at least the implementations' tol."""
    weights = [np.abs(arc[np.isfinite(arc)]).max(initial=0.0)]
    weights += [np.abs(p).max() for p in (sib, grand) if p is not None]
    return 1e-9 * (1.0 + sum(weights))


def improves(new: tuple[int, float], old: tuple[int, float], tol: float) -> bool:
    return new[0] < old[0] or (new[0] == old[0] and new[1] > old[1] + tol)


def not_worse(new: tuple[int, float], old: tuple[int, float], tol: float) -> bool:
    return new[0] < old[0] or (new[0] == old[0] and new[1] >= old[1] - tol)


@functools.cache
def _subtrees(heads: tuple[int, ...]) -> list[set[int]]:
    """subtrees[x]: the nodes below x (x included) in the tree heads."""
    nodes = [{x} for x in range(len(heads))]
    for m in range(1, len(heads)):
        x = heads[m]
        while x >= 0:
            nodes[x].add(m)
            x = heads[x]
    return nodes


def swap_neighbours(heads: np.ndarray, arc: np.ndarray, single_root: bool) -> list[np.ndarray]:
    """Every tree one Section-6 swap away, found among all valid trees: one head changed (case
    1), or the heads of v and of its child w changed, w moving to v's head u and v to a node of
    w's subtree (case 2); the new arcs allowed."""
    n = len(heads) - 1
    ok = allowed_arcs(arc)
    below = _subtrees(tuple(int(h) for h in heads))
    trees = all_trees(n, False, single_root)
    changed = trees != heads
    found = []
    for tree in trees[changed.sum(axis=1) == 1]:
        v = int(np.flatnonzero(tree != heads)[0])
        if ok[tree[v], v]:
            found.append(tree)
    for tree in trees[changed.sum(axis=1) == 2]:
        p, q = np.flatnonzero(tree != heads)
        for v, w in ((p, q), (q, p)):
            if (heads[w] == v and tree[w] == heads[v] and tree[v] in below[w]
                    and ok[tree[v], v] and ok[tree[w], w]):
                found.append(tree)
    return found


# -- the C version equals the reference ---------------------------------------------------------


@pytest.mark.parametrize("parts", PARTS)
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_improve_fast_equals_reference(kind: str, single_root: bool, parts: str) -> None:
    rng = np.random.default_rng([SEED, KINDS.index(kind), single_root, PARTS.index(parts)])
    for n in range(1, 10):
        for rounds in (1, 5):
            arc, sib, grand = random_scores(rng, n, kind, parts)
            heads = random_tree(rng, n, single_root)
            given = heads.copy()
            expected = improve_tree(heads, arc, sib, grand, rounds, single_root)
            result = improve_fast(heads, arc, sib, grand, rounds, single_root)
            assert result.dtype == np.int32 and result.shape == (n + 1,)
            assert result.tolist() == expected.tolist()
            assert heads.tolist() == given.tolist()  # input not modified
            check_tree(result, single_root=single_root)
            tol = tolerance(arc, sib, grand)
            assert not_worse(score(result, arc, sib, grand), score(heads, arc, sib, grand), tol)
            new_arcs = {(int(result[m]), m) for m in range(1, n + 1)}
            old_arcs = {(int(heads[m]), m) for m in range(1, n + 1)}
            assert all(np.isfinite(arc[a]) for a in new_arcs - old_arcs)


def test_improve_fast_equals_reference_longer_pruned() -> None:
    """Longer sentences, about 6 candidate heads per word: larger degrees and subtrees."""
    rng = np.random.default_rng([SEED, 41])
    for n, parts in ((15, "both"), (20, "sib"), (25, "both")):
        for single_root in (True, False):
            arc, sib, grand = random_scores(rng, n, "normal", parts, pruned=1 - 6 / n)
            heads = random_tree(rng, n, single_root)
            expected = improve_tree(heads, arc, sib, grand, 5, single_root)
            assert improve_fast(heads, arc, sib, grand, 5, single_root).tolist() == (
                expected.tolist()
            )


# -- against the enumerated swaps ---------------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_improve_one_round_takes_the_best_swap(kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 5, KINDS.index(kind), single_root])
    for n in [1, 2, 3, 4, 5, 6, 7, 4, 5, 6]:
        arc, sib, grand = random_scores(rng, n, kind, PARTS[n % 4])
        heads = random_tree(rng, n, single_root)
        tol = tolerance(arc, sib, grand)
        before = score(heads, arc, sib, grand)
        scores = [score(t, arc, sib, grand) for t in swap_neighbours(heads, arc, single_root)]
        best = max(scores, key=lambda s: (-s[0], s[1]), default=before)
        for improve in IMPLEMENTATIONS:
            result = improve(heads, arc, sib, grand, 1, single_root)
            after = score(result, arc, sib, grand)
            if improves(best, before, tol):
                assert after[0] == best[0] and after[1] == pytest.approx(best[1], abs=tol)
            else:  # no swap, or one within rounding of no change
                assert after[0] == before[0] and after[1] == pytest.approx(before[1], abs=tol)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_improve_local_optimum(kind: str, single_root: bool) -> None:
    """After enough rounds no single swap of either case improves, and the result is returned
    unchanged by further rounds."""
    rng = np.random.default_rng([SEED, 9, KINDS.index(kind), single_root])
    for n in [2, 3, 4, 5, 6, 7, 5, 6, 7]:
        arc, sib, grand = random_scores(rng, n, kind, PARTS[n % 4])
        heads = random_tree(rng, n, single_root)
        tol = tolerance(arc, sib, grand)
        result = improve_fast(heads, arc, sib, grand, 1000, single_root)
        assert result.tolist() == improve_tree(heads, arc, sib, grand, 1000, single_root).tolist()
        final = score(result, arc, sib, grand)
        for tree in swap_neighbours(result, arc, single_root):
            assert not improves(score(tree, arc, sib, grand), final, tol)
        for improve in IMPLEMENTATIONS:
            assert improve(result, arc, sib, grand, 5, single_root).tolist() == result.tolist()


def test_improve_tree_score_is_tree_score2() -> None:
    rng = np.random.default_rng([SEED, 3])
    for n in range(1, 9):
        arc, sib, grand = random_scores(rng, n, "normal", "both", pruned=0.0)
        heads = random_tree(rng, n, False)
        ok = allowed_arcs(arc)
        for s, g in ((None, None), (sib, None), (None, grand), (sib, grand)):
            bad, total = tree_score(heads, arc, ok, s, g)
            assert bad == 0 and total == pytest.approx(tree_score2(heads, arc, s, g))


# -- hand-made cases ----------------------------------------------------------------------------


def arcs(n: int, **scores: float) -> np.ndarray:
    """[n+1, n+1] arc scores, -inf except the arcs named a_h_m."""
    arc = np.full((n + 1, n + 1), -np.inf)
    for name, value in scores.items():
        _, h, m = name.split("_")
        arc[int(h), int(m)] = value
    return arc


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_rounds_zero_is_identity(improve) -> None:
    rng = np.random.default_rng([SEED, 1])
    for n in range(1, 9):
        arc, sib, grand = random_scores(rng, n, "normal", "both")
        heads = random_tree(rng, n, True).astype(np.int64)
        result = improve(heads, arc, sib, grand, 0)
        assert result.dtype == np.int32 and result.tolist() == heads.tolist()
        assert result is not heads


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_case1_hand(improve) -> None:
    """Word 3 moves from 1 to 2 (2 is outside 3's subtree); moving it to the root instead scores
    more but makes two root words, allowed only without single_root."""
    arc = arcs(3, a_0_1=0.0, a_1_2=0.0, a_1_3=0.0, a_2_3=1.0)
    heads = np.array([-1, 0, 1, 1])
    assert improve(heads, arc).tolist() == [-1, 0, 1, 2]
    arc[0, 3] = 5.0
    assert improve(heads, arc, single_root=True).tolist() == [-1, 0, 1, 2]
    assert improve(heads, arc, single_root=False).tolist() == [-1, 0, 1, 0]


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_case2_hand(improve) -> None:
    """Chain 0 -> 1 -> 2 -> 3: v = 2 takes u' = 3 from its own subtree, and w = 3 goes to u = 1
    (gain 2, better than case 1's 3 -> 1, gain 1); not when arc[u, w] is disallowed."""
    arc = arcs(3, a_0_1=0.0, a_1_2=0.0, a_2_3=0.0, a_3_2=1.0, a_1_3=1.0)
    heads = np.array([-1, 0, 1, 2])
    assert improve(heads, arc).tolist() == [-1, 0, 3, 1]
    arc[1, 3] = -np.inf
    assert improve(heads, arc).tolist() == heads.tolist()


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_case2_deep_hand(improve) -> None:
    """Chain 0 -> 1 -> 2 -> 3 -> 4: v = 2 goes under u' = 4, two levels down, and w = 3 (the
    first node on the path from 2 to 4) goes to 1; under single_root the root word 1 can change
    only by case 2: 0 -> 2 -> 1 when the arcs say so."""
    arc = arcs(4, a_0_1=0.0, a_1_2=0.0, a_2_3=0.0, a_3_4=0.0, a_4_2=1.0, a_1_3=1.0)
    assert improve(np.array([-1, 0, 1, 2, 3]), arc).tolist() == [-1, 0, 4, 1, 3]
    arc = arcs(2, a_0_1=0.0, a_1_2=0.0, a_0_2=1.0, a_2_1=1.0)
    for single_root in (True, False):
        assert improve(np.array([-1, 0, 1]), arc, single_root=single_root).tolist() == [-1, 2, 0]


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_second_order_hand(improve) -> None:
    """All arcs score 0; only the sibling pair (2, 3) of head 1 scores -1, so any swap that
    separates them gains 1: the first in scan order (v = 1, u' = 2, case 2) wins the tie.
    A grandparent part then makes the chain 0 -> 3 -> 1 -> 2 worth keeping instead."""
    arc = np.zeros((4, 4))
    sib = np.zeros((4, 4, 4))
    sib[1, 2, 3] = -1.0
    heads = np.array([-1, 0, 1, 1])
    assert improve(heads, arc, sib, rounds=1).tolist() == [-1, 2, 0, 1]
    grand = np.zeros((4, 4, 4))
    grand[3, 1, 2] = 5.0
    assert improve([-1, 3, 1, 0], arc, sib, grand).tolist() == [-1, 3, 1, 0]
    assert improve(heads, arc, sib, grand).tolist() == [-1, 3, 1, 0]


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_swaps_disallowed_arcs_out(improve) -> None:
    """A disallowed arc of the input tree (3 -> 2) goes whenever a swap can remove it, even if
    the rest scores less (0 -> -50); disallowed (-inf or NaN) arcs never come in."""
    arc = arcs(3, a_0_1=0.0, a_1_2=-50.0, a_2_3=0.0, a_1_3=0.0)
    arc[0, 2] = np.nan
    assert improve(np.array([-1, 0, 1, 2]), arc).tolist() == [-1, 0, 1, 2]
    assert improve(np.array([-1, 0, 3, 1]), arc).tolist() == [-1, 0, 1, 1]
    grand = np.zeros((4, 4, 4))
    grand[1, 3, 2] = np.nan  # over the disallowed 3 -> 2: never read
    assert improve(np.array([-1, 0, 3, 1]), arc, None, grand).tolist() == [-1, 0, 1, 1]


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_local_optimum_unchanged(improve) -> None:
    """The best tree of a first-order instance is a local optimum: no swap changes it."""
    arc = np.array([[0, 5, 1, 1], [0, 0, 4, 1], [0, 1, 0, 3], [0, 1, 2, 0]], dtype=float)
    heads = np.array([-1, 0, 1, 2])
    assert improve(heads, arc, rounds=5).tolist() == heads.tolist()


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("improve", IMPLEMENTATIONS)
def test_improve_rejects_bad_input(improve) -> None:
    arc = np.zeros((4, 4))
    parts = np.zeros((4, 4, 4))
    good = np.array([-1, 0, 1, 2])
    with pytest.raises(ValueError, match="cycle"):
        improve(np.array([-1, 2, 3, 1]), arc)
    with pytest.raises(ValueError, match="root"):
        improve(np.array([-1, 0, 0, 2]), arc, single_root=True)
    assert improve(np.array([-1, 0, 0, 2]), arc, single_root=False).tolist() == [-1, 0, 0, 2]
    with pytest.raises(ValueError, match="outside"):
        improve(np.array([-1, 0, 7, 2]), arc)
    with pytest.raises(ValueError, match="outside"):
        improve(np.array([-1, 0, 2**32 + 1, 2]), arc)
    with pytest.raises(ValueError, match="its own head"):
        improve(np.array([-1, 0, 2, 2], dtype=np.int32), arc)
    with pytest.raises(ValueError, match="heads\\[0\\]"):
        improve(np.array([0, 0, 1, 2], dtype=np.int32), arc)
    with pytest.raises(ValueError, match="heads must be an integer array"):
        improve(np.array([-1, 0, 1]), arc)
    with pytest.raises(ValueError, match="heads must be an integer array"):
        improve(good.astype(float), arc)
    with pytest.raises(ValueError, match="arc scores must have shape"):
        improve(good, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="sib scores have shape"):
        improve(good, arc, np.zeros((5, 5, 5)))
    with pytest.raises(ValueError, match="grand scores must have shape"):
        improve(good, arc, None, np.zeros((4, 4)))
    with pytest.raises(ValueError, match="rounds"):
        improve(good, arc, rounds=-1)
    bad = arc.copy()
    bad[2, 3] = np.inf
    with pytest.raises(ValueError, match="\\+inf"):
        improve(good, bad)
    bad = parts.copy()
    bad[1, 2, 3] = np.nan  # 2 and 3 consecutive modifiers of 1
    with pytest.raises(ValueError, match="sib scores must be finite"):
        improve(good, arc, bad)
    bad = parts.copy()
    bad[0, 1, 2] = np.inf
    with pytest.raises(ValueError, match="grand scores must be finite"):
        improve(good, arc, None, bad)
    bad[0, 1, 2] = 0.0
    bad[1, 1, 1] = np.nan  # not a part: ignored
    bad[1, 2, 1] = np.nan  # nor a 2-cycle g == m
    arc[0, 0] = np.inf  # not an arc: ignored
    assert improve(good, arc, bad, bad).tolist() == good.tolist()


def test_improve_nonfinite_parts_checked_alike() -> None:
    """A NaN or inf sibling or grandparent entry is an error exactly when it is a part over
    allowed arcs, in both implementations."""
    rng = np.random.default_rng([SEED, 23])
    for trial in range(300):
        n = int(rng.integers(1, 6))
        arc, sib, grand = random_scores(rng, n, "normal", "both", pruned=0.4)
        part = sib if trial % 2 else grand
        part[tuple(rng.integers(0, n + 1, size=3))] = np.nan if trial % 3 else -np.inf
        heads = random_tree(rng, n, True)
        outcomes = []
        for improve in IMPLEMENTATIONS:
            try:
                outcomes.append(improve(heads, arc, sib, grand).tolist())
            except ValueError as error:
                outcomes.append(str(error))
        assert outcomes[0] == outcomes[1]
