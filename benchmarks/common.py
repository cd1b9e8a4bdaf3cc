"""The helpers that several scripts under benchmarks/ share: each script imports them from here
(and from dparse), never from another script; a helper that one script uses stays in it.

Treebanks and configs
  - :data:`REPO`, :data:`CONFIGS`: the checkout, and its configs/en_ewt/ folder.
  - :data:`TREEBANKS`: the treebank setups that the table scripts run on
    (configs/grids/treebanks/tables.yaml, which the grids of the tables' models list too, each
    naming its files relative to the data root; :class:`dparse.batch.grid.Treebank` each).
  - :func:`config_for`: an en_ewt config adapted to a setup; :func:`missing_files`: the files
    of a setup not under a data root.
  - :data:`UD_GRID`, :func:`present`: the ud grid (configs/grids/ud.yaml) and its treebanks
    present under a data root; :data:`UD_TAGGED_GRID`, :data:`UD_NEURAL_GRID`: the grids on
    the same treebanks of make ud-table TAGS=predicted and SCORER=neural.

Training and finding models
  - :func:`find_or_train`: a model trained as a config says, found by name in a models folder
    (or in a ``--reuse`` one) or trained into it; :func:`training_identity`: what decides
    whether a found model is the one the config trains.
  - :data:`Log`, :func:`log`: a progress callback, and one that writes to stderr.

Parsing with models
  - :func:`measure`: UAS, LAS and tokens/sec of a model directory on a test file.
  - :class:`System`, :func:`run_model`, :func:`scores`: several decoders (plain or biased
    towards other parses, as an ensemble) over one graph model's scores, each sentence scored
    once, and the scores of a row.
  - :func:`load_grid`, :class:`DevScores`, :func:`tune`: a staged grid search of decoder
    options and ensemble gammas on dev scores kept in memory (benchmarks/greedy_tune.py).

Synthetic scores
  - :func:`random_parts`: random arc, sib, grand, trisib and gsib scores over pruned arcs.
  - :func:`planted_tree`, :func:`planted_scores`: a random tree and second-order scores that
    favour it (benchmarks/dd2_certification.py).

Timing
  - :func:`seconds_per_call`: a stable per-call time of a fast function (median of 5 batches).
  - :func:`length_bins`: per-sentence times grouped by sentence length (:data:`LENGTH_BINS`),
    the mean length and mean seconds of each bin: the points of a time-against-n plot on real
    data.
  - :data:`DECODERS`, :func:`time_decoders`: third-order decoders timed on the same random part
    scores (benchmarks/cube_scaling.py; ``make bench`` reports the same rows).

Tables and formatting
  - :func:`decoder_table`: the Markdown rows of :func:`time_decoders`.
  - :func:`finished`: the result records of a grid run's cells (the ud grid's by default);
    :func:`ok_by_cell`: the finished ones by (treebank, config); :func:`uas_las`: a record's
    scores; :func:`stale_mark`: the ``*`` of a record from an earlier run.
  - :func:`fmt_pair`: ``UAS / LAS`` as a table cell; :func:`fmt_num`: a score or ``-``;
    :func:`fmt_speed`: a cell's tokens/sec (relative to another's) and training time.

Child processes
  - :data:`THREAD_VARS`: the thread-count variables set to 1 for single-threaded children.
  - :func:`run_child`: run a child to completion: wall seconds, peak RSS and stderr.

dparse is imported inside the helpers that use it, and :data:`TREEBANKS` read on first use, so
that importing this module costs a script only what it uses (benchmarks/bench_compare.py still
starts in a checkout whose extensions are not built yet: it builds them).
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

if TYPE_CHECKING:
    from dparse.batch.grid import Treebank
    from dparse.config import ExperimentConfig
    from dparse.conll import Sentence
    from dparse.decoders import Decoder
    from dparse.graph.model import GraphModel


# -- treebanks and configs ------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs" / "en_ewt"
TABLE_SETUPS = CONFIGS.parent / "grids" / "treebanks" / "tables.yaml"  # read into TREEBANKS
UD_GRID = CONFIGS.parent / "grids" / "ud.yaml"
UD_TAGGED_GRID = CONFIGS.parent / "grids" / "ud-tagged.yaml"  # make ud-table TAGS=predicted
UD_NEURAL_GRID = CONFIGS.parent / "grids" / "ud-neural.yaml"  # make ud-table SCORER=neural


def __getattr__(name: str) -> Any:
    """``TREEBANKS``, the setups of :data:`TABLE_SETUPS`, read on first use (PEP 562)."""
    if name == "TREEBANKS":
        from dparse.batch.grid import load_treebanks

        treebanks = globals()["TREEBANKS"] = load_treebanks(TABLE_SETUPS)
        return treebanks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def config_for(name: str, tb: Treebank, epochs: int | None) -> dict:
    """The en_ewt config ``name`` (configs/en_ewt/NAME.yaml) with the treebank's files, the
    name ``<treebank>-<name>`` and ``decoder.single_root: auto`` (one root word where every
    training tree has one: all but the CoNLL 2007 Basque data), as a raw mapping; ``epochs``
    overrides the training epochs."""
    raw = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    raw["name"] = f"{tb.name}-{name}"
    raw["data"].update(train=tb.train, dev=tb.dev, test=tb.test, encoding=tb.encoding)
    raw.setdefault("decoder", {})["single_root"] = "auto"
    if epochs is not None:
        raw["training"]["epochs"] = epochs
    return raw


def missing_files(tb: Treebank, data_root: str | Path) -> list[str]:
    """The files of ``tb`` (train, dev, test; relative to ``data_root``) not found there."""
    return [f for f in (tb.train, tb.dev, tb.test) if f and not (Path(data_root) / f).is_file()]


def present(data_root: Path, grid: Path = UD_GRID) -> list[str]:
    """The treebanks of ``grid`` (the ud grid by default) whose files are all under
    ``data_root``."""
    from dparse.batch.grid import load_grid

    return [tb.name for tb in load_grid(grid).treebanks
            if tb is not None and not missing_files(tb, data_root)]


# -- training and finding models ------------------------------------------------------------------

Log = Callable[[str], None]


def log(msg: str) -> None:
    """A progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def training_identity(cfg: ExperimentConfig) -> dict:
    """What determines the trained model: the resolved config without its name, ``ensemble``
    section and parse-time decoder (kept when training uses it: ``training.decoder`` null)."""
    out = cfg.to_dict()
    del out["name"], out["ensemble"]
    decoder = out.pop("decoder")
    out["single_root"] = decoder["single_root"]
    if cfg.training.decoder is None:
        out["training"]["decoder"] = decoder["name"]
        out["training"]["decoder_options"] = decoder["options"]
    return out


