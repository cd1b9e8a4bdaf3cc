"""dparse.decoders and the exact first-order decoders (cle, eisner) against brute force.

Optimal SCORES are compared, not trees: ties make several trees optimal. Every output goes
through dparse.trees, the check all decoder tests share. The suite runs under another seed with
DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees, best_score, tree_score
from dparse.graph.cle import chu_liu_edmonds
from dparse.graph.eisner import eisner

from dparse import decoders
from dparse.decoders import (
    Decoder,
    UnknownDecoderError,
    available_decoders,
    get_decoder,
    register_decoder,
    score_tree,
)
from dparse.errors import DparseError
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
EXACT = ["cle", "eisner"]
KINDS = ["normal", "ties", "negative", "pruned"]


def random_scores(
    rng: np.random.Generator, n: int, kind: str, projective: bool, single_root: bool
) -> np.ndarray:
    """[n+1, n+1] scores of one kind; "pruned" keeps some tree of the right kind allowed."""
    if kind == "normal":
        return rng.normal(size=(n + 1, n + 1))
    if kind == "ties":  # integers from a tiny range: many optimal trees
        return rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
    if kind == "negative":
        return -rng.exponential(3.0, size=(n + 1, n + 1)).round(1)
    arc = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(np.float64)
    keep = np.zeros(arc.shape, dtype=bool)
    trees = all_trees(n, projective, single_root)
    tree = trees[rng.integers(len(trees))]
    keep[tree[1:], np.arange(1, n + 1)] = True
    arc[(rng.random(arc.shape) < 0.5) & ~keep] = -np.inf
    return arc


def check_output(heads: np.ndarray, n: int, projective: bool, single_root: bool) -> None:
    assert heads.dtype == np.int32 and heads.shape == (n + 1,)
    check_tree(heads, single_root=single_root, projective=projective)


# -- brute force ------------------------------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", EXACT)
def test_decoders_exact_match_bruteforce(name: str, kind: str, single_root: bool) -> None:
    decoder = get_decoder(name)
    rng = np.random.default_rng([SEED, EXACT.index(name), KINDS.index(kind), single_root])
    for n in range(1, 8):
        for _ in range(100 if n < 7 else 40):
            arc = random_scores(rng, n, kind, decoder.projective, single_root)
            heads = decoder.decode(arc, single_root=single_root)
            check_output(heads, n, decoder.projective, single_root)
            want = best_score(arc, projective=decoder.projective, single_root=single_root)
            assert np.isfinite(want)
            assert score_tree(heads, arc) == pytest.approx(want, rel=1e-9, abs=1e-9), (n, arc)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", EXACT)
def test_decoders_fewest_disallowed_arcs_when_no_tree_avoids_them(
    name: str, single_root: bool
) -> None:
    """Mostly -inf: the decoder still returns a tree, with as few disallowed arcs as possible
    and the best allowed score among those."""
    decoder = get_decoder(name)
    rng = np.random.default_rng([SEED, 7, EXACT.index(name), single_root])
    for n in range(2, 7):
        for _ in range(40):
            arc = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(np.float64)
            arc[rng.random(arc.shape) < 0.8] = -np.inf
            heads = decoder.decode(arc, single_root=single_root)
            check_output(heads, n, decoder.projective, single_root)
            big = 1e4  # any tree's allowed score spread is below it
            lexicographic = np.where(np.isfinite(arc), arc, -big)
            want = best_score(lexicographic, projective=decoder.projective, single_root=single_root)
            assert score_tree(heads, lexicographic) == want


@pytest.mark.parametrize("name", EXACT)
def test_decoders_nan_is_disallowed(name: str) -> None:
    rng = np.random.default_rng([SEED, 8])
    for _ in range(50):
        arc = rng.normal(size=(6, 6))
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        with_nan = np.where(np.isinf(arc), np.nan, arc)
        for single_root in (True, False):
            assert np.array_equal(
                get_decoder(name).decode(arc, single_root=single_root),
                get_decoder(name).decode(with_nan, single_root=single_root),
            )


@pytest.mark.parametrize("name", EXACT)
def test_decoders_ignore_root_column_and_diagonal(name: str) -> None:
    rng = np.random.default_rng([SEED, 9])
    arc = rng.normal(size=(8, 8))
    noisy = arc.copy()
    noisy[:, 0] = [np.inf, -np.inf, np.nan, 1e300, 5, 6, 7, 8]
    np.fill_diagonal(noisy, np.inf)
    for single_root in (True, False):
        want = get_decoder(name).decode(arc, single_root=single_root)
        assert np.array_equal(get_decoder(name).decode(noisy, single_root=single_root), want)


# -- hand-made cases --------------------------------------------------------------------------


def arcs(n: int, scored: dict[tuple[int, int], float], rest: float = -10.0) -> np.ndarray:
    arc = np.full((n + 1, n + 1), rest)
    for (h, m), score in scored.items():
        arc[h, m] = score
    return arc


def test_decoders_cle_contracts_cycles() -> None:
    # best heads: 1 <-> 2 and 3 <-> 4 are cycles; after contracting them {1,2} and {3,4} prefer
    # each other (a cycle of contracted nodes: a nested contraction); the root arcs are weak
    arc = arcs(
        4,
        {
            (2, 1): 10,
            (1, 2): 10,
            (4, 3): 10,
            (3, 4): 10,
            (3, 2): 9,
            (2, 3): 9,
            (0, 1): 1,
            (0, 4): 2,
        },
    )
    heads = chu_liu_edmonds(arc, single_root=False)
    # break the outer cycle where it costs least: enter {1..4} from the root at 4 (2 vs 1 - 1)
    assert heads.tolist() == [-1, 2, 3, 4, 0]
    assert score_tree(heads, arc) == best_score(arc, projective=False, single_root=False) == 31
    single = chu_liu_edmonds(arc, single_root=True)
    assert score_tree(single, arc) == best_score(arc, projective=False, single_root=True) == 31


def test_decoders_cle_nested_contraction_bruteforce() -> None:
    """Cycles inside cycles: a ring 1 -> 2 -> ... -> 7 -> 1 of strong arcs, with pairs that
    prefer each other even more; every word's best head lies on a cycle."""
    n = 7
    scored = {(m % n + 1, m): 5.0 for m in range(1, n + 1)}  # ring
    scored.update({(2, 1): 8.0, (1, 2): 8.0, (4, 3): 8.0, (3, 4): 8.0, (6, 5): 7.0, (5, 6): 7.0})
    scored.update({(0, m): float(m) - 10 for m in range(1, n + 1)})
    arc = arcs(n, scored, rest=-20.0)
    for single_root in (True, False):
        heads = chu_liu_edmonds(arc, single_root)
        check_tree(heads, single_root=single_root)
        want = best_score(arc, projective=False, single_root=single_root)
        assert score_tree(heads, arc) == want


