# cython: language_level=3
"""Greedy inference BGI and BGI-PP (Tchernowitz, Yedidsion and Reichart 2016): the part
bookkeeping of a partial tree, in C (data structures and notation: greedy_structs.pxd).

build_lists lays out a sentence's allowed arcs (ids, out and in lists, sibling part slots) and
their probabilities q (Section 4); load_weights copies the part weights that are read into
compact tables; init_state builds the empty tree's DSs; add_arc adds an allowed arc e (Algorithm
1/2, lines 13-16): the parts lost (e in B, or an arc of lostArcs(e) in A) leave every DS, the
parts with e move on (BGI-PP: their probabilities given T + e; BGI: the parts that e completes
or leaves waiting for their last arc of B), and lostArcs(e) die.

Cost. Setup: O(|parts|) to copy the weights and build the DSs; |parts| = O(|E| n_in)
grandparent plus O(sum_h d_h^2) sibling parts, read only where all their arcs are allowed.
Updates over a whole search: each part changes at most k + 1 times, each change touching O(1)
entries of G, H, Gb and O(|B|) of F; the lost arcs into v update the grandparent parts below v
at once through H in O(d_v); finding the sibling parts with an added arc of h in B costs
O(d_h^2) (BGI: also per lost arc).
"""

from libc.math cimport INFINITY, exp, fabs
from libc.stdint cimport int32_t, uint8_t
from libc.string cimport memset

from dparse._ext.types cimport DECODE_OK
from dparse.graph.greedy_structs cimport SibPart, sib_part


cdef inline bint in_tree(const Graph* g, const State* st, Py_ssize_t a) noexcept nogil:
    """Whether the allowed arc a is in st's tree."""
    return st.heads[g.am[a]] == g.ah[a]


# -- the empty tree: lists, probabilities and DSs ------------------------------------------------

cdef void build_lists(Graph* g, double alpha) noexcept nogil:
    """ah, am, ids in aid, the out and in lists, split, sbase, S and q (aid marks the allowed
    arcs with 0, g.E counts them)."""
    cdef Py_ssize_t N = g.N, h, m, a, k, d
    cdef double top, total, x
    cdef double* q = g.q
    a = 0
    for h in range(N):
        g.out_start[h] = <int32_t>a
        g.split[h] = 0
        for m in range(1, N):
            if g.aid[h * N + m] >= 0:
                g.aid[h * N + m] = <int32_t>a
                g.ah[a] = <int32_t>h
                g.am[a] = <int32_t>m
                if m < h:
                    g.split[h] += 1
                a += 1
    g.out_start[N] = <int32_t>a
    g.d0 = g.out_start[1]
    for m in range(N + 1):        # in lists: counting sort by modifier, heads ascending within
        g.in_start[m] = 0
    for a in range(g.E):
        g.in_start[g.am[a] + 1] += 1
    for m in range(N):
        g.in_start[m + 1] += g.in_start[m]
    for m in range(N):            # sbase serves as the fill cursor here
        g.sbase[m] = g.in_start[m]
    for a in range(g.E):
        m = g.am[a]
        g.in_arcs[g.sbase[m]] = <int32_t>a
        g.sbase[m] += 1
    k = 0
    for h in range(N):
        d = g.out_start[h + 1] - g.out_start[h]
        g.sbase[h] = <int32_t>k
        if g.has_sib:
            k += d * d
    g.S = k
    k = 0
    for a in range(g.E):
        g.gbase[a] = <int32_t>k
        if g.has_grand:
            k += g.out_start[g.am[a] + 1] - g.out_start[g.am[a]]
    g.Gtot = k
    # probabilities (Section 4), as dparse.graph.greedy_reference.arc_probabilities computes them
    for a in range(g.E):
        q[a] = 1.0
    if g.pp:
        for m in range(1, N):
            if g.in_start[m] == g.in_start[m + 1]:
                continue
            top = -INFINITY
            for k in range(g.in_start[m], g.in_start[m + 1]):
                x = alpha * g.arc[g.ah[g.in_arcs[k]] * N + m]
                if x > top:
                    top = x
            total = 0.0
            for k in range(g.in_start[m], g.in_start[m + 1]):
                a = g.in_arcs[k]
                q[a] = exp(alpha * g.arc[g.ah[a] * N + m] - top)
                total += q[a]
            for k in range(g.in_start[m], g.in_start[m + 1]):
                q[g.in_arcs[k]] /= total


