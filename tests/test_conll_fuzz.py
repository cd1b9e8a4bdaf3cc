"""Hypothesis fuzzing of the CoNLL reader (dparse.conll.read_conll).

Inputs are random bytes, and real sentences from the shared treebanks mutated at random
(columns dropped, added or emptied, garbage HEADs and IDs, lines swapped, deleted or
duplicated, blank lines, comments, byte-order marks, CRLF, gzip). For every input:

- the only exception is InputError, and its message is ``FILE:LINE: problem`` with LINE
  within the input, unless the problem is not on a line (damaged gzip data);
- whatever is accepted is written back byte-identical by write_conll (also after
  ``with_parse`` with the same parse), and a new parse written out reads back the same;
  only an input of blank lines (no sentence to keep them) is accepted as no sentences.

A few mutated files also go through ``python -m dparse eval``: exit 2, ``FILE:LINE:`` in
the message and no traceback, or exit 0 for files that read. Deterministic (derandomized),
a few seconds.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import REPO

from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import InputError

FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# (file under the data root, encoding, name to give the fuzzed copy)
SOURCES = [
    ("en_ewt/dev.conllu", "utf-8", "x.conllu"),  # comments, multiword tokens, empty nodes
    ("conll2007_nltk/esp.test", "utf-8", "x.conll"),
    ("conll2007_nltk/eus.test", "latin-1", "x.conll"),  # several roots, ISO-8859-1
    ("ptb_sample/dep/wsj_0001.dp", "utf-8", "x.dp"),  # Malt-TAB
]
GARBAGE = ["0_1", "+1", " 1", "1 ", "\uff11", "1.0", "01", "-1", "", "_", "1-2", "2.1", "0.1",
           "x", "#", "\ufeff1", "99999999999", "1\r", "\t", "0", "1", "2", "3", "40"]


def _blocks(relpath: str, encoding: str, limit: int = 150) -> list[str]:
    """The text of the first ``limit`` sentences of a data file, each with its blank line."""
    text = (DATA / relpath).read_text(encoding=encoding)
    blocks = [b + "\n\n" for b in text.split("\n\n") if b.strip()]
    return blocks[:limit]


@functools.cache
def corpus() -> list[tuple[list[str], str]]:
    """For each source: its sentence texts and the name the fuzzed copies get."""
    return [(_blocks(rel, enc), name) for rel, enc, name in SOURCES]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _line_count(data: bytes) -> int:
    """Lines as the reader counts them (\\n, \\r\\n and a lone \\r end a line)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n") + 1


def _gunzip(data: bytes) -> tuple[bytes, bool]:
    """``data`` (one gzip member) decompressed as far as it goes, and whether it is whole."""
    inflate = zlib.decompressobj(wbits=31)
    try:
        return inflate.decompress(data), inflate.eof and not inflate.unused_data
    except zlib.error:
        return b"", False


def _read(path: str, data: bytes, require_heads: bool) -> list[Sentence]:
    """read_conll of ``data`` saved at ``path`` (or fed to stdin for ``-``)."""
    if path != "-":
        Path(path).write_bytes(data)
        return list(read_conll(path, require_heads=require_heads))
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    try:
        return list(read_conll("-", require_heads=require_heads))
    finally:
        sys.stdin = saved


def _text(sentences: list[Sentence]) -> str:
    buf = io.StringIO()
    write_conll(sentences, buf)
    return buf.getvalue()


def check_reader(path: str, data: bytes, require_heads: bool, seed: int) -> list[Sentence] | None:
    """The properties of the module doc for one input; the sentences if it was accepted."""
    plain, whole = _gunzip(data) if data[:2] == b"\x1f\x8b" else (data, True)
    try:
        sentences = _read(path, data, require_heads)
    except InputError as err:
        where = "<stdin>" if path == "-" else path
        assert err.path == where
        if err.line is None:  # only problems that are not on a line
            assert data[:2] == b"\x1f\x8b" and "gzip" in err.problem, err
            assert str(err) == f"{where}: {err.problem}"
        else:
            assert 1 <= err.line <= _line_count(plain), err
            assert str(err) == f"{where}:{err.line}: {err.problem}"
        return None
    assert whole
    text = plain.decode("utf-8")
    if not sentences:  # only an input without a non-blank line has no sentences
        assert not text.removeprefix("\ufeff").strip()
        return sentences
    assert _text(sentences) == text
    assert _text([s.with_parse(s.heads, s.deprels) for s in sentences]) == text
    # a new parse written out reads back the same (the writer and the reader agree)
    rng = np.random.default_rng(seed)
    parsed = []
    for s in sentences:
        heads = rng.integers(0, len(s) + 1, size=len(s) + 1)
        parsed.append(s.with_parse(heads, ["", *(f"r{h}" for h in heads[1:].tolist())]))
    out = Path(tempfile.mkdtemp()) / "out"
    try:
        out.write_text(_text(parsed), encoding="utf-8", newline="")
        back = list(read_conll(out, fmt=sentences[0].fmt))
    finally:
        out.unlink(missing_ok=True)
        out.parent.rmdir()
    assert [b.form for b in back] == [p.form for p in parsed]
    assert [b.heads.tolist() for b in back] == [p.heads.tolist() for p in parsed]
    assert [b.deprels for b in back] == [p.deprels for p in parsed]
    return sentences


# -- random bytes ------------------------------------------------------------------------------

BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([b"1", b"2", b"0", b"_", b"\t", b"\n", b"\r", b"#", b"-", b".",
                              b"x", b" ", b"\xef\xbb\xbf", b"\xe9", b"\x1f\x8b"]),
             max_size=120).map(b"".join),
)


