# distutils: language = c++
# cython: language_level=3
"""Generalized higher-order Eisner parsing with cube pruning (Zhang and McDonald 2012).

The chart is first-order Eisner's (Section 3): over nodes 0..n (0 the root), spans s < t hold

- complete items ``C(s->t)`` (``C(s<-t)``): s (t) heads all of s..t and takes no more
  modifiers on that side inside the span; a lone node is the complete item C(s->s);
- incomplete items ``I(s->t)`` (``I(s<-t)``): the arc s -> t (t -> s) with the head's
  modifiers between them and the modifier's modifiers on the head's side;

built by Eisner's two rules, for right-pointing items (left-pointing ones mirror them):

- (b) ``I(h->m) = C(h->r) + C(r+1<-m) + arc(h -l-> m)``, h <= r < m, for each candidate label l;
- (a) ``C(h->e) = I(h->m) + C(m->e)``, h < m <= e.

Every derivation is one projective tree and every projective tree one derivation: the rules
are Eisner's, only the items are richer. Each cell keeps a list of at most k items, best first;
an item remembers the history its scorer's parts need (``HistoryC``: the head's outermost one
or two modifiers on its side with their labels, the head's valency on that side, the arc's
label), and its signature is exactly that history. A cell's list is built from all its
hyperedges (one per split point, and label for (b)) by cube pruning (cubepruning.pyx), which
asks the :class:`ChartScorer` for the parts each combination completes: ``arc_parts`` at (b),
``close_parts`` at (a). With recombination, items of one cell with the same signature merge
(the better survives) and the list holds k distinct signatures.

Arcs and labels: an arc h -> m is built only if ``arc[h, m]`` is finite (-inf or NaN prunes
it); if the allowed arcs admit no projective tree (of the requested kind), the arcs of one
tree with the fewest disallowed arcs (first-order Eisner over 0 / -1 scores) are allowed too.
Each arc carries the candidate labels ``labels[h, m, 0..L-1]`` (best first, ending at the
first negative entry; an arc without any takes label 0). Single root (as ``eisner``): the root
has exactly one child m, built from ``I(0->m) = C(0->0) + C(1<-m)`` and
``C(0->n) = I(0->m) + C(m->n)``; otherwise node 0 heads like any word (never a modifier).

Parts under :class:`ArrayScorer` (what the ``cube`` decoder optimizes; the arrays of
docs/design.md, 'Score arrays and parts', with its outermost semantics; missing arrays count as
zeros, -inf and NaN entries as disallowed, see ArrayScorer):

- ``arc[h, m]``: every arc;
- ``sib[h, s, m]``: every consecutive-sibling part (s == h: m is h's innermost modifier on its
  side), scored at (b) of h -> m;
- ``trisib[h, a, b, c]``: every tri-sibling part, a, b, c consecutive in [h, m1, m2, ...] (h's
  modifiers on one side, innermost first), scored at (b) of h -> c;
- ``grand[g, h, m]``: only when m is h's outermost modifier on its side (the outermost
  grandchildren of g through h, on both sides of h), scored at (b) of g -> h if m lies
  between g and h, else at (a);
- ``gsib[g, h, s, m]``: only when m is h's outermost modifier on its side and s the one inside
  it (s == h if m is the only one), scored with ``grand[g, h, m]``.

A tree scores the sum of these parts: tests/bruteforce.py ``cube_tree_score`` is the reference.
The search is exact under arc parts alone for any k; under arc and sibling parts when
recombination is on and k >= n (a complete item's signature is its last modifier, at most n of
them per cell, and (a) adds nothing, so the first item of each signature is its best; the
incomplete cells, whose signature is empty, are searched exhaustively); in general when
recombination is on and k exceeds the number of signatures of every cell, as then every cell
is searched exhaustively (with every ArrayScorer part: (last, second-to-last modifier) pairs,
k > n (n + 1) / 2). Otherwise cube pruning is approximate.

Cost: O(n^2) cells with O(n L) hyperedges each (fewer with pruned arcs). Without recombination
a cell pops k combinations; with it, pops go on until k distinct signatures, so a cell with
fewer possible signatures than k (an incomplete cell under sibling parts alone: one) explores all
of its up to n L k^2 combinations. Each pop costs O(log) heap work and each push a scorer call.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

import numpy as np

from dparse._ext.cubepruning cimport (
    CUBE_MAX_FIELDS,
    CandidateC,
    Combiner,
    CubePruner,
    HyperedgeC,
)
from dparse._ext.types cimport head_t, score_t

from dparse.graph.eisner import eisner

cdef enum:
    CR = 0     # C(s->t): complete, head s
    CL = 1     # C(s<-t): complete, head t
    IR = 2     # I(s->t): the arc s -> t
    IL = 3     # I(s<-t): the arc t -> s


cdef class ChartScorer:
    """Scores nothing: the base of every scorer (see generalized_eisner.pxd)."""

    def __cinit__(self):
        self.history.modifiers = 0
        self.history.labels = False
        self.history.valency = False
        self.size = 0
        self.num_labels = 0

    cdef score_t arc_parts(self, const PartContextC* part) noexcept nogil:
        return 0.0

    cdef score_t close_parts(self, const PartContextC* part) noexcept nogil:
        return 0.0


cdef inline const ItemC* item_at(vector[ItemC]& items, int32_t index) noexcept nogil:
    return &items[index]


cdef class GeneralizedEisner(Combiner):
    """A reusable chart: ``GeneralizedEisner(k, recombination).parse(arc, scorer, labels)``.

    k >= 1: items kept per cell; recombination: merge items with equal signatures.
    """

    def __init__(self, int k=5, bint recombination=True):
        if k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k}")
        self.k = k
        self.recombination = recombination
        self.pruner = CubePruner()

    # -- cells ------------------------------------------------------------------------------------

    cdef void cell(self, int32_t s, int32_t t, int32_t kind, int32_t* start,
                          int32_t* count) noexcept nogil:
        """The list of cell (s, t, kind): a lone node's item if s == t (complete kinds)."""
        cdef Py_ssize_t at
        if s == t:
            start[0] = s
            count[0] = 1
            return
        at = 2 * ((s * self.N + t) * 4 + kind)
        start[0] = self.cells[at]
        count[0] = self.cells[at + 1]

    cdef int write_signature(self, const ItemC* item, int32_t* fields) noexcept nogil:
        """Writes the signature of an item of the current cell: the history ``self.history``
        asks for. Returns its number of fields (the same for every item of the cell)."""
        cdef int size = 0
        if self.history.modifiers >= 1:
            if self.kind == CR or self.kind == CL:  # an incomplete item's m1 is its span's end
                fields[size] = item.m1
                size += 1
            if self.history.labels:
                fields[size] = item.l1
                size += 1
        if self.history.modifiers >= 2:
            fields[size] = item.m2
            size += 1
            if self.history.labels:
                fields[size] = item.l2
                size += 1
        if self.history.valency:
            fields[size] = item.count
            size += 1
        return size

    cdef void derive(self, int32_t e, int32_t i, int32_t j, ItemC* out,
                     PartContextC* part) noexcept nogil:
        """The item made by hyperedge e of the current cell from its left item i and right item
        j, and the context of the step for the scorer."""
        cdef const EdgeInfoC* edge = &self.info[e]
        cdef const ItemC* a = item_at(self.items, edge.left_start + i)
        cdef const ItemC* b = item_at(self.items, edge.right_start + j)
        cdef const ItemC* head_side
        cdef const ItemC* arc_item
        cdef const ItemC* mod_side
        out.left = edge.left_start + i
        out.right = edge.right_start + j
        out.split = edge.split
        if self.kind == IR or self.kind == IL:
            # (b): the new arc joins the head's history; m's inner side is complete
            if self.kind == IR:
                head_side, mod_side = a, b
                part.head, part.modifier = self.s, self.t
            else:
                head_side, mod_side = b, a
                part.head, part.modifier = self.t, self.s
            out.m1 = part.modifier
            out.l1 = edge.label
            out.m2 = head_side.m1
            out.l2 = head_side.l1
            out.count = head_side.count + 1
            part.label = edge.label
            part.sibling = head_side.m1
            part.sibling_label = head_side.l1
            part.sibling2 = head_side.m2
            part.sibling2_label = head_side.l2
            part.position = out.count
        else:
            # (a): the complete item inherits the arc item's history; m's outer side is complete
            if self.kind == CR:
                arc_item, mod_side = a, b
                part.head = self.s
            else:
                arc_item, mod_side = b, a
                part.head = self.t
            out.m1 = arc_item.m1
            out.l1 = arc_item.l1
            out.m2 = arc_item.m2
            out.l2 = arc_item.l2
            out.count = arc_item.count
            part.modifier = arc_item.m1
            part.label = arc_item.l1
            part.sibling = arc_item.m2
            part.sibling_label = arc_item.l2
            part.sibling2 = -1
            part.sibling2_label = -1
            part.position = arc_item.count
        part.grandchild = mod_side.m1
        part.grandchild_label = mod_side.l1
        part.grandchild2 = mod_side.m2
        part.grandchild2_label = mod_side.l2
        part.valency = mod_side.count

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        cdef ItemC item
        cdef PartContextC part
        self.derive(edge, i, j, &item, &part)
        self.write_signature(&item, fields)
        if self.kind == IR or self.kind == IL:
            return self.scorer.arc_parts(&part)
        return self.scorer.close_parts(&part)

    cdef void add_edge(self, int32_t split, int32_t label, int32_t left_start,
                              int32_t left_count, int32_t right_start,
                              int32_t right_count) noexcept nogil:
        cdef HyperedgeC edge
        cdef EdgeInfoC info
        edge.left = &self.scores[left_start]
        edge.left_len = left_count
        edge.right = &self.scores[right_start]
        edge.right_len = right_count
        edge.weight = 0.0
        info.split = split
        info.label = label
        info.left_start = left_start
        info.right_start = right_start
        self.edges.push_back(edge)
        self.info.push_back(info)

    cdef int build(self, int32_t s, int32_t t, int32_t kind, const int32_t* labels,
                   int32_t L) noexcept nogil:
        """Builds the list of cell (s, t, kind); returns its length (-1 on a bad signature)."""
        cdef int32_t r, m, a_start, a_count, b_start, b_count, label, x, count
        cdef const int32_t* candidates
        cdef Py_ssize_t at
        cdef ItemC item
        cdef PartContextC part
        cdef CandidateC* c
        cdef int32_t fields[CUBE_MAX_FIELDS]
        self.edges.clear()
        self.info.clear()
        self.kind, self.s, self.t = kind, s, t
        if kind == IR or kind == IL:
            # (b) I(s->t) = C(s->r) + C(r+1<-t) + arc, for every split r and candidate label
            if kind == IR:
                candidates = labels + (s * self.N + t) * L
            else:
                candidates = labels + (t * self.N + s) * L
            for r in range(s, t):
                self.cell(s, r, CR, &a_start, &a_count)
                self.cell(r + 1, t, CL, &b_start, &b_count)
                if a_count == 0 or b_count == 0:
                    continue
                for x in range(L):
                    label = candidates[x]
                    if label < 0:
                        if x == 0:  # no candidate at all: label 0
                            self.add_edge(r, 0, a_start, a_count, b_start, b_count)
                        break
                    self.add_edge(r, label, a_start, a_count, b_start, b_count)
        elif kind == CR:
            # (a) C(s->t) = I(s->m) + C(m->t), s < m <= t
            for m in range(s + 1, t + 1):
                self.cell(s, m, IR, &a_start, &a_count)
                self.cell(m, t, CR, &b_start, &b_count)
                if a_count and b_count:
                    self.add_edge(m, -1, a_start, a_count, b_start, b_count)
        else:
            # (a) C(s<-t) = C(s<-m) + I(m<-t), s <= m < t
            for m in range(s, t):
                self.cell(s, m, CL, &a_start, &a_count)
                self.cell(m, t, IL, &b_start, &b_count)
                if a_count and b_count:
                    self.add_edge(m, -1, a_start, a_count, b_start, b_count)
        at = 2 * ((s * self.N + t) * 4 + kind)
        self.cells[at] = <int32_t>self.items.size()
        self.cells[at + 1] = 0
        if self.edges.empty():
            return 0
        count = self.pruner.kbest(self.edges.data(), <int32_t>self.edges.size(), self.k,
                                  self.recombination, self.write_signature(&self.items[0], fields),
                                  self)
        if count < 0:
            return -1
        for x in range(count):
            c = &self.pruner.results[x]
            self.derive(c.edge, c.i, c.j, &item, &part)
            self.items.push_back(item)
            self.scores.push_back(c.score)
        self.cells[at + 1] = count
        return count

    cdef int fill(self, const char* allowed, const int32_t* labels, int32_t L,
                  bint single_root) noexcept nogil:
        cdef Py_ssize_t N = self.N, n = N - 1
        cdef int32_t width, s, t, start, count
        cdef ItemC lone
        self.items.clear()
        self.scores.clear()
        self.cells.assign(N * N * 8, 0)
        lone.left = lone.right = lone.split = -1
        lone.m1 = lone.l1 = lone.m2 = lone.l2 = -1
        lone.count = 0
        for s in range(N):
            self.items.push_back(lone)
            self.scores.push_back(0.0)
        for width in range(1, N):
            for s in range(N - width):
                t = s + width
                if allowed[s * N + t]:
                    if self.build(s, t, IR, labels, L) < 0:
                        return -1
                if s > 0 and allowed[t * N + s]:
                    if self.build(s, t, IL, labels, L) < 0:
                        return -1
                if s > 0:
                    if self.build(s, t, CL, labels, L) < 0:
                        return -1
                # single root: the root's only complete item is C(0->n), over one root arc
                if s > 0 or not single_root or t == n:
                    if self.build(s, t, CR, labels, L) < 0:
                        return -1
        self.cell(0, <int32_t>n, CR, &start, &count)
        return count

    cdef void backtrack(self, int32_t index, int32_t s, int32_t t, int32_t kind,
                        head_t* heads, int32_t* deprels) noexcept nogil:
        """Writes the arcs of item ``index`` of cell (s, t, kind)."""
        cdef ItemC item
        if s == t:
            return
        item = self.items[index]
        if kind == CR:
            self.backtrack(item.left, s, item.split, IR, heads, deprels)
            self.backtrack(item.right, item.split, t, CR, heads, deprels)
        elif kind == CL:
            self.backtrack(item.left, s, item.split, CL, heads, deprels)
            self.backtrack(item.right, item.split, t, IL, heads, deprels)
        else:
            if kind == IR:
                heads[t] = <head_t>s
                deprels[t] = item.l1
            else:
                heads[s] = <head_t>t
                deprels[s] = item.l1
            self.backtrack(item.left, s, item.split, CR, heads, deprels)
            self.backtrack(item.right, item.split + 1, t, CL, heads, deprels)

    def parse(self, arc, ChartScorer scorer not None, labels=None, bint single_root=True):
        """The best projective tree the chart finds.

        arc: float64 [n+1, n+1] (n >= 1); an arc h -> m is built only if arc[h, m] is finite
        (values are not used otherwise: the scorer scores arcs; +inf is a ValueError).
        scorer: what the parts score; labels: int [n+1, n+1, L], L >= 1, each arc's candidate
        labels best first, a negative entry ending the list (None: label 0 for every arc);
        single_root: exactly one word attached to the root.
        Returns (heads int32 [n+1], deprels int32 [n+1], score): heads[0] == deprels[0] == -1,
        deprels[m] the label id of the arc into m, score the tree's total under the scorer.
        """
        arc = np.asarray(arc, dtype=np.float64)
        if arc.ndim != 2 or arc.shape[0] != arc.shape[1] or arc.shape[0] < 2:
            raise ValueError(f"arc must be a square [n+1, n+1] matrix with n >= 1, "
                             f"got shape {arc.shape}")
        cdef Py_ssize_t N = arc.shape[0]
        if np.any(arc == np.inf):
            raise ValueError("arc scores must not be +inf")
        if scorer.size and scorer.size != N:
            raise ValueError(f"the scorer is for {scorer.size - 1} words, arc for {N - 1}")
        if not 0 <= scorer.history.modifiers <= 2:
            raise ValueError(f"scorer history: modifiers must be 0, 1 or 2, "
                             f"got {scorer.history.modifiers}")
        if labels is None:
            labels = np.zeros((N, N, 1), dtype=np.int32)
        label_array = np.asarray(labels)
        if label_array.ndim != 3 or label_array.shape[:2] != (N, N) or label_array.shape[2] < 1 \
                or not np.issubdtype(label_array.dtype, np.integer):
            raise ValueError(f"labels must be an integer array [n+1, n+1, L] with L >= 1, "
                             f"got {label_array.dtype} {label_array.shape}")
        if scorer.num_labels and label_array.max() >= scorer.num_labels:
            raise ValueError(f"label ids must be below {scorer.num_labels}, the scorer's labels")
        cdef const int32_t[:, :, ::1] label_view = np.ascontiguousarray(label_array,
                                                                        dtype=np.int32)
        allowed = np.ascontiguousarray(arc > -np.inf, dtype=np.int8)  # 0 for -inf and NaN
        heads = np.full(N, -1, dtype=np.int32)
        deprels = np.full(N, -1, dtype=np.int32)
        self.scorer = scorer
        self.history = scorer.history
        self.N = N
        try:
            best = self._fill_and_backtrack(allowed, label_view, single_root, heads, deprels)
            if best is None:  # no tree over the allowed arcs: add those of one with the fewest
                penalty = np.where(allowed, 0.0, -1.0)  # disallowed ones (first-order Eisner)
                rescue = eisner(penalty, single_root)
                allowed[rescue[1:], np.arange(1, N)] = 1
                best = self._fill_and_backtrack(allowed, label_view, single_root, heads, deprels)
        finally:
            self.scorer = None
        if best is None:
            raise RuntimeError("generalized Eisner chart: no tree found (a bug)")
        return heads, deprels, best

    def _fill_and_backtrack(self, const char[:, ::1] allowed, const int32_t[:, :, ::1] labels,
                            bint single_root, head_t[::1] heads, int32_t[::1] deprels):
        """Fills the chart and writes the best tree; returns its score (None if none)."""
        cdef int count
        cdef int32_t root, last = <int32_t>(self.N - 1)
        cdef score_t best = -INFINITY
        with nogil:
            count = self.fill(&allowed[0, 0], &labels[0, 0, 0], <int32_t>labels.shape[2],
                              single_root)
            if count > 0:
                root = self.cells[2 * (last * 4 + CR)]
                best = self.scores[root]
                self.backtrack(root, 0, last, CR, &heads[0], &deprels[0])
        return float(best) if count > 0 else None


