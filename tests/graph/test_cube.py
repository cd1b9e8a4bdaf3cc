"""Cube pruning (dparse/_ext/cubepruning.pyx) and the generalized Eisner chart with the ``cube``
decoder (dparse/graph/generalized_eisner.pyx).

Scores are compared, not trees (ties make several trees optimal), except where random
continuous scores make the optimum unique. The reference scorer of whole trees is
tests/bruteforce.py's cube_tree_score (the ArrayScorer semantics), written independently of
the chart; every output goes through dparse.trees.check_tree. The suite runs under another
seed with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from bruteforce import all_trees, best_cube_score, cube_parts, cube_tree_score, tree_score2
from dparse._ext.cubepruning import cube_kbest
from dparse.graph.eisner import eisner
from dparse.graph.eisner2 import eisner2_sib
from dparse.graph.generalized_eisner import (
    ArrayScorer,
    ChartScorer,
    GeneralizedEisner,
    LabeledArrayScorer,
    cube_parse,
)

from dparse.decoders import configured_decoder, get_decoder, score_tree
from dparse.graph.decoders import CubePruning
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative", "pruned"]
HIGHER = ["sib", "grand", "trisib", "gsib"]
NDIM = {"arc": 2, "sib": 3, "grand": 3, "trisib": 4, "gsib": 4}

Parts = dict[str, np.ndarray]


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded by DPARSE_TEST_SEED and the test's name."""
    return np.random.default_rng([SEED, *request.node.name.encode()])


def random_parts(
    rng: np.random.Generator, n: int, kind: str, names: tuple[str, ...], single_root: bool
) -> Parts:
    """Score arrays for ``names`` (arc always) of one kind: "normal" N(0, 1); "ties" integers
    in -1..1; "negative" all below 0; "pruned" integers in -3..3 with about a third of the
    entries -inf, but every part (bruteforce.cube_parts) of one random projective tree allowed."""
    N = n + 1
    shapes = {name: (N,) * NDIM[name] for name in ("arc", *names)}
    if kind == "normal":
        return {key: rng.normal(size=shape) for key, shape in shapes.items()}
    if kind == "ties":
        return {key: rng.integers(-1, 2, size=shape).astype(float) for key, shape in shapes.items()}
    if kind == "negative":
        return {key: -rng.exponential(2.0, size=shape).round(1) for key, shape in shapes.items()}
    parts = {key: rng.integers(-3, 4, size=shape).astype(float) for key, shape in shapes.items()}
    trees = all_trees(n, True, single_root) if n <= 7 else None
    tree = trees[rng.integers(len(trees))] if trees is not None else chain_tree(n)
    tree_parts = cube_parts(tree)
    for key, scores in parts.items():
        keep = np.zeros(scores.shape, dtype=bool)
        if tree_parts[key]:
            keep[tuple(np.array(tree_parts[key]).T)] = True
        scores[(rng.random(scores.shape) < 0.35) & ~keep] = -np.inf
    return parts


def chain_tree(n: int) -> np.ndarray:
    """0 -> 1 -> 2 -> ... -> n: a projective single-root tree of any length."""
    return np.arange(-1, n, dtype=np.int32)


def decode(parts: Parts, single_root: bool, **options: object) -> np.ndarray:
    """The ``cube`` decoder through the registry, output checked to be a projective tree."""
    n = parts["arc"].shape[0] - 1
    heads = configured_decoder("cube", options).decode(single_root=single_root, **parts)
    assert heads.dtype == np.int32 and heads.shape == (n + 1,)
    check_tree(heads, single_root=single_root, projective=True)
    return heads


# -- the generic core -----------------------------------------------------------------------------


def no_signatures(*shape: int) -> np.ndarray:
    return np.zeros((*shape, 0), dtype=np.int32)


def test_core_without_nonlocal_scores_is_exact_kbest() -> None:
    lefts = [[5.0, 3.0, 1.0], [4.0, 0.0]]
    rights = [[2.0, 1.0], [4.5, 4.0, -1.0]]
    extra = np.zeros((2, 3, 3))
    distinct = np.arange(18, dtype=np.int32).reshape(2, 3, 3, 1)  # every (e, i, j) its own
    combos = sorted(
        (
            (lefts[e][i] + rights[e][j], e, i, j)
            for e in range(2)
            for i in range(len(lefts[e]))
            for j in range(len(rights[e]))
        ),
        key=lambda c: -c[0],
    )
    for recombination, fields in ((False, no_signatures(2, 3, 3)), (True, distinct)):
        results, pushes, pops = cube_kbest(lefts, rights, extra, fields, 4, recombination)
        assert results[:, 0].tolist() == [c[0] for c in combos[:4]] == [8.5, 8.0, 7.0, 6.0]
        assert [tuple(map(int, r[1:])) for r in results] == [(1, 0, 0), (1, 0, 1), (0, 0, 0),
                                                             (0, 0, 1)]
        assert pushes.max() == 1 and pops == 4


