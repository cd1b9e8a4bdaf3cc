"""The second-order pruner, old against new (issue 18, part 4) -> results/pruner-table.md.

- Pruner table, every treebank setup of benchmarks/common.py: candidate heads per word and
  gold recall (directed gold arcs kept) on held-out data, for the old pruner (PrunerConfig's
  defaults: perceptron-trained labeled model, absolute threshold 1e-4, top 10), the new one
  (the ``pruner`` section of configs/en_ewt/o2-eisner.yaml) and the new one with the settings
  suggested for small training sets ("small"). Held-out data: the dev file where the setup
  trains on a train file; elsewhere (treebanks with only dev and test, which train on dev; the
  CoNLL 2007 subset, which has no dev file) a ``--folds``-way jackknife of the training file
  (each fold pruned by a pruner trained on the other folds). Test files are never read.
- Parser table, ``--parsers`` treebanks: o2-eisner and o2-dd trained with the old pruner and
  with the new one (small on a setup trained on dev), UAS and LAS (punctuation included) on
  the dev file (en_ewt) or the test file (setups that train on dev), and tokens/sec beside
  the o1-cle model's, measured in the same run.

The pruner rows are kept in ``<models>/pruner-stats.json`` (by treebank, pruner section and
folds), so that a second run only measures what changed. Models are found or trained
(benchmarks/common.py find_or_train) in ``--models`` as ``<treebank>-<config>`` (new
pruner), ``<treebank>-<config>-oldpruner`` and ``<treebank>-<config>-smallpruner``;
``--model NAME=DIR`` names a directory outright (e.g. an o2 model trained before the new
pruner).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import time
from pathlib import Path

import yaml
from common import CONFIGS, TREEBANKS, config_for, find_or_train, log, measure

from dparse.batch.grid import Treebank
from dparse.config import load_config
from dparse.data.jackknife import fold_bounds
from dparse.epochs import read_split
from dparse.graph.pruner import fit_pruner, model_pruner
from dparse.graph.sections import PrunerConfig
from dparse.modeldir import WEIGHTS_FILE
from dparse.outputs import write_text
from dparse.prune import EncodedPruner, PruneStats, prune_stats
from dparse.vocab import Vocabulary

PARSER_CONFIGS = ("o2-eisner", "o2-dd")
# "small": the new pruner with the settings suggested for small training sets (the
# language-neutral configs), chosen on jackknifed dev files.
SMALL_DATA_THRESHOLD = 0.003
SMALL_DATA_FOLDS = 5  # pruner.train_folds: the training graphs pruned by a jackknife


def pruner_section(variant: str) -> dict:
    """The ``pruner`` config section of a variant: old (today's defaults), new (o2-eisner's)
    or small (new with SMALL_DATA_THRESHOLD)."""
    if variant == "old":
        return dataclasses.asdict(PrunerConfig())
    raw = yaml.safe_load((CONFIGS / "o2-eisner.yaml").read_text(encoding="utf-8"))
    if variant == "small":
        raw["pruner"].update(threshold=SMALL_DATA_THRESHOLD, train_folds=SMALL_DATA_FOLDS)
    return raw["pruner"]


def has_heldout_dev(tb: Treebank) -> bool:
    """Whether the setup trains on a train file and has a dev file apart from it."""
    return tb.dev is not None and tb.dev != tb.train


def parser_variant(tb: Treebank) -> str:
    """The new pruner of the parser table: new where the setup trains on a train file, small
    where it trains on dev (or has no dev file)."""
    return "new" if has_heldout_dev(tb) else "small"


def variant_config(name: str, tb: Treebank, variant: str, data: str):
    """The config ``name`` on ``tb`` with the variant's pruner (name suffixed for the old)."""
    raw = config_for(name, tb, None)
    raw["pruner"] = pruner_section(variant)
    if variant != "new":
        raw["name"] += f"-{variant}pruner"
    return load_config(raw=raw, data_root=data)


def add_stats(total: PruneStats, part: PruneStats) -> None:
    for f in dataclasses.fields(PruneStats):
        setattr(total, f.name, getattr(total, f.name) + getattr(part, f.name))


VARIANTS = ("old", "new", "small")


def fit_section(variant: str) -> dict:
    """What training a variant's pruner depends on (not the threshold, nor train_folds, which
    changes only the training graphs of a parser)."""
    return {k: v for k, v in pruner_section(variant).items()
            if k not in ("threshold", "train_folds")}


