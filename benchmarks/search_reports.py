"""Search-error and dd2 certificate reports (tables and plots) by sentence length.

Synthetic part (always): dd2 on the planted second-order scores of dd2_certification.py, for
sentence lengths drawn uniformly from --lengths, once per --max-iter setting: certified share and
mean iterations per length bin. Model part (--model, several allowed): the search errors of each
--decoders on --gold under each trained graph model, and dd2's certificates under the
second-order ones. Writes a Markdown report (--out) and PNG/SVG plots beside it (--plots).

    python benchmarks/search_reports.py --out results/search-reports.md --plots results/plots \
        [--model models/en_ewt-o2-dd --gold ../shared/data/en_ewt/test.conllu]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import planted_scores, planted_tree

from dparse.outputs import write_text
from dparse.reports.certificates import (
    certificate_table,
    certify,
    model_certificates,
    plot_certificates,
    plot_search_errors,
    search_error_table,
)
from dparse.search_errors import search_errors


def synthetic(lengths: tuple[int, int], count: int, seed: int, max_iter: int):
    """dd2 certificates on ``count`` planted instances with n uniform in ``lengths``."""
    rng = np.random.default_rng(seed)

    def instances():
        for _ in range(count):
            n = int(rng.integers(lengths[0], lengths[1] + 1))
            arc, sib, grand = planted_scores(rng, planted_tree(rng, n), 2.0, 1.0, 0.5, 10)
            yield arc, {"sib": sib, "grand": grand}

    return certify(instances(), f"max_iter {max_iter}", {"max_iter": max_iter})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/search-reports.md")
    ap.add_argument("--plots", default="results/plots")
    ap.add_argument("--lengths", type=int, nargs=2, default=(5, 60))
    ap.add_argument("--count", type=int, default=200, help="synthetic instances per setting")
    ap.add_argument("--max-iter", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", action="append", default=[], help="trained graph model dir")
    ap.add_argument("--gold", default=None, help="gold file for --model")
    ap.add_argument("--decoders", default="dd2,bgi-pp", help="decoders whose search errors")
    args = ap.parse_args()
    plots = Path(args.plots)
    plots.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    runs = [synthetic(tuple(args.lengths), args.count, args.seed, k) for k in args.max_iter]
    lines = ["# Search errors and dd2 certificates by sentence length", "",
             f"{time.strftime('%Y-%m-%d')}; machine: 2 shared cores. Plots in {plots}.", "",
             f"## dd2 on planted second-order scores ({args.count} sentences of "
             f"{args.lengths[0]}-{args.lengths[1]} words per setting, seed {args.seed}; "
             "benchmarks/dd2_certification.py's generator, 10 heads kept per word)", "",
             certificate_table(runs), ""]
    plot_certificates(runs, plots / "dd2-certificates-synthetic")
    for model in args.model:
        if args.gold is None:
            ap.error("--model needs --gold")
        reports = {name: search_errors(model, args.gold, name)
                   for name in args.decoders.split(",")}
        lines += [f"## Search errors under {model} on {args.gold}", "",
                  search_error_table(reports), ""]
        plot_search_errors(reports, plots / f"search-errors-{Path(model).name}")
        certs = model_certificates(model, args.gold)
        lines += [f"## dd2 certificates under {model}", "", certificate_table([certs]), ""]
        plot_certificates([certs], plots / f"dd2-certificates-{Path(model).name}")
    lines.append(f"Total time {time.perf_counter() - start:.1f} s.")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_text(Path(args.out), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
