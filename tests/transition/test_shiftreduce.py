"""Tests of the beam shift-reduce parser with dynamic programming (Huang and Sagae 2010; Hayashi,
Kondo and Matsumoto 2013): exactness of the merged search against exhaustive enumeration of
action sequences, valid projective trees, one derivation per tree in the non-spurious system
(by enumeration and in the forests), forest invariants, forced gold decoding, training on a
slice of en_ewt, and the command line with --forest."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATA
from dparse.hypergraph.hypergraph import Hypergraph
from dparse.transition.shiftreduce_search import parse as sr_parse
from dparse.transition.shiftreduce_state import oracle
from dparse.transition.shiftreduce_templates import PAIRED_TAGS, layout_size, score_actions

from dparse.cli import cli
from dparse.config import load_config
from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.errors import ConfigError, DparseError
from dparse.hypergraph.forest import Forest
from dparse.hypergraph.forest_io import read_forests
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate
from dparse.modeldir import WEIGHTS_FILE, load_arrays, save_arrays
from dparse.projectivize import projectivize
from dparse.transition.shiftreduce import ShiftReduceModel, train, train_epoch
from dparse.trees import check_tree, root_words
from dparse.vocab import Vocabulary

BITS, LBITS, N_LABELS, XPOS = 10, 8, 3, 3
SHIFT, SCAN, LEFT, RIGHT = range(4)


def action_sequences(n: int, system: int, single_root: bool = True) -> list[list[int]]:
    """Every complete action sequence of the transition system on n words (a plain stack
    simulation, independent of the C code)."""
    steps = (3 if system else 2) * n
    out: list[list[int]] = []

    def walk(stack: list[int], scanned: list[bool], j: int, seq: list[int]) -> None:
        if len(seq) == steps:
            out.append(seq)
            return
        if j <= n and (not system or scanned[-1]):
            walk(stack + [j], scanned + [False], j + 1, seq + [SHIFT])
        if system and not scanned[-1]:
            walk(stack, scanned[:-1] + [True], j, seq + [SCAN])
        if len(stack) >= 2:
            if stack[-2] != 0 and (not system or not scanned[-1]):
                walk(stack[:-2] + [stack[-1]], scanned[:-2] + [scanned[-1]], j, seq + [LEFT])
            if (not system or scanned[-1]) and (stack[-2] != 0 or not single_root or j > n):
                walk(stack[:-1], scanned[:-1], j, seq + [RIGHT])

    walk([0], [bool(system)], 1, [])
    return out


def random_instance(rng: np.random.Generator, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """Tokens int32 [n+1, 6] over a few symbols, and random weights (integers: many ties)."""
    tokens = np.ones((n + 1, 6), dtype=np.int32)
    tokens[1:] = rng.integers(4, 8, size=(n, 6))
    weights = rng.normal(size=layout_size(BITS, LBITS, N_LABELS))
    return tokens, np.round(weights) if ties else weights


def search(tokens, weights, system, beam, gold=None, single_root=True, tagcol=XPOS):
    n = tokens.shape[0] - 1
    heads = np.zeros(n + 1, dtype=np.int32)
    labels = np.zeros(n + 1, dtype=np.int32)
    chart = sr_parse(tokens, weights, BITS, LBITS, N_LABELS, tagcol, system, single_root, beam,
                     heads, labels, gold, True)
    return heads, labels, chart


@pytest.mark.parametrize("system", [0, 1])
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("tagcol", [XPOS, PAIRED_TAGS])
def test_shiftreduce_wide_beam_finds_the_exhaustive_optimum(system, single_root, tagcol) -> None:
    rng = np.random.default_rng(7 + system + 2 * single_root)
    for trial in range(25):
        n = int(rng.integers(1, 6))
        tokens, weights = random_instance(rng, n, ties=trial % 3 == 0)
        scores = [score_actions(tokens, weights, BITS, tagcol, system, single_root,
                                np.array(seq, dtype=np.int32))[0]
                  for seq in action_sequences(n, system, single_root)]
        heads, labels, chart = search(tokens, weights, system, 10**6, single_root=single_root,
                                      tagcol=tagcol)
        assert chart.best_score == pytest.approx(max(scores), abs=1e-9)
        # the returned tree is the best derivation's: its own sequence scores the same
        # (non-spurious: its only derivation)
        check_tree(heads, single_root=single_root, projective=True)
        if system:
            acts, _ = oracle(heads, system, single_root)
            total, again = score_actions(tokens, weights, BITS, tagcol, system, single_root,
                                         acts)
            assert total == pytest.approx(chart.best_score, abs=1e-9)
            assert again.tolist() == heads.tolist()
        assert (labels[1:] >= 0).all() and (labels[1:] < N_LABELS).all()


@pytest.mark.parametrize("system", [0, 1])
def test_shiftreduce_narrow_beams_return_projective_trees_never_above_the_optimum(system) -> None:
    rng = np.random.default_rng(11 + system)
    for _ in range(40):
        n = int(rng.integers(1, 9))
        tokens, weights = random_instance(rng, n, ties=False)
        _, _, exact = search(tokens, weights, system, 10**6)
        for beam in (1, 2, 4):
            heads, _, chart = search(tokens, weights, system, beam)
            check_tree(heads, single_root=True, projective=True)
            assert chart.best_score <= exact.best_score + 1e-9


def test_shiftreduce_nonspurious_system_has_one_derivation_per_tree() -> None:
    for n in range(1, 7):
        trees: dict[tuple[int, ...], int] = {}
        spurious: dict[tuple[int, ...], int] = {}
        tokens = np.ones((n + 1, 6), dtype=np.int32)
        weights = np.zeros(layout_size(BITS, LBITS, N_LABELS))
        for system, table in ((1, trees), (0, spurious)):
            for seq in action_sequences(n, system):
                _, heads = score_actions(tokens, weights, BITS, XPOS, system, True,
                                         np.array(seq, dtype=np.int32))
                table[tuple(heads)] = table.get(tuple(heads), 0) + 1
        assert set(trees) == set(spurious)  # both systems reach every projective tree
        assert all(count == 1 for count in trees.values())
        if n >= 3:
            assert max(spurious.values()) > 1
        for tree in trees:  # the canonical derivation builds the tree
            for system in (0, 1):
                acts, _ = oracle(np.array(tree, dtype=np.int32), system)
                assert score_actions(tokens, weights, BITS, XPOS, system, True,
                                     acts)[1].tolist() == list(tree)


def test_shiftreduce_oracle_rejects_non_projective_trees() -> None:
    with pytest.raises(ValueError, match="no derivation"):
        oracle(np.array([-1, 3, 0, 2, 1], dtype=np.int32), 1)


@pytest.mark.parametrize("system", [0, 1])
def test_shiftreduce_forests_are_valid_and_viterbi_is_the_search_optimum(system) -> None:
    rng = np.random.default_rng(3 + system)
    for trial in range(40):
        n = int(rng.integers(1, 8))
        tokens, weights = random_instance(rng, n, ties=trial % 4 == 0)
        beam = int(rng.integers(1, 20))
        heads, _, chart = search(tokens, weights, system, beam)
        forest = Forest(n, *chart.forest())
        forest.validate()
        graph = Hypergraph(forest)
        score, best, _ = graph.viterbi()
        assert score == pytest.approx(chart.best_score, abs=1e-9)
        derivations = int(graph.count_derivations())
        scores, trees, _ = graph.kbest(derivations + 3)
        assert len(scores) == derivations
        distinct = {tuple(t) for t in trees.tolist()}
        if system:
            assert len(distinct) == derivations
            for s, t in zip(scores.tolist(), trees, strict=True):  # each its own sequence's
                acts, _ = oracle(t.astype(np.int32), system)
                assert score_actions(tokens, weights, BITS, XPOS, system, True,
                                     acts)[0] == pytest.approx(s, abs=1e-9)
        for t in trees:
            check_tree(t, single_root=True, projective=True)


def test_shiftreduce_forced_decoding_keeps_the_gold_tree_in_the_forest() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(2, 10))
        tokens, weights = random_instance(rng, n, ties=False)
        _, _, wide = search(tokens, weights, 1, 10**6)
        gold = np.array(Hypergraph(Forest(n, *wide.forest())).kbest(50)[1][-1], dtype=np.int32)
        for system in (0, 1):
            _, _, chart = search(tokens, weights, system, 1, gold)
            arcs = Hypergraph(Forest(n, *chart.forest())).oracle(gold)[0]
            assert arcs == n


@pytest.fixture(scope="module")
def ewt() -> dict:
    """Models trained for 3 epochs (beam 4; non-spurious with max-violation updates, spurious
    with early updates) on 1500 en_ewt training sentences, and 200 dev sentences."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    train, _ = projectivize(read_treebank(DATA / "en_ewt" / "train.conllu")[:1500])
    dev = read_treebank(DATA / "en_ewt" / "dev.conllu")[:200]
    vocab = Vocabulary.build(train)
    encoded = [vocab.encode(s) for s in train]
    encoded = [e for e in encoded if root_words(e.heads) == 1]
    models = {}
    for system, update in (("nonspurious", "max-violation"), ("spurious", "early")):
        learner = AveragedLearner(layout_size(18, 12, len(vocab.labels)), "perceptron")
        model = ShiftReduceModel(vocab, learner.w, 18, 12, "xpos", system, 4)
        for _ in range(3):
            train_epoch(model, learner, encoded, range(len(encoded)), update)
        model.weights = learner.averaged()
        models[system] = model
    return {"models": models, "dev": dev}


