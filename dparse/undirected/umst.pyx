# cython: language_level=3
"""Maximum spanning trees of sparse undirected graphs: Boruvka, Karger-Klein-Tarjan, orientation.

Levi, Reichart and Rappoport (2016), "Edge-Linear First-Order Dependency Parsing with Undirected
Minimum Spanning Tree Inference", sections 2-4. Everything here is the *maximum* spanning forest
(higher weight is better); the paper's minimum versions negate the weights.

- Boruvka step (Boruvka 1926; Algorithm 1): every vertex picks its best edge; the picked edges
  belong to the forest (cut property); the graph is contracted along them, self edges dropped,
  and of repeated edges between two super-vertices only the best kept. O(m + nv).
- Karger, Klein and Tarjan (1995; Algorithm 2): two Boruvka steps, a subgraph H sampled with
  probability 1/2 per edge, F = MSF(H) recursively, the F-heavy edges (those worse than every
  edge of their F-path; the cycle property rules them out) removed by a verification pass, and
  the MSF of what remains recursively. Expected O(m).
- MST verification: the F-path minimum of every edge by Tarjan's offline path compression (the
  LCA and the path minima in one depth-first pass over F), O((m + nv) log nv) worst case, near
  linear in practice (Dixon, Rauch and Tarjan 1992 and King 1995 give O(m); not implemented).
- Orientation (scheme conversion, section 4): breadth-first from the root vertex 0, O(n).
- Local enhancement procedure (section 4): the move u -> v -> w  =>  u -> w -> v that most
  improves a directed first-order score, repeated a fixed number of times, O(n) per move.

Ties: edges are totally ordered by (weight, then lower edge index first), so the maximum
spanning forest is unique and every algorithm here returns the same edge set.
"""

from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

cimport numpy as cnp

import numpy as np

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    head_t,
    raise_for_status,
    score_t,
    words_of,
)

cnp.import_array()

cdef enum:
    METHOD_BORUVKA = 0
    METHOD_KKT = 1

METHODS = {"boruvka": METHOD_BORUVKA, "kkt": METHOD_KKT}


cdef struct EdgesC:
    int nv             # vertices 0..nv-1
    int m              # edges 0..m-1
    int* u             # [m] endpoints
    int* v             # [m]
    score_t* w         # [m] weights
    int* id            # [m] index of the edge in the original graph (also the tie-breaker)


cdef inline bint better(score_t wa, int ia, score_t wb, int ib) noexcept nogil:
    """Edge a comes before edge b in the total order: higher weight, then lower original index."""
    return wa > wb or (wa == wb and ia < ib)


cdef int edges_alloc(EdgesC* g, int nv, int capacity) noexcept nogil:
    """An empty edge list over nv vertices with room for ``capacity`` edges."""
    if capacity < 1:
        capacity = 1
    g.nv = nv
    g.m = 0
    g.w = <score_t*>malloc(capacity * (sizeof(score_t) + 3 * sizeof(int)))  # one block
    if g.w == NULL:
        g.u = g.v = g.id = NULL
        return DECODE_NO_MEMORY
    g.u = <int*>(g.w + capacity)
    g.v = g.u + capacity
    g.id = g.v + capacity
    return DECODE_OK


cdef void edges_free(EdgesC* g) noexcept nogil:
    free(g.w)  # the block holds u, v and id too
    g.w = NULL
    g.u = g.v = g.id = NULL


cdef inline void edges_push(EdgesC* g, int u, int v, score_t w, int ident) noexcept nogil:
    g.u[g.m] = u
    g.v[g.m] = v
    g.w[g.m] = w
    g.id[g.m] = ident
    g.m += 1


cdef inline int other_end(const EdgesC* g, int e, int x) noexcept nogil:
    return g.v[e] if g.u[e] == x else g.u[e]


