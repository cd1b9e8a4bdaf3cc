"""Hyper-parameter search for greedy inference (Tchernowitz, Yedidsion and Reichart 2016,
Section 8): the dev UAS of a trained graph model under every setting of a YAML grid.

The grid (default configs/en_ewt/greedy-grid.yaml, every key commented there) names the decoder
and a list of stages; each stage maps keys to lists of values and decodes every combination,
and its best setting (highest dev UAS, the first on ties) is kept for the later stages. The
keys ``gamma1`` and ``gamma2`` are the ensemble's biases (Section 7): a stage with them decodes
biased towards ``--other`` (the exact parser's dev output; repeated, several parsers' outputs,
each raising its own parts as ``dparse ensemble`` does) and is skipped without it (gamma2
stays at its starting value for a first-order model, which has no parts it could raise); every
other key is a keyword option of the decoder. Settings start from the model config's decoder
options (when it names the same decoder) and its ensemble gammas.

The dev file is scored once: each sentence's arc, label and part arrays are kept in memory
(part arrays in float32 when float64 would need more than ``--cache-gb``; re-scored on every
pass if even that is too much), then every setting only decodes. Writes a Markdown report (a
table per stage: setting, dev UAS, decoding tokens/sec; the best in bold; the best setting as
config YAML) and the same as JSON next to it. Usage:

    python benchmarks/greedy_tune.py --model models/greedy/en_ewt-o1-bgi-pp \\
        --dev ../shared/data/en_ewt/dev.conllu --other dev.o1-cle.conllu \\
        --grid configs/en_ewt/greedy-grid.yaml --out results/greedy-tune-o1.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml
from common import DevScores, load_grid, tune

from dparse.conll import read_treebank
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.outputs import write_text

DEFAULT_GRID = Path(__file__).resolve().parents[1] / "configs" / "en_ewt" / "greedy-grid.yaml"


def write_report(report: dict, path: Path) -> None:
    lines = [f"# Greedy inference: dev tuning of `{report['model']}`", "",
             f"Decoder `{report['decoder']}`; {report['sentences']} dev sentences, "
             f"{report['tokens']} tokens, punctuation rule {report['punct']}; scores "
             f"{report['storage']}, computed in {report['score_seconds']:.1f}s. Starting "
             f"setting: {report['start']}. Each stage keeps its best setting (bold) for the "
             "next; decoding tokens/sec exclude scoring (lower bounds on a busy machine).", ""]
    for stage in report["stages"]:
        lines += [f"## {stage['name']}", ""]
        if "skipped" in stage:
            lines += [f"Skipped: {stage['skipped']}.", ""]
            continue
        keys = list(stage["rows"][0]["setting"])
        what = "ensemble dev UAS" if stage["ensemble"] else "dev UAS"
        lines += ["| " + " | ".join(keys) + f" | {what} | decoding tok/s |",
                  "|" + "---:|" * (len(keys) + 2)]
        for i, row in enumerate(stage["rows"]):
            cells = [f"{row['setting'][k]:g}" for k in keys]
            cells += [f"{row['uas']:.2f}", f"{row['decode_tokens_per_second']:,.0f}"]
            if i == stage["best"]:
                cells = [f"**{c}**" for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    best = report["best"]
    lines += ["## Best setting", "", "```yaml",
              yaml.safe_dump({"decoder": {"options": best["decoder"]["options"]},
                              "ensemble": best["ensemble"]}, sort_keys=False).rstrip(), "```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines))
    write_text(path.with_suffix(".json"), json.dumps(report, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a trained graph model directory")
    ap.add_argument("--dev", required=True, help="the dev file (gold trees)")
    ap.add_argument("--grid", default=str(DEFAULT_GRID), help="the grid YAML file")
    ap.add_argument("--other", action="append", default=[],
                    help="another parser's output on the dev file: tunes the ensemble gammas "
                    "(repeat it for an ensemble with several parsers)")
    ap.add_argument("--out", default="results/greedy-tune.md")
    ap.add_argument("--punct", default="include", help="punctuation rule for dev UAS")
    ap.add_argument("--encoding", default="utf-8", help="encoding of --dev and --other")
    ap.add_argument("--cache-gb", type=float, default=2.0,
                    help="memory for the dev scores (beyond it: float32, then re-scoring)")
    args = ap.parse_args()
    try:
        grid = load_grid(args.grid)
        dev = read_treebank(args.dev, encoding=args.encoding)
        others = [read_treebank(path, encoding=args.encoding) for path in args.other]
        model_dir = Path(args.model)
        scores = DevScores(load_model(model_dir), dev, args.cache_gb * 2**30)
        report = tune(model_dir, scores, grid, others, args.punct,
                      log=lambda msg: print(msg, flush=True))
    except DparseError as exc:
        print(f"greedy_tune: error: {exc}", file=sys.stderr)
        sys.exit(2)
    write_report(report, Path(args.out))
    print(f"best: {report['best']}; report written to {args.out}")


if __name__ == "__main__":
    main()
