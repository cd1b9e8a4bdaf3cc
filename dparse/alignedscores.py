"""The CoNLL 2018 UD shared task's scores of a system that tokenized and split the text itself:
``dparse eval`` when the system's sentences or words are not gold's (or with ``--aligned``).

The system's tokens, words and sentences are aligned with gold's through their characters
(:mod:`dparse.wordalign`); each score is then precision (correct of the system's items),
recall (correct of gold's) and F1 = 2 correct / (gold + system), in percent, counted as the
shared task's scorer counts them:

- Tokens, Sentences: items whose spans match. Words: matched words (all of both files').
- UPOS, XPOS, UFeats, AllTags, Lemmas: matched words whose tags agree, as
  :mod:`dparse.tagscores` compares them (gold LEMMA ``_``: any lemma is right).
- UAS: matched words whose heads agree: both the root, or the system's head is the word
  matched to gold's head (a head left unmatched is wrong). LAS: also the universal relation
  (the DEPREL before ``:``), the shared task's LAS; ``las``, also the whole DEPREL (as
  :mod:`dparse.metrics`' LAS).
- CLAS, MLAS, BLEX: as :mod:`dparse.contentscores` defines them, over gold's content words and
  all of the system's content words; a matched gold content word is correct when its head and
  universal relation agree (MLAS: also UPOS, universal FEATS and its function-word children,
  each the word matched to gold's child with the same relation, UPOS and FEATS; BLEX: also
  the LEMMA).

With gold's words (:func:`dparse.wordalign.same_words`) every word matches its copy, so
precision, recall and F1 are the accuracies ``dparse eval`` gives with ``--punct include``.
Not applicable (None): a score over zero items; the tag scores whose columns the system file
does not carry, MLAS and BLEX as in :mod:`dparse.contentscores`; UAS, LAS, CLAS, MLAS and BLEX
when the system has no heads (a tagger's output). Gold sentences must be trees (as for
``dparse eval``); the system's heads need not be.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from dparse.conll import Sentence
from dparse.contentscores import CONTENT_RELATIONS, FUNCTION_RELATIONS, ContentScore
from dparse.contentscores import _applicable as content_missing
from dparse.evaluation import has_heads
from dparse.gold import check_trees
from dparse.metrics import format_score, percent
from dparse.tagscores import _applicable as tag_applicable
from dparse.tagscores import universal_feats
from dparse.wordalign import UNALIGNED, Segmentation, align, check_same_text, segment

# score key (JSON) -> its name in text reports, in the order of the report
ALIGNED_SCORES = {
    "tokens": "Tokens", "sentences": "Sentences", "words": "Words", "upos": "UPOS",
    "xpos": "XPOS", "ufeats": "UFeats", "alltags": "AllTags", "lemmas": "Lemmas", "uas": "UAS",
    "las_universal": "LAS", "las": "LAS (whole DEPREL)", "clas": "CLAS", "mlas": "MLAS",
    "blex": "BLEX",
}
_TAG_KEYS = ("upos", "xpos", "ufeats", "alltags", "lemmas")
_PARSE_KEYS = ("uas", "las_universal", "las", "clas", "mlas", "blex")
ROOT = -2  # a word's head when it is the root (word indices are >= 0, UNALIGNED is -1)


@dataclass(frozen=True)
class AlignedReport:
    """The result of :func:`score_aligned`: ``scores`` has every key of
    :data:`ALIGNED_SCORES` (counts, precision, recall and F1 in a
    :class:`~dparse.contentscores.ContentScore`), None where not applicable; ``missing`` names,
    for each such key that has a reason, what the system file lacks (columns, or ``HEAD``)."""

    gold_sentences: int
    system_sentences: int
    gold_words: int
    system_words: int
    system_heads: bool
    scores: dict[str, ContentScore | None]
    missing: dict[str, list[str]]

    def as_dict(self) -> dict:
        """The JSON object of ``dparse eval`` on a system with its own tokenization: the
        counts, each key of :data:`ALIGNED_SCORES` with its F1 (``null`` when not applicable)
        and ``aligned_scores``, each score's counts, precision, recall and F1."""
        return {
            "alignment": "conll18", "gold_sentences": self.gold_sentences,
            "system_sentences": self.system_sentences, "gold_words": self.gold_words,
            "system_words": self.system_words, "system_heads": self.system_heads,
            **{key: None if s is None else s.f1 for key, s in self.scores.items()},
            "aligned_scores": {key: None if s is None else asdict(s)
                               for key, s in self.scores.items()},
        }


