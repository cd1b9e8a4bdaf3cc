# cython: language_level=3
"""Exact first-order arc marginals and log partition functions of the tree distribution
p(tree) = exp(sum of its arc scores) / Z over every (projective or non-projective, single- or
multi-root) tree of a sentence.

Scores follow the decoder contract (docs/design.md, 'Score arrays and parts'): ``arc`` is
float64 [n+1, n+1], ``arc[h, m]`` the score of h -> m over nodes 0..n (0 the root); column 0 and
the diagonal are ignored; -inf or NaN marks a disallowed arc, which here has probability 0 (a
tree holding one has none); +inf is a ValueError. A sentence whose every tree holds a
disallowed arc has no distribution: :class:`NoTreeError`. Marginals are returned as float64
[n+1, n+1], ``mu[h, m] = P(h -> m in the tree)``, 0 in column 0 and on the diagonal: each
word's column sums to 1.

Projective (:func:`arc_marginals` with ``projective=True``): inside-outside over Eisner's
first-order chart (Eisner 1996; dparse/graph/eisner.pyx has the same spans: complete right
C(s->t), complete left C(s<-t), incomplete I(s->t) and I(s<-t)). Inside scores are kept in log
space, each cell a log-sum-exp shifted by its largest term. The outside pass carries, for each
chart item, the probability that the derivation of the tree uses it (a number in [0, 1], so
kept linear without overflow): an item's probability flows to the two items and the arc of
each of its splits in proportion to exp(split's inside score - item's inside score); the arc
marginal P(s -> t) is the probability of I(s->t). Eisner's derivations are unambiguous (one
per tree), so these are exact. Multi-root: node 0 is an ordinary head of the chart and
Z = C(0->n); single root: the chart covers words 1..n and
Z = sum_m exp(arc[0, m]) C(1<-m) C(m->n), as eisner.pyx decodes it. O(n^3) time, O(n^2) memory.

Non-projective: the Matrix-Tree Theorem (Koo, Globerson, Carreras and Collins 2007; Smith and
Smith 2007). With each word's column of weights shifted by its best allowed score c_m,
W[h, m] = exp(arc[h, m] - c_m), and the n x n Laplacian over the words L[m, m] = sum_h W[h, m],
L[h, m] = -W[h, m] (h != m, both words): multi-root, the root's weights join the diagonal
(the sum over h includes h = 0) and Z = det L; single root, the diagonal sums over words only,
the first row of L is replaced by the root's weights W[0, m] (Koo et al.'s construction) and
Z = det of that. log Z = log |det| + sum_m c_m, the determinant from an LU factorisation with
partial pivoting (written here, no LAPACK: the loop runs without the GIL). Marginals are
d log Z / d arc: with M the inverse of the (replaced) Laplacian, mu[h, m] = W[h, m] (M[m, m] -
M[m, h]) for words h, mu[0, m] = W[0, m] M[m, m]; single root, an entry that falls in the
replaced first row counts 0 and mu[0, m] = W[0, m] M[m, 1] (1-based word indices).
O(n^3) time. Whether any tree exists is decided on the allowed arcs' graph (every word
reachable from the root; single root: from one root child, through words), not from a
rounded determinant. Precision: the Laplacian is ill-conditioned when the best trees score
far below the product of each word's best arc (a cycle among the best arcs), its condition
number growing like exp of that gap; results that are not a distribution per word (a
marginal below -1e-6, a column summing to 1 +- 1e-6 not) raise :class:`ImpreciseMarginals`;
marginals in (-1e-6, 0) are set to 0.

``dparse.prune.tree_marginals`` (the CRF pruner's training, dparse/_ext/arcprob.pyx) computes
the single- and multi-root matrix-tree marginals too, without log Z and with Gauss-Jordan
inversion; it is left as it is, since trained pruners depend on its exact rounding.
"""

from libc.math cimport INFINITY, exp, fabs, log
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse._ext.types cimport score_t, words_of

cnp.import_array()


class NoTreeError(ValueError):
    """Every tree of the sentence holds a disallowed (-inf or NaN) arc: no distribution."""


class ImpreciseMarginals(ArithmeticError):
    """The matrix-tree computation lost too many digits (an ill-conditioned Laplacian)."""


cdef enum:
    MARG_OK = 0
    MARG_NO_MEMORY = 1
    MARG_POSITIVE_INF = 2
    MARG_NO_TREE = 3
    MARG_IMPRECISE = 4


