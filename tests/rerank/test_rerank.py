"""Tests of the forest reranker's features and decoders (dparse.rerank.reranker) against brute
force: on random shift-reduce forests of both transition systems, every derivation's hyperedge-
factored local score equals the weights times the feature vector of its tree, Viterbi returns
the best tree of the forest, cube pruning with k large enough returns the best tree under the
non-local model (and with small k never anything better), with and without label features (each
arc under its best label), scores agree with the trees returned; forests whose vertices do not
fix their heads' outer modifiers are refused. Then the whole pipeline on a slice
of en_ewt: trained from nothing by ``dparse train`` (first stage, jackknife, reranker, beta),
parsing, resuming, one fold at a time, and bad configs."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from dparse.hypergraph.hypergraph import Hypergraph
from dparse.rerank.reranker import RerankSentence, vertex_outer
from dparse.transition.shiftreduce_search import parse as sr_parse
from dparse.transition.shiftreduce_templates import layout_size

from dparse.cli import cli
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.errors import ConfigError
from dparse.hypergraph.forest import Forest
from dparse.metrics import evaluate
from dparse.modeldir import WEIGHTS_FILE
from dparse.rerank.model import RerankModel
from dparse.trees import check_tree

SR_BITS, SR_LBITS, SR_LABELS, XPOS = 10, 8, 3, 3
ARC_BITS, HO_BITS, LABEL_BITS = 12, 12, 8


def random_forest(rng: np.random.Generator, n: int, system: int, beam: int):
    """Random tokens, and the packed forest a shift-reduce search with random weights builds."""
    tokens = np.ones((n + 1, 6), dtype=np.int32)
    tokens[1:] = rng.integers(4, 9, size=(n, 6))
    weights = rng.normal(size=layout_size(SR_BITS, SR_LBITS, SR_LABELS))
    heads = np.zeros(n + 1, dtype=np.int32)
    labels = np.zeros(n + 1, dtype=np.int32)
    chart = sr_parse(tokens, weights, SR_BITS, SR_LBITS, SR_LABELS, XPOS, system, True, beam,
                     heads, labels, None, True)
    forest = Forest(n, *chart.forest())
    forest.validate()
    return tokens, forest


def sentence(rng, tokens, guide, nonlocal_features, labels=0):
    n = tokens.shape[0] - 1
    morph_ptr = np.zeros(n + 2, dtype=np.int32)
    word_class = rng.integers(0, 4, size=n + 1).astype(np.uint8)  # flags: both classes too
    return RerankSentence(tokens, morph_ptr, np.zeros(0, dtype=np.int32), word_class, guide,
                          ARC_BITS, HO_BITS, nonlocal_features, LABEL_BITS, labels)


def random_weights(rng, size, ties):
    w = rng.normal(size=size)
    return np.round(w) if ties else w


def tree_score(sent, weights, heads):
    """w . f(tree), the tree's arcs under their best labels (for a model with labels)."""
    heads = heads.astype(np.int32)
    labels = sent.best_labels(heads, weights)
    return float(weights[sent.tree_features(heads, labels)].sum())


@pytest.mark.parametrize("labels", [0, 3])
@pytest.mark.parametrize("system", [0, 1])
def test_local_scores_factor_over_hyperedges_and_viterbi_is_the_best_tree(system, labels):
    rng = np.random.default_rng(10 + system + labels)
    for trial in range(30):
        n = int(rng.integers(2, 8))
        tokens, forest = random_forest(rng, n, system, int(rng.integers(2, 10)))
        graph = Hypergraph(forest)
        _, guide, _ = graph.viterbi()
        sent = sentence(rng, tokens, guide if trial % 2 else None, False, labels)
        weights = random_weights(rng, sent.size, ties=trial % 3 == 0)
        edge = sent.edge_scores(graph, weights)
        count = int(graph.count_derivations())
        scores, trees, _ = graph.kbest(count + 2, edge)
        assert len(scores) == count
        for s, t in zip(scores.tolist(), trees, strict=True):
            assert tree_score(sent, weights, t) == pytest.approx(s, abs=1e-9)
        best, heads = sent.best_tree(graph, weights, edge)
        check_tree(heads, single_root=True, projective=True)
        assert best == pytest.approx(max(tree_score(sent, weights, t) for t in trees), abs=1e-9)
        assert tree_score(sent, weights, heads) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("labels", [0, 3])
