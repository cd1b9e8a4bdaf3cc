# cython: language_level=3
"""The next-best spanning arborescence from the contraction history (Camerini et al. 1980):
C interface."""

from dparse._ext.types cimport head_t, score_t


cdef int next_arborescence(const score_t* arc, Py_ssize_t n, const head_t* tree, head_t* heads,
                           int* swapped) noexcept nogil
# For the C-contiguous float64 [n+1, n+1] scores ``arc`` (arc[h*(n+1)+m] scores h -> m; -inf or
# NaN disallowed; column 0 and the diagonal ignored) and a best arborescence ``tree`` of them
# (heads [n+1], using no disallowed arc; the root may have several children): writes the best
# arborescence other than ``tree`` to ``heads`` [n+1] (heads[0] = -1) and sets ``swapped`` to an
# arc h*(n+1)+m of ``tree`` that it lacks, or to -1 (heads untouched) if ``tree`` is the only
# arborescence without a disallowed arc. Returns DECODE_OK or DECODE_NO_MEMORY; n >= 1.
