"""The exact third-order decoders eisner3 and eisner3-outermost and the part scorers they read,
against brute force.

Optimal SCORES are compared, not trees: ties make several trees optimal. The reference scorers are
tests/bruteforce.py's tree_score3 / best_score3 (docs/design.md, 'Score arrays and parts') for
eisner3 and cube_tree_score / best_cube_score (grand and gsib parts of outermost modifiers only) for
eisner3-outermost, written independently of the decoders. Every output goes through
dparse.trees.check_tree. The suite runs under another seed with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import (
    all_trees,
    best_cube_score,
    best_score,
    best_score3,
    cube_parts,
    cube_tree_score,
    second_order_parts,
    third_order_parts,
    tree_score2,
    tree_score3,
)
from dparse.graph.eisner import eisner
from dparse.graph.eisner2 import eisner2_sib, eisner2_sibgp
from dparse.graph.eisner3 import eisner3, eisner3_scorer
from dparse.graph.partscorer import (
    ArrayPartScorer,
    CountingPartScorer,
    HashedPartScorer,
    PartScorer,
)

from dparse.decoders import get_decoder
from dparse.trees import check_tree, tree_mask

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative"]
PART_SETS = ["arc", "sib", "grand", "trisib", "gsib", "all"]
AXES = {"arc": 2, "sib": 3, "grand": 3, "trisib": 4, "gsib": 4}
NAMES = ["eisner3", "eisner3-outermost"]

Parts = dict[str, np.ndarray]


def random_scores(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=shape)
    if kind == "ties":  # integers from a tiny range: many optimal trees
        return rng.integers(-1, 2, size=shape).astype(float)
    return -rng.exponential(2.0, size=shape).round(1)  # all negative, some ties


def random_parts(rng: np.random.Generator, n: int, kind: str, part_set: str) -> Parts:
    """Scores of one kind for the parts of ``part_set``: "arc" alone, one higher-order kind
    alone (arc scores all 0), or "all"."""
    N = n + 1
    if part_set == "all":
        return {key: random_scores(rng, (N,) * axes, kind) for key, axes in AXES.items()}
    parts = {"arc": random_scores(rng, (N, N), kind) if part_set == "arc" else np.zeros((N, N))}
    if part_set != "arc":
        parts[part_set] = random_scores(rng, (N,) * AXES[part_set], kind)
    return parts


def tree_score(name: str, heads: np.ndarray, parts: Parts) -> float:
    """The brute-force reference score of a tree under the part semantics of decoder ``name``."""
    return (tree_score3 if name == "eisner3" else cube_tree_score)(heads, **parts)


def best_tree_score(name: str, parts: Parts, single_root: bool) -> float:
    """The best :func:`tree_score` over all projective trees (n <= 7)."""
    if name == "eisner3":
        return best_score3(**parts, projective=True, single_root=single_root)
    return best_cube_score(**parts, single_root=single_root)


def decode(parts: Parts, single_root: bool, name: str = "eisner3") -> np.ndarray:
    """Decodes through the registry and checks the output is a projective tree of the kind."""
    n = parts["arc"].shape[0] - 1
    heads = get_decoder(name).decode(single_root=single_root, **parts)
    assert heads.dtype == np.int32 and heads.shape == (n + 1,)
    check_tree(heads, single_root=single_root, projective=True)
    return heads


def pruned_arcs(heads: np.ndarray, arc: np.ndarray) -> int:
    """How many arcs of the tree score -inf or NaN."""
    return int(np.sum(~np.isfinite(arc[heads[1:], np.arange(1, len(heads))])))


def arc_mask(heads: np.ndarray) -> np.ndarray:
    """bool [n+1, n+1]: True at the arcs of the tree."""
    mask = np.zeros((len(heads), len(heads)), dtype=bool)
    mask[heads[1:], np.arange(1, len(heads))] = True
    return mask


# -- the reference scorer ---------------------------------------------------------------------


def test_third_order_reference_parts_by_hand() -> None:
    # 0 -> 3; 3 -> 2, 1 on the left (2 innermost), 5 on the right; 5 -> 4
    heads = np.array([-1, 3, 3, 0, 5, 3])
    trisib, gsib = third_order_parts(heads)
    assert trisib == [(3, 3, 2, 1)]
    assert sorted(gsib) == sorted([(0, 3, 3, 2), (0, 3, 2, 1), (0, 3, 3, 5), (3, 5, 5, 4)])
    # the root's three children: two tri-sibling parts, no grand-sibling part
    assert third_order_parts(np.array([-1, 0, 0, 0])) == ([(0, 0, 1, 2), (0, 1, 2, 3)], [])
    N = 6
    arc, trisib_scores, gsib_scores = np.zeros((N, N)), np.zeros((N,) * 4), np.zeros((N,) * 4)
    arc[0, 3] = 1
    trisib_scores[3, 3, 2, 1] = 10
    trisib_scores[3, 3, 1, 2] = 1000  # wrong order: not a part of this tree
    gsib_scores[3, 5, 5, 4] = 100
    gsib_scores[0, 3, 2, 1] = 10000
    assert tree_score3(heads, arc, trisib=trisib_scores, gsib=gsib_scores) == 10111
    assert tree_score3(heads, arc) == tree_score2(heads, arc) == 1


# -- brute force ------------------------------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("part_set", PART_SETS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", NAMES)
def test_eisner3_matches_bruteforce(name: str, kind: str, part_set: str, single_root: bool) -> None:
    rng = np.random.default_rng(
        [SEED, NAMES.index(name), KINDS.index(kind), PART_SETS.index(part_set), single_root]
    )
    for n in range(1, 8):
        for _ in range(12 if n < 7 else 4):
            parts = random_parts(rng, n, kind, part_set)
            heads = decode(parts, single_root, name)
            want = best_tree_score(name, parts, single_root)
            got = tree_score(name, heads, parts)
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), (n, parts)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_eisner3_avoids_pruned_arcs_and_disallowed_parts(name: str, single_root: bool) -> None:
    """-inf or NaN arcs are never used when a tree avoids them; among those trees the result has
    the fewest disallowed (-inf or NaN) higher-order parts, then the best score; and the scorer
    is never asked for a part containing a pruned arc."""
    rng = np.random.default_rng([SEED, 10, NAMES.index(name), single_root])
    for n in range(1, 8):
        N = n + 1
        trees = all_trees(n, True, single_root)
        for _ in range(25):
            parts = random_parts(rng, n, "ties", "all")
            tree = trees[rng.integers(len(trees))]
            keep = arc_mask(tree)  # one tree's arcs stay allowed: some tree avoids pruned arcs
            parts["arc"][(rng.random((N, N)) < 0.5) & ~keep] = -np.inf
            for key in ("sib", "grand", "trisib", "gsib"):
                parts[key][rng.random(parts[key].shape) < 0.2] = np.nan if key == "sib" else -np.inf
            scorer = CountingPartScorer(ArrayPartScorer(**parts))
            heads = eisner3_scorer(scorer, single_root, name == "eisner3-outermost")
            check_tree(heads, single_root=single_root, projective=True)
            assert scorer.pruned_requests == 0, scorer.counts
            assert pruned_arcs(heads, parts["arc"]) == 0
            # integers: a pruned arc costs more than every disallowed part of a tree together,
            # a disallowed part more than any spread of allowed scores
            lexicographic = {
                k: np.where(np.isfinite(v), v, -1e8 if k == "arc" else -1e4)
                for k, v in parts.items()
            }
            want = best_tree_score(name, lexicographic, single_root)
            assert tree_score(name, heads, lexicographic) == want


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_eisner3_fewest_pruned_arcs_when_no_tree_avoids_them(name: str, single_root: bool) -> None:
    """Mostly -inf arcs: still a tree, with as few pruned arcs as any tree has, and still no
    request for a part containing a pruned arc."""
    rng = np.random.default_rng([SEED, 11, NAMES.index(name), single_root])
    rescued = 0
    for n in range(2, 8):
        for _ in range(20):
            parts = random_parts(rng, n, "ties", "all")
            parts["arc"][rng.random(parts["arc"].shape) < 0.75] = -np.inf
            scorer = CountingPartScorer(ArrayPartScorer(**parts))
            heads = eisner3_scorer(scorer, single_root, name == "eisner3-outermost")
            check_tree(heads, single_root=single_root, projective=True)
            assert scorer.pruned_requests == 0
            fewest = -best_score(
                -1.0 * ~np.isfinite(parts["arc"]), projective=True, single_root=single_root
            )
            assert pruned_arcs(heads, parts["arc"]) == fewest
            rescued += fewest > 0
    assert rescued > 20  # the case was exercised


@pytest.mark.parametrize("single_root", [True, False])
def test_eisner3_reduces_to_lower_orders(single_root: bool) -> None:
    """Only arc parts: first-order Eisner's optimum; arc and sib: eisner2-sib's; arc, sib and
    grand: eisner2-sibgp's (missing or zero third-order parts alike); without grand and gsib
    parts, eisner3-outermost finds eisner3's optimum."""
    rng = np.random.default_rng([SEED, 12, single_root])
    for n in (1, 2, 3, 5, 8, 13, 21, 30):
        N = n + 1
        for _ in range(4 if n > 20 else 10):
            arc = rng.integers(-2, 3, size=(N, N)).astype(np.float64)
            sib, grand = rng.normal(size=(N, N, N)), rng.normal(size=(N, N, N))
            zeros = np.zeros((N,) * 4) if n <= 13 else None
            first = tree_score2(eisner(arc, single_root), arc)
            assert tree_score2(eisner3(arc, single_root=single_root), arc) == first
            assert tree_score2(eisner3(arc, trisib=zeros, single_root=single_root), arc) == first
            second = tree_score2(eisner2_sib(arc, sib, single_root), arc, sib)
            heads = decode({"arc": arc, "sib": sib}, single_root)
            assert tree_score2(heads, arc, sib) == pytest.approx(second, abs=1e-9)
            full = {"arc": arc, "sib": sib, "grand": grand}
            second = tree_score2(eisner2_sibgp(arc, sib, grand, single_root), **full)
            heads = decode(dict(full, gsib=zeros), single_root)
            assert tree_score2(heads, **full) == pytest.approx(second, abs=1e-9)
            if n <= 13:
                third = {"arc": arc, "sib": sib, "trisib": rng.normal(size=(N,) * 4)}
                heads = decode(third, single_root)
                outermost = decode(third, single_root, "eisner3-outermost")
                assert tree_score3(outermost, **third) == pytest.approx(tree_score3(heads, **third))


