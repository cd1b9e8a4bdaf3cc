"""Raw text through the public API (``dparse.load_tokenizer``, ``Tokenizer``,
``Parser.parse_text``, ``Tagger.tag_text``) with the tokenizer of the tokenizing tests (trained
on a slice of en_ewt) and a tiny parser and tagger that carry it: the same CoNLL-U as ``dparse
tokenize``, ``dparse parse --format raw`` and ``dparse tag --format raw``, the text rebuilt
exactly from the tokens, valid trees, clear errors, and the README's raw-text example run as
written."""

from __future__ import annotations

import os
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA, requires_data
from paths import REPO
from test_api import readme_python_blocks
from tokenizing.tokenizer_slice import train_slice

import dparse
from dparse.tokenizing.rawtext import raw_text, rebuild_text
from dparse.trees import check_tree

pytestmark = requires_data

SMALL_TEXTS = [
    "",
    " \n\t ",
    "Don't stop. It's late!",
    "  Leading spaces.  Don't\tstop,  it's late!  \n\nA new document\u00a0here.\r\nA paragraph.",
]


def run_cli(*args: str) -> bytes:
    """The stdout of a ``dparse`` command that must succeed."""
    result = subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                            timeout=300, stdin=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def conllu(sentences: list[dparse.Sentence]) -> str:
    return "".join(s.to_conllu() for s in sentences)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tokenizing tests' tokenizer: 2000 sentences of en_ewt train, 4 epochs."""
    return train_slice(tmp_path_factory.mktemp("api-tokenizer"))


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The small texts, and the raw text of the first 60 sentences of en_ewt test
    (documents, paragraphs, multiword tokens)."""
    return [*SMALL_TEXTS, raw_text(list(islice(dparse.read(DATA / "en_ewt" / "test.conllu"),
                                               60)))]


@pytest.fixture(scope="module")
def raw_parser(tiny_first_order: Path, tokenizer_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A first-order parser as tiny as ``tiny_first_order``'s, carrying the tokenizer."""
    return dparse.train(REPO / "configs" / "en_ewt" / "o1-cle.yaml",
                        tmp_path_factory.mktemp("api-raw-parser") / "model",
                        {"data.train": "train.conllu", "data.dev": "dev.conllu",
                         "training.epochs": 1, "features.arc_bits": 16,
                         "features.label_bits": 10, "tokenizer.model": str(tokenizer_dir)},
                        data_root=tiny_first_order).path


