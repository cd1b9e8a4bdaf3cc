"""Head probabilities of graph models: the temperature fitted on dev, the calibration on test
before and after it, and the cost of ``--marginals`` against a plain parse.

For each model directory of ``--models``: ``Parser.fit_temperature`` on ``--dev`` (the gold
trees' log-likelihood, golden-section on log T); the test file parsed with ``--marginals`` at
T = 1 and at the fitted T, each scored by ``dparse eval --calibration`` (expected calibration
error, 10 equal-width bins, every word); then ``--rounds`` rounds, alternated in one process,
of a plain parse of the test file and a ``--marginals`` parse of it (inference seconds as
``dparse parse`` reports them, model loading excluded; the median round of each). With
``--plot``, the reliability diagrams at the fitted T of every model in one SVG
(:mod:`dparse.reports.reliability`).

    python benchmarks/marginals_bench.py --models models/en_ewt-o1-cle,models/en_ewt-o2-eisner \\
        --dev ../shared/data/en_ewt/dev.conllu --test ../shared/data/en_ewt/test.conllu \\
        --rounds 3 --out results/marginals-en_ewt.md --plot results/marginals-en_ewt-reliability.svg
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import dparse
from dparse.calibration import Calibration, MarginalsOutput, calibration_of_files
from dparse.decoders import get_decoder
from dparse.graph.distribution import TreeDistribution
from dparse.reports.reliability import reliability_svg


def distribution_name(parser: dparse.Parser) -> str:
    """What the model's head probabilities are marginals of (dparse.graph.distribution)."""
    decoder = get_decoder(parser.decoder)
    dist = TreeDistribution.of(decoder, single_root=True)
    if dist.second_order:
        exact = "exact" if decoder.projective else "approximate: projective trees only"
        return f"arc+sib+grand, projective ({exact})"
    return "arcs, " + ("projective" if dist.projective else "all trees")


def measure(model: str, dev: str, test: str, rounds: int, work: Path
            ) -> tuple[dict, Calibration]:
    parser = dparse.load(model)
    started = time.perf_counter()
    fit = parser.fit_temperature(dev)
    fit_seconds = time.perf_counter() - started
    result: dict = {"model": Path(model).name, "decoder": parser.decoder,
                    "distribution": distribution_name(parser),
                    "temperature": fit.temperature, "fit_seconds": fit_seconds,
                    "dev_sentences": fit.sentences, "dev_skipped": fit.skipped,
                    "dev_nll_at_1": fit.nll_at_1, "dev_nll": fit.nll}
    for name, t in (("t1", 1.0), ("fitted", fit.temperature)):
        out = work / f"{result['model']}.{name}.conllu"
        parser.parse_file(test, out, marginals=MarginalsOutput(temperature=t))
        cal = calibration_of_files(test, out)
        result[f"ece_{name}"] = cal.ece
        result[f"reliability_{name}"] = cal.as_dict()["reliability"]
        fitted = cal
    result["uas"] = dparse.evaluate(test, work / f"{result['model']}.t1.conllu").uas
    plain, marg = [], []
    for _ in range(rounds):
        plain.append(parser.parse_file(test, work / "plain.conllu").timer)
        marg.append(parser.parse_file(test, work / "marg.conllu", marginals=MarginalsOutput(
            temperature=fit.temperature)).timer)
    if rounds:
        for name, timers in (("plain", plain), ("marginals", marg)):
            result[f"{name}_seconds"] = statistics.median(t.seconds for t in timers)
            result[f"{name}_wall"] = statistics.median(t.wall for t in timers)
        result["rounds"] = rounds
    return result, fitted


def table(results: list[dict], args: argparse.Namespace) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Head probabilities on en_ewt: temperature, calibration, cost",
        "",
        f"Measured {when} on {platform.node() or 'this machine'} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}) by "
        f"`python benchmarks/marginals_bench.py "
        f"--dev {Path(args.dev).name} --test {Path(args.test).name} --rounds {args.rounds}`.",
        "T: fitted on dev by the gold trees' log-likelihood (`Parser.fit_temperature`, "
        "golden-section on log T; dev sentences whose gold tree the model's distribution cannot "
        "hold are skipped: non-projective under a projective decoder, or through a pruned arc). "
        "ECE: `dparse eval --calibration` over every test word (punctuation included), 10 "
        "equal-width bins, HeadProb as written (3 decimals). Time: inference seconds of the "
        "whole test file (model loading excluded; in brackets the wall seconds of reading, "
        "parsing and writing), median of the rounds, a plain parse and a `--marginals` parse "
        "(at the fitted T) alternated in one process.",
        "",
        "| model | decoder | marginals of | T | fit s | dev NLL/sent. T=1 -> T | test UAS "
        "| ECE T=1 | ECE fitted T | plain s (wall) | --marginals s (wall) | ratio (wall) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        speed = ("| n/a | n/a | n/a |" if "rounds" not in r else
                 f"| {r['plain_seconds']:.2f} ({r['plain_wall']:.2f}) | "
                 f"{r['marginals_seconds']:.2f} ({r['marginals_wall']:.2f}) | "
                 f"{r['marginals_seconds'] / r['plain_seconds']:.2f}x "
                 f"({r['marginals_wall'] / r['plain_wall']:.2f}x) |")
        lines.append(
            f"| {r['model']} | {r['decoder']} | {r['distribution']} | {r['temperature']:.3f} | "
            f"{r['fit_seconds']:.1f} | "
            f"{r['dev_nll_at_1']:.3f} -> {r['dev_nll']:.3f} ({r['dev_sentences']} kept, "
            f"{r['dev_skipped']} skipped) | {r['uas']:.2f} | {100 * r['ece_t1']:.2f}% | "
            f"{100 * r['ece_fitted']:.2f}% {speed}")
    lines += ["", "Reliability at the fitted T (words, mean HeadProb, accuracy per bin)"
              + (f"; drawn in [{Path(args.plot).name}]({Path(args.plot).name})" if args.plot
                 else "") + ":", ""]
    for r in results:
        lines += [f"{r['model']}:", "", "| bin | words | mean prob | accuracy |",
                  "|---|---|---|---|"]
        for b in r["reliability_fitted"]:
            p = "n/a" if b["mean_probability"] is None else f"{b['mean_probability']:.3f}"
            a = "n/a" if b["accuracy"] is None else f"{b['accuracy']:.3f}"
            lines.append(f"| {b['from']:.1f}-{b['to']:.1f} | {b['words']} | {p} | {a} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", required=True, help="comma-separated model directories")
    ap.add_argument("--dev", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", required=True, help="the Markdown file written")
    ap.add_argument("--json", help="also write the measurements to this JSON file")
    ap.add_argument("--plot", help="also draw the reliability diagrams into this SVG file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        measured = [measure(m, args.dev, args.test, args.rounds, Path(tmp))
                    for m in args.models.split(",")]
    results = [r for r, _ in measured]
    Path(args.out).write_text(table(results, args) + "\n")
    if args.plot:
        Path(args.plot).write_text(reliability_svg(
            [(r["model"], cal) for r, cal in measured],
            f"Head probabilities on {Path(args.test).name} at the T fitted on dev"))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
