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
from collections.abc import Mapping, Sequence
from pathlib import Path

from common import DECODERS, HEADS, INSTANCES, decoder_table, time_decoders

from dparse.outputs import write_text
from dparse.reports.plots import fit_exponent

LENGTHS = (10, 15, 20, 30, 40, 60, 80)


def exponents(rows: Sequence[Mapping], labels: Sequence[str],
              min_n: int = 0) -> dict[str, float | None]:
    """Fitted b of time ~ n^b per decoder label over the rows with n >= min_n (None when
    fewer than two such rows)."""
    sub = [r for r in rows if r["n"] >= min_n]
    if len(sub) < 2:
        return dict.fromkeys(labels)
    return {label: fit_exponent([r["n"] for r in sub], [r[label] for r in sub])
            for label in labels}


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