def cached_pruner_stats(tb: Treebank, variant: str, args: argparse.Namespace
                        ) -> tuple[PruneStats, str, float]:
    """``pruner_stats`` and its seconds, from the cache file in ``args.models`` if there;
    variants whose pruners train alike are measured together, on the same pruners."""
    path = args.models / "pruner-stats.json"

    def key(v: str) -> str:
        section = {k: x for k, x in pruner_section(v).items() if k != "train_folds"}
        return json.dumps([tb.name, section, args.folds], sort_keys=True)

    cache = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if key(variant) not in cache:
        alike = [v for v in VARIANTS if fit_section(v) == fit_section(variant)]
        t0 = time.perf_counter()
        stats, heldout = pruner_stats(tb, alike, args.data, args.folds)
        seconds = time.perf_counter() - t0
        if path.is_file():  # another run may have added rows meanwhile
            cache = json.loads(path.read_text(encoding="utf-8"))
        for v in alike:
            cache[key(v)] = [dataclasses.asdict(stats[v]), heldout, seconds]
        args.models.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(cache, indent=1) + "\n")
    stats, heldout, seconds = cache[key(variant)]
    return PruneStats(**stats), heldout, seconds


def pruner_stats(tb: Treebank, variants: list[str], data: str,
                 folds: int) -> tuple[dict[str, PruneStats], str]:
    """The pruners of ``variants`` (trained alike: :func:`fit_section`) on ``tb``'s held-out
    data (see the module doc), and what that was."""
    cfg = variant_config("o2-eisner", tb, variants[0], data)
    train = read_split(cfg, cfg.data.train)
    if has_heldout_dev(tb):
        parts = [(train, read_split(cfg, tb.dev))]
        heldout = f"{tb.dev}"
    else:
        parts = [(train[:a] + train[b:], train[a:b]) for a, b in fold_bounds(len(train), folds)]
        heldout = f"{folds}-fold jackknife of {tb.train}"
    totals = {v: PruneStats(0, 0, 0, 0, 0, 0, 0, 0) for v in variants}
    for fit, held in parts:
        # a pruner trained on ``fit``; how it prunes its own training sentences
        # (pruner.train_folds) plays no part
        vocab = Vocabulary.build(fit)
        pruner = fit_pruner(cfg, vocab, [vocab.encode(s) for s in fit], progress=False)
        for v in variants:
            pruner.threshold = pruner_section(v)["threshold"]
            add_stats(totals[v], prune_stats(EncodedPruner(pruner, vocab), held))
    return totals, heldout


def model_dir(cfg, args: argparse.Namespace) -> Path | None:
    """The model of ``cfg``: named by --model, else found (or, unless --no-train, trained) in
    ``args.models``; None when missing and not to be trained."""
    if cfg.name in args.explicit:
        return args.explicit[cfg.name]
    if args.no_train:
        path = args.models / cfg.name
        return path if (path / WEIGHTS_FILE).is_file() else None
    return find_or_train(cfg, args.models, [], log)


