# cython: language_level=3
"""Exact third-order projective decoding: arc, sibling, grandparent, tri-sibling and
grand-sibling parts (the part set of Koo and Collins's 2010 "Model 2", "Efficient third-order
dependency parsers", Section 4.3), from a :class:`~dparse.graph.partscorer.PartScorer`.

Parts (docs/design.md, 'Score arrays and parts'), over nodes 0..n with node 0 the root; a head h
with modifiers m1 (innermost), ..., mk on one side, and c0 = h, c1 = m1, ..., ck = mk, has there,
for i = 1..k:

- ``arc(h, ci)``, ``sib(h, c(i-1), ci)``;
- ``trisib(h, c(i-2), c(i-1), ci)`` for i >= 2;
- ``grand(g, h, ci)`` and ``gsib(g, h, c(i-1), ci)`` where g is h's head (none for h = 0); with
  ``outermost``, only for i = k (Koo and Collins's Model 2 as published, and ``cube``'s parts).

A tree scores the sum of its parts; there is no stop part. With a single root, the root has one
child m and scores arc(0, m) + sib(0, 0, m) there.

The chart (right-facing spans shown; left-facing ones mirror them). Every span headed by a word
h is built once for each grandparent g outside it (Koo and Collins's g-spans), the root's own
spans (several root children) once, without one:

- complete ``C_g(h->e)``: h's right modifiers within h..e, with their subtrees;
  ``C_g(h->e) = max_m I_g(h->m) + C_h(m->e)`` over h's outermost modifier m, C_g(h->h) = 0;
- chain item ``I_g(h, s, m)``: the arc h -> m with s the modifier before m (s == h: m is the
  innermost), h's modifiers up to m and m's inner half-subtree;
  ``I_g(h, h, m) = arc(h,m) + sib(h,h,m) + grand(g,h,m) + gsib(g,h,h,m) + C_h(h+1<-m)``,
  ``I_g(h, s, m) = arc(h,m) + sib(h,s,m) + grand(g,h,m) + gsib(g,h,s,m) + S_h(s, m)
  + max_t [I_g(h, t, s) + trisib(h, t, s, m)]`` over t = h or a modifier between h and s;
- ``I_g(h->m) = max_s I_g(h, s, m)``;
- sibling span ``S_h(s, m) = max_q C_h(s->q) + C_h(q+1<-m)``: consecutive modifiers s < m of h
  with s's outer and m's inner half-subtree between them (rebuilt, not stored).

With ``outermost`` the chain items drop g and its parts (Koo and Collins's s-spans I(h, s, m),
the same recurrences without grand and gsib), which enter once, where I_g(h->m) exchanges the
sibling for the grandparent: ``I_g(h->m) = max_s I(h, s, m) + grand(g,h,m) + gsib(g,h,s,m)``.

Complexity. With every grand and gsib part, a chain step reads g, h, t, s and m at once: O(n^5)
time on dense scores, O(n^4) memory for the chain items. No O(n^4) chart is known for that part
set (each chain would need both g and s in its state); Koo and Collins's O(n^4) time, O(n^3)
memory hold for their ``outermost`` semantics, whose chains carry s only. Either chart is
sparse, keeping only usable arcs: about sum_h G_h (L_h^3 + R_h^3) / 6 steps (without the G_h
factor for ``outermost``) for G_h usable heads and L_h, R_h usable left and right modifiers of
h, plus O(n) per sibling span; a pruner keeping a few heads per word makes both fast.

Parts asked for. The decoder asks ``arc(h, m)`` once for every h and every word m != h. An arc
scoring -inf or NaN is pruned: the chart uses only the other arcs and never asks for a
higher-order part containing a pruned arc (a promise for on-the-fly feature scorers; each other
part is asked at most once per chart, and not at all for items that no derivation reaches). A
higher-order part scoring -inf or NaN is disallowed and counts as the scorer's ``floor``, so the
result is the best tree over unpruned arcs with the fewest disallowed parts. Only if no
projective tree (of the asked root kind) avoids pruned arcs, a second chart also admits the
pruned arcs of the best first-order tree (``eisner``: the fewest pruned arcs), each scoring
``floor`` and their parts 0, unasked: the result then has the fewest pruned arcs possible. An
arc scoring +inf is an error.

Memory layout. C and I_g(h->m) live in rows, one per (h, g) pair with g -> h usable (and one for
the root's own spans), indexed by the far end: [row, e]. The chain items of head h on one side,
with M usable modifiers there at positions j = 1..M (innermost first; position 0 is h) and G
rows (1 with ``outermost``), fill one block per position j: G rows of j entries,
I_g(h, s, m_j) at [g, position of s], so that the step's inner loop over t reads one contiguous
row.

Ties go to the smaller position (the innermost-modifier case first, then nearer modifiers) and
the smaller split point, and, for the single root, the smallest root child: outputs are
deterministic.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse.graph.eisner cimport eisner_decode
from dparse.graph.partscorer cimport ArrayPartScorer, PartScorer
from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    DECODE_TOO_LONG,
    allowed,
    head_t,
    raise_for_status,
    score_t,
)

cnp.import_array()

# positions and rows are C ints; the [N, N] tables alone would take about 90 GB beyond this
cdef Py_ssize_t MAX_WORDS = 65535
# "no such tree": the answer when no projective tree uses only usable arcs
cdef int NO_TREE = 1


cdef struct Chart3C:
    Py_ssize_t N             # nodes 0..n, N = n + 1
    bint outermost           # grand and gsib parts for outermost modifiers only (g-free chains)
    score_t floor            # the scorer's stand-in for disallowed parts and used pruned arcs
    score_t* arcs            # [N, N]: arc scores as used; -inf where the arc is not usable
    unsigned char* scored    # [N, N]: 1 where the arc's parts may be asked for (not pruned)
    unsigned char* usable    # [N, N]: 1 where the chart may build the arc
    int* slot                # [N, N]: at [h, g], the row of (h, g) minus row[h]; -1 if unusable
    int* pos                 # [N, N]: at [h, m], m's position among h's modifiers; 0 if none
    Py_ssize_t* row          # [N + 1]: the rows of h are row[h] .. row[h + 1] - 1
    int* grands              # [rows]: each row's grandparent g; -1 for the root's own row
    int* mods                # h's modifiers on side d (0 left, 1 right), innermost first:
    Py_ssize_t* moff         # [2N + 1]: ... at mods[moff[2h + d] : moff[2h + d + 1]]
    Py_ssize_t* ioff         # [2N]: start of the chain items of (h, d) in chain, bchain
    score_t* C               # [rows, N]: C_g(h->e) or C_g(e<-h) at [row of (h, g), e]
    int* bC                  # ... its outermost modifier
    score_t* Inc             # [rows, N]: I_g(h->m) or I_g(m<-h) at [row, m]
    int* bInc                # ... the position of its previous modifier s
    score_t* chain           # chain items (module docstring)
    int* bchain              # ... the position of t
    score_t* tri             # [N] work: trisib(h, t, s, m) by position of t
    score_t* inner           # [N] work: the g-free part of I_g(h, s, m) by position of s
    score_t* gr              # [N] work: grand(g, h, m) by slot of g; NaN for g inside the span
    head_t* heads


# -- parts ----------------------------------------------------------------------------------------

cdef inline bint scored(Chart3C* c, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """Whether the arc h -> m is unpruned (h == m: no arc, so true)."""
    return h == m or c.scored[h * c.N + m]


cdef inline score_t sib_part(Chart3C* c, PartScorer p, Py_ssize_t h, Py_ssize_t s,
                             Py_ssize_t m) noexcept nogil:
    """sib(h, s, m) as the chart counts it: ``floor`` if disallowed, 0 (unasked) if it contains
    a pruned arc."""
    if scored(c, h, s) and scored(c, h, m):
        return allowed(p.sib(h, s, m), c.floor)
    return 0.0


cdef inline score_t trisib_part(Chart3C* c, PartScorer p, Py_ssize_t h, Py_ssize_t t,
                                Py_ssize_t s, Py_ssize_t m) noexcept nogil:
    if scored(c, h, t) and scored(c, h, s) and scored(c, h, m):
        return allowed(p.trisib(h, t, s, m), c.floor)
    return 0.0


cdef inline score_t grand_part(Chart3C* c, PartScorer p, Py_ssize_t g, Py_ssize_t h,
                               Py_ssize_t m) noexcept nogil:
    if scored(c, g, h) and scored(c, h, m):
        return allowed(p.grand(g, h, m), c.floor)
    return 0.0


cdef inline score_t gsib_part(Chart3C* c, PartScorer p, Py_ssize_t g, Py_ssize_t h,
                              Py_ssize_t s, Py_ssize_t m) noexcept nogil:
    if scored(c, g, h) and scored(c, h, s) and scored(c, h, m):
        return allowed(p.gsib(g, h, s, m), c.floor)
    return 0.0


# -- the chart ------------------------------------------------------------------------------------

cdef inline Py_ssize_t span_row(Chart3C* c, Py_ssize_t m, Py_ssize_t h) noexcept nogil:
    """The row of m's spans with grandparent h (h -> m usable)."""
    return c.row[m] + c.slot[m * c.N + h]


