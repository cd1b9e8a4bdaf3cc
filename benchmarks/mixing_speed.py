"""Training on 1 and 2 workers, alternated in one run (issue 35).

Each system is a config with optional ``--set`` overrides (``NAME=CONFIG[@key=value...]``).
Every round trains each system once per worker count, in turn (1, 2, 1, 2 for two rounds),
each as ``python -m dparse train CONFIG --workers W -q`` in a child process, timing its wall
clock; the last model of each worker count then parses the config's test file and is scored
(punctuation included). The report gives per system the wall seconds of every run, the
median per worker count, the speed-up (median of 1 worker over median of W) and test UAS /
LAS; and the same as JSON. Usage:

    PYTHONPATH=. python benchmarks/mixing_speed.py --data ../shared/data --rounds 2 \\
        --system en_ewt-o1-cle=configs/en_ewt/o1-cle.yaml \\
        --system el_gdt-o1-cle=configs/ud/o1-cle.yaml@data.train=el_gdt/train.conllu@... \\
        --out results/mixing-speed.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dparse.config import load_config
from dparse.conll import read_treebank
from dparse.epochs import read_split
from dparse.metrics import evaluate
from dparse.outputs import write_text


def train(config: str, overrides: list[str], workers: int, data: str, out: Path) -> float:
    """Wall seconds of one ``dparse train`` in a child process."""
    cmd = [sys.executable, "-m", "dparse", "train", config, "--out", str(out), "-q",
           "--workers", str(workers), "--data-root", data]
    for item in overrides:
        cmd += ["--set", item]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env={**os.environ, "DPARSE_TRAIN_WORKERS": ""})
    return time.perf_counter() - t0


def score(config: str, overrides: list[str], data: str, model: Path, tmp: Path
          ) -> tuple[float, float]:
    """Test UAS and LAS (punctuation included) of ``model`` on the config's test file."""
    cfg = load_config(config, overrides, data)
    test = cfg.data_path(cfg.data.test)
    parsed = tmp / "parsed.conllu"
    subprocess.run([sys.executable, "-m", "dparse", "parse", str(model), str(test), "-o",
                    str(parsed)], check=True, capture_output=True)
    report = evaluate(read_split(cfg, cfg.data.test), read_treebank(parsed), punct="include")
    return report.uas, report.las


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", action="append", required=True,
                    help="NAME=CONFIG[@key=value@...]")
    ap.add_argument("--data", required=True, help="data root")
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        for spec in args.system:
            name, _, rest = spec.partition("=")
            config, *overrides = rest.split("@")
            runs: dict[int, list[float]] = {w: [] for w in counts}
            for _ in range(args.rounds):
                for w in counts:
                    runs[w].append(train(config, overrides, w, args.data, tmp / f"w{w}"))
            scores = {w: score(config, overrides, args.data, tmp / f"w{w}", tmp)
                      for w in counts}
            rows.append({"system": name, "config": config, "overrides": overrides,
                         "runs": runs, "scores": scores})
            print(name, runs, scores, file=sys.stderr)
    lines = [
        "# One model on several workers: training time, alternated runs",
        "",
        f"Measured {datetime.date.today()} by `benchmarks/mixing_speed.py` (`make "
        f"mixing-speed`): each round trains every system with {', '.join(map(str, counts))} "
        "worker(s) in turn (`dparse train --workers W`, local processes, uniform mixing), "
        "wall time of the whole command; test scores of the last model of each count, "
        "punctuation included.",
        "",
        "| system | workers | wall seconds (runs) | median | speed-up | test UAS | test LAS |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        base = statistics.median(row["runs"][counts[0]])
        for w in counts:
            med = statistics.median(row["runs"][w])
            uas, las = row["scores"][w]
            lines.append(f"| {row['system']} | {w} | "
                         f"{', '.join(f'{s:.1f}' for s in row['runs'][w])} | {med:.1f} | "
                         f"{base / med:.2f}x | {uas:.2f} | {las:.2f} |")
    write_text(args.out, "\n".join(lines) + "\n")
    write_text(args.out.with_suffix(".json"), json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
