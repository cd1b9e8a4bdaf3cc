# cython: language_level=3
"""The K best trees of the exact first- and second-order decoders: projective (k-best Eisner,
first order and Koo and Collins's second-order Model 1) and non-projective first order (k-best
spanning arborescences, Camerini et al. 1980).

Each takes its decoder's scores (float64 [n+1, n+1] ``arc[h, m]`` for the arc h -> m, column 0
and the diagonal ignored; for second order also ``sib`` and ``grand`` [n+1]^3 as
dparse/graph/eisner2.pyx reads them; -inf or NaN disallowed, +inf a ValueError) and returns up
to K distinct trees, best first, each with its score (the sum of its parts' scores, up to
rounding). Trees that hold a disallowed arc or part are never listed, except that when no tree
avoids them the list is the 1-best decoder's tree alone, with score -inf (what the decoders
return then). Fewer than K trees come back when fewer exist.

Projective, :func:`kbest_eisner` and :func:`kbest_eisner2`: lazy k-best derivations (Huang and
Chiang 2005, "Better k-best parsing", Algorithm 3) over the hypergraph of the decoder's chart:
for first order Eisner's (dparse/graph/eisner.pyx: complete and incomplete spans, one
hyperedge per split point), for second order Koo and Collins's (2010) Model 1 (as
eisner2_sibgp builds it: complete and incomplete spans for every grandparent of their head,
sibling spans, a hyperedge per split point or previous modifier), and under a single root one
top node with a hyperedge per root child. These charts derive each projective tree in exactly
one way, so the K best derivations are K distinct trees. The Viterbi chart comes first
(O(n^3) first order, ties to the smallest split as eisner.pyx breaks them, so the first tree
is the ``eisner`` decoder's; O(n^4) time and O(n^3) nodes second order, whose first tree is
a best one, eisner2's up to ties); a node's other hyperedges are put in its candidate heap
only when its second derivation is first asked for, and a derivation (e, j) is pushed only from
its unique predecessor ((e, j - b2) if j2 > 0, else (e, j - b1)), so no candidate is pushed
twice. Then O(K n log K)-ish for the K best at the top node, besides the O(n) initialization
of each node reached.

Non-projective, :func:`kbest_cle`: Camerini, Fratta and Maffioli's (1980) k-best spanning
arborescences, with the root constraint as Zmigrod, Vieira and Cotterell (2021) add it. A
subproblem is a set of forced arcs and a set of forbidden arcs, held with its best tree A
(already listed) and its second-best tree B and an arc e of A that B lacks. The subproblems
wait in a heap by B's score; popping one lists B and splits the subproblem's other trees into
the subproblem with e forced (best tree A) and the one with e forbidden (best tree B), each
pushed with its own second tree. The second tree of a subproblem (scores with the other heads of
each forced word and the forbidden arcs disallowed): without the root constraint, the next
arborescence after A, from the contraction history (dparse/graph/camerini.pyx, O(n^2)); with it,
the better of that next arborescence when every root arc but A's 0 -> a is disallowed (trees
keeping A's root arc, which all have one root child) and the single-root decoder's best tree
with 0 -> a forbidden too (trees with another root arc; cle_decode, O(n^2)). Exact and distinct
(the subproblems partition the trees); the first tree is the ``cle`` decoder's; each later tree
costs two second-tree searches, O(n^2) each: O(K n^2) time, O(K n + n^2) memory (the forbidden
arcs are shared lists through the subproblems' ancestry).

Ties: equal scores come out in the order their candidates entered the heap (each heap orders
by score, then by insertion: for :func:`kbest_cle` the subproblem with e forced before the one
with e forbidden), which is deterministic; among equally good second trees of a subproblem the
one keeping the root arc wins, then camerini.pyx's first swap. The first tree is the 1-best
decoder's (second order: a best tree, the decoder's up to ties).
"""

from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

import numpy as np

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
from dparse.graph.camerini cimport next_arborescence
from dparse.graph.cle cimport cle_decode
from dparse.graph.eisner cimport eisner_decode
from dparse.graph.eisner2 cimport eisner2_sibgp_decode

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