def test_core_recombination_keeps_the_better_and_counts_distinct_signatures() -> None:
    # one hyperedge, lists [0, -1, -2] x [0]: pops in the order (0,0) (1,0) (2,0), but the
    # non-local score makes (2, 0), popped last, the best of signature 7
    lefts, rights = [[0.0, -1.0, -2.0]], [[0.0]]
    extra = np.array([[[0.0], [0.0], [2.5]]])
    fields = np.array([[[[7]], [[8]], [[7]]]], dtype=np.int32)
    results, pushes, pops = cube_kbest(lefts, rights, extra, fields, 5, True)
    assert results.tolist() == [[0.5, 0, 2, 0], [-1.0, 0, 1, 0]]  # 7 from (2, 0), 8 from (1, 0)
    assert pops == 3 and pushes.tolist() == [[[1], [1], [1]]]
    # k counts distinct signatures: with k = 1 the first signature found (7) ends the search
    results, _, pops = cube_kbest(lefts, rights, extra, fields, 1, True)
    assert results.tolist() == [[0.0, 0, 0, 0]] and pops == 1
    # without recombination the same signature may come twice and every pop counts
    results, _, pops = cube_kbest(lefts, rights, extra, fields, 3, False)
    assert results.tolist() == [[0.5, 0, 2, 0], [0.0, 0, 0, 0], [-1.0, 0, 1, 0]] and pops == 3
    # on a tie the earlier pop survives the merge
    extra = np.array([[[0.0], [0.0], [2.0]]])
    results, _, _ = cube_kbest(lefts, rights, extra, fields, 5, True)
    assert results.tolist() == [[0.0, 0, 0, 0], [-1.0, 0, 1, 0]]


def test_core_pushes_each_combination_once_and_explores_all_below_k(
    rng: np.random.Generator,
) -> None:
    for _ in range(40):
        E = int(rng.integers(1, 5))
        lefts = [np.sort(rng.integers(-4, 5, size=rng.integers(0, 6)))[::-1] for _ in range(E)]
        rights = [np.sort(rng.integers(-4, 5, size=rng.integers(1, 6)))[::-1] for _ in range(E)]
        extra = rng.integers(-3, 4, size=(E, 5, 5)).astype(float)
        fields = rng.integers(0, 3, size=(E, 5, 5, 2)).astype(np.int32)
        combos = {  # signature -> best score over every combination
            (e, i, j): (lefts[e][i] + rights[e][j] + extra[e, i, j], tuple(fields[e, i, j]))
            for e in range(E)
            for i in range(len(lefts[e]))
            for j in range(len(rights[e]))
        }
        best: dict[tuple[int, ...], float] = {}
        for score, signature in combos.values():
            best[signature] = max(best.get(signature, -np.inf), score)
        k = int(rng.integers(1, 12))
        for recombination in (False, True):
            results, pushes, pops = cube_kbest(lefts, rights, extra, fields, k, recombination)
            assert pushes.max(initial=0) <= 1
            assert np.all(np.diff(results[:, 0]) <= 0)  # sorted best first
            for score, e, i, j in results:  # each result is the combination it names
                assert combos[int(e), int(i), int(j)][0] == score
            if not recombination:
                assert len(results) == min(k, len(combos)) == pops
                continue
            signatures = [combos[int(e), int(i), int(j)][1] for _, e, i, j in results]
            assert len(set(signatures)) == len(signatures) == min(k, len(best))
            if len(best) < k:  # every combination explored: each entry the best of its kind
                assert pushes.sum() == len(combos) == pops
                assert sorted(results[:, 0]) == sorted(best.values())


def test_core_rejects_bad_input() -> None:
    extra = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match="sorted best first"):
        cube_kbest([[0.0, 1.0]], [[0.0]], extra, no_signatures(1, 2, 2), 2)
    with pytest.raises(ValueError, match="at most 8 fields"):
        cube_kbest([[0.0]], [[0.0]], extra, np.zeros((1, 2, 2, 9), np.int32), 2)
    with pytest.raises(ValueError, match="k must be"):
        cube_kbest([[0.0]], [[0.0]], extra, no_signatures(1, 2, 2), 0)


