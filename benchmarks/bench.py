"""Speed, accuracy and memory of dparse parsers: one table row per experiment config.

For each config (``--config``, repeatable; default: the first-order en_ewt configs) a child
process trains the parser as ``dparse train`` would (wall-clock time; or loads it from
``--model-dir``), parses the config's test file timing encoding, scoring and decoding
separately (model loading and file reading excluded), scores UAS/LAS with punctuation
included, and reports its peak resident set size (``ru_maxrss`` of the child itself, which
covers training and parsing). Children run single-threaded (OMP/BLAS thread counts set to 1).
A config is a row: a new parser (e.g. a second-order model) is benchmarked by adding its config.
Models are trained into (and reused from) ``--model-dir``, by default a folder of the run that
is removed at its end; an undirected config's ``umst.directed_model`` (a relative path) names a
model of that folder (``models/en_ewt-o1-cle`` is ``MODEL_DIR/en_ewt-o1-cle``, which the o1-cle
config, benchmarked first, trains).
The first config is also parsed by ``dparse parse --jobs N`` for each N of ``--jobs`` (1,2),
alternated, on its test file repeated (``--jobs-copies``, ``--jobs-rounds``).
A second table times third-order decoders without any model, on the same random part scores
over pruned arcs (benchmarks/cube_scaling.py): ``cube`` (k = 5, with and without
recombination) against the exact ``eisner3-outermost``, ``eisner3`` and ``eisner2-sibgp``.
A third gives the tokens/sec of reading and writing a treebank's training file and of
evaluating its test file (``--io-treebank``, default en_ewt), best of three runs.

A row that fails (a config that cannot be trained or parsed, a step that raises) is reported on
stderr and in the report's last section; the other rows are still measured and the report
written, and the script then exits with status 1.

    python benchmarks/bench.py --data ../shared/data --out results/bench.md --plots results/plots
    python benchmarks/bench.py --quick            # smoke run on slices, one epoch
    python benchmarks/bench.py --decoders-only --out results/bench-decoders.md
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from common import DECODERS, REPO, THREAD_VARS, decoder_table, length_bins, time_decoders

from dparse.metrics import format_score
from dparse.outputs import write_text
from dparse.reports.plots import fit_exponent

DEFAULT_CONFIGS = [
    "configs/en_ewt/o1-cle.yaml",
    "configs/en_ewt/o1-umst-uf-lep.yaml",  # its directed model: o1-cle's, trained just before
    "configs/en_ewt/o1-eisner.yaml",
    "configs/en_ewt/o2-eisner.yaml",
    "configs/en_ewt/o2-dd.yaml",
    "configs/en_ewt/o1-bgi-pp.yaml",
    "configs/en_ewt/o2-bgi-pp-ib.yaml",
    "configs/en_ewt/easyfirst.yaml",
]
# dparse parse --jobs N runs: the test file repeated (en_ewt: 200,752 tokens, several seconds
# a run, so that starting Python and loading the model do not dominate), alternated rounds
JOBS_COPIES = 8
JOBS_ROUNDS = 3
# --quick: sentences kept of each split, and the epochs trained
QUICK_SENTENCES = {"train": 500, "dev": 100, "test": 300}
QUICK_EPOCHS = 1
COLUMNS = ("config", "decoder", "train time", "epochs", "parse tok/s", "scoring tok/s",
           "decoding tok/s", "UAS", "LAS", "peak RSS MB")
# the input/output rows: a treebank's training file read and written, its test file evaluated
IO_TREEBANK = "en_ewt"
IO_REPEATS = 3
# the third-order decoder rows: sentence lengths (make cube-scaling times more)
BENCH_LENGTHS = (10, 20, 40, 80)
T = TypeVar("T")


class ChildFailed(Exception):
    """A config's child process failed; the message is its error (or its exit status)."""


def attempt(label: str, failures: list[dict], fn: Callable[[], T]) -> T | None:
    """``fn()``; if it raises, None, with the failure printed and added to ``failures`` (the
    row's label and the error) so that the other rows are still measured and written."""
    try:
        return fn()
    except Exception as exc:  # any error of one row: report it, go on with the others
        message = str(exc) if isinstance(exc, ChildFailed) else f"{type(exc).__name__}: {exc}"
        print(f"bench: {label} FAILED: {message}", file=sys.stderr, flush=True)
        failures.append({"row": label, "error": message})
        return None


