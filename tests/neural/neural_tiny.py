"""Helpers of the neural tests: the fixture ``tiny_neural`` (a test module imports
``tiny_neural_fixture``), a neural model (tiny network, gold UPOS as input) trained once per
test process on the first 80 sentences of en_ewt train for 2 epochs, selected on the first 20
of dev, read only; :func:`tiny_config`, the raw config of such a model; :func:`write_slices`
and :func:`train_tiny`."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA

TINY_NETWORK = {"word_dim": 16, "char_dim": 8, "char_filters": 16, "tag_dim": 8,
                "lstm_dim": 24, "lstm_layers": 2, "arc_dim": 32, "label_dim": 16,
                "batch_tokens": 300, "tags": "upos"}


def tiny_config(**neural: object) -> dict:
    """The raw config of a tiny neural model over ``train.conllu`` and ``dev.conllu``."""
    return {"name": "tiny-neural", "parser": "neural",
            "data": {"train": "train.conllu", "dev": "dev.conllu"},
            "training": {"epochs": 2, "seed": 3}, "neural": TINY_NETWORK | neural}


def write_slices(folder: Path, train: int = 80, dev: int = 20) -> Path:
    """``folder`` with the first ``train`` sentences of en_ewt train and ``dev`` of dev."""
    from dparse.conll import read_conll, write_conll

    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), train),
                folder / "train.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), dev), folder / "dev.conllu")
    return folder


def train_tiny(folder: Path, raw: dict, out: Path) -> Path:
    """The config ``raw`` (paths relative to ``folder``) trained and saved as ``out``."""
    from dparse.config import load_config
    from dparse.parsers import train_model

    train_model(load_config(raw=raw, data_root=str(folder)), out, {})
    return out


@pytest.fixture(scope="session", name="tiny_neural")
def tiny_neural_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``train.conllu``, ``dev.conllu`` and ``model`` (the tiny neural model)."""
    pytest.importorskip("torch")
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = write_slices(tmp_path_factory.mktemp("tiny-neural"))
    train_tiny(folder, tiny_config(), folder / "model")
    return folder
