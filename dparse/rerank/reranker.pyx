# distutils: language = c++
# cython: language_level=3
"""Forest reranking features and decoding (Hayashi, Kondo and Matsumoto 2013, Section 5), in C.

The feature vector of a tree is a sum over its arcs h -> m of

- local features (Section 5.2.1), readable at the hyperedge that adds the arc in a
  shift-reduce forest: the first-order arc features (arcfeatures.pyx, MSTParser's), the sibling
  part (h, s, m) and the tri-sibling part (h, s2, s, m), s and s2 the modifiers of h just
  inside m (o3features.pyx), grandchild parts (h, m, c) with c m's leftmost and its rightmost
  modifier (local models only), PP attachment (m a preposition: h's tag, m's word, the tag of
  m's rightmost modifier) and, with ``guide``, the guide features (whether h -> m is an arc of
  the first stage's 1-best tree, alone and with the tags of h and m);
- non-local features (Section 5.2.2, ``nonlocal`` models), which need every modifier of m: a
  grandchild part (h, m, c) for every modifier c of m (instead of the local ones), a
  grand-sibling part (h, m, c', c) for every c with c' the modifier of m just inside it (or the
  start symbol), coordination (the tags of h, m and c when c has a coordinating conjunction as
  a neighbouring sibling or as a modifier, the latter being UD's attachment of ``cc``) and m's
  number of modifiers on each side (valency).

In a forest of the shift-reduce parser (dparse.transition) every vertex fixes the two
outermost modifiers on each side of its head (they are part of the merge signature), and
modifiers are attached inside out; so the local features of a hyperedge adding h -> m are fixed
by its tails: s, s2 are the head tail's outermost modifiers on m's side, m's outermost modifiers
the modifier tail's. :func:`vertex_outer` computes them and checks that the hyperedges into a
vertex agree. The non-local features of a hyperedge depend on the derivation of its modifier
tail: cube pruning over the forest (:class:`dparse.hypergraph.hypergraph.ForestCube`) gives that as
a k-best item, and :class:`RerankCombiner` scores it.

With ``labels``, every arc is also scored under its best label, as in a labeled graph-based
model: the labeled-arc templates of o3features.pyx pick rows of L label weights, and the arc's
score adds the best label's sum (so these features belong to a tree with labels: the best ones,
:meth:`RerankSentence.best_labels`, or given ones, e.g. gold labels in training).

Weights: float64 [2**arc_bits + 2**ho_bits (+ 2**label_bits * L)]: the first-order region,
one hashed region for every other unlabeled feature (``ho_offset = 2**arc_bits``), then the
label rows (``label_offset = ho_offset + 2**ho_bits``).
"""

from libc.math cimport NAN, isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

cimport cython

from dparse._ext.arcfeatures cimport (
    SentC, arc_features, free_sentence, init_sentence, max_arc_features,
)
from dparse._ext.hashing cimport bucket, fmix, mix
from dparse.hypergraph.hypergraph cimport ForestCombiner, ForestCube, Hypergraph, HypergraphC
from dparse.graph.o3features cimport (
    MAX_LABEL_ROWS, O3C, T_GRAND, T_GSIB, T_SIB, T_TRISIB, T_VALENCY, grand_feats, gsib_feats,
    init_core, label_rows, outer_modifiers, sib_feats, trisib_feats, valency_feats,
)
from dparse._ext.tokens cimport UPOS, WORD, XPOS, token_attr
from dparse._ext.types cimport score_t
from dparse._ext.weights cimport argmax, gather_sum

cdef enum:
    F_GUIDE = 1
    F_NONLOCAL = 2
    # word class flags (``word_class``)
    C_PREP = 1
    C_CONJ = 2
    # most higher-order features of one arc: local; per modifier of m; valency
    HO_LOCAL = 2 * (T_SIB + T_TRISIB + 2 * T_GRAND) + 8
    HO_CHILD = 2 * (T_GRAND + T_GSIB) + 2
    HO_VALENCY = 4 * T_VALENCY
    NONE_ATTR = 0x7FFFFFF1

WORD_CLASSES = {"preposition": C_PREP, "conjunction": C_CONJ}
#: The version of this module's templates (PP attachment, guide, coordination, valency and
#: the grandchild and grand-sibling parts as it reads them), saved with every forest reranker
#: (dparse.templates): a change that gives any arc other features takes the next version.
TEMPLATES_VERSION = 1


