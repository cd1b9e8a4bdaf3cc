"""dparse.graph.kbest (the K best projective and non-projective first-order trees, and
projective second-order ones) against brute-force enumeration of every tree.

For random score matrices (ties, negative scores, disallowed arcs as -inf and NaN, matrices
that admit no allowed tree) and every K from 1 to more than the number of trees, the list must
hold min(K, trees) distinct valid trees of the right kind, best first, whose scores are the K
best of the enumeration (ties make several trees equally good, so scores are compared as sorted
lists) and equal to each tree's own score; with K at least the number of trees it holds every
tree. The first tree is the 1-best decoder's own. The suite runs under another seed with
DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees, tree_score, tree_score2
from dparse.graph.cle import chu_liu_edmonds
from dparse.graph.eisner import eisner
from dparse.graph.eisner2 import eisner2_sibgp
from dparse.graph.kbest import KBEST, kbest_cle, kbest_eisner, kbest_eisner2

from dparse.trees import check_tree, tree_mask

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
# (k-best function, its 1-best decoder, projective)
METHODS = {"eisner": (kbest_eisner, eisner, True), "cle": (kbest_cle, chu_liu_edmonds, False)}
KINDS = ["normal", "ties", "negative", "pruned", "nan", "blocked"]


def random_scores(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """[n+1, n+1] scores of one kind; "pruned" and "nan" disallow about a third of the arcs,
    "blocked" most of them (often leaving no allowed tree)."""
    if kind == "normal":
        return rng.normal(size=(n + 1, n + 1))
    if kind == "ties":  # integers from a tiny range: many equal trees
        return rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
    if kind == "negative":
        return -rng.exponential(3.0, size=(n + 1, n + 1)).round(1)
    arc = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(np.float64)
    share = 0.8 if kind == "blocked" else 0.35
    arc[rng.random(arc.shape) < share] = np.nan if kind == "nan" else -np.inf
    return arc


def expected_scores(arc: np.ndarray, projective: bool, single_root: bool
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Every tree of the kind without a disallowed arc, and their scores, best first."""
    n = arc.shape[0] - 1
    trees = all_trees(n, projective, single_root)
    scores = tree_score(trees, np.where(np.isnan(arc), -np.inf, arc))
    keep = np.isfinite(scores)
    order = np.argsort(-scores[keep], kind="stable")
    return trees[keep][order], scores[keep][order]


def check_list(result: list, arc: np.ndarray, k: int, method: str, single_root: bool) -> None:
    """The k-best ``result`` of ``method`` for ``arc`` against brute force."""
    kbest, decoder, projective = METHODS[method]
    n = arc.shape[0] - 1
    trees, scores = expected_scores(arc, projective, single_root)
    one_best = decoder(arc, single_root)
    if len(trees) == 0:  # no allowed tree: the decoder's tree alone, at -inf
        assert len(result) == 1
        assert np.array_equal(result[0][0], one_best) and result[0][1] == -np.inf
        return
    assert len(result) == min(k, len(trees))
    heads = np.array([h for h, _ in result])
    got = np.array([s for _, s in result])
    assert heads.dtype == np.int32 and heads.shape == (len(result), n + 1)
    check_tree(heads[0], single_root=single_root, projective=projective)
    assert tree_mask(heads, single_root=single_root, projective=projective).all()
    assert len(np.unique(heads, axis=0)) == len(heads), "trees must be distinct"
    np.testing.assert_allclose(got, tree_score(heads, arc), rtol=0, atol=1e-9)
    assert np.all(np.diff(got) <= 1e-9), "best first"
    np.testing.assert_allclose(got, scores[: len(got)], rtol=0, atol=1e-9)
    # the first tree is the decoder's own
    assert np.array_equal(heads[0], one_best)
    if k >= len(trees):  # every tree, once
        assert np.array_equal(np.unique(heads, axis=0), np.unique(trees, axis=0))


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 7))
def test_kbest_equals_brute_force(method: str, single_root: bool, n: int) -> None:
    rng = np.random.default_rng([SEED, n, single_root, method == "cle"])
    kbest, _, projective = METHODS[method]
    total = len(all_trees(n, projective, single_root))
    for kind in KINDS:
        for _ in range(2 if n < 6 else 1):
            arc = random_scores(rng, n, kind)
            for k in sorted({1, 2, 3, 10, total, total + 2}):
                check_list(kbest(arc, k, single_root), arc, k, method, single_root)


@pytest.mark.parametrize("method", list(METHODS))
def test_longer_sentence_against_decoder(method: str) -> None:
    """Beyond brute force (n = 25): distinct valid trees, best first, the decoder's first,
    each tree's score its own, and the 10 best the first 10 of the 30 best."""
    kbest, decoder, projective = METHODS[method]
    rng = np.random.default_rng([SEED, 25])
    arc = rng.normal(size=(26, 26))
    result = kbest(arc, 30, True)
    heads = np.array([h for h, _ in result])
    scores = np.array([s for _, s in result])
    assert len(result) == 30 and len({h.tobytes() for h in heads}) == 30
    for h in heads:
        check_tree(h, single_root=True, projective=projective)
    np.testing.assert_allclose(scores, tree_score(heads, arc), rtol=0, atol=1e-9)
    assert np.all(np.diff(scores) <= 1e-9)
    assert np.array_equal(heads[0], decoder(arc, True))
    # a prefix of a longer list: the K best do not depend on K
    shorter = kbest(arc, 10, True)
    np.testing.assert_allclose([s for _, s in shorter], scores[:10], rtol=0, atol=1e-9)


