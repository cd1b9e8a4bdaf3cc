"""Streaming reader and writer for CoNLL-X, CoNLL-U and Malt-TAB dependency files.

A :class:`Sentence` of n words keeps its source lines verbatim (comments, multiword-token lines
``3-4``, empty nodes ``5.1``, line endings and the blank lines after it), so reading a file and
writing it back gives identical bytes; :meth:`Sentence.with_parse` regenerates only the word lines
whose HEAD or DEPREL changed.

Formats (``FORMATS``):

- ``conllu``: 10 tab-separated columns ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC.
- ``conllx``: 10 columns ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL; CPOSTAG is
  exposed as ``upos`` and POSTAG as ``xpos``. Comments, multiword tokens and empty nodes are
  accepted in both 10-column formats; ``fmt`` only records which one the file is.
- ``malttab``: FORM POS [HEAD [DEPREL]]; POS is exposed as both ``upos`` and ``xpos``, LEMMA and
  FEATS are ``_``. A line starting with ``#`` is a word (the PTB has ``#`` tokens), not a comment.

Format detection when ``fmt`` is None: by extension first (``.conllu`` -> conllu; ``.conll``,
``.conllx`` -> conllx; ``.dp``, ``.tab``, ``.malt`` -> malttab; a ``.gz`` suffix is looked
through), otherwise by the first non-blank line: a ``#`` comment, or a 10-column line whose ID
is a range ``3-4`` or a decimal ``5.1``, means conllu; another 10-column line means conllx
(a CoNLL-U file without comments reads the same way, only ``fmt`` differs); 2-4 columns mean
malttab.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

import numpy as np

from dparse.errors import DparseError, InputError

FORMATS = ("conllx", "conllu", "malttab")

_EXTENSIONS = {
    ".conllu": "conllu",
    ".conll": "conllx",
    ".conllx": "conllx",
    ".dp": "malttab",
    ".tab": "malttab",
    ".malt": "malttab",
}
# 0-based HEAD and DEPREL columns of a word line
_HEAD_COL = {"conllu": 6, "conllx": 6, "malttab": 2}


class Sentence:
    """One sentence of n words; node 0 is the artificial root.

    Word columns are lists of length n (index i-1 holds word i), ``_`` kept as ``_``.
    ``heads``: int32 array [n+1], ``heads[0] == -1``, ``-1`` also for a ``_`` HEAD.
    ``deprels``: list [n+1], ``deprels[0] == ''``.
    ``source`` and ``lineno`` name the file and the 1-based line where the sentence starts.
    """

    __slots__ = (
        "fmt",
        "form",
        "lemma",
        "upos",
        "xpos",
        "feats",
        "heads",
        "deprels",
        "source",
        "lineno",
        "_lines",
        "_word_idx",
        "_sep",
    )

    def __init__(
        self,
        fmt: str,
        form: list[str],
        lemma: list[str],
        upos: list[str],
        xpos: list[str],
        feats: list[str],
        heads: np.ndarray,
        deprels: list[str],
        lines: list[str],
        word_idx: list[int],
        sep: str = "\n",
        source: str = "<memory>",
        lineno: int = 1,
    ) -> None:
        self.fmt = fmt
        self.form = form
        self.lemma = lemma
        self.upos = upos
        self.xpos = xpos
        self.feats = feats
        self.heads = heads
        self.deprels = deprels
        self.source = source
        self.lineno = lineno
        self._lines = lines  # every line of the sentence, with its line ending
        self._word_idx = word_idx  # _lines index of word i+1's line
        self._sep = sep  # the blank-line text that follows the sentence ('' at end of file)

    @classmethod
    def build(
        cls,
        form: list[str],
        heads: Iterable[int] | None = None,
        deprels: list[str] | None = None,
        upos: list[str] | None = None,
        xpos: list[str] | None = None,
        lemma: list[str] | None = None,
        feats: list[str] | None = None,
        fmt: str = "conllu",
    ) -> Sentence:
        """A new sentence from word columns (lists of length n; missing ones are ``_``).

        ``heads`` and ``deprels`` are [n+1] like the attributes (entry 0 ignored); missing
        heads are ``_`` (-1).
        """
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
        n = len(form)
        blank = ["_"] * n
        lemma = list(lemma) if lemma is not None else blank
        upos = list(upos) if upos is not None else blank
        xpos = list(xpos) if xpos is not None else list(upos)
        feats = list(feats) if feats is not None else blank
        if fmt == "malttab":
            lines = [f"{f}\t{p}\t_\n" for f, p in zip(form, xpos, strict=True)]
        else:
            lines = [
                "\t".join((str(i), f, lm, u, x, ft, "_", "_", "_", "_")) + "\n"
                for i, f, lm, u, x, ft in zip(
                    range(1, n + 1), form, lemma, upos, xpos, feats, strict=True
                )
            ]
        heads0 = np.full(n + 1, -1, dtype=np.int32)
        sent = cls(
            fmt, list(form), lemma, upos, xpos, feats, heads0, ["", *blank], lines, list(range(n))
        )
        if heads is None and deprels is None:
            return sent
        return sent.with_parse(
            heads0 if heads is None else heads, ["", *blank] if deprels is None else deprels
        )

    def __len__(self) -> int:
        return len(self.form)

    def __repr__(self) -> str:
        words = " ".join(self.form[:8]) + (" ..." if len(self.form) > 8 else "")
        return f"<Sentence {self.fmt} n={len(self)} {self.source}:{self.lineno} {words!r}>"

    @property
    def comments(self) -> list[str]:
        """The comment lines (10-column formats), without line endings."""
        if self.fmt == "malttab":
            return []
        return [line.rstrip("\r\n") for line in self._lines if line.startswith("#")]

    def line_of(self, m: int) -> int:
        """The 1-based line number of word m (1..n) in the file the sentence was read from."""
        lead = next(i for i, line in enumerate(self._lines) if line.strip())
        return self.lineno + self._word_idx[m - 1] - lead

    def with_parse(self, heads: Iterable[int] | np.ndarray, deprels: list[str]) -> Sentence:
        """A copy whose HEAD and DEPREL columns are replaced; everything else is kept verbatim.

        ``heads``: ints [n+1] (entry 0 ignored, -1 writes ``_``); ``deprels``: [n+1] (entry 0
        ignored). Only word lines whose HEAD or DEPREL changed are rewritten.
        """
        n = len(self)
        new_heads = np.array(heads, dtype=np.int32)
        if new_heads.shape != (n + 1,) or len(deprels) != n + 1:
            raise ValueError(
                f"with_parse needs heads and deprels of length {n + 1}, "
                f"got {new_heads.shape} and {len(deprels)}"
            )
        if n and (new_heads[1:].max() > n or new_heads[1:].min() < -1):
            raise ValueError(f"heads out of range 0..{n}")
        new_heads[0] = -1
        new_rels = ["", *deprels[1:]]
        changed = set(np.flatnonzero(new_heads != self.heads).tolist())
        changed.update(m for m in range(1, n + 1) if new_rels[m] != self.deprels[m])
        lines = list(self._lines)
        for m in sorted(changed):
            k = self._word_idx[m - 1]
            text = lines[k].rstrip("\r\n")
            ending = lines[k][len(text) :]
            cols = _set_parse(self.fmt, text.split("\t"), int(new_heads[m]), new_rels[m])
            lines[k] = "\t".join(cols) + ending
        return Sentence(
            self.fmt,
            self.form,
            self.lemma,
            self.upos,
            self.xpos,
            self.feats,
            new_heads,
            new_rels,
            lines,
            self._word_idx,
            self._sep,
            self.source,
            self.lineno,
        )

    def to_conll(self) -> str:
        """The sentence as file text: its lines and the blank-line separator after it."""
        return "".join(self._lines) + self._sep


def _set_parse(fmt: str, cols: list[str], head: int, rel: str) -> list[str]:
    """A word line's columns with HEAD and DEPREL replaced (head -1 writes ``_``)."""
    head_text = "_" if head < 0 else str(head)
    if fmt == "malttab":  # FORM POS HEAD [DEPREL]: a DEPREL column only if one is needed
        keep_rel = len(cols) == 4 or rel != "_"
        return [cols[0], cols[1], head_text, *([rel] if keep_rel else [])]
    col = _HEAD_COL[fmt]
    return [*cols[:col], head_text, rel, *cols[col + 2 :]]


