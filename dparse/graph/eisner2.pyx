# cython: language_level=3
"""Exact second-order projective decoders: Eisner's algorithm with sibling and grandparent parts.

- ``eisner2_sib``: arc and consecutive-sibling parts, the second-order Eisner algorithm of
  McDonald and Pereira (2006, "Online learning of approximate dependency parsing algorithms"),
  O(n^3) time.
- ``eisner2_sibgp``: arc, consecutive-sibling and grandparent parts, "Model 1" of Koo and
  Collins (2010, "Efficient third-order dependency parsers"), whose chart items carry the
  grandparent g of their head, O(n^4) time. (Model 1 also scores grand-sibling parts
  g -> h -> {r, m}; dparse has none, they would enter next to sib[h, r, m] for each g.)

Parts, over nodes 0..n with node 0 the root, all float64 and indexed head first:

- ``arc[h, m]``: the arc h -> m.
- ``sib[h, m, s]``: m and s are consecutive modifiers of h on the same side, s the next one
  farther from h; m == h makes s the innermost modifier on its side. A head with modifiers
  m1 (innermost), ..., mk on one side scores sib[h, h, m1] + sib[h, m1, m2] + ... +
  sib[h, m(k-1), mk] there; there is no stop part. The root is a head like any other (all its
  modifiers on the right); with a single root its one child m scores sib[0, 0, m].
- ``grand[g, h, m]``: g -> h -> m, for every arc h -> m whose head h has a head g (none for
  arcs out of the root).

A tree scores the sum of its parts. Entries that are part of no projective tree (the diagonal
and column 0 of arc, sib[h, m, s] unless m == h or m lies strictly between h and s, grand[g, h, m]
with g inside the span of h and m, sib[0, m, s] with m > 0 under a single root) are ignored. A
missing part array (NULL here, None in Python) counts as zeros.

Disallowed parts: as for the first-order decoders (see types.pxd), -inf or NaN marks a part as
disallowed; it is replaced by a finite ``floor`` so low that a tree with fewer disallowed parts
(arcs, sibling and grandparent parts counted alike) always outscores one with more. The result is
the best tree without disallowed parts if there is one, else the best among the trees with the
fewest disallowed parts. +inf is an error.

Spans, with h the head at one end, over nodes s..t:

- complete ``C(h->e)`` (``C(e<-h)``): h heads everything between h and e, on that side, and
  takes no more modifiers on that side within the span;
- incomplete ``I(h->m)`` (``I(m<-h)``): the arc h -> m, with h's modifiers between h and m and m's
  modifiers on h's side of m;
- sibling ``S(a, b)``, a < b: a and b are consecutive modifiers of one head outside a..b, with a's
  right and b's left modifiers in between, ``S(a, b) = max_q C(a->q) + C(q+1<-b)``.

An incomplete span adds the arc to either its innermost-modifier case or to the incomplete span
of the previous (nearer) modifier r glued to the sibling span between r and m, scoring
sib[h, r, m]. The sibgp chart indexes every complete and incomplete span by the grandparent g
(the head of its head, outside the span) as well, which lets an incomplete span score grand[g, h, m]
and its modifier's spans be built with h as their grandparent. Node 0 is never a modifier.

Multi-root: node 0 takes part in the chart as a head and the answer is ``C(0->n)``. Single root:
the chart covers words 1..n and the root's span is built from one root child m,
``max_m arc[0, m] + sib[0, 0, m] + C(1<-m) + C(m->n)`` (the spans of m with grandparent 0).

Memory layouts keep every inner loop on contiguous memory: complete spans are stored both ways
(``CT`` transposed); eisner2_sib keeps sibling spans in a symmetric matrix (``X[a, b] = X[b, a] =
S(a, b)``, read along either triangle) and reads sibling scores from a transposed copy
``sibT[h, m, r] = sib[h, r, m]``; eisner2_sibgp indexes its tables head first ([h, g, e]), so
that the spans of one head for every grandparent lie together, and builds each sibling span
S_h(a, b) with the one pair of span ends that uses it. The inner loops take about 5 n^3 / 6
steps in all for eisner2_sib (n^3 / 6 per kind of span and direction) and 5 n^4 / 12 for
eisner2_sibgp.

Ties go to the innermost-modifier case, then to the smallest split point (and, for the single
root, the smallest root child): outputs are deterministic.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse.graph.bounds cimport BoundsC, bounds_init, widen
from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    DECODE_TOO_LONG,
    allowed,
    head_t,
    raise_for_status,
    score_t,
    words_of,
)

cnp.import_array()

# (n + 1)^3 chart sizes in bytes must not overflow; far beyond what memory allows anyway
cdef Py_ssize_t MAX_WORDS = 65535


# -- disallowed parts -----------------------------------------------------------------------------

cdef int part_floor(const score_t* arc, const score_t* sib, const score_t* grand, Py_ssize_t n,
                    bint single_root, score_t* floor, score_t* sibT) noexcept nogil:
    """Scans the parts that some projective tree can contain and sets ``floor``, the stand-in
    for disallowed parts. Returns DECODE_OK or DECODE_POSITIVE_INF.

    A tree has P <= 3n parts (n arcs, n sibling parts, at most n grandparent parts; missing
    arrays count as zeros). With lo = min(0, lowest allowed score) and hi = max(0, highest),
    a tree with k disallowed parts scores at least P lo + k floor and one with k + 1 or more
    at most P hi + (k + 1) floor (floor < 0), so any floor < P (lo - hi) makes fewer disallowed
    parts win; ``lo - (P + 1) (hi - lo + 1)`` is one.

    sibT: NULL, or [N, N, N] (N = n + 1) to receive sib[h, r, m] at [h, m, r] for every r
    strictly between h and m (0 if sib is NULL, ``floor`` if disallowed), copied while scanning.
    """
    cdef Py_ssize_t N = n + 1, N2 = N * N, h, m, g, s, base, start, stop
    cdef bint sib_pruned
    cdef BoundsC b
    bounds_init(&b, INFINITY, -INFINITY)
    if sib != NULL:
        for h in range(N):
            base = h * N2 + h * N  # sib[h, h, s]: s in 1..n, s != h
            if widen(&b, sib, base + 1, base + h) or widen(&b, sib, base + h + 1, base + N):
                return DECODE_POSITIVE_INF
            if h == 0 and single_root:
                continue
            for m in range(1, N):  # sib[h, m, s], m strictly between h and s
                if m == h:
                    continue
                base = h * N2 + m * N
                start = base + (1 if m < h else m + 1)
                stop = base + (m if m < h else N)
                if widen(&b, sib, start, stop):
                    return DECODE_POSITIVE_INF
                if sibT != NULL:
                    for s in range(start - base, stop - base):
                        sibT[h * N2 + s * N + m] = sib[base + s]
    sib_pruned = b.pruned
    for h in range(N):  # arc[h, m]: m in 1..n, m != h
        if widen(&b, arc, h * N + 1, h * N + h) or widen(&b, arc, h * N + h + 1, h * N + N):
            return DECODE_POSITIVE_INF
    if grand != NULL:
        for g in range(N):  # grand[g, h, m], h and m >= 1 on the same side of g
            for h in range(1, N):
                base = g * N2 + h * N
                if h > g and (widen(&b, grand, base + g + 1, base + h)
                              or widen(&b, grand, base + h + 1, base + N)):
                    return DECODE_POSITIVE_INF
                if h < g and (widen(&b, grand, base + 1, base + h)
                              or widen(&b, grand, base + h + 1, base + g)):
                    return DECODE_POSITIVE_INF
    if b.lo > 0.0:
        b.lo = 0.0
    if b.hi < 0.0:
        b.hi = 0.0
    floor[0] = b.lo - (3 * n + 1) * (b.hi - b.lo + 1.0)
    if sibT != NULL and (sib == NULL or sib_pruned):
        for h in range(1 if single_root else 0, N):  # the rows the copy above filled
            for m in range(1, N):
                start = h * N2 + m * N + (h + 1 if m > h else m + 1)
                stop = h * N2 + m * N + (m if m > h else h)
                for s in range(start, stop):
                    sibT[s] = 0.0 if sib == NULL else allowed(sibT[s], floor[0])
    return DECODE_OK


cdef inline score_t part(const score_t* x, Py_ssize_t i, score_t floor) noexcept nogil:
    """Score x[i] of an optional part array: 0 if there is none, ``floor`` if disallowed."""
    if x == NULL:
        return 0.0
    return allowed(x[i], floor)


# -- arc + sibling parts: McDonald and Pereira (2006), O(n^3) ------------------------------------

cdef struct SibChartC:
    Py_ssize_t N           # nodes 0..n, N = n + 1; tables [N, N] unless said otherwise
    score_t* C             # C(h->e) or C(e<-h) at [h, e]: head first, e the far end
    score_t* CT            # the same at [e, h]
    score_t* Inc           # I(h->m) or I(m<-h) at [h, m] ("I" is a macro of complex.h)
    score_t* X             # S(a, b), a < b, at [a, b] and at [b, a]
    score_t* sibT          # [N, N, N]: sib[h, r, m] at [h, m, r] for r strictly between h and m
    int* bC                # modifier m that completes C at [h, e]
    int* bI                # previous modifier r of I at [h, m]; h for the innermost case
    int* bS                # split q of S(a, b) at [a, b]
    head_t* heads


cdef void sib_fill(SibChartC* c, const score_t* arc, const score_t* sib, score_t floor,
                   Py_ssize_t first) noexcept nogil:
    """Fills the chart for spans of nodes first..n (first is 0 or 1)."""
    cdef Py_ssize_t N = c.N, N2 = N * N, k, a, b, q, r, m, arg
    cdef score_t best, val
    cdef const score_t* row
    cdef score_t* C = c.C
    cdef score_t* CT = c.CT
    cdef score_t* Inc = c.Inc
    cdef score_t* X = c.X
    for a in range(N):
        C[a * N + a] = CT[a * N + a] = 0.0
    for k in range(1, N - first):
        for a in range(first, N - k):
            b = a + k
            if a > 0:  # the root is never a modifier, so never a sibling
                # S(a, b) = max_{a<=q<b} C(a->q) + C(q+1<-b)
                best = -INFINITY
                arg = a
                for q in range(a, b):
                    val = C[a * N + q] + C[b * N + q + 1]
                    if val > best:
                        best = val
                        arg = q
                X[a * N + b] = X[b * N + a] = best
                c.bS[a * N + b] = <int>arg
            # I(a->b) = arc[a, b] + max(sib[a, a, b] + C(a+1<-b),
            #                           max_{a<r<b} I(a->r) + S(r, b) + sib[a, r, b])
            best = part(sib, a * N2 + a * N + b, floor) + C[b * N + a + 1]
            arg = a
            row = c.sibT + a * N2 + b * N
            for r in range(a + 1, b):
                val = Inc[a * N + r] + X[b * N + r] + row[r]
                if val > best:
                    best = val
                    arg = r
            Inc[a * N + b] = best + allowed(arc[a * N + b], floor)
            c.bI[a * N + b] = <int>arg
            if a > 0:
                # I(a<-b) = arc[b, a] + max(sib[b, b, a] + C(a->b-1),
                #                           max_{a<r<b} S(a, r) + I(r<-b) + sib[b, r, a])
                best = part(sib, b * N2 + b * N + a, floor) + C[a * N + b - 1]
                arg = b
                row = c.sibT + b * N2 + a * N
                for r in range(a + 1, b):
                    val = X[a * N + r] + Inc[b * N + r] + row[r]
                    if val > best:
                        best = val
                        arg = r
                Inc[b * N + a] = best + allowed(arc[b * N + a], floor)
                c.bI[b * N + a] = <int>arg
                # C(a<-b) = max_{a<=m<b} C(a<-m) + I(m<-b)
                best = -INFINITY
                arg = a
                for m in range(a, b):
                    val = CT[a * N + m] + Inc[b * N + m]
                    if val > best:
                        best = val
                        arg = m
                C[b * N + a] = CT[a * N + b] = best
                c.bC[b * N + a] = <int>arg
            # C(a->b) = max_{a<m<=b} I(a->m) + C(m->b)
            best = -INFINITY
            arg = b
            for m in range(a + 1, b + 1):
                val = Inc[a * N + m] + CT[b * N + m]
                if val > best:
                    best = val
                    arg = m
            C[a * N + b] = CT[b * N + a] = best
            c.bC[a * N + b] = <int>arg


# Backtracking: each span writes the heads of the arcs it contains.
cdef void sib_complete(SibChartC* c, Py_ssize_t h, Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t m
    if h == e:
        return
    m = c.bC[h * c.N + e]
    sib_incomplete(c, h, m)
    sib_complete(c, m, e)


cdef void sib_incomplete(SibChartC* c, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t r = c.bI[h * c.N + m]
    c.heads[m] = <head_t>h
    if r == h:  # m is h's innermost modifier on its side
        sib_complete(c, m, h + 1 if m > h else h - 1)
    elif m > h:
        sib_incomplete(c, h, r)
        sib_sibling(c, r, m)
    else:
        sib_sibling(c, m, r)
        sib_incomplete(c, h, r)


cdef void sib_sibling(SibChartC* c, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t q = c.bS[a * c.N + b]
    sib_complete(c, a, q)
    sib_complete(c, b, q + 1)


cdef int eisner2_sib_decode(const score_t* arc, const score_t* sib, Py_ssize_t n,
                            bint single_root, head_t* heads) noexcept nogil:
    cdef Py_ssize_t N = n + 1, N2 = N * N, m, root_child = 1
    cdef score_t floor, best = -INFINITY, val
    cdef int status
    cdef SibChartC c
    cdef char* block
    if n > MAX_WORDS:
        return DECODE_TOO_LONG
    block = <char*>malloc(N2 * N * sizeof(score_t) + N2 * (4 * sizeof(score_t) + 3 * sizeof(int)))
    if block == NULL:
        return DECODE_NO_MEMORY
    c.N = N
    c.sibT = <score_t*>block
    c.C = c.sibT + N2 * N
    c.CT = c.C + N2
    c.Inc = c.CT + N2
    c.X = c.Inc + N2
    c.bC = <int*>(c.X + N2)
    c.bI = c.bC + N2
    c.bS = c.bI + N2
    c.heads = heads
    heads[0] = -1
    status = part_floor(arc, sib, NULL, n, single_root, &floor, c.sibT)
    if status != DECODE_OK:
        free(block)
        return status
    if single_root:
        sib_fill(&c, arc, sib, floor, 1)
        # C(0->n) = max_m arc[0, m] + sib[0, 0, m] + C(1<-m) + C(m->n)
        for m in range(1, N):
            val = allowed(arc[m], floor) + part(sib, m, floor) + c.C[m * N + 1] + c.C[m * N + n]
            if val > best:
                best = val
                root_child = m
        heads[root_child] = 0
        sib_complete(&c, root_child, 1)
        sib_complete(&c, root_child, n)
    else:
        sib_fill(&c, arc, sib, floor, 0)
        sib_complete(&c, 0, n)
    free(block)
    return DECODE_OK


# -- arc + sibling + grandparent parts: Koo and Collins (2010) Model 1, O(n^4) -------------------

cdef struct GrandChartC:
    Py_ssize_t N           # nodes 0..n, N = n + 1; tables [N, N, N], head first
    score_t* C             # C_g(h->e) or C_g(e<-h) at [h, g, e]; the root's own spans at g = 0
    score_t* CT            # the same at [e, g, h]
    score_t* Inc           # I_g(h->m) or I_g(m<-h) at [h, g, m]; the root's at g = 0
    score_t* S             # [N]: the sibling spans of the pair being built
    int* bC                # modifier m that completes C at [h, g, e]
    int* bI                # previous modifier r of I at [h, g, m]; h for the innermost case
    head_t* heads


cdef inline score_t sibling_span(const score_t* C, Py_ssize_t N, Py_ssize_t h, Py_ssize_t a,
                                 Py_ssize_t b, Py_ssize_t* split) noexcept nogil:
    """S_h(a, b) = max_{a<=q<b} C_h(a->q) + C_h(q+1<-b), a < b, h outside a..b; the first best
    q goes to ``split``."""
    cdef const score_t* right = C + a * N * N + h * N
    cdef const score_t* left = C + b * N * N + h * N + 1
    cdef score_t best = -INFINITY, val
    cdef Py_ssize_t q
    split[0] = a
    for q in range(a, b):
        val = right[q] + left[q]
        if val > best:
            best = val
            split[0] = q
    return best


cdef void grand_fill(GrandChartC* c, const score_t* arc, const score_t* sib,
                     const score_t* grand, score_t floor, Py_ssize_t first) noexcept nogil:
    """Fills the chart for spans of nodes first..n (first is 0 or 1). Every span headed by a
    word is built for each grandparent g outside it; the root's spans (first == 0) have none.

    A sibling span S_h(x, y) is used by one pair of span ends only, (h, y) if h < x and (x, h)
    if h > y, so it is built with that pair, into c.S, and not stored (backtracking rebuilds it).
    """
    cdef Py_ssize_t N = c.N, N2 = N * N, k, a, b, g, r, m, arg, g_lo, g_stop, split
    cdef score_t best, val, inner, score
    cdef const score_t* row
    cdef const score_t* spans
    cdef score_t* C = c.C
    cdef score_t* CT = c.CT
    cdef score_t* Inc = c.Inc
    cdef score_t* S = c.S
    for a in range(N):
        for g in range(N):
            C[a * N2 + g * N + a] = CT[a * N2 + g * N + a] = 0.0
    for k in range(1, N - first):
        for a in range(first, N - k):
            b = a + k
            # grandparents g of a's spans: 0..n outside a..b; the root's spans: only the slot 0
            g_lo = a if a > 0 else N
            g_stop = N if a > 0 else 1
            # I_g(a->b) = arc[a, b] + grand[g, a, b] + max(sib[a, a, b] + C_a(a+1<-b),
            #     max_{a<r<b} I_g(a->r) + S_a(r, b) + sib[a, r, b])
            for r in range(a + 1, b):
                S[r] = sibling_span(C, N, a, r, b, &split) + part(sib, a * N2 + r * N + b, floor)
            inner = part(sib, a * N2 + a * N + b, floor) + C[b * N2 + a * N + a + 1]
            score = allowed(arc[a * N + b], floor)
            for g in range(g_stop):
                if g_lo <= g <= b:
                    continue
                row = Inc + a * N2 + g * N
                best = inner
                arg = a
                for r in range(a + 1, b):
                    val = row[r] + S[r]
                    if val > best:
                        best = val
                        arg = r
                if a > 0:
                    best += part(grand, g * N2 + a * N + b, floor)
                Inc[a * N2 + g * N + b] = best + score
                c.bI[a * N2 + g * N + b] = <int>arg
            if a > 0:  # the root is never a modifier
                # I_g(a<-b) = arc[b, a] + grand[g, b, a] + max(sib[b, b, a] + C_b(a->b-1),
                #     max_{a<r<b} S_b(a, r) + sib[b, r, a] + I_g(r<-b))
                for r in range(a + 1, b):
                    S[r] = (sibling_span(C, N, b, a, r, &split)
                            + part(sib, b * N2 + r * N + a, floor))
                inner = part(sib, b * N2 + b * N + a, floor) + C[a * N2 + b * N + b - 1]
                score = allowed(arc[b * N + a], floor)
                for g in range(N):
                    if a <= g <= b:
                        continue
                    row = Inc + b * N2 + g * N
                    best = inner
                    arg = b
                    for r in range(a + 1, b):
                        val = S[r] + row[r]
                        if val > best:
                            best = val
                            arg = r
                    Inc[b * N2 + g * N + a] = best + score + part(grand, g * N2 + b * N + a, floor)
                    c.bI[b * N2 + g * N + a] = <int>arg
                # C_g(a<-b) = max_{a<=m<b} C_b(a<-m) + I_g(m<-b)
                spans = CT + a * N2 + b * N
                for g in range(N):
                    if a <= g <= b:
                        continue
                    row = Inc + b * N2 + g * N
                    best = -INFINITY
                    arg = a
                    for m in range(a, b):
                        val = spans[m] + row[m]
                        if val > best:
                            best = val
                            arg = m
                    C[b * N2 + g * N + a] = CT[a * N2 + g * N + b] = best
                    c.bC[b * N2 + g * N + a] = <int>arg
            # C_g(a->b) = max_{a<m<=b} I_g(a->m) + C_a(m->b)
            spans = CT + b * N2 + a * N
            for g in range(g_stop):
                if g_lo <= g <= b:
                    continue
                row = Inc + a * N2 + g * N
                best = -INFINITY
                arg = b
                for m in range(a + 1, b + 1):
                    val = row[m] + spans[m]
                    if val > best:
                        best = val
                        arg = m
                C[a * N2 + g * N + b] = CT[b * N2 + g * N + a] = best
                c.bC[a * N2 + g * N + b] = <int>arg


# Backtracking: each span writes the heads of the arcs it contains.
cdef void grand_complete(GrandChartC* c, Py_ssize_t g, Py_ssize_t h, Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t N = c.N, m
    if h == e:
        return
    m = c.bC[h * N * N + g * N + e]
    grand_incomplete(c, g, h, m)
    grand_complete(c, h, m, e)


cdef void grand_incomplete(GrandChartC* c, Py_ssize_t g, Py_ssize_t h,
                           Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t N = c.N, r = c.bI[h * N * N + g * N + m]
    c.heads[m] = <head_t>h
    if r == h:  # m is h's innermost modifier on its side
        grand_complete(c, h, m, h + 1 if m > h else h - 1)
    elif m > h:
        grand_incomplete(c, g, h, r)
        grand_sibling(c, h, r, m)
    else:
        grand_sibling(c, h, m, r)
        grand_incomplete(c, g, h, r)


cdef void grand_sibling(GrandChartC* c, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t q
    sibling_span(c.C, c.N, h, a, b, &q)
    grand_complete(c, h, a, q)
    grand_complete(c, h, b, q + 1)


cdef int eisner2_sibgp_decode(const score_t* arc, const score_t* sib, const score_t* grand,
                              Py_ssize_t n, bint single_root, head_t* heads) noexcept nogil:
    cdef Py_ssize_t N = n + 1, N3 = N * N * N, m, root_child = 1
    cdef score_t floor, best = -INFINITY, val
    cdef int status
    cdef GrandChartC c
    cdef char* block
    if n > MAX_WORDS:
        return DECODE_TOO_LONG
    status = part_floor(arc, sib, grand, n, single_root, &floor, NULL)
    if status != DECODE_OK:
        return status
    block = <char*>malloc((3 * N3 + N) * sizeof(score_t) + 2 * N3 * sizeof(int))
    if block == NULL:
        return DECODE_NO_MEMORY
    c.N = N
    c.C = <score_t*>block
    c.CT = c.C + N3
    c.Inc = c.CT + N3
    c.S = c.Inc + N3
    c.bC = <int*>(c.S + N)
    c.bI = c.bC + N3
    c.heads = heads
    heads[0] = -1
    if single_root:
        grand_fill(&c, arc, sib, grand, floor, 1)
        # C(0->n) = max_m arc[0, m] + sib[0, 0, m] + C_0(1<-m) + C_0(m->n)
        for m in range(1, N):
            val = (allowed(arc[m], floor) + part(sib, m, floor)
                   + c.C[m * N * N + 1] + c.C[m * N * N + n])
            if val > best:
                best = val
                root_child = m
        heads[root_child] = 0
        grand_complete(&c, 0, root_child, 1)
        grand_complete(&c, 0, root_child, n)
    else:
        grand_fill(&c, arc, sib, grand, floor, 0)
        grand_complete(&c, 0, 0, n)
    free(block)
    return DECODE_OK


# -- Python wrappers ------------------------------------------------------------------------------

cdef const score_t* part_data(const score_t[:, :, ::1] scores, Py_ssize_t N, str name) except? NULL:
    """Pointer to the data of an optional [N, N, N] part array; NULL for None."""
    if scores is None:
        return NULL
    if scores.shape[0] != N or scores.shape[1] != N or scores.shape[2] != N:
        raise ValueError(
            f"{name} scores must have shape [n+1, n+1, n+1] = [{N}, {N}, {N}], got "
            f"({scores.shape[0]}, {scores.shape[1]}, {scores.shape[2]})"
        )
    return &scores[0, 0, 0]


cdef int raise_for_part_status(int status) except -1:
    if status == DECODE_POSITIVE_INF:
        raise ValueError("arc, sib and grand scores must not be +inf")
    return raise_for_status(status)


def eisner2_sib(const score_t[:, ::1] arc not None, const score_t[:, :, ::1] sib=None,
                bint single_root=True):
    """Best projective tree under arc and consecutive-sibling scores: the second-order Eisner
    algorithm of McDonald and Pereira (2006), O(n^3) time, O(n^3) memory (a transposed copy of
    ``sib``).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1; ``arc[h, m]`` scores h -> m.
    sib: float64 [n+1, n+1, n+1], C-contiguous, or None (zeros); ``sib[h, m, s]`` scores s as
    the modifier of h next farther out than m on the same side, ``sib[h, h, s]`` s as the
    innermost one (module docstring). -inf or NaN marks a disallowed part, +inf is a ValueError.
    single_root: exactly one word is attached to the root.
    Returns heads, int32 [n+1] with heads[0] == -1: a projective tree of maximum total score.
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef const score_t* sib_data = part_data(sib, n + 1, "sib")
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = eisner2_sib_decode(&arc[0, 0], sib_data, n, single_root,
                                    <head_t*>cnp.PyArray_DATA(heads))
    raise_for_part_status(status)
    return heads


def eisner2_sibgp(const score_t[:, ::1] arc not None, const score_t[:, :, ::1] sib=None,
                  const score_t[:, :, ::1] grand=None, bint single_root=True):
    """Best projective tree under arc, consecutive-sibling and grandparent scores: Model 1 of
    Koo and Collins (2010), O(n^4) time, O(n^3) memory (32 (n+1)^3 bytes).

    arc, sib, single_root: as for :func:`eisner2_sib`.
    grand: float64 [n+1, n+1, n+1], C-contiguous, or None (zeros); ``grand[g, h, m]`` scores
    g -> h -> m (arcs out of the root have no grandparent part).
    Returns heads, int32 [n+1] with heads[0] == -1: a projective tree of maximum total score.
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef const score_t* sib_data = part_data(sib, n + 1, "sib")
    cdef const score_t* grand_data = part_data(grand, n + 1, "grand")
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = eisner2_sibgp_decode(&arc[0, 0], sib_data, grand_data, n, single_root,
                                      <head_t*>cnp.PyArray_DATA(heads))
    raise_for_part_status(status)
    return heads
