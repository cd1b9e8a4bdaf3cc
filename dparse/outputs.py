"""The one writer of output files: atomic where the path is a regular file, in place otherwise.

Every file dparse writes (parsed CoNLL, reports, prune dictionaries, configs, the files of a
model directory) goes through :func:`open_output` (or :func:`write_text` / :func:`write_bytes`).
What happens depends on what the path names:

- a regular file, or nothing yet: the content goes to a hidden temporary file in the same
  directory (``.NAME.dparse-PID-XXXXXXXX.tmp``) that is flushed, fsynced, given the original's
  permission bits (and owner and group where allowed; a new file gets 0666 minus the umask)
  and renamed over the path (``os.replace``): a reader sees the whole old file or the whole new
  one, never a part. An error while the content is produced leaves the old file untouched.
- a regular file with several hard links: a rename would detach this name from the others, so
  the content is staged in a temporary file as above (an error while producing it still leaves
  the file untouched) and then copied into the file in place. The trade-off: a crash or a kill
  during that copy leaves the file partly written; the links are never broken.
- a symbolic link is followed: the link stays and its target is written by these rules.
- anything else (stdout, as ``-`` or None; a character or block device such as /dev/null; a
  FIFO; an open descriptor such as /dev/stdout, even when it is a regular file that the shell
  opened: then the output is appended to what the file holds) is written in place as a stream
  and never replaced.

SIGINT and SIGTERM during a write remove the temporary file and are then delivered under the
disposition they had outside the write (by default KeyboardInterrupt for SIGINT and death by the
signal for SIGTERM). A SIGKILL cannot be caught: it can leave a hidden temporary file, which the
next write of the same path removes once the process named by the PID in its name is gone. A
``.gz`` path is gzip-
compressed (level ``GZIP_LEVEL``) with an empty name and a zero time in the header, so equal
content gives equal bytes. A directory, a missing parent directory, a permission problem, a full
disk or an unknown encoding is a :class:`DparseError` naming the path.
"""

from __future__ import annotations

import codecs
import errno
import gzip
import io
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import IO, Any

from dparse.errors import DparseError

#: errno values of a failed write (not of a failed read of some input): disk or quota full.
# zlib level of .gz outputs: 6 (zlib's own default) writes several times faster than 9 for a
# few percent more bytes (forests are written at parse time).
GZIP_LEVEL = 6
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_HANDLED = (signal.SIGINT, signal.SIGTERM)
_STDOUT = "<stdout>"


class Interrupted(BaseException):
    """SIGINT or SIGTERM received inside :func:`signals_raise` (not an ``Exception``, so that
    only cleanup code, never an error handler, sees it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _SignalState:
    """Signals not delivered yet: caught in a critical section (``defer_depth`` > 0), or
    raised inside a finalizer, where Python drops the exception (``pending``)."""

    defer_depth = 0
    pending: list[int] = []
    unraisable_hook: Any = None  # the hook before the outermost write's


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _SignalState.defer_depth or (frame is not None and frame.f_code in _GUARDED):
        _SignalState.pending.append(signum)
        return
    raise Interrupted(signum)


def _on_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` during a write: an Interrupted raised in a finalizer is kept for
    the next check instead of being printed and lost."""
    if isinstance(unraisable.exc_value, Interrupted):
        _SignalState.pending.append(unraisable.exc_value.signum)
    else:
        _SignalState.unraisable_hook(unraisable)


def raise_pending() -> None:
    """Raise :class:`Interrupted` for a signal not delivered yet (a check before a commit)."""
    if _SignalState.pending:
        signum = _SignalState.pending[0]
        _SignalState.pending.clear()
        raise Interrupted(signum)


def _deliver(signum: int, handler: Any) -> None:
    """Hand a caught signal to the handler that was there before (already reinstalled)."""
    if callable(handler):
        handler(signum, None)  # default_int_handler raises KeyboardInterrupt; ours Interrupted
    else:
        os.kill(os.getpid(), signum)  # SIG_DFL: end as the signal would have ended us
    raise SystemExit(128 + signum)


