# cython: language_level=3
"""Greedy inference BGI and BGI-PP with beam search, arc + sibling + grandparent parts, in C.

Tchernowitz, Yedidsion and Reichart (2016): Algorithm 1 (BGI), Algorithm 2 (BGI-PP), beam search
(Section 6), with the data structures of Section 5 / Appendix A. Returns the tree and beam value
of the Python reference dparse/graph/greedy_reference.py, whose docstring is the contract (parts with
forbidden arcs B, disallowed arcs, single_root, tie rule, beam order, duplicates).

Notation: E the allowed arcs (finite scores; ids in index order h * (n+1) + m), q(a) the arc
probability (BGI-PP: the per-word softmax of alpha * score; BGI: 1), T the partial tree, a part
undecided while neither lost nor gained. Each iteration adds the possible arc e = (u, v) with the
lowest a * loss_e - b * gain_e (BGI: a = b = 1; BGI-PP: a = beta, b = 1 - beta), where
lostArcs(e) = In(v) - e (the other arcs into v) + Cyc(e) (the arcs into r = top(u) from v's
component) + under single_root, when u = 0, Root - e (the other root arcs). Disallowed arcs hold
no part and are taken, value 0, only by a tree with no allowed arc left (reference doc). While
the partial tree can be completed with allowed arcs, only the arcs after which it still can are
offered (``completable`` in the reference), checked only for arcs that would enter the beam,
only on graphs with disallowed arcs. First by a witness, kept per partial tree: a tree of
allowed arcs (single-rooted under single_root) that contains the partial tree, built in O(|E|)
from a search of the component graph and kept as arcs are added. (u, v) is completable if the
witness has it, or if moving v below u leaves one (v is not an ancestor of u: up the
witness's heads from u, O(depth); and under single_root neither a new root arc nor the
witness's own root arc); a root arc (0, v) before any root arc if the witness's root word s has
a possible arc from v's witness subtree (v to the root, s below it). When adding an arc keeps
the witness a tree, one of its heads changes; otherwise it is rebuilt when next needed.
What the witness does not settle is found per tree and iteration on the graph of its
components (nodes the tops, an edge per possible arc) by dominators (find_safe): with the root
fixed (the root's component, or under single_root before any root arc a virtual root whose edges
go to the components that have a possible root arc and reach all others), adding (u, v) keeps
every component reachable unless v dominates top(u); a root arc (0, v) under single_root is safe
iff v's component reaches all others; O(|E|) per tree and iteration (Cooper, Harvey and
Kennedy's iterative dominators, in a pass or two on these graphs). On en_ewt test scores of
the o2-dd model (3.2 heads per word) the witness cut BGI-PP's decoding time by 10-20%
(results/greedy-speed.md).

Data structures of one partial tree (Appendix A), updated as arcs are added and lost:
- G[a], per possible arc: the sum over the undecided parts p with a in A(p) of
  W_p * q(A(p) - T - a). DS (a), the partial-loss sum of a, is q(a) G[a] (the parts'
  probabilities given T); G[e] is the BGI-PP gain sum of e (given T + e).
- F[a]: the sum over the undecided sibling parts with a in B of W_p * q(A(p) - T), the parts
  lost when a is added (not kept for root arcs under single_root: never read).
- H[low], per arc low = (h, m): the sum over the grandparent parts (g, h, m) with a possible top
  arc of W q(g, h). Groot[a], R2 (single_root): the same for the sibling parts of two root arcs,
  per root arc and in all.
- BGI only: Gb[a], the parts that adding a completes (A - T = {a}, no possible arc of B left);
  pend[b], the parts with A in T waiting only for b, their last possible arc of B (gained when b
  is lost); nB, per sibling part, its possible arcs of B.
- a lost flag per sibling part (a grandparent part's state follows from its two arcs'), a dead
  flag per arc, and the list of possible arcs, compacted as they die.
DS (b) of Appendix A, the arc pairs, needs no storage at second order: one part at most holds a
given pair, and while both arcs are possible its value is W q q, an O(1) lookup. The weights read
are first copied from the dense [N^3] inputs into compact tables (per head and pair of its
arcs; per top arc and low arc).

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

Cost, for n words, N = n + 1, |E| allowed arcs, n_in the largest in-degree and d_h the
out-degree of h (k = 2). Setup: O(N^2) (the arc map, a zeroed N x N table of pair sums) and
O(|parts|) to copy the weights and build the DSs; |parts| = O(|E| n_in) grandparent plus
O(sum_h d_h^2) sibling parts, read only where all their arcs are allowed. Each iteration: O(|E|)
for the sums and O(1) per possible arc for its value: O(n |E|) = O(n^2 n_in) evaluation in all
(Appendix A spends O(n_in) more per arc on the pair corrections, which these sums make O(1)).
Updates over a whole search: each part changes at most k + 1 times, each change touching O(1)
entries of G, H, Gb and O(|B|) of F; the lost arcs into v update the grandparent parts below v
at once through H in O(d_v); finding the sibling parts with an added arc of h in B costs
O(d_h^2) (BGI: also per lost arc). A beam of width w multiplies evaluation and updates by w and
copies a tree's DSs, O(|E| + sum_h d_h^2) bytes, per kept tree and iteration.
So with a first-order pruner (n_in bounded; en_ewt keeps about 9 heads per word) a sentence
costs O(n^2), the root's O(d_0^2) sibling parts included (the root stays a candidate head of
most words); on the complete graph O(n^3) evaluation plus O(n^4) at worst for the F ranges of the
O(n^3) sibling parts. Measured: benchmarks/greedy_scaling.py (time ~ n^2.0 pruned, n^3.3
complete, n = 40..160 and 40..80).
"""

