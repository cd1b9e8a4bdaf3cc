"""dd2 certificates on every treebank: plain dual decomposition against the branch-and-bound
settings of configs/en_ewt/o2-dd.yaml, with o1-cle as the same-run speed reference.

For every treebank setup of benchmarks/common.py (files present under --data): trains, unless
present under --models, the o2-dd model (configs/en_ewt/o2-dd.yaml on the setup's files) and
the o1-cle model; parses test with o1-cle, with o2-dd "before" (plain dual decomposition: the
dd2 defaults, 500 iterations of step 1, no branch and bound) and with o2-dd "after" (the
config's options); writes a Markdown table (certified share and uncertified sentences, UAS/LAS,
tokens/sec of inference) and, for the sentences plain dual decomposition leaves uncertified,
their lengths, relative duality gaps and the branch-and-bound nodes that closed them.

    python benchmarks/dd2_certificates.py --data ../shared/data --models models \
        --out results/dd2-certificates.md [--treebanks zh_gsd,da_ddt] [--resume]
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import numpy as np
from common import TREEBANKS, config_for, find_or_train, missing_files

from dparse.batch.grid import Treebank
from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import get_decoder
from dparse.metrics import evaluate, format_score
from dparse.modeldir import CONFIG_FILE
from dparse.outputs import write_text
from dparse.parsers import load_parser
from dparse.timer import ParseTimer

# plain dual decomposition: the dd2 defaults (the o2-dd config's options before branch and bound)
BEFORE = ("decoder.options={}",)
# configs/en_ewt/o2-dd.yaml's decoder options (also for models saved before they were added)
OPTIONS = config_for("o2-dd", TREEBANKS[0], None)["decoder"]["options"]
AFTER = (f"decoder.options={json.dumps(OPTIONS)}",)


def run(model: Path, test: list[Sentence], overrides: tuple[str, ...] = ()) -> dict:
    """Parses ``test`` one sentence at a time with the model (config ``overrides``): tokens/sec,
    the parsed sentences and, for dd2, each sentence's (words, certified, relative gap, nodes)."""
    cfg = load_config(model / CONFIG_FILE, list(overrides))
    parser = load_parser(model, cfg, None)
    timer = ParseTimer()
    dd2 = get_decoder("dd2") if cfg.decoder.name == "dd2" else None
    parsed, calls = [], []
    for sent in test:
        parsed.extend(parser.parse([sent], timer))
        if dd2 is not None:
            last = dd2.last
            gap = (last.dual - last.primal) / max(abs(last.dual), 1e-12)
            calls.append((len(sent), bool(last.certified), gap, last.nodes))
    return {"parsed": parsed, "tokens_per_second": timer.tokens_per_second, "calls": calls}


def run_treebank(tb: Treebank, data_root: str, models: Path, punct: str, log) -> dict:
    test = read_treebank(Path(data_root) / tb.test, encoding=tb.encoding)
    o1, o2 = (find_or_train(load_config(raw=config_for(name, tb, None), data_root=data_root),
                            models, [], log) for name in ("o1-cle", "o2-dd"))
    runs = {"o1-cle": run(o1, test), "before": run(o2, test, BEFORE),
            "after": run(o2, test, AFTER)}
    result: dict = {"treebank": tb.name, "sentences": len(test),
                    "tokens": sum(len(s) for s in test), "options": OPTIONS}
    for key, r in runs.items():
        rep = evaluate(test, r["parsed"], punct=punct)
        row = {"uas": rep.uas, "las": rep.las, "tokens_per_second": r["tokens_per_second"]}
        if r["calls"]:
            certified = sum(c[1] for c in r["calls"])
            row.update(certified=certified, certified_percent=100.0 * certified / len(test),
                       nodes=sum(c[3] for c in r["calls"]))
        result[key] = row
    before, after = runs["before"]["calls"], runs["after"]["calls"]
    open_before = [i for i, c in enumerate(before) if not c[1]]
    result["open_before"] = {
        "count": len(open_before),
        "median_words": float(np.median([before[i][0] for i in open_before]))
        if open_before else None,
        "median_words_all": float(np.median([c[0] for c in before])),
        "relative_gap_quantiles": [float(q) for q in np.quantile(
            [before[i][2] for i in open_before], (0.1, 0.5, 0.9))] if open_before else None,
        "closed_after": sum(after[i][1] for i in open_before),
        "mean_nodes_after": float(np.mean([after[i][3] for i in open_before]))
        if open_before else None,
    }
    result["open_after"] = [{"words": c[0], "relative_gap": c[2], "nodes": c[3]}
                            for c in after if not c[1]]
    return result


