"""Pretrained word vectors (``neural.vectors``): reading word2vec and fastText files.

Two formats, told apart by the file's name: a name ending in ``.bin`` is word2vec's binary
format, any other name the text format of word2vec and fastText (``.vec``, ``.txt``).

- Text (UTF-8): an optional header line ``COUNT DIM`` (a first line of exactly two integers),
  then one word a line, ``WORD V1 ... VDIM`` separated by single spaces (a trailing space, as
  fastText writes, is allowed; blank lines are skipped). Without a header, DIM is the first
  line's number of values.
- Binary: the header line ``COUNT DIM``, then COUNT entries, each the word's UTF-8 bytes up to
  a space, DIM little-endian float32 and optionally a newline.

Words are normalized as the neural vocabulary normalizes them
(:func:`dparse.vocab.normalize`); the first entry of a normalized form wins (files are sorted by
frequency) and reading stops once ``limit`` distinct forms are kept, so the rest of the file is
neither read nor checked. A malformed file is a DparseError naming the file and the line (text)
or the entry and its byte offset (binary): a wrong number of values, a value that is not a
finite number, a truncated file, a header whose count or dimension disagrees with the entries,
a file without vectors. numpy only: reading needs no torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from dparse.errors import DparseError, InputError
from dparse.vocab import normalize

CHUNK = 1 << 20  # bytes of a binary file read at a time
MAX_WORD_BYTES = 10_000  # a binary entry's word longer than this: not a word2vec file


@dataclass
class Vectors:
    """``words`` (normalized, distinct, in the file's order) and their vectors ``matrix``
    float32 [len(words), dim]."""

    words: list[str]
    matrix: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])


def read_vectors(path: Path, limit: int) -> Vectors:
    """The first ``limit`` distinct normalized words of the vectors file ``path`` and their
    vectors (binary if its name ends in ``.bin``, text otherwise); DparseError naming the file
    and where for a malformed or missing one."""
    try:
        with open(path, "rb") as f:
            if path.name.endswith(".bin"):
                entries = _binary_entries(f, str(path))
            else:
                entries = _text_entries(f, str(path))
            words: dict[str, int] = {}
            rows: list[np.ndarray] = []
            for word, vector in entries:
                form = normalize(word)
                if form not in words:
                    words[form] = len(rows)
                    rows.append(vector)
                    if len(rows) == limit:
                        break
    except OSError as exc:
        raise DparseError(f"{path}: cannot read the vectors file: {exc.strerror or exc}"
                          ) from None
    if not rows:
        raise DparseError(f"{path}: no word vectors in the file")
    return Vectors(list(words), np.stack(rows).astype(np.float32, copy=False))


def _header(line: str) -> tuple[int, int] | None:
    """(COUNT, DIM) of a header line, or None if the line is not two integers."""
    parts = line.split(" ")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _text_entries(f: BinaryIO, path: str) -> Iterator[tuple[str, np.ndarray]]:
    """(word, float32 [dim]) of each entry of a text vectors file, in order."""
    count = dim = None
    entries = 0
    for number, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8").rstrip("\r\n").rstrip(" ")
        except UnicodeDecodeError as exc:
            raise InputError(path, number, f"not UTF-8 text ({exc.reason}; a binary word2vec "
                             "file's name must end in .bin)") from None
        if not line.strip():
            continue
        if number == 1 and (header := _header(line)) is not None:
            count, dim = header
            if count < 1 or dim < 1:
                raise InputError(path, number, f"the header '{line}' gives no vectors")
            continue
        parts = line.split(" ")
        if dim is None:
            dim = len(parts) - 1
            if dim < 1:
                raise InputError(path, number, "a word without values")
        if len(parts) != dim + 1:
            raise InputError(path, number, f"{len(parts) - 1} values, expected {dim}"
                             + (" (the header's dimension)" if count is not None else
                                " (the first line's)"))
        if not parts[0]:
            raise InputError(path, number, "an empty word")
        try:
            vector = np.array(parts[1:], dtype=np.float32)
        except ValueError:
            bad = [p for p in parts[1:] if not _is_number(p)] or parts[1:]
            raise InputError(path, number, f"the value {bad[0]!r} is not a number") from None
        if not np.isfinite(vector).all():
            raise InputError(path, number, "a value that is not a finite number "
                             f"({vector[~np.isfinite(vector)][0]})")
        entries += 1
        if count is not None and entries > count:
            raise InputError(path, number, f"more entries than the header's count {count}")
        yield parts[0], vector
    if count is not None and entries < count:
        raise InputError(path, None, f"the header's count is {count} but the file holds "
                         f"{entries} entries")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class _Bytes:
    """A binary file read in chunks, with the offset of the next unread byte (``offset``)
    and whether a read found the file's end (``eof``)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.buf = b""
        self.pos = 0
        self.offset = 0
        self.eof = False

    def _fill(self) -> bool:
        """Read another chunk; False at the end of the file."""
        more = self.f.read(CHUNK)
        if not more:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + more
        self.pos = 0
        return True

    def until(self, byte: bytes, limit: int) -> bytes | None:
        """The bytes up to the next ``byte`` (consumed, not returned); None if the file or
        ``limit`` bytes end first."""
        while (end := self.buf.find(byte, self.pos, self.pos + limit + 1)) < 0:
            if len(self.buf) - self.pos > limit or not self._fill():
                return None
        out = self.buf[self.pos:end]
        self.offset += end + 1 - self.pos
        self.pos = end + 1
        return out

    def take(self, n: int) -> bytes | None:
        """The next ``n`` bytes; None if the file ends first."""
        while len(self.buf) - self.pos < n:
            if not self._fill():
                return None
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        self.offset += n
        return out

    def skip_newlines(self) -> None:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] == 0x0A:
                self.pos += 1
                self.offset += 1
            if self.pos < len(self.buf) or not self._fill():
                return

    def at_end(self) -> bool:
        return self.pos >= len(self.buf) and not self._fill()


