"""dparse.graph.training on slices of real en_ewt data: accuracy, determinism, model selection."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import DATA, requires_data

from dparse.config import ExperimentConfig, load_config
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.epochs import TrainResult, save_model
from dparse.errors import DparseError
from dparse.graph.model import ArcFactoredModel
from dparse.graph.training import train
from dparse.modeldir import CONFIG_FILE

pytestmark = requires_data


@pytest.fixture(scope="module")
def slices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 1500 (and 400: small.conllu) training and 300 dev sentences of en_ewt."""
    folder = tmp_path_factory.mktemp("en_ewt-slices")
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 1500), folder / "train.conllu")
    write_conll(islice(read_conll(folder / "train.conllu"), 400), folder / "small.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 300), folder / "dev.conllu")
    return folder


def _config(folder: Path, *overrides: str, **data: str | None) -> ExperimentConfig:
    raw = {
        "name": "slice",
        "data": {"train": "train.conllu", "dev": "dev.conllu", **data},
        "features": {"arc_bits": 20, "label_bits": 14},
        "training": {"epochs": 3},
    }
    return load_config(raw=raw, overrides=overrides, data_root=str(folder))


@pytest.fixture(scope="module")
def pa_result(slices: Path) -> TrainResult:
    return train(_config(slices), progress=False)


def _left_neighbour_uas(folder: Path) -> float:
    """UAS of attaching every word to the word before it (the first to the root)."""
    correct = total = 0
    for sent in read_treebank(folder / "dev.conllu"):
        n = len(sent)
        correct += int((sent.heads[1:] == np.arange(n)).sum())
        total += n
    return 100 * correct / total


def test_pa_reaches_the_expected_dev_accuracy(pa_result: TrainResult) -> None:
    # Measured: dev UAS 79.7 / 81.3 / 81.6 and LAS 76.5 / 78.3 / 78.9 after epochs 1-3.
    best = pa_result.epochs[pa_result.best_epoch - 1]
    assert best.dev_uas >= 78.0
    assert best.dev_las >= 75.0
    assert len(pa_result.epochs) == 3
    assert [e.epoch for e in pa_result.epochs] == [1, 2, 3]
    assert pa_result.epochs[-1].dev_uas > pa_result.epochs[0].dev_uas - 1.0
    assert pa_result.seconds > 0


def test_best_epoch_is_selected_by_dev_las(pa_result: TrainResult) -> None:
    las = [e.dev_las for e in pa_result.epochs]
    assert pa_result.best_epoch == 1 + int(np.argmax(las))


def test_epoch_reports(pa_result: TrainResult) -> None:
    for rep in pa_result.epochs:
        assert 0 < rep.train_las <= rep.train_uas <= 100
        assert 0 < rep.dev_las <= rep.dev_uas <= 100
        assert set(rep.seconds) == {"score", "decode", "update", "dev"}
        assert all(v >= 0 for v in rep.seconds.values())
    # training accuracy (of the online, cost-augmented predictions) grows with the epochs
    assert pa_result.epochs[-1].train_uas > pa_result.epochs[0].train_uas


def test_perceptron_learns(slices: Path) -> None:
    # Measured: dev UAS 79.9 / 80.9 after epochs 1-2; the left-neighbour baseline is ~30.
    result = train(_config(slices, "training.learner=perceptron", "training.epochs=2"),
                   progress=False)
    best = result.epochs[result.best_epoch - 1]
    baseline = _left_neighbour_uas(slices)
    assert baseline < 50
    assert best.dev_uas >= 77.0 and best.dev_uas > baseline + 30
    assert best.dev_las >= 73.0


def test_same_config_gives_identical_weights(slices: Path, tmp_path: Path) -> None:
    cfg = _config(slices, "training.epochs=2", "training.seed=7", train="small.conllu")
    first = train(cfg, progress=False)
    second = train(cfg, progress=False)
    assert first.model.weights.tobytes() == second.model.weights.tobytes()
    assert first.best_epoch == second.best_epoch
    assert [e.dev_las for e in first.epochs] == [e.dev_las for e in second.epochs]
    other_seed = train(_config(slices, "training.epochs=2", "training.seed=8",
                               train="small.conllu"), progress=False)
    assert other_seed.model.weights.tobytes() != first.model.weights.tobytes()
    save_model(first, cfg, tmp_path / "a")
    save_model(second, cfg, tmp_path / "b")
    for name in ("vocab.json", CONFIG_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert np.array_equal(ArcFactoredModel.load(tmp_path / "a").weights,
                          ArcFactoredModel.load(tmp_path / "b").weights)


def test_save_model_writes_a_loadable_directory(pa_result: TrainResult, slices: Path,
                                                tmp_path: Path) -> None:
    cfg = _config(slices)
    save_model(pa_result, cfg, tmp_path / "model")
    saved = yaml.safe_load((tmp_path / "model" / CONFIG_FILE).read_text())
    assert saved == cfg.to_dict()
    assert load_config(tmp_path / "model" / CONFIG_FILE, data_root=str(slices)).to_dict() == saved
    loaded = ArcFactoredModel.load(tmp_path / "model")
    assert np.array_equal(loaded.weights, pa_result.model.weights)


def test_training_without_dev_keeps_the_last_epoch(slices: Path) -> None:
    seen: list[int] = []
    result = train(_config(slices, "training.epochs=2", "training.shuffle=false",
                           train="small.conllu", dev=None),
                   progress=False, on_epoch=lambda rep: seen.append(rep.epoch))
    assert seen == [1, 2]
    assert result.best_epoch == 2
    assert all(e.dev_uas is None and e.dev_las is None for e in result.epochs)
    assert "dev" not in result.epochs[0].seconds


def test_missing_treebank_is_reported(slices: Path) -> None:
    with pytest.raises(DparseError, match="nope.conllu: treebank not found"):
        train(_config(slices, train="nope.conllu"), progress=False)


def test_the_dev_temperature_is_saved_beside_unchanged_weights(
        slices: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Training with dev data fits the head probabilities' temperature on dev and saves it
    as calibration.json; every other file of the model is byte for byte what training
    without the fit writes; loaded, the model's marginals use it unless told otherwise; a
    model without the file uses T = 1."""
    import json

    import dparse
    import dparse.graph.training as training
    from dparse.calibration import CALIBRATION_FILE
    from dparse.modeldir import MANIFEST_FILE

    cfg = _config(slices, "training.epochs=1", train="small.conllu")
    save_model(train(cfg, progress=False), cfg, tmp_path / "fitted")
    monkeypatch.setattr(training, "fit_dev_temperature", lambda *args: None)
    save_model(train(cfg, progress=False), cfg, tmp_path / "plain")
    monkeypatch.undo()

    fitted, plain = tmp_path / "fitted", tmp_path / "plain"
    files = {p.relative_to(fitted) for p in fitted.rglob("*") if p.is_file()}
    assert files - {p.relative_to(plain) for p in plain.rglob("*") if p.is_file()} == {
        Path(CALIBRATION_FILE)}
    for rel in files - {Path(CALIBRATION_FILE), Path(MANIFEST_FILE)}:
        assert (fitted / rel).read_bytes() == (plain / rel).read_bytes(), rel
    saved = json.loads((fitted / CALIBRATION_FILE).read_text())
    assert saved["dev_sentences"] + saved["dev_skipped"] == 300
    assert 0.05 < saved["temperature"] < 20 and saved["dev_nll"] <= saved["dev_nll_at_1"]

    parser, old = dparse.load(fitted), dparse.load(plain)
    assert parser.temperature == saved["temperature"] and old.temperature is None
    assert parser.fit_temperature(slices / "dev.conllu").temperature == pytest.approx(
        saved["temperature"], rel=1e-12)
    words = ["She", "reads", "old", "books", "."]
    for model, t in ((parser, saved["temperature"]), (old, 1.0)):
        default = model.marginals(words)[1]
        np.testing.assert_array_equal(default, model.marginals(words, temperature=t)[1])
        assert not np.array_equal(default, model.marginals(words, temperature=2 * t)[1])


def test_a_malformed_calibration_file_is_named(tmp_path: Path) -> None:
    from dparse.calibration import CALIBRATION_FILE, read_calibration

    assert read_calibration(tmp_path) is None
    (tmp_path / CALIBRATION_FILE).write_text('{"temperature": 0.9}')
    with pytest.raises(DparseError, match=f"{CALIBRATION_FILE}: not a temperature fit"):
        read_calibration(tmp_path)
    (tmp_path / CALIBRATION_FILE).write_text(
        '{"temperature": -1, "dev_nll_at_1": 1, "dev_nll": 1, "dev_sentences": 1, '
        '"dev_skipped": 0}')
    with pytest.raises(DparseError, match="must be positive"):
        read_calibration(tmp_path)