def cube_parse(arc, ChartScorer scorer not None, labels=None, int k=5,
               bint recombination=True, bint single_root=True):
    """``GeneralizedEisner(k, recombination).parse(arc, scorer, labels, single_root)``."""
    return GeneralizedEisner(k, recombination).parse(arc, scorer, labels, single_root)


# -- scorers from arrays ----------------------------------------------------------------------------

def _finite_floor(arrays, Py_ssize_t parts):
    """A finite stand-in for disallowed (-inf, NaN) entries of ``arrays`` (float64, None
    skipped) so low that a tree with fewer than ``parts`` parts, fewer of them disallowed,
    always outscores one with more: lo - (parts + 1) (hi - lo + 1) over the finite entries
    (0 if there are none). +inf is a ValueError."""
    lo, hi = np.inf, -np.inf
    for name, array in arrays.items():
        if array is None:
            continue
        if np.any(array == np.inf):
            raise ValueError(f"{name} scores must not be +inf")
        finite = array[np.isfinite(array)]
        if finite.size:
            lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
    if lo == np.inf:
        return 0.0
    return lo - (parts + 1) * (hi - lo + 1.0)


def _part_array(name, scores, Py_ssize_t N, int ndim):
    """``scores`` as a C-contiguous float64 array [N]*ndim (None stays None)."""
    if scores is None:
        return None
    array = np.ascontiguousarray(scores, dtype=np.float64)
    if array.shape != (N,) * ndim:
        raise ValueError(f"{name} scores have shape {array.shape}, expected {(N,) * ndim}")
    return array