cdef int boruvka_step(const EdgesC* g, EdgesC* out, int* forest, int* nforest) noexcept nogil:
    """One Boruvka step (Algorithm 1): appends the picked edges' original ids to ``forest`` and
    writes the contracted graph (no self edges, the best of each repeated edge) into ``out``."""
    cdef int nv = g.nv, m = g.m, e, x, y, k, c, cu, cv, nc = 0, top, status
    cdef int* block = <int*>malloc((7 * nv + 1 + m) * sizeof(int))
    if block == NULL:
        return DECODE_NO_MEMORY
    cdef int* best = block              # [nv] best edge of each vertex, -1 if isolated
    cdef int* comp = best + nv          # [nv] super-vertex of each vertex
    cdef int* stack = comp + nv         # [nv]
    cdef int* start = stack + nv        # [nv+1] CSR of surviving edges by their lower end
    cdef int* cursor = start + nv + 1   # [nv]
    cdef int* slot = cursor + nv        # [nv] output position of the edge (cu, cv) ...
    cdef int* stamp = slot + nv         # [nv] ... valid while stamp[cv] == cu
    cdef int* order = stamp + nv        # [m]
    # lines 1-11: each vertex's best incident edge
    for x in range(nv):
        best[x] = -1
    for e in range(m):
        x = g.u[e]
        y = g.v[e]
        if best[x] < 0 or better(g.w[e], g.id[e], g.w[best[x]], g.id[best[x]]):
            best[x] = e
        if best[y] < 0 or better(g.w[e], g.id[e], g.w[best[y]], g.id[best[y]]):
            best[y] = e
    # the picked edges; one picked by both ends is taken once
    for x in range(nv):
        e = best[x]
        if e < 0:
            continue
        y = other_end(g, e, x)
        if best[y] == e and y < x:
            continue
        forest[nforest[0]] = g.id[e]
        nforest[0] += 1
    # line 12: super-vertices. Following picked edges from any vertex ends in a 2-cycle (an
    # edge picked by both ends; the order is strict, so no longer cycles) or at an isolated
    # vertex; the lower end of the 2-cycle names the component.
    for x in range(nv):
        comp[x] = -1
    for x in range(nv):
        e = best[x]
        if e < 0:
            comp[x] = nc
            nc += 1
        else:
            y = other_end(g, e, x)
            if best[y] == e and x < y:
                comp[x] = nc
                nc += 1
    for x in range(nv):
        top = 0
        y = x
        while comp[y] < 0:
            stack[top] = y
            top += 1
            y = other_end(g, best[y], y)
        c = comp[y]
        while top > 0:
            top -= 1
            comp[stack[top]] = c
    # line 13: contract; bucket the surviving edges by lower super-vertex, keep the best per pair
    for c in range(nc + 1):
        start[c] = 0
    for e in range(m):
        cu = comp[g.u[e]]
        cv = comp[g.v[e]]
        if cu != cv:
            start[(cu if cu < cv else cv) + 1] += 1
    for c in range(nc):
        start[c + 1] += start[c]
        cursor[c] = start[c]
        stamp[c] = -1
    for e in range(m):
        cu = comp[g.u[e]]
        cv = comp[g.v[e]]
        if cu != cv:
            c = cu if cu < cv else cv
            order[cursor[c]] = e
            cursor[c] += 1
    status = edges_alloc(out, nc, start[nc])
    if status != DECODE_OK:
        free(block)
        return status
    for cu in range(nc):
        for k in range(start[cu], start[cu + 1]):
            e = order[k]
            cv = comp[g.u[e]] + comp[g.v[e]] - cu
            if stamp[cv] != cu:
                stamp[cv] = cu
                slot[cv] = out.m
                edges_push(out, cu, cv, g.w[e], g.id[e])
            elif better(g.w[e], g.id[e], out.w[slot[cv]], out.id[slot[cv]]):
                out.w[slot[cv]] = g.w[e]
                out.id[slot[cv]] = g.id[e]
    free(block)
    return DECODE_OK


cdef int boruvka_msf(const EdgesC* g, int* forest, int* nforest) noexcept nogil:
    """Boruvka's algorithm: Boruvka steps until no edge is left. O(m log nv)."""
    cdef EdgesC cur, nxt
    cdef int status = boruvka_step(g, &cur, forest, nforest)
    while status == DECODE_OK and cur.m > 0:
        status = boruvka_step(&cur, &nxt, forest, nforest)
        edges_free(&cur)
        cur = nxt
    if status == DECODE_OK:
        edges_free(&cur)
    return status