@pytest.mark.parametrize("system", [0, 1])
def test_cube_pruning_with_large_k_is_exact_under_nonlocal_features(system, labels):
    rng = np.random.default_rng(20 + system + labels)
    for trial in range(30):
        n = int(rng.integers(2, 8))
        tokens, forest = random_forest(rng, n, system, int(rng.integers(2, 10)))
        graph = Hypergraph(forest)
        _, guide, _ = graph.viterbi()
        sent = sentence(rng, tokens, guide, True, labels)
        weights = random_weights(rng, sent.size, ties=trial % 3 == 0)
        edge = sent.edge_scores(graph, weights)
        count = int(graph.count_derivations())
        _, trees, _ = graph.kbest(count)
        exact = max(tree_score(sent, weights, t) for t in trees)
        best, heads = sent.best_tree(graph, weights, edge, k=count + 5)
        check_tree(heads, single_root=True, projective=True)
        assert best == pytest.approx(exact, abs=1e-9)
        assert tree_score(sent, weights, heads) == pytest.approx(best, abs=1e-9)
        for k in (1, 2, 3):
            approx, approx_heads = sent.best_tree(graph, weights, edge, k=k)
            assert approx <= exact + 1e-9
            assert tree_score(sent, weights, approx_heads) == pytest.approx(approx, abs=1e-9)


def test_extra_hyperedge_scores_shift_the_choice_to_the_first_stage():
    rng = np.random.default_rng(5)
    tokens, forest = random_forest(rng, 7, 1, 8)
    graph = Hypergraph(forest)
    _, first_best, _ = graph.viterbi()
    sent = sentence(rng, tokens, first_best, True)
    weights = random_weights(rng, sent.size, ties=False)
    edge = sent.edge_scores(graph, weights)
    for k in (0, 3):
        _, heads = sent.best_tree(graph, weights, edge + 1e6 * forest.edge_score, k=k)
        assert heads.tolist() == first_best.tolist()


def test_vertex_outer_refuses_forests_whose_vertices_merge_different_modifiers():
    # Vertex 6 (head 3 over words 1..3) has two derivations: 1 and 2 both modifiers of 3
    # (outermost left modifier 1, then 2), or 1 a modifier of 2 (3's only modifier is 2). A
    # shift-reduce forest never merges the two; vertex_outer says so.
    forest = Forest(
        n=3,
        vertex_span=np.array([[0, 0], [1, 1], [2, 2], [3, 3], [2, 3], [1, 2], [1, 3], [0, 3]],
                             dtype=np.int32),
        vertex_head=np.array([0, 1, 2, 3, 3, 2, 3, 0], dtype=np.int32),
        edge_head=np.array([0, 1, 2, 3, 4, 5, 6, 6, 7], dtype=np.int32),
        edge_tails=np.array([[-1, -1], [-1, -1], [-1, -1], [-1, -1], [2, 3], [1, 2], [1, 4],
                             [5, 3], [0, 6]], dtype=np.int32),
        edge_arc=np.array([[-1, -1], [-1, -1], [-1, -1], [-1, -1], [3, 2], [2, 1], [3, 1],
                           [3, 2], [0, 3]], dtype=np.int32),
        edge_score=np.zeros(9),
        goal=7,
    )
    forest.validate()
    graph = Hypergraph(forest)
    assert int(graph.count_derivations()) == 2
    with pytest.raises(ValueError, match="vertex 6 disagree"):
        vertex_outer(graph)
    sent = sentence(np.random.default_rng(0), np.ones((4, 6), dtype=np.int32), None, False)
    with pytest.raises(ValueError, match="disagree"):
        sent.edge_scores(graph, np.zeros(sent.size))