from libc.math cimport INFINITY, exp, fabs
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from dparse.graph.improve cimport (
    IMPROVE_GRAND_NOT_FINITE, IMPROVE_NOT_A_TREE, IMPROVE_SIB_NOT_FINITE, improve_core,
)
from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    head_t,
    raise_for_status,
    score_t,
)

from dparse.graph.greedy_reference import TIE_TOLERANCE

cdef enum:
    PART_NOT_FINITE = -100      # a sib or grand weight read is inf or NaN

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


cdef struct Graph:
    Py_ssize_t N, E, S, d0       # nodes, allowed arcs, sibling part slots, root arcs
    bint sr, pp, bgi, has_sib, has_grand
    bint pruned                  # some arc is disallowed (else every arc keeps a tree completable)
    # arc_safe if pruned, else NULL: called through this pointer, which the compiler cannot
    # resolve, so its code stays out of expand's candidate loop (inlined, it slows the loop
    # down by ~15% even when never called)
    void* safe                   # a SafeFn
    double la, gb                # value = la * loss - gb * gain
    const score_t* arc           # the inputs, dense: [N*N], [N*N*N], [N*N*N] (or NULL)
    const score_t* sib
    const score_t* grand
    int32_t* aid                 # [N*N] id of the allowed arc (h, m), else -1
    int32_t* ah                  # [E] head
    int32_t* am                  # [E] modifier
    double* q                    # [E] probability (BGI: 1); q[-1] == 0
    int32_t* out_start           # [N+1] h's arcs: ids out_start[h] .. out_start[h+1]-1
    int32_t* split               # [N] how many of h's arcs go left (m < h)
    int32_t* in_start            # [N+1] arcs into m: in_arcs[in_start[m] .. in_start[m+1]-1]
    int32_t* in_arcs             # [E] heads ascending
    int32_t* sbase               # [N] h's sibling parts: sbase[h] + inner * d_h + outer
    double* wsib                 # [S] their weights (slots that are no part: never read)
    # the grandparent parts (x, y, z) of a top arc t = (x, y): weights gw[gbase[t] + low -
    # out_start[y]] for the low arc low = (y, z) (0 if z == x); gw has Gtot + 1 entries
    int32_t* gbase               # [E]
    double* gw
    Py_ssize_t Gtot
    # single_root with grandparent parts: for a = (x, y), grand[0, x, y] * q(0, x) * q(a)
    # (0 if (0, x) is not allowed)
    double* rootw                # [E]
    # one partial tree's block of arrays: byte offsets and size
    Py_ssize_t off_G, off_F, off_H, off_Gb, off_pend, off_Groot
    Py_ssize_t off_heads, off_top, off_wit, off_alist, off_nB, off_dead, off_lost, block_size


