"""Tables 4-7 and 9-10 of Hayashi, Kondo and Matsumoto (2013), in shape, on one treebank.

- Table 4 shape: the jackknifed training forests of each first stage (beam 12, gold forced):
  hyperedges and vertices per forest, share of distinct trees, 1-best and oracle UAS.
- Table 5 shape: reranker training time (feature extraction is done on the fly, inside it).
- Table 6 shape: the test forests of each first stage at beam 12 (same columns, no forcing).
- Table 7 shape: test UAS (with punctuation, and without it in parentheses: UD rule UPOS
  PUNCT) and CPU seconds per sentence (first stage + reranking) of each first stage alone
  and with local and non-local (k = 3) reranking, at parse beams 8, 12, 32 and 64.
- Tables 9-10 shape: local and non-local reranking with and without the guide features: UAS
  and the number of non-zero weights (first-order region / every other feature).
- Speed of the whole pipeline (tokens per second, inference only) next to the first-order CLE
  graph parser measured in the same run, and the exact second-order parser's test UAS.

``make rerank-tables`` trains the models and runs this script; ``make rerank-table14`` runs
it on a second treebank with one system.
"""

from __future__ import annotations

import argparse
import datetime
import re
import time
from pathlib import Path

import numpy as np

from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.metrics import evaluate
from dparse.modeldir import CONFIG_FILE
from dparse.outputs import write_text
from dparse.parsers import load_parser
from dparse.rerank.jackknife import jackknife_stats
from dparse.rerank.model import Reranked, RerankModel
from dparse.timer import ParseTimer

BEAMS = (8, 12, 32, 64)


def uas_pair(gold: list[Sentence], heads: list[np.ndarray]) -> str:
    """'UAS (UAS without punctuation)' as the paper's tables print it."""
    parsed = [s.with_parse(h, s.deprels) for s, h in zip(gold, heads, strict=True)]
    return (f"{evaluate(gold, parsed, punct='include').uas:.2f} "
            f"({evaluate(gold, parsed, punct='upos').uas:.2f})")


def run(model: RerankModel, gold: list[Sentence], beam: int, rerank: bool
        ) -> tuple[list[np.ndarray], float, float, dict[str, float]]:
    """Heads of every sentence, CPU seconds per sentence of the first stage (forest built) and
    of the reranking, and the forests' statistics (1-best and oracle UAS with punctuation,
    vertices and hyperedges per forest)."""
    first = model.first
    first.beam = beam
    out, t_first, t_rerank = [], 0.0, 0.0
    stats = dict.fromkeys(("onebest", "oracle", "words", "vertices", "hyperedges", "forests"), 0)
    for sent in gold:
        t0 = time.process_time()
        enc = first.vocab.encode(sent)
        best, _, forest = first.forest_encoded(enc)
        t1 = time.process_time()
        item = Reranked.of(enc, model.classes.of(enc), forest, best)
        heads = model.rerank(item, model.weights, model.beta, model.k) if rerank else best
        t2 = time.process_time()
        t_first += t1 - t0
        t_rerank += t2 - t1
        out.append(heads)
        if not rerank:
            gold_heads = np.asarray(sent.heads)
            stats["onebest"] += int((best[1:] == gold_heads[1:]).sum())
            stats["oracle"] += item.graph.oracle(gold_heads)[0]
            stats["words"] += len(sent)
            stats["vertices"] += forest.num_vertices
            stats["hyperedges"] += forest.num_edges
            stats["forests"] += 1
    n = max(len(gold), 1)
    return out, t_first / n, t_rerank / n, stats


def train_seconds(log: Path) -> str:
    """The summed per-epoch training seconds of a ``dparse train`` log, and the epochs."""
    if not log.is_file():
        return "n/a"
    secs = [float(x) for x in re.findall(r"^epoch \d+: .* train ([0-9.]+)s", log.read_text(),
                                         flags=re.M)]
    return f"{sum(secs) / 60:.1f} min ({len(secs)} epochs)" if secs else "n/a"