@pytest.mark.parametrize("system", ["nonspurious", "spurious"])
def test_shiftreduce_trained_on_a_slice_reaches_72_uas(ewt: dict, system: str) -> None:
    parsed = list(ewt["models"][system].parse(ewt["dev"]))
    report = evaluate(ewt["dev"], parsed)
    assert report.uas > 72.0
    assert report.las > 65.0
    for sent in parsed:
        check_tree(sent.heads, single_root=True, projective=True)


def test_shiftreduce_real_forests_hold_the_one_best_and_count_distinct_trees(ewt: dict) -> None:
    model = ewt["models"]["nonspurious"]
    for sent in ewt["dev"][:30]:
        heads, _, forest = model.forest_encoded(model.vocab.encode(sent))
        forest.validate()
        graph = Hypergraph(forest)
        _, best, _ = graph.viterbi()
        assert best.tolist() == heads.tolist()
        derivations = graph.count_derivations()
        if derivations <= 200:
            assert len({tuple(t) for t in graph.kbest(200)[1].tolist()}) == derivations


def test_shiftreduce_cli_train_parse_and_forest_round_trip(tmp_path, data) -> None:
    sents = read_treebank(data / "en_ewt" / "train.conllu")[:200]
    write_conll(sents, tmp_path / "train.conllu")
    dev = read_treebank(data / "en_ewt" / "dev.conllu")[:20]
    write_conll(dev, tmp_path / "dev.conllu")
    runner = CliRunner()
    out = tmp_path / "model"
    result = runner.invoke(cli, [
        "train", "configs/en_ewt/sr-nonsp-b12.yaml", "--out", str(out), "-q",
        "--set", f"data.train={tmp_path / 'train.conllu'}", "--set", "data.dev=null",
        "--set", "training.epochs=2", "--set", "features.arc_bits=16",
        "--set", "features.label_bits=10", "--set", "shiftreduce.beam=4"])
    assert result.exit_code == 0, result.output
    forests = tmp_path / "dev.forests.gz"
    result = runner.invoke(cli, ["parse", str(out), str(tmp_path / "dev.conllu"), "-o",
                                 str(tmp_path / "dev.parsed"), "--forest", str(forests)])
    assert result.exit_code == 0, result.output
    parsed = list(read_conll(tmp_path / "dev.parsed"))
    model = ShiftReduceModel.load(out)
    assert model.upos_pair and model.tagcol == PAIRED_TAGS  # the config's upos_pair: true
    model.beam = 4
    read = list(read_forests(forests))
    assert [sid for sid, _ in read] == [str(i + 1) for i in range(len(dev))]
    for sent, out_sent, (_, forest) in zip(dev, parsed, read, strict=True):
        heads, _, direct = model.forest_encoded(model.vocab.encode(sent))
        assert forest.same_as(direct)
        assert out_sent.heads.tolist() == heads.tolist()
    result = runner.invoke(cli, ["parse", str(out), str(tmp_path / "dev.conllu"), "-o",
                                 str(tmp_path / "gold.parsed"), "--forest",
                                 str(tmp_path / "gold.forests"), "--set",
                                 "shiftreduce.force_gold=true"])
    assert result.exit_code == 0, result.output
    for sent, (_, forest) in zip(dev, read_forests(tmp_path / "gold.forests"), strict=True):
        gold = projectivize([sent])[0][0].heads
        assert Hypergraph(forest).oracle(gold)[0] == len(sent)