@FUZZ
@given(data=BYTES, name=st.sampled_from(["x.conllu", "x.conll", "x.dp", "noext", "-"]),
       require_heads=st.booleans())
def test_random_bytes(scratch: Path, data: bytes, name: str, require_heads: bool) -> None:
    path = "-" if name == "-" else str(scratch / name)
    check_reader(path, data, require_heads, 0)


# -- mutations of real sentences ---------------------------------------------------------------


def _cols(line: str) -> tuple[list[str], str]:
    text = line.rstrip("\r\n")
    return text.split("\t"), line[len(text):]


def mutate(lines: list[str], op: str, rnd: random.Random) -> list[str]:
    """``lines`` (each with its line ending) after one mutation ``op`` at a random place."""
    lines = list(lines)
    if not lines:
        return lines
    i = rnd.randrange(len(lines))
    cols, end = _cols(lines[i])
    k = rnd.randrange(len(cols))
    if op == "drop-column" and len(cols) > 1:
        del cols[k]
    elif op == "add-column":
        cols.insert(k, rnd.choice(GARBAGE))
    elif op == "empty-field":
        cols[k] = ""
    elif op == "garbage-head" and len(cols) >= 3:
        cols[6 if len(cols) == 10 else 2] = rnd.choice(GARBAGE)
    elif op == "garbage-id":
        cols[0] = rnd.choice(GARBAGE)
    elif op == "swap-lines":
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return lines
    elif op in ("blank-line", "comment", "delete-line", "duplicate-line"):
        new = {"blank-line": rnd.choice(["\n", "\r\n", "  \n", "\t\n"]),
               "comment": rnd.choice(["# c\n", "# sent_id = 9\n", "#\n"]),
               "duplicate-line": lines[i]}.get(op)
        lines[i:i + 1] = [] if new is None else [new, lines[i]]
        return lines
    elif op == "bom":
        return ["\ufeff" + lines[0], *lines[1:]] if rnd.random() < 0.7 else (
            lines[:i] + ["\ufeff" + lines[i]] + lines[i + 1:])
    elif op == "crlf":
        if rnd.random() < 0.5:
            return [line.replace("\n", "\r\n") if line.endswith("\n") else line
                    for line in lines]
        end = "\r\n" if end else end
    elif op == "strip-final-newline":
        lines[-1] = lines[-1].rstrip("\r\n")
        return lines
    lines[i] = "\t".join(cols) + end
    return lines


OPS = ["drop-column", "add-column", "empty-field", "garbage-head", "garbage-id", "swap-lines",
       "blank-line", "comment", "delete-line", "duplicate-line", "bom", "crlf",
       "strip-final-newline"]


def mutated_input(source: int, start: int, count: int, ops: list[str],
                  seed: int) -> tuple[str, bytes]:
    """The name and bytes of ``count`` sentences of a source file from ``start``, mutated."""
    blocks, name = corpus()[source]
    text = "".join(blocks[(start + j) % len(blocks)] for j in range(count))
    lines = io.StringIO(text, newline="").readlines()
    rnd = random.Random(seed)
    for op in ops:
        if op == "gzip":
            continue
        lines = mutate(lines, op, rnd)
    data = "".join(lines).encode("utf-8")
    if "gzip" in ops:
        data = gzip.compress(data, mtime=0)
        if rnd.random() < 0.3:
            data = data[: rnd.randrange(len(data))]
    return name, data


@requires_data
@FUZZ
@given(source=st.integers(0, len(SOURCES) - 1), start=st.integers(0, 10**6),
       count=st.integers(1, 3), ops=st.lists(st.sampled_from([*OPS, "gzip"]), max_size=4),
       seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["natural", "noext", "-"]),
       require_heads=st.booleans())
def test_mutated_real_sentences(scratch: Path, source: int, start: int, count: int,
                                ops: list[str], seed: int, name: str,
                                require_heads: bool) -> None:
    natural, data = mutated_input(source, start, count, ops, seed)
    path = {"natural": str(scratch / natural), "noext": str(scratch / "noext"), "-": "-"}[name]
    sentences = check_reader(path, data, require_heads, seed)
    if not ops and sentences is not None:
        assert len(sentences) == count  # the unmutated sentences all read


# -- through the command line ------------------------------------------------------------------


@requires_data
def test_mutated_files_through_eval(tmp_path: Path) -> None:
    """A handful of mutated files through ``python -m dparse eval FILE FILE``."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("DPARSE_DEBUG", None)
    cases = [(0, ["garbage-head"]), (1, ["drop-column"]), (3, ["garbage-id"]),
             (0, ["bom", "crlf", "comment"]), (1, ["empty-field", "swap-lines"]),
             (0, ["gzip"]), (3, ["strip-final-newline", "blank-line"])]
    failures = accepted = 0
    for n, (source, ops) in enumerate(cases):
        name, data = mutated_input(source, 7 * n, 2, ops, n)
        path = tmp_path / f"{n}-{name}"
        path.write_bytes(data)
        try:
            list(read_conll(path))
            expect_ok = True
        except InputError as err:
            expect_ok, line = False, err.line
        run = subprocess.run([sys.executable, "-m", "dparse", "eval", str(path), str(path)],
                             capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
        assert "Traceback" not in run.stderr and "internal error" not in run.stderr
        if expect_ok:
            accepted += 1
            assert run.returncode == 0, run.stderr
        else:
            failures += 1
            assert run.returncode == 2
            assert run.stderr.startswith(f"dparse: error: {path}:{line}: "), run.stderr
    assert failures >= 3 and accepted >= 2  # both kinds of outcome are exercised
