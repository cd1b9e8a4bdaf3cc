"""Jackknifed training forests for the forest reranker (Hayashi, Kondo and Matsumoto 2013,
Sections 5.3 and 6.1, after Huang 2008).

The training file is cut into ``folds`` contiguous blocks of nearly equal size, in file order
(documents stay together). Fold k (1-based, as in file names and logs) is parsed by a
shift-reduce model trained exactly as :func:`dparse.transition.shiftreduce.train` would train
the first-stage config, but on the sentences of the other folds (same epochs, dev selection
and seed; the weights as a saved model holds them, float32); the gold state is forced into
every beam, so each forest holds the projectivized gold tree. Sentences whose gold tree cannot
be forced (:func:`dparse.transition.shiftreduce.unforceable`) get no forest.

Each fold is a pair of files in the work directory, both written whole or not at all
(:mod:`dparse.outputs`)::

    fold-03-of-20.forests.gz    its forests (dparse.hypergraph.forest_io), sentence id = the
                                1-based position of the sentence in the training file
    fold-03-of-20.stamp.json    written after the forests (an older one is removed before):
                                what made them (the key) and what they hold

The key is what a first-stage model depends on (:func:`stamp_key`: the config keys it reads,
the sha256 of the training and dev files), ``folds`` and the fold; a fold whose stamp holds
the same key and the forest file's sha256 is up to date and never redone. Same inputs give
byte-identical files.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from dparse.config import ExperimentConfig
from dparse.conll import Sentence
from dparse.epochs import read_split
from dparse.errors import ConfigError, DparseError
from dparse.folds import fold_of_sentences
from dparse.hypergraph.forest import Forest
from dparse.hypergraph.forest_io import forest_writer, read_forests
from dparse.hypergraph.hypergraph import Hypergraph
from dparse.modeldir import file_sha256
from dparse.outputs import write_text
from dparse.projectivize import projectivize_heads
from dparse.transition.shiftreduce import CONFIG_KEYS, train, unforceable

if TYPE_CHECKING:  # training on several workers: imported only there
    from dparse.mixing import Engine

__all__ = ["FoldStats", "fold_paths", "jackknife_forests",
           "jackknife_stats", "read_jackknife_forests", "stamp_key"]

STAMP_FORMAT = "dparse-jackknife 1"


def fold_paths(work: Path, folds: int, fold: int) -> tuple[Path, Path]:
    """The forest file and the stamp of fold ``fold`` (1-based) of ``folds``."""
    width = max(2, len(str(folds)))
    stem = f"fold-{fold:0{width}d}-of-{folds:0{width}d}"
    return work / f"{stem}.forests.gz", work / f"{stem}.stamp.json"


@dataclass
class FoldStats:
    """What the forests of one fold (or, summed, of several) hold. UAS counts are over every
    word of the sentences with a forest, punctuation included: against the projectivized gold
    tree (what the forest is forced to hold, the reranker's target) and the original one."""

    sentences: int = 0             # training sentences of the fold
    forests: int = 0
    without: dict[str, int] = field(default_factory=dict)   # sentences without, by reason
    words: int = 0                 # words of the sentences with a forest
    vertices: int = 0
    hyperedges: int = 0
    onebest: int = 0               # words whose Viterbi head is the projectivized gold one
    onebest_original: int = 0      # ... the original gold head
    oracle: int = 0                # forest oracle: gold heads of the best reachable tree
    oracle_original: int = 0

    def add(self, other: FoldStats) -> None:
        """Add ``other``'s counts to these."""
        for name, value in asdict(other).items():
            if name == "without":
                for reason, count in value.items():
                    self.without[reason] = self.without.get(reason, 0) + count
            else:
                setattr(self, name, getattr(self, name) + value)

    def summary(self) -> str:
        """Forests, sentences without (by reason), average sizes, 1-best and oracle UAS."""
        reasons = ", ".join(f"{c} {r}" for r, c in sorted(self.without.items()))
        n_without = sum(self.without.values())
        f, w = max(self.forests, 1), max(self.words, 1)
        return (f"{self.forests} forests, {n_without} without"
                + (f" ({reasons})" if reasons else "")
                + f"; {self.vertices / f:.1f} vertices, {self.hyperedges / f:.1f} hyperedges "
                f"per forest; 1-best UAS {100 * self.onebest / w:.2f} (original gold "
                f"{100 * self.onebest_original / w:.2f}), oracle UAS {100 * self.oracle / w:.2f}"
                f" ({100 * self.oracle_original / w:.2f})")


def stamp_key(sr_cfg: ExperimentConfig, folds: int) -> dict[str, Any]:
    """What the files made from the first-stage config ``sr_cfg`` depend on (as JSON gives it
    back): the format, the config keys a shift-reduce model depends on
    (:data:`dparse.transition.shiftreduce.CONFIG_KEYS`; other keys, e.g. the name, data.test
    or a section added for another parser, leave the files up to date), the sha256 of the
    training and dev files and ``folds``; a fold's stamp adds the fold."""
    dev = sr_cfg.data_path(sr_cfg.data.dev) if sr_cfg.data.dev else None
    config: dict[str, Any] = {"parser": sr_cfg.parser}
    config.update({f"{section}.{name}": getattr(getattr(sr_cfg, section), name)
                   for section, name in CONFIG_KEYS})
    key = {"format": STAMP_FORMAT, "config": config,
           "train_sha256": file_sha256(sr_cfg.data_path(sr_cfg.data.train)),
           "dev_sha256": file_sha256(dev) if dev is not None else None, "folds": folds}
    return json.loads(json.dumps(key))


def _read_stamp(stamp: Path) -> dict[str, Any]:
    """The stamp's content; DparseError naming it if it is missing or unreadable."""
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DparseError(f"{stamp}: missing (the fold was never finished): run the "
                          "jackknife again") from None
    except (OSError, ValueError) as exc:
        raise DparseError(f"{stamp}: unreadable stamp ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != STAMP_FORMAT:
        raise DparseError(f"{stamp}: not a jackknife stamp ({STAMP_FORMAT!r})")
    return data


def _up_to_date(work: Path, key: dict[str, Any], fold: int) -> bool:
    """Whether fold ``fold``'s files exist, its stamp holds ``key`` and the file's checksum."""
    forests, stamp = fold_paths(work, key["folds"], fold)
    if not forests.is_file() or not stamp.is_file():
        return False
    try:
        data = _read_stamp(stamp)
    except DparseError:
        return False
    return (all(data.get(name) == value for name, value in key.items())
            and data.get("fold") == fold and data.get("forests_sha256") == file_sha256(forests))


def _make_fold(sr_cfg: ExperimentConfig, key: dict[str, Any], fold: int, work: Path,
               sentences: list[Sentence], progress: bool) -> tuple[FoldStats, dict[str, Any]]:
    """Train fold ``fold``'s first-stage model, write its forests, then its stamp; returns
    the forests' statistics and the training figures (seconds, best epoch, sentences)."""
    folds = key["folds"]
    fold_of = fold_of_sentences(len(sentences), folds)
    start = time.perf_counter()
    result = train(sr_cfg, progress=progress,
                   sentences=[s for s, f in zip(sentences, fold_of, strict=True) if f != fold])
    trained = {"seconds": time.perf_counter() - start, "best_epoch": result.best_epoch,
               "epochs": sr_cfg.training.epochs,
               "training_sentences": int((fold_of != fold).sum())}
    model = result.model
    model.weights = np.ascontiguousarray(model.weights, dtype=np.float32)  # as when saved
    positions = (np.flatnonzero(fold_of == fold) + 1).tolist()
    stats = FoldStats(sentences=len(positions))
    without: dict[str, list[int]] = {}
    forests, stamp = fold_paths(work, folds, fold)
    stamp.unlink(missing_ok=True)  # from now on the forest file may not be what it says
    with forest_writer(forests) as writer:
        for pos in tqdm(positions, desc=f"fold {fold} forests", unit="sent",
                        disable=not progress, leave=False, dynamic_ncols=True):
            sent = sentences[pos - 1]
            problem = unforceable(sent, model.single_root)
            if problem is not None:
                without.setdefault(problem, []).append(pos)
                continue
            gold = projectivize_heads(sent.heads)
            _, _, forest = model.forest_encoded(model.vocab.encode(sent), gold)
            writer.write(forest, pos)
            _count(stats, forest, gold, sent.heads)
    stats.without = {reason: len(ids) for reason, ids in without.items()}
    data = dict(key, fold=fold, first=positions[0], last=positions[-1],
                forests_sha256=file_sha256(forests), without=without, stats=asdict(stats),
                best_epoch=result.best_epoch)
    write_text(stamp, json.dumps(data, indent=1, sort_keys=True) + "\n")
    trained["seconds_forests"] = time.perf_counter() - start - trained["seconds"]
    return stats, trained


def _count(stats: FoldStats, forest: Forest, gold: np.ndarray, original: np.ndarray) -> None:
    """Add one forest's sizes, Viterbi and oracle counts to ``stats``."""
    graph = Hypergraph(forest, trusted=True)  # the writer validated it
    best = graph.viterbi()[1][1:]
    stats.forests += 1
    stats.words += forest.n
    stats.vertices += forest.num_vertices
    stats.hyperedges += forest.num_edges
    stats.onebest += int((best == gold[1:]).sum())
    stats.onebest_original += int((best == original[1:]).sum())
    stats.oracle += graph.oracle(gold)[0]
    stats.oracle_original += graph.oracle(original)[0]


def _worker_init() -> None:
    """Pool workers leave SIGINT to the parent, which terminates them (SIGTERM: a write in
    progress removes its temporary file, :mod:`dparse.outputs`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _fold_job(task: tuple[ExperimentConfig, dict[str, Any], int, str]) -> tuple[str, int, Any]:
    """One fold in a worker process, ``task`` = (first-stage config, key, fold, work): ("ok",
    fold, (stats, trained)) or ("error", fold, (is a DparseError, message)); errors come back
    as text, as not every exception can be pickled."""
    sr_cfg, key, fold, work = task
    try:
        sentences = read_split(sr_cfg, sr_cfg.data.train)
        if stamp_key(sr_cfg, key["folds"]) != key:
            raise DparseError(f"{sr_cfg.data_path(sr_cfg.data.train)}: the training or dev "
                              "file changed during the run")
        return "ok", fold, _make_fold(sr_cfg, key, fold, Path(work), sentences, False)
    except DparseError as exc:
        return "error", fold, (True, str(exc))
    except Exception:
        return "error", fold, (False, traceback.format_exc())


def _fold_error(fold: int, folds: int, dparse_error: bool, message: str) -> Exception:
    if dparse_error:
        return DparseError(f"fold {fold} of {folds}: {message}")
    return RuntimeError(f"fold {fold} of {folds} failed in a worker process:\n{message}")


def jackknife_forests(
    sr_cfg: ExperimentConfig,
    folds: int,
    work: Path,
    *,
    only_fold: int | None = None,
    jobs: int = 1,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    engine: Engine | None = None,
) -> list[Path]:
    """Make sure ``work`` holds the forest file of every fold (or only of ``only_fold``,
    1-based), training and parsing the folds that are missing or stale, ``jobs`` folds at a
    time in worker processes, or as tasks on the workers of ``engine`` (``dparse train
    --workers``: ``work`` and the treebanks must be on a file system they share); the results
    depend on neither. Returns the fold files in fold order. ``log`` (default: this module's
    logger) gets one line per fold and, for a whole run, the totals."""
    say = log if log is not None else logging.getLogger(__name__).info
    if sr_cfg.parser != "shiftreduce":
        raise ConfigError(f"the jackknife's first stage must be a shift-reduce config "
                          f"(parser: shiftreduce), got parser: {sr_cfg.parser}")
    if jobs < 1:
        raise ConfigError(f"jobs must be at least 1, got {jobs}")
    if only_fold is not None and not 1 <= only_fold <= folds:
        raise ConfigError(f"fold {only_fold} is not one of 1..{folds}")
    sentences = read_split(sr_cfg, sr_cfg.data.train)
    fold_of_sentences(len(sentences), folds)  # enough sentences
    key = stamp_key(sr_cfg, folds)
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DparseError(f"{work}: cannot create the jackknife directory: "
                          f"{exc.strerror}") from None
    wanted = [only_fold] if only_fold is not None else list(range(1, folds + 1))
    todo = []
    for fold in wanted:
        if _up_to_date(work, key, fold):
            say(f"fold {fold} of {folds}: up to date ({fold_paths(work, folds, fold)[0]})")
        else:
            todo.append(fold)

    def report(fold: int, stats: FoldStats, trained: dict[str, Any]) -> None:
        say(f"fold {fold} of {folds}: trained on {trained['training_sentences']} sentences in "
            f"{trained['seconds']:.1f}s (best epoch {trained['best_epoch']} of "
            f"{trained['epochs']}), forests in {trained['seconds_forests']:.1f}s: "
            f"{stats.summary()} -> {fold_paths(work, folds, fold)[0]}")

    tasks = [(sr_cfg, key, fold, str(work)) for fold in todo]
    if engine is not None and len(todo) > 1:
        for status, fold, payload in engine.run_tasks(_fold_job, [(t,) for t in tasks]):
            if status != "ok":
                raise _fold_error(fold, folds, *payload)
            report(fold, *payload)
    elif len(todo) == 1 or (todo and jobs == 1):
        for fold in todo:
            try:
                report(fold, *_make_fold(sr_cfg, key, fold, work, sentences, progress))
            except DparseError as exc:
                raise DparseError(f"fold {fold} of {folds}: {exc}") from exc
            except Exception as exc:
                exc.add_note(f"while making fold {fold} of {folds} of the jackknife")
                raise
    elif todo:
        # fork: a spawned worker would re-import the caller's main module, which breaks
        # scripts that do not guard their code with ``if __name__ == "__main__"``
        context = multiprocessing.get_context("fork")
        with context.Pool(min(jobs, len(todo)), initializer=_worker_init,
                          maxtasksperchild=1) as pool:
            bar = tqdm(total=len(todo), desc="folds", unit="fold", disable=not progress,
                       dynamic_ncols=True)
            try:
                for status, fold, payload in pool.imap_unordered(_fold_job, tasks):
                    if status != "ok":
                        raise _fold_error(fold, folds, *payload)
                    report(fold, *payload)
                    bar.update()
            finally:
                bar.close()
                pool.terminate()  # on an error or SIGINT: the other folds stop too
    if only_fold is None:
        say(f"all {folds} folds: {jackknife_stats(work, folds).summary()}")
    return [fold_paths(work, folds, fold)[0] for fold in wanted]


def _checked_stamp(work: Path, folds: int, n_sentences: int, fold: int,
                   key: dict[str, Any] | None) -> dict[str, Any]:
    """Fold ``fold``'s stamp, checked against its forest file, the fold's block of
    ``n_sentences`` and, if given, the key (DparseError naming the file otherwise)."""
    forests, stamp = fold_paths(work, folds, fold)
    if not forests.is_file():
        raise DparseError(f"{forests}: missing: make the jackknifed forests first "
                          f"({folds} folds)")
    data = _read_stamp(stamp)
    fold_of = fold_of_sentences(n_sentences, folds)
    block = np.flatnonzero(fold_of == fold) + 1
    if (data.get("folds"), data.get("fold")) != (folds, fold):
        raise DparseError(f"{stamp}: stamp of fold {data.get('fold')} of {data.get('folds')}, "
                          f"expected {fold} of {folds}")
    if (data.get("first"), data.get("last")) != (int(block[0]), int(block[-1])):
        raise DparseError(f"{stamp}: stale: made for sentences {data.get('first')}.."
                          f"{data.get('last')}, but fold {fold} of {n_sentences} training "
                          f"sentences is {block[0]}..{block[-1]}")
    if key is not None and any(data.get(name) != key[name] for name in key):
        changed = [name for name in key if data.get(name) != key[name]]
        raise DparseError(f"{stamp}: stale: made with another {' and '.join(changed)}")
    if data.get("forests_sha256") != file_sha256(forests):
        raise DparseError(f"{forests}: changed since its stamp {stamp.name} was written")
    return data


def read_jackknife_forests(work: Path, folds: int, n_sentences: int,
                           sr_cfg: ExperimentConfig | None = None) -> list[Forest | None]:
    """The forest of each of the ``n_sentences`` training sentences by its 0-based position
    in the training file (``read_split`` order), None for those without one. DparseError
    naming the file if a fold file is missing, stale (with ``sr_cfg``, the first-stage config:
    also made from another config or training or dev file) or inconsistent with its stamp."""
    out: list[Forest | None] = [None] * n_sentences
    key = None
    for fold in range(1, folds + 1):
        if sr_cfg is not None and key is None:
            key = stamp_key(sr_cfg, folds)
        fold_key = None if key is None else dict(key, fold=fold)
        data = _checked_stamp(work, folds, n_sentences, fold, fold_key)
        forests = fold_paths(work, folds, fold)[0]
        seen = [pos for ids in data.get("without", {}).values() for pos in ids]
        for sid, forest in read_forests(forests):
            pos = int(sid) if sid.isdigit() else 0
            if not data["first"] <= pos <= data["last"] or out[pos - 1] is not None:
                raise DparseError(f"{forests}: forest {sid!r} is not a sentence of fold {fold}"
                                  f" ({data['first']}..{data['last']}) or comes twice")
            out[pos - 1] = forest
            seen.append(pos)
        if sorted(seen) != list(range(data["first"], data["last"] + 1)):
            raise DparseError(f"{forests}: the forests and the stamp's sentences without "
                              f"one do not cover sentences {data['first']}..{data['last']}")
    return out


def jackknife_stats(work: Path, folds: int) -> FoldStats:
    """The summed statistics of the stamps of all folds (the columns of Table 4 of the paper);
    DparseError naming a missing or unreadable stamp."""
    total = FoldStats()
    for fold in range(1, folds + 1):
        stats = _read_stamp(fold_paths(work, folds, fold)[1]).get("stats")
        if not isinstance(stats, dict):
            raise DparseError(f"{fold_paths(work, folds, fold)[1]}: no statistics")
        total.add(FoldStats(**stats))
    return total
