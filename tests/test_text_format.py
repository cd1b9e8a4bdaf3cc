"""Words-only input: the ``text`` format of dparse.conll (one sentence a line) and CoNLL-U/X
files with only ID and FORM filled."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest

from dparse.conll import (
    FORMATS,
    INPUT_FORMATS,
    MAX_TEXT_LINE,
    STDIN_NAME,
    TEXT_FORMAT,
    Sentence,
    read_conll,
    read_conll_block,
    write_conll,
)
from dparse.errors import InputError


def _read(path: Path | str, **kw: object) -> list[Sentence]:
    return list(read_conll(path, fmt="text", require_heads=False, **kw))


def _write(tmp_path: Path, data: str | bytes, name: str = "in.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _words(i: int, *forms: str) -> str:
    return "".join(f"{k}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_\n" for k, form in enumerate(forms, i))


def test_text_becomes_conllu_with_sent_id_and_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "The dog  barks .\n\n   \nIt\tdoes n't !\n")
    sentences = _read(path)
    assert [s.form for s in sentences] == [["The", "dog", "barks", "."],
                                           ["It", "does", "n't", "!"]]
    assert [(s.fmt, s.source, s.lineno) for s in sentences] == [
        ("conllu", str(path), 1), ("conllu", str(path), 4)]
    s = sentences[0]
    assert s.heads.tolist() == [-1] * 5 and s.upos == s.lemma == s.feats == ["_"] * 4
    assert s.comments == ["# sent_id = 1", "# text = The dog barks ."]
    out = tmp_path / "out.conllu"
    write_conll(sentences, out)
    assert out.read_text() == (
        "# sent_id = 1\n# text = The dog barks .\n" + _words(1, "The", "dog", "barks", ".")
        + "\n# sent_id = 2\n# text = It does n't !\n" + _words(1, "It", "does", "n't", "!")
        + "\n")
    again = list(read_conll(out, require_heads=False))  # detected as CoNLL-U, same words
    assert [a.form for a in again] == [s.form for s in sentences]
    assert "".join(a.to_conll() for a in again) == out.read_text()


@pytest.mark.parametrize("line", [
    "a b c", "  a   b c  ", "a\tb\t\tc", "\ta b c\t", "a\xa0b\u3000c", "a\u2003b\u202fc",
    "a\x85b\u2028c", "a\u2029\u205fb\u1680c", "a\vb\fc",
])
def test_any_run_of_unicode_white_space_separates_tokens(tmp_path: Path, line: str) -> None:
    (sent,) = _read(_write(tmp_path, f"\n \t\n{line}\r\n\u3000\n"))
    assert sent.form == ["a", "b", "c"] and sent.lineno == 3
    assert sent.comments == ["# sent_id = 1", "# text = a b c"]


def test_line_endings_and_characters_that_are_not_white_space(tmp_path: Path) -> None:
    sentences = _read(_write(tmp_path, "a b\rc\u200bd e\r\nf"))  # no final line break
    assert [s.form for s in sentences] == [["a", "b"], ["c\u200bd", "e"], ["f"]]  # ZWSP: no space
    assert [s.lineno for s in sentences] == [1, 2, 3]
    assert _read(_write(tmp_path, "")) == [] and _read(_write(tmp_path, "\n \n\t\n")) == []


def test_byte_order_mark_is_kept_before_the_first_sentence(tmp_path: Path) -> None:
    sentences = _read(_write(tmp_path, "\ufeffHello world\nBye\n"))
    assert sentences[0].form == ["Hello", "world"]
    assert sentences[0].to_conll().startswith("\ufeff# sent_id = 1\n")
    assert sentences[0].comments[0] == "# sent_id = 1"
    assert sentences[1].to_conll().startswith("# sent_id = 2\n")


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("ok\n" + "x" * (MAX_TEXT_LINE + 1) + "\n", 2, f"at most {MAX_TEXT_LINE}"),
    ("ok\nan \x01 b\n", 2, "token 2 ('\\x01') holds the control character U+0001"),
    ("ok\n\nab\x1c cd\n", 3, "token 1 ('ab\\x1c') holds the control character U+001C"),
    ("a \x7f\n", 1, "U+007F"),
    ("\n\x1c\n", 2, "token 1 ('\\x1c')"),  # white space to str.strip, not to text input
    ("a b\n\ufeffc d\n", 2, "byte-order mark (U+FEFF) starts this line"),
])
def test_bad_lines_name_the_file_and_line(tmp_path: Path, text: str, line: int,
                                          problem: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        _read(path)
    assert (err.value.path, err.value.line) == (str(path), line)
    assert problem in err.value.problem


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    line = ("ab " * MAX_TEXT_LINE)[:MAX_TEXT_LINE]
    (sent,) = _read(_write(tmp_path, line + "\r\n"))
    assert len(sent) == len(line.split())


def test_bytes_not_in_the_encoding_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "caf\xe9 ok\nd\xe9j\xe0 vu\n".encode("latin-1"))
    with pytest.raises(InputError) as err:
        _read(path)
    assert (err.value.path, err.value.line) == (str(path), 1)
    assert "cannot decode as utf-8" in err.value.problem and "latin-1" in err.value.problem
    assert [s.form for s in _read(path, encoding="latin-1")] == [["caf\xe9", "ok"],
                                                                  ["d\xe9j\xe0", "vu"]]


def test_gzip_file_and_gzip_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = gzip.compress(b"Hello world .\n\nBye\n")
    expected = [["Hello", "world", "."], ["Bye"]]
    assert [s.form for s in _read(_write(tmp_path, data, "words.txt"))] == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    sentences = _read("-")
    assert [s.form for s in sentences] == expected
    assert [(s.source, s.lineno) for s in sentences] == [(STDIN_NAME, 1), (STDIN_NAME, 3)]
    bad = _write(tmp_path, gzip.compress(b"ok\n\x01\n"), "bad.gz")
    with pytest.raises(InputError, match=r"bad\.gz:2: token 1"):
        _read(bad)


def test_text_is_an_input_format_only(tmp_path: Path) -> None:
    assert TEXT_FORMAT == "text" and TEXT_FORMAT in INPUT_FORMATS
    assert TEXT_FORMAT not in FORMATS and set(FORMATS) < set(INPUT_FORMATS)
    words = _write(tmp_path, "The dog barks\n", "words")
    with pytest.raises(InputError, match="cannot detect the format"):
        list(read_conll(words, require_heads=False))  # never detected
    with pytest.raises(ValueError, match="unknown format"):
        Sentence.build(["a"], fmt=TEXT_FORMAT)  # never a sentence's (written) format
    with pytest.raises(ValueError, match="require_heads=False"):
        list(read_conll(words, fmt=TEXT_FORMAT))
    with pytest.raises(ValueError, match="require_heads=False"):
        list(read_conll_block(b"a b\n", words, fmt=TEXT_FORMAT))
    with pytest.raises(ValueError, match="first_line 1"):
        list(read_conll_block(b"a b\n", words, fmt=TEXT_FORMAT, require_heads=False,
                              first_line=2))


def test_text_block_reads_as_the_whole_file(tmp_path: Path) -> None:
    text = "\ufeffThe dog  barks\r\n\n \nIt\u00a0sleeps .\n"
    words = _write(tmp_path, text, "words")
    from_file = list(read_conll(words, fmt=TEXT_FORMAT, require_heads=False))
    from_block = list(read_conll_block(text.encode(), words, fmt=TEXT_FORMAT,
                                       require_heads=False))
    assert [s.to_conll() for s in from_block] == [s.to_conll() for s in from_file]
    assert [(s.lineno, s.form) for s in from_block] == [(1, ["The", "dog", "barks"]),
                                                        (4, ["It", "sleeps", "."])]
    with pytest.raises(InputError, match=r"words:2: token 1 .* control character U\+0007"):
        list(read_conll_block(b"ok\n\x07bad\n", words, fmt=TEXT_FORMAT, require_heads=False))


@pytest.mark.parametrize(("name", "fmt", "header"), [
    ("forms.conllu", "conllu", "# sent_id = a\n"), ("forms.conll", "conllx", ""),
    ("forms", "conllx", ""),
])
def test_conll_with_only_id_and_form_reads_without_heads(tmp_path: Path, name: str, fmt: str,
                                                         header: str) -> None:
    text = header + _words(1, "Only", "words", "here") + "\n" + _words(1, "And", "here")
    path = _write(tmp_path, text, name)
    sentences = list(read_conll(path, require_heads=False))
    assert [(s.fmt, s.form) for s in sentences] == [
        (fmt, ["Only", "words", "here"]), (fmt, ["And", "here"])]
    for s in sentences:
        assert s.heads.tolist() == [-1] * (len(s) + 1) and s.deprels[1:] == ["_"] * len(s)
        assert s.lemma == s.upos == s.xpos == s.feats == ["_"] * len(s)
    out = tmp_path / "out"
    write_conll(sentences, out)
    assert out.read_text() == text  # lossless, as every CoNLL file
    with pytest.raises(InputError, match="needs a HEAD"):
        list(read_conll(path))
