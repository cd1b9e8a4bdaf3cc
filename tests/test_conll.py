"""dparse.conll: byte-exact round trips on every shared treebank, with_parse, errors, writing."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

from dparse.conll import FORMATS, Sentence, detect_format, read_conll, read_treebank, write_conll
from dparse.errors import DparseError, InputError


def _data_files() -> list[Path]:
    if not DATA.is_dir():
        return []
    return sorted(
        [
            *DATA.glob("*/*.conllu"),
            *DATA.glob("conll2007_nltk/*.t*"),
            *DATA.glob("ptb_sample/dep/*.dp"),
        ]
    )


def _encoding(path: Path) -> str:
    return "latin-1" if path.name.startswith("eus.") else "utf-8"


def _write_text(sentences: list[Sentence]) -> str:
    buf = io.StringIO()
    write_conll(sentences, buf)
    return buf.getvalue()


def _tmp(tmp_path: Path, text: str | bytes, name: str = "x.conllu") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _word(i: int | str, form: str = "w", head: int | str = 0, rel: str = "dep") -> str:
    return f"{i}\t{form}\t_\tX\tX\t_\t{head}\t{rel}\t_\t_\n"


# -- round trips on real data ------------------------------------------------------------------


def test_conll_data_files_found(data: Path) -> None:
    files = _data_files()
    assert len([f for f in files if f.suffix == ".conllu"]) == 28
    assert len([f for f in files if f.suffix == ".dp"]) == 199
    assert len([f for f in files if f.parent.name == "conll2007_nltk"]) == 4


@pytest.mark.parametrize("path", _data_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_conll_round_trip_is_byte_identical(path: Path) -> None:
    enc = _encoding(path)
    sentences = read_treebank(path, encoding=enc)
    original = path.read_bytes()
    assert _write_text(sentences).encode(enc) == original
    same_parse = [s.with_parse(s.heads, s.deprels) for s in sentences]
    assert _write_text(same_parse).encode(enc) == original


@pytest.mark.parametrize(
    "relpath",
    ["en_ewt/dev.conllu", "el_gdt/test.conllu", "conll2007_nltk/esp.test",
     "conll2007_nltk/eus.test", "ptb_sample/dep/wsj_0001.dp"],
)
@pytest.mark.parametrize("variant", ["bom", "gzip", "bom-gzip", "gzip-stdin"])
def test_conll_round_trip_with_bom_and_gzip(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relpath: str, variant: str
) -> None:
    """Real files with a byte-order mark (UTF-8 files) and gzipped under their own name or on
    stdin read the same sentences and are written back byte-identical."""
    path = data / relpath
    enc = _encoding(path)
    original = path.read_bytes()
    if "bom" in variant and enc != "utf-8":
        pytest.skip("a UTF-8 byte-order mark in an ISO-8859-1 file is an error")
    text = b"\xef\xbb\xbf" + original if "bom" in variant else original
    stored = gzip.compress(text) if "gzip" in variant else text
    fmt = read_treebank(path, encoding=enc)[0].fmt
    if variant == "gzip-stdin":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stored)))
        sentences = read_treebank("-", fmt=fmt, encoding=enc)
    else:
        sentences = read_treebank(_tmp(tmp_path, stored, path.name), fmt=fmt, encoding=enc)
    assert _write_text(sentences).encode(enc) == text
    assert [s.heads.tolist() for s in sentences] == [
        s.heads.tolist() for s in read_treebank(path, encoding=enc)
    ]


def test_conll_formats_of_real_files(data: Path) -> None:
    ewt = read_treebank(data / "en_ewt" / "dev.conllu")
    assert len(ewt) == 2001 and ewt[0].fmt == "conllu"
    esp = read_treebank(data / "conll2007_nltk" / "esp.test")
    assert len(esp) == 563 and esp[0].fmt == "conllx"
    assert esp[0].form[:2] == ["Las", "reservas"] and esp[0].upos[0] == "d"
    assert esp[0].xpos[0] == "da" and esp[0].deprels[2] == "SUJ"
    dp = read_treebank(data / "ptb_sample" / "dep" / "wsj_0001.dp")
    assert dp[0].fmt == "malttab" and dp[0].form[0] == "Pierre"
    assert dp[0].upos[0] == dp[0].xpos[0] == "NNP" and dp[0].lemma[0] == "_"
    assert dp[0].heads[:4].tolist() == [-1, 2, 8, 2] and dp[0].deprels[:2] == ["", "_"]


def test_conll_latin1_file_as_utf8_names_the_line(data: Path) -> None:
    path = data / "conll2007_nltk" / "eus.test"
    expected = next(
        i for i, raw in enumerate(path.read_bytes().split(b"\n"), 1) if not _decodes(raw)
    )
    with pytest.raises(InputError) as err:
        read_treebank(path)
    assert err.value.line == expected and err.value.path == str(path)
    assert "--encoding latin-1" in str(err.value) and "utf-8" in str(err.value)


def _decodes(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_conll_reads_every_sentence_and_word_of_en_ewt_train(data: Path) -> None:
    sentences = read_treebank(data / "en_ewt" / "train.conllu")
    assert len(sentences) == 12544 and sum(map(len, sentences)) == 204577


# -- with_parse --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relpath", ["en_ewt/dev.conllu", "conll2007_nltk/esp.test", "ptb_sample/dep/wsj_0003.dp"]
)
def test_conll_with_parse_changes_only_head_and_deprel(
    data: Path, tmp_path: Path, relpath: str
) -> None:
    path = data / relpath
    sentences = read_treebank(path)
    rng = np.random.default_rng(0)
    parsed = []
    for s in sentences:
        heads = rng.integers(0, len(s) + 1, size=len(s) + 1)
        parsed.append(s.with_parse(heads, ["", *(f"r{h}" for h in heads[1:].tolist())]))
    out = tmp_path / path.name
    write_conll(parsed, out)
    old_lines = path.read_text().splitlines(keepends=True)
    new_lines = out.read_text().splitlines(keepends=True)
    assert len(new_lines) == len(old_lines)
    head_col = 2 if path.suffix == ".dp" else 6
    for old, new in zip(old_lines, new_lines, strict=True):
        old_cols, new_cols = old.split("\t"), new.split("\t")
        if len(old_cols) < 3 or (head_col == 6 and not old_cols[0].isdigit()):
            assert new == old  # blank, comment, multiword-token and empty-node lines
            continue
        assert len(new_cols) == (4 if head_col == 2 else 10)
        assert new_cols[:head_col] == old_cols[:head_col]
        assert new_cols[head_col + 2 :] == old_cols[head_col + 2 :]
        assert new_cols[head_col + 1].rstrip("\n") == f"r{new_cols[head_col]}"
    if relpath.startswith("en_ewt"):  # the file does have the lines kept verbatim above
        ids = [line.split("\t")[0] for line in old_lines if "\t" in line]
        assert any("-" in i for i in ids) and any("." in i for i in ids)
        assert any(line.startswith("# text") for line in old_lines)
    for a, b in zip(parsed, read_treebank(out), strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels


def test_conll_with_parse_keeps_mwt_empty_nodes_and_comments(tmp_path: Path) -> None:
    text = (
        "# sent_id = 1\n# text = dont go\n"
        "1-2\tdont\t_\t_\t_\t_\t_\t_\t_\t_\n"
        + _word(1, "do", 0, "root")
        + _word(2, "nt", 1, "advmod")
        + "2.1\tgo\t_\tX\tX\t_\t_\t_\t1:conj\t_\n"
        + _word(3, "go", 1, "conj")
        + "\n"
    )
    path = _tmp(tmp_path, text)
    (sent,) = read_treebank(path)
    assert len(sent) == 3 and sent.comments == ["# sent_id = 1", "# text = dont go"]
    new = sent.with_parse([-1, 3, 1, 0], ["", "aux", "advmod", "root"])
    lines = new.to_conll().splitlines()
    assert lines[:3] == text.splitlines()[:3] and lines[5] == text.splitlines()[5]
    assert lines[3] == _word(1, "do", 3, "aux").rstrip("\n")
    assert lines[4] == text.splitlines()[4]  # unchanged word line kept verbatim
    assert lines[6] == _word(3, "go", 0, "root").rstrip("\n")
    assert sent.heads.tolist() == [-1, 0, 1, 1]  # the original is untouched


def test_conll_with_parse_rejects_wrong_shapes(tmp_path: Path) -> None:
    (sent,) = read_treebank(_tmp(tmp_path, _word(1) + _word(2, head=1)))
    with pytest.raises(ValueError):
        sent.with_parse([-1, 0], ["", "root"])
    with pytest.raises(ValueError):
        sent.with_parse([-1, 0, 3], ["", "root", "x"])


def test_conll_malttab_with_parse_adds_label_column_only_when_needed(tmp_path: Path) -> None:
    path = _tmp(tmp_path, "a\tDT\t2\nb\tNN\t0\n", "x.dp")
    (sent,) = read_treebank(path)
    assert sent.deprels == ["", "_", "_"]
    assert sent.with_parse([-1, 0, 1], sent.deprels).to_conll() == "a\tDT\t0\nb\tNN\t1\n"
    labeled = sent.with_parse([-1, 2, 0], ["", "NMOD", "ROOT"]).to_conll()
    assert labeled == "a\tDT\t2\tNMOD\nb\tNN\t0\tROOT\n"


# -- format detection and sources ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "first", "fmt"),
    [
        ("a.conllu", None, "conllu"),
        ("a.conllu.gz", None, "conllu"),
        ("a.conll", None, "conllx"),
        ("a.conllx", None, "conllx"),
        ("a.dp", None, "malttab"),
        ("a.malt", None, "malttab"),
        ("a.txt", "# sent_id = 1\n", "conllu"),
        ("a.txt", "1-2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n", "conllu"),
        ("a.txt", _word(1), "conllx"),
        ("a.txt", "#\t#\t3\n", "malttab"),
        ("a.txt", "Pierre\tNNP\n", "malttab"),
    ],
)
def test_conll_detect_format(name: str, first: str | None, fmt: str) -> None:
    assert detect_format(name, first) == fmt


def test_conll_detect_format_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot detect"):
        list(read_conll(_tmp(tmp_path, "a b c\n", "x.txt")))
    assert list(read_conll(_tmp(tmp_path, "", "x.conllu"))) == []


def test_conll_reads_gzip_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _word(1, "a", 2) + _word(2, "b", 0) + "\n"
    gz = tmp_path / "x.conllu.gz"
    with gzip.open(gz, "wt") as f:
        f.write(text)
    (sent,) = read_treebank(gz)
    assert sent.form == ["a", "b"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    (sent,) = read_treebank("-")
    assert sent.heads.tolist() == [-1, 2, 0] and sent.fmt == "conllx"


def test_conll_keeps_crlf_blank_runs_and_missing_final_newline(tmp_path: Path) -> None:
    text = (
        "\n\n"
        + _word(1).replace("\n", "\r\n")
        + "\r\n\r\n\n"
        + _word(1, "a", 2)
        + _word(2, "b", 0).rstrip("\n")
    )
    path = _tmp(tmp_path, text)
    sentences = read_treebank(path)
    assert [len(s) for s in sentences] == [1, 2]
    assert sentences[0].lineno == 3 and sentences[1].lineno == 7
    assert _write_text(sentences) == text
    assert _write_text([s.with_parse(s.heads, ["", *["x"] * len(s)]) for s in sentences]) == (
        text.replace("\tdep\t", "\tx\t")
    )


def test_conll_build_round_trips(tmp_path: Path) -> None:
    for fmt in FORMATS:
        sent = Sentence.build(
            ["The", "dog", "barks"],
            heads=[-1, 2, 3, 0],
            deprels=["", "det", "nsubj", "root"],
            upos=["DET", "NOUN", "VERB"],
            fmt=fmt,
        )
        path = tmp_path / f"b.{fmt}"
        write_conll([sent, sent], path)
        back = read_treebank(path, fmt=fmt)
        assert len(back) == 2 and back[1].form == ["The", "dog", "barks"]
        assert back[0].heads.tolist() == [-1, 2, 3, 0]
        assert back[0].deprels == ["", "det", "nsubj", "root"]
        assert back[0].xpos == ["DET", "NOUN", "VERB"]


# -- malformed input ---------------------------------------------------------------------------

MALFORMED = [
    ("columns", _word(1) + "2\tb\t_\tX\tX\t_\t1\tdep\t_\n", 2, "10 tab-separated columns"),
    ("head-text", _word(1) + _word(2, head="x"), 2, "HEAD 'x' is not a word ID"),
    ("head-blank", _word(1) + _word(2, head="_"), 2, "needs a HEAD (0..2) for every word"),
    ("head-big", _word(1) + _word(2, head=3), 2, "out of range 0..2"),
    ("head-negative", _word(1, head=-1), 1, "HEAD '-1' is not a word ID"),
    ("id-duplicate", _word(1) + _word(1), 2, "duplicate word ID 1"),
    ("id-gap", _word(1) + _word(3), 2, "non-consecutive word ID 3: expected 2"),
    ("id-text", _word(1) + _word("x"), 2, "malformed ID"),
    ("mwt-malformed", _word(1) + "2-x\tab\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "multiword"),
    ("mwt-reversed", "2-1\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + _word(1), 1, "multiword"),
    ("mwt-misplaced", _word(1) + "3-4\tab\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "next word ID 2"),
    ("mwt-past-end", "# c\n1-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + _word(1) + _word(2), 2, "past"),
    ("empty-malformed", _word(1) + "1.x\te\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "empty node"),
    ("empty-zero", _word(1) + "1.0\te\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "empty node"),
    ("empty-misplaced", _word(1) + "3.1\te\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "must follow word 3"),
    ("form-empty", _word(1) + _word(2, form=""), 2, "empty FORM"),
    ("comments-only", "\n# only a comment\n\n# another\n", 2, "comment lines but no sentence"),
    ("mwt-only", "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n\n" + _word(1), 1, "no word lines"),
    ("second-sentence", _word(1) + "\n" + _word(1) + _word(2, head=5), 4, "out of range"),
]


@pytest.mark.parametrize(
    ("text", "line", "problem"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_conll_malformed_input_names_the_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = _tmp(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_treebank(path)
    assert err.value.line == line and err.value.path == str(path)
    assert problem in err.value.problem
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_conll_undecodable_bytes_name_the_line(tmp_path: Path) -> None:
    path = _tmp(tmp_path, (_word(1) + "\n" + _word(1, "caf\xe9")).encode("latin-1"))
    with pytest.raises(InputError) as err:
        read_treebank(path)
    assert err.value.line == 3 and "--encoding latin-1" in err.value.problem
    assert read_treebank(path, encoding="latin-1")[1].form == ["caf\xe9"]


def test_conll_blank_heads_allowed_without_require_heads(tmp_path: Path) -> None:
    path = _tmp(tmp_path, _word(1, head="_") + _word(2, head=1))
    (sent,) = read_treebank(path, require_heads=False)
    assert sent.heads.tolist() == [-1, -1, 1]
    assert sent.with_parse([-1, 0, 1], sent.deprels).to_conll() == _word(1) + _word(2, head=1)


@pytest.mark.parametrize(
    ("text", "require_heads", "line", "problem"),
    [
        ("a\tDT\t2\nb\tNN\n", True, 2, "3 or 4"),
        ("a\tDT\t2\tx\ty\n", False, 1, "2-4"),
        ("a\tDT\t3\nb\tNN\t0\n", True, 1, "out of range 0..2"),
        ("\tDT\t0\n", True, 1, "empty FORM"),
    ],
)
def test_conll_malformed_malttab(
    tmp_path: Path, text: str, require_heads: bool, line: int, problem: str
) -> None:
    with pytest.raises(InputError) as err:
        read_treebank(_tmp(tmp_path, text, "x.dp"), require_heads=require_heads)
    assert err.value.line == line and problem in err.value.problem


def test_conll_malttab_words_only(tmp_path: Path) -> None:
    (sent,) = read_treebank(_tmp(tmp_path, "#\t#\nb\tNN\n", "x.dp"), require_heads=False)
    assert sent.form == ["#", "b"] and sent.heads.tolist() == [-1, -1, -1]
    assert sent.with_parse([-1, 2, 0], sent.deprels).to_conll() == "#\t#\t2\nb\tNN\t0\n"


# -- writing -----------------------------------------------------------------------------------


def test_conll_write_adds_missing_separator_between_sentences(tmp_path: Path) -> None:
    last = read_treebank(_tmp(tmp_path, _word(1, "a").rstrip("\n"), "a.conllu"))[0]
    first = read_treebank(_tmp(tmp_path, _word(1, "b") + "\n", "b.conllu"))[0]
    out = tmp_path / "out.conllu"
    write_conll([last, first, last], out)
    assert out.read_text() == _word(1, "a") + "\n" + _word(1, "b") + "\n" + _word(1, "a").rstrip()
    assert [s.form for s in read_treebank(out)] == [["a"], ["b"], ["a"]]


def test_conll_write_gzip_and_stdout(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    sentences = read_treebank(_tmp(tmp_path, _word(1) + "\n" + _word(1, "b") + "\n"))
    write_conll(sentences, tmp_path / "o.conllu.gz")
    assert (
        gzip.open(tmp_path / "o.conllu.gz", "rt").read() == _word(1) + "\n" + _word(1, "b") + "\n"
    )
    write_conll(sentences, None)
    write_conll(sentences, "-")
    assert capsys.readouterr().out == 2 * (_word(1) + "\n" + _word(1, "b") + "\n")


def test_conll_write_is_all_or_nothing(tmp_path: Path) -> None:
    sentences = read_treebank(_tmp(tmp_path, _word(1) + "\n", "in.conllu"))
    out = tmp_path / "out.conllu"
    out.write_text("old\n")

    def failing():
        yield sentences[0]
        raise RuntimeError("parser crashed")

    with pytest.raises(RuntimeError):
        write_conll(failing(), out)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.conllu", "out.conllu"]
    write_conll(sentences, out)
    assert out.read_text() == _word(1) + "\n"


def test_conll_corrupt_gzip_and_missing_file_are_input_errors(tmp_path: Path) -> None:
    gz = tmp_path / "x.conllu.gz"
    gz.write_bytes(gzip.compress((_word(1) + "\n").encode() * 100)[:-20])
    with pytest.raises(InputError, match="corrupt or truncated gzip data"):
        read_treebank(gz)
    with pytest.raises(InputError, match="cannot open"):
        read_treebank(tmp_path / "missing.conllu")


def test_conll_write_to_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    sentences = read_treebank(_tmp(tmp_path, _word(1) + "\n"))
    with pytest.raises(DparseError, match="cannot write"):
        write_conll(sentences, tmp_path / "no" / "out.conllu")
