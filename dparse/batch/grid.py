"""Experiment grids: configs x treebanks x seeds x override sets, each cell trained, parsed
and scored on a Dask cluster (:mod:`dparse.batch.cluster`), results in one table.

A grid file (YAML; paths relative to the file's directory)::

    name: smoke                       # default: the file's stem
    configs: [../en_ewt/o1-cle.yaml, ../en_ewt/easyfirst.yaml]
    treebanks:                        # optional (default: each config's own data section);
                                      # or a list file: treebanks: treebanks/tables.yaml, or
                                      # {file: treebanks/tables.yaml, except: [en_ewt]}
      - en_ewt                        # <name>/train.conllu, <name>/dev.conllu, <name>/test.conllu
      - {name: eus, train: conll2007_nltk/eus.train, dev: null,
         test: conll2007_nltk/eus.test, encoding: iso-8859-1,
         overrides: [decoder.single_root=false]}   # this treebank's cells only
    seeds: [1, 2]                     # optional: training.seed of each cell (default: the config's)
    sets:                             # optional named --set lists (default: one empty set)
      base: []
      short: [training.epochs=2]
    overrides: [training.epochs=5]    # optional: every cell, before its treebank's and set's
    punct: include                    # punctuation rule of the scores
    cluster: {workers: 4, queue: debug, walltime: "02:00:00", memory: 4GB}

A cell's config is named ``<treebank>-<config stem>`` when the grid lists treebanks (as
benchmarks/treebanks.py names them), else keeps its own name. A config file that a config
names (a pipeline's ``tagger.config``, a reranker's ``rerank.first_stage``) is resolved against
that config's folder to an absolute path, which workers find from any folder. Cells are keyed by
:func:`dparse.batch.cells.cell_key`; :func:`run_grid` skips finished cells, runs the others
(Dask reruns the cell of a lost worker on another one), records failed cells with their
errors, and writes ``results.md``, ``results.json`` and ``results.csv`` for all cells in grid
order.
"""

from __future__ import annotations

import copy
import csv
import datetime
import io
import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dparse.batch.cells import (
    MODEL_DIR,
    Cell,
    cell_key,
    is_finished,
    read_result,
    record_failure,
    run_cell,
)
from dparse.batch.cluster import ClusterOptions
from dparse.config import read_yaml
from dparse.errors import ConfigError, DparseError
from dparse.modeldir import WEIGHTS_FILE
from dparse.outputs import write_text

GRID_KEYS = ("name", "configs", "treebanks", "seeds", "sets", "overrides", "punct", "cluster")
LABELS = ("config", "treebank", "seed", "set")
COLUMNS = (*LABELS, "status", "UAS", "LAS", "tokens/sec", "train s", "cell")
CSV_FIELDS = (*LABELS, "status", "uas", "las", "tokens_per_second", "train_seconds", "key",
              "error")


@dataclass(frozen=True)
class Treebank:
    """A treebank's files relative to the data root (``dev`` None: no model selection), and
    ``KEY.PATH=VALUE`` overrides for its cells only (its tag set, its root rule)."""

    name: str
    train: str
    dev: str | None
    test: str
    encoding: str = "utf-8"
    overrides: tuple[str, ...] = ()


