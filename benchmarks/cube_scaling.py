"""Third-order decoding time against sentence length: cube pruning vs the exact decoders.

Zhang and McDonald (2012) keep Eisner's O(n^3) chart and bound each cell's work by the beam k
(Section 4), whereas the exact third-order parser of Koo and Collins (2010, Model 2) is O(n^4).
This times, on the same random part scores, ``cube`` (k = 5, with and without recombination) against
``eisner3-outermost`` (Model 2: the part semantics ``cube`` optimizes exactly), ``eisner3`` (every
grand and gsib part) and the second-order ``eisner2-sibgp``, each decoder given the part arrays it
accepts (docs/design.md, 'Score arrays and parts'), with first-order ``eisner`` on the arcs as the
same-run reference.

Synthetic sentences of n words: each word keeps ``HEADS`` (3 to 5) random candidate heads (the
root among the candidates like any node), every other arc is pruned (-inf), as a first-order
pruner leaves them; arc, sib, grand (dense [n+1]^3), trisib and gsib ([n+1]^4, 0.7 GB at n = 80)
scores are standard normal. ``INSTANCES`` sentences per length; decoding only is timed (median
of batches, Python call included), and log t = a + b log n is fitted per decoder.

Each decoder reads the arrays through the scorer its chart asks (``cube``: an ``ArrayScorer``
given to ``CubePruning.parse``, the entry a model's scorer takes; ``eisner3``: an
``ArrayPartScorer`` given to ``eisner3_scorer``), built once per sentence outside the timing,
as a model's scorer is built by scoring. ``Decoder.decode`` with dense arrays would also time
their validation and flooring, O(n^4) work per call that parsing with a model never does.
``benchmarks/bench.py`` reports the same rows (at fewer lengths) in ``make bench``.

    python benchmarks/cube_scaling.py --out results/cube-scaling.md \
        --plot results/plots/cube-scaling
"""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from dparse.graph.eisner3 import eisner3_scorer
from dparse.graph.generalized_eisner import ArrayScorer
from dparse.graph.partscorer import ArrayPartScorer
from timing import seconds_per_call

from dparse.decoders import get_decoder
from dparse.graph.decoders import CubePruning
from dparse.outputs import write_text
from dparse.reports.plots import fit_exponent
from dparse.trees import check_tree

LENGTHS = (10, 15, 20, 30, 40, 60, 80)
BENCH_LENGTHS = (10, 20, 40, 80)
HEADS = (3, 5)  # candidate heads per word: uniform in this range (inclusive)
INSTANCES = 2
Parts = dict[str, np.ndarray]
Decode = Callable[[], np.ndarray]


def cube(k: int, recombination: bool) -> Callable[[Parts], Decode]:
    """``cube`` with beam k over an ArrayScorer of every part array."""
    def prepare(p: Parts) -> Decode:
        scorer = ArrayScorer(p["arc"], p["sib"], p["grand"], p["trisib"], p["gsib"])
        decoder = CubePruning(k, recombination)
        return lambda: decoder.parse(p["arc"], scorer)[0]
    return prepare


def third_order(outermost: bool) -> Callable[[Parts], Decode]:
    """``eisner3`` (``eisner3-outermost`` if outermost) over an ArrayPartScorer."""
    def prepare(p: Parts) -> Decode:
        scorer = ArrayPartScorer(p["arc"], p["sib"], p["grand"], p["trisib"], p["gsib"])
        return lambda: eisner3_scorer(scorer, True, outermost)
    return prepare


def second_order(p: Parts) -> Decode:
    """``eisner2-sibgp`` on the arc, sib and grand arrays (O(n^3) checks per call)."""
    decoder = get_decoder("eisner2-sibgp")
    return lambda: decoder.decode(p["arc"], sib=p["sib"], grand=p["grand"])


def first_order(p: Parts) -> Decode:
    """``eisner`` on the arc scores: the same-run reference."""
    decoder = get_decoder("eisner")
    return lambda: decoder.decode(p["arc"])


# (row label, decoder over one sentence's parts, built outside the timing)
DECODERS: list[tuple[str, Callable[[Parts], Decode]]] = [
    ("cube k=5", cube(5, True)),
    ("cube k=5, no recombination", cube(5, False)),
    ("eisner3-outermost", third_order(True)),
    ("eisner3", third_order(False)),
    ("eisner2-sibgp", second_order),
    ("eisner (1st order)", first_order),
]


def random_parts(rng: np.random.Generator, n: int,
                 heads: tuple[int, int] = HEADS) -> dict[str, np.ndarray]:
    """Random scores of one sentence of n words: "arc" [n+1, n+1] with each word's arcs from
    all but ``heads`` (lo..hi, inclusive) random candidate heads pruned (-inf), and dense
    standard normal "sib", "grand" [n+1]^3 and "trisib", "gsib" [n+1]^4."""
    size = n + 1
    keep = np.zeros((size, size), dtype=bool)
    for m in range(1, size):
        others = np.delete(np.arange(size), m)
        count = min(int(rng.integers(heads[0], heads[1] + 1)), len(others))
        keep[rng.choice(others, size=count, replace=False), m] = True
    arc = np.where(keep, rng.standard_normal((size, size)), -np.inf)
    return {"arc": arc, "sib": rng.standard_normal((size,) * 3),
            "grand": rng.standard_normal((size,) * 3),
            "trisib": rng.standard_normal((size,) * 4),
            "gsib": rng.standard_normal((size,) * 4)}


