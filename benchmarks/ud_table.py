"""results/ud-table.md: the language-neutral configs (configs/ud/) on every treebank, beside the
peers' figures of issue 18 (make ud-table).

Reads the cells of the grid configs/grids/ud.yaml under GRID_DIR (``dparse grid ... --out
GRID_DIR``; every cell of the current configs that has finished, whichever run made it): UAS
and LAS on each treebank's test file (gold POS, punctuation included), tokens/sec, training
time, and the POS column that ``auto`` chose (read from each easy-first model). Writes one
table of UAS / LAS per treebank and config with the best dparse parser's margin over the best
peer, the easy-first - o1-cle UAS gap (target: at least -3.0), and the speeds relative to the
same run's o1-cle.

    python3 benchmarks/ud_table.py models/grids/ud -o results/ud-table.md
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from common import UD_GRID, add_data_root, finished, fmt_pair, present

from dparse.batch.cells import MODEL_DIR
from dparse.batch.grid import load_grid
from dparse.errors import DparseError
from dparse.modeldir import WEIGHTS_FILE, load_arrays
from dparse.outputs import write_text

# Issue 18's peer figures (UAS, LAS; gold POS, punctuation included; same files and splits).
PEERS = {
    "TurboParser 2nd order": {"en_ewt": (88.92, 86.61), "tr_imst": (73.91, 66.90),
                              "sv_talbanken": (83.81, 77.45), "da_ddt": (80.73, 76.51),
                              "zh_gsd": (76.29, 72.21)},
    "UDPipe 1": {"en_ewt": (85.01, 82.33), "tr_imst": (68.17, 60.77),
                 "sv_talbanken": (82.21, 77.34), "da_ddt": (78.27, 74.00),
                 "zh_gsd": (74.45, 71.21)},
}
GAP_TARGET = 3.0  # easy-first within this many UAS points of o1-cle


def _column(grid_dir: Path, record: dict) -> str:
    """The POS column ``auto`` chose for an easy-first cell (its model's stored column)."""
    try:
        data = load_arrays(grid_dir / "cells" / record["key"] / MODEL_DIR / WEIGHTS_FILE)
    except DparseError:  # no model
        return "?"
    return str(data["tag"]) if "tag" in data else "?"


def build(grid_dir: Path, records: list[dict]) -> str:
    """The Markdown report of the grid's result ``records`` (cells under ``grid_dir``)."""
    spec = load_grid(UD_GRID)
    configs = [c.stem for c in spec.configs]
    ok = {(r["treebank"], r["config"]): r for r in records if r.get("status") == "ok"}
    now = datetime.datetime.now(datetime.UTC)
    lines = [
        "# Language-neutral configs on every treebank (issue 18)", "",
        f"Written {now:%Y-%m-%d %H:%M} UTC by `make ud-table` (benchmarks/ud_table.py) from the "
        f"grid `configs/grids/ud.yaml` ({grid_dir}). Machine: 2 cores shared with other jobs.",
        "UAS / LAS on each test file, gold POS, punctuation included. Treebanks with only dev "
        "and test: trained on dev, the best epoch chosen on dev (the training file, as the "
        "peers' figures were made), scored on test; esp and eus: train / test, the last epoch "
        "kept; the others: train, epochs chosen on dev. Configs unchanged from "
        "`configs/ud/` (nothing tuned on test). ptb_sample is left out (no labels, no split). "
        "Column: the POS column `auto` chose (easy-first, shift-reduce). '-': not run "
        "(or failed; see the grid's results.md). *: from an earlier run of the cell whose "
        "resolved config differs from today's (a config key added since): rerun to refresh.",
        "",
        "| treebank | column | " + " | ".join(configs) + " | best dparse | "
        + " | ".join(PEERS) + " | best dparse - best peer (UAS / LAS) |",
        "|" + "---|" * (len(configs) + len(PEERS) + 4)]
    for tb in spec.treebanks:
        assert tb is not None
        scores = {c: (ok[tb.name, c]["uas"], ok[tb.name, c]["las"])
                  for c in configs if (tb.name, c) in ok}
        stale = {c for c in scores if ok[tb.name, c].get("stale")}
        best = max(scores.items(), key=lambda kv: kv[1][0], default=None)
        peers = [PEERS[p].get(tb.name) for p in PEERS]
        known = [p for p in peers if p is not None]
        margin = "-"
        if best and known:
            top = max(known, key=lambda p: p[0])
            margin = f"{best[1][0] - top[0]:+.2f} / {best[1][1] - max(p[1] for p in known):+.2f}"
        column = _column(grid_dir, ok[tb.name, "easyfirst"]) if (tb.name, "easyfirst") in ok \
            else "-"
        lines.append(f"| {tb.name} | {column} | " + " | ".join(
            fmt_pair(scores.get(c)) + ("*" if c in stale else "") for c in configs)
                     + f" | {fmt_pair(best[1]) + f' ({best[0]})' if best else '-'} | "
                     + " | ".join(fmt_pair(p) for p in peers) + f" | {margin} |")
    lines += ["", f"## Easy-first against o1-cle (target: within {GAP_TARGET} UAS)", "",
              "| treebank | easyfirst UAS | o1-cle UAS | gap | within target |",
              "|---|---|---|---|---|"]
    for tb in spec.treebanks:
        assert tb is not None
        ef, o1 = ok.get((tb.name, "easyfirst")), ok.get((tb.name, "o1-cle"))
        if ef and o1:
            gap = ef["uas"] - o1["uas"]
            lines.append(f"| {tb.name} | {ef['uas']:.2f} | {o1['uas']:.2f} | {gap:+.2f} | "
                         f"{'yes' if gap >= -GAP_TARGET else 'NO'} |")
    lines += ["", "## Speed (tokens/sec parsing the test file, one core; x: relative to o1-cle on "
              "that treebank in the same grid run, measured minutes apart on shared cores, so "
              "only indicative) and training time (s)", "",
              "| treebank | " + " | ".join(configs) + " |", "|" + "---|" * (len(configs) + 1)]
    for tb in spec.treebanks:
        assert tb is not None
        ref = ok.get((tb.name, "o1-cle"), {}).get("tokens_per_second")
        cells = []
        for c in configs:
            r = ok.get((tb.name, c))
            if r is None:
                cells.append("-")
                continue
            rel = f" ({r['tokens_per_second'] / ref:.2f}x)" if ref else ""
            cells.append(f"{r['tokens_per_second']:,.0f}{rel}, {r['train_seconds']:.0f} s")
        lines.append(f"| {tb.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grid_dir", type=Path, nargs="?",
                        help="the --out directory of the ud grid")
    parser.add_argument("-o", "--out", type=Path, default=Path("results/ud-table.md"))
    add_data_root(parser)
    parser.add_argument("--present", type=Path, metavar="DATA",
                        help="only print the grid's treebanks present under DATA, "
                        "comma-separated (for dparse grid --only)")
    args = parser.parse_args()
    if args.present is not None:
        print(",".join(present(args.present)))
        return
    if args.grid_dir is None:
        parser.error("give the grid directory (or --present DATA)")
    write_text(args.out, build(args.grid_dir, finished(args.grid_dir, args.data_root)))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