cdef struct RerankC:
    int n
    const int32_t* tok        # [n+1, NCOLS]
    const uint8_t* wclass     # [n+1]: C_PREP | C_CONJ flags
    const int32_t* guide      # [n+1] the first stage's 1-best heads (NULL: no guide features)
    int flags
    int arc_bits
    int64_t ho_offset
    int ho_shift
    int n_labels              # L label weights per label row; 0: no label features
    int64_t label_offset      # where the label rows start
    SentC first
    O3C core


cdef inline uint64_t attr(const RerankC* r, int i, int col) noexcept nogil:
    return NONE_ATTR if i < 0 else <uint64_t>token_attr(r.tok, r.n, i, col)


cdef inline uint64_t hashed(const RerankC* r, uint64_t seed, uint64_t a, uint64_t b,
                            uint64_t c) noexcept nogil:
    return bucket(fmix(mix(mix(mix(seed, a), b), c)), 0, r.ho_shift)


cdef int local_feats(const RerankC* r, int h, int m, int s, int s2, int lcm, int rcm,
                     uint64_t* out) noexcept nogil:
    """The local features of h -> m other than the first-order ones (``arc_features``): s, s2
    the modifiers of h just inside m (-1: none), lcm, rcm m's outermost left / right modifiers
    (-1: none). Returns their count."""
    cdef int k = 0, i, g
    k += sib_feats(&r.core, h, s, m, -1, -1, out + k)
    if s >= 0:
        k += trisib_feats(&r.core, h, s2, s, m, -1, -1, -1, out + k)
    if not r.flags & F_NONLOCAL:
        if lcm >= 0:
            k += grand_feats(&r.core, h, m, lcm, -1, -1, out + k)
        if rcm >= 0:
            k += grand_feats(&r.core, h, m, rcm, -1, -1, out + k)
    if r.wclass[m] & C_PREP:
        out[k] = hashed(r, 0x9901, attr(r, h, XPOS), attr(r, m, WORD), attr(r, rcm, XPOS))
        out[k + 1] = hashed(r, 0x9902, attr(r, h, UPOS), attr(r, m, WORD), attr(r, rcm, UPOS))
        k += 2
    if r.flags & F_GUIDE:
        g = r.guide[m] == h
        out[k] = hashed(r, 0x9911, g, h < m, 0)
        out[k + 1] = hashed(r, 0x9912, g, attr(r, h, XPOS), attr(r, m, XPOS))
        out[k + 2] = hashed(r, 0x9913, g, attr(r, h, UPOS), attr(r, m, UPOS))
        k += 3
    for i in range(k):
        out[i] += <uint64_t>r.ho_offset
    return k


cdef int nonlocal_feats(const RerankC* r, int h, int m, const int32_t* heads, int lo, int hi,
                        int32_t* work, uint64_t* out) noexcept nogil:
    """The non-local features of h -> m given the arcs ``heads`` of m's subtree, which lies in
    words lo..hi (other entries are not read); work: 2 * (n + 1) entries."""
    cdef int32_t* kids = work               # m's modifiers, left ones inside out, then right
    cdef int32_t* has_cc = work + r.n + 1   # has_cc[c]: c has a conjunction as a modifier
    cdef int k = 0, nl = 0, nr = 0, x, d, c, prev, nxt, side, first, last, i
    for x in range(m - 1, lo - 1, -1):
        if heads[x] == m:
            kids[nl] = x
            nl += 1
    for x in range(m + 1, hi + 1):
        if heads[x] == m:
            kids[nl + nr] = x
            nr += 1
    for i in range(nl + nr):
        has_cc[kids[i]] = 0
    for d in range(lo, hi + 1):
        if r.wclass[d] & C_CONJ and heads[d] >= 0 and heads[d] != m:
            x = heads[d]
            if lo <= x <= hi and heads[x] == m:
                has_cc[x] = 1
    for side in range(2):
        first = 0 if side == 0 else nl
        last = nl if side == 0 else nl + nr
        prev = -1
        for i in range(first, last):
            c = kids[i]
            nxt = kids[i + 1] if i + 1 < last else -1
            k += grand_feats(&r.core, h, m, c, -1, -1, out + k)
            k += gsib_feats(&r.core, h, m, prev, c, -1, -1, -1, out + k)
            if (has_cc[c] or (prev >= 0 and r.wclass[prev] & C_CONJ)
                    or (nxt >= 0 and r.wclass[nxt] & C_CONJ)):
                out[k] = hashed(r, 0x9921, attr(r, h, XPOS), attr(r, m, XPOS), attr(r, c, XPOS))
                out[k + 1] = hashed(r, 0x9922, attr(r, h, UPOS), attr(r, m, UPOS),
                                    attr(r, c, UPOS))
                k += 2
            prev = c
    k += valency_feats(&r.core, h, m, -1, 0, nl, out + k)
    k += valency_feats(&r.core, h, m, -1, 1, nr, out + k)
    for i in range(k):
        out[i] += <uint64_t>r.ho_offset
    return k