def time_decoders(lengths: Sequence[int], budget: float, seed: int,
                  decoders: Sequence[tuple[str, Callable[[Parts], Decode]]] = DECODERS,
                  instances: int = INSTANCES) -> list[dict]:
    """One row per length: {"n", "arcs" (mean kept arcs), label: mean seconds per sentence of
    each decoder over ``instances`` random sentences}. Every output is checked to be a
    projective single-rooted tree."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in lengths:
        totals = dict.fromkeys([label for label, _ in decoders], 0.0)
        arcs = 0
        for _ in range(instances):
            parts = random_parts(rng, n)
            arcs += int(np.isfinite(parts["arc"]).sum())
            for label, prepare in decoders:
                decode = prepare(parts)
                check_tree(decode(), single_root=True, projective=True)
                totals[label] += seconds_per_call(decode, budget)
                del decode
            del parts
        rows.append({"n": n, "arcs": arcs / instances,
                     **{label: total / instances for label, total in totals.items()}})
        print(rows[-1], flush=True)
    return rows


def exponents(rows: Sequence[Mapping], labels: Sequence[str],
              min_n: int = 0) -> dict[str, float | None]:
    """Fitted b of time ~ n^b per decoder label over the rows with n >= min_n (None when
    fewer than two such rows)."""
    sub = [r for r in rows if r["n"] >= min_n]
    if len(sub) < 2:
        return dict.fromkeys(labels)
    return {label: fit_exponent([r["n"] for r in sub], [r[label] for r in sub])
            for label in labels}


def decoder_table(rows: Sequence[Mapping], labels: Sequence[str]) -> list[str]:
    """Markdown rows: per length, milliseconds per sentence and tokens/sec of each decoder, and
    how many times slower than the first label each other one is."""
    lines = ["| n | kept arcs | " + " | ".join(f"{label} ms (tok/s)" for label in labels)
             + " | " + " | ".join(f"{label} / {labels[0]}" for label in labels[1:]) + " |",
             "|---:|---:|" + "---:|" * (2 * len(labels) - 1)]
    for r in rows:
        cells = [f"{1e3 * r[label]:.2f} ({r['n'] / r[label]:,.0f})" for label in labels]
        cells += [f"{r[label] / r[labels[0]]:.2f}" for label in labels[1:]]
        lines.append(f"| {r['n']} | {r['arcs']:.0f} | " + " | ".join(cells) + " |")
    return lines


def plot(rows: Sequence[Mapping], labels: Sequence[str], stem: str, title: str) -> None:
    """STEM.png/svg: decoding time and tokens/sec against n per decoder, log-log, fitted."""
    from dparse.reports.plots import plot_time_and_speed

    Path(stem).parent.mkdir(parents=True, exist_ok=True)
    n = [r["n"] for r in rows]
    plot_time_and_speed({label: (n, [r[label] for r in rows]) for label in labels}, stem,
                        title=title)


def report(rows: Sequence[Mapping], labels: Sequence[str], budget: float, seed: int) -> str:
    """The Markdown report: setup, the table, fitted exponents (all lengths and n >= 30)."""
    lines = ["# Third-order decoding time vs sentence length (cube pruning vs exact)", "",
             f"{datetime.date.today()}, 2 shared cores (other jobs running: absolute times "
             "are upper bounds, ratios measured in the same run). Random sentences: each word "
             f"keeps {HEADS[0]}-{HEADS[1]} random candidate heads (the rest pruned), standard "
             f"normal arc, sib, grand, trisib and gsib scores; {INSTANCES} sentences per "
             f"length, seed {seed}, about {budget:g} s of timing per point. Milliseconds per "
             "sentence (decoding only: each chart's array scorer is built outside the timing, "
             "as a model's scorer is) and tokens/sec; eisner2-sibgp gets arc, sib and grand, "
             "eisner (the same-run reference) arc, the others every array.", ""]
    lines += decoder_table(rows, labels)
    fits, fits_big = exponents(rows, labels), exponents(rows, labels, 30)
    lines += ["", "Fitted exponent b of time ~ n^b (all lengths / n >= 30):", ""]
    for label in labels:
        big = fits_big[label]
        lines.append(f"- {label}: b = {fits[label]:.2f} / "
                     + ("-" if big is None else f"{big:.2f}"))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/cube-scaling.md")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of timing per point")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                    help="comma-separated sentence lengths")
    ap.add_argument("--plot", default=None, metavar="STEM",
                    help="also draw STEM.png/.svg: decoding time and tokens/sec against n per "
                    "decoder, log-log with fitted exponents (needs matplotlib)")
    args = ap.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    labels = [label for label, _ in DECODERS]
    rows = time_decoders(lengths, args.budget, args.seed)
    text = report(rows, labels, args.budget, args.seed)
    if args.plot:
        plot(rows, labels, args.plot, "Third-order decoders, random parts")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_text(Path(args.out), text)
    print(text)


if __name__ == "__main__":
    main()