cdef inline score_t clean(score_t a) noexcept nogil:
    """An allowed score itself, -inf for a disallowed one (-inf or NaN)."""
    return a if a > -INFINITY else -INFINITY


cdef int check_scores(const score_t* arc, Py_ssize_t n) noexcept nogil:
    """MARG_POSITIVE_INF if some arc h -> m (m in 1..n, h != m) scores +inf, else MARG_OK."""
    cdef Py_ssize_t N = n + 1, h, m
    for h in range(N):
        for m in range(1, N):
            if h != m and arc[h * N + m] == INFINITY:
                return MARG_POSITIVE_INF
    return MARG_OK


# -- projective: inside-outside over Eisner's chart ----------------------------------------------

cdef struct Chart:
    Py_ssize_t N
    score_t* Cr   # log inside of C(s->t) at [s, t]
    score_t* Cl   # log inside of C(s<-t) at [s, t]
    score_t* S    # log sum over splits of I(s, t) without its arc: I(s->t) = S + arc[s, t]
    double* wCr   # probability that a tree's derivation uses C(s->t), at [s, t]
    double* wCl   # ... C(s<-t)
    double* wIr   # ... I(s->t): the marginal of s -> t
    double* wIl   # ... I(s<-t): the marginal of t -> s


cdef void inside(Chart* c, const score_t* arc, Py_ssize_t first) noexcept nogil:
    """Fills the log inside scores of every span of nodes first..n (first is 0 or 1)."""
    cdef Py_ssize_t N = c.N, k, s, t, r
    cdef score_t top, val, total, a
    for s in range(N):
        c.Cr[s * N + s] = 0.0
        c.Cl[s * N + s] = 0.0
    for k in range(1, N - first):
        for s in range(first, N - k):
            t = s + k
            # S(s, t) = log sum_{s<=r<t} exp(C(s->r) + C(r+1<-t))
            top = -INFINITY
            for r in range(s, t):
                val = c.Cr[s * N + r] + c.Cl[(r + 1) * N + t]
                if val > top:
                    top = val
            total = 0.0
            if top > -INFINITY:
                for r in range(s, t):
                    total += exp(c.Cr[s * N + r] + c.Cl[(r + 1) * N + t] - top)
                top += log(total)
            c.S[s * N + t] = top
            if s > 0:  # the root is never a dependent
                # C(s<-t) = log sum_{s<=r<t} exp(C(s<-r) + I(r<-t)), I(r<-t) = S(r, t) + arc[t, r]
                top = -INFINITY
                for r in range(s, t):
                    val = c.Cl[s * N + r] + c.S[r * N + t] + clean(arc[t * N + r])
                    if val > top:
                        top = val
                total = 0.0
                if top > -INFINITY:
                    for r in range(s, t):
                        total += exp(c.Cl[s * N + r] + c.S[r * N + t] + clean(arc[t * N + r])
                                     - top)
                    top += log(total)
                c.Cl[s * N + t] = top
            # C(s->t) = log sum_{s<r<=t} exp(I(s->r) + C(r->t)), I(s->r) = S(s, r) + arc[s, r]
            top = -INFINITY
            for r in range(s + 1, t + 1):
                val = c.S[s * N + r] + clean(arc[s * N + r]) + c.Cr[r * N + t]
                if val > top:
                    top = val
            total = 0.0
            if top > -INFINITY:
                for r in range(s + 1, t + 1):
                    a = c.S[s * N + r] + clean(arc[s * N + r]) + c.Cr[r * N + t]
                    total += exp(a - top)
                top += log(total)
            c.Cr[s * N + t] = top


