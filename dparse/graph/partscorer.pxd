# cython: language_level=3
"""Part scores on demand for the higher-order charts: C interface (see partscorer.pyx).

Nodes 0..n (0 the root), parts indexed head first as in docs/design.md, 'Score arrays and
parts': ``arc(h, m)``, ``sib(h, m, s)``, ``grand(g, h, m)``, ``trisib(h, a, b, c)``,
``gsib(g, h, m, s)``. A method returns the part's score: finite, or -inf / NaN for a disallowed
part (never +inf). The base class scores every part 0; a subclass overrides the kinds it has.
"""

from libc.stdint cimport uint64_t

from dparse._ext.types cimport score_t


cdef class PartScorer:
    cdef readonly Py_ssize_t n     # words; nodes 0..n
    cdef public score_t floor      # stands in for disallowed parts (see partscorer.pyx)

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil
    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil
    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil
    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil
    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil


cdef class ArrayPartScorer(PartScorer):
    cdef readonly tuple arrays     # (arc, sib, grand, trisib, gsib): the arrays read (or None)
    cdef Py_ssize_t N              # n + 1
    cdef const score_t* arc_data   # [N, N]
    cdef const score_t* sib_data   # [N, N, N] or NULL (zeros); likewise below
    cdef const score_t* grand_data
    cdef const score_t* trisib_data  # [N, N, N, N]
    cdef const score_t* gsib_data


cdef class HashedPartScorer(PartScorer):
    cdef readonly object arc_scores  # the [N, N] arc array read
    cdef const score_t* arc_data
    cdef uint64_t seed
    cdef score_t scale

    cdef score_t hashed(self, uint64_t kind, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c,
                        Py_ssize_t d) noexcept nogil
    # A score in [-scale, scale) that depends only on (seed, kind, a, b, c, d).


cdef class CountingPartScorer(PartScorer):
    cdef readonly PartScorer inner  # the scorer asked on every call
    cdef Py_ssize_t calls[5]        # requests of arc, sib, grand, trisib, gsib
    cdef Py_ssize_t pruned_calls    # higher-order requests containing a pruned arc
    cdef unsigned char* pruned      # [N, N]: 1 where inner.arc(h, m) is -inf or NaN

    cdef void note(self, int kind, Py_ssize_t h1, Py_ssize_t m1, Py_ssize_t h2, Py_ssize_t m2,
                   Py_ssize_t h3, Py_ssize_t m3) noexcept nogil
    # Counts one request of part ``kind`` (0..4 as in ``calls``) whose arcs are h1 -> m1,
    # h2 -> m2 and h3 -> m3 (a pair with h == m stands for no arc).
