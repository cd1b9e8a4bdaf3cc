"""The exact second-order projective decoders (eisner2-sib, eisner2-sibgp) against brute force.

Optimal SCORES are compared, not trees: ties make several trees optimal. The reference scorer
is tests/bruteforce.py's tree_score2 / best_score2, written independently of the decoders. Every
output goes through dparse.trees.check_tree. The suite runs under another seed with
DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import (
    all_trees,
    best_score2,
    relevant_entries2,
    second_order_parts,
    tree_score2,
)
from dparse.graph.eisner import eisner
from dparse.graph.eisner2 import eisner2_sib, eisner2_sibgp

from dparse.decoders import get_decoder
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
NAMES = ["eisner2-sib", "eisner2-sibgp"]
KINDS = ["normal", "ties", "negative", "pruned"]

Parts = dict[str, np.ndarray]


def random_parts(
    rng: np.random.Generator, n: int, kind: str, name: str, single_root: bool
) -> Parts:
    """arc [n+1, n+1], sib (and grand for sibgp) [n+1]*3 of one kind; "pruned" sets about a
    third of the entries to -inf but keeps every part of one random projective tree allowed."""
    N = n + 1
    shapes = {"arc": (N, N), "sib": (N, N, N)}
    if name == "eisner2-sibgp":
        shapes["grand"] = (N, N, N)
    if kind == "normal":
        return {key: rng.normal(size=shape) for key, shape in shapes.items()}
    if kind == "ties":  # integers from a tiny range: many optimal trees
        return {key: rng.integers(-1, 2, size=shape).astype(float) for key, shape in shapes.items()}
    if kind == "negative":
        return {key: -rng.exponential(2.0, size=shape).round(1) for key, shape in shapes.items()}
    parts = {key: rng.integers(-3, 4, size=shape).astype(float) for key, shape in shapes.items()}
    trees = all_trees(n, True, single_root)
    tree = trees[rng.integers(len(trees))]
    sib_parts, grand_parts = second_order_parts(tree)
    keep = {key: np.zeros(shape, dtype=bool) for key, shape in shapes.items()}
    keep["arc"][tree[1:], np.arange(1, N)] = True
    keep["sib"][tuple(np.array(sib_parts).T)] = True
    if "grand" in keep and grand_parts:
        keep["grand"][tuple(np.array(grand_parts).T)] = True
    for key, scores in parts.items():
        scores[(rng.random(scores.shape) < 0.35) & ~keep[key]] = -np.inf
    return parts


def decode(name: str, parts: Parts, single_root: bool) -> np.ndarray:
    """Decodes through the registry and checks the output is a projective tree of the kind."""
    n = parts["arc"].shape[0] - 1
    heads = get_decoder(name).decode(single_root=single_root, **parts)
    assert heads.dtype == np.int32 and heads.shape == (n + 1,)
    check_tree(heads, single_root=single_root, projective=True)
    return heads


# -- brute force ------------------------------------------------------------------------------


def test_eisner2_reference_scorer_by_hand() -> None:
    # 0 -> 3; 3 -> 1, 2 (left, 2 innermost), 5 (right); 5 -> 4 (left)
    heads = np.array([-1, 3, 3, 0, 5, 3])
    sib_parts, grand_parts = second_order_parts(heads)
    assert sorted(sib_parts) == sorted(
        [(0, 0, 3), (3, 3, 2), (3, 2, 1), (3, 3, 5), (5, 5, 4)]
    )
    assert sorted(grand_parts) == sorted([(0, 3, 1), (0, 3, 2), (0, 3, 5), (3, 5, 4)])
    arc = np.zeros((6, 6))
    sib = np.zeros((6, 6, 6))
    grand = np.zeros((6, 6, 6))
    arc[0, 3] = 1
    sib[3, 2, 1] = 10
    sib[3, 1, 2] = 1000  # wrong order: not a part of this tree
    grand[3, 5, 4] = 100
    assert tree_score2(heads, arc, sib, grand) == 111
    assert tree_score2(heads, arc) == 1


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", NAMES)
def test_eisner2_matches_bruteforce(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, NAMES.index(name), KINDS.index(kind), single_root])
    for n in range(1, 8):
        for _ in range(80 if n < 7 else 12):
            parts = random_parts(rng, n, kind, name, single_root)
            heads = decode(name, parts, single_root)
            want = best_score2(**parts, projective=True, single_root=single_root)
            assert np.isfinite(want)
            got = tree_score2(heads, **parts)
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), (n, parts)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_eisner2_fewest_disallowed_parts_when_no_tree_avoids_them(
    name: str, single_root: bool
) -> None:
    """Mostly -inf: the decoder still returns a tree, with as few disallowed parts (arcs,
    sibling and grandparent parts alike) as possible and the best allowed score among those."""
    rng = np.random.default_rng([SEED, 7, NAMES.index(name), single_root])
    big = 1e4  # any tree's allowed score spread is below it
    for n in range(1, 7):
        for _ in range(30):
            parts = random_parts(rng, n, "ties", name, single_root)
            for scores in parts.values():
                scores[rng.random(scores.shape) < 0.7] = -np.inf
            heads = decode(name, parts, single_root)
            lexicographic = {k: np.where(np.isfinite(v), v, -big) for k, v in parts.items()}
            want = best_score2(**lexicographic, projective=True, single_root=single_root)
            assert tree_score2(heads, **lexicographic) == want


@pytest.mark.parametrize("single_root", [True, False])
def test_eisner2_reduces_to_lower_orders(single_root: bool) -> None:
    """sib = 0 gives first-order Eisner's optimum; grand = 0 (or missing) gives eisner2-sib's."""
    rng = np.random.default_rng([SEED, 8, single_root])
    for n in (1, 2, 3, 5, 8, 13, 21):
        for _ in range(10):
            N = n + 1
            arc = rng.integers(-2, 3, size=(N, N)).astype(np.float64)
            sib = rng.normal(size=(N, N, N))
            first = eisner(arc, single_root)
            for heads in (
                eisner2_sib(arc, np.zeros((N, N, N)), single_root),
                eisner2_sib(arc, None, single_root),
                eisner2_sibgp(arc, None, None, single_root),
            ):
                check_tree(heads, single_root=single_root, projective=True)
                assert tree_score2(heads, arc) == tree_score2(first, arc)
            second = eisner2_sib(arc, sib, single_root)
            for heads in (
                eisner2_sibgp(arc, sib, np.zeros((N, N, N)), single_root),
                eisner2_sibgp(arc, sib, None, single_root),
            ):
                check_tree(heads, single_root=single_root, projective=True)
                assert tree_score2(heads, arc, sib) == pytest.approx(tree_score2(second, arc, sib))


# -- hand-made cases --------------------------------------------------------------------------


def test_eisner2_sibling_parts_change_the_tree() -> None:
    # first order: 0 -> 1 -> {2, 3} beats the chain 0 -> 1 -> 2 -> 3 by 1
    n = 3
    arc = np.full((n + 1, n + 1), -5.0)
    arc[0, 1], arc[1, 2], arc[1, 3], arc[2, 3] = 0, 0, 1, 0
    sib = np.zeros((n + 1,) * 3)
    assert eisner(arc).tolist() == [-1, 0, 1, 1]
    assert eisner2_sib(arc, sib).tolist() == [-1, 0, 1, 1]
    sib[1, 2, 3] = -2  # 2 and 3 as consecutive modifiers of 1: now the chain wins
    assert eisner2_sib(arc, sib).tolist() == [-1, 0, 1, 2]
    arc[3, 2] = 0
    sib[1, 1, 3] = 3  # 3 as 1's innermost right modifier: 0 -> 1 -> 3 -> 2 scores 1 + 3
    assert eisner2_sib(arc, sib).tolist() == [-1, 0, 3, 1]


def test_eisner2_root_sibling_parts() -> None:
    n = 2
    arc = np.zeros((n + 1, n + 1))
    sib = np.zeros((n + 1,) * 3)
    sib[0, 1, 2] = 5  # 1 and 2 as consecutive root children
    assert eisner2_sib(arc, sib, single_root=False).tolist() == [-1, 0, 0]
    heads = eisner2_sib(arc, sib, single_root=True)
    assert heads.tolist() in ([-1, 0, 1], [-1, 2, 0])
    sib[0, 0, 2] = 1  # the single root child scores sib[0, 0, m]
    assert eisner2_sib(arc, sib, single_root=True).tolist() == [-1, 2, 0]
    assert eisner2_sibgp(arc, sib, np.zeros((n + 1,) * 3), single_root=True).tolist() == [-1, 2, 0]


def test_eisner2_grandparent_parts_change_the_tree() -> None:
    # 0 -> 1 is forced; then 1 -> {2, 3} (score 1) beats the chain 1 -> 2 -> 3 (score 0)
    n = 3
    arc = np.full((n + 1, n + 1), -9.0)
    arc[0, 1], arc[1, 2], arc[1, 3], arc[2, 3] = 0, 0, 1, 0
    sib = np.zeros((n + 1,) * 3)
    grand = np.zeros((n + 1,) * 3)
    assert eisner2_sibgp(arc, sib, grand).tolist() == [-1, 0, 1, 1]
    grand[0, 1, 3] = -3  # 0 -> 1 -> 3
    assert eisner2_sibgp(arc, sib, grand).tolist() == [-1, 0, 1, 2]
    grand[1, 2, 3] = -4  # 1 -> 2 -> 3
    assert eisner2_sibgp(arc, sib, grand).tolist() == [-1, 0, 1, 1]


def test_eisner2_nan_is_disallowed_and_unused_entries_are_ignored() -> None:
    rng = np.random.default_rng([SEED, 9])
    for n in (1, 2, 4, 6):
        N = n + 1
        for single_root in (True, False):
            masks = relevant_entries2(n, single_root)
            for _ in range(20):
                parts = [rng.normal(size=(N,) * axes) for axes in (2, 3, 3)]
                for scores in parts:
                    scores[rng.random(scores.shape) < 0.2] = -np.inf
                with_nan = [np.where(np.isinf(x), np.nan, x) for x in parts]
                noisy = [np.where(mask, x, np.inf) for x, mask in zip(parts, masks, strict=True)]
                want = eisner2_sibgp(*parts, single_root)
                assert np.array_equal(eisner2_sibgp(*with_nan, single_root), want)
                assert np.array_equal(eisner2_sibgp(*noisy, single_root), want)
                want = eisner2_sib(*parts[:2], single_root)
                assert np.array_equal(eisner2_sib(*with_nan[:2], single_root), want)
                assert np.array_equal(eisner2_sib(*noisy[:2], single_root), want)


# -- long sentences, determinism --------------------------------------------------------------


@pytest.mark.parametrize(("name", "n"), [("eisner2-sib", 150), ("eisner2-sibgp", 60)])
@pytest.mark.parametrize("single_root", [True, False])
def test_eisner2_long_sentence(name: str, n: int, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 10, n])
    parts = random_parts(rng, n, "normal", name, single_root)
    parts["arc"][rng.random(parts["arc"].shape) < 0.2] = -np.inf
    parts["arc"][np.arange(n), np.arange(1, n + 1)] = 1.0  # keep the chain 0 -> 1 -> ... -> n
    heads = decode(name, parts, single_root)
    best = tree_score2(heads, **parts)
    assert np.isfinite(best)
    # an exact decoder beats every other tree, e.g. the first-order optimum and the chain
    for other in (eisner(parts["arc"], single_root), np.arange(-1, n)):
        assert best >= tree_score2(other, **parts) - 1e-9
    if name == "eisner2-sibgp":  # grand = 0: the same optimum as eisner2-sib
        no_grand = dict(parts, grand=np.zeros_like(parts["grand"]))
        sib_heads = eisner2_sib(parts["arc"], parts["sib"], single_root)
        assert tree_score2(decode(name, no_grand, single_root), **no_grand) == pytest.approx(
            tree_score2(sib_heads, **no_grand)
        )


@pytest.mark.parametrize("name", NAMES)
def test_eisner2_deterministic(name: str) -> None:
    rng = np.random.default_rng([SEED, 11])
    for n in (1, 5, 25):
        for kind in ("ties", "normal"):
            parts = random_parts(rng, n, kind, name, True)
            zeros = {key: np.zeros_like(value) for key, value in parts.items()}
            for p in (parts, zeros):
                first = decode(name, p, True)
                for _ in range(3):
                    again = {key: value.copy() for key, value in p.items()}
                    assert np.array_equal(decode(name, again, True), first)
                fortran = {key: np.asfortranarray(value) for key, value in p.items()}
                assert np.array_equal(decode(name, fortran, True), first)


# -- the registry and input checks ------------------------------------------------------------


def test_eisner2_registry() -> None:
    sib, sibgp = get_decoder("eisner2-sib"), get_decoder("eisner2-sibgp")
    assert (sib.exact, sib.projective, sib.parts) == (True, True, ("arc", "sib"))
    assert (sibgp.exact, sibgp.projective, sibgp.parts) == (True, True, ("arc", "sib", "grand"))
    arc, cube = np.zeros((4, 4)), np.zeros((4, 4, 4))
    with pytest.raises(TypeError, match="unknown part.*grand.*accepts arc, sib"):
        sib.decode(arc, sib=cube, grand=cube)
    # None stands for a missing part; missing parts count as zeros
    want = eisner(arc)
    assert np.array_equal(sib.decode(arc, sib=None), want)
    assert np.array_equal(sibgp.decode(arc, sib=None, grand=None), sibgp.decode(arc))
    check_tree(sibgp.decode(arc, grand=cube), single_root=True, projective=True)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("arc", "part", "message"),
    [
        (np.zeros((3, 3)), np.zeros((3, 3, 4)), "sib scores"),
        (np.zeros((3, 3)), np.zeros((4, 4, 4)), "sib scores have shape"),
        (np.zeros((3, 3)), np.zeros((3, 3)), "sib scores must have shape"),
        (np.array([[0, np.inf], [0, 0]]), np.zeros((2, 2, 2)), r"\+inf"),
        (np.zeros((2, 2)), np.full((2, 2, 2), np.inf), r"\+inf"),
    ],
)
def test_eisner2_rejects_bad_scores(
    name: str, arc: np.ndarray, part: np.ndarray, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        get_decoder(name).decode(arc, sib=part)


def test_eisner2_extension_wrappers_check_their_input() -> None:
    cube = np.zeros((3, 3, 3))
    for function in (eisner2_sib, eisner2_sibgp):
        with pytest.raises(ValueError, match="square"):
            function(np.zeros((2, 3)))
        with pytest.raises(ValueError, match=r"sib scores must have shape \[n\+1, n\+1, n\+1\]"):
            function(np.zeros((3, 3)), np.zeros((3, 3, 4)))
        with pytest.raises(ValueError):  # the typed memoryview wants float64, C-contiguous
            function(np.zeros((3, 3)), np.zeros((3, 3, 3), dtype=np.float32))
        with pytest.raises(ValueError):
            function(np.zeros((3, 3)), np.zeros((3, 3, 3), order="F"))
        check_tree(function(np.zeros((3, 3)), cube), single_root=True, projective=True)
    with pytest.raises(ValueError, match="grand scores must have shape"):
        eisner2_sibgp(np.zeros((3, 3)), cube, np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"\+inf"):
        eisner2_sibgp(np.zeros((3, 3)), cube, np.full((3, 3, 3), np.inf))