def nonzero(model: RerankModel) -> str:
    first = 1 << model.arc_bits
    w = model.weights
    return f"{int(np.count_nonzero(w[:first])):,} / {int(np.count_nonzero(w[first:])):,}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, required=True,
                    help="directory of the reranker models <name>-<system>[-noguide]")
    ap.add_argument("--name", required=True, help="model name prefix, e.g. en_ewt-rerank")
    ap.add_argument("--systems", default="nonsp,sp", help="first stages: nonsp, sp")
    ap.add_argument("--work", type=Path, required=True,
                    help="directory of the jackknife work directories <prefix>-<system>")
    ap.add_argument("--work-prefix", required=True)
    ap.add_argument("--work-suffix", default="")
    ap.add_argument("--logs", type=Path, required=True, help="directory of the training logs")
    ap.add_argument("--test", type=Path, required=True, help="test treebank")
    ap.add_argument("--ref", type=Path, required=True, help="o1-cle model (speed reference)")
    ap.add_argument("--ref-speed-only", action="store_true",
                    help="the reference was trained on another treebank: no UAS")
    ap.add_argument("--o2", type=Path, default=None, help="o2-eisner model (accuracy reference)")
    ap.add_argument("--beams", default=",".join(map(str, BEAMS)))
    ap.add_argument("--guide", action="store_true", help="also the Tables 9-10 models")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    gold = read_treebank(args.test)
    systems = args.systems.split(",")
    beams = [int(b) for b in args.beams.split(",")]
    label = {"nonsp": "non-sp.", "sp": "spurious"}
    lines = [f"# Forest reranking (Hayashi, Kondo and Matsumoto 2013), table shapes: "
             f"{args.test.parent.name}/{args.test.name}", "",
             f"Measured {datetime.date.today()} on this machine (2 cores shared with other "
             "jobs: CPU seconds; speeds next to a reference measured in the same run). Gold POS. "
             "UAS in percent with punctuation, without it in parentheses (UD rule: UPOS PUNCT). "
             "Rerankers trained on 10-fold jackknifed beam-12 forests, 5 perceptron epochs "
             "(the best on dev kept), beta tuned on dev; non-local: k = 5 in training, 3 in "
             "parsing.", ""]

    def model_dir(system: str, kind: str, guide: bool = True) -> Path:
        return args.models / f"{args.name}-{kind}-{system}{'' if guide else '-noguide'}"

    lines += ["## Table 4 shape: jackknifed training forests (beam 12, gold forced)", "",
              "| system | forests | hyperedges / forest | vertices / forest | 1-best UAS | "
              "oracle UAS |", "|---|---:|---:|---:|---:|---:|"]
    for system in systems:
        work = args.work / f"{args.work_prefix}-{system}{args.work_suffix}"
        folds = len(list(work.glob("fold-*.stamp.json")))
        s = jackknife_stats(work, folds)
        lines.append(f"| {label[system]} ({folds} folds) | {s.forests:,} | "
                     f"{s.hyperedges / s.forests:.1f} | {s.vertices / s.forests:.1f} | "
                     f"{100 * s.onebest / s.words:.2f} | {100 * s.oracle / s.words:.2f} |")
    lines += ["", "Each non-spurious forest holds distinct trees only (one derivation per "
              "tree, tests/test_shiftreduce.py).", "",
              "## Table 5 shape: reranker training time (features computed on the fly)", "",
              "| reranker | training |", "|---|---:|"]
    for system in systems:
        for kind in ("local", "nonlocal"):
            log = args.logs / f"{model_dir(system, kind).name}.train.log"
            lines.append(f"| {label[system]} {kind} | {train_seconds(log)} |")
    lines += ["", "## Table 7 shape: test UAS and CPU sec. per sentence (first stage + "
              "reranking)", "", "| system | beam | reranking | sec. / sentence | UAS |",
              "|---|---:|---|---|---|"]
    table6 = []
    speed = {}
    for system in systems:
        models = {kind: RerankModel.load(model_dir(system, kind))
                  for kind in ("local", "nonlocal")}
        for beam in beams:
            heads, t1, _, st = run(models["local"], gold, beam, False)
            lines.append(f"| {label[system]} | {beam} | - | {t1:.4f} | {uas_pair(gold, heads)} |")
            if beam == 12:
                table6.append(
                    f"| {label[system]} | {st['hyperedges'] / st['forests']:.1f} | "
                    f"{st['vertices'] / st['forests']:.1f} | "
                    f"{100 * st['onebest'] / st['words']:.2f} | "
                    f"{100 * st['oracle'] / st['words']:.2f} |")
            for kind, model in models.items():
                heads, t1, t2, _ = run(model, gold, beam, True)
                what = "local" if kind == "local" else f"non-local (k = {model.k})"
                lines.append(f"| {label[system]} | {beam} | {what} | {t1:.4f} + {t2:.4f} | "
                             f"{uas_pair(gold, heads)} |")
        for kind, model in models.items():
            model.first.beam = 12
            timer = ParseTimer()
            for _ in model.parse(gold, timer):
                pass
            speed[f"{label[system]} beam 12 + {kind} reranking"] = timer.tokens_per_second
    lines += ["", "## Table 6 shape: test forests (beam 12)", "",
              "| system | hyperedges / forest | vertices / forest | 1-best UAS | oracle UAS |",
              "|---|---:|---:|---:|---:|", *table6]
    if args.guide:
        lines += ["", "## Tables 9-10 shape: guide features (non-spurious, beam 12)", "",
                  "| reranker | guide features | UAS | non-zero weights (first-order / other) |",
                  "|---|---|---|---:|"]
        for kind in ("local", "nonlocal"):
            for guide in (True, False):
                model = RerankModel.load(model_dir("nonsp", kind, guide))
                heads, _, _, _ = run(model, gold, 12, True)
                lines.append(f"| {kind} | {'with' if guide else 'without'} | "
                             f"{uas_pair(gold, heads)} | {nonzero(model)} |")
    ref = load_parser(args.ref, load_config(args.ref / CONFIG_FILE), None)
    timer = ParseTimer()
    ref_parsed = list(ref.parse(gold, timer))
    lines += ["", "## Speed (whole pipeline, inference only, same run)", "",
              "| parser | tokens/sec | UAS |", "|---|---:|---|",
              f"| o1-cle (reference) | {timer.tokens_per_second:,.0f} | "
              + ("(another treebank's model)" if args.ref_speed_only
                 else uas_pair(gold, [s.heads for s in ref_parsed])) + " |"]
    if args.o2 is not None:
        o2 = load_parser(args.o2, load_config(args.o2 / CONFIG_FILE), None)
        timer = ParseTimer()
        parsed = list(o2.parse(gold, timer))
        lines.append(f"| o2-eisner (exact second order) | {timer.tokens_per_second:,.0f} | "
                     f"{uas_pair(gold, [s.heads for s in parsed])} |")
    for what, tps in speed.items():
        lines.append(f"| {what} | {tps:,.0f} | |")
    write_text(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
