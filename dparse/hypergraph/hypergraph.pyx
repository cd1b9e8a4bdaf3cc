# distutils: language = c++
# cython: language_level=3
"""Viterbi, lazy k-best, the forest oracle, derivation counting and cube pruning over packed
forests, and the check of a forest's invariants (Forest.validate's core).

A forest (dparse.hypergraph.Forest) is a hypergraph whose vertex ids are topological (tails
before heads), so every bottom-up algorithm is one pass over v = 0 .. V-1 and the hyperedges
into v (the range ``edge_start[v] .. edge_start[v+1]-1``). A derivation of v picks a hyperedge
e into v and a derivation of each of e's (at most two) tails; its score is

    score(e) + score(derivation of tail 0) + score(derivation of tail 1)     (summed in this order)

and its tree the arcs of the hyperedges it uses.

- Viterbi (generalized, Klein and Manning 2001): inside(v) = max_e [score(e) + sum_t inside(t)],
  the first hyperedge winning ties.
- Forest oracle (Huang 2008): the same pass maximizing (number of gold arcs, score)
  lexicographically, a hyperedge counting 1 if its arc is in the gold tree.
- Lazy k-best (Huang and Chiang 2005, Algorithm 3): after the Viterbi pass each vertex v has a
  candidate heap holding the best derivation of each hyperedge, <e, (0, 0)>. The j-th best of v
  is found on demand: pop the best candidate into D[v] after pushing the successors of the last
  one popped, <e, j + b^i>, which first asks the tail for its (j_i + 1)-th best (recursively).
  Instead of the paper's membership test (``j' not in cand[v]``) each rank vector is pushed from
  exactly one predecessor: <e, j + b^i> only for i at or after the last nonzero index of j
  ((j0, 0) -> (j0 + 1, 0) and (j0, 1); (j0, j1 > 0) -> (j0, j1 + 1)). That predecessor scores at
  least as high, so the enumeration is the same, with no hash set. Ties go to the earlier push.
- Counting: derivations(v) = sum_e prod_t derivations(t), in float64.
- Cube pruning (Huang and Chiang 2007; Hayashi et al. 2013, Section 5.1): bottom-up, each
  vertex's k-best list is the generic cube pruner's (cubepruning.pyx) over its hyperedges, a
  hyperedge combining its tails' lists (a missing tail: a one-item list scoring 0) with the
  non-local scores and signatures of a :class:`ForestCombiner`. Without non-local scores it
  is exact: the k best derivations, as lazy k-best finds them.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t
from libcpp.algorithm cimport pop_heap, push_heap
from libcpp.utility cimport pair
from libcpp.vector cimport vector

import numpy as np

from dparse._ext.cubepruning cimport CUBE_MAX_FIELDS
from dparse._ext.types cimport score_t


cdef void viterbi_c(const HypergraphC* g, const score_t* edge_score, score_t* inside,
                    int32_t* best) noexcept nogil:
    cdef int32_t v, e, t, b
    cdef score_t s, top
    for v in range(g.V):
        b = -1
        top = -INFINITY
        for e in range(g.edge_start[v], g.edge_start[v + 1]):
            # inside(v) = max_e score(e) + inside(tail0) + inside(tail1)
            s = edge_score[e]
            t = g.tails[2 * e]
            if t >= 0:
                s = s + inside[t]
                t = g.tails[2 * e + 1]
                if t >= 0:
                    s = s + inside[t]
            if b < 0 or s > top:
                b = e
                top = s
        inside[v] = top
        best[v] = b


cdef void oracle_c(const HypergraphC* g, const score_t* edge_score, const int32_t* gold,
                   int32_t* matches, score_t* inside, int32_t* best) noexcept nogil:
    cdef int32_t v, e, t, b, c, top_c, h
    cdef score_t s, top
    for v in range(g.V):
        b = -1
        top = -INFINITY
        top_c = -1
        for e in range(g.edge_start[v], g.edge_start[v + 1]):
            # (matches, score)(v) = lexicographic max_e of [gold arc(e)] + sum over tails
            h = g.arc[2 * e]
            c = 1 if h >= 0 and gold[g.arc[2 * e + 1]] == h else 0
            s = edge_score[e]
            t = g.tails[2 * e]
            if t >= 0:
                c += matches[t]
                s = s + inside[t]
                t = g.tails[2 * e + 1]
                if t >= 0:
                    c += matches[t]
                    s = s + inside[t]
            if b < 0 or c > top_c or (c == top_c and s > top):
                b = e
                top_c = c
                top = s
        matches[v] = top_c
        inside[v] = top
        best[v] = b


ctypedef pair[int32_t, int32_t] VertexRank   # a vertex and the rank of one of its derivations


cdef inline void expand_edge(const HypergraphC* g, int32_t e, int32_t rank0, int32_t rank1,
                             int32_t* heads, int32_t* labels,
                             vector[VertexRank]* stack) noexcept nogil:
    """One step of walking a ranked derivation: hyperedge e's arc into heads/labels, and its
    tails onto ``stack`` with the ranks of the derivations used for them."""
    cdef int32_t m = g.arc[2 * e + 1], t = g.tails[2 * e]
    if m >= 0:
        heads[m] = g.arc[2 * e]
        labels[m] = g.label[e] if g.label != NULL else -1
    if t >= 0:
        stack.push_back(VertexRank(t, rank0))
        t = g.tails[2 * e + 1]
        if t >= 0:
            stack.push_back(VertexRank(t, rank1))


cdef void derivation_tree(const HypergraphC* g, const int32_t* best, int32_t v, int32_t* heads,
                          int32_t* labels, int32_t* stack) noexcept nogil:
    cdef int32_t size = 1, u, e, m
    stack[0] = v
    while size > 0:
        size -= 1
        u = stack[size]
        e = best[u]
        m = g.arc[2 * e + 1]
        if m >= 0:
            heads[m] = g.arc[2 * e]
            labels[m] = g.label[e] if g.label != NULL else -1
        if g.tails[2 * e] >= 0:
            stack[size] = g.tails[2 * e]
            size += 1
            if g.tails[2 * e + 1] >= 0:
                stack[size] = g.tails[2 * e + 1]
                size += 1


cdef double count_c(const HypergraphC* g, double* count) noexcept nogil:
    cdef int32_t v, e, t
    cdef double total, c
    for v in range(g.V):
        total = 0.0
        for e in range(g.edge_start[v], g.edge_start[v + 1]):
            # derivations(v) = sum_e prod_t derivations(t)
            c = 1.0
            t = g.tails[2 * e]
            if t >= 0:
                c *= count[t]
                t = g.tails[2 * e + 1]
                if t >= 0:
                    c *= count[t]
            total += c
        count[v] = total
    return count[g.goal]


# problems found by check_forest_c (0: none); ``where`` is the vertex or hyperedge concerned
cdef enum:
    BAD_VERTEX_SPAN = 1
    BAD_GOAL_ID
    BAD_GOAL_SHAPE
    BAD_EDGE_HEAD
    EDGE_HEAD_DECREASES
    VERTEX_WITHOUT_EDGE
    TAILS_NOT_PADDED
    TAILS_NOT_TOPOLOGICAL
    TAILS_OVERLAP
    TAIL_OUTSIDE
    SPAN_NOT_COVERED
    BAD_ARC
    TAIL_NOT_ATTACHED
    BAD_LABEL


cdef int check_forest_c(int32_t n, int32_t V, int32_t E, const int32_t* span,
                        const int32_t* vhead, const int32_t* head, const int32_t* tails,
                        const int32_t* arc, const int32_t* label, int32_t goal,
                        int32_t* where) noexcept nogil:
    """The first broken invariant of Forest.validate (see its docstring), or 0."""
    cdef int32_t v, e, t, k, h, m, covered, vh, first, last, prev_last
    cdef bint inside_tail, attached
    for v in range(V):
        where[0] = v
        if not (0 <= span[2 * v] <= vhead[v] <= span[2 * v + 1] <= n):
            return BAD_VERTEX_SPAN
    where[0] = goal
    if not 0 <= goal < V:
        return BAD_GOAL_ID
    if vhead[goal] != 0 or span[2 * goal] != 0 or span[2 * goal + 1] != n:
        return BAD_GOAL_SHAPE
    for e in range(E):
        where[0] = e
        if not 0 <= head[e] < V:
            return BAD_EDGE_HEAD
        if e > 0 and head[e] < head[e - 1]:
            return EDGE_HEAD_DECREASES
    v = 0  # every vertex has a hyperedge: head[] runs through 0 .. V-1 without a gap
    for e in range(E):
        if head[e] >= v:  # the first hyperedge of a vertex: it must be v
            if head[e] > v:
                where[0] = v
                return VERTEX_WITHOUT_EDGE
            v += 1
    if v < V:
        where[0] = v
        return VERTEX_WITHOUT_EDGE
    for e in range(E):
        where[0] = e
        v = head[e]
        vh = vhead[v]
        if tails[2 * e] < -1 or tails[2 * e + 1] < -1 or (tails[2 * e] == -1
                                                            and tails[2 * e + 1] != -1):
            return TAILS_NOT_PADDED
        if tails[2 * e] >= v or tails[2 * e + 1] >= v:
            return TAILS_NOT_TOPOLOGICAL
        # tails left to right, disjoint, inside v's span; with the head word they cover it
        covered = 0
        prev_last = -1
        inside_tail = False
        for k in range(2):
            t = tails[2 * e + k]
            if t < 0:
                break
            first = span[2 * t]
            last = span[2 * t + 1]
            if first <= prev_last:
                return TAILS_OVERLAP
            prev_last = last
            if first < span[2 * v] or last > span[2 * v + 1]:
                return TAIL_OUTSIDE
            covered += last - first + 1
            if first <= vh <= last:
                inside_tail = True
        if covered + (0 if inside_tail else 1) != span[2 * v + 1] - span[2 * v] + 1:
            return SPAN_NOT_COVERED
        # the arc goes from v's head to a tail's head; every tail is headed by one of them
        h = arc[2 * e]
        m = arc[2 * e + 1]
        if h == -1 and m == -1:
            m = -2
        else:
            attached = False
            for k in range(2):
                t = tails[2 * e + k]
                if t >= 0 and vhead[t] == m:
                    attached = True
            if h != vh or m == vh or m < 1 or not attached:
                return BAD_ARC
        for k in range(2):
            t = tails[2 * e + k]
            if t >= 0 and vhead[t] != vh and vhead[t] != m:
                return TAIL_NOT_ATTACHED
        if label != NULL and (label[e] < -1 or (label[e] == -1) != (m == -2)):
            return BAD_LABEL
    return 0


_PROBLEMS = {
    BAD_VERTEX_SPAN: "vertex {w} has span {span} and head {head}: need 0 <= first <= head <= "
                     "last <= n = {n}",
    BAD_GOAL_ID: "the goal {w} is not a vertex",
    BAD_GOAL_SHAPE: "goal vertex {w} has span {span} and head {head}, not span (0, {n}) and "
                    "head 0",
    BAD_EDGE_HEAD: "hyperedge {w}: its vertex (edge_head) is not a vertex id",
    EDGE_HEAD_DECREASES: "edge_head decreases at hyperedge {w}",
    VERTEX_WITHOUT_EDGE: "vertex {w} has no hyperedge",
    TAILS_NOT_PADDED: "hyperedge {w}: tails must be -1 padded",
    TAILS_NOT_TOPOLOGICAL: "hyperedge {w}: a tail id is not smaller than its head vertex (ids "
                           "must be topological)",
    TAILS_OVERLAP: "hyperedge {w}: tail spans overlap or are not left to right",
    TAIL_OUTSIDE: "hyperedge {w}: a tail span lies outside the vertex's span",
    SPAN_NOT_COVERED: "hyperedge {w}: the tails' spans and the head word do not cover the "
                      "vertex's span exactly",
    BAD_ARC: "hyperedge {w}: the arc must go from the vertex's head to the head of one of its "
             "tails",
    TAIL_NOT_ATTACHED: "hyperedge {w}: a tail's head is neither the vertex's head nor attached "
                       "by the arc",
    BAD_LABEL: "hyperedge {w}: the label must be -1 exactly when there is no arc",
}


def forest_problem(int32_t n, const int32_t[:, ::1] vertex_span,
                   const int32_t[::1] vertex_head, const int32_t[::1] edge_head,
                   const int32_t[:, ::1] edge_tails, const int32_t[:, ::1] edge_arc,
                   edge_label, int32_t goal):
    """The first broken structural invariant of a forest's arrays (shapes already checked by
    Forest.validate, V >= 1), as a message, or None."""
    cdef const int32_t[::1] labels
    cdef const int32_t* label = NULL
    cdef int32_t V = <int32_t>vertex_head.shape[0], E = <int32_t>edge_head.shape[0], where = 0
    cdef int code
    cdef int32_t dummy = 0
    if edge_label is not None:
        labels = edge_label
        label = &labels[0] if E else &dummy
    with nogil:
        code = check_forest_c(n, V, E, &vertex_span[0, 0], &vertex_head[0],
                              &edge_head[0] if E else &dummy,
                              &edge_tails[0, 0] if E else &dummy,
                              &edge_arc[0, 0] if E else &dummy, label, goal, &where)
    if code == 0:
        return None
    vertex = where if code <= BAD_GOAL_SHAPE else 0
    problem = _PROBLEMS[code].format(w=where, n=n, span=tuple(vertex_span[vertex]),
                                     head=vertex_head[vertex])
    if code >= TAILS_NOT_PADDED:
        problem += (f" (vertex {edge_head[where]}, tails {tuple(edge_tails[where])}, "
                    f"arc {tuple(edge_arc[where])})")
    return problem


def _edge_scores(Hypergraph graph, scores):
    """Hyperedge scores: the forest's, or ``scores`` (float64 [E], no NaN or +inf)."""
    if scores is None:
        return graph.score_view
    a = np.ascontiguousarray(scores, dtype=np.float64)
    if a.shape != (graph.c.E,):
        raise ValueError(f"scores must have shape ({graph.c.E},), got {a.shape}")
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError("hyperedge scores must not be NaN or +inf")
    return a


