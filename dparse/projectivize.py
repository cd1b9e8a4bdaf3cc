"""Projectivizing training trees by lifting non-projective arcs (Nivre and Nilsson 2005).

An arc h -> d is non-projective when some word strictly between h and d is not dominated by h.
Lifting it replaces d's head by h's head. Repeatedly lifting the shortest non-projective arc
(leftmost on ties) ends in a projective tree (Nivre and Nilsson 2005, Section 3.1); every lifted
word gets an ancestor of its original head as its head, and projective trees are left alone.
Easy-first parsing can only build projective trees, so its training trees are projectivized
first, as Goldberg and Elhadad (2010) do for CoNLL 2007 (there with Carreras's procedure).
Labels are kept as they are (no encoding for deprojectivization).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from dparse.conll import Sentence
from dparse.trees import is_projective


def _non_projective_arcs(heads: np.ndarray) -> list[int]:
    """The dependents d (1..n) whose arc heads[d] -> d is non-projective."""
    n = len(heads) - 1
    out = []
    for d in range(1, n + 1):
        h = int(heads[d])
        lo, hi = (h, d) if h < d else (d, h)
        for k in range(lo + 1, hi):
            a = k
            while a != h and a != 0:  # climb from k; stop at h (dominated) or the root
                a = int(heads[a])
            if a != h:
                out.append(d)
                break
    return out


def projectivize_heads(heads: np.ndarray) -> np.ndarray:
    """A projective version of the tree ``heads`` (int [n+1], heads[0] == -1) by lifting the
    shortest non-projective arc until none is left; projective trees come back unchanged."""
    heads = np.array(heads, dtype=np.int32)
    if is_projective(heads):
        return heads
    while True:
        arcs = _non_projective_arcs(heads)
        if not arcs:
            return heads
        d = min(arcs, key=lambda m: (abs(int(heads[m]) - m), m))
        heads[d] = heads[heads[d]]


@dataclass
class ProjectivizeReport:
    """What projectivizing a treebank changed."""

    sentences: int = 0
    tokens: int = 0
    non_projective_sentences: int = 0
    changed_arcs: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def projectivize(sentences: Iterable[Sentence]) -> tuple[list[Sentence], ProjectivizeReport]:
    """Projectivized copies of the sentences (HEAD changed only where needed) and a report:
    how many sentences were non-projective and how many words got a new head."""
    report = ProjectivizeReport()
    out = []
    for sent in sentences:
        report.sentences += 1
        report.tokens += len(sent)
        heads = np.asarray(sent.heads)
        if len(sent) < 3 or (heads[1:] < 0).any() or is_projective(heads):
            out.append(sent)
            continue
        new = projectivize_heads(heads)
        report.non_projective_sentences += 1
        report.changed_arcs += int((new != heads).sum())
        out.append(sent.with_parse(new, sent.deprels))
    return out, report
