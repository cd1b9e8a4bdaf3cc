"""Scoring a system's output against gold, as ``dparse eval`` and :func:`dparse.evaluate` do:
parse scores (:mod:`dparse.metrics`) over the tokens a punctuation rule keeps, the CoNLL 2018
content-word scores (:mod:`dparse.contentscores`) and tag scores (:mod:`dparse.tagscores`) over
every word, and with ``detail`` the breakdowns
(:mod:`dparse.reports.breakdowns`). :func:`score_system` takes every option of the command;
the API's :func:`dparse.evaluate` is a narrower door to it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dparse.conll import PathLike, Sentence, read_conll
from dparse.contentscores import CONTENT_SCORES, ContentReport, score_content
from dparse.errors import DparseError, InputError
from dparse.metrics import Report
from dparse.tagscores import TagReport

# The parse scores of eval's JSON report, null when the system has no heads.
PARSE_SCORES = ("uas", "las", "las_universal", "u_uas", "root_accuracy", "complete_match",
                "labeled_complete_match")
# A file (its path; ``-``: stdin) or the sentences themselves.
SentencesOrPath = PathLike | Iterable[Sentence]


@dataclass(frozen=True)
class Evaluation:
    """The scores of :func:`dparse.evaluate`, in percent (None where not applicable), as
    ``dparse eval --json`` reports them: :meth:`as_dict` is its JSON object.

    Parse scores and the content-word scores (``clas``, ``mlas``, ``blex``: F1) are None when
    the system has no heads (``system_heads`` False, a tagger's output); tag scores (``upos``,
    ``xpos``, ``ufeats``, ``alltags``, ``lemmas``) are None for the columns the system leaves
    empty, MLAS and BLEX too where they compare such a column (:mod:`dparse.contentscores`).
    ``report``, ``content_report`` and ``tag_report`` hold the details (punctuation rule, SARC,
    per-label scores with ``detail``; the content-word counts, precision and recall).

    Example::

        ev = dparse.evaluate("test.conllu", "test.parsed.conllu", punct="upos")
        print(ev.las, ev.uas, ev.as_dict()["punct_rule"])
    """

    sentences: int
    tokens: int
    system_heads: bool
    uas: float | None
    las: float | None
    las_universal: float | None
    u_uas: float | None
    root_accuracy: float | None
    complete_match: float | None
    labeled_complete_match: float | None
    upos: float | None
    xpos: float | None
    ufeats: float | None
    alltags: float | None
    lemmas: float | None
    clas: float | None
    mlas: float | None
    blex: float | None
    report: Report | None
    content_report: ContentReport | None
    tag_report: TagReport
    breakdowns: Any = None  # with detail: dparse.reports.breakdowns.Comparison

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``dparse eval --json`` (with ``--detail`` if asked for).

        Example::

            json.dumps(dparse.evaluate("gold.conllu", "system.conllu").as_dict())
        """
        if self.report is None:
            return {"sentences": self.sentences, "tokens": self.tokens, "system_heads": False,
                    **dict.fromkeys(PARSE_SCORES), **dict.fromkeys(CONTENT_SCORES),
                    "content_scores": None, **self.tag_report.as_dict()}
        data = {**self.report.as_dict(), "system_heads": True, **self.content_report.as_dict(),
                **self.tag_report.as_dict()}
        if self.tag_report.detail:
            data["breakdowns"] = self.breakdowns.as_dict()
        return data


def score_system(gold: SentencesOrPath, system: SentencesOrPath, punct: str,
                 others: Sequence[SentencesOrPath], detail: bool,
                 train: PathLike | None, fmt: str | None, encoding: str,
                 skip_invalid_trees: bool = False, compare: bool = False,
                 system_name: str | None = None) -> Evaluation:
    """Score ``system`` against ``gold`` (files or sentences; ``fmt`` and ``encoding`` for
    the files) with ``dparse eval``'s options: the ``punct`` rule; ``others``, more systems
    (the first for SARC and gold(x, y)); ``detail``: the breakdowns (``train``: the training
    file, for accuracy on unseen words); ``skip_invalid_trees`` (counted on stderr); and
    ``compare``: the breakdowns even without ``detail`` (for ``--plot``); ``system_name``: the
    system's name in the breakdowns (default: its path)."""
    from dparse.gold import keep_gold_trees
    from dparse.metrics import evaluate as score_parses
    from dparse.tagscores import score_tags

    if train is not None and not detail:
        raise DparseError("train= is for detail=True (accuracy on unseen words)")
    kw = {"fmt": fmt, "encoding": encoding}
    gold_sentences = _sentences(gold, kw, require_heads=True)
    parses = [_sentences(system, kw, require_heads=False),
              *(_sentences(path, kw, require_heads=True) for path in others)]
    gold_trees, parses = keep_gold_trees(gold_sentences, parses, skip_invalid_trees)
    seen = None
    if detail and train is not None:
        seen = {form for sent in read_conll(train, **kw, require_heads=False)
                for form in sent.form}
    tags = score_tags(gold_trees, parses[0], detail=detail, seen_forms=seen)
    tag_scores = {key: None if s is None else s.accuracy for key, s in tags.scores.items()}
    counts = {"sentences": len(gold_trees), "tokens": sum(map(len, gold_trees))}
    if not has_heads(parses[0]):
        return Evaluation(**counts, system_heads=False, **dict.fromkeys(PARSE_SCORES),
                          **tag_scores, **dict.fromkeys(CONTENT_SCORES), report=None,
                          content_report=None, tag_report=tags)
    report = score_parses(gold_trees, parses[0], punct=punct,
                          other=parses[1] if others else None, detail=detail)
    content = score_content(gold_trees, parses[0])
    comparison = None
    if detail or compare:
        from dparse.reports.breakdowns import compare_systems  # plain eval needs none

        names = [system_name or _name(system), *map(_name, others)]
        comparison = compare_systems(gold_trees, list(zip(names, parses, strict=True)), punct)
    return Evaluation(**counts, system_heads=True,
                      **{key: getattr(report, key) for key in PARSE_SCORES}, **tag_scores,
                      **{key: None if s is None else s.f1 for key, s in content.scores.items()},
                      report=report, content_report=content, tag_report=tags,
                      breakdowns=comparison)


def _sentences(source: SentencesOrPath, kw: dict[str, Any], require_heads: bool
               ) -> list[Sentence]:
    if isinstance(source, str | os.PathLike):
        return list(read_conll(source, **kw, require_heads=require_heads))
    return list(source)


def _name(source: SentencesOrPath) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else "<sentences>"


def has_heads(system: Sequence[Sentence]) -> bool:
    """Whether ``system`` is a parse: True when every word has a HEAD, False when none has (all
    ``_``); InputError naming the first word without one when only some have."""
    blank = sum(int((s.heads[1:] < 0).sum()) for s in system)
    if blank in (0, sum(map(len, system))):
        return blank == 0
    s, m = next((s, m) for s in system for m in range(1, len(s) + 1) if s.heads[m] < 0)
    raise InputError(s.source, s.line_of(m), "HEAD is _ but other words of this system file have "
                     "heads: give every word a HEAD (a parse) or none (tags alone)")