# -- k-best Eisner, first and second order ------------------------------------------------------

# span kinds: complete right C(s->t), complete left C(s<-t), incomplete right I(s->t),
# incomplete left I(s<-t), and (second order) sibling S(s, t); TOP: the single root's node.
# First order: node id kind * N^2 + s * N + t. Second order: every span but S carries the
# grandparent g of its head (the head of S is its g): kind * N^3 + g * N^2 + s * N + t; the
# head of the root's own spans (multi-root) has no grandparent and takes g = 0.
cdef enum:
    CR = 0
    CL = 1
    IR = 2
    IL = 3
    SB = 4
    TOP = 5


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
    int order              # 1: arc scores; 2: arc, sibling and grandparent scores
    Py_ssize_t n, N, NN, N3
    Py_ssize_t top         # the answer's node: the root node, or C(0->n) without single root
    bint single_root
    const score_t* arc
    const score_t* sib     # [N, N, N] or NULL (zeros); second order
    const score_t* grand   # [N, N, N] or NULL (zeros); second order
    score_t* best          # Viterbi score of each node, -inf: no derivation
    int* split             # Viterbi hyperedge, -1: none
    Node** nodes           # each node's k-best state, made when first needed
    head_t* heads


cdef inline score_t arc_score(const score_t* arc, Py_ssize_t i) noexcept nogil:
    """arc[i], or -inf for a disallowed (-inf or NaN) arc."""
    return arc[i] if arc[i] > -INFINITY else -INFINITY


cdef inline score_t part(const score_t* scores, Py_ssize_t i) noexcept nogil:
    """scores[i], 0 if scores is NULL, -inf for a disallowed (-inf or NaN) part."""
    if scores == NULL:
        return 0.0
    return scores[i] if scores[i] > -INFINITY else -INFINITY


cdef inline Py_ssize_t node_id(const Chart* c, int kind, Py_ssize_t g, Py_ssize_t s,
                               Py_ssize_t t) noexcept nogil:
    if c.order == 1:
        return kind * c.NN + s * c.N + t
    return kind * c.N3 + g * c.NN + s * c.N + t


