"""Model directories written whole, and checked before they are read.

A model directory holds the files a model's ``write_files`` writes (``weights.bin``,
``vocab.json``, ``config.yaml``, a ``pruner/`` subdirectory, ...) and ``manifest.json``, written
last::

    {"format": "dparse-model", "format_version": 1, "dparse_version": "0.1.0",
     "files": {"config.yaml": {"size": 2817, "sha256": "9f2c...", "crc32": "1a2b3c4d"},
               "pruner/weights.bin": ...}}

The weights and the model's other arrays are one aligned array file (:func:`save_arrays`),
memory-mapped read-only when the model loads (:func:`load_arrays`): nothing is decompressed or
copied, and every process that loads the model (``--jobs`` workers, other commands) shares the
file's pages. dparse never rewrites a model's file in place (a new save replaces the whole
directory, and :func:`save_arrays` writes a new file), so a mapped model stays intact while a new
one is saved over it; a file truncated or overwritten in place by other means (``cp`` over it)
can crash a process that maps it (SIGBUS) instead of giving an error. Weights in a compressed
``weights.npz`` (the format before aligned array files) are read too, decompressed into memory:
save or train such a model again to get the mapped form.

Saving (:func:`writing_model_dir`, ``SavedModel.save``): the files go into a fresh hidden
sibling directory (``.NAME.dparse-PID-XXXXXXXX.new``); each is hashed and fsynced, the manifest
is written and fsynced, and the directory is moved into place in one step. Over an existing
model, Linux's ``renameat2(RENAME_EXCHANGE)`` swaps the two directories atomically and the old
one, now under the hidden name, is removed: at every instant NAME is the complete old model or
the complete new one. Where RENAME_EXCHANGE is missing (not Linux, an old C library, a file
system without it) the fallback is two renames, the old model aside (``...old``) and the new one
in place: killed between the two, NAME is missing while both complete models sit under hidden
names. SIGINT and SIGTERM before the move remove the new directory; the hidden leftovers of a
killed save (SIGKILL) are removed by the next save of the same directory. Missing parent
directories are created. An existing directory is replaced only if it is empty or looks like a
model (it holds manifest.json, or weights.npz as every model saved before manifests does);
anything else is an error and is never deleted. A symbolic link is followed: the link stays,
its target is replaced.

Loading (:func:`check_model_dir`, which every model's ``load`` calls first): the manifest must
exist, be of a format version this dparse reads, and list exactly the files of the directory
with their sizes and checksums; otherwise a DparseError names the file and the problem. The
check at load is the CRC-32 (zlib: cheap, and no OpenSSL in the process), read through a
memory map as the weights are (about 15 ms for 60 MB of weights); the SHA-256 names the
files' contents (``sha256sum`` gives the same) and is checked for a manifest without CRC-32s.
A directory without a manifest is refused with a request to retrain it: a model whose files
cannot be checked is what the manifest exists to refuse. A directory checked once in a process
is not hashed again while its files keep their inode, size and modification time.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import math
import mmap
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Self

import numpy as np

from dparse import __version__
from dparse.aligned import LINE_BYTES
from dparse.errors import DparseError
from dparse.outputs import (
    current_umask,
    fsync_directory,
    raise_pending,
    remove_stale,
    signals_deferred,
    signals_raise,
    temp_prefix,
    write_text,
)

MANIFEST_FILE = "manifest.json"
# the files most parser types write: the weights, the vocabulary and the resolved config
WEIGHTS_FILE = "weights.bin"
VOCAB_FILE = "vocab.json"
CONFIG_FILE = "config.yaml"
TAGGER_DIR = "tagger"  # a pipeline model's tagger (dparse.tagging.pipeline)
PRUNER_DIR = "pruner"  # a pruned model's first-order pruner (dparse.graph.pruner)
PRUNER_FILE = "pruner.json"  # its pruning parameters, in PRUNER_DIR
FORMAT = "dparse-model"
FORMAT_VERSION = 1
OLD_WEIGHTS_FILE = "weights.npz"  # the weights of models saved before aligned array files
_OLD_MODEL_FILE = OLD_WEIGHTS_FILE  # every model directory saved before manifests holds one
ARRAYS_MAGIC = b"dparse-arrays 1\n"
_MAX_HEADER = 1 << 20
_MADV_POPULATE_READ = 22  # Linux's value (Python's mmap module names it from 3.13)
_HASH_BUFFER = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CRC32 = re.compile(r"[0-9a-f]{8}")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_checked: dict[str, tuple] = {}  # real path -> file signature of a directory found intact


class SavedModel:
    """A model saved as a whole directory: subclasses write and read their files with
    ``write_files`` and ``read_files``; ``save`` and ``load`` add the staging and the checks."""

    def write_files(self, directory: Path) -> None:
        """Write the model's files into ``directory`` (created if needed)."""
        raise NotImplementedError

    @classmethod
    def read_files(cls, directory: Path) -> Self:
        """Read what ``write_files`` wrote (no checks: ``load`` makes them)."""
        raise NotImplementedError

    def save(self, directory: Path) -> None:
        """Write the model as the directory ``directory``, whole or not at all."""
        with writing_model_dir(directory) as staging:
            self.write_files(staging)

    @classmethod
    def load(cls, directory: Path) -> Self:
        """Read a model directory written by ``save``, checked against its manifest."""
        check_model_dir(directory)
        return cls.read_files(directory)