cdef inline int worse_of(int a, int b, const score_t* fw, const int* fid) noexcept nogil:
    """The later of forest edges a and b in the total order (-1 stands for none)."""
    if a < 0:
        return b
    if b < 0:
        return a
    return b if better(fw[a], fid[a], fw[b], fid[b]) else a


cdef int find_min(int* dsu, int* val, int* path, int x, const score_t* fw,
                  const int* fid) noexcept nogil:
    """Root of x's set, compressing the path; afterwards val[x] is the worst forest edge on the
    tree path from x up to that root (x != root)."""
    cdef int top = 0, r = x, i, y
    while dsu[r] != r:
        path[top] = r
        top += 1
        r = dsu[r]
    # path[top-1] hangs directly under r; compress from the top down
    for i in range(top - 2, -1, -1):
        y = path[i]
        val[y] = worse_of(val[y], val[dsu[y]], fw, fid)
        dsu[y] = r
    return r


cdef int f_light(int nv, int nf, const int* fu, const int* fv, const score_t* fw,
                 const int* fid, const EdgesC* q, char* keep) noexcept nogil:
    """MST verification: keep[k] = 0 if edge k of ``q`` is F-heavy (worse than every edge on its
    path in the forest F = edges (fu, fv, fw, fid)[0..nf-1] over vertices 0..nv-1), else 1.

    One depth-first pass over F with a union-find whose sets are linked child into parent when
    the child finishes (Tarjan's offline LCA): when the second endpoint of a query finishes, the
    root of the other endpoint's set is their LCA; the query is answered when the LCA finishes,
    by path-compressing finds that carry the worst edge up to the LCA.
    """
    cdef int m = q.m, x, y, e, k, a, slot, r, top, tree_id, pm
    cdef int* block = <int*>malloc((15 * nv + 4 + 4 * nf + 4 * m) * sizeof(int))
    if block == NULL:
        return DECODE_NO_MEMORY
    cdef int* adj_ptr = block               # [nv+1] CSR of F
    cdef int* adj = adj_ptr + nv + 1         # [2 nf] neighbour
    cdef int* adj_e = adj + 2 * nf           # [2 nf] forest edge
    cdef int* q_ptr = adj_e + 2 * nf         # [nv+1] CSR of the queries at each vertex
    cdef int* q_at = q_ptr + nv + 1          # [2 m]
    cdef int* parent = q_at + 2 * m          # [nv]
    cdef int* pedge = parent + nv            # [nv] forest edge to the parent
    cdef int* tree = pedge + nv              # [nv] which tree of F
    cdef int* it = tree + nv                 # [nv] next adjacency slot to visit
    cdef int* state = it + nv                # [nv] 0 unvisited, 1 on the stack, 2 finished
    cdef int* dsu = state + nv               # [nv]
    cdef int* val = dsu + nv                 # [nv] worst edge up to dsu[x]
    cdef int* stack = val + nv               # [nv]
    cdef int* path = stack + nv              # [nv]
    cdef int* lca_head = path + nv           # [nv] queries waiting at their LCA (linked lists)
    cdef int* lca_next = lca_head + nv       # [m]
    cdef int* cur = lca_next + m             # [nv+1] scratch cursor for the CSR fills
    for x in range(nv + 1):
        adj_ptr[x] = 0
        q_ptr[x] = 0
    for e in range(nf):
        adj_ptr[fu[e] + 1] += 1
        adj_ptr[fv[e] + 1] += 1
    for k in range(m):
        keep[k] = 1
        q_ptr[q.u[k] + 1] += 1
        q_ptr[q.v[k] + 1] += 1
    for x in range(nv):
        adj_ptr[x + 1] += adj_ptr[x]
        q_ptr[x + 1] += q_ptr[x]
    for x in range(nv):
        cur[x] = adj_ptr[x]
    for e in range(nf):
        adj[cur[fu[e]]] = fv[e]
        adj_e[cur[fu[e]]] = e
        cur[fu[e]] += 1
        adj[cur[fv[e]]] = fu[e]
        adj_e[cur[fv[e]]] = e
        cur[fv[e]] += 1
    for x in range(nv):
        cur[x] = q_ptr[x]
    for k in range(m):
        q_at[cur[q.u[k]]] = k
        cur[q.u[k]] += 1
        q_at[cur[q.v[k]]] = k
        cur[q.v[k]] += 1
    for x in range(nv):
        state[x] = 0
        dsu[x] = x
        val[x] = -1
        lca_head[x] = -1
        it[x] = adj_ptr[x]
    for r in range(nv):
        if state[r]:
            continue
        tree_id = r
        parent[r] = -1
        pedge[r] = -1
        tree[r] = tree_id
        state[r] = 1
        stack[0] = r
        top = 1
        while top > 0:
            x = stack[top - 1]
            if it[x] < adj_ptr[x + 1]:
                y = adj[it[x]]
                e = adj_e[it[x]]
                it[x] += 1
                if e == pedge[x]:
                    continue
                parent[y] = x
                pedge[y] = e
                tree[y] = tree_id
                state[y] = 1
                stack[top] = y
                top += 1
                continue
            top -= 1
            # x finishes: its descendants are linked into it; find the LCAs of its queries
            # whose other end finished earlier
            for slot in range(q_ptr[x], q_ptr[x + 1]):
                k = q_at[slot]
                y = q.u[k] + q.v[k] - x
                if state[y] == 2 and tree[y] == tree_id:
                    a = find_min(dsu, val, path, y, fw, fid)
                    lca_next[k] = lca_head[a]
                    lca_head[a] = k
            # answer the queries whose LCA is x: the worst edge on both halves of the path
            k = lca_head[x]
            while k >= 0:
                pm = -1
                if q.u[k] != x:
                    find_min(dsu, val, path, q.u[k], fw, fid)
                    pm = val[q.u[k]]
                if q.v[k] != x:
                    find_min(dsu, val, path, q.v[k], fw, fid)
                    pm = worse_of(pm, val[q.v[k]], fw, fid)
                if pm >= 0 and better(fw[pm], fid[pm], q.w[k], q.id[k]):
                    keep[k] = 0
                k = lca_next[k]
            state[x] = 2
            if parent[x] >= 0:
                dsu[x] = parent[x]
                val[x] = pedge[x]
    free(block)
    return DECODE_OK