cdef inline const score_t* data_of(array):
    """Pointer to a C-contiguous float64 array's data, NULL for None."""
    cdef const score_t[::1] flat
    if array is None:
        return NULL
    flat = array.reshape(-1)
    return &flat[0]


cdef class ArrayScorer(ChartScorer):
    """Unlabeled parts from score arrays (docs/design.md, 'Score arrays and parts'; the module
    docstring says which parts):
    ``arc`` float [n+1, n+1]; ``sib``, ``grand`` [n+1]^3; ``trisib``, ``gsib`` [n+1]^4, each
    optional (None: zeros). History: modifiers 2 with trisib or gsib, else 1 with sib or grand,
    else 0; no labels, no valency.

    Disallowed entries (-inf, NaN) score a finite floor below every allowed score, low enough
    that a tree with fewer disallowed parts outscores one with more (a tree has at most 5n
    parts); the chart prunes disallowed arcs itself (they only enter when no tree avoids them).
    """

    cdef object arrays            # the (floored) arrays, kept alive
    cdef const score_t* arc
    cdef const score_t* sib
    cdef const score_t* grand
    cdef const score_t* trisib
    cdef const score_t* gsib

    def __init__(self, arc, sib=None, grand=None, trisib=None, gsib=None):
        N = np.shape(arc)[0] if np.ndim(arc) == 2 else -1
        if N < 2:
            raise ValueError(f"arc must be a square [n+1, n+1] matrix with n >= 1, "
                             f"got shape {np.shape(arc)}")
        arrays = {"arc": _part_array("arc", arc, N, 2), "sib": _part_array("sib", sib, N, 3),
                  "grand": _part_array("grand", grand, N, 3),
                  "trisib": _part_array("trisib", trisib, N, 4),
                  "gsib": _part_array("gsib", gsib, N, 4)}
        floor = _finite_floor(arrays, 5 * (N - 1))
        for name, array in arrays.items():
            if array is not None and not np.all(np.isfinite(array)):
                arrays[name] = np.where(np.isfinite(array), array, floor)
        self.arrays = arrays
        self.arc = data_of(arrays["arc"])
        self.sib = data_of(arrays["sib"])
        self.grand = data_of(arrays["grand"])
        self.trisib = data_of(arrays["trisib"])
        self.gsib = data_of(arrays["gsib"])
        self.size = N
        if trisib is not None or gsib is not None:
            self.history.modifiers = 2
        elif sib is not None or grand is not None:
            self.history.modifiers = 1

    cdef inline score_t outer_parts(self, const PartContextC* p) noexcept nogil:
        """grand and gsib parts of head -> modifier -> grandchild (m's outermost on a side)."""
        cdef Py_ssize_t N = self.size, h = p.head, m = p.modifier, g = p.grandchild
        cdef score_t total = 0.0
        if g < 0:
            return 0.0
        if self.grand != NULL:
            total += self.grand[(h * N + m) * N + g]
        if self.gsib != NULL:
            total += self.gsib[((h * N + m) * N + (p.grandchild2 if p.grandchild2 >= 0 else m))
                               * N + g]
        return total

    cdef score_t arc_parts(self, const PartContextC* p) noexcept nogil:
        cdef Py_ssize_t N = self.size, h = p.head, m = p.modifier
        cdef Py_ssize_t inner = p.sibling if p.sibling >= 0 else h
        cdef score_t total = self.arc[h * N + m]
        if self.sib != NULL:
            total += self.sib[(h * N + inner) * N + m]
        if self.trisib != NULL and p.sibling >= 0:
            total += self.trisib[((h * N + (p.sibling2 if p.sibling2 >= 0 else h)) * N
                                  + p.sibling) * N + m]
        return total + self.outer_parts(p)

    cdef score_t close_parts(self, const PartContextC* p) noexcept nogil:
        return self.outer_parts(p)