cdef class Hypergraph:
    """The algorithms over one :class:`dparse.hypergraph.Forest` (validated unless
    ``trusted``; the forest's arrays are used in place, not copied). Every method takes an
    optional ``scores`` array (float64 [E]) replacing the forest's hyperedge scores, as a
    reranker needs. Trees come as (heads, labels) int32 arrays [n + 1] (heads[0] == -1;
    labels -1 where unlabeled), or ``labels`` None for an unlabeled forest."""

    def __init__(self, forest, bint trusted=False):
        if not trusted:
            forest.validate()
        self.forest = forest
        V = forest.num_vertices
        self.starts = np.searchsorted(forest.edge_head, np.arange(V + 1)).astype(np.int32)
        self.tails_view = np.ascontiguousarray(forest.edge_tails)
        self.arc_view = np.ascontiguousarray(forest.edge_arc)
        self.score_view = np.ascontiguousarray(forest.edge_score)
        self.c.n = forest.n
        self.c.V = V
        self.c.E = forest.num_edges
        self.c.goal = forest.goal
        self.c.edge_start = &self.starts[0]
        self.c.tails = &self.tails_view[0, 0]
        self.c.arc = &self.arc_view[0, 0]
        if forest.edge_label is None:
            self.c.label = NULL
        else:
            self.label_view = np.ascontiguousarray(forest.edge_label)
            self.c.label = &self.label_view[0]

    @property
    def n(self) -> int:
        return self.c.n

    @property
    def num_vertices(self) -> int:
        return self.c.V

    @property
    def num_edges(self) -> int:
        return self.c.E

    def _tree(self, const int32_t[::1] best, int32_t v=-1):
        """(heads, labels) of the derivation of v (default: the goal) following ``best``."""
        cdef int32_t[::1] heads = np.full(self.c.n + 1, -1, dtype=np.int32)
        cdef int32_t[::1] labels = np.full(self.c.n + 1, -1, dtype=np.int32)
        cdef int32_t[::1] stack = np.empty(self.c.V, dtype=np.int32)
        if v < 0:
            v = self.c.goal
        with nogil:
            derivation_tree(&self.c, &best[0], v, &heads[0], &labels[0], &stack[0])
        return np.asarray(heads), (None if self.c.label == NULL else np.asarray(labels))

    def viterbi(self, scores=None):
        """The best derivation of the goal: (score, heads, labels)."""
        cdef const score_t[::1] s = _edge_scores(self, scores)
        cdef score_t[::1] inside = np.empty(self.c.V, dtype=np.float64)
        cdef int32_t[::1] best = np.empty(self.c.V, dtype=np.int32)
        with nogil:
            viterbi_c(&self.c, &s[0], &inside[0], &best[0])
        heads, labels = self._tree(best)
        return float(inside[self.c.goal]), heads, labels

    def oracle(self, gold_heads, scores=None):
        """The forest oracle: the tree of the forest with the most arcs of ``gold_heads`` (int
        [n + 1], heads[0] ignored), the best-scoring one among those. Returns (number of gold
        arcs, score, heads, labels)."""
        cdef const score_t[::1] s = _edge_scores(self, scores)
        gold_arr = np.asarray(gold_heads)
        if gold_arr.shape != (self.c.n + 1,):
            raise ValueError(f"gold heads must have shape ({self.c.n + 1},), "
                             f"got {gold_arr.shape}")
        cdef const int32_t[::1] gold = gold_arr.astype(np.int32)
        cdef int32_t[::1] matches = np.empty(self.c.V, dtype=np.int32)
        cdef score_t[::1] inside = np.empty(self.c.V, dtype=np.float64)
        cdef int32_t[::1] best = np.empty(self.c.V, dtype=np.int32)
        with nogil:
            oracle_c(&self.c, &s[0], &gold[0], &matches[0], &inside[0], &best[0])
        heads, labels = self._tree(best)
        return int(matches[self.c.goal]), float(inside[self.c.goal]), heads, labels

    def count_derivations(self) -> float:
        """The number of derivations of the goal (float64: exact below 2**53)."""
        cdef double[::1] count = np.empty(self.c.V, dtype=np.float64)
        cdef double total
        with nogil:
            total = count_c(&self.c, &count[0])
        return total

    def lazy_kbest(self, scores=None):
        """A :class:`LazyKBest` over this forest (scores: the forest's, or ``scores``)."""
        return LazyKBest(self, scores)

    def kbest(self, int k, scores=None):
        """The k best derivations of the goal (fewer if the forest has fewer), best first:
        (scores float64 [K], heads int32 [K, n + 1], labels int32 [K, n + 1] or None)."""
        return LazyKBest(self, scores).kbest(k)