# -- the decoder against the exact ones -----------------------------------------------------------


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_arc_only_equals_eisner(rng: np.random.Generator, kind: str, single_root: bool) -> None:
    for n in [1, 2, 3, 5, 8, 12, *rng.integers(2, 13, size=6)]:
        parts = random_parts(rng, int(n), kind, (), single_root)
        best = score_tree(eisner(parts["arc"], single_root), parts["arc"])
        for k, recombination in ((1, False), (1, True), (int(n), False)):
            heads = decode(parts, single_root, k=k, recombination=recombination)
            assert score_tree(heads, parts["arc"]) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_arc_sib_equals_eisner2_sib(
    rng: np.random.Generator, kind: str, single_root: bool
) -> None:
    for n in [1, 2, 3, 5, 8, 12, *rng.integers(2, 13, size=6)]:
        parts = random_parts(rng, int(n), kind, ("sib",), single_root)
        arc, sib = parts["arc"], parts["sib"]
        best = tree_score2(eisner2_sib(arc, sib, single_root), arc, sib)
        heads = decode(parts, single_root, k=int(n), recombination=True)
        assert tree_score2(heads, arc, sib) == pytest.approx(best, abs=1e-9)


def test_pruned_arcs_are_avoided_when_possible(rng: np.random.Generator) -> None:
    for n in range(2, 10):
        parts = random_parts(rng, n, "pruned", ("sib", "grand"), True)
        for k, recombination in ((1, False), (3, True)):
            heads = decode(parts, True, k=k, recombination=recombination)
            assert np.isfinite(parts["arc"][heads[1:], np.arange(1, n + 1)]).all()


@pytest.mark.parametrize("single_root", [True, False])
def test_without_any_tree_over_allowed_arcs_the_fewest_disallowed_are_used(
    rng: np.random.Generator, single_root: bool
) -> None:
    for n in range(2, 9):
        arc = rng.normal(size=(n + 1, n + 1))
        arc[:, 1] = -np.inf  # word 1 has no allowed head at all
        arc[0, 2:] = -np.inf  # and the root no child other than 1
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        fewest = -score_tree(eisner(np.where(np.isfinite(arc), 0.0, -1.0), single_root),
                             np.where(np.isfinite(arc), 0.0, -1.0))
        assert fewest >= 1
        heads = decode({"arc": arc}, single_root, k=2)
        assert np.count_nonzero(~np.isfinite(arc[heads[1:], np.arange(1, n + 1)])) == fewest


# -- every part combination -----------------------------------------------------------------------


def part_sets() -> list[tuple[str, ...]]:
    return [c for r in range(len(HIGHER) + 1) for c in itertools.combinations(HIGHER, r)]


@pytest.mark.parametrize("single_root", [True, False])
def test_outputs_are_projective_trees_never_above_brute_force(
    rng: np.random.Generator, single_root: bool
) -> None:
    for names in part_sets():
        for k, recombination in itertools.product((1, 2, 5), (False, True)):
            n = int(rng.integers(1, 8))
            parts = random_parts(rng, n, KINDS[int(rng.integers(4))], names, single_root)
            decode(parts, single_root, k=k, recombination=recombination)  # checks the tree
            heads, deprels, score = cube_parse(
                parts["arc"], ArrayScorer(**parts), k=k, recombination=recombination,
                single_root=single_root,
            )
            check_tree(heads, single_root=single_root, projective=True)
            assert deprels[0] == -1 and np.all(deprels[1:] == 0)
            reference = cube_tree_score(heads, **parts)
            best = best_cube_score(single_root=single_root, **parts)
            assert reference <= best + 1e-9
            if np.isfinite(reference):  # the reported score is the tree's score
                assert score == pytest.approx(reference, abs=1e-9)


@pytest.mark.parametrize("single_root", [True, False])
def test_large_k_with_recombination_equals_brute_force(
    rng: np.random.Generator, single_root: bool
) -> None:
    # signatures hold the full history the parts need: k above the number of distinct
    # signatures of any cell (n (n + 1) / 2 + 1 <= 29 for n <= 7) makes the search exact
    for names in (("grand",), ("sib", "grand"), ("trisib",), ("gsib",), tuple(HIGHER)):
        for n in (1, 2, 4, *rng.integers(5, 8, size=3)):
            n = int(n)
            kind = KINDS[int(rng.integers(4))]
            parts = random_parts(rng, n, kind, names, single_root)
            heads, _, score = cube_parse(parts["arc"], ArrayScorer(**parts), k=30,
                                         single_root=single_root)
            best = best_cube_score(single_root=single_root, **parts)
            assert cube_tree_score(heads, **parts) == pytest.approx(best, abs=1e-9)
            assert score == pytest.approx(best, abs=1e-9)


