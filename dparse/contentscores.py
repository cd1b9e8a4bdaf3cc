"""Content-word scores of the CoNLL 2018 UD shared task: CLAS, MLAS and BLEX.

Defined as in Zeman et al. (2018) and counted as its scorer (``conll18_ud_eval.py``) counts
them with gold tokenization (the same words in gold and system, :mod:`dparse.metrics` checks),
in percent:

- Relations are compared by their universal part (the DEPREL before ``:``: ``nmod:poss`` is
  ``nmod``). A word is a *content word* when that part is one of :data:`CONTENT_RELATIONS`
  (``fixed``, ``flat``, ``compound``, ``root`` ... included), a *function word* when it is one of
  :data:`FUNCTION_RELATIONS` (aux, case, cc, clf, cop, det, mark); ``punct`` is neither, nor is
  any label outside UD v2's (so data with other labels has no content word: scores n/a).
- Every word counts (IDs 1..n; multiword-token lines and empty nodes are not words),
  punctuation included whatever the punctuation rule of the parse scores says (punctuation
  attached as ``punct`` is never a content word anyway).
- CLAS: a gold content word is correct when the system gives it the gold head and the same
  universal relation (which is then a content relation too).
- MLAS: CLAS, and also the same UPOS, the same universal FEATS (as
  :func:`dparse.tagscores.universal_feats` restricts them) and the same function-word children:
  the words attached to it with a function relation, in word order, each with the same
  universal relation, UPOS and universal FEATS (the same list in gold and system).
- BLEX: CLAS, and also the same LEMMA, or the gold LEMMA is ``_``.
- Each score is precision (correct of the system's content words), recall (correct of the gold
  content words) and F1 = 2 correct / (gold + system), the figure the shared task reports. The
  two counts differ whenever the system gives a content relation to a word that gold gives
  another one, so precision and recall differ even with the same words.

Not applicable (None, ``null`` in JSON, ``n/a`` in text; :func:`dparse.metrics.percent`): a
score over zero content words, MLAS when the system file does not carry UPOS or FEATS while
gold does, BLEX when it does not carry LEMMA while gold does (:func:`dparse.tagscores.carries`;
the official scorer counts the words wrong there, as it gives 0 where there is no content word).
A system whose heads are not a tree is scored all the same (the official scorer refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import NamedTuple

from dparse.conll import Sentence
from dparse.metrics import _check_aligned, format_score, percent
from dparse.tagscores import carries, universal_feats

# Zeman et al. (2018), the CoNLL 2018 scorer's CONTENT_DEPRELS and FUNCTIONAL_DEPRELS
CONTENT_RELATIONS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated",
    "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed",
    "flat", "compound", "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep",
})
FUNCTION_RELATIONS = frozenset({"aux", "case", "cc", "clf", "cop", "det", "mark"})
# score key (JSON) -> its name in text reports
CONTENT_SCORES = {"clas": "CLAS", "mlas": "MLAS", "blex": "BLEX"}
# the columns each score compares besides head and relation (Sentence attributes)
_COLUMNS = {"clas": (), "mlas": ("upos", "feats"), "blex": ("lemma",)}


@dataclass(frozen=True)
class ContentScore:
    """One of CLAS, MLAS, BLEX: ``correct`` words of the ``gold`` and ``system`` content words;
    ``precision``, ``recall`` and ``f1`` in percent (None over zero words)."""

    correct: int
    gold: int
    system: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class ContentReport:
    """The result of :func:`score_content`: ``scores`` has every key of
    :data:`CONTENT_SCORES`, None where not applicable; ``missing`` names, for each such key,
    the columns the system lacks."""

    words: int
    scores: dict[str, ContentScore | None]
    missing: dict[str, list[str]]

    def as_dict(self) -> dict:
        """Plain data for JSON: each key of :data:`CONTENT_SCORES` with its F1 (``null`` when
        not applicable) and ``content_scores``, each score's counts, precision and recall."""
        data: dict = {key: None if s is None else s.f1 for key, s in self.scores.items()}
        data["content_scores"] = {key: None if s is None else asdict(s)
                                  for key, s in self.scores.items()}
        return data


