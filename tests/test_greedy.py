"""Greedy inference (Tchernowitz et al. 2016): the ``bgi`` and ``bgi-pp`` decoders and the Python
reference dparse/greedy_reference.py.

Approximate decoders: every output is a valid tree (dparse.trees, the shared check) and never
scores above the brute-force optimum; hand-made cases pin the greedy choices; Section 3's identity
(sum of the chosen values = total part weight - 2 * tree score) checks the loss/gain accounting.
The suite runs under another seed with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees, best_score, best_score2, tree_score2
from dparse._ext.greedy import greedy1

from dparse.decoders import configured_decoder, get_decoder, score_tree
from dparse.greedy_reference import greedy
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
GREEDY = ["bgi", "bgi-pp"]
KINDS = ["normal", "ties", "negative"]


def random_arc(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """[n+1, n+1] arc scores: normal, tied (integers in -1..1) or all negative."""
    if kind == "normal":
        return rng.normal(size=(n + 1, n + 1))
    if kind == "ties":
        return rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
    return -rng.exponential(3.0, size=(n + 1, n + 1)).round(1)


def random_parts(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """sib and grand [n+1, n+1, n+1] scores of the same kind."""
    shape = (n + 1,) * 3
    if kind == "normal":
        return rng.normal(size=shape), rng.normal(size=shape)
    if kind == "ties":
        return (rng.integers(-1, 2, size=shape).astype(np.float64),) * 2
    return -rng.exponential(1.0, size=shape), -rng.exponential(1.0, size=shape)


def total_weight(arc: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None) -> float:
    """Sum of the weights of every part of the complete graph (DESIGN.md conventions)."""
    size = arc.shape[0]
    total = sum(arc[h, m] for h in range(size) for m in range(1, size) if h != m)
    for h in range(size):
        for s in range(1, size):
            if s == h:
                continue
            if sib is not None:  # m == h, or m strictly between h and s
                total += sib[h, h, s]
                total += sum(sib[h, m, s] for m in range(min(h, s) + 1, max(h, s)) if m != 0)
            if grand is not None and h != 0:
                total += sum(grand[g, h, s] for g in range(size) if g not in (h, s))
    return float(total)


# -- validity and the exact optimum -------------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GREEDY)
def test_greedy_first_order_valid(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, GREEDY.index(name), KINDS.index(kind), single_root])
    decoder = get_decoder(name)
    for n in [*range(1, 13), 16, 20, 25, 30]:
        arc = random_arc(rng, n, kind)
        heads = decoder.decode(arc, single_root=single_root)
        assert heads.dtype == np.int32 and heads.shape == (n + 1,)
        check_tree(heads, single_root=single_root)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GREEDY)
def test_greedy_first_order_never_beats_optimum(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 7, GREEDY.index(name), KINDS.index(kind), single_root])
    decoder, exact = get_decoder(name), get_decoder("cle")
    for n in [1, 2, 3, 4, 5, 6, 7] * 4:
        arc = random_arc(rng, n, kind)
        heads = decoder.decode(arc, single_root=single_root)
        check_tree(heads, single_root=single_root)
        best = score_tree(exact.decode(arc, single_root=single_root), arc)
        assert best == pytest.approx(best_score(arc, projective=False, single_root=single_root))
        assert score_tree(heads, arc) <= best + 1e-9


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GREEDY)
def test_greedy_second_order_valid_and_bounded(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 11, GREEDY.index(name), KINDS.index(kind), single_root])
    decoder = get_decoder(name)
    for n in [1, 2, 3, 4, 5, 6, 7, 7]:
        arc = random_arc(rng, n, kind)
        sib, grand = random_parts(rng, n, kind)
        for parts in ({"sib": sib}, {"grand": grand}, {"sib": sib, "grand": grand}):
            heads = decoder.decode(arc, single_root=single_root, **parts)
            check_tree(heads, single_root=single_root)
            best = best_score2(arc, **parts, projective=False, single_root=single_root)
            assert tree_score2(heads, arc, **parts) <= best + 1e-9
    for n in [10, 12]:  # larger sentences: validity only
        arc = random_arc(rng, n, kind)
        sib, grand = random_parts(rng, n, kind)
        check_tree(decoder.decode(arc, sib=sib, grand=grand, single_root=single_root),
                   single_root=single_root)


@pytest.mark.parametrize("pp", [False, True])
@pytest.mark.parametrize("kind", [*KINDS, "pruned"])
def test_greedy_cython_equals_reference(kind: str, pp: bool) -> None:
    """dparse/_ext/greedy.pyx returns the reference's tree, ties and disallowed arcs included."""
    rng = np.random.default_rng([SEED, 37, len(kind), pp])
    for n in [*range(1, 13), 16, 20, 25, 30]:
        for single_root in (True, False):
            arc = random_arc(rng, n, "normal" if kind == "pruned" else kind)
            if kind == "pruned":
                arc[rng.random(arc.shape) < 0.5] = -np.inf
            alpha, beta = rng.uniform(0.0, 2.5), rng.uniform(0.0, 1.0)
            expected, _ = greedy(arc, single_root=single_root, pp=pp, alpha=alpha, beta=beta)
            heads = greedy1(arc, single_root, pp, alpha, beta)
            assert heads.tolist() == expected.tolist()


