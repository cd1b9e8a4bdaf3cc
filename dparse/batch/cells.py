"""One cell of an experiment grid: train, parse the test file, score; run on a Dask worker.

A cell is a resolved experiment config (a mapping, as saved next to a model) and the data
root it reads from, keyed by :func:`cell_key`, a hash of the config and the bytes of its data
files. Its directory ``<grid out>/cells/<key>/`` receives, each file whole or not at all:

- ``model/``: the trained model (:mod:`dparse.modeldir`);
- ``test.parsed.conllu``: the test file as the model parses it (a tagger's cell:
  ``test.tagged.conllu``, the test file as it tags it);
- ``tagged/``: a pipeline cell's jackknife-tagged training and dev files (the ``work`` of
  :mod:`dparse.tagging.pipeline`, reused when a failed cell runs again);
- ``cell.log``: what training reported (epoch lines), and the traceback of a failure;
- ``result.json``: written last, ``{"status": "ok", ...}`` or ``{"status": "failed",
  "error": ...}``: a cell with an ``ok`` result is finished and never run again.

The record of a finished cell: its labels (config, treebank, seed, set), ``key``, ``status``,
``name`` (the config's), ``uas`` and ``las`` (percent, ``punct`` rule), ``tokens_per_second``
(parsing the test file, inference only), ``train_seconds``, ``best_epoch``,
``test_sentences``, ``test_tokens``, ``host`` and ``batch_job``. Cells on predicted tags add
to these (and only they do):

- a tagger config (``parser: tagger``): trained, then tags the test file from its words alone
  (LEMMA, UPOS, XPOS and FEATS blanked, every column of the tagger predicted); ``uas`` and
  ``las`` are null, ``tokens_per_second`` is tagging's, ``test_tokens`` counts the words;
- a parser config with a ``tagger`` section (a pipeline model): trained with the tagged files
  in ``tagged/`` (one jackknife fold at a time), then parses the test file from its words
  alone (its tagger first, ``tags="predict"``); ``tokens_per_second`` counts tagging and
  parsing;

both with ``tags: "predicted"`` and the tag scores of the output against the test file
(:func:`dparse.tagscores.score_tags`, :meth:`~dparse.tagscores.TagReport.as_dict`):
``upos``, ``xpos``, ``ufeats``, ``alltags``, ``lemmas`` (percent; null for a column the
tagger does not predict) and ``tag_words``.

A parser that reads none of LEMMA, UPOS, XPOS and FEATS (its vocabulary file's unread
columns: a neural model with ``neural.tags: none``) also parses the test file from its words
alone: the same trees as from the test file as it is, since the model blanks or ignores what
it does not read, and the output's tag columns are its own (a neural model's tag heads), not
the test file's. When it predicts some tag column, its record has ``tags: "predicted"`` and
the tag scores too.

A cell's key hashes its resolved config with every config file it names (``tagger.config``,
``rerank.first_stage``: :func:`dparse.families.config_references`) replaced by the digest of that
file's bytes: editing the tagger config makes new cells, and the key does not depend on where
the checkout is.

:func:`run_cell` never raises for a failure of the experiment itself (bad data, a decoder
error): it records it, so that the rest of the grid goes on.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dparse.families import config_references, family
from dparse.outputs import write_text

if TYPE_CHECKING:
    from dparse.conll import Sentence
    from dparse.sections import ExperimentConfig
    from dparse.timer import ParseTimer

RESULT_FILE = "result.json"
LOG_FILE = "cell.log"
MODEL_DIR = "model"
PARSED_FILE = "test.parsed.conllu"
TAGGED_FILE = "test.tagged.conllu"  # a tagger cell's output
WORK_DIR = "tagged"  # a pipeline cell's jackknife-tagged training and dev files
KEY_LENGTH = 16  # hex digits of the SHA-256 kept in cell names


@dataclass(frozen=True)
class Cell:
    """A grid cell: ``labels`` (config, treebank, seed, set: how the grid names it), the
    resolved ``config`` mapping, the ``data_root``, the ``punct`` rule of its scores and its
    ``directory``."""

    key: str
    labels: dict[str, str]
    config: dict[str, Any]
    data_root: str
    punct: str
    directory: str
    data_files: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1024)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file as it is at ``size`` and ``mtime_ns`` (cached: a grid names the same
    data files in many cells)."""
    from dparse.modeldir import file_sha256

    return file_sha256(path)


