# cython: language_level=3
"""Eisner's algorithm: the best projective tree under first-order arc scores (Eisner 1996).

Spans over nodes s..t (s < t) come in four kinds, with ``h`` the head at one end:

- complete right ``C(s->t)``: s heads everything in s+1..t and t takes no more right children;
- complete left ``C(s<-t)``: the mirror image, headed by t;
- incomplete right ``I(s->t)``: the arc s -> t with s's and t's children between them;
- incomplete left ``I(s<-t)``: the arc t -> s, likewise.

Spans are built by increasing width, O(n^2) spans with O(n) splits each: O(n^3) time, O(n^2)
memory. Every table is kept in the orientation that makes its inner loop read contiguous memory
(``*T`` tables are stored transposed, indexed [t, s]).

Multi-root: node 0 takes part in the chart as an ordinary head (it is never a dependent) and the
answer is ``C(0->n)``. Single root: the chart covers words 1..n only, and the root's complete
span is built from a single incomplete root span, ``C(0->n) = max_m arc[0,m] + C(1<-m) + C(m->n)``.

Ties go to the smallest split point (and, for the single root, the smallest root child).
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    allowed,
    head_t,
    raise_for_status,
    score_floor,
    score_t,
    words_of,
)

cnp.import_array()


cdef struct ChartC:
    Py_ssize_t N           # nodes 0..n, N = n + 1; all tables [N, N]
    score_t* Cr            # C(s->t) at [s, t]
    score_t* CrT           # C(s->t) at [t, s]
    score_t* Cl            # C(s<-t) at [s, t]
    score_t* ClT           # C(s<-t) at [t, s]
    score_t* Ir            # I(s->t) at [s, t]
    score_t* IlT           # I(s<-t) at [t, s]
    int* bI                # split r of I(s->t) and I(s<-t) at [s, t]
    int* bCr               # split r of C(s->t) at [s, t]
    int* bCl               # split r of C(s<-t) at [s, t]
    head_t* heads


cdef void fill(ChartC* c, const score_t* arc, score_t floor, Py_ssize_t first) noexcept nogil:
    """Fills the chart for spans of nodes first..n (first is 0 or 1)."""
    cdef Py_ssize_t N = c.N, k, s, t, r
    cdef score_t best, val
    cdef Py_ssize_t arg
    for s in range(N):
        c.Cr[s * N + s] = c.CrT[s * N + s] = 0.0
        c.Cl[s * N + s] = c.ClT[s * N + s] = 0.0
    for k in range(1, N - first):
        for s in range(first, N - k):
            t = s + k
            # I(s->t) = max_{s<=r<t} C(s->r) + C(r+1<-t) + arc[s,t]; I(s<-t) likewise + arc[t,s]
            best = -INFINITY
            arg = s
            for r in range(s, t):
                val = c.Cr[s * N + r] + c.ClT[t * N + r + 1]
                if val > best:
                    best = val
                    arg = r
            c.bI[s * N + t] = <int>arg
            c.Ir[s * N + t] = best + allowed(arc[s * N + t], floor)
            if s > 0:  # the root is never a dependent
                c.IlT[t * N + s] = best + allowed(arc[t * N + s], floor)
                # C(s<-t) = max_{s<=r<t} C(s<-r) + I(r<-t)
                best = -INFINITY
                arg = s
                for r in range(s, t):
                    val = c.Cl[s * N + r] + c.IlT[t * N + r]
                    if val > best:
                        best = val
                        arg = r
                c.Cl[s * N + t] = c.ClT[t * N + s] = best
                c.bCl[s * N + t] = <int>arg
            # C(s->t) = max_{s<r<=t} I(s->r) + C(r->t)
            best = -INFINITY
            arg = s + 1
            for r in range(s + 1, t + 1):
                val = c.Ir[s * N + r] + c.CrT[t * N + r]
                if val > best:
                    best = val
                    arg = r
            c.Cr[s * N + t] = c.CrT[t * N + s] = best
            c.bCr[s * N + t] = <int>arg


# Backtracking: each span writes the heads of the arcs it contains.
cdef void right_complete(ChartC* c, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t r
    if s == t:
        return
    r = c.bCr[s * c.N + t]
    right_incomplete(c, s, r)
    right_complete(c, r, t)


cdef void left_complete(ChartC* c, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t r
    if s == t:
        return
    r = c.bCl[s * c.N + t]
    left_incomplete(c, r, t)
    left_complete(c, s, r)


cdef void right_incomplete(ChartC* c, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t r = c.bI[s * c.N + t]
    c.heads[t] = <head_t>s
    right_complete(c, s, r)
    left_complete(c, r + 1, t)


cdef void left_incomplete(ChartC* c, Py_ssize_t s, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t r = c.bI[s * c.N + t]
    c.heads[s] = <head_t>t
    right_complete(c, s, r)
    left_complete(c, r + 1, t)


cdef int eisner_decode(const score_t* arc, Py_ssize_t n, bint single_root,
                       head_t* heads) noexcept nogil:
    cdef Py_ssize_t N = n + 1, m, root_child = 1
    cdef score_t floor, ceiling, best = -INFINITY, val
    cdef int status = score_floor(arc, n, &floor, &ceiling)
    cdef ChartC c
    cdef char* block
    if status != DECODE_OK:
        return status
    block = <char*>malloc(N * N * (6 * sizeof(score_t) + 3 * sizeof(int)))
    if block == NULL:
        return DECODE_NO_MEMORY
    c.N = N
    c.Cr = <score_t*>block
    c.CrT = c.Cr + N * N
    c.Cl = c.CrT + N * N
    c.ClT = c.Cl + N * N
    c.Ir = c.ClT + N * N
    c.IlT = c.Ir + N * N
    c.bI = <int*>(c.IlT + N * N)
    c.bCr = c.bI + N * N
    c.bCl = c.bCr + N * N
    c.heads = heads
    heads[0] = -1
    if single_root:
        fill(&c, arc, floor, 1)
        # C(0->n) = max_m arc[0,m] + C(1<-m) + C(m->n): one incomplete root span I(0->m)
        for m in range(1, N):
            val = allowed(arc[m], floor) + c.Cl[1 * N + m] + c.Cr[m * N + n]
            if val > best:
                best = val
                root_child = m
        heads[root_child] = 0
        left_complete(&c, 1, root_child)
        right_complete(&c, root_child, n)
    else:
        fill(&c, arc, floor, 0)
        right_complete(&c, 0, n)
    free(block)
    return DECODE_OK


def eisner(const score_t[:, ::1] arc not None, bint single_root=True):
    """Best projective tree under arc scores, Eisner's O(n^3) algorithm (Eisner 1996).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1; ``arc[h, m]`` scores the arc h -> m. Column 0
    and the diagonal are ignored; -inf or NaN marks a disallowed arc, +inf is a ValueError.
    single_root: exactly one word is attached to the root.
    Returns heads, int32 [n+1] with heads[0] == -1: a projective tree of maximum total score.
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = eisner_decode(&arc[0, 0], n, single_root, <head_t*>cnp.PyArray_DATA(heads))
    raise_for_status(status)
    return heads