class _Word(NamedTuple):
    """What the scores compare of one word (relations by their universal part)."""

    head: int
    rel: str
    content: bool  # rel is a content relation
    upos: str
    feats: str  # universal FEATS
    lemma: str
    children: tuple[tuple[int, str, str, str], ...]  # function-word children (module doc)


def _words(sent: Sentence) -> list[_Word]:
    """The :class:`_Word` of each word m = 1..n of ``sent`` (index m-1); a function-word child
    is (its position, relation, UPOS, universal FEATS), in word order."""
    rels = [r.partition(":")[0] for r in sent.deprels[1:]]
    feats = [universal_feats(f) for f in sent.feats]
    heads = sent.heads[1:].tolist()
    children: list[list[tuple[int, str, str, str]]] = [[] for _ in heads]
    for m, (h, rel) in enumerate(zip(heads, rels, strict=True), 1):
        if h > 0 and rel in FUNCTION_RELATIONS:
            children[h - 1].append((m, rel, sent.upos[m - 1], feats[m - 1]))
    return [_Word(h, rel, rel in CONTENT_RELATIONS, sent.upos[i], feats[i], sent.lemma[i],
                  tuple(children[i])) for i, (h, rel) in enumerate(zip(heads, rels, strict=True))]


def _applicable(gold: Sequence[Sentence], system: Sequence[Sentence]) -> dict[str, list[str]]:
    """For each score key, the columns it compares that gold carries and the system does not
    (empty: the score applies)."""
    lacking = {c for c in ("upos", "feats", "lemma") if carries(gold, c) and not carries(system, c)}
    return {key: [c.upper() for c in cols if c in lacking] for key, cols in _COLUMNS.items()}


def score_content(gold: Sequence[Sentence], system: Sequence[Sentence]) -> ContentReport:
    """CLAS, MLAS and BLEX of ``system`` against ``gold`` (module doc).

    The sequences must hold the same sentences with the same words in order (InputError naming
    the system file otherwise), and the system must have heads.
    """
    _check_aligned(gold, system, "system")
    n_gold = n_system = clas = mlas = blex = 0
    for g_sent, s_sent in zip(gold, system, strict=True):
        for g, s in zip(_words(g_sent), _words(s_sent), strict=True):
            n_gold += g.content
            n_system += s.content
            if not (g.content and g.head == s.head and g.rel == s.rel):
                continue
            clas += 1
            mlas += g.upos == s.upos and g.feats == s.feats and g.children == s.children
            blex += g.lemma == "_" or g.lemma == s.lemma
    missing = _applicable(gold, system)
    scores: dict[str, ContentScore | None] = {}
    for key, correct in (("clas", clas), ("mlas", mlas), ("blex", blex)):
        scores[key] = None if missing[key] else ContentScore(
            correct, n_gold, n_system, percent(correct, n_system), percent(correct, n_gold),
            percent(2 * correct, n_gold + n_system))
    return ContentReport(sum(map(len, gold)), scores,
                         {key: cols for key, cols in missing.items() if cols})


def format_content(report: ContentReport) -> str:
    """The scores as aligned text: F1, precision and recall with their counts."""
    f = format_score
    lines = ["CoNLL 2018 content-word scores (as its UD scorer counts): every word, punctuation "
             "included whatever --punct says",
             f"{'':<4}  {'F1':>6}  {'P':>6}  {'R':>6}"]
    for key, name in CONTENT_SCORES.items():
        s = report.scores[key]
        if s is None:
            lacks = " and ".join(report.missing[key])
            lines.append(f"{name:<4}  {f(None)}  (the system file has no {lacks}; gold has)")
        else:
            lines.append(f"{name:<4}  {f(s.f1)}  {f(s.precision)}  {f(s.recall)}  "
                         f"({s.correct} correct of {s.gold} gold, {s.system} system content "
                         "words)")
    return "\n".join(lines)