def directed_model_override(cfg: Any, model_dir: str) -> list[str]:
    """For an undirected config whose ``umst.directed_model`` is a relative path: the override
    pointing it at the model of that name in ``model_dir`` (where this run trains or finds the
    models); otherwise none."""
    path = cfg.umst.directed_model if cfg.parser == "umst" else None
    if not path or Path(path).is_absolute():
        return []
    return [f"umst.directed_model={Path(model_dir) / Path(path).name}"]


def quick_overrides(cfg: Any, folder: Path) -> list[str]:
    """Write the first sentences of each split into ``folder``; overrides pointing at them."""
    from dparse.conll import read_conll, write_conll

    overrides = [f"training.epochs={QUICK_EPOCHS}"]
    for split, count in QUICK_SENTENCES.items():
        relative = getattr(cfg.data, split)
        if relative:
            target = folder / f"{split}.conllu"
            sents = read_conll(cfg.data_path(relative), fmt=cfg.data.format,
                               encoding=cfg.data.encoding)
            write_conll(islice(sents, count), target)
            overrides.append(f"data.{split}={target}")
    return overrides


def parse_with_jobs(model: Path, test: Path, jobs: list[int], folder: Path, copies: int,
                    rounds: int) -> list[dict]:
    """``dparse parse --jobs N`` (a process each) of the test file repeated ``copies`` times,
    every N of ``jobs`` in turn, ``rounds`` times (1 2 1 2 1 2): per run the tokens/sec over
    the wall time of reading, parsing and writing (model loading and worker start excluded:
    the same span for every N), the command's wall time, and whether the output equals the
    first run's."""
    from dparse.conll import read_conll, write_conll

    corpus = folder / "jobs-input.conllu"
    sentences = list(read_conll(test, require_heads=False))
    write_conll((s for _ in range(copies) for s in sentences), corpus)
    rows = []
    first: bytes | None = None
    for n in [n for _ in range(rounds) for n in jobs]:
        out = folder / f"parsed.jobs{n}.conllu"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dparse", "parse", str(model), str(corpus),
                               "-o", str(out), "--jobs", str(n), "--json"],
                              capture_output=True, text=True, check=True)
        elapsed = time.perf_counter() - started
        summary = json.loads(done.stderr.strip().splitlines()[-1])
        parsed = out.read_bytes()
        first = parsed if first is None else first
        rows.append({"jobs": n, "tokens": summary["tokens"], "command_seconds": elapsed,
                     "tps": summary["wall_tokens_per_second"],
                     "inference_tps": summary["tokens_per_second"], "same": parsed == first})
    return rows


def run_one(config: str, data_root: str, model_dir: str, quick: bool,
            jobs: list[int] | None = None, jobs_copies: int = 1,
            jobs_rounds: int = 1) -> dict[str, Any]:
    """Train (or load from ``model_dir``) and parse one config, of any parser type; runs inside
    the child process (``jobs``: also time ``dparse parse --jobs N`` for each N,
    :func:`parse_with_jobs`)."""
    from dparse.config import load_config
    from dparse.epochs import read_split, save_model
    from dparse.errors import ConfigError
    from dparse.metrics import evaluate
    from dparse.modeldir import CONFIG_FILE
    from dparse.parsers import load_parser, train_parser

    cfg = load_config(config, data_root=data_root)
    overrides = directed_model_override(cfg, model_dir)
    with tempfile.TemporaryDirectory(prefix="dparse-bench-") as tmp:
        if quick:
            overrides += quick_overrides(cfg, Path(tmp))
        if overrides:
            cfg = load_config(config, overrides, data_root=data_root)
        if not cfg.data.test:
            raise ConfigError(f"{config}: the config names no test file (data.test)")
        saved = Path(model_dir) / cfg.name
        row: dict[str, Any] = {"config": cfg.name, "decoder": cfg.decoder.name}
        if (saved / CONFIG_FILE).is_file():
            row.update(train_seconds=None, epochs="loaded")
        else:
            result = train_parser(cfg, progress=False)
            row.update(train_seconds=result.seconds,
                       epochs=f"{cfg.training.epochs} (best {result.best_epoch})")
            save_model(result, cfg, saved)
        parser = load_parser(saved, cfg, None)
        gold = read_split(cfg, cfg.data.test)
        parsed, timer, by_length = parse_by_sentence(parser, gold)
        if jobs:
            row["jobs"] = parse_with_jobs(saved, cfg.data_path(cfg.data.test), jobs, Path(tmp),
                                          jobs_copies, jobs_rounds)
            row["jobs_copies"] = jobs_copies
    report = evaluate(gold, parsed, punct="include")
    row.update(
        sentences=timer.sentences,
        tokens=timer.tokens,
        parse_seconds=timer.seconds,
        parse_tps=timer.tokens_per_second,
        encode_seconds=timer.encode,
        score_tps=timer.tokens / timer.score if timer.score else 0.0,
        decode_tps=timer.tokens / timer.decode if timer.decode else 0.0,
        uas=report.uas,
        las=report.las,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux
        by_length=by_length,
    )
    return row