cdef struct State:
    double value                 # beamVal: the sum of the chosen values
    double R2
    uint64_t hash                # xor of the arcs' keys: equal trees have equal hashes
    int32_t ndis                 # disallowed arcs in the tree
    int32_t rootchild
    int32_t slot                 # its index in the pool of 2 * width partial trees
    int32_t nalive               # alist[0 .. nalive-1]: the possible arcs (and some dead ones)
    int32_t wstate               # pruned graphs: 1 wit is a witness, 0 none known yet, -1 the
                                 # tree cannot be completed with allowed arcs (see witness_build)
    int32_t wroot                # the witness's root word (single_root before any root arc)
    char* block
    double* G
    double* F
    double* H                    # H[-1] == 0
    double* Gb
    double* pend
    double* Groot
    int32_t* heads
    int32_t* top
    int32_t* wit                 # [N] a witness: a tree of allowed arcs (single-rooted under
                                 # single_root) containing the partial tree's arcs
    int32_t* alist
    int32_t* nB
    uint8_t* dead                # [E] 1 once the arc is in the tree or impossible
    uint8_t* lost                # [S] 1 once the sibling part is lost


cdef struct Pair:
    double Cs                    # the arcs into r from component t: sum of K
    double CG                    # and of their grandparent parts (y, r, t): W * q(y, r)


cdef struct Scratch:
    double* K                    # [E] per-iteration death value K of the i-th possible arc
    int32_t* pidx                # [E] and its entry of pair
    double* inK                  # [N]
    double* Rv                   # [N] single_root: grandparent pairs (0, x, v) of root arc (0, v)
    Pair* pair                   # [N*N] pair[t*N + r], all 0 between iterations
    # for a = (x, y): cgw[a] = grand[x, y, t] * q(a) (0 unless a part) for t = cgtop[a], the
    # last top of x seen (a cache shared by the beam's trees)
    int32_t* cgtop               # [E]
    double* cgw                  # [E]
    int32_t* lostlist            # [E]
    uint8_t* mark                # [E] 1: lost in this step, 2: and its B role processed
    # the component graph of one partial tree (find_safe): nodes its tops, edges its possible
    # arcs top(x) -> y, out-edges of t: cadj[cstart[t] .. cstart[t+1]-1]
    int32_t* cstart              # [N+1]
    int32_t* cadj                # [E] the arc ids
    int32_t* po                  # [N] postorder number in a search from the root
    int32_t* idom                # [N] immediate dominator (the root's: itself)
    int32_t* order               # [N] the tops by postorder
    int32_t* stack               # [N]
    int32_t* cursor              # [N] the search's next out-edge of each top
    uint8_t* seen                # [N]
    uint8_t* good                # [N] single_root, no root arc yet: the top may take one
    uint8_t* fromroot            # [N] the top has a possible arc from the root's component
    int known                    # arc_safe on the current tree: 0 nothing known yet,
                                 # 1 find_safe found the dominators, 2 every arc is safe (or
                                 # none), 3 only fromroot is filled


ctypedef bint (*SafeFn)(const Graph*, State*, Scratch*, Py_ssize_t,
                       Py_ssize_t) noexcept nogil


cdef struct Cand:
    double value
    uint64_t hash
    int32_t ndis
    int32_t parent
    int32_t u
    int32_t v
    int32_t arc                  # the allowed arc's id, -1 for a disallowed arc