def find_or_train(cfg: ExperimentConfig, models: Path, reuse: list[Path], log: Log) -> Path:
    """The directory of a model trained as ``cfg`` says, training it into ``models`` if no
    folder (``models`` first, then ``reuse``) has one under ``cfg.name``."""
    from dparse.config import load_config
    from dparse.epochs import save_model
    from dparse.modeldir import CONFIG_FILE, WEIGHTS_FILE
    from dparse.parsers import train_parser

    want = training_identity(cfg)
    for folder in [models, *reuse]:
        path = folder / cfg.name
        if not (path / WEIGHTS_FILE).is_file():
            continue
        if training_identity(load_config(path / CONFIG_FILE)) == want:
            return path
        if folder == models:
            raise SystemExit(f"{path} was trained with another config than {cfg.name} needs "
                             "here; move it away or choose another --models folder")
    path = models / cfg.name
    t0 = time.perf_counter()
    save_model(train_parser(cfg, progress=False), cfg, path)
    log(f"trained {cfg.name} in {time.perf_counter() - t0:.0f}s -> {path}")
    return path


# -- parsing with models --------------------------------------------------------------------------

def measure(model_dir: Path, test: Sequence[Sentence], punct: str,
            overrides: Sequence[str] = ()) -> dict:
    """Parse ``test`` with the model (``overrides``: parse-time ``key=value`` settings, as
    ``dparse parse --set``): {"uas", "las", "tokens_per_second", "seconds", "tokens"}."""
    from dparse.config import load_config
    from dparse.metrics import evaluate
    from dparse.modeldir import CONFIG_FILE
    from dparse.parsers import check_model_overrides, load_parser
    from dparse.timer import ParseTimer

    check_model_overrides(model_dir, overrides)
    cfg = load_config(model_dir / CONFIG_FILE, list(overrides))
    parser = load_parser(model_dir, cfg, None)
    timer = ParseTimer()
    parsed = list(parser.parse(test, timer))
    report = evaluate(test, parsed, punct=punct)
    return {"uas": report.uas, "las": report.las, "tokens_per_second": timer.tokens_per_second,
            "seconds": timer.seconds, "tokens": timer.tokens}


