# cython: language_level=3
"""Post-search improvements by greedy arc swaps (improve.pyx): C interface."""

from dparse._ext.types cimport head_t, score_t

# Status codes of improve_core besides types.pxd's (0 is success).
cdef enum:
    IMPROVE_NOT_A_TREE = -10
    IMPROVE_SIB_NOT_FINITE = -11
    IMPROVE_GRAND_NOT_FINITE = -12


cdef int improve_core(const score_t* arc, const score_t* sib, const score_t* grand,
                      Py_ssize_t n, int rounds, bint single_root, head_t* heads) noexcept nogil
# Up to ``rounds`` rounds of the best arc swap on the tree heads [n+1], in place, under the
# C-contiguous float64 arc [n+1, n+1] and sib, grand [n+1, n+1, n+1] (NULL: no such parts);
# returns DECODE_OK, DECODE_NO_MEMORY, DECODE_POSITIVE_INF or an IMPROVE_* code, heads
# unchanged unless DECODE_OK (see improve.pyx).
