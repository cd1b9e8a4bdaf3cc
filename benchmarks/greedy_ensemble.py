"""Ensembles of greedy inference with one and with several other parsers, on one treebank.

Section 7 of Tchernowitz, Yedidsion and Reichart (2016) biases the greedy parser towards the
tree of one other parser (TurboParser, here the dual-decomposition parser): every part of that
tree gains gamma_j before decoding. ``dparse ensemble`` also takes several other trees, each
raising its own parts, so that a part k of them contain gains k * gamma_j: the other parsers
vote, weighed against the greedy model's scores. This benchmark measures both on a treebank
with a dev file (en_ewt by default):

1. trains (or reuses, as benchmarks/greedy_tables.py does) the greedy model (``--model``,
   default o2-bgi-pp-ib) and the other parsers (``--others``, default o2-dd, o2-eisner,
   easyfirst: dual decomposition, projective second-order Eisner, easy-first);
2. parses dev and test with every other parser (timed);
3. for every non-empty subset of the other parsers, tunes gamma1 and gamma2 on dev over the
   grid of ``--grid`` (benchmarks/greedy_tune.py), then parses test biased towards that subset,
   decoding with the greedy model's own decoder and options.

Writes a Markdown report: every parser alone (test UAS, LAS, tokens/sec), then every ensemble
(the tuned gammas, dev and test UAS, the difference to the first other parser, SARC against it,
U-UAS, and tokens/sec counting the time of every parser it combines), and the same as JSON.
Usage:
    python benchmarks/greedy_ensemble.py --data ../shared/data --models models/greedy \\
        --reuse models --out results/greedy-ensemble.md
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from common import (
    TREEBANKS,
    DevScores,
    System,
    config_for,
    find_or_train,
    load_grid,
    run_model,
    scores,
    tune,
)

from dparse.config import ExperimentConfig, load_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import configured_decoder
from dparse.graph.load import load_model
from dparse.metrics import evaluate, format_score
from dparse.outputs import write_text
from dparse.parsers import load_parser
from dparse.timer import ParseTimer

DEFAULT_GRID = Path(__file__).resolve().parents[1] / "configs" / "en_ewt" / \
    "greedy-ensemble-grid.yaml"


def parse_timed(directory: Path, cfg: ExperimentConfig,
                sentences: list[Sentence]) -> tuple[list[Sentence], float]:
    """The sentences parsed by the model in ``directory`` and the seconds it took (encoding,
    scoring, decoding; loading excluded)."""
    timer = ParseTimer()
    parsed = list(load_parser(directory, cfg, None).parse(sentences, timer))
    return parsed, timer.seconds


def run(args: argparse.Namespace) -> dict:
    tb = next((t for t in TREEBANKS if t.name == args.treebank), None)
    if tb is None or tb.dev is None:
        raise SystemExit(f"--treebank {args.treebank}: needs a known treebank with a dev file")
    models, reuse = Path(args.models), [Path(p) for p in args.reuse]

    def cfg_of(name: str) -> ExperimentConfig:
        return load_config(raw=config_for(name, tb, None), overrides=args.set,
                           data_root=args.data)

    def log(msg: str) -> None:
        print(msg, flush=True)

    dev = read_treebank(Path(args.data) / tb.dev, encoding=tb.encoding)
    test = read_treebank(Path(args.data) / tb.test, encoding=tb.encoding)
    result: dict = {"treebank": tb.name, "model": args.model, "others": args.others,
                    "punct": args.punct, "alone": {}, "ensembles": []}
    outputs: dict[str, tuple[list[Sentence], list[Sentence], float]] = {}
    for name in args.others:
        cfg = cfg_of(name)
        path = find_or_train(cfg, models, reuse, log)
        dev_out, _ = parse_timed(path, cfg, dev)
        test_out, seconds = parse_timed(path, cfg, test)
        outputs[name] = (dev_out, test_out, seconds)
        result["alone"][name] = scores(test, test_out, seconds, args.punct, None)
        log(f"{name}: test UAS {format_score(result['alone'][name]['uas'], 0)}")
    first = outputs[args.others[0]][1]
    # the greedy model alone and every ensemble, test scored once
    cfg = cfg_of(args.model)
    model_dir = find_or_train(cfg, models, reuse, log)
    plain = System(args.model, configured_decoder(cfg.decoder.name, cfg.decoder.options),
                   cfg.decoder.single_root)
    grid = load_grid(args.grid)
    model = load_model(model_dir)
    dev_scores = DevScores(model, dev, args.cache_gb * 2**30)  # once for every subset
    ensembles = []
    for size in range(1, len(args.others) + 1):
        for subset in itertools.combinations(args.others, size):
            report = tune(model_dir, dev_scores, grid, [outputs[n][0] for n in subset],
                          args.punct, log=lambda _: None)
            best = report["best"]["ensemble"]
            rows = report["stages"][-1]["rows"]
            dev_uas = rows[report["stages"][-1]["best"]]["uas"]
            system = System("+".join(subset), plain.decoder, cfg.decoder.single_root,
                            (best["gamma1"], best["gamma2"]), [outputs[n][1] for n in subset])
            ensembles.append((subset, dev_uas, system))
            log(f"{system.name}: gammas {system.gammas}, dev UAS {format_score(dev_uas, 0)}")
    run_model(model, test, [plain] + [s for _, _, s in ensembles])
    # the greedy model alone is timed as the other parsers are, by its parser (the path of
    # dparse parse, whose scoring is faster than run_model's); an ensemble is charged that
    # time with its own decoding in place of the plain model's
    _, alone = parse_timed(model_dir, cfg, test)
    result["alone"][args.model] = scores(test, plain.parsed, alone, args.punct, first)
    for subset, dev_uas, system in ensembles:
        seconds = alone - plain.seconds + system.seconds + sum(outputs[n][2] for n in subset)
        row = scores(test, system.parsed, seconds, args.punct, first)
        rep = evaluate(test, system.parsed, punct=args.punct, other=first)
        row.update(others=list(subset), gamma1=system.gammas[0], gamma2=system.gammas[1],
                   dev_uas=dev_uas, gold_xy=list(rep.gold_xy or ()))
        result["ensembles"].append(row)
    return result


def write_report(result: dict, path: Path) -> None:
    first = result["others"][0]
    base = result["alone"][first]["uas"]
    lines = [f"# Greedy-inference ensembles with other parsers ({result['treebank']})", "",
             f"The greedy model `{result['model']}` biased towards the test parses of other "
             "parsers (Tchernowitz et al. 2016, Section 7; several other parsers: each tree "
             "raises its own parts). gamma1 and gamma2 tuned on dev for every set of other "
             f"parsers. Punctuation rule {result['punct']}; tokens/sec on one core, loading "
             "excluded, an ensemble charged the time of every parser it combines.", "",
             "## Parsers alone (test)", "",
             "| parser | UAS | LAS | U-UAS | tokens/sec |", "|---|---:|---:|---:|---:|"]
    for name, row in result["alone"].items():
        scores_ = " | ".join(format_score(row[k], 0) for k in ("uas", "las", "u_uas"))
        lines.append(f"| {name} | {scores_} | {row['tokens_per_second']:,.0f} |")
    lines += ["", f"## Ensembles of {result['model']} (test; gold(x, y) and SARC against "
              f"{first})", "",
              f"| other parsers | gamma1 | gamma2 | dev UAS | UAS | vs {first} | SARC | U-UAS | "
              "gold(x, y) | tokens/sec |", "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for row in result["ensembles"]:
        gold = ", ".join(format_score(v, 0) for v in row["gold_xy"])
        gain = None if row["uas"] is None or base is None else row["uas"] - base
        cells = [format_score(row["dev_uas"], 0), format_score(row["uas"], 0),
                 format_score(gain, 0, sign=True), format_score(row["sarc"], 0),
                 format_score(row["u_uas"], 0)]
        lines.append(f"| {' + '.join(row['others'])} | {row['gamma1']:g} | {row['gamma2']:g} | "
                     + " | ".join(cells) + f" | ({gold}) | {row['tokens_per_second']:,.0f} |")
    lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines))
    write_text(path.with_suffix(".json"), json.dumps(result, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data", help="the data root")
    ap.add_argument("--treebank", default="en_ewt", help="a treebank of benchmarks/common.py "
                    "with a dev file [default: en_ewt]")
    ap.add_argument("--models", default="models/greedy", help="where missing models are trained")
    ap.add_argument("--reuse", action="append", default=[],
                    help="another folder to look for trained models in (repeatable)")
    ap.add_argument("--model", default="o2-bgi-pp-ib", help="the greedy model's config")
    ap.add_argument("--others", default="o2-dd,o2-eisner,easyfirst",
                    type=lambda text: text.split(","),
                    help="the other parsers' configs, comma-separated; the first is the "
                    "reference (the paper's TurboParser) [default: o2-dd,o2-eisner,easyfirst]")
    ap.add_argument("--grid", default=str(DEFAULT_GRID), help="the gamma grid (greedy_tune)")
    ap.add_argument("--punct", default="include", help="punctuation rule")
    ap.add_argument("--cache-gb", type=float, default=2.0,
                    help="memory for the dev scores while tuning (see greedy_tune)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="patch every config (e.g. training.epochs=1 for a smoke run)")
    ap.add_argument("--out", default="results/greedy-ensemble.md")
    args = ap.parse_args()
    args.data = str(Path(args.data).resolve())
    result = run(args)
    write_report(result, Path(args.out))
    print(f"report written to {args.out}")


if __name__ == "__main__":
    main()
