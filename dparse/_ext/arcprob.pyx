# cython: language_level=3
"""Unlabeled first-order arc scores and their probabilistic training: the second-order
pruner's model (dparse.graph.pruner.Pruner with ``pruner.objective`` local or crf).

The features are the unlabeled arc features of arcfeatures.pyx (``arc_features``), read from
the first ``2**arc_bits`` entries of a weight vector; no label is scored. Training minimizes a
log-loss whose gradient with respect to the arc scores the caller computes (head-softmax
probabilities or matrix-tree marginals, minus the gold arcs: ``dscore[h, m]``); ``AdaGrad.step``
turns it into weight gradients and takes one AdaGrad step (Duchi et al. 2011) per sentence:
``G_i += g_i**2; w_i -= eta * g_i / sqrt(G_i)``, with g_i summed over every arc that fires
feature i.
"""

from libc.math cimport INFINITY, exp, fabs, isfinite, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

from dparse._ext.arcfeatures cimport (
    SentC, arc_features, free_sentence, init_sentence, max_arc_features,
)
from dparse._ext.weights cimport gather_sum, prefetch_gather

import numpy as np

cimport cython
from cython cimport floating


@cython.boundscheck(False)
@cython.wraparound(False)
def score_heads(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                const int32_t[::1] morph, const floating[::1] weights, int arc_bits,
                double[:, ::1] out):
    """Unlabeled scores of every arc h -> m into ``out`` (float64 [n+1, n+1], head first):
    the sum of ``weights[i]`` over the arc's feature indices i < 2**arc_bits, in the order
    ``arc_features`` gives them; -inf on the diagonal and in column 0.

    Every arc sums all its templates itself, the one-sided ones too (the labeled scorer sums
    those once per word instead): training scores with AdaGrad's float64 weights, whose sums
    depend on their order, and this order is the one every recorded CRF and local pruner was
    trained with (results/retrain-en_ewt.md)."""
    if not 10 <= arc_bits <= 30:
        raise ValueError("arc_bits must be in 10..30")
    if weights.shape[0] < (<int64_t>1) << arc_bits:
        raise ValueError(f"weights has {weights.shape[0]} entries, fewer than 2**{arc_bits}")
    cdef SentC s
    init_sentence(&s, tokens, morph_ptr, morph)
    cdef int n = s.n, h, m, nxt, nf, nf_next = 0
    if out.shape[0] != n + 1 or out.shape[1] != n + 1:
        free_sentence(&s)
        raise ValueError("out must be [n+1, n+1]")
    cdef int cap = max_arc_features(&s)
    cdef uint64_t* feats = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint64_t* feats_next = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint64_t* swap
    cdef const floating* W = &weights[0]
    if feats == NULL or feats_next == NULL:
        free(feats); free(feats_next)
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for h in range(n + 1):
            out[h, 0] = -INFINITY
            out[h, h] = -INFINITY
            m = 1 if h != 1 else 2
            if m > n:
                continue
            nf = arc_features(&s, h, m, feats, arc_bits)
            while m <= n:
                # hash the next arc's features and prefetch its weights before summing these
                nxt = m + 1 if m + 1 != h else m + 2
                if nxt <= n:
                    nf_next = arc_features(&s, h, nxt, feats_next, arc_bits)
                    prefetch_gather(W, feats_next, nf_next)
                out[h, m] = gather_sum(W, feats, nf)
                swap = feats; feats = feats_next; feats_next = swap
                nf = nf_next
                m = nxt
    free(feats); free(feats_next)
    free_sentence(&s)


cpdef enum MarginalsStatus:
    MARGINALS_OK = 0
    MARGINALS_NO_HEAD = 1      # a word has no finite arc
    MARGINALS_SINGULAR = 2     # the Laplacian is singular: no tree has a finite score
    MARGINALS_IMPRECISE = 3    # the result is not a distribution per word (ill-conditioned)
    MARGINALS_NO_MEMORY = 4