cdef int load_weights(Graph* g, double* maxabs) noexcept nogil:
    """Copies the part weights that are read into wsib, gw and rootw; maxabs = the largest
    |part weight|. PART_NOT_FINITE if one is inf or NaN, else DECODE_OK."""
    cdef Py_ssize_t N = g.N, a, low, h, x, y, z, i, j, j0, j1, o0, d, sp, k
    cdef double W, big = 0.0
    cdef const double* row
    cdef double* dst
    for a in range(g.E):
        W = fabs(g.arc[g.ah[a] * N + g.am[a]])
        if W > big:
            big = W
    if g.has_grand:
        for a in range(g.E):                       # top arc a = (x, y), low arc (y, z)
            x = g.ah[a]
            y = g.am[a]
            row = g.grand + (x * N + y) * N
            dst = g.gw + g.gbase[a] - g.out_start[y]
            for low in range(g.out_start[y], g.out_start[y + 1]):
                z = g.am[low]
                W = row[z] if z != x else 0.0
                if not (-INFINITY < W < INFINITY):
                    return PART_NOT_FINITE
                if fabs(W) > big:
                    big = fabs(W)
                dst[low] = W
        g.gw[g.Gtot] = 0.0
        if g.sr:
            for a in range(g.E):
                h = g.ah[a]
                k = g.aid[h]                       # the root arc (0, h)
                g.rootw[a] = 0.0
                if h != 0 and k >= 0:
                    g.rootw[a] = g.gw[g.gbase[k] + a - g.out_start[h]] * g.q[k] * g.q[a]
    if g.has_sib:                                  # (only the slots of parts are ever read)
        for h in range(N):
            o0 = g.out_start[h]
            d = g.out_start[h + 1] - o0
            sp = g.split[h]
            for i in range(d):                     # inner arc (h, m_i)
                row = g.sib + (h * N + g.am[o0 + i]) * N
                if i >= sp:                        # right side: outer j > i
                    j0 = i + 1
                    j1 = d
                else:                              # left side: outer j < i
                    j0 = 0
                    j1 = i
                for j in range(j0, j1):
                    W = row[g.am[o0 + j]]
                    if not (-INFINITY < W < INFINITY):
                        return PART_NOT_FINITE
                    if fabs(W) > big:
                        big = fabs(W)
                    g.wsib[g.sbase[h] + i * d + j] = W
            row = g.sib + (h * N + h) * N
            for j in range(d):                     # innermost (h, h, m_j)
                W = row[g.am[o0 + j]]
                if not (-INFINITY < W < INFINITY):
                    return PART_NOT_FINITE
                if fabs(W) > big:
                    big = fabs(W)
                g.wsib[g.sbase[h] + j * d + j] = W
    maxabs[0] = big
    return DECODE_OK


cdef inline void init_sib(const Graph* g, State* st, Py_ssize_t h, Py_ssize_t i,
                          Py_ssize_t j) noexcept nogil:
    """Adds the sibling part (h; i, j) to the empty tree's DSs (F as a difference array)."""
    cdef SibPart p
    cdef double W, val
    cdef const double* q = g.q
    sib_part(g, h, i, j, &p)
    W = p.W
    if W == 0.0:
        return
    if p.a_in < 0:
        st.G[p.a_out] += W
        val = W * q[p.a_out]
        if g.bgi and p.lo == p.hi:
            st.Gb[p.a_out] += W
    else:
        st.G[p.a_out] += W * q[p.a_in]
        st.G[p.a_in] += W * q[p.a_out]
        val = W * q[p.a_in] * q[p.a_out]
        if g.sr and h == 0:
            st.Groot[p.a_in] += W * q[p.a_out]
            st.Groot[p.a_out] += W * q[p.a_in]
            st.R2 += val
    if g.bgi:
        st.nB[p.id] = p.hi - p.lo
    if p.lo < p.hi and not (g.sr and h == 0):     # (F of root arcs: unused under single_root)
        st.F[p.lo] += val
        if p.hi < g.out_start[h + 1]:
            st.F[p.hi] -= val