@dataclass
class System:
    """One row: a decoder over a model's scores, optionally biased towards another parse."""

    name: str
    decoder: Decoder
    single_root: bool
    gammas: tuple[float, float] | None = None  # (gamma1, gamma2) for an ensemble ...
    others: list[list[Sentence]] = field(default_factory=list)  # ... towards these parses
    seconds: float = 0.0  # decoding (and biasing) time
    parsed: list[Sentence] = field(default_factory=list)


def run_model(model: GraphModel, test: list[Sentence], systems: list[System]) -> float:
    """Parse ``test`` with every system, scoring each sentence once; returns the encoding and
    scoring seconds (each system's ``seconds`` gets its own decoding time)."""
    from dparse.graph.ensemble import bias_parts, decode_scored
    from dparse.timer import ParseTimer

    timer = ParseTimer()
    names = model.vocab.labels
    for k, sent in enumerate(test):
        t0 = time.perf_counter()
        enc = model.vocab.encode(sent)
        t1 = time.perf_counter()
        arc, label, parts = model.score_parts(enc, None, False)
        timer.encode += t1 - t0
        timer.score += time.perf_counter() - t1
        for system in systems:
            t0 = time.perf_counter()
            a, p = arc, parts
            if system.gammas is not None:
                a, p = bias_parts(arc, parts, [other[k].heads for other in system.others],
                                  *system.gammas)
            heads, labels = decode_scored(system.decoder, a, label, p, system.single_root)
            system.seconds += time.perf_counter() - t0
            system.parsed.append(sent.with_parse(heads, [""] + [names[i] for i in labels[1:]]))
    return timer.encode + timer.score


def scores(test: list[Sentence], parsed: list[Sentence], seconds: float, punct: str,
           exact: list[Sentence] | None) -> dict:
    """UAS, LAS, U-UAS, tokens/sec and (against the exact parse) SARC of one row."""
    from dparse.metrics import evaluate

    rep = evaluate(test, parsed, punct=punct, other=exact)
    tokens = sum(len(s) for s in test)
    out = {"uas": rep.uas, "las": rep.las, "u_uas": rep.u_uas,
           "tokens_per_second": tokens / seconds if seconds > 0 else 0.0}
    if exact is not None:
        out["sarc"] = rep.sarc
    return out


# The grid search of greedy decoding (benchmarks/greedy_tune.py, whose module doc describes the
# grid files) and of the ensembles of benchmarks/greedy_ensemble.py.

GAMMAS = ("gamma1", "gamma2")


@dataclass
class Stage:
    """One stage of the grid: its name and the values of each key, in order."""

    name: str
    values: dict[str, list]

    @property
    def ensemble(self) -> bool:
        return any(key in GAMMAS for key in self.values)

    def settings(self) -> Iterator[dict]:
        """Every combination of the stage's values, the last key varying fastest."""
        keys = list(self.values)
        for combo in itertools.product(*self.values.values()):
            yield dict(zip(keys, combo, strict=True))


@dataclass
class Grid:
    decoder: str | None
    stages: list[Stage]


