# cython: language_level=3
"""Greedy inference's part bookkeeping (greedy_parts.pyx): C interface."""

from dparse.graph.greedy_structs cimport Graph, Scratch, State

cdef enum:
    PART_NOT_FINITE = -100      # a sib or grand weight read is inf or NaN


cdef void build_lists(Graph* g, double alpha) noexcept nogil
# The allowed arcs' ids, heads and modifiers, out and in lists, sibling part slots and
# probabilities q of g, whose aid marks the allowed arcs with 0 and E counts them.

cdef int load_weights(Graph* g, double* maxabs) noexcept nogil
# Copies the part weights that are read into g's compact tables (after build_lists); maxabs =
# the largest |part weight|. PART_NOT_FINITE if one is inf or NaN, else DECODE_OK.

cdef void init_state(const Graph* g, State* st) noexcept nogil
# The empty tree's DSs in st (bound to a block of g's layout).

cdef void add_arc(const Graph* g, State* st, Scratch* sc, Py_ssize_t e) noexcept nogil
# Adds the possible allowed arc e to st: updates its DSs and drops lostArcs(e) (sc.lostlist and
# sc.mark: scratch, sc.mark all 0 before and after).
