"""Error breakdowns of one or several systems against gold, side by side, and significance tests.

Every table is made of integer counts over the *scored* tokens of :mod:`dparse.metrics` (the
punctuation rule is decided on gold; a gold HEAD ``_`` is never scored); percentages are derived
from the counts when reported (None over zero items). Row keys and counts per table:

- ``sentence_length``: sentences binned by their number of words (the bins of
  :func:`dparse.search_errors.bin_labels`); ``sentences``, ``tokens`` (scored), ``uas``
  and ``las`` (correct scored tokens), ``complete`` (sentences whose scored tokens all have the
  right head; a sentence without scored tokens counts as matched, as in ``dparse eval``; a
  bin without scored tokens has no complete-match figure, as ``dparse eval`` over such a file).
- ``arc_length`` (rows ``LENGTH_BINS``: ``root`` for h = 0, else |h - m|) and ``direction``
  (rows ``root``; ``left``: the dependent precedes its head, m < h; ``right``: m > h): arcs
  precision and recall. ``gold``: scored tokens whose gold arc falls in the row; ``predicted``:
  scored tokens whose predicted arc falls in it (a predicted HEAD ``_`` or a word headed by
  itself, in a broken prediction, falls nowhere);
  ``found``: gold arcs of the row whose head is predicted (recall = found / gold); ``right``:
  predicted arcs of the row that are gold (precision = right / predicted). A right arc has the
  same h and m on both sides, so for these two tables found == right.
- ``non_projective``: the same four counts for rows ``non-projective`` and ``projective``. An
  arc h -> m is non-projective when some word strictly between h and m is not a descendant of h
  (in the tree the arc belongs to: gold arcs in the gold tree, predicted ones in the predicted
  tree; a word on a cycle of a broken prediction descends from nothing outside the cycle).
- ``label`` (gold DEPREL), ``head_upos`` (the gold head's UPOS, ``ROOT`` for h = 0) and
  ``dep_upos`` (the word's UPOS): ``tokens``, ``uas``, ``las`` counts.
- ``root``: one row ``root`` with ``gold`` (scored tokens whose gold head is 0), ``predicted``
  (scored tokens predicted to attach to 0), ``found`` / ``right`` (both: scored tokens with
  gold and predicted head 0). Recall is ``dparse eval``'s root accuracy.

:func:`significance` compares two systems sentence by sentence on UAS and LAS: a two-sided
exact sign test over the sentences where one system has more correct scored tokens than the
other (ties dropped; p = 1 without any), and a two-sided paired bootstrap over sentences with a
fixed seed (p = (1 + #{|d* - d| >= |d|}) / (1 + samples), d the observed difference of the
micro-averaged scores and d* its resampled value; identical systems give p = 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dparse.conll import Sentence
from dparse.metrics import Report, evaluate, format_score, percent
from dparse.punct import excluded
from dparse.search_errors import DEFAULT_BINS, bin_labels

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "LENGTH_BINS",
    "PR_TABLES",
    "SCORE_TABLES",
    "Breakdown",
    "Comparison",
    "arc_length_bin",
    "breakdown",
    "compare_systems",
    "format_comparison",
    "row_scores",
    "non_projective_arcs",
    "sign_test",
    "significance",
]

LENGTH_BINS = ("root", "1", "2", "3", "4", "5", "6", "7-10", "11-20", "21+")
PR_TABLES = ("arc_length", "direction", "non_projective", "root")
SCORE_TABLES = ("label", "head_upos", "dep_upos")
BOOTSTRAP_SAMPLES = 1000


def arc_length_bin(head: int, dep: int) -> str:
    """The ``LENGTH_BINS`` row of the arc head -> dep (head 0: ``root``)."""
    if head == 0:
        return "root"
    d = abs(head - dep)
    if d <= 6:
        return str(d)
    return "7-10" if d <= 10 else "11-20" if d <= 20 else "21+"


def _direction(head: int, dep: int) -> str:
    return "root" if head == 0 else "left" if dep < head else "right"


def non_projective_arcs(heads: np.ndarray) -> np.ndarray:
    """Bool [n+1]: entry m is True when the arc heads[m] -> m is non-projective (module doc);
    entry 0 and words without a head (-1) are False. ``heads`` need not be a tree."""
    h = np.asarray(heads, dtype=np.int64)
    n = len(h) - 1
    # ancestors[k]: the set of nodes reached from k by following heads (cycle-safe)
    ancestors: list[set[int]] = [set() for _ in range(n + 1)]
    for k in range(1, n + 1):
        node, seen = k, ancestors[k]
        while 0 < node <= n and h[node] >= 0 and h[node] not in seen:
            node = int(h[node])
            seen.add(node)
    out = np.zeros(n + 1, dtype=bool)
    for m in range(1, n + 1):
        head = int(h[m])
        if head < 0:
            continue
        lo, hi = min(head, m), max(head, m)
        out[m] = any(head not in ancestors[k] for k in range(lo + 1, hi))
    return out


def _arc_rows(head: int, dep: int, non_projective: np.ndarray) -> list[tuple[str, str]]:
    """The (table, row) pairs of the PR tables that the arc head -> dep falls in;
    ``non_projective``: :func:`non_projective_arcs` of its tree."""
    rows = [("arc_length", arc_length_bin(head, dep)), ("direction", _direction(head, dep)),
            ("non_projective", "non-projective" if non_projective[dep] else "projective")]
    return [*rows, ("root", "root")] if head == 0 else rows


def _pr_row() -> dict[str, int]:
    return {"gold": 0, "predicted": 0, "found": 0, "right": 0}


def _score_row() -> dict[str, int]:
    return {"tokens": 0, "uas": 0, "las": 0}


@dataclass
class Breakdown:
    """One system's tables (module doc): table name -> row key -> count name -> count, and the
    whole-file ``report`` of :func:`dparse.metrics.evaluate` (so totals equal ``dparse eval``'s)
    with the per-sentence correct counts the significance tests use (int [sentences])."""

    name: str
    report: Report
    tables: dict[str, dict[str, dict[str, int]]]
    sentence_uas: np.ndarray = field(repr=False)
    sentence_las: np.ndarray = field(repr=False)

    def as_dict(self) -> dict:
        """Plain data for JSON: every row's counts plus its derived percentages."""
        tables: dict[str, dict[str, dict]] = {}
        for table, rows in self.tables.items():
            tables[table] = {key: {**counts, **row_scores(table, counts)}
                             for key, counts in rows.items()}
        return {"name": self.name, "totals": self.report.as_dict(), "tables": tables}


def row_scores(table: str, c: dict[str, int]) -> dict[str, float | None]:
    """The percentages of one row of ``table``."""
    if table in PR_TABLES:
        p = percent(c["right"], c["predicted"])
        r = percent(c["found"], c["gold"])
        if p is None or r is None:
            f1 = None
        else:
            f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {"precision": p, "recall": r, "f1": f1}
    if table == "sentence_length":
        return {"uas_percent": percent(c["uas"], c["tokens"]),
                "las_percent": percent(c["las"], c["tokens"]),
                "complete_percent": percent(c["complete"], c["sentences"] if c["tokens"] else 0)}
    return {"uas_percent": percent(c["uas"], c["tokens"]),
            "las_percent": percent(c["las"], c["tokens"])}


def breakdown(
    gold: Sequence[Sentence],
    system: Sequence[Sentence],
    punct: str = "include",
    name: str = "system",
    bins: Sequence[int] = DEFAULT_BINS,
) -> Breakdown:
    """The tables of ``system`` against ``gold`` (aligned sentences; InputError otherwise, as
    :func:`dparse.metrics.evaluate`). ``bins``: upper edges of the sentence-length bins."""
    report = evaluate(gold, system, punct=punct)
    labels = bin_labels(bins)
    tables: dict[str, dict[str, dict[str, int]]] = {
        "sentence_length": {b: {"sentences": 0, "tokens": 0, "uas": 0, "las": 0, "complete": 0}
                            for b in labels},
        "arc_length": {b: _pr_row() for b in LENGTH_BINS},
        "direction": {d: _pr_row() for d in ("root", "left", "right")},
        "non_projective": {k: _pr_row() for k in ("non-projective", "projective")},
        "root": {"root": _pr_row()},
        "label": {},
        "head_upos": {},
        "dep_upos": {},
    }
    sent_uas = np.zeros(len(gold), dtype=np.int64)
    sent_las = np.zeros(len(gold), dtype=np.int64)
    for i, (g, s) in enumerate(zip(gold, system, strict=True)):
        n = len(g)
        scored = g.heads[1:] >= 0
        if punct != "include" and n:
            scored &= ~excluded(g, punct)
        gold_np = non_projective_arcs(g.heads)
        pred_np = non_projective_arcs(s.heads)
        row = tables["sentence_length"][labels[int(np.searchsorted(bins, n))]]
        row["sentences"] += 1
        errors = 0
        for m in range(1, n + 1):
            if not scored[m - 1]:
                continue
            gh, sh = int(g.heads[m]), int(s.heads[m])
            head_ok = gh == sh
            las_ok = head_ok and g.deprels[m] == s.deprels[m]
            sent_uas[i] += head_ok
            sent_las[i] += las_ok
            errors += not head_ok
            for table, key in _arc_rows(gh, m, gold_np):
                tables[table][key]["gold"] += 1
                tables[table][key]["found"] += head_ok
            for table, key in _arc_rows(sh, m, pred_np) if 0 <= sh != m else ():
                tables[table][key]["predicted"] += 1
                tables[table][key]["right"] += head_ok
            for table, key in (("label", g.deprels[m]),
                               ("head_upos", "ROOT" if gh == 0 else g.upos[gh - 1]),
                               ("dep_upos", g.upos[m - 1])):
                counts = tables[table].setdefault(key, _score_row())
                counts["tokens"] += 1
                counts["uas"] += head_ok
                counts["las"] += las_ok
        row["tokens"] += int(scored.sum())
        row["uas"] += int(sent_uas[i])
        row["las"] += int(sent_las[i])
        row["complete"] += errors == 0
    for table in SCORE_TABLES:
        tables[table] = dict(sorted(tables[table].items(), key=lambda kv: (-kv[1]["tokens"],
                                                                          kv[0])))
    return Breakdown(name, report, tables, sent_uas, sent_las)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the probability, with wins and losses equally likely, of a
    split at least as uneven as ``wins``:``losses`` (1.0 when both are 0)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / 2**n)


