# cython: language_level=3
"""Cube pruning (Chiang 2007; Huang and Chiang 2005): the k-best list of one hypergraph vertex.

A vertex has incoming binary hyperedges; hyperedge e combines item i of its left antecedent's
k-best list with item j of its right antecedent's list (both sorted best first) into a new
item scoring ``left[i] + right[j] + weight + non-local(e, i, j)``, the non-local part and the
new item's signature given by a :class:`Combiner`. :meth:`CubePruner.kbest` explores the
combinations best first from one frontier heap over all hyperedges and keeps the k best (with
recombination: the best of each signature, k distinct signatures); see cubepruning.pyx.

Users: the generalized Eisner chart (generalized_eisner.pyx) and the forest reranker.
"""

cimport cython
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libcpp.utility cimport pair
from libcpp.vector cimport vector

from dparse._ext.types cimport score_t

cdef enum:
    CUBE_MAX_FIELDS = 8    # int32 fields of a signature, at most


cdef struct HyperedgeC:
    const score_t* left    # scores of the left antecedent's k-best list, best first
    const score_t* right   # scores of the right antecedent's list, best first
    int32_t left_len       # list lengths; a hyperedge with an empty list contributes nothing
    int32_t right_len
    score_t weight         # a score added to every combination of this hyperedge


cdef struct CandidateC:
    score_t score          # left[i] + right[j] + weight + the Combiner's non-local score
    int32_t edge           # the hyperedge (index into the edges given to kbest)
    int32_t i              # position in its left list
    int32_t j              # position in its right list
    uint64_t hash          # hash of fields[:n_fields] (computed with recombination only)
    int32_t fields[CUBE_MAX_FIELDS]   # the signature, as written by the Combiner


cdef class Combiner:
    """What a vertex's combinations mean: subclasses override :meth:`combine`."""

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil
    # The non-local score of combining item i of hyperedge ``edge``'s left list with item j of
    # its right list (NaN is read as -inf), and the new item's signature written to
    # fields[0 .. n_fields-1] (n_fields as given to CubePruner.kbest, <= CUBE_MAX_FIELDS).
    # Called once per pushed combination. The base class scores 0 with an empty signature.


@cython.final
cdef class CubePruner:
    """Reusable work memory for :meth:`kbest` (not thread-safe: one per thread)."""

    cdef vector[CandidateC] results              # the vertex's k-best list, best first
    cdef vector[CandidateC] candidates           # every combination pushed for this vertex
    cdef vector[pair[score_t, int32_t]] heap     # (score, -candidate index): a max-heap
    cdef vector[uint8_t] visited                 # pushed flags of each hyperedge's (i, j) grid
    cdef vector[Py_ssize_t] offsets              # start of each hyperedge's grid in visited
    cdef vector[int32_t] slots                   # recombination table: index into results
    cdef vector[uint32_t] stamps                 # a slot is in use iff its stamp == generation
    cdef uint32_t generation
    cdef Py_ssize_t pops                         # combinations popped by the last kbest call

    cdef int kbest(self, const HyperedgeC* edges, int32_t n_edges, int32_t k,
                   bint recombination, int n_fields, Combiner combiner) noexcept nogil
    # Fills ``results`` with the k best combinations, best first, and returns their number
    # (-1 if n_fields is out of 0..CUBE_MAX_FIELDS or k < 1).

    # helpers of kbest
    cdef void push(self, const HyperedgeC* edges, int32_t e, int32_t i, int32_t j,
                   bint recombination, int n_fields, Combiner combiner) noexcept nogil
    cdef int32_t find_or_add(self, const CandidateC* c, int n_fields) noexcept nogil
    cdef void reset_table(self, int32_t k) noexcept nogil
    cdef void sort_results(self) noexcept nogil