def load_meta(directory: Path, name: str, kind: str, version: int) -> dict[str, Any]:
    """The JSON object in ``directory / name``, a ``kind`` model's description whose
    ``format_version`` must be ``version``; DparseError naming the directory otherwise (for
    another version: "retrain it")."""
    try:
        meta = json.loads((directory / name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DparseError(f"{directory}: not a {kind} model: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format_version") != version:
        found = meta.get("format_version") if isinstance(meta, dict) else None
        raise DparseError(f"{directory}: {kind} format {found} is not the one this dparse "
                          f"reads ({version}); retrain it")
    return meta


def save_arrays(path: str | os.PathLike, **arrays: Any) -> None:
    """Write arrays (numbers, strings, booleans; any shape) as an aligned array file: the line
    ``dparse-arrays 1``, a JSON line ``{name: {"dtype": "<f4", "shape": [n], "offset": k}}``
    padded with spaces so that the data begins on a 64-byte boundary, then each array's bytes
    in C order at ``k`` bytes from the data's beginning, ``k`` a multiple of 64 (zero bytes
    between). Its bytes depend only on the arrays: the same config and data give the same
    model files. :func:`load_arrays` maps it."""
    values = {name: np.asarray(value) for name, value in arrays.items()}
    with suppress(FileNotFoundError):
        os.unlink(path)  # a new file: whoever maps the old one (values too, maybe) keeps it whole
    header, offset = {}, 0
    for name, value in values.items():
        if value.dtype.hasobject:
            raise TypeError(f"save_arrays: {name} holds Python objects")
        header[name] = {"dtype": np.lib.format.dtype_to_descr(value.dtype),
                        "shape": list(value.shape), "offset": offset}
        offset += -(-value.nbytes // LINE_BYTES) * LINE_BYTES
    line = json.dumps(header).encode("ascii")
    line += b" " * (-(len(ARRAYS_MAGIC) + len(line) + 1) % LINE_BYTES) + b"\n"
    with open(path, "wb") as out:
        out.write(ARRAYS_MAGIC + line)
        for value in values.values():
            out.write(np.ascontiguousarray(value).reshape(-1).view(np.uint8).data)
            out.write(bytes(-value.nbytes % LINE_BYTES))


def load_arrays(path: Path) -> Mapping[str, np.ndarray]:
    """The arrays :func:`save_arrays` wrote to ``path``, memory-mapped read-only (64-byte
    aligned, shared with every process that maps the file). A model saved before aligned
    array files has ``weights.npz`` instead of ``weights.bin``: its arrays are decompressed into
    memory when read (not aligned). DparseError naming the file if it is missing or
    damaged."""
    if not path.is_file():
        old = path.with_suffix(".npz")
        if old.is_file():
            return np.load(old)
        raise DparseError(f"{path.parent}: not a dparse model directory (no {path.name})")
    try:
        with open(path, "rb") as f:
            if f.read(len(ARRAYS_MAGIC)) != ARRAYS_MAGIC:
                raise DparseError(f"{path}: not a dparse array file")
            header = json.loads(f.readline(_MAX_HEADER))
            start = f.tell()
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        _advise(mapped, populate=True)
        arrays = {}
        for name, entry in header.items():
            dtype = np.lib.format.descr_to_dtype(entry["dtype"])
            shape = tuple(entry["shape"])
            offset = start + entry["offset"]
            if start % LINE_BYTES or offset % LINE_BYTES:
                raise ValueError(f"{name} is not aligned")
            arrays[name] = np.frombuffer(mapped, dtype, math.prod(shape), offset).reshape(shape)
    except OSError as exc:
        raise DparseError(f"{path}: cannot read: {exc.strerror}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise DparseError(f"{path}: damaged array file ({exc}); retrain the model") from None
    return arrays


def _advise(mapped: mmap.mmap, populate: bool) -> None:
    """Ask Linux to cache the mapped file in huge pages where it reads it from disk
    (MADV_HUGEPAGE: parsing, which reads the weights at random, misses the TLB less: about 5%
    faster) and, with ``populate``, to map all its pages now in one call (MADV_POPULATE_READ,
    Linux 5.14) rather than one page fault at a time while parsing (about twice the time, and
    counted as inference). Elsewhere, or refused: nothing."""
    if sys.platform != "linux":
        return
    for advice in (mmap.MADV_HUGEPAGE, _MADV_POPULATE_READ)[:2 if populate else 1]:
        with suppress(OSError):
            mapped.madvise(advice)


def file_sha256(path: str | os.PathLike, sync: bool = False) -> str:
    """Hex SHA-256 of a file, read with a large buffer; ``sync`` also fsyncs it."""
    return _file_digests(path, sha256=True, sync=sync)["sha256"]


def _file_digests(path: str | os.PathLike, sha256: bool, sync: bool = False) -> dict[str, str]:
    """{"crc32": hex (zlib's CRC-32, 8 digits)} of a file, with "sha256" too if asked, in one
    read; ``sync`` also fsyncs it."""
    if not sha256 and not sync:  # the check at load
        return {"crc32": f"{_mapped_crc32(path):08x}"}
    digest = None
    if sha256:
        import hashlib  # here: OpenSSL adds 3.5 MB to a process that only loads models

        digest = hashlib.sha256()
    crc = 0
    buffer = bytearray(_HASH_BUFFER)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buffer):
            if digest is not None:
                digest.update(view[:n])
            crc = zlib.crc32(view[:n], crc)
        if sync:
            os.fsync(f.fileno())
    digests = {"crc32": f"{crc:08x}"}
    if digest is not None:
        digests["sha256"] = digest.hexdigest()
    return digests


def _mapped_crc32(path: str | os.PathLike) -> int:
    """zlib's CRC-32 of a file, read through a memory map that asks for huge pages (a file
    not yet in the page cache is then cached in them, and the maps of :func:`load_arrays` use
    them)."""
    with open(path, "rb") as f:
        if not os.fstat(f.fileno()).st_size:
            return 0
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            _advise(mapped, populate=False)
            return zlib.crc32(mapped)


def _files(directory: str | os.PathLike) -> dict[str, os.stat_result]:
    """Every file under ``directory`` (symbolic links followed, unreadable ones left out) by
    its relative path with ``/`` separators."""
    found = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            try:
                found[Path(os.path.relpath(path, directory)).as_posix()] = os.stat(path)
            except OSError:
                continue
    return found


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return func


def exchange_paths(a: str, b: str) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 with RENAME_EXCHANGE); False where
    that is not available, an OSError if it fails otherwise."""
    func = _renameat2()
    if func is None:
        return False
    if func(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


def _seal(staging: Path) -> None:
    """Hash and fsync every file of a finished staging directory, then write its manifest."""
    files = {}
    for rel in sorted(_files(staging)):
        files[rel] = {"size": (staging / rel).stat().st_size,
                      **_file_digests(staging / rel, sha256=True, sync=True)}
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "dparse_version": __version__, "files": files}
    write_text(staging / MANIFEST_FILE, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    for root, _, _ in os.walk(staging):
        fsync_directory(root)


def _replaceable(directory: str) -> bool:
    """Whether an existing directory may be replaced by a model: empty, or a model."""
    entries = os.listdir(directory)
    return not entries or MANIFEST_FILE in entries or _OLD_MODEL_FILE in entries


@contextmanager
def writing_model_dir(directory: str | os.PathLike) -> Iterator[Path]:
    """An empty staging directory to write a model's files into; when the block ends
    normally it gets its manifest and becomes ``directory`` in one step (module doc)."""
    real = os.path.realpath(directory)
    parent, base = os.path.split(real)
    if not base:
        raise DparseError(f"cannot write model directory {directory}: it is the root directory")
    try:
        existing: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise DparseError(f"cannot write model directory {directory}: {exc.strerror}") from None
    if existing is not None and not stat.S_ISDIR(existing.st_mode):
        raise DparseError(f"cannot write model directory {directory}: a file of that name "
                          "exists")
    try:
        if existing is not None and not _replaceable(real):
            raise DparseError(f"cannot write model directory {directory}: it exists and is not "
                              f"a dparse model directory (no {MANIFEST_FILE}); choose another "
                              "directory or remove it")
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise DparseError(f"cannot write model directory {directory}: {exc.strerror} "
                          f"({exc.filename})") from None
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o777 & ~current_umask()
    remove_stale(parent, base)
    with signals_raise():
        staging: str | None = None
        try:
            with signals_deferred():
                staging = tempfile.mkdtemp(dir=parent, prefix=temp_prefix(base), suffix=".new")
            yield Path(staging)
            _seal(Path(staging))
            os.chmod(staging, mode)
            raise_pending()
            with signals_deferred():
                if existing is None:
                    os.rename(staging, real)
                    staging = None
                elif not exchange_paths(staging, real):
                    old = staging[: -len(".new")] + ".old"
                    os.rename(real, old)
                    try:
                        os.rename(staging, real)
                    except OSError:
                        os.rename(old, real)
                        raise
                    staging = old
                # also deferred: a signal raised inside rmtree's own cleanup can make it
                # close a descriptor twice
                fsync_directory(parent)
                if staging is not None:  # it now holds the previous model
                    shutil.rmtree(staging, ignore_errors=True)
                    staging = None
        except BaseException as exc:
            with signals_deferred():
                if staging is not None:
                    shutil.rmtree(staging, ignore_errors=True)
            if isinstance(exc, OSError):
                where = f" ({exc.filename})" if exc.filename else ""
                raise DparseError(f"cannot write model directory {directory}: "
                                  f"{exc.strerror or exc}{where}") from exc
            raise


def _damaged(path: Path, problem: str) -> DparseError:
    return DparseError(f"{path}: damaged model manifest ({problem}); retrain the model")


def _read_manifest(path: Path) -> dict[str, dict[str, Any]]:
    """The files a manifest lists: relative path -> {"size": int, "sha256": hex, "crc32":
    hex} (no "crc32" in manifests written before it was added)."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _damaged(path, str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _damaged(path, f"not a {FORMAT} manifest")
    version = data.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise _damaged(path, f"format_version {version!r}")
    if version > FORMAT_VERSION:
        raise DparseError(f"{path}: model format version {version} is newer than this dparse "
                          f"({__version__}) reads (up to {FORMAT_VERSION}); upgrade dparse")
    files = data.get("files")
    if not isinstance(files, dict):
        raise _damaged(path, "no file list")
    for rel, entry in files.items():
        parts = rel.split("/")
        if rel == MANIFEST_FILE or rel.startswith("/") or ".." in parts or "" in parts:
            raise _damaged(path, f"bad file name {rel!r}")
        if (not isinstance(entry, dict) or not isinstance(entry.get("size"), int)
                or not _SHA256.fullmatch(str(entry.get("sha256")))
                or ("crc32" in entry and not _CRC32.fullmatch(str(entry["crc32"])))):
            raise _damaged(path, f"bad entry for {rel}")
    return files


def check_model_dir(directory: str | os.PathLike) -> None:
    """DparseError naming the file and the problem unless ``directory`` is a model directory
    whose files are exactly those its manifest lists, with their sizes and checksums."""
    path = Path(directory)
    if not path.is_dir():
        raise DparseError(f"{path}: not a dparse model directory (no such directory)")
    present = _files(path)
    if MANIFEST_FILE not in present:
        raise DparseError(f"{path}: not a dparse model directory: no {MANIFEST_FILE} (saved by "
                          "an older dparse, or a save that never finished); retrain the model")
    signature = tuple(sorted((rel, st.st_ino, st.st_size, st.st_mtime_ns)
                             for rel, st in present.items()))
    key = os.path.realpath(path)
    if _checked.get(key) == signature:
        return
    listed = _read_manifest(path / MANIFEST_FILE)
    extra = sorted(set(present) - set(listed) - {MANIFEST_FILE})
    if extra:
        raise DparseError(f"{path / extra[0]}: not part of the model (not in {MANIFEST_FILE}); "
                          "remove it")
    for rel, entry in sorted(listed.items()):
        if rel not in present:
            raise DparseError(f"{path / rel}: missing (listed in {MANIFEST_FILE})")
        if present[rel].st_size != entry["size"]:
            raise DparseError(f"{path / rel}: {present[rel].st_size} bytes where "
                              f"{MANIFEST_FILE} says {entry['size']} (truncated, emptied or "
                              "replaced)")
    for rel, entry in sorted(listed.items()):
        kind = "crc32" if "crc32" in entry else "sha256"  # SHA-256: older manifests
        try:
            checksum = _file_digests(path / rel, sha256=kind == "sha256")[kind]
        except OSError as exc:
            raise DparseError(f"{path / rel}: cannot read: {exc.strerror}") from None
        if checksum != entry[kind]:
            raise DparseError(f"{path / rel}: contents do not match the checksum in "
                              f"{MANIFEST_FILE} (damaged or replaced)")
    _checked[key] = signature


def require_model_files(directory: Path, *names: str) -> None:
    """DparseError unless every named file is in the model directory."""
    for name in names:
        if not (directory / name).is_file():
            raise DparseError(f"{directory}: not a dparse model directory (no {name})")
