"""Parsing a corpus with several worker processes, or one contiguous shard of it.

:class:`ParallelParser` hands the input to ``jobs`` worker processes in blocks of about
``chunk_size`` sentences, at most ``2 * jobs`` blocks in flight, and yields the parsed blocks
in input order: memory is bounded by the blocks in flight, whatever the corpus size. Each
worker loads the model once (:class:`dparse.parsers.ParserSpec`), as ``dparse parse``
would.

The parent's share of the work is kept small, so that two jobs can come close to twice one
job's speed: :meth:`ParallelParser.parse_file` does not read sentences at all. It cuts the
input's bytes (gunzipped) into blocks of whole sentences with one regular expression
(:func:`sentence_blocks`), and each worker reads its block (:func:`read_conll_block`, line
numbers those of the whole file), parses it and sends back its text as :func:`write_conll`
writes it, which the parent writes out. A block ends only where a blank line follows a line
that is surely a data line (its first character printable ASCII, or in UTF-8 any
character but white space; not ``#``) and precedes a line that is surely not blank, and only
if a data line follows it: the reader of the whole file starts a
new sentence there too, so the blocks' texts joined are the one-job output byte for byte
(comments, multiword lines, CRLF, byte-order mark, missing final newline), and a
file's first error is the first block's error that the parent meets. Encodings in which a
byte ``\n`` is not always a line break (UTF-16, ISO-2022) and ``--shard`` use
:meth:`ParallelParser.parse`, which reads sentences in the parent and sends them to the
workers.

On Linux the parent loads the model once and forks the workers at once, before it opens the
input or the output: every worker starts parsing within milliseconds holding the parent's model
(its arrays shared copy-on-write), instead of importing dparse and loading the model again
while the first worker already parses (about 0.5 s of CPU a worker, taken from the other
core on a two-core machine). Elsewhere (no safe ``fork``) workers are started with ``spawn`` and
each loads the model. Workers ignore SIGINT (a Ctrl-C reaches the parent, which terminates
them) and die of SIGTERM. A worker's :class:`DparseError` is raised again in the parent; a
worker that dies (killed, out of memory) is a :class:`DparseError`.

:func:`parse_with_workers` times the same span as ``dparse parse`` with one job does for its
wall figure (``ParseTimer.wall``): reading, parsing and writing the whole output, model loading
and worker start excluded.

:class:`Shard` ``I/N`` selects sentences ``[(I-1)*S//N, I*S//N)`` of the S in the input, so
that the outputs of shards 1..N, concatenated in order (``cat``), are the one-job output.
"""

from __future__ import annotations

import codecs
import functools
import io
import re
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from types import TracebackType
from typing import TYPE_CHECKING

from dparse.conll import (
    Sentence,
    line_breaks,
    read_conll,
    read_conll_block,
    read_input_bytes,
    write_conll,
)
from dparse.errors import DparseError
from dparse.outputs import open_output
from dparse.parsers import LoadedParser, ParserSpec
from dparse.timer import ParseTimer

if TYPE_CHECKING:
    from concurrent.futures import Future

# sentences per task: ~800 tokens, ~25 ms of first-order parsing, well above a task's fixed
# cost (about a millisecond), small enough to keep what is in flight small and to share
# a small input evenly (en_ewt test: 33 blocks; 256 saved ~1% of CPU on 400,000 tokens but
# left the workers up to 0.2 s apart at the end)
DEFAULT_CHUNK = 64
# The first bytes of a line that is surely not blank (str.strip leaves something): printable
# ASCII, or in UTF-8 also a character that is not white space (the lookahead lists every
# white-space character past ASCII, U+0085 to U+3000) nor a byte-order mark (which only
# the first line of a file may start with: a block's first line must not). The character
# must be whole: a piece of the input may end inside it.
_ASCII_START = rb"[\x21-\x7e]"
_UTF8_START = (rb"(?:[\x21-\x7e]|(?!\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
               rb"|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf)"
               rb"(?:[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}))")