# -- the pipeline on a slice of en_ewt ------------------------------------------------------------

def slice_configs(tmp_path, data, train: int = 600, dev: int = 150, features: str = "nonlocal"):
    """A small first-stage config and a reranker config over slices of en_ewt in tmp_path."""
    write_conll(read_treebank(data / "en_ewt" / "train.conllu")[:train], tmp_path / "train.conllu")
    write_conll(read_treebank(data / "en_ewt" / "dev.conllu")[:dev], tmp_path / "dev.conllu")
    sr = yaml.safe_load(Path("configs/en_ewt/sr-nonsp-b12.yaml").read_text())
    sr["features"].update(arc_bits=18, label_bits=12)
    sr["shiftreduce"]["beam"] = 4
    sr["training"]["epochs"] = 3
    (tmp_path / "sr.yaml").write_text(yaml.safe_dump(sr))
    rr = yaml.safe_load(Path(f"configs/en_ewt/rerank-{features}.yaml").read_text())
    rr["data"].update(train=str(tmp_path / "train.conllu"), dev=str(tmp_path / "dev.conllu"))
    rr["features"].update(arc_bits=18, ho_bits=18)
    rr["rerank"].update(first_stage="sr.yaml", folds=3, work=None, k=3, train_k=3,
                        beta_grid="0:3:0.25")
    rr["training"]["epochs"] = 3
    (tmp_path / "rr.yaml").write_text(yaml.safe_dump(rr))
    return tmp_path / "sr.yaml", tmp_path / "rr.yaml"


