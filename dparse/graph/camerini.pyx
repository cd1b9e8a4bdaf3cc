# cython: language_level=3
"""The next-best spanning arborescence from the contraction history (Camerini, Fratta and
Maffioli 1980, "The k best spanning arborescences of a network"; as Zmigrod, Vieira and
Cotterell 2021 restate it), in O(n^2) for a dense graph.

Given a score matrix and a best arborescence A of it (any one, when several tie), it returns
the best arborescence other than A and one arc of A that this tree lacks: the pair that k-best
partitioning (dparse/graph/kbest.pyx) splits a subproblem on.

How. Chu-Liu-Edmonds in Tarjan's dense form, as dparse/graph/cle.pyx runs it (a node picks its
best incoming arc among the current nodes; a cycle of picks is contracted into a node whose
incoming scores are reduced by the score of each member's cycle arc), with two changes:

- Scores are pairs (score, number of A's arcs), compared lexicographically, and reduced pair by
  pair: a tie always goes to A, so the contraction's tree is A itself (A is the one best tree
  of the pair scores), whichever best tree A is.
- When a node v (a word or a contracted cycle) picks an arc b(v) that is in A (so v's members
  form the subtree of A entered at b(v)'s word x), every other arc into v at that moment is a
  swap candidate: entering v there instead, and expanding v from that word, gives a tree exactly
  when the arc's head is not a descendant of x in A, and its score is A's plus the difference
  of the two arcs' reduced scores at that moment. Arcs from one current node into v are kept
  as the best and the second best (merging a cycle keeps the two best of each pair of nodes),
  so the second-best arc from b(v)'s own source is a candidate too.

The best arborescence other than A is the best of these candidates (Camerini et al.'s theorem:
the second-best tree differs from the best by one swap at some stage of the contraction), found
in the contraction's O(n^2) time; it is read off the contraction forest with the winning arc
in place of b(v). Ties among candidates go to the first found (nodes in the order they pick,
sources by increasing slot, the same-source second arc last).

Disallowed arcs (-inf or NaN) are never used; A itself must use none.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

from dparse._ext.types cimport DECODE_NO_MEMORY, DECODE_OK, head_t, score_t
from dparse.graph.cle cimport dismantle


cdef struct Pair:
    score_t w              # (reduced) score, -inf: no arc
    int a                  # (reduced) number of A's arcs: breaks ties toward A


cdef inline bint above(Pair p, Pair q) noexcept nogil:
    return p.w > q.w or (p.w == q.w and p.a > q.a)


cdef inline Pair minus(Pair p, Pair q) noexcept nogil:
    cdef Pair r
    r.w = p.w - q.w
    r.a = p.a - q.a
    return r


cdef struct Graph:
    Py_ssize_t N
    const head_t* tree     # A: heads [N]
    Pair* W                # [N, N]: W[d*N + s] best reduced pair of an arc from slot s into d
    int* E                 # [N, N]: its original arc h*N + m
    Pair* V                # [N, N]: the second-best arc from s into d (another original arc)
    int* F                 # [N, N]: its original arc, -1 none
    Pair* w_in             # [N]: the pair of the arc a slot picked
    int* src               # [N]: slot the picked arc comes from, -1 while unpicked
    int* node              # [N]: contraction-forest node held by a slot
    char* alive            # [N]
    char* in_cycle         # [N]
    int* cycle             # [N]
    int* first_in          # [N]: A's preorder number of each word
    int* last_in           # [N]: the last preorder number in its subtree
    int* stack             # [2N]
    int* parent            # [2N]: contraction forest, as cle.pyx keeps it
    int* first_child       # [2N]
    int* next_sibling      # [2N]
    int* enter             # [2N]
    # the best swap so far
    Pair gain              # its score minus A's (-inf: none yet)
    int swap_node          # forest node whose picked arc it replaces, -1 none
    int swap_arc           # the arc that enters it instead


cdef inline bint below(const Graph* g, int h, int x) noexcept nogil:
    """Whether word h is x or a descendant of x in A."""
    return g.first_in[x] <= g.first_in[h] <= g.last_in[x]


cdef void number_tree(Graph* g) noexcept nogil:
    """Preorder numbers of A's words (first_in) and each subtree's last one (last_in)."""
    cdef Py_ssize_t N = g.N, m
    cdef int top = 0, x, c, count = 0
    # children lists of A in first_child/next_sibling (reset before the contraction)
    for m in range(N):
        g.first_child[m] = -1
    for m in range(N - 1, 0, -1):
        g.next_sibling[m] = g.first_child[g.tree[m]]
        g.first_child[g.tree[m]] = <int>m
    g.stack[top] = 0
    top += 1
    while top > 0:  # a node stays on the stack (as ~x) until its subtree is numbered
        top -= 1
        x = g.stack[top]
        if x < 0:
            g.last_in[~x] = count - 1
            continue
        g.first_in[x] = count
        count += 1
        g.stack[top] = ~x
        top += 1
        c = g.first_child[x]
        while c >= 0:
            g.stack[top] = c
            top += 1
            c = g.next_sibling[c]


cdef inline void candidate(Graph* g, Pair gain, int x, int fv, int arc) noexcept nogil:
    """Keeps the swap of ``arc`` into forest node fv (entered at word x in A) if it makes a
    tree and gains more than the best so far."""
    if gain.w > -INFINITY and not below(g, arc // <int>g.N, x) and above(gain, g.gain):
        g.gain = gain
        g.swap_node = fv
        g.swap_arc = arc


cdef int pick(Graph* g, int v) noexcept nogil:
    """Gives slot v its best incoming arc and weighs the swaps at v; returns the source slot."""
    cdef Py_ssize_t N = g.N, s
    cdef const Pair* row = g.W + v * N
    cdef int best = 0, arc, h, x, fv = g.node[v]
    for s in range(1, N):
        if above(row[s], row[best]):
            best = <int>s
    g.src[v] = best
    g.w_in[v] = row[best]
    arc = g.E[v * N + best]
    g.enter[fv] = arc
    h = arc // <int>N
    x = arc - h * <int>N
    if g.tree[x] == h:  # A enters v here: the other arcs into v are swaps
        for s in range(N):
            if s != best:
                candidate(g, minus(row[s], row[best]), x, fv, g.E[v * N + s])
        if g.F[v * N + best] >= 0:
            candidate(g, minus(g.V[v * N + best], row[best]), x, fv, g.F[v * N + best])
    return best


cdef inline void merge(Pair* best, int* best_arc, Pair* second, int* second_arc, Pair b,
                       int b_arc, Pair c, int c_arc) noexcept nogil:
    """The two best of (best, second) and (b, c), another node's best and second arcs: into
    (best, second); ties keep the arcs already there first."""
    if above(b, best[0]):
        if above(best[0], c) or c_arc < 0:
            second[0] = best[0]
            second_arc[0] = best_arc[0]
        else:
            second[0] = c
            second_arc[0] = c_arc
        best[0] = b
        best_arc[0] = b_arc
    elif b_arc >= 0 and above(b, second[0]):
        second[0] = b
        second_arc[0] = b_arc


cdef int contract(Graph* g, int k, int* next_node) noexcept nogil:
    """Contracts the cycle g.cycle[0..k-1] into the slot g.cycle[0]; returns that slot."""
    cdef Py_ssize_t N = g.N, s, d, i
    cdef int r = g.cycle[0], x, c = next_node[0]
    cdef Pair shift, none
    none.w = -INFINITY
    none.a = 0
    next_node[0] += 1
    for i in range(k):
        x = g.cycle[i]
        g.in_cycle[x] = 1
        g.parent[g.node[x]] = c
        g.next_sibling[g.node[x]] = g.first_child[c]
        g.first_child[c] = g.node[x]
    # into the cycle from s: the two best of W[x, s] - w_in[x] over the members x
    shift = g.w_in[r]
    for s in range(N):
        g.W[r * N + s] = minus(g.W[r * N + s], shift)
        g.V[r * N + s] = minus(g.V[r * N + s], shift)
    for i in range(1, k):
        x = g.cycle[i]
        shift = g.w_in[x]
        for s in range(N):
            merge(&g.W[r * N + s], &g.E[r * N + s], &g.V[r * N + s], &g.F[r * N + s],
                  minus(g.W[x * N + s], shift), g.E[x * N + s], minus(g.V[x * N + s], shift),
                  g.F[x * N + s])
    for i in range(k):
        g.W[r * N + g.cycle[i]] = g.V[r * N + g.cycle[i]] = none
        g.F[r * N + g.cycle[i]] = -1
    # out of the cycle into d: the two best of W[d, x] over the members x
    for d in range(1, N):
        if g.alive[d] and not g.in_cycle[d]:
            for i in range(1, k):
                x = g.cycle[i]
                merge(&g.W[d * N + r], &g.E[d * N + r], &g.V[d * N + r], &g.F[d * N + r],
                      g.W[d * N + x], g.E[d * N + x], g.V[d * N + x], g.F[d * N + x])
                g.W[d * N + x] = g.V[d * N + x] = none
                g.F[d * N + x] = -1
            if g.src[d] >= 0 and g.in_cycle[g.src[d]]:
                g.src[d] = r
    for i in range(k):
        x = g.cycle[i]
        g.in_cycle[x] = 0
        g.alive[x] = 0
    g.alive[r] = 1
    g.node[r] = c
    g.src[r] = -1
    return r


cdef int attach(Graph* g, int v, int* next_node) noexcept nogil:
    """Processes slot v: picks its arc; returns the contracted slot if a cycle closed, else -1."""
    cdef int s = pick(g, v), x = s, k
    while x != v and g.src[x] >= 0:
        x = g.src[x]
    if x != v:
        return -1
    g.cycle[0] = v
    k = 1
    x = s
    while x != v:
        g.cycle[k] = x
        k += 1
        x = g.src[x]
    return contract(g, k, next_node)


cdef int next_arborescence(const score_t* arc, Py_ssize_t n, const head_t* tree, head_t* heads,
                           int* swapped) noexcept nogil:
    cdef Py_ssize_t N = n + 1, d, s, i
    cdef int top = 0, v, r, next_node = <int>N
    cdef score_t a
    cdef Graph g
    cdef char* block = <char*>malloc(2 * N * N * (sizeof(Pair) + sizeof(int))
                                     + N * (sizeof(Pair) + 6 * sizeof(int) + 2)
                                     + 2 * N * 5 * sizeof(int))
    swapped[0] = -1
    if block == NULL:
        return DECODE_NO_MEMORY
    g.N = N
    g.tree = tree
    g.W = <Pair*>block
    g.V = g.W + N * N
    g.w_in = g.V + N * N
    g.E = <int*>(g.w_in + N)
    g.F = g.E + N * N
    g.src = g.F + N * N
    g.node = g.src + N
    g.cycle = g.node + N
    g.first_in = g.cycle + N
    g.last_in = g.first_in + N
    g.stack = g.last_in + N
    g.parent = g.stack + 2 * N
    g.first_child = g.parent + 2 * N
    g.next_sibling = g.first_child + 2 * N
    g.enter = g.next_sibling + 2 * N
    g.alive = <char*>(g.enter + 2 * N)
    g.in_cycle = g.alive + N
    g.gain.w = -INFINITY
    g.gain.a = 0
    g.swap_node = -1
    g.swap_arc = -1
    number_tree(&g)
    # W is arc transposed (rows are incoming arcs); an arc of A counts 1
    for d in range(N):
        for s in range(N):
            a = arc[s * N + d]
            g.W[d * N + s].w = a if a > -INFINITY and s != d and d > 0 else -INFINITY
            g.W[d * N + s].a = d > 0 and tree[d] == s
            g.E[d * N + s] = <int>(s * N + d)
            g.V[d * N + s].w = -INFINITY
            g.V[d * N + s].a = 0
            g.F[d * N + s] = -1
        g.src[d] = -1
        g.node[d] = <int>d
        g.alive[d] = 1
        g.in_cycle[d] = 0
    for i in range(2 * N):
        g.parent[i] = -1
        g.first_child[i] = -1
    for v in range(<int>N - 1, 0, -1):  # slots to pick: 1..n, lowest first
        g.stack[top] = v
        top += 1
    while top > 0:
        top -= 1
        v = g.stack[top]
        r = attach(&g, v, &next_node)
        if r >= 0:
            g.stack[top] = r
            top += 1
    if g.swap_node >= 0:
        swapped[0] = g.enter[g.swap_node]
        g.enter[g.swap_node] = g.swap_arc
        heads[0] = -1
        dismantle(N, g.alive, g.node, g.parent, g.first_child, g.next_sibling, g.enter,
                  g.stack, heads)
    free(block)
    return DECODE_OK
