"""Universal Dependencies: download a release or a treebank, verify it, unpack it, convert it.

Official homes: each treebank's GitHub repository tags a release (``r2.13``) and serves it as
``https://github.com/UniversalDependencies/<NAME>/archive/refs/tags/<VERSION>.tar.gz``; the full
release ``ud-treebanks-v<X.Y>.tgz`` is on LINDAT under the release's handle. Archives are
downloaded through an injectable opener (tests pass a fake one), their SHA-256 is checked before
anything is unpacked, and unpacking refuses absolute paths, ``..``, links and devices.

Each treebank is installed as ``DEST/<code>/{train,dev,test}.conllu`` (``code`` from its file
names, e.g. ``en_ewt``) with its LICENSE.txt, README and a VERSION file, the layout of
``../shared/data``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from tqdm import tqdm

from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import DparseError

GITHUB_ARCHIVE = "https://github.com/UniversalDependencies/{name}/archive/refs/tags/{version}.tar.gz"
LINDAT_BITSTREAM = (
    "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/{handle}/"
    "ud-treebanks-v{number}.tgz"
)
# LINDAT handle of each full release (hdl.handle.net/11234/<handle>); others need --url.
RELEASE_HANDLES: dict[str, str] = {
    "r2.11": "1-4923",
    "r2.12": "1-5150",
    "r2.13": "1-5287",
    "r2.14": "1-5502",
    "r2.15": "1-5787",
}
# SHA-256 of archives checked against a trusted download, keyed by (name, version); name
# "ud-treebanks" is the full release. Add a pair only after verifying it yourself.
KNOWN_SHA256: dict[tuple[str, str], str] = {}

SPLITS = ("train", "dev", "test")
_NAME = re.compile(r"UD_[A-Za-z_]+-[A-Za-z0-9]+")
_VERSION = re.compile(r"r?(\d+\.\d+)")
_SPLIT_FILE = re.compile(r"([a-z]+_[a-z0-9]+)-ud-(train|dev|test)\.conllu")
_CHUNK = 1 << 16

Opener = Callable[[str], BinaryIO]


def default_opener(url: str) -> BinaryIO:
    """Open ``url`` for reading with urllib (a 60 s timeout per read)."""
    request = urllib.request.Request(url, headers={"User-Agent": "dparse-data"})
    return urllib.request.urlopen(request, timeout=60)  # noqa: S310 - https URLs we build


@dataclass(frozen=True)
class Archive:
    """One archive to fetch: a treebank at a tag, or the full release (name ``ud-treebanks``)."""

    name: str
    version: str
    url: str

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.tar.gz"


def normalize_version(version: str) -> str:
    """``2.13`` or ``r2.13`` -> ``r2.13``."""
    match = _VERSION.fullmatch(version.strip())
    if not match:
        raise DparseError(f"bad UD version {version!r}: expected e.g. r2.13")
    return f"r{match.group(1)}"


def treebank_archive(name: str, version: str, url: str | None = None) -> Archive:
    """The GitHub tag archive of one treebank, e.g. ``UD_English-EWT`` at ``r2.13``."""
    if not _NAME.fullmatch(name):
        raise DparseError(f"bad treebank name {name!r}: expected e.g. UD_English-EWT")
    version = normalize_version(version)
    return Archive(name, version, url or GITHUB_ARCHIVE.format(name=name, version=version))


def release_archive(version: str, url: str | None = None) -> Archive:
    """The full release tarball on LINDAT."""
    version = normalize_version(version)
    if url is None:
        if version not in RELEASE_HANDLES:
            raise DparseError(
                f"no LINDAT handle recorded for UD {version}; pass --url with the address of "
                "ud-treebanks-v*.tgz from the release's LINDAT page"
            )
        url = LINDAT_BITSTREAM.format(handle=RELEASE_HANDLES[version], number=version[1:])
    return Archive("ud-treebanks", version, url)


def download(archive: Archive, dest: Path, opener: Opener = default_opener,
             progress: bool = True) -> tuple[Path, str]:
    """Stream ``archive`` into a temporary file under ``dest``; return (path, sha256 hex)."""
    dest.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{archive.filename}.", suffix=".part")
    path = Path(tmp)
    try:
        with open(fd, "wb") as out, closing(opener(archive.url)) as response:
            total = _content_length(response)
            with tqdm(total=total, unit="B", unit_scale=True, desc=archive.filename,
                      disable=not progress, leave=False) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        path.unlink(missing_ok=True)
        raise DparseError(f"cannot download {archive.url}: {exc}") from None
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, digest.hexdigest()


def _content_length(response: BinaryIO) -> int | None:
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    return int(value) if value and value.isdigit() else None


def verify(archive: Archive, actual: str, expected: str | None) -> str | None:
    """Check ``actual`` against ``expected`` (or the recorded checksum).

    Returns a warning when there is nothing to check against; raises on a mismatch.
    """
    expected = (expected or KNOWN_SHA256.get((archive.name, archive.version), "")).lower()
    if not expected:
        return (
            f"no checksum known for {archive.name} {archive.version}: not verified. "
            f"Its sha256 is {actual}; pass --sha256 {actual} to pin it."
        )
    if actual != expected:
        raise DparseError(
            f"checksum mismatch for {archive.url}: expected sha256 {expected}, got {actual}; "
            "the download was deleted and nothing was unpacked"
        )
    return None


def safe_members(tar: tarfile.TarFile, source: str) -> list[tarfile.TarInfo]:
    """The archive's members, refusing any that could write outside the target directory."""
    members = tar.getmembers()
    for member in members:
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts:
            raise DparseError(f"{source}: unsafe path in archive: {member.name!r}")
        if not (member.isfile() or member.isdir()):
            raise DparseError(f"{source}: archive member {member.name!r} is not a regular file")
    return members


