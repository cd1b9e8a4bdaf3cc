# cython: language_level=3
"""Generalized Eisner chart with cube pruning (Zhang and McDonald 2012): C interface.

The chart (generalized_eisner.pyx) asks a :class:`ChartScorer` for the score of the
higher-order parts each step completes; a feature model implements one by subclassing it.
"""

cimport cython
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from dparse._ext.cubepruning cimport Combiner, CubePruner, HyperedgeC
from dparse._ext.types cimport head_t, score_t


cdef struct HistoryC:
    # What the chart items remember, so what their signatures contain and what recombination
    # keeps apart; a scorer declares the least its parts need (less history: more merging).
    int modifiers   # 0, 1 or 2: the head's outermost modifiers on the item's side it carries
    bint labels     # ... with their labels (and an incomplete item its arc's label)
    bint valency    # ... and the head's number of modifiers on that side


cdef struct PartContextC:
    # One step of the chart, for the arc head -> modifier (direction: head < modifier is a
    # right arc). Nodes are 0..n, labels are label ids; -1 means "none".
    int32_t head
    int32_t modifier
    int32_t label              # the arc's label
    int32_t sibling            # head's modifier on this side just inside ``modifier`` (nearer the
    int32_t sibling_label      #   head), -1 if ``modifier`` is the innermost
    int32_t sibling2           # the one inside ``sibling``; -1 if none (always -1 at close_parts)
    int32_t sibling2_label
    int32_t position           # modifier's place among head's modifiers on this side, 1 = innermost
    int32_t grandchild         # modifier's outermost modifier on the side this step closes
    int32_t grandchild_label   #   (arc_parts: the inner side, facing the head; close_parts: the
    int32_t grandchild2        #   outer side), and the one inside it; -1 if none
    int32_t grandchild2_label
    int32_t valency            # modifier's number of modifiers on that side (final)


cdef class ChartScorer:
    """Scores the parts completed at each step of the generalized Eisner chart.

    Each arc h -> m of a tree meets the scorer exactly twice: once in ``arc_parts`` when rule (b)
    builds it (with m's inner side complete) and once in ``close_parts`` when rule (a) closes
    h's complete item over m (with m's outer side complete). A part must be scored in exactly
    one of the two calls. Context fields beyond what ``history`` declares (sibling with
    modifiers >= 1, sibling2 and grandchild2 with 2, labels of modifiers with labels, position
    and valency with valency) are those of one derivation the chart kept, not a reliable
    history: recombination may have merged it with others that differ there. The root is
    nobody's modifier: its own valency is never reported.
    """

    cdef readonly HistoryC history   # set by subclasses
    cdef Py_ssize_t size      # nodes n+1 of the sentence it scores; 0: any sentence
    cdef int32_t num_labels   # label ids it accepts are 0 .. num_labels-1; 0: any

    cdef score_t arc_parts(self, const PartContextC* part) noexcept nogil
    # Rule (b), I(h->m) = C(h->r) + C(r+1<-m) + the arc (and its mirror image): the parts that
    # the arc completes with h's modifiers inside it and m's modifiers on the inner side: the
    # (labeled) arc, sibling, tri-sibling, position, inner grandchild and grand-sibling parts,
    # the inner valency of m. The base class scores 0.
    cdef score_t close_parts(self, const PartContextC* part) noexcept nogil
    # Rule (a), C(h->e) = I(h->m) + C(m->e) (and its mirror image): the parts that need m's
    # modifiers on the outer side: outer grandchild and grand-sibling parts, the outer
    # valency of m. The base class scores 0.


cdef struct ItemC:
    # One chart item (a sub-derivation); its score lives in GeneralizedEisner.scores.
    int32_t left          # antecedent items (indices into the item pool); -1 for a lone node
    int32_t right
    int32_t split         # the split point of the rule that built it
    int32_t m1            # head's outermost modifier on the item's side (incomplete item: the
    int32_t l1            #   arc's modifier) and its label; -1 if none
    int32_t m2            # the next modifier inwards and its label; -1 if none
    int32_t l2
    int32_t count         # head's number of modifiers on the item's side


cdef struct EdgeInfoC:
    # What a hyperedge of the cell being built combines.
    int32_t split
    int32_t label         # the arc's label (incomplete cells)
    int32_t left_start    # first item of the left and right antecedent lists in the pool
    int32_t right_start


@cython.final
cdef class GeneralizedEisner(Combiner):
    """The chart and its reusable memory (not thread-safe: one per thread)."""

    cdef CubePruner pruner
    cdef ChartScorer scorer
    cdef int32_t k
    cdef bint recombination
    cdef HistoryC history
    cdef Py_ssize_t N                  # nodes 0..n
    cdef vector[ItemC] items           # every item built; items 0..n are the lone nodes
    cdef vector[score_t] scores        # their scores
    cdef vector[int32_t] cells         # [N, N, 4, 2]: (start, count) of each cell's list
    cdef vector[HyperedgeC] edges      # the cell being built
    cdef vector[EdgeInfoC] info
    cdef int32_t kind                  # the cell being built: kind and span s < t
    cdef int32_t s
    cdef int32_t t

    cdef int fill(self, const char* allowed, const int32_t* labels, int32_t L,
                  bint single_root) noexcept nogil
    # Builds every cell for N nodes (self.N): arc h -> m exists iff allowed[h*N+m]; its
    # candidate labels are labels[(h*N+m)*L + 0..L-1] up to the first negative one (none: label
    # 0). Returns the number of items of the root cell (0: no tree over the allowed arcs).

    # helpers of fill
    cdef void cell(self, int32_t s, int32_t t, int32_t kind, int32_t* start,
                   int32_t* count) noexcept nogil
    cdef int write_signature(self, const ItemC* item, int32_t* fields) noexcept nogil
    cdef void derive(self, int32_t e, int32_t i, int32_t j, ItemC* out,
                     PartContextC* part) noexcept nogil
    cdef void add_edge(self, int32_t split, int32_t label, int32_t left_start,
                       int32_t left_count, int32_t right_start, int32_t right_count) noexcept nogil
    cdef int build(self, int32_t s, int32_t t, int32_t kind, const int32_t* labels,
                   int32_t L) noexcept nogil
    cdef void backtrack(self, int32_t index, int32_t s, int32_t t, int32_t kind,
                        head_t* heads, int32_t* deprels) noexcept nogil