def test_reference_parts_by_hand() -> None:
    # 0 -> 3; 3 -> 2, 1 (left, 2 innermost), 5, 6 (right); 5 -> 4 (left)
    parts = cube_parts(np.array([-1, 3, 3, 0, 5, 3, 3]))
    assert sorted(parts["trisib"]) == [(3, 3, 2, 1), (3, 3, 5, 6)]
    assert sorted(parts["grand"]) == [(0, 3, 1), (0, 3, 6), (3, 5, 4)]  # not (0, 3, 2), (0, 3, 5)
    assert sorted(parts["gsib"]) == [(0, 3, 2, 1), (0, 3, 5, 6), (3, 5, 5, 4)]


def test_each_part_is_scored_once_on_a_fixed_tree() -> None:
    # with every arc but those of one tree pruned, the chart's only tree is that tree and its
    # reported score must equal the reference score, whatever the part scores are
    rng = np.random.default_rng(SEED)
    for heads in ([-1, 3, 3, 0, 5, 3, 3], [-1, 0, 1, 2, 3, 4, 5], [-1, 6, 1, 2, 5, 6, 0],
                  [-1, 2, 0, 4, 2, 4, 0]):
        tree = np.array(heads)
        n = len(tree) - 1
        parts = {name: rng.normal(size=(n + 1,) * NDIM[name]) for name in NDIM}
        parts["arc"][:] = -np.inf
        parts["arc"][tree[1:], np.arange(1, n + 1)] = 1.0
        single_root = np.count_nonzero(tree == 0) == 1
        for k, recombination in ((1, False), (4, True)):
            got, _, score = cube_parse(parts["arc"], ArrayScorer(**parts), k=k,
                                       recombination=recombination, single_root=single_root)
            assert got.tolist() == heads
            assert score == pytest.approx(cube_tree_score(tree, **parts), abs=1e-12)


# -- labels and history -------------------------------------------------------------------------


def labeled_reference(heads: np.ndarray, deprels: np.ndarray, scores: dict) -> float:
    """LabeledArrayScorer's semantics, summed naively over one labeled tree."""
    n = len(heads) - 1
    NL = scores["arc"].shape[2]
    total = sum(scores["arc"][heads[m], m, deprels[m]] for m in range(1, n + 1))
    for h in range(n + 1):
        left = [m for m in range(h - 1, 0, -1) if heads[m] == h]
        right = [m for m in range(h + 1, n + 1) if heads[m] == h]
        for side, mods in ((0, left), (1, right)):
            previous = NL
            for place, m in enumerate(mods, start=1):
                total += scores["sib"][previous, deprels[m]]
                previous = deprels[m]
                if "position" in scores:
                    total += scores["position"][place]
            if mods and h != 0:
                total += scores["grand"][deprels[h], deprels[mods[-1]]]
            if "valency" in scores and h != 0:
                total += scores["valency"][side, len(mods)]
    return float(total)


def best_labeled(scores: dict, labels: np.ndarray, single_root: bool) -> tuple[float, tuple]:
    """Best (score, (heads, deprels)) over every projective tree and every labeling of its arcs
    from their candidate labels (brute force)."""
    best: tuple[float, tuple] = (-np.inf, ())
    for heads in all_trees(labels.shape[0] - 1, True, single_root):
        n = len(heads) - 1
        options = [labels[heads[m], m] for m in range(1, n + 1)]
        for choice in itertools.product(*options):
            deprels = np.array([-1, *choice])
            score = labeled_reference(heads, deprels, scores)
            if score > best[0]:
                best = (score, (heads.tolist(), deprels.tolist()))
    return best