cdef class LabeledArrayScorer(ChartScorer):
    """Labeled parts from arrays, a small example of a labeled history scorer (for tests):
    ``arc`` float [n+1, n+1, NL], the labeled arc h -l-> m; ``sib`` [NL+1, NL], every pair of
    consecutive siblings (h, s, m) by the labels of s (NL when s == h) and m; ``grand`` [NL, NL],
    by the labels of h -> m and m -> gc for m's outermost modifier gc on each side; optional
    ``position`` [n+1], by m's place among h's modifiers on its side (1 = innermost), and
    ``valency`` [2, n+1], by each word's number of modifiers on its left (0) and right (1).
    History: modifiers 1 with labels, valency if position or valency is given. Entries must be
    finite.
    """

    cdef object arrays
    cdef const score_t* arc
    cdef const score_t* sib
    cdef const score_t* grand
    cdef const score_t* position
    cdef const score_t* valency

    def __init__(self, arc, sib, grand, position=None, valency=None):
        shape = np.shape(arc)
        if len(shape) != 3 or shape[0] != shape[1] or shape[0] < 2 or shape[2] < 1:
            raise ValueError(f"arc must have shape [n+1, n+1, NL], got {shape}")
        N, NL = shape[0], shape[2]
        arrays = {}
        for name, array, want in (("arc", arc, shape), ("sib", sib, (NL + 1, NL)),
                                  ("grand", grand, (NL, NL)), ("position", position, (N,)),
                                  ("valency", valency, (2, N))):
            if array is None:
                continue
            arrays[name] = np.ascontiguousarray(array, dtype=np.float64)
            if arrays[name].shape != want:
                raise ValueError(f"{name} has shape {arrays[name].shape}, expected {want}")
            if not np.all(np.isfinite(arrays[name])):
                raise ValueError(f"{name} scores must be finite")
        self.arrays = arrays
        self.arc = data_of(arrays["arc"])
        self.sib = data_of(arrays["sib"])
        self.grand = data_of(arrays["grand"])
        self.position = data_of(arrays.get("position"))
        self.valency = data_of(arrays.get("valency"))
        self.size = N
        self.num_labels = NL
        self.history.modifiers = 1
        self.history.labels = True
        self.history.valency = position is not None or valency is not None

    cdef inline score_t side_parts(self, const PartContextC* p, int side) noexcept nogil:
        """grand part of m's outermost modifier on ``side`` (0 left, 1 right), m's valency."""
        cdef score_t total = 0.0
        if p.grandchild >= 0:
            total += self.grand[p.label * self.num_labels + p.grandchild_label]
        if self.valency != NULL:
            total += self.valency[side * self.size + p.valency]
        return total

    cdef score_t arc_parts(self, const PartContextC* p) noexcept nogil:
        cdef Py_ssize_t N = self.size, NL = self.num_labels
        cdef Py_ssize_t inner = p.sibling_label if p.sibling >= 0 else NL
        cdef score_t total = self.arc[(p.head * N + p.modifier) * NL + p.label]
        total += self.sib[inner * NL + p.label]
        if self.position != NULL:
            total += self.position[p.position]
        return total + self.side_parts(p, 0 if p.head < p.modifier else 1)

    cdef score_t close_parts(self, const PartContextC* p) noexcept nogil:
        return self.side_parts(p, 1 if p.head < p.modifier else 0)
