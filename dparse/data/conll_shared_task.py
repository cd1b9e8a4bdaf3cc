"""CoNLL 2006/2007 shared-task data: standard layout, development split and minimal training sets.

As in the greedy-inference paper (Tchernowitz et al. 2016, section 8): the languages of both
shared tasks, the 2006 version of a language that is in both; for each language with at least
10,000 training sentences, 1000 training sentences sampled as a development set; for every
language, 20 training sets of 500 sentences sampled from the full training set (the
"minimally supervised" setup).

Layout written under ``OUT/<language>/``::

    train.conll         the official training set (UTF-8, sentences verbatim)
    test.conll          the official test set
    dev.conll           1000 sentences sampled from train (large languages only)
    train-nodev.conll   train without the dev sentences (large languages only)
    mini/train-00.conll .. mini/train-19.conll   500 sentences each, sampled from train

and ``OUT/manifest.json`` (sources with their SHA-256, encodings, sizes, seed). Samples keep the
corpus order. Sampling uses only ``random.Random(str).random()``, which Python guarantees to
reproduce across versions, so the same sources and seed give byte-identical files anywhere.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import DparseError
from dparse.outputs import write_text

SEED = 2016
DEV_SIZE = 1000
DEV_MIN_TRAIN = 10_000
MINI_SETS = 20
MINI_SIZE = 500
YEARS = ("2006", "2007")

# language -> name tokens its shared-task files may carry (English name, ISO 639-1/-2 codes)
LANGUAGES: dict[str, tuple[str, ...]] = {
    "arabic": ("arabic", "ar", "ara"),
    "basque": ("basque", "eu", "eus", "baq"),
    "bulgarian": ("bulgarian", "bg", "bul"),
    "catalan": ("catalan", "ca", "cat"),
    "chinese": ("chinese", "zh", "zho", "chi"),
    "czech": ("czech", "cs", "ces", "cze"),
    "danish": ("danish", "da", "dan"),
    "dutch": ("dutch", "nl", "nld", "dut"),
    "english": ("english", "en", "eng"),
    "german": ("german", "de", "deu", "ger"),
    "greek": ("greek", "el", "ell", "gre"),
    "hungarian": ("hungarian", "hu", "hun"),
    "italian": ("italian", "it", "ita"),
    "japanese": ("japanese", "ja", "jpn"),
    "portuguese": ("portuguese", "pt", "por"),
    "slovene": ("slovene", "slovenian", "sl", "slv"),
    "spanish": ("spanish", "es", "esp", "spa"),
    "swedish": ("swedish", "sv", "swe"),
    "turkish": ("turkish", "tr", "tur"),
}
_ALIAS = {alias: lang for lang, aliases in LANGUAGES.items() for alias in aliases}
_ROLES = ("train", "test")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass
class Source:
    """The official train and test files of one language."""

    language: str
    year: str
    files: dict[str, Path] = field(default_factory=dict)  # role -> path


def find_sources(directory: Path, year: str) -> dict[str, Source]:
    """The languages found under a shared-task directory, by file name.

    A file belongs to a language when a token of its name (split at non-alphanumerics) is one of
    the language's aliases, and to a role when a token is ``train`` or ``test``: the official
    names (``czech_pdt_train.conll``) and the NLTK ones (``eus.train``) both match. Two candidate
    files for the same language and role are an error.
    """
    if not directory.is_dir():
        raise DparseError(f"{directory}: shared-task directory not found")
    found: dict[str, Source] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        tokens = set(_TOKEN.findall(path.name.lower()))
        langs = {_ALIAS[t] for t in tokens if t in _ALIAS}
        roles = [r for r in _ROLES if r in tokens]
        if len(langs) != 1 or len(roles) != 1 or tokens & {"blind", "dev", "devel"}:
            continue
        lang, role = langs.pop(), roles[0]
        source = found.setdefault(lang, Source(lang, year))
        if role in source.files:
            raise DparseError(
                f"{directory}: two {lang} {role} files: {source.files[role]} and {path}; "
                "move one out of the way"
            )
        source.files[role] = path
    return found


def select_sources(dirs: dict[str, Path | None], languages: Sequence[str] = ()) -> list[Source]:
    """The sources to lay out: 2006 before 2007 for a language in both, sorted by language."""
    chosen: dict[str, Source] = {}
    for year in YEARS:
        if dirs.get(year) is None:
            continue
        for lang, source in find_sources(Path(dirs[year]), year).items():
            chosen.setdefault(lang, source)
    unknown = [lang for lang in languages if lang not in LANGUAGES]
    if unknown:
        raise DparseError(
            f"unknown language(s) {', '.join(unknown)}; known: {', '.join(LANGUAGES)}"
        )
    if languages:
        missing = [lang for lang in languages if lang not in chosen]
        if missing:
            raise DparseError(f"no shared-task files found for {', '.join(missing)}")
        chosen = {lang: chosen[lang] for lang in languages}
    for source in chosen.values():
        absent = [role for role in _ROLES if role not in source.files]
        if absent:
            raise DparseError(f"{source.language} ({source.year}): no {' or '.join(absent)} file")
    if not chosen:
        raise DparseError("no shared-task train/test files found in the given directories")
    return [chosen[lang] for lang in sorted(chosen)]


def detect_encoding(path: Path) -> str:
    """``utf-8`` when the file decodes as UTF-8, else ``iso-8859-1`` (CoNLL 2007 Basque)."""
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return "utf-8"


def sample(n: int, k: int, key: str) -> list[int]:
    """``k`` of the indices ``0..n-1``, in increasing order, chosen at random from ``key``.

    Each index gets a uniform key from ``random.Random(key).random()`` (stable across Python
    versions); the ``k`` smallest keys are taken.
    """
    if k > n:
        raise DparseError(f"cannot sample {k} of {n} sentences ({key})")
    rng = random.Random(key)
    keys = [rng.random() for _ in range(n)]
    return sorted(sorted(range(n), key=keys.__getitem__)[:k])


def write_sentences(sentences: Iterable[Sentence], path: Path) -> None:
    """Write sentences verbatim as UTF-8, the file ending with one blank line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_conll(sentences, path)
    with open(path, "rb+") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - 2))
        tail = f.read()
        if size and not tail.endswith(b"\n\n"):
            f.write(b"\n" if tail.endswith(b"\n") else b"\n\n")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def layout_language(
    source: Source,
    out: Path,
    seed: int = SEED,
    dev_size: int = DEV_SIZE,
    dev_min_train: int = DEV_MIN_TRAIN,
    mini_sets: int = MINI_SETS,
    mini_size: int = MINI_SIZE,
) -> dict[str, object]:
    """Write one language's files under ``out/<language>/``; return its manifest entry."""
    lang_dir = out / source.language
    entry: dict[str, object] = {"year": source.year, "sources": {}}
    sentences: dict[str, list[Sentence]] = {}
    for role in _ROLES:
        path = source.files[role]
        encoding = detect_encoding(path)
        sentences[role] = list(read_conll(path, fmt="conllx", encoding=encoding))
        entry["sources"][role] = {  # type: ignore[index]
            "file": path.name,
            "sha256": sha256_of(path),
            "encoding": encoding,
            "sentences": len(sentences[role]),
        }
        write_sentences(sentences[role], lang_dir / f"{role}.conll")
    train = sentences["train"]
    if len(train) >= dev_min_train:
        dev = sample(len(train), dev_size, f"{seed}:{source.language}:dev")
        dev_set = set(dev)
        write_sentences((train[i] for i in dev), lang_dir / "dev.conll")
        write_sentences(
            (s for i, s in enumerate(train) if i not in dev_set), lang_dir / "train-nodev.conll"
        )
        entry["dev"] = {"sentences": len(dev), "train_nodev_sentences": len(train) - len(dev)}
    for k in range(mini_sets):
        chosen = sample(len(train), mini_size, f"{seed}:{source.language}:mini:{k}")
        write_sentences((train[i] for i in chosen), lang_dir / "mini" / f"train-{k:02d}.conll")
    return entry


def layout(
    sources: Sequence[Source],
    out: Path,
    seed: int = SEED,
    progress: Callable[[str], None] | None = None,
    **sizes: int,
) -> dict[str, object]:
    """Lay out every source under ``out`` and write ``out/manifest.json``; return the manifest.

    ``progress`` is called with each language when it is done.
    """
    manifest: dict[str, object] = {
        "seed": seed,
        "dev": {
            "size": sizes.get("dev_size", DEV_SIZE),
            "min_train": sizes.get("dev_min_train", DEV_MIN_TRAIN),
        },
        "mini": {
            "sets": sizes.get("mini_sets", MINI_SETS),
            "size": sizes.get("mini_size", MINI_SIZE),
        },
        "languages": {},
    }
    for source in sources:
        manifest["languages"][source.language] = layout_language(  # type: ignore[index]
            source, out, seed, **sizes
        )
        if progress:
            progress(source.language)
    write_text(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