def load_grid(path: str | Path) -> Grid:
    """Read and check a grid file; DparseError naming the file and the bad entry."""
    from dparse.errors import DparseError

    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DparseError(f"{path}: cannot read the grid: {exc}") from None
    if not isinstance(raw, dict) or set(raw) - {"decoder", "stages"}:
        raise DparseError(f"{path}: a grid is a mapping with the keys decoder and stages")
    decoder = raw.get("decoder")
    if decoder is not None and not isinstance(decoder, str):
        raise DparseError(f"{path}: decoder must be a decoder name or null")
    stages = raw.get("stages")
    if not isinstance(stages, list) or not stages:
        raise DparseError(f"{path}: stages must be a non-empty list")
    out = []
    for i, stage in enumerate(stages, 1):
        if not isinstance(stage, dict):
            raise DparseError(f"{path}: stage {i} must be a mapping")
        stage = dict(stage)
        name = str(stage.pop("name", f"stage {i}"))
        for key, values in stage.items():
            if not isinstance(values, list) or not values:
                raise DparseError(f"{path}: stage {i} ({name}): {key} must be a non-empty list")
            if key in GAMMAS and not all(isinstance(v, int | float) and v >= 0 for v in values):
                raise DparseError(f"{path}: stage {i} ({name}): {key} values must be >= 0")
        if not stage:
            raise DparseError(f"{path}: stage {i} ({name}) has no keys")
        out.append(Stage(name, stage))
    return Grid(decoder, out)


class DevScores:
    """The scores (arc, label, parts) of every dev sentence, computed once when they fit in
    ``budget`` bytes (parts in float32 when float64 does not fit), else on every pass;
    ``seconds`` is the time the first scoring took."""

    def __init__(self, model: GraphModel, sentences: list[Sentence], budget: float) -> None:
        t0 = time.perf_counter()
        self.model = model
        self.sentences = sentences
        self.encoded = [model.vocab.encode(s) for s in sentences]
        n_parts = len(model.score_parts(self.encoded[0], None, False)[2]) if sentences else 0
        self.higher_order = n_parts > 0
        sizes = np.array([len(s) + 1 for s in sentences], dtype=np.float64)
        first = float((sizes**2).sum()) * 12  # arc float64 + label int32
        higher = float((sizes**3).sum()) * n_parts
        self.dtype: type | None = None
        for dtype in (np.float64, np.float32):
            if first + higher * np.dtype(dtype).itemsize <= budget:
                self.dtype = dtype
                break
        self.cache = list(self._score()) if self.dtype is not None else None
        self.seconds = time.perf_counter() - t0

    def _score(self) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
        for enc in self.encoded:
            arc, label, parts = self.model.score_parts(enc, None, False)
            if self.dtype is not None:
                parts = {k: v.astype(self.dtype, copy=False) for k, v in parts.items()}
            yield arc, label, parts

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
        return iter(self.cache) if self.cache is not None else self._score()

    @property
    def storage(self) -> str:
        if self.dtype is None:
            return "re-scored on every pass (too big to keep)"
        return f"kept in memory ({np.dtype(self.dtype).name} part arrays)"


def decode_all(scores: DevScores, decoder_name: str, options: dict, gammas: dict | None,
               others: list[list[Sentence]], single_root: bool) -> tuple[list[Sentence], float]:
    """The dev sentences parsed with one setting (biased towards ``others``, the other
    parsers' dev outputs, when ``gammas`` are given), and the decoding (and biasing) seconds."""
    from dparse.decoders import configured_decoder
    from dparse.graph.ensemble import bias_parts, decode_scored

    decoder = configured_decoder(decoder_name, options)
    names = scores.model.vocab.labels
    parsed = []
    seconds = 0.0
    for k, (sent, (arc, label, parts)) in enumerate(zip(scores.sentences, scores, strict=True)):
        t0 = time.perf_counter()
        if gammas is not None:
            arc, parts = bias_parts(arc, parts, [other[k].heads for other in others],
                                    gammas["gamma1"], gammas["gamma2"])
        heads, labels = decode_scored(decoder, arc, label, parts, single_root)
        seconds += time.perf_counter() - t0
        parsed.append(sent.with_parse(heads, [""] + [names[i] for i in labels[1:]]))
    return parsed, seconds