cdef inline Py_ssize_t chain_rows(Chart3C* c, Py_ssize_t h) noexcept nogil:
    """How many rows of chain items h has per position: one per grandparent slot, or one
    (g-free chains) with ``outermost``."""
    return min(1, c.row[h + 1] - c.row[h]) if c.outermost else c.row[h + 1] - c.row[h]


cdef inline Py_ssize_t block(Chart3C* c, Py_ssize_t h, int d, Py_ssize_t j) noexcept nogil:
    """Start of the chain items of h's modifier at position j >= 1 on side d."""
    return c.ioff[2 * h + d] + chain_rows(c, h) * ((j - 1) * j // 2)


cdef inline score_t sibling_span(const score_t* C, Py_ssize_t N, Py_ssize_t left_row,
                                 Py_ssize_t right_row, Py_ssize_t x, Py_ssize_t y,
                                 Py_ssize_t* split) noexcept nogil:
    """S(x, y) = max_{x<=q<y} C(x->q) + C(q+1<-y) for x < y, whose spans (with the same
    grandparent) are in the rows ``left_row`` of x and ``right_row`` of y; the first best q goes
    to ``split``."""
    cdef const score_t* right = C + left_row * N
    cdef const score_t* left = C + right_row * N + 1
    cdef score_t best = -INFINITY, val
    cdef Py_ssize_t q
    split[0] = x
    for q in range(x, y):
        val = right[q] + left[q]
        if val > best:
            best = val
            split[0] = q
    return best


cdef void chain_items(Chart3C* c, PartScorer p, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """Builds I_g(h, s, m) for every s and g (I(h, s, m) once with ``outermost``), and
    I_g(h->m) (I_g(m<-h) for m < h); h -> m is usable and every narrower span is done."""
    cdef Py_ssize_t N = c.N, i, t, gi, q, s, g, out, arg
    cdef int d = m > h
    cdef Py_ssize_t j = c.pos[h * N + m], G = c.row[h + 1] - c.row[h], r0 = c.row[h]
    cdef Py_ssize_t rows = chain_rows(c, h)
    cdef Py_ssize_t lo = min(h, m), hi = max(h, m), first = c.moff[2 * h + d]
    cdef Py_ssize_t m_row = span_row(c, m, h), s_row, blk = block(c, h, d, j), prev
    cdef const int* mods = c.mods + first  # mods[i - 1]: the modifier at position i >= 1
    cdef const score_t* items
    cdef score_t best, val, base = c.arcs[h * N + m]
    cdef bint any_inner = False
    # the g-free part of each I_g(h, s, m), by the position i of s:
    #   i == 0: arc(h,m) + sib(h,h,m) + C_h(h+1<-m);  i > 0: arc(h,m) + sib(h,s,m) + S_h(s, m)
    for i in range(j):
        if i == 0:
            s = h
            val = c.C[m_row * N + (h + 1 if d else h - 1)]
        else:
            s = mods[i - 1]
            s_row = span_row(c, s, h)
            if d:
                val = sibling_span(c.C, N, s_row, m_row, s, m, &q)
            else:
                val = sibling_span(c.C, N, m_row, s_row, m, s, &q)
        if val > -INFINITY:
            val += base + sib_part(c, p, h, s, m)
            any_inner = True
        c.inner[i] = val
    # grand(g, h, m) for each grandparent slot; NaN marks a g inside the span (no such item)
    for gi in range(G):
        g = c.grands[r0 + gi]
        if g < 0:
            c.gr[gi] = 0.0  # the root's own spans: no grandparent
        elif lo <= g <= hi:
            c.gr[gi] = -INFINITY * 0.0  # NaN
        elif any_inner:
            c.gr[gi] = grand_part(c, p, g, h, m)
        else:
            c.gr[gi] = -INFINITY
    for i in range(j):
        s = h if i == 0 else mods[i - 1]
        if i > 0 and c.inner[i] > -INFINITY:
            for t in range(i):
                c.tri[t] = trisib_part(c, p, h, h if t == 0 else mods[t - 1], s, m)
        prev = block(c, h, d, i) if i > 0 else 0
        for gi in range(rows):
            if c.gr[gi] != c.gr[gi] and not c.outermost:  # g inside the span
                continue
            out = blk + gi * j + i
            best = c.inner[i]
            arg = 0
            if best > -INFINITY and i > 0:
                # + max_t I_g(h, t, s) + trisib(h, t, s, m)
                items = c.chain + prev + gi * i
                val = -INFINITY
                for t in range(i):
                    if items[t] + c.tri[t] > val:
                        val = items[t] + c.tri[t]
                        arg = t
                best += val
            if best > -INFINITY and not c.outermost:
                g = c.grands[r0 + gi]
                best += c.gr[gi] + (gsib_part(c, p, g, h, s, m) if g >= 0 else 0.0)
            c.chain[out] = best
            c.bchain[out] = <int>arg
    # I_g(h->m) = max_s I_g(h, s, m); with outermost (m then h's outermost modifier on its side)
    # I_g(h->m) = max_s I(h, s, m) + grand(g, h, m) + gsib(g, h, s, m)
    for gi in range(G):
        if c.gr[gi] != c.gr[gi]:
            continue
        g = c.grands[r0 + gi]
        items = c.chain + blk + (0 if c.outermost else gi * j)
        best = -INFINITY
        arg = 0
        for i in range(j):
            val = items[i]
            if c.outermost and val > -INFINITY:
                val += c.gr[gi]
                if g >= 0:
                    val += gsib_part(c, p, g, h, h if i == 0 else mods[i - 1], m)
            if val > best:
                best = val
                arg = i
        c.Inc[(r0 + gi) * N + m] = best
        c.bInc[(r0 + gi) * N + m] = <int>arg


cdef void complete_spans(Chart3C* c, Py_ssize_t h, Py_ssize_t e) noexcept nogil:
    """C_g(h->e) (C_g(e<-h) for e < h) for every g outside h..e:
    max_m I_g(h->m) + C_h(m->e) over h's modifiers m between h and e."""
    cdef Py_ssize_t N = c.N, gi, g, k, m, r, arg
    cdef int d = e > h
    cdef Py_ssize_t lo = min(h, e), hi = max(h, e), first = c.moff[2 * h + d]
    cdef Py_ssize_t last = c.moff[2 * h + d + 1]
    cdef score_t best, val
    for gi in range(c.row[h + 1] - c.row[h]):
        r = c.row[h] + gi
        g = c.grands[r]
        if lo <= g <= hi:
            continue
        best = -INFINITY
        arg = h
        for k in range(first, last):
            m = c.mods[k]
            if (m > e) if d else (m < e):
                break
            val = c.Inc[r * N + m] + c.C[span_row(c, m, h) * N + e]
            if val > best:
                best = val
                arg = m
        c.C[r * N + e] = best
        c.bC[r * N + e] = <int>arg


cdef void fill(Chart3C* c, PartScorer p, Py_ssize_t first) noexcept nogil:
    """Fills the chart for spans of nodes first..n (first is 0 or 1), by increasing width."""
    cdef Py_ssize_t N = c.N, k, a, b, r, h
    for r in range(c.row[N]):
        for b in range(N):
            c.C[r * N + b] = -INFINITY
    for h in range(N):
        for r in range(c.row[h], c.row[h + 1]):
            c.C[r * N + h] = 0.0
    for k in range(1, N - first):
        for a in range(first, N - k):
            b = a + k
            if c.pos[a * N + b]:
                chain_items(c, p, a, b)
            if c.pos[b * N + a]:  # never for a == 0: the root is no modifier
                chain_items(c, p, b, a)
            if a > 0:
                complete_spans(c, b, a)
            complete_spans(c, a, b)


# Backtracking: each item writes the heads of the arcs it contains.
cdef void back_complete(Chart3C* c, Py_ssize_t h, Py_ssize_t r, Py_ssize_t e) noexcept nogil:
    """C at row r (of h) and far end e."""
    cdef Py_ssize_t m
    if h == e:
        return
    m = c.bC[r * c.N + e]
    back_chain(c, h, r - c.row[h], m, c.bInc[r * c.N + m])
    back_complete(c, m, span_row(c, m, h), e)


cdef void back_chain(Chart3C* c, Py_ssize_t h, Py_ssize_t gi, Py_ssize_t m,
                     Py_ssize_t i) noexcept nogil:
    """I_g(h, s, m) for g the slot gi of h and s at position i."""
    cdef Py_ssize_t N = c.N, j = c.pos[h * N + m], s, q, m_row = span_row(c, m, h), s_row, t
    cdef int d = m > h
    c.heads[m] = <head_t>h
    if i == 0:  # m is h's innermost modifier on its side
        back_complete(c, m, m_row, h + 1 if d else h - 1)
        return
    s = c.mods[c.moff[2 * h + d] + i - 1]
    s_row = span_row(c, s, h)
    if d:
        sibling_span(c.C, N, s_row, m_row, s, m, &q)
        back_complete(c, s, s_row, q)
        back_complete(c, m, m_row, q + 1)
    else:
        sibling_span(c.C, N, m_row, s_row, m, s, &q)
        back_complete(c, m, m_row, q)
        back_complete(c, s, s_row, q + 1)
    t = c.bchain[block(c, h, d, j) + (0 if c.outermost else gi * j) + i]
    back_chain(c, h, gi, s, t)


# -- structure, passes ----------------------------------------------------------------------------

cdef int build(Chart3C* c, bint single_root) noexcept nogil:
    """Allocates and indexes the chart for the usable arcs (c.usable); DECODE_OK or
    DECODE_NO_MEMORY. Single root: the root heads no span (its child is chosen at the end)."""
    cdef Py_ssize_t N = c.N, h, m, g, d, k, rows = 0, items = 0, G, M
    for h in range(N):
        c.row[h] = rows
        if h == 0:
            rows += 0 if single_root else 1
            continue
        for g in range(N):
            c.slot[h * N + g] = -1
            if c.usable[g * N + h]:
                c.slot[h * N + g] = <int>(rows - c.row[h])
                rows += 1
    c.row[N] = rows
    for g in range(N):
        c.slot[g] = -1  # the root has no head
    k = 0
    for h in range(N):
        for d in range(2):
            c.moff[2 * h + d] = k
            if h == 0 and (single_root or d == 0):
                continue
            m = h + 1 if d else h - 1
            while 1 <= m < N:
                c.pos[h * N + m] = 0
                if c.usable[h * N + m]:
                    c.mods[k] = <int>m
                    k += 1
                    c.pos[h * N + m] = <int>(k - c.moff[2 * h + d])
                m += 1 if d else -1
    c.moff[2 * N] = k
    for h in range(N):
        c.pos[h * N] = 0
        c.pos[h * N + h] = 0
        if h == 0 and single_root:
            for m in range(N):
                c.pos[m] = 0
        G = chain_rows(c, h)
        for d in range(2):
            M = c.moff[2 * h + d + 1] - c.moff[2 * h + d]
            c.ioff[2 * h + d] = items
            items += G * (M * (M + 1) // 2)
    c.grands = <int*>malloc(rows * sizeof(int) + 1)
    c.C = <score_t*>malloc(rows * N * 2 * sizeof(score_t) + 1)
    c.bC = <int*>malloc(rows * N * 2 * sizeof(int) + 1)
    c.chain = <score_t*>malloc(items * sizeof(score_t) + 1)
    c.bchain = <int*>malloc(items * sizeof(int) + 1)
    if c.grands == NULL or c.C == NULL or c.bC == NULL or c.chain == NULL or c.bchain == NULL:
        return DECODE_NO_MEMORY
    c.Inc = c.C + rows * N
    c.bInc = c.bC + rows * N
    for h in range(N):
        for g in range(N):
            if c.slot[h * N + g] >= 0:
                c.grands[c.row[h] + c.slot[h * N + g]] = <int>g
    if not single_root:
        c.grands[c.row[0]] = -1
    return DECODE_OK


cdef void release(Chart3C* c) noexcept nogil:
    """Frees what :func:`build` allocated (NULL pointers too)."""
    free(c.grands)
    free(c.C)
    free(c.bC)
    free(c.chain)
    free(c.bchain)
    c.grands = NULL
    c.C = NULL
    c.bC = NULL
    c.chain = NULL
    c.bchain = NULL


cdef int run(Chart3C* c, PartScorer p, bint single_root) noexcept nogil:
    """One chart over the usable arcs; writes the best tree to c.heads. Returns DECODE_OK,
    NO_TREE (no projective tree of the root kind uses only usable arcs) or DECODE_NO_MEMORY."""
    cdef Py_ssize_t N = c.N, n = N - 1, m, root_child = -1, r
    cdef score_t best = -INFINITY, val
    cdef int status = build(c, single_root)
    if status == DECODE_OK:
        c.heads[0] = -1
        if single_root:
            fill(c, p, 1)
            # max_m arc(0, m) + sib(0, 0, m) + C_0(1<-m) + C_0(m->n): the root's one child m
            for m in range(1, N):
                if not c.usable[m]:
                    continue
                r = span_row(c, m, 0)
                val = c.C[r * N + 1] + c.C[r * N + n]
                if val > -INFINITY:
                    val += c.arcs[m] + sib_part(c, p, 0, 0, m)
                    if val > best:
                        best = val
                        root_child = m
            if root_child < 0:
                status = NO_TREE
            else:
                c.heads[root_child] = 0
                r = span_row(c, root_child, 0)
                back_complete(c, root_child, r, 1)
                back_complete(c, root_child, r, n)
        else:
            fill(c, p, 0)
            if c.C[c.row[0] * N + n] > -INFINITY:
                back_complete(c, 0, c.row[0], n)
            else:
                status = NO_TREE
    release(c)
    return status


cdef int eisner3_decode(PartScorer p, bint single_root, bint outermost,
                        head_t* heads) noexcept nogil:
    """The best projective tree under the parts of ``p`` (module docstring; ``outermost``: grand
    and gsib parts of outermost modifiers only), written to heads[0..n]. Returns DECODE_OK,
    DECODE_NO_MEMORY, DECODE_POSITIVE_INF (an arc scores +inf) or DECODE_TOO_LONG."""
    cdef Py_ssize_t n = p.n, N = n + 1, h, m
    cdef score_t a
    cdef int status = DECODE_OK
    cdef Chart3C c
    cdef char* work
    if n > MAX_WORDS:
        return DECODE_TOO_LONG
    work = <char*>malloc(N * N * (sizeof(score_t) + 3 * sizeof(int) + 2)
                         + 3 * N * sizeof(score_t) + (5 * N + 2) * sizeof(Py_ssize_t))
    if work == NULL:
        return DECODE_NO_MEMORY
    c.N = N
    c.outermost = outermost
    c.floor = p.floor
    c.heads = heads
    c.grands = NULL
    c.C = NULL
    c.bC = NULL
    c.chain = NULL
    c.bchain = NULL
    c.arcs = <score_t*>work
    c.tri = c.arcs + N * N
    c.inner = c.tri + N
    c.gr = c.inner + N
    c.row = <Py_ssize_t*>(c.gr + N)
    c.moff = c.row + N + 1
    c.ioff = c.moff + 2 * N + 1
    c.slot = <int*>(c.ioff + 2 * N)
    c.pos = c.slot + N * N
    c.mods = c.pos + N * N
    c.scored = <unsigned char*>(c.mods + N * N)
    c.usable = c.scored + N * N
    for h in range(N):
        for m in range(N):
            a = p.arc(h, m) if m > 0 and m != h else -INFINITY
            if a == INFINITY:
                free(work)
                return DECODE_POSITIVE_INF
            c.scored[h * N + m] = c.usable[h * N + m] = a > -INFINITY
            c.arcs[h * N + m] = a if a > -INFINITY else -INFINITY
    status = run(&c, p, single_root)
    if status == NO_TREE:
        # admit the pruned arcs of the best first-order tree (the fewest pruned arcs), at floor
        status = eisner_decode(c.arcs, n, single_root, heads)
        if status == DECODE_OK:
            for m in range(1, N):
                h = heads[m]
                if not c.usable[h * N + m]:
                    c.usable[h * N + m] = True
                    c.arcs[h * N + m] = c.floor
            status = run(&c, p, single_root)
    free(work)
    return status


# -- Python wrappers ------------------------------------------------------------------------------

def eisner3_scorer(PartScorer scorer not None, bint single_root=True, bint outermost=False):
    """Best projective tree under the arc, sib, grand, trisib and gsib parts that ``scorer``
    gives (a :class:`~dparse.graph.partscorer.PartScorer`, asked on demand; module docstring for
    pruned arcs and disallowed parts). single_root: exactly one word is attached to the root.
    outermost: grand and gsib parts count only for each head's outermost modifier on each side
    (Koo and Collins's Model 2 proper, O(n^4)); otherwise every one counts (docs/design.md,
    'Score arrays and parts').

    Returns heads, int32 [n+1] with heads[0] == -1: a projective tree of maximum total score.
    ValueError if an arc scores +inf.
    """
    cdef cnp.npy_intp size = scorer.n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = eisner3_decode(scorer, single_root, outermost,
                                <head_t*>cnp.PyArray_DATA(heads))
    if status == NO_TREE:  # the second chart contains the first-order tree: cannot happen
        raise RuntimeError("eisner3 found no tree although one was admitted")
    raise_for_status(status)
    return heads


def eisner3(arc, sib=None, grand=None, trisib=None, gsib=None, bint single_root=True,
            bint outermost=False):
    """Best projective tree under dense part scores: :func:`eisner3_scorer` of an
    :class:`~dparse.graph.partscorer.ArrayPartScorer`.

    arc: float64 [n+1, n+1], C-contiguous, n >= 1; sib, grand: [n+1]^3, trisib, gsib: [n+1]^4,
    float64 C-contiguous, or None (zeros); indexed as in the module docstring. -inf or NaN marks
    a pruned arc or a disallowed part; +inf is a ValueError. single_root, outermost: as for
    :func:`eisner3_scorer`.
    Returns heads, int32 [n+1] with heads[0] == -1: a projective tree of maximum total score.
    """
    return eisner3_scorer(ArrayPartScorer(arc, sib, grand, trisib, gsib), single_root, outermost)