@dataclass
class GridSpec:
    """A parsed grid file (module doc)."""

    name: str
    source: str
    configs: list[Path]
    treebanks: list[Treebank | None]
    seeds: list[int | None]
    sets: dict[str, list[str]]
    overrides: list[str] = field(default_factory=list)
    punct: str = "include"
    cluster: dict[str, Any] = field(default_factory=dict)

    def cells(self, out_dir: Path, data_root: str | None,
              extra: tuple[str, ...] = ()) -> list[Cell]:
        """Every cell in grid order (configs, then treebanks, seeds, sets), with its config
        resolved (``extra``: overrides after the grid's, from the command line); a
        ConfigError names the grid file and the cell of a config that does not load."""
        from dparse.config import DEFAULT_DATA_ROOT, load_config

        root = str(Path(data_root or os.environ.get("DPARSE_DATA") or DEFAULT_DATA_ROOT)
                   .resolve())
        cells = []
        raws: dict[Path, Any] = {}
        for path, tb, seed, set_name in itertools.product(self.configs, self.treebanks,
                                                          self.seeds, self.sets):
            overrides = [*self.overrides, *(tb.overrides if tb else ()), *self.sets[set_name],
                         *extra]
            if tb is not None:
                overrides += [f"name={tb.name}-{path.stem}", f"data.train={tb.train}",
                              f"data.dev={'null' if tb.dev is None else tb.dev}",
                              f"data.test={tb.test}", f"data.encoding={tb.encoding}"]
            if seed is not None:
                overrides.append(f"training.seed={seed}")
            labels = {"config": path.stem, "treebank": tb.name if tb else "",
                      "seed": "" if seed is None else str(seed), "set": set_name}
            try:
                if path not in raws:  # read once: many cells share a config
                    raws[path] = read_yaml(path) or {}
                # by its absolute path: the config files it names (a pipeline's tagger.config)
                # resolve to absolute paths, found by a worker in any folder
                cfg = load_config(path.absolute(), overrides, root,
                                  raw=copy.deepcopy(raws[path]))
            except DparseError as exc:
                raise ConfigError(f"{self.source}: cell {labels}: {exc}") from None
            config = cfg.to_dict()
            files = {split: str(cfg.data_path(rel)) for split in ("train", "dev", "test")
                     if (rel := getattr(cfg.data, split))}
            key = cell_key(config, files, self.punct)
            cells.append(Cell(key, labels, config, root, self.punct,
                              str((out_dir / "cells" / key).resolve()), files))
        return cells


def _list(raw: dict[str, Any], key: str, source: str, kind: type | tuple[type, ...]) -> list:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, kind) and not isinstance(v, bool)
                                              for v in value):
        raise ConfigError(f"{source}: {key} must be a list of {getattr(kind, '__name__', kind)}")
    return value


def _treebank(entry: Any, source: str) -> Treebank:
    if isinstance(entry, str):
        return Treebank(entry, f"{entry}/train.conllu", f"{entry}/dev.conllu",
                        f"{entry}/test.conllu")
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError(f"{source}: each treebank is a name or a mapping with a name, "
                          f"not {entry!r}")
    unknown = set(entry) - {"name", "train", "dev", "test", "encoding", "overrides"}
    if unknown or not isinstance(entry.get("train"), str) or not isinstance(entry.get("test"),
                                                                             str):
        raise ConfigError(f"{source}: treebank {entry['name']}: needs train and test paths "
                          f"(and optional dev, encoding, overrides)"
                          f"{'; unknown ' if unknown else ''}{', '.join(sorted(unknown))}")
    overrides = _list(entry, "overrides", f"{source}: treebank {entry['name']}", str)
    return Treebank(entry["name"], entry["train"], entry.get("dev"), entry["test"],
                    entry.get("encoding", "utf-8"), tuple(overrides))


def load_treebanks(path: str | Path) -> list[Treebank]:
    """The treebank list of a YAML file (entries as a grid file's ``treebanks``), e.g.
    configs/grids/treebanks/tables.yaml, the setups of the reproduced tables."""
    entries = read_yaml(path)
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: a treebank list file is a YAML list")
    return [_treebank(entry, str(path)) for entry in entries]


def _treebanks(value: Any, base: Path, source: str) -> list[Treebank]:
    """A grid's ``treebanks``: a list, or a list file (relative to the grid file) as a name or
    as ``{file: NAME, except: [treebank, ...]}``."""
    if value is None:
        return []
    if isinstance(value, list):
        return [_treebank(t, source) for t in value]
    if isinstance(value, str):
        value = {"file": value}
    if (not isinstance(value, dict) or set(value) - {"file", "except"}
            or not isinstance(value.get("file"), str)):
        raise ConfigError(f"{source}: treebanks must be a list, a list file, or "
                          "{file: FILE, except: [NAME, ...]}")
    path = base / value["file"]
    if not path.is_file():
        raise ConfigError(f"{source}: treebanks: {path} does not exist")
    listed = load_treebanks(path)
    left_out = _list(value, "except", f"{source}: treebanks", str)
    unknown = sorted(set(left_out) - {tb.name for tb in listed})
    if unknown:
        raise ConfigError(f"{source}: treebanks: except names {', '.join(unknown)}, not in {path}")
    return [tb for tb in listed if tb.name not in left_out]


