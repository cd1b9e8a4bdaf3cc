"""Arc pruners: which arcs h -> m a parser may use, decided before scoring.

- :class:`LengthDictionary` (Levi, Reichart and Rappoport 2016, section 5): for every directed
  (head POS, modifier POS, direction) triple, the longest arc seen in training; an arc longer
  than that is pruned. ``quantile < 1`` takes that quantile of the triple's arc lengths
  instead of the longest (one outlier no longer keeps every arc of its triple). The POS
  column is XPOS, or UPOS where XPOS is missing or too fine (``column="auto"``). Pairs seen
  fewer than ``min_count`` times back off to their UPOS pair, and UPOS pairs never seen to
  the longest arc of that direction seen at all, so that an unseen pair is never pruned
  blindly.
- :class:`TopKHeads`: a trained first-order model's k best heads of every word.
- :func:`keep_heads`: the rule of the second-order models' pruner
  (:class:`dparse.graph.pruner.Pruner`, applied to treebanks by :class:`EncodedPruner`;
  a saved model's: :func:`dparse.graph.pruner.model_pruner`): each
  word keeps its heads whose probability is at least a threshold (absolute, or relative to its
  best head's), at most ``top_k``. The probabilities are the head softmax of each word
  (:func:`head_softmax`) or the arc marginals of a tree CRF (:func:`tree_marginals`, the
  matrix-tree theorem, as TurboParser's pruner).

An undirected edge {i, j} is pruned only when both arcs i -> j and j -> i are
(:func:`undirected_edges`). :func:`prune_stats` reports the share of edges removed and the
share of gold arcs kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from dparse._ext.arcprob import MarginalsStatus, keep_heads_into, tree_marginals_into
from dparse.conll import Sentence
from dparse.errors import DparseError, InputError
from dparse.metrics import percent
from dparse.outputs import write_text
from dparse.postags import choose_column

ROOT_TAG = "<ROOT>"
DIRECTIONS = ("L", "R")  # L: the head is right of the modifier (h > m); R: h < m


class Pruner(Protocol):
    """Anything that says which arcs of a sentence are allowed."""

    def allowed(self, sent: Sentence) -> np.ndarray:
        """bool [n+1, n+1]: allowed[h, m] for the arc h -> m (column 0 and diagonal False)."""
        ...


def undirected_edges(allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges {i, j}, i < j, kept because i -> j or j -> i is allowed: int32 [K] twice."""
    either = np.triu(allowed | allowed.T, 1)
    i, j = np.nonzero(either)
    return i.astype(np.int32), j.astype(np.int32)


