"""The per-sentence oracle over several parsers' outputs (Levi, Reichart and Rappoport 2016,
Table 2).

For every sentence the oracle takes the output with the most correct heads (ties: the first
system given). Reported, in percent: each system's UAS, the oracle UAS, the share of sentences
on which each system is strictly better than every other one, and the share on which the best
count of correct heads is shared (ties). Tokens are scored under a punctuation rule of
:mod:`dparse.punct`, always decided on gold. A share over zero items (no scored token, no
sentence) is None, ``n/a`` in text, as in :mod:`dparse.metrics`.

The k-best oracle (:func:`kbest_oracle`) reads one parser's k-best lists instead (``dparse
parse --kbest K``: blocks with ``# kbest = i`` comments, best first): for each K from 1 to the
longest list, the UAS of the tree with the most correct heads among each sentence's first K.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from dparse.conll import Sentence
from dparse.errors import InputError
from dparse.metrics import _check_aligned, format_score, percent
from dparse.punct import PUNCT_RULES, excluded


@dataclass(frozen=True)
class OracleReport:
    """What :func:`oracle` found; lists are per system, in the order given."""

    systems: list[str]
    punct: str
    sentences: int
    scored: int
    uas: list[float | None]
    oracle_uas: float | None
    better: list[float | None]  # % sentences where the system beats every other one
    ties: float | None  # % sentences where two or more systems share the best count
    picked: list[int]  # sentences whose oracle parse comes from the system

    def as_dict(self) -> dict:
        data = asdict(self)
        data["punct_rule"] = PUNCT_RULES[self.punct]
        data["oracle_gain"] = self.gain
        return data

    @property
    def gain(self) -> float | None:
        """Oracle UAS minus the first system's UAS (None without scored tokens)."""
        if self.oracle_uas is None or not self.uas or self.uas[0] is None:
            return None
        return self.oracle_uas - self.uas[0]


def correct_heads(gold: Sentence, system: Sentence, keep: np.ndarray) -> int:
    """Number of scored words (``keep``: bool [n]) whose head ``system`` gets right."""
    return int(((gold.heads[1:] == system.heads[1:]) & keep).sum())


def oracle(
    gold: Sequence[Sentence],
    systems: Sequence[Sequence[Sentence]],
    names: Sequence[str] | None = None,
    punct: str = "include",
) -> OracleReport:
    """The per-sentence oracle of ``systems`` (each aligned with ``gold``) and its figures.

    Raises InputError (naming the file and line) when a system's sentences or words differ
    from gold's, ValueError for fewer than two systems or an unknown punctuation rule.
    """
    if len(systems) < 2:
        raise ValueError("the oracle needs at least two systems")
    if punct not in PUNCT_RULES:
        raise ValueError(f"unknown punctuation rule {punct!r}; expected one of {list(PUNCT_RULES)}")
    names = list(names) if names is not None else [f"system{k + 1}" for k in range(len(systems))]
    for name, system in zip(names, systems, strict=True):
        _check_aligned(gold, system, name)
    k = len(systems)
    counts = np.zeros((len(gold), k), dtype=np.int64)
    scored = 0
    for i, g in enumerate(gold):
        keep = ~excluded(g, punct)
        scored += int(keep.sum())
        for s in range(k):
            counts[i, s] = correct_heads(g, systems[s][i], keep)
    best = counts.max(axis=1) if len(gold) else np.zeros(0, dtype=np.int64)
    n_best = (counts == best[:, None]).sum(axis=1)
    pick = counts.argmax(axis=1)  # first system on ties
    sentences = len(gold)
    return OracleReport(
        systems=names,
        punct=punct,
        sentences=sentences,
        scored=scored,
        uas=[percent(counts[:, s].sum(), scored) for s in range(k)],
        oracle_uas=percent(best.sum(), scored),
        better=[percent(int(((pick == s) & (n_best == 1)).sum()), sentences) for s in range(k)],
        ties=percent(int((n_best > 1).sum()), sentences),
        picked=[int((pick == s).sum()) for s in range(k)],
    )