def test_shiftreduce_config_values_are_checked() -> None:
    cfg = load_config("configs/en_ewt/sr-sp-b12.yaml")
    assert cfg.parser == "shiftreduce" and cfg.shiftreduce.system == "spurious"
    assert load_config("configs/en_ewt/sr-b1.yaml").shiftreduce.beam == 1
    for key, value in (("system", "eager"), ("update", "late"), ("beam", 0)):
        with pytest.raises(ConfigError, match="shiftreduce"):
            load_config("configs/en_ewt/sr-nonsp-b12.yaml", [f"shiftreduce.{key}={value}"])


def test_shiftreduce_forced_decoding_rejects_unusable_gold_trees() -> None:
    sent = Sentence.build("a b c".split(), heads=[-1, 0, 0, 2], deprels=["", "x", "y", "z"],
                          upos="A B C".split(), xpos="A B C".split())
    vocab = Vocabulary.build([sent])
    model = ShiftReduceModel(vocab, np.zeros(layout_size(12, 8, len(vocab.labels)),
                                             dtype=np.float32), 12, 8, "xpos")
    with pytest.raises(DparseError, match="sentence 1 of the input.*one root dependent"):
        list(model.parse([sent], force_gold=True))
    check_tree(next(model.parse([sent])).heads, single_root=True, projective=True)