cdef struct SibPart:
    Py_ssize_t id
    double W
    int32_t a_in                 # the inner arc, -1 for an innermost part (h, h, s)
    int32_t a_out
    int32_t lo, hi               # B: the arc ids lo .. hi-1 (h's allowed arcs in between)


# -- small helpers -------------------------------------------------------------------------------

cdef inline uint64_t arc_key(Py_ssize_t index) noexcept nogil:
    """splitmix64 of an arc's index h * N + m: the arcs' keys for tree hashes."""
    cdef uint64_t z = <uint64_t>index * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline bint in_tree(const Graph* g, const State* st, Py_ssize_t a) noexcept nogil:
    return st.heads[g.am[a]] == g.ah[a]


cdef inline void sib_part(const Graph* g, Py_ssize_t h, Py_ssize_t i, Py_ssize_t j,
                          SibPart* p) noexcept nogil:
    """The sibling part of head h with inner arc h's i-th, outer arc its j-th (i == j: the
    innermost part (h, h, m_j)): id, weight, A and B (see the module doc)."""
    cdef Py_ssize_t o0 = g.out_start[h], d = g.out_start[h + 1] - o0, sp = g.split[h]
    p.id = g.sbase[h] + i * d + j
    p.W = g.wsib[p.id]
    p.a_out = <int32_t>(o0 + j)
    if i == j:
        p.a_in = -1
        if j >= sp:
            p.lo = <int32_t>(o0 + sp)
            p.hi = <int32_t>(o0 + j)
        else:
            p.lo = <int32_t>(o0 + j + 1)
            p.hi = <int32_t>(o0 + sp)
    else:
        p.a_in = <int32_t>(o0 + i)
        if j >= sp:
            p.lo = <int32_t>(o0 + i + 1)
            p.hi = <int32_t>(o0 + j)
        else:
            p.lo = <int32_t>(o0 + j + 1)
            p.hi = <int32_t>(o0 + i)


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


# -- the empty tree: lists, probabilities and DSs ------------------------------------------------

cdef void build_lists(Graph* g, double alpha) noexcept nogil:
    """ah, am, ids in aid, the out and in lists, split, sbase, S and q (aid marks the allowed
    arcs with 0, g.E counts them)."""
    cdef Py_ssize_t N = g.N, h, m, a, k, d
    cdef double top, total, x
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
        g.q[a] = 1.0
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
                g.q[a] = exp(alpha * g.arc[g.ah[a] * N + m] - top)
                total += g.q[a]
            for k in range(g.in_start[m], g.in_start[m + 1]):
                g.q[g.in_arcs[k]] /= total


cdef int load_weights(Graph* g, double* maxabs) noexcept nogil:
    """Copies the part weights that are read into wsib, gw and rootw; maxabs = the largest
    |part weight|. PART_NOT_FINITE if one is inf or NaN, else DECODE_OK."""
    cdef Py_ssize_t N = g.N, a, low, h, x, y, z, i, j, j0, j1, o0, d, sp, k
    cdef double W, big = 0.0
    cdef const double* row
    for a in range(g.E):
        W = fabs(g.arc[g.ah[a] * N + g.am[a]])
        if W > big:
            big = W
    if g.has_grand:
        for a in range(g.E):                       # top arc a = (x, y), low arc (y, z)
            x = g.ah[a]
            y = g.am[a]
            row = g.grand + (x * N + y) * N
            for low in range(g.out_start[y], g.out_start[y + 1]):
                z = g.am[low]
                W = row[z] if z != x else 0.0
                if not (-INFINITY < W < INFINITY):
                    return PART_NOT_FINITE
                if fabs(W) > big:
                    big = fabs(W)
                g.gw[g.gbase[a] + low - g.out_start[y]] = W
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


cdef void sib_b_dies_one(const Graph* g, State* st, Py_ssize_t h, Py_ssize_t i, Py_ssize_t j,
                         Py_ssize_t b, Py_ssize_t e, const uint8_t* mark) noexcept nogil:
    """BGI: b, in B of the sibling part (h; i, j), became impossible."""
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


