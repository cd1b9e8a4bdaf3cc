# cython: language_level=3
"""Maximum spanning arborescence: Chu-Liu-Edmonds in Tarjan's O(n^2) form for dense graphs.

Chu and Liu (1965) and Edmonds (1967) find the maximum spanning arborescence rooted at node 0
by greedily giving every node its best incoming arc and contracting the cycles this creates.
Tarjan (1977, "Finding optimum branchings"; with the correction of Camerini, Fratta and
Maffioli 1979) organises the contractions so that every node is processed once: a node picks
its best incoming arc; if that closes a cycle, the cycle is contracted into a new node whose
incoming scores are those of its members reduced by the score of the member's cycle arc, and
the new node is processed in turn. Each contraction remembers its members (the contraction
forest); at the end the forest is dismantled top-down to read off one original arc per word.

Dense form used here: a [n+1, n+1] matrix ``W[d, s]`` holds the best (reduced) score of an arc
from current node s into current node d, with the original arc it stands for in ``E[d, s]``.
A contracted node reuses the slot of one member; merging a cycle of k nodes rewrites one row
and k columns, O(k n). Picking a best arc is a row scan, O(n), and finding a cycle is a walk
up the chosen arcs, O(n). At most n - 1 contractions with at most 2 n picks: O(n^2) time,
O(n^2) memory.

Single root (exactly one word attached to 0) is exact at no extra cost by reweighting
(Stanojevic and Cohen 2021, "A Root of a Problem"): every tree has at least one root arc, so
lowering every root arc by a constant C larger than the score spread of any two trees, C >
n (max - min), makes the best tree have exactly one root arc while ranking the single-root
trees as the unchanged scores do. The unconstrained tree comes first (a trained parser's usually has a
single root child, and then it is also the best single-root tree); only if it has several root
children does a second, reweighted run follow. O(n^2) as above.

Fast path: when every word's best incoming arc already makes a tree (no cycle; one root child
if asked), that is the algorithm's answer, found by one row-by-row scan of the scores without
building the work matrices; a trained model's scores, and dual decomposition's iterations
(dd2.pyx), often are such.

Ties are broken deterministically: the lowest source slot wins a pick, the first member of a
cycle (the node that closed it) wins a merge.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

cimport numpy as cnp

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_TOO_LONG,
    allowed,
    head_t,
    raise_for_status,
    score_floor,
    score_t,
    words_of,
)

cnp.import_array()

# arcs are packed as h * N + m into an int: N * N must stay below 2^31
cdef Py_ssize_t MAX_NODES = 46340


cdef struct GraphC:
    Py_ssize_t N           # nodes 0..n of the sentence, N = n + 1
    score_t* W             # [N, N]: W[d*N + s] best reduced score of an arc s -> d (slots)
    int* E                 # [N, N]: the original arc h -> m behind W[d*N + s], as h*N + m
    score_t* w_in          # [N]: reduced score of the arc a slot picked
    int* src               # [N]: slot the picked arc comes from, -1 while unpicked
    int* node              # [N]: contraction-forest node held by a slot
    char* alive            # [N]: slot holds a current (uncontracted) node
    char* in_cycle         # [N]: scratch mark of the cycle being contracted
    int* cycle             # [N]: scratch list of the cycle's slots
    int* stack             # [2N]: slots still to pick, then forest nodes still to expand
    int* parent            # [2N]: contraction-forest parent, -1 at the top
    int* first_child       # [2N]: forest children as linked lists
    int* next_sibling      # [2N]
    int* enter             # [2N]: original arc h*N + m picked by a forest node (m inside it)


cdef int pick(GraphC* g, int v) noexcept nogil:
    """Gives slot v its best incoming arc; returns the source slot."""
    cdef Py_ssize_t N = g.N, s
    cdef const score_t* row = g.W + v * N  # -inf at v itself and at dead slots
    cdef int best = 0
    for s in range(1, N):
        if row[s] > row[best]:
            best = <int>s
    g.src[v] = best
    g.w_in[v] = row[best]
    g.enter[g.node[v]] = g.E[v * N + best]
    return best


cdef int contract(GraphC* g, int k, int* next_node) noexcept nogil:
    """Contracts the cycle g.cycle[0..k-1] into the slot g.cycle[0]; returns that slot."""
    cdef Py_ssize_t N = g.N, s, d, i
    cdef int r = g.cycle[0], x, c = next_node[0]
    cdef score_t* row_r = g.W + r * N
    cdef const score_t* row_x
    cdef int* erow_r = g.E + r * N
    cdef const int* erow_x
    cdef score_t* row_d
    cdef score_t shift, val
    next_node[0] += 1
    for i in range(k):
        x = g.cycle[i]
        g.in_cycle[x] = 1
        g.parent[g.node[x]] = c
        g.next_sibling[g.node[x]] = g.first_child[c]
        g.first_child[c] = g.node[x]
    # into the cycle from s: W[c, s] = max_x W[x, s] - W[x, src[x]] (x's cycle arc is dropped);
    # dead slots stay at -inf, members become dead
    shift = g.w_in[r]
    for s in range(N):
        row_r[s] -= shift
    for i in range(1, k):
        x = g.cycle[i]
        row_x = g.W + x * N
        erow_x = g.E + x * N
        shift = g.w_in[x]
        for s in range(N):
            val = row_x[s] - shift
            if val > row_r[s]:
                row_r[s] = val
                erow_r[s] = erow_x[s]
    for i in range(k):
        row_r[g.cycle[i]] = -INFINITY
    # out of the cycle into d: W[d, c] = max_x W[d, x]; arcs picked from a member now leave c
    for d in range(1, N):
        if g.alive[d] and not g.in_cycle[d]:
            row_d = g.W + d * N
            for i in range(1, k):
                x = g.cycle[i]
                if row_d[x] > row_d[r]:
                    row_d[r] = row_d[x]
                    g.E[d * N + r] = g.E[d * N + x]
                row_d[x] = -INFINITY
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


cdef int attach(GraphC* g, int v, int* next_node) noexcept nogil:
    """Processes slot v: picks its arc; returns the contracted slot if a cycle closed, else -1."""
    cdef int s = pick(g, v), x = s, k
    while x != v and g.src[x] >= 0:  # walk up the picked arcs to a node without one
        x = g.src[x]
    if x != v:
        return -1
    # cycle v <- s <- src[s] <- ... <- v
    g.cycle[0] = v
    k = 1
    x = s
    while x != v:
        g.cycle[k] = x
        k += 1
        x = g.src[x]
    return contract(g, k, next_node)


cdef void dismantle(Py_ssize_t N, const char* alive, const int* node, const int* parent,
                    const int* first_child, const int* next_sibling, const int* enter,
                    int* stack, head_t* heads) noexcept nogil:
    """Reads the tree off the contraction forest: each top node's arc enters it at a word m;
    the forest nodes on the path from m up to it are dissolved and their other members become
    top nodes, whose own (cycle) arcs are used in turn."""
    cdef Py_ssize_t v
    cdef int top = 0, x, y, p, c, h, m
    for v in range(1, N):
        if alive[v]:
            stack[top] = node[v]
            top += 1
    while top > 0:
        top -= 1
        x = stack[top]
        h = enter[x] // <int>N
        m = enter[x] - h * <int>N
        heads[m] = h
        y = m
        while y != x:
            p = parent[y]
            c = first_child[p]
            while c >= 0:
                if c != y:
                    stack[top] = c
                    top += 1
                c = next_sibling[c]
            y = p


cdef void maximum_arborescence(GraphC* g, const score_t* arc, score_t floor,
                               score_t root_shift, head_t* heads) noexcept nogil:
    """Runs the algorithm on ``arc`` with disallowed arcs at ``floor`` and root arcs lowered by
    ``root_shift``; writes heads[1..n]."""
    cdef Py_ssize_t N = g.N, d, s, i
    cdef int top = 0, v, r, next_node = <int>N
    # W is arc transposed (rows are incoming arcs)
    for d in range(N):
        for s in range(N):
            g.W[d * N + s] = allowed(arc[s * N + d], floor)
            g.E[d * N + s] = <int>(s * N + d)
        g.W[d * N] -= root_shift
        g.W[d * N + d] = -INFINITY
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
        r = attach(g, v, &next_node)
        if r >= 0:
            g.stack[top] = r
            top += 1
    dismantle(N, g.alive, g.node, g.parent, g.first_child, g.next_sibling, g.enter, g.stack,
              heads)


cdef bint best_heads_tree(const score_t* arc, Py_ssize_t n, bint single_root, head_t* heads,
                          score_t* best, int* state) noexcept nogil:
    """The fast path: gives every word its best head (ties to the lowest, a disallowed arc
    below every allowed one, as the first picks of the algorithm do) and returns whether these
    arcs already form the tree the algorithm returns: no cycle, and under ``single_root`` one
    root child. False also if an arc scores +inf (the full algorithm reports it). Row by row,
    O(n^2); ``best`` [n+1] and ``state`` [n+1] are scratch."""
    cdef Py_ssize_t N = n + 1, h, m, x, root_children = 0
    cdef const score_t* row
    cdef score_t a
    for m in range(1, N):
        a = arc[m]
        if a == INFINITY:
            return False
        best[m] = a if a > -INFINITY else -INFINITY
        heads[m] = 0
    for h in range(1, N):
        row = arc + h * N
        for m in range(1, N):
            a = row[m]
            if a > best[m] and m != h:
                if a == INFINITY:
                    return False
                best[m] = a
                heads[m] = <head_t>h
    # cycles: walk up from each word; 1 marks the current walk, 2 words known to reach 0
    state[0] = 2
    for m in range(1, N):
        state[m] = 0
        root_children += heads[m] == 0
    if single_root and root_children != 1:
        return False
    for m in range(1, N):
        x = m
        while state[x] == 0:
            state[x] = 1
            x = heads[x]
        if state[x] == 1:
            return False
        x = m
        while state[x] == 1:
            state[x] = 2
            x = heads[x]
    return True


cdef int cle_decode(const score_t* arc, Py_ssize_t n, bint single_root,
                    head_t* heads) noexcept nogil:
    cdef Py_ssize_t N = n + 1, m, root_children = 0
    cdef score_t floor, ceiling
    cdef int status
    cdef GraphC g
    cdef char* block
    if N > MAX_NODES:
        return DECODE_TOO_LONG
    heads[0] = -1
    block = <char*>malloc((N * N + N) * sizeof(score_t)
                          + (N * N + 3 * N + 5 * 2 * N) * sizeof(int) + 2 * N)
    if block == NULL:
        return DECODE_NO_MEMORY
    # usually the best heads already form the tree (always for n = 1 unless an arc is +inf)
    if best_heads_tree(arc, n, single_root, heads, <score_t*>block,
                       <int*>(block + N * sizeof(score_t))):
        free(block)
        return DECODE_OK
    status = score_floor(arc, n, &floor, &ceiling)
    if status != DECODE_OK:
        free(block)
        return status
    g.N = N
    g.W = <score_t*>block
    g.w_in = g.W + N * N
    g.E = <int*>(g.w_in + N)
    g.src = g.E + N * N
    g.node = g.src + N
    g.cycle = g.node + N
    g.stack = g.cycle + N
    g.parent = g.stack + 2 * N
    g.first_child = g.parent + 2 * N
    g.next_sibling = g.first_child + 2 * N
    g.enter = g.next_sibling + 2 * N
    g.alive = <char*>(g.enter + 2 * N)
    g.in_cycle = g.alive + N
    maximum_arborescence(&g, arc, floor, 0.0, heads)
    if single_root:
        for m in range(1, N):
            root_children += heads[m] == 0
        if root_children > 1:  # reweighting: C > n (max - min) over the scores in use
            maximum_arborescence(&g, arc, floor, (n + 1) * (ceiling - floor + 1.0), heads)
    free(block)
    return DECODE_OK


def chu_liu_edmonds(const score_t[:, ::1] arc not None, bint single_root=True):
    """Maximum spanning arborescence rooted at node 0 (Chu-Liu 1965, Edmonds 1967, Tarjan 1977).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1; ``arc[h, m]`` scores the arc h -> m. Column 0
    and the diagonal are ignored; -inf or NaN marks a disallowed arc, +inf is a ValueError.
    single_root: exactly one word is attached to the root (exact, by reweighting root arcs).
    Returns heads, int32 [n+1] with heads[0] == -1: a tree of maximum total score.
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef int status
    with nogil:
        status = cle_decode(&arc[0, 0], n, single_root, <head_t*>cnp.PyArray_DATA(heads))
    raise_for_status(status)
    return heads