@pytest.mark.slow  # four shift-reduce models and a reranker on 600 sentences (make test-full);
# the README's rerank examples train the same way on tiny slices in the fast suite
def test_rerank_trains_from_nothing_and_parses_on_a_slice(tmp_path, data, caplog):
    _, rr = slice_configs(tmp_path, data)
    runner = CliRunner()
    model_dir = tmp_path / "model"
    result = runner.invoke(cli, ["train", str(rr), "--out", str(model_dir), "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "model.work" / "fold-03-of-03.forests.gz").is_file()
    assert (model_dir / "first-stage" / "weights.bin").is_file()
    dev = list(read_conll(tmp_path / "dev.conllu"))
    out = tmp_path / "dev.parsed"
    result = runner.invoke(cli, ["parse", str(model_dir), str(tmp_path / "dev.conllu"), "-o",
                                 str(out)])
    assert result.exit_code == 0, result.output
    parsed = list(read_conll(out))
    model = RerankModel.load(model_dir)
    assert model.nonlocal_features and model.guide and model.k == 3
    again = list(model.parse(dev))
    for p, q in zip(parsed, again, strict=True):
        check_tree(p.heads, single_root=True, projective=True)
        assert p.heads.tolist() == q.heads.tolist() and p.deprels == q.deprels
        assert set(p.deprels[1:]) <= set(model.first.vocab.labels)
    # parse-time keys: k, beta and the first stage's beam; training keys are refused
    result = runner.invoke(cli, ["parse", str(model_dir), str(tmp_path / "dev.conllu"), "-o",
                                 str(tmp_path / "wide.parsed"), "--set", "rerank.k=5",
                                 "--set", "rerank.first_stage_beam=8", "--set", "rerank.beta=0"])
    assert result.exit_code == 0, result.output
    model.k, model.beta, model.first.beam = 5, 0.0, 8
    wide = [s.heads.tolist() for s in model.parse(dev)]
    assert [s.heads.tolist() for s in read_conll(tmp_path / "wide.parsed")] == wide
    result = runner.invoke(cli, ["parse", str(model_dir), str(tmp_path / "dev.conllu"),
                                 "--set", "rerank.folds=5"])
    assert isinstance(result.exception, ConfigError)
    assert "rerank.first_stage_beam" in str(result.exception)
    model = RerankModel.load(model_dir)
    reranked = evaluate(dev, parsed)
    first = evaluate(dev, list(model.first.parse(dev)))
    assert reranked.uas >= 70.0 and reranked.las >= 60.0
    assert reranked.uas >= first.uas - 1.0
    # the second run reuses the first stage and every fold
    caplog.clear()
    with caplog.at_level(logging.INFO):
        result = runner.invoke(cli, ["train", str(rr), "--out", str(tmp_path / "model2"),
                                     "--work", str(tmp_path / "model.work")])
    assert result.exit_code == 0, result.output
    assert "first stage: up to date" in caplog.text
    assert caplog.text.count("up to date") == 4
    assert ((model_dir / WEIGHTS_FILE).read_bytes()
            == (tmp_path / "model2" / WEIGHTS_FILE).read_bytes())


def test_rerank_fold_option_and_misuse(tmp_path, data):
    sr, rr = slice_configs(tmp_path, data, train=150, dev=30, features="local")
    runner = CliRunner()
    result = runner.invoke(cli, ["train", str(rr), "--work", str(tmp_path / "w"), "--fold", "2"])
    assert result.exit_code == 0, result.output
    assert "fold 2 of 3" in result.output and "train without --fold" in result.output
    assert sorted(p.name for p in (tmp_path / "w").glob("*.forests.gz")) == [
        "fold-02-of-03.forests.gz"]
    result = runner.invoke(cli, ["train", str(sr), "--jobs", "2"])
    assert result.exit_code == 2 and "--jobs applies to forest rerankers" in result.output
    result = runner.invoke(cli, ["train", str(rr), "--out", str(tmp_path / "m"), "--set",
                                 f"rerank.first_stage={rr}"])
    assert isinstance(result.exception, ConfigError)
    assert "needs a shift-reduce one" in str(result.exception)
    result = runner.invoke(cli, ["train", str(rr), "--set", "data.dev=null"])
    assert isinstance(result.exception, ConfigError)
    assert "tunes beta on dev" in str(result.exception)
    for key, value in (("rerank.features", "global"), ("rerank.folds", "1"),
                       ("rerank.beta_grid", "1:0:1"), ("rerank.beta", "-1")):
        result = runner.invoke(cli, ["train", str(rr), "--set", f"{key}={value}"])
        assert isinstance(result.exception, ConfigError)
        assert key in str(result.exception)


def test_label_features_belong_to_the_given_labels():
    rng = np.random.default_rng(7)
    tokens, forest = random_forest(rng, 6, 1, 6)
    graph = Hypergraph(forest)
    _, heads, _ = graph.viterbi()
    sent = sentence(rng, tokens, None, False, 4)
    weights = random_weights(rng, sent.size, ties=False)
    best = sent.best_labels(heads, weights)
    assert best[0] == -1 and ((0 <= best[1:]) & (best[1:] < 4)).all()
    scores = {}
    for _ in range(20):
        labels = np.concatenate([[-1], rng.integers(0, 4, size=6)]).astype(np.int32)
        scores[tuple(labels)] = float(weights[sent.tree_features(heads, labels)].sum())
    assert max(scores.values()) <= tree_score(sent, weights, heads) + 1e-9
    unlabeled = np.full(7, -1, dtype=np.int32)  # unknown labels: no label features
    assert sent.tree_features(heads, unlabeled).size < sent.tree_features(heads, best).size
    with pytest.raises(ValueError, match="needs the tree's labels"):
        sent.tree_features(heads)
    with pytest.raises(ValueError, match="below 4"):
        sent.tree_features(heads, np.full(7, 4, dtype=np.int32))