def detect_format(path: str | os.PathLike, first_line: str | None = None) -> str:
    """The format of ``path`` by extension, else by its first non-blank line (see module doc)."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        name = name[:-3]
    fmt = _EXTENSIONS.get(os.path.splitext(name)[1].lower())
    if fmt is not None:
        return fmt
    if first_line is None:
        raise InputError(os.fspath(path), None, "empty file: cannot detect its format")
    cols = first_line.rstrip("\r\n").split("\t")
    if first_line.startswith("#") and not 2 <= len(cols) <= 4:
        return "conllu"
    if len(cols) == 10:
        return "conllu" if ("-" in cols[0] or "." in cols[0]) else "conllx"
    if 2 <= len(cols) <= 4:
        return "malttab"
    raise InputError(
        os.fspath(path),
        None,
        f"cannot detect the format: first line has {len(cols)} tab-separated columns "
        "(10 for CoNLL-X/CoNLL-U, 2-4 for Malt-TAB); pass --format",
    )


def _open_read(path: str, encoding: str) -> TextIO:
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding=encoding, newline="")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding=encoding, newline="")
    return open(path, encoding=encoding, newline="")


def _decode_error_line(path: str, encoding: str) -> int | None:
    """The 1-based number of the first line of ``path`` that ``encoding`` cannot decode."""
    if path == "-":
        return None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError:
                return lineno
    return None


def read_conll(
    path: str | os.PathLike,
    fmt: str | None = None,
    encoding: str = "utf-8",
    require_heads: bool = True,
) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-X, CoNLL-U or Malt-TAB file one by one.

    ``path`` may end in ``.gz``; ``-`` reads stdin. ``fmt`` None detects the format (module doc).
    With ``require_heads=False`` a ``_`` HEAD (and 2-column Malt-TAB lines) read as head -1.
    Raises :class:`InputError` naming the file and 1-based line of any malformed line.
    """
    name = os.fspath(path)
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    try:
        f = _open_read(name, encoding)
    except OSError as exc:
        raise InputError(name, None, f"cannot open: {exc.strerror or exc}") from None
    except LookupError:
        raise InputError(name, None, f"unknown encoding {encoding!r}") from None
    lineno = 0
    try:
        lines: Iterator[str] = iter(f)
        if fmt is None:
            head: list[str] = []
            for line in lines:
                head.append(line)
                if line.strip():
                    break
            fmt = detect_format(name, head[-1] if head and head[-1].strip() else None)
            lines = itertools.chain(head, lines)
        reader = _SentenceReader(name, fmt, require_heads)
        for lineno, line in enumerate(lines, 1):
            if line.strip():
                if reader.sep_parts:
                    yield reader.finish()
                reader.add(line, lineno)
            elif reader.lines:
                reader.sep_parts.append(line)
            else:  # blank lines before the first sentence are kept with it
                reader.lead.append(line)
        if reader.lines:
            yield reader.finish()
    except UnicodeDecodeError as exc:
        line_no = _decode_error_line(name, encoding) or lineno + 1
        raise InputError(
            name,
            line_no,
            f"cannot decode as {encoding} ({exc.reason}); "
            "if the file is ISO-8859-1, pass --encoding latin-1",
        ) from None
    except (OSError, EOFError) as exc:  # e.g. a corrupt or truncated .gz
        raise InputError(name, lineno or None, f"cannot read: {exc}") from None
    finally:
        if name == "-":
            f.detach()  # leave sys.stdin open
        else:
            f.close()