def write_report(results: list[dict], punct: str, path: Path) -> None:
    lines = [
        "# dd2 certificates on every treebank: plain dual decomposition vs branch and bound", "",
        f"{datetime.date.today().isoformat()}; `make dd2-certificates` "
        "(benchmarks/dd2_certificates.py). Machine: 2 cores shared with other jobs, so "
        "tokens/sec (inference only, one sentence at a time) are depressed; compare them with "
        "the o1-cle column, measured in the same run on the same file. Test files; UAS/LAS in "
        f"percent, punctuation rule: {punct}. Models: o2-dd = configs/en_ewt/o2-dd.yaml and "
        "o1-cle = configs/en_ewt/o1-cle.yaml on each treebank's files (benchmarks/common.py: "
        "train on train, or on dev where there is no train file).", "",
        "- before: plain dual decomposition (dd2 defaults: 500 subgradient iterations, step 1, "
        "no branch and bound), the decoder as it was;",
        f"- after: the o2-dd config's options {json.dumps(OPTIONS)}: dual decomposition, then "
        "branch and bound over arcs for the sentences whose duality gap stays open.", "",
        "| treebank | sentences | certified before | certified after | uncertified after | "
        "UAS/LAS before | UAS/LAS after | o1-cle UAS/LAS | tok/s before | tok/s after | "
        "o1-cle tok/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        b, a, o = r["before"], r["after"], r["o1-cle"]
        lines.append(
            f"| {r['treebank']} | {r['sentences']} | {b['certified_percent']:.2f}% | "
            f"{a['certified_percent']:.2f}% | {r['sentences'] - a['certified']} | "
            f"{format_score(b['uas'], 0)}/{format_score(b['las'], 0)} | "
            f"{format_score(a['uas'], 0)}/{format_score(a['las'], 0)} | "
            f"{format_score(o['uas'], 0)}/{format_score(o['las'], 0)} | "
            f"{b['tokens_per_second']:,.0f} | {a['tokens_per_second']:,.0f} | "
            f"{o['tokens_per_second']:,.0f} |")
    lines += ["", "## The sentences plain dual decomposition leaves uncertified", "",
              "Their median length against all sentences', their relative duality gaps "
              "((dual - primal) / |dual|) after 500 iterations, and how many branch and bound "
              "certified (mean nodes solved for them).", "",
              "| treebank | uncertified before | median words (all) | relative gap 10% / 50% / "
              "90% | certified after | mean nodes |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        ob = r["open_before"]
        if not ob["count"]:
            lines.append(f"| {r['treebank']} | 0 | - ({ob['median_words_all']:.0f}) | - | - | - |")
            continue
        q = " / ".join(f"{g:.1e}" for g in ob["relative_gap_quantiles"])
        lines.append(f"| {r['treebank']} | {ob['count']} | {ob['median_words']:.0f} "
                     f"({ob['median_words_all']:.0f}) | {q} | {ob['closed_after']} | "
                     f"{ob['mean_nodes_after']:.1f} |")
    left = [(r["treebank"], c) for r in results for c in r["open_after"]]
    if left:
        lines += ["", f"Still uncertified after branch and bound (node budget spent): "
                  f"{len(left)} sentences", ""]
        lines += [f"- {name}: {c['words']} words, relative gap {c['relative_gap']:.1e}"
                  for name, c in left[:30]]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines) + "\n")
    write_text(path.with_suffix(".json"), json.dumps(results, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data", help="data root")
    ap.add_argument("--out", default="results/dd2-certificates.md")
    ap.add_argument("--models", default="models", help="model directories (reused if present)")
    ap.add_argument("--treebanks", default=None, help="comma-separated subset of the setups")
    ap.add_argument("--punct", default="include", help="punctuation rule for scoring")
    ap.add_argument("--resume", action="store_true",
                    help="keep the treebanks already in the --out table's .json (same options)")
    args = ap.parse_args()
    wanted = set(args.treebanks.split(",")) if args.treebanks else None
    saved = Path(args.out).with_suffix(".json")
    done = {r["treebank"]: r for r in json.loads(saved.read_text(encoding="utf-8"))
            if r.get("options") == OPTIONS} if args.resume and saved.is_file() else {}
    results = []
    for tb in TREEBANKS:
        if tb.name in done:
            results.append(done[tb.name])
            continue
        if wanted is not None and tb.name not in wanted:
            continue
        missing = missing_files(tb, args.data)
        if missing:
            print(f"skip {tb.name}: missing {', '.join(missing)}", flush=True)
            continue
        results.append(run_treebank(tb, args.data, Path(args.models), args.punct,
                                    lambda msg: print(msg, flush=True)))
        write_report(results, args.punct, Path(args.out))
        r = results[-1]
        print(f"{tb.name}: certified {r['before']['certified_percent']:.2f}% -> "
              f"{r['after']['certified_percent']:.2f}%, UAS {format_score(r['before']['uas'], 0)}"
              f" -> {format_score(r['after']['uas'], 0)}", flush=True)
    if results:
        write_report(results, args.punct, Path(args.out))


if __name__ == "__main__":
    main()
