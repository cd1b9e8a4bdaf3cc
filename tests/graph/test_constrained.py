"""Constrained decoding (dparse.constraints, dparse.graph.constrained) against brute force.

For random instances (n <= 7; normal, tied and negative scores) and random constraint sets
(fixed arcs taken from a random tree of the decoder's kind, forbidden arcs at random, some sets
impossible), every exact decoder given the constrained scores returns a tree with the best score
among the brute-force trees (projective and non-projective enumeration, single root as the
decoder) that hold every fixed arc and no forbidden one; approximate decoders return valid trees
that satisfy the constraints; ``Constraints.check`` refuses exactly the sets that no tree of the
decoder's kind satisfies. Optimal SCORES are compared, not trees (ties). The suite runs under
another seed with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from bruteforce import (
    best_cube_score,
    best_score3,
    cube_tree_score,
    random_constraints,
    satisfying,
    tree_score,
    tree_score3,
)
from conftest import requires_data

from dparse.conll import Sentence, read_conll, read_conll_block
from dparse.constraints import Constraints, sentence_constraints
from dparse.decoders import Decoder, get_decoder
from dparse.errors import InputError
from dparse.graph.constrained import constrain_scores, predict_constrained
from dparse.graph.model import ArcFactoredModel
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative"]
AXES = {"sib": 3, "grand": 3, "trisib": 4, "gsib": 4}
# exact decoder -> the parts it reads
EXACT = {
    "cle": (),
    "eisner": (),
    "eisner2-sib": ("sib",),
    "eisner2-sibgp": ("sib", "grand"),
    "eisner3": ("sib", "grand", "trisib", "gsib"),
    "eisner3-outermost": ("sib", "grand", "trisib", "gsib"),
}
APPROXIMATE = {
    "bgi": ("sib", "grand"),
    "bgi-pp": ("sib", "grand"),
    "cube": ("sib", "grand", "trisib", "gsib"),
    "dd2": ("sib", "grand"),
}


def random_scores(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=shape)
    if kind == "ties":  # integers from a tiny range: many optimal trees
        return rng.integers(-1, 2, size=shape).astype(float)
    return -rng.exponential(2.0, size=shape).round(1)  # all negative, some ties


def instances(seed: int, count: int, projective: bool, single_root: bool, max_n: int = 7):
    """(n, kind, constraints, arc, parts) for ``count`` random feasible instances."""
    rng = np.random.default_rng([SEED, seed, projective, single_root])
    made = 0
    while made < count:
        n = int(rng.integers(1, max_n + 1))
        kind = KINDS[made % 3]
        c = random_constraints(rng, n, projective, single_root)
        if not len(satisfying(c, projective, single_root)):
            continue
        made += 1
        arc = random_scores(rng, (n + 1, n + 1), kind)
        parts = {name: random_scores(rng, (n + 1,) * axes, kind) for name, axes in AXES.items()}
        yield n, kind, c, arc, parts


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", list(EXACT))
def test_exact_decoders_return_the_best_tree_satisfying_the_constraints(
        name: str, single_root: bool) -> None:
    decoder = get_decoder(name)
    projective = decoder.projective
    max_n = 7 if len(EXACT[name]) < 3 else 5
    for case, (_, _, c, arc, all_parts) in enumerate(
            instances(list(EXACT).index(name), 60, projective, single_root, max_n)):
        parts = {key: all_parts[key] for key in EXACT[name]}
        arc_c, parts_c = constrain_scores(arc, parts, c.allowed())
        heads = decoder.decode(arc_c, single_root=single_root, **parts_c)
        check_tree(heads, single_root=single_root, projective=projective)
        assert c.satisfied_by(heads), (case, heads)
        trees = satisfying(c, projective, single_root)
        if name == "eisner3-outermost":
            got = cube_tree_score(heads, arc, **parts)
            best = best_cube_score(arc_c, single_root=single_root, **parts_c)
        else:
            got = tree_score3(heads, arc, **parts)
            best = best_score3(arc_c, **parts_c, projective=projective,
                               single_root=single_root)
        if not parts:  # first order: the maximum over the satisfying trees themselves
            assert best == pytest.approx(tree_score(trees, arc).max(), abs=1e-9)
        assert got == pytest.approx(best, abs=1e-9), (case, heads)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name", list(APPROXIMATE))
def test_approximate_decoders_return_trees_satisfying_the_constraints(
        name: str, single_root: bool) -> None:
    """bgi, bgi-pp and cube return valid trees with every fixed arc and no forbidden one;
    dd2 too, and when it certifies its tree is the constrained optimum."""
    decoder = get_decoder(name)
    projective = decoder.projective
    certified = 0
    for case, (_, _, c, arc, all_parts) in enumerate(
            instances(10 + list(APPROXIMATE).index(name), 60, projective, single_root, 6)):
        parts = {key: all_parts[key] for key in APPROXIMATE[name]}
        arc_c, parts_c = constrain_scores(arc, parts, c.allowed())
        heads = decoder.decode(arc_c, single_root=single_root, **parts_c)
        check_tree(heads, single_root=single_root, projective=projective)
        assert c.satisfied_by(heads), (case, heads)
        if name == "dd2" and decoder.last.certified:
            certified += 1
            best = best_score3(arc_c, **parts_c, projective=False, single_root=single_root)
            assert tree_score3(heads, arc, **parts) == pytest.approx(best, abs=1e-9)
    if name == "dd2":
        assert certified >= 40


@pytest.mark.parametrize("projective", [True, False])
@pytest.mark.parametrize("single_root", [True, False])
def test_check_refuses_exactly_the_sets_no_tree_satisfies(projective: bool,
                                                         single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 3, projective, single_root])
    refused = 0
    for case in range(300):
        n = int(rng.integers(1, 7))
        c = random_constraints(rng, n, projective, single_root)
        possible = len(satisfying(c, projective, single_root)) > 0
        try:
            c.check(projective, single_root, "test")
        except InputError:
            refused += 1
            assert not possible, case
        else:
            assert possible, case
    assert 5 <= refused <= 295


def _sentence(n: int, heads: list[int] | None = None, misc: list[str] | None = None
              ) -> Sentence:
    """A CoNLL-U sentence of n words read from text (HEAD ``_`` where heads has -1), as
    the file s.conllu."""
    heads = heads or [-1] * n
    misc = misc or ["_"] * n
    lines = ["# sent_id = s1"] + [
        "\t".join([str(m), f"w{m}", "_", "X", "_", "_", "_" if h < 0 else str(h),
                   "_" if h < 0 else "dep", "_", x])
        for m, h, x in zip(range(1, n + 1), heads, misc, strict=True)]
    text = ("\n".join(lines) + "\n\n").encode()
    return next(read_conll_block(text, "s.conllu", "conllu", require_heads=False))


@pytest.mark.parametrize(("heads", "forbid", "projective", "message"), [
    ([2, 1, 0], (), False, "the fixed arcs 2 -> 1, 1 -> 2 make a cycle"),
    ([0, 0, -1], (), False, "words 1 and 2 are both fixed to the root"),
    ([2, 0, -1], [(1, 2)], False, "word 1: its fixed head 2 is also forbidden"),
    ([-1, 0, -1], [(3, 0), (3, 1), (3, 2)], False, "word 3: every head is forbidden"),
    ([3, 0, 2, 2], (), True, "the fixed arcs 3 -> 1 and 0 -> 2 cross"),
    ([-1, -1, -1], [(1, 0), (2, 0), (3, 0)], False, "no single-rooted tree has every fixed"),
])
def test_impossible_sets_name_the_sentence_and_the_problem(heads, forbid, projective,
                                                           message) -> None:
    sent = _sentence(len(heads), heads)
    c = sentence_constraints(sent, True, forbid, position=4)
    with pytest.raises(InputError) as error:
        c.check(projective, True, "dec", sent)
    assert str(error.value).startswith("s.conllu:")
    assert "sentence 4 (sent_id s1): " + message in str(error.value)


def test_keep_reads_heads_labels_and_misc_forbid() -> None:
    sent = _sentence(3, [2, -1, -1], ["_", "Forbid=0,1", "SpaceAfter=No|Forbid=2"])
    c = sentence_constraints(sent, True, [(3, 1)])
    assert c.heads.tolist() == [-1, 2, -1, -1]
    assert c.labels == [None, "dep", None, None]
    assert sorted(zip(*np.nonzero(c.forbidden), strict=True)) == [(0, 2), (1, 2), (1, 3),
                                                                 (2, 3)]
    free = sentence_constraints(sent, False)
    assert free.heads.tolist() == [-1] * 4 and not free.forbidden[:, 1].any()
    with pytest.raises(InputError, match="word 2: Forbid=9"):
        sentence_constraints(_sentence(2, None, ["_", "Forbid=9"]), False)


class Stubborn(Decoder):
    """An approximate decoder that ignores its scores: the chain 0 -> 1 -> 2 -> ... -> n."""

    name = "stubborn"
    exact = False
    projective = False

    def _decode(self, arc: np.ndarray, single_root: bool, **parts: np.ndarray) -> np.ndarray:
        return np.arange(-1, arc.shape[0] - 1, dtype=np.int32)


@requires_data
def test_an_output_that_breaks_a_constraint_falls_back_to_the_exact_first_order_tree(
        tiny_first_order: Path) -> None:
    model = ArcFactoredModel.load(tiny_first_order / "model")
    sent = next(iter(read_conll(tiny_first_order / "dev.conllu")))
    enc = model.vocab.encode(sent)
    n = len(sent)
    c = Constraints.free(n)
    c.heads[3] = 1  # the chain has 2 -> 3
    c.forbidden[0, 1] = True  # and 0 -> 1
    heads, labels = predict_constrained(model, enc, Stubborn(), True, c)
    assert c.satisfied_by(heads) and enc.allowed is None  # the sentence is left as it was
    arc, label = model.score(enc, allowed=c.allowed().astype(np.uint8))
    best = get_decoder("cle").decode(arc)
    assert heads.tolist() == best.tolist()
    assert labels.tolist() == [-1, *label[best[1:], np.arange(1, n + 1)].tolist()]