cdef inline uint64_t next_random(uint64_t* state) noexcept nogil:
    """xorshift64*: the next pseudo-random 64-bit word."""
    cdef uint64_t x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * <uint64_t>0x2545F4914F6CDD1DULL


cdef int kkt_msf(const EdgesC* g, int* forest, int* nforest, uint64_t* rng,
                 int* pos) noexcept nogil:
    """Karger-Klein-Tarjan (Algorithm 2): appends the original ids of MSF(g) to ``forest``.

    pos: scratch [original m], maps an original edge id to its index in the sampled graph.
    """
    cdef EdgesC g1, g2, h, g3
    cdef int status, e, k, nf = 0
    cdef int* fbuf
    cdef int* fu
    cdef int* fv
    cdef int* fid
    cdef score_t* fw
    cdef char* keep
    cdef char* block
    cdef uint64_t bits = 0
    if g.m == 0:
        return DECODE_OK
    # line 4: two Boruvka steps
    status = boruvka_step(g, &g1, forest, nforest)
    if status != DECODE_OK:
        return status
    if g1.m == 0:
        edges_free(&g1)
        return DECODE_OK
    status = boruvka_step(&g1, &g2, forest, nforest)
    edges_free(&g1)
    if status != DECODE_OK:
        return status
    if g2.m == 0:
        edges_free(&g2)
        return DECODE_OK
    # lines 5-10: H keeps each edge with probability 1/2
    status = edges_alloc(&h, g2.nv, g2.m)
    if status != DECODE_OK:
        edges_free(&g2)
        return status
    for e in range(g2.m):
        if e % 64 == 0:
            bits = next_random(rng)
        if bits & 1:
            edges_push(&h, g2.u[e], g2.v[e], g2.w[e], g2.id[e])
        bits >>= 1
    # line 11: F = MSF(H), as edges of g2's vertices
    block = <char*>malloc(g2.nv * (4 * sizeof(int) + sizeof(score_t)) + g2.m)
    if block == NULL:
        edges_free(&g2)
        edges_free(&h)
        return DECODE_NO_MEMORY
    fw = <score_t*>block
    fbuf = <int*>(fw + g2.nv)
    fu = fbuf + g2.nv
    fv = fu + g2.nv
    fid = fv + g2.nv
    keep = <char*>(fid + g2.nv)
    status = kkt_msf(&h, fbuf, &nf, rng, pos)
    if status == DECODE_OK:
        for k in range(h.m):
            pos[h.id[k]] = k
        for k in range(nf):
            e = pos[fbuf[k]]
            fu[k] = h.u[e]
            fv[k] = h.v[e]
            fw[k] = h.w[e]
            fid[k] = h.id[e]
        # line 12: drop the F-heavy edges
        status = f_light(g2.nv, nf, fu, fv, fw, fid, &g2, keep)
    edges_free(&h)
    if status == DECODE_OK:
        status = edges_alloc(&g3, g2.nv, g2.m)
    if status == DECODE_OK:
        for e in range(g2.m):
            if keep[e]:
                edges_push(&g3, g2.u[e], g2.v[e], g2.w[e], g2.id[e])
    free(block)
    edges_free(&g2)
    if status != DECODE_OK:
        return status
    # line 13: the MSF of the F-light edges completes the forest (line 14)
    status = kkt_msf(&g3, forest, nforest, rng, pos)
    edges_free(&g3)
    return status


