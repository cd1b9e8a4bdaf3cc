"""Constrained parsing with the undirected MST parser (dparse.undirected.parser): on random
small instances the tree is the best spanning tree (by the sum of its undirected edge scores)
among the brute-force trees whose orientation from the root holds every fixed arc and no
forbidden one, single-rooted or not; LEP moves over the allowed arcs keep the constraints; a
tiny trained (pruned) model keeps them on every sentence, and parses without them as before.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
import yaml
from bruteforce import random_constraints, satisfying
from conftest import DATA
from dparse._ext.arcfeatures import FeatureSpace
from dparse.undirected.umst import local_enhancement

from dparse.config import load_config
from dparse.conll import Sentence, read_conll, write_conll
from dparse.constraints import Constraints, tree_exists
from dparse.epochs import save_model
from dparse.errors import InputError
from dparse.parsers import load_parser, train_parser
from dparse.timer import ParseTimer
from dparse.trees import check_tree
from dparse.undirected.parser import LABEL_BITS, UndirectedModel, UndirectedParser
from dparse.vocab import Vocabulary

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
WORDS = [("the", "DET"), ("dog", "NOUN"), ("saw", "VERB"), ("a", "DET"), ("cat", "NOUN"),
         ("with", "ADP"), ("joy", "NOUN"), (".", "PUNCT")]


def random_sentence(rng: np.random.Generator, n: int) -> Sentence:
    pick = rng.integers(len(WORDS), size=n)
    return Sentence.build([WORDS[i][0] for i in pick], heads=[-1, *([0] * n)],
                          deprels=["", *(["dep"] * n)], upos=[WORDS[i][1] for i in pick])


def tree_scores(model: UndirectedModel, sent: Sentence, trees: np.ndarray) -> np.ndarray:
    """The sums of the undirected scores of the edges of ``trees`` (int [T, n+1])."""
    n1 = len(sent) + 1
    i, j = np.triu_indices(n1, 1)
    w = np.zeros((n1, n1))
    w[i, j] = model.edge_scores(model.vocab.encode(sent), i.astype(np.int32),
                                j.astype(np.int32))
    words = np.arange(1, n1)
    return w[np.minimum(trees[:, 1:], words), np.maximum(trees[:, 1:], words)].sum(axis=1)


@pytest.mark.parametrize("single_root", [True, False])
def test_constrained_umst_is_the_best_tree_keeping_the_constraints(single_root: bool) -> None:
    rng = np.random.default_rng([SEED, single_root])
    vocab = Vocabulary.build([random_sentence(rng, 7) for _ in range(10)])
    space = FeatureSpace(10, LABEL_BITS, 1)
    compared = refused = 0
    for case in range(150):
        # ties now and then: integer weights
        weights = (rng.normal(size=space.size) if case % 3 else
                   rng.integers(-1, 2, size=space.size)).astype(np.float32)
        parser = UndirectedParser(UndirectedModel(vocab, space, weights), None, 0, single_root)
        n = int(rng.integers(1, 7))
        sent = random_sentence(rng, n)
        c = random_constraints(rng, n, False, single_root)
        trees = satisfying(c, False, single_root)
        if not len(trees):
            with pytest.raises(InputError, match="sentence"):
                next(parser.parse_constrained([(sent, c)]))
            refused += 1
            continue
        heads = np.asarray(next(parser.parse_constrained([(sent, c)])).heads)
        check_tree(heads, single_root=single_root)
        assert c.satisfied_by(heads)
        best = tree_scores(parser.model, sent, trees).max()
        assert tree_scores(parser.model, sent, heads[None])[0] == pytest.approx(best, abs=1e-4)
        compared += 1
    assert compared > 80 and refused > 5


def test_lep_over_allowed_arcs_keeps_the_constraints() -> None:
    rng = np.random.default_rng(SEED)
    moved = 0
    for _ in range(300):
        n = int(rng.integers(2, 7))
        c = random_constraints(rng, n, False, False)
        trees = satisfying(c, False, False)
        if not len(trees):
            continue
        start = np.ascontiguousarray(trees[rng.integers(len(trees))], dtype=np.int32)
        arc = np.where(c.allowed(), rng.normal(size=(n + 1, n + 1)), -np.inf)
        heads, done = local_enhancement(start, arc, 5)
        moved += done
        check_tree(heads, single_root=False)
        assert c.satisfied_by(heads)
    assert moved > 20


TREES = [
    (["the", "dog", "barks"], [2, 3, 0], ["DET", "NOUN", "VERB"]),
    (["a", "cat", "saw", "the", "dog"], [2, 3, 0, 5, 3], ["DET", "NOUN", "VERB", "DET", "NOUN"]),
    (["dogs", "bark", "loudly"], [2, 0, 2], ["NOUN", "VERB", "ADV"]),
]


def test_a_trained_pruned_umst_model_keeps_constraints(tmp_path: Path) -> None:
    """The pruner removes edges; a fixed arc it removed is scored all the same."""
    sents = [Sentence.build(f, heads=[-1, *h], deprels=["", *(["dep"] * len(f))], upos=u,
                            xpos=u) for f, h, u in TREES] * 4
    write_conll(sents, str(tmp_path / "train.conllu"))
    raw = {"name": "tiny-umst", "parser": "umst", "data": {"train": "train.conllu"},
           "features": {"arc_bits": 12}, "decoder": {"name": "umst", "single_root": True},
           "training": {"epochs": 2, "seed": 1},
           "umst": {"prune": "length-dictionary", "prune_column": "upos"}}
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(tmp_path / "tiny.yaml", data_root=str(tmp_path))
    save_model(train_parser(cfg, progress=False), cfg, tmp_path / "model")
    parser = load_parser(tmp_path / "model", load_config(tmp_path / "model" / "config.yaml"),
                         None)
    rng = np.random.default_rng(SEED)
    for sent in sents:
        n = len(sent)
        c = Constraints.free(n)
        c.heads[n] = 1  # a long arc, against the training trees: the pruner drops it
        c.heads[1] = 0 if n != 1 else -1
        c.forbidden[rng.integers(0, n + 1), rng.integers(1, n + 1)] = True
        c.forbidden[c.heads[1:].clip(0), np.arange(1, n + 1)] &= c.heads[1:] < 0
        parsed = next(parser.parse_constrained([(sent, c)], ParseTimer()))
        check_tree(parsed.heads, single_root=True)
        assert c.satisfied_by(np.asarray(parsed.heads))
    plain = [s.heads.tolist() for s in parser.parse(sents, ParseTimer())]
    free = [(s, Constraints.free(len(s))) for s in sents]
    assert [s.heads.tolist() for s in parser.parse_constrained(free, ParseTimer())] == plain


@pytest.mark.skipif(not DATA.is_dir(), reason="treebank data not found")
def test_constrained_umst_keeps_constraints_on_an_en_ewt_slice() -> None:
    """A random-weight undirected model on 40 en_ewt sentences, 30% of their gold arcs fixed
    and one other arc forbidden each: every tree keeps them, single-rooted."""
    rng = np.random.default_rng(SEED)
    gold = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40))
    vocab = Vocabulary.build(gold)
    space = FeatureSpace(14, LABEL_BITS, 1)
    model = UndirectedModel(vocab, space, rng.normal(size=space.size).astype(np.float32))
    parser = UndirectedParser(model, None, 0, True)
    items = []
    for s in gold:
        c = Constraints.free(len(s))
        fixed = rng.random(len(s) + 1) < 0.3
        fixed[0] = False
        c.heads[fixed] = s.heads[fixed]
        m = int(rng.integers(1, len(s) + 1))
        if not fixed[m]:
            c.forbidden[s.heads[m], m] = True  # the gold arc itself, unless no tree is left
            c.forbidden[s.heads[m], m] = tree_exists(c.allowed(), False, True)
        items.append((s, c))
    for parsed, (_, c) in zip(parser.parse_constrained(items), items, strict=True):
        check_tree(parsed.heads, single_root=True)
        assert c.satisfied_by(np.asarray(parsed.heads))