def test_shiftreduce_models_of_older_feature_templates_are_refused(tmp_path) -> None:
    sent = Sentence.build("a b".split(), heads=[-1, 0, 1], deprels=["", "x", "y"],
                          upos="A B".split(), xpos="A B".split())
    vocab = Vocabulary.build([sent])
    model = ShiftReduceModel(vocab, np.zeros(layout_size(12, 8, len(vocab.labels)),
                                             dtype=np.float32), 12, 8, "xpos", upos_pair=True)
    model.write_files(tmp_path)
    again = ShiftReduceModel.read_files(tmp_path)
    assert again.upos_pair and again.tagcol == PAIRED_TAGS
    arrays = {key: np.array(value) for key, value in load_arrays(tmp_path / WEIGHTS_FILE).items()
              if key != "templates"}
    save_arrays(tmp_path / WEIGHTS_FILE, **arrays)
    with pytest.raises(DparseError, match="feature templates version 1"):
        ShiftReduceModel.read_files(tmp_path)


def test_shiftreduce_upos_pair_needs_an_xpos_column() -> None:
    """``features.tag: auto`` on a treebank without XPOS reads UPOS: there is nothing to pair,
    and the model says so (it parses with the UPOS column alone)."""
    sents = [Sentence.build("a b c".split(), heads=[-1, 2, 0, 2], deprels=["", "x", "r", "y"],
                            upos="A B C".split(), xpos="_ _ _".split()) for _ in range(4)]
    cfg = load_config("configs/en_ewt/sr-nonsp-b12.yaml", [
        "features.tag=auto", "shiftreduce.upos_pair=true", "data.dev=null", "training.epochs=1",
        "features.arc_bits=12", "features.label_bits=8"])
    model = train(cfg, progress=False, sentences=sents).model
    assert model.tag == "upos" and not model.upos_pair
    assert model.tagcol != PAIRED_TAGS
    check_tree(next(model.parse(sents[:1])).heads, single_root=True, projective=True)
