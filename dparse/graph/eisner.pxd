# cython: language_level=3
"""Eisner's O(n^3) projective first-order decoder: C interface."""

from dparse._ext.types cimport head_t, score_t


cdef int eisner_decode(const score_t* arc, Py_ssize_t n, bint single_root,
                       head_t* heads) noexcept nogil
# Best projective tree for the C-contiguous float64 [n+1, n+1] score matrix ``arc``
# (arc[h*(n+1)+m] is the score of h -> m; column 0 and the diagonal are ignored), written to
# ``heads[0..n]`` (heads[0] = -1). single_root: exactly one word attached to the root. Returns
# DECODE_OK, DECODE_NO_MEMORY or DECODE_POSITIVE_INF (see dparse/_ext/types.pxd); n >= 1.