def _data_digest(path: Path) -> str:
    """SHA-256 of a data file, or a marker for a missing one (the cell then fails)."""
    try:
        st = path.stat()
        return _file_digest(str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def _by_content(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with each config file it names (:func:`config_references`) replaced by the
    digest of its bytes (the same mapping when it names none)."""
    named = [(section, key) for section, key in config_references()
             if (config.get(section) or {}).get(key)]
    if not named:
        return config
    out = {**config}
    for section, key in named:
        digest = _data_digest(Path(config[section][key]))
        out[section] = {**config[section], key: f"sha256 {digest}"}
    return out


def cell_key(config: dict[str, Any], data_files: dict[str, str], punct: str) -> str:
    """Hash of a resolved config (the config files it names by their content), the content of
    its data files (``split -> path``) and the scoring rule: equal keys mean equal results
    (training is seeded)."""
    identity = {"config": _by_content(config), "punct": punct,
                "data": {split: _data_digest(Path(p)) for split, p in sorted(data_files.items())}}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def read_result(directory: str | Path) -> dict[str, Any] | None:
    """A cell's recorded result, or None if it has none (never run, or a run cut short)."""
    try:
        return json.loads((Path(directory) / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_finished(directory: str | Path) -> bool:
    """Whether a cell ran to the end successfully."""
    result = read_result(directory)
    return result is not None and result.get("status") == "ok"


def record_failure(cell: Cell, error: str, log: str = "") -> dict[str, Any]:
    """Write and return a failed result (``error``: one line; ``log``: details)."""
    directory = Path(cell.directory)
    directory.mkdir(parents=True, exist_ok=True)
    record = {**cell.labels, "key": cell.key, "status": "failed", "error": error}
    write_text(directory / LOG_FILE, log or error + "\n")
    write_text(directory / RESULT_FILE, json.dumps(record, indent=1) + "\n")
    return record


def run_cell(cell: Cell) -> dict[str, Any]:
    """Train, parse and score one cell in its directory; its result record (also written to
    ``result.json``). A finished cell returns its recorded result at once (a task that Dask
    reruns after losing its worker does not train twice)."""
    done = read_result(cell.directory)
    if done is not None and done.get("status") == "ok":
        return done
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        record = _train_parse_score(cell, log)
    except Exception as exc:  # noqa: BLE001 - a failed cell is recorded, the grid goes on
        log.write(traceback.format_exc())
        return record_failure(cell, f"{type(exc).__name__}: {exc}", log.getvalue())
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    directory = Path(cell.directory)
    write_text(directory / LOG_FILE, log.getvalue())
    write_text(directory / RESULT_FILE, json.dumps(record, indent=1) + "\n")
    return record


def _train_parse_score(cell: Cell, log: io.StringIO) -> dict[str, Any]:
    from dparse.config import load_config
    from dparse.conll import read_treebank
    from dparse.epochs import EpochReport, save_model
    from dparse.errors import ConfigError
    from dparse.parsers import train_parser
    from dparse.tagging.pipeline import has_tagger
    from dparse.timer import ParseTimer

    directory = Path(cell.directory)
    directory.mkdir(parents=True, exist_ok=True)
    cfg = load_config(raw=json.loads(json.dumps(cell.config)), data_root=cell.data_root)
    if not cfg.data.test:
        raise ConfigError(f"{cfg.name}: the config has no data.test file to score")

    def on_epoch(ep: EpochReport) -> None:
        log.write(ep.summary(cfg.data.dev, cfg.training.punct) + "\n")

    log.write(f"cell {cell.key}: {json.dumps(cell.labels)}\n")
    started = time.perf_counter()
    options = {"work": str(directory / WORK_DIR), "jobs": 1} if has_tagger(cfg) else {}
    result = train_parser(cfg, progress=False, on_epoch=on_epoch, **options)
    train_seconds = time.perf_counter() - started
    model_dir = directory / MODEL_DIR
    save_model(result, cfg, model_dir)
    gold = read_treebank(cfg.data_path(cfg.data.test), fmt=cfg.data.format,
                         encoding=cfg.data.encoding)
    timer = ParseTimer()
    scores, counts = _score_test(cell, cfg, model_dir, gold, timer, log)
    return {**cell.labels, "key": cell.key, "status": "ok", "name": cfg.name, **scores,
            "tokens_per_second": round(timer.tokens_per_second, 1),
            "train_seconds": round(train_seconds, 2), "best_epoch": result.best_epoch,
            **counts, "host": socket.gethostname(), "batch_job": batch_job_id()}


def _score_test(cell: Cell, cfg: ExperimentConfig, model_dir: Path, gold: list[Sentence],
                timer: ParseTimer, log: io.StringIO) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse the test file ``gold`` with the cell's model, write the output and score it: the
    record's scores and its ``test_sentences`` and ``test_tokens`` (module doc). A tagger
    tags it, a pipeline model tags and parses it, a model that reads no tag column parses
    it, all three from its words alone; any other model parses it as it is."""
    from dparse.conll import write_conll
    from dparse.metrics import evaluate
    from dparse.parsers import load_parser
    from dparse.tagging.pipeline import TagOnly, has_tagger, load_tagger
    from dparse.tagscores import TAG_SCORES, score_tags

    tag_only = not family(cfg.parser).parses
    pipeline = has_tagger(cfg)
    if not (tag_only or pipeline or reads_words_only(model_dir)):
        parsed = list(load_parser(model_dir, cfg, None).parse(gold, timer))
        write_conll(parsed, Path(cell.directory) / PARSED_FILE, encoding=cfg.data.encoding)
        report = evaluate(gold, parsed, punct=cell.punct)
        log.write(f"test UAS {report.uas} LAS {report.las}; {timer.line()})\n")
        return ({"uas": report.uas, "las": report.las, "punct": cell.punct},
                {"test_sentences": report.sentences, "test_tokens": report.tokens})
    words = [s.words_only() for s in gold]
    system = (TagOnly(load_tagger(model_dir, cfg), "predict") if tag_only
              else load_parser(model_dir, cfg, None, tags="predict"))
    output = list(system.parse(words, timer))
    write_conll(output, Path(cell.directory) / (TAGGED_FILE if tag_only else PARSED_FILE),
                encoding=cfg.data.encoding)
    tags = score_tags(gold, output).as_dict()
    shown = ", ".join(f"{key} {value}" for key, value in tags.items())
    if tag_only:
        log.write(f"test {shown}; {timer.line('tagged')})\n")
        return ({"uas": None, "las": None, "punct": cell.punct, "tags": "predicted", **tags},
                {"test_sentences": len(gold), "test_tokens": tags["tag_words"]})
    report = evaluate(gold, output, punct=cell.punct)
    scores = {"uas": report.uas, "las": report.las, "punct": cell.punct}
    if pipeline or any(tags[key] is not None for key in TAG_SCORES):
        scores |= {"tags": "predicted", **tags}
        log.write(f"test UAS {report.uas} LAS {report.las}, {shown}; {timer.line()})\n")
    else:
        log.write(f"test UAS {report.uas} LAS {report.las} (words alone); {timer.line()})\n")
    return scores, {"test_sentences": report.sentences, "test_tokens": report.tokens}


def reads_words_only(model_dir: Path) -> bool:
    """Whether the parser model in ``model_dir`` reads none of LEMMA, UPOS, XPOS and FEATS
    (the unread columns its vocabulary file records; False for a model without one)."""
    from dparse.columns import COLUMNS
    from dparse.modeldir import VOCAB_FILE
    from dparse.vocab import Vocabulary

    path = model_dir / VOCAB_FILE
    return path.is_file() and set(COLUMNS) <= set(Vocabulary.read_columns(path)[0])


def batch_job_id() -> str | None:
    """The SLURM or PBS job this process runs in (None outside a batch job)."""
    return os.environ.get("SLURM_JOB_ID") or os.environ.get("PBS_JOBID")