@functools.cache
def _block_patterns(utf8: bool) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """Where a block may end, and a line that is surely a data line (not blank, not ``#``).
    A block may end after a line that is surely a data line and one or more blank lines
    (ASCII white space), before a line that is surely not blank: a match runs from the line
    break before the data line to the one before that line, exclusive (so that the search
    goes from line break to line break, and a match can start where the last one ended)."""
    start = _UTF8_START if utf8 else _ASCII_START
    blank = rb"[ \t\r\x0b\x0c]*"
    end = (rb"\n(?!#)" + start + rb"[^\n]*\n(?:" + blank + rb"\n)*" + blank
           + rb"(?=\n" + start + rb")")
    return re.compile(end), re.compile(rb"^(?!#)" + start, re.MULTILINE)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count`` contiguous pieces of an input."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"I/N"`` with 1 <= I <= N; DparseError otherwise."""
        head, sep, tail = text.partition("/")
        if not (sep and head.strip().isdigit() and tail.strip().isdigit()):
            raise DparseError(f"--shard {text!r}: expected I/N, e.g. 2/7")
        index, count = int(head), int(tail)
        if not 1 <= index <= count:
            raise DparseError(f"--shard {text!r}: I must be between 1 and N")
        return cls(index, count)

    def bounds(self, total: int) -> tuple[int, int]:
        """The sentence range ``[start, stop)`` of this shard of ``total`` sentences."""
        return (self.index - 1) * total // self.count, self.index * total // self.count

    def select(self, sentences: Iterable[Sentence], total: int) -> Iterator[Sentence]:
        """The sentences of this shard, out of ``total`` (:func:`count_sentences`)."""
        start, stop = self.bounds(total)
        return islice(sentences, start, stop)


def count_sentences(path: str, fmt: str | None, encoding: str) -> int:
    """How many sentences :func:`read_conll` reads from ``path`` (a file, not stdin)."""
    if path == "-":
        raise DparseError("--shard needs an INPUT file: standard input cannot be read twice")
    return sum(1 for _ in read_conll(path, fmt=fmt, encoding=encoding, require_heads=False))


def sentence_blocks(pieces: Iterable[bytes], sentences: int, utf8: bool = False
                    ) -> Iterator[bytes]:
    """``pieces`` of an input (bytes, joined the whole input; ``utf8``: in UTF-8, else in
    an encoding that passes :func:`splits_as_bytes`) cut into blocks of whole sentences, each
    of about ``sentences`` sentences (more where sentence ends are not sure, see the module
    doc); always at least one block, empty for an empty input."""
    block_end, data_line = _block_patterns(utf8)
    buf = bytearray()
    start = 0  # where the current block starts in buf
    resume = 0  # where to look for the next block end
    seen = 0  # block ends found in the current block
    cut: int | None = None  # where the current block ends, once a data line follows
    for piece in pieces:
        drop = min(start, resume)  # what the blocks and the search are done with
        if drop:
            del buf[:drop]
            start, resume = start - drop, resume - drop
            cut = None if cut is None else cut - drop
        buf += piece
        for match in block_end.finditer(buf, resume):
            if cut is not None:  # this match's data line follows the cut
                yield bytes(buf[start:cut])
                start, cut, seen = cut, None, 0
            seen += 1
            resume = match.end()
            if seen >= sentences:
                cut = resume + 1
    if cut is not None and data_line.search(buf, cut):
        yield bytes(buf[start:cut])
        start = cut
    yield bytes(buf[start:])


@dataclass(frozen=True)
class Block:
    """A block of whole sentences of the file ``path`` (bytes, gunzipped), starting at its
    line ``first_line``; ``fmt`` the file's format (None: detect, for a first block)."""

    data: bytes
    path: str
    fmt: str | None
    encoding: str
    first_line: int

    def sentences(self) -> Iterator[Sentence]:
        """The block's sentences, as :func:`read_conll` of the whole file gives them."""
        return read_conll_block(self.data, self.path, self.fmt, self.encoding,
                                require_heads=False, first_line=self.first_line)


def file_blocks(path: str, fmt: str | None, encoding: str, sentences: int) -> Iterator[Block]:
    """The file ``path`` (``-``: stdin) in blocks of about ``sentences`` sentences
    (:func:`sentence_blocks`), each with the file's format: the parent reads the first
    sentence to detect it; if that fails, the first block goes alone (its worker reports
    the error, after any error loading the model, as one job would)."""
    first_line = 1
    utf8 = codecs.lookup(encoding).name == "utf-8"
    for data in sentence_blocks(read_input_bytes(path, encoding), sentences, utf8):
        if first_line == 1 and fmt is None:
            block = Block(data, path, None, encoding, first_line)
            try:
                first = next(block.sentences(), None)
            except DparseError:
                yield block
                return
            fmt = None if first is None else first.fmt
        yield Block(data, path, fmt, encoding, first_line)
        first_line += line_breaks(data) if b"\r" in data else data.count(b"\n")


