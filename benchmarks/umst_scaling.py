"""Undirected MST inference time against the number of edges, and against Chu-Liu-Edmonds.

Levi, Reichart and Rappoport (2016) claim inference linear in the number of edges m of the
(pruned) graph. For sentence lengths n and edge densities (the share of the n (n + 1) / 2
undirected edges kept; the root keeps its edges, so the graph stays connected), this times
KKT and Boruvka on the undirected graph and CLE on the directed graph with the same edges (both
directions allowed, the rest -inf) and on the complete directed graph (as D-MST runs in
the paper), fits log(time) = a + b log(m) over all points, and writes a Markdown table.
Decoding only: graph construction and scoring are excluded. With --treebank, the same on the
length-dictionary-pruned graphs of a real test file (dictionary learnt on --train), random
weights, sentences binned by their number of edges.

    python benchmarks/umst_scaling.py --out results/umst-scaling.md \
        --train ../shared/data/en_ewt/train.conllu --treebank ../shared/data/en_ewt/test.conllu
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from common import seconds_per_call
from dparse.graph.cle import chu_liu_edmonds
from dparse.undirected.umst import tree_from_edges

from dparse.conll import read_treebank
from dparse.outputs import write_text
from dparse.prune import LengthDictionary, undirected_edges
from dparse.reports.plots import fit_exponent

LENGTHS = (10, 20, 40, 80, 160, 320)
DENSITIES = (0.1, 0.25, 0.5, 1.0)


def graph(rng: np.random.Generator, n: int, density: float):
    """Undirected edges (u, v, w) with the root edges always kept, and the directed matrix."""
    u, v = np.triu_indices(n + 1, 1)
    keep = (u == 0) | (rng.random(len(u)) < density)
    u, v = u[keep].astype(np.int32), v[keep].astype(np.int32)
    w = rng.normal(size=len(u))
    arc = np.full((n + 1, n + 1), -np.inf)
    arc[u, v] = w + 0.1 * rng.normal(size=len(u))
    arc[v[u > 0], u[u > 0]] = w[u > 0] + 0.1 * rng.normal(size=int((u > 0).sum()))
    return u, v, w, arc


def real_graphs(train: str, test: str, quantile: float, rng: np.random.Generator,
                budget: float) -> list[dict]:
    """Per bin of pruned edge counts: mean edges, KKT and CLE (pruned, complete) seconds."""
    pruner = LengthDictionary.learn(read_treebank(train), quantile=quantile)
    graphs = []
    for sent in read_treebank(test):
        u, v = undirected_edges(pruner.allowed(sent))
        n1 = len(sent) + 1
        w = rng.normal(size=len(u))
        arc = np.full((n1, n1), -np.inf)
        arc[u, v] = w
        arc[v[u > 0], u[u > 0]] = w[u > 0]
        graphs.append((len(u), n1, u, v, w, arc, rng.normal(size=(n1, n1))))
    graphs.sort(key=lambda g: g[0])
    rows = []
    for chunk in np.array_split(np.arange(len(graphs)), 12):
        batch = [graphs[k] for k in chunk]
        row = {"m": float(np.mean([g[0] for g in batch])),
               "n": float(np.mean([g[1] - 1 for g in batch]))}
        calls = {
            "kkt": lambda b=batch: [tree_from_edges(g[1], g[2], g[3], g[4], "kkt") for g in b],
            "cle": lambda b=batch: [chu_liu_edmonds(g[5], False) for g in b],
            "cle_full": lambda b=batch: [chu_liu_edmonds(g[6], False) for g in b],
        }
        for key, call in calls.items():
            row[key] = seconds_per_call(call, budget) / len(batch)
        rows.append(row)
        print(row, flush=True)
    return rows


def plot(rows: list[dict], stem: str) -> None:
    """Log-log figures of the synthetic rows: time and words/sec against n on the complete
    graphs (density 1; STEM-n), time against edges m on all of them (STEM-time-m), each
    decoder's exponent fitted."""
    from dparse.reports.plots import plot_scaling, plot_time_and_speed

    Path(stem).parent.mkdir(parents=True, exist_ok=True)
    names = {"kkt": "KKT", "boruvka": "Boruvka", "cle": "CLE", "cle_full": "CLE complete"}
    full = [r for r in rows if r["density"] == 1.0]
    n = [r["n"] for r in full]
    plot_time_and_speed({name: (n, [r[k] for r in full]) for k, name in names.items()},
                        f"{stem}-n", title="Complete graphs")
    plot_scaling({name: ([r["m"] for r in rows], [r[k] for r in rows])
                  for k, name in names.items() if k != "cle_full"},
                 f"{stem}-time-m", xlabel="undirected edges m",
                 ylabel="decoding time per sentence (s)",
                 title="Decoding time vs edges (all densities)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/umst-scaling.md")
    ap.add_argument("--budget", type=float, default=0.1, help="seconds of timing per point")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", default=None, help="training file for the length dictionary")
    ap.add_argument("--treebank", default=None, help="test file whose pruned graphs to time")
    ap.add_argument("--quantile", type=float, default=0.99, help="length-dictionary quantile")
    ap.add_argument("--plot", default=None, metavar="STEM",
                    help="also draw STEM-n (time and words/sec against n) and STEM-time-m "
                    "(PNG and SVG, log-log with fitted exponents; needs matplotlib)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    for n in LENGTHS:
        for density in DENSITIES:
            u, v, w, arc = graph(rng, n, density)
            row = {"n": n, "density": density, "m": len(u)}
            full = rng.normal(size=(n + 1, n + 1))
            calls = {
                "kkt": lambda g=(n + 1, u, v, w): tree_from_edges(*g, "kkt"),
                "boruvka": lambda g=(n + 1, u, v, w): tree_from_edges(*g, "boruvka"),
                "cle": lambda a=arc: chu_liu_edmonds(a, False),
                "cle_full": lambda a=full: chu_liu_edmonds(a, False),
            }
            for key, call in calls.items():
                row[key] = seconds_per_call(call, args.budget)
            rows.append(row)
            print(row, flush=True)
    m = [r["m"] for r in rows]
    fits = {k: fit_exponent(m, [r[k] for r in rows]) for k in ("kkt", "boruvka", "cle")}
    big = [r for r in rows if r["n"] >= 80]
    fits_big = {k: fit_exponent([r["m"] for r in big], [r[k] for r in big])
                for k in ("kkt", "boruvka", "cle")}
    lines = ["# Undirected MST inference time vs edges (Levi et al. 2016)", "",
             "Random normal weights; density = share of the n(n+1)/2 undirected edges kept "
             "(root edges always kept); CLE runs on the directed graph with the same edges. "
             "Microseconds per sentence, decoding only (Python call included).", "",
             "| n | density | edges m | KKT us | Boruvka us | CLE us | CLE / KKT | "
             "CLE complete us | CLE complete / KKT |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['density']:.2f} | {r['m']} | {1e6 * r['kkt']:.1f} | "
                     f"{1e6 * r['boruvka']:.1f} | {1e6 * r['cle']:.1f} | "
                     f"{r['cle'] / r['kkt']:.2f} | {1e6 * r['cle_full']:.1f} | "
                     f"{r['cle_full'] / r['kkt']:.2f} |")
    lines += ["", "Fitted exponent b of time ~ m^b (all points / n >= 80):", ""]
    for k, name in (("kkt", "KKT"), ("boruvka", "Boruvka"), ("cle", "CLE")):
        lines.append(f"- {name}: b = {fits[k]:.2f} / {fits_big[k]:.2f}")
    if args.treebank and args.train:
        real = real_graphs(args.train, args.treebank, args.quantile, rng, args.budget)
        lines += ["", f"## Pruned graphs of {args.treebank} (quantile {args.quantile})", "",
                  "| mean n | mean edges m | KKT us | CLE pruned us | CLE complete us |",
                  "|---:|---:|---:|---:|---:|"]
        for r in real:
            lines.append(f"| {r['n']:.1f} | {r['m']:.0f} | {1e6 * r['kkt']:.1f} | "
                         f"{1e6 * r['cle']:.1f} | {1e6 * r['cle_full']:.1f} |")
        for label, sub in (("all bins", real), ("bins with m >= 50", [r for r in real
                                                                      if r["m"] >= 50])):
            rm = [r["m"] for r in sub]
            lines.append(f"\nFitted exponent b of time ~ m^b, {label}: " + ", ".join(
                f"{name} {fit_exponent(rm, [r[k] for r in sub]):.2f}"
                for k, name in (("kkt", "KKT"), ("cle", "CLE pruned"),
                                ("cle_full", "CLE complete"))))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_text(Path(args.out), "\n".join(lines) + "\n")
    if args.plot:
        plot(rows, args.plot)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