def test_greedy_pruned_arcs() -> None:
    """-inf marks a disallowed arc: with only one tree's arcs allowed, that tree comes out; with
    random arcs disallowed, the output is still a tree."""
    rng = np.random.default_rng([SEED, 13])
    for n in range(1, 8):
        for single_root in (True, False):
            trees = all_trees(n, False, single_root)
            tree = trees[rng.integers(len(trees))]
            arc = np.full((n + 1, n + 1), -np.inf)
            arc[tree[1:], np.arange(1, n + 1)] = rng.normal(size=n)
            for name in GREEDY:
                heads = get_decoder(name).decode(arc, single_root=single_root)
                assert heads.tolist() == tree.tolist()
            arc = rng.normal(size=(n + 1, n + 1))
            arc[rng.random(arc.shape) < 0.5] = np.nan if n % 2 else -np.inf
            for name in GREEDY:
                check_tree(get_decoder(name).decode(arc, single_root=single_root),
                           single_root=single_root)


# -- the paper's accounting (Section 3) ---------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("order", ["arc", "sib", "grand", "both"])
def test_greedy_bgi_values_sum_identity(order: str, single_root: bool) -> None:
    """Every part is gained or lost exactly once, so the BGI values sum to total - 2 * score."""
    rng = np.random.default_rng([SEED, 17, len(order), single_root])
    for n in [1, 2, 3, 5, 8]:
        arc = rng.normal(size=(n + 1, n + 1))
        sib, grand = random_parts(rng, n, "normal")
        sib = sib if order in ("sib", "both") else None
        grand = grand if order in ("grand", "both") else None
        heads, trace = greedy(arc, sib, grand, single_root=single_root)
        assert {e for e, _ in trace} == {(int(heads[m]), m) for m in range(1, n + 1)}
        values = sum(value for _, value in trace)
        expected = total_weight(arc, sib, grand) - 2 * tree_score2(heads, arc, sib, grand)
        assert values == pytest.approx(expected)


# -- hand-made cases ----------------------------------------------------------------------------


def test_greedy_bgi_hand_first_order() -> None:
    """v = loss - gain: (1, 2) loses only (0, 2) = 0 and the cycle arc (2, 1) = 0 and gains 5."""
    arc = np.zeros((3, 3))
    arc[0, 1], arc[1, 2] = 1.0, 5.0
    heads, trace = greedy(arc, single_root=False)
    assert heads.tolist() == [-1, 0, 1]
    assert trace == [((1, 2), -5.0), ((0, 1), -1.0)]


def test_greedy_bgi_hand_grandparent() -> None:
    """Only grand[0, 1, 2] scores: (2, 1) and (0, 2) would lose it; the tie between (0, 1) and
    (1, 2) goes to the smaller arc index, and (1, 2) then completes the part."""
    arc = np.zeros((3, 3))
    grand = np.zeros((3, 3, 3))
    grand[0, 1, 2] = 3.0
    heads, trace = greedy(arc, None, grand, single_root=False)
    assert heads.tolist() == [-1, 0, 1]
    assert trace == [((0, 1), 0.0), ((1, 2), -3.0)]
    heads, trace = greedy(arc, None, grand, single_root=False, pp=True, alpha=0.0, beta=0.5)
    assert heads.tolist() == [-1, 0, 1]  # gain 3 * p(1, 2) = 1.5 for (0, 1) first
    assert trace[0] == ((0, 1), -0.75)