def splits_as_bytes(encoding: str) -> bool:
    """Whether an input in ``encoding`` can be cut into blocks by its bytes: line breaks,
    tabs, ``#`` and digits are their ASCII bytes, and no shift state (ISO-2022, HZ) can
    make them mean something else."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    probe = "\t\n\r\x0b\x0c !#-.0123456789_~"
    return (not name.startswith(("iso2022", "hz", "utf-7"))
            and probe.encode(encoding, "replace") == probe.encode("ascii"))


@dataclass
class ChunkResult:
    """A worker's answer for one chunk: the parsed sentences as file text, its timer and
    decoder, and certified-decoder counts (``calls``, ``certified``; zero for other
    decoders)."""

    text: str
    timer: ParseTimer
    decoder_name: str
    calls: int = 0
    certified: int = 0
    sentences: list[Sentence] | None = None  # the parsed sentences themselves, when asked for


class _Worker:
    """The state of a worker process: its parser, or the error that loading it raised."""

    parser: LoadedParser | None = None
    error: str | None = None
    decoder: object = None


def _worker_signals() -> None:
    """A worker ignores SIGINT (the parent handles Ctrl-C) and dies of SIGTERM (the parent's
    terminate), whatever handlers a forked worker inherited."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _install_parser(parser: LoadedParser) -> None:
    """Initializer of a forked worker (``parser`` inherited, not pickled); also the end of a
    spawned worker's start."""
    _worker_signals()
    _Worker.parser = parser
    from dparse.decoders import find_decoder

    decoder = find_decoder(parser.decoder_name)
    if hasattr(decoder, "certified_share"):
        _Worker.decoder = decoder


def _init_spawned_worker(spec: ParserSpec) -> None:
    """Initializer of a spawned worker: load the parser, or keep the error for the first
    chunk (so that it is raised in the parent in input order)."""
    _worker_signals()
    try:
        parser = spec.load()
    except DparseError as exc:
        _Worker.error = str(exc)
        return
    _install_parser(parser)


def _ready() -> None:
    """A task that does nothing: submitted once, it makes the pool start its workers."""


def _parse_block(block: Block) -> ChunkResult:
    """Read, parse and write one block in a worker (see :func:`_parse_chunk`)."""
    return _parse_chunk(block.sentences())


def _parse_chunk_sentences(sentences: Iterable[Sentence]) -> ChunkResult:
    """:func:`_parse_chunk` giving back the parsed sentences rather than their text."""
    return _parse_chunk(sentences, as_text=False)


def _parse_chunk(sentences: Iterable[Sentence], as_text: bool = True) -> ChunkResult:
    """Parse one chunk in a worker (``as_text``: into its file text, else the parsed
    sentences). Errors come back as a plain DparseError or RuntimeError (an exception with
    its own constructor arguments may not survive pickling)."""
    if _Worker.parser is None:
        raise DparseError(_Worker.error or "the parse worker has no parser")
    timer = ParseTimer()
    decoder = _Worker.decoder
    before = (decoder.calls, decoder.certified) if decoder is not None else (0, 0)
    text = io.StringIO()
    parsed = None
    try:
        if as_text:
            write_conll(_Worker.parser.parse(sentences, timer), text)
        else:
            parsed = list(_Worker.parser.parse(sentences, timer))
    except DparseError as exc:
        raise DparseError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - sent to the parent as an internal error
        raise RuntimeError(f"parse worker: {type(exc).__name__}: {exc}") from None
    result = ChunkResult(text.getvalue(), timer, _Worker.parser.decoder_name, sentences=parsed)
    if decoder is not None:
        result.calls = decoder.calls - before[0]
        result.certified = decoder.certified - before[1]
    return result


@dataclass
class ParallelStats:
    """What the workers did: summed timers and certified-decoder counts."""

    timer: ParseTimer = field(default_factory=ParseTimer)
    decoder_name: str | None = None
    calls: int = 0
    certified: int = 0

    def add(self, result: ChunkResult) -> None:
        self.decoder_name = result.decoder_name
        t = self.timer
        t.sentences += result.timer.sentences
        t.tokens += result.timer.tokens
        t.encode += result.timer.encode
        t.score += result.timer.score
        t.decode += result.timer.decode
        t.tag += result.timer.tag
        self.calls += result.calls
        self.certified += result.certified


def fork_safe() -> bool:
    """Whether workers are forked from the parent (Linux) rather than spawned."""
    return sys.platform == "linux"