def parse_by_sentence(parser: Any, gold: list) -> tuple[list, Any, list[dict]]:
    """Parse ``gold`` one sentence per call, timing each: the parsed sentences, the whole
    file's ParseTimer, and per length bin (common.length_bins) the mean inference and decoding
    seconds per sentence."""
    from dparse.timer import ParseTimer

    total, parsed, inference, decode = ParseTimer(), [], [], []
    for sent in gold:
        timer = ParseTimer()
        parsed.extend(parser.parse([sent], timer))
        for stage in ("sentences", "tokens", "encode", "score", "decode"):
            setattr(total, stage, getattr(total, stage) + getattr(timer, stage))
        inference.append(timer.seconds)
        decode.append(timer.decode)
    bins = length_bins([len(sent) for sent in gold], {"inference": inference, "decode": decode})
    return parsed, total, bins


def bench_config(config: str, data_root: str, model_dir: str, quick: bool,
                 jobs: list[int] | None = None, jobs_copies: int = 1,
                 jobs_rounds: int = 1) -> dict:
    """Run one config in a fresh single-threaded child process; its result row (ChildFailed
    with the child's error if it failed)."""
    env = {**os.environ, **dict.fromkeys(THREAD_VARS, "1")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory(prefix="dparse-bench-row-") as tmp:
        result = Path(tmp) / "row.json"
        cmd = [sys.executable, __file__, "--child", config, "--data", data_root,
               "--result", str(result), "--model-dir", model_dir,
               *(["--quick"] if quick else []),
               "--jobs", ",".join(map(str, jobs or [])), "--jobs-copies", str(jobs_copies),
               "--jobs-rounds", str(jobs_rounds)]
        status = subprocess.run(cmd, env=env).returncode
        row = json.loads(result.read_text(encoding="utf-8")) if result.is_file() else {}
    if status != 0 or "error" in row:
        raise ChildFailed(row.get("error") or f"the child process exited with status {status}")
    return row


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """The shortest wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def io_rows(data_root: str, treebank: str, repeats: int,
            failures: list[dict]) -> list[dict]:
    """Tokens/sec of reading the treebank's training file (``read_treebank``), writing it
    (``write_conll``, to a temporary file) and evaluating its test file against a copy with 15%
    of the heads moved to the root (``evaluate``: plain, punctuation excluded by the CoNLL-X
    rule; and with ``--detail`` and an ``--other`` system); best of ``repeats`` runs each. A
    step that fails is left out, its failure recorded in ``failures``."""
    import numpy as np

    from dparse.conll import read_treebank, write_conll
    from dparse.metrics import evaluate

    root = Path(data_root) / treebank
    train, test = root / "train.conllu", root / "test.conllu"
    rows: list[dict] = []

    def measure(label: str, tokens: int, fn: Callable[[], object]) -> None:
        seconds = attempt(label, failures, lambda: best_seconds(fn, repeats))
        if seconds is not None:
            rows.append({"what": label, "tokens": tokens, "seconds": seconds,
                         "tps": tokens / seconds})

    sentences = attempt(f"read {treebank}/train.conllu", failures, lambda: read_treebank(train))
    if sentences is not None:
        tokens = sum(map(len, sentences))
        measure(f"read {treebank}/train.conllu", tokens, lambda: read_treebank(train))
        with tempfile.TemporaryDirectory(prefix="dparse-bench-io-") as tmp:
            measure(f"write {treebank}/train.conllu", tokens,
                    lambda: write_conll(sentences, Path(tmp) / "train.conllu"))
    gold = attempt(f"read {treebank}/test.conllu", failures, lambda: read_treebank(test))
    if gold is not None:
        rng = np.random.default_rng(0)
        system = [s.with_parse(np.where(rng.random(len(s) + 1) < 0.15, 0, s.heads), s.deprels)
                  for s in gold]
        tokens = sum(map(len, gold))
        measure(f"evaluate {treebank}/test.conllu", tokens,
                lambda: evaluate(gold, system, punct="conll"))
        measure(f"evaluate {treebank}/test.conllu, --detail --other", tokens,
                lambda: evaluate(gold, system, punct="conll", other=gold, detail=True))
    return rows


def io_section(rows: list[dict], repeats: int) -> list[str]:
    """Markdown lines of the reading, writing and evaluating rows (:func:`io_rows`)."""
    lines = ["## Reading, writing and evaluating a treebank", "",
             "| step | tokens | seconds | tok/s |", "|---|---:|---:|---:|"]
    lines += [f"| {r['what']} | {r['tokens']:,} | {r['seconds']:.2f} | {r['tps']:,.0f} |"
              for r in rows]
    return lines + [
        "",
        f"Best of {repeats} runs in the benchmark's own process. Reading: every sentence of the "
        "file into memory (dparse.read_treebank); writing: them back to a file (write_conll); "
        "evaluating: UAS, LAS and the other measures of `dparse eval` (punctuation excluded, "
        "CoNLL-X rule) against a copy with 15% of the heads moved to the root, and the same "
        "with the breakdowns of `--detail` and the comparison of `--other` (SARC, gold(x, y)).",
        "",
    ]


def failure_section(failures: list[dict]) -> list[str]:
    """Markdown lines naming each row that failed and its error."""
    return ["## Rows that failed", "",
            *(f"- {f['row']}: {f['error']}" for f in failures), ""]


def machine_info() -> list[str]:
    """CPU model, cores, Python and numpy versions, git commit, date."""
    import numpy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical cores (each config runs single-threaded)",
        f"- Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"{platform.system()} {platform.release()}",
        f"- dparse commit: {commit}",
        f"- date: {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}",
    ]


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}s" if value >= 10 else f"{value:.1f}s"


def decoder_section(rows: list[dict]) -> list[str]:
    """Markdown lines of the third-order decoder rows (``common.time_decoders``)."""
    return [
        "## Third-order decoders on random part scores (no model)",
        "",
        *decoder_table(rows, [label for label, _ in DECODERS]),
        "",
        "Each word keeps 3-5 random candidate heads (the other arcs pruned); standard normal "
        "arc, sib, grand, trisib and gsib scores, the same for every decoder (eisner2-sibgp gets "
        "arc, sib and grand; first-order eisner, the same-run reference, arc); milliseconds "
        "per sentence of decoding alone (array scorers built "
        "outside the timing), and tokens/sec (n / time); the ratio columns are times relative "
        "to cube k=5. Fitted exponents over more lengths: `make cube-scaling`.",
        "",
    ]


def length_section(rows: list[dict]) -> list[str]:
    """Markdown lines: per config, the fitted exponent b of inference and decoding time ~ n^b
    over the test file's length bins, and the tokens/sec of the shortest and longest bin."""
    lines = ["## Time against sentence length (the test file, binned by length)", "",
             "| config | b inference | b decoding | tok/s, bin " + " | tok/s, bin ".join(
                 ("first", "last")) + " |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        bins = r["by_length"]
        n = [b["n"] for b in bins]
        first, last = bins[0], bins[-1]
        lines.append(f"| {r['config']} | {fit_exponent(n, [b['inference'] for b in bins]):.2f} | "
                     f"{fit_exponent(n, [b['decode'] for b in bins]):.2f} | "
                     f"{first['n'] / first['inference']:,.0f} ({first['bin']}) | "
                     f"{last['n'] / last['inference']:,.0f} ({last['bin']}) |")
    return lines + [
        "",
        "Each sentence parsed by its own call and timed (inference: encoding + scoring + "
        "decoding); b is the least-squares slope of log mean seconds per sentence against log "
        "mean length over the bins (1-5, 6-10, 11-15, 16-20, 21-30, 31-40, 41-60, 61+ words). "
        "Plots (with --plots DIR): DIR/bench-parsers-inference and DIR/bench-parsers-decoding "
        "(.png/.svg), DIR/bench-decoders for the third-order decoders.",
        "",
    ]


def draw_plots(rows: list[dict], decoder_rows: list[dict] | None, directory: Path) -> None:
    """Log-log time and tokens/sec against sentence length: every config's inference and
    decoding time over the test file's length bins, and the third-order decoders."""
    from dparse.reports.plots import plot_time_and_speed

    directory.mkdir(parents=True, exist_ok=True)
    for stage, what in (("inference", "inference"), ("decode", "decoding")):
        if rows:
            plot_time_and_speed({r["config"]: ([b["n"] for b in r["by_length"]],
                                               [b[stage] for b in r["by_length"]])
                                 for r in rows}, directory / f"bench-parsers-{what}",
                                title="Parsers on the test file", what=what)
    if decoder_rows:
        n = [r["n"] for r in decoder_rows]
        plot_time_and_speed({label: (n, [r[label] for r in decoder_rows])
                             for label, _ in DECODERS}, directory / "bench-decoders",
                            title="Third-order decoders, random parts")


def jobs_section(row: dict) -> list[str]:
    """Markdown lines of the ``dparse parse --jobs N`` runs of one config, with the median
    tokens/sec of each N and its ratio to the first N's."""
    runs = row["jobs"]
    counts = list(dict.fromkeys(j["jobs"] for j in runs))
    median = {n: statistics.median(j["tps"] for j in runs if j["jobs"] == n) for n in counts}
    base = median[counts[0]]
    lines = [f"## Parsing with worker processes: {row['config']} (dparse parse --jobs N)", "",
             "| run | jobs | tok/s (wall) | x median of jobs " f"{counts[0]} | inference tok/s, "
             "summed | command time | output = run 1 |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for k, j in enumerate(runs, 1):
        lines.append(f"| {k} | {j['jobs']} | {j['tps']:,.0f} | {j['tps'] / base:.2f} | "
                     f"{j['inference_tps']:,.0f} | {_seconds(j['command_seconds'])} | "
                     f"{'yes' if j['same'] else 'NO'} |")
    lines += ["", "| jobs | median tok/s (wall) | x jobs " f"{counts[0]} |", "|---:|---:|---:|"]
    lines += [f"| {n} | {median[n]:,.0f} | {median[n] / base:.2f} |" for n in counts]
    return lines + [
        "",
        f"The test file repeated {row.get('jobs_copies', 1)} times ({runs[0]['tokens']:,} "
        "tokens), parsed by the CLI, the worker counts alternated. Tok/s (wall) is over the "
        "wall time of reading, parsing and writing the whole output, the same span for every "
        "N (model loading and worker start excluded); inference tok/s sums the workers' "
        "encoding, scoring and decoding time. Command time includes starting Python and "
        "loading the model. On a machine whose cores are busy with other work the ratio is "
        "depressed.",
        "",
    ]


def format_report(rows: list[dict], quick: bool, decoder_rows: list[dict] | None = None,
                  io: list[dict] | None = None, io_repeats: int = IO_REPEATS,
                  failures: list[dict] | None = None) -> str:
    """The markdown report: the table of configs (if any), the decoder rows (if any), the
    reading, writing and evaluating rows (if any), what they measured, the rows that failed,
    and the machine."""
    quick_note = " (--quick smoke run: data slices, one epoch)" if quick else ""
    lines = ["# dparse benchmark" + quick_note, ""]
    if rows:
        lines += [
            "| " + " | ".join(COLUMNS) + " |",
            "|" + "|".join("---" if i < 2 else "---:" for i in range(len(COLUMNS))) + "|",
        ]
    for r in rows:
        cells = (r["config"], r["decoder"], _seconds(r["train_seconds"]), r["epochs"],
                 f"{r['parse_tps']:,.0f}", f"{r['score_tps']:,.0f}", f"{r['decode_tps']:,.0f}",
                 format_score(r["uas"], 0), format_score(r["las"], 0), f"{r['peak_rss_mb']:,.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    if rows:
        lines += [
            "",
            "Train time: wall clock of training (reading data, all epochs, dev evaluation each "
            "epoch; '-' for a model reused from --model-dir). Parsing: the config's test file, "
            + "; ".join(f"{r['config']}: {r['sentences']} sentences, {r['tokens']} tokens"
                        for r in rows)
            + ". Tokens/sec count inference only (encoding + scoring + decoding; model loading "
            "and file reading excluded); scoring and decoding tok/s are tokens over the time of "
            "that stage alone. UAS/LAS in percent, punctuation included, full DEPREL for LAS. "
            "Peak RSS: ru_maxrss of the child process that trained (or loaded) and parsed the "
            "config.",
            "",
        ]
    if rows:
        lines += length_section(rows)
    for r in rows:
        if r.get("jobs"):
            lines += jobs_section(r)
    if decoder_rows:
        lines += decoder_section(decoder_rows)
    if io:
        lines += io_section(io, io_repeats)
    if failures:
        lines += failure_section(failures)
    lines += [
        "Machine:",
        "",
        *machine_info(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", default=None,
                        help="experiment config (repeatable) [default: "
                        + ", ".join(DEFAULT_CONFIGS) + "]")
    parser.add_argument("--data", default=os.environ.get("DPARSE_DATA", "../shared/data"),
                        help="data root [default: $DPARSE_DATA or ../shared/data]")
    parser.add_argument("--out", default="results/bench.md", help="markdown report to write")
    parser.add_argument("--model-dir", default=None,
                        help="reuse the models in MODEL_DIR/<config name> instead of training "
                        "(models not found there are trained and saved there; a relative "
                        "umst.directed_model names a model there) [default: a folder removed "
                        "at the end of the run]")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: first sentences of each split, one epoch")
    parser.add_argument("--decoders-only", action="store_true",
                        help="only the third-order decoder rows on random parts (no training)")
    parser.add_argument("--no-decoders", action="store_true",
                        help="leave out the third-order decoder rows")
    parser.add_argument("--io-treebank", default=IO_TREEBANK,
                        help="treebank (a folder of the data root with train.conllu and "
                        "test.conllu) of the reading, writing and evaluating rows ('' for none) "
                        f"[default: {IO_TREEBANK}]")
    parser.add_argument("--jobs", default="1,2",
                        help="worker counts of the dparse parse --jobs rows, timed on the first "
                        "config ('' for none) [default: 1,2]")
    parser.add_argument("--jobs-copies", type=int, default=JOBS_COPIES,
                        help="the --jobs runs parse the test file repeated this many times "
                        f"[default: {JOBS_COPIES}; 1 with --quick]")
    parser.add_argument("--jobs-rounds", type=int, default=JOBS_ROUNDS,
                        help="the worker counts are alternated this many times "
                        f"[default: {JOBS_ROUNDS}; 1 with --quick]")
    parser.add_argument("--plots", default=None, metavar="DIR",
                        help="also draw time and tokens/sec against sentence length (log-log, "
                        "fitted exponents) into DIR (needs matplotlib)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    data_root = str(Path(args.data).resolve())
    jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
    copies, rounds = (1, 1) if args.quick else (args.jobs_copies, args.jobs_rounds)
    if args.child:
        try:
            row = run_one(args.child, data_root, args.model_dir, args.quick, jobs, copies,
                          rounds)
        except Exception as exc:  # reported by the parent as a failed row
            traceback.print_exc()
            write_text(Path(args.result), json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
            sys.exit(1)
        write_text(Path(args.result), json.dumps(row))
        return
    if args.decoders_only and args.no_decoders:
        parser.error("--decoders-only and --no-decoders exclude each other")
    failures: list[dict] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="dparse-bench-models-") as run_models:
        model_dir = args.model_dir or run_models
        for config in [] if args.decoders_only else args.config or [str(REPO / c)
                                                                   for c in DEFAULT_CONFIGS]:
            print(f"bench: {config}", file=sys.stderr, flush=True)
            path = Path(config).resolve()
            label = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else config
            row = attempt(label, failures, functools.partial(
                bench_config, str(path), data_root, model_dir, args.quick,
                None if rows else jobs, copies, rounds))
            rows += [row] if row else []
    decoder_rows = None
    if not args.no_decoders:
        print("bench: third-order decoders on random parts", file=sys.stderr, flush=True)
        lengths = BENCH_LENGTHS[:2] if args.quick else BENCH_LENGTHS
        decoder_rows = attempt("third-order decoders", failures, lambda: time_decoders(
            lengths, 0.05 if args.quick else 0.3, seed=0))
    io, io_repeats = None, 1 if args.quick else IO_REPEATS
    if args.io_treebank and not args.decoders_only:
        print(f"bench: reading, writing and evaluating {args.io_treebank}", file=sys.stderr,
              flush=True)
        io = io_rows(data_root, args.io_treebank, io_repeats, failures)
    if args.plots:
        attempt("plots", failures, lambda: draw_plots(rows, decoder_rows, Path(args.plots)))
    report = format_report(rows, args.quick, decoder_rows, io, io_repeats, failures)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, report)
    print(report)
    if failures:
        sys.exit(f"bench: {len(failures)} row(s) failed: "
                 + "; ".join(f["row"] for f in failures) + f" (the others are in {out})")


if __name__ == "__main__":
    main()