def load_grid(path: str | Path) -> GridSpec:
    """Read and check a grid file; ConfigError naming the file and the key otherwise."""
    from dparse.punct import PUNCT_RULES

    source = str(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a grid file is a mapping")
    unknown = sorted(set(raw) - set(GRID_KEYS))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)} "
                          f"(known: {', '.join(GRID_KEYS)})")
    base = Path(path).parent
    configs = [base / c for c in _list(raw, "configs", source, str)]
    if not configs:
        raise ConfigError(f"{source}: configs: list at least one experiment config")
    for config in configs:
        if not config.is_file():
            raise ConfigError(f"{source}: configs: {config} does not exist")
    treebanks = _treebanks(raw.get("treebanks"), base, source)
    seeds = _list(raw, "seeds", source, int)
    sets = raw.get("sets") or {"default": []}
    if not isinstance(sets, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(s, str) for s in v)
            for k, v in sets.items()):
        raise ConfigError(f"{source}: sets must map names to lists of KEY.PATH=VALUE strings")
    punct = raw.get("punct", "include")
    if punct not in PUNCT_RULES:
        raise ConfigError(f"{source}: punct {punct!r}: expected one of {', '.join(PUNCT_RULES)}")
    cluster = raw.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise ConfigError(f"{source}: cluster must be a mapping")
    ClusterOptions().merged(cluster, source)  # checks the keys and values now
    name = raw.get("name", Path(path).stem)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: name must be a non-empty string")
    return GridSpec(name, source, configs, treebanks or [None], seeds or [None], sets,
                    _list(raw, "overrides", source, str), punct, cluster)


def select_cells(cells: list[Cell], only: tuple[str, ...] | list[str]) -> list[Cell]:
    """The cells whose labels match every ``LABEL=V1,V2`` of ``only`` (one of the values);
    DparseError for an unknown label or a selection that leaves no cell."""
    for item in only:
        label, sep, values = item.partition("=")
        if not sep or label not in LABELS:
            raise DparseError(f"--only {item!r}: expected LABEL=VALUE[,VALUE...] with LABEL "
                              f"one of {', '.join(LABELS)}")
        wanted = set(values.split(","))
        cells = [c for c in cells if c.labels[label] in wanted]
    if not cells:
        raise DparseError(f"--only {' '.join(only)}: no cell of the grid matches")
    return cells


def _failure_of(exc: BaseException) -> str:
    """The error of a cell whose task failed outside :func:`run_cell` (a worker lost too
    often: Dask's KilledWorker)."""
    return f"{type(exc).__name__}: {exc}"