cdef void tree_context(const int32_t* heads, int n, int m, int* s, int* s2, int* lcm,
                       int* rcm) noexcept nogil:
    """For the arc heads[m] -> m of a whole tree: the modifiers s, s2 of its head just inside
    m, and m's outermost modifiers (-1: none)."""
    cdef int h = heads[m], step = 1 if m > h else -1, unused
    outer_modifiers(heads, h, h + step, m, step, s, s2)
    outer_modifiers(heads, m, m - 1, 0, -1, lcm, &unused)
    outer_modifiers(heads, m, m + 1, n + 1, 1, rcm, &unused)


cdef class RerankSentence


cdef inline int32_t tail_headed(const HypergraphC* g, const int32_t* vhead, int32_t e,
                                int32_t word, int32_t* which) noexcept nogil:
    """The tail vertex of hyperedge e headed by ``word`` (-1: none); ``which`` gets its
    position (0 or 1)."""
    cdef int32_t x, t
    for x in range(2):
        t = g.tails[2 * e + x]
        if t >= 0 and vhead[t] == word:
            which[0] = x
            return t
    return -1


cdef int32_t* _int_ptr(a) except NULL:
    cdef int32_t[::1] v = a.reshape(-1)
    return &v[0]


cdef class RerankCombiner(ForestCombiner):
    """The non-local score of combining the items of a hyperedge that adds h -> m: the
    non-local features of h -> m over the modifier tail's item (walked into ``heads``)."""

    cdef RerankSentence sent
    cdef const double* W
    cdef object weights_ref, vhead_ref, vspan_ref, scratch
    cdef const int32_t* vhead
    cdef const int32_t* vspan
    cdef int32_t* heads
    cdef int32_t* labels

    cdef score_t combine(self, int32_t edge, int32_t i, int32_t j,
                         int32_t* fields) noexcept nogil:
        cdef const HypergraphC* g = &self.cube.graph.c
        cdef int32_t ge = self.first_edge + edge, m = g.arc[2 * ge + 1], t, which = 0, x, lo, hi
        cdef int k
        if m < 0:
            return 0.0
        t = tail_headed(g, self.vhead, ge, m, &which)
        if t < 0:
            return 0.0
        lo = self.vspan[2 * t]
        hi = self.vspan[2 * t + 1]
        for x in range(lo, hi + 1):
            self.heads[x] = -1
        self.cube.walk(t, i if which == 0 else j, self.heads, self.labels)
        k = nonlocal_feats(&self.sent.c, g.arc[2 * ge], m, self.heads, lo, hi, self.sent.work,
                           self.sent.buf)
        return gather_sum(self.W, self.sent.buf, k)