cdef void init_state(const Graph* g, State* st) noexcept nogil:
    """The empty tree's DSs."""
    cdef Py_ssize_t N = g.N, E = g.E, a, t, low, y, h, i, j, o0, o1, sp
    cdef double W, run
    cdef const double* q = g.q
    cdef const double* row
    memset(st.block, 0, g.block_size)
    st.value = 0.0
    st.R2 = 0.0
    st.hash = 0
    st.ndis = 0
    st.rootchild = 0
    st.nalive = <int32_t>E
    st.wstate = 0
    for a in range(N):
        st.heads[a] = -1
        st.top[a] = <int32_t>a
    for a in range(E):
        st.alist[a] = <int32_t>a
        W = g.arc[g.ah[a] * N + g.am[a]]
        st.G[a] = W
        if g.bgi:
            st.Gb[a] = W
    if g.has_grand:
        for t in range(E):                         # top arc t = (x, y), low arc (y, z)
            y = g.am[t]
            row = g.gw + g.gbase[t] - g.out_start[y]
            for low in range(g.out_start[y], g.out_start[y + 1]):
                W = row[low]
                if W != 0.0:
                    st.G[t] += W * q[low]
                    st.G[low] += W * q[t]
                    st.H[low] += W * q[t]
    if g.has_sib:
        for h in range(N):
            o0 = g.out_start[h]
            o1 = g.out_start[h + 1]
            sp = g.split[h]
            for j in range(sp, o1 - o0):           # right side: inner i < outer j
                init_sib(g, st, h, j, j)
                for i in range(sp, j):
                    init_sib(g, st, h, i, j)
            for j in range(sp):                    # left side: inner i > outer j
                init_sib(g, st, h, j, j)
                for i in range(j + 1, sp):
                    init_sib(g, st, h, i, j)
            run = 0.0
            for a in range(o0, o1):
                run += st.F[a]
                st.F[a] = run


# -- adding an arc: the DS updates ---------------------------------------------------------------

cdef void sib_lose(const Graph* g, State* st, const SibPart* p, Py_ssize_t h) noexcept nogil:
    """The undecided sibling part p (of head h) is lost: its share leaves every DS."""
    cdef double W = p.W, q_in, q_out, val
    cdef bint in_in, in_out
    cdef Py_ssize_t b
    st.lost[p.id] = 1
    in_out = in_tree(g, st, p.a_out)
    in_in = p.a_in < 0 or in_tree(g, st, p.a_in)
    q_out = 1.0 if in_out else g.q[p.a_out]
    q_in = 1.0 if in_in else g.q[p.a_in]
    if not in_out:
        st.G[p.a_out] -= W * q_in
    if not in_in:
        st.G[p.a_in] -= W * q_out
    val = W * q_in * q_out
    if not (g.sr and h == 0):
        for b in range(p.lo, p.hi):
            st.F[b] -= val
    if g.sr and h == 0 and not in_in and not in_out:
        st.Groot[p.a_in] -= W * q_out
        st.Groot[p.a_out] -= W * q_in
        st.R2 -= val
    if g.bgi and st.nB[p.id] == 0:
        if in_in and not in_out:
            st.Gb[p.a_out] -= W
        elif in_out and not in_in:
            st.Gb[p.a_in] -= W


cdef inline void sib_lose_part(const Graph* g, State* st, Py_ssize_t h, Py_ssize_t i,
                               Py_ssize_t j) noexcept nogil:
    cdef SibPart p
    cdef Py_ssize_t o0 = g.out_start[h]
    if st.lost[g.sbase[h] + i * (g.out_start[h + 1] - o0) + j]:
        return
    sib_part(g, h, i, j, &p)
    if p.W != 0.0:
        sib_lose(g, st, &p, h)


cdef void sib_lose_with_arc(const Graph* g, State* st, Py_ssize_t a) noexcept nogil:
    """Every undecided sibling part with a in A is lost (a became impossible)."""
    cdef Py_ssize_t h = g.ah[a], o0 = g.out_start[h], d = g.out_start[h + 1] - o0
    cdef Py_ssize_t sp = g.split[h], k = a - o0, j
    sib_lose_part(g, st, h, k, k)
    if k >= sp:
        for j in range(k + 1, d):                  # a inner, j outer
            sib_lose_part(g, st, h, k, j)
        for j in range(sp, k):                     # j inner, a outer
            sib_lose_part(g, st, h, j, k)
    else:
        for j in range(k):
            sib_lose_part(g, st, h, k, j)
        for j in range(k + 1, sp):
            sib_lose_part(g, st, h, j, k)


cdef void sib_lose_straddling(const Graph* g, State* st, Py_ssize_t e) noexcept nogil:
    """Every undecided sibling part with e in B is lost (e is added)."""
    cdef Py_ssize_t h = g.ah[e], o0 = g.out_start[h], d = g.out_start[h + 1] - o0
    cdef Py_ssize_t sp = g.split[h], k = e - o0, i, j
    if k >= sp:
        for j in range(k + 1, d):
            sib_lose_part(g, st, h, j, j)
            for i in range(sp, k):
                sib_lose_part(g, st, h, i, j)
    else:
        for j in range(k):
            sib_lose_part(g, st, h, j, j)
            for i in range(k + 1, sp):
                sib_lose_part(g, st, h, i, j)


