# cython: language_level=3
"""The range of the allowed scores in parts of score arrays, for the floors that stand in for
disallowed parts (see dparse/_ext/types.pxd): one scan shared by the charts and part scorers."""

from libc.math cimport INFINITY

from dparse._ext.types cimport score_t


cdef struct BoundsC:
    score_t lo             # smallest allowed (finite) score seen, +inf if none
    score_t hi             # largest allowed score seen, -inf if none
    bint pruned            # some score seen is disallowed (-inf or NaN)


cdef inline void bounds_init(BoundsC* b, score_t lo, score_t hi) noexcept nogil:
    """Starts ``b`` at [lo, hi] (INFINITY, -INFINITY: nothing seen) with nothing disallowed."""
    b.lo = lo
    b.hi = hi
    b.pruned = False


cdef inline bint widen(BoundsC* b, const score_t* x, Py_ssize_t start,
                       Py_ssize_t stop) noexcept nogil:
    """Widens ``b`` by the scores x[start:stop] (none if stop <= start), noting disallowed ones
    in ``b.pruned``; True if one of them is +inf (an error: the scan stops there)."""
    cdef Py_ssize_t i
    cdef score_t a
    for i in range(start, stop):
        a = x[i]
        if a > -INFINITY:  # false for -inf and NaN
            if a == INFINITY:
                return True
            if a < b.lo:
                b.lo = a
            if a > b.hi:
                b.hi = a
        else:
            b.pruned = True
    return False
