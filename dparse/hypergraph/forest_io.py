"""The forest file format: many packed forests (:class:`Forest`) per file, read and written as a
stream, gzip-compressed when the name ends in ``.gz`` (read: recognized by its first bytes).

A UTF-8 text file of lines of fields separated by a space (read: spaces or tabs; line ends
``\n`` or ``\r\n``)::

    dparse-forest 1                              the format and its version: the first line
    sentence ID N V E GOAL LABELED               one forest: its id, n, #vertices, #hyperedges,
                                                 the goal vertex, 1 if labeled else 0
    v FIRST LAST HEAD                            V lines: vertex 0, 1, ... (span and head word)
    e VERTEX TAIL0 TAIL1 ARCHEAD ARCMOD [LABEL] SCORE
                                                 E lines in order: the hyperedge's head vertex,
                                                 tails (-1 padded), arc ((-1 -1) none), the label
                                                 id only when LABELED, and its score

then the next ``sentence`` line, and so on; nothing else (no blank lines, no comments). The
sentence id is any non-empty string without whitespace (the writer's default: the 1-based
position). Scores are written as Python's shortest round-trip repr, so a read gives back every
score bit for bit. The vertex and hyperedge lines are formatted and parsed in C
(dparse/hypergraph/forest_text.pyx). Every forest read is checked with :meth:`Forest.validate`; any
problem is an :class:`InputError` naming the file, the 1-based line and the problem.
"""

from __future__ import annotations

import itertools
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO

import numpy as np

from dparse.conll import _open_read
from dparse.errors import DparseError, InputError
from dparse.hypergraph.forest import Forest
from dparse.hypergraph.forest_text import format_edges, format_vertices, parse_lines
from dparse.outputs import open_output

__all__ = ["MAGIC", "ForestWriter", "forest_writer", "read_forests", "write_forests"]

#: The first line of every forest file.
MAGIC = "dparse-forest 1"
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]?(inf|nan)", re.I)


def _sentence_id(sid: object) -> str:
    text = str(sid)
    if not text or len(text.split()) != 1 or text != text.strip():
        raise DparseError(f"forest sentence id {text!r} must be non-empty, without whitespace")
    return text


def format_forest(sid: str, forest: Forest) -> str:
    """The lines of one forest (its ``sentence`` line first), newline-terminated."""
    labeled = forest.edge_label is not None
    c = np.ascontiguousarray
    return (f"sentence {_sentence_id(sid)} {forest.n} {forest.num_vertices} "
            f"{forest.num_edges} {forest.goal} {int(labeled)}\n"
            + format_vertices(c(forest.vertex_span), c(forest.vertex_head))
            + format_edges(c(forest.edge_head), c(forest.edge_tails), c(forest.edge_arc),
                           c(forest.edge_label) if labeled else None, c(forest.edge_score)))


class ForestWriter:
    """Writes forests one by one to an open text stream (the magic line first)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._count = 0
        stream.write(MAGIC + "\n")

    def write(self, forest: Forest, sid: object | None = None) -> None:
        """Append ``forest`` (validated) under ``sid`` (default: its 1-based position)."""
        forest.validate()
        self._count += 1
        self._stream.write(format_forest(_sentence_id(self._count if sid is None else sid),
                                         forest))


@contextmanager
def forest_writer(path: str | os.PathLike | None) -> Iterator[ForestWriter]:
    """A :class:`ForestWriter` on ``path`` (``-`` or None: stdout) via dparse.outputs: the file
    appears whole when the block ends normally, and is left as it was if the block raises."""
    with open_output(path, "w") as out:
        yield ForestWriter(out)


def write_forests(path: str | os.PathLike | None,
                  forests: Iterable[Forest | tuple[object, Forest]]) -> int:
    """Write forests (or (sentence id, forest) pairs) to ``path``; returns how many."""
    count = 0
    with forest_writer(path) as writer:
        for item in forests:
            sid, forest = item if isinstance(item, tuple) else (None, item)
            writer.write(forest, sid)
            count += 1
    return count


def _block_error(block: list[str], lineno: int, where: str, sid: str, kind: str,
                 width: int, count: int) -> InputError:
    """The error of the first bad line of ``block`` (lines lineno+1, ...), or of truncation."""
    what = "a vertex" if kind == "v" else "an edge"
    for at, line in enumerate(block, lineno + 1):
        fields = line.split()
        if len(fields) != width or not line.startswith(kind + " "):
            return InputError(where, at, f"sentence {sid}: expected {what} line of {width} "
                              f"fields starting with {kind!r}, got {line.rstrip()!r}")
        for x in fields[1:-1] if kind == "e" else fields[1:]:
            if not _INT.fullmatch(x):
                return InputError(where, at, f"sentence {sid}: {x!r} is not an integer")
            if not -(2**31) <= int(x) < 2**31:
                return InputError(where, at, f"sentence {sid}: number {x} out of range")
        if kind == "e" and not _FLOAT.fullmatch(fields[-1]):
            return InputError(where, at, f"sentence {sid}: bad score {fields[-1]!r}")
    if len(block) < count:
        return InputError(where, lineno + len(block) + 1, f"the file ends inside sentence "
                          f"{sid} (truncated): expected {what} line")
    return InputError(where, lineno + 1, f"sentence {sid}: unreadable {kind!r} lines")


def _read_block(lines: Iterator[str], lineno: int, where: str, sid: str, kind: str,
                width: int, count: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The next ``count`` lines (after line ``lineno``) of kind ``kind`` ("v" or "e") and
    ``width`` fields, parsed in bulk: (int32 [count, ints] of the integer fields, float64
    [count] of the scores for "e", else None). InputError naming the first bad line."""
    block = list(itertools.islice(lines, count))
    if len(block) == count:
        parsed = parse_lines("".join(block), count, kind, width - 1 - (kind == "e"), kind == "e")
        if parsed is not None:
            return parsed
    raise _block_error(block, lineno, where, sid, kind, width, count)


