"""Statistics and oracles of a forest file (what ``dparse forest`` prints): the sizes of the
forests, derivation counts, the share of distinct trees among the k best derivations (Table 3
of Hayashi et al. 2013) and, against gold trees, the 1-best (Viterbi), k-best oracle and forest
oracle UAS (their Figure 4).

UAS here is in percent over the words the punctuation rule keeps (dparse.punct; ``include``,
every word, is the paper's "UAS with punctuation"). The forest oracle maximizes the number of
correct heads among those words only (excluded words never count as correct).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

import numpy as np
from tqdm import tqdm

from dparse.conll import Sentence, read_conll
from dparse.errors import InputError
from dparse.hypergraph.forest import Forest
from dparse.hypergraph.forest_io import read_forests
from dparse.hypergraph.hypergraph import Hypergraph
from dparse.punct import PUNCT_RULES, excluded

__all__ = ["ForestReport", "forest_report", "format_forest_report"]


@dataclass
class ForestReport:
    """Totals over a forest file; the UAS fields only with gold and at least one scored word
    (else None)."""

    sentences: int = 0
    tokens: int = 0                 # words scored (all words without gold)
    vertices: int = 0
    hyperedges: int = 0
    derivations: float = 0.0        # sum over sentences of the goal's derivations
    kbest: int = 0                  # the k of the k-best lists
    kbest_extracted: int = 0        # derivations extracted (min(k, derivations) per sentence)
    kbest_distinct_trees: int = 0   # distinct trees among them
    punct: str | None = None
    onebest_uas: float | None = None
    kbest_oracle_uas: float | None = None
    forest_oracle_uas: float | None = None
    seconds: float = 0.0            # time spent in the algorithms (reading excluded)

    @property
    def avg_vertices(self) -> float:
        return self.vertices / max(self.sentences, 1)

    @property
    def avg_hyperedges(self) -> float:
        return self.hyperedges / max(self.sentences, 1)

    @property
    def kbest_distinct_trees_pct(self) -> float:
        return 100.0 * self.kbest_distinct_trees / max(self.kbest_extracted, 1)

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = asdict(self)
        data.update(avg_vertices=self.avg_vertices, avg_hyperedges=self.avg_hyperedges,
                    kbest_distinct_trees_pct=self.kbest_distinct_trees_pct)
        return data


def _aligned(forests: Iterator[tuple[str, Forest]], gold: Iterator[Sentence] | None,
             where: str, gold_where: str) -> Iterator[tuple[str, Forest, Sentence | None]]:
    """(sentence id, forest, gold sentence or None), checking counts and lengths agree."""
    count = 0
    for sid, forest in forests:
        count += 1
        sent = None
        if gold is not None:
            sent = next(gold, None)
            if sent is None:
                raise InputError(gold_where, None, f"has fewer sentences than the forest file "
                                 f"{where} ({count - 1}): the files must hold the same sentences")
            if len(sent) != forest.n:
                raise InputError(gold_where, sent.lineno, f"sentence {count} has {len(sent)} "
                                 f"words but forest {sid} of {where} has {forest.n} words")
        yield sid, forest, sent
    if gold is not None and next(gold, None) is not None:
        raise InputError(gold_where, None, f"has more sentences than the forest file {where} "
                         f"({count}): the files must hold the same sentences")


def forest_report(path: str | os.PathLike, gold: str | os.PathLike | None = None, k: int = 100,
                  punct: str = "include", gold_format: str | None = None,
                  gold_encoding: str = "utf-8", progress: bool = False) -> ForestReport:
    """Statistics of the forest file ``path`` and, with a ``gold`` CoNLL file holding the same
    sentences in order (format ``gold_format``, None: detected), the 1-best, ``k``-best oracle
    and forest oracle UAS."""
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    if punct not in PUNCT_RULES:
        raise ValueError(f"unknown punctuation rule {punct!r}")
    report = ForestReport(kbest=k, punct=punct if gold is not None else None)
    gold_sents = (None if gold is None
                  else read_conll(gold, fmt=gold_format, encoding=gold_encoding))
    items: Iterable[tuple[str, Forest, Sentence | None]] = _aligned(
        read_forests(path), gold_sents, os.fspath(path), os.fspath(gold or ""))
    onebest = kbest_hits = forest_hits = 0
    for _, forest, sent in tqdm(items, desc="forests", unit="sent", disable=not progress,
                                leave=False):
        start = time.perf_counter()
        graph = Hypergraph(forest, trusted=True)  # read_forests validated it
        report.sentences += 1
        report.vertices += forest.num_vertices
        report.hyperedges += forest.num_edges
        report.derivations += graph.count_derivations()
        _, trees, _ = graph.kbest(k)
        report.kbest_extracted += len(trees)
        report.kbest_distinct_trees += len(np.unique(trees, axis=0))
        if sent is None:
            report.tokens += forest.n
        else:
            gold_heads = sent.heads.astype(np.int32).copy()
            gold_heads[1:][excluded(sent, punct)] = -2  # never a correct head
            scored = gold_heads[1:] != -2
            report.tokens += int(scored.sum())
            onebest += int(np.sum(graph.viterbi()[1][1:] == gold_heads[1:]))
            kbest_hits += int(np.max(np.sum(trees[:, 1:] == gold_heads[1:], axis=1)))
            forest_hits += graph.oracle(gold_heads)[0]
        report.seconds += time.perf_counter() - start
    if gold is not None and report.tokens:  # no scored word: n/a (None)
        scale = 100.0 / report.tokens
        report.onebest_uas = onebest * scale
        report.kbest_oracle_uas = kbest_hits * scale
        report.forest_oracle_uas = forest_hits * scale
    return report


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def format_forest_report(report: ForestReport) -> str:
    """The report as an aligned two-column table."""
    rows = [
        ("sentences", f"{report.sentences}"),
        ("tokens" + (" scored" if report.punct else ""), f"{report.tokens}"),
        ("vertices (avg per sentence)", f"{report.avg_vertices:.1f}"),
        ("hyperedges (avg per sentence)", f"{report.avg_hyperedges:.1f}"),
        ("derivations (total)", f"{report.derivations:.6g}"),
        (f"distinct trees among {report.kbest}-best", f"{report.kbest_distinct_trees_pct:.1f} %"
         f" ({report.kbest_distinct_trees} of {report.kbest_extracted})"),
    ]
    if report.punct is not None:
        rows += [("punctuation", PUNCT_RULES[report.punct]),
                 ("1-best UAS", _percent(report.onebest_uas)),
                 (f"{report.kbest}-best oracle UAS", _percent(report.kbest_oracle_uas)),
                 ("forest oracle UAS", _percent(report.forest_oracle_uas))]
    rows.append(("seconds (algorithms)", f"{report.seconds:.2f}"))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