@pytest.mark.parametrize("single_root", [True, False])
def test_kbest_cle_seven_words(single_root: bool) -> None:
    """kbest_cle at n = 7 (117649 single-root, 262144 trees in all) against brute force: every
    kind of score, and 0/1 scores whose many cycles of equal picks tie thousands of trees."""
    rng = np.random.default_rng([SEED, 7, single_root])
    for kind in [*KINDS, "binary"]:
        if kind == "binary":
            arc = rng.integers(0, 2, size=(8, 8)).astype(np.float64)
        else:
            arc = random_scores(rng, 7, kind)
        for k in (1, 25, 120):
            check_list(kbest_cle(arc, k, single_root), arc, k, "cle", single_root)


def test_kbest_cle_ties_are_deterministic() -> None:
    """Tied lists come out the same way on every call (the module doc's order), and a shorter
    list is a prefix of a longer one."""
    rng = np.random.default_rng([SEED, 8])
    for _ in range(5):
        arc = rng.integers(-1, 2, size=(7, 7)).astype(np.float64)
        first = kbest_cle(arc, 40, True)
        again = kbest_cle(arc, 40, True)
        shorter = kbest_cle(arc, 15, True)
        assert [h.tolist() for h, _ in first] == [h.tolist() for h, _ in again]
        assert [h.tolist() for h, _ in shorter] == [h.tolist() for h, _ in first[:15]]


def random_parts(rng: np.random.Generator, n: int, kind: str) -> dict[str, np.ndarray]:
    """Sibling and grandparent scores [n+1]^3 of one kind (as :func:`random_scores`; "pruned"
    and "nan" disallow a tenth of the parts, "blocked" a third)."""
    parts = {}
    for name in ("sib", "grand"):
        if kind == "normal":
            part = rng.normal(size=(n + 1,) * 3)
        elif kind == "ties":
            part = rng.integers(-1, 2, size=(n + 1,) * 3).astype(np.float64)
        elif kind == "negative":
            part = -rng.exponential(1.0, size=(n + 1,) * 3).round(1)
        else:
            part = rng.integers(-2, 3, size=(n + 1,) * 3).astype(np.float64)
            share = 0.3 if kind == "blocked" else 0.1
            part[rng.random(part.shape) < share] = np.nan if kind == "nan" else -np.inf
        parts[name] = part
    return parts


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 6))
def test_second_order_kbest_equals_brute_force(single_root: bool, n: int) -> None:
    """kbest_eisner2 (sibling and grandparent parts, with either or both missing) against every
    projective tree scored part by part (tests/bruteforce.py, tree_score2)."""
    rng = np.random.default_rng([SEED, n, single_root, 2])
    trees = all_trees(n, True, single_root)
    for kind in KINDS:
        arc = random_scores(rng, n, kind)
        parts = random_parts(rng, n, kind)
        for given in ({}, {"sib": parts["sib"]}, {"grand": parts["grand"]}, parts):
            clean = {k: np.where(np.isnan(v), -np.inf, v) for k, v in given.items()}
            scores = np.array([tree_score2(t, np.where(np.isnan(arc), -np.inf, arc),
                                           clean.get("sib"), clean.get("grand"))
                               for t in trees])
            keep = np.isfinite(scores)
            expected = np.sort(scores[keep])[::-1]
            one_best = eisner2_sibgp(arc, given.get("sib"), given.get("grand"), single_root)
            for k in sorted({1, 3, len(trees), len(trees) + 2}):
                result = kbest_eisner2(arc, k, single_root, **given)
                if not keep.any():  # no allowed tree: the decoder's tree alone, at -inf
                    assert len(result) == 1 and result[0][1] == -np.inf
                    assert np.array_equal(result[0][0], one_best)
                    continue
                heads = np.array([h for h, _ in result])
                got = np.array([s for _, s in result])
                assert len(result) == min(k, keep.sum())
                assert tree_mask(heads, single_root=single_root, projective=True).all()
                assert len(np.unique(heads, axis=0)) == len(heads)
                own = [tree_score2(h, arc, clean.get("sib"), clean.get("grand")) for h in heads]
                np.testing.assert_allclose(got, own, rtol=0, atol=1e-9)
                np.testing.assert_allclose(got, expected[: len(got)], rtol=0, atol=1e-9)
                # the first tree scores what the decoder's does
                assert got[0] == pytest.approx(
                    tree_score2(one_best, arc, clean.get("sib"), clean.get("grand")), abs=1e-9)
                if k >= keep.sum():
                    assert np.array_equal(np.unique(heads, axis=0),
                                          np.unique(trees[keep], axis=0))


def test_second_order_without_parts_is_first_order() -> None:
    rng = np.random.default_rng([SEED, 30])
    arc = rng.normal(size=(31, 31))
    first = kbest_eisner(arc, 20, True)
    second = kbest_eisner2(arc, 20, True, sib=np.zeros((31, 31, 31)))
    np.testing.assert_allclose([s for _, s in first], [s for _, s in second], rtol=0,
                               atol=1e-9)


def test_registry_and_errors() -> None:
    assert KBEST == {"cle": kbest_cle, "eisner": kbest_eisner, "eisner2-sib": kbest_eisner2,
                     "eisner2-sibgp": kbest_eisner2}
    arc = np.zeros((3, 3))
    with pytest.raises(ValueError, match="sib must be"):
        kbest_eisner2(arc, 2, sib=np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"grand scores must not be \+inf"):
        kbest_eisner2(arc, 2, grand=np.full((3, 3, 3), np.inf))
    for kbest in KBEST.values():
        with pytest.raises(ValueError, match="at least 1"):
            kbest(arc, 0)
        bad = arc.copy()
        bad[0, 1] = np.inf
        with pytest.raises(ValueError, match=r"\+inf"):
            kbest(bad, 2)
        with pytest.raises(ValueError, match="square"):
            kbest(np.zeros((1, 1)), 2)