def read_forests(path: str | os.PathLike) -> Iterator[tuple[str, Forest]]:
    """Yield (sentence id, forest) for each forest of a forest file (``-``: stdin), in order.

    Raises :class:`InputError` (file, 1-based line, problem) on a malformed or truncated file
    or a forest that breaks an invariant of :meth:`Forest.validate`."""
    name = os.fspath(path)
    where = "<stdin>" if name == "-" else name
    with _open_read(name, "utf-8") as (text, data, gz):
        lineno = 0
        try:
            lines = iter(text)
            first = next(lines, None)
            if first is None:
                raise InputError(where, None, "empty file: not a forest file")
            lineno = 1
            if first.rstrip("\r\n") != MAGIC:
                raise InputError(where, 1, f"not a forest file: the first line must be {MAGIC!r}")
            while (line := next(lines, None)) is not None:
                lineno += 1
                fields = line.split()
                if len(fields) != 7 or fields[0] != "sentence":
                    raise InputError(where, lineno, "expected 'sentence ID N V E GOAL LABELED'"
                                     f", got {line.rstrip()!r}")
                start, sid = lineno, fields[1]
                try:
                    n, V, E, goal, labeled = (int(x) for x in fields[2:])
                except ValueError:
                    raise InputError(where, lineno, "sentence line: expected integers, got "
                                     f"{' '.join(fields[2:])!r}") from None
                if V < 1 or E < 1 or labeled not in (0, 1):
                    raise InputError(where, lineno, "sentence line: V and E must be positive, "
                                     "LABELED 0 or 1")
                vs, _ = _read_block(lines, lineno, where, sid, "v", 4, V)
                lineno += V
                width = 8 if labeled else 7
                es, scores = _read_block(lines, lineno, where, sid, "e", width, E)
                lineno += E
                forest = Forest(
                    n=n, vertex_span=np.ascontiguousarray(vs[:, :2]),
                    vertex_head=np.ascontiguousarray(vs[:, 2]),
                    edge_head=np.ascontiguousarray(es[:, 0]),
                    edge_tails=np.ascontiguousarray(es[:, 1:3]),
                    edge_arc=np.ascontiguousarray(es[:, 3:5]),
                    edge_score=scores, goal=goal,
                    edge_label=np.ascontiguousarray(es[:, 5]) if labeled else None)
                try:
                    forest.validate()
                except DparseError as exc:
                    raise InputError(where, start, f"sentence {sid}: {exc}") from None
                yield sid, forest
        except UnicodeDecodeError as exc:
            raise InputError(where, data.line_of_error(exc),
                             f"cannot decode as UTF-8 ({exc.reason})") from None
        except (OSError, EOFError, zlib.error) as exc:
            problem = (f"corrupt or truncated gzip data ({exc})" if gz
                       else f"cannot read: {getattr(exc, 'strerror', None) or exc}")
            raise InputError(where, None, problem) from None