def vertex_outer(Hypergraph graph):
    """int32 [V, 4]: the outermost left, second outermost left, outermost right and second
    outermost right modifier (-1: none) of each vertex's head in every derivation of the
    vertex (the goal's row is left -1). ValueError if two hyperedges into a vertex disagree:
    such a forest (not built by the shift-reduce parser) has no local sibling features."""
    cdef const HypergraphC* g = &graph.c
    cdef const int32_t[::1] vhead = np.ascontiguousarray(graph.forest.vertex_head)
    outer = np.full((g.V, 4), -1, dtype=np.int32)
    cdef int32_t[:, ::1] o = outer
    cdef int32_t v, e, h, m, x, H, which
    cdef int32_t cand[4]
    cdef int bad = -1
    with nogil:
        for v in range(g.V):
            if v == g.goal:
                continue
            for e in range(g.edge_start[v], g.edge_start[v + 1]):
                h = vhead[v]
                m = g.arc[2 * e + 1]
                H = tail_headed(g, &vhead[0], e, h, &which)
                for x in range(4):
                    cand[x] = o[H, x] if H >= 0 else -1
                if m >= 0 and m < h:
                    cand[1] = cand[0]
                    cand[0] = m
                elif m >= 0:
                    cand[3] = cand[2]
                    cand[2] = m
                if e == g.edge_start[v]:
                    for x in range(4):
                        o[v, x] = cand[x]
                else:
                    for x in range(4):
                        if o[v, x] != cand[x]:
                            bad = v
            if bad >= 0:
                break
    if bad >= 0:
        raise ValueError(f"the hyperedges into vertex {bad} disagree on the outer modifiers of "
                         "its head: not a forest of the shift-reduce parser")
    return outer