cdef void component_graph(const Graph* g, const State* st, Scratch* sc) noexcept nogil:
    """The component graph of st (its possible arcs compacted in alist): the out-edges of top t,
    as arc ids x -> y with top(x) = t, are cadj[cstart[t] .. cstart[t+1]-1]."""
    cdef Py_ssize_t N = g.N, i, t
    cdef int32_t* cstart = sc.cstart
    cdef const int32_t* top = st.top
    for t in range(N + 1):
        cstart[t] = 0
    for i in range(st.nalive):                     # counting sort on top(x)
        cstart[top[g.ah[st.alist[i]]] + 1] += 1
    for t in range(N):
        cstart[t + 1] += cstart[t]
    for i in range(st.nalive):
        t = top[g.ah[st.alist[i]]]
        sc.cadj[cstart[t]] = st.alist[i]
        cstart[t] += 1
    for t in range(N, 0, -1):
        cstart[t] = cstart[t - 1]
    cstart[0] = 0


cdef Py_ssize_t reach(const Graph* g, const Scratch* sc, Py_ssize_t start,
                      int32_t* wit) noexcept nogil:
    """Marks in sc.seen the unmarked tops reached from start along the out-edges (start
    included); returns how many it marked. wit (if not NULL) gets the head of the arc through
    which each top but start was reached."""
    cdef Py_ssize_t sp = 1, t, y, k, a, count = 1
    sc.stack[0] = <int32_t>start
    sc.seen[start] = 1
    while sp > 0:
        sp -= 1
        t = sc.stack[sp]
        for k in range(sc.cstart[t], sc.cstart[t + 1]):
            a = sc.cadj[k]
            y = g.am[a]
            if not sc.seen[y]:
                sc.seen[y] = 1
                if wit != NULL:
                    wit[y] = g.ah[a]
                sc.stack[sp] = <int32_t>y
                sp += 1
                count += 1
    return count


cdef Py_ssize_t source_top(const Graph* g, const State* st, Scratch* sc,
                           Py_ssize_t ntops) noexcept nogil:
    """Under single_root before any root arc (the component graph built): a word top from which
    every other word top is reached (the last start of a search over all of them: it lies in
    the source component, which then reaches everything), or -1 if there is none. Leaves
    sc.seen cleared."""
    cdef Py_ssize_t N = g.N, t, last = -1
    for t in range(N):
        sc.seen[t] = 0
    for t in range(1, N):
        if st.heads[t] < 0 and not sc.seen[t]:
            last = t
            reach(g, sc, t, NULL)
    for t in range(N):
        sc.seen[t] = 0
    if last < 0 or reach(g, sc, last, NULL) != ntops - 1:
        last = -1
    for t in range(N):
        sc.seen[t] = 0
    return last


cdef Py_ssize_t mark_good(const Graph* g, const State* st, Scratch* sc, Py_ssize_t last,
                          bint first) noexcept nogil:
    """Marks in sc.good the tops that reach ``last`` (backwards along the in-lists) and have a
    possible root arc; returns how many (with ``first``: stops at the first, returning it,
    or -1). Leaves sc.seen marking the tops searched."""
    cdef Py_ssize_t sp = 1, y, k, a, x, count = 0
    cdef const int32_t* top = st.top
    cdef const uint8_t* dead = st.dead
    sc.seen[last] = 1
    sc.stack[0] = <int32_t>last
    while sp > 0:
        sp -= 1
        y = sc.stack[sp]
        a = g.aid[y]                               # the root arc (0, y)
        if a >= 0 and not dead[a]:
            if first:
                return y
            sc.good[y] = 1
            count += 1
        for k in range(g.in_start[y], g.in_start[y + 1]):
            a = g.in_arcs[k]
            x = g.ah[a]
            if x != 0 and not dead[a] and not sc.seen[top[x]]:
                sc.seen[top[x]] = 1
                sc.stack[sp] = top[x]
                sp += 1
    return -1 if first else count


