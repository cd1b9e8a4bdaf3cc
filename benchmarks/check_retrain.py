"""Retrain every recorded en_ewt config and compare its model and test scores with the record.

The record (``results/retrain-en_ewt.json``) lists, for each config of the README's parser
table and the tagging configs beside it, the SHA-256 of the trained model's weights
(``weights.bin``, a tagger's ``tagger.bin``) and of all its files (every file of the model
directory but its configs, whose paths name the machine, and manifests), and the model's scores
on en_ewt test: UAS / LAS of its parse (gold tags; a pipeline parses the words alone, its tagger
first) or, for a tagger, UPOS / XPOS / UFeats / Lemmas. Training is seeded and its sums run in a
fixed order, so the same code gives the same files on any x86-64 machine: a change that moves
a model shows here, and belongs in a commit that says so and updates the record (``--update``),
the README and results/.

Each config trains, parses and is scored by the command line (``python -m dparse`` run in
``--checkout``, this repository by default), ``--jobs`` configs at a time, each on one core;
the U-MST configs read the o1-cle model trained in the same run, the two rerankers share one
first stage and jackknife, the tagged pipelines one jackknife. ``make check-retrain`` runs it
(about 100 minutes with ``RETRAIN_JOBS=2`` on the 2-core machine). Exit status 1 when a model
or score differs from the record.

    python benchmarks/check_retrain.py --models models/retrain --jobs 2
    python benchmarks/check_retrain.py --models models/retrain --only o1-cle,o2-dd
    python benchmarks/check_retrain.py --models models/retrain --update   # record this run
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORD = REPO / "results" / "retrain-en_ewt.json"
TABLE = REPO / "results" / "retrain-en_ewt.md"
TEST = "en_ewt/test.conllu"
# the scores kept for a parser and for a tagger, as `dparse eval --json` names them
PARSE_SCORES = ("uas", "las")
TAG_SCORES = ("upos", "xpos", "ufeats", "lemmas")
# files of a model directory (at any depth) left out of its fingerprint: configs name the
# machine's paths, a manifest lists the others' hashes
UNHASHED = ("config.yaml", "manifest.json")
# a model's weights: a parser's weights.bin, else a tagger's tagger.bin
WEIGHT_FILES = ("weights.bin", "tagger.bin")


@dataclass(frozen=True)
class Unit:
    """One config to retrain: its name (``configs/en_ewt/NAME.yaml``), the configs it waits
    for (``after``: their work folders are shared), those whose models it reads (``needs``:
    retrained with it by ``--only`` when the models folder lacks them), and the extra
    ``dparse train`` arguments (given the models folder)."""

    name: str
    after: tuple[str, ...] = ()
    tagger: bool = False
    needs: tuple[str, ...] = ()

    def train_args(self, models: Path) -> list[str]:
        if self.name.startswith("o1-umst"):
            return ["--set", f"umst.directed_model={models / 'en_ewt-o1-cle'}"]
        if self.name.startswith("rerank-"):
            return ["--work", str(models / "en_ewt-sr-nonsp-b12.jackknife")]
        if self.name.endswith("-tagged"):
            return ["--work", str(models / "en_ewt.tagged")]
        return []


# The configs of the README's parser table, then the tagger and the two tagged pipelines;
# a unit waits for those in its ``after``.
UNITS = (
    Unit("o1-cle"), Unit("o1-eisner"), Unit("o2-eisner"), Unit("o3-cube"), Unit("o3-exact"),
    Unit("o2-dd"), Unit("o1-bgi-pp"), Unit("o2-bgi-pp-ib"),
    Unit("o1-umst-uf-lep", after=("o1-cle",), needs=("o1-cle",)), Unit("easyfirst"),
    Unit("sr-nonsp-b12"), Unit("sr-sp-b12"), Unit("sr-b1"), Unit("rerank-local"),
    Unit("rerank-nonlocal", after=("rerank-local",)), Unit("tagger", tagger=True),
    Unit("o1-cle-tagged"), Unit("o2-eisner-tagged", after=("o1-cle-tagged",)),
)


@dataclass
class Outcome:
    """What retraining one unit gave."""

    name: str
    weights_sha256: str | None = None
    model_sha256: str | None = None
    scores: dict[str, float | None] = field(default_factory=dict)
    train_seconds: float = 0.0
    error: str | None = None


def model_hashes(directory: Path) -> tuple[str | None, str]:
    """(SHA-256 of the weights file (:data:`WEIGHT_FILES`), SHA-256 over the path and SHA-256
    of every file but :data:`UNHASHED`), read from the model's manifest (which lists each
    file's SHA-256)."""
    files = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["files"]
    whole = hashlib.sha256()
    for path in sorted(files):
        if Path(path).name not in UNHASHED:
            whole.update(f"{path}\0{files[path]['sha256']}\n".encode())
    weights = next((files[name]["sha256"] for name in WEIGHT_FILES if name in files), None)
    return weights, whole.hexdigest()