def _interruption(exc: BaseException) -> Interrupted | None:
    """The :class:`Interrupted` that ``exc`` is, or that it was raised while handling (its
    cause or context, at any depth): library cleanup code hit by the signal half-way (a
    descriptor closed twice in a ``finally``) can raise an error of its own in its place,
    which is the signal's doing, not an error to report."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Interrupted):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class signals_raise:  # noqa: N801 - used as ``with signals_raise():``, like a function
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted` so that ``except`` and
    ``finally`` clauses clean up; leaving the block restores the previous handlers and, if a
    signal came, delivers it to them (also when another exception, raised while handling the
    Interrupted, leaves the block instead of it). A signal ignored before stays ignored;
    outside the main thread (where handlers cannot be set) nothing changes. Nests.

    A class rather than a generator, so that its own entry and exit are frames that the
    handler recognises: a signal landing there (before the handlers are in place or the
    restoring has begun) is kept and delivered by ``__exit__``, never raised where no
    ``except`` of the block can see it."""

    def __enter__(self) -> None:
        self.active = threading.current_thread() is threading.main_thread()
        if not self.active:
            return
        self.previous = {s: signal.getsignal(s) for s in _HANDLED}
        self.installed = [s for s, h in self.previous.items()
                          if h is not None and h is not signal.SIG_IGN]
        self.hook = sys.unraisablehook
        if self.hook is not _on_unraisable:
            _SignalState.unraisable_hook = self.hook
        sys.unraisablehook = _on_unraisable
        for s in self.installed:
            signal.signal(s, _on_signal)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if not self.active:
            return False
        _SignalState.defer_depth += 1  # a signal while the handlers are put back is kept
        try:
            for s in self.installed:
                signal.signal(s, self.previous[s])
            sys.unraisablehook = self.hook
        finally:
            _SignalState.defer_depth -= 1
        interrupted = _interruption(exc) if exc is not None else None
        caught = interrupted.signum if interrupted is not None else None
        if not _SignalState.defer_depth:  # else the enclosing deferred section delivers it
            if caught is None and _SignalState.pending:
                caught = _SignalState.pending[0]
            _SignalState.pending.clear()
        if caught is not None:
            _deliver(caught, self.previous[caught])
        return False


# Frames in which the handler keeps a signal instead of raising it (see signals_raise).
_GUARDED = frozenset({signals_raise.__enter__.__code__, signals_raise.__exit__.__code__})


@contextmanager
def signals_deferred() -> Iterator[None]:
    """A critical section (a rename and its bookkeeping): a SIGINT or SIGTERM arriving inside
    is raised as :class:`Interrupted` only when the section ends."""
    _SignalState.defer_depth += 1
    try:
        yield
    finally:
        _SignalState.defer_depth -= 1
        if not _SignalState.defer_depth:
            raise_pending()


def write_error(path: str | os.PathLike, exc: OSError) -> DparseError:
    """The DparseError for an OSError met while writing ``path``."""
    if exc.errno == errno.EISDIR:
        return DparseError(f"cannot write {path}: it is a directory")
    return DparseError(f"cannot write {path}: {exc.strerror or exc}")


def current_umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_prefix(name: str) -> str:
    """Prefix of this process's hidden temporaries for the file or directory ``name``."""
    return f".{name[:200]}.dparse-{os.getpid()}-"


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    return False


