"""Greedy inference (Tchernowitz et al. 2016): the ``bgi`` and ``bgi-pp`` decoders, their C search
dparse/graph/greedy_search.pyx and the Python reference dparse/graph/greedy_reference.py.

The C search returns the reference's tree and beam value on random instances (first and second
order, pruned arcs, ties, single_root, beam 1 and 3). Approximate decoders: every output is a
valid tree (dparse.trees, the shared check) and never scores above the brute-force optimum;
hand-made cases pin the greedy choices; Section 3's identity (sum of the chosen values = total
part weight - 2 * tree score) checks the loss/gain accounting, and with it a beam wide enough to
keep every partial tree makes BGI exact. The suite runs under another seed with
DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees, best_score, best_score2, tree_score2
from dparse.graph.greedy_search import greedy as c_greedy
from dparse.graph.improve import improve_tree

from dparse.decoders import configured_decoder, get_decoder, score_tree
from dparse.graph.greedy_reference import beam_search, greedy
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
GREEDY = ["bgi", "bgi-pp"]
KINDS = ["normal", "ties", "negative"]
ORDERS = ["arc", "sib", "grand", "both"]


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


def order_parts(
    order: str, sib: np.ndarray, grand: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The part arrays of an order: "arc" (none), "sib", "grand" or "both"."""
    return (sib if order in ("sib", "both") else None,
            grand if order in ("grand", "both") else None)


def total_weight(arc: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None) -> float:
    """Sum of the weights of every part of the complete graph (docs/design.md, 'Score arrays
    and parts')."""
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


# -- the C search equals the reference ----------------------------------------------------------


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("pp", [False, True])
def test_greedy_cython_equals_reference(pp: bool, order: str) -> None:
    """dparse/graph/greedy_search.pyx returns the reference's tree and beam value: ties, pruned
    (-inf) arcs, single_root, beams 1 and 3, n = 1..8."""
    rng = np.random.default_rng([SEED, 37, pp, ORDERS.index(order)])
    for case in range(48):
        n = 1 + case % 8
        kind = KINDS[case % 3]
        arc = random_arc(rng, n, kind)
        sib, grand = order_parts(order, *random_parts(rng, n, kind))
        if case % 4 >= 2:
            arc[rng.random(arc.shape) < 0.4] = -np.inf
        single_root, beam = bool(case % 2), 1 + 2 * (case % 5 == 1 or case % 5 == 3)
        alpha, beta = rng.uniform(0.0, 2.5), rng.uniform(0.0, 1.0)
        expected, trace = greedy(arc, sib, grand, single_root=single_root, pp=pp, alpha=alpha,
                                 beta=beta, beam=beam)
        heads, value = c_greedy(arc, sib, grand, single_root, pp, alpha, beta, beam)
        assert heads.tolist() == expected.tolist(), (case, n, kind, single_root, beam)
        assert value == pytest.approx(sum(v for _, v in trace), rel=1e-9, abs=1e-9)


def test_greedy_cython_equals_reference_wide_beam() -> None:
    """Wider beams (duplicates in the candidate lists are common there)."""
    rng = np.random.default_rng([SEED, 41])
    for case in range(12):
        n = 3 + case % 4
        kind = KINDS[case % 3]
        arc = random_arc(rng, n, kind)
        sib, grand = random_parts(rng, n, kind)
        pp, beam = bool(case % 2), [2, 5, 8][case % 3]
        expected, trace = greedy(arc, sib, grand, single_root=case % 4 < 2, pp=pp, beam=beam)
        heads, value = c_greedy(arc, sib, grand, case % 4 < 2, pp, 1.0, 0.5, beam)
        assert heads.tolist() == expected.tolist()
        assert value == pytest.approx(sum(v for _, v in trace), rel=1e-9, abs=1e-9)