@pytest.fixture(scope="module")
def raw_tagger(tiny_first_order: Path, tokenizer_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tagger (configs/en_ewt/tagger.yaml, one epoch on the tiny files) carrying the
    tokenizer."""
    return dparse.train(REPO / "configs" / "en_ewt" / "tagger.yaml",
                        tmp_path_factory.mktemp("api-raw-tagger") / "model",
                        {"data.train": "train.conllu", "data.dev": "dev.conllu",
                         "training.epochs": 1, "tokenizer.model": str(tokenizer_dir)},
                        data_root=tiny_first_order).path


def test_tokenize_and_tokenize_file_equal_dparse_tokenize_and_rebuild_the_text(
        tokenizer_dir: Path, raw_parser: Path, texts: list[str], tmp_path: Path) -> None:
    tokenizer = dparse.load_tokenizer(tokenizer_dir)
    carried = dparse.load_tokenizer(raw_parser)  # the copy in the parser's tokenizer/
    assert tokenizer.model_dir == tokenizer_dir and "Tokenizer" in repr(carried)
    for k, text in enumerate(texts):
        path = tmp_path / f"{k}.txt"
        path.write_text(text, encoding="utf-8", newline="")
        cli = run_cli("tokenize", str(tokenizer_dir), str(path)).decode("utf-8")
        sentences = tokenizer.tokenize(text)
        assert conllu(sentences) == cli, text
        assert conllu(carried.tokenize(text)) == cli, text
        assert run_cli("tokenize", str(raw_parser), str(path)).decode("utf-8") == cli
        stats = tokenizer.tokenize_file(path, tmp_path / f"{k}.conllu")
        assert (tmp_path / f"{k}.conllu").read_bytes() == cli.encode("utf-8")
        assert stats.sentences == len(sentences) and stats.characters == len(text)
        assert rebuild_text(sentences) == (text if text.strip() else "")  # no token: none
        assert all(list(s.heads[1:]) == [-1] * len(s) for s in sentences)
    assert not tokenizer.tokenize(texts[1]) and not tokenizer.tokenize("")
    document = tokenizer.tokenize(texts[-1])
    lines = [line for s in document for line in s.to_conllu().splitlines()]
    assert any(line.split("\t")[0].count("-") == 1 for line in lines)  # multiword tokens
    assert any("SpaceAfter=No" in line for line in lines)
    assert len(document) > 40 and all(s.comments[-1].startswith("# text = ") for s in document)


def test_parse_text_and_tag_text_equal_the_commands_with_format_raw(
        raw_parser: Path, raw_tagger: Path, texts: list[str], tmp_path: Path) -> None:
    parser = dparse.load(raw_parser)
    tagger = dparse.load_tagger(raw_tagger)
    tokenizer = dparse.load_tokenizer(raw_parser)
    for k, text in enumerate(texts):
        path = tmp_path / f"{k}.txt"
        path.write_text(text, encoding="utf-8", newline="")
        parsed = parser.parse_text(text)
        assert conllu(parsed) == run_cli("parse", str(raw_parser), str(path), "--format",
                                         "raw").decode("utf-8")
        tagged = tagger.tag_text(text)
        assert conllu(tagged) == run_cli("tag", str(raw_tagger), str(path), "--format",
                                         "raw").decode("utf-8")
        words = [s.words for s in tokenizer.tokenize(text)]
        for sentences in (parsed, tagged):
            assert [s.words for s in sentences] == words
            assert rebuild_text(sentences) == (text if text.strip() else "")
        for sentence in parsed:
            check_tree(sentence.heads)
            assert "_" not in sentence.deprels[1:]
        assert all(u != "_" for s in tagged for u in s.upos)
    again = parser.parse_text(texts[-1])  # the tokenizer, loaded once, gives the same
    assert conllu(again) == conllu(parser.parse_text(texts[-1]))
    assert conllu(again) == conllu(parser.parse_many(tokenizer.tokenize(texts[-1])))


def test_models_without_a_tokenizer_and_bad_text_are_clear_errors(
        tiny_first_order: Path, tokenizer_dir: Path, tmp_path: Path, capfd) -> None:
    model = tiny_first_order / "model"
    with pytest.raises(dparse.DparseError, match="neither a tokenizer .* nor a model that "
                       "carries one .*tokenizer section") as error:
        dparse.load_tokenizer(model)
    assert str(model) in str(error.value)
    with pytest.raises(dparse.DparseError, match="no such directory"):
        dparse.load_tokenizer(tmp_path / "missing")
    parser = dparse.load(model)
    with pytest.raises(dparse.DparseError, match="carries no tokenizer.*tokenizer section"
                       ) as error:
        parser.parse_text("Some text.")
    assert str(model) in str(error.value)
    tokenizer = dparse.load_tokenizer(tokenizer_dir)
    with pytest.raises(dparse.InputError, match="<text>: raw text is a str, not bytes"):
        tokenizer.tokenize(b"Some text.")
    with pytest.raises(dparse.InputError, match="<text>:2: not Unicode text at character "
                       "offset 8"):
        tokenizer.tokenize("A line.\n\ud800 B.")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Fine text. \xff bad.")
    with pytest.raises(dparse.InputError, match="invalid UTF-8 at byte offset 11"):
        tokenizer.tokenize_file(bad, tmp_path / "bad.conllu")
    assert not (tmp_path / "bad.conllu").exists()
    assert capfd.readouterr() == ("", "")


def test_readme_raw_text_example_runs(tokenizer_dir: Path, raw_parser: Path, tmp_path: Path,
                                      monkeypatch) -> None:
    """The README's raw-text example, from a project root whose ``models/en_ewt-tokenizer``
    is the tokenizer and ``models/en_ewt-o1-cle-raw`` the tiny parser that carries it."""
    blocks = [b for b in readme_python_blocks() if "load_tokenizer" in b]
    assert len(blocks) == 1
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "en_ewt-tokenizer").symlink_to(tokenizer_dir)
    (tmp_path / "models" / "en_ewt-o1-cle-raw").symlink_to(raw_parser)
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "README.md", "exec"), {})  # noqa: S102 - the README's own code
