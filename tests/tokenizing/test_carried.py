"""Models that carry a tokenizer (dparse.tokenizing.carried): a parser trained with a
``tokenizer`` section parses raw text (``dparse parse --format raw``), its output rebuilding
the text exactly and scored by the aligned evaluation."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA
from tokenizer_slice import train_slice

from dparse.config import load_config
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.errors import DparseError
from dparse.parsers import train_model
from dparse.tokenizing.carried import TOKENIZER_DIR
from dparse.tokenizing.rawtext import raw_text, rebuild_text
from dparse.trees import check_tree

TIMEOUT = 120


def dparse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def parser_config(folder: Path, tokenizer: Path | str) -> dict:
    return {"name": "tiny-raw", "data": {"train": "train.conllu", "dev": "dev.conllu"},
            "features": {"arc_bits": 16, "label_bits": 10}, "training": {"epochs": 1},
            "tokenizer": {"model": str(tokenizer)}}


@pytest.fixture(scope="module")
def raw_parser(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A first-order parser (one epoch on 2000 sentences) carrying the slice's tokenizer."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = tmp_path_factory.mktemp("raw-parser")
    tokenizer = train_slice(folder)
    cfg = load_config(raw=parser_config(folder, tokenizer), data_root=str(folder))
    train_model(cfg, folder / "parser", {})
    return folder / "parser"


def test_the_model_directory_carries_the_tokenizer_under_its_manifest(raw_parser: Path
                                                                      ) -> None:
    manifest = json.loads((raw_parser / "manifest.json").read_text(encoding="utf-8"))
    listed = json.dumps(manifest)
    for name in ("tokenizer.bin", "tokenizer.json", "templates.json", "config.yaml"):
        assert (raw_parser / TOKENIZER_DIR / name).is_file()
        assert f"{TOKENIZER_DIR}/{name}" in listed


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_parse_format_raw_rebuilds_the_text_and_is_scored_aligned(raw_parser: Path,
                                                                   tmp_path: Path,
                                                                   jobs: str) -> None:
    gold = tmp_path / "gold.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 60), gold)
    text = tmp_path / "test.txt"
    text.write_text(raw_text(read_treebank(gold)), encoding="utf-8", newline="")
    out = tmp_path / "out.conllu"
    result = dparse("parse", str(raw_parser), str(text), "--format", "raw", "-o", str(out),
                    "--jobs", jobs)
    assert result.returncode == 0, result.stderr
    parsed = read_treebank(out)
    assert rebuild_text(parsed) == text.read_bytes().decode("utf-8")
    for sent in parsed:
        check_tree(sent.heads)
    scored = dparse("eval", str(gold), str(out), "--aligned", "--json")
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["tokens"] > 95 and report["las"] is not None


def test_raw_text_needs_a_model_that_carries_a_tokenizer_and_one_whole_pass(
        raw_parser: Path, tiny_first_order: Path, tmp_path: Path) -> None:
    text = tmp_path / "t.txt"
    text.write_text("Raw text. Two sentences.\n", encoding="utf-8")
    result = dparse("parse", str(tiny_first_order / "model"), str(text), "--format", "raw")
    assert result.returncode == 2 and b"carries no tokenizer" in result.stderr
    result = dparse("parse", str(raw_parser), str(text), "--format", "raw", "--kbest", "2")
    assert result.returncode == 2 and b"kbest" in result.stderr
    result = dparse("parse", str(raw_parser), str(text), "--format", "raw", "--shard", "1/2")
    assert result.returncode == 2 and b"shard" in result.stderr


def test_a_config_naming_a_missing_tokenizer_is_refused_before_training(tmp_path: Path
                                                                       ) -> None:
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    cfg = load_config(raw=parser_config(tmp_path, tmp_path / "none"), data_root=str(tmp_path))
    with pytest.raises(DparseError, match="none"):
        train_model(cfg, tmp_path / "parser", {})
    assert not (tmp_path / "parser").exists()


def test_one_model_directory_holds_tokenizer_tagger_and_parser(tmp_path: Path) -> None:
    """A pipeline config with tagger and tokenizer sections: ``dparse tag --format raw`` and
    ``dparse parse --format raw`` of its model tokenize, tag (and parse) raw text."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 300),
                tmp_path / "train.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40), tmp_path / "dev.conllu")
    tokenizer = tmp_path / "tokenizer"
    tcfg = load_config(raw={"name": "t", "parser": "tokenizer",
                            "data": {"train": "train.conllu", "dev": "dev.conllu"},
                            "tokenizing": {"bits": 16},
                            "training": {"learner": "perceptron", "epochs": 1}},
                       data_root=str(tmp_path))
    train_model(tcfg, tokenizer, {})
    (tmp_path / "tagger.yaml").write_text(
        "name: tiny-tagger\nparser: tagger\ndata: {train: train.conllu, dev: dev.conllu}\n"
        "tagging: {ambiguity_folds: 0, draft_folds: 0}\n"
        "training: {learner: perceptron, epochs: 1}\n", encoding="utf-8")
    raw = parser_config(tmp_path, tokenizer)
    raw["tagger"] = {"config": str(tmp_path / "tagger.yaml"), "folds": 2}
    cfg = load_config(raw=raw, data_root=str(tmp_path))
    model = tmp_path / "pipeline"
    train_model(cfg, model, {"work": str(tmp_path / "work")})
    assert (model / "tagger").is_dir() and (model / TOKENIZER_DIR).is_dir()
    text = tmp_path / "t.txt"
    text.write_text("Don't stop the music. It's late!\n\nA new document here.\n",
                    encoding="utf-8")
    for command in ("tag", "parse"):
        out = tmp_path / f"{command}.conllu"
        result = dparse(command, str(model), str(text), "--format", "raw", "-o", str(out))
        assert result.returncode == 0, result.stderr
        sentences = read_treebank(out, require_heads=command == "parse")
        assert rebuild_text(sentences) == text.read_bytes().decode("utf-8")
        assert all(u != "_" for s in sentences for u in s.upos)
        assert ["# newdoc", "# newpar"] == [c for c in sentences[-1].comments
                                            if c.startswith("# new")]
