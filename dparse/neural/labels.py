"""The labels of a parse from the label scorer's features (:class:`LabelFeatures`), in numpy.

A parse needs the labels of its tree's arcs only: the dependents' features go through every
label's matrix once (``through``: [n, L, E]) and meet their chosen heads' features
(:meth:`LabelFeatures.at_heads`), n * L * E products after the n * L * E * E of ``through``,
where every arc's best label would take n * n * L * E more (and the [n, L, n] scores). The
label matrix of every arc (:meth:`LabelFeatures.matrix`: what k-best lists, marginals,
constrained parses and the ensemble read) is made on demand, as one matrix product; its
label for an arc is the one :meth:`LabelFeatures.at_heads` gives it but where two labels'
scores agree to float32 rounding (the two sum the same products in different orders).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def flat_weight(weight: np.ndarray) -> np.ndarray:
    """The label scorer's weights float32 [L, E, E] as one matrix [E, L * E]: row d, column
    l * E + e holds weight[l, d, e]."""
    n_labels, e, _ = weight.shape
    return np.ascontiguousarray(weight.transpose(1, 0, 2).reshape(e, n_labels * e))


@dataclass
class LabelFeatures:
    """A sentence's label-scorer features: ``dep`` and ``head`` float32 [n+1, E] (row 0 the
    root; ones appended) and the scorer's weights as one matrix float32 [E, L * E]
    (:func:`flat_weight`; s(h, m, l) = dep[m] @ weight[l] @ head[h])."""

    dep: np.ndarray
    head: np.ndarray
    flat: np.ndarray

    def _through(self) -> np.ndarray:
        """float32 [n, L, E]: each word's features through every label's matrix."""
        e = self.dep.shape[1]
        return (self.dep[1:] @ self.flat).reshape(len(self.dep) - 1, -1, e)

    def at_heads(self, heads: np.ndarray) -> np.ndarray:
        """The best label ids int32 [n+1] (-1 at the root) of the arcs heads[m] -> m
        (heads int32 [n+1], heads[0] ignored)."""
        labels = np.full(len(heads), -1, dtype=np.int32)
        chosen = self.head[heads[1:]]  # [n, E]
        scores = (self._through() * chosen[:, None, :]).sum(axis=2)  # [n, L]
        labels[1:] = scores.argmax(axis=1)
        return labels

    def matrix(self) -> np.ndarray:
        """The best label id int32 [n+1, n+1] of every arc h -> m (head first; column 0
        and the diagonal as any other entry: no decoder reads them)."""
        through = self._through()  # [n, L, E]
        n, n_labels, e = through.shape
        scores = (through.reshape(n * n_labels, e) @ self.head.T).reshape(n, n_labels, n + 1)
        label = np.zeros((n + 1, n + 1), dtype=np.int32)
        label[:, 1:] = scores.argmax(axis=1).T
        return label