cdef class LazyKBest:
    """The k best derivations of a :class:`Hypergraph`'s goal, extended on demand (see the
    module docstring): :meth:`kbest`, :meth:`extend`, :meth:`score`, :meth:`tree`,
    :meth:`edges`."""

    def __init__(self, Hypergraph graph, scores=None):
        cdef const score_t[::1] s = _edge_scores(graph, scores)
        cdef int32_t v, e
        self.graph = graph
        self.score_owner = s
        self.edge_score = &s[0]
        V = graph.c.V
        self.found.resize(V)
        self.pool.resize(V)
        self.heap.resize(V)
        self.expanded.assign(V, 0)
        with nogil:
            for v in range(V):  # bottom-up: every tail already has its best derivation
                self.start(v)

    cdef void start(self, int32_t v) noexcept nogil:
        """GetCandidates(v): <e, (0, 0)> for each hyperedge into v; then v's best popped."""
        cdef const HypergraphC* g = &self.graph.c
        cdef int32_t e
        for e in range(g.edge_start[v], g.edge_start[v + 1]):
            self.push(v, e, 0, 0)
        self.lazy_kth(v, 1)

    cdef void push(self, int32_t v, int32_t e, int32_t j0, int32_t j1) noexcept nogil:
        """Adds candidate <e, (j0, j1)> of v (the tails' j0-th and j1-th must exist)."""
        cdef const HypergraphC* g = &self.graph.c
        cdef DerivC d
        cdef int32_t t
        d.score = self.edge_score[e]
        d.edge = e
        d.j0 = j0
        d.j1 = j1
        t = g.tails[2 * e]
        if t >= 0:
            d.score = d.score + self.found[t][j0].score
            t = g.tails[2 * e + 1]
            if t >= 0:
                d.score = d.score + self.found[t][j1].score
        self.pool[v].push_back(d)
        self.heap[v].push_back(pair[score_t, int64_t](
            d.score, -<int64_t>(self.pool[v].size() - 1)))
        push_heap(self.heap[v].begin(), self.heap[v].end())

    cdef bint lazy_kth(self, int32_t v, int32_t k) noexcept nogil:
        """LazyKthBest(v, k): extends D[v] to k derivations if v has that many; returns whether
        it has."""
        cdef const HypergraphC* g = &self.graph.c
        cdef DerivC d
        cdef int32_t t0, t1
        cdef int64_t index
        while <int32_t>self.found[v].size() < k:
            if self.expanded[v] < <int32_t>self.found[v].size():
                # LazyNext: the successors of the last derivation popped
                d = self.found[v][self.expanded[v]]
                self.expanded[v] += 1
                t0 = g.tails[2 * d.edge]
                t1 = g.tails[2 * d.edge + 1]
                if t0 >= 0 and d.j1 == 0 and self.lazy_kth(t0, d.j0 + 2):
                    self.push(v, d.edge, d.j0 + 1, d.j1)
                if t1 >= 0 and self.lazy_kth(t1, d.j1 + 2):
                    self.push(v, d.edge, d.j0, d.j1 + 1)
            if self.heap[v].empty():
                return False
            pop_heap(self.heap[v].begin(), self.heap[v].end())
            index = -self.heap[v].back().second
            self.heap[v].pop_back()
            self.found[v].push_back(self.pool[v][index])
        return True

    def extend(self, int k) -> int:
        """Finds the goal's k best derivations (if it has so many); returns how many are
        known."""
        cdef int32_t goal = self.graph.c.goal
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        with nogil:
            self.lazy_kth(goal, k)
        return self.found[goal].size()

    def _check_rank(self, int rank):
        if not 0 <= rank < <int>self.found[self.graph.c.goal].size():
            raise IndexError(f"derivation rank {rank} not found (call extend first)")

    def score(self, int rank) -> float:
        """The score of the goal's derivation of 0-based ``rank``."""
        self._check_rank(rank)
        return self.found[self.graph.c.goal][rank].score

    cdef void walk(self, int32_t rank, int32_t* heads, int32_t* labels,
                   int32_t* edges) noexcept nogil:
        """The arcs (into heads/labels) and the hyperedges (into edges, preorder) of the goal's
        derivation of ``rank``."""
        cdef vector[VertexRank] stack
        cdef VertexRank top
        cdef DerivC d
        cdef int32_t used = 0
        stack.push_back(VertexRank(self.graph.c.goal, rank))
        while not stack.empty():
            top = stack.back()
            stack.pop_back()
            d = self.found[top.first][top.second]
            edges[used] = d.edge
            used += 1
            expand_edge(&self.graph.c, d.edge, d.j0, d.j1, heads, labels, &stack)
        edges[used] = -1

    def _walk(self, int rank):
        self._check_rank(rank)
        cdef int32_t n = self.graph.c.n
        cdef int32_t[::1] heads = np.full(n + 1, -1, dtype=np.int32)
        cdef int32_t[::1] labels = np.full(n + 1, -1, dtype=np.int32)
        cdef int32_t[::1] edges = np.empty(self.graph.c.V + 1, dtype=np.int32)
        with nogil:
            self.walk(rank, &heads[0], &labels[0], &edges[0])
        used = np.asarray(edges)
        return np.asarray(heads), np.asarray(labels), used[:np.argmax(used < 0)]

    def tree(self, int rank):
        """(heads, labels) of the goal's derivation of ``rank``; labels None if unlabeled."""
        heads, labels, _ = self._walk(rank)
        return heads, (None if self.graph.c.label == NULL else labels)

    def edges(self, int rank):
        """The hyperedges of the goal's derivation of ``rank`` (int32, preorder)."""
        return self._walk(rank)[2]

    def kbest(self, int k):
        """The goal's k best derivations (fewer if there are fewer), best first: (scores
        float64 [K], heads int32 [K, n + 1], labels int32 [K, n + 1] or None)."""
        cdef int32_t goal = self.graph.c.goal
        cdef int32_t n = self.graph.c.n, r, K
        cdef int32_t[::1] edges = np.empty(self.graph.c.V + 1, dtype=np.int32)
        K = min(self.extend(k), k)
        cdef score_t[::1] scores = np.empty(K, dtype=np.float64)
        cdef int32_t[:, ::1] heads = np.full((K, n + 1), -1, dtype=np.int32)
        cdef int32_t[:, ::1] labels = np.full((K, n + 1), -1, dtype=np.int32)
        with nogil:
            for r in range(K):
                scores[r] = self.found[goal][r].score
                self.walk(r, &heads[r, 0], &labels[r, 0], &edges[0])
        return (np.asarray(scores), np.asarray(heads),
                None if self.graph.c.label == NULL else np.asarray(labels))