def tune(model_dir: Path, scores: DevScores, grid: Grid, others: list[list[Sentence]],
         punct: str, log: Callable[[str], None] = print) -> dict:
    """Run the grid's stages over ``scores`` (the dev file scored by the model in
    ``model_dir``); returns the report as plain data (see greedy_tune.py's ``write_report``)."""
    from dparse.config import load_config
    from dparse.decoders import check_decoder
    from dparse.graph.ensemble import aligned
    from dparse.metrics import evaluate, format_score
    from dparse.modeldir import CONFIG_FILE

    cfg = load_config(model_dir / CONFIG_FILE)
    decoder = grid.decoder or cfg.decoder.name
    options = dict(cfg.decoder.options) if decoder == cfg.decoder.name else {}
    gammas = {"gamma1": cfg.ensemble.gamma1, "gamma2": cfg.ensemble.gamma2}
    for stage in grid.stages:  # every decoder setting is valid before anything runs
        for setting in stage.settings():
            opts = {**options, **{k: v for k, v in setting.items() if k not in GAMMAS}}
            check_decoder(f"grid {stage.name!r}", "decoder", decoder, "options", opts)
    dev = scores.sentences
    list(aligned(dev, *others))
    report = {"model": str(model_dir), "decoder": decoder, "sentences": len(dev),
              "tokens": sum(len(s) for s in dev), "punct": punct, "storage": scores.storage,
              "score_seconds": scores.seconds, "start": {**options, **gammas},
              "stages": []}
    for stage in grid.stages:
        if stage.ensemble and not others:
            report["stages"].append({"name": stage.name, "skipped": "no --other parse"})
            log(f"{stage.name}: skipped (no --other parse)")
            continue
        if "gamma2" in stage.values and not scores.higher_order:
            # no sibling or grandparent parts: gamma2 changes nothing, keep the starting value
            stage = Stage(stage.name, {**stage.values, "gamma2": [gammas["gamma2"]]})
        rows = []
        for setting in stage.settings():
            opts = {**options, **{k: v for k, v in setting.items() if k not in GAMMAS}}
            gam = {**gammas, **{k: v for k, v in setting.items() if k in GAMMAS}}
            parsed, seconds = decode_all(scores, decoder, opts, gam if stage.ensemble else None,
                                         others, cfg.decoder.single_root)
            uas = evaluate(dev, parsed, punct=punct).uas
            rows.append({"setting": setting, "uas": uas,
                         "decode_tokens_per_second": report["tokens"] / max(seconds, 1e-9)})
            log(f"{stage.name}: {setting} -> UAS {format_score(uas, 0)}")
        best = max(range(len(rows)), key=lambda i: (rows[i]["uas"], -i))
        chosen = rows[best]["setting"]
        options.update({k: v for k, v in chosen.items() if k not in GAMMAS})
        gammas.update({k: v for k, v in chosen.items() if k in GAMMAS})
        report["stages"].append({"name": stage.name, "ensemble": stage.ensemble, "rows": rows,
                                 "best": best})
    report["best"] = {"decoder": {"name": decoder, "options": options}, "ensemble": gammas}
    return report


# -- synthetic scores -----------------------------------------------------------------------------

HEADS = (3, 5)  # random_parts: candidate heads per word, uniform in this range (inclusive)


def random_parts(rng: np.random.Generator, n: int,
                 heads: tuple[int, int] = HEADS) -> dict[str, np.ndarray]:
    """Random scores of one sentence of n words: "arc" [n+1, n+1] with each word's arcs from
    all but ``heads`` (lo..hi, inclusive) random candidate heads pruned (-inf), and dense
    standard normal "sib", "grand" [n+1]^3 and "trisib", "gsib" [n+1]^4."""
    size = n + 1
    keep = np.zeros((size, size), dtype=bool)
    for m in range(1, size):
        others = np.delete(np.arange(size), m)
        count = min(int(rng.integers(heads[0], heads[1] + 1)), len(others))
        keep[rng.choice(others, size=count, replace=False), m] = True
    arc = np.where(keep, rng.standard_normal((size, size)), -np.inf)
    return {"arc": arc, "sib": rng.standard_normal((size,) * 3),
            "grand": rng.standard_normal((size,) * 3),
            "trisib": rng.standard_normal((size,) * 4),
            "gsib": rng.standard_normal((size,) * 4)}


