"""Parsing speed of trained models against a reference model, alternated in one run (issue 37).

Each system is a model directory (with optional ``--set`` overrides of its decoder options);
the first is the reference. Every round parses the test file once with each system in turn
(A B A B A B for two systems and three rounds), each in a single-threaded child process
(``python -m dparse parse --json``, as benchmarks/bench_compare.py runs its builds), so that
the load of a shared machine falls on all systems alike. The report gives, per system, the
median inference tokens/sec, scoring and decoding seconds, the median over rounds of its
tokens/sec divided by the reference's in the same round, and UAS / LAS (punctuation included)
of its output; and the same as JSON. Usage:

    PYTHONPATH=. python benchmarks/greedy_speed.py --test ../shared/data/en_ewt/test.conllu \\
        --system o2-dd=models/en_ewt-o2-dd \\
        --system o2-bgi-pp-ib=models/greedy/en_ewt-o2-bgi-pp-ib --rounds 3 --out speed.md
    ... --system 'b1=models/greedy/en_ewt-o2-bgi-pp-ib@decoder.options.beam=1'
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from common import THREAD_VARS, run_child

from dparse.conll import read_treebank
from dparse.metrics import evaluate
from dparse.outputs import write_text


@dataclass
class SpeedSystem:
    """A model directory parsed with some ``--set`` overrides, and its runs' summaries."""

    name: str
    model: Path
    overrides: list[str]
    runs: list[dict] = field(default_factory=list)
    uas: float = 0.0
    las: float = 0.0

    def median(self, key: str) -> float:
        return statistics.median(run[key] for run in self.runs)


def parse_system(spec: str) -> SpeedSystem:
    """``NAME=MODEL_DIR[@key=value@key=value...]`` as a system."""
    name, eq, rest = spec.partition("=")
    if not eq or not name:
        raise argparse.ArgumentTypeError(f"--system {spec!r}: expected NAME=MODEL_DIR[@k=v...]")
    model, *overrides = rest.split("@")
    return SpeedSystem(name, Path(model), overrides)


def parse_once(system: SpeedSystem, test: Path, output: Path) -> dict:
    """Parse ``test`` with ``system`` in a single-threaded child; its --json summary."""
    cmd = [sys.executable, "-m", "dparse", "parse", str(system.model), str(test),
           "-o", str(output), "--json"]
    for override in system.overrides:
        cmd += ["--set", override]
    env = dict(os.environ, **{name: "1" for name in THREAD_VARS})
    _, _, err = run_child(cmd, env, Path.cwd())
    return json.loads(err.strip().splitlines()[-1])


def measure(systems: list[SpeedSystem], test: Path, rounds: int, work: Path) -> None:
    """Alternate the systems ``rounds`` times on ``test``; score each one's last output."""
    gold = read_treebank(test)
    for r in range(rounds):
        for system in systems:
            output = work / f"{system.name}.conllu"
            system.runs.append(parse_once(system, test, output))
            print(f"round {r + 1}: {system.name} {system.runs[-1]['tokens_per_second']:,.0f} "
                  "tokens/sec", file=sys.stderr)
    for system in systems:
        score = evaluate(gold, read_treebank(work / f"{system.name}.conllu"))
        system.uas, system.las = score.uas, score.las


def ratios(system: SpeedSystem, reference: SpeedSystem) -> list[float]:
    """Per round: the system's tokens/sec over the reference's."""
    return [a["tokens_per_second"] / b["tokens_per_second"]
            for a, b in zip(system.runs, reference.runs, strict=True)]


def report(systems: list[SpeedSystem], test: str, rounds: int) -> tuple[str, dict]:
    """The Markdown table and its JSON record."""
    ref = systems[0]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Written {when} by benchmarks/greedy_speed.py: {test}, {rounds} rounds, the "
             f"systems alternated in each (reference: {ref.name}); tokens/sec is inference "
             "only (scoring + decoding, `dparse parse --json`), single-threaded children; "
             "UAS / LAS with punctuation included.", "",
             f"| system | overrides | UAS / LAS | UAS - {ref.name} | tokens/sec (median) | "
             f"score s | decode s | ratio to {ref.name} (median; per round) |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    record: dict = {"test": test, "rounds": rounds, "reference": ref.name, "systems": []}
    for system in systems:
        per_round = ratios(system, ref)
        lines.append(
            f"| {system.name} | {' '.join(system.overrides) or '-'} | "
            f"{system.uas:.2f} / {system.las:.2f} | "
            f"{system.uas - ref.uas:+.2f} | {system.median('tokens_per_second'):,.0f} | "
            f"{system.median('score_seconds'):.2f} | {system.median('decode_seconds'):.2f} | "
            f"**{statistics.median(per_round):.2f}x** "
            f"({', '.join(f'{x:.2f}' for x in per_round)}) |")
        record["systems"].append({"name": system.name, "model": system.model.name,
                                  "overrides": system.overrides, "uas": system.uas,
                                  "las": system.las, "runs": system.runs,
                                  "ratios": per_round})
    return "\n".join(lines) + "\n", record


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", type=Path, required=True, help="the gold test file parsed")
    ap.add_argument("--system", type=parse_system, action="append", required=True,
                    help="NAME=MODEL_DIR[@key=value...]; the first is the reference")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label", default=None, help="the test file's name in the report")
    ap.add_argument("--out", type=Path, help="Markdown report (and .json beside it)")
    args = ap.parse_args(argv)
    if len(args.system) < 2:
        ap.error("give a reference and at least one other --system")
    with tempfile.TemporaryDirectory() as work:
        measure(args.system, args.test, args.rounds, Path(work))
    text, record = report(args.system, args.label or args.test.name, args.rounds)
    print(text)
    if args.out:
        write_text(args.out, text)
        write_text(args.out.with_suffix(".json"), json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