# -- validity and the exact optimum -------------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GREEDY)
def test_greedy_first_order_valid(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, GREEDY.index(name), KINDS.index(kind), single_root])
    decoder = get_decoder(name)
    for n in [*range(1, 13), 16, 20, 25, 30]:
        arc = random_arc(rng, n, kind)
        for beam in (1, 3):
            heads = decoder.decode(arc, single_root=single_root, beam=beam)
            assert heads.dtype == np.int32 and heads.shape == (n + 1,)
            check_tree(heads, single_root=single_root)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GREEDY)
def test_greedy_first_order_never_beats_optimum(name: str, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 7, GREEDY.index(name), KINDS.index(kind), single_root])
    decoder, exact = get_decoder(name), get_decoder("cle")
    for n in [1, 2, 3, 4, 5, 6, 7] * 2:
        arc = random_arc(rng, n, kind)
        best = score_tree(exact.decode(arc, single_root=single_root), arc)
        assert best == pytest.approx(best_score(arc, projective=False, single_root=single_root))
        for beam in (1, 3):
            heads = decoder.decode(arc, single_root=single_root, beam=beam)
            check_tree(heads, single_root=single_root)
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
            best = best_score2(arc, **parts, projective=False, single_root=single_root)
            for beam in (1, 3):
                heads = decoder.decode(arc, single_root=single_root, beam=beam, **parts)
                check_tree(heads, single_root=single_root)
                assert tree_score2(heads, arc, **parts) <= best + 1e-9
    for n in [10, 12, 40]:  # larger sentences: validity only
        arc = random_arc(rng, n, kind)
        sib, grand = random_parts(rng, n, kind)
        arc[rng.random(arc.shape) < 0.7] = -np.inf  # a pruned graph, as from a first-order pruner
        for beam in (1, 3):
            heads = decoder.decode(arc, sib=sib, grand=grand, single_root=single_root, beam=beam)
            check_tree(heads, single_root=single_root)


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
            sib, grand = random_parts(rng, n, "normal")
            for name in GREEDY:
                for beam in (1, 3):
                    heads = get_decoder(name).decode(arc, single_root=single_root, beam=beam,
                                                     sib=sib, grand=grand)
                    assert heads.tolist() == tree.tolist()
            arc = rng.normal(size=(n + 1, n + 1))
            arc[rng.random(arc.shape) < 0.5] = np.nan if n % 2 else -np.inf
            for name in GREEDY:
                check_tree(get_decoder(name).decode(arc, single_root=single_root),
                           single_root=single_root)


@pytest.mark.parametrize("pp", [False, True])
def test_greedy_avoids_pruned_arcs_when_a_finite_tree_exists(pp: bool) -> None:
    """-inf arcs are used only when no tree avoids them (decoders.py contract): on random
    pruned graphs where brute force finds a tree of finite arcs, the C search and the reference
    return one, for every part order, single_root, beams 1 and 3."""
    rng = np.random.default_rng([SEED, 17, pp])
    checked = 0
    for case in range(160):
        n = 2 + case % 6
        single_root = bool(case % 2)
        arc = random_arc(rng, n, KINDS[case % 3])
        arc[rng.random(arc.shape) < rng.uniform(0.4, 0.75)] = -np.inf
        if not np.isfinite(best_score(arc, projective=False, single_root=single_root)):
            continue
        checked += 1
        sib, grand = order_parts(ORDERS[case % 4], *random_parts(rng, n, KINDS[case % 3]))
        alpha, beta = rng.uniform(0.0, 2.5), rng.uniform(0.0, 1.0)
        for beam in (1, 3):
            heads, _ = c_greedy(arc, sib, grand, single_root, pp, alpha, beta, beam)
            expected, _ = greedy(arc, sib, grand, single_root=single_root, pp=pp, alpha=alpha,
                                 beta=beta, beam=beam)
            assert heads.tolist() == expected.tolist(), (case, beam)
            check_tree(heads, single_root=single_root)
            assert np.isfinite(arc[heads[1:], np.arange(1, n + 1)]).all(), (case, beam)
    assert checked >= 60