cdef inline bint witness_below(const State* st, Py_ssize_t x, Py_ssize_t v) noexcept nogil:
    """Whether x is v or below v in the witness (up its heads from x: O(depth))."""
    while x > 0:
        if x == v:
            return True
        x = st.wit[x]
    return x == v


cdef void witness_build(const Graph* g, State* st, Scratch* sc) noexcept nogil:
    """A witness of st (its possible arcs compacted in alist), or wstate -1 if the partial tree
    cannot be completed with allowed arcs: its arcs, plus a search tree of the component graph
    from the root's component (under single_root before any root arc, from a word top with a
    possible root arc that reaches all others, through that root arc)."""
    cdef Py_ssize_t N = g.N, t, s = 0, ntops = 0
    for t in range(N):
        st.wit[t] = st.heads[t]
        ntops += st.heads[t] < 0
    component_graph(g, st, sc)
    if g.sr and not st.rootchild:
        t = source_top(g, st, sc, ntops)
        s = -1 if t < 0 else mark_good(g, st, sc, t, True)
        if s < 0:
            st.wstate = -1
            return
        st.wit[s] = 0
        st.wroot = <int32_t>s
        ntops -= 1                                 # (0 is reached through the root arc)
    for t in range(N):
        sc.seen[t] = 0
    st.wstate = 1 if reach(g, sc, s, st.wit) == ntops else -1


cdef inline bint witness_takes(const Graph* g, const State* st, Py_ssize_t u,
                               Py_ssize_t v) noexcept nogil:
    """Whether the witness with v's head changed to u is again one: (u, v) closes no cycle
    (v is not u or an ancestor of u) and, under single_root, it neither adds a root arc nor
    takes away the witness's."""
    if g.sr and (u == 0 or st.wit[v] == 0):
        return False
    return not witness_below(st, u, v)


cdef bint witness_reroots(const Graph* g, const State* st, Py_ssize_t v) noexcept nogil:
    """Under single_root before any root arc: whether the root arc (0, v) leaves a tree, by
    the witness (its root word s, v in s's subtree): the witness with v moved to the root and
    s moved below a word x of v's subtree through a possible arc (x, s) is one."""
    cdef Py_ssize_t s = st.wroot, k, a, x
    for k in range(g.in_start[s], g.in_start[s + 1]):
        a = g.in_arcs[k]
        x = g.ah[a]
        if not st.dead[a] and witness_below(st, x, v):
            return True
    return False


cdef void witness_add(const Graph* g, State* st, Py_ssize_t u, Py_ssize_t v) noexcept nogil:
    """Keeps st's witness after the arc (u, v) is added: unchanged if it has the arc, moved
    to it if :func:`witness_takes`, else rebuilt when next needed."""
    if st.wstate != 1 or st.wit[v] == u:
        return
    if witness_takes(g, st, u, v):
        st.wit[v] = <int32_t>u
    else:
        st.wstate = 0


cdef inline Py_ssize_t common_dominator(const Scratch* sc, Py_ssize_t x,
                                        Py_ssize_t y) noexcept nogil:
    """The nearest common dominator of tops x and y given the idom found so far."""
    while x != y:
        while sc.po[x] < sc.po[y]:
            x = sc.idom[x]
        while sc.po[y] < sc.po[x]:
            y = sc.idom[y]
    return x