def install(archive_path: Path, archive: Archive, dest: Path, digest: str,
            treebanks: Iterable[str] = ()) -> list[Path]:
    """Unpack the treebanks of an archive into ``dest/<code>/``; return their directories.

    ``treebanks`` limits a full release to those names (all when empty). Everything is unpacked
    into a temporary directory first: on any error nothing is left in ``dest``.
    """
    wanted = set(treebanks)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".unpack-") as tmp:
        try:
            with tarfile.open(archive_path, "r:*") as tar:
                members = safe_members(tar, archive.url)
                if wanted:
                    members = [m for m in members if _treebank_of(m.name) in wanted]
                # members are checked above; the "data" filter (Python >= 3.11.4) checks again
                extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tar.extractall(tmp, members=members, **extra)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise DparseError(f"{archive.url}: not a readable tar archive: {exc}") from None
        found = _treebank_dirs(Path(tmp))
        missing = {name for name in wanted if not any(_treebank_of_dir(d) == name for d in found)}
        if missing or not found:
            raise DparseError(
                f"{archive.url}: no treebank files found"
                + (f" for {', '.join(sorted(missing))}" if missing else "")
            )
        staged = [_stage(d, archive, digest) for d in found]
        targets = []
        for code, staged_dir in staged:
            target = dest / code
            if target.exists():
                shutil.rmtree(target)
            staged_dir.rename(target)
            targets.append(target)
    return targets


def _treebank_of(member: str) -> str | None:
    """The ``UD_*`` directory a member path lies in, if any."""
    return next((p for p in PurePosixPath(member).parts if _NAME.match(p)), None)


def _treebank_of_dir(path: Path) -> str:
    return _NAME.match(path.name).group() if _NAME.match(path.name) else path.name


def _treebank_dirs(root: Path) -> list[Path]:
    """Directories holding ``*-ud-{train,dev,test}.conllu`` files, sorted."""
    return sorted({p.parent for p in root.rglob("*-ud-*.conllu") if _SPLIT_FILE.fullmatch(p.name)})


def _stage(directory: Path, archive: Archive, digest: str) -> tuple[str, Path]:
    """Rename a treebank's files to the standard layout inside a sibling directory."""
    files = {m.group(2): (m.group(1), p) for p in directory.iterdir()
             if (m := _SPLIT_FILE.fullmatch(p.name))}
    code = next(iter(files.values()))[0]
    staged = directory.parent / f".staged-{code}"
    staged.mkdir()
    for split, (_, path) in sorted(files.items()):
        path.rename(staged / f"{split}.conllu")
    for extra in ("LICENSE.txt", "README.md", "README.txt", "stats.xml"):
        if (directory / extra).is_file():
            (directory / extra).rename(staged / extra)
    (staged / "VERSION").write_text(
        f"{_treebank_of_dir(directory)} {archive.version}\n{archive.url}\nsha256 {digest}\n",
        encoding="utf-8",
    )
    return code, staged


def fetch(archive: Archive, dest: Path, sha256: str | None = None, treebanks: Iterable[str] = (),
          opener: Opener = default_opener, keep_archive: bool = False, strict: bool = False,
          progress: bool = True, warn: Callable[[str], None] = print) -> list[Path]:
    """Download, verify and install ``archive`` under ``dest``; return the treebank directories.

    Without a known or given checksum the download is refused when ``strict``, otherwise
    installed with a warning that gives the computed SHA-256.
    """
    path, digest = download(archive, dest, opener, progress)
    try:
        warning = verify(archive, digest, sha256)
        if warning and strict:
            raise DparseError(warning.replace("not verified", "refused (--strict)"))
        if warning:
            warn(f"warning: {warning}")
        targets = install(path, archive, dest, digest, treebanks)
        if keep_archive:
            path.rename(dest / archive.filename)
    finally:
        path.unlink(missing_ok=True)
    return targets


def conllu_to_conllx(sentence: Sentence, postag: str = "xpos") -> Sentence:
    """A CoNLL-U sentence as CoNLL-X: comments, multiword tokens and empty nodes dropped.

    CPOSTAG is the UPOS; POSTAG the XPOS (``postag="xpos"``, UPOS where XPOS is ``_``) or the
    UPOS again (``postag="upos"``). HEAD and DEPREL are kept; DEPS and MISC are not, PHEAD and
    PDEPREL are ``_``.
    """
    if postag == "upos":
        xpos = sentence.upos
    else:
        xpos = [x if x != "_" else u for u, x in zip(sentence.upos, sentence.xpos, strict=True)]
    return Sentence.build(sentence.form, sentence.heads, sentence.deprels, upos=sentence.upos,
                          xpos=xpos, lemma=sentence.lemma, feats=sentence.feats, fmt="conllx")


def convert_file(src: str | Path, out: str | Path, postag: str = "xpos") -> int:
    """Convert a CoNLL-U file to CoNLL-X; return the number of sentences."""
    count = 0

    def converted() -> Iterable[Sentence]:
        nonlocal count
        for sentence in read_conll(src, fmt="conllu", require_heads=False):
            count += 1
            yield conllu_to_conllx(sentence, postag)

    write_conll(converted(), out)
    return count
