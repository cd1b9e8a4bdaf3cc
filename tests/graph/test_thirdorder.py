"""The third-order model: chart scores agree with w . phi(tree), cube search is exact where it
must be, the exact baseline matches brute force, training learns, saving round-trips."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from bruteforce import all_trees
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import FeatureSpace

from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.decoders import configured_decoder
from dparse.epochs import save_model
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.graph.model import ArcFactoredModel
from dparse.graph.pruner import Pruner
from dparse.graph.thirdorder import ThirdOrderModel
from dparse.graph.training import train
from dparse.metrics import evaluate
from dparse.search_errors import search_errors
from dparse.trees import check_tree
from dparse.vocab import Vocabulary

pytestmark = requires_data

ALL = "sib,grand,trisib,gsib,sibgrand,valency,position"
EXACT = "sib,grand,trisib,gsib"


@pytest.fixture(scope="module")
def sentences() -> tuple[Vocabulary, list]:
    sents = list(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 300))
    vocab = Vocabulary.build(sents)
    return vocab, [vocab.encode(s) for s in sents]


def random_model(vocab: Vocabulary, groups: str, label_tuples: bool, labels_per_arc: int,
                 seed: int, top_k: int = 4, first_order_labels: bool = True) -> ThirdOrderModel:
    """A model with random weights (ties unlikely) and a random first-order pruner."""
    rng = np.random.default_rng(seed)
    space = FeatureSpace(14, 8, len(vocab.labels))
    pruner = Pruner(ArcFactoredModel(vocab, space, rng.normal(size=space.size)
                                     .astype(np.float32)), top_k, 0.0)
    cfg = load_config(raw={
        "data": {"train": "x"}, "decoder": {"name": "cube"},
        "features": {"order": 3, "arc_bits": 14, "label_bits": 10, "ho_bits": 14,
                     "groups": groups, "label_tuples": label_tuples,
                     "labels_per_arc": labels_per_arc,
                     "first_order_labels": first_order_labels},
    })
    model = ThirdOrderModel.untrained(vocab, cfg, pruner)
    model.weights = rng.normal(size=model.size).astype(np.float32)
    return model


@pytest.mark.parametrize("groups", [ALL, "none", "sib", "grand,gsib", "valency,position"])
@pytest.mark.parametrize("k,recombination", [(1, False), (5, True), (5, False)])
def test_chart_score_of_decoded_tree_is_weights_dot_features(sentences, groups, k,
                                                             recombination) -> None:
    vocab, encs = sentences
    model = random_model(vocab, groups, True, 3, seed=len(groups) + k,
                         first_order_labels=groups != "none")
    decoder = configured_decoder("cube", {"k": k, "recombination": recombination})
    for enc in encs[:12]:
        sent = model.sentence(enc)
        heads, labels, score = model.decode(sent, decoder, True)
        check_tree(heads, single_root=True, projective=True)
        assert np.all(labels[1:] >= 0)
        # every label is one of its arc's candidates
        assert np.all((sent.candidates[heads[1:], np.arange(1, len(heads))]
                       == labels[1:, None]).any(axis=1))
        assert score == pytest.approx(model.tree_score(enc, heads, labels), rel=1e-9, abs=1e-9)


def test_cost_augmented_score_adds_the_labeled_hamming_cost(sentences) -> None:
    vocab, encs = sentences
    model = random_model(vocab, ALL, True, 2, seed=3)
    decoder = configured_decoder("cube", {"k": 3})
    for enc in encs[12:20]:
        sent = model.sentence(enc, cost_augmented=True)
        heads, labels, score = model.decode(sent, decoder, True)
        wrong_head = heads[1:] != enc.heads[1:]
        cost = 2.0 * wrong_head.sum() + float((~wrong_head & (labels[1:] != enc.labels[1:])).sum())
        assert score == pytest.approx(model.tree_score(enc, heads, labels) + cost, rel=1e-9)


def test_delta_is_gold_features_minus_predicted(sentences) -> None:
    vocab, encs = sentences
    model = random_model(vocab, ALL, True, 2, seed=4)
    decoder = configured_decoder("cube", {"k": 2})
    w = model.weights.astype(np.float64)
    for enc in encs[20:26]:
        heads, labels = model.predict(enc, decoder)
        idx, val = model.delta(enc, heads, labels)
        expected = model.tree_score(enc, enc.heads, enc.labels) - model.tree_score(enc, heads,
                                                                                   labels)
        assert float(w[idx] @ val) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def short_sentences(encs: list, longest: int) -> list:
    return [enc for enc in encs if 3 <= len(enc) <= longest]


def test_exact_baseline_is_the_brute_force_optimum_of_the_same_features(sentences) -> None:
    """eisner3-outermost over the model's parts == the best of all projective trees scored by
    feature extraction (each arc under its best label), all arcs allowed."""
    vocab, encs = sentences
    model = random_model(vocab, EXACT, False, 1, seed=5, top_k=100)
    decoder = configured_decoder("eisner3-outermost")
    for enc in short_sentences(encs, 6)[:6]:
        sent = model.sentence(enc)
        heads, labels, _ = model.decode(sent, decoder, True)
        check_tree(heads, single_root=True, projective=True)
        best = max(model.tree_score(enc, t, model.best_labels(sent, t))
                   for t in all_trees(len(enc), True, True))
        assert model.tree_score(enc, heads, labels) == pytest.approx(best, rel=1e-9)


def test_cube_with_a_huge_beam_finds_the_exact_optimum(sentences) -> None:
    """Recombination and k above the number of signatures of every cell: cube is exact, so
    it agrees with eisner3-outermost on the same feature model."""
    vocab, encs = sentences
    model = random_model(vocab, EXACT, False, 1, seed=6, top_k=3)
    cube = configured_decoder("cube", {"k": 1000, "recombination": True})
    exact = configured_decoder("eisner3-outermost")
    for enc in short_sentences(encs, 12)[:8]:
        sent = model.sentence(enc)
        heads, labels, score = model.decode(sent, cube, True)
        exact_heads, exact_labels, _ = model.decode(sent, exact, True)
        check_tree(exact_heads, single_root=True, projective=True)
        assert score == pytest.approx(model.tree_score(enc, exact_heads, exact_labels),
                                      rel=1e-9)


def test_exact_decoder_refuses_groups_it_cannot_score(sentences) -> None:
    vocab, encs = sentences
    model = random_model(vocab, ALL, True, 2, seed=7)
    with pytest.raises(DparseError, match="eisner3-outermost"):
        model.predict(encs[0], configured_decoder("eisner3-outermost"))
    with pytest.raises(DparseError, match="cube or eisner3-outermost"):
        model.predict(encs[0], configured_decoder("cle"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[ThirdOrderModel, Path, list]:
    """The full model trained two epochs on 300 en_ewt sentences (pruner: two epochs)."""
    folder = tmp_path_factory.mktemp("o3")
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 300), folder / "train.conllu")
    cfg = load_config(raw={
        "data": {"train": str(folder / "train.conllu")},
        "features": {"order": 3, "arc_bits": 18, "label_bits": 12, "ho_bits": 18,
                     "groups": ALL, "label_tuples": True, "labels_per_arc": 2,
                     "first_order_labels": True},
        "pruner": {"epochs": 2, "arc_bits": 16, "label_bits": 12, "top_k": 5,
                   "threshold": 0.001},
        "decoder": {"name": "cube", "options": {"k": 3}},
        "training": {"epochs": 2},
    })
    result = train(cfg, progress=False)
    model = result.model
    assert isinstance(model, ThirdOrderModel)
    save_model(result, cfg, folder / "model")
    dev = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 100))
    return model, folder / "model", dev


def test_training_on_a_slice_learns(trained) -> None:
    """300 sentences, 2 epochs: dev UAS well above what a model without higher-order or
    well-trained arc weights reaches (a zero-weight model scores ~20)."""
    model, _, dev = trained
    parsed = list(model.parse(dev, configured_decoder("cube", {"k": 3})))
    report = evaluate(dev, parsed, punct="include")
    print(f"dev slice UAS {report.uas:.2f} LAS {report.las:.2f}")
    assert report.uas > 70.0
    assert report.las > 60.0


def test_saved_model_parses_identically(trained) -> None:
    model, directory, dev = trained
    loaded = load_model(directory)
    assert isinstance(loaded, ThirdOrderModel)
    assert loaded.settings == model.settings
    decoder = configured_decoder("cube", {"k": 3})
    for a, b in zip(model.parse(dev[:40], decoder), loaded.parse(dev[:40], decoder),
                    strict=True):
        assert list(a.heads) == list(b.heads)
        assert list(a.deprels) == list(b.deprels)


def test_search_errors_of_the_saved_model(trained, tmp_path: Path) -> None:
    _, directory, dev = trained
    write_conll(dev[:30], tmp_path / "gold.conllu")
    report = search_errors(directory, tmp_path / "gold.conllu")
    total = report.total
    assert total.sentences == 30
    assert (total.correct + total.search_errors + total.ties + total.model_errors
            + total.unreachable) == 30
    assert total.model_errors > 0
    print(report.as_dict())


class _WrongModel:
    """Predicts every word attached to the root; its delta is one feature, index 0."""

    def predict(self, enc, decoder, single_root, weights, cost_augmented, timer, scratch=None):
        heads = np.zeros(len(enc) + 1, dtype=np.int32)
        heads[0] = -1
        return heads, np.zeros(len(enc) + 1, dtype=np.int32)

    def delta(self, enc, heads, labels):
        return np.array([0]), np.array([1.0])


@pytest.mark.parametrize("keep", [False, True])
def test_invalid_updates_are_skipped_or_kept(sentences, keep: bool) -> None:
    """Gold already outscores the prediction by more than its cost (w . delta = 1000): PA skips
    the update; with keep_invalid it steps as if they tied."""
    from dparse.graph.online import run_epoch
    from dparse.learning import AveragedLearner

    _, encs = sentences
    learner = AveragedLearner(4, "pa", C=0.5)
    learner.w[0] = 1000.0
    run_epoch(_WrongModel(), learner, encs[:1], configured_decoder("cle"), True, "t",
              progress=False, keep_invalid=keep)
    assert learner.w[0] == (1000.5 if keep else 1000.0)