def _binary_entries(f: BinaryIO, path: str) -> Iterator[tuple[str, np.ndarray]]:
    """(word, float32 [dim]) of each entry of a word2vec binary file, in order."""
    data = _Bytes(f)
    first = data.until(b"\n", 100)
    if first is None and data.eof and not data.buf:
        raise DparseError(f"{path}: empty: no word vectors in the file")
    header = None
    if first is not None:
        try:
            header = _header(first.decode("ascii"))
        except UnicodeDecodeError:
            header = None
    if header is None or header[0] < 1 or header[1] < 1:
        raise DparseError(f"{path}: byte 0: not a word2vec binary file (its first line must "
                          "be 'COUNT DIM', two positive integers; a text file's name must not "
                          "end in .bin)")
    count, dim = header
    for entry in range(1, count + 1):
        data.skip_newlines()
        start = data.offset
        where = f"{path}: entry {entry} (byte {start})"
        raw = data.until(b" ", MAX_WORD_BYTES)
        if raw is None:
            if len(data.buf) - data.pos <= MAX_WORD_BYTES:  # the file ended first
                raise DparseError(f"{where}: truncated: the file ends after {entry - 1} "
                                  f"entries, but the header's count is {count}")
            raise DparseError(f"{where}: no word ending in a space within {MAX_WORD_BYTES} "
                              "bytes: not a word2vec binary file")
        try:
            word = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DparseError(f"{where}: the word is not UTF-8 ({exc.reason}; or the header's "
                              f"dimension {dim} disagrees with the entries)") from None
        if not word:
            raise DparseError(f"{where}: an empty word")
        values = data.take(4 * dim)
        if values is None:
            raise DparseError(f"{where}: truncated: the file ends inside the vector of "
                              f"{word!r} ({dim} float32 expected)")
        vector = np.frombuffer(values, dtype="<f4").astype(np.float32)
        if not np.isfinite(vector).all():
            raise DparseError(f"{where}: the vector of {word!r} has a value that is not a "
                              "finite number (a header dimension that disagrees with the "
                              "entries?)")
        yield word, vector
    data.skip_newlines()
    if not data.at_end():
        raise DparseError(f"{path}: byte {data.offset}: more data after the header's count of "
                          f"{count} entries (a header that disagrees with the entries?)")