def run_grid(cells: list[Cell], client: Any,
             on_cell: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run the unfinished ``cells`` on ``client`` (a ``distributed.Client``); every cell's
    result record in grid order. ``on_cell`` is called once per cell, finished ones first
    (a progress bar)."""
    from distributed import as_completed

    todo = []
    for cell in cells:
        if is_finished(cell.directory):
            if on_cell:
                on_cell(read_result(cell.directory) or {})
        else:
            todo.append(cell)
    futures = {client.submit(run_cell, cell, key=f"dparse-cell-{cell.key}"): cell
               for cell in todo}
    try:
        for future in as_completed(futures):
            try:
                record = future.result()
            except Exception as exc:  # noqa: BLE001 - recorded: the grid goes on
                record = record_failure(futures[future], _failure_of(exc))
            if on_cell:
                on_cell(record)
    finally:
        client.cancel(list(futures))
    return [read_result(cell.directory) or {**cell.labels, "key": cell.key,
                                            "status": "failed", "error": "no result"}
            for cell in cells]


def _number(value: Any, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _tag_scores(records: list[dict[str, Any]]) -> dict[str, str]:
    """The tag scores' record keys and names (:data:`dparse.tagscores.TAG_SCORES`) if some cell
    ran on predicted tags, else none: the extra columns of the tables."""
    from dparse.tagscores import TAG_SCORES

    return dict(TAG_SCORES) if any(r.get("tags") == "predicted" for r in records) else {}


def markdown_table(name: str, records: list[dict[str, Any]]) -> str:
    """The results as Markdown: one row per cell (with the tag accuracies when some cell ran
    on predicted tags), then the errors of failed cells."""
    punct = next((r["punct"] for r in records if r.get("punct")), "include")
    hosts = ", ".join(sorted({r["host"] for r in records if r.get("host")})) or "no host yet"
    batch = sorted({r["batch_job"] for r in records if r.get("batch_job")})
    jobs = f" (batch jobs {', '.join(batch)})" if batch else ""
    tags = _tag_scores(records)
    at = COLUMNS.index("LAS") + 1
    columns = [*COLUMNS[:at], *tags.values(), *COLUMNS[at:]]
    tag_note = (" Cells on predicted tags tag (and parse) the test file from its words alone; "
                f"{', '.join(tags.values())}: their tag accuracies (percent)." if tags else "")
    lines = [f"# Grid {name}", "",
             f"UAS and LAS in percent on each cell's test file (punctuation: {punct}); "
             "tokens/sec of parsing it (inference only, one core); training wall-clock time."
             + tag_note,
             f"Written {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; cells run on "
             f"{hosts}{jobs}: tokens/sec and times depend on what else those cores ran.",
             "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in records:
        row = [r.get(k, "") for k in LABELS] + [
            r.get("status", ""), _number(r.get("uas"), 2), _number(r.get("las"), 2),
            *(_number(r.get(k), 2) for k in tags),
            _number(r.get("tokens_per_second"), 0), _number(r.get("train_seconds"), 1),
            r.get("key", "")]
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    failed = [r for r in records if r.get("status") != "ok"]
    if failed:
        lines += ["", "Failed cells (their logs: cells/<cell>/cell.log):", ""]
        lines += [f"- {r.get('key', '')}: {r.get('error', '')}" for r in failed]
    return "\n".join(lines) + "\n"


def csv_table(records: list[dict[str, Any]]) -> str:
    """The results as CSV (the fields of :data:`CSV_FIELDS`, and the tag scores' keys after
    ``las`` when some cell ran on predicted tags)."""
    at = CSV_FIELDS.index("las") + 1
    fields = [*CSV_FIELDS[:at], *_tag_scores(records), *CSV_FIELDS[at:]]
    out = io.StringIO()
    writer = csv.DictWriter(out, fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def write_tables(out_dir: Path, name: str, records: list[dict[str, Any]]) -> None:
    """``results.md``, ``results.json`` and ``results.csv`` in ``out_dir``."""
    write_text(out_dir / "results.md", markdown_table(name, records))
    write_text(out_dir / "results.json", json.dumps(records, indent=1) + "\n")
    write_text(out_dir / "results.csv", csv_table(records))


def cells_without_model(cells: list[Cell], folder: Path) -> list[Cell]:
    """The cells whose config name has no trained model (a weights file) in ``folder`` yet:
    what a table script that looks models up by name there would still have to train."""
    return [c for c in cells if not (folder / c.config["name"] / WEIGHTS_FILE).is_file()]


def export_models(cells: list[Cell], records: list[dict[str, Any]], folder: Path) -> list[str]:
    """Link each finished cell's model as ``folder/<config name>`` (for scripts that look
    models up by name, e.g. ``benchmarks/greedy_tables.py --reuse``); names given by several
    cells, or taken by something else, are skipped and returned."""
    folder.mkdir(parents=True, exist_ok=True)
    names: dict[str, list[Cell]] = {}
    for cell, record in zip(cells, records, strict=True):
        if record.get("status") == "ok":
            names.setdefault(record["name"], []).append(cell)
    skipped = []
    for name, owners in names.items():
        link = folder / name
        target = Path(owners[0].directory) / MODEL_DIR
        if len(owners) > 1 or (link.exists() and not link.is_symlink()):
            skipped.append(name)
            continue
        if link.is_symlink():
            if link.resolve() == target.resolve():
                continue
            link.unlink()  # a link to an older cell of the same name
        link.symlink_to(target, target_is_directory=True)
    return skipped