cdef int spanning_forest(EdgesC* g, int method, uint64_t seed, int* forest,
                         int* nforest) noexcept nogil:
    """MSF of g by ``method``; forest receives original edge ids (at most nv - 1)."""
    cdef uint64_t rng = seed * <uint64_t>0x9E3779B97F4A7C15ULL + <uint64_t>0x632BE59BD9B4E019ULL
    cdef int status
    cdef int* pos
    nforest[0] = 0
    if method == METHOD_BORUVKA:
        return boruvka_msf(g, forest, nforest)
    pos = <int*>malloc((g.m + 1) * sizeof(int))
    if pos == NULL:
        return DECODE_NO_MEMORY
    status = kkt_msf(g, forest, nforest, &rng, pos)
    free(pos)
    return status


cdef int orient(int N, int nf, const int* fu, const int* fv, head_t* heads) noexcept nogil:
    """Scheme conversion (section 4, Figure 2): directs the forest (fu, fv)[0..nf-1] over nodes
    0..N-1 away from node 0 by breadth-first search. A node that the forest does not connect to
    0 is attached to 0 itself, and its component is directed away from it (nodes in order)."""
    cdef int x, y, e, a, head_q, tail_q
    cdef int* block = <int*>malloc((4 * N + 2 + 2 * nf) * sizeof(int))
    if block == NULL:
        return DECODE_NO_MEMORY
    cdef int* ptr = block           # [N+1] CSR of the forest
    cdef int* nbr = ptr + N + 1     # [2 nf]
    cdef int* cur = nbr + 2 * nf    # [N+1]
    cdef int* queue = cur + N + 1   # [N]
    cdef char* seen = <char*>(queue + N)
    for x in range(N + 1):
        ptr[x] = 0
    for e in range(nf):
        ptr[fu[e] + 1] += 1
        ptr[fv[e] + 1] += 1
    for x in range(N):
        ptr[x + 1] += ptr[x]
    for x in range(N):
        cur[x] = ptr[x]
        seen[x] = 0
    for e in range(nf):
        nbr[cur[fu[e]]] = fv[e]
        cur[fu[e]] += 1
        nbr[cur[fv[e]]] = fu[e]
        cur[fv[e]] += 1
    heads[0] = -1
    for x in range(N):
        if seen[x]:
            continue
        if x > 0:
            heads[x] = 0
        seen[x] = 1
        queue[0] = x
        head_q = 0
        tail_q = 1
        while head_q < tail_q:
            y = queue[head_q]
            head_q += 1
            for a in range(ptr[y], ptr[y + 1]):
                if not seen[nbr[a]]:
                    seen[nbr[a]] = 1
                    heads[nbr[a]] = y
                    queue[tail_q] = nbr[a]
                    tail_q += 1
    free(block)
    return DECODE_OK