def planted_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random tree, int [n+1]: words attached in random order to earlier ones, near ones
    preferred (weight exp(-distance / 3))."""
    heads = np.full(n + 1, -1)
    order = rng.permutation(np.arange(1, n + 1))
    heads[order[0]] = 0
    for i, m in enumerate(order[1:], start=1):
        placed = order[:i]
        weight = np.exp(-np.abs(placed - m) / 3.0)
        heads[m] = rng.choice(placed, p=weight / weight.sum())
    return heads


def planted_scores(
    rng: np.random.Generator,
    heads: np.ndarray,
    arc_gold: float,
    so_gold: float,
    so_noise: float,
    keep: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """arc [n+1, n+1], sib and grand [n+1, n+1, n+1] for the planted tree ``heads``: arc scores
    N(0, 1) noise plus ``arc_gold`` on the planted arcs, sib and grand N(0, ``so_noise``) noise
    plus ``so_gold`` on the planted tree's parts; the arcs outside each word's ``keep`` best
    heads pruned (-inf) but the planted ones, as a first-order pruner of full recall would."""
    n1 = heads.shape[0]
    words = np.arange(1, n1)
    arc = rng.normal(size=(n1, n1))
    arc[heads[1:], words] += arc_gold
    sib = so_noise * rng.normal(size=(n1, n1, n1))
    grand = so_noise * rng.normal(size=(n1, n1, n1))
    for h in range(n1):
        mine = heads[1:] == h
        for side in (words[mine & (words > h)], words[mine & (words < h)][::-1]):
            prev = h
            for m in side:
                sib[h, prev, m] += so_gold
                prev = m
    inner = words[heads[1:] > 0]
    grand[heads[heads[inner]], heads[inner], inner] += so_gold
    if keep < n1 - 1:
        ranked = np.where(np.eye(n1, dtype=bool), -np.inf, arc)[:, 1:]
        cut = -np.sort(-ranked, axis=0)[keep - 1]  # each word's keep-th best head score
        pruned = ranked < cut
        pruned[heads[1:], words - 1] = False  # a pruner of full recall keeps the planted arcs
        arc[:, 1:][pruned] = -np.inf
    return arc, sib, grand


# -- timing ---------------------------------------------------------------------------------------

LENGTH_BINS = (1, 6, 11, 16, 21, 31, 41, 61, 1000)  # bin edges: [1, 6), [6, 11), ...


def seconds_per_call(fn: Callable[[], object], budget: float) -> float:
    """Median over 5 batches of the mean time per call; batches sized to ``budget`` seconds."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(budget / 5 / once))
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return float(np.median(times))


def length_bins(lengths: Sequence[int], seconds: Mapping[str, Sequence[float]],
                edges: Sequence[int] = LENGTH_BINS) -> list[dict]:
    """One dict per non-empty bin: "bin" ("lo-hi"), "sentences", "n" (mean length) and, for
    each name of ``seconds`` (name -> seconds per sentence, aligned with ``lengths``), the mean
    seconds per sentence of the bin."""
    n = np.asarray(lengths)
    times = {name: np.asarray(s, float) for name, s in seconds.items()}
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (n >= lo) & (n < hi)
        if inside.any():
            bins.append({"bin": f"{lo}-{min(hi - 1, int(n.max()))}",
                         "sentences": int(inside.sum()), "n": float(n[inside].mean()),
                         **{name: float(s[inside].mean()) for name, s in times.items()}})
    return bins


# Third-order decoders timed on the same random part scores (benchmarks/cube_scaling.py, whose
# module doc says why each decoder reads the arrays through the scorer its chart asks).

INSTANCES = 2  # time_decoders: random sentences per length
Parts = dict[str, np.ndarray]
Decode = Callable[[], np.ndarray]


