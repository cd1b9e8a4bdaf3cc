"""dparse.graph.model: parsing real sentences into valid labeled trees, save/load, timing."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data

from dparse.conll import Sentence, read_conll
from dparse.decoders import get_decoder
from dparse.errors import DparseError
from dparse.graph.model import ArcFactoredModel
from dparse.modeldir import VOCAB_FILE, WEIGHTS_FILE, save_arrays
from dparse.timer import ParseTimer
from dparse.trees import check_tree, is_projective

pytestmark = requires_data


@pytest.fixture(scope="module")
def model(tiny_first_order: Path) -> ArcFactoredModel:
    """The session's tiny model (one epoch on 300 en_ewt sentences)."""
    return ArcFactoredModel.load(tiny_first_order / "model")


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """40 dev sentences, among them long ones."""
    return list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40))


def _parse(model: ArcFactoredModel, sents: list[Sentence], decoder: str) -> list[Sentence]:
    return list(model.parse(sents, get_decoder(decoder)))


@pytest.mark.parametrize("decoder", ["cle", "eisner"])
def test_parse_gives_valid_labeled_trees(
    model: ArcFactoredModel, sentences: list[Sentence], decoder: str
) -> None:
    parsed = _parse(model, sentences, decoder)
    assert len(parsed) == len(sentences)
    labels = set(model.vocab.labels)
    for gold, out in zip(sentences, parsed, strict=True):
        assert out.form == gold.form and out.upos == gold.upos
        assert out.heads.dtype == np.int32 and out.heads.shape == (len(gold) + 1,)
        check_tree(out.heads, single_root=True, projective=decoder == "eisner")
        assert out.deprels[0] == "" and set(out.deprels[1:]) <= labels
        assert out.comments == gold.comments


def test_parse_agrees_with_predict_and_score(
    model: ArcFactoredModel, sentences: list[Sentence]
) -> None:
    decoder = get_decoder("cle")
    for sent, out in zip(sentences[:10], _parse(model, sentences[:10], "cle"), strict=True):
        enc = model.vocab.encode(sent)
        heads, labels = model.predict(enc, decoder)
        assert np.array_equal(heads, out.heads)
        assert labels[0] == -1
        assert [model.vocab.labels[i] for i in labels[1:]] == out.deprels[1:]
        arc, label = model.score(enc)
        assert np.array_equal(decoder.decode(arc), heads)
        assert np.array_equal(label[heads[1:], np.arange(1, len(heads))], labels[1:])


def test_cle_scores_at_least_as_high_as_eisner(
    model: ArcFactoredModel, sentences: list[Sentence]
) -> None:
    """CLE maximizes over all trees, Eisner over projective ones (a subset)."""
    for sent in sentences:
        arc, _ = model.score(model.vocab.encode(sent))
        words = np.arange(1, len(sent) + 1)
        best = {}
        for name in ("cle", "eisner"):
            heads = get_decoder(name).decode(arc)
            best[name] = arc[heads[1:], words].sum()
        assert best["cle"] >= best["eisner"] - 1e-6
        if is_projective(get_decoder("cle").decode(arc)):
            assert best["cle"] == pytest.approx(best["eisner"], abs=1e-6)


def test_cost_augmented_scores_differ_by_the_cost(
    model: ArcFactoredModel, sentences: list[Sentence]
) -> None:
    enc = model.vocab.encode(sentences[0])
    arc, _ = model.score(enc)
    cost, _ = model.score(enc, weights=model.weights.astype(np.float64), cost_augmented=True)
    n = len(enc)
    for m in range(1, n + 1):
        for h in range(n + 1):
            if h != m and h != enc.heads[m]:
                assert cost[h, m] == pytest.approx(arc[h, m] + 2.0, abs=1e-3)


def test_parse_timer_counts(model: ArcFactoredModel, sentences: list[Sentence]) -> None:
    timer = ParseTimer()
    list(model.parse(sentences, get_decoder("cle"), timer=timer))
    assert timer.sentences == len(sentences)
    assert timer.tokens == sum(len(s) for s in sentences)
    assert min(timer.encode, timer.score, timer.decode) > 0
    assert timer.seconds == pytest.approx(timer.encode + timer.score + timer.decode)
    assert timer.tokens_per_second == pytest.approx(timer.tokens / timer.seconds)
    assert ParseTimer().tokens_per_second == 0.0


def test_save_load_round_trip(
    model: ArcFactoredModel, sentences: list[Sentence], tmp_path: Path
) -> None:
    model.save(tmp_path / "m")
    assert (tmp_path / "m" / WEIGHTS_FILE).is_file() and (tmp_path / "m" / VOCAB_FILE).is_file()
    loaded = ArcFactoredModel.load(tmp_path / "m")
    assert loaded.weights.dtype == np.float32
    assert np.array_equal(loaded.weights, model.weights)
    assert (loaded.space.arc_bits, loaded.space.lab_bits, loaded.space.n_labels) == (
        model.space.arc_bits, model.space.lab_bits, model.space.n_labels)
    assert loaded.vocab.labels == model.vocab.labels
    for name in ("cle", "eisner"):
        before = _parse(model, sentences, name)
        after = _parse(loaded, sentences, name)
        assert [s.to_conll() for s in before] == [s.to_conll() for s in after]


def test_load_rejects_what_is_not_a_model(model: ArcFactoredModel, tmp_path: Path) -> None:
    with pytest.raises(DparseError, match="not a dparse model directory"):
        ArcFactoredModel.load(tmp_path)
    with pytest.raises(DparseError, match="not a dparse model directory"):
        ArcFactoredModel.load(tmp_path / "missing")
    model.save(tmp_path / "m")
    (tmp_path / "m" / VOCAB_FILE).unlink()
    with pytest.raises(DparseError, match=VOCAB_FILE):
        ArcFactoredModel.load(tmp_path / "m")
    model.save(tmp_path / "m2")
    save_arrays(tmp_path / "m2" / WEIGHTS_FILE, weights=model.weights[:-5],
                arc_bits=model.space.arc_bits, lab_bits=model.space.lab_bits)
    with pytest.raises(DparseError, match=f"{WEIGHTS_FILE}: .* manifest.json"):
        ArcFactoredModel.load(tmp_path / "m2")