# -- long sentences: on-demand scores ---------------------------------------------------------


def scorer_tree_score(scorer: PartScorer, heads: np.ndarray, name: str) -> float:
    """A tree's total under ``scorer`` (through its Python ``score``) with the part semantics
    of decoder ``name``."""
    if name == "eisner3-outermost":
        parts = cube_parts(heads)
    else:
        parts = dict(zip(("sib", "grand"), second_order_parts(heads), strict=True))
        parts |= dict(zip(("trisib", "gsib"), third_order_parts(heads), strict=True))
        parts["arc"] = [(int(heads[m]), m) for m in range(1, len(heads))]
    return sum(scorer.score(kind, *part) for kind, found in parts.items() for part in found)


def candidate_arcs(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """arc [n+1, n+1]: about k allowed heads per word (nearer ones likelier) plus the chain
    0 -> 1 -> ... -> n; the other arcs -inf."""
    N = n + 1
    scores = rng.normal(size=(N, N))
    arc = np.full((N, N), -np.inf)
    for m in range(1, N):
        heads = np.array([h for h in range(N) if h != m])
        weight = 1.0 / np.abs(heads - m) ** 1.5
        pick = rng.choice(heads, size=min(k, n), replace=False, p=weight / weight.sum())
        arc[pick, m] = scores[pick, m]
        arc[m - 1, m] = scores[m - 1, m]
    return arc


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_eisner3_long_pruned_sentences(name: str, single_root: bool) -> None:
    """n = 40 and 80 with a few heads per word, hashed higher-order scores: no request with a
    pruned arc, no pruned arc used, and the result outscores the first-order optimum and every
    projective tree one head change away."""
    rng = np.random.default_rng([SEED, 13, NAMES.index(name), single_root])
    for n in (40, 80):
        arc = candidate_arcs(rng, n, 5)
        scorer = CountingPartScorer(HashedPartScorer(arc, seed=n))
        heads = eisner3_scorer(scorer, single_root, name == "eisner3-outermost")
        check_tree(heads, single_root=single_root, projective=True)
        assert scorer.pruned_requests == 0
        assert pruned_arcs(heads, arc) == 0
        best = scorer_tree_score(scorer, heads, name)
        assert best >= scorer_tree_score(scorer, eisner(arc, single_root), name) - 1e-9
        for m, h in zip(*np.nonzero(np.isfinite(arc.T)), strict=True):
            other = heads.copy()
            other[m] = h
            if h != heads[m] and tree_mask(other, single_root=single_root, projective=True):
                assert best >= scorer_tree_score(scorer, other, name) - 1e-9


def test_eisner3_deterministic() -> None:
    rng = np.random.default_rng([SEED, 14])
    for n in (1, 5, 12):
        for kind in ("ties", "normal"):
            parts = random_parts(rng, n, kind, "all")
            zeros = {key: np.zeros_like(value) for key, value in parts.items()}
            for p in (parts, zeros):
                first = decode(p, True)
                for _ in range(3):
                    again = {key: value.copy() for key, value in p.items()}
                    assert np.array_equal(decode(again, True), first)
                fortran = {key: np.asfortranarray(value) for key, value in p.items()}
                assert np.array_equal(decode(fortran, True), first)
    # all parts 0: the tie-breaking rules pick the same tree as a base PartScorer
    assert np.array_equal(eisner3_scorer(PartScorer(6)), eisner3(np.zeros((7, 7))))


def relevant_entries(n: int) -> Parts:
    """Masks of the entries of each part array that some projective tree (with any number of
    root children) uses."""
    N = n + 1
    masks = {key: np.zeros((N,) * axes, dtype=bool) for key, axes in AXES.items()}
    for heads in all_trees(n, True, False):
        sib, grand = second_order_parts(heads)
        trisib, gsib = third_order_parts(heads)
        masks["arc"][heads[1:], np.arange(1, N)] = True
        for key, parts in (("sib", sib), ("grand", grand), ("trisib", trisib), ("gsib", gsib)):
            if parts:
                masks[key][tuple(np.array(parts).T)] = True
    return masks


def test_eisner3_nan_is_disallowed_and_unused_entries_are_ignored() -> None:
    rng = np.random.default_rng([SEED, 15])
    for n in (1, 2, 4, 6):
        masks = relevant_entries(n)
        for single_root in (True, False):
            for _ in range(10):
                parts = random_parts(rng, n, "normal", "all")
                for scores in parts.values():
                    scores[rng.random(scores.shape) < 0.2] = -np.inf
                want = eisner3(**parts, single_root=single_root)
                with_nan = {k: np.where(np.isinf(v), np.nan, v) for k, v in parts.items()}
                noisy = {k: np.where(masks[k], v, np.inf) for k, v in parts.items()}
                assert np.array_equal(eisner3(**with_nan, single_root=single_root), want)
                assert np.array_equal(eisner3(**noisy, single_root=single_root), want)


# -- part scorers -----------------------------------------------------------------------------


def test_array_part_scorer_reads_its_arrays() -> None:
    rng = np.random.default_rng([SEED, 16])
    N = 5
    parts = {key: rng.normal(size=(N,) * axes) for key, axes in AXES.items()}
    scorer = ArrayPartScorer(**parts)
    assert scorer.n == 4 and scorer.arrays[0] is parts["arc"]
    for key, scores in parts.items():
        for index in [tuple(rng.integers(N, size=AXES[key])) for _ in range(20)]:
            assert scorer.score(key, *(int(i) for i in index)) == scores[index]
    only_arcs = ArrayPartScorer(parts["arc"])
    assert only_arcs.score("gsib", 1, 2, 3, 4) == only_arcs.score("sib", 0, 0, 1) == 0.0
    # floor: far below any difference of tree scores, lo - (5n + 1)(hi - lo + 1) for the
    # extremes of the entries some tree uses (not column 0, not the diagonal)
    used = parts["arc"][:, 1:][~np.eye(N, dtype=bool)[:, 1:]]
    lo, hi = min(0.0, used.min()), max(0.0, used.max())
    assert only_arcs.floor == pytest.approx(lo - 21 * (hi - lo + 1))
    with pytest.raises(ValueError, match="unknown part kind"):
        scorer.score("tri", 0, 1)
    with pytest.raises(TypeError, match="3 indices"):
        scorer.score("sib", 0, 1)
    with pytest.raises(IndexError, match="out of range"):
        scorer.score("arc", 0, 5)


def test_base_and_hashed_part_scorers() -> None:
    base = PartScorer(3)
    assert base.n == 3 and base.floor == -1e12
    assert base.score("trisib", 0, 1, 2, 3) == base.score("arc", 0, 1) == 0.0
    with pytest.raises(ValueError, match="n >= 1"):
        PartScorer(0)
    with pytest.raises(ValueError, match="floor"):
        PartScorer(3, floor=np.nan)
    arc = np.arange(16.0).reshape(4, 4)
    one, same, other = (HashedPartScorer(arc, seed=s, scale=2.0) for s in (1, 1, 2))
    values = [one.score("gsib", 0, 1, 2, 3), one.score("trisib", 0, 1, 2, 3),
              one.score("sib", 0, 1, 2), one.score("grand", 0, 1, 2)]
    assert len(set(values)) == 4 and all(-2.0 <= v < 2.0 for v in values)
    assert same.score("gsib", 0, 1, 2, 3) == values[0] != other.score("gsib", 0, 1, 2, 3)
    assert one.score("arc", 2, 3) == 11.0
    with pytest.raises(ValueError, match=r"\+inf"):
        HashedPartScorer(np.full((3, 3), np.inf))


def test_counting_part_scorer_counts() -> None:
    arc = np.zeros((4, 4))
    arc[2, 1] = -np.inf
    counting = CountingPartScorer(ArrayPartScorer(arc))
    assert counting.floor == counting.inner.floor
    counting.score("arc", 2, 1)  # asking an arc is fine, even a pruned one
    counting.score("sib", 2, 2, 3)
    counting.score("grand", 0, 2, 3)
    assert counting.pruned_requests == 0
    counting.score("trisib", 2, 3, 1, 0)  # contains 2 -> 1
    counting.score("gsib", 3, 0, 0, 1)  # contains 3 -> 0, into the root
    assert counting.counts == {"arc": 1, "sib": 1, "grand": 1, "trisib": 1, "gsib": 1}
    assert counting.pruned_requests == 2
    counting.reset()
    assert sum(counting.counts.values()) == counting.pruned_requests == 0


def test_eisner3_asks_each_part_once() -> None:
    """Dense scores: every arc once, and no more sibling requests than sibling parts exist."""
    rng = np.random.default_rng([SEED, 17])
    n = 6
    counting = CountingPartScorer(ArrayPartScorer(**random_parts(rng, n, "normal", "all")))
    eisner3_scorer(counting, False)
    counts = counting.counts
    assert counts["arc"] == n * n  # h in 0..n, m in 1..n, h != m
    masks = relevant_entries(n)
    for key in ("sib", "grand", "trisib", "gsib"):
        assert 0 < counts[key] <= masks[key].sum()


# -- the registry and input checks ------------------------------------------------------------


def test_eisner3_registry() -> None:
    decoder = get_decoder("eisner3")
    assert (decoder.exact, decoder.projective) == (True, True)
    assert decoder.parts == ("arc", "sib", "grand", "trisib", "gsib")
    arc = np.zeros((4, 4))
    with pytest.raises(TypeError, match="unknown part.*quad"):
        decoder.decode(arc, quad=np.zeros((4,) * 4))
    # None stands for a missing part; missing parts count as zeros
    assert np.array_equal(decoder.decode(arc, trisib=None, gsib=None), eisner(arc))
    heads = decoder.decode(arc, sib=np.zeros((4,) * 3), gsib=np.zeros((4,) * 4).astype(np.float32))
    check_tree(heads, single_root=True, projective=True)


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"trisib": np.zeros((3, 3, 3))}, "trisib scores must have shape"),
        ({"gsib": np.zeros((4, 4, 4, 4))}, "gsib scores have shape"),
        ({"sib": np.zeros((3, 3, 3, 3))}, "sib scores must have shape"),
        ({"arc": np.array([[0, 0, np.inf], [0, 0, 0], [0, 0, 0]])}, r"arc scores .*\+inf"),
        ({"trisib": np.full((3,) * 4, np.inf)}, r"trisib scores must not be \+inf"),
        ({"gsib": np.full((3,) * 4, np.inf)}, r"gsib scores must not be \+inf"),
    ],
)
def test_eisner3_rejects_bad_scores(parts: Parts, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_decoder("eisner3").decode(**({"arc": np.zeros((3, 3))} | parts))


def test_eisner3_extension_wrappers_check_their_input() -> None:
    with pytest.raises(ValueError, match="square"):
        eisner3(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="square"):
        eisner3(np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"trisib scores must have shape \[n\+1, n\+1, n\+1, n"):
        eisner3(np.zeros((3, 3)), trisib=np.zeros((3, 3, 3, 4)))
    with pytest.raises(ValueError):  # the scorer reads float64 C-contiguous arrays only
        eisner3(np.zeros((3, 3)), gsib=np.zeros((3,) * 4, dtype=np.float32))
    with pytest.raises(ValueError):
        eisner3(np.zeros((3, 3)), sib=np.zeros((3, 3, 3), order="F"))
    with pytest.raises(TypeError):
        eisner3_scorer(None)
    check_tree(eisner3(np.zeros((3, 3)), single_root=False), projective=True)