cdef inline int unpack(const Chart* c, Py_ssize_t v, Py_ssize_t* g, Py_ssize_t* s,
                       Py_ssize_t* t) noexcept nogil:
    """The kind of node v, and its g, s and t."""
    cdef Py_ssize_t size = c.NN if c.order == 1 else c.N3
    cdef Py_ssize_t rest = v % size
    if v == 5 * size:
        return TOP
    g[0] = rest // c.NN
    s[0] = (rest % c.NN) // c.N
    t[0] = rest % c.N
    return <int>(v // size)


cdef inline bint is_base(const Chart* c, Py_ssize_t v) noexcept nogil:
    """A complete span of one node: one derivation of score 0, no hyperedge."""
    cdef Py_ssize_t g, s, t
    cdef int kind = unpack(c, v, &g, &s, &t)
    return (kind == CR or kind == CL) and s == t


cdef inline void edges(const Chart* c, Py_ssize_t v, int* lo, int* hi) noexcept nogil:
    """The hyperedges r into v: lo..hi (a split point, a modifier or the root child)."""
    cdef Py_ssize_t g, s, t
    cdef int kind = unpack(c, v, &g, &s, &t)
    if kind == TOP:
        lo[0] = 1
        hi[0] = <int>c.n
    elif kind == CR or (kind == IL and c.order == 2):
        lo[0] = <int>(s + 1)
        hi[0] = <int>t
    else:
        lo[0] = <int>s
        hi[0] = <int>(t - 1)


cdef inline void tails(const Chart* c, Py_ssize_t v, int r, Py_ssize_t* a,
                       Py_ssize_t* b) noexcept nogil:
    """The two tail nodes of hyperedge r into v (a: the left one)."""
    cdef Py_ssize_t g = 0, s = 0, t = 0
    cdef int kind = unpack(c, v, &g, &s, &t)
    if kind == TOP:  # arc 0 -> r with C(1<-r) and C(r->n), grandparent 0
        a[0] = node_id(c, CL, 0, 1, r)
        b[0] = node_id(c, CR, 0, r, c.n)
    elif kind == CR:  # I(s->r) + C(r->t), the latter with grandparent s
        a[0] = node_id(c, IR, g, s, r)
        b[0] = node_id(c, CR, s, r, t)
    elif kind == CL:  # C(s<-r) + I(r<-t), the former with grandparent t
        a[0] = node_id(c, CL, t, s, r)
        b[0] = node_id(c, IL, g, r, t)
    elif c.order == 1 or kind == SB:  # C(s->r) + C(r+1<-t) (of S: headed by g's modifiers)
        a[0] = node_id(c, CR, g, s, r)
        b[0] = node_id(c, CL, g, r + 1, t)
    elif kind == IR:  # s's innermost modifier t (r = s), or I(s->r) + S(r, t)
        if r == s:
            a[0] = node_id(c, CR, g, s, s)
            b[0] = node_id(c, CL, s, s + 1, t)
        else:
            a[0] = node_id(c, IR, g, s, r)
            b[0] = node_id(c, SB, s, r, t)
    else:  # IL: t's innermost modifier s (r = t), or S(s, r) + I(r<-t)
        if r == t:
            a[0] = node_id(c, CR, t, s, t - 1)
            b[0] = node_id(c, CL, g, t, t)
        else:
            a[0] = node_id(c, SB, t, s, r)
            b[0] = node_id(c, IL, g, r, t)


cdef inline score_t combine(const Chart* c, Py_ssize_t v, int r, score_t sa,
                            score_t sb) noexcept nogil:
    """Score of hyperedge r into v over tail derivations scoring sa and sb (first order: summed
    in the order eisner.pyx sums them, so that the first tree's score is the decoder's)."""
    cdef Py_ssize_t N = c.N, NN = c.NN, g = 0, s = 0, t = 0, h, m
    cdef int kind = unpack(c, v, &g, &s, &t)
    cdef score_t w
    if kind == TOP:
        w = arc_score(c.arc, r)
        if c.order == 2:
            w = w + part(c.sib, r)  # sib[0, 0, r]
        return w + sa + sb
    if kind != IR and kind != IL:
        return sa + sb
    if kind == IR:
        h = s
        m = t
    else:
        h = t
        m = s
    w = arc_score(c.arc, h * N + m)
    if c.order == 2:
        # sib[h, r, m] with r the previous modifier, h itself for the innermost
        w = w + part(c.sib, (h * N + r) * N + m)
        if h > 0:
            w = w + part(c.grand, g * NN + h * N + m)
    return (sa + sb) + w


cdef void best_of(Chart* c, Py_ssize_t v) noexcept nogil:
    """Sets v's Viterbi score and hyperedge from its tails' (ties to the smallest r)."""
    cdef int r, lo, hi, arg = -1
    cdef Py_ssize_t a, b
    cdef score_t best = -INFINITY, val
    edges(c, v, &lo, &hi)
    for r in range(lo, hi + 1):
        tails(c, v, r, &a, &b)
        val = combine(c, v, r, c.best[a], c.best[b])
        if val > best:
            best = val
            arg = r
    c.best[v] = best
    c.split[v] = arg


cdef void fill(Chart* c) noexcept nogil:
    """The Viterbi chart, by increasing width (only words 1..n under a single root, then the
    root node). Second order: each span for every grandparent outside it (g = 0 alone for
    the root's own spans), sibling spans first, then incomplete, then complete ones."""
    cdef Py_ssize_t N = c.N, n = c.n, first = 1 if c.single_root else 0
    cdef Py_ssize_t k, s, t, g, i, count = node_id(c, TOP, 0, 0, 0) + 1
    cdef int kind
    cdef int order[5]
    order[0], order[1], order[2], order[3], order[4] = SB, IR, IL, CL, CR
    for i in range(count):
        c.best[i] = -INFINITY
        c.split[i] = -1
    for s in range(N):
        for g in range(N if c.order == 2 else 1):
            c.best[node_id(c, CR, g, s, s)] = c.best[node_id(c, CL, g, s, s)] = 0.0
    for k in range(1, N - first):
        for s in range(first, N - k):
            t = s + k
            for i in range(5):
                kind = order[i]
                if kind == SB and c.order == 1:
                    continue
                if s == 0 and kind != IR and kind != CR:  # the root is never a modifier
                    continue
                if c.order == 1 or s == 0:  # first order, or the root's spans: no g
                    best_of(c, node_id(c, kind, 0, s, t))
                    continue
                for g in range(N):
                    if g < s or g > t:
                        best_of(c, node_id(c, kind, g, s, t))
    if c.single_root:
        best_of(c, c.top)


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
    if j == 0:
        return 1
    node = c.nodes[v]
    if node == NULL:
        node = c.nodes[v] = <Node*>calloc(1, sizeof(Node))
        if node == NULL:
            return DECODE_NO_MEMORY
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
                r0 = c.split[v]
                j0 = j1 = 0
            else:
                r0 = node.more[last - 1].r
                j0 = node.more[last - 1].j0
                j1 = node.more[last - 1].j1
            node.expanded = last + 1
            status = push_successor(c, v, r0, j0, j1 + 1)
            if status < 0:
                return status
            if j1 == 0:
                status = push_successor(c, v, r0, j0 + 1, 0)
                if status < 0:
                    return status
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
    cdef Py_ssize_t g, s, t, a, b
    cdef int r, j0, j1, kind
    while not is_base(c, v):
        if j == 0:
            r = c.split[v]
            j0 = j1 = 0
        else:
            r = c.nodes[v].more[j - 1].r
            j0 = c.nodes[v].more[j - 1].j0
            j1 = c.nodes[v].more[j - 1].j1
        kind = unpack(c, v, &g, &s, &t)
        if kind == TOP:
            c.heads[r] = 0
        elif kind == IR:
            c.heads[t] = <head_t>s
        elif kind == IL:
            c.heads[s] = <head_t>t
        tails(c, v, r, &a, &b)
        read_heads(c, a, j0)
        v = b
        j = j1


cdef int kbest_chart(Chart* c, Py_ssize_t k, head_t* heads, score_t* scores,
                     Py_ssize_t* found) noexcept nogil:
    """Fills the chart ``c`` (order, n, arc and parts set) and writes its k best trees into
    heads [k, n+1] and scores [k]; found: how many (0: no tree without a disallowed part)."""
    cdef Py_ssize_t N = c.n + 1, count, i, m
    cdef int status = DECODE_OK
    c.N = N
    c.NN = N * N
    c.N3 = N * N * N
    count = node_id(c, TOP, 0, 0, 0) + 1
    c.top = count - 1 if c.single_root else node_id(c, CR, 0, 0, c.n)
    c.best = <score_t*>malloc(count * sizeof(score_t))
    c.split = <int*>malloc(count * sizeof(int))
    c.nodes = <Node**>calloc(count, sizeof(Node*))
    found[0] = 0
    if c.best == NULL or c.split == NULL or c.nodes == NULL:
        status = DECODE_NO_MEMORY
    else:
        fill(c)
        for i in range(k):
            status = derivation(c, c.top, i)
            if status <= 0:
                break
            c.heads = heads + i * N
            c.heads[0] = -1
            read_heads(c, c.top, i)
            scores[i] = deriv_score(c, c.top, i)
            found[0] = i + 1
        if status > 0:
            status = DECODE_OK
    if c.nodes != NULL:
        for m in range(count):
            if c.nodes[m] != NULL:
                free(c.nodes[m].more)
                free(c.nodes[m].heap.items)
                free(c.nodes[m])
    free(c.nodes)
    free(c.best)
    free(c.split)
    return status


cdef int kbest_eisner_decode(const score_t* arc, Py_ssize_t n, bint single_root, Py_ssize_t k,
                             head_t* heads, score_t* scores, Py_ssize_t* found) noexcept nogil:
    """The k best projective trees under arc scores into heads [k, n+1] and scores [k]."""
    return kbest_projective(1, arc, NULL, NULL, n, single_root, k, heads, scores, found)


cdef int kbest_projective(int order, const score_t* arc, const score_t* sib,
                          const score_t* grand, Py_ssize_t n, bint single_root, Py_ssize_t k,
                          head_t* heads, score_t* scores, Py_ssize_t* found) noexcept nogil:
    """The k best projective trees of the first-order (``order`` 1) or second-order chart
    under arc, sibling and grandparent scores (sib, grand: NULL for zeros) into heads
    [k, n+1] and scores [k]; with no allowed tree, the 1-best decoder's tree alone, score
    -inf."""
    cdef score_t floor, ceiling
    cdef int status = score_floor(arc, n, &floor, &ceiling)  # refuses +inf arcs
    cdef Chart c
    found[0] = 0
    if status != DECODE_OK:
        return status
    c.order = order
    c.n = n
    c.single_root = single_root
    c.arc = arc
    c.sib = sib
    c.grand = grand
    status = kbest_chart(&c, k, heads, scores, found)
    if status == DECODE_OK and found[0] == 0:
        if order == 1:
            status = eisner_decode(arc, n, single_root, heads)
        else:
            status = eisner2_sibgp_decode(arc, sib, grand, n, single_root, heads)
        scores[0] = -INFINITY
        found[0] = 1
    return status


# -- k-best spanning arborescences ------------------------------------------------------------

cdef struct Subproblems:
    Py_ssize_t N
    head_t* best           # [capacity, N]: each subproblem's best tree (already listed)
    head_t* second         # [capacity, N]: its second-best tree (listed when it is popped)
    int* forced            # [capacity, N]: forced head of each word, -1 free
    int* forbid            # [capacity]: its last forbidden arc's link, -1 none
    int* split             # [capacity]: an arc h * N + m of ``best`` that ``second`` lacks
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


cdef int add_subproblem(Subproblems* p, const head_t* best, const head_t* second,
                        const int* forced, int forbid, int split) noexcept nogil:
    """Stores a subproblem with its two best trees; returns its index, or DECODE_NO_MEMORY."""
    cdef Py_ssize_t N = p.N
    if p.size == p.capacity:
        p.capacity = 2 * p.capacity if p.capacity else 16
        if (grow(<void**>&p.best, p.capacity * N * sizeof(head_t)) != DECODE_OK
                or grow(<void**>&p.second, p.capacity * N * sizeof(head_t)) != DECODE_OK
                or grow(<void**>&p.forced, p.capacity * N * sizeof(int)) != DECODE_OK
                or grow(<void**>&p.forbid, p.capacity * sizeof(int)) != DECODE_OK
                or grow(<void**>&p.split, p.capacity * sizeof(int)) != DECODE_OK):
            return DECODE_NO_MEMORY
    memcpy(p.best + p.size * N, best, N * sizeof(head_t))
    memcpy(p.second + p.size * N, second, N * sizeof(head_t))
    memcpy(p.forced + p.size * N, forced, N * sizeof(int))
    p.forbid[p.size] = forbid
    p.split[p.size] = split
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


cdef score_t tree_score(const score_t* work, Py_ssize_t n, const head_t* heads) noexcept nogil:
    """The score of a tree under ``work``: -inf if it uses a disallowed arc."""
    cdef Py_ssize_t N = n + 1, m
    cdef score_t total = 0.0
    for m in range(1, N):
        total += work[heads[m] * N + m]
    return total


cdef int second_best(const score_t* arc, Py_ssize_t n, bint single_root, Subproblems* p,
                     const head_t* best, const int* forced, int forbid, score_t* work,
                     head_t* scratch, Heap* q) noexcept nogil:
    """Finds the best tree other than ``best`` (the subproblem's best) among the subproblem's
    trees (``forced`` heads, forbidden arcs from the link ``forbid`` on) and, if there is one,
    stores the subproblem with both trees and pushes it by that tree's score.

    Without the root constraint: :func:`next_arborescence` on the masked scores. With it
    (Zmigrod et al. 2021): the second-best tree either keeps ``best``'s root arc 0 -> a, and is
    the next arborescence when the other root arcs are disallowed (every tree then has one root
    child), or it does not, and is the best single-root tree with 0 -> a forbidden as well
    (the decoder's, cle_decode); the better of the two, the former on a tie."""
    cdef Py_ssize_t N = n + 1, m
    cdef int status, split = -1, swapped = -1, a = -1
    cdef score_t value = -INFINITY, other = -INFINITY
    cdef head_t* alternative = scratch + N
    mask(arc, n, forced, p, forbid, work)
    if single_root:
        for m in range(1, N):
            if best[m] == 0:
                a = <int>m
        if forced[a] < 0:  # trees with another root arc
            work[a] = -INFINITY
            status = cle_decode(work, n, True, alternative)
            if status != DECODE_OK:
                return status
            other = tree_score(work, n, alternative)
            work[a] = arc_score(arc, a)
        else:
            other = -INFINITY
        for m in range(1, N):  # trees with the root arc 0 -> a
            if m != a:
                work[m] = -INFINITY
    status = next_arborescence(work, n, best, scratch, &swapped)
    if status != DECODE_OK:
        return status
    if swapped >= 0:
        value = tree_score(work, n, scratch)
        split = swapped
    if single_root and other > value:
        value = other
        split = a
        memcpy(scratch, alternative, N * sizeof(head_t))
    if split < 0:  # ``best`` is the subproblem's only tree
        return DECODE_OK
    status = add_subproblem(p, best, scratch, forced, forbid, split)
    return status if status < 0 else heap_push(q, value, status, 0, 0)


cdef int kbest_cle_decode(const score_t* arc, Py_ssize_t n, bint single_root, Py_ssize_t k,
                          head_t* heads, score_t* scores, Py_ssize_t* found) noexcept nogil:
    """The k best trees into heads [k, n+1] and scores [k]; found: how many."""
    cdef Py_ssize_t N = n + 1, m, out = 0
    cdef score_t floor, ceiling, value = -INFINITY
    cdef int status = score_floor(arc, n, &floor, &ceiling)  # refuses +inf
    cdef int split, forbid, link
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
    p.best = p.second = NULL
    p.forced = p.forbid = p.split = NULL
    p.size = p.capacity = 0
    p.link_arc = p.link_next = NULL
    p.links = p.link_capacity = 0
    q.items = NULL
    q.size = q.capacity = 0
    q.next_seq = 0
    work = <score_t*>malloc(N * N * sizeof(score_t))
    forced = <int*>malloc(N * sizeof(int))
    tree = <head_t*>malloc(4 * N * sizeof(head_t))  # a tree, and second_best's two scratch
    if work == NULL or forced == NULL or tree == NULL:
        status = DECODE_NO_MEMORY
    else:
        for m in range(N):
            forced[m] = -1
        mask(arc, n, forced, &p, -1, work)
        status = cle_decode(work, n, single_root, heads)
        value = tree_score(work, n, heads)
    if status == DECODE_OK and not value > -INFINITY:
        # no tree without a disallowed arc: the decoder's tree alone
        scores[0] = -INFINITY
        out = 1
    elif status == DECODE_OK:
        scores[0] = value
        out = 1
        if k > 1:
            status = second_best(arc, n, single_root, &p, heads, forced, -1, work, tree + N, &q)
        while status == DECODE_OK and out < k and q.size > 0:
            # list the popped subproblem's second tree, then split it on the arc e of its best
            # tree that the second lacks: with e forced (best tree: its best) and with e
            # forbidden (best tree: its second), each pushed with its own second tree
            top = heap_pop(&q)
            memcpy(heads + out * N, p.second + top.r * N, N * sizeof(head_t))
            scores[out] = top.score
            out += 1
            if out == k:
                break
            split = p.split[top.r]
            forbid = p.forbid[top.r]
            memcpy(forced, p.forced + top.r * N, N * sizeof(int))
            memcpy(tree, p.best + top.r * N, N * sizeof(head_t))
            forced[split % N] = <int>(split // N)
            status = second_best(arc, n, single_root, &p, tree, forced, forbid, work, tree + N,
                                 &q)
            if status != DECODE_OK:
                break
            forced[split % N] = p.forced[top.r * N + split % N]
            link = add_link(&p, split, forbid)
            if link < 0:
                status = link
                break
            status = second_best(arc, n, single_root, &p, heads + (out - 1) * N, forced, link,
                                 work, tree + N, &q)
    found[0] = out
    free(work)
    free(forced)
    free(tree)
    free(p.best)
    free(p.second)
    free(p.forced)
    free(p.forbid)
    free(p.split)
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


def kbest_eisner2(const score_t[:, ::1] arc not None, Py_ssize_t k, bint single_root=True,
                  sib=None, grand=None):
    """The k best projective trees under arc, consecutive-sibling and grandparent scores: lazy
    k-best derivations over the chart of Koo and Collins's (2010) Model 1, as
    :func:`dparse.graph.eisner2.eisner2_sibgp` builds it (O(n^4) Viterbi chart, O(n^3) nodes).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1; sib, grand: float64 [n+1, n+1, n+1] or None
    (zeros), ``sib[h, m, s]`` and ``grand[g, h, m]`` as eisner2_sibgp reads them (a disallowed
    part, -inf or NaN, rules out the trees that hold it); k >= 1; single_root: exactly one
    word attached to the root. Returns [(heads int32 [n+1], score), ...]: up to k distinct
    projective trees, best first (the module doc: ties, disallowed parts).
    """
    cdef Py_ssize_t n = words_of(arc), found = 0, i
    cdef cnp.npy_intp shape[2]
    cdef cnp.ndarray heads, scores
    cdef const score_t[:, :, ::1] sib_view, grand_view
    cdef const score_t* sib_data = NULL
    cdef const score_t* grand_data = NULL
    cdef int status
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if sib is not None:
        sib_view = checked_part(sib, n, "sib")
        sib_data = &sib_view[0, 0, 0]
    if grand is not None:
        grand_view = checked_part(grand, n, "grand")
        grand_data = &grand_view[0, 0, 0]
    shape[0] = k
    shape[1] = n + 1
    heads = cnp.PyArray_EMPTY(2, shape, cnp.NPY_INT32, 0)
    scores = cnp.PyArray_EMPTY(1, shape, cnp.NPY_FLOAT64, 0)
    with nogil:
        status = kbest_projective(2, &arc[0, 0], sib_data, grand_data, n, single_root, k,
                                  <head_t*>cnp.PyArray_DATA(heads),
                                  <score_t*>cnp.PyArray_DATA(scores), &found)
    raise_for_status(status)
    return [(heads[i].copy(), float(scores[i])) for i in range(found)]


cdef checked_part(part, Py_ssize_t n, str name):
    """``part`` as a C-contiguous float64 [n+1, n+1, n+1] array; ValueError for another shape
    or a +inf score."""
    array = np.ascontiguousarray(part, dtype=np.float64)
    if array.shape != (n + 1, n + 1, n + 1):
        raise ValueError(f"{name} must be [n+1, n+1, n+1] = {(n + 1,) * 3}, got {array.shape}")
    if np.isposinf(array).any():
        raise ValueError(f"{name} scores must not be +inf")
    return array


def kbest_cle(const score_t[:, ::1] arc not None, Py_ssize_t k, bint single_root=True):
    """The k best spanning arborescences under arc scores: Camerini, Fratta and Maffioli (1980),
    each next tree from the contraction history, single root as Zmigrod et al. (2021), O(k n^2).

    arc: float64 [n+1, n+1], C-contiguous, n >= 1 (as :func:`dparse.graph.cle.chu_liu_edmonds`);
    k >= 1; single_root: exactly one word attached to the root.
    Returns [(heads int32 [n+1], score), ...]: up to k distinct trees, best first (the module
    doc: ties, disallowed arcs).
    """
    return run_kbest(kbest_cle_decode, arc, k, single_root)


# The k-best function of each exact decoder that has one, by the decoder's registered name:
# called as f(arc, k, single_root=..., **parts) with the part arrays the decoder accepts.
KBEST = {"cle": kbest_cle, "eisner": kbest_eisner, "eisner2-sib": kbest_eisner2,
         "eisner2-sibgp": kbest_eisner2}