@pytest.mark.parametrize("valency", [False, True])
@pytest.mark.parametrize("single_root", [True, False])
def test_labels_equal_brute_force_best_labeling(
    rng: np.random.Generator, single_root: bool, valency: bool
) -> None:
    NL, L = 3, 2
    for n in (1, 2, 3, 4, 5, 5, 5, 5):
        N = n + 1
        scores = {"arc": rng.normal(size=(N, N, NL)), "sib": rng.normal(size=(NL + 1, NL)),
                  "grand": rng.normal(size=(NL, NL))}
        if valency:
            scores["position"] = rng.normal(size=N)
            scores["valency"] = rng.normal(size=(2, N))
        labels = np.argsort(-scores["arc"], axis=2)[:, :, :L].astype(np.int32)  # top-L labels
        scorer = LabeledArrayScorer(**scores)
        assert scorer.history == {"modifiers": 1, "labels": True, "valency": valency}
        arc = np.zeros((N, N))
        heads, deprels, score = cube_parse(arc, scorer, labels, k=64, single_root=single_root)
        check_tree(heads, single_root=single_root, projective=True)
        best, (best_heads, best_deprels) = best_labeled(scores, labels, single_root)
        assert heads.tolist() == best_heads and deprels.tolist() == best_deprels
        assert score == pytest.approx(best, abs=1e-9)
        assert labeled_reference(heads, deprels, scores) == pytest.approx(score, abs=1e-9)
        # with a small beam: still a labeled tree from the candidates, scored as reported
        heads, deprels, score = cube_parse(arc, scorer, labels, k=1, recombination=False,
                                           single_root=single_root)
        check_tree(heads, single_root=single_root, projective=True)
        assert all(deprels[m] in labels[heads[m], m] for m in range(1, N))
        assert labeled_reference(heads, deprels, scores) == pytest.approx(score, abs=1e-9)


def test_label_candidate_lists_end_at_a_negative_entry() -> None:
    N, NL = 4, 3
    scores = {"arc": np.zeros((N, N, NL)), "sib": np.zeros((NL + 1, NL)),
              "grand": np.zeros((NL, NL))}
    scores["arc"][:, :, 2] = 5.0  # label 2 is the best everywhere, but only offered to 0 -> 1
    labels = np.full((N, N, 2), -1, dtype=np.int32)
    labels[:, :, 0] = 1
    labels[0, 1] = (1, 2)
    labels[2, 3, 0] = -1  # no candidate at all: label 0
    arc = np.full((N, N), -np.inf)
    arc[0, 1] = arc[1, 2] = arc[2, 3] = 0.0
    heads, deprels, score = CubePruning(k=3).parse(arc, LabeledArrayScorer(**scores), labels)
    assert heads.tolist() == [-1, 0, 1, 2] and deprels.tolist() == [-1, 2, 1, 0]
    assert score == 5.0


# -- options, errors, determinism ---------------------------------------------------------------


def test_decoder_contract_and_options(rng: np.random.Generator) -> None:
    decoder = get_decoder("cube")
    assert not decoder.exact and decoder.projective
    assert decoder.parts == ("arc", "sib", "grand", "trisib", "gsib")
    parts = random_parts(rng, 6, "normal", tuple(HIGHER), True)
    first = decode(parts, True, k=5, recombination=True)
    assert np.array_equal(first, decode(parts, True, k=5, recombination=True))  # deterministic
    assert np.array_equal(first, decoder.decode(**parts))  # the defaults are k=5, recombination
    for bad in ({"k": 0}, {"k": 2.5}, {"k": True}, {"recombination": "yes"}):
        with pytest.raises(ValueError):
            configured_decoder("cube", bad).decode(parts["arc"])
    with pytest.raises(TypeError, match="unknown"):
        decoder.decode(parts["arc"], beam=3)
    with pytest.raises(ValueError, match="trisib"):
        decoder.decode(parts["arc"], trisib=parts["sib"])
    with pytest.raises(ValueError, match=r"\+inf"):
        decoder.decode(np.full((3, 3), np.inf))


def test_parse_rejects_mismatched_inputs() -> None:
    arc = np.zeros((4, 4))
    with pytest.raises(ValueError, match="for 2 words"):
        cube_parse(arc, ArrayScorer(np.zeros((3, 3))))
    with pytest.raises(ValueError, match="labels must be"):
        cube_parse(arc, ChartScorer(), np.zeros((4, 4), dtype=np.int32))
    scores = {"arc": np.zeros((4, 4, 2)), "sib": np.zeros((3, 2)), "grand": np.zeros((2, 2))}
    with pytest.raises(ValueError, match="below 2"):
        cube_parse(arc, LabeledArrayScorer(**scores), np.full((4, 4, 1), 2, dtype=np.int32))
    with pytest.raises(ValueError, match="k must be"):
        GeneralizedEisner(0)
    # a scorer that scores nothing: any projective tree, score 0
    heads, deprels, score = cube_parse(arc, ChartScorer(), k=2)
    check_tree(heads, single_root=True, projective=True)
    assert score == 0.0 and deprels.tolist() == [-1, 0, 0, 0]
