# cython: language_level=3
"""Exact arc marginals and log partition function of the second-order projective tree
distribution p(tree) = exp(score(tree)) / Z, score(tree) the sum of its arc, consecutive-sibling
and grandparent parts, over every projective (single- or multi-root) tree of a sentence: the
factorization that ``eisner2_sibgp`` decodes (dparse/graph/eisner2.pyx, Koo and Collins 2010
Model 1; with ``grand`` None, that of ``eisner2_sib``).

Parts follow eisner2.pyx's contract: float64 ``arc`` [n+1, n+1], ``sib`` and ``grand``
[n+1, n+1, n+1] or None (zeros); ``sib[h, m, s]`` scores s as the modifier of h next farther
out than m on its side (m == h: s is the innermost one; the single root's one child m scores
sib[0, 0, m]); ``grand[g, h, m]`` scores g -> h -> m (none for arcs out of the root). Entries
that are part of no projective tree are ignored. -inf or NaN marks a disallowed part: a tree
holding one has probability 0 (eisner2 decodes such parts as a very low finite score instead);
+inf in a part that some tree can hold is a ValueError; a sentence whose every tree holds a
disallowed part has no distribution (:class:`dparse.graph.marginals.NoTreeError`).

Inside: the chart of eisner2_sibgp, each max replaced by a log-sum-exp (streaming: a running
maximum and the sum of exp(value - maximum), rescaled when the maximum grows). Items, each
indexed by the grandparent g of its head (the root's own spans at g = 0), as eisner2.pyx's:
complete C_g(h->e) and C_g(e<-h), incomplete I_g(h->m) and I_g(m<-h) (the arc, its
grandparent part and the sibling part that adds m), and the sibling spans
S_h(a, b) = sum_q C_h(a->q) C_h(q+1<-b). A tree has exactly one derivation in this chart (its
items are fixed by the tree: each modifier's previous sibling, each sibling span's split at the
end of a's right subtree), so the chart's sum is Z. Single root: Z = sum_m exp(arc[0, m] +
sib[0, 0, m]) C_0(1<-m) C_0(m->n); multi-root: Z = C(0->n), the root a head of the chart.

Outside: as in dparse/graph/marginals.pyx, each item carries the probability that a tree's
derivation uses it (in [0, 1], kept linear), pushed down the chart widest spans first (within a
span, complete items before incomplete ones, which they use), to each split in proportion to
exp(split's inside - item's inside); the marginal P(h -> m) is the sum over g of the
probabilities of I_g(h->m). Sibling spans are rebuilt per pair of span ends (each is used by
one pair only, as eisner2.pyx builds them) rather than stored.

An item headed by h with grandparent g is used only in derivations that hold the arc g -> h,
so where that arc is disallowed the item is left at probability 0 without being computed
(pruned sentences are cheap); likewise every I_g(h->m) of a disallowed arc h -> m.
O(n^4) time, 32 (n+1)^3 bytes of memory (eisner2_sibgp's), exact up to rounding.
"""

from libc.math cimport INFINITY, exp, log
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse._ext.types cimport score_t, words_of

from dparse.graph.marginals import NoTreeError

cnp.import_array()

# (n + 1)^3 chart sizes must not overflow; far beyond what memory allows anyway
cdef Py_ssize_t MAX_WORDS = 65535

cdef enum:
    M2_OK = 0
    M2_NO_MEMORY = 1
    M2_POSITIVE_INF = 2
    M2_NO_TREE = 3
    M2_TOO_LONG = 4


cdef inline score_t part(const score_t* x, Py_ssize_t i) noexcept nogil:
    """x[i] of an optional part array: 0 without the array, -inf if disallowed (-inf, NaN)."""
    if x == NULL:
        return 0.0
    return x[i] if x[i] > -INFINITY else -INFINITY


cdef struct LogSum:
    score_t top     # the largest value added so far
    double total    # sum of exp(value - top)


cdef inline void add(LogSum* s, score_t v) noexcept nogil:
    if v > s.top:
        s.total = s.total * exp(s.top - v) + 1.0 if s.top > -INFINITY else 1.0
        s.top = v
    elif v > -INFINITY:
        s.total += exp(v - s.top)