def remove_stale(parent: str | os.PathLike, name: str) -> None:
    """Remove the hidden temporaries (files or directories) that writes of ``parent/name``
    by processes now gone left behind (killed with SIGKILL, or the machine stopped)."""
    pattern = re.compile(re.escape(f".{name[:200]}.dparse-") + r"(\d+)-[^.]+\.(tmp|new|old)")
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match is None or not _process_gone(int(match.group(1))):
            continue
        path = os.path.join(parent, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def fsync_directory(path: str | os.PathLike) -> None:
    """Make a rename in directory ``path`` durable (where the file system allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Layers:
    """The streams stacked on a binary file: optional gzip, optional text encoding."""

    def __init__(self, raw: IO[bytes], binary: bool, compress: bool, encoding: str) -> None:
        self.gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                compresslevel=GZIP_LEVEL) if compress else None
        inner: IO[bytes] = self.gz if self.gz is not None else raw
        self.text = None if binary else io.TextIOWrapper(inner, encoding=encoding, newline="")
        self.top: IO[Any] = self.text if self.text is not None else inner

    def finish(self) -> None:
        """Flush everything down to the file (the file itself stays open)."""
        if self.text is not None:
            self.text.flush()
            self.text.detach()
        if self.gz is not None:
            self.gz.close()

    def abandon(self) -> None:
        """Let go of the layers after an error (what they still hold may or may not reach
        the file; a staged file is removed anyway)."""
        try:
            if self.text is not None:
                self.text.detach()
        except (ValueError, OSError):
            pass
        try:
            if self.gz is not None:
                self.gz.close()
        except (ValueError, OSError):
            pass


def _check_mode(mode: str, encoding: str) -> bool:
    """Whether ``mode`` is binary; DparseError for an unknown encoding."""
    if mode not in ("w", "wb"):
        raise ValueError(f"open_output mode must be 'w' or 'wb', not {mode!r}")
    if mode == "w":
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise DparseError(f"unknown encoding {encoding!r}") from None
    return mode == "wb"


def _translate(path: str | os.PathLike, exc: BaseException, encoding: str) -> BaseException:
    """What an error raised while writing ``path`` becomes: a DparseError for a full disk or
    an unencodable character, else itself."""
    if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
        return write_error(path, exc)
    if isinstance(exc, UnicodeEncodeError):
        bad = exc.object[exc.start:exc.end]
        return DparseError(f"cannot write {path}: {bad!r} cannot be encoded in {encoding}")
    return exc


@contextmanager
def open_output(
    path: str | os.PathLike | None, mode: str = "w", encoding: str = "utf-8"
) -> Iterator[IO[Any]]:
    """A stream to write the output ``path`` (``-`` or None: stdout) with, by the rules of
    this module. ``mode`` "w" gives a text stream (``encoding``; newlines written as given),
    "wb" a binary one. The file is complete only when the ``with`` block ends normally; if
    it raises, a regular file keeps its old content."""
    binary = _check_mode(mode, encoding)
    if path is None or path == "-":
        with _stdout_stream(binary, encoding) as out:
            yield out
        return
    name = os.fspath(path)
    try:
        st: os.stat_result | None = os.stat(name)  # through symbolic links
    except (FileNotFoundError, NotADirectoryError):
        st = None  # a new file; its directory is checked below
    except OSError as exc:
        raise write_error(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise DparseError(f"cannot write {path}: it is a directory")
    compress = name.endswith(".gz")
    real = os.path.realpath(name) if os.path.islink(name) else name
    if st is not None and (not stat.S_ISREG(st.st_mode) or _names_a_descriptor(name, real)):
        append = stat.S_ISREG(st.st_mode)  # a shell's file: after what it holds already
        with _in_place(path, name, append, binary, compress, encoding) as out:
            yield out
        return
    with _staged(path, real, st, binary, compress, encoding) as out:
        yield out


def _names_a_descriptor(name: str, real: str) -> bool:
    """Whether a path reaches an open file descriptor (/dev/stdout, /dev/fd/N, /proc/...):
    what it names may be a file the shell opened for appending, so it is written in place."""
    return (real.startswith("/proc/")
            or os.path.abspath(name).startswith(("/dev/stdout", "/dev/stderr", "/dev/fd/",
                                                 "/proc/")))


@contextmanager
def _stdout_stream(binary: bool, encoding: str) -> Iterator[IO[Any]]:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stand-in (tests): write text to it as it is
        if binary:
            raise DparseError("cannot write binary output to this stdout")
        yield sys.stdout
        sys.stdout.flush()
        return
    with _streamed(buffer, _STDOUT, binary, False, encoding) as out:
        yield out


@contextmanager
def _streamed(raw: IO[bytes], path: str | os.PathLike, binary: bool, compress: bool,
              encoding: str) -> Iterator[IO[Any]]:
    """Write through the layers (gzip, text) over the stream ``raw``, finished and flushed after
    the block; on an error abandoned, and the error translated as one writing ``path``."""
    layers = _Layers(raw, binary, compress, encoding)
    try:
        yield layers.top
        layers.finish()
        raw.flush()
    except BaseException as exc:
        layers.abandon()
        translated = _translate(path, exc, encoding)
        if translated is exc:
            raise
        raise translated from exc


@contextmanager
def _in_place(path: str | os.PathLike, name: str, append: bool, binary: bool, compress: bool,
              encoding: str) -> Iterator[IO[Any]]:
    """Write a device, a FIFO or an open descriptor as a stream (opening a FIFO waits for its
    reader), at the end of a regular file if ``append``."""
    try:
        raw = open(os.open(name, os.O_WRONLY | (os.O_APPEND if append else 0)), "wb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        with _streamed(raw, path, binary, compress, encoding) as out:
            yield out
    finally:
        _close_quietly(raw)


def _prepare_temp(fd: int, st: os.stat_result | None) -> None:
    """Give a new temporary file the permissions the written file must have."""
    if st is None:
        os.fchmod(fd, 0o666 & ~current_umask())
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)  # before the mode: chown clears setuid bits
    except OSError:
        pass  # not allowed (not root): the new file belongs to us
    os.fchmod(fd, stat.S_IMODE(st.st_mode))


@contextmanager
def _staged(path: str | os.PathLike, real: str, st: os.stat_result | None, binary: bool,
            compress: bool, encoding: str) -> Iterator[IO[Any]]:
    """Write a regular file (or a new one) through a temporary file beside it."""
    parent, base = os.path.split(real)
    parent = parent or "."
    if not base:
        raise DparseError(f"cannot write {path}: it names a directory")
    if not os.path.isdir(parent):
        problem = "is not a directory" if os.path.exists(parent) else "does not exist"
        raise DparseError(f"cannot write {path}: directory {parent} {problem}")
    if st is not None and not os.access(real, os.W_OK,
                                        effective_ids=os.access in os.supports_effective_ids):
        raise DparseError(f"cannot write {path}: permission denied")
    in_place = st is not None and st.st_nlink > 1
    with signals_raise():
        remove_stale(parent, base)
        tmp: str | None = None
        raw: IO[bytes] | None = None
        layers: _Layers | None = None
        producing = False  # whether an error comes from the caller's block
        try:
            with signals_deferred():
                fd, tmp = tempfile.mkstemp(dir=parent, prefix=temp_prefix(base), suffix=".tmp")
            raw = open(fd, "wb")  # noqa: SIM115 - closed below
            _prepare_temp(fd, None if in_place else st)
            layers = _Layers(raw, binary, compress, encoding)
            producing = True
            yield layers.top
            producing = False
            layers.finish()
            raw.flush()
            os.fsync(fd)
            raw.close()
            raise_pending()
            if in_place:
                _copy_into(tmp, real)
            with signals_deferred():
                if in_place:
                    os.unlink(tmp)
                else:
                    os.replace(tmp, real)
                tmp = None
            fsync_directory(parent)
        except BaseException as exc:
            with signals_deferred():
                if layers is not None:
                    layers.abandon()
                if raw is not None:
                    _close_quietly(raw)
                if tmp is not None:
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
            if isinstance(exc, OSError) and not producing:
                raise write_error(path, exc) from exc
            translated = _translate(path, exc, encoding)
            if translated is exc:
                raise
            raise translated from exc


def _close_quietly(stream: IO[Any]) -> None:
    try:
        stream.close()
    except OSError:
        pass


def _copy_into(source: str, target: str) -> None:
    """Copy a complete file into ``target`` in place (same inode: its hard links stay)."""
    with open(source, "rb") as src, open(target, "r+b") as dst:
        dst.truncate(0)
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.flush()
        os.fsync(dst.fileno())


def write_text(path: str | os.PathLike | None, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` by the rules of this module."""
    with open_output(path, "w", encoding) as out:
        out.write(text)


def write_bytes(path: str | os.PathLike | None, data: bytes) -> None:
    """Write ``data`` to ``path`` by the rules of this module."""
    with open_output(path, "wb") as out:
        out.write(data)
