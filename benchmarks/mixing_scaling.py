"""Scaling of iterative parameter mixing where this machine cannot show it (issue 35).

Trains one config with 1, 2, 4 and 8 shards on one core (``--cluster inline``: the shards of
an epoch run one after another in this process, so that each is timed alone) and reports per
shard count: the mean over epochs of the slowest shard's epoch, the driver's mixing seconds,
the bytes sent each way per epoch, test UAS / LAS of the selected model (punctuation included)
and the projected speed-up of N workers, one epoch of one shard against the slowest shard plus
mixing plus the traffic at an assumed network rate (1 and 10 Gbit/s; one worker: the serial
epoch). Writes a Markdown table, its JSON and, with ``--plot``, the projected speed-up against
N (log-log); ``--rows JSON`` writes them again from an earlier run's JSON.
Usage:

    PYTHONPATH=. python benchmarks/mixing_scaling.py --config configs/en_ewt/o1-cle.yaml \\
        --data ../shared/data --shards 1,2,4,8 --out results/mixing-scaling.md \\
        --plot results/plots/mixing-scaling
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import time
from pathlib import Path

from dparse.batch.engines import WorkerOptions
from dparse.config import load_config
from dparse.epochs import read_split
from dparse.graph.training import parsing_decoder
from dparse.metrics import evaluate
from dparse.outputs import write_text
from dparse.parsers import train_parser

NETWORKS = {"1 Gbit/s": 125e6, "10 Gbit/s": 1.25e9}  # bytes per second


def run(config: str, data: str, shards: int, mixing: str, overrides: list[str]) -> dict:
    """Train with ``shards`` shards inline and score the model on the config's test file."""
    cfg = load_config(config, overrides, data)
    t0 = time.perf_counter()
    result = train_parser(cfg, progress=False, workers=None if shards == 1
                          else WorkerOptions(shards, "inline", mixing))
    seconds = time.perf_counter() - t0
    test = read_split(cfg, cfg.data.test)
    parsed = list(result.model.parse(test, parsing_decoder(cfg), cfg.decoder.single_root))
    report = evaluate(test, parsed, punct="include")
    row = {"shards": shards, "seconds": seconds, "uas": report.uas, "las": report.las,
           "best_epoch": result.best_epoch}
    if result.mixing is None:  # serial: the epoch is its stages
        row["epoch"] = statistics.mean(sum(v for k, v in ep.seconds.items() if k != "dev")
                                       for ep in result.epochs)
        row.update(slowest=row["epoch"], mix=0.0, up=0, down=0)
    else:
        log = result.mixing
        row["slowest"] = statistics.mean(max(epoch) for epoch in log.shard_seconds)
        row["epoch"] = statistics.mean(sum(epoch) for epoch in log.shard_seconds)
        row["mix"] = statistics.mean(log.mix_seconds)
        row["up"] = statistics.mean(log.bytes_up)
        row["down"] = statistics.mean(log.bytes_down) if log.bytes_down else 0
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--data", required=True, help="data root")
    ap.add_argument("--shards", default="1,2,4,8", help="shard counts, comma-separated")
    ap.add_argument("--mixing", default="uniform,updates",
                    help="mixings to run, comma-separated (uniform, updates)")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--plot", default=None, help="stem of the PNG/SVG figure")
    ap.add_argument("--rows", type=Path, default=None,
                    help="the JSON of an earlier run: write its table (and plot) again, "
                    "training nothing")
    args = ap.parse_args(argv)
    counts = [int(n) for n in args.shards.split(",")]
    mixings = args.mixing.split(",")
    if args.rows is not None:
        rows = json.loads(args.rows.read_text(encoding="utf-8"))
    else:
        rows = [{**run(args.config, args.data, n, mixing, args.overrides), "mixing": mixing}
                for mixing in mixings for n in counts if n > 1 or mixing == mixings[0]]
    serial = rows[0]
    serial["mixing"] = "(serial)"
    for row in rows:
        row["projected"] = {name: serial["epoch"] / (row["slowest"] + row["mix"] + (
            row["up"] + row["down"]) / rate) for name, rate in NETWORKS.items()}
    lines = [
        f"# Iterative parameter mixing: scaling by simulation ({Path(args.config).name})",
        "",
        f"Measured {datetime.date.today()} by `benchmarks/mixing_scaling.py` (`make "
        "mixing-scaling`), uniform and by-updates mixing, the shards of each epoch run one after "
        "another on one core (`dparse train --workers N --cluster inline`). Epoch seconds: "
        "the shards' passes (mean over epochs); mixing: the driver's; traffic: bytes per "
        "epoch, workers to driver (touched indices with w and u) and driver to all workers "
        "(mixed values at the union of the touched indices). Projected speed-up of N "
        "workers: the one-shard epoch over the slowest shard + mixing + traffic at "
        f"{' or '.join(NETWORKS)}. Test scores: punctuation included.",
        "",
        "| mixing | shards | epoch, all shards (s) | slowest shard (s) | mixing (s) "
        "| MB up / epoch | MB down / epoch | "
        + " | ".join(f"projected, {name}" for name in NETWORKS)
        + " | test UAS | test LAS | best epoch | train (s) |",
        "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(NETWORKS) + "---:|---:|---:|---:|",
    ]
    for r in rows:
        projected = " | ".join(f"{r['projected'][name]:.2f}x" for name in NETWORKS)
        lines.append(f"| {r['mixing']} | {r['shards']} | {r['epoch']:.2f} | {r['slowest']:.2f} | "
                     f"{r['mix']:.2f} | {r['up'] / 1e6:.1f} | {r['down'] / 1e6:.1f} | "
                     f"{projected} | {r['uas']:.2f} | {r['las']:.2f} | "
                     f"{r['best_epoch']} | {r['seconds']:.0f} |")
    lines.append("")
    for r in rows[1:]:
        lines.append(f"- {r['mixing']}, {r['shards']} shards against 1: UAS "
                     f"{r['uas'] - serial['uas']:+.2f}, LAS {r['las'] - serial['las']:+.2f}.")
    write_text(args.out, "\n".join(lines) + "\n")
    if args.rows is None:
        write_text(args.out.with_suffix(".json"), json.dumps(
            [{k: v for k, v in r.items() if k != "projected"} for r in rows], indent=1) + "\n")
    if args.plot:
        from dparse.reports.plots import plot_scaling

        series = {}
        for mixing in mixings:
            mine = [serial] + [r for r in rows[1:] if r["mixing"] == mixing]
            for name in NETWORKS:
                series[f"{mixing}, {name}"] = ([float(r["shards"]) for r in mine],
                                               [r["projected"][name] for r in mine])
        series["linear"] = ([float(n) for n in counts], [float(n) for n in counts])
        plot_scaling(series, args.plot, xlabel="workers (shards)",
                     ylabel="speed-up of an epoch", title="Iterative parameter mixing")


if __name__ == "__main__":
    main()