def test_greedy_pruner_like_graphs_equal_reference() -> None:
    """Graphs like a first-order pruner's (each word keeps 2-4 heads, the root few words;
    n = 8..12): the C search, whose witness tree settles most completability checks, returns
    the reference's tree and value, for BGI and BGI-PP, single_root or not, beams 1 and 3."""
    rng = np.random.default_rng([SEED, 37, 11])
    for case in range(24):
        n = 8 + case % 5
        single_root, pp = bool(case % 2), bool(case % 4 >= 2)
        arc = random_arc(rng, n, KINDS[case % 3])
        keep = np.zeros(arc.shape, dtype=bool)
        for m in range(1, n + 1):
            heads = [h for h in range(1, n + 1) if h != m]
            keep[rng.choice(heads, size=int(rng.integers(2, 5)), replace=False), m] = True
        keep[0, rng.choice(np.arange(1, n + 1), size=int(rng.integers(1, 4)), replace=False)] = True
        arc[~keep] = -np.inf
        sib, grand = random_parts(rng, n, KINDS[case % 3])
        for beam in (1, 3):
            heads, value = c_greedy(arc, sib, grand, single_root, pp, 0.5, 0.4, beam)
            expected, trace = greedy(arc, sib, grand, single_root=single_root, pp=pp, alpha=0.5,
                                     beta=0.4, beam=beam)
            assert heads.tolist() == expected.tolist(), (case, beam)
            assert value == pytest.approx(sum(v for _, v in trace), rel=1e-9, abs=1e-9)
            check_tree(heads, single_root=single_root)


# -- the paper's accounting (Section 3) and the beam ----------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("order", ORDERS)
def test_greedy_bgi_values_sum_identity(order: str, single_root: bool) -> None:
    """Every part is gained or lost exactly once, so the BGI values along the returned tree's
    path sum to total - 2 * score, in the reference and in C, beam or not."""
    rng = np.random.default_rng([SEED, 17, len(order), single_root])
    for n in [1, 2, 3, 5, 8]:
        arc = rng.normal(size=(n + 1, n + 1))
        sib, grand = order_parts(order, *random_parts(rng, n, "normal"))
        for beam in (1, 3):
            heads, trace = greedy(arc, sib, grand, single_root=single_root, beam=beam)
            assert {e for e, _ in trace} == {(int(heads[m]), m) for m in range(1, n + 1)}
            expected = total_weight(arc, sib, grand) - 2 * tree_score2(heads, arc, sib, grand)
            assert sum(value for _, value in trace) == pytest.approx(expected)
            heads, value = c_greedy(arc, sib, grand, single_root, False, 1.0, 0.5, beam)
            expected = total_weight(arc, sib, grand) - 2 * tree_score2(heads, arc, sib, grand)
            assert value == pytest.approx(expected)


@pytest.mark.parametrize("single_root", [True, False])
def test_greedy_beam_keeps_distinct_trees(single_root: bool) -> None:
    """The beam never holds a tree twice: a beam wider than the number of trees ends with every
    tree exactly once (n = 3), a narrower one with distinct trees (maybe fewer than its width:
    its partial trees may have fewer distinct completions)."""
    rng = np.random.default_rng([SEED, 43, single_root])
    trees = {tuple(t.tolist()) for t in all_trees(3, False, single_root)}
    for kind in KINDS:
        arc = random_arc(rng, 3, kind)
        sib, grand = random_parts(rng, 3, kind)
        for pp in (False, True):
            final = beam_search(arc, sib, grand, single_root=single_root, pp=pp, beam=100)
            assert sorted(tuple(h.tolist()) for h, _ in final) == sorted(trees)
            final = beam_search(arc, sib, grand, single_root=single_root, pp=pp, beam=4)
            assert len({tuple(h.tolist()) for h, _ in final}) == len(final) <= 4


