# cython: language_level=3
"""The shift-reduce parser's arc labeler, a multi-class classifier over the arcs of a finished
tree (see shiftreduce_labeler.pyx)."""

from libc.stdint cimport int32_t, uint64_t

from cython cimport floating

from dparse.transition.shiftreduce_state cimport SentC

cdef enum:
    MAX_LABEL_FEATURES = 32                  # room for label_keys' keys


cdef void outer_children(int n, const int32_t* heads, int32_t* lmost,
                         int32_t* rmost) noexcept nogil

cdef int best_label(const SentC* s, const int32_t* heads, const int32_t* lmost,
                    const int32_t* rmost, int m, const floating* W, int shift, int L,
                    floating* acc, uint64_t* rows, int* n_rows) noexcept nogil

cdef void label_all(const SentC* s, const int32_t* heads, int32_t* labels, int32_t* lm,
                    int32_t* rm, const floating* W, int shift, int L,
                    floating* acc) noexcept nogil