cdef int invert(double* a, double* inv, Py_ssize_t n) noexcept nogil:
    """inv = a^-1 (both [n, n], row-major) by Gauss-Jordan elimination with partial pivoting;
    ``a`` is destroyed. Returns MARGINALS_SINGULAR on an exactly zero pivot."""
    cdef Py_ssize_t i, j, k, p
    cdef double best, f, t
    for i in range(n):
        for j in range(n):
            inv[i * n + j] = 1.0 if i == j else 0.0
    for k in range(n):
        p = k
        best = fabs(a[k * n + k])
        for i in range(k + 1, n):
            if fabs(a[i * n + k]) > best:
                best = fabs(a[i * n + k])
                p = i
        if best == 0.0:
            return MARGINALS_SINGULAR
        if p != k:
            for j in range(n):
                t = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = t
                t = inv[k * n + j]; inv[k * n + j] = inv[p * n + j]; inv[p * n + j] = t
        f = 1.0 / a[k * n + k]
        for j in range(n):
            a[k * n + j] *= f
            inv[k * n + j] *= f
        for i in range(n):
            if i == k:
                continue
            f = a[i * n + k]
            if f == 0.0:
                continue
            for j in range(n):
                a[i * n + j] -= f * a[k * n + j]
                inv[i * n + j] -= f * inv[k * n + j]
    return MARGINALS_OK


cdef int marginals(const double* arc, Py_ssize_t n, bint single_root,
                   double* mu) noexcept nogil:
    """The body of ``tree_marginals``: mu [n+1, n+1] from arc [n+1, n+1]; a MARGINALS_ status."""
    cdef Py_ssize_t N = n + 1, h, m, i
    cdef double top, a, total
    cdef double* w = <double*>malloc(N * N * sizeof(double))      # [h, m], exp-shifted
    cdef double* lap = <double*>malloc(n * n * sizeof(double))    # [head - 1, word - 1]
    cdef double* inv = <double*>malloc(n * n * sizeof(double))
    cdef int status = MARGINALS_OK
    if w == NULL or lap == NULL or inv == NULL:
        free(w); free(lap); free(inv)
        return MARGINALS_NO_MEMORY
    for m in range(1, N):  # each column shifted by its best finite score
        top = -INFINITY
        for h in range(N):
            a = arc[h * N + m]
            if h != m and isfinite(a) and a > top:
                top = a
        if top == -INFINITY:
            status = MARGINALS_NO_HEAD
            break
        for h in range(N):
            a = arc[h * N + m]
            w[h * N + m] = exp(a - top) if h != m and isfinite(a) else 0.0
    if status == MARGINALS_OK:
        for i in range(n):          # head i + 1
            for m in range(n):      # word m + 1
                lap[i * n + m] = -w[(i + 1) * N + m + 1]
        for m in range(n):
            total = 0.0 if single_root else w[m + 1]
            for h in range(1, N):
                total += w[h * N + m + 1]
            lap[m * n + m] = total
        if single_root:
            for m in range(n):
                lap[m] = w[m + 1]
        status = invert(lap, inv, n)
    if status == MARGINALS_OK:
        # mu[0, m] = w[0, m] M[m, m] (single root: M[m, 1]); mu[h, m] = w[h, m] (M[m, m] -
        # M[m, h]), an entry in a replaced first row counting 0 (1-based M indices)
        for h in range(N):
            mu[h * N] = 0.0
        for m in range(1, N):
            mu[m] = w[m] * (inv[(m - 1) * n] if single_root else inv[(m - 1) * n + m - 1])
            for h in range(1, N):
                a = 0.0 if single_root and m == 1 else inv[(m - 1) * n + m - 1]
                if not (single_root and h == 1):
                    a -= inv[(m - 1) * n + h - 1]
                mu[h * N + m] = w[h * N + m] * a
        for m in range(1, N):
            total = 0.0
            for h in range(N):
                a = mu[h * N + m]
                if not isfinite(a) or a < -1e-6:
                    status = MARGINALS_IMPRECISE
                total += a
            if not fabs(total - 1.0) <= 1e-6:
                status = MARGINALS_IMPRECISE
    free(w); free(lap); free(inv)
    return status


