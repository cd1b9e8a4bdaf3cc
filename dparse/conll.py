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

Words alone (``TEXT_FORMAT``, ``text``; one of ``INPUT_FORMATS``, read only when asked for,
never detected, never written): one sentence a line, its tokens separated by runs of Unicode
white space (the White_Space property; U+001C-U+001F are control characters here, not white
space); lines of white space alone are skipped. Each line becomes a CoNLL-U sentence whose
lines are ``# sent_id = k`` (k counting the sentences from 1), ``# text = `` the tokens joined
by one space, and one word line per token with only ID and FORM filled (every other column
``_``, HEAD too: read it with ``require_heads=False``); written back, it is plain CoNLL-U. A
line longer than ``MAX_TEXT_LINE`` characters, or a token holding a control character (Unicode
category Cc), is an InputError naming the file and line.

Format detection when ``fmt`` is None: by extension first (``.conllu`` -> conllu; ``.conll``,
``.conllx`` -> conllx; ``.dp``, ``.tab``, ``.malt`` -> malttab; a ``.gz`` suffix is looked
through), otherwise by the first non-blank line: a ``#`` comment, or a 10-column line whose ID
is a range ``3-4`` or a decimal ``5.1``, means conllu; another 10-column line means conllx
(a CoNLL-U file without comments reads the same way, only ``fmt`` differs); 2-4 columns mean
malttab.

Reading (:func:`read_conll`) is strict, and lossless for everything it accepts (text input
keeps only its words and a leading byte-order mark):

- Input: ``-`` is stdin; gzip is recognized by its first bytes (any name, stdin too). A UTF-8
  byte-order mark at the start is accepted and kept. An input without a non-blank line (empty
  stdin, an empty file) has no sentences (and nothing to keep its blank lines in).
- A sentence is its comment lines, then its data lines up to a blank line or the end of the
  input; comment lines after the last sentence are kept in its separator.
- Word IDs count 1, 2, ... (a plain ASCII decimal integer); multiword-token ranges ``3-4`` and
  empty nodes ``5.1`` are written the same way. HEAD is ``_`` or a plain decimal integer 0..n
  (no sign, space, leading zero, decimal point or non-ASCII digit). No field is empty.
- A malformed line is an :class:`~dparse.errors.InputError` naming the file (``<stdin>`` for
  stdin), the 1-based line and the problem; a file that is not a tree is
  :mod:`dparse.gold`'s business.
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import gzip
import io
import itertools
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, TextIO

import numpy as np

from dparse.errors import InputError
from dparse.outputs import open_output

FORMATS = ("conllx", "conllu", "malttab")  # the tree formats: read, detected and written
TEXT_FORMAT = "text"  # words alone, one sentence a line (module doc)
INPUT_FORMATS = (*FORMATS, TEXT_FORMAT)  # what read_conll's fmt may name
MAX_TEXT_LINE = 10_000  # characters in a line of text input, line ending excluded

_EXTENSIONS = {
    ".conllu": "conllu",
    ".conll": "conllx",
    ".conllx": "conllx",
    ".dp": "malttab",
    ".tab": "malttab",
    ".malt": "malttab",
}
# the extension a file written in a format gets, so that detect_format reads it back as that
FORMAT_EXTENSIONS = {"conllu": ".conllu", "conllx": ".conllx", "malttab": ".malt"}
# 0-based HEAD and DEPREL columns of a word line
_HEAD_COL = {"conllu": 6, "conllx": 6, "malttab": 2}
_COLUMNS = {
    "conllu": ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC"),
    "conllx": (
        "ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD", "PDEPREL"
    ),
    "malttab": ("FORM", "POS", "HEAD", "DEPREL"),
}
STDIN_NAME = "<stdin>"  # how messages and Sentence.source name standard input
_BOM = "\ufeff"
_BOM_AS_8BIT = "\xef\xbb\xbf"  # a UTF-8 byte-order mark decoded as ISO-8859-1 or cp1252
_GZIP_MAGIC = b"\x1f\x8b"
# the HEADs of a sentence joined by tabs, when each is a plain decimal of at most 9 digits
_PLAIN_HEADS = re.compile(r"(?:0|[1-9][0-9]{0,8})(?:\t(?:0|[1-9][0-9]{0,8}))*")
# a run of Unicode White_Space: what separates the tokens of text input
_WHITE_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
# a control character (category Cc); white space is split off before tokens are searched
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# what a MISC attribute written by Sentence.with_misc may not hold: the separator, tabs, breaks
_MISC_BAD = re.compile("[|\t\n\r\v\f\x85\u2028\u2029]")


def _decimal(text: str) -> int | None:
    """``text`` as an int if it is a plain ASCII decimal integer (no sign, no leading zero)."""
    if text.isascii() and text.isdigit() and (text[0] != "0" or text == "0"):
        return int(text)
    return None