def cube(k: int, recombination: bool) -> Callable[[Parts], Decode]:
    """``cube`` with beam k over an ArrayScorer of every part array."""
    def prepare(p: Parts) -> Decode:
        from dparse.graph.generalized_eisner import ArrayScorer

        from dparse.graph.decoders import CubePruning

        scorer = ArrayScorer(p["arc"], p["sib"], p["grand"], p["trisib"], p["gsib"])
        decoder = CubePruning(k, recombination)
        return lambda: decoder.parse(p["arc"], scorer)[0]
    return prepare


def third_order(outermost: bool) -> Callable[[Parts], Decode]:
    """``eisner3`` (``eisner3-outermost`` if outermost) over an ArrayPartScorer."""
    def prepare(p: Parts) -> Decode:
        from dparse.graph.eisner3 import eisner3_scorer
        from dparse.graph.partscorer import ArrayPartScorer

        scorer = ArrayPartScorer(p["arc"], p["sib"], p["grand"], p["trisib"], p["gsib"])
        return lambda: eisner3_scorer(scorer, True, outermost)
    return prepare


def second_order(p: Parts) -> Decode:
    """``eisner2-sibgp`` on the arc, sib and grand arrays (O(n^3) checks per call)."""
    from dparse.decoders import get_decoder

    decoder = get_decoder("eisner2-sibgp")
    return lambda: decoder.decode(p["arc"], sib=p["sib"], grand=p["grand"])


def first_order(p: Parts) -> Decode:
    """``eisner`` on the arc scores: the same-run reference."""
    from dparse.decoders import get_decoder

    decoder = get_decoder("eisner")
    return lambda: decoder.decode(p["arc"])


# (row label, decoder over one sentence's parts, built outside the timing)
DECODERS: list[tuple[str, Callable[[Parts], Decode]]] = [
    ("cube k=5", cube(5, True)),
    ("cube k=5, no recombination", cube(5, False)),
    ("eisner3-outermost", third_order(True)),
    ("eisner3", third_order(False)),
    ("eisner2-sibgp", second_order),
    ("eisner (1st order)", first_order),
]


def time_decoders(lengths: Sequence[int], budget: float, seed: int,
                  decoders: Sequence[tuple[str, Callable[[Parts], Decode]]] = DECODERS,
                  instances: int = INSTANCES) -> list[dict]:
    """One row per length: {"n", "arcs" (mean kept arcs), label: mean seconds per sentence of
    each decoder over ``instances`` random sentences}. Every output is checked to be a
    projective single-rooted tree."""
    from dparse.trees import check_tree

    rng = np.random.default_rng(seed)
    rows = []
    for n in lengths:
        totals = dict.fromkeys([label for label, _ in decoders], 0.0)
        arcs = 0
        for _ in range(instances):
            parts = random_parts(rng, n)
            arcs += int(np.isfinite(parts["arc"]).sum())
            for label, prepare in decoders:
                decode = prepare(parts)
                check_tree(decode(), single_root=True, projective=True)
                totals[label] += seconds_per_call(decode, budget)
                del decode
            del parts
        rows.append({"n": n, "arcs": arcs / instances,
                     **{label: total / instances for label, total in totals.items()}})
        print(rows[-1], flush=True)
    return rows


# -- tables and formatting ------------------------------------------------------------------------

def decoder_table(rows: Sequence[Mapping], labels: Sequence[str]) -> list[str]:
    """Markdown rows: per length, milliseconds per sentence and tokens/sec of each decoder, and
    how many times slower than the first label each other one is."""
    lines = ["| n | kept arcs | " + " | ".join(f"{label} ms (tok/s)" for label in labels)
             + " | " + " | ".join(f"{label} / {labels[0]}" for label in labels[1:]) + " |",
             "|---:|---:|" + "---:|" * (2 * len(labels) - 1)]
    for r in rows:
        cells = [f"{1e3 * r[label]:.2f} ({r['n'] / r[label]:,.0f})" for label in labels]
        cells += [f"{r[label] / r[labels[0]]:.2f}" for label in labels[1:]]
        lines.append(f"| {r['n']} | {r['arcs']:.0f} | " + " | ".join(cells) + " |")
    return lines


