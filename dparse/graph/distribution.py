"""The distribution over trees behind a graph model's head probabilities: which one a model
and its decoder give, its arc marginals at a temperature, its log partition function and a
tree's score under it.

p(tree) ∝ exp(score(tree) / T), score(tree) the sum of the tree's parts that the decoder
reads (docs/design.md, 'Score arrays and parts'):

- a first-order decoder (arc parts only): the arc scores, over the trees the decoder returns
  (projective for eisner, any for cle; single-root as the decoder is),
  :func:`dparse.graph.marginals.arc_marginals`;
- a decoder of sibling and grandparent parts (eisner2-sib, eisner2-sibgp, dd2, bgi): arc,
  sibling and grandparent parts over projective trees,
  :func:`dparse.graph.marginals2.second_order_marginals`. Exact for the projective decoders
  (the distribution whose mode they find); for a non-projective one (dd2, bgi) an
  approximation, its non-projective trees left out (exact second-order marginals over every
  tree are intractable: McDonald and Satta 2007). Measured on en_ewt, these calibrate dd2's
  heads where the first-order marginals of its arc parts do not: results/marginals-en_ewt.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dparse.decoders import Decoder

SECOND_ORDER_PARTS = ("sib", "grand")


@dataclass(frozen=True)
class PartScores:
    """One sentence's part scores as a distribution reads them: ``arc`` float64 [n+1, n+1]
    and the second-order arrays (float64 [n+1, n+1, n+1] or None) stored sparse: flat indices
    int64 and values of their non-zero entries (a pruned sentence's few), so that a treebank's
    fit fits in memory."""

    arc: np.ndarray
    sib: tuple[np.ndarray, np.ndarray] | None = None
    grand: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, arc: np.ndarray, parts: dict[str, np.ndarray]) -> PartScores:
        """From score_parts' arc scores and part arrays (those a distribution reads)."""
        def sparse(name: str) -> tuple[np.ndarray, np.ndarray] | None:
            if name not in parts:
                return None
            flat = parts[name].ravel()
            index = np.flatnonzero(flat)
            return index, flat[index]

        return cls(arc.copy(), sparse("sib"), sparse("grand"))

    def dense(self, name: str, temperature: float) -> np.ndarray | None:
        """The part array ``name`` divided by ``temperature`` (None if there is none)."""
        stored = getattr(self, name)
        if stored is None:
            return None
        n1 = len(self.arc)
        out = np.zeros(n1 ** 3)
        out[stored[0]] = stored[1] / temperature
        return out.reshape(n1, n1, n1)


@dataclass(frozen=True)
class TreeDistribution:
    """p(tree) ∝ exp(score / T) over the trees of one kind (module doc): ``second_order``
    reads sibling and grandparent parts (projective trees), else arcs only over
    ``projective`` trees or every tree; ``single_root``: one word attached to the root."""

    projective: bool
    single_root: bool
    second_order: bool

    @classmethod
    def of(cls, decoder: Decoder, single_root: bool) -> TreeDistribution:
        """The distribution of a decoder's parts and kind of tree."""
        second = any(p in decoder.parts for p in SECOND_ORDER_PARTS)
        return cls(decoder.projective or second, single_root, second)

    def parts(self, arc: np.ndarray, parts: dict[str, np.ndarray]) -> PartScores:
        """The scores this distribution reads, from score_parts' output."""
        kept = {k: v for k, v in parts.items() if k in SECOND_ORDER_PARTS}
        return PartScores.of(arc, kept if self.second_order else {})

    def log_partition(self, scores: PartScores, temperature: float = 1.0) -> float:
        """log Z of ``scores / temperature`` (NoTreeError if every tree holds a disallowed
        part)."""
        arc = scores.arc / temperature
        if self.second_order:
            from dparse.graph.marginals2 import second_order_log_partition

            return second_order_log_partition(arc, scores.dense("sib", temperature),
                                              scores.dense("grand", temperature),
                                              self.single_root)
        from dparse.graph.marginals import log_partition

        return log_partition(arc, self.projective, self.single_root)

    def tree_score(self, scores: PartScores, heads: np.ndarray) -> float:
        """The score of the tree ``heads`` (int [n+1]) at T = 1: its arcs' and, second order,
        its sibling and grandparent parts' (-inf through a disallowed part)."""
        heads = np.asarray(heads)
        n1 = len(heads)
        words = np.arange(1, n1)
        arc = np.where(np.isnan(scores.arc), -np.inf, scores.arc)
        total = float(arc[heads[1:], words].sum())
        if not self.second_order:
            return total
        for stored, index in zip((scores.sib, scores.grand), tree_parts(heads), strict=True):
            if stored is None or not len(index) or not len(stored[0]):
                continue  # no such parts, or all zero
            at = np.minimum(np.searchsorted(stored[0], index), len(stored[0]) - 1)
            values = np.where(stored[0][at] == index, stored[1][at], 0.0)
            total += float(np.where(np.isnan(values), -np.inf, values).sum())
        return total

    def marginals(self, arc: np.ndarray, parts: dict[str, np.ndarray], heads: np.ndarray,
                  temperature: float = 1.0) -> np.ndarray:
        """P(h -> m) float64 [n+1, n+1] at ``temperature``, from score_parts' arc scores and
        part arrays. When every tree holds a disallowed part (a pruner that left none of the
        kind), the arcs of ``heads`` (the decoded tree, int [n+1]) that are disallowed take the
        lowest arc score of the sentence, and if that is not enough (a non-projective decoded
        tree under a projective distribution), every disallowed arc does: the distribution
        then exists and holds the decoded tree's arcs."""
        from dparse.graph.marginals import NoTreeError

        arc = arc / temperature
        higher = [parts[name] / temperature if self.second_order and name in parts else None
                  for name in SECOND_ORDER_PARTS]
        try:
            return self._marginals(arc, *higher)
        except NoTreeError:
            words = np.arange(1, len(heads))
            finite = np.isfinite(arc)
            finite[words, words] = False
            lowest = arc[:, 1:][finite[:, 1:]].min(initial=0.0)
            missing = ~np.isfinite(arc[heads[1:], words])
            arc[heads[1:][missing], words[missing]] = lowest
        try:
            return self._marginals(arc, *higher)
        except NoTreeError:
            arc[~np.isfinite(arc)] = lowest
            return self._marginals(arc, *higher)

    def _marginals(self, arc: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None
                   ) -> np.ndarray:
        if self.second_order:
            from dparse.graph.marginals2 import second_order_marginals

            return second_order_marginals(arc, sib, grand, self.single_root)[1]
        from dparse.graph.marginals import arc_marginals

        return arc_marginals(arc, self.projective, self.single_root)[1]


def tree_parts(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into [n+1]^3 arrays of a tree's sibling parts (h, m, s) and grandparent
    parts (g, h, m), as eisner2.pyx defines them: each head's modifiers on one side from the
    innermost out, m1, ..., mk, give (h, h, m1), (h, m1, m2), ...; each arc h -> m with h a
    word gives (heads[h], h, m)."""
    heads = [int(h) for h in heads]
    n1 = len(heads)
    sib, grand = [], []
    for h in range(n1):
        for side in (range(h - 1, 0, -1), range(h + 1, n1)):
            previous = h
            for m in side:
                if heads[m] == h:
                    sib.append((h * n1 + previous) * n1 + m)
                    previous = m
    for m in range(1, n1):
        h = heads[m]
        if h > 0:
            grand.append((heads[h] * n1 + h) * n1 + m)
    return np.array(sib, dtype=np.int64), np.array(grand, dtype=np.int64)