cdef void sib_add_one(const Graph* g, State* st, Py_ssize_t h, Py_ssize_t i, Py_ssize_t j,
                      Py_ssize_t e) noexcept nogil:
    """e (in A of the sibling part (h; i, j)) is added to the tree."""
    cdef SibPart p
    cdef double W, delta
    cdef Py_ssize_t other, b
    sib_part(g, h, i, j, &p)
    W = p.W
    if W == 0.0 or st.lost[p.id]:
        return
    other = p.a_in if p.a_out == e else p.a_out
    if other < 0 or in_tree(g, st, other):         # all of A in the tree now
        if g.pp and not (g.sr and h == 0):
            delta = W * (1.0 - g.q[e])
            for b in range(p.lo, p.hi):
                st.F[b] += delta
        if g.bgi and st.nB[p.id] == 1:
            for b in range(p.lo, p.hi):
                if not st.dead[b]:
                    st.pend[b] += W
                    break
    else:                                          # other still possible
        if g.pp:
            st.G[other] += W * (1.0 - g.q[e])
            if not (g.sr and h == 0):
                delta = W * g.q[other] * (1.0 - g.q[e])
                for b in range(p.lo, p.hi):
                    st.F[b] += delta
        if g.bgi and st.nB[p.id] == 0:
            st.Gb[other] += W


