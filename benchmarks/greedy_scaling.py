"""Greedy second-order decoding time (bgi-pp, dparse/graph/greedy_search.pyx) against sentence
length.

Appendix A of Tchernowitz, Yedidsion and Reichart (2016) bounds Algorithm 2 by
O(n_in^(k+1) k + n (n n_in (n_in + min(n_in^2, n_in^(k-1))) + n_in^k k^2)) for n words, largest
in-degree n_in and part order k = 2. With a first-order pruner n_in is a constant (en_ewt keeps
about 9 heads per word), so time ~ n^2; on the complete graph (n_in = n) their bound is n^4.
dparse's search evaluates each possible arc in O(1) per iteration (module doc of
dparse/graph/greedy_search.pyx): O(n |E|) = O(n^2 n_in) evaluation, plus the part updates, about
|parts| = O(|E| n_in + sum_h deg(h)^2), times O(|B|) for sibling parts; so ~ n^2 pruned (the
root's O(n^2) sibling parts included) and between n^3 and n^4 on the complete graph.

Synthetic sentences of n words, all weights normal: "pruned" keeps for each word its root arc
with probability ROOT_SHARE (about what the en_ewt pruner does) and HEADS other random heads;
sibling and grandparent weights are 0 unless all their arcs are kept (as SecondOrderModel gives
them); "complete" keeps every arc. Times the decoder call (bgi-pp, beam 1 and 3) on each and fits
log t = a + b log n. With --model and --treebank (a second-order model, e.g. models/en_ewt-o2-dd,
and a CoNLL file), also the real sentences: parts from the model, decoding time per sentence
(CPU time of the decoding thread; scoring excluded) binned by length with the fitted exponent,
and tokens/sec and UAS of bgi-pp (beam 1, 3, and 3 with 5 improvement rounds) and dd2.

    python benchmarks/greedy_scaling.py --out results/greedy-scaling.md \
        --model models/en_ewt-o2-dd --treebank ../shared/data/en_ewt/test.conllu
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import length_bins, seconds_per_call

from dparse.conll import read_treebank
from dparse.decoders import configured_decoder
from dparse.graph.load import load_model
from dparse.outputs import write_text
from dparse.reports.plots import fit_exponent

PRUNED_LENGTHS = (10, 20, 40, 80, 160)
COMPLETE_LENGTHS = (10, 20, 40, 80)
HEADS = 8
ROOT_SHARE = 0.9
BEAMS = (1, 3)
DECODERS = [("bgi-pp", {"beam": 1}), ("bgi-pp", {"beam": 3}),
            ("bgi-pp", {"beam": 3, "improve": 5}), ("dd2", None)]


def sentence(rng: np.random.Generator, n: int, pruned: bool) -> dict[str, np.ndarray]:
    """Arc [n+1, n+1] (-inf where pruned), sib and grand [n+1, n+1, n+1] parts of n words."""
    size = n + 1
    keep = np.ones((size, size), dtype=bool)
    if pruned:
        keep[:] = False
        for m in range(1, size):
            others = np.delete(np.arange(1, size), m - 1)
            keep[rng.choice(others, size=min(HEADS, n - 1), replace=False), m] = True
            keep[0, m] = rng.random() < ROOT_SHARE or n == 1
    np.fill_diagonal(keep, False)
    keep[:, 0] = False
    arc = np.where(keep, rng.normal(size=(size, size)), -np.inf)
    sib = rng.normal(size=(size,) * 3) * keep[:, :, None] * keep[:, None, :]
    sib[np.arange(size), np.arange(size), :] = rng.normal(size=(size, size)) * keep
    grand = rng.normal(size=(size,) * 3) * keep[:, :, None] * keep[None, :, :]
    return {"arc": arc, "sib": sib, "grand": grand}


def synthetic(rng: np.random.Generator, budget: float) -> list[dict]:
    """Seconds per decoder call for each graph kind, length and beam."""
    rows = []
    for kind, lengths in (("pruned", PRUNED_LENGTHS), ("complete", COMPLETE_LENGTHS)):
        for n in lengths:
            parts = sentence(rng, n, kind == "pruned")
            row = {"kind": kind, "n": n,
                   "arcs": int(np.isfinite(parts["arc"]).sum())}
            for beam in BEAMS:
                decoder = configured_decoder("bgi-pp", {"beam": beam})
                row[beam] = seconds_per_call(
                    lambda d=decoder, p=parts: d.decode(p["arc"], sib=p["sib"], grand=p["grand"]),
                    budget)
            rows.append(row)
            print(row, flush=True)
    return rows


def real(model_dir: str, treebank: str) -> tuple[list[dict], list[dict]]:
    """Per decoder: tokens/sec (decoding only) and UAS; per length bin: mean seconds per
    sentence of each decoder. One pass per decoder, each sentence scored right before it is
    decoded, as ``dparse parse`` does."""
    model = load_model(Path(model_dir))
    sentences = read_treebank(treebank)
    encoded = [model.vocab.encode(sent) for sent in sentences]
    lengths = np.array([len(sent) for sent in sentences])
    seconds, totals = [], []
    for name, options in DECODERS:
        decoder = configured_decoder(name, options)
        spent, correct = [], 0
        for enc in encoded:
            arc, _, parts = model.score_parts(enc, None, False)
            accepted = {key: value for key, value in parts.items() if key in decoder.parts}
            t0 = time.thread_time()
            heads = decoder.decode(arc, **accepted)
            spent.append(time.thread_time() - t0)
            correct += int((heads[1:] == np.asarray(enc.heads)[1:]).sum())
        seconds.append(np.array(spent))
        totals.append({"decoder": f"{name} {options or ''}".strip(),
                       "tps": lengths.sum() / sum(spent), "uas": 100.0 * correct / lengths.sum()})
        print(totals[-1], flush=True)
    bins = length_bins(lengths, {t["decoder"]: sec for t, sec in zip(totals, seconds,
                                                                        strict=True)})
    return totals, bins


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/greedy-scaling.md")
    ap.add_argument("--budget", type=float, default=0.2, help="seconds of timing per point")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="second-order model directory")
    ap.add_argument("--treebank", default=None, help="CoNLL file to decode with it")
    ap.add_argument("--plot", default=None, metavar="STEM",
                    help="also draw STEM-synthetic and (with --model) STEM-real, PNG and SVG: "
                    "decoding time and tokens/sec against n, log-log with fitted exponents")
    args = ap.parse_args()
    rows = synthetic(np.random.default_rng(args.seed), args.budget)
    lines = ["# Greedy second-order decoding time vs sentence length (bgi-pp)", "",
             f"Synthetic sentences, normal weights: pruned = root arc kept with probability "
             f"{ROOT_SHARE} plus {HEADS} random heads per word, complete = every arc. "
             "Microseconds per sentence, the decoder call only.", "",
             "| graph | n | arcs | beam 1 us | beam 3 us |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['n']} | {r['arcs']} | {1e6 * r[1]:.1f} | "
                     f"{1e6 * r[3]:.1f} |")
    lines += ["", "Fitted exponent b of time ~ n^b (all lengths / n >= 40), against Appendix A's "
              "bound (pruned: n^2; complete: n^4) and dparse's (pruned: n^2; complete: n^3 "
              "to n^4):", ""]
    for kind in ("pruned", "complete"):
        sub = [r for r in rows if r["kind"] == kind]
        big = [r for r in sub if r["n"] >= 40]
        fits = ", ".join(
            f"beam {beam} b = {fit_exponent([r['n'] for r in sub], [r[beam] for r in sub]):.2f}"
            f" / {fit_exponent([r['n'] for r in big], [r[beam] for r in big]):.2f}"
            for beam in BEAMS)
        lines.append(f"- {kind}: {fits}")
    if args.model and args.treebank:
        totals, bins = real(args.model, args.treebank)
        lines += ["", f"## {args.treebank} with {args.model}", "",
                  "Parts from the model (scoring excluded); decoding time is the CPU time of "
                  "the decoding thread, Python call included.", "",
                  "| decoder | tokens/sec | UAS |", "|---|---:|---:|"]
        lines += [f"| {t['decoder']} | {t['tps']:,.0f} | {t['uas']:.2f} |" for t in totals]
        lines += ["", "Mean microseconds per sentence by length:", "",
                  "| length | sentences | mean n | "
                  + " | ".join(t["decoder"] for t in totals) + " |",
                  "|---|---:|---:|" + "---:|" * len(totals)]
        for b in bins:
            lines.append(f"| {b['bin']} | {b['sentences']} | {b['n']:.1f} | "
                         + " | ".join(f"{1e6 * b[t['decoder']]:.1f}" for t in totals) + " |")
        for label, sub in (("all bins", bins), ("bins with mean n >= 10",
                                                 [b for b in bins if b["n"] >= 10])):
            lines.append(f"\nFitted exponent b of time ~ n^b, {label}: " + ", ".join(
                f"{t['decoder']} "
                f"{fit_exponent([b['n'] for b in sub], [b[t['decoder']] for b in sub]):.2f}"
                for t in totals))
    if args.plot:
        from dparse.reports.plots import plot_time_and_speed

        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot_time_and_speed({f"{kind} beam {beam}": ([r["n"] for r in rows if r["kind"] == kind],
                                                      [r[beam] for r in rows if r["kind"] == kind])
                             for kind in ("pruned", "complete") for beam in BEAMS},
                            f"{args.plot}-synthetic", title="bgi-pp, synthetic")
        if args.model and args.treebank:
            plot_time_and_speed({t["decoder"]: ([b["n"] for b in bins],
                                                [b[t["decoder"]] for b in bins])
                                 for t in totals}, f"{args.plot}-real",
                                title=Path(args.treebank).parent.name or "real sentences")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_text(Path(args.out), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
