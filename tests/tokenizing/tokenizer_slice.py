"""A tokenizer trained on a slice of en_ewt, for the tests of dparse.tokenizing."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from conftest import DATA

from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.epochs import save_model
from dparse.tokenizing.training import train


def train_slice(folder: Path, seed: int = 1) -> Path:
    """A tokenizer trained on the first 2000 sentences of en_ewt train (dev: the first 300 of
    dev), 4 epochs, 2**18 buckets, saved as ``folder/model``."""
    if not (folder / "train.conllu").exists():
        write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 2000),
                    folder / "train.conllu")
        write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 300),
                    folder / "dev.conllu")
    cfg = load_config(raw={"name": "tiny-tokenizer", "parser": "tokenizer",
                           "data": {"train": "train.conllu", "dev": "dev.conllu"},
                           "tokenizing": {"bits": 18},
                           "training": {"learner": "perceptron", "epochs": 4, "seed": seed}},
                      data_root=str(folder))
    save_model(train(cfg), cfg, folder / "model")
    return folder / "model"
