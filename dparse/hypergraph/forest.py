"""Packed dependency forests: the hypergraph a beam shift-reduce parser with dynamic programming
builds (Hayashi, Kondo and Matsumoto 2013, Section 2 and Figure 2; Huang and Sagae 2010).

This class is the contract between the shift-reduce parser and the hypergraph library; changes
to it are announced here:
- ``@dataclass(frozen=True, eq=False)`` (the contract said ``frozen=True``): a generated ``==``
  would compare numpy arrays and fail; :meth:`Forest.same_as` compares bit for bit. Added, not
  changed: the ``num_vertices`` / ``num_edges`` properties.

A vertex is a stack-top subtree: it covers the contiguous words ``vertex_span[v]`` (inclusive,
node 0 the root) and is headed by ``vertex_head[v]``. A hyperedge derives its head vertex from
its tails (at most two, left to right) and adds at most one arc. A derivation of a vertex picks
one hyperedge into it and, recursively, a derivation of each tail; its tree is the set of arcs
of the hyperedges used and its score the sum of their scores. Every derivation of the goal is a
complete projective tree of the sentence; :meth:`Forest.validate` checks the local invariants
that make this true by induction (see its docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from dparse.errors import DparseError
from dparse.hypergraph.hypergraph import forest_problem

__all__ = ["Forest"]


@dataclass(frozen=True, eq=False)
class Forest:
    """Packed forest of one sentence: n words, nodes 0..n (0 the root). Vertex ids are in
    topological order: every tail of a hyperedge has a smaller id than the vertex it derives."""

    n: int
    vertex_span: np.ndarray  # int32 [V, 2]: first and last word the vertex's subtree covers
    vertex_head: np.ndarray  # int32 [V]: the head word of that subtree (the goal: 0, span (0, n))
    edge_head: np.ndarray  # int32 [E]: the vertex each hyperedge derives (non-decreasing)
    edge_tails: np.ndarray  # int32 [E, 2]: antecedent vertices, -1 padded (a shift leaf: -1, -1)
    edge_arc: np.ndarray  # int32 [E, 2]: (head, modifier) of the arc the hyperedge adds,
    #   (-1, -1) for none; the goal's edge adds the root arc (0, h)
    edge_score: np.ndarray  # float64 [E]: the hyperedge's model score
    goal: int  # the goal vertex: each of its derivations is one complete tree
    edge_label: np.ndarray | None = None  # int32 [E] label id of edge_arc, -1 none; None: unlabeled

    @property
    def num_vertices(self) -> int:
        """V, the number of vertices."""
        return int(self.vertex_head.shape[0])

    @property
    def num_edges(self) -> int:
        """E, the number of hyperedges."""
        return int(self.edge_head.shape[0])

    def same_as(self, other: Forest) -> bool:
        """Whether both forests hold the same values, dtypes and shapes (scores bit for bit)."""
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
                    return False
                if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                    return False
            elif a != b:
                return False
        return True

    def validate(self) -> None:
        """Raise DparseError naming the first broken invariant.

        Checked: dtypes and shapes; ``n >= 1``; spans inside 0..n with the head inside; every
        vertex has a hyperedge and ``edge_head`` is non-decreasing; tails are -1 padded at the
        end, have smaller ids than their head vertex and are ordered left to right with disjoint
        spans; the tails' spans plus the head word cover the vertex's span exactly; an arc
        (h, m) has h the vertex's head and m the head of a tail other than h, and every tail not
        headed by the vertex's head is headed by that m (so each derivation of a vertex is a
        projective tree over its span rooted at its head); the goal is headed by 0 and spans
        (0, n); scores are finite; labels are -1 exactly on hyperedges without an arc.
        """
        n = self.n
        if not isinstance(n, int | np.integer) or not 1 <= n < 2**31:
            raise DparseError(f"forest: n must be a positive integer, got {n!r}")
        if not isinstance(self.goal, int | np.integer):
            raise DparseError(f"forest: goal must be an integer, got {self.goal!r}")
        V, E = self._check_arrays()
        if not 0 <= self.goal < V:
            raise DparseError(f"forest: the goal {self.goal} is not a vertex (V = {V})")
        problem = forest_problem(
            n, np.ascontiguousarray(self.vertex_span), np.ascontiguousarray(self.vertex_head),
            np.ascontiguousarray(self.edge_head), np.ascontiguousarray(self.edge_tails),
            np.ascontiguousarray(self.edge_arc),
            None if self.edge_label is None else np.ascontiguousarray(self.edge_label),
            self.goal)
        if problem is not None:
            raise DparseError(f"forest: {problem}")

    def _check_arrays(self) -> tuple[int, int]:
        """Dtypes and shapes; returns (V, E)."""
        def need(name: str, dtype: type, ndim: int) -> np.ndarray:
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
                got = f"{a.dtype} {a.ndim}-d array" if isinstance(a, np.ndarray) else type(a)
                raise DparseError(f"forest: {name} must be a {np.dtype(dtype)} {ndim}-d array,"
                                  f" got {got}")
            return a

        V = need("vertex_head", np.int32, 1).shape[0]
        E = need("edge_head", np.int32, 1).shape[0]
        for name, dtype, shape in (("vertex_span", np.int32, (V, 2)),
                                   ("edge_tails", np.int32, (E, 2)),
                                   ("edge_arc", np.int32, (E, 2)),
                                   ("edge_score", np.float64, (E,))):
            a = need(name, dtype, len(shape))
            if a.shape != shape:
                raise DparseError(f"forest: {name} has shape {a.shape}, expected {shape}")
        if self.edge_label is not None:
            a = need("edge_label", np.int32, 1)
            if a.shape != (E,):
                raise DparseError(f"forest: edge_label has shape {a.shape}, expected {(E,)}")
        if not np.all(np.isfinite(self.edge_score)):
            e = int(np.flatnonzero(~np.isfinite(self.edge_score))[0])
            raise DparseError(f"forest: hyperedge {e} has score {self.edge_score[e]}")
        return V, E


# What a parser that builds forests calls for each non-empty sentence it parses (``on_forest``
# of dparse.parsers.LoadedParser.parse): the sentence's 1-based position and its forest.
OnForest = Callable[[int, Forest], None]