def _score(correct: int, gold: int, system: int) -> ContentScore:
    return ContentScore(correct, gold, system, percent(correct, system), percent(correct, gold),
                        percent(2 * correct, gold + system))


@dataclass
class _Columns:
    """What the scores compare of every word of a file (index: the word's in the file):
    the head (a word index or :data:`ROOT`; meaningless without heads), relation and its
    universal part, tags, and the function-word children of each word, in word order."""

    head: list[int]
    deprel: list[str]
    rel: list[str]
    upos: list[str]
    xpos: list[str]
    ufeats: list[str]
    lemma: list[str]
    children: list[list[int]]


def _columns(sentences: Sequence[Sentence], seg: Segmentation) -> _Columns:
    if sentences:
        lengths = np.array([len(sent) for sent in sentences])
        local = np.concatenate([sent.heads[1:] for sent in sentences]).astype(np.int64)
        first = np.repeat(np.asarray(seg.first_word, dtype=np.int64), lengths)
        head = np.where(local == 0, ROOT, first + local - 1).tolist()
    else:
        head = []
    deprel = list(itertools.chain.from_iterable(sent.deprels[1:] for sent in sentences))
    rel = [d.partition(":")[0] for d in deprel]
    children: list[list[int]] = [[] for _ in head]
    for w, (h, r) in enumerate(zip(head, rel, strict=True)):
        if r in FUNCTION_RELATIONS and h >= 0:
            children[h].append(w)

    def flat(name: str) -> list[str]:
        return list(itertools.chain.from_iterable(getattr(s, name) for s in sentences))

    return _Columns(head, deprel, rel, flat("upos"), flat("xpos"),
                    [universal_feats(f) for f in flat("feats")], flat("lemma"), children)


