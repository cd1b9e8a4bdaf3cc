# cython: language_level=3
"""The K best trees under first-order arc scores: projective (k-best Eisner) and non-projective
(k-best spanning arborescences by partitioning).

Both take the decoders' score matrix (float64 [n+1, n+1], ``arc[h, m]`` the arc h -> m, column
0 and the diagonal ignored; -inf or NaN disallowed, +inf a ValueError) and return up to K
distinct trees, best first, each with its score (the sum of its arcs' scores, up to rounding).
Trees that use a disallowed arc are never listed, except that when no tree avoids them the list
is the 1-best decoder's tree alone, with score -inf (what the decoders return then). Fewer than
K trees come back when fewer exist.

Projective, :func:`kbest_eisner`: lazy k-best derivations (Huang and Chiang 2005, "Better
k-best parsing", Algorithm 3) over the hypergraph of Eisner's chart (dparse/graph/eisner.pyx:
complete and incomplete spans, one hyperedge per split point, and for a single root one top
node with a hyperedge per root child). First-order Eisner derives each projective tree in
exactly one way, so the K best derivations are K distinct trees. The Viterbi chart comes
first (O(n^3), ties to the smallest split as eisner.pyx breaks them, so the first tree is the
``eisner`` decoder's); a node's other hyperedges are put in its candidate heap only when its
second derivation is first asked for, and a derivation (e, j) is pushed only from its unique
predecessor ((e, j - b2) if j2 > 0, else (e, j - b1)), so no candidate is pushed twice.
O(n^3 + K n log K) time for the K best at the top node, besides the O(n) initialization of
each node reached.

Non-projective, :func:`kbest_cle`: Lawler's (1972) partitioning, as Camerini, Fratta and
Maffioli (1980) apply it to arborescences: a subproblem is a set of forced arcs and a set of
forbidden arcs, solved by the single-root-exact Chu-Liu-Edmonds of dparse/graph/cle.pyx on the
scores with the other heads of each forced word and every forbidden arc disallowed (a tree
using a disallowed arc means the subproblem has no tree: CLE uses one only when no tree avoids
it). The subproblems wait in a heap by their best tree's score; popping one lists its tree T
and splits the rest of its trees, for T's free words m1 < m2 < ... in turn, into the
subproblem that forces T's arcs into m1..m(i-1) and forbids T's arc into mi. Exact and
distinct (the subproblems partition the trees); (K - 1) n + 1 CLE calls at most, each O(n^2),
on one masked copy of the scores per popped subproblem, changed in place from child to child:
O(K n^3) time, O(n^2 + K n) memory (the forbidden arcs are shared lists through the
subproblems' ancestry). (Camerini et al.'s O(K n^2) algorithm, which Zmigrod, Vieira and
Cotterell 2021 restate with the single-root constraint, finds each next tree from the
contraction tree instead; it is not what is built here.)

Ties: equal scores come out in the order their candidates entered the heap (each heap orders
by score, then by insertion), which is deterministic; the first tree is the 1-best decoder's.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

cimport numpy as cnp

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_TOO_LONG,
    head_t,
    raise_for_status,
    score_floor,
    score_t,
    words_of,
)
from dparse.graph.cle cimport cle_decode
from dparse.graph.eisner cimport eisner_decode

cnp.import_array()


# -- a max-heap of candidates by (score, insertion order) ------------------------------------

cdef struct Cand:
    score_t score
    long long seq          # insertion number: earlier first among equal scores
    int r                  # the hyperedge (split point) or subproblem index
    int j0, j1             # ranks of the derivations of the two tails (Eisner)


cdef struct Heap:
    Cand* items
    Py_ssize_t size, capacity
    long long next_seq


cdef inline bint before(const Cand* a, const Cand* b) noexcept nogil:
    return a.score > b.score or (a.score == b.score and a.seq < b.seq)


cdef int heap_push(Heap* q, score_t score, int r, int j0, int j1) noexcept nogil:
    """Adds a candidate; DECODE_NO_MEMORY if the heap cannot grow."""
    cdef Py_ssize_t i, p, cap
    cdef Cand c
    cdef Cand* grown
    if q.size == q.capacity:
        cap = 2 * q.capacity if q.capacity else 8
        grown = <Cand*>realloc(q.items, cap * sizeof(Cand))
        if grown == NULL:
            return DECODE_NO_MEMORY
        q.items = grown
        q.capacity = cap
    c.score = score
    c.seq = q.next_seq
    q.next_seq += 1
    c.r = r
    c.j0 = j0
    c.j1 = j1
    i = q.size
    q.size += 1
    while i > 0:
        p = (i - 1) // 2
        if not before(&c, &q.items[p]):
            break
        q.items[i] = q.items[p]
        i = p
    q.items[i] = c
    return DECODE_OK


cdef Cand heap_pop(Heap* q) noexcept nogil:
    """Removes and returns the first candidate (the heap must not be empty)."""
    cdef Cand top = q.items[0], last
    cdef Py_ssize_t i = 0, child
    q.size -= 1
    last = q.items[q.size]
    while True:
        child = 2 * i + 1
        if child >= q.size:
            break
        if child + 1 < q.size and before(&q.items[child + 1], &q.items[child]):
            child += 1
        if not before(&q.items[child], &last):
            break
        q.items[i] = q.items[child]
        i = child
    if q.size > 0:
        q.items[i] = last
    return top


# -- k-best Eisner ----------------------------------------------------------------------------

# node kinds: complete right C(s->t), complete left C(s<-t), incomplete right I(s->t),
# incomplete left I(s<-t); node id kind * N * N + s * N + t, and one top node for the single root
cdef enum:
    CR = 0
    CL = 1
    IR = 2
    IL = 3


cdef struct Deriv:
    score_t score
    int r, j0, j1          # hyperedge and tail ranks


cdef struct Node:
    Deriv* more            # derivations 1, 2, ... (derivation 0 is the Viterbi chart's)
    Py_ssize_t found, capacity   # derivations in ``more``
    Py_ssize_t expanded    # derivations whose successors are in the heap
    bint started           # the heap holds the other hyperedges' best derivations
    Heap heap


cdef struct Chart:
    Py_ssize_t n, N, NN
    Py_ssize_t top         # the answer's node: the root node, or C(0->n) without single root
    bint single_root
    const score_t* arc
    score_t* best          # [4 N N + 1] Viterbi score of each node, -inf: no derivation
    int* split             # [4 N N + 1] Viterbi hyperedge
    Node* nodes            # [4 N N + 1]
    head_t* heads


cdef inline score_t arc_score(const score_t* arc, Py_ssize_t i) noexcept nogil:
    """arc[i], or -inf for a disallowed (-inf or NaN) arc."""
    return arc[i] if arc[i] > -INFINITY else -INFINITY


cdef inline bint is_base(const Chart* c, Py_ssize_t v) noexcept nogil:
    """A complete span of one node: one derivation of score 0, no hyperedge."""
    return v < 2 * c.NN and (v % c.NN) // c.N == v % c.N


cdef inline void edges(const Chart* c, Py_ssize_t v, int* lo, int* hi) noexcept nogil:
    """The hyperedges (split points r) into v: lo..hi."""
    cdef Py_ssize_t kind = v // c.NN, s = (v % c.NN) // c.N, t = v % c.N
    if v == 4 * c.NN:  # the root node: r is the root child
        lo[0] = 1
        hi[0] = <int>c.n
    elif kind == CR:
        lo[0] = <int>(s + 1)
        hi[0] = <int>t
    else:
        lo[0] = <int>s
        hi[0] = <int>(t - 1)


cdef inline void tails(const Chart* c, Py_ssize_t v, int r, Py_ssize_t* a,
                       Py_ssize_t* b) noexcept nogil:
    """The two tail nodes of hyperedge r into v (a: the left one)."""
    cdef Py_ssize_t N = c.N, NN = c.NN, kind = v // NN, s = (v % NN) // N, t = v % N
    if v == 4 * NN:  # arc 0 -> r with C(1<-r) and C(r->n)
        a[0] = CL * NN + N + r
        b[0] = CR * NN + r * N + c.n
    elif kind == CR:  # I(s->r) + C(r->t)
        a[0] = IR * NN + s * N + r
        b[0] = CR * NN + r * N + t
    elif kind == CL:  # C(s<-r) + I(r<-t)
        a[0] = CL * NN + s * N + r
        b[0] = IL * NN + r * N + t
    else:  # I(s->t) and I(s<-t): C(s->r) + C(r+1<-t)
        a[0] = CR * NN + s * N + r
        b[0] = CL * NN + (r + 1) * N + t


cdef inline score_t combine(const Chart* c, Py_ssize_t v, int r, score_t sa,
                            score_t sb) noexcept nogil:
    """Score of hyperedge r into v over tail derivations scoring sa and sb, summed in the order
    eisner.pyx sums them (so that the first tree's score is the decoder's to the bit)."""
    cdef Py_ssize_t N = c.N, NN = c.NN, kind = v // NN, s = (v % NN) // N, t = v % N
    if v == 4 * NN:
        return arc_score(c.arc, r) + sa + sb
    if kind == IR:
        return (sa + sb) + arc_score(c.arc, s * N + t)
    if kind == IL:
        return (sa + sb) + arc_score(c.arc, t * N + s)
    return sa + sb


cdef void fill(Chart* c) noexcept nogil:
    """The Viterbi chart: every node's best score and hyperedge, by increasing width (only
    words 1..n under a single root, then the root node); ties to the smallest split."""
    cdef Py_ssize_t N = c.N, NN = c.NN, first = 1 if c.single_root else 0
    cdef Py_ssize_t k, s, t, v, kind, a, b, i
    cdef int r, lo, hi, arg
    cdef Py_ssize_t order[4]
    order[0], order[1], order[2], order[3] = IR, IL, CL, CR
    cdef score_t best, val
    for s in range(N):
        c.best[CR * NN + s * N + s] = c.best[CL * NN + s * N + s] = 0.0
        c.split[CR * NN + s * N + s] = c.split[CL * NN + s * N + s] = -1
    for k in range(1, N - first):
        for s in range(first, N - k):
            t = s + k
            # incomplete spans before the complete ones of the same width that use them
            for i in range(4):
                kind = order[i]
                v = kind * NN + s * N + t
                if s == 0 and (kind == IL or kind == CL):  # the root is never a dependent
                    c.best[v] = -INFINITY
                    c.split[v] = -1
                    continue
                edges(c, v, &lo, &hi)
                best = -INFINITY
                arg = -1
                for r in range(lo, hi + 1):
                    tails(c, v, r, &a, &b)
                    val = combine(c, v, r, c.best[a], c.best[b])
                    if val > best:
                        best = val
                        arg = r
                c.best[v] = best
                c.split[v] = arg
    if c.single_root:
        v = 4 * NN
        best = -INFINITY
        arg = -1
        for r in range(1, N):
            tails(c, v, r, &a, &b)
            val = combine(c, v, r, c.best[a], c.best[b])
            if val > best:
                best = val
                arg = r
        c.best[v] = best
        c.split[v] = arg


cdef inline score_t deriv_score(const Chart* c, Py_ssize_t v, Py_ssize_t j) noexcept nogil:
    """Score of derivation j of v (which must exist)."""
    return c.best[v] if j == 0 else c.nodes[v].more[j - 1].score


cdef int push_successor(Chart* c, Py_ssize_t v, int r, int j0, int j1) noexcept nogil:
    """Pushes the derivation (r, j0, j1) of v if its tails' derivations exist and it scores
    above -inf; DECODE_NO_MEMORY on failure."""
    cdef Py_ssize_t a, b
    cdef int status
    cdef score_t val
    tails(c, v, r, &a, &b)
    status = derivation(c, a, j0)
    if status <= 0:
        return status
    status = derivation(c, b, j1)
    if status <= 0:
        return status
    val = combine(c, v, r, deriv_score(c, a, j0), deriv_score(c, b, j1))
    if val > -INFINITY:
        return heap_push(&c.nodes[v].heap, val, r, j0, j1)
    return DECODE_OK


cdef int derivation(Chart* c, Py_ssize_t v, Py_ssize_t j) noexcept nogil:
    """Makes sure derivation j (0: the best) of v is known: 1 if it exists, 0 if v has fewer
    derivations (of score above -inf), DECODE_NO_MEMORY on failure."""
    cdef Node* node
    cdef Py_ssize_t last
    cdef int lo, hi, r, status, r0, j0, j1
    cdef Cand top
    cdef Deriv* grown
    if is_base(c, v):
        return j == 0
    if c.split[v] < 0:
        return 0
    node = &c.nodes[v]
    while node.found < j:
        if not node.started:  # the other hyperedges, each with its tails' best derivations
            node.started = True
            edges(c, v, &lo, &hi)
            for r in range(lo, hi + 1):
                if r != c.split[v]:
                    status = push_successor(c, v, r, 0, 0)
                    if status < 0:
                        return status
        if node.expanded <= node.found:  # the successors of the last derivation found
            last = node.found
            if last == 0:
                r0, j0, j1 = c.split[v], 0, 0
            else:
                r0, j0, j1 = node.more[last - 1].r, node.more[last - 1].j0, node.more[last - 1].j1
            node.expanded = last + 1
            status = push_successor(c, v, r0, j0, j1 + 1)
            if status < 0:
                return status
            if j1 == 0:
                status = push_successor(c, v, r0, j0 + 1, 0)
                if status < 0:
                    return status
            node = &c.nodes[v]
        if node.heap.size == 0:
            return 0
        if node.found == node.capacity:
            node.capacity = 2 * node.capacity if node.capacity else 4
            grown = <Deriv*>realloc(node.more, node.capacity * sizeof(Deriv))
            if grown == NULL:
                return DECODE_NO_MEMORY
            node.more = grown
        top = heap_pop(&node.heap)
        node.more[node.found].score = top.score
        node.more[node.found].r = top.r
        node.more[node.found].j0 = top.j0
        node.more[node.found].j1 = top.j1
        node.found += 1
    return 1


cdef void read_heads(const Chart* c, Py_ssize_t v, Py_ssize_t j) noexcept nogil:
    """Writes the arcs of derivation j of v into c.heads."""
    cdef Py_ssize_t N = c.N, NN = c.NN, kind, s, t, a, b
    cdef int r, j0, j1
    while not is_base(c, v):
        if j == 0:
            r, j0, j1 = c.split[v], 0, 0
        else:
            r, j0, j1 = c.nodes[v].more[j - 1].r, c.nodes[v].more[j - 1].j0, \
                c.nodes[v].more[j - 1].j1
        kind = v // NN
        s = (v % NN) // N
        t = v % N
        if v == 4 * NN:
            c.heads[r] = 0
        elif kind == IR:
            c.heads[t] = <head_t>s
        elif kind == IL:
            c.heads[s] = <head_t>t
        tails(c, v, r, &a, &b)
        read_heads(c, a, j0)
        v = b
        j = j1


cdef int kbest_eisner_decode(const score_t* arc, Py_ssize_t n, bint single_root, Py_ssize_t k,
                             head_t* heads, score_t* scores, Py_ssize_t* found) noexcept nogil:
    """The k best projective trees into heads [k, n+1] and scores [k]; found: how many."""
    cdef Py_ssize_t N = n + 1, NN = N * N, count = 4 * NN + 1, i, m
    cdef score_t floor, ceiling
    cdef int status = score_floor(arc, n, &floor, &ceiling)  # refuses +inf
    cdef Chart c
    found[0] = 0
    if status != DECODE_OK:
        return status
    c.n = n
    c.N = N
    c.NN = NN
    c.single_root = single_root
    c.top = 4 * NN if single_root else CR * NN + n
    c.arc = arc
    c.best = <score_t*>malloc(count * sizeof(score_t))
    c.split = <int*>malloc(count * sizeof(int))
    c.nodes = <Node*>calloc(count, sizeof(Node))
    if c.best == NULL or c.split == NULL or c.nodes == NULL:
        free(c.best)
        free(c.split)
        free(c.nodes)
        return DECODE_NO_MEMORY
    fill(&c)
    if c.split[c.top] < 0:  # no tree without a disallowed arc: the decoder's tree
        status = eisner_decode(arc, n, single_root, heads)
        scores[0] = -INFINITY
        found[0] = 1
    else:
        for i in range(k):
            status = derivation(&c, c.top, i)
            if status <= 0:
                break
            c.heads = heads + i * N
            c.heads[0] = -1
            read_heads(&c, c.top, i)
            scores[i] = deriv_score(&c, c.top, i)
            found[0] = i + 1
        if status > 0:
            status = DECODE_OK
    for m in range(count):
        free(c.nodes[m].more)
        free(c.nodes[m].heap.items)
    free(c.nodes)
    free(c.best)
    free(c.split)
    return status


# -- k-best spanning arborescences ------------------------------------------------------------

cdef struct Subproblems:
    Py_ssize_t N
    head_t* trees          # [capacity, N]: each subproblem's best tree
    int* forced            # [capacity, N]: forced head of each word, -1 free
    int* forbid            # [capacity]: its last forbidden arc's link, -1 none
    Py_ssize_t size, capacity
    int* link_arc          # forbidden arcs as links h * N + m, each to the one before
    int* link_next
    Py_ssize_t links, link_capacity


cdef int grow(void** array, Py_ssize_t size) noexcept nogil:
    cdef void* grown = realloc(array[0], size)
    if grown == NULL:
        return DECODE_NO_MEMORY
    array[0] = grown
    return DECODE_OK


cdef int add_link(Subproblems* p, int arc, int next) noexcept nogil:
    """A new forbidden-arc link; returns its index, or DECODE_NO_MEMORY."""
    if p.links == p.link_capacity:
        p.link_capacity = 2 * p.link_capacity if p.link_capacity else 64
        if (grow(<void**>&p.link_arc, p.link_capacity * sizeof(int)) != DECODE_OK
                or grow(<void**>&p.link_next, p.link_capacity * sizeof(int)) != DECODE_OK):
            return DECODE_NO_MEMORY
    p.link_arc[p.links] = arc
    p.link_next[p.links] = next
    p.links += 1
    return <int>(p.links - 1)


cdef int add_subproblem(Subproblems* p, const head_t* tree, const int* forced,
                        int forbid) noexcept nogil:
    """Stores a solved subproblem; returns its index, or DECODE_NO_MEMORY."""
    cdef Py_ssize_t N = p.N
    if p.size == p.capacity:
        p.capacity = 2 * p.capacity if p.capacity else 16
        if (grow(<void**>&p.trees, p.capacity * N * sizeof(head_t)) != DECODE_OK
                or grow(<void**>&p.forced, p.capacity * N * sizeof(int)) != DECODE_OK
                or grow(<void**>&p.forbid, p.capacity * sizeof(int)) != DECODE_OK):
            return DECODE_NO_MEMORY
    memcpy(p.trees + p.size * N, tree, N * sizeof(head_t))
    memcpy(p.forced + p.size * N, forced, N * sizeof(int))
    p.forbid[p.size] = forbid
    p.size += 1
    return <int>(p.size - 1)


cdef void mask(const score_t* arc, Py_ssize_t n, const int* forced, const Subproblems* p,
               int forbid, score_t* work) noexcept nogil:
    """``work``: the scores with the other heads of each ``forced`` word (-1: free) and the
    forbidden arcs of the links from ``forbid`` on disallowed (-inf)."""
    cdef Py_ssize_t N = n + 1, h, m
    cdef int i
    for h in range(N * N):
        work[h] = arc_score(arc, h)
    for m in range(1, N):
        if forced[m] >= 0:
            for h in range(N):
                if h != forced[m]:
                    work[h * N + m] = -INFINITY
    i = forbid
    while i >= 0:
        work[p.link_arc[i]] = -INFINITY
        i = p.link_next[i]


cdef int solve(const score_t* work, Py_ssize_t n, bint single_root, head_t* heads,
               score_t* score) noexcept nogil:
    """The best tree under the masked scores ``work``: heads and its score, or score -inf if
    every tree uses a disallowed arc."""
    cdef Py_ssize_t N = n + 1, m
    cdef score_t total = 0.0
    cdef int status = cle_decode(work, n, single_root, heads)
    if status != DECODE_OK:
        return status
    for m in range(1, N):
        total += work[heads[m] * N + m]
    score[0] = total
    return DECODE_OK


cdef int kbest_cle_decode(const score_t* arc, Py_ssize_t n, bint single_root, Py_ssize_t k,
                          head_t* heads, score_t* scores, Py_ssize_t* found) noexcept nogil:
    """The k best trees into heads [k, n+1] and scores [k]; found: how many."""
    cdef Py_ssize_t N = n + 1, m, h, x, out = 0
    cdef score_t floor, ceiling, value, saved
    cdef int status = score_floor(arc, n, &floor, &ceiling)  # refuses +inf
    cdef int index, link
    cdef Subproblems p
    cdef Heap q
    cdef Cand top
    cdef score_t* work
    cdef int* forced
    cdef head_t* tree
    found[0] = 0
    if status != DECODE_OK:
        return status
    if N > 46340:  # cle.pyx's limit
        return DECODE_TOO_LONG
    p.N = N
    p.trees = NULL
    p.forced = NULL
    p.forbid = NULL
    p.size = p.capacity = 0
    p.link_arc = p.link_next = NULL
    p.links = p.link_capacity = 0
    q.items = NULL
    q.size = q.capacity = 0
    q.next_seq = 0
    work = <score_t*>malloc(N * N * sizeof(score_t))
    forced = <int*>malloc(N * sizeof(int))
    tree = <head_t*>malloc(N * sizeof(head_t))
    if work == NULL or forced == NULL or tree == NULL:
        status = DECODE_NO_MEMORY
    else:
        for m in range(N):
            forced[m] = -1
        mask(arc, n, forced, &p, -1, work)
        status = solve(work, n, single_root, tree, &value)
    if status == DECODE_OK and not value > -INFINITY:
        # no tree without a disallowed arc: the decoder's tree alone
        memcpy(heads, tree, N * sizeof(head_t))
        scores[0] = -INFINITY
        out = 1
    elif status == DECODE_OK:
        index = add_subproblem(&p, tree, forced, -1)
        status = index if index < 0 else heap_push(&q, value, index, 0, 0)
        while status == DECODE_OK and out < k and q.size > 0:
            top = heap_pop(&q)
            memcpy(heads + out * N, p.trees + top.r * N, N * sizeof(head_t))
            scores[out] = top.score
            out += 1
            if out == k:
                break
            # split the rest of its trees: word by word, forbid its arc, then force it
            memcpy(forced, p.forced + top.r * N, N * sizeof(int))
            mask(arc, n, forced, &p, p.forbid[top.r], work)
            for m in range(1, N):
                if forced[m] >= 0:
                    continue
                h = p.trees[top.r * N + m]
                saved = work[h * N + m]
                work[h * N + m] = -INFINITY
                status = solve(work, n, single_root, tree, &value)
                if status != DECODE_OK:
                    break
                work[h * N + m] = saved
                if value > -INFINITY:
                    link = add_link(&p, <int>(h * N + m), p.forbid[top.r])
                    index = link if link < 0 else add_subproblem(&p, tree, forced, link)
                    status = index if index < 0 else heap_push(&q, value, index, 0, 0)
                    if status != DECODE_OK:
                        break
                for x in range(N):
                    if x != h:
                        work[x * N + m] = -INFINITY
                forced[m] = <int>h
    found[0] = out
    free(work)
    free(forced)
    free(tree)
    free(p.trees)
    free(p.forced)
    free(p.forbid)
    free(p.link_arc)
    free(p.link_next)
    free(q.items)
    return status


# -- Python entry points ----------------------------------------------------------------------

ctypedef int (*KBestCore)(const score_t*, Py_ssize_t, bint, Py_ssize_t, head_t*, score_t*,
                          Py_ssize_t*) noexcept nogil


cdef list run_kbest(KBestCore core, const score_t[:, ::1] arc, Py_ssize_t k, bint single_root):
    """Runs a k-best core and returns its [(heads, score), ...]."""
    cdef Py_ssize_t n = words_of(arc), found = 0, i
    cdef cnp.npy_intp shape[2]
    cdef cnp.ndarray heads, scores
    cdef int status
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    shape[0] = k
    shape[1] = n + 1
    heads = cnp.PyArray_EMPTY(2, shape, cnp.NPY_INT32, 0)
    scores = cnp.PyArray_EMPTY(1, shape, cnp.NPY_FLOAT64, 0)
    with nogil:
        status = core(&arc[0, 0], n, single_root, k, <head_t*>cnp.PyArray_DATA(heads),
                      <score_t*>cnp.PyArray_DATA(scores), &found)
    raise_for_status(status)
    return [(heads[i].copy(), float(scores[i])) for i in range(found)]


def kbest_eisner(const score_t[:, ::1] arc not None, Py_ssize_t k, bint single_root=True):
    """The k best projective trees under arc scores: lazy k-best Eisner (Huang and Chiang 2005).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1 (as :func:`dparse.graph.eisner.eisner`);
    k >= 1; single_root: exactly one word attached to the root.
    Returns [(heads int32 [n+1], score), ...]: up to k distinct projective trees, best first
    (the module doc: ties, disallowed arcs).
    """
    return run_kbest(kbest_eisner_decode, arc, k, single_root)


def kbest_cle(const score_t[:, ::1] arc not None, Py_ssize_t k, bint single_root=True):
    """The k best spanning arborescences under arc scores: Lawler's partitioning over
    Chu-Liu-Edmonds (Camerini, Fratta and Maffioli 1980), O(k n^3).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1 (as :func:`dparse.graph.cle.chu_liu_edmonds`);
    k >= 1; single_root: exactly one word attached to the root.
    Returns [(heads int32 [n+1], score), ...]: up to k distinct trees, best first (the module
    doc: ties, disallowed arcs).
    """
    return run_kbest(kbest_cle_decode, arc, k, single_root)


# the k-best function of each first-order decoder, by the decoder's registered name
KBEST = {"cle": kbest_cle, "eisner": kbest_eisner}
