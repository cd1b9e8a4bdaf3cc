"""Speed, training time, memory and accuracy of this build against a reference commit.

The reference commit is checked out in its own git worktree (``--work``/<sha>, made and built
once, then reused) and both builds run their own command line (``python -m dparse``) in child
processes, single-threaded. Each build trains its own models (the model format may differ
between commits), cached under ``--work``/models/<build key>/ so that later runs only parse.
Parsing alternates the builds on the same test file (A B A B A B for three pairs); the table
gives each build's median tokens/sec (inference only, as ``dparse parse --json`` reports it),
the median of the per-pair ratios, peak memory (``ru_maxrss`` of the parsing and training
children) and UAS/LAS (punctuation included, scored by this build's ``dparse eval``). A second
table times loading each model (``dparse.parsers.load_parser`` in a fresh child whose imports
are done first, alternated ``--load-pairs`` times) and gives each parse's tokens/sec over the
whole process (imports, loading, reading, writing), beside the tool's own figure.

    PYTHONPATH=. python benchmarks/bench_compare.py --ref 95f0cda --out results/bench-compare.md
    PYTHONPATH=. python benchmarks/bench_compare.py --ref 95f0cda --configs o1-cle \\
        --treebanks el_gdt --epochs 2 --pairs 1 --out /tmp/bc.md       # a quick smoke run
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import REPO, THREAD_VARS, run_child

from dparse.outputs import write_text

# A child that times one load_parser of the model directory argv[1], after importing what a
# load of any family may import (modules the build lacks are skipped: looked up as files, as an
# installed dparse's import system could find them elsewhere): its JSON on stderr.
LOAD_CHILD = """
import importlib, json, sys, time
from pathlib import Path
import dparse
for name in ("graph.load", "graph.secondorder", "graph.thirdorder", "decoders",
             "tagging.pipeline"):
    if Path(dparse.__file__).parent.joinpath(*name.split(".")).with_suffix(".py").is_file():
        importlib.import_module(f"dparse.{name}")
from dparse.config import load_config
from dparse.parsers import load_parser
directory = Path(sys.argv[1])
start = time.perf_counter()
load_parser(directory, load_config(directory / "config.yaml"), None)
print(json.dumps({"load_seconds": time.perf_counter() - start}), file=sys.stderr)
"""


@dataclass
class Build:
    """One build of dparse: a source directory with its extensions built in place."""

    label: str   # "ref" or "new"
    root: Path
    key: str     # commit sha, with a digest of uncommitted changes if any

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "dparse", *args]

    def env(self, data_root: Path) -> dict[str, str]:
        env = dict(os.environ, PYTHONPATH=str(self.root), DPARSE_DATA=str(data_root))
        env.update({name: "1" for name in THREAD_VARS})
        return env


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def build_key(root: Path) -> str:
    """The commit of ``root``, plus a digest of its uncommitted source changes if any."""
    sha = git(root, "rev-parse", "--short=10", "HEAD")
    diff = git(root, "diff", "HEAD", "--", "dparse", "setup.py")
    return sha if not diff else f"{sha}-dirty{hashlib.sha1(diff.encode()).hexdigest()[:8]}"


def model_key(build: Build, args: argparse.Namespace) -> str:
    """Where the build's models are cached: its own key, or ``--new-models`` for this build
    (models trained by an earlier commit with the same model format)."""
    return args.new_models if build.label == "new" and args.new_models else build.key


def build_in_place(root: Path) -> None:
    """Compile the Cython extensions of ``root`` in place (optimized; only changed modules),
    and its Python modules' bytecode, as an installed package has it: with
    PYTHONDONTWRITEBYTECODE set (as on some machines) every child would otherwise compile
    them again, which the whole-process speed would count."""
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=root,
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "dparse"], cwd=root, check=True,
                   capture_output=True)


def reference_build(ref: str, work: Path) -> Build:
    """The reference commit in its own detached worktree under ``work`` (made if missing), built."""
    sha = git(REPO, "rev-parse", "--short=10", f"{ref}^{{commit}}")
    root = work / sha
    if not (root / "dparse").is_dir():
        work.mkdir(parents=True, exist_ok=True)
        git(REPO, "worktree", "add", "--detach", str(root), sha)
    build_in_place(root)
    return Build("ref", root, sha)


def treebank_overrides(treebank: str, config: str) -> list[str]:
    """``--set`` overrides that point an en_ewt config at another treebank's files."""
    if treebank == "en_ewt":
        return []
    return [f"name={treebank}-{config}"] + [
        f"data.{split}={treebank}/{split}.conllu" for split in ("train", "dev", "test")]


