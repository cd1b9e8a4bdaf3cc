# cython: language_level=3
"""Chu-Liu-Edmonds maximum spanning arborescence (Tarjan's dense O(n^2) form): C interface."""

from dparse._ext.types cimport head_t, score_t


cdef int cle_decode(const score_t* arc, Py_ssize_t n, bint single_root,
                    head_t* heads) noexcept nogil
# Best tree for the C-contiguous float64 [n+1, n+1] score matrix ``arc`` (arc[h*(n+1)+m] is the
# score of h -> m; column 0 and the diagonal are ignored), written to ``heads[0..n]``
# (heads[0] = -1). single_root: exactly one word attached to the root. Returns DECODE_OK,
# DECODE_NO_MEMORY, DECODE_POSITIVE_INF or DECODE_TOO_LONG (n >= 46340) (see
# dparse/_ext/types.pxd); n >= 1.


cdef void dismantle(Py_ssize_t N, const char* alive, const int* node, const int* parent,
                    const int* first_child, const int* next_sibling, const int* enter,
                    int* stack, head_t* heads) noexcept nogil
# Reads the tree off a contraction forest into heads[1..N-1]: slots v = 1..N-1 with alive[v]
# hold the top forest nodes node[v]; forest node x (words 0..N-1, then contracted cycles) has
# parent[x] (-1 at a top), children first_child[x] -> next_sibling[...] (-1 ends) and the
# original arc enter[x] = h * N + m it picked (m inside x). stack: scratch of 2N ints.