cdef inline score_t value(const LogSum* s) noexcept nogil:
    return s.top + log(s.total) if s.top > -INFINITY else -INFINITY


cdef bint positive_inf(const score_t* arc, const score_t* sib, const score_t* grand,
                       Py_ssize_t n, bint single_root) noexcept nogil:
    """Whether a part that some projective tree can hold scores +inf."""
    cdef Py_ssize_t N = n + 1, N2 = N * N, h, m, s, g, lo, hi
    for h in range(N):
        for m in range(1, N):
            if h != m and arc[h * N + m] == INFINITY:
                return True
    if sib != NULL:
        for h in range(N):
            for s in range(1, N):
                if s == h:
                    continue
                if sib[h * N2 + h * N + s] == INFINITY:
                    return True
                if h == 0 and single_root:
                    continue
                lo, hi = (h + 1, s) if s > h else (s + 1, h)  # m strictly between h and s
                for m in range(lo, hi):
                    if sib[h * N2 + m * N + s] == INFINITY:
                        return True
    if grand != NULL:
        for g in range(N):
            for h in range(1, N):
                for m in range(1, N):
                    if m != h and (g < h and g < m or g > h and g > m) \
                            and grand[g * N2 + h * N + m] == INFINITY:
                        return True
    return False


cdef struct Chart2:
    Py_ssize_t N
    const score_t* arc
    const score_t* sib
    const score_t* grand
    score_t* C      # [h, g, e]: log inside of C_g(h->e) or C_g(e<-h), -inf where not computed
    score_t* Inc    # [h, g, m]: log inside of I_g(h->m) or I_g(m<-h)
    double* wC      # [h, g, e]: the probability that a tree's derivation uses the item
    double* wI      # [h, g, m]
    score_t* S      # [N]: the sibling spans S_h(r, .) of the pair being built, sib part added
    score_t* span   # [N]: the same without the sib part
    score_t* near   # [N]: gathered complete spans of the pair being built
    double* wS      # [N], wnear [N]: the probabilities pushed to those
    double* wnear


cdef inline bint live(const Chart2* c, Py_ssize_t g, Py_ssize_t h) noexcept nogil:
    """Whether items headed by h with grandparent g can be in a tree: the arc g -> h allowed
    (the root's own items, h == 0, always)."""
    return h == 0 or c.arc[g * c.N + h] > -INFINITY


cdef inline score_t sibling_span(const score_t* C, Py_ssize_t N, Py_ssize_t h, Py_ssize_t a,
                                 Py_ssize_t b) noexcept nogil:
    """log S_h(a, b) = log sum_{a<=q<b} C_h(a->q) C_h(q+1<-b), a < b, h outside a..b."""
    cdef const score_t* right = C + a * N * N + h * N
    cdef const score_t* left = C + b * N * N + h * N + 1
    cdef LogSum s
    cdef Py_ssize_t q
    s.top = -INFINITY
    s.total = 0.0
    for q in range(a, b):
        add(&s, right[q] + left[q])
    return value(&s)


