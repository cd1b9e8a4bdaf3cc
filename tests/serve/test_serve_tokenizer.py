"""``tokenizer`` of UDPipe's /process: a model that carries a tokenizer (dparse.tokenizing.
carried) takes raw text and answers the bytes of ``dparse parse --format raw``; /models lists
its tokenizer."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest
from click.testing import CliRunner
from servers import Server, require_serving

from dparse.cli.parse import parse
from dparse.config import load_config
from dparse.conll import read_conll
from dparse.epochs import save_model
from dparse.parsers import train_model
from dparse.tokenizing.rawtext import raw_text
from dparse.tokenizing.training import train as train_tokenizer

require_serving()


@pytest.fixture(scope="module")
def raw_model(tiny_first_order: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A parser as tiny as ``tiny_first_order``'s, carrying a tokenizer trained two epochs on
    the same 300 sentences."""
    folder = tmp_path_factory.mktemp("serve-raw")
    data = {"train": "train.conllu", "dev": "dev.conllu"}
    cfg = load_config(raw={"name": "tiny-tokenizer", "parser": "tokenizer", "data": data,
                           "tokenizing": {"bits": 16},
                           "training": {"learner": "perceptron", "epochs": 2, "seed": 1}},
                      data_root=str(tiny_first_order))
    save_model(train_tokenizer(cfg), cfg, folder / "tokenizer")
    cfg = load_config(raw={"name": "tiny-raw", "data": data,
                           "features": {"arc_bits": 16, "label_bits": 10},
                           "training": {"epochs": 1},
                           "tokenizer": {"model": str(folder / "tokenizer")}},
                      data_root=str(tiny_first_order))
    train_model(cfg, folder / "parser", {})
    return folder / "parser"


@pytest.fixture(scope="module")
def server(raw_model: Path, tiny_first_order: Path) -> Iterator[Server]:
    running = Server(f"raw={raw_model}", f"words={tiny_first_order / 'model'}")
    yield running
    running.finish()


def test_a_model_with_a_tokenizer_parses_raw_text_as_dparse_parse_format_raw(
        server: Server, raw_model: Path, tiny_first_order: Path, tmp_path: Path) -> None:
    assert server.client.get("/models").json()["models"] == {"raw": ["tokenizer", "parser"],
                                                             "words": ["parser"]}
    text = raw_text(list(islice(read_conll(tiny_first_order / "dev.conllu"), 20)))
    (tmp_path / "in.txt").write_text(text, encoding="utf-8", newline="")
    result = CliRunner().invoke(parse, [str(raw_model), str(tmp_path / "in.txt"), "--format",
                                        "raw"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    answer = server.client.post("/process", data={"model": "raw", "tokenizer": "",
                                                  "parser": "", "data": text})
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"].encode() == result.stdout_bytes
    assert result.stdout_bytes.count(b"# sent_id") >= 15  # sentences found in the text


def test_tokenizer_on_a_model_without_one_is_refused(server: Server) -> None:
    answer = server.client.post("/process", data={"model": "words", "tokenizer": "",
                                                  "parser": "", "data": "Go on."})
    assert answer.status_code == 400
    assert "The model 'words' has no tokenizer" in answer.text
