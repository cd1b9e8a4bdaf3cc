# cython: language_level=3
"""Dot products of the online learners, summed in a fixed order.

numpy's ``a @ b`` on 1-d float64 arrays calls the BLAS ``ddot``, whose kernel (and so the order
its partial sums are added in, and the last bits of the result) OpenBLAS picks for the CPU it
runs on: the passive-aggressive step of ``dparse.learning.AveragedLearner`` then differs in its
last bits between machines, and where a later decision is a near tie it can flip and the trained
model differ (results/determinism.md). These loops add the products left to right in double precision, which gives the same
bits on every x86-64 CPU (setup.py builds without floating-point contraction).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t

cimport cython

from dparse._ext.weights cimport mark


cdef extern from *:
    int __builtin_popcount(unsigned int x) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
def gather_dot(const double[::1] w, const int64_t[::1] idx, const double[::1] val) -> float:
    """sum over i of w[idx[i]] * val[i], added in order of i (idx, val: the same length; every
    idx[i] in 0..len(w)-1)."""
    cdef Py_ssize_t n = idx.shape[0], i, size = w.shape[0]
    cdef double total = 0.0
    if val.shape[0] != n:
        raise ValueError(f"gather_dot: {n} indices but {val.shape[0]} values")
    with nogil:
        for i in range(n):
            if idx[i] < 0 or idx[i] >= size:
                with gil:
                    raise IndexError(f"gather_dot: index {idx[i]} outside 0..{size - 1}")
            total += w[idx[i]] * val[i]
    return total


@cython.boundscheck(False)
@cython.wraparound(False)
def squared_norm(const double[::1] val) -> float:
    """sum over i of val[i] ** 2, added in order of i."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    with nogil:
        for i in range(val.shape[0]):
            total += val[i] * val[i]
    return total


@cython.boundscheck(False)
@cython.wraparound(False)
def add_update(double[::1] w, double[::1] u, const int64_t[::1] idx, const double[::1] val,
               double step, double c, uint8_t[::1] touched=None) -> None:
    """The learner's update at distinct indices ``idx``: w[idx] += step * val and
    u[idx] += (c * step) * val (rounded as numpy rounds those expressions); sets the bits idx
    of ``touched`` when given (a bit mask over w: uint8 [(len(w) + 7) // 8], weights.mark)."""
    cdef Py_ssize_t n = idx.shape[0], i, size = w.shape[0]
    cdef double cstep = c * step
    cdef int64_t j
    if val.shape[0] != n or u.shape[0] != size or (touched is not None
                                                   and touched.shape[0] != (size + 7) // 8):
        raise ValueError("add_update: arrays of different lengths")
    with nogil:
        for i in range(n):
            j = idx[i]
            if j < 0 or j >= size:
                with gil:
                    raise IndexError(f"add_update: index {j} outside 0..{size - 1}")
            w[j] += step * val[i]
            u[j] += cstep * val[i]
        if touched is not None:
            for i in range(n):
                mark(&touched[0], idx[i])


@cython.boundscheck(False)
@cython.wraparound(False)
def marked(const uint8_t[::1] bits, Py_ssize_t size) -> object:
    """The indices below ``size`` whose bits are set in the bit mask ``bits`` (weights.mark),
    int32, increasing."""
    import numpy as np

    if bits.shape[0] != (size + 7) // 8 or size >= (<Py_ssize_t>1 << 31):
        raise ValueError(f"marked: a mask of {bits.shape[0]} bytes for {size} weights")
    cdef Py_ssize_t i, b, count = 0
    with nogil:
        for b in range(bits.shape[0]):
            count += __builtin_popcount(bits[b])
    out = np.empty(count, dtype=np.int32)
    cdef int32_t[::1] o = out
    count = 0
    with nogil:
        for b in range(bits.shape[0]):
            if bits[b]:
                for i in range(8 * b, min(8 * b + 8, size)):
                    if bits[b] >> (i & 7) & 1:
                        o[count] = <int32_t>i
                        count += 1
    return out[:count]