def test_decoders_single_root_differs() -> None:
    # two strong root arcs: multi-root takes both, single-root must give one up
    arc = arcs(2, {(0, 1): 5, (0, 2): 5, (1, 2): 1, (2, 1): 2})
    for decode in (chu_liu_edmonds, eisner):
        assert decode(arc, single_root=False).tolist() == [-1, 0, 0]
        assert decode(arc, single_root=True).tolist() == [-1, 2, 0]  # 5 + 2 beats 5 + 1
    arc[2, 1] = 0
    for decode in (chu_liu_edmonds, eisner):
        assert decode(arc, single_root=True).tolist() == [-1, 0, 1]  # 5 + 1 beats 5 + 0


def test_decoders_eisner_rejects_crossing_optimum() -> None:
    # the best tree 0 -> 2, 2 -> 4, 4 -> 1, 1 -> 3 is non-projective
    arc = arcs(4, {(0, 2): 5, (2, 4): 5, (4, 1): 5, (1, 3): 5}, rest=0.0)
    assert chu_liu_edmonds(arc).tolist() == [-1, 4, 0, 1, 2]
    heads = eisner(arc)
    check_tree(heads, single_root=True, projective=True)
    assert score_tree(heads, arc) == best_score(arc, projective=True, single_root=True) < 20


# -- large inputs, determinism, speed-related behaviour ---------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
def test_decoders_large_random_sentence(single_root: bool) -> None:
    n = 200
    rng = np.random.default_rng([SEED, 10])
    arc = rng.normal(size=(n + 1, n + 1))
    arc[rng.random(arc.shape) < 0.2] = -np.inf
    arc[np.arange(n), np.arange(1, n + 1)] = rng.normal(size=n)  # keep the chain 0->1->...->n
    cle = get_decoder("cle").decode(arc, single_root=single_root)
    proj = get_decoder("eisner").decode(arc, single_root=single_root)
    check_tree(cle, single_root=single_root)
    check_tree(proj, single_root=single_root, projective=True)
    chain = np.arange(-1, n)
    # star: the best root child heads every other word (-inf arcs make it worse, not invalid)
    best_root = int(np.argmax(arc[0, 1:])) + 1
    star = np.full(n + 1, best_root)
    star[0], star[best_root] = -1, 0
    upper = np.nansum(np.max(np.where(np.eye(n + 1, dtype=bool), -np.inf, arc)[:, 1:], axis=0))
    assert score_tree(cle, arc) >= score_tree(proj, arc) >= score_tree(chain, arc)
    assert score_tree(cle, arc) >= score_tree(star, arc)
    assert score_tree(cle, arc) <= upper
    assert np.isfinite(score_tree(cle, arc))


@pytest.mark.parametrize("name", EXACT)
def test_decoders_deterministic(name: str) -> None:
    rng = np.random.default_rng([SEED, 11])
    decoder = get_decoder(name)
    for n in (1, 5, 30):
        for arc in (rng.integers(0, 2, size=(n + 1, n + 1)).astype(float), np.zeros((n + 1,) * 2)):
            first = decoder.decode(arc)
            for _ in range(3):
                assert np.array_equal(decoder.decode(arc.copy()), first)
            assert np.array_equal(decoder.decode(np.asfortranarray(arc)), first)


