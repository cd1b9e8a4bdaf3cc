"""Tag scores: UPOS, XPOS, UFeats, AllTags and Lemmas of a system's words against gold.

Counted per word as the CoNLL 2018 UD shared-task scorer (``conll18_ud_eval.py``) counts them
with gold tokenization (its aligned accuracy, which is then also its F1), in percent:

- Words: every word (IDs 1..n) of every sentence; multiword-token lines (``3-4``) and empty
  nodes (``5.1``) are not words. Punctuation is always included: the punctuation rule of the
  parse scores (:mod:`dparse.punct`) does not apply to tags.
- UPOS, XPOS: the column is equal (CoNLL-X: CPOSTAG, POSTAG; Malt-TAB: POS for both).
- UFeats: FEATS restricted to :data:`UNIVERSAL_FEATURES` is equal, in any order. A feature
  counts by its whole name, the text before ``=``: a layered feature such as
  ``Gender[psor]=Masc`` is not ``Gender`` and is dropped, as is any other name outside the set
  (``NameType=Prs``, ``Typo=Yes``); values are compared as written (``Number=Plur,Sing`` is one
  value). ``_``, or only dropped features, is the empty set (shown as ``_``).
- AllTags: UPOS, XPOS and UFeats all equal.
- Lemmas: LEMMA equal, or the gold LEMMA is ``_`` (then any system lemma is correct).

A system file *carries* LEMMA, UPOS, XPOS or FEATS when it fills the column (anything but
``_``) on at least one word. A score whose column the system does not carry is not applicable:
None in :class:`TagReport`, ``null`` in JSON, ``n/a`` in text, as every score over zero items
(:mod:`dparse.metrics`). AllTags is applicable when the system carries at least one of UPOS,
XPOS and FEATS, and each of them that the gold file carries (so a treebank without XPOS, such
as da_ddt, still has AllTags).

Detail: for each applicable score, the (gold, predicted) pairs of its wrong words, most
frequent first (:data:`CONFUSIONS_SHOWN`, ties in order of the pair's text; an AllTags value is
``UPOS XPOS UFEATS``); given the FORMs seen in training, the accuracy on the words whose FORM
(as written, case-sensitive) is not among them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from dparse.conll import Sentence
from dparse.metrics import _check_aligned, format_score, percent

# the scorer's UNIVERSAL_FEATURES: the features of UD v2 that UFeats compares
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number",
    "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident",
    "Polarity", "Person", "Polite",
})
# score key (JSON) -> its name in text reports
TAG_SCORES = {"upos": "UPOS", "xpos": "XPOS", "ufeats": "UFeats", "alltags": "AllTags",
              "lemmas": "Lemmas"}
_TAG_COLUMNS = ("upos", "xpos", "feats")  # the Sentence columns of AllTags
_COLUMN_OF = {"upos": "upos", "xpos": "xpos", "ufeats": "feats", "lemmas": "lemma"}
CONFUSIONS_SHOWN = 10


@lru_cache(maxsize=1 << 16)
def universal_feats(feats: str) -> str:
    """``feats`` restricted to :data:`UNIVERSAL_FEATURES`, sorted, joined by ``|``; ``_`` when
    none is left (module doc)."""
    kept = sorted(f for f in feats.split("|") if f.partition("=")[0] in UNIVERSAL_FEATURES)
    return "|".join(kept) or "_"


def carries(sentences: Sequence[Sentence], column: str) -> bool:
    """Whether any word of ``sentences`` fills ``column`` (a Sentence attribute: ``lemma``,
    ``upos``, ``xpos`` or ``feats``) with something other than ``_``."""
    return any(value != "_" for s in sentences for value in getattr(s, column))


@dataclass(frozen=True)
class TagScore:
    """One tag score: ``correct`` of ``words`` (``accuracy`` in percent). With detail:
    ``confusions``, the top (gold, predicted, count) of the wrong words, and
    ``unseen_accuracy`` on the words unseen in training (None without the training FORMs)."""

    words: int
    correct: int
    accuracy: float | None
    confusions: list[tuple[str, str, int]] | None = None
    unseen_accuracy: float | None = None


@dataclass(frozen=True)
class TagReport:
    """The result of :func:`score_tags`: ``scores`` has every key of :data:`TAG_SCORES`, None
    where not applicable (the system does not carry the column); ``unseen_words`` counts the
    words unseen in training (None when not counted: no detail or no training FORMs)."""

    words: int
    scores: dict[str, TagScore | None]
    detail: bool = False
    unseen_words: int | None = None

    def as_dict(self) -> dict:
        """Plain data for JSON: each key of :data:`TAG_SCORES` with its accuracy (``null``
        when not applicable) and ``tag_words``; with detail, ``tag_unseen_words`` and
        ``tag_detail``, each score's counts, confusions (objects with gold, predicted, count)
        and unseen-word accuracy."""
        data: dict = {key: None if s is None else s.accuracy for key, s in self.scores.items()}
        data["tag_words"] = self.words
        if self.detail:
            data["tag_unseen_words"] = self.unseen_words
            table = {}
            for key, s in self.scores.items():
                table[key] = None if s is None else {
                    **asdict(s),
                    "confusions": [{"gold": g, "predicted": p, "count": n}
                                   for g, p, n in s.confusions or ()],
                }
            data["tag_detail"] = table
        return data


def _values(sentences: Sequence[Sentence], key: str) -> list[str]:
    """The value of every word that score ``key`` compares (UFeats: :func:`universal_feats`;
    AllTags: ``UPOS XPOS UFEATS``)."""
    if key == "alltags":
        cols = zip(*(_values(sentences, k) for k in ("upos", "xpos", "ufeats")), strict=True)
        return [" ".join(c) for c in cols]
    values = itertools.chain.from_iterable(getattr(s, _COLUMN_OF[key]) for s in sentences)
    return [universal_feats(v) for v in values] if key == "ufeats" else list(values)


def _applicable(gold: Sequence[Sentence], system: Sequence[Sentence], key: str) -> bool:
    """Whether score ``key`` applies: the system carries its columns (module doc)."""
    if key != "alltags":
        return carries(system, _COLUMN_OF[key])
    sys_cols = [c for c in _TAG_COLUMNS if carries(system, c)]
    return bool(sys_cols) and all(c in sys_cols for c in _TAG_COLUMNS if carries(gold, c))


def score_tags(
    gold: Sequence[Sentence],
    system: Sequence[Sentence],
    detail: bool = False,
    seen_forms: Collection[str] | None = None,
) -> TagReport:
    """Score the tags of ``system`` against ``gold`` (module doc).

    The sequences must hold the same sentences with the same words in order (InputError
    naming the system file otherwise, as :func:`dparse.metrics.evaluate`). ``detail`` adds the
    confusions and, given ``seen_forms`` (the FORMs of the training file), the unseen-word
    accuracies.
    """
    _check_aligned(gold, system, "system")
    forms = list(itertools.chain.from_iterable(s.form for s in gold))
    unseen = [f not in seen_forms for f in forms] if detail and seen_forms is not None else None
    scores: dict[str, TagScore | None] = {}
    for key in TAG_SCORES:
        if not _applicable(gold, system, key):
            scores[key] = None
            continue
        g, s = _values(gold, key), _values(system, key)
        if key == "lemmas":  # a gold lemma _ is right whatever the system says
            ok = [a == "_" or a == b for a, b in zip(g, s, strict=True)]
        else:
            ok = [a == b for a, b in zip(g, s, strict=True)]
        extra = {}
        if detail:
            wrong = Counter((a, b) for a, b, right in zip(g, s, ok, strict=True) if not right)
            top = sorted(wrong.items(), key=lambda kv: (-kv[1], kv[0]))[:CONFUSIONS_SHOWN]
            extra["confusions"] = [(a, b, n) for (a, b), n in top]
        if unseen is not None:
            extra["unseen_accuracy"] = percent(
                sum(right for right, new in zip(ok, unseen, strict=True) if new), sum(unseen))
        scores[key] = TagScore(len(ok), sum(ok), percent(sum(ok), len(ok)), **extra)
    return TagReport(len(forms), scores, detail, None if unseen is None else sum(unseen))


def format_tags(report: TagReport) -> str:
    """The tag scores as aligned text; with detail, the unseen-word accuracies (or a note
    that they need the training file) and each score's confusions."""
    f = format_score
    width = max(map(len, TAG_SCORES.values()))
    lines = ["Tags (as the CoNLL 2018 UD scorer counts): every word, punctuation included "
             "whatever --punct says", f"{'Words':<{width}}  {report.words:>6}"]
    for key, name in TAG_SCORES.items():
        s = report.scores[key]
        if s is None:
            lines.append(f"{name:<{width}}  {f(None)}  (not in the system file)")
        else:
            lines.append(f"{name:<{width}}  {f(s.accuracy)}  ({s.correct} of {s.words})")
    if not report.detail:
        return "\n".join(lines)
    carried = {TAG_SCORES[k]: s for k, s in report.scores.items() if s is not None}
    if report.unseen_words is None:
        lines += ["", "Accuracy on words unseen in training: left out (give --train FILE)"]
    elif carried:
        lines += ["", f"Accuracy on words unseen in training (FORM not in the training file): "
                      f"{report.unseen_words} of {report.words} words"]
        lines.append(f"{'':<{width}}  {'all':>6}  {'unseen':>6}")
        for name, s in carried.items():
            lines.append(f"{name:<{width}}  {f(s.accuracy)}  {f(s.unseen_accuracy)}")
    for name, s in carried.items():
        wrong = s.words - s.correct
        if not wrong:
            lines += ["", f"Most confused {name}: none, no word is wrong"]
            continue
        lines += ["", f"Most confused {name} (gold -> predicted): the top {len(s.confusions)} "
                      f"pairs of the {wrong} wrong words"]
        gw = max(len("gold"), *(len(g) for g, _, _ in s.confusions))
        lines.append(f"{'count':>7}  {'gold':<{gw}}  predicted")
        lines += [f"{n:>7}  {g:<{gw}}  {p}" for g, p, n in s.confusions]
    return "\n".join(lines)
