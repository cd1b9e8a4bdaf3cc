"""Shared test settings: the real-treebank data root, a tiny model shared by the session, and
Ctrl-C for the children.

``DATA`` is ``$DPARSE_DATA`` or ``../shared/data`` beside the repository. Tests that read it
take the ``data`` fixture (or carry ``requires_data``) and are skipped when it is missing.

``tiny_first_order`` is trained once per test process (once per pytest-xdist worker) and read
by the test files that need any small trained first-order model; they never write into it.

A suite started in the background by a shell without job control (``nohup make test &``)
inherits SIGINT ignored, and so would every child process the tests interrupt with SIGINT
(an ignored disposition survives exec): the test process gives SIGINT back its Python
handler, which exec resets to the default in the children.
"""

from __future__ import annotations

import os
import signal
from itertools import islice
from pathlib import Path

import pytest

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

DATA = Path(os.environ.get("DPARSE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
requires_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"treebank data not found at {DATA}")


@pytest.fixture
def data() -> Path:
    """The data root; skips the test when it is missing."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return DATA


def train_tiny_model(folder: Path, raw: dict, train: int, dev: int) -> Path:
    """``folder`` with the first ``train`` sentences of en_ewt train (``train.conllu``), the
    first ``dev`` of en_ewt dev (``dev.conllu``) and ``model``: the config ``raw`` (treebank
    paths relative to ``folder``) trained on them and saved."""
    from dparse.config import load_config
    from dparse.conll import read_conll, write_conll
    from dparse.epochs import save_model
    from dparse.graph.training import train as train_graph

    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), train),
                folder / "train.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), dev), folder / "dev.conllu")
    cfg = load_config(raw=raw, data_root=str(folder))
    save_model(train_graph(cfg, progress=False), cfg, folder / "model")
    return folder


@pytest.fixture(scope="session")
def tiny_first_order(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder: ``train.conllu`` (the first 300 sentences of en_ewt train), ``dev.conllu``
    (the first 40 of en_ewt dev) and ``model``, a first-order model (cle) trained on the first
    for one epoch with 2**18 arc weights and 2**12 label rows, its config's ``ensemble.gamma1``
    0.5 (what ``dparse ensemble`` takes from a model's config). Read only: copy what you change."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return train_tiny_model(tmp_path_factory.mktemp("tiny-first-order"),
                            {"name": "tiny", "data": {"train": "train.conllu"},
                             "features": {"arc_bits": 18, "label_bits": 12},
                             "training": {"epochs": 1}, "ensemble": {"gamma1": 0.5}}, 300, 40)
