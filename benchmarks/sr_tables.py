"""Tables 2 and 3 and Figure 4 of Hayashi, Kondo and Matsumoto (2013), in shape, on en_ewt.

- Table 2 shape: UAS with punctuation (and without it, UD rule: UPOS PUNCT) and CPU seconds per
  sentence including writing the packed forests, of the spurious and non-spurious beam
  shift-reduce parsers (trained with beam 12) parsing dev and test with beams 8..128.
- Table 3 shape: the share of distinct trees among the K best derivations of spurious forests
  (K = 10 .. 10000) by beam, on the first dev sentences.
- Figure 4 shape: 1-best, K-best oracle and forest oracle UAS (punctuation included) by beam.
- Speed without forests at the trained beam, next to the first-order CLE graph parser measured in
  the same run (tokens per second, inference only, model loading excluded).

``make sr-tables`` trains the models and runs this script.
"""

from __future__ import annotations

import argparse
import datetime
import os
import tempfile
import time
from pathlib import Path

from dparse.hypergraph.hypergraph import Hypergraph

from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.hypergraph.forest_io import forest_writer
from dparse.metrics import evaluate
from dparse.modeldir import CONFIG_FILE
from dparse.outputs import write_text
from dparse.parsers import load_parser
from dparse.timer import ParseTimer
from dparse.transition.shiftreduce import ShiftReduceModel


def load(model_dir: Path, beam: int | None = None) -> ShiftReduceModel:
    cfg = load_config(model_dir / CONFIG_FILE)
    model = ShiftReduceModel.load(model_dir)
    model.configure(cfg)
    model.beam = beam or cfg.shiftreduce.beam
    return model


def uas_pair(gold: list[Sentence], parsed: list[Sentence]) -> str:
    """'UAS (UAS without punctuation)' as the paper's Table 2 prints it."""
    return (f"{evaluate(gold, parsed, punct='include').uas:.2f} "
            f"({evaluate(gold, parsed, punct='upos').uas:.2f})")


def parse_with_forests(model: ShiftReduceModel, gold: list[Sentence]
                       ) -> tuple[list[Sentence], float, list]:
    """Parsed sentences, CPU seconds per sentence (parsing + forest building + writing to a
    temporary file) and the forests."""
    forests: list = []

    def keep(i: int, forest) -> None:
        forests.append(forest)
        writer.write(forest, i)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.process_time()
        with forest_writer(os.path.join(tmp, "forests.gz")) as writer:
            parsed = list(model.parse(gold, on_forest=keep))
        seconds = time.process_time() - t0
    return parsed, seconds / max(len(gold), 1), forests