def test_greedy_bgi_hand_consecutive_siblings() -> None:
    """sib[0, 1, 3]: 1 and 3 consecutive root children, so (0, 2) must stay out: adding it
    loses the part, and 2 ends under another head."""
    arc = np.zeros((4, 4))
    sib = np.zeros((4, 4, 4))
    sib[0, 1, 3] = 10.0
    heads = get_decoder("bgi").decode(arc, sib=sib, single_root=False)
    assert heads[1] == 0 and heads[3] == 0 and heads[2] != 0
    assert tree_score2(heads, arc, sib) == 10.0


def test_greedy_bgi_pp_beta_zero_takes_best_possible_arc() -> None:
    """beta = 0 leaves only the gain, which is the arc's own score at first order: the result is
    the 'best remaining possible arc' greedy, written out independently here."""
    rng = np.random.default_rng([SEED, 19])
    for n in range(1, 12):
        arc = rng.normal(size=(n + 1, n + 1))
        heads = np.full(n + 1, -1)
        for _ in range(n):
            best = None
            for h in range(n + 1):
                for m in range(1, n + 1):
                    if h == m or heads[m] >= 0:
                        continue
                    x = h
                    while x > 0 and x != m:
                        x = heads[x]
                    if x == m:  # h hangs below m: a cycle
                        continue
                    if best is None or arc[h, m] > arc[best]:
                        best = (h, m)
            assert best is not None
            heads[best[1]] = best[0]
        decoded = get_decoder("bgi-pp").decode(arc, single_root=False, beta=0.0)
        assert decoded.tolist() == heads.tolist()


@pytest.mark.parametrize("name", GREEDY)
def test_greedy_recovers_dominant_tree(name: str) -> None:
    """A tree whose arcs outscore all others by far comes out of both algorithms."""
    rng = np.random.default_rng([SEED, 23])
    for n in range(1, 20):
        gold = get_decoder("cle").decode(rng.normal(size=(n + 1, n + 1)))
        arc = rng.normal(size=(n + 1, n + 1))
        arc[gold[1:], np.arange(1, n + 1)] += 20.0
        assert get_decoder(name).decode(arc).tolist() == gold.tolist()


# -- the decoder objects ------------------------------------------------------------------------


@pytest.mark.parametrize("name", GREEDY)
def test_greedy_deterministic(name: str) -> None:
    rng = np.random.default_rng([SEED, 29])
    decoder = get_decoder(name)
    for n in (5, 15):
        arc = rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
        sib, grand = random_parts(rng, n, "ties")
        first = decoder.decode(arc, sib=sib, grand=grand)
        assert all(
            decoder.decode(arc.copy(), sib=sib.copy(), grand=grand.copy()).tolist()
            == first.tolist()
            for _ in range(3)
        )


def test_greedy_registry_and_options() -> None:
    for name in GREEDY:
        decoder = get_decoder(name)
        assert (decoder.exact, decoder.projective, decoder.parts) == (
            False, False, ("arc", "sib", "grand"),
        )
    arc = np.random.default_rng([SEED, 31]).normal(size=(9, 9))
    pp = get_decoder("bgi-pp")
    assert pp.decode(arc, alpha=1.0, beta=0.5).tolist() == pp.decode(arc).tolist()
    configured = configured_decoder("bgi-pp", {"alpha": 2.0, "beta": 0.3})
    assert configured.decode(arc).tolist() == pp.decode(arc, alpha=2.0, beta=0.3).tolist()
    with pytest.raises(ValueError, match="beta must be in"):
        pp.decode(arc, beta=1.5)
    with pytest.raises(TypeError):
        get_decoder("bgi").decode(arc, alpha=1.0)
    with pytest.raises(ValueError, match="sib scores must be finite"):
        get_decoder("bgi").decode(arc, sib=np.full((9, 9, 9), np.inf))
