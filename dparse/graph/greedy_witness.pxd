# cython: language_level=3
"""Greedy inference's completability checks (greedy_witness.pyx): C interface."""

from dparse.graph.greedy_structs cimport Graph, Scratch, State


cdef void witness_add(const Graph* g, State* st, Py_ssize_t u, Py_ssize_t v) noexcept nogil
# Keeps st's witness after the allowed arc (u, v) is added to st (on graphs with disallowed arcs).

cdef bint arc_safe(const Graph* g, State* st, Scratch* sc, Py_ssize_t u,
                   Py_ssize_t v) noexcept nogil
# Whether st + (u, v) can be completed with allowed arcs, or st cannot be; st's possible arcs
# compacted in alist, sc.known reset to 0 for each tree and iteration.