cdef bint find_safe(const Graph* g, const State* st, Scratch* sc) noexcept nogil:
    """Whether the partial tree st (its possible arcs compacted in alist) can be completed with
    allowed arcs; if so fills, for :func:`arc_safe`, the dominator tree of its component graph
    (po, idom; the root is node 0) and, under single_root before any root arc, good: the tops
    with a possible root arc that reach all other components (the virtual root's edges)."""
    cdef Py_ssize_t N = g.N, i, a, t, x, y, k, sp, count, ntops = 0, last, best
    cdef bint pre = g.sr and not st.rootchild, changed = True
    cdef const int32_t* top = st.top
    cdef const uint8_t* dead = st.dead
    cdef const int32_t* cstart = sc.cstart
    for t in range(N):
        sc.good[t] = 0
        sc.po[t] = -1
        sc.idom[t] = -1
        ntops += st.heads[t] < 0
    component_graph(g, st, sc)
    if pre:
        # good = the tops that reach the source top and have a possible root arc
        last = source_top(g, st, sc, ntops)
        if last < 0:
            return False
        count = mark_good(g, st, sc, last, False)
        if count == 0:
            return False
        if count == ntops - 1:                     # every top may take the root arc
            return True
    for t in range(N):
        sc.seen[t] = 0
    # postorder of a depth-first search from the root (in pre, its edges go to the good tops)
    sc.stack[0] = 0
    sc.seen[0] = 1
    sc.cursor[0] = cstart[0]
    sp = 1
    count = 0
    while sp > 0:
        t = sc.stack[sp - 1]
        if sc.cursor[t] < cstart[t + 1]:
            y = g.am[sc.cadj[sc.cursor[t]]]
            sc.cursor[t] += 1
            if not sc.seen[y] and not (pre and t == 0 and not sc.good[y]):
                sc.seen[y] = 1
                sc.cursor[y] = cstart[y]
                sc.stack[sp] = <int32_t>y
                sp += 1
        else:
            sc.po[t] = <int32_t>count
            sc.order[count] = <int32_t>t
            count += 1
            sp -= 1
    if count != ntops:
        return False
    # dominators, Cooper, Harvey and Kennedy: in reverse postorder until nothing changes
    sc.idom[0] = 0
    while changed:
        changed = False
        for i in range(count - 2, -1, -1):
            t = sc.order[i]
            best = -1
            for k in range(g.in_start[t], g.in_start[t + 1]):
                a = g.in_arcs[k]
                x = g.ah[a]
                if dead[a] or (pre and x == 0 and not sc.good[t]) or sc.idom[top[x]] < 0:
                    continue
                best = top[x] if best < 0 else common_dominator(sc, top[x], best)
            if best != sc.idom[t]:
                sc.idom[t] = <int32_t>best
                changed = True
    return True


cdef bint arc_safe(const Graph* g, State* st, Scratch* sc, Py_ssize_t u,
                   Py_ssize_t v) noexcept nogil:
    """Whether st + (u, v) can be completed with allowed arcs, or st cannot be. First by st's
    witness (built once, then kept as arcs are added): yes if it has (u, v) or
    :func:`witness_takes` it. Otherwise v must not dominate top(u) (under single_root before
    any root arc, a root arc needs a good v): find_safe runs once per tree and iteration
    (sc.known), when an arc out of neither the root's component nor one it has an arc to
    needs it."""
    cdef Py_ssize_t x = st.top[u], i, a
    cdef bint pre = g.sr and not st.rootchild
    if st.wstate == 0:
        witness_build(g, st, sc)
    if st.wstate < 0 or st.wit[v] == u or witness_takes(g, st, u, v):
        return True
    if pre and u == 0 and witness_reroots(g, st, v):
        return True
    if not pre:
        if x == 0:
            return True
        if sc.known == 0:
            memset(sc.fromroot, 0, g.N)
            for i in range(st.nalive):
                a = st.alist[i]
                if st.top[g.ah[a]] == 0:
                    sc.fromroot[g.am[a]] = 1
            sc.known = 3
        if sc.fromroot[x]:
            return True
    if sc.known == 0 or sc.known == 3:             # (po[0] < 0: every top is good)
        sc.known = 1 if find_safe(g, st, sc) and sc.po[0] >= 0 else 2
    if sc.known == 2:
        return True
    if pre and u == 0:
        return sc.good[v]
    while sc.po[x] < sc.po[v]:
        x = sc.idom[x]
    return x != v


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
    cdef SafeFn safe = <SafeFn>g.safe              # (out of line: see Graph.safe)
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
        if value < limit and (safe == NULL or safe(g, st, sc, u, v)):
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
    g.safe = NULL
    if g.pruned:
        g.safe = <void*>arc_safe
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