@pytest.mark.parametrize("order", ORDERS)
def test_greedy_bgi_wide_beam_is_exact(order: str) -> None:
    """With the Section 3 identity, a BGI beam wide enough to keep every partial tree (they
    stay distinct) ranks all trees by score: it returns an optimal tree."""
    rng = np.random.default_rng([SEED, 47, ORDERS.index(order)])
    for n in [1, 2, 3, 4, 4]:
        for single_root in (True, False):
            kind = KINDS[n % 3]
            arc = random_arc(rng, n, kind)
            sib, grand = order_parts(order, *random_parts(rng, n, kind))
            heads, _ = c_greedy(arc, sib, grand, single_root, False, 1.0, 0.5, 1000)
            best = best_score2(arc, sib, grand, projective=False, single_root=single_root)
            assert tree_score2(heads, arc, sib, grand) == pytest.approx(best)


# -- hand-made cases ----------------------------------------------------------------------------


def test_greedy_bgi_hand_first_order() -> None:
    """v = loss - gain: (1, 2) loses only (0, 2) = 0 and the cycle arc (2, 1) = 0 and gains 5."""
    arc = np.zeros((3, 3))
    arc[0, 1], arc[1, 2] = 1.0, 5.0
    heads, trace = greedy(arc, single_root=False)
    assert heads.tolist() == [-1, 0, 1]
    assert trace == [((1, 2), -5.0), ((0, 1), -1.0)]
    assert c_greedy(arc, None, None, False)[1] == -6.0


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
    heads, value = c_greedy(arc, None, grand, False, True, 0.0, 0.5)
    assert heads.tolist() == [-1, 0, 1] and value == pytest.approx(sum(v for _, v in trace))


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
        for beam in (1, 3):
            assert get_decoder(name).decode(arc, beam=beam).tolist() == gold.tolist()


# -- the decoder objects ------------------------------------------------------------------------


@pytest.mark.parametrize("name", GREEDY)
def test_greedy_deterministic(name: str) -> None:
    rng = np.random.default_rng([SEED, 29])
    decoder = get_decoder(name)
    for n in (5, 15):
        arc = rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
        sib, grand = random_parts(rng, n, "ties")
        for beam in (1, 3):
            first = decoder.decode(arc, sib=sib, grand=grand, beam=beam)
            assert all(
                decoder.decode(arc.copy(), sib=sib.copy(), grand=grand.copy(), beam=beam).tolist()
                == first.tolist()
                for _ in range(3)
            )


def test_greedy_registry_and_options() -> None:
    for name in GREEDY:
        decoder = get_decoder(name)
        assert (decoder.exact, decoder.projective, decoder.parts) == (
            False, False, ("arc", "sib", "grand"),
        )
    rng = np.random.default_rng([SEED, 31])
    arc = rng.normal(size=(9, 9))
    sib, grand = random_parts(rng, 8, "normal")
    pp = get_decoder("bgi-pp")
    assert pp.decode(arc, alpha=1.0, beta=0.5, beam=1, improve=0).tolist() == pp.decode(
        arc).tolist()
    configured = configured_decoder("bgi-pp", {"beam": 3, "improve": 5, "alpha": 1.0,
                                               "beta": 0.4})
    assert configured.decode(arc, sib=sib, grand=grand).tolist() == pp.decode(
        arc, sib=sib, grand=grand, beam=3, improve=5, alpha=1.0, beta=0.4).tolist()
    expected, _ = c_greedy(arc, sib, grand, True, True, 2.0, 0.3, 3)
    assert pp.decode(arc, sib=sib, grand=grand, alpha=2, beta=0.3, beam=3).tolist() == \
        expected.tolist()
    expected, _ = c_greedy(arc, sib, None, False, False, 1.0, 0.5, 2)
    assert get_decoder("bgi").decode(arc, sib=sib, beam=np.int64(2), single_root=False).tolist() \
        == expected.tolist()
    for options, message in [
        ({"beta": 1.5}, "beta must be"), ({"beta": float("nan")}, "beta must be"),
        ({"alpha": -1.0}, "alpha must be"), ({"alpha": float("inf")}, "alpha must be"),
        ({"beam": 0}, "beam must be"), ({"beam": 2.0}, "beam must be"),
        ({"beam": True}, "beam must be"), ({"improve": -1}, "improve must be"),
        ({"improve": "5"}, "improve must be"), ({"beam": [3]}, "beam must be"),
    ]:
        with pytest.raises(ValueError, match=message):
            pp.decode(arc, **options)
        with pytest.raises(ValueError, match=message):
            configured_decoder("bgi-pp", options).decode(arc)
    with pytest.raises(TypeError, match="unknown keyword"):
        get_decoder("bgi").decode(arc, alpha=1.0)
    with pytest.raises(TypeError, match="unknown keyword"):
        pp.decode(arc, third=arc)