cdef class ForestCombiner(Combiner):
    """The base class adds no non-local score (cube pruning is then exact k-best)."""

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        return 0.0


cdef class EdgeBonusCombiner(ForestCombiner):
    """For tests: the non-local score of a combination is ``bonus[hyperedge]`` (float64 [E]),
    whatever its items, so that cube pruning equals Viterbi on scores + bonus."""

    cdef const score_t[::1] bonus

    def __init__(self, const score_t[::1] bonus):
        self.bonus = bonus

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        return self.bonus[self.first_edge + edge]


cdef class ForestCube:
    """``ForestCube(graph).kbest(k, combiner=None, recombination=False, n_fields=0,
    scores=None)``: the goal's cube-pruned k-best list (see the module docstring)."""

    def __init__(self, Hypergraph graph):
        self.graph = graph
        self.pruner = CubePruner()
        self.zero = 0.0

    cdef int run(self, const score_t* edge_score, int32_t k, bint recombination, int n_fields,
                 ForestCombiner combiner) noexcept nogil:
        cdef const HypergraphC* g = &self.graph.c
        cdef int32_t v, e, t, x, count
        cdef HyperedgeC* h
        self.items.resize(g.V)
        self.item_scores.resize(g.V)
        for v in range(g.V):
            self.edges.resize(g.edge_start[v + 1] - g.edge_start[v])
            for e in range(g.edge_start[v], g.edge_start[v + 1]):
                h = &self.edges[e - g.edge_start[v]]
                h.weight = edge_score[e]
                t = g.tails[2 * e]
                h.left = &self.zero if t < 0 else self.item_scores[t].data()
                h.left_len = 1 if t < 0 else <int32_t>self.item_scores[t].size()
                t = g.tails[2 * e + 1] if t >= 0 else -1
                h.right = &self.zero if t < 0 else self.item_scores[t].data()
                h.right_len = 1 if t < 0 else <int32_t>self.item_scores[t].size()
            combiner.vertex = v
            combiner.first_edge = g.edge_start[v]
            count = self.pruner.kbest(self.edges.data(), <int32_t>self.edges.size(), k,
                                      recombination, n_fields, combiner)
            if count < 0:
                return -1
            self.items[v].resize(count)
            self.item_scores[v].resize(count)
            for x in range(count):
                self.items[v][x] = self.pruner.results[x]
                self.items[v][x].edge += g.edge_start[v]
                self.item_scores[v][x] = self.pruner.results[x].score
        return <int>self.items[g.goal].size()

    cdef void walk(self, int32_t v, int32_t rank, int32_t* heads, int32_t* labels) noexcept nogil:
        """The arcs of item ``rank`` of vertex v into heads/labels."""
        cdef vector[VertexRank] stack
        cdef VertexRank top
        cdef const CandidateC* c
        stack.push_back(VertexRank(v, rank))
        while not stack.empty():
            top = stack.back()
            stack.pop_back()
            c = &self.items[top.first][top.second]
            expand_edge(&self.graph.c, c.edge, c.i, c.j, heads, labels, &stack)

    def kbest(self, int k, ForestCombiner combiner=None, bint recombination=False,
              int n_fields=0, scores=None):
        """The goal's k-best list by cube pruning with beam k at every vertex, best first:
        (scores float64 [K], heads int32 [K, n + 1], labels int32 [K, n + 1] or None)."""
        cdef const score_t[::1] s = _edge_scores(self.graph, scores)
        cdef int count, r
        cdef int32_t n = self.graph.c.n, goal = self.graph.c.goal
        if k < 1 or not 0 <= n_fields <= CUBE_MAX_FIELDS:
            raise ValueError(f"need k >= 1 and 0 <= n_fields <= {CUBE_MAX_FIELDS}")
        if combiner is None:
            combiner = ForestCombiner()
        combiner.cube = self
        with nogil:
            count = self.run(&s[0], k, recombination, n_fields, combiner)
        combiner.cube = None
        cdef score_t[::1] out = np.empty(count, dtype=np.float64)
        cdef int32_t[:, ::1] heads = np.full((count, n + 1), -1, dtype=np.int32)
        cdef int32_t[:, ::1] labels = np.full((count, n + 1), -1, dtype=np.int32)
        with nogil:
            for r in range(count):
                out[r] = self.items[goal][r].score
                self.walk(goal, r, &heads[r, 0], &labels[r, 0])
        return (np.asarray(out), np.asarray(heads),
                None if self.graph.c.label == NULL else np.asarray(labels))