@dataclass
class LengthDictionary:
    """Longest arc per (head POS, modifier POS, direction), with back-off (see module doc).

    ``lengths[(h, m, d)] = (limit, count)`` over the column's tags (limit: the longest arc, or
    the ``quantile`` of the arc lengths); ``upos_lengths`` the same over UPOS (the back-off);
    ``max_length[d]`` the longest arc of direction d (the limit of unseen pairs).
    """

    column: str
    min_count: int = 1
    quantile: float = 1.0
    lengths: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    upos_lengths: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    max_length: dict[str, int] = field(default_factory=lambda: {"L": 0, "R": 0})

    @classmethod
    def learn(
        cls,
        sentences: Iterable[Sentence],
        column: str = "auto",
        min_count: int = 1,
        quantile: float = 1.0,
    ) -> LengthDictionary:
        """Read the gold trees of ``sentences``; column: "auto", "xpos" or "upos".

        InputError when there is no gold arc at all (no sentence, or no heads): the dictionary
        would prune every arc.
        """
        sentences = list(sentences)
        if column == "auto":
            column = choose_column(sentences)
        if column not in ("xpos", "upos"):
            raise ValueError(f"unknown POS column {column!r}; use auto, xpos or upos")
        if not 0.0 < quantile <= 1.0:
            raise ValueError(f"quantile must be in (0, 1], got {quantile}")
        out = cls(column, min_count, quantile)
        seen: tuple[dict, dict] = ({}, {})
        for sent in sentences:
            tags = [ROOT_TAG, *getattr(sent, column)]
            utags = [ROOT_TAG, *sent.upos]
            for m in range(1, len(tags)):
                h = int(sent.heads[m])
                if h < 0:
                    continue
                d = "R" if h < m else "L"
                length = abs(h - m)
                seen[0].setdefault((tags[h], tags[m], d), []).append(length)
                seen[1].setdefault((utags[h], utags[m], d), []).append(length)
                out.max_length[d] = max(out.max_length[d], length)
        if not seen[0]:
            raise InputError(sentences[0].source if sentences else "<no treebank>", None,
                             "no gold arcs (no sentence with heads) to learn a length "
                             "dictionary from: it would prune every arc")
        for table, lengths in zip((out.lengths, out.upos_lengths), seen, strict=True):
            for key, values in lengths.items():
                limit = np.quantile(values, quantile, method="higher")
                table[key] = (int(limit), len(values))
        return out

    def limit(self, head: str, mod: str, uhead: str, umod: str, d: str) -> int:
        """The longest allowed arc for these tags and direction, after back-off."""
        longest, count = self.lengths.get((head, mod, d), (0, 0))
        if count >= self.min_count:
            return longest
        longest, count = self.upos_lengths.get((uhead, umod, d), (0, 0))
        return longest if count > 0 else self.max_length[d]

    def allowed(self, sent: Sentence) -> np.ndarray:
        """bool [n+1, n+1]: the arcs no longer than their dictionary entry."""
        tags = [ROOT_TAG, *getattr(sent, self.column)]
        utags = [ROOT_TAG, *sent.upos]
        n1 = len(tags)
        # one limit per distinct (tag, utag) pair of head and modifier and direction
        kinds = {t: k for k, t in enumerate(dict.fromkeys(zip(tags, utags, strict=True)))}
        kind = np.array([kinds[t] for t in zip(tags, utags, strict=True)])
        table = np.empty((len(kinds), len(kinds), 2), dtype=np.int64)
        for (h, uh), a in kinds.items():
            for (m, um), b in kinds.items():
                for k, d in enumerate(DIRECTIONS):
                    table[a, b, k] = self.limit(h, m, uh, um, d)
        pos = np.arange(n1)
        right = (pos[:, None] < pos[None, :]).astype(np.int64)
        limit = table[kind[:, None], kind[None, :], right]
        ok = np.abs(pos[:, None] - pos[None, :]) <= limit
        ok[:, 0] = False
        np.fill_diagonal(ok, False)
        return ok

    def to_dict(self) -> dict:
        def rows(table: dict) -> list:
            return [[h, m, d, n, c] for (h, m, d), (n, c) in sorted(table.items())]

        return {
            "kind": "length-dictionary",
            "column": self.column,
            "min_count": self.min_count,
            "quantile": self.quantile,
            "max_length": self.max_length,
            "lengths": rows(self.lengths),
            "upos_lengths": rows(self.upos_lengths),
        }

    @classmethod
    def from_dict(cls, data: dict) -> LengthDictionary:
        def table(rows: list) -> dict:
            return {(h, m, d): (int(n), int(c)) for h, m, d, n, c in rows}

        return cls(
            data["column"],
            int(data["min_count"]),
            float(data["quantile"]),
            table(data["lengths"]),
            table(data["upos_lengths"]),
            {d: int(data["max_length"][d]) for d in DIRECTIONS},
        )

    def save(self, path: Path) -> None:
        """Write the dictionary as JSON, whole or not at all (:mod:`dparse.outputs`)."""
        write_text(path, json.dumps(self.to_dict(), indent=0) + "\n")

    @classmethod
    def load(cls, path: Path) -> LengthDictionary:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("kind") != "length-dictionary":
                raise KeyError("kind")
            return cls.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DparseError(f"{path}: not a length-dictionary file ({exc})") from exc


@dataclass
class TopKHeads:
    """A first-order model's k best heads of every word (``model``: an ArcFactoredModel)."""

    model: object
    k: int = 10

    def allowed(self, sent: Sentence) -> np.ndarray:
        arc, _ = self.model.score(self.model.vocab.encode(sent))
        arc = np.nan_to_num(arc, nan=-np.inf)
        np.fill_diagonal(arc, -np.inf)
        n1 = arc.shape[0]
        ok = np.zeros(arc.shape, dtype=bool)
        k = min(self.k, n1 - 1)
        top = np.argsort(-arc[:, 1:], axis=0, kind="stable")[:k]
        ok[top, np.arange(1, n1)[None, :]] = True
        np.fill_diagonal(ok, False)
        return ok


def head_softmax(arc: np.ndarray) -> np.ndarray:
    """float64 [n+1, n+1]: probs[h, m] = exp(arc[h, m]) / sum_h' exp(arc[h', m]) for the
    words m >= 1 (column 0 is 0); arc float64 [n+1, n+1] head first, -inf for no arc."""
    probs = np.zeros(arc.shape, dtype=np.float64)
    scores = arc[:, 1:]
    finite = np.isfinite(scores)
    top = np.where(finite, scores, -np.inf).max(axis=0, keepdims=True)
    e = np.where(finite, np.exp(np.where(finite, scores, 0.0) - top), 0.0)
    probs[:, 1:] = e / e.sum(axis=0, keepdims=True)
    return probs


