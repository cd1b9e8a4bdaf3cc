"""benchmarks/greedy_tables.py and common.py: which rows share a model, and training only what is
missing."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA, requires_data
from paths import REPO

from dparse.config import load_config
from dparse.conll import read_conll, write_conll

sys.path.insert(0, str(REPO / "benchmarks"))
from common import TREEBANKS, config_for, find_or_train, training_identity  # noqa: E402


def _identity(name: str) -> dict:
    return training_identity(load_config(raw=config_for(name, TREEBANKS[0], None)))


# (|B|, s) of the bgi-pp, +i and +i+b rows, as tuned on en_ewt dev (results/greedy-tune-o*.md)
ROW_OPTIONS = {1: ((1, 0), (1, 3), (5, 1)), 2: ((1, 0), (1, 5), (3, 5))}


@pytest.mark.parametrize("order", [1, 2])
def test_each_greedy_row_trains_with_its_own_inference(order: int) -> None:
    shared = _identity(f"o{order}-bgi-pp")
    rows = zip(("bgi-pp", "bgi-pp-i", "bgi-pp-ib"), ROW_OPTIONS[order], strict=True)
    for row, (beam, improve) in rows:
        training = _identity(f"o{order}-{row}")["training"]
        assert training["decoder"] == "bgi-pp"
        assert (training["decoder_options"]["beam"], training["decoder_options"]["improve"]) == (
            beam, improve)
    assert _identity(f"o{order}-bgi")["training"]["decoder"] == "bgi"
    exact = _identity("o1-cle" if order == 1 else "o2-dd")
    assert exact["training"]["decoder"] == ("cle" if order == 1 else "dd2")  # the decoder section
    assert shared["features"] == exact["features"] and shared["data"] == exact["data"]


@requires_data
def test_models_are_trained_once_and_reused_only_when_they_match(tmp_path: Path) -> None:
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 60), tmp_path / "t.conllu")
    raw = {"name": "tiny", "data": {"train": "t.conllu"},
           "features": {"arc_bits": 14, "label_bits": 10}, "training": {"epochs": 1}}
    cfg = load_config(raw=raw, data_root=str(tmp_path))
    logged: list[str] = []
    models, other = tmp_path / "models", tmp_path / "other"
    trained = find_or_train(cfg, models, [], logged.append)
    assert trained == models / "tiny" and len(logged) == 1
    # the same config up to the parse-time sections: reused, not retrained
    parse_time = load_config(raw=raw, data_root=str(tmp_path),
                             overrides=["ensemble.gamma1=0.1", "ensemble.decoder=cle"])
    assert find_or_train(parse_time, models, [], logged.append) == trained and len(logged) == 1
    # found in a reuse folder; one that was trained otherwise is skipped there
    assert find_or_train(cfg, other, [models], logged.append) == trained and len(logged) == 1
    longer = load_config(raw=raw, data_root=str(tmp_path), overrides=["training.epochs=2"])
    assert find_or_train(longer, other, [models], logged.append) == other / "tiny"
    assert len(logged) == 2
    # ... but never replaced in the folder models are trained into
    with pytest.raises(SystemExit, match="trained with another config"):
        find_or_train(longer, models, [], logged.append)
    # the decoder section trains the model when training.decoder is null
    with pytest.raises(SystemExit, match="trained with another config"):
        find_or_train(load_config(raw=raw, data_root=str(tmp_path),
                                  overrides=["decoder.name=eisner"]), models, [], logged.append)
