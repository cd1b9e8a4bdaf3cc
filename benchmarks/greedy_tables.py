"""Tables 1 and 2 of Tchernowitz, Yedidsion and Reichart (2016), greedy graph-based inference,
on the treebanks under the data root (benchmarks/common.py).

Rows, for order k = 1 and 2; each is a config of configs/en_ewt/ with the treebank's files, and
each model is ``<treebank>-<model config>`` (trained on the treebank's training file, epoch
chosen on dev when there is one):

| row            | config       | model (trained with)                    | test-time decoder     |
|----------------|--------------|-----------------------------------------|-----------------------|
| exact (k = 1)  | o1-cle       | o1-cle (Chu-Liu-Edmonds)                | cle                   |
| exact (k = 2)  | o2-dd        | o2-dd (dual decomposition)              | dd2                   |
| BGI            | ok-bgi       | ok-bgi (bgi, Algorithm 1)               | bgi                   |
| BGI-PP         | ok-bgi-pp    | ok-bgi-pp (bgi-pp, tuned alpha, beta)   | the same              |
| BGI-PP + i     | ok-bgi-pp-i  | ok-bgi-pp-i (+ 5 improve rounds)        | the same              |
| BGI-PP + i + b | ok-bgi-pp-ib | ok-bgi-pp-ib (+ beam 3)                 | the same              |

Every greedy model is trained with its own inference, as the paper trains its parser (the row
configs leave ``training.decoder`` null).

Each greedy row also runs as an ensemble (Section 7): its model and its config's ``ensemble``
section (decoder, options, gamma1, gamma2) biased towards the exact row's output.

Measures on the test file (punctuation rule ``--punct``): UAS; tokens/sec (encoding, scoring and
decoding on one core, model loading and file reading excluded; rows sharing a model are scored
once, and each is charged that scoring time; an ensemble is also charged the exact parser's
time, as the paper counts it); SARC, the share of arcs shared with the exact parser's output;
U-UAS; and gold(BGI-PP + i + b, exact). Table 1 is shown for en_ewt (else the first treebank
run), Table 2 gives the UAS of every row on every treebank.

A model is trained only when missing: it is looked up by name in ``--models`` and then in each
``--reuse`` folder, and taken only if it was trained with the same config up to the parse-time
sections (name, decoder options when a training decoder is set, ensemble); otherwise it is
trained into ``--models`` (an existing model there that differs is an error, never replaced).
Usage:
    python benchmarks/greedy_tables.py --data ../shared/data --models models/greedy \\
        --reuse models --reuse models/umst --treebanks en_ewt --orders 1,2 \\
        --out results/greedy-tables.md
``--set key=value`` patches every config (e.g. ``--set training.epochs=1`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from common import (
    TREEBANKS,
    Log,
    System,
    config_for,
    find_or_train,
    missing_files,
    run_model,
    scores,
    training_identity,
)

from dparse.batch.grid import Treebank
from dparse.config import ExperimentConfig, load_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import configured_decoder
from dparse.graph.load import load_model
from dparse.metrics import evaluate, format_score
from dparse.outputs import write_text

EXACT = {1: ("CLE", "o1-cle"), 2: ("DD", "o2-dd")}
# row name, row config, model config (rows sharing a model differ only in decoder options)
GREEDY = [("BGI", "bgi", "bgi"), ("BGI-PP", "bgi-pp", "bgi-pp"),
          ("BGI-PP+i", "bgi-pp-i", "bgi-pp-i"), ("BGI-PP+i+b", "bgi-pp-ib", "bgi-pp-ib")]
GOLD_ROW = "BGI-PP+i+b"

def run_order(tb: Treebank, order: int, test: list[Sentence], args: argparse.Namespace,
              log: Log) -> dict:
    """Every row of one order on one treebank: {"rows": {name: scores}, "models": ..., ...}."""
    def cfg_of(name: str) -> ExperimentConfig:
        return load_config(raw=config_for(name, tb, None), overrides=args.set,
                           data_root=args.data)

    models, reuse = Path(args.models), [Path(p) for p in args.reuse]
    exact_name, exact_key = EXACT[order]
    exact_cfg = cfg_of(exact_key)
    exact_dir = find_or_train(exact_cfg, models, reuse, log)
    exact_sys = System(exact_name, configured_decoder(exact_cfg.decoder.name,
                                                      exact_cfg.decoder.options),
                       exact_cfg.decoder.single_root)
    exact_seconds = run_model(load_model(exact_dir), test, [exact_sys]) + exact_sys.seconds
    exact = exact_sys.parsed
    result = {"rows": {exact_name: scores(test, exact, exact_seconds, args.punct, None)},
              "ensembles": {}, "models": {exact_name: str(exact_dir)}}
    # the greedy rows, grouped by model
    by_model: dict[Path, list[tuple[System, System]]] = {}
    for row, key, model_key in GREEDY:
        cfg = cfg_of(f"o{order}-{key}")
        model_cfg = cfg_of(f"o{order}-{model_key}")
        if training_identity(cfg) != training_identity(model_cfg):
            raise SystemExit(f"configs o{order}-{key} and o{order}-{model_key} must train the "
                             "same model (they differ beyond the parse-time sections)")
        path = find_or_train(model_cfg, models, reuse, log)
        result["models"][row] = str(path)
        ens = cfg.ensemble
        plain = System(row, configured_decoder(cfg.decoder.name, cfg.decoder.options),
                       cfg.decoder.single_root)
        biased = System(row + "+e", configured_decoder(ens.decoder, ens.options),
                        cfg.decoder.single_root, (ens.gamma1, ens.gamma2), [exact])
        by_model.setdefault(path, []).append((plain, biased))
    for path, pairs in by_model.items():
        systems = [s for pair in pairs for s in pair]
        shared = run_model(load_model(path), test, systems)
        for plain, biased in pairs:
            result["rows"][plain.name] = scores(test, plain.parsed, shared + plain.seconds,
                                                args.punct, exact)
            result["ensembles"][plain.name] = scores(
                test, biased.parsed, shared + biased.seconds + exact_seconds, args.punct, exact)
            result["ensembles"][plain.name]["gammas"] = list(biased.gammas or ())
            if plain.name == GOLD_ROW:
                result["gold_xy"] = list(evaluate(test, plain.parsed, punct=args.punct,
                                                  other=exact).gold_xy or ())
    return result


def table1(tb: str, orders: dict[str, dict]) -> list[str]:
    lines = [f"## Table 1 ({tb}): individual and ensemble models", "",
             "Ensembles: the row's model and decoder biased towards the exact parser's output "
             "(gamma1, gamma2 from the row's config); their tokens/sec include the exact "
             "parser's time.", "",
             "| model | order | UAS | TPS | SARC | U-UAS | ens. UAS | ens. TPS | ens. SARC | "
             "ens. U-UAS | gamma1, gamma2 |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for order, res in orders.items():
        for name, row in res["rows"].items():
            sarc = format_score(row["sarc"], 0) if "sarc" in row else "-"
            cells = [format_score(row["uas"], 0), f"{row['tokens_per_second']:,.0f}", sarc,
                     format_score(row["u_uas"], 0)]
            ens = res["ensembles"].get(name)
            if ens is None:
                cells += ["-"] * 5
            else:
                cells += [format_score(ens["uas"], 0), f"{ens['tokens_per_second']:,.0f}",
                          format_score(ens["sarc"], 0), format_score(ens["u_uas"], 0),
                          ", ".join(f"{g:g}" for g in ens["gammas"])]
            lines.append(f"| {name} | {order} | " + " | ".join(cells) + " |")
    lines.append("")
    for order, res in orders.items():
        if "gold_xy" in res:
            exact = EXACT[int(order)][0]
            a, b = res["gold_xy"]
            lines.append(f"- order {order}: gold({GOLD_ROW}, {exact}) = "
                         f"({format_score(a, 0, unit='%')}, {format_score(b, 0, unit='%')})")
    return [*lines, ""]


def table2(results: list[dict], order: str) -> list[str]:
    done = [r for r in results if order in r["orders"]]
    if not done:
        return []
    first = done[0]["orders"][order]
    columns = [*first["rows"], *(f"{name}+e" for name in first["ensembles"])]

    def cell(res: dict, column: str) -> float | None:
        if column.endswith("+e"):
            return res["ensembles"][column[:-2]]["uas"]
        return res["rows"][column]["uas"]

    lines = [f"### Order {order}", "", "| treebank | " + " | ".join(columns) + " |",
             "|---|" + "---:|" * len(columns)]
    # None (n/a: no scored token) as NaN: never the best, n/a in an average
    values = np.array([[cell(r["orders"][order], c) for c in columns] for r in done], dtype=float)

    def text(v: float) -> str:
        return format_score(None if np.isnan(v) else float(v), 0)

    for r, row in zip(done, values, strict=True):
        best = np.nanmax(row) if not np.isnan(row).all() else None
        lines.append(f"| {r['treebank']} | " + " | ".join(
            f"**{text(v)}**" if v == best else text(v) for v in row) + " |")
    if len(done) > 1:
        lines.append("| average | " + " | ".join(text(v) for v in values.mean(0)) + " |")
    return [*lines, ""]


def write_report(results: list[dict], punct: str, path: Path) -> None:
    lines = ["# Tchernowitz, Yedidsion and Reichart (2016) on our data", "",
             f"Test sets; punctuation rule: {punct}; UAS, SARC and U-UAS in percent; TPS: "
             "tokens/sec on one core of this machine (inference only, lower bounds when the "
             "machine was busy). Rows and models: benchmarks/greedy_tables.py.", ""]
    main = next((r for r in results if r["treebank"] == "en_ewt"), results[0])
    lines += table1(main["treebank"], main["orders"])
    lines += ["## Table 2: UAS per treebank (best of each row in bold)", ""]
    for order in ("1", "2"):
        lines += table2(results, order)
    lines += ["## Models", ""]
    for r in results:
        for order, res in r["orders"].items():
            lines += [f"- {r['treebank']}, order {order}: " + "; ".join(
                f"{name}: `{path}`" for name, path in res["models"].items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines) + "\n")
    write_text(path.with_suffix(".json"), json.dumps(results, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data", help="data root")
    ap.add_argument("--out", default="results/greedy-tables.md")
    ap.add_argument("--models", default="models/greedy", help="where missing models are trained")
    ap.add_argument("--reuse", action="append", default=[],
                    help="another folder of models to take matching ones from (repeatable)")
    ap.add_argument("--treebanks", default=None, help="comma-separated subset of the setups")
    ap.add_argument("--orders", default="1,2", help="comma-separated orders: 1, 2 or 1,2")
    ap.add_argument("--punct", default="include", help="punctuation rule for scoring")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override of every config, e.g. training.epochs=1 (repeatable)")
    args = ap.parse_args()
    wanted = set(args.treebanks.split(",")) if args.treebanks else None
    orders = [int(o) for o in args.orders.split(",")]
    if not set(orders) <= {1, 2}:
        ap.error("--orders takes 1, 2 or 1,2")

    def log(msg: str) -> None:
        print(msg, flush=True)

    results = []
    for tb in TREEBANKS:
        if wanted is not None and tb.name not in wanted:
            continue
        missing = missing_files(tb, args.data)
        if missing:
            log(f"skip {tb.name}: missing {', '.join(missing)}")
            continue
        test = read_treebank(Path(args.data) / tb.test, encoding=tb.encoding)
        result = {"treebank": tb.name, "sentences": len(test), "orders": {}}
        results.append(result)
        for order in orders:
            res = run_order(tb, order, test, args, log)
            result["orders"][str(order)] = res
            write_report(results, args.punct, Path(args.out))
            log(f"{tb.name} order {order}: " + ", ".join(
                f"{k} {format_score(v['uas'], 0)}" for k, v in res["rows"].items())
                + "; ensembles " + ", ".join(
                f"{k} {format_score(v['uas'], 0)}" for k, v in res["ensembles"].items()))


if __name__ == "__main__":
    main()