cdef void outside(Chart* c, const score_t* arc, Py_ssize_t first) noexcept nogil:
    """Pushes the items' probabilities (wCr, wCl set for the spans the root uses) down the
    chart, widest spans first: each item's to its splits in proportion to their inside."""
    cdef Py_ssize_t N = c.N, k, s, t, r
    cdef double w, p
    cdef score_t whole, arc_st, arc_ts
    for k in range(N - 1 - first, 0, -1):
        for s in range(first, N - k):
            t = s + k
            # C(s->t) -> I(s->r), C(r->t)
            w = c.wCr[s * N + t]
            if w > 0.0:
                whole = c.Cr[s * N + t]
                for r in range(s + 1, t + 1):
                    p = w * exp(c.S[s * N + r] + clean(arc[s * N + r]) + c.Cr[r * N + t] - whole)
                    c.wIr[s * N + r] += p
                    c.wCr[r * N + t] += p
            # C(s<-t) -> C(s<-r), I(r<-t)
            w = c.wCl[s * N + t] if s > 0 else 0.0
            if w > 0.0:
                whole = c.Cl[s * N + t]
                for r in range(s, t):
                    p = w * exp(c.Cl[s * N + r] + c.S[r * N + t] + clean(arc[t * N + r]) - whole)
                    c.wCl[s * N + r] += p
                    c.wIl[r * N + t] += p
            # I(s->t) and I(s<-t) -> C(s->r), C(r+1<-t): both split alike
            w = c.wIr[s * N + t] + (c.wIl[s * N + t] if s > 0 else 0.0)
            if w > 0.0:
                whole = c.S[s * N + t]
                for r in range(s, t):
                    p = w * exp(c.Cr[s * N + r] + c.Cl[(r + 1) * N + t] - whole)
                    c.wCr[s * N + r] += p
                    c.wCl[(r + 1) * N + t] += p


cdef int projective_marginals(const score_t* arc, Py_ssize_t n, bint single_root,
                              score_t* log_z, double* mu) noexcept nogil:
    """log Z and the marginals mu [n+1, n+1] (NULL: log Z alone) of projective trees; a
    MARG_ status."""
    cdef Py_ssize_t N = n + 1, m, i
    cdef score_t top, val, total
    cdef Chart c
    cdef int status = check_scores(arc, n)
    if status != MARG_OK:
        return status
    cdef double* block = <double*>malloc(7 * N * N * sizeof(double))
    if block == NULL:
        return MARG_NO_MEMORY
    c.N = N
    c.Cr = block
    c.Cl = block + N * N
    c.S = block + 2 * N * N
    c.wCr = block + 3 * N * N
    c.wCl = block + 4 * N * N
    c.wIr = block + 5 * N * N
    c.wIl = block + 6 * N * N
    for i in range(4 * N * N):
        c.wCr[i] = 0.0
    if single_root:
        inside(&c, arc, 1)
        # Z = sum_m exp(arc[0, m] + C(1<-m) + C(m->n))
        top = -INFINITY
        for m in range(1, N):
            val = clean(arc[m]) + c.Cl[1 * N + m] + c.Cr[m * N + n]
            if val > top:
                top = val
        if top > -INFINITY:
            total = 0.0
            for m in range(1, N):
                total += exp(clean(arc[m]) + c.Cl[1 * N + m] + c.Cr[m * N + n] - top)
            top += log(total)
            for m in range(1, N):
                c.wIr[m] = exp(clean(arc[m]) + c.Cl[1 * N + m] + c.Cr[m * N + n] - top)
                c.wCl[1 * N + m] += c.wIr[m]
                c.wCr[m * N + n] += c.wIr[m]
    else:
        inside(&c, arc, 0)
        top = c.Cr[n]
        c.wCr[n] = 1.0
    log_z[0] = top
    if top == -INFINITY:
        status = MARG_NO_TREE
    elif mu != NULL:
        for i in range(N * N):
            mu[i] = 0.0
        outside(&c, arc, 1 if single_root else 0)
        for i in range(N * N):  # wIr[s, t] is P(s -> t) (0 for s >= t), wIl[s, t] P(t -> s)
            mu[i] = c.wIr[i]
        for i in range(1, N):
            for m in range(i + 1, N):
                mu[m * N + i] = c.wIl[i * N + m]
    free(block)
    return status


# -- non-projective: the matrix-tree theorem -----------------------------------------------------

cdef bint reaches_all(const score_t* arc, Py_ssize_t n, Py_ssize_t start, char* seen,
                      Py_ssize_t* stack) noexcept nogil:
    """Whether every word is reachable from node ``start`` (the root, or a word: then through
    words only) over allowed arcs; ``seen`` [n+1] and ``stack`` [n+1] are scratch."""
    cdef Py_ssize_t N = n + 1, h, m, top = 0, count = 0
    for m in range(N):
        seen[m] = 0
    seen[start] = 1
    stack[0] = start
    top = 1
    while top > 0:
        top -= 1
        h = stack[top]
        for m in range(1, N):
            if not seen[m] and m != h and arc[h * N + m] > -INFINITY:
                seen[m] = 1
                count += 1
                stack[top] = m
                top += 1
    return count == (n if start == 0 else n - 1)