class _SentenceReader:
    """Accumulates the lines of one sentence, validates them and builds the Sentence."""

    def __init__(self, path: str, fmt: str, require_heads: bool) -> None:
        self.path = path
        self.fmt = fmt
        self.require_heads = require_heads
        self.ncols = 10 if fmt != "malttab" else None
        self.lead: list[str] = []
        self._reset()

    def _reset(self) -> None:
        self.lines: list[str] = []
        self.rows: list[list[str]] = []
        self.word_idx: list[int] = []
        self.sep_parts: list[str] = []
        self.mwt_end = 0  # the last word a multiword-token range covers (CoNLL-U)
        self.mwt_line = 0
        self.start = 0

    def error(self, lineno: int, problem: str) -> InputError:
        return InputError(self.path, lineno, problem)

    def add(self, line: str, lineno: int) -> None:
        """Take one non-blank line of the current sentence."""
        if not self.lines:
            self.start = lineno
        self.lines.append(line)
        text = line.rstrip("\r\n")
        if self.fmt == "malttab":
            cols = text.split("\t")
            if not 2 <= len(cols) <= 4 or (len(cols) == 2 and self.require_heads):
                want = "2-4" if not self.require_heads else "3 or 4"
                raise self.error(
                    lineno,
                    f"expected {want} tab-separated columns (FORM POS HEAD [DEPREL]) "
                    f"for Malt-TAB, found {len(cols)}",
                )
            if not cols[0]:
                raise self.error(lineno, "empty FORM")
            self.word_idx.append(len(self.lines) - 1)
            self.rows.append(cols)
            return
        if text[0] == "#":
            return
        cols = text.split("\t")
        if len(cols) != 10:
            raise self.error(
                lineno, f"expected 10 tab-separated columns for {self.fmt}, found {len(cols)}"
            )
        tok = cols[0]
        n = len(self.rows)
        if tok == str(n + 1):
            if not cols[1]:
                raise self.error(lineno, "empty FORM")
            self.word_idx.append(len(self.lines) - 1)
            self.rows.append(cols)
        elif "-" in tok:
            self._check_range(tok, n, lineno)
        elif "." in tok:
            self._check_empty_node(tok, n, lineno)
        elif tok.isdigit():
            what = "duplicate" if int(tok) <= n else "non-consecutive"
            raise self.error(lineno, f"{what} word ID {tok}: expected {n + 1}")
        else:
            raise self.error(lineno, f"malformed ID {tok!r}")

    def _check_range(self, tok: str, n: int, lineno: int) -> None:
        a, _, b = tok.partition("-")
        if not (a.isdigit() and b.isdigit() and int(a) < int(b)):
            raise self.error(lineno, f"malformed multiword token range {tok!r}")
        if int(a) != n + 1:
            raise self.error(
                lineno, f"multiword token range {tok} must start at the next word ID {n + 1}"
            )
        self.mwt_end = int(b)
        self.mwt_line = lineno

    def _check_empty_node(self, tok: str, n: int, lineno: int) -> None:
        a, _, b = tok.partition(".")
        if not (a.isdigit() and b.isdigit() and int(b) > 0):
            raise self.error(lineno, f"malformed empty node ID {tok!r}")
        if int(a) != n:
            raise self.error(lineno, f"empty node {tok} must follow word {a}; the last word is {n}")

    def finish(self) -> Sentence:
        """Validate the sentence read so far, return it and start a new one."""
        rows = self.rows
        n = len(rows)
        if n == 0:
            raise self.error(self.start, "sentence has no word lines (only comments)")
        if self.mwt_end > n:
            raise self.error(
                self.mwt_line,
                f"multiword token range ends at {self.mwt_end}, past the last word {n}",
            )
        if self.fmt == "malttab":
            form = [r[0] for r in rows]
            upos = xpos = [r[1] for r in rows]
            head_str = [r[2] if len(r) > 2 else "_" for r in rows]
            rels = [r[3] if len(r) > 3 else "_" for r in rows]
            lemma = feats = ["_"] * n
        else:
            _, form, lemma, upos, xpos, feats, head_str, rels, _, _ = (
                list(c) for c in zip(*rows, strict=True)
            )
        heads = self._heads(head_str, n)
        sent = Sentence(
            self.fmt,
            form,
            lemma,
            upos,
            xpos,
            feats,
            heads,
            ["", *rels],
            self.lines,
            self.word_idx,
            "".join(self.sep_parts),
            self.path,
            self.start,
        )
        if self.lead:
            sent._lines = self.lead + sent._lines
            sent._word_idx = [i + len(self.lead) for i in sent._word_idx]
            self.lead = []
        self._reset()
        return sent

    def _heads(self, head_str: list[str], n: int) -> np.ndarray:
        heads = np.empty(n + 1, dtype=np.int32)
        heads[0] = -1
        try:
            heads[1:] = [int(h) for h in head_str]
        except ValueError:
            for i, h in enumerate(head_str):
                if h == "_" and not self.require_heads:
                    heads[i + 1] = -1
                    continue
                try:
                    heads[i + 1] = int(h)
                except ValueError:
                    hint = " (a '_' HEAD needs require_heads=False)" if h == "_" else ""
                    problem = f"HEAD {h!r} is not an integer{hint}"
                    raise self.error(self._line_of(i), problem) from None
        bad = np.flatnonzero((heads[1:] < 0) | (heads[1:] > n))
        for i in bad.tolist():
            if head_str[i] != "_":
                raise self.error(self._line_of(i), f"HEAD {head_str[i]} is out of range 0..{n}")
        return heads

    def _line_of(self, i: int) -> int:
        """The line number of word i+1 (0-based i) of the current sentence."""
        return self.start + self.word_idx[i]