def score_aligned(gold: Sequence[Sentence], system: Sequence[Sentence]) -> AlignedReport:
    """The scores of ``system`` against ``gold`` through the CoNLL 2018 alignment (module doc).

    InputError when a gold sentence is not a tree, when the system's text is not gold's
    (naming the first differing character), or when only some system words have heads.
    """
    for _ in check_trees(gold):
        pass
    heads = has_heads(system)
    g_seg, s_seg = segment(gold), segment(system)
    check_same_text(g_seg, s_seg)
    match = align(g_seg, s_seg)
    gc, sc = _columns(gold, g_seg), _columns(system, s_seg)
    to_gold = [UNALIGNED] * len(s_seg.word_start)
    for g, s in enumerate(match):
        if s != UNALIGNED:
            to_gold[s] = g
    pairs = [(g, s) for g, s in enumerate(match) if s != UNALIGNED]
    n_gold, n_system = len(g_seg.word_start), len(s_seg.word_start)

    def agree(gold_column: list, system_column: list) -> list[bool]:
        """For each matched pair, whether the two words' values agree."""
        return [gold_column[g] == system_column[s] for g, s in pairs]

    upos, xpos, ufeats = agree(gc.upos, sc.upos), agree(gc.xpos, sc.xpos), \
        agree(gc.ufeats, sc.ufeats)
    lemma = [gc.lemma[g] == "_" or ok for (g, _), ok in zip(pairs, agree(gc.lemma, sc.lemma),
                                                             strict=True)]
    alltags = [a and b and c for a, b, c in zip(upos, xpos, ufeats, strict=True)]
    correct = {"upos": sum(upos), "xpos": sum(xpos), "ufeats": sum(ufeats),
               "alltags": sum(alltags), "lemmas": sum(lemma)}
    # the system's heads as the gold words matched to them (ROOT, or UNALIGNED)
    heads_in_gold = [h if h == ROOT else to_gold[h] for h in sc.head] if heads else []
    attached = [k for k, (g, s) in enumerate(pairs) if heads and gc.head[g] == heads_in_gold[s]]
    labeled = [k for k in attached if gc.rel[pairs[k][0]] == sc.rel[pairs[k][1]]]
    content = [k for k in labeled if gc.rel[pairs[k][0]] in CONTENT_RELATIONS]
    correct.update(uas=len(attached), las_universal=len(labeled), clas=len(content),
                   las=sum(gc.deprel[pairs[k][0]] == sc.deprel[pairs[k][1]] for k in attached),
                   blex=sum(lemma[k] for k in content))
    correct["mlas"] = sum(
        upos[k] and ufeats[k]
        and [(c, gc.rel[c], gc.upos[c], gc.ufeats[c]) for c in gc.children[pairs[k][0]]]
        == [(to_gold[c], sc.rel[c], sc.upos[c], sc.ufeats[c]) for c in sc.children[pairs[k][1]]]
        for k in content)

    totals = {
        "tokens": (len(set(zip(s_seg.token_start, s_seg.token_end, strict=True))
                       & set(zip(g_seg.token_start, g_seg.token_end, strict=True))),
                   len(g_seg.token_start), len(s_seg.token_start)),
        "sentences": (len(set(g_seg.sentence_spans) & set(s_seg.sentence_spans)),
                      len(g_seg.sentence_spans), len(s_seg.sentence_spans)),
        "words": (len(pairs), n_gold, n_system),
    }
    n_content = (sum(r in CONTENT_RELATIONS for r in gc.rel),
                 sum(r in CONTENT_RELATIONS for r in sc.rel))
    for key in ALIGNED_SCORES:
        if key not in totals:
            totals[key] = (correct[key], *(n_content if key in ("clas", "mlas", "blex")
                                           else (n_gold, n_system)))
    missing = {key: cols for key, cols in content_missing(gold, system).items() if cols}
    if not heads:
        missing.update(dict.fromkeys(_PARSE_KEYS, ["HEAD"]))
    scores: dict[str, ContentScore | None] = {}
    for key, counts in totals.items():
        not_carried = key in _TAG_KEYS and not tag_applicable(gold, system, key)
        scores[key] = None if not_carried or key in missing else _score(*counts)
    return AlignedReport(len(gold), len(system), n_gold, n_system, heads,
                         {key: scores[key] for key in ALIGNED_SCORES}, missing)


def format_aligned(report: AlignedReport) -> str:
    """The scores as aligned text: F1, precision and recall with their counts."""
    f = format_score
    width = max(map(len, ALIGNED_SCORES.values()))
    lines = [f"CoNLL 2018 scores through the shared task's alignment of the system's words with "
             f"gold's by their characters: gold {report.gold_sentences} sentences, "
             f"{report.gold_words} words; system {report.system_sentences} sentences, "
             f"{report.system_words} words; every word, punctuation included",
             f"{'':<{width}}  {'F1':>6}  {'P':>6}  {'R':>6}  {'correct':>7}  {'gold':>7}  "
             f"{'system':>7}"]
    for key, name in ALIGNED_SCORES.items():
        s = report.scores[key]
        if s is None:
            why = (f"the system file has no {' and '.join(report.missing[key])}"
                   if key in report.missing else "not in the system file")
            lines.append(f"{name:<{width}}  {f(None)}  ({why})")
        else:
            lines.append(f"{name:<{width}}  {f(s.f1)}  {f(s.precision)}  {f(s.recall)}  "
                         f"{s.correct:>7}  {s.gold:>7}  {s.system:>7}")
    return "\n".join(lines)
