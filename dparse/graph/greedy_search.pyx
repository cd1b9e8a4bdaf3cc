# cython: language_level=3
"""Greedy inference BGI and BGI-PP with beam search (Tchernowitz, Yedidsion and Reichart 2016):
the search and its Python entry point ``greedy``, in C (data structures and notation:
greedy_structs.pxd).

Each iteration (Algorithm 1/2, line 2) expands every partial tree of the beam: expand values
each possible arc (below) and offers it to the ranked list of the next beam (the reference's
beam order, tie rule and duplicates) if it keeps the tree completable (greedy_witness.arc_safe,
on graphs with disallowed arcs). Each kept candidate takes its parent's DSs (the parent's last
child its storage, the others a copy) and adds its arc (greedy_parts.add_arc). Disallowed arcs
hold no part and are taken, value 0, only by a tree with no allowed arc left (reference doc).
With ``improve`` > 0 the search's tree then goes through post-search arc swaps
(dparse/graph/improve.pyx).

The value of e = (u, v), r = top(u), uses per-iteration sums over the possible arcs a of K[a] =
q(a) G[a] (BGI: G[a] - pend[a]): inK[v] (the arcs into v), Cs[t, r] (the arcs into r from
component t) and rootK (the root arcs):
    loss = inK[v] - K[e] + Cs[v, r] (+ rootK - K[e] for a root arc under single_root) - D + F[e]
(no F for a root arc under single_root: its B parts are lost through their A arcs), where D takes
out the parts counted twice (both arcs lost): the grandparent parts (x, v, r) through
H[(v, r)], (y, r, v) with y in v's component through a sum CG[v, r] kept beside Cs, and for a
root arc under single_root (0, x, v) (a per-iteration sum per word) and the root sibling pairs
(R2, Groot). BGI-PP: gain = G[e] - Dg, Dg the parts with e whose other arc e makes impossible:
(u, v, r), (y, u, v) (CG again), the root sibling pairs (Groot). BGI: gain = Gb[e], plus pend
summed over lostArcs (folded into K), plus for a root arc under single_root its innermost
sibling part (whose B dies with the other root arcs).

Cost. Setup: O(N^2) (the arc map, a zeroed N x N table of pair sums) plus greedy_parts' O(|parts|).
Each iteration: O(|E|) for the sums and O(1) per possible arc for its value: O(n |E|) =
O(n^2 n_in) evaluation in all (Appendix A spends O(n_in) more per arc on the pair corrections,
which these sums make O(1)), plus greedy_parts' updates. A beam of width w multiplies
evaluation and updates by w and copies a tree's DSs, O(|E| + sum_h d_h^2) bytes, per kept tree
and iteration. So with a first-order pruner (n_in bounded; en_ewt keeps about 9 heads per word)
a sentence costs O(n^2), the root's O(d_0^2) sibling parts included (the root stays a candidate
head of most words); on the complete graph O(n^3) evaluation plus O(n^4) at worst for the F
ranges of the O(n^3) sibling parts. benchmarks/greedy_scaling.py times it against n.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    head_t,
    raise_for_status,
    score_t,
)
from dparse.graph.greedy_parts cimport (
    PART_NOT_FINITE, add_arc, build_lists, init_state, load_weights,
)
from dparse.graph.greedy_structs cimport Graph, Pair, Scratch, SibPart, State, sib_part
from dparse.graph.greedy_witness cimport arc_safe, witness_add
from dparse.graph.improve cimport (
    IMPROVE_GRAND_NOT_FINITE, IMPROVE_NOT_A_TREE, IMPROVE_SIB_NOT_FINITE, improve_core,
)

from dparse.graph.greedy_reference import TIE_TOLERANCE

cdef extern from *:
    """
    /* x if keep else 0.0, without a branch, and 0.0 even when x is inf or NaN (weights at
       positions that are never parts may be anything). */
    static inline double greedy_keep(int keep, double x) {
        union { double d; unsigned long long u; } v;
        v.d = x;
        v.u &= -(unsigned long long)(keep != 0);
        return v.d;
    }
    """
    double keep "greedy_keep"(int keep, double x) noexcept nogil

cdef double TIE_TOLERANCE_C = TIE_TOLERANCE


cdef struct Cand:                # a candidate of the next beam: its parent tree + the arc (u, v)
    double value
    uint64_t hash
    int32_t ndis
    int32_t parent
    int32_t u
    int32_t v
    int32_t arc                  # the allowed arc's id, -1 for a disallowed arc


cdef inline uint64_t arc_key(Py_ssize_t index) noexcept nogil:
    """splitmix64 of an arc's index h * N + m: the arcs' keys for tree hashes."""
    cdef uint64_t z = <uint64_t>index * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


# -- the partial trees' storage ------------------------------------------------------------------

cdef inline Py_ssize_t reserve(Py_ssize_t* off, Py_ssize_t nbytes) noexcept nogil:
    """The offset ``off`` of the next ``nbytes`` of a buffer; advances ``off`` past them."""
    cdef Py_ssize_t at = off[0]
    off[0] += nbytes
    return at


cdef inline char* carve(char* base, Py_ssize_t* off, Py_ssize_t nbytes) noexcept nogil:
    """The next ``nbytes`` of the buffer ``base`` (see :func:`reserve`)."""
    return base + reserve(off, nbytes)


cdef inline void state_bind(const Graph* g, State* st, char* block) noexcept nogil:
    st.block = block
    st.G = <double*>(block + g.off_G)
    st.F = <double*>(block + g.off_F)
    st.H = <double*>(block + g.off_H) + 1
    st.Gb = <double*>(block + g.off_Gb)
    st.pend = <double*>(block + g.off_pend)
    st.Groot = <double*>(block + g.off_Groot)
    st.heads = <int32_t*>(block + g.off_heads)
    st.top = <int32_t*>(block + g.off_top)
    st.wit = <int32_t*>(block + g.off_wit)
    st.alist = <int32_t*>(block + g.off_alist)
    st.nB = <int32_t*>(block + g.off_nB)
    st.dead = <uint8_t*>(block + g.off_dead)
    st.lost = <uint8_t*>(block + g.off_lost)


cdef inline void state_copy(const Graph* g, State* dst, const State* src) noexcept nogil:
    memcpy(dst.block, src.block, g.block_size)
    dst.value = src.value
    dst.R2 = src.R2
    dst.hash = src.hash
    dst.ndis = src.ndis
    dst.rootchild = src.rootchild
    dst.nalive = src.nalive
    dst.wstate = src.wstate
    dst.wroot = src.wroot


# -- values and the beam -------------------------------------------------------------------------

cdef inline bint better(double value, int32_t ndis, const Cand* x, double tol) noexcept nogil:
    """A candidate (value, ndis) ranks before the earlier candidate x."""
    return ndis < x.ndis or (ndis == x.ndis and value < x.value - tol)


cdef bint same_tree(Py_ssize_t N, State** states, const Cand* a, const Cand* b) noexcept nogil:
    cdef Py_ssize_t x
    cdef int32_t ha, hb
    cdef const int32_t* A
    cdef const int32_t* B
    if a.parent == b.parent:
        return a.u == b.u and a.v == b.v
    A = states[a.parent].heads
    B = states[b.parent].heads
    for x in range(N):
        ha = a.u if x == a.v else A[x]
        hb = b.u if x == b.v else B[x]
        if ha != hb:
            return False
    return True


cdef void offer(Cand* cands, Py_ssize_t* count, Py_ssize_t width, const Cand* c, Py_ssize_t N,
                State** states, double tol) noexcept nogil:
    """Inserts c into the ranked list cands[0 .. count-1] (the reference's beam rule)."""
    cdef Py_ssize_t k, pos = count[0]
    while pos > 0 and better(c.value, c.ndis, &cands[pos - 1], tol):
        pos -= 1
    if pos >= width:
        return
    if width > 1:
        for k in range(count[0]):
            if cands[k].hash == c.hash and same_tree(N, states, &cands[k], c):
                if k < pos:                        # the tree already ranks before this place
                    return
                while k < count[0] - 1:
                    cands[k] = cands[k + 1]
                    k += 1
                count[0] -= 1
                break
    k = count[0] if count[0] < width else width - 1
    while k > pos:
        cands[k] = cands[k - 1]
        k -= 1
    cands[pos] = c[0]
    if count[0] < width:
        count[0] += 1


cdef void expand(const Graph* g, State* st, Scratch* sc, Py_ssize_t j, Cand* cands,
                 Py_ssize_t* count, Py_ssize_t width, State** states, double tol) noexcept nogil:
    """Offers every possible arc of the partial tree st (beam index j) with its value."""
    cdef Py_ssize_t N = g.N, a, x, y, t, u, v, r, low, h, m, i, idx, na = 0
    cdef double kv, lost, D, Dg, floss, cg, w, ql, value, gain, qa, rootK = 0.0
    cdef double la = g.la, gb = g.gb, base = st.value, limit
    cdef const int32_t* ah = g.ah
    cdef const int32_t* am = g.am
    cdef const int32_t* aid = g.aid
    cdef const double* q = g.q
    cdef const double* gw = g.gw
    cdef const int32_t* gbase = g.gbase
    cdef const int32_t* out_start = g.out_start
    cdef const double* G = st.G
    cdef const double* F = st.F
    cdef const double* H = st.H
    cdef const double* pend = st.pend
    cdef const int32_t* top = st.top
    cdef const int32_t* heads = st.heads
    cdef const uint8_t* dead = st.dead
    cdef int32_t* alist = st.alist
    cdef double* K = sc.K
    cdef int32_t* pidx = sc.pidx
    cdef int32_t* cgtop = sc.cgtop
    cdef double* cgw = sc.cgw
    cdef const double* rootw = g.rootw
    cdef double* inK = sc.inK
    cdef double* Rv = sc.Rv
    cdef Pair* pair = sc.pair
    cdef Pair* pr
    cdef bint bgi = g.bgi, has_grand = g.has_grand, has_sib = g.has_sib, sr = g.sr, full, ru
    cdef bint pruned = g.pruned
    cdef bint root_open = g.sr and not st.rootchild and g.has_grand
    cdef Cand c
    cdef SibPart p
    for x in range(N):
        inK[x] = 0.0
        Rv[x] = 0.0
    sc.known = 0
    # per-iteration sums over the possible arcs (compacting their list); pair entries of
    # component 0 or of target 0 collect harmlessly: they are never read
    for i in range(st.nalive):
        a = alist[i]
        if dead[a]:
            continue
        x = ah[a]
        y = am[a]
        kv = G[a] - pend[a] if bgi else q[a] * G[a]
        t = top[x]
        idx = t * N + y
        alist[na] = <int32_t>a
        K[na] = kv
        pidx[na] = <int32_t>idx
        na += 1
        inK[y] += kv
        rootK += keep(x == 0, kv)
        pair[idx].Cs += kv
        if has_grand:                              # (x, y, t): (x, y) closes a cycle below t
            if cgtop[a] != t:
                cgtop[a] = <int32_t>t
                low = aid[y * N + t]
                cgw[a] = gw[gbase[a] + low - out_start[y]] * q[a] if low >= 0 else 0.0
            pair[idx].CG += cgw[a]
            if root_open:                          # (0, x, y): lost with a root arc (0, y)
                Rv[y] += keep(heads[x] < 0, rootw[a])
    st.nalive = <int32_t>na
    c.ndis = st.ndis
    c.parent = <int32_t>j
    if na == 0:                                    # only disallowed arcs remain: all value 0
        c.value = st.value
        c.ndis = st.ndis + 1
        c.arc = -1
        for h in range(N):
            for m in range(1, N):
                if h != m and aid[h * N + m] < 0 and heads[m] < 0 and top[h] != m \
                        and not (sr and h == 0 and st.rootchild):
                    c.u = <int32_t>h
                    c.v = <int32_t>m
                    c.hash = st.hash ^ arc_key(h * N + m)
                    offer(cands, count, width, &c, N, states, tol)
        return
    # a candidate enters the full list only if better than its last entry: value < limit
    full = count[0] == width
    limit = INFINITY
    if full:
        if c.ndis > cands[width - 1].ndis:
            na = 0                                 # nothing from this tree can enter
        elif c.ndis == cands[width - 1].ndis:
            limit = cands[width - 1].value - tol
    for i in range(na):
        a = alist[i]
        u = ah[a]
        v = am[a]
        r = top[u]
        qa = q[a]
        ru = r == u
        pr = &pair[v * N + r]                      # r == 0: an entry never written, 0
        lost = inK[v] - K[i] + pr.Cs               # In(v) - e, Cyc(e)
        cg = pr.CG
        D = keep(not ru, q[aid[r * N + v]] * cg)   # (y, r, v), y in v's component
        Dg = keep(ru, cg)                          # (y, u, v): (y, u) closes a cycle
        if has_grand:                              # (x, v, r), x != u: (v, r) closes a cycle
            low = aid[v * N + r]
            ql = q[low]
            w = keep((low >= 0) & (not ru), gw[gbase[a] + (low - out_start[v]) * (low >= 0)])
            D += ql * (H[low] - w * qa)
            Dg += w * ql
        if sr and u == 0:
            lost += rootK - K[i]
            floss = 0.0
            if has_sib:
                D += st.R2 - qa * st.Groot[a]
                Dg += st.Groot[a]
            D += Rv[v]
        else:
            floss = F[a] if has_sib else 0.0
        if bgi:
            gain = st.Gb[a]
            if sr and u == 0 and has_sib:          # its innermost part: B lost with the root
                sib_part(g, 0, a, a, &p)
                if p.W != 0.0 and not st.lost[p.id] and st.nB[p.id] > 0:
                    gain += p.W
            value = base + (lost - D + floss - gain)
        else:
            value = base + (la * (lost - D + floss) - gb * (G[a] - Dg))
        # (arc_safe, another module's function, is called through its import pointer: its code
        # stays out of this loop, which it would slow down even when never called)
        if value < limit and (not pruned or arc_safe(g, st, sc, u, v)):
            c.value = value
            c.u = <int32_t>u
            c.v = <int32_t>v
            c.arc = <int32_t>a
            c.hash = st.hash ^ arc_key(u * N + v)
            offer(cands, count, width, &c, N, states, tol)
            if count[0] == width:
                full = True
                limit = INFINITY
                if c.ndis > cands[width - 1].ndis:
                    limit = -INFINITY
                elif c.ndis == cands[width - 1].ndis:
                    limit = cands[width - 1].value - tol
    for i in range(st.nalive):                     # back to 0 for the next tree
        pair[pidx[i]].Cs = 0.0
        pair[pidx[i]].CG = 0.0


cdef int search(Graph* g, double alpha, Py_ssize_t width, head_t* out,
                double* out_value) noexcept nogil:
    """The whole search; fills out [N] and out_value. Returns a status code."""
    cdef Py_ssize_t N = g.N, E, h, m, _, j, k, ncur, nfree, count, n_pool = 2 * width
    cdef Py_ssize_t size, off
    cdef double tol, big
    cdef int status
    cdef char* mem = NULL
    cdef char* wmem = NULL
    cdef char* blocks = NULL
    cdef Scratch sc
    cdef State* pool
    cdef State** cur
    cdef State** nxt
    cdef State** free_
    cdef State** swap
    cdef State* dst
    cdef Cand* cands
    cdef int32_t* uses
    cdef uint8_t* inuse
    cdef score_t s
    # allowed arcs
    g.aid = <int32_t*>malloc(N * N * sizeof(int32_t))
    if g.aid == NULL:
        return DECODE_NO_MEMORY
    E = 0
    for h in range(N):
        for m in range(N):
            s = g.arc[h * N + m]
            if m == 0 or m == h:
                g.aid[h * N + m] = -1
            elif s == INFINITY:
                free(g.aid)
                return DECODE_POSITIVE_INF
            elif s > -INFINITY:
                g.aid[h * N + m] = 0
                E += 1
            else:
                g.aid[h * N + m] = -1
    g.E = E
    g.pruned = E < (N - 1) * (N - 1)
    # one allocation for the lists, the scratch and the beam's bookkeeping (8-byte pieces first)
    size = (E * (3 * sizeof(double) + 8 * sizeof(int32_t) + 1) + (N + 1) * 3 * sizeof(double)
            + (N + 1) * 3 * sizeof(int32_t) + N * (7 * sizeof(int32_t) + 3)
            + N * N * sizeof(Pair)
            + n_pool * (sizeof(State) + 3 * sizeof(State*) + 1)
            + width * (sizeof(Cand) + sizeof(int32_t)))
    mem = <char*>malloc(size)
    if mem == NULL:
        free(g.aid)
        return DECODE_NO_MEMORY
    off = 0
    g.q = <double*>carve(mem, &off, (E + 1) * sizeof(double)) + 1
    (g.q - 1)[0] = 0.0
    sc.K = <double*>carve(mem, &off, E * sizeof(double))
    sc.cgw = <double*>carve(mem, &off, E * sizeof(double))
    sc.inK = <double*>carve(mem, &off, N * sizeof(double))
    sc.Rv = <double*>carve(mem, &off, N * sizeof(double))
    sc.pair = <Pair*>carve(mem, &off, N * N * sizeof(Pair))
    pool = <State*>carve(mem, &off, n_pool * sizeof(State))
    cands = <Cand*>carve(mem, &off, width * sizeof(Cand))
    cur = <State**>carve(mem, &off, n_pool * sizeof(State*))
    nxt = <State**>carve(mem, &off, n_pool * sizeof(State*))
    free_ = <State**>carve(mem, &off, n_pool * sizeof(State*))
    g.ah = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    g.am = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    g.in_arcs = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    sc.lostlist = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    sc.pidx = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    sc.cgtop = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    g.gbase = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    sc.cadj = <int32_t*>carve(mem, &off, E * sizeof(int32_t))
    sc.cstart = <int32_t*>carve(mem, &off, (N + 1) * sizeof(int32_t))
    sc.po = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    sc.idom = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    sc.order = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    sc.stack = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    sc.cursor = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    g.out_start = <int32_t*>carve(mem, &off, (N + 1) * sizeof(int32_t))
    g.in_start = <int32_t*>carve(mem, &off, (N + 1) * sizeof(int32_t))
    g.split = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    g.sbase = <int32_t*>carve(mem, &off, N * sizeof(int32_t))
    uses = <int32_t*>carve(mem, &off, width * sizeof(int32_t))
    sc.mark = <uint8_t*>carve(mem, &off, E)
    inuse = <uint8_t*>carve(mem, &off, n_pool)
    sc.seen = <uint8_t*>carve(mem, &off, N)
    sc.good = <uint8_t*>carve(mem, &off, N)
    sc.fromroot = <uint8_t*>carve(mem, &off, N)
    memset(sc.pair, 0, N * N * sizeof(Pair))
    for k in range(E):
        sc.cgtop[k] = -1
    memset(sc.mark, 0, E)
    build_lists(g, alpha)
    wmem = <char*>malloc((g.S + g.Gtot + 1 + E) * sizeof(double))
    if wmem == NULL:
        free(mem)
        free(g.aid)
        return DECODE_NO_MEMORY
    g.wsib = <double*>wmem
    g.gw = g.wsib + g.S
    g.rootw = g.gw + g.Gtot + 1
    status = load_weights(g, &big)
    if status != DECODE_OK:
        free(wmem)
        free(mem)
        free(g.aid)
        return status
    # one partial tree's block: doubles, then int32, then bytes
    off = 0
    g.off_G = reserve(&off, E * sizeof(double))
    g.off_F = reserve(&off, (E if g.has_sib else 0) * sizeof(double))
    g.off_H = reserve(&off, (E + 1 if g.has_grand else 0) * sizeof(double))
    g.off_Gb = reserve(&off, (E if g.bgi else 0) * sizeof(double))
    g.off_pend = reserve(&off, (E if g.bgi else 0) * sizeof(double))
    g.off_Groot = reserve(&off, (g.d0 if g.has_sib and g.sr else 0) * sizeof(double))
    g.off_heads = reserve(&off, N * sizeof(int32_t))
    g.off_top = reserve(&off, N * sizeof(int32_t))
    g.off_wit = reserve(&off, N * sizeof(int32_t))
    g.off_alist = reserve(&off, E * sizeof(int32_t))
    g.off_nB = reserve(&off, (g.S if g.bgi else 0) * sizeof(int32_t))
    g.off_dead = reserve(&off, E)
    g.off_lost = reserve(&off, g.S)
    g.block_size = (off + 7) // 8 * 8
    blocks = <char*>malloc(n_pool * g.block_size)
    if blocks == NULL:
        free(wmem)
        free(mem)
        free(g.aid)
        return DECODE_NO_MEMORY
    for k in range(n_pool):
        state_bind(g, &pool[k], blocks + k * g.block_size)
        pool[k].slot = <int32_t>k
    init_state(g, &pool[0])
    tol = TIE_TOLERANCE_C * (1.0 + big)
    cur[0] = &pool[0]
    ncur = 1
    for _ in range(N - 1):                         # Algorithm 1/2, line 2
        count = 0
        for j in range(ncur):
            expand(g, cur[j], &sc, j, cands, &count, width, cur, tol)
        # the new beam: a parent's last child takes over its storage, the others copy it
        for j in range(ncur):
            uses[j] = 0
        for k in range(count):
            uses[cands[k].parent] += 1
        for k in range(n_pool):
            inuse[k] = 0
        for j in range(ncur):
            if uses[j] > 0:
                inuse[cur[j].slot] = 1
        nfree = 0
        for k in range(n_pool):
            if not inuse[k]:
                free_[nfree] = &pool[k]
                nfree += 1
        for k in range(count):
            j = cands[k].parent
            uses[j] -= 1
            if uses[j] == 0:
                dst = cur[j]
            else:
                nfree -= 1
                dst = free_[nfree]
                state_copy(g, dst, cur[j])
            if cands[k].arc >= 0:
                add_arc(g, dst, &sc, cands[k].arc)
                if g.pruned:
                    witness_add(g, dst, cands[k].u, cands[k].v)
            else:                                  # disallowed: no part holds it, none is lost
                dst.wstate = 0
                m = dst.top[cands[k].u]
                dst.heads[cands[k].v] = cands[k].u
                for h in range(N):
                    if dst.top[h] == cands[k].v:
                        dst.top[h] = <int32_t>m
                if cands[k].u == 0:
                    dst.rootchild = 1
            dst.value = cands[k].value
            dst.ndis = cands[k].ndis
            dst.hash = cands[k].hash
            nxt[k] = dst
        swap = cur
        cur = nxt
        nxt = swap
        ncur = count
    for h in range(N):
        out[h] = cur[0].heads[h]
    out_value[0] = cur[0].value
    free(blocks)
    free(wmem)
    free(mem)
    free(g.aid)
    return DECODE_OK


def greedy(arc, sib=None, grand=None, bint single_root=True, bint pp=False, double alpha=1.0,
           double beta=0.5, Py_ssize_t beam=1, int improve=0):
    """BGI (pp False) or BGI-PP (pp True; Section 4's alpha and beta) with a beam of width
    ``beam`` on arc float64 [n+1, n+1] and optional sib, grand float64 [n+1, n+1, n+1]
    (C-contiguous float64 arrays are used without a copy). Returns (heads int32 [n+1], value):
    the tree of dparse.graph.greedy_reference.greedy and its beam value, the sum of its chosen
    values; with ``improve`` = s > 0, the tree after s rounds of post-search arc swaps
    (dparse.graph.improve.improve_tree of that tree, in the same call) and the search's value.
    ValueError for malformed scores or options."""
    cdef const score_t[:, ::1] A = np.ascontiguousarray(arc, dtype=np.float64)
    cdef const score_t[:, :, ::1] Sv
    cdef const score_t[:, :, ::1] Gv
    cdef Graph g
    cdef Py_ssize_t N = A.shape[0]
    cdef double value = 0.0
    cdef int status
    if N < 2 or A.shape[1] != N:
        raise ValueError(f"arc scores must have shape [n+1, n+1] with n >= 1, got "
                         f"({A.shape[0]}, {A.shape[1]})")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if not 0.0 <= alpha < INFINITY:
        raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
    if beam < 1:
        raise ValueError(f"beam must be >= 1, got {beam}")
    if improve < 0:
        raise ValueError(f"improve must be >= 0, got {improve}")
    memset(&g, 0, sizeof(Graph))
    g.N = N
    g.sr = single_root
    g.pp = pp
    g.bgi = not pp
    g.la = beta if pp else 1.0
    g.gb = 1.0 - beta if pp else 1.0
    g.arc = &A[0, 0]
    if sib is not None:
        Sv = np.ascontiguousarray(sib, dtype=np.float64)
        if Sv.shape[0] != N or Sv.shape[1] != N or Sv.shape[2] != N:
            raise ValueError(f"sib scores must have shape [n+1, n+1, n+1] = [{N}, {N}, {N}]")
        g.sib = &Sv[0, 0, 0]
        g.has_sib = True
    if grand is not None:
        Gv = np.ascontiguousarray(grand, dtype=np.float64)
        if Gv.shape[0] != N or Gv.shape[1] != N or Gv.shape[2] != N:
            raise ValueError(f"grand scores must have shape [n+1, n+1, n+1] = [{N}, {N}, {N}]")
        g.grand = &Gv[0, 0, 0]
        g.has_grand = True
    heads = np.empty(N, dtype=np.int32)
    cdef head_t[::1] out = heads
    with nogil:
        status = search(&g, alpha, beam, &out[0], &value)
        if status == DECODE_OK and improve > 0:
            status = improve_core(g.arc, g.sib, g.grand, N - 1, improve, single_root, &out[0])
    if status == PART_NOT_FINITE or status == IMPROVE_SIB_NOT_FINITE \
            or status == IMPROVE_GRAND_NOT_FINITE:
        raise ValueError("sib and grand scores must be finite where their arcs are allowed")
    if status == IMPROVE_NOT_A_TREE:
        raise AssertionError(f"improve_core rejected the search's tree {heads.tolist()}")
    raise_for_status(status)
    return heads, value