cdef int tree_of_edges(int N, EdgesC* g, int method, uint64_t seed,
                       head_t* heads) noexcept nogil:
    """MSF of g (over nodes 0..N-1), oriented from 0 into ``heads``."""
    cdef int status, nf = 0, k
    cdef int* block = <int*>malloc(3 * N * sizeof(int))
    if block == NULL:
        return DECODE_NO_MEMORY
    cdef int* forest = block
    cdef int* fu = block + N
    cdef int* fv = fu + N
    status = spanning_forest(g, method, seed, forest, &nf)
    if status == DECODE_OK:
        for k in range(nf):
            fu[k] = g.u[forest[k]]
            fv[k] = g.v[forest[k]]
        status = orient(N, nf, fu, fv, heads)
    free(block)
    return status


cdef int umst_matrix(const score_t* W, Py_ssize_t n, int method, uint64_t seed,
                     head_t* heads) noexcept nogil:
    """The maximum spanning tree of the undirected graph whose edge {i, j} (i < j) weighs
    W[i, j] (-inf or NaN: no edge), oriented from node 0."""
    cdef int N = <int>(n + 1), i, j, status
    cdef score_t a
    cdef EdgesC g
    status = edges_alloc(&g, N, N * (N - 1) // 2)
    if status != DECODE_OK:
        return status
    for i in range(N):
        for j in range(i + 1, N):
            a = W[i * N + j]
            if a == INFINITY:
                edges_free(&g)
                return DECODE_POSITIVE_INF
            if a > -INFINITY:  # false for -inf and NaN
                edges_push(&g, i, j, a, g.m)
    status = tree_of_edges(N, &g, method, seed, heads)
    edges_free(&g)
    return status


def _method(str method):
    try:
        return METHODS[method]
    except KeyError:
        raise ValueError(f"unknown MST method {method!r}; choose one of {sorted(METHODS)}")


def undirected_mst(const score_t[:, ::1] w not None, str method="kkt", uint64_t seed=0):
    """Maximum spanning tree of an undirected graph over nodes 0..n, oriented from node 0.

    w: float64 [n+1, n+1], C-contiguous, n >= 1; only the upper triangle is read: w[i, j],
    i < j, weighs the edge {i, j}; -inf or NaN: no edge; +inf is a ValueError.
    method: "kkt" (Karger-Klein-Tarjan, expected O(m)) or "boruvka" (O(m log n)); both return
    the same tree. seed: KKT's sampling seed (the tree does not depend on it).
    Returns heads, int32 [n+1], heads[0] == -1. Nodes the edges do not connect to 0 are
    attached to 0 through their lowest-numbered node.
    """
    cdef int m_id = _method(method)
    cdef Py_ssize_t n = words_of(w)
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = umst_matrix(&w[0, 0], n, m_id, seed, <head_t*>cnp.PyArray_DATA(heads))
    raise_for_status(status)
    return heads


cdef int _edges_from(int nv, const int[::1] u, const int[::1] v, const score_t[::1] w,
                     EdgesC* g) except -1:
    """Fills g from edge arrays after checking them (ValueError on a bad edge list)."""
    cdef int k, m = u.shape[0]
    if v.shape[0] != m or w.shape[0] != m:
        raise ValueError("u, v and w must have the same length")
    if nv < 1:
        raise ValueError("the graph needs at least one vertex")
    for k in range(m):
        if not (0 <= u[k] < nv and 0 <= v[k] < nv) or u[k] == v[k]:
            raise ValueError(f"edge {k} ({u[k]}, {v[k]}) is a self edge or out of 0..{nv - 1}")
        if not (-INFINITY < w[k] < INFINITY):
            raise ValueError(f"edge {k} has a non-finite weight")
    raise_for_status(edges_alloc(g, nv, m))
    for k in range(m):
        edges_push(g, u[k], v[k], w[k], k)
    return 0


def spanning_forest_edges(int nv, const int[::1] u not None, const int[::1] v not None,
                          const score_t[::1] w not None, str method="kkt", uint64_t seed=0):
    """Maximum spanning forest of the multigraph with edges (u[k], v[k], w[k]) over 0..nv-1.

    u, v: int32 [m]; w: float64 [m], finite. Ties are broken by lower edge index. Returns the
    indices k of the forest's edges, int32, sorted.
    """
    cdef int m_id = _method(method), nf = 0, status
    cdef EdgesC g
    _edges_from(nv, u, v, w, &g)
    out = np.empty(nv, dtype=np.int32)
    cdef int[::1] out_v = out
    with nogil:
        status = spanning_forest(&g, m_id, seed, &out_v[0], &nf)
    edges_free(&g)
    raise_for_status(status)
    return np.sort(out[:nf])


def tree_from_edges(int n_nodes, const int[::1] u not None, const int[::1] v not None,
                    const score_t[::1] w not None, str method="kkt", uint64_t seed=0):
    """Like :func:`undirected_mst` for a sparse graph given as edges (u[k], v[k], w[k]) over
    nodes 0..n_nodes-1 (int32, int32, float64 [m]). Returns heads, int32 [n_nodes]."""
    cdef int m_id = _method(method), status
    cdef EdgesC g
    _edges_from(n_nodes, u, v, w, &g)
    heads = np.empty(n_nodes, dtype=np.int32)
    cdef head_t[::1] h = heads
    with nogil:
        status = tree_of_edges(n_nodes, &g, m_id, seed, &h[0])
    edges_free(&g)
    raise_for_status(status)
    return heads


def orient_edges(int n_nodes, const int[::1] u not None, const int[::1] v not None):
    """Scheme conversion: heads (int32 [n_nodes]) of the undirected forest (u[k], v[k])
    directed away from node 0 (see :func:`undirected_mst` for nodes it does not reach)."""
    if v.shape[0] != u.shape[0] or u.shape[0] >= n_nodes:
        raise ValueError("a forest over n_nodes nodes has fewer than n_nodes edges")
    heads = np.empty(n_nodes, dtype=np.int32)
    cdef head_t[::1] h = heads
    cdef int status
    with nogil:
        status = orient(n_nodes, u.shape[0], &u[0] if u.shape[0] else NULL,
                        &v[0] if v.shape[0] else NULL, &h[0])
    raise_for_status(status)
    return heads


cdef inline score_t gain_of(const score_t* arc, int N, int u, int v, int w) noexcept nogil:
    """Directed score change of u -> v -> w  =>  u -> w -> v; -inf if a new arc is disallowed."""
    cdef score_t a = arc[u * N + w], b = arc[w * N + v]
    if not (a > -INFINITY and b > -INFINITY):
        return -INFINITY
    return (a + b) - (arc[u * N + v] + arc[v * N + w])


cdef int enhance(const score_t* arc, int N, int steps, head_t* heads) noexcept nogil:
    """Local enhancement: ``steps`` times, apply the best positive-gain move; returns the
    number of moves made."""
    cdef int _step, w, v, best_w, done = 0
    cdef score_t g, best_g
    for _step in range(steps):
        best_g = 0.0
        best_w = -1
        for w in range(1, N):
            v = heads[w]
            if v <= 0:
                continue
            g = gain_of(arc, N, heads[v], v, w)
            if g > best_g:
                best_g = g
                best_w = w
        if best_w < 0:
            break
        v = heads[best_w]
        heads[best_w] = heads[v]
        heads[v] = best_w
        done += 1
    return done


def local_enhancement(const head_t[::1] heads not None, const score_t[:, ::1] arc not None,
                      int steps=5):
    """The local enhancement procedure of Levi et al. (2016, section 4).

    For a word v with head u and a child w, the move replaces u -> v and v -> w by u -> w and
    w -> v (w takes v's place, v hangs under w); its gain under the directed first-order
    scores ``arc`` (float64 [n+1, n+1], arc[h, m]) is arc[u, w] + arc[w, v] - arc[u, v] -
    arc[v, w]. Each of ``steps`` rounds applies the move with the largest positive gain (none:
    stop). Keeps a valid tree and the number of root children. O(n) per round.
    Returns (new heads int32 [n+1], number of moves made).
    """
    cdef Py_ssize_t n = words_of(arc)
    if heads.shape[0] != n + 1:
        raise ValueError(f"heads has {heads.shape[0]} entries, arc is for {n + 1} nodes")
    if steps < 0:
        raise ValueError("steps must be >= 0")
    out = np.array(heads, dtype=np.int32)
    cdef head_t[::1] o = out
    cdef int done
    with nogil:
        done = enhance(&arc[0, 0], <int>(n + 1), steps, &o[0])
    return out, done