cdef bint has_tree(const score_t* arc, Py_ssize_t n, bint single_root) noexcept nogil:
    """Whether some (single-root) tree uses allowed arcs only."""
    cdef Py_ssize_t m
    cdef bint found = False
    cdef char* seen = <char*>malloc(n + 1)
    cdef Py_ssize_t* stack = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    if seen == NULL or stack == NULL:
        free(seen); free(stack)
        return True  # the caller's own allocation fails next and reports it
    if not single_root:
        found = reaches_all(arc, n, 0, seen, stack)
    else:
        for m in range(1, n + 1):
            if arc[m] > -INFINITY and reaches_all(arc, n, m, seen, stack):
                found = True
                break
    free(seen); free(stack)
    return found


cdef bint lu_factor(double* a, Py_ssize_t* perm, Py_ssize_t n, double* log_det,
                    int* sign) noexcept nogil:
    """LU factorisation with partial pivoting of ``a`` [n, n] (row-major) in place: P a = L U,
    L unit lower (below the diagonal), U upper; ``perm[i]`` the original row of row i.
    Sets log |det a| and its sign; False for an exactly zero pivot (singular)."""
    cdef Py_ssize_t i, j, k, p
    cdef double best, f, t
    log_det[0] = 0.0
    sign[0] = 1
    for i in range(n):
        perm[i] = i
    for k in range(n):
        p = k
        best = fabs(a[k * n + k])
        for i in range(k + 1, n):
            if fabs(a[i * n + k]) > best:
                best = fabs(a[i * n + k])
                p = i
        if best == 0.0:
            return False
        if p != k:
            for j in range(n):
                t = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = t
            i = perm[k]; perm[k] = perm[p]; perm[p] = i
            sign[0] = -sign[0]
        if a[k * n + k] < 0.0:
            sign[0] = -sign[0]
        log_det[0] += log(fabs(a[k * n + k]))
        for i in range(k + 1, n):
            f = a[i * n + k] / a[k * n + k]
            a[i * n + k] = f
            if f != 0.0:
                for j in range(k + 1, n):
                    a[i * n + j] -= f * a[k * n + j]
    return True


cdef void lu_inverse(const double* lu, const Py_ssize_t* perm, Py_ssize_t n,
                     double* inv) noexcept nogil:
    """inv [n, n] = a^-1 from ``lu_factor``'s result: column j solves L U x = P e_j."""
    cdef Py_ssize_t i, j, k
    cdef double s
    for j in range(n):
        for i in range(n):  # forward substitution, L unit lower: y = L^-1 P e_j
            s = 1.0 if perm[i] == j else 0.0
            for k in range(i):
                s -= lu[i * n + k] * inv[k * n + j]
            inv[i * n + j] = s
        for i in range(n - 1, -1, -1):  # back substitution: x = U^-1 y
            s = inv[i * n + j]
            for k in range(i + 1, n):
                s -= lu[i * n + k] * inv[k * n + j]
            inv[i * n + j] = s / lu[i * n + i]