@pytest.mark.parametrize("name", EXACT)
def test_decoders_input_conversion(name: str) -> None:
    decoder = get_decoder(name)
    arc = np.random.default_rng([SEED, 12]).normal(size=(6, 6))
    want = decoder.decode(arc)
    assert np.array_equal(
        decoder.decode(arc.astype(np.float32).astype(np.float64)),
        decoder.decode(arc.astype(np.float32)),
    )
    assert np.array_equal(decoder.decode(arc.tolist()), want)
    big = np.zeros((12, 12))
    big[::2, ::2] = arc
    assert np.array_equal(decoder.decode(big[::2, ::2]), want)  # strided view
    frozen = arc.copy()
    frozen.flags.writeable = False
    assert np.array_equal(decoder.decode(frozen), want)
    assert np.array_equal(
        decoder.decode(np.arange(9).reshape(3, 3)), decoder.decode(np.arange(9.0).reshape(3, 3))
    )


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (np.zeros((3, 4)), ValueError, r"shape \[n\+1, n\+1\]"),
        (np.zeros((1, 1)), ValueError, "n >= 1"),
        (np.zeros(4), ValueError, "shape"),
        (np.zeros((3, 3, 3)), ValueError, "shape"),
        (np.array([["a", "b"], ["c", "d"]]), ValueError, "real numbers"),
        (np.array([[0, np.inf], [0, 0]]), ValueError, r"\+inf"),
    ],
)
def test_decoders_reject_bad_scores(name: str, bad: np.ndarray, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        get_decoder(name).decode(bad)


@pytest.mark.parametrize("function", [chu_liu_edmonds, eisner])
def test_decoders_extension_wrappers_check_their_input(function) -> None:
    with pytest.raises(ValueError, match="square"):
        function(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="n >= 1"):
        function(np.zeros((1, 1)))
    with pytest.raises(ValueError):  # the typed memoryview wants float64, C-contiguous
        function(np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        function(np.asfortranarray(np.zeros((3, 3))))
    check_tree(function(np.zeros((3, 3))), single_root=True)


# -- the registry -----------------------------------------------------------------------------


def test_decoders_registry() -> None:
    assert {"cle", "eisner"} <= set(available_decoders())
    assert available_decoders() == sorted(available_decoders())
    cle, proj = get_decoder("cle"), get_decoder("eisner")
    assert (cle.name, cle.exact, cle.projective, cle.parts) == ("cle", True, False, ("arc",))
    assert (proj.name, proj.exact, proj.projective, proj.parts) == ("eisner", True, True, ("arc",))
    assert "cle" in repr(cle)


def test_decoders_unknown_name() -> None:
    with pytest.raises(DparseError, match=r"unknown decoder 'nope'; available: .*cle.*eisner"):
        get_decoder("nope")
    with pytest.raises(LookupError):
        get_decoder("nope")
    assert issubclass(UnknownDecoderError, DparseError)


def test_decoders_unknown_part() -> None:
    with pytest.raises(TypeError, match="unknown part.*sib.*accepts arc"):
        get_decoder("cle").decode(np.zeros((3, 3)), sib=np.zeros((3, 3, 3)))


def test_decoders_register(monkeypatch: pytest.MonkeyPatch) -> None:
    available_decoders()  # every provider module imported (registered) before the copy
    monkeypatch.setattr(decoders, "_REGISTRY", dict(decoders._REGISTRY))

    @register_decoder
    class LeftBranching(Decoder):
        name = "test-left"
        exact = False
        projective = True
        parts = ("arc", "sib")

        def _decode(self, arc: np.ndarray, single_root: bool, **parts: np.ndarray) -> np.ndarray:
            assert set(parts) <= {"sib"}
            return np.arange(-1, arc.shape[0] - 1, dtype=np.int32)

    assert "test-left" in available_decoders()
    decoder = get_decoder("test-left")
    assert isinstance(decoder, LeftBranching)
    assert decoder.decode(np.zeros((4, 4)), sib=np.zeros((4, 4, 4))).tolist() == [-1, 0, 1, 2]
    with pytest.raises(ValueError, match="sib scores have shape"):
        decoder.decode(np.zeros((4, 4)), sib=np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match="already registered"):
        register_decoder(LeftBranching())
    register_decoder(LeftBranching(), replace=True)
    with pytest.raises(TypeError, match="Decoder objects"):
        register_decoder(object())  # type: ignore[arg-type]


def test_decoders_score_tree() -> None:
    arc = np.arange(16.0).reshape(4, 4)
    assert score_tree([-1, 0, 1, 1], arc) == arc[0, 1] + arc[1, 2] + arc[1, 3]
    assert score_tree(np.array([-1, 0, 1, 1]), arc) == tree_score(np.array([-1, 0, 1, 1]), arc)
    arc[1, 2] = -np.inf
    assert score_tree([-1, 0, 1, 1], arc) == -np.inf
