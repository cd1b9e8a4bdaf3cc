# cython: language_level=3
"""Exact second-order projective decoders (second-order Eisner): C interface."""

from dparse._ext.types cimport head_t, score_t


cdef int eisner2_sib_decode(const score_t* arc, const score_t* sib, Py_ssize_t n,
                            bint single_root, head_t* heads) noexcept nogil
# Best projective tree under arc and consecutive-sibling parts (McDonald and Pereira 2006),
# O(n^3): C-contiguous float64 ``arc`` [n+1, n+1] (arc[h*(n+1)+m] scores h -> m) and ``sib``
# [n+1, n+1, n+1] (sib[(h*(n+1)+m)*(n+1)+s]: s the next modifier of h after m on the same side,
# m == h for the innermost one) or NULL (zeros); written to ``heads[0..n]`` (heads[0] = -1).
# single_root: exactly one word attached to the root. Returns DECODE_OK, DECODE_NO_MEMORY,
# DECODE_POSITIVE_INF or DECODE_TOO_LONG (n > 65535) (see dparse/_ext/types.pxd); n >= 1.

cdef int eisner2_sibgp_decode(const score_t* arc, const score_t* sib, const score_t* grand,
                              Py_ssize_t n, bint single_root, head_t* heads) noexcept nogil
# The same with grandparent parts too (Koo and Collins 2010, Model 1), O(n^4):
# ``grand`` [n+1, n+1, n+1] (grand[(g*(n+1)+h)*(n+1)+m] scores g -> h -> m) or NULL (zeros).