def significance(
    a: np.ndarray, b: np.ndarray, tokens: np.ndarray, samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> dict:
    """Paired tests of systems A and B from per-sentence correct counts ``a`` and ``b`` and
    scored-token counts ``tokens`` (int [sentences] each): ``difference`` (A - B, percentage
    points), ``wins`` / ``losses`` / ``ties`` (sentences where A has more / fewer / as many
    correct tokens), ``p_value`` of the sign test and ``bootstrap`` {samples, seed, p_value}."""
    a, b, tokens = (np.asarray(x, dtype=np.int64) for x in (a, b, tokens))
    total = int(tokens.sum())
    diff = percent(int(a.sum() - b.sum()), total)
    wins, losses = int(np.sum(a > b)), int(np.sum(a < b))
    result = {"difference": diff, "wins": wins, "losses": losses,
              "ties": len(a) - wins - losses, "p_value": sign_test(wins, losses)}
    boot_p = 1.0
    if len(a) and total:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(a), size=(samples, len(a)))
        delta = a - b
        resampled_tokens = tokens[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            d_star = np.where(resampled_tokens > 0, delta[idx].sum(axis=1) / resampled_tokens, 0.0)
        d = float(delta.sum()) / total
        extreme = int(np.sum(np.abs(d_star - d) >= abs(d) - 1e-12))
        boot_p = (1 + extreme) / (1 + samples)
    result["bootstrap"] = {"samples": samples, "seed": seed, "p_value": boot_p}
    return result


@dataclass
class Comparison:
    """Breakdowns of several systems on the same gold file, and the significance of the first
    system against each other one (metric "uas" / "las" -> :func:`significance` result)."""

    punct: str
    systems: list[Breakdown]
    tests: list[dict]

    def as_dict(self) -> dict:
        return {"punct": self.punct, "systems": [s.as_dict() for s in self.systems],
                "significance": self.tests}


def compare_systems(
    gold: Sequence[Sentence],
    systems: Sequence[tuple[str, Sequence[Sentence]]],
    punct: str = "include",
    bins: Sequence[int] = DEFAULT_BINS,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> Comparison:
    """Breakdowns of every (name, sentences) of ``systems`` and tests of the first against
    each other one."""
    parts = [breakdown(gold, sents, punct, name, bins) for name, sents in systems]
    tests = []
    if parts:
        tokens = np.array([
            int(np.sum((g.heads[1:] >= 0) & ~excluded(g, punct))) for g in gold], dtype=np.int64)
        first = parts[0]
        for other in parts[1:]:
            tests.append({
                "system": first.name, "other": other.name,
                "uas": significance(first.sentence_uas, other.sentence_uas, tokens, samples, seed),
                "las": significance(first.sentence_las, other.sentence_las, tokens, samples, seed),
            })
    return Comparison(punct, parts, tests)


_TITLES = {
    "sentence_length": "Accuracy by sentence length (words)",
    "arc_length": "Arcs by length |h - m| (P = right/predicted, R = found/gold)",
    "direction": "Arcs by direction (left: dependent before head; right: after)",
    "non_projective": "Arcs by projectivity (non-projective: a word between h and m not under h)",
    "root": "Root attachment (R is root accuracy)",
    "label": "By gold DEPREL",
    "head_upos": "By the gold head's UPOS",
    "dep_upos": "By the dependent's UPOS",
}


def format_comparison(comparison: Comparison) -> str:
    """The tables of every system side by side as aligned text (systems named A, B, ... with a
    legend), then the significance tests."""
    f = format_score
    systems = comparison.systems
    letters = [chr(ord("A") + k) if k < 26 else f"S{k}" for k in range(len(systems))]
    lines = ["Systems: " + "; ".join(f"{x} = {s.name}" for x, s in zip(letters, systems,
                                                                       strict=True))]
    for table, title in _TITLES.items():
        keys: list[str] = []
        for s in systems:
            keys += [k for k in s.tables[table] if k not in keys]
        first = systems[0].tables[table]
        width = max([len("row"), *map(len, keys)])
        if table == "sentence_length":
            head, cols = f"{'sents':>6} {'tokens':>7}", ("UAS", "LAS", "CM")
        elif table in PR_TABLES:
            head, cols = f"{'gold':>7}", ("pred", "P", "R", "F1")
        else:
            head, cols = f"{'tokens':>7}", ("UAS", "LAS")
        sys_cols = " ".join(f"{x + ' ' + c:>7}" for x in letters for c in cols)
        lines += ["", title, f"{'row':<{width}} {head} {sys_cols}"]
        for key in keys:
            c0 = first.get(key)
            if table == "sentence_length":
                left = f"{c0['sentences'] if c0 else 0:>6} {c0['tokens'] if c0 else 0:>7}"
            elif table in PR_TABLES:
                left = f"{c0['gold'] if c0 else 0:>7}"
            else:
                left = f"{c0['tokens'] if c0 else 0:>7}"
            cells = []
            for s in systems:
                c = s.tables[table].get(key)
                sc = row_scores(table, c) if c else {}
                if table == "sentence_length":
                    vals = [sc.get("uas_percent"), sc.get("las_percent"),
                            sc.get("complete_percent")]
                    cells += [f(v, 7) for v in vals]
                elif table in PR_TABLES:
                    cells.append(f"{c['predicted'] if c else 0:>7}")
                    cells += [f(sc.get(k), 7) for k in ("precision", "recall", "f1")]
                else:
                    cells += [f(sc.get(k), 7) for k in ("uas_percent", "las_percent")]
            lines.append(f"{key:<{width}} {left} {' '.join(cells)}")
    for test in comparison.tests:
        a = letters[0]
        b = letters[[s.name for s in systems].index(test["other"], 1)]
        lines += ["", f"Significance, {a} vs {b} (paired over sentences)"]
        for metric in ("uas", "las"):
            t = test[metric]
            lines.append(
                f"{metric.upper()}: {a} - {b} = {f(t['difference'], 0)} points; sentences "
                f"{a} better {t['wins']}, worse {t['losses']}, tied {t['ties']}; sign test "
                f"p = {t['p_value']:.4g}; bootstrap ({t['bootstrap']['samples']} samples, seed "
                f"{t['bootstrap']['seed']}) p = {t['bootstrap']['p_value']:.4g}")
    return "\n".join(lines)
