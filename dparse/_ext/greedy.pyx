# cython: language_level=3
"""First-order greedy inference, BGI and BGI-PP (Tchernowitz, Yedidsion and Reichart 2016,
Algorithms 1 and 2), in C; equals the Python reference dparse/greedy_reference.py.

Each of the n iterations adds the possible arc e = (u, v) with the lowest value

    v_e = a * loss_e - b * gain_e     (BGI: a = b = 1; BGI-PP: a = beta, b = 1 - beta)

where gain_e = G[u, v] and loss_e sums L over the arcs e makes impossible (lostArcs): the
other arcs into v, the arcs into r = top of u's component from v's component (they would
close a cycle) and, under single_root with u == 0, the other root arcs. BGI has L = G = the arc
scores; BGI-PP has L = score * p and G = score, p the per-word softmax (Section 4), computed by
the Python wrapper exactly as the reference does. Disallowed arcs (-inf, NaN) weigh 0 and are
taken only when no allowed arc is possible; a value must be lower by more than ``tol`` to beat an
earlier arc's, so near-ties (float rounding) go to the smallest h * (n+1) + m.

As in Appendix A, the loss of an arc is assembled from per-iteration sums: in_sum[v] over the
possible arcs into v, C[t, r] over the possible arcs from component t into component root r,
and root_sum over the possible root arcs; O(n^2) per iteration, O(n^3) in all.
"""

from libc.stdlib cimport free, malloc

cimport numpy as cnp
import numpy as np

from dparse._ext.types cimport DECODE_NO_MEMORY, DECODE_OK, head_t, raise_for_status, score_t

from dparse.greedy_reference import TIE_TOLERANCE, arc_probabilities

cnp.import_array()


cdef inline void _free_all(unsigned char* alive, Py_ssize_t* top, score_t* in_sum,
                           score_t* C) noexcept nogil:
    free(alive)
    free(top)
    free(in_sum)
    free(C)


cdef int greedy_decode(const score_t* L, const score_t* G, const unsigned char* allowed,
                       Py_ssize_t n, bint single_root, score_t a, score_t b, score_t tol,
                       head_t* heads) noexcept nogil:
    """Fills heads [n+1] (heads[0] = -1) greedily from L, G [n+1, n+1] (row h, column m) and
    the allowed mask [n+1, n+1]; returns DECODE_OK or DECODE_NO_MEMORY."""
    cdef Py_ssize_t N = n + 1, _, u, v, x, r, t, best_u, best_v
    cdef unsigned char* alive = <unsigned char*>malloc(N * N)
    cdef Py_ssize_t* top = <Py_ssize_t*>malloc(N * sizeof(Py_ssize_t))
    cdef score_t* in_sum = <score_t*>malloc(N * sizeof(score_t))
    cdef score_t* C = <score_t*>malloc(N * N * sizeof(score_t))
    cdef score_t root_sum, loss, value, best_value
    cdef bint best_dis, dis
    if alive == NULL or top == NULL or in_sum == NULL or C == NULL:
        _free_all(alive, top, in_sum, C)
        return DECODE_NO_MEMORY
    for u in range(N):
        heads[u] = -1
        top[u] = u
        for v in range(N):
            alive[u * N + v] = v != 0 and u != v
    for _ in range(n):
        # the sums over possible arcs: into each word, from each component into each top, root
        root_sum = 0.0
        for v in range(N):
            in_sum[v] = 0.0
            for x in range(N):
                C[v * N + x] = 0.0
        for x in range(N):
            t = top[x]
            for r in range(1, N):
                if alive[x * N + r]:
                    in_sum[r] += L[x * N + r]
                    C[t * N + r] += L[x * N + r]
        for x in range(1, N):
            if alive[x]:
                root_sum += L[x]
        # line 13: the possible arc with the lowest value (allowed arcs first, then index)
        best_u = -1
        best_v = -1
        best_dis = True
        best_value = 0.0
        for u in range(N):
            r = top[u]
            for v in range(1, N):
                if not alive[u * N + v]:
                    continue
                loss = in_sum[v] - L[u * N + v]            # incomingSet
                if r != 0:
                    loss += C[v * N + r]                   # cycleSet: v's component -> r
                if single_root and u == 0:
                    loss += root_sum - L[v]                # the other root arcs
                value = a * loss - b * G[u * N + v]
                dis = not allowed[u * N + v]
                if best_u < 0 or dis < best_dis or (dis == best_dis and value < best_value - tol):
                    best_u, best_v, best_dis, best_value = u, v, dis, value
        # lines 14-16: add the arc, drop the arcs it makes impossible
        u, v = best_u, best_v
        r = top[u]
        heads[v] = <head_t>u
        for x in range(N):
            alive[x * N + v] = 0
            if top[x] == v:
                if r != 0:
                    alive[x * N + r] = 0
                top[x] = r
        if single_root and u == 0:
            for x in range(N):
                alive[x] = 0
    _free_all(alive, top, in_sum, C)
    return DECODE_OK


def greedy1(arc, bint single_root=True, bint pp=False, double alpha=1.0, double beta=0.5):
    """BGI (pp False) or BGI-PP (pp True, Section 4's alpha and beta) on first-order scores arc
    float64 [n+1, n+1]; returns heads int32 [n+1], the reference's tree."""
    arc = np.ascontiguousarray(arc, dtype=np.float64)
    if np.isposinf(arc).any():
        raise ValueError("arc scores must not be +inf")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    allowed = np.isfinite(arc)
    np.fill_diagonal(allowed, False)
    allowed[:, 0] = False
    W = np.where(allowed, arc, 0.0)
    tol = TIE_TOLERANCE * (1.0 + np.abs(W).max())
    if pp:
        return greedy_first_order(W * arc_probabilities(arc, allowed, alpha), W,
                                  allowed.view(np.uint8), single_root, beta, 1.0 - beta, tol)
    return greedy_first_order(W, W, allowed.view(np.uint8), single_root, 1.0, 1.0, tol)


def greedy_first_order(const score_t[:, ::1] L, const score_t[:, ::1] G,
                       const unsigned char[:, ::1] allowed, bint single_root=True,
                       double a=1.0, double b=1.0, double tol=0.0):
    """Greedy tree from loss weights L, gain weights G float64 [n+1, n+1] and the allowed mask
    uint8 [n+1, n+1] (all C-contiguous, same shape), value a * loss - b * gain, tie margin tol;
    returns heads int32 [n+1]."""
    cdef Py_ssize_t n = L.shape[0] - 1
    if n < 1 or L.shape[1] != n + 1 or G.shape[0] != n + 1 or G.shape[1] != n + 1 \
            or allowed.shape[0] != n + 1 or allowed.shape[1] != n + 1:
        raise ValueError("L, G and allowed must all have shape [n+1, n+1] with n >= 1")
    heads = np.empty(n + 1, dtype=np.int32)
    cdef head_t[::1] h = heads
    cdef int status
    with nogil:
        status = greedy_decode(&L[0, 0], &G[0, 0], &allowed[0, 0], n, single_root, a, b, tol,
                               &h[0])
    raise_for_status(status)
    return heads
