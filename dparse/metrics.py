"""Evaluation of dependency parses against gold trees (docs/design.md, 'Evaluation').

All scores are percentages, micro-averaged over the scored tokens: every word of the gold file
except those the punctuation rule leaves out (:mod:`dparse.punct`, decided on the gold side) and
those whose gold HEAD is ``_``. A score over zero items (no scored tokens, no gold root words,
no sentences, an empty breakdown bin) is not applicable: None in the report, ``null`` in JSON,
``n/a`` in text (:func:`format_score`), never 0 or 100.

- UAS: share of scored tokens whose predicted head is the gold head.
- LAS: head and the full DEPREL correct (CoNLL-X ``eval.pl`` convention).
- LAS (universal), ``las_universal``: head and the DEPREL part before ``:`` correct (the CoNLL 2018
  UD scorer's LAS).
- U-UAS: the predicted arc h -> m counts if the gold tree has h -> m or m -> h.
- Root accuracy: among scored tokens whose gold head is 0, the share predicted to attach to 0
  (token level; with one root per gold sentence this is the share of sentences whose root word
  is found).
- Complete match: share of all sentences whose scored tokens all have the correct head
  (a sentence without scored tokens counts as matched, as in ``eval.pl``; not applicable when
  no token at all is scored); labeled complete match also needs every DEPREL.
- With a second system ``other``: SARC, the share of scored tokens whose heads agree between the
  system and the other; gold(system, other) = (a, b), a the share of scored tokens whose head the
  system finds and the other misses, b the converse.
- Detail (``detail=True``): per gold DEPREL, the count, UAS and LAS of its tokens, and the
  precision, recall and F1 of the label alone (heads ignored; precision over scored tokens the
  system labels so); per gold arc length |h - m| (bins ``1``, ``2``, ``3-6``, ``7+``, and
  ``root`` for h = 0), the count, UAS and LAS.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from dparse.conll import Sentence
from dparse.errors import InputError
from dparse.punct import PUNCT_RULES, excluded

DISTANCE_BINS = ("root", "1", "2", "3-6", "7+")


@dataclass(frozen=True)
class LabelScore:
    """Scores of the scored tokens with one gold DEPREL (percent; label P/R/F1 ignore heads;
    precision is None when the system never gives the label)."""

    count: int
    uas: float | None
    las: float | None
    precision: float | None
    recall: float | None
    f1: float


@dataclass(frozen=True)
class DistanceScore:
    """Scores of the scored tokens whose gold arc length falls in one bin (percent; None
    for an empty bin)."""

    count: int
    uas: float | None
    las: float | None


@dataclass(frozen=True)
class Report:
    """The result of :func:`evaluate` (percentages, None where not applicable: over zero
    items; see the module doc for definitions)."""

    punct: str
    sentences: int
    tokens: int
    scored: int
    uas: float | None
    las: float | None
    las_universal: float | None
    u_uas: float | None
    root_accuracy: float | None
    root_tokens: int
    complete_match: float | None
    labeled_complete_match: float | None
    sarc: float | None = None
    gold_xy: tuple[float | None, float | None] | None = None
    per_label: dict[str, LabelScore] | None = None
    per_distance: dict[str, DistanceScore] | None = None

    @property
    def excluded(self) -> int:
        """Tokens left out of scoring."""
        return self.tokens - self.scored

    def as_dict(self) -> dict:
        """Plain data for JSON: every field, plus ``excluded`` and ``punct_rule`` (its text)."""
        data = asdict(self)
        data["excluded"] = self.excluded
        data["punct_rule"] = PUNCT_RULES[self.punct]
        if self.gold_xy is not None:
            data["gold_xy"] = list(self.gold_xy)
        return data


def percent(num: float, den: float) -> float | None:
    """``100 * num / den``, or None (not applicable) when there are no items (``den == 0``)."""
    return 100.0 * float(num) / float(den) if den else None


def format_score(value: float | None, width: int = 6, digits: int = 2, unit: str = "",
                 sign: bool = False) -> str:
    """A percentage for text reports (with ``sign``: always signed, for differences), followed
    by ``unit`` and right-aligned in ``width``; ``n/a`` (without the unit) for None."""
    text = "n/a" if value is None else f"{value:{'+' if sign else ''}.{digits}f}{unit}"
    return f"{text:>{width}}"


def _check_aligned(gold: Sequence[Sentence], system: Sequence[Sentence], what: str) -> None:
    """Raise InputError, naming the ``what`` file and line, unless sentences and words match."""
    if len(gold) != len(system):
        if not system:  # name the file that has sentences
            raise InputError(gold[0].source, None,
                             f"gold has {len(gold)} sentences but the {what} file has none")
        gold_has = f"gold ({gold[0].source}) has {len(gold)}" if gold else "the gold file has none"
        raise InputError(
            system[0].source, None, f"{what} has {len(system)} sentences but {gold_has}"
        )
    for k, (g, s) in enumerate(zip(gold, system, strict=True), 1):
        if g.form == s.form:
            continue
        if len(g) != len(s):
            raise InputError(
                s.source,
                s.lineno,
                f"{what} sentence {k} has {len(s)} words but gold ({g.source}:{g.lineno}) "
                f"has {len(g)}",
            )
        m = next(i for i, (a, b) in enumerate(zip(g.form, s.form, strict=True), 1) if a != b)
        raise InputError(
            s.source,
            s.line_of(m),
            f"{what} sentence {k} word {m} is {s.form[m - 1]!r} but gold "
            f"({g.source}:{g.line_of(m)}) has {g.form[m - 1]!r}",
        )


def _heads(sentences: Sequence[Sentence]) -> np.ndarray:
    """The heads of all words, concatenated: int64 [tokens]."""
    if not sentences:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([s.heads[1:] for s in sentences]).astype(np.int64)


def _rels(sentences: Sequence[Sentence]) -> list[str]:
    return list(itertools.chain.from_iterable(s.deprels[1:] for s in sentences))


def evaluate(
    gold: Sequence[Sentence],
    system: Sequence[Sentence],
    punct: str = "include",
    other: Sequence[Sentence] | None = None,
    detail: bool = False,
) -> Report:
    """Score ``system`` (and compare it with ``other``) against ``gold``.

    The sequences must hold the same sentences with the same words in order (InputError
    otherwise). ``punct`` is a rule of :data:`dparse.punct.PUNCT_RULES`; ``detail`` adds the
    per-label and per-distance breakdowns.
    """
    if punct not in PUNCT_RULES:
        raise ValueError(f"unknown punctuation rule {punct!r}; expected one of {list(PUNCT_RULES)}")
    _check_aligned(gold, system, "system")
    if other is not None:
        _check_aligned(gold, other, "other system")

    lens = np.array([len(g) for g in gold], dtype=np.int64)
    n_tok = int(lens.sum())
    starts = np.repeat(np.cumsum(lens) - lens, lens)  # flat index of each token's word 1
    word = np.arange(n_tok) - starts + 1  # m, 1-based position in its sentence
    sent = np.repeat(np.arange(len(gold)), lens)

    gh = _heads(gold)
    sh = _heads(system)
    scored = gh >= 0
    if punct != "include" and n_tok:
        scored &= ~np.concatenate([excluded(g, punct) for g in gold])
    grel = _rels(gold)
    srel = _rels(system)

    head_ok = gh == sh
    label_ok = np.fromiter((a == b for a, b in zip(grel, srel, strict=True)), bool, n_tok)
    ulabel_ok = np.fromiter(
        (
            a == b or a.partition(":")[0] == b.partition(":")[0]
            for a, b in zip(grel, srel, strict=True)
        ),
        bool,
        n_tok,
    )
    las_ok = head_ok & label_ok
    # predicted h -> m is also right if gold has m -> h: the gold head of h (flat index
    # starts + h - 1) is m
    has_head = sh > 0
    head_pos = np.where(has_head, starts + sh - 1, 0)
    reverse = has_head & (gh[head_pos] == word)
    gold_root = scored & (gh == 0)

    n_scored = int(scored.sum())
    n_sent = len(gold)
    head_err = np.bincount(sent, weights=scored & ~head_ok, minlength=n_sent)
    label_err = np.bincount(sent, weights=scored & ~las_ok, minlength=n_sent)

    sarc = gold_xy = None
    if other is not None:
        oh = _heads(other)
        other_ok = gh == oh
        sarc = percent(np.sum(scored & (sh == oh)), n_scored)
        gold_xy = (
            percent(np.sum(scored & head_ok & ~other_ok), n_scored),
            percent(np.sum(scored & other_ok & ~head_ok), n_scored),
        )
    per_label = per_distance = None
    if detail:
        per_label = _per_label(grel, srel, scored, head_ok, las_ok)
        per_distance = _per_distance(gh, word, scored, head_ok, las_ok)

    return Report(
        punct=punct,
        sentences=n_sent,
        tokens=n_tok,
        scored=n_scored,
        uas=percent(np.sum(scored & head_ok), n_scored),
        las=percent(np.sum(scored & las_ok), n_scored),
        las_universal=percent(np.sum(scored & head_ok & ulabel_ok), n_scored),
        u_uas=percent(np.sum(scored & (head_ok | reverse)), n_scored),
        root_accuracy=percent(np.sum(gold_root & (sh == 0)), np.sum(gold_root)),
        root_tokens=int(gold_root.sum()),
        complete_match=percent(np.sum(head_err == 0), n_sent if n_scored else 0),
        labeled_complete_match=percent(np.sum(label_err == 0), n_sent if n_scored else 0),
        sarc=sarc,
        gold_xy=gold_xy,
        per_label=per_label,
        per_distance=per_distance,
    )


def _per_label(
    grel: list[str], srel: list[str], scored: np.ndarray, head_ok: np.ndarray, las_ok: np.ndarray
) -> dict[str, LabelScore]:
    """Per gold DEPREL scores, labels sorted by decreasing count, then by name."""
    keep = np.flatnonzero(scored).tolist()
    gold_n: Counter[str] = Counter()
    sys_n: Counter[str] = Counter()
    both: Counter[str] = Counter()
    heads: Counter[str] = Counter()
    labeled: Counter[str] = Counter()
    for i in keep:
        g, s = grel[i], srel[i]
        gold_n[g] += 1
        sys_n[s] += 1
        both[g] += g == s
        heads[g] += bool(head_ok[i])
        labeled[g] += bool(las_ok[i])
    table = {}
    for label, count in sorted(gold_n.items(), key=lambda kv: (-kv[1], kv[0])):
        p = percent(both[label], sys_n[label])
        r = percent(both[label], count)
        table[label] = LabelScore(
            count=count,
            uas=percent(heads[label], count),
            las=percent(labeled[label], count),
            precision=p,
            recall=r,
            # recall 0 (precision 0, or n/a when the system never gives the label): F1 is 0
            f1=2 * p * r / (p + r) if p and r else 0.0,
        )
    return table


def _per_distance(
    gh: np.ndarray, word: np.ndarray, scored: np.ndarray, head_ok: np.ndarray, las_ok: np.ndarray
) -> dict[str, DistanceScore]:
    """Scores per gold arc-length bin (DISTANCE_BINS)."""
    dist = np.abs(gh - word)
    bins = np.select([gh == 0, dist == 1, dist == 2, dist <= 6], [0, 1, 2, 3], default=4)
    table = {}
    for b, name in enumerate(DISTANCE_BINS):
        mask = scored & (bins == b)
        count = int(mask.sum())
        table[name] = DistanceScore(
            count=count,
            uas=percent(np.sum(mask & head_ok), count),
            las=percent(np.sum(mask & las_ok), count),
        )
    return table


def format_table(report: Report) -> str:
    """The report as an aligned text table; its first line names the punctuation rule."""
    r = report
    f = format_score
    rows: list[tuple[str, str]] = [
        ("Punctuation", f"{r.punct}: {PUNCT_RULES[r.punct]}"),
        ("Sentences", f"{r.sentences}"),
        ("Tokens", f"{r.tokens} ({r.scored} scored, {r.excluded} excluded)"),
        ("UAS", f(r.uas)),
        ("LAS", f(r.las)),
        ("LAS (universal labels)", f(r.las_universal)),
        ("U-UAS (undirected)", f(r.u_uas)),
        ("Root accuracy", f"{f(r.root_accuracy)}  (of {r.root_tokens} gold root words)"),
        ("Complete match (UAS)", f(r.complete_match)),
        ("Complete match (LAS)", f(r.labeled_complete_match)),
    ]
    if r.gold_xy is not None:
        rows.append(("SARC (system vs other)", f(r.sarc)))
        rows.append(("gold(system, other)", f"({f(r.gold_xy[0], 0)}, {f(r.gold_xy[1], 0)})"))
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    if r.per_label is not None:
        lines += ["", "Per gold DEPREL (P/R/F1: label alone, heads ignored)"]
        lw = max([len("deprel"), *map(len, r.per_label)])
        lines.append(
            f"{'deprel':<{lw}}  {'count':>7}  {'UAS':>6}  {'LAS':>6}  {'P':>6}  {'R':>6}  {'F1':>6}"
        )
        for label, s in r.per_label.items():
            lines.append(
                f"{label:<{lw}}  {s.count:>7}  {f(s.uas)}  {f(s.las)}  "
                f"{f(s.precision)}  {f(s.recall)}  {f(s.f1)}"
            )
    if r.per_distance is not None:
        lines += ["", "Per gold arc length |h - m|"]
        lines.append(f"{'length':<6}  {'count':>7}  {'UAS':>6}  {'LAS':>6}")
        for name, d in r.per_distance.items():
            lines.append(f"{name:<6}  {d.count:>7}  {f(d.uas)}  {f(d.las)}")
    return "\n".join(lines)