cdef int nonprojective_marginals(const score_t* arc, Py_ssize_t n, bint single_root,
                                 score_t* log_z, double* mu) noexcept nogil:
    """log Z and the marginals mu [n+1, n+1] (NULL: log Z alone) of non-projective trees; a
    MARG_ status."""
    cdef Py_ssize_t N = n + 1, h, m
    cdef score_t top, a, shift = 0.0
    cdef double total, log_det
    cdef int sign, status = check_scores(arc, n)
    if status != MARG_OK:
        return status
    if not has_tree(arc, n, single_root):
        log_z[0] = -INFINITY
        return MARG_NO_TREE
    cdef double* w = <double*>malloc(N * N * sizeof(double))     # [h, m], column-shifted
    cdef double* lap = <double*>malloc(n * n * sizeof(double))   # [head - 1, word - 1]
    cdef double* inv = <double*>malloc(n * n * sizeof(double))
    cdef Py_ssize_t* perm = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    if w == NULL or lap == NULL or inv == NULL or perm == NULL:
        free(w); free(lap); free(inv); free(perm)
        return MARG_NO_MEMORY
    for m in range(1, N):  # a tree exists, so every word has an allowed head
        top = -INFINITY
        for h in range(N):
            a = arc[h * N + m]
            if h != m and a > top:
                top = a
        shift += top
        for h in range(N):
            a = arc[h * N + m]
            w[h * N + m] = exp(a - top) if h != m and a > -INFINITY else 0.0
    for h in range(n):          # head h + 1
        for m in range(n):      # word m + 1
            lap[h * n + m] = -w[(h + 1) * N + m + 1]
    for m in range(n):
        total = 0.0 if single_root else w[m + 1]
        for h in range(1, N):
            total += w[h * N + m + 1]
        lap[m * n + m] = total
    if single_root:
        for m in range(n):
            lap[m] = w[m + 1]
    if not lu_factor(lap, perm, n, &log_det, &sign) or sign < 0:
        status = MARG_IMPRECISE
    elif mu == NULL:
        log_z[0] = log_det + shift
    elif mu != NULL:
        log_z[0] = log_det + shift
        for h in range(N):
            mu[h * N] = 0.0
            mu[h * N + h] = 0.0
        lu_inverse(lap, perm, n, inv)
        for m in range(1, N):
            mu[m] = w[m] * (inv[(m - 1) * n] if single_root else inv[(m - 1) * n + m - 1])
            for h in range(1, N):
                if h == m:
                    continue
                a = 0.0 if single_root and m == 1 else inv[(m - 1) * n + m - 1]
                if not (single_root and h == 1):
                    a -= inv[(m - 1) * n + h - 1]
                mu[h * N + m] = w[h * N + m] * a
        for m in range(1, N):
            total = 0.0
            for h in range(N):
                a = mu[h * N + m]
                if not a >= -1e-6:  # NaN too
                    status = MARG_IMPRECISE
                elif a < 0.0:
                    mu[h * N + m] = 0.0
                total += a
            if not fabs(total - 1.0) <= 1e-6:
                status = MARG_IMPRECISE
    free(w); free(lap); free(inv); free(perm)
    return status


cdef score_t run(const score_t[:, ::1] arc, bint projective, bint single_root,
                 double* mu) except? -1.0:
    """log Z (and the marginals into ``mu`` unless NULL), raising for a failed status."""
    cdef Py_ssize_t n = words_of(arc)
    cdef score_t log_z = -INFINITY
    cdef int status
    with nogil:
        if projective:
            status = projective_marginals(&arc[0, 0], n, single_root, &log_z, mu)
        else:
            status = nonprojective_marginals(&arc[0, 0], n, single_root, &log_z, mu)
    if status == MARG_NO_MEMORY:
        raise MemoryError("arc marginals' work buffers")
    if status == MARG_POSITIVE_INF:
        raise ValueError("arc scores must not be +inf")
    kind = ("projective " if projective else "") + ("single-root " if single_root else "")
    if status == MARG_NO_TREE:
        raise NoTreeError(f"no {kind}tree of {n} words avoids the disallowed (-inf) arcs")
    if status == MARG_IMPRECISE:
        raise ImpreciseMarginals(f"matrix-tree marginals of {n} words lost their precision "
                                 "(an ill-conditioned Laplacian: scale the scores down)")
    return log_z


def log_partition(const score_t[:, ::1] arc not None, bint projective, bint single_root=True):
    """log Z alone, as :func:`arc_marginals` computes it (the inside pass; the matrix-tree
    determinant, ImpreciseMarginals only when its sign is lost), at a fraction of the cost."""
    return float(run(arc, projective, single_root, NULL))


def arc_marginals(const score_t[:, ::1] arc not None, bint projective, bint single_root=True):
    """log Z and the arc marginals of the distribution over trees p(tree) ∝ exp(sum of its arc
    scores) (module doc).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1 (the decoder contract's scores; -inf or NaN:
    disallowed). projective: over projective trees only (inside-outside), else over every tree
    (the matrix-tree theorem); single_root: exactly one word attached to the root.
    Returns (log_z, mu): a float and float64 [n+1, n+1] with mu[h, m] = P(h -> m), 0 in column
    0 and on the diagonal. ValueError for +inf or a malformed array; NoTreeError when every
    tree holds a disallowed arc; ImpreciseMarginals when the matrix-tree result is not a
    distribution per word (non-projective only).
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef cnp.npy_intp dims[2]
    dims[0] = dims[1] = n + 1
    cdef cnp.ndarray mu = cnp.PyArray_ZEROS(2, dims, cnp.NPY_FLOAT64, 0)
    log_z = run(arc, projective, single_root, <double*>cnp.PyArray_DATA(mu))
    return float(log_z), mu