def run(command: list[str], checkout: Path, log: Path) -> None:
    """Run a ``python -m dparse`` command in ``checkout``, its output appended to ``log``;
    RuntimeError naming the command and the log when it fails."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    with open(log, "a", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        status = subprocess.run(command, cwd=checkout, env=env, stdout=out,
                                stderr=subprocess.STDOUT).returncode
    if status != 0:
        raise RuntimeError(f"{' '.join(command[2:4])} failed (exit {status}): see {log}")


def retrain(unit: Unit, models: Path, checkout: Path, data: Path) -> Outcome:
    """Train, parse (or tag) en_ewt test and score one unit; an Outcome with ``error`` set
    when a step fails."""
    dparse = [sys.executable, "-m", "dparse"]
    out = models / f"en_ewt-{unit.name}"
    log = models / f"{unit.name}.log"
    log.unlink(missing_ok=True)
    outcome = Outcome(unit.name)
    try:
        started = time.perf_counter()
        run([*dparse, "train", str(checkout / "configs" / "en_ewt" / f"{unit.name}.yaml"),
             "--out", str(out), "--data-root", str(data), "--quiet", *unit.train_args(models)],
            checkout, log)
        outcome.train_seconds = time.perf_counter() - started
        parsed = models / f"en_ewt-{unit.name}.test.conllu"
        gold = str(data / TEST)
        command = "tag" if unit.tagger else "parse"
        run([*dparse, command, str(out), gold, "-o", str(parsed), "--tags", "predict"]
            if unit.tagger or unit.name.endswith("-tagged")
            else [*dparse, command, str(out), gold, "-o", str(parsed)], checkout, log)
        report = subprocess.run([*dparse, "eval", gold, str(parsed), "--json"], cwd=checkout,
                                env=dict(os.environ, PYTHONPATH=str(checkout)),
                                capture_output=True, text=True, check=True).stdout
        scores = json.loads(report)
        keys = TAG_SCORES if unit.tagger else PARSE_SCORES
        outcome.scores = {key: None if scores[key] is None else round(scores[key], 2)
                          for key in keys}
        outcome.weights_sha256, outcome.model_sha256 = model_hashes(out)
    except (RuntimeError, subprocess.CalledProcessError, OSError, KeyError, ValueError) as exc:
        outcome.error = str(exc).splitlines()[0]
    return outcome


def retrain_all(units: list[Unit], models: Path, checkout: Path, data: Path, jobs: int
                ) -> dict[str, Outcome]:
    """Every unit retrained, ``jobs`` at a time, each after the units it waits for (a unit
    whose prerequisite failed fails too)."""
    done: dict[str, Outcome] = {}
    waiting = list(units)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        running: dict[concurrent.futures.Future[Outcome], Unit] = {}
        while waiting or running:
            for unit in list(waiting):
                if len(running) >= jobs:
                    break
                needs = [done.get(name) for name in unit.after if name in
                         {u.name for u in units}]
                if any(n is None for n in needs):
                    continue
                waiting.remove(unit)
                if any(n.error for n in needs):
                    done[unit.name] = Outcome(unit.name, error="a config it needs failed")
                    continue
                running[pool.submit(retrain, unit, models, checkout, data)] = unit
                print(f"check-retrain: training {unit.name}", file=sys.stderr, flush=True)
            if not running:
                continue
            finished, _ = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                unit = running.pop(future)
                done[unit.name] = outcome = future.result()
                state = outcome.error or (f"{outcome.scores} weights "
                                          f"{(outcome.weights_sha256 or '-')[:12]}")
                print(f"check-retrain: {unit.name}: {state} ({outcome.train_seconds:.0f} s)",
                      file=sys.stderr, flush=True)
    return done


def differences(outcome: Outcome, recorded: dict | None) -> list[str]:
    """What in ``outcome`` differs from its record entry (empty: the same model and scores)."""
    if outcome.error:
        return [outcome.error]
    if recorded is None:
        return ["not in the record"]
    found = []
    for key in ("weights_sha256", "model_sha256"):
        if getattr(outcome, key) != recorded.get(key):
            found.append(f"{key} {str(getattr(outcome, key))[:12]} "
                         f"(recorded {str(recorded.get(key))[:12]})")
    if outcome.scores != recorded.get("scores"):
        found.append(f"scores {outcome.scores} (recorded {recorded.get('scores')})")
    return found


def commit_of(checkout: Path) -> str:
    result = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=checkout,
                            capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=checkout, capture_output=True, text=True).stdout.strip()
    return (result.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def table(outcomes: dict[str, Outcome], record: dict[str, dict], commit: str) -> str:
    """The Markdown report of a run against the record."""
    lines = [
        "# en_ewt configs retrained (`make check-retrain`)", "",
        f"Run of {datetime.date.today()} at {commit} on {platform.machine()} "
        f"({os.cpu_count()} cores). Scores on en_ewt test, punctuation included: UAS / LAS "
        "(gold tags; a `-tagged` pipeline parses the words alone) or, for the tagger, "
        "UPOS / XPOS / UFeats / Lemmas. `weights` and `model`: the first 12 hex digits of "
        "the SHA-256 of `weights.bin` and of all the model's files but config.yaml "
        "(benchmarks/check_retrain.py). `same` compares with results/retrain-en_ewt.json.",
        "", "| config | scores | weights | model | training s | same as the record |",
        "|---|---|---|---|---|---|",
    ]
    # a run of some configs (--only) lists the record's others too, in the record's order
    for name in [u.name for u in UNITS if u.name in outcomes or u.name in record]:
        if name in outcomes:
            outcome = outcomes[name]
            diff = differences(outcome, record.get(name))
            cells = (outcome.scores, outcome.weights_sha256, outcome.model_sha256,
                     f"{outcome.train_seconds:.0f}",
                     "yes" if not diff else "no: " + "; ".join(diff))
        else:
            entry = record[name]
            cells = (entry["scores"], entry["weights_sha256"], entry["model_sha256"],
                     str(entry["train_seconds"]),
                     f"not retrained by this run (the record's, at {entry['commit']})")
        scores = " / ".join("n/a" if v is None else f"{v:.2f}" for v in cells[0].values())
        lines.append(f"| {name} | {scores or '-'} | {(cells[1] or '-')[:12]} | "
                     f"{(cells[2] or '-')[:12]} | {cells[3]} | {cells[4]} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=REPO / "models" / "retrain",
                    help="folder for the retrained models (default models/retrain)")
    ap.add_argument("--data", type=Path,
                    default=Path(os.environ.get("DPARSE_DATA", REPO.parent / "shared" / "data")))
    ap.add_argument("--checkout", type=Path, default=REPO,
                    help="the dparse checkout whose code trains (default: this one)")
    ap.add_argument("--jobs", type=int, default=1, help="configs trained at a time")
    ap.add_argument("--only", default="", help="comma-separated config names (default: all)")
    ap.add_argument("--record", type=Path, default=RECORD)
    ap.add_argument("--table", type=Path, default=TABLE, help="the Markdown report written")
    ap.add_argument("--update", action="store_true",
                    help="write this run's models and scores as the record")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    names = [n for n in args.only.split(",") if n]
    known = {u.name for u in UNITS}
    if unknown := sorted(set(names) - known):
        ap.error(f"unknown config(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    for unit in UNITS:  # a config named retrains the models it reads that are not there
        if unit.name in names:
            names += [n for n in unit.needs
                      if not (args.models / f"en_ewt-{n}" / "manifest.json").exists()]
    units = [u for u in UNITS if not names or u.name in names]
    args.models.mkdir(parents=True, exist_ok=True)
    record = json.loads(args.record.read_text(encoding="utf-8")) if args.record.exists() else {}
    entries = record.get("configs", {})
    checkout = args.checkout.resolve()
    outcomes = retrain_all(units, args.models.resolve(), checkout, args.data.resolve(),
                           args.jobs)
    outcomes = {u.name: outcomes[u.name] for u in units}
    commit = commit_of(checkout)
    failed = [name for name, o in outcomes.items() if o.error]
    if args.update and not failed:
        for name, o in outcomes.items():
            entries[name] = {"weights_sha256": o.weights_sha256, "model_sha256": o.model_sha256,
                             "scores": o.scores, "commit": commit,
                             "train_seconds": round(o.train_seconds)}
        order = [u.name for u in UNITS if u.name in entries]
        args.record.write_text(json.dumps({"configs": {n: entries[n] for n in order}},
                                          indent=1) + "\n", encoding="utf-8")
    report = table(outcomes, entries, commit)
    args.table.write_text(report, encoding="utf-8")
    print(report)
    if args.update:
        if failed:
            print(f"check-retrain: not recorded, these failed: {', '.join(failed)}",
                  file=sys.stderr)
            return 1
        print(f"check-retrain: recorded {len(outcomes)} configs in {args.record}",
              file=sys.stderr)
        return 0
    moved = [name for name, o in outcomes.items() if differences(o, entries.get(name))]
    if moved:
        print(f"check-retrain: differs from the record: {', '.join(moved)}", file=sys.stderr)
        return 1
    print(f"check-retrain: all {len(outcomes)} configs as recorded", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