cdef void sib_add(const Graph* g, State* st, Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t h = g.ah[e], o0 = g.out_start[h], d = g.out_start[h + 1] - o0
    cdef Py_ssize_t sp = g.split[h], k = e - o0, j
    sib_add_one(g, st, h, k, k, e)
    if k >= sp:
        for j in range(k + 1, d):
            sib_add_one(g, st, h, k, j, e)
        for j in range(sp, k):
            sib_add_one(g, st, h, j, k, e)
    else:
        for j in range(k):
            sib_add_one(g, st, h, k, j, e)
        for j in range(k + 1, sp):
            sib_add_one(g, st, h, j, k, e)


cdef inline void sib_b_dies_one(const Graph* g, State* st, Py_ssize_t h, Py_ssize_t i,
                                Py_ssize_t j, Py_ssize_t b, Py_ssize_t e,
                                const uint8_t* mark) noexcept nogil:
    """BGI: b, in B of the sibling part (h; i, j), became impossible. (Inline: sib_b_dies runs
    it for every sibling part of every lost arc.)"""
    cdef SibPart p
    cdef bint in_in, in_out
    cdef Py_ssize_t c
    sib_part(g, h, i, j, &p)
    if p.W == 0.0 or st.lost[p.id]:
        return
    st.nB[p.id] -= 1
    in_out = p.a_out == e or in_tree(g, st, p.a_out)
    in_in = p.a_in < 0 or p.a_in == e or in_tree(g, st, p.a_in)
    if in_in and in_out:
        if st.nB[p.id] == 1:                       # waits for its last possible arc of B
            for c in range(p.lo, p.hi):
                if c != b and mark[c] != 2 and not st.dead[c]:
                    st.pend[c] += p.W
                    break
    elif st.nB[p.id] == 0:
        if in_in:
            st.Gb[p.a_out] += p.W
        elif in_out:
            st.Gb[p.a_in] += p.W


cdef void sib_b_dies(const Graph* g, State* st, Py_ssize_t b, Py_ssize_t e,
                     const uint8_t* mark) noexcept nogil:
    cdef Py_ssize_t h = g.ah[b], o0 = g.out_start[h], d = g.out_start[h + 1] - o0
    cdef Py_ssize_t sp = g.split[h], k = b - o0, i, j
    if k >= sp:
        for j in range(k + 1, d):
            sib_b_dies_one(g, st, h, j, j, b, e, mark)
            for i in range(sp, k):
                sib_b_dies_one(g, st, h, i, j, b, e, mark)
    else:
        for j in range(k):
            sib_b_dies_one(g, st, h, j, j, b, e, mark)
            for i in range(k + 1, sp):
                sib_b_dies_one(g, st, h, i, j, b, e, mark)


cdef void grand_lose_top(const Graph* g, State* st, Py_ssize_t a) noexcept nogil:
    """The grandparent parts (x, y, z) with lost top arc a = (x, y) leave the low arc's DSs."""
    cdef Py_ssize_t y = g.am[a], low
    cdef const double* row = g.gw + g.gbase[a] - g.out_start[y]
    cdef const uint8_t* dead = st.dead
    cdef double* G = st.G
    cdef double* H = st.H
    cdef double W, qa = g.q[a]
    for low in range(g.out_start[y], g.out_start[y + 1]):
        W = row[low]
        if W != 0.0 and not dead[low]:
            G[low] -= W * qa
            H[low] -= W * qa


cdef void grand_lose_low(const Graph* g, State* st, Py_ssize_t a) noexcept nogil:
    """The grandparent parts (w, x, y) with lost low arc a = (x, y) leave the top arc's G."""
    cdef Py_ssize_t x = g.ah[a], k, t, pos
    cdef const int32_t* in_arcs = g.in_arcs
    cdef const int32_t* gbase = g.gbase
    cdef const double* gw = g.gw
    cdef const uint8_t* dead = st.dead
    cdef double W, qa = g.q[a]
    if x == 0 or st.heads[x] >= 0:                 # no top arc is still possible
        return
    pos = a - g.out_start[x]
    for k in range(g.in_start[x], g.in_start[x + 1]):
        t = in_arcs[k]
        W = gw[gbase[t] + pos]
        if W != 0.0 and not dead[t]:
            st.G[t] -= W * qa


cdef void grand_add(const Graph* g, State* st, Py_ssize_t e, const uint8_t* mark) noexcept nogil:
    """e = (u, v) is added and the other arcs into v are lost, at once for the grandparent parts
    below v through H; then the parts (w, u, v) above e."""
    cdef Py_ssize_t u = g.ah[e], v = g.am[e], low, t, k, pos
    cdef const double* row = g.gw + g.gbase[e] - g.out_start[v]
    cdef const uint8_t* dead = st.dead
    cdef double* G = st.G
    cdef double* H = st.H
    cdef double W, qe = g.q[e]
    for low in range(g.out_start[v], g.out_start[v + 1]):  # (x, v, z): u gained, others lost
        if dead[low] or mark[low]:
            continue
        W = row[low]
        G[low] += W - H[low]
        H[low] = 0.0
        if g.bgi:
            st.Gb[low] += W
    if u == 0 or st.heads[u] >= 0:
        return
    pos = e - g.out_start[u]
    for k in range(g.in_start[u], g.in_start[u + 1]):     # (w, u, v)
        t = g.in_arcs[k]
        if dead[t] or mark[t]:
            continue
        W = g.gw[g.gbase[t] + pos]
        if W != 0.0:
            G[t] += W * (1.0 - qe)
            if g.bgi:
                st.Gb[t] += W


cdef void add_arc(const Graph* g, State* st, Scratch* sc, Py_ssize_t e) noexcept nogil:
    """Lines 13-16 for the allowed arc e: updates the DSs, then adds e and drops lostArcs."""
    cdef Py_ssize_t N = g.N, u = g.ah[e], v = g.am[e], r = st.top[u], k, a, x
    cdef Py_ssize_t nl = 0, nin
    cdef int32_t* lost = sc.lostlist
    cdef uint8_t* mark = sc.mark
    cdef const uint8_t* dead = st.dead
    # lostArcs among the allowed arcs: In(v) - e, then Cyc(e), then Root - e for a root arc
    for k in range(g.in_start[v], g.in_start[v + 1]):
        a = g.in_arcs[k]
        if a != e and not dead[a]:
            lost[nl] = <int32_t>a
            nl += 1
    nin = nl
    if r != 0:
        for k in range(g.in_start[r], g.in_start[r + 1]):
            a = g.in_arcs[k]
            if not dead[a] and st.top[g.ah[a]] == v:
                lost[nl] = <int32_t>a
                nl += 1
    if g.sr and u == 0:
        for a in range(g.d0):
            if a != e and not dead[a]:
                lost[nl] = <int32_t>a
                nl += 1
    for k in range(nl):
        mark[lost[k]] = 1
    # parts lost (e in B, a lost arc in A), then the parts with e move on
    if g.has_sib:
        sib_lose_straddling(g, st, e)
        for k in range(nl):
            sib_lose_with_arc(g, st, lost[k])
    if g.has_grand:
        for k in range(nl):
            if k >= nin:                           # (the lost arcs into v: in grand_add)
                grand_lose_top(g, st, lost[k])
            grand_lose_low(g, st, lost[k])
        grand_add(g, st, e, mark)
    if g.has_sib:
        sib_add(g, st, e)
        if g.bgi:
            for k in range(nl):
                mark[lost[k]] = 2
                sib_b_dies(g, st, lost[k], e, mark)
    for k in range(nl):
        mark[lost[k]] = 0
        st.dead[lost[k]] = 1
    st.dead[e] = 1
    # the forest
    st.heads[v] = <int32_t>u
    for x in range(N):
        if st.top[x] == v:
            st.top[x] = <int32_t>r
    if u == 0:
        st.rootchild = 1