cdef class RerankSentence:
    """One sentence under one feature configuration.

    tokens, morph_ptr, morph: the encoding of dparse.vocab (arcfeatures.pyx); word_class:
    uint8 [n+1] (``WORD_CLASSES`` flags, 0 for other words); guide: int32 [n+1], the first stage's
    1-best heads, or None for a model without guide features; arc_bits, ho_bits: the weight
    layout (module docstring); nonlocal_features: whether the model has the non-local ones;
    label_bits, n_labels: the label rows (n_labels 0: no label features).
    """

    cdef RerankC c
    cdef object refs
    cdef uint64_t* buf          # features of one arc
    cdef int32_t* work          # 2 * (n + 1)
    cdef double* first_cache    # [(n+1) * (n+1)] first-order (+ best label) arc scores, NaN:
    #                             not computed
    cdef int32_t* label_cache   # [(n+1) * (n+1)] the best label of each arc in first_cache
    cdef double* acc            # [L] label scores
    cdef readonly int n
    cdef readonly int64_t size

    def __cinit__(self):
        self.buf = NULL
        self.work = NULL
        self.first_cache = NULL
        self.label_cache = NULL
        self.acc = NULL
        self.c.core.share = NULL
        self.c.first.umask = NULL
        self.c.first.xmask = NULL
        self.c.first.hpart = NULL
        self.c.first.mpart = NULL
        self.c.first.mkeys = NULL

    def __init__(self, const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                 const int32_t[::1] morph, const uint8_t[::1] word_class, guide, int arc_bits,
                 int ho_bits, bint nonlocal_features, int label_bits=0, int n_labels=0):
        cdef int n = tokens.shape[0] - 1
        if n < 1 or word_class.shape[0] != n + 1:
            raise ValueError("need n >= 1 words and word_class of n + 1 entries")
        if not (10 <= arc_bits <= 30 and 10 <= ho_bits <= 30):
            raise ValueError("arc_bits and ho_bits must be in 10..30")
        if n_labels > 0 and not 8 <= label_bits <= 26:
            raise ValueError("label_bits must be in 8..26")
        cdef const int32_t[::1] gv
        self.n = n
        self.c.n = n
        self.c.tok = &tokens[0, 0]
        self.c.wclass = &word_class[0]
        self.c.flags = F_NONLOCAL if nonlocal_features else 0
        self.c.guide = NULL
        if guide is not None:
            gv = np.ascontiguousarray(guide, dtype=np.int32)
            if gv.shape[0] != n + 1:
                raise ValueError("guide heads must have n + 1 entries")
            self.c.guide = &gv[0]
            self.c.flags |= F_GUIDE
        else:
            gv = None
        self.refs = (tokens, morph_ptr, morph, word_class, gv)
        self.c.arc_bits = arc_bits
        self.c.ho_offset = (<int64_t>1) << arc_bits
        self.c.ho_shift = 64 - ho_bits
        self.c.label_offset = self.c.ho_offset + ((<int64_t>1) << ho_bits)
        self.c.n_labels = max(n_labels, 0)
        self.size = self.c.label_offset
        if self.c.n_labels:
            self.size += ((<int64_t>1) << label_bits) * self.c.n_labels
        init_sentence(&self.c.first, tokens, morph_ptr, morph)
        init_core(&self.c.core, tokens, 0, False, label_bits if self.c.n_labels else 10, ho_bits)
        cdef int per_arc = max_arc_features(&self.c.first) + HO_LOCAL
        per_arc = max(per_arc, HO_CHILD * n + HO_VALENCY)
        self.buf = <uint64_t*>malloc(per_arc * sizeof(uint64_t))
        self.work = <int32_t*>malloc(2 * (n + 1) * sizeof(int32_t))
        self.first_cache = <double*>malloc((n + 1) * (n + 1) * sizeof(double))
        self.label_cache = <int32_t*>malloc((n + 1) * (n + 1) * sizeof(int32_t))
        self.acc = <double*>malloc((self.c.n_labels + 1) * sizeof(double))
        if (self.buf == NULL or self.work == NULL or self.first_cache == NULL
                or self.label_cache == NULL or self.acc == NULL):
            raise MemoryError()

    def __dealloc__(self):
        free(self.buf)
        free(self.work)
        free(self.first_cache)
        free(self.label_cache)
        free(self.acc)
        free(self.c.core.share)
        free_sentence(&self.c.first)

    cdef const double* check_weights(self, const double[::1] weights) except NULL:
        if weights.shape[0] != self.size:
            raise ValueError(f"weights must have {self.size} entries, got {weights.shape[0]}")
        return &weights[0]

    def tree_features(self, const int32_t[::1] heads, labels=None):
        """The feature vector of the tree ``heads`` (int32 [n+1], heads[0] == -1) with
        ``labels`` (int32 [n+1] label ids, needed with label features; an arc labeled -1 has no
        label features): weight indices int64 [K], repeated indices counting repeatedly."""
        cdef int n = self.n, m, h, s, s2, lcm, rcm, k, total = 0, cap, r, L = self.c.n_labels
        cdef const int32_t[::1] lab
        if heads.shape[0] != n + 1:
            raise ValueError("heads must have n + 1 entries")
        if L:
            if labels is None:
                raise ValueError("a model with label features needs the tree's labels")
            lab = np.ascontiguousarray(labels, dtype=np.int32)
            if lab.shape[0] != n + 1 or np.asarray(lab)[1:].max() >= L:
                raise ValueError(f"labels must have n + 1 entries below {L}")
        for m in range(1, n + 1):
            if not 0 <= heads[m] <= n or heads[m] == m:
                raise ValueError(f"heads[{m}] = {heads[m]} is not a head")
        cap = (n * (max_arc_features(&self.c.first) + HO_LOCAL + HO_VALENCY + MAX_LABEL_ROWS)
               + n * HO_CHILD)
        out = np.empty(cap, dtype=np.uint64)
        cdef uint64_t[::1] o = out
        with nogil:
            for m in range(1, n + 1):
                h = heads[m]
                tree_context(&heads[0], n, m, &s, &s2, &lcm, &rcm)
                total += arc_features(&self.c.first, h, m, &o[total], self.c.arc_bits)
                if L and lab[m] >= 0:
                    k = label_rows(&self.c.core, h, m, -1, &o[total])
                    for r in range(total, total + k):
                        o[r] = self.c.label_offset + o[r] * L + lab[m]
                    total += k
                k = local_feats(&self.c, h, m, s, s2, lcm, rcm, &o[total])
                total += k
                if self.c.flags & F_NONLOCAL:
                    k = nonlocal_feats(&self.c, h, m, &heads[0], 1, n, self.work, &o[total])
                    total += k
        return out[:total].astype(np.int64)

    cdef double first_order(self, const double* W, int h, int m) noexcept nogil:
        """The first-order score of h -> m, plus its best label's score with label features
        (cached per arc; the label in label_cache)."""
        cdef int at = h * (self.n + 1) + m
        cdef double* slot = &self.first_cache[at]
        cdef int k, r, l, L = self.c.n_labels, best = 0
        cdef const double* row
        if isnan(slot[0]):
            k = arc_features(&self.c.first, h, m, self.buf, self.c.arc_bits)
            slot[0] = gather_sum(W, self.buf, k)
            if L:
                for l in range(L):
                    self.acc[l] = 0.0
                k = label_rows(&self.c.core, h, m, -1, self.buf)
                for r in range(k):
                    row = W + self.c.label_offset + <int64_t>self.buf[r] * L
                    for l in range(L):
                        self.acc[l] += row[l]
                best = argmax(self.acc, L)
                slot[0] += self.acc[best]
            self.label_cache[at] = best if L else -1
        return slot[0]

    cdef void reset_cache(self) noexcept nogil:
        cdef int i
        for i in range((self.n + 1) * (self.n + 1)):
            self.first_cache[i] = NAN

    def best_labels(self, const int32_t[::1] heads, const double[::1] weights):
        """int32 [n+1]: the best label of each arc of ``heads`` under ``weights`` (-1 at 0 and
        without label features)."""
        cdef const double* W = self.check_weights(weights)
        cdef int m
        if heads.shape[0] != self.n + 1:
            raise ValueError("heads must have n + 1 entries")
        out = np.full(self.n + 1, -1, dtype=np.int32)
        cdef int32_t[::1] o = out
        if self.c.n_labels:
            with nogil:
                self.reset_cache()
                for m in range(1, self.n + 1):
                    self.first_order(W, heads[m], m)
                    o[m] = self.label_cache[heads[m] * (self.n + 1) + m]
        return out

    def edge_scores(self, Hypergraph graph, const double[::1] weights):
        """float64 [E]: the local score of every hyperedge of ``graph`` (0 without an arc)."""
        if graph.c.n != self.n:
            raise ValueError(f"the forest has {graph.c.n} words, the sentence {self.n}")
        cdef const double* W = self.check_weights(weights)
        cdef const int32_t[:, ::1] o = vertex_outer(graph)
        cdef const int32_t[::1] vhead = np.ascontiguousarray(graph.forest.vertex_head)
        cdef const HypergraphC* g = &graph.c
        scores = np.zeros(g.E, dtype=np.float64)
        cdef double[::1] sc = scores
        cdef int32_t e, h, m, H, M, s, s2, which
        cdef int k
        with nogil:
            self.reset_cache()
            for e in range(g.E):
                m = g.arc[2 * e + 1]
                if m < 0:
                    continue
                h = g.arc[2 * e]
                H = tail_headed(g, &vhead[0], e, h, &which)
                M = tail_headed(g, &vhead[0], e, m, &which)
                s = s2 = -1
                if H >= 0:
                    s = o[H, 0] if m < h else o[H, 2]
                    s2 = o[H, 1] if m < h else o[H, 3]
                sc[e] = self.first_order(W, h, m)  # uses buf: before local_feats
                k = local_feats(&self.c, h, m, s, s2, o[M, 0] if M >= 0 else -1,
                                o[M, 2] if M >= 0 else -1, self.buf)
                sc[e] += gather_sum(W, self.buf, k)
        return scores

    def best_tree(self, Hypergraph graph, const double[::1] weights, const double[::1] scores,
                  int k=0):
        """The reranked tree: (score, heads int32 [n+1]) of the best derivation under the
        hyperedge scores ``scores`` (float64 [E]: :meth:`edge_scores`, plus beta times the
        first stage's scores at test time) plus, with k >= 1 in a non-local model, the
        non-local scores by cube pruning with k items per vertex (k = 0: Viterbi; the
        non-local features are then left out)."""
        cdef const double* W = self.check_weights(weights)
        if k < 1 or not self.c.flags & F_NONLOCAL:
            score, heads, _ = graph.viterbi(np.asarray(scores))
            return score, heads
        cdef RerankCombiner combiner = RerankCombiner()
        combiner.sent = self
        combiner.W = W
        combiner.weights_ref = weights
        combiner.vhead_ref = np.ascontiguousarray(graph.forest.vertex_head)
        combiner.vspan_ref = np.ascontiguousarray(graph.forest.vertex_span)
        combiner.vhead = _int_ptr(combiner.vhead_ref)
        combiner.vspan = _int_ptr(combiner.vspan_ref)
        combiner.scratch = np.full(2 * (self.n + 1), -1, dtype=np.int32)
        combiner.heads = _int_ptr(combiner.scratch)
        combiner.labels = combiner.heads + self.n + 1
        cube_scores, heads, _ = ForestCube(graph).kbest(k, combiner, False, 0,
                                                        np.asarray(scores))
        return float(cube_scores[0]), heads[0]