def tokens_per_second(parse_fn, gold: list[Sentence]) -> float:
    timer = ParseTimer()
    for _ in parse_fn(gold, timer):
        pass
    return timer.tokens_per_second


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nonsp", type=Path, required=True, help="non-spurious model directory")
    ap.add_argument("--sp", type=Path, required=True, help="spurious model directory")
    ap.add_argument("--b1", type=Path, default=None, help="beam-1 model directory (optional)")
    ap.add_argument("--ref", type=Path, required=True, help="o1-cle model (speed reference)")
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--beams", default="8,16,32,64,128")
    ap.add_argument("--kbest", default="10,100,1000,10000")
    ap.add_argument("--table3-beams", default="8,32,128")
    ap.add_argument("--table3-sentences", type=int, default=200)
    ap.add_argument("--oracle-k", type=int, default=100)
    ap.add_argument("--sentences", type=int, default=None,
                    help="only the first N sentences of dev and test (quick runs)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    beams = [int(b) for b in args.beams.split(",")]
    splits = {name: read_treebank(args.data / "en_ewt" / f"{name}.conllu")[:args.sentences]
              for name in ("dev", "test")}
    models = {"spurious": args.sp, "non-sp.": args.nonsp}
    lines = ["# Hayashi, Kondo and Matsumoto (2013), Tables 2-3 and Figure 4 shapes, en_ewt",
             "",
             f"Measured {datetime.date.today().isoformat()} on this machine (2 cores shared with "
             "other jobs: times are CPU seconds, and speeds are given next to a reference "
             "measured in the same run). Gold POS (XPOS). UAS in percent, punctuation included; "
             "in parentheses without punctuation (UD rule: UPOS PUNCT).", ""]

    # speed without forests, next to the reference
    test = splits["test"]
    ref_cfg = load_config(args.ref / CONFIG_FILE)
    ref = load_parser(args.ref, ref_cfg, None)
    lines += ["## Speed without forests (en_ewt test, tokens/sec, inference only)", "",
              "| parser | tokens/sec | UAS | LAS |", "|---|---|---|---|"]
    ref_tps = tokens_per_second(ref.parse, test)
    ref_parsed = list(ref.parse(test, ParseTimer()))
    r = evaluate(test, ref_parsed)
    lines.append(f"| o1-cle (reference, same run) | {ref_tps:,.0f} | {r.uas:.2f} | {r.las:.2f} |")
    trained = dict(models)
    if args.b1 is not None:
        trained["beam 1"] = args.b1
    for name, path in trained.items():
        model = load(path)
        tps = tokens_per_second(lambda s, t, m=model: m.parse(s, t), test)
        r = evaluate(test, list(model.parse(test)))
        lines.append(f"| {name} shift-reduce, beam {model.beam} | {tps:,.0f} | {r.uas:.2f} | "
                     f"{r.las:.2f} |")
    lines.append("")

    # Table 2 and Figure 4
    table2 = ["## Table 2 shape: UAS (w/o punct.) and CPU sec. per sentence with forest writing",
              "", "| split | system | measure | " + " | ".join(map(str, beams)) + " |",
              "|---|---|---|" + "---|" * len(beams)]
    fig4 = [f"## Figure 4 shape: oracle UAS on dev (punctuation included), K = {args.oracle_k}",
            "", "| system | measure | " + " | ".join(map(str, beams)) + " |",
            "|---|---|" + "---|" * len(beams)]
    for split, gold in splits.items():
        for name, path in models.items():
            uas, secs, onebest, kbest, forest_oracle = [], [], [], [], []
            for beam in beams:
                parsed, per_sentence, forests = parse_with_forests(load(path, beam), gold)
                uas.append(uas_pair(gold, parsed))
                secs.append(f"{per_sentence:.4f}")
                if split != "dev":
                    continue
                total = k_ok = f_ok = one_ok = 0
                for sent, forest in zip((s for s in gold if len(s)), forests, strict=True):
                    graph = Hypergraph(forest, trusted=True)
                    heads = sent.heads
                    f_ok += graph.oracle(heads)[0]
                    _, trees, _ = graph.kbest(args.oracle_k)
                    k_ok += int(max((trees[:, 1:] == heads[1:]).sum(axis=1)))
                    one_ok += int((trees[0, 1:] == heads[1:]).sum())
                    total += len(sent)
                onebest.append(f"{100 * one_ok / total:.2f}")
                kbest.append(f"{100 * k_ok / total:.2f}")
                forest_oracle.append(f"{100 * f_ok / total:.2f}")
            table2.append(f"| {split} | {name} | UAS | " + " | ".join(uas) + " |")
            table2.append(f"| {split} | {name} | sec. | " + " | ".join(secs) + " |")
            if split == "dev":
                fig4.append(f"| {name} | 1-best | " + " | ".join(onebest) + " |")
                fig4.append(f"| {name} | {args.oracle_k}-best oracle | " + " | ".join(kbest) + " |")
                fig4.append(f"| {name} | forest oracle | " + " | ".join(forest_oracle) + " |")
    lines += table2 + [""] + fig4 + [""]

    # Table 3: distinct trees among the K best of spurious forests
    ks = [int(k) for k in args.kbest.split(",")]
    t3_beams = [int(b) for b in args.table3_beams.split(",")]
    dev = [s for s in splits["dev"] if len(s)][:args.table3_sentences]
    lines += [f"## Table 3 shape: % distinct trees among the K best of spurious forests "
              f"(first {len(dev)} dev sentences)", "",
              "| K | " + " | ".join(f"beam {b}" for b in t3_beams) + " |",
              "|---|" + "---|" * len(t3_beams)]
    cells = {k: [] for k in ks}
    for beam in t3_beams:
        model = load(args.sp, beam)
        counts = {k: [0, 0] for k in ks}
        for sent in dev:
            _, _, forest = model.forest_encoded(model.vocab.encode(sent))
            _, trees, _ = Hypergraph(forest, trusted=True).kbest(max(ks))
            for k in ks:
                top = trees[:k]
                counts[k][0] += len({t.tobytes() for t in top})
                counts[k][1] += len(top)
        for k in ks:
            cells[k].append(f"{100 * counts[k][0] / max(counts[k][1], 1):.1f}")
    lines += [f"| {k} | " + " | ".join(cells[k]) + " |" for k in ks]
    lines += ["", "K-best lists shorter than K (forests with fewer derivations) count what "
              "they hold. Non-spurious forests hold only distinct trees (100% by construction; "
              "tests/test_shiftreduce.py checks it).", ""]
    write_text(args.out, "\n".join(lines))


if __name__ == "__main__":
    main()