@cython.boundscheck(False)
@cython.wraparound(False)
def tree_marginals_into(const double[:, ::1] arc, bint single_root, double[:, ::1] mu) -> int:
    """The matrix-tree marginals of ``dparse.prune.tree_marginals`` (which documents them)
    into ``mu`` (float64 [n+1, n+1]) from ``arc`` (float64 [n+1, n+1], n >= 1); returns
    MARGINALS_OK or the MARGINALS_ code of the failure (``mu`` then undefined)."""
    cdef Py_ssize_t n = arc.shape[0] - 1
    cdef int status
    if n < 1 or arc.shape[1] != n + 1 or mu.shape[0] != n + 1 or mu.shape[1] != n + 1:
        raise ValueError("arc and mu must both be [n+1, n+1] with n >= 1")
    with nogil:
        status = marginals(&arc[0, 0], n, single_root, &mu[0, 0])
    if status == MARGINALS_NO_MEMORY:
        raise MemoryError()
    return status


cdef double kth_largest(double* a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest (k in 1..n) of the n values of ``a``, reordering them (Hoare's
    selection: O(n) expected)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j, target = k - 1
    cdef double pivot, t
    while lo < hi:
        pivot = a[lo + (hi - lo) // 2]
        i = lo
        j = hi
        while i <= j:  # descending: values above the pivot to the left
            while a[i] > pivot:
                i += 1
            while a[j] < pivot:
                j -= 1
            if i <= j:
                t = a[i]; a[i] = a[j]; a[j] = t
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            return a[target]
    return a[target]


@cython.boundscheck(False)
@cython.wraparound(False)
def keep_heads_into(const double[:, ::1] probs, const uint8_t[:, ::1] possible, int top_k,
                    double threshold, bint relative, const double[::1] root_by,
                    uint8_t[:, ::1] out):
    """The pruning rule of ``dparse.prune.keep_heads`` (which documents it) into ``out``
    (uint8 [n+1, n+1]) from ``probs`` (float64 [n+1, n+1]) and ``possible`` (uint8 [n+1, n+1]);
    ``root_by`` float64 [n+1] or None (the root's probabilities)."""
    cdef Py_ssize_t N = probs.shape[0], n = N - 1, h, m, best
    cdef double cut, kth
    if (n < 1 or probs.shape[1] != N or possible.shape[0] != N or possible.shape[1] != N
            or out.shape[0] != N or out.shape[1] != N):
        raise ValueError("probs, possible and out must be [n+1, n+1] with n >= 1")
    if root_by is not None and root_by.shape[0] != N:
        raise ValueError("root_by must be [n+1]")
    if top_k < 1:
        raise ValueError("top_k must be positive")
    cdef double* column = <double*>malloc(N * sizeof(double))
    if column == NULL:
        raise MemoryError()
    with nogil:
        for h in range(N):
            out[h, 0] = 0
        for m in range(1, N):
            best = 0
            for h in range(1, N):
                if probs[h, m] > probs[best, m]:
                    best = h
            cut = threshold * probs[best, m] if relative else threshold
            kth = -INFINITY
            if top_k < n:  # the top_k-th largest of the column's n + 1 values
                for h in range(N):
                    column[h] = probs[h, m]
                kth = kth_largest(column, N, top_k)
            for h in range(N):
                out[h, m] = (h != m and possible[h, m] != 0
                             and (h == best or (probs[h, m] >= cut and probs[h, m] >= kth)))
        best = -1
        for m in range(1, N):
            if out[0, m]:
                best = m
                break
        if best < 0:  # the root's best child by root_by (or probability) is kept
            best = 1
            for m in range(2, N):
                if (root_by[m] > root_by[best] if root_by is not None
                        else probs[0, m] > probs[0, best]):
                    best = m
            out[0, best] = 1
    free(column)


cdef class AdaGrad:
    """AdaGrad over ``2**arc_bits`` unlabeled arc weights: ``weights`` and the sums of squared
    gradients ``sumsq`` (both float64 [2**arc_bits], numpy arrays), and the running average of
    the weights after each step (``averaged()``: ``u`` sums ``(t - 1) * change`` over the
    changes of step t, and the average after T steps is ``w - u / T``)."""

    cdef readonly int arc_bits
    cdef readonly double eta
    cdef readonly int64_t steps
    cdef readonly object weights, sumsq, u_sums
    cdef double[::1] w, G, grad, u
    cdef uint8_t[::1] mark
    cdef int64_t[::1] touched

    def __init__(self, int arc_bits, double eta):
        if not 10 <= arc_bits <= 30:
            raise ValueError("arc_bits must be in 10..30")
        if not eta > 0.0:
            raise ValueError("eta must be positive")
        cdef int64_t size = (<int64_t>1) << arc_bits
        self.arc_bits = arc_bits
        self.eta = eta
        self.weights = np.zeros(size, dtype=np.float64)
        self.sumsq = np.zeros(size, dtype=np.float64)
        self.u_sums = np.zeros(size, dtype=np.float64)
        self.steps = 0
        self.w = self.weights
        self.G = self.sumsq
        self.u = self.u_sums
        self.grad = np.zeros(size, dtype=np.float64)
        self.mark = np.zeros(size, dtype=np.uint8)
        self.touched = np.empty(size, dtype=np.int64)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def step(self, const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
             const int32_t[::1] morph, const double[:, ::1] dscore, double min_grad=0.0):
        """One AdaGrad step on one sentence, given the loss gradient with respect to its arc
        scores, ``dscore[h, m]`` float64 [n+1, n+1]; arcs with |dscore| <= ``min_grad`` (and
        the diagonal and column 0) are skipped. Returns the number of weights changed."""
        cdef SentC s
        init_sentence(&s, tokens, morph_ptr, morph)
        cdef int n = s.n, h, m, f, nf
        if dscore.shape[0] != n + 1 or dscore.shape[1] != n + 1:
            free_sentence(&s)
            raise ValueError("dscore must be [n+1, n+1]")
        cdef uint64_t* feats = <uint64_t*>malloc(max_arc_features(&s) * sizeof(uint64_t))
        if feats == NULL:
            free_sentence(&s)
            raise MemoryError()
        cdef int64_t count = 0, k, i
        cdef double g, gi, change
        cdef double c = <double>self.steps  # this step is number c + 1
        with nogil:
            for h in range(n + 1):
                for m in range(1, n + 1):
                    g = dscore[h, m]
                    if h == m or fabs(g) <= min_grad:
                        continue
                    nf = arc_features(&s, h, m, feats, self.arc_bits)
                    for f in range(nf):
                        i = <int64_t>feats[f]
                        if not self.mark[i]:
                            self.mark[i] = 1
                            self.touched[count] = i
                            count += 1
                        self.grad[i] += g
            for k in range(count):
                i = self.touched[k]
                gi = self.grad[i]
                self.grad[i] = 0.0
                self.mark[i] = 0
                if gi != 0.0:
                    self.G[i] += gi * gi
                    change = -self.eta * gi / sqrt(self.G[i])
                    self.w[i] += change
                    self.u[i] += c * change
        self.steps += 1
        free(feats)
        free_sentence(&s)
        return count

    def averaged(self):
        """The average of the weights after each step so far: float64 [2**arc_bits]."""
        if self.steps == 0:
            return self.weights.copy()
        return self.weights - self.u_sums / self.steps
