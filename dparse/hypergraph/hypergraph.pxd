# cython: language_level=3
"""Algorithms over packed dependency forests (dparse.hypergraph.Forest): the C-level interface.

A :class:`Hypergraph` holds a forest's arrays with the hyperedges of each vertex as a range
(``edge_start``). Viterbi, the forest oracle and derivation counting are single bottom-up passes
over the vertices (ids are topological); :class:`LazyKBest` is Huang and Chiang's (2005)
Algorithm 3; :class:`ForestCube` runs the generic cube pruner (cubepruning.pxd) bottom-up over
the forest, with non-local scores from a :class:`ForestCombiner`. Users: ``dparse forest``, the
shift-reduce parser's tests and the forest reranker, which passes its own hyperedge
scores. See hypergraph.pyx.
"""

from libc.stdint cimport int32_t, int64_t
from libcpp.utility cimport pair
from libcpp.vector cimport vector

from dparse._ext.cubepruning cimport CandidateC, Combiner, CubePruner, HyperedgeC
from dparse._ext.types cimport score_t


cdef struct HypergraphC:
    int32_t n              # words; nodes 0..n
    int32_t V              # vertices
    int32_t E              # hyperedges
    int32_t goal
    const int32_t* edge_start  # [V + 1]: hyperedges into v are edge_start[v] .. edge_start[v+1]-1
    const int32_t* tails   # [E * 2]: tail vertices, -1 padded
    const int32_t* arc     # [E * 2]: (head, modifier) or (-1, -1)
    const int32_t* label   # [E] label ids, or NULL when unlabeled


cdef struct DerivC:
    score_t score          # the derivation's score: edge score + its tails' derivation scores
    int32_t edge           # its top hyperedge
    int32_t j0             # rank of the derivation used for tail 0 (0 if no tail)
    int32_t j1             # rank of the derivation used for tail 1 (0 if no tail)


cdef void viterbi_c(const HypergraphC* g, const score_t* edge_score, score_t* inside,
                    int32_t* best) noexcept nogil
# inside[v]: the best derivation score of v; best[v]: its top hyperedge (first on ties).

cdef void oracle_c(const HypergraphC* g, const score_t* edge_score, const int32_t* gold,
                   int32_t* matches, score_t* inside, int32_t* best) noexcept nogil
# The derivations of v with the most arcs (h, m) with gold[m] == h (matches[v]), ties broken
# by the higher score (inside[v]), then by the first hyperedge; best[v] its top hyperedge.

cdef void derivation_tree(const HypergraphC* g, const int32_t* best, int32_t v, int32_t* heads,
                          int32_t* labels, int32_t* stack) noexcept nogil
# Writes the arcs of the derivation of v that follows best[] into heads/labels (length n + 1,
# only entries of words that derivation attaches); stack: work space of V entries.


cdef class Hypergraph:
    cdef HypergraphC c
    cdef object forest
    cdef int32_t[::1] starts
    cdef const int32_t[:, ::1] tails_view
    cdef const int32_t[:, ::1] arc_view
    cdef const int32_t[::1] label_view
    cdef const score_t[::1] score_view


cdef class LazyKBest:
    """The k best derivations of every vertex, computed on demand (Huang and Chiang 2005,
    Algorithm 3)."""
    cdef Hypergraph graph
    cdef const score_t* edge_score              # hyperedge scores
    cdef object score_owner                     # keeps the score array alive
    cdef vector[vector[DerivC]] found           # D[v]: v's derivations found so far, best first
    cdef vector[vector[DerivC]] pool            # every candidate ever pushed for v
    cdef vector[vector[pair[score_t, int64_t]]] heap  # (score, -pool index): a max-heap
    cdef vector[int32_t] expanded               # entries of found[v] whose successors are pushed

    cdef void start(self, int32_t v) noexcept nogil
    cdef void push(self, int32_t v, int32_t e, int32_t j0, int32_t j1) noexcept nogil
    cdef bint lazy_kth(self, int32_t v, int32_t k) noexcept nogil
    cdef void walk(self, int32_t rank, int32_t* heads, int32_t* labels,
                   int32_t* edges) noexcept nogil


cdef class ForestCombiner(Combiner):
    """Non-local scores for :class:`ForestCube`: before the cube pruner runs at a vertex,
    ``vertex`` is set to it and ``first_edge`` to its first hyperedge, so that ``combine(e, i,
    j, fields)`` concerns hyperedge ``first_edge + e`` with item i of its tail 0's list and item j
    of its tail 1's (0 for a missing tail); ``cube`` gives access to those items."""
    cdef int32_t vertex
    cdef int32_t first_edge
    cdef ForestCube cube


cdef class ForestCube:
    """Cube pruning over a forest: the k best items of every vertex, bottom-up."""
    cdef Hypergraph graph
    cdef CubePruner pruner
    cdef vector[vector[CandidateC]] items        # per vertex: its list, best first (global edges)
    cdef vector[vector[score_t]] item_scores     # per vertex: the scores of ``items``
    cdef vector[HyperedgeC] edges                # work: the hyperedges of the current vertex
    cdef score_t zero                            # the one-item list of a missing tail

    cdef int run(self, const score_t* edge_score, int32_t k, bint recombination, int n_fields,
                 ForestCombiner combiner) noexcept nogil
    # Fills ``items``; returns the goal's list length, or -1 on bad k / n_fields.
    cdef void walk(self, int32_t v, int32_t rank, int32_t* heads, int32_t* labels) noexcept nogil