def split_row(config: str) -> tuple[str, bool]:
    """(config name, whether both builds train the reference commit's file) of a row of
    ``--configs``: ``<name>`` or ``<name>@ref``."""
    name, at, source = config.partition("@")
    if at and source != "ref":
        raise ValueError(f"--configs: {config!r}: the only suffix is @ref")
    return name, bool(at)


def config_file(build: Build, config: str, ref: Build) -> Path:
    """The config file ``build`` trains for the row ``config``: its own
    ``configs/en_ewt/<name>.yaml``, or, for ``<name>@ref``, the reference commit's file (both
    builds train the same config, so that a difference in accuracy is the builds', not the
    configs')."""
    name, from_ref = split_row(config)
    return (ref.root if from_ref else build.root) / "configs" / "en_ewt" / f"{name}.yaml"


def train_model(build: Build, key: str, config: str, treebank: str, epochs: int | None,
                work: Path, data_root: Path, ref: Build) -> tuple[Path, dict]:
    """The build's model of ``config`` on ``treebank`` (trained now unless cached) and its
    training record {seconds, rss_mb}; each build reads its own copy of the config, or the
    reference's for ``<config>@ref`` (:func:`config_file`). A model put in the cache by hand
    comes with a record whose figures are null (not trained here)."""
    config_name = split_row(config)[0]
    if build is ref:
        config = config_name  # the reference's own model: one cache entry for both rows
    name = f"{treebank}-{config}" + (f"-e{epochs}" if epochs else "")
    model = work / "models" / key / name
    record_file = model.parent / f"{name}.train.json"
    if model.is_dir() and record_file.is_file():  # the record is written after training
        return model, json.loads(record_file.read_text(encoding="utf-8"))
    overrides = treebank_overrides(treebank, config_name)
    if epochs:
        overrides.append(f"training.epochs={epochs}")
    cmd = build.command("train", str(config_file(build, config, ref)), "--out", str(model), "-q")
    for item in overrides:
        cmd += ["--set", item]
    print(f"[{build.label}] training {name} ...", file=sys.stderr, flush=True)
    seconds, rss, _ = run_child(cmd, build.env(data_root), build.root)
    record = {"seconds": round(seconds, 2), "rss_mb": round(rss, 1)}
    write_text(record_file, json.dumps(record) + "\n")
    return model, record


def parse_once(build: Build, model: Path, test: Path, out: Path,
               data_root: Path) -> dict:
    """One ``dparse parse --json`` run: its summary plus the child's peak RSS (MB) and its
    tokens/sec over the whole process (wall clock from start to exit)."""
    seconds, rss, err = run_child(build.command("parse", str(model), str(test), "-o", str(out),
                                                "--json"), build.env(data_root), build.root)
    summary = json.loads(err.strip().splitlines()[-1])
    summary["rss_mb"] = rss
    summary["process_tokens_per_second"] = summary["tokens"] / seconds
    return summary


def load_once(build: Build, model: Path, data_root: Path) -> float:
    """Seconds of one ``load_parser`` of ``model`` in a fresh child of ``build``
    (:data:`LOAD_CHILD`: the imports are not timed)."""
    _, _, err = run_child([sys.executable, "-c", LOAD_CHILD, str(model)], build.env(data_root),
                          build.root)
    return json.loads(err.strip().splitlines()[-1])["load_seconds"]


