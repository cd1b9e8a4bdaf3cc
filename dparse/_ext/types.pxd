# cython: language_level=3
"""Numeric types and score conventions shared by every decoder extension.

Score arrays are float64 (``score_t``), indexed head first: ``arc[h * (n + 1) + m]`` is the score
of the arc h -> m over nodes 0..n (0 is the artificial root). Heads arrays are int32
(``head_t``, numpy ``np.int32``) of length n + 1 with ``heads[0] == -1``.

Disallowed arcs: a score of -inf (a pruned arc) or NaN means "not allowed". Decoders replace
such a score by ``floor`` from :func:`score_floor`, a finite value so low that any tree with
fewer disallowed arcs outscores any tree with more. A decoder therefore never uses a disallowed
arc when a tree without one exists, and otherwise still returns a tree (the best one among
those with the fewest disallowed arcs). A score of +inf is an error.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t

ctypedef double score_t
ctypedef int32_t head_t

# Status codes returned by the nogil cores (0 is success).
cdef enum:
    DECODE_OK = 0
    DECODE_NO_MEMORY = -1
    DECODE_POSITIVE_INF = -2
    DECODE_TOO_LONG = -3


cdef inline int score_floor(const score_t* arc, Py_ssize_t n, score_t* floor,
                            score_t* ceiling) noexcept nogil:
    """Sets ``floor`` to the score that stands in for disallowed arcs (see the module doc) and
    ``ceiling`` to the highest allowed score (both 0 if no arc is allowed).

    Scans the arcs h -> m with m in 1..n, h in 0..n, h != m of the [n+1, n+1] matrix ``arc``;
    with ``lo`` and ``hi`` their smallest and largest finite scores, a tree of n arcs with k
    disallowed ones scores at most (n - k) hi + k floor < (n - k + 1) lo + (k - 1) floor
    whenever floor < lo - n (hi - lo); ``lo - (n + 1) (hi - lo + 1)`` satisfies this.
    Returns DECODE_POSITIVE_INF if some arc scores +inf, else DECODE_OK.
    """
    cdef Py_ssize_t N = n + 1, h, m
    cdef score_t lo = INFINITY, hi = -INFINITY, a
    for h in range(N):
        for m in range(1, N):
            if h == m:
                continue
            a = arc[h * N + m]
            if a == INFINITY:
                return DECODE_POSITIVE_INF
            if a > -INFINITY:  # false for -inf and NaN
                if a < lo:
                    lo = a
                if a > hi:
                    hi = a
    if lo == INFINITY:  # no allowed arc at all: every tree is equally bad
        floor[0] = ceiling[0] = 0.0
    else:
        floor[0] = lo - (n + 1) * (hi - lo + 1.0)
        ceiling[0] = hi
    return DECODE_OK


cdef inline score_t allowed(score_t a, score_t floor) noexcept nogil:
    """``a`` itself if it is an allowed (finite) score, else ``floor``."""
    return a if a > -INFINITY else floor


cdef inline int raise_for_status(int status) except -1:
    """Turns a nogil core's status code into the Python exception it stands for."""
    if status == DECODE_NO_MEMORY:
        raise MemoryError("decoder work buffers")
    if status == DECODE_POSITIVE_INF:
        raise ValueError("arc scores must not be +inf")
    if status == DECODE_TOO_LONG:
        raise ValueError("sentence too long for this decoder")
    return 0


cdef inline Py_ssize_t words_of(const score_t[:, ::1] arc) except -1:
    """n for a square [n+1, n+1] score matrix with n >= 1; ValueError otherwise."""
    cdef Py_ssize_t n = arc.shape[0] - 1
    if arc.shape[1] != arc.shape[0] or n < 1:
        raise ValueError(
            f"arc must be a square [n+1, n+1] score matrix with n >= 1, "
            f"got shape ({arc.shape[0]}, {arc.shape[1]})"
        )
    return n