class Sentence:
    """One sentence of n words; node 0 is the artificial root.

    Word columns are lists of length n (index i-1 holds word i), ``_`` kept as ``_``.
    ``heads``: int32 array [n+1], ``heads[0] == -1``, ``-1`` also for a ``_`` HEAD.
    ``deprels``: list [n+1], ``deprels[0] == ''``.
    ``source`` and ``lineno`` name the file and the 1-based line where the sentence starts.
    ``words`` and ``lemmas`` are ``form`` and ``lemma`` by the API's names.

    >>> sent = Sentence.build(["Dogs", "bark"], [-1, 2, 0], ["", "nsubj", "root"])
    >>> sent.words, sent.heads.tolist(), sent.deprels
    (['Dogs', 'bark'], [-1, 2, 0], ['', 'nsubj', 'root'])
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
        "_stored",
        "_base",
        "_notes",
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
        lines: list[str] | None,
        word_idx: list[int],
        sep: str = "\n",
        source: str = "<memory>",
        lineno: int = 1,
        base: Sentence | None = None,
        notes: list[str] | None = None,
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
        # every line of the sentence, with its line ending; None until first asked for when
        # they are ``base``'s with the word lines whose columns this sentence changed
        # rewritten (with_parse, with_tags), or else ``notes`` (comment lines) and a line per
        # word from the columns (build)
        self._stored = lines
        self._base = base
        self._notes = notes
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
        comments: Iterable[str] = (),
    ) -> Sentence:
        """A new sentence from word columns (lists of length n; missing ones are ``_``).

        ``heads`` and ``deprels`` are [n+1] like the attributes (entry 0 ignored); missing
        heads are ``_`` (-1). ``comments`` (10-column formats): lines before the words, each
        starting with ``#``, without line endings. The lines are made when first asked for.
        """
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
        n = len(form)
        blank = ["_"] * n
        lemma = list(lemma) if lemma is not None else blank
        upos = list(upos) if upos is not None else blank
        xpos = list(xpos) if xpos is not None else list(upos)
        feats = list(feats) if feats is not None else blank
        if not len(lemma) == len(upos) == len(xpos) == len(feats) == n:
            raise ValueError(f"build: the columns must have one value for each of {n} words")
        notes = [f"{line}\n" for line in comments]
        if notes and (fmt == "malttab" or not all(line.startswith("#") for line in notes)):
            raise ValueError(f"comments must be lines starting with # in {fmt}: {comments!r}")
        heads0 = np.full(n + 1, -1, dtype=np.int32)
        sent = cls(
            fmt, list(form), lemma, upos, xpos, feats, heads0, ["", *blank], None,
            list(range(len(notes), len(notes) + n)), notes=notes,
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
        lines = (line.removeprefix(_BOM).rstrip("\r\n") for line in self._lines)
        return [line for line in lines if line.startswith("#")]

    @property
    def _lines(self) -> list[str]:
        """Every line of the sentence, with its line ending (a parse's made on first use)."""
        if self._stored is None:
            if self._base is not None:
                self._stored = self._base._patched(self)
                self._base = None
            else:
                self._stored = (self._notes or []) + self._word_lines()
        return self._stored

    def _word_lines(self) -> list[str]:
        """A line per word from the columns, HEAD and DEPREL ``_`` (:meth:`build`)."""
        if self.fmt == "malttab":
            return [f"{f}\t{p}\t_\n" for f, p in zip(self.form, self.xpos, strict=True)]
        return ["\t".join((str(i), f, lm, u, x, ft, "_", "_", "_", "_")) + "\n"
                for i, f, lm, u, x, ft in zip(range(1, len(self) + 1), self.form, self.lemma,
                                              self.upos, self.xpos, self.feats, strict=True)]

    def line_of(self, m: int) -> int:
        """The 1-based line number of word m (1..n) in the file the sentence was read from."""
        lead = next(i for i, line in enumerate(self._lines) if line.removeprefix(_BOM).strip())
        return self.lineno + self._word_idx[m - 1] - lead

    @property
    def misc(self) -> list[str]:
        """The last column (CoNLL-U's MISC) of each word, ``_`` for Malt-TAB (n strings)."""
        if self.fmt == "malttab":
            return ["_"] * len(self)
        lines = self._lines
        return [lines[k].rstrip("\r\n").rsplit("\t", 1)[-1] for k in self._word_idx]

    def with_parse(self, heads: Iterable[int] | np.ndarray, deprels: list[str]) -> Sentence:
        """A copy whose HEAD and DEPREL columns are replaced; everything else is kept verbatim.

        ``heads``: ints [n+1] (entry 0 ignored, -1 writes ``_``); ``deprels``: [n+1] (entry 0
        ignored). Only word lines whose HEAD or DEPREL changed are rewritten, when the lines
        are first asked for (a parse that is never written costs no text).
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
        return Sentence(self.fmt, self.form, self.lemma, self.upos, self.xpos, self.feats,
                        new_heads, ["", *deprels[1:]], None, self._word_idx, self._sep,
                        self.source, self.lineno, base=self._lines_base)

    @property
    def _lines_base(self) -> Sentence:
        """The sentence whose lines a copy's are made from: this one, or the one this one's
        are still to be made from (so that a tagged, then parsed copy rewrites a line once)."""
        return self._base if self._base is not None else self

    def _patched(self, target: Sentence) -> list[str]:
        """This sentence's lines with the word lines whose LEMMA, UPOS, XPOS, FEATS, HEAD or
        DEPREL differ in ``target`` (a copy of it) rewritten; their other fields verbatim."""
        n = len(self)
        tagged: set[int] = set()
        for name in ("lemma", "upos", "xpos", "feats"):
            old, new = getattr(self, name), getattr(target, name)
            if new is not old and new != old:
                tagged.update(m for m in range(1, n + 1) if new[m - 1] != old[m - 1])
        parsed = set(np.flatnonzero(target.heads != self.heads).tolist())
        parsed.update(m for m in range(1, n + 1) if target.deprels[m] != self.deprels[m])
        lines = list(self._lines)
        for m in sorted(tagged | parsed):
            k = self._word_idx[m - 1]
            text = lines[k].rstrip("\r\n")
            ending = lines[k][len(text) :]
            cols = text.split("\t")
            if m in tagged:
                if self.fmt == "malttab":
                    cols[1] = target.xpos[m - 1]
                else:
                    cols[2:6] = (target.lemma[m - 1], target.upos[m - 1], target.xpos[m - 1],
                                 target.feats[m - 1])
            if m in parsed:
                cols = _set_parse(self.fmt, cols, int(target.heads[m]), target.deprels[m])
            lines[k] = "\t".join(cols) + ending
        return lines

    def with_tags(self, lemma: list[str] | None = None, upos: list[str] | None = None,
                  xpos: list[str] | None = None, feats: list[str] | None = None) -> Sentence:
        """A copy whose LEMMA, UPOS, XPOS and FEATS columns are replaced where given (lists of
        length n); everything else is kept verbatim. Only word lines that change are rewritten,
        when the lines are first asked for. Malt-TAB has one POS column: it takes ``xpos``
        (else ``upos``) and no lemma or feats.
        """
        n = len(self)
        new = {"lemma": lemma, "upos": upos, "xpos": xpos, "feats": feats}
        for name, values in new.items():
            if values is not None and len(values) != n:
                raise ValueError(f"with_tags: {name} has {len(values)} values for {n} words")
        if self.fmt == "malttab":
            pos = xpos if xpos is not None else upos
            new = {"lemma": None, "upos": pos, "xpos": pos, "feats": None}
        cols = {name: list(values) if values is not None else getattr(self, name)
                for name, values in new.items()}
        return Sentence(self.fmt, self.form, cols["lemma"], cols["upos"], cols["xpos"],
                        cols["feats"], self.heads, self.deprels, None, self._word_idx, self._sep,
                        self.source, self.lineno, base=self._lines_base)

    def with_misc(self, attributes: list[dict[str, str]]) -> Sentence:
        """A copy whose MISC column (CoNLL-U only) holds ``attributes[m - 1]`` (key -> value,
        written ``Key=value``) for word m: an attribute of the same key is replaced in place,
        new ones follow the existing ones, ``_`` is replaced; word lines without new attributes
        are kept verbatim.
        ValueError for another format, a key or value that would break the column (``|``, a tab
        or a line break; ``=`` in a key).

        >>> s = Sentence.build(["Hi"], [-1, 0], ["", "root"]).with_misc([{"HeadProb": "1.00"}])
        >>> s.to_conllu().splitlines()[0].split("\\t")[-1]
        'HeadProb=1.00'
        """
        if self.fmt != "conllu":
            raise ValueError(f"with_misc: {self.fmt} has no MISC column (CoNLL-U only)")
        if len(attributes) != len(self):
            raise ValueError(f"with_misc: {len(attributes)} entries for {len(self)} words")
        lines = list(self._lines)
        for m, extra in enumerate(attributes, 1):
            if not extra:
                continue
            if _MISC_BAD.search("".join(extra) + "".join(extra.values())) \
                    or any(not key or "=" in key for key in extra):
                raise ValueError(f"with_misc: {extra} would break the MISC column")
            k = self._word_idx[m - 1]
            text = lines[k].rstrip("\r\n")
            cols = text.split("\t")
            new = {key: f"{key}={value}" for key, value in extra.items()}
            if cols[9] == "_":
                cols[9] = "|".join(new.values())
            else:
                kept = [new.pop(a.split("=", 1)[0], a) for a in cols[9].split("|")]
                cols[9] = "|".join(kept + list(new.values()))
            lines[k] = "\t".join(cols) + lines[k][len(text) :]
        return Sentence(self.fmt, self.form, self.lemma, self.upos, self.xpos, self.feats,
                        self.heads, self.deprels, lines, self._word_idx, self._sep,
                        self.source, self.lineno)

    def with_blanks(self, columns: Iterable[str]) -> Sentence:
        """A copy whose ``columns`` (names of LEMMA, UPOS, XPOS, FEATS) read ``_`` to whoever
        reads its columns (a model that does not read them), while its lines, as written out,
        stay this sentence's."""
        blanked = copy.copy(self)
        blanked._stored, blanked._base = self._lines, None
        for column in columns:
            setattr(blanked, column, ["_"] * len(self))
        return blanked

    def words_only(self) -> Sentence:
        """A copy with LEMMA, UPOS, XPOS and FEATS blanked (``_``): the words alone, as a
        user's own text has them."""
        blank = ["_"] * len(self)
        return self.with_tags(blank, blank, blank, blank)

    def to_conll(self) -> str:
        """The sentence as file text: its lines and the blank-line separator after it."""
        return "".join(self._lines) + self._sep

    @property
    def words(self) -> list[str]:
        """The FORM of each word (``form``): ``words[m - 1]`` is word m."""
        return self.form

    @property
    def lemmas(self) -> list[str]:
        """The LEMMA of each word (``lemma``), ``_`` where there is none."""
        return self.lemma

    def to_conllu(self) -> str:
        """The sentence as CoNLL-U text ending in a blank line: :meth:`to_conll` for a
        CoNLL-U sentence (a blank line added if it had none), its columns and comments in
        CoNLL-U's ten for a CoNLL-X or Malt-TAB one.

        >>> sent = Sentence.build(["Hi", "!"], [-1, 0, 1], ["", "root", "punct"])
        >>> sent.to_conllu().splitlines()[1].split("\\t")
        ['2', '!', '_', '_', '_', '_', '1', 'punct', '_', '_']
        """
        if self.fmt == "conllu":
            return self.to_conll() + _missing_separator(self)
        return Sentence.build(self.form, self.heads, self.deprels, self.upos, self.xpos,
                              self.lemma, self.feats, comments=self.comments).to_conllu()


# A file's path as the readers and writers take it (``-``: stdin or stdout).
PathLike = str | os.PathLike[str]
# A sentence given as its words, or as (word, tag) pairs (:func:`as_sentence`).
Words = Sequence[str] | Sequence[tuple[str, str]]


def as_sentence(item: Words | Sentence, position: int = 1) -> Sentence:
    """``item`` as a Sentence: itself, or a new one from its words or (word, tag) pairs (the
    tag in UPOS and XPOS, as Malt-TAB's one POS column); InputError for a string, a pair that
    is not two strings, or a word that is empty or holds a tab or a line break (``position``:
    the item's, for the message).

    Example::

        as_sentence([("Hi", "INTJ")]).upos == ["INTJ"]
    """
    if isinstance(item, Sentence):
        return item
    where = f"<sentence {position}>"
    if isinstance(item, str):
        raise InputError(where, None, "a sentence is a list of words, not a string (split it "
                         "into words first)")
    words = list(item)
    if not words:
        raise InputError(where, None, "a sentence needs at least one word")
    tags = None
    if words and not isinstance(words[0], str):
        if not all(isinstance(p, tuple | list) and len(p) == 2 for p in words):
            raise InputError(where, None, "give words, or (word, tag) pairs, not a mixture")
        tags = [str(tag) for _, tag in words]
        words = [word for word, _ in words]
    for word in words:
        if not isinstance(word, str) or not word or "\t" in word or "\n" in word \
                or "\r" in word:
            raise InputError(where, None, f"word {word!r}: a word is a non-empty string "
                             "without tabs or line breaks")
    return Sentence.build(words, upos=tags)


def _set_parse(fmt: str, cols: list[str], head: int, rel: str) -> list[str]:
    """A word line's columns with HEAD and DEPREL replaced (head -1 writes ``_``)."""
    head_text = "_" if head < 0 else str(head)
    if fmt == "malttab":  # FORM POS HEAD [DEPREL]: a DEPREL column only if one is needed
        keep_rel = len(cols) == 4 or rel != "_"
        return [cols[0], cols[1], head_text, *([rel] if keep_rel else [])]
    col = _HEAD_COL[fmt]
    return [*cols[:col], head_text, rel, *cols[col + 2 :]]


def _display_name(path: str) -> str:
    """How messages name ``path``: ``<stdin>`` for ``-``."""
    return STDIN_NAME if path == "-" else path


def detect_format(path: str | os.PathLike, first_line: str | None = None) -> str:
    """The format of ``path`` by extension, else by its first non-blank line (see module doc)."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        name = name[:-3]
    fmt = _EXTENSIONS.get(os.path.splitext(name)[1].lower())
    if fmt is not None:
        return fmt
    where = _display_name(os.fspath(path))
    if first_line is None:
        raise InputError(where, None, "empty file: cannot detect its format")
    cols = first_line.rstrip("\r\n").split("\t")
    if first_line.startswith("#") and not 2 <= len(cols) <= 4:
        return "conllu"
    if len(cols) == 10:
        return "conllu" if ("-" in cols[0] or "." in cols[0]) else "conllx"
    if 2 <= len(cols) <= 4:
        return "malttab"
    raise InputError(
        where,
        None,
        f"cannot detect the format: first line has {len(cols)} tab-separated columns "
        "(10 for CoNLL-X/CoNLL-U, 2-4 for Malt-TAB); pass --format",
    )


def line_breaks(data: bytes) -> int:
    """Line breaks in ``data``: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (as the reader splits)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


class _Bytes(io.BufferedIOBase):
    """A readable byte stream: ``head`` (bytes already taken from ``stream``), then the rest of
    ``stream``. It counts the bytes and line breaks it has handed out, so that a byte that
    cannot be decoded can be placed on its line (:meth:`line_of_error`)."""

    def __init__(self, stream: BinaryIO, head: bytes = b"") -> None:
        super().__init__()
        self._stream = stream
        self._head = head
        self._read1 = getattr(stream, "read1", stream.read)
        self._handed = 0
        self._breaks = 0
        self._cr = False  # whether the last byte handed out was \r

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        if self._head:
            cut = len(self._head) if size < 0 else size
            data, self._head = self._head[:cut], self._head[cut:]
            return self._count(data)
        return self._count(self._read1(size))

    def read(self, size: int | None = -1) -> bytes:
        head, self._head = self._head, b""
        if size is None or size < 0:
            return self._count(head + self._stream.read())
        head, self._head = head[:size], head[size:]
        rest = self._stream.read(size - len(head)) if size > len(head) else b""
        return self._count(head + rest)

    def _count(self, data: bytes) -> bytes:
        if data:
            self._handed += len(data)
            self._breaks += line_breaks(data) - (self._cr and data[:1] == b"\n")
            self._cr = data[-1:] == b"\r"
        return data

    def line_of_error(self, exc: UnicodeDecodeError) -> int | None:
        """The 1-based line of the byte ``exc`` could not decode, ``exc`` being raised by
        decoding the last bytes handed out (its ``object`` ends with them)."""
        bad = exc.object
        if not isinstance(bad, bytes) or len(bad) > self._handed:
            return None
        return self._breaks - line_breaks(bad[exc.start :]) + 1


def _read_start(stream: BinaryIO, size: int) -> bytes:
    """The first ``size`` bytes of ``stream`` (fewer at its end), however a pipe splits them."""
    head = b""
    while len(head) < size:
        more = stream.read(size - len(head))
        if not more:
            break
        head += more
    return head


@contextlib.contextmanager
def _open_read(path: str, encoding: str) -> Iterator[tuple[TextIO, _Bytes, bool]]:
    """A text stream over ``path`` (``-``: stdin), gunzipped when its first bytes are gzip's
    magic number (whatever its name); also the byte stream the text is decoded from and
    whether it is gzip. InputError if it cannot be opened or ``encoding`` is unknown."""
    where = _display_name(path)
    with contextlib.ExitStack() as stack:
        try:
            if path == "-":
                raw = getattr(sys.stdin, "buffer", None)
                if raw is None:
                    raise InputError(where, None, "cannot read: standard input is closed")
            else:
                raw = stack.enter_context(open(path, "rb"))
            head = _read_start(raw, len(_GZIP_MAGIC))
        except OSError as exc:
            raise InputError(where, None, f"cannot open: {exc.strerror or exc}") from None
        data = _Bytes(raw, head)
        gz = head == _GZIP_MAGIC
        if gz:
            data = _Bytes(stack.enter_context(gzip.GzipFile(fileobj=data, mode="rb")))
        try:
            text = io.TextIOWrapper(data, encoding=encoding, newline="")
        except LookupError:
            raise InputError(where, None, f"unknown text encoding {encoding!r}") from None
        stack.callback(text.close)  # closes only the _Bytes under it: stdin stays open
        yield text, data, gz


def read_conll(
    path: str | os.PathLike,
    fmt: str | None = None,
    encoding: str = "utf-8",
    require_heads: bool = True,
) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-X, CoNLL-U or Malt-TAB file (or of words alone, ``fmt``
    ``text``) one by one.

    ``path`` ``-`` reads stdin; gzip is recognized by its first bytes. ``fmt`` None detects
    the format (module doc), else is one of :data:`INPUT_FORMATS`. With
    ``require_heads=False`` a ``_`` HEAD (and 2-column Malt-TAB lines) read as head -1; text
    input needs it. An input without a non-blank line has no sentences. Raises
    :class:`InputError` naming the file and 1-based line of any malformed line.
    """
    name = os.fspath(path)
    if fmt is not None and fmt not in INPUT_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {INPUT_FORMATS}")
    if fmt == TEXT_FORMAT and require_heads:
        raise ValueError("text input has no heads: read it with require_heads=False")
    with _open_read(name, encoding) as (f, data, gz):
        yield from _read_text(f, data, gz, name, fmt, encoding, require_heads, 1)


def read_conll_block(
    block: bytes,
    path: str | os.PathLike,
    fmt: str | None = None,
    encoding: str = "utf-8",
    require_heads: bool = True,
    first_line: int = 1,
) -> Iterator[Sentence]:
    """:func:`read_conll` of ``block``, the bytes (gunzipped) of ``path`` from its line
    ``first_line`` on: the start of the file, or the start of a sentence that follows a blank
    line. Sentences and messages name ``path`` and its line numbers, as :func:`read_conll` of
    the whole file would; a block with a byte-order mark or leading blank lines must be the
    file's first (``first_line`` 1). Text input (one sentence a line, its sentences numbered
    from the file's start) is read from a whole file's bytes only (``first_line`` 1)."""
    name = os.fspath(path)
    if fmt == TEXT_FORMAT and first_line != 1:
        raise ValueError("text input is read from its start: first_line 1")
    if fmt == TEXT_FORMAT and require_heads:
        raise ValueError("text input has no heads: read it with require_heads=False")
    if fmt is not None and fmt not in INPUT_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {INPUT_FORMATS}")
    data = _Bytes(io.BytesIO(block))
    try:
        text = io.TextIOWrapper(data, encoding=encoding, newline="")
    except LookupError:
        raise InputError(_display_name(name), None,
                         f"unknown text encoding {encoding!r}") from None
    with text:
        yield from _read_text(text, data, False, name, fmt, encoding, require_heads, first_line)


def read_input_bytes(path: str | os.PathLike, encoding: str = "utf-8",
                     size: int = 1 << 18) -> Iterator[bytes]:
    """The bytes :func:`read_conll` decodes from ``path`` (``-``: stdin; gunzipped), in
    pieces of at most ``size``; InputError as :func:`read_conll` (unreadable file, unknown
    ``encoding``, corrupt gzip data)."""
    name = os.fspath(path)
    with _open_read(name, encoding) as (_, data, gz):
        try:
            while piece := data.read(size):
                yield piece
        except (OSError, EOFError, zlib.error) as exc:
            raise _read_error(_display_name(name), gz, exc) from None


def _read_error(where: str, gz: bool, exc: BaseException) -> InputError:
    """The InputError of a failed read (``gz``: of gzip data)."""
    if gz:
        return InputError(where, None, f"corrupt or truncated gzip data ({exc})")
    return InputError(where, None, f"cannot read: {getattr(exc, 'strerror', None) or exc}")


def _read_text(f: TextIO, data: _Bytes, gz: bool, name: str, fmt: str | None, encoding: str,
               require_heads: bool, first_line: int) -> Iterator[Sentence]:
    """The sentences of the text ``f`` decoded from ``data``, whose first line is line
    ``first_line`` of ``name`` (see :func:`read_conll`)."""
    where = _display_name(name)
    try:
        lines: Iterator[str] = iter(f)
        first = next(lines, "")
        bom = _BOM if first.startswith(_BOM) else ""
        first = first[len(bom) :]
        if first.startswith(_BOM_AS_8BIT):
            raise InputError(where, first_line, f"the file starts with a UTF-8 byte-order "
                             f"mark but is read as {encoding}; pass --encoding utf-8")
        head = [first]
        if fmt != TEXT_FORMAT and not first.strip():  # text needs no line to detect it by
            for line in lines:
                head.append(line)
                if line.strip():
                    break
            else:
                return  # empty, or only blank lines: no sentences
        try:
            fmt = fmt or detect_format(name, head[-1])
        except InputError as exc:  # the first non-blank line says no format
            raise InputError(where, first_line - 1 + len(head), exc.problem) from None
        reader: _SentenceReader | _TextReader
        if fmt == TEXT_FORMAT:
            reader = _TextReader(where, bom)
        else:
            reader = _SentenceReader(where, fmt, require_heads, bom)
        for lineno, line in enumerate(itertools.chain(head, lines), first_line):
            sent = reader.feed(line, lineno)
            if sent is not None:
                yield sent
        yield from reader.close()
    except UnicodeDecodeError as exc:
        hint = ""
        if codecs.lookup(encoding).name == "utf-8":
            hint = "; if the file is ISO-8859-1, pass --encoding latin-1"
        line = data.line_of_error(exc)
        raise InputError(where, None if line is None else first_line - 1 + line,
                         f"cannot decode as {encoding} ({exc.reason}){hint}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise _read_error(where, gz, exc) from None


class _SentenceReader:
    """Groups lines into sentences, validates them and builds the Sentences.

    A sentence runs from its first non-blank line to the first blank line after one of its
    data lines (word, multiword-token or empty-node lines; every Malt-TAB line), or to the end
    of the input: blank lines between comments before the first data line stay inside it.
    Blank lines before the first sentence (and a byte-order mark) are kept with the first
    sentence, blank lines after a sentence as its separator. Comment lines after the last
    sentence join the last sentence's separator, so each sentence is held back (``done``)
    until the next one has a data line.
    """

    def __init__(self, path: str, fmt: str, require_heads: bool, bom: str = "") -> None:
        self.path = path
        self.fmt = fmt
        self.require_heads = require_heads
        self.columns = _COLUMNS[fmt]
        self.lead: list[str] = []
        self.bom = bom
        self.done: Sentence | None = None
        self._reset()

    def _reset(self) -> None:
        self.lines: list[str] = []
        self.rows: list[list[str]] = []
        self.word_idx: list[int] = []
        self.sep_parts: list[str] = []
        self.has_data = False  # a line other than a comment
        self.mwt_end = 0  # the last word a multiword-token range covers (CoNLL-U)
        self.mwt_line = 0
        self.start = 0

    def error(self, lineno: int, problem: str) -> InputError:
        return InputError(self.path, lineno, problem)

    def feed(self, line: str, lineno: int) -> Sentence | None:
        """Take the next line; returns the previous sentence once it is known to be whole."""
        if not line.strip():
            if self.has_data:
                self.sep_parts.append(line)
            elif self.lines:
                self.lines.append(line)
            else:
                self.lead.append(line)
            return None
        if self.sep_parts:
            self.done = self._finish()
        self._add(line, lineno)
        if self.has_data and self.done is not None:
            done, self.done = self.done, None
            return done
        return None

    def close(self) -> list[Sentence]:
        """The sentences still held at the end of the input."""
        if self.has_data:
            last = self._finish()
            return [last] if self.done is None else [self.done, last]
        if self.lines:
            if self.done is None:
                raise self.error(self.start, "comment lines but no sentence (no word lines)")
            self.done._sep += "".join(self.lines)
        return [] if self.done is None else [self.done]

    def _add(self, line: str, lineno: int) -> None:
        """Take one non-blank line of the current sentence."""
        if not self.lines:
            self.start = lineno
        self.lines.append(line)
        text = line.rstrip("\r\n")
        if text[0] == _BOM:
            _check_no_bom(self.path, text, lineno)
        if text[0] == "#" and self.fmt != "malttab":
            return
        self.has_data = True
        cols = text.split("\t")
        if self.fmt == "malttab":
            if not 2 <= len(cols) <= 4 or (len(cols) == 2 and self.require_heads):
                want = "2-4" if not self.require_heads else "3 or 4"
                needs = "; this file needs a HEAD for every word" if len(cols) == 2 else ""
                raise self.error(
                    lineno,
                    f"expected {want} tab-separated columns (FORM POS HEAD [DEPREL]) "
                    f"for Malt-TAB, found {len(cols)}{needs}",
                )
            self._check_fields(cols, lineno)
            self.word_idx.append(len(self.lines) - 1)
            self.rows.append(cols)
            return
        if len(cols) != 10:
            raise self.error(
                lineno, f"expected 10 tab-separated columns for {self.fmt}, found {len(cols)}"
            )
        if "" in cols:
            self._check_fields(cols, lineno)
        tok = cols[0]
        n = len(self.rows)
        if tok == str(n + 1):
            self.word_idx.append(len(self.lines) - 1)
            self.rows.append(cols)
        elif "-" in tok:
            self._check_range(tok, n, lineno)
        elif "." in tok:
            self._check_empty_node(tok, n, lineno)
        elif (word := _decimal(tok)) is not None:
            what = "duplicate" if word <= n else "non-consecutive"
            raise self.error(lineno, f"{what} word ID {tok}: expected {n + 1}")
        else:
            raise self.error(
                lineno,
                f"malformed ID {tok!r}: expected the word ID {n + 1} (a plain decimal "
                f"integer), a multiword-token range such as {n + 1}-{n + 2} or an empty node "
                f"such as {n}.1",
            )

    def _check_fields(self, cols: list[str], lineno: int) -> None:
        if "" in cols:
            k = cols.index("")
            raise self.error(
                lineno, f"empty {self.columns[k]} field (column {k + 1}); write _ for no value"
            )

    def _check_range(self, tok: str, n: int, lineno: int) -> None:
        first, _, last = (_decimal(part) for part in tok.partition("-"))
        if first is None or last is None or first >= last:
            raise self.error(lineno, f"malformed multiword token range {tok!r}")
        if first != n + 1:
            raise self.error(
                lineno, f"multiword token range {tok} must start at the next word ID {n + 1}"
            )
        self.mwt_end = last
        self.mwt_line = lineno

    def _check_empty_node(self, tok: str, n: int, lineno: int) -> None:
        word, _, index = (_decimal(part) for part in tok.partition("."))
        if word is None or index is None or index == 0:
            raise self.error(lineno, f"malformed empty node ID {tok!r}")
        if word != n:
            raise self.error(
                lineno, f"empty node {tok} must follow word {word}; the last word is {n}"
            )

    def _finish(self) -> Sentence:
        """Validate the sentence read so far, return it and start a new one."""
        rows = self.rows
        n = len(rows)
        if n == 0:
            raise self.error(
                self.start, "sentence has no word lines (only multiword-token or empty-node lines)"
            )
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
        lines, word_idx = self.lines, self.word_idx
        if self.lead or self.bom:
            lines = self.lead + lines
            word_idx = [i + len(self.lead) for i in word_idx]
            lines[0] = self.bom + lines[0]
            self.lead, self.bom = [], ""
        sent = Sentence(
            self.fmt,
            form,
            lemma,
            upos,
            xpos,
            feats,
            heads,
            ["", *rels],
            lines,
            word_idx,
            "".join(self.sep_parts),
            self.path,
            self.start,
        )
        self._reset()
        return sent

    def _heads(self, head_str: list[str], n: int) -> np.ndarray:
        """HEADs as int32 [n+1] (-1 for ``_`` without require_heads); InputError naming the line
        of a HEAD that is not a plain decimal integer in 0..n."""
        heads = np.empty(n + 1, dtype=np.int32)
        heads[0] = -1
        if _PLAIN_HEADS.fullmatch("\t".join(head_str)):
            heads[1:] = [int(h) for h in head_str]
            if heads.max() <= n:
                return heads
        for i, h in enumerate(head_str):
            head = _decimal(h)
            if head is not None and head <= n:
                heads[i + 1] = head
            elif head is not None:
                raise self.error(self._line_of(i), f"HEAD {h} is out of range 0..{n}")
            elif h == "_" and not self.require_heads:
                heads[i + 1] = -1
            elif h == "_":
                raise self.error(
                    self._line_of(i),
                    f"HEAD is _ (none), but this file needs a HEAD (0..{n}) for every word",
                )
            else:
                blank = " or _" if not self.require_heads else ""
                raise self.error(
                    self._line_of(i),
                    f"HEAD {h!r} is not a word ID: expected a plain decimal integer "
                    f"0..{n}{blank}",
                )
        return heads

    def _line_of(self, i: int) -> int:
        """The line number of word i+1 (0-based i) of the current sentence."""
        return self.start + self.word_idx[i]


def _check_no_bom(path: str, text: str, lineno: int) -> None:
    """InputError unless the line ``text`` (not the file's first) lacks a leading U+FEFF."""
    if text.startswith(_BOM):
        raise InputError(path, lineno, "a byte-order mark (U+FEFF) starts this line; only the "
                         "start of a file may have one (were files concatenated?)")


class _TextReader:
    """Makes a CoNLL-U sentence of each line of text input that has a token (module doc)."""

    def __init__(self, path: str, bom: str = "") -> None:
        self.path = path
        self.bom = bom  # the input's byte-order mark, kept before the first sentence
        self.count = 0

    def feed(self, line: str, lineno: int) -> Sentence | None:
        """The sentence of one line, None for a blank one."""
        text = line.rstrip("\r\n")
        if len(text) > MAX_TEXT_LINE:
            raise InputError(self.path, lineno, f"line of {len(text)} characters: text input "
                             f"takes at most {MAX_TEXT_LINE} a line (one sentence)")
        _check_no_bom(self.path, text, lineno)
        tokens = [token for token in _WHITE_SPACE.split(text) if token]
        if not tokens:
            return None
        joined = " ".join(tokens)
        if bad := _CONTROL.search(joined):
            k = joined.count(" ", 0, bad.start())
            raise InputError(self.path, lineno, f"token {k + 1} ({tokens[k]!r}) holds the "
                             f"control character U+{ord(bad.group()):04X}; a word cannot")
        self.count += 1
        sent = Sentence.build(tokens, comments=[f"# sent_id = {self.count}", f"# text = {joined}"])
        sent._lines[0] = self.bom + sent._lines[0]
        self.bom = ""
        sent.source, sent.lineno = self.path, lineno
        return sent

    def close(self) -> list[Sentence]:
        """Nothing is held back: every sentence was returned by :meth:`feed`."""
        return []


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
    if sent._sep:  # blank lines (and comments after the last sentence of a file)
        return "" if sent._sep.endswith(("\n", "\r")) else nl
    return nl if last.endswith(("\n", "\r")) else nl + nl


def write_conll(
    sentences: Iterable[Sentence],
    path: str | os.PathLike | TextIO | None,
    encoding: str = "utf-8",
) -> None:
    """Write sentences as they were read (with any parse set by ``with_parse``).

    ``path`` None or ``-`` writes stdout; an open text stream is written to and left open. A
    path is written by :func:`dparse.outputs.open_output`: a regular file (``.gz`` compresses)
    whole or not at all, keeping its permissions; a device, FIFO or symlink target in place.
    """
    if path is not None and not isinstance(path, str | os.PathLike):
        path.writelines(_chunks(sentences))
        return
    with open_output(path, "w", encoding) as out:
        out.writelines(_chunks(sentences))