def format_oracle(report: OracleReport) -> str:
    """A Markdown table; for two systems the Table-2 layout of Levi et al. (2016): the share of
    sentences each system parses better, then the oracle UAS with its gain over the first."""
    f = format_score
    gain = f(report.gain, 0, sign=True)
    lines = [f"Per-sentence oracle, {report.sentences} sentences, {report.scored} tokens "
             f"({PUNCT_RULES[report.punct]})", ""]
    if len(report.systems) == 2:
        lines += ["| | % sentences parsed better | UAS |", "|---|---:|---:|"]
        for name, better, uas in zip(report.systems, report.better, report.uas, strict=True):
            lines.append(f"| {name} | {f(better, 0, 1)} | {f(uas, 0)} |")
        lines.append(f"| (ties) | {f(report.ties, 0, 1)} | |")
        lines.append(f"| Oracle | | {f(report.oracle_uas, 0)} ({gain}) |")
        return "\n".join(lines)
    lines += ["| system | UAS | % sentences strictly best | sentences picked |",
              "|---|---:|---:|---:|"]
    for name, uas, better, picked in zip(report.systems, report.uas, report.better,
                                         report.picked, strict=True):
        lines.append(f"| {name} | {f(uas, 0)} | {f(better, 0, 1)} | {picked} |")
    lines.append(f"| (ties) | | {f(report.ties, 0, 1)} | |")
    lines.append(f"| Oracle | {f(report.oracle_uas, 0)} ({gain} over {report.systems[0]}) | | |")
    return "\n".join(lines)


KBEST_COMMENT = "# kbest = "


@dataclass(frozen=True)
class KBestOracleReport:
    """What :func:`kbest_oracle` found: ``uas[K - 1]`` is the oracle UAS over each sentence's
    first K trees, K = 1..``k`` (``k``: the longest list; ``trees``: the trees read)."""

    punct: str
    sentences: int
    scored: int
    k: int
    trees: int
    uas: list[float | None]

    def as_dict(self) -> dict:
        data = asdict(self)
        data["punct_rule"] = PUNCT_RULES[self.punct]
        return data


def _kbest_rank(sent: Sentence) -> int:
    """The i of a k-best block's ``# kbest = i`` comment; InputError without one."""
    for line in sent.comments:
        if line.startswith(KBEST_COMMENT):
            try:
                return int(line[len(KBEST_COMMENT):])
            except ValueError:
                break
    raise InputError(sent.source, sent.lineno,
                     "a k-best file's sentence needs a '# kbest = i' comment (i = 1, 2, ...: "
                     "dparse parse --kbest K writes them)")


def kbest_lists(system: Sequence[Sentence]) -> list[list[Sentence]]:
    """The sentences of a k-best file grouped into one list per input sentence: a list starts
    at ``# kbest = 1`` and goes on with 2, 3, ...; InputError for a block out of that order."""
    lists: list[list[Sentence]] = []
    for sent in system:
        rank = _kbest_rank(sent)
        if rank == 1:
            lists.append([sent])
        elif lists and rank == len(lists[-1]) + 1:
            lists[-1].append(sent)
        else:
            expected = "1" if not lists else f"1 or {len(lists[-1]) + 1}"
            raise InputError(sent.source, sent.lineno,
                             f"'# kbest = {rank}' where {expected} was expected")
    return lists


def kbest_oracle(gold: Sequence[Sentence], lists: Sequence[Sequence[Sentence]],
                 punct: str = "include", name: str = "k-best") -> KBestOracleReport:
    """The k-best oracle UAS of ``lists`` (each sentence's trees, best first, aligned with
    ``gold``; :func:`kbest_lists`) for K = 1 up to the longest list. InputError (naming the
    file and line) when the sentences or words differ from gold's."""
    if punct not in PUNCT_RULES:
        raise ValueError(f"unknown punctuation rule {punct!r}; expected one of {list(PUNCT_RULES)}")
    _check_aligned(gold, [trees[0] for trees in lists], name)
    for trees in lists:
        _check_aligned([trees[0]] * len(trees), trees, name)
    k = max((len(trees) for trees in lists), default=0)
    best = np.zeros(k, dtype=np.int64)  # correct heads of the best of the first K, summed
    scored = 0
    for g, trees in zip(gold, lists, strict=True):
        keep = ~excluded(g, punct)
        scored += int(keep.sum())
        counts = np.maximum.accumulate([correct_heads(g, t, keep) for t in trees])
        best[: len(trees)] += counts
        best[len(trees):] += counts[-1]  # a shorter list: all its trees
    return KBestOracleReport(punct=punct, sentences=len(gold), scored=scored, k=k,
                             trees=sum(len(trees) for trees in lists),
                             uas=[percent(int(c), scored) for c in best])


def format_kbest_oracle(report: KBestOracleReport) -> str:
    """A Markdown table: the oracle UAS of the first K trees for each K."""
    lines = [f"k-best oracle, {report.sentences} sentences, {report.scored} tokens "
             f"({PUNCT_RULES[report.punct]}), {report.trees} trees", "",
             "| K | oracle UAS |", "|---:|---:|"]
    lines += [f"| {k} | {format_score(uas, 0)} |" for k, uas in enumerate(report.uas, 1)]
    return "\n".join(lines)
