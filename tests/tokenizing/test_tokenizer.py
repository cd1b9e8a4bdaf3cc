"""The tokenizer trained on a slice of en_ewt: accuracy, determinism, the exact round trip of
text through ``dparse tokenize`` (small texts with every spacing case, every UD test file of the
data root), ``--text-of`` and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA
from tokenizer_slice import train_slice

from dparse.alignedscores import score_aligned
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.errors import DparseError
from dparse.tokenizing.model import TokenizerModel, conllu_lines
from dparse.tokenizing.rawtext import raw_text, rebuild_text

TIMEOUT = 120
TEST_FILES = sorted(p.parent.name for p in DATA.glob("*/test.conllu")) if DATA.is_dir() else []


def dparse(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparse", *args], input=stdin,
                          capture_output=True, timeout=TIMEOUT,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return train_slice(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(scope="module")
def model(model_dir: Path) -> TokenizerModel:
    return TokenizerModel.load(model_dir)


def round_trip(model: TokenizerModel, text: str, tmp_path: Path) -> list:
    """Tokenize ``text``, write and read back the CoNLL-U, check that it rebuilds ``text``;
    the sentences read back."""
    path = tmp_path / "out.conllu"
    path.write_bytes("".join(conllu_lines(model.tokenize(text))).encode("utf-8"))
    sentences = read_treebank(path, require_heads=False)
    assert rebuild_text(sentences) == text
    return sentences


def test_the_slice_reaches_the_stated_token_and_sentence_f1(model: TokenizerModel,
                                                            tmp_path: Path) -> None:
    """Trained on 2000 sentences, on the first 500 sentences of en_ewt test: Tokens F1 >= 98,
    Sentences F1 >= 70, Words F1 >= 97.5 (the full model: results/tokenize-ud.md)."""
    gold = list(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 500))
    system = round_trip(model, raw_text(gold), tmp_path)
    report = score_aligned(gold, system).as_dict()
    scores = {row: report[row] for row in ("tokens", "sentences", "words")}
    assert scores["tokens"] >= 98.0 and scores["sentences"] >= 70.0, scores
    assert scores["words"] >= 97.5, scores


def test_training_is_deterministic(model_dir: Path, tmp_path: Path) -> None:
    for name in ("train.conllu", "dev.conllu"):
        (tmp_path / name).write_bytes((model_dir.parent / name).read_bytes())
    again = train_slice(tmp_path)
    for name in ("tokenizer.bin", "tokenizer.json"):
        assert (again / name).read_bytes() == (model_dir / name).read_bytes()


@pytest.mark.parametrize("text", [
    "",
    "Hello.",
    "Hello.\n",
    "  Leading spaces. And trailing  \n\n",
    "Tabs\tand\u00a0no-break\u3000spaces. Two  spaces, three   spaces.",
    "Windows\r\nline ends.\r\n\r\nA new document.\r\n",
    "Paragraph one.\nParagraph two.\n\n\nDocument two.\n",
    "Odd breaks\x0bvertical tab\x0cform feed\x1cfile sep\x85next line\u2028line sep\u2029par.",
    "Control \x00 and \x07 bell \x1f unit sep, \x7f delete.",
    "Mixed: English, \u4e2d\u6587\u53e5\u5b50\u3002 "
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac. "
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \U0001F600 e\u0301 done",
    "Don't stop.Won't stop!!!(really?)\"Yes,\" he said...",
    "|pipes| and \\backslashes\\ \\s \\n literal",
    "\ufeffA byte-order mark first.",
    " \n",
])
def test_tokenizing_rebuilds_the_text_exactly(model: TokenizerModel, text: str,
                                              tmp_path: Path) -> None:
    sentences = round_trip(model, text, tmp_path) if text.strip() else []
    if not text.strip():  # white space alone (or nothing) gives no sentence
        assert model.tokenize(text) == []
    for k, sent in enumerate(sentences, start=1):
        assert f"# sent_id = {k}" in sent.comments


def test_a_line_of_100000_characters_without_a_space(model: TokenizerModel,
                                                     tmp_path: Path) -> None:
    text = ("abc.DEF,ghi" * 10000)[:100000]
    sentences = round_trip(model, text, tmp_path)
    assert sum(len(s) for s in sentences) >= 1


def test_paragraphs_and_documents_are_marked(model: TokenizerModel, tmp_path: Path) -> None:
    sentences = round_trip(model, "One. Two.\nThree.\n\nFour.\n", tmp_path)
    marks = [[c for c in s.comments if c in ("# newdoc", "# newpar")] for s in sentences]
    assert marks[0] == ["# newdoc", "# newpar"]
    assert ["# newpar"] in marks and ["# newdoc", "# newpar"] in marks[1:]
    assert sum(1 for m in marks if m == []) >= 1  # "Two." continues the paragraph


@pytest.mark.parametrize("treebank", TEST_FILES)
def test_every_ud_test_file_is_rebuilt_exactly(model: TokenizerModel, treebank: str,
                                               tmp_path: Path) -> None:
    text = raw_text(read_treebank(DATA / treebank / "test.conllu", require_heads=False))
    round_trip(model, text, tmp_path)


def test_dparse_tokenize_writes_conllu_that_eval_aligns(model_dir: Path,
                                                        tmp_path: Path) -> None:
    gold = tmp_path / "gold.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 100), gold)
    text = tmp_path / "test.txt"
    assert dparse("tokenize", "--text-of", str(gold), "-o", str(text)).returncode == 0
    out = tmp_path / "out.conllu"
    result = dparse("tokenize", str(model_dir), str(text), "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stderr)
    assert stats["characters"] == len(text.read_text(encoding="utf-8"))
    scored = dparse("eval", str(gold), str(out), "--aligned", "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["tokens"] > 95
    piped = dparse("tokenize", str(model_dir), stdin=text.read_bytes())
    assert piped.stdout == out.read_bytes()


def test_invalid_utf8_is_an_error_naming_the_byte_offset_and_writes_nothing(
        model_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "bad.txt"
    text.write_bytes(b"Fine line.\nBad \xff byte.\n")
    out = tmp_path / "out.conllu"
    out.write_text("old\n", encoding="utf-8")
    result = dparse("tokenize", str(model_dir), str(text), "-o", str(out))
    assert result.returncode == 2
    assert "bad.txt:2: invalid UTF-8 at byte offset 15" in result.stderr.decode()
    assert out.read_text(encoding="utf-8") == "old\n"


def test_empty_text_gives_an_empty_file(model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    result = dparse("tokenize", str(model_dir), "-o", str(out), stdin=b"")
    assert result.returncode == 0 and out.read_bytes() == b""


def test_a_tokenizer_is_not_a_parser_and_usage_errors_exit_2(model_dir: Path,
                                                             tmp_path: Path) -> None:
    result = dparse("parse", str(model_dir), stdin=b"")
    assert result.returncode == 2 and b"dparse tokenize" in result.stderr
    assert dparse("tokenize").returncode == 2
    gold = DATA / "en_ewt" / "test.conllu"
    assert dparse("tokenize", str(model_dir), "--text-of", str(gold)).returncode == 2


def test_a_tokenizer_of_another_format_asks_to_be_retrained(model_dir: Path,
                                                            tmp_path: Path) -> None:
    meta = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    meta["format_version"] = 0
    (tmp_path / "tokenizer.json").write_text(json.dumps(meta), encoding="utf-8")
    for name in ("tokenizer.bin", "templates.json"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    with pytest.raises(DparseError, match="tokenizer format 0 .* retrain it"):
        TokenizerModel.load(tmp_path, checked=True)
