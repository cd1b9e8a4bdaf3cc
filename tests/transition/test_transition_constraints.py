"""Constrained parsing with the transition parsers (dparse.transition): easy-first and the beam
shift-reduce parser, on random small instances (random sentences, random weights, random
constraint sets from tests/bruteforce.py) and on an en_ewt slice.

Where ``Constraints.check`` accepts a set (some projective tree holds every fixed arc and no
forbidden one), easy-first and the shift-reduce parser (any beam, both systems) always return
such a tree, and every tree of a constrained shift-reduce forest keeps the set. Sets no
projective tree satisfies are refused before parsing, naming the sentence. A sentence without
constraints parses as without the option.
"""

from __future__ import annotations

import os
from itertools import islice

import numpy as np
import pytest
from bruteforce import random_constraints, satisfying
from conftest import DATA
from dparse.transition.easyfirst_core import layout_size as easyfirst_size
from dparse.transition.shiftreduce_templates import layout_size as shiftreduce_size

from dparse.conll import Sentence, read_conll
from dparse.constraints import Constraints, sentence_constraints
from dparse.errors import InputError
from dparse.postags import TagSettings
from dparse.transition.easyfirst import EasyFirstModel, tag_flags
from dparse.transition.shiftreduce import ShiftReduceModel
from dparse.trees import check_tree
from dparse.vocab import Vocabulary

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
WORDS = [("the", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN"),
         ("with", "IN"), ("joy", "NN"), ("and", "CC"), ("ran", "VBD"), (".", ".")]
LABELS = ["det", "nsubj", "root", "obj", "case", "obl", "cc", "conj", "punct"]


def random_sentence(rng: np.random.Generator, n: int) -> Sentence:
    pick = rng.integers(len(WORDS), size=n)
    return Sentence.build([WORDS[i][0] for i in pick],
                          heads=[-1, *rng.integers(0, n + 1, size=n).tolist()],
                          deprels=["", *(LABELS[i] for i in rng.integers(len(LABELS), size=n))],
                          upos=[WORDS[i][1] for i in pick])


def vocabulary() -> Vocabulary:
    rng = np.random.default_rng(0)
    return Vocabulary.build([random_sentence(rng, 9) for _ in range(20)])


def easyfirst_model(rng: np.random.Generator) -> EasyFirstModel:
    vocab = vocabulary()
    weights = rng.normal(size=easyfirst_size(10, 6, len(vocab.labels))).astype(np.float32)
    return EasyFirstModel(vocab, weights, 10, 6, "xpos",
                          tag_flags(vocab, TagSettings("xpos", ("IN",), ("CC",))))


def shiftreduce_model(rng: np.random.Generator, system: str, beam: int,
                      single_root: bool) -> ShiftReduceModel:
    vocab = vocabulary()
    weights = rng.normal(size=shiftreduce_size(10, 6, len(vocab.labels))).astype(np.float32)
    return ShiftReduceModel(vocab, weights, 10, 6, "xpos", system, beam, single_root)


def cases(seed: int, count: int, single_root: bool, forbid: bool = True):
    """(sentence, constraints, feasible) for ``count`` random sentences of 1..7 words:
    feasible says whether some projective tree (single-rooted as asked) satisfies them."""
    rng = np.random.default_rng([SEED, seed, single_root, forbid])
    for _ in range(count):
        n = int(rng.integers(1, 8))
        c = random_constraints(rng, n, True, single_root)
        if not forbid:
            c.forbidden[:] = False
        if rng.random() < 0.3:  # a fixed label now and then, one the model may not know
            m = int(rng.integers(1, n + 1))
            c.labels[m] = str(rng.choice(["det", "obj", "unknown-label"]))
        yield random_sentence(rng, n), c, len(satisfying(c, True, single_root)) > 0


def assert_keeps(parsed: Sentence, c: Constraints, single_root: bool) -> None:
    check_tree(parsed.heads, single_root=single_root, projective=True)
    assert c.satisfied_by(np.asarray(parsed.heads))
    for m, label in enumerate(c.labels):
        if label is not None:
            assert parsed.deprels[m] == label


@pytest.mark.parametrize("decoder", ["easyfirst-scan", "easyfirst-heap"])
@pytest.mark.parametrize("single_root", [True, False])
def test_easyfirst_keeps_every_constraint_a_projective_tree_can_keep(decoder: str,
                                                                     single_root: bool) -> None:
    model = easyfirst_model(np.random.default_rng(SEED))
    seen = {True: 0, False: 0}
    for sent, c, feasible in cases(1, 300, single_root):
        seen[feasible] += 1
        if not feasible:
            with pytest.raises(InputError, match="sentence"):
                next(model.parse_constrained([(sent, c)], decoder, single_root))
            continue
        parsed = next(model.parse_constrained([(sent, c)], decoder, single_root))
        assert_keeps(parsed, c, single_root)
    assert seen[True] > 100 and seen[False] > 10


def test_easyfirst_prefers_fixed_arcs_and_otherwise_parses_as_without_constraints() -> None:
    model = easyfirst_model(np.random.default_rng(SEED + 1))
    rng = np.random.default_rng(SEED)
    for _ in range(50):
        sent = random_sentence(rng, int(rng.integers(1, 10)))
        plain = next(model.parse([sent]))
        free = Constraints.free(len(sent))
        assert next(model.parse_constrained([(sent, free)])).heads.tolist() == plain.heads.tolist()
        # fixing the unconstrained parse's own arcs changes nothing
        c = Constraints.free(len(sent))
        c.heads = np.asarray(plain.heads, dtype=np.int32).copy()
        c.heads[0] = -1
        again = next(model.parse_constrained([(sent, c)]))
        assert again.heads.tolist() == plain.heads.tolist()


@pytest.mark.parametrize("system", ["nonspurious", "spurious"])
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("forbid", [False, True])
def test_shiftreduce_keeps_every_constraint_a_projective_tree_can_keep(
        system: str, single_root: bool, forbid: bool) -> None:
    """Even with a beam of 1, where dead ends the local checks do not foresee are common
    (then the escort's search runs: test_an_emptied_beam_is_searched_again_with_an_escort)."""
    for beam in (1, 4):
        model = shiftreduce_model(np.random.default_rng(SEED + beam), system, beam, single_root)
        for sent, c, feasible in cases(2, 200, single_root, forbid):
            if not feasible:
                with pytest.raises(InputError, match="sentence"):
                    next(model.parse_constrained([(sent, c)]))
                continue
            assert_keeps(next(model.parse_constrained([(sent, c)])), c, single_root)


def test_an_emptied_beam_is_searched_again_with_an_escort() -> None:
    """Word 2 fixed to the root of a single-rooted tree: a beam of 1 that scans word 2 before
    it takes word 1 as its left dependent is stuck (word 1 can have no head left); the search
    returns None, then the escorted search a tree with the fixed arc."""
    from dparse.transition.shiftreduce_search import parse as search

    rng = np.random.default_rng(SEED)
    model = shiftreduce_model(rng, "nonspurious", 1, True)
    stuck = 0
    for _ in range(40):
        sent = random_sentence(rng, 3)
        enc = model.vocab.encode(sent)
        c = Constraints.free(3)
        c.heads[2] = 0
        heads = np.full(4, -1, dtype=np.int32)
        out = search(enc.tokens, model.weights, 10, 6, len(model.vocab.labels), model.tagcol, 1,
                     True, 1, heads, heads.copy(), None, False, c.allowed().astype(np.uint8),
                     c.heads)
        stuck += out is None
        assert_keeps(next(model.parse_constrained([(sent, c)])), c, True)
    assert stuck > 0


@pytest.mark.parametrize("system", ["nonspurious", "spurious"])
def test_every_tree_of_a_constrained_forest_keeps_the_constraints(system: str) -> None:
    from dparse.hypergraph.hypergraph import Hypergraph

    model = shiftreduce_model(np.random.default_rng(SEED), system, 8, True)
    checked = 0
    for sent, c, feasible in cases(4, 60, True):
        if not feasible or len(sent) < 3:
            continue
        enc = model.vocab.encode(sent)
        c.check(True, True, "shiftreduce")
        _, _, forest = model.forest_encoded(enc, None, c)
        trees = Hypergraph(forest).kbest(30)[1]
        assert len(trees)
        for heads in trees:
            assert c.satisfied_by(np.asarray(heads))
        checked += 1
    assert checked > 10


@pytest.mark.skipif(not DATA.is_dir(), reason="treebank data not found")
def test_transition_parsers_keep_constraints_on_an_en_ewt_slice() -> None:
    """Random-weight models on 60 en_ewt sentences with 30% of their projectivized gold arcs
    fixed and a forbidden arc each: every output keeps them; sentences without constraints
    parse as without the option."""
    from dparse.projectivize import projectivize_heads

    rng = np.random.default_rng(SEED)
    gold = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60))
    vocab = Vocabulary.build(gold)
    ef = EasyFirstModel(vocab, rng.normal(size=easyfirst_size(12, 8, len(vocab.labels)))
                        .astype(np.float32), 12, 8, "xpos",
                        tag_flags(vocab, TagSettings("xpos", ("IN",), ("CC",))))
    sr = ShiftReduceModel(vocab, rng.normal(size=shiftreduce_size(12, 8, len(vocab.labels)))
                          .astype(np.float32), 12, 8, "xpos", "nonspurious", 8, True)
    items = []
    for s in gold:
        c = sentence_constraints(s, False)
        heads = projectivize_heads(s.heads)
        fixed = rng.random(len(s) + 1) < 0.3
        fixed[0] = False
        c.heads[fixed] = heads[fixed]
        m = int(rng.integers(1, len(s) + 1))
        wrong = [h for h in range(len(s) + 1) if h not in (m, heads[m])]
        if c.heads[m] < 0 and wrong:
            c.forbidden[wrong[0], m] = True
        items.append((s, c))
    for model in (ef, sr):
        out = list(model.parse_constrained(items))
        for parsed, (_, c) in zip(out, items, strict=True):
            assert_keeps(parsed, c, True)
        plain = [p.heads.tolist() for p in model.parse(gold)]
        free = [(s, Constraints.free(len(s))) for s in gold]
        assert [p.heads.tolist() for p in model.parse_constrained(free)] == plain