class ParallelParser:
    """A pool of ``jobs`` worker processes parsing with ``spec`` (forked workers take
    ``parser``, the spec's parser loaded already, if given); a context manager (leaving it
    stops the workers, terminating them after an error or an interrupt)."""

    def __init__(self, spec: ParserSpec, jobs: int, chunk_size: int = DEFAULT_CHUNK,
                 parser: LoadedParser | None = None) -> None:
        if jobs < 1:
            raise DparseError(f"--jobs {jobs}: must be at least 1")
        if chunk_size < 1:
            raise DparseError(f"chunk size {chunk_size}: must be at least 1")
        self.jobs = jobs
        self.chunk_size = chunk_size
        self.stats = ParallelStats()
        # imported here: a one-job parse does not load the process-pool machinery
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if fork_safe():
            parser = parser or spec.load()  # its errors come before any file is opened
            self._pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_install_parser, initargs=(parser,))
            try:
                self._pool.submit(_ready).result()  # a fork pool starts all its workers now
            except BaseException:
                self.__exit__(*sys.exc_info())
                raise
        else:
            self._pool = ProcessPoolExecutor(jobs,
                                             mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_init_spawned_worker, initargs=(spec,))

    def __enter__(self) -> ParallelParser:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self._terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _terminate(self) -> None:
        # concurrent.futures has no public way to stop running workers: end them by pid
        # (only this pool's own processes).
        for process in list(getattr(self._pool, "_processes", {}).values()):
            if process.is_alive():
                process.terminate()

    def parse(self, sentences: Iterable[Sentence]) -> Iterator[str]:
        """The parsed ``sentences`` in input order, as file text chunk by chunk, streaming
        (see the module doc)."""
        return (result.text for result in self._run(_parse_chunk, self._chunks(sentences)))

    def parse_sentences(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """The parsed ``sentences`` in input order, as :meth:`parse` parses them, streaming."""
        for result in self._run(_parse_chunk_sentences, self._chunks(sentences)):
            yield from result.sentences or ()

    def _chunks(self, sentences: Iterable[Sentence]) -> Iterator[list[Sentence]]:
        """``sentences`` in lists of ``chunk_size``; even no sentences give one (empty) list,
        so that a worker that cannot load says so."""
        source = iter(sentences)
        chunks = iter(lambda: list(islice(source, self.chunk_size)), [])
        return chain([next(chunks, [])], chunks)

    def parse_file(self, path: str, fmt: str | None, encoding: str) -> Iterator[str]:
        """The parsed sentences of the file ``path`` (``-``: stdin), as :meth:`parse` gives
        them, the parent only cutting the input into blocks (module doc); ``encoding`` must
        pass :func:`splits_as_bytes`."""
        return (result.text for result in
                self._run(_parse_block, file_blocks(path, fmt, encoding, self.chunk_size)))

    def _run(self, task: Callable[[object], ChunkResult], items: Iterator[object]
             ) -> Iterator[ChunkResult]:
        """``task`` of each item in workers, at most ``2 * jobs`` in flight; the results in
        order."""
        from concurrent.futures.process import BrokenProcessPool

        pending: deque[Future[ChunkResult]] = deque()
        try:  # a dead worker breaks the pool: submit raises, as do the futures
            for item in items:
                pending.append(self._pool.submit(task, item))
                if len(pending) >= 2 * self.jobs:
                    yield self._collect(pending.popleft())
            while pending:
                yield self._collect(pending.popleft())
        except BrokenProcessPool:
            raise DparseError("a parse worker process died (killed, or out of memory); "
                              "an output file is left as it was") from None

    def _collect(self, future: Future[ChunkResult]) -> ChunkResult:
        result = future.result()
        self.stats.add(result)
        return result


def parse_with_workers(spec: ParserSpec, source: Iterable[Sentence] | str, output: str,
                       encoding: str, jobs: int, chunk_size: int = DEFAULT_CHUNK,
                       fmt: str | None = None, parser: LoadedParser | None = None
                       ) -> ParallelStats:
    """Parse ``source`` (sentences, or the path of a file in format ``fmt``, None: detected)
    with ``jobs`` workers (:class:`ParallelParser`, ``parser`` the spec's if loaded already)
    into ``output`` (written whole or not at all, by :func:`dparse.outputs.open_output`); the
    workers' summed inference times, as one job reports them, with ``timer.wall`` the seconds
    from the first byte read to the output written whole (model loading and worker start
    excluded)."""
    with ParallelParser(spec, jobs, chunk_size, parser) as pool:
        started = time.perf_counter()
        with open_output(output, "w", encoding) as out:
            if not isinstance(source, str):
                out.writelines(pool.parse(source))
            elif splits_as_bytes(encoding):
                out.writelines(pool.parse_file(source, fmt, encoding))
            else:
                out.writelines(pool.parse(read_conll(source, fmt, encoding,
                                                     require_heads=False)))
        pool.stats.timer.wall = time.perf_counter() - started
    return pool.stats
