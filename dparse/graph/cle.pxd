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
