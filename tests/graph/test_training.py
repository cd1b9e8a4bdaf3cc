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