def add_data_root(parser: argparse.ArgumentParser) -> None:
    """``--data-root``, the data root of a table's grids (default: $DPARSE_DATA, else dparse's
    default)."""
    from dparse.config import DEFAULT_DATA_ROOT

    parser.add_argument("--data-root", default=None,
                        help="the data root of the grids [default: $DPARSE_DATA or "
                        f"{DEFAULT_DATA_ROOT}]")


def finished_if_run(grid_dir: Path | None, data_root: str | None, grid: Path
                    ) -> tuple[Path | None, list[dict]]:
    """Another grid's ``--out`` directory and its :func:`finished` records, if it was run
    (``(None, [])`` for no directory or a missing one)."""
    if grid_dir is None or not grid_dir.is_dir():
        return None, []
    return grid_dir, finished(grid_dir, data_root, grid)


def finished(grid_dir: Path, data_root: str | None, grid: Path = UD_GRID) -> list[dict]:
    """The result record of each (config, treebank) cell of ``grid`` (the ud grid by default)
    under ``grid_dir`` (treebanks missing under ``data_root`` left out): the current cell's,
    else the latest finished cell of the same config and treebank from an earlier run, marked
    ``stale`` (its resolved config differs, e.g. by a config key added since: rerun the grid
    to refresh)."""
    from dparse.batch.cells import read_result
    from dparse.batch.grid import load_grid
    from dparse.config import DEFAULT_DATA_ROOT

    spec = load_grid(grid)
    root = Path(data_root or os.environ.get("DPARSE_DATA") or DEFAULT_DATA_ROOT)
    names = present(root, grid)
    spec.treebanks = [tb for tb in spec.treebanks if tb is not None and tb.name in names]
    if not spec.treebanks:
        return []
    earlier: dict[tuple[str, str], tuple[float, dict]] = {}
    for path in (grid_dir / "cells").glob("*/result.json"):
        r = read_result(path.parent)
        if r and r.get("status") == "ok":
            when = path.stat().st_mtime
            key = (r.get("config", ""), r.get("treebank", ""))
            if key not in earlier or when > earlier[key][0]:
                earlier[key] = (when, r)
    out = []
    for cell in spec.cells(grid_dir, data_root):
        r = read_result(cell.directory)
        if not (r and r.get("status") == "ok"):
            old = earlier.get((cell.labels["config"], cell.labels["treebank"]))
            r = dict(old[1], stale=True) if old else r
        if r:
            out.append(r)
    return out


def fmt_pair(pair: tuple[float, float] | None) -> str:
    """``UAS / LAS`` with two decimals, ``-`` for none."""
    return "-" if pair is None else f"{pair[0]:.2f} / {pair[1]:.2f}"


def fmt_num(value: float | None) -> str:
    """A score with two decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.2f}"


def ok_by_cell(records: list[dict]) -> dict[tuple[str, str], dict]:
    """The finished records (:func:`finished`'s) by (treebank, config)."""
    return {(r["treebank"], r["config"]): r for r in records if r.get("status") == "ok"}


def uas_las(record: dict | None) -> tuple[float, float] | None:
    """A record's (UAS, LAS), None without one."""
    return None if record is None else (record["uas"], record["las"])


def stale_mark(record: dict | None) -> str:
    """``*`` for a record from an earlier run of its cell (:func:`finished`), else nothing."""
    return "*" if record and record.get("stale") else ""


def fmt_speed(record: dict | None, base: dict | None = None) -> str:
    """A cell's ``tokens/sec (x), training seconds`` (x: relative to the tokens/sec of
    ``base``, another cell's record, when given), ``-`` for none."""
    if record is None:
        return "-"
    ref = (base or {}).get("tokens_per_second")
    rel = f" ({record['tokens_per_second'] / ref:.2f}x)" if ref else ""
    return f"{record['tokens_per_second']:,.0f}{rel}, {record['train_seconds']:.0f} s"


# -- child processes ------------------------------------------------------------------------------

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def run_child(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Run a child to completion: (wall seconds, peak RSS in MB, stderr). Raises on failure."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024.0, err
