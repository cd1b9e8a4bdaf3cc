# distutils: language = c++
# cython: language_level=3
"""Cube pruning with recombination: the k-best list of one hypergraph vertex.

Chiang (2007, "Hierarchical phrase-based translation", Section 5.3) and Huang and Chiang (2005,
"Better k-best parsing", Algorithm 2), with one frontier over all incoming hyperedges of the
vertex. Hyperedge e combines position i of its left antecedent's list L_e and position j of its
right list R_e (both best first) into the candidate (e, i, j) of score

    L_e[i] + R_e[j] + weight_e + combine(e, i, j)

where ``combine`` (a :class:`Combiner`) adds the non-local parts that the combination completes
and writes its signature. Because of the non-local parts the grid of scores is not monotonic, so
the search is approximate (it is exact when ``combine`` is constant).

1. Push (e, 0, 0) for every hyperedge with two non-empty lists.
2. Pop the best candidate; push its neighbours (e, i+1, j) and (e, i, j+1) that exist and were
   never pushed (each (e, i, j) is pushed at most once; score and signature are computed then).
3. Without recombination the popped candidate joins the list. With recombination, a candidate
   whose signature (a 64-bit hash of its fields, then the fields themselves) is already in the
   list is merged into it: the higher score survives (on a tie, the earlier pop) and the merge
   does not count towards k.
4. Stop at k list entries or an empty frontier; sort the list best first (stable: ties in pop
   order). Ties in the frontier go to the earlier push, so results are deterministic.

With recombination, a vertex with fewer than k possible signatures explores every combination:
each entry of its list is then the best of its signature over the given antecedent lists.

Memory: all work arrays are C++ vectors owned by the :class:`CubePruner`, grown when a vertex
needs more and reused, so there is no allocation per candidate once they are large enough.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.algorithm cimport pop_heap, push_heap
from libcpp.utility cimport pair

import numpy as np

from dparse._ext.hashing cimport fmix, mix
from dparse._ext.types cimport score_t


cdef class Combiner:
    """What combining two items of a vertex means; the base class adds nothing (a constant
    grid: cube pruning is then exact k-best combination)."""

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        return 0.0


cdef inline uint64_t signature_hash(const int32_t* fields, int n_fields) noexcept nogil:
    """64-bit hash of fields[:n_fields] (order-sensitive)."""
    cdef uint64_t h = <uint64_t>n_fields
    cdef int f
    for f in range(n_fields):
        h = mix(h, <uint64_t><uint32_t>fields[f])
    return fmix(h)


cdef inline bint same_signature(const CandidateC* a, const CandidateC* b,
                                int n_fields) noexcept nogil:
    return a.hash == b.hash and memcmp(a.fields, b.fields, n_fields * sizeof(int32_t)) == 0


cdef class CubePruner:
    """The k best combinations at one vertex by cube pruning (see the module docstring).

    ``kbest`` may be called any number of times; its work memory is kept between calls.
    """

    def __cinit__(self):
        self.generation = 0
        self.pops = 0

    cdef void push(self, const HyperedgeC* edges, int32_t e, int32_t i, int32_t j,
                          bint recombination, int n_fields, Combiner combiner) noexcept nogil:
        """Pushes candidate (e, i, j) unless it was pushed before or lies outside the grid."""
        cdef const HyperedgeC* edge = &edges[e]
        cdef Py_ssize_t cell
        cdef CandidateC c
        cdef score_t extra
        if i >= edge.left_len or j >= edge.right_len:
            return
        cell = self.offsets[e] + <Py_ssize_t>i * edge.right_len + j
        if self.visited[cell]:
            return
        self.visited[cell] = 1
        extra = combiner.combine(e, i, j, c.fields)
        if extra != extra:  # NaN: a disallowed combination
            extra = -INFINITY
        c.score = edge.left[i] + edge.right[j] + edge.weight + extra
        c.edge = e
        c.i = i
        c.j = j
        c.hash = signature_hash(c.fields, n_fields) if recombination else 0
        self.candidates.push_back(c)
        self.heap.push_back(pair[score_t, int32_t](
            c.score, -<int32_t>(self.candidates.size() - 1)))
        push_heap(self.heap.begin(), self.heap.end())

    cdef int32_t find_or_add(self, const CandidateC* c, int n_fields) noexcept nogil:
        """Index in ``results`` of the entry with c's signature; if there is none, appends c
        to ``results`` and returns -1."""
        cdef size_t mask = self.slots.size() - 1
        cdef size_t pos = <size_t>(c.hash & mask)
        cdef int32_t index
        while self.stamps[pos] == self.generation:
            index = self.slots[pos]
            if same_signature(&self.results[index], c, n_fields):
                return index
            pos = (pos + 1) & mask
        self.stamps[pos] = self.generation
        self.slots[pos] = <int32_t>self.results.size()
        self.results.push_back(c[0])
        return -1

    cdef void reset_table(self, int32_t k) noexcept nogil:
        """Empties the recombination table, grown to hold k entries (a power of two >= 2k)."""
        cdef size_t size = 16
        while size < 2 * <size_t>k:
            size *= 2
        if self.slots.size() < size:
            self.slots.resize(size)
            self.stamps.assign(size, 0)
            self.generation = 0
        self.generation += 1
        if self.generation == 0:  # wrapped around: forget every old stamp
            self.stamps.assign(self.stamps.size(), 0)
            self.generation = 1

    cdef void sort_results(self) noexcept nogil:
        """Stable insertion sort of ``results``, best first (they are nearly sorted already)."""
        cdef Py_ssize_t a, b, size = <Py_ssize_t>self.results.size()
        cdef CandidateC c
        for a in range(1, size):
            if self.results[a].score > self.results[a - 1].score:
                c = self.results[a]
                b = a
                while b > 0 and c.score > self.results[b - 1].score:
                    self.results[b] = self.results[b - 1]
                    b -= 1
                self.results[b] = c

    cdef int kbest(self, const HyperedgeC* edges, int32_t n_edges, int32_t k,
                   bint recombination, int n_fields, Combiner combiner) noexcept nogil:
        cdef Py_ssize_t total = 0
        cdef int32_t e, index, merged
        cdef CandidateC c
        self.results.clear()
        self.candidates.clear()
        self.heap.clear()
        self.pops = 0
        if k < 1 or n_fields < 0 or n_fields > CUBE_MAX_FIELDS:
            return -1
        self.offsets.resize(n_edges)
        for e in range(n_edges):
            self.offsets[e] = total
            total += <Py_ssize_t>edges[e].left_len * edges[e].right_len
        if <Py_ssize_t>self.visited.size() < total:
            self.visited.resize(total, 0)  # kept all zero between calls
        if recombination:
            self.reset_table(k)
        for e in range(n_edges):
            self.push(edges, e, 0, 0, recombination, n_fields, combiner)
        while not self.heap.empty() and <int32_t>self.results.size() < k:
            pop_heap(self.heap.begin(), self.heap.end())
            index = -self.heap.back().second
            self.heap.pop_back()
            self.pops += 1
            c = self.candidates[index]  # a copy: pushing may move the candidates
            self.push(edges, c.edge, c.i + 1, c.j, recombination, n_fields, combiner)
            self.push(edges, c.edge, c.i, c.j + 1, recombination, n_fields, combiner)
            if not recombination:
                self.results.push_back(c)
                continue
            merged = self.find_or_add(&c, n_fields)
            if merged >= 0 and c.score > self.results[merged].score:
                self.results[merged] = c  # the better one survives
        for index in range(<int32_t>self.candidates.size()):  # restore the all-zero flags
            c = self.candidates[index]
            self.visited[self.offsets[c.edge] + <Py_ssize_t>c.i * edges[c.edge].right_len
                         + c.j] = 0
        self.sort_results()
        return <int>self.results.size()


cdef class TableCombiner(Combiner):
    """A Combiner reading non-local scores and signatures from tables (for tests): ``extra``
    float64 [E, I, J], ``fields`` int32 [E, I, J, F]; counts its calls in ``pushes`` [E, I, J]."""

    cdef const score_t[:, :, ::1] extra
    cdef const int32_t[:, :, :, ::1] fields
    cdef int32_t[:, :, ::1] pushes

    def __init__(self, const score_t[:, :, ::1] extra, const int32_t[:, :, :, ::1] fields,
                 int32_t[:, :, ::1] pushes):
        self.extra = extra
        self.fields = fields
        self.pushes = pushes

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        cdef Py_ssize_t f
        for f in range(self.fields.shape[3]):
            fields[f] = self.fields[edge, i, j, f]
        self.pushes[edge, i, j] += 1
        return self.extra[edge, i, j]


def cube_kbest(lefts, rights, extra, fields, int k, bint recombination=True, weights=None):
    """Python entry to :meth:`CubePruner.kbest` (for tests and examples).

    lefts, rights: E sequences of antecedent scores (each sorted best first, may be empty);
    extra: float64 [E, I, J], the non-local score of (e, i, j), I and J at least the longest
    list; fields: int [E, I, J, F], F <= 8, the signature of (e, i, j); weights: float [E] or
    None (zeros); k >= 1.
    Returns (results, pushes, pops): results float64 [K, 4], rows (score, e, i, j) best first;
    pushes int32 [E, I, J], how often each (e, i, j) was pushed; pops, the number of pops.
    """
    cdef Py_ssize_t E = len(lefts), e
    if len(rights) != E:
        raise ValueError("lefts and rights must have one list per hyperedge")
    extra_array = np.ascontiguousarray(extra, dtype=np.float64)
    fields_array = np.ascontiguousarray(fields, dtype=np.int32)
    if extra_array.ndim != 3 or extra_array.shape[0] != E:
        raise ValueError("extra must have shape [E, I, J]")
    if fields_array.ndim != 4 or fields_array.shape[:3] != extra_array.shape:
        raise ValueError("fields must have shape [E, I, J, F]")
    if fields_array.shape[3] > CUBE_MAX_FIELDS:
        raise ValueError(f"signatures have at most {CUBE_MAX_FIELDS} fields")
    if k < 1:
        raise ValueError("k must be >= 1")
    weight_array = np.zeros(E) if weights is None else np.asarray(weights, dtype=np.float64)
    lists = [(np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, np.float64))
             for a, b in zip(lefts, rights)]
    for a, b in lists:
        if a.ndim != 1 or b.ndim != 1 or len(a) > extra_array.shape[1] \
                or len(b) > extra_array.shape[2]:
            raise ValueError("every list must be 1-D and fit the [E, I, J] tables")
        if np.any(a[1:] > a[:-1]) or np.any(b[1:] > b[:-1]):
            raise ValueError("antecedent lists must be sorted best first")
    pushes = np.zeros(extra_array.shape, dtype=np.int32)
    cdef TableCombiner combiner = TableCombiner(extra_array, fields_array, pushes)
    cdef CubePruner pruner = CubePruner()
    cdef vector[HyperedgeC] edges = vector[HyperedgeC](E)
    cdef const score_t[::1] scores
    for e in range(E):
        scores = lists[e][0]
        edges[e].left = &scores[0] if len(lists[e][0]) else NULL
        edges[e].left_len = <int32_t>len(lists[e][0])
        scores = lists[e][1]
        edges[e].right = &scores[0] if len(lists[e][1]) else NULL
        edges[e].right_len = <int32_t>len(lists[e][1])
        edges[e].weight = weight_array[e]
    cdef int count
    cdef CandidateC c
    cdef int n_fields = <int>fields_array.shape[3]
    with nogil:
        count = pruner.kbest(edges.data(), <int32_t>E, k, recombination, n_fields, combiner)
    results = np.empty((count, 4))
    for e in range(count):
        c = pruner.results[e]
        results[e] = (c.score, c.edge, c.i, c.j)
    return results, pushes, pruner.pops
