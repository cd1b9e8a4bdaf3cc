"""Constrained parsing with the forest reranker (dparse.rerank.model): random-weight rerankers
(local and non-local features, with and without label features) over random-weight first
stages, on random small sentences with random constraint sets (tests/bruteforce.py). Every
set some projective tree satisfies gives a tree that keeps it (the first stage's constrained
forest holds only such trees); other sets are refused naming the sentence; sentences without
constraints parse as without the option.
"""

from __future__ import annotations

import os
from itertools import islice

import numpy as np
import pytest
from bruteforce import random_constraints, satisfying
from conftest import DATA
from dparse.transition.shiftreduce_templates import layout_size

from dparse.config import load_config
from dparse.conll import Sentence, read_conll
from dparse.constraints import Constraints
from dparse.errors import InputError
from dparse.projectivize import projectivize_heads
from dparse.rerank.model import RerankModel, WordClasses
from dparse.transition.shiftreduce import ShiftReduceModel
from dparse.trees import check_tree
from dparse.vocab import Vocabulary

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
WORDS = [("the", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN"),
         ("with", "IN"), ("and", "CC"), ("ran", "VBD")]
LABELS = ["det", "nsubj", "root", "obj", "case", "cc"]


def random_sentence(rng: np.random.Generator, n: int) -> Sentence:
    pick = rng.integers(len(WORDS), size=n)
    return Sentence.build([WORDS[i][0] for i in pick],
                          heads=[-1, *rng.integers(0, n + 1, size=n).tolist()],
                          deprels=["", *(LABELS[i] for i in rng.integers(len(LABELS), size=n))],
                          upos=[WORDS[i][1] for i in pick])


def reranker(rng: np.random.Generator, nonlocal_features: bool, label_bits: int,
             vocab: Vocabulary | None = None) -> RerankModel:
    if vocab is None:
        vocab = Vocabulary.build([random_sentence(rng, 8) for _ in range(20)])
    first = ShiftReduceModel(vocab, rng.normal(size=layout_size(10, 6, len(vocab.labels)))
                             .astype(np.float32), 10, 6, "xpos", "nonspurious", 4, True)
    classes = WordClasses("xpos", vocab.tag_classes("xpos", {1: ["IN"], 2: ["CC"]}))
    model = RerankModel(first, load_config(raw={"name": "x", "parser": "shiftreduce",
                                                        "data": {"train": "t.conllu"}}),
                        np.zeros(0), 10, 10, nonlocal_features, True, 3, classes, label_bits,
                        0.5)
    model.weights = rng.normal(size=model.size)
    return model


@pytest.mark.parametrize(("nonlocal_features", "label_bits"), [(False, 0), (True, 8)])
def test_reranked_trees_keep_every_constraint_a_projective_tree_can_keep(
        nonlocal_features: bool, label_bits: int) -> None:
    rng = np.random.default_rng([SEED, nonlocal_features])
    model = reranker(rng, nonlocal_features, label_bits)
    kept = refused = 0
    for _ in range(150):
        n = int(rng.integers(1, 8))
        sent = random_sentence(rng, n)
        c = random_constraints(rng, n, True, True)
        if not len(satisfying(c, True, True)):
            with pytest.raises(InputError, match="sentence"):
                next(model.parse_constrained([(sent, c)]))
            refused += 1
            continue
        parsed = next(model.parse_constrained([(sent, c)]))
        check_tree(parsed.heads, single_root=True, projective=True)
        assert c.satisfied_by(np.asarray(parsed.heads))
        kept += 1
    assert kept > 60 and refused > 5
    sents = [random_sentence(rng, int(rng.integers(1, 10))) for _ in range(30)]
    plain = [s.heads.tolist() for s in model.parse(sents)]
    free = [(s, Constraints.free(len(s))) for s in sents]
    assert [s.heads.tolist() for s in model.parse_constrained(free)] == plain


@pytest.mark.skipif(not DATA.is_dir(), reason="treebank data not found")
def test_reranked_trees_keep_constraints_on_an_en_ewt_slice() -> None:
    """A random-weight reranker (non-local features) over a random-weight first stage on 40
    en_ewt sentences with 30% of their projectivized gold arcs fixed: every tree keeps them."""
    rng = np.random.default_rng(SEED)
    gold = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40))
    model = reranker(rng, True, 8, Vocabulary.build(gold))
    items = []
    for s in gold:
        c = Constraints.free(len(s))
        fixed = rng.random(len(s) + 1) < 0.3
        fixed[0] = False
        c.heads[fixed] = projectivize_heads(s.heads)[fixed]
        items.append((s, c))
    for parsed, (_, c) in zip(model.parse_constrained(items), items, strict=True):
        check_tree(parsed.heads, single_root=True, projective=True)
        assert c.satisfied_by(np.asarray(parsed.heads))