def tree_marginals(arc: np.ndarray, single_root: bool = True) -> np.ndarray:
    """float64 [n+1, n+1]: mu[h, m] = P(h -> m in the tree) when P(tree) is proportional to
    exp(sum of its arc scores) over all non-projective trees (with ``single_root``: exactly one
    word on the root), by the matrix-tree theorem (Koo et al. 2007; Smith and Smith 2007).

    With W[h, m] = exp(arc[h, m]) (each column shifted by its max, which leaves mu unchanged),
    L the n x n Laplacian over the words (L[m, m] = sum_h W[h, m], L[h, m] = -W[h, m]; the root
    row's weights join the diagonal, or with ``single_root`` replace the first row), log Z =
    log det L, and mu is the derivative of log Z by the arc scores: with M = inv(L),
    mu[0, m] = W[0, m] M[m, m] (single root: M[m, 1]) and mu[h, m] = W[h, m] (M[m, m] -
    M[m, h]) for h >= 1, where an entry in a replaced first row counts 0. Word indices of M are
    1-based here.

    Precision: L is ill-conditioned when the trees score far below the product of each word's
    best arc (cycles among the best arcs), its condition number growing like exp of that gap;
    marginals are exact to ~1e-9 for score spreads up to ~15 and lose digits beyond.
    DparseError when no tree has a finite score or the result is not a distribution per word
    (a marginal below -1e-6, or a word's marginals not summing to 1 within 1e-6).
    """
    mu = np.empty(arc.shape, dtype=np.float64)
    status = tree_marginals_into(np.ascontiguousarray(arc, dtype=np.float64), single_root, mu)
    if status == MarginalsStatus.MARGINALS_NO_HEAD:
        raise DparseError("tree_marginals: a word has no possible head")
    if status == MarginalsStatus.MARGINALS_SINGULAR:
        raise DparseError("tree_marginals: no tree has a finite score")
    if status != MarginalsStatus.MARGINALS_OK:
        raise DparseError("tree_marginals: the Laplacian is too ill-conditioned")
    return mu


def keep_heads(probs: np.ndarray, possible: np.ndarray, top_k: int, threshold: float,
               relative: bool = False, root_by: np.ndarray | None = None) -> np.ndarray:
    """uint8 [n+1, n+1]: the arcs h -> m kept from head probabilities probs[h, m] (float64
    [n+1, n+1], column 0 ignored) among the ``possible`` ones (bool [n+1, n+1]).

    Word m keeps the heads whose probability is at least ``threshold`` (with ``relative``:
    ``threshold`` times the probability of m's best head), at most ``top_k`` of them by
    probability (ties at the k-th value all kept), and always its best head; the root keeps at
    least one child, the one with the highest ``root_by[m]`` (float [n+1]; default the root's
    probabilities), so that a single-rooted tree can exist.
    """
    allowed = np.empty(probs.shape, dtype=np.uint8)
    keep_heads_into(np.ascontiguousarray(probs, dtype=np.float64),
                    np.ascontiguousarray(possible, dtype=np.uint8), top_k, threshold, relative,
                    None if root_by is None else np.ascontiguousarray(root_by, dtype=np.float64),
                    allowed)
    return allowed


@dataclass
class EncodedPruner:
    """A pruner over encoded sentences (``pruner.allowed(enc)``, e.g. a second-order model's
    :class:`dparse.graph.pruner.Pruner`) applied to sentences through ``vocab``."""

    pruner: object
    vocab: object

    def allowed(self, sent: Sentence) -> np.ndarray:
        return self.pruner.allowed(self.vocab.encode(sent)).astype(bool)


@dataclass
class PruneStats:
    """What a pruner did to a treebank (percentages over all sentences; None, not
    applicable, over zero edges, arcs or gold arcs)."""

    sentences: int
    edges: int  # undirected edges {i, j} of the complete graphs
    edges_kept: int
    arcs: int  # directed arcs h -> m of the complete graphs
    arcs_kept: int
    gold: int
    gold_kept_undirected: int  # gold arcs whose undirected edge survives
    gold_kept_directed: int  # gold arcs that survive as arcs
    words: int = 0

    @property
    def heads_per_word(self) -> float | None:
        """Candidate heads kept per word (directed arcs kept / words)."""
        return self.arcs_kept / self.words if self.words else None

    @property
    def edges_removed_pct(self) -> float | None:
        return percent(self.edges - self.edges_kept, self.edges)

    @property
    def arcs_removed_pct(self) -> float | None:
        return percent(self.arcs - self.arcs_kept, self.arcs)

    @property
    def gold_kept_pct(self) -> float | None:
        return percent(self.gold_kept_undirected, self.gold)

    @property
    def gold_kept_directed_pct(self) -> float | None:
        return percent(self.gold_kept_directed, self.gold)

    def as_dict(self) -> dict:
        out = dict(self.__dict__)
        for name in ("edges_removed_pct", "arcs_removed_pct", "gold_kept_pct",
                     "gold_kept_directed_pct", "heads_per_word"):
            value = getattr(self, name)
            out[name] = None if value is None else round(value, 3)
        return out


def prune_stats(pruner: Pruner, sentences: Iterable[Sentence]) -> PruneStats:
    """Share of undirected edges (and directed arcs) removed, share of gold arcs kept, heads
    kept per word."""
    st = PruneStats(0, 0, 0, 0, 0, 0, 0, 0)
    for sent in sentences:
        ok = pruner.allowed(sent)
        n = len(sent)
        either = ok | ok.T
        st.sentences += 1
        st.words += n
        st.edges += n * (n + 1) // 2
        st.edges_kept += int(np.triu(either, 1).sum())
        st.arcs += n * n
        st.arcs_kept += int(ok.sum())
        m = np.arange(1, n + 1)
        h = sent.heads[1:]
        valid = h >= 0
        st.gold += int(valid.sum())
        st.gold_kept_undirected += int(either[h[valid], m[valid]].sum())
        st.gold_kept_directed += int(ok[h[valid], m[valid]].sum())
    return st