def evaluate(gold: Path, system: Path, data_root: Path) -> dict:
    """UAS and LAS (punctuation included) by this build's ``dparse eval``."""
    proc = subprocess.run([sys.executable, "-m", "dparse", "eval", str(gold), str(system),
                           "--json"], check=True, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    scores = json.loads(proc.stdout)
    return {"uas": scores["uas"], "las": scores["las"]}


def sealed_copy(model: Path, target: Path) -> Path:
    """A copy of a model directory sealed by this build (``dparse.modeldir``: a manifest
    of its files), so that this build loads a reference model saved before manifests."""
    from dparse.modeldir import writing_model_dir

    if not (target / "manifest.json").is_file():
        with writing_model_dir(target) as staging:
            shutil.copytree(model, staging, dirs_exist_ok=True)
    return target


def epochs_for(config: str, args: argparse.Namespace) -> int | None:
    """The training epochs ``--epochs`` sets for ``config`` (None: the config's own)."""
    for item in args.epochs.split(",") if args.epochs else []:
        name, sep, value = item.rpartition("=")
        if not sep or name == config:
            return int(value)
    return None


def compare(builds: list[Build], config: str, treebank: str, args: argparse.Namespace) -> dict:
    """Train (or reuse) each build's model, then parse alternately ``args.pairs`` times."""
    data_root = Path(args.data).resolve()
    work = Path(args.work)
    epochs = epochs_for(config, args)
    models, training = {}, {}
    for build in builds:
        trainer = builds[0] if config in args.shared else build
        models[build.label], training[build.label] = train_model(
            trainer, model_key(trainer, args), config, treebank, epochs, work, data_root,
            builds[0])
    if config in args.shared:
        models["new"] = sealed_copy(models["ref"], work / "models" / f"{builds[0].key}-sealed"
                                    / models["ref"].name)
    test = data_root / treebank / "test.conllu"
    outputs = {b.label: Path(args.work) / "outputs" / b.key / f"{treebank}-{config}.conllu"
               for b in builds}
    runs: dict[str, list[dict]] = {b.label: [] for b in builds}
    for pair in range(args.pairs):
        for build in builds:
            outputs[build.label].parent.mkdir(parents=True, exist_ok=True)
            summary = parse_once(build, models[build.label], test, outputs[build.label],
                                 data_root)
            runs[build.label].append(summary)
            print(f"[{build.label}] {treebank} {config} pair {pair + 1}: "
                  f"{summary['tokens_per_second']:,.0f} tok/s", file=sys.stderr, flush=True)
    ratios = [new["tokens_per_second"] / ref["tokens_per_second"]
              for ref, new in zip(runs["ref"], runs["new"], strict=True)]
    loads: dict[str, list[float]] = {b.label: [] for b in builds}
    for _ in range(args.load_pairs):
        for build in builds:
            loads[build.label].append(load_once(build, models[build.label], data_root))
    load_ratios = [ref / new for ref, new in zip(loads["ref"], loads["new"], strict=True)]
    return {
        "config": config,
        "treebank": treebank,
        "epochs": epochs,
        "training": training,
        "runs": runs,
        "ratios": ratios,
        "median_ratio": statistics.median(ratios),
        "loads": loads,
        "load_ratios": load_ratios,
        "median_load_ratio": statistics.median(load_ratios) if load_ratios else None,
        "accuracy": {b.label: evaluate(test, outputs[b.label], data_root) for b in builds},
    }


def training_pairs(builds: list[Build], args: argparse.Namespace) -> dict | None:
    """``--train-pairs`` alternated trainings (ref, new) of ``--train-config`` on
    ``--train-treebank`` for ``--train-epochs`` epochs: seconds and peak RSS of each run, the
    median of the per-pair time ratios. The models are thrown away."""
    if not args.train_pairs:
        return None
    data_root, work = Path(args.data).resolve(), Path(args.work)
    runs: dict[str, list[dict]] = {b.label: [] for b in builds}
    for pair in range(args.train_pairs):
        for build in builds:
            key = f"{build.key}-timing{pair}"
            model, record = train_model(build, key, args.train_config, args.train_treebank,
                                        args.train_epochs, work, data_root, builds[0])
            shutil.rmtree(model.parent)
            runs[build.label].append(record)
    ratios = [ref["seconds"] / new["seconds"]
              for ref, new in zip(runs["ref"], runs["new"], strict=True)]
    return {"runs": runs, "ratios": ratios, "median_ratio": statistics.median(ratios)}


def mb(value: float | None) -> str:
    """Megabytes for the table; n/a for a model this script did not train."""
    return "n/a" if value is None else f"{value:.0f}"


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def load_lines(rows: list[dict], args: argparse.Namespace) -> list[str]:
    """The table of model loading times (``--load-pairs``) and whole-process speeds."""
    lines = [
        "",
        f"## Loading, alternated (ref, new) x {args.load_pairs}; whole-process speed",
        "",
        "Load s: one `dparse.parsers.load_parser` (manifest check, vocabulary, weights, "
        "decoder) in a fresh child, its imports done before the clock starts; median of the "
        "runs. Whole process: tokens / wall seconds of each `dparse parse` child above (Python "
        "start, imports, loading, reading, parsing, writing), median, and its share of the "
        "tool's own tokens/sec (inference only) in the same runs.",
        "",
        "| treebank | config | ref load s | new load s | load speedup (median of pair ratios) "
        "| pair ratios | ref whole-process tok/s (share of own) "
        "| new whole-process tok/s (share of own) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        shares = {}
        for label in ("ref", "new"):
            runs = row["runs"][label]
            share = statistics.median(run["process_tokens_per_second"] / run["tokens_per_second"]
                                      for run in runs)
            shares[label] = (f"{median_of(runs, 'process_tokens_per_second'):,.0f} "
                             f"({share:.2f}x)")
        lines.append("| " + " | ".join([
            row["treebank"], row["config"],
            f"{statistics.median(row['loads']['ref']):.3f}",
            f"{statistics.median(row['loads']['new']):.3f}",
            f"**{row['median_load_ratio']:.2f}x**",
            ", ".join(f"{x:.2f}" for x in row["load_ratios"]),
            shares["ref"], shares["new"]]) + " |")
    return lines


def markdown(rows: list[dict], timing: dict | None, builds: list[Build],
             args: argparse.Namespace) -> str:
    ref, new = builds
    lines = [
        f"# bench-compare: this build against {ref.key}",
        "",
        f"{datetime.date.today().isoformat()}, {platform.node()}: {os.cpu_count()} cores, load "
        f"average {args.load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end "
        "(other jobs slow both builds; absolute speeds also differ about 2x between machines); "
        f"the ratios come from runs alternated on the same files (ref, new) x {args.pairs}.",
        f"Builds: ref = {ref.key} (its worktree under --work), new = {new.key} (this checkout). "
        "Each build trained "
        "its own models" + (f" (reduced training epochs: {args.epochs})" if args.epochs else "")
        + "; children single-threaded. Parse tok/s: inference only (encoding, scoring, "
        "decoding; model loading and file I/O excluded). UAS/LAS: test set, punctuation "
        "included. Peak RSS: ru_maxrss of the parse child (median) and of the training child.",
    ]
    if args.new_models:
        lines.append(f"The new build parses models trained by {args.new_models} (same model "
                     "format as this build).")
    if args.shared:
        lines.append(f"{', '.join(args.shared)}: both builds parse the reference build's model "
                     "(same model format; the new build a copy it sealed with a manifest), so "
                     "parsing is compared, not training.")
    same_config = sorted({row["config"] for row in rows if split_row(row["config"])[1]})
    if same_config:
        lines.append(f"{', '.join(same_config)}: both builds train the reference commit's config "
                     "file (the same model settings), so that the accuracy columns compare the "
                     "builds and not the configs.")
    lines += [
        "",
        "| treebank | config | ref tok/s | new tok/s | speedup (median of pair ratios) "
        "| pair ratios | ref train s | new train s | train speedup | ref RSS MB parse/train "
        "| new RSS MB parse/train | ref UAS/LAS | new UAS/LAS |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        r, n = row["runs"]["ref"], row["runs"]["new"]
        tr, tn = row["training"]["ref"], row["training"]["new"]
        ar, an = row["accuracy"]["ref"], row["accuracy"]["new"]
        if row["config"] in args.shared:
            ref_seconds = "n/a" if tr["seconds"] is None else f"{tr['seconds']:.0f}"
            training = f"{ref_seconds} | (ref model) | -"
        else:
            training = (f"{tr['seconds']:.0f} | {tn['seconds']:.0f} "
                        f"| {tr['seconds'] / tn['seconds']:.2f}x")
        cells = [
            row["treebank"], row["config"],
            f"{median_of(r, 'tokens_per_second'):,.0f}",
            f"{median_of(n, 'tokens_per_second'):,.0f}",
            f"**{row['median_ratio']:.2f}x**",
            ", ".join(f"{x:.2f}" for x in row["ratios"]),
            training,
            f"{median_of(r, 'rss_mb'):.0f} / {mb(tr['rss_mb'])}",
            f"{median_of(n, 'rss_mb'):.0f} / {mb(tn['rss_mb'])}",
            f"{ar['uas']:.2f} / {ar['las']:.2f}",
            f"{an['uas']:.2f} / {an['las']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Tokens/sec of every run, in the order run (ref, new alternating):", ""]
    for row in rows:
        seq = [f"{run['tokens_per_second']:,.0f}" for pair in zip(row["runs"]["ref"],
                                                                  row["runs"]["new"], strict=True)
               for run in pair]
        lines.append(f"- {row['treebank']} {row['config']}: {' / '.join(seq)}")
    if args.load_pairs:
        lines += load_lines(rows, args)
    lines.append("")
    lines.append("Training time in the table is one run per build (not alternated), wall clock, "
                 "so it is the noisiest figure here.")
    if timing is not None:
        seq = [f"{run['seconds']:.1f}" for pair in zip(timing["runs"]["ref"],
                                                       timing["runs"]["new"], strict=True)
               for run in pair]
        rss = [f"{run['rss_mb']:.0f}" for pair in zip(timing["runs"]["ref"],
                                                      timing["runs"]["new"], strict=True)
               for run in pair]
        lines += [
            "",
            f"## Training time, alternated: {args.train_config} on {args.train_treebank}, "
            f"{args.train_epochs} epochs, (ref, new) x {args.train_pairs}",
            "",
            f"Seconds (wall clock, dev parse each epoch and model saving included), in the "
            f"order run: {' / '.join(seq)}; peak RSS MB: {' / '.join(rss)}.",
            f"Speedup (median of the per-pair ratios ref/new): "
            f"**{timing['median_ratio']:.2f}x** (pairs: "
            f"{', '.join(f'{x:.2f}' for x in timing['ratios'])}).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", required=True, help="reference commit (e.g. 95f0cda)")
    parser.add_argument("--configs", default="o1-cle,o2-dd",
                        help="configs/en_ewt/<name>.yaml names, comma-separated; "
                             "<name>@ref: both builds train the reference commit's file")
    parser.add_argument("--treebanks", default="en_ewt,el_gdt",
                        help="treebanks under the data root, comma-separated")
    parser.add_argument("--epochs", default=None,
                        help="train N epochs instead of the configs' (stated in the table): N "
                             "for every config, or config=N,... for some")
    parser.add_argument("--pairs", type=int, default=3, help="alternating (ref, new) parse pairs")
    parser.add_argument("--load-pairs", type=int, default=5,
                        help="alternating (ref, new) model loads in fresh children (0: none)")
    parser.add_argument("--data", default=os.environ.get("DPARSE_DATA", "../shared/data"))
    parser.add_argument("--work", default="/tmp/bench-ref",
                        help="reference worktrees, cached models and outputs")
    parser.add_argument("--new-models", default=None,
                        help="cache key (commit) of this build's models, if an earlier commit "
                             "with the same model format trained them (stated in the table)")
    parser.add_argument("--shared", default="",
                        help="configs whose reference model both builds parse (same model "
                             "format; no training comparison), comma-separated")
    parser.add_argument("--train-pairs", type=int, default=0,
                        help="also time this many alternated (ref, new) trainings")
    parser.add_argument("--train-config", default="o1-cle")
    parser.add_argument("--train-treebank", default="el_gdt")
    parser.add_argument("--train-epochs", type=int, default=3)
    parser.add_argument("--out", default="results/bench-compare.md")
    args = parser.parse_args(argv)
    args.load_at_start = os.getloadavg()[0]
    args.shared = [name for name in args.shared.split(",") if name]
    try:  # a misspelt row fails now, not after hours of training
        for config in args.configs.split(","):
            split_row(config)
    except ValueError as exc:
        parser.error(str(exc))
    builds = [reference_build(args.ref, Path(args.work)), Build("new", REPO, build_key(REPO))]
    build_in_place(REPO)
    rows = [compare(builds, config, treebank, args)
            for treebank in args.treebanks.split(",") for config in args.configs.split(",")]
    timing = training_pairs(builds, args)
    write_text(args.out, markdown(rows, timing, builds, args))
    write_text(Path(args.out).with_suffix(".json"),
               json.dumps({"ref": builds[0].key, "new": builds[1].key, "rows": rows,
                           "training_pairs": timing}, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