cdef score_t siblings(Chart2* c, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """Fills c.span[r] = log S_h(r, m) (m > h) or log S_h(m, r) (m < h), and c.S[r] the same
    plus sib[h, r, m], for every r strictly between h and m; returns the innermost case's
    log sib[h, h, m] + C_h(m<-h+1) (or C_h(m->h-1))."""
    cdef Py_ssize_t N = c.N, N2 = N * N, r
    if m > h:
        for r in range(h + 1, m):
            c.span[r] = sibling_span(c.C, N, h, r, m)
            c.S[r] = c.span[r] + part(c.sib, h * N2 + r * N + m)
        return part(c.sib, h * N2 + h * N + m) + c.C[m * N2 + h * N + h + 1]
    for r in range(m + 1, h):
        c.span[r] = sibling_span(c.C, N, h, m, r)
        c.S[r] = c.span[r] + part(c.sib, h * N2 + r * N + m)
    return part(c.sib, h * N2 + h * N + m) + c.C[m * N2 + h * N + h - 1]


cdef inline bint outside_span(Py_ssize_t g, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Whether g can be the grandparent of a span a..b headed by a word: g outside a..b."""
    return g < a or g > b


cdef void incomplete_inside(Chart2* c, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """I_g(h->m) (or I_g(m<-h)) for every live g: arc[h, m] + grand[g, h, m] + log(
    sib[h, h, m] C_h(innermost) + sum_r I_g(h->r) S_h(r, m) sib[h, r, m]), r between h and m."""
    cdef Py_ssize_t N = c.N, N2 = N * N, g, r, lo, hi
    cdef score_t score = part(c.arc, h * N + m), inner
    cdef const score_t* row
    cdef LogSum s
    if not score > -INFINITY:
        return
    inner = siblings(c, h, m)
    lo, hi = (h + 1, m) if m > h else (m + 1, h)
    for g in range(N if h > 0 else 1):
        if h > 0 and not (outside_span(g, lo - 1, hi) and live(c, g, h)):
            continue
        row = c.Inc + h * N2 + g * N
        s.top = -INFINITY
        s.total = 0.0
        add(&s, inner)
        for r in range(lo, hi):
            add(&s, row[r] + c.S[r])
        c.Inc[h * N2 + g * N + m] = (value(&s) + score
                                     + (part(c.grand, g * N2 + h * N + m) if h > 0 else 0.0))


cdef void complete_inside(Chart2* c, Py_ssize_t h, Py_ssize_t e) noexcept nogil:
    """C_g(h->e) (or C_g(e<-h)) for every live g: log sum_m I_g(h->m) C_h(m->e), m from the
    one next to h to e."""
    cdef Py_ssize_t N = c.N, N2 = N * N, g, m, lo, hi
    cdef const score_t* row
    cdef LogSum s
    lo, hi = (h + 1, e + 1) if e > h else (e, h)
    for m in range(lo, hi):
        c.near[m] = c.C[m * N2 + h * N + e]
    for g in range(N if h > 0 else 1):
        if h > 0 and not (outside_span(g, min(h, e), max(h, e)) and live(c, g, h)):
            continue
        row = c.Inc + h * N2 + g * N
        s.top = -INFINITY
        s.total = 0.0
        for m in range(lo, hi):
            add(&s, row[m] + c.near[m])
        c.C[h * N2 + g * N + e] = value(&s)


cdef void fill(Chart2* c, Py_ssize_t first) noexcept nogil:
    """The inside pass over the spans of nodes first..n (first is 0 or 1)."""
    cdef Py_ssize_t N = c.N, N2 = N * N, k, a, b, g
    for a in range(N):
        for g in range(N):
            c.C[a * N2 + g * N + a] = 0.0
    for k in range(1, N - first):
        for a in range(first, N - k):
            b = a + k
            incomplete_inside(c, a, b)
            if a > 0:  # the root is never a modifier
                incomplete_inside(c, b, a)
                complete_inside(c, b, a)
            complete_inside(c, a, b)


cdef void complete_outside(Chart2* c, Py_ssize_t h, Py_ssize_t e) noexcept nogil:
    """Pushes each C_g(h->e)'s probability to its splits I_g(h->m), C_h(m->e)."""
    cdef Py_ssize_t N = c.N, N2 = N * N, g, m, lo, hi
    cdef double w, p
    cdef score_t whole
    cdef const score_t* row
    cdef double* wrow
    lo, hi = (h + 1, e + 1) if e > h else (e, h)
    for m in range(lo, hi):
        c.near[m] = c.C[m * N2 + h * N + e]
        c.wnear[m] = 0.0
    for g in range(N if h > 0 else 1):
        w = c.wC[h * N2 + g * N + e]
        if not w > 0.0:
            continue
        whole = c.C[h * N2 + g * N + e]
        row = c.Inc + h * N2 + g * N
        wrow = c.wI + h * N2 + g * N
        for m in range(lo, hi):
            p = w * exp(row[m] + c.near[m] - whole)
            wrow[m] += p
            c.wnear[m] += p
    for m in range(lo, hi):
        c.wC[m * N2 + h * N + e] += c.wnear[m]


cdef void incomplete_outside(Chart2* c, Py_ssize_t h, Py_ssize_t m, double* mu) noexcept nogil:
    """Adds the probabilities of the I_g(h->m) to mu[h, m] and pushes them to their splits:
    the innermost case's span, or I_g(h->r) and the sibling span S_h(r, m), then each sibling
    span's to its two complete spans."""
    cdef Py_ssize_t N = c.N, N2 = N * N, g, r, q, lo, hi, a, b
    cdef score_t score = part(c.arc, h * N + m), inner, rest
    cdef double w, p, total = 0.0, innermost = 0.0
    cdef const score_t* row
    cdef double* wrow
    if not score > -INFINITY:
        return
    lo, hi = (h + 1, m) if m > h else (m + 1, h)
    for g in range(N if h > 0 else 1):
        total += c.wI[h * N2 + g * N + m]
    if not total > 0.0:
        return
    mu[h * N + m] = total
    inner = siblings(c, h, m)
    for r in range(lo, hi):
        c.wS[r] = 0.0
    for g in range(N if h > 0 else 1):
        w = c.wI[h * N2 + g * N + m]
        if not w > 0.0:
            continue
        # the item's inside without its arc and grandparent parts
        rest = (c.Inc[h * N2 + g * N + m] - score
                - (part(c.grand, g * N2 + h * N + m) if h > 0 else 0.0))
        innermost += w * exp(inner - rest)
        row = c.Inc + h * N2 + g * N
        wrow = c.wI + h * N2 + g * N
        for r in range(lo, hi):
            p = w * exp(row[r] + c.S[r] - rest)
            wrow[r] += p
            c.wS[r] += p
    # the innermost case's span: C_h(m<-h+1) or C_h(m->h-1)
    c.wC[m * N2 + h * N + (h + 1 if m > h else h - 1)] += innermost
    for r in range(lo, hi):
        w = c.wS[r]
        if not w > 0.0:
            continue
        a, b = (r, m) if m > h else (m, r)
        for q in range(a, b):  # S_h(a, b) -> C_h(a->q), C_h(q+1<-b)
            p = w * exp(c.C[a * N2 + h * N + q] + c.C[b * N2 + h * N + q + 1] - c.span[r])
            c.wC[a * N2 + h * N + q] += p
            c.wC[b * N2 + h * N + q + 1] += p


cdef void push_down(Chart2* c, Py_ssize_t first, double* mu) noexcept nogil:
    """The outside pass, the root's items' probabilities set: widest spans first."""
    cdef Py_ssize_t N = c.N, k, a, b
    for k in range(N - 1 - first, 0, -1):
        for a in range(first, N - k):
            b = a + k
            complete_outside(c, a, b)
            if a > 0:
                complete_outside(c, b, a)
                incomplete_outside(c, b, a, mu)
            incomplete_outside(c, a, b, mu)


cdef int second_order(const score_t* arc, const score_t* sib, const score_t* grand,
                      Py_ssize_t n, bint single_root, score_t* log_z, double* mu) noexcept nogil:
    """log Z and the arc marginals mu [n+1, n+1] (NULL: log Z alone); an M2_ status."""
    cdef Py_ssize_t N = n + 1, N2 = N * N, N3 = N2 * N, m, i
    cdef score_t term
    cdef LogSum s
    cdef Chart2 c
    cdef char* block
    if n > MAX_WORDS:
        return M2_TOO_LONG
    if positive_inf(arc, sib, grand, n, single_root):
        return M2_POSITIVE_INF
    block = <char*>malloc((2 * N3 + 3 * N) * sizeof(score_t)
                          + ((2 * N3 + 2 * N) * sizeof(double) if mu != NULL else 0))
    if block == NULL:
        return M2_NO_MEMORY
    c.N = N
    c.arc, c.sib, c.grand = arc, sib, grand
    c.C = <score_t*>block
    c.Inc = c.C + N3
    c.S = c.Inc + N3
    c.span = c.S + N
    c.near = c.span + N
    for i in range(2 * N3):
        c.C[i] = -INFINITY
    if single_root:
        fill(&c, 1)
        s.top = -INFINITY
        s.total = 0.0
        for m in range(1, N):  # arc[0, m] + sib[0, 0, m] + C_0(1<-m) + C_0(m->n)
            add(&s, part(arc, m) + part(sib, m) + c.C[m * N2 + 1] + c.C[m * N2 + n])
        log_z[0] = value(&s)
    else:
        fill(&c, 0)
        log_z[0] = c.C[n]
    if log_z[0] == -INFINITY:
        free(block)
        return M2_NO_TREE
    if mu != NULL:
        c.wC = <double*>(c.near + N)
        c.wI = c.wC + N3
        c.wS = c.wI + N3
        c.wnear = c.wS + N
        for i in range(2 * N3):
            c.wC[i] = 0.0
        for i in range(N2):
            mu[i] = 0.0
        if single_root:
            for m in range(1, N):
                term = part(arc, m) + part(sib, m) + c.C[m * N2 + 1] + c.C[m * N2 + n]
                mu[m] = exp(term - log_z[0])
                c.wC[m * N2 + 1] += mu[m]
                c.wC[m * N2 + n] += mu[m]
        else:
            c.wC[n] = 1.0
        push_down(&c, 1 if single_root else 0, mu)
    free(block)
    return M2_OK


# -- Python wrappers ------------------------------------------------------------------------------

cdef const score_t* part_data(const score_t[:, :, ::1] scores, Py_ssize_t N,
                              str name) except? NULL:
    """Pointer to the data of an optional [N, N, N] part array; NULL for None."""
    if scores is None:
        return NULL
    if scores.shape[0] != N or scores.shape[1] != N or scores.shape[2] != N:
        raise ValueError(f"{name} scores must have shape [n+1, n+1, n+1] = [{N}, {N}, {N}], "
                         f"got ({scores.shape[0]}, {scores.shape[1]}, {scores.shape[2]})")
    return &scores[0, 0, 0]


cdef score_t run(const score_t[:, ::1] arc, const score_t[:, :, ::1] sib,
                 const score_t[:, :, ::1] grand, bint single_root, double* mu) except? -1.0:
    """log Z (and the marginals into ``mu`` unless NULL), raising for a failed status."""
    cdef Py_ssize_t n = words_of(arc)
    cdef const score_t* sib_data = part_data(sib, n + 1, "sib")
    cdef const score_t* grand_data = part_data(grand, n + 1, "grand")
    cdef score_t log_z = -INFINITY
    cdef int status
    with nogil:
        status = second_order(&arc[0, 0], sib_data, grand_data, n, single_root, &log_z, mu)
    if status == M2_NO_MEMORY:
        raise MemoryError("second-order marginals' chart")
    if status == M2_TOO_LONG:
        raise ValueError(f"sentence too long for second-order marginals ({n} words)")
    if status == M2_POSITIVE_INF:
        raise ValueError("arc, sib and grand scores must not be +inf")
    if status == M2_NO_TREE:
        kind = "single-root " if single_root else ""
        raise NoTreeError(f"no projective {kind}tree of {n} words avoids the disallowed (-inf) "
                          "parts")
    return log_z


def second_order_log_partition(const score_t[:, ::1] arc not None,
                               const score_t[:, :, ::1] sib=None,
                               const score_t[:, :, ::1] grand=None, bint single_root=True):
    """log Z alone, as :func:`second_order_marginals` computes it (the inside pass)."""
    return float(run(arc, sib, grand, single_root, NULL))


def second_order_marginals(const score_t[:, ::1] arc not None,
                           const score_t[:, :, ::1] sib=None,
                           const score_t[:, :, ::1] grand=None, bint single_root=True):
    """log Z and the arc marginals of p(tree) ∝ exp(sum of its arc, sibling and grandparent
    parts) over projective trees (module doc).

    arc: float64 [n+1, n+1], sib and grand: float64 [n+1, n+1, n+1] or None, C-contiguous,
    n >= 1, as eisner2_sibgp takes them (-inf or NaN: disallowed). single_root: exactly one
    word attached to the root.
    Returns (log_z, mu): a float and float64 [n+1, n+1] with mu[h, m] = P(h -> m), 0 in column
    0 and on the diagonal. ValueError for +inf or a malformed array; NoTreeError when every
    tree holds a disallowed part.
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef cnp.npy_intp dims[2]
    dims[0] = dims[1] = n + 1
    cdef cnp.ndarray mu = cnp.PyArray_ZEROS(2, dims, cnp.NPY_FLOAT64, 0)
    log_z = run(arc, sib, grand, single_root, <double*>cnp.PyArray_DATA(mu))
    return float(log_z), mu