def test_greedy_improve_option() -> None:
    """improve=s runs s rounds of post-search arc swaps (dparse/graph/improve.pyx) on the
    greedy tree."""
    improve = pytest.importorskip("dparse.graph.improve")
    rng = np.random.default_rng([SEED, 53])
    for case in range(12):
        n = 2 + case
        arc = random_arc(rng, n, KINDS[case % 3])
        sib, grand = random_parts(rng, n, KINDS[case % 3])
        for name in GREEDY:
            decoder = get_decoder(name)
            for rounds in (1, 5):
                heads = decoder.decode(arc, sib=sib, grand=grand, beam=3, improve=rounds)
                start = decoder.decode(arc, sib=sib, grand=grand, beam=3)
                expected = improve.improve_tree(start, arc, sib, grand, rounds, True)
                assert heads.tolist() == expected.tolist()
                assert tree_score2(heads, arc, sib, grand) >= tree_score2(
                    start, arc, sib, grand) - 1e-9


def test_greedy_input_errors() -> None:
    rng = np.random.default_rng([SEED, 59])
    arc = rng.normal(size=(5, 5))
    sib, grand = random_parts(rng, 4, "normal")
    bad = arc.copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"\+inf"):
        c_greedy(bad)
    for name in GREEDY:
        with pytest.raises(ValueError, match="sib and grand scores must be finite"):
            get_decoder(name).decode(arc, sib=np.full((5, 5, 5), np.inf))
        with pytest.raises(ValueError, match="sib and grand scores must be finite"):
            get_decoder(name).decode(arc, grand=np.full((5, 5, 5), np.nan))
    with pytest.raises(ValueError, match="must be finite"):
        greedy(arc, np.full((5, 5, 5), np.nan))
    pruned = arc.copy()
    pruned[0, 3] = pruned[2, 3] = -np.inf
    sib_nan = sib.copy()
    sib_nan[0, 0, 3] = sib_nan[0, 3, 4] = np.nan  # needs (0, 3): never read
    grand_nan = grand.copy()
    grand_nan[2, 3, 1] = np.inf  # needs (2, 3): never read
    expected, _ = greedy(pruned, sib, grand, pp=True)
    assert c_greedy(pruned, sib_nan, grand_nan, True, True)[0].tolist() == expected.tolist()
    with pytest.raises(ValueError, match="shape"):
        c_greedy(arc, np.zeros((4, 4, 4)))
    with pytest.raises(ValueError, match="shape"):
        c_greedy(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="beam must be"):
        c_greedy(arc, beam=0)
    with pytest.raises(ValueError, match="improve must be"):
        c_greedy(arc, improve=-1)
    # the improvement rounds read only parts over allowed arcs, as the search does
    improved = improve_tree(expected, pruned, sib, grand, 3, True)
    assert c_greedy(pruned, sib_nan, grand_nan, True, True, improve=3)[0].tolist() == \
        improved.tolist()