def parser_rows(tb: Treebank, args: argparse.Namespace) -> tuple[list[str], str]:
    """Rows of the parser table for ``tb`` and the file they were measured on."""
    eval_file = tb.dev if has_heldout_dev(tb) else tb.test
    ref_cfg = load_config(raw=config_for("o1-cle", tb, None), data_root=args.data)
    gold = read_split(ref_cfg, eval_file)
    ref_dir = model_dir(ref_cfg, args)
    rows = []
    for name in args.configs.split(","):
        for variant in ("old", parser_variant(tb)):
            cfg = variant_config(name, tb, variant, args.data)
            path = model_dir(cfg, args)
            if path is None or ref_dir is None:
                rows.append(f"| {tb.name} | {name} | {variant} | not trained (--no-train) |"
                            " | | | | |")
                continue
            stats = prune_stats(model_pruner(path), gold)
            # best of --repeats, the reference and the model alternating (a shared machine)
            pairs = [(measure(ref_dir, gold, "include"), measure(path, gold, "include"))
                     for _ in range(args.repeats)]
            ref, row = (max(runs, key=lambda m: m["tokens_per_second"])
                        for runs in zip(*pairs, strict=True))
            rows.append(f"| {tb.name} | {name} | {variant} | {stats.heads_per_word:.2f} | "
                        f"{stats.gold_kept_directed_pct:.2f} | {row['uas']:.2f} | "
                        f"{row['las']:.2f} | {row['tokens_per_second']:,.0f} | "
                        f"{ref['tokens_per_second']:,.0f} |")
            log(rows[-1])
    return rows, eval_file


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--models", type=Path, default=Path("models/pruner"))
    ap.add_argument("--model", action="append", default=[], metavar="NAME=DIR",
                    help="use DIR for the model NAME (e.g. en_ewt-o2-eisner-oldpruner)")
    ap.add_argument("--out", type=Path, default=Path("results/pruner-table.md"))
    ap.add_argument("--treebanks", default="", help="comma-separated setups (default: all)")
    ap.add_argument("--parsers", default="en_ewt,da_ddt",
                    help="setups of the parser table (empty: none)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--configs", default=",".join(PARSER_CONFIGS),
                    help="the second-order configs of the parser table (comma-separated)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="parse this many times, reporting the fastest (model and reference)")
    ap.add_argument("--no-train", action="store_true",
                    help="report missing parser models instead of training them")
    ap.add_argument("--variants", default="old,new,small",
                    help="the pruners of the pruner table (comma-separated)")
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    if not set(variants) <= {"old", "new", "small"}:
        ap.error("--variants: choose among old, new, small")
    args.explicit = {k: Path(v) for k, v in (m.split("=", 1) for m in args.model)}
    chosen = [t for t in args.treebanks.split(",") if t]
    setups = [tb for tb in TREEBANKS if not chosen or tb.name in chosen]
    new = pruner_section("new")
    lines = [
        "# The second-order pruner: old against new (issue 18)",
        "",
        f"{datetime.date.today().isoformat()}; machine: 2 shared cores (about 7 jobs at once); "
        "`make pruner-table` (benchmarks/pruner_table.py).",
        "",
        "Old: today's defaults (`pruner.objective: perceptron`: the labeled first-order model "
        "trained by PA, the softmax of its scores over each word's heads, kept if >= 1e-4, at "
        "most 10). New: the `pruner` section of configs/en_ewt/o2-eisner.yaml: "
        f"`{yaml.safe_dump(new, default_flow_style=True, width=1000).strip()}`.",
        "",
        "Heads per word: candidate heads kept per word (directed arcs kept / words); recall: "
        "gold arcs kept, %. Held-out data: the dev file where the setup trains on a train "
        f"file, else a {args.folds}-fold jackknife of the training file (no test file is "
        "read for these rows, nor for choosing any setting).",
        "",
        f"Small: the new pruner with threshold {SMALL_DATA_THRESHOLD} (relative) and "
        f"`train_folds: {SMALL_DATA_FOLDS}` (which changes only the training graphs of a "
        "parser, not these figures), the settings suggested for small training sets, chosen "
        "on these jackknifed dev files. Each cell: heads per word / recall; then the seconds "
        "each pruner took to train and measure (all folds; new and small share their "
        "pruners, measured together).",
        "",
        "| treebank | held-out data | " + " | ".join(variants) + " | "
        + " | ".join(f"{v} s" for v in variants) + " |",
        "|---|---|" + "---|" * (2 * len(variants)),
    ]
    for tb in setups:
        cells = []
        for variant in variants:
            stats, heldout, seconds = cached_pruner_stats(tb, variant, args)
            cells.append((f"{stats.heads_per_word:.2f} / {stats.gold_kept_directed_pct:.2f}",
                          f"{seconds:.0f}"))
            log(f"{tb.name} {variant}: {cells[-1][0]}")
        lines.append(f"| {tb.name} | {heldout} | " + " | ".join(c for c, _ in cells) + " | "
                     + " | ".join(t for _, t in cells) + " |")
    parsers = [tb for tb in TREEBANKS if tb.name in args.parsers.split(",")]
    if parsers:
        lines += [
            "",
            "## Second-order parsers with each pruner",
            "",
            "UAS / LAS with punctuation; heads per word and recall of the model's own pruner on "
            "the same file; tokens/sec of inference (the fastest of --repeats parses) beside the "
            "o1-cle model's, parsed in turn with it in the same run. "
            "The new pruner: new on a setup with a train file, small on one trained on dev.",
            "",
            "| treebank | parser | pruner | heads/word | recall | UAS | LAS | tokens/sec | "
            "o1-cle tokens/sec |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        files = []
        for tb in parsers:
            rows, eval_file = parser_rows(tb, args)
            lines += rows
            files.append(f"{tb.name}: {eval_file}")
        lines += ["", "Measured on " + "; ".join(files) + "."]
    write_text(args.out, "\n".join(lines) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