def read_treebank(path: str | os.PathLike, **kw: object) -> list[Sentence]:
    """All sentences of a file: ``list(read_conll(path, **kw))``."""
    return list(read_conll(path, **kw))  # type: ignore[arg-type]


def _chunks(sentences: Iterable[Sentence]) -> Iterator[str]:
    """File text sentence by sentence, adding a blank line where a sentence that lacked one
    (the last of its file) is followed by another."""
    prev = None
    for sent in sentences:
        if prev is not None:
            yield prev.to_conll() + _missing_separator(prev)
        prev = sent
    if prev is not None:
        yield prev.to_conll()


def _missing_separator(sent: Sentence) -> str:
    last = sent._lines[-1]
    nl = "\r\n" if last.endswith("\r\n") else "\n"
    if not last.endswith(("\n", "\r")):
        return nl + nl if not sent._sep else nl
    return "" if sent._sep else nl


def write_conll(
    sentences: Iterable[Sentence],
    path: str | os.PathLike | TextIO | None,
    encoding: str = "utf-8",
) -> None:
    """Write sentences as they were read (with any parse set by ``with_parse``).

    ``path`` None or ``-`` writes stdout; an open text stream is written to and left open. A
    file path (``.gz`` compresses) is written whole or not at all: a temporary file in the same
    folder is renamed over it when complete and removed on any error. An unwritable folder
    raises :class:`DparseError`.
    """
    if path is None or path == "-":
        sys.stdout.writelines(_chunks(sentences))
        sys.stdout.flush()
        return
    if not isinstance(path, str | os.PathLike):
        path.writelines(_chunks(sentences))
        return
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise DparseError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if target.name.endswith(".gz"):
            os.close(fd)
            with gzip.open(tmp, "wt", encoding=encoding, newline="") as out:
                out.writelines(_chunks(sentences))
        else:
            with open(fd, "w", encoding=encoding, newline="") as out:
                out.writelines(_chunks(sentences))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
