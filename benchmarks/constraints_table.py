"""Constrained parsing on en_ewt test: with 0%, 10%, 30% and 50% of the gold arcs fixed
(random, seeded), the UAS and LAS of the other (free) arcs against the unconstrained parse's on
the same arcs, for each model (one per decoder, every family) found under --models.

The fixed arcs of each sentence are drawn at random (seed, share) from its gold arcs and kept in
the input's HEAD and DEPREL columns (the others blanked to ``_``); the input is parsed with
``constraints="keep"`` (``dparse parse --constraints keep``; at 0% nothing is fixed: the
constrained parse must equal the unconstrained one). For a projective parser (the loaded
parser's ``projective``: projective graph decoders, easy-first, shift-reduce, reranking), the
draw keeps only arcs that leave a projective tree holding every arc kept before them possible (in
draw order; gold trees can be non-projective), so the actual fixed share (reported) is a little
lower. Every constrained output is checked to hold its fixed arcs and
labels. Scores over every word, punctuation included; the unconstrained scores are over the same
free words. Time: the constrained parse's wall time over that of the unconstrained parse run
just before it, in one process (a ratio: the machine is shared); ``--limit-model NAME=N``
parses that model's first N sentences only (a slow one), which the table says.

    python benchmarks/constraints_table.py --test ../shared/data/en_ewt/test.conllu \
        --models models --out results/constraints-en_ewt.md [--limit 200] [--resume] \
        [--limit-model en_ewt-rerank-local=500]

Models missing under --models are left out of the table (make constraints-en_ewt trains none:
``make retrain`` or ``dparse train configs/en_ewt/NAME.yaml`` makes them). The measurements go to
OUT's ``.json`` too, model by model (``--resume`` keeps those already there).
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path

import numpy as np

import dparse
from dparse.conll import Sentence, read_conll
from dparse.constraints import Constraints, sentence_constraints, tree_exists
from dparse.outputs import write_text

SHARES = (0.0, 0.1, 0.3, 0.5)
SEED = 1
# model name under --models -> what the row says
MODELS = ("en_ewt-o1-cle", "en_ewt-o1-eisner", "en_ewt-o1-bgi-pp", "en_ewt-o2-eisner",
          "en_ewt-o2-dd", "en_ewt-o2-bgi-pp-ib", "en_ewt-o3-cube", "en_ewt-o3-exact",
          "en_ewt-easyfirst", "en_ewt-sr-nonsp-b12", "en_ewt-o1-umst-uf-lep",
          "en_ewt-rerank-local")


def partial(gold: Sentence, share: float, projective: bool,
            rng: np.random.Generator) -> Sentence:
    """``gold`` with a random ``share`` of its arcs kept in HEAD and DEPREL, the others ``_``
    (projective: only arcs that keep a projective tree holding all kept so far possible)."""
    n = len(gold)
    order = rng.permutation(np.arange(1, n + 1))[: int(round(share * n))]
    c = Constraints.free(n)
    for m in order.tolist():
        c.heads[m] = gold.heads[m]
        if projective and not tree_exists(c.allowed(), True, True):
            c.heads[m] = -1
    deprels = [""] + [gold.deprels[m] if c.heads[m] >= 0 else "_" for m in range(1, n + 1)]
    return gold.with_parse(c.heads, deprels)


def score(gold: list[Sentence], parsed: list[Sentence], free: list[np.ndarray]) -> dict:
    """UAS and LAS (percent) over the free words (bool [n+1] per sentence) and their count."""
    words = uas = las = 0
    for g, p, f in zip(gold, parsed, free, strict=True):
        idx = np.flatnonzero(f)
        words += len(idx)
        right = p.heads[idx] == g.heads[idx]
        uas += int(right.sum())
        las += sum(1 for k, ok in zip(idx.tolist(), right.tolist(), strict=True)
                   if ok and p.deprels[k] == g.deprels[k])
    return {"words": words, "uas": 100.0 * uas / max(words, 1),
            "las": 100.0 * las / max(words, 1)}


def run_model(model_dir: Path, gold: list[Sentence]) -> dict:
    """The unconstrained and constrained scores of one model (module doc)."""
    parser = dparse.load(model_dir)
    projective = parser._loaded.projective  # its trees' kind (dparse.constraints)
    base = list(parser.parse_many(gold))
    rows = []
    for share in SHARES:
        rng = np.random.default_rng([SEED, int(share * 100)])
        inputs = [partial(g, share, projective, rng) for g in gold]
        free = [np.concatenate([[False], s.heads[1:] < 0]) for s in inputs]
        # timed alternately: the unconstrained parse just before the constrained one
        started = time.perf_counter()
        for _ in parser.parse_many(gold):
            pass
        base_seconds = time.perf_counter() - started
        started = time.perf_counter()
        parsed = list(parser.parse_many(inputs, constraints="keep"))
        seconds = time.perf_counter() - started
        for s, p in zip(inputs, parsed, strict=True):
            c = sentence_constraints(s, True)
            assert c.satisfied_by(p.heads), s
            assert all(lab is None or lab == p.deprels[m] for m, lab in enumerate(c.labels))
        if share == 0.0:
            assert [p.to_conll() for p in parsed] == [p.to_conll() for p in base]
        fixed = sum(int((s.heads[1:] >= 0).sum()) for s in inputs)
        total = sum(len(s) for s in inputs)
        rows.append({"share": share, "fixed_percent": 100.0 * fixed / total,
                     "constrained": score(gold, parsed, free),
                     "unconstrained": score(gold, base, free), "seconds": seconds,
                     "base_seconds": base_seconds})
    return {"decoder": parser.decoder, "projective": bool(projective), "sentences": len(gold),
            "rows": rows}


def table(results: dict[str, dict], test: str, models: str, limit: int | None) -> str:
    lines = [
        "# Constrained parsing on en_ewt test",
        "",
        f"Written by `benchmarks/constraints_table.py` (`make constraints-en_ewt`) on "
        f"{datetime.date.today().isoformat()}, test file `{test}`"
        + (f" (first {limit} sentences)" if limit else "") + f", models of `{models}/`.",
        "",
        "Each sentence's gold arcs are fixed at random (seed 1 and the share), kept in the "
        "input's HEAD and DEPREL columns, and the input parsed with `--constraints keep`; "
        "projective decoders get only arcs that leave a projective tree with those drawn before "
        "them possible (gold trees can be non-projective), so their fixed share is lower. "
        "UAS / LAS over the free (not fixed) words, punctuation included, of "
        "the constrained parse and of the unconstrained parse on the same words; every "
        "constrained output holds its fixed arcs and labels (checked), and at 0% equals the "
        "unconstrained parse byte for byte (checked). Time: the constrained parse's wall time "
        "over the unconstrained parse's run just before it, in the same process.",
        "",
        "| model | decoder | sentences | fixed (asked) | fixed (actual) | free words | UAS free: "
        "unconstrained -> constrained | LAS free: unconstrained -> constrained | time "
        "constrained / unconstrained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, res in results.items():
        for row in res["rows"]:
            u, c = row["unconstrained"], row["constrained"]
            lines.append(
                f"| {name} | {res['decoder']} | {res.get('sentences', 'all')} | "
                f"{100 * row['share']:.0f}% | "
                f"{row['fixed_percent']:.1f}% | {c['words']} | {u['uas']:.2f} -> {c['uas']:.2f} "
                f"({c['uas'] - u['uas']:+.2f}) | {u['las']:.2f} -> {c['las']:.2f} "
                f"({c['las'] - u['las']:+.2f}) | "
                f"{row['seconds'] / row['base_seconds']:.2f} |")
    lines += ["", "Times are wall times of one process on a shared machine (2 cores, other "
              "jobs running): only their ratio means something, and the 0% rows, where both "
              "parses do the same work, show how far the ratios move by noise alone.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--test", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=None, help="first N sentences only")
    ap.add_argument("--only", default=None, help="comma-separated model names")
    ap.add_argument("--limit-model", action="append", default=[], metavar="NAME=N",
                    help="parse model NAME's first N sentences only (repeatable)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the models already measured in OUT's .json")
    args = ap.parse_args()
    gold = list(read_conll(args.test))[: args.limit]
    limits = {name: int(n) for name, _, n in (item.partition("=") for item in args.limit_model)}
    names = args.only.split(",") if args.only else MODELS
    cache = Path(args.out).with_suffix(".json")
    results = json.loads(cache.read_text()) if args.resume and cache.exists() else {}
    for name in names:
        model = Path(args.models) / name
        if name in results or not model.is_dir():
            continue
        print(f"{name} ...", flush=True)
        results[name] = run_model(model, gold[: limits.get(name)])
        write_text(cache, json.dumps(results, indent=1))
    ordered = {name: results[name] for name in MODELS if name in results}
    write_text(Path(args.out), table(ordered, Path(args.test).name, Path(args.models).name,
                                     args.limit))


if __name__ == "__main__":
    main()
