# distutils: language = c++
# cython: language_level=3
"""Third-order part features (Zhang and McDonald 2012, Section 5.1), hashed, computed on the fly.

One feature model, three users that must agree (tests/test_thirdorder.py checks it):

- :class:`O3ChartScorer`, the ``ChartScorer`` of the ``cube`` chart (generalized_eisner.pyx):
  labeled, every group;
- :class:`O3PartScorer`, the ``PartScorer`` of the exact ``eisner3-outermost`` chart: unlabeled
  higher-order parts (arc, sib, grand, trisib, gsib groups only; each arc under its best label);
- :func:`tree_feature_indices`, the sparse feature vector of a whole tree (training updates,
  tree scores).

All three go through the same C functions: one per part kind (``sib_feats``, ``grand_feats``,
...), and ``arc_step_feats`` / ``close_step_feats``, the parts of one chart step (the arc h -> m
built by Eisner's rule (b), resp. closed by rule (a), see generalized_eisner.pxd).

Parts (cube semantics, the indices of docs/design.md, 'Score arrays and parts'; labels are label
ids, "start" stands for a missing inner sibling):

- ``label`` (always): the labeled arc h -l-> m, 2**label_bits rows of L label weights (the
  unlabeled arc features are the first-order ones of arcfeatures.pyx, scored by the caller;
  arcfeatures.pyx exports a first-order model's best label per arc but not its per-label
  scores, so the label templates are this module's, plus, if given, the first-order best label
  as a stacked feature);
- ``sib``: (h -l'-> s, h -l-> m), s the modifier of h just inside m (or start);
- ``grand``: (h -l-> m -l'-> gc), gc m's outermost modifier on a side, for each side of m;
- ``trisib``: (h -> s2, h -> s, h -> m), consecutive, s2 possibly start;
- ``gsib``: (h -> m -> gc2, m -> gc), gc outermost on a side of m, gc2 the one inside it (or
  start);
- ``sibgrand``: (h -> s, h -> m, m -> gc), s as for sib, gc as for grand;
- ``valency``: m's final number of modifiers on each side, with the side and the direction and
  label of m's own arc (the root's valency is never scored);
- ``position``: m's place among h's modifiers on its side (1 = innermost), with the direction.

Each template is a conjunction of word attributes (form, lemma, UPOS, XPOS) of the words of
the part, emitted twice: conjoined with the arc directions and a binned distance, and with the
directions and the tuple of the part's labels (only with ``label_tuples``; without, the labels
are left out of every higher-order part and the second copy is the directions alone).
Weights: ``label_offset`` starts 2**label_bits rows of L, ``ho_offset`` 2**ho_bits weights for
every higher-order group (each group and template hashed with its own seed).
"""

from libc.math cimport INFINITY, NAN
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

cimport cython

from dparse.graph.generalized_eisner cimport ChartScorer, PartContextC
from dparse._ext.hashing cimport bucket, distance_bin, fmix, mix, side
from dparse.graph.partscorer cimport PartScorer
from dparse._ext.tokens cimport LEMMA, NCOLS, UPOS, WORD, XPOS, token_attr
from dparse._ext.types cimport score_t
from dparse._ext.weights cimport add_row, gather_sum

GROUPS = ("sib", "grand", "trisib", "gsib", "sibgrand", "valency", "position")
EXACT_GROUPS = ("sib", "grand", "trisib", "gsib")   # what eisner3-outermost can score
#: The version of the templates below (and of how a part's features are keyed), saved with
#: every model that reads them, third-order models and forest rerankers (dparse.templates):
#: a change that gives any part other features takes the next version.
TEMPLATES_VERSION = 1

# Templates: for each kind, T rows of MAX_ROLES attribute codes (roles in the order of the
# part's words as listed in the module docstring; unused roles A_NONE).
cdef int LABEL_SPEC[T_LABEL][MAX_ROLES]
cdef int SIB_SPEC[T_SIB][MAX_ROLES]
cdef int GRAND_SPEC[T_GRAND][MAX_ROLES]
cdef int TRISIB_SPEC[T_TRISIB][MAX_ROLES]
cdef int GSIB_SPEC[T_GSIB][MAX_ROLES]
cdef int SIBGRAND_SPEC[T_SIBGRAND][MAX_ROLES]
cdef int VALENCY_SPEC[T_VALENCY][MAX_ROLES]
cdef int POSITION_SPEC[T_POSITION][MAX_ROLES]

# label (h, m): unigrams of each side, pairs, context trigrams
LABEL_SPEC[:] = [[A_W, 0, 0, 0], [0, A_W, 0, 0], [A_X, 0, 0, 0], [0, A_X, 0, 0],
                 [A_U, 0, 0, 0], [0, A_U, 0, 0], [A_L, 0, 0, 0], [0, A_L, 0, 0],
                 [A_X, A_X, 0, 0], [A_U, A_U, 0, 0], [A_W, A_X, 0, 0], [A_X, A_W, 0, 0],
                 [A_W, A_W, 0, 0], [0, A_X3, 0, 0], [A_X3, 0, 0, 0], [A_X, A_XR, 0, 0],
                 [A_X, A_XL, 0, 0], [A_L, A_L, 0, 0], [A_XR, A_X, 0, 0], [A_XL, A_X, 0, 0]]
# sib (h, s, m)
SIB_SPEC[:] = [[A_U, A_U, A_U, 0], [A_X, A_X, A_X, 0], [0, A_U, A_U, 0], [0, A_X, A_X, 0],
               [0, A_W, A_X, 0], [0, A_X, A_W, 0], [0, A_W, A_W, 0], [A_W, A_X, A_X, 0],
               [A_X, A_X, A_W, 0], [A_X, A_W, A_X, 0], [A_U, 0, A_U, 0], [A_X, 0, A_X, 0]]
# grand (h, m, gc)
GRAND_SPEC[:] = [[A_U, A_U, A_U, 0], [A_X, A_X, A_X, 0], [A_U, 0, A_U, 0], [A_X, 0, A_X, 0],
                 [A_W, A_X, A_X, 0], [A_X, A_W, A_X, 0], [A_X, A_X, A_W, 0], [A_W, 0, A_X, 0],
                 [A_X, 0, A_W, 0], [A_L, 0, A_L, 0]]
# trisib (h, s2, s, m)
TRISIB_SPEC[:] = [[A_X, A_X, A_X, A_X], [A_U, A_U, A_U, A_U], [0, A_X, A_X, A_X],
                  [0, A_U, A_U, A_U], [A_X, A_X, 0, A_X], [0, A_X, 0, A_X]]
# gsib (h, m, gc2, gc)
GSIB_SPEC[:] = [[A_X, A_X, A_X, A_X], [A_U, A_U, A_U, A_U], [0, A_X, A_X, A_X],
                [A_X, 0, A_X, A_X], [A_X, A_X, 0, A_X], [0, A_U, A_U, A_U]]
# sibgrand (h, s, m, gc)
SIBGRAND_SPEC[:] = [[A_X, A_X, A_X, A_X], [A_U, A_U, A_U, A_U], [A_X, 0, A_X, A_X],
                    [0, A_X, A_X, A_X], [A_X, A_X, 0, A_X]]
# valency (h, m)
VALENCY_SPEC[:] = [[0, A_X, 0, 0], [0, A_U, 0, 0], [0, A_W, 0, 0], [A_X, A_X, 0, 0]]
# position (h, m)
POSITION_SPEC[:] = [[A_X, A_X, 0, 0], [A_U, A_U, 0, 0], [A_X, 0, 0, 0], [0, A_X, 0, 0],
                    [0, A_W, 0, 0]]

cdef int KIND_T[N_KINDS]
KIND_T[:] = [T_LABEL, T_SIB, T_GRAND, T_TRISIB, T_GSIB, T_SIBGRAND, T_VALENCY, T_POSITION]


cdef inline const int* spec_row(int kind, int t) noexcept nogil:
    if kind == K_LABEL:
        return LABEL_SPEC[t]
    if kind == K_SIB:
        return SIB_SPEC[t]
    if kind == K_GRAND:
        return GRAND_SPEC[t]
    if kind == K_TRISIB:
        return TRISIB_SPEC[t]
    if kind == K_GSIB:
        return GSIB_SPEC[t]
    if kind == K_SIBGRAND:
        return SIBGRAND_SPEC[t]
    if kind == K_VALENCY:
        return VALENCY_SPEC[t]
    return POSITION_SPEC[t]


cdef uint64_t attribute(const int32_t* tok, int n, int i, int code) noexcept nogil:
    """The attribute id (code A_*) of node i; the start symbol (i == n+1) is START_ID."""
    if i == n + 1:
        return START_ID
    if code == A_W:
        return <uint64_t>token_attr(tok, n, i, WORD)
    if code == A_L:
        return <uint64_t>token_attr(tok, n, i, LEMMA)
    if code == A_U:
        return <uint64_t>token_attr(tok, n, i, UPOS)
    if code == A_X:
        return <uint64_t>token_attr(tok, n, i, XPOS)
    if code == A_X3:
        return mix(mix(<uint64_t>token_attr(tok, n, i - 1, XPOS),
                       <uint64_t>token_attr(tok, n, i, XPOS)),
                   <uint64_t>token_attr(tok, n, i + 1, XPOS))
    if code == A_XR:
        return mix(<uint64_t>token_attr(tok, n, i, XPOS) + 17,
                   <uint64_t>token_attr(tok, n, i + 1, XPOS))
    return mix(<uint64_t>token_attr(tok, n, i - 1, XPOS) + 29,
               <uint64_t>token_attr(tok, n, i, XPOS))


cdef int init_core(O3C* c, const int32_t[:, ::1] tokens, int groups, bint label_tuples,
                   int label_bits, int ho_bits) except -1:
    """Computes every word's share of every template in every role."""
    if tokens.shape[1] != NCOLS:
        raise ValueError(f"tokens must have {NCOLS} columns, got {tokens.shape[1]}")
    cdef int n = tokens.shape[0] - 1, kind, t, r, i, code, slot
    cdef const int32_t* tok = &tokens[0, 0]
    cdef const int* row
    c.n = n
    c.groups = groups
    c.label_tuples = label_tuples
    c.label_shift = 64 - label_bits
    c.ho_shift = 64 - ho_bits
    c.slots = 0
    for kind in range(N_KINDS):
        c.kind_start[kind] = c.slots
        c.slots += KIND_T[kind] * MAX_ROLES
    c.share = <uint64_t*>malloc((n + 2) * c.slots * sizeof(uint64_t))
    if c.share == NULL:
        raise MemoryError()
    for i in range(n + 2):
        for kind in range(N_KINDS):
            for t in range(KIND_T[kind]):
                row = spec_row(kind, t)
                for r in range(MAX_ROLES):
                    slot = c.kind_start[kind] + t * MAX_ROLES + r
                    code = row[r]
                    if code == A_NONE:
                        c.share[i * c.slots + slot] = 0
                    else:
                        c.share[i * c.slots + slot] = side(
                            <uint64_t>(100003 * (kind + 1) + 1009 * t + 31 * r),
                            attribute(tok, n, i, code), <uint64_t>code, 0)
    return 0


cdef inline uint64_t key_of(const O3C* c, int kind, int t, int w0, int w1, int w2,
                            int w3) noexcept nogil:
    """Template t of ``kind`` over the words w0..w3 in its roles (-1: unused role)."""
    cdef const uint64_t* base = c.share + c.kind_start[kind] + t * MAX_ROLES
    cdef uint64_t key = 0
    if w0 >= 0:
        key ^= base[w0 * c.slots]
    if w1 >= 0:
        key ^= base[w1 * c.slots + 1]
    if w2 >= 0:
        key ^= base[w2 * c.slots + 2]
    if w3 >= 0:
        key ^= base[w3 * c.slots + 3]
    return key


cdef inline int emit(const O3C* c, int kind, int w0, int w1, int w2, int w3, uint64_t plain,
                     uint64_t labeled, uint64_t* out) noexcept nogil:
    """Every template of ``kind`` over the words, conjoined with ``plain`` and ``labeled``."""
    cdef int t, k = 0
    cdef uint64_t key
    for t in range(KIND_T[kind]):
        key = key_of(c, kind, t, w0, w1, w2, w3)
        out[k] = bucket(key, plain, c.ho_shift)
        out[k + 1] = bucket(key, labeled, c.ho_shift)
        k += 2
    return k


cdef inline uint64_t context(uint64_t kind, uint64_t a, uint64_t b, uint64_t c_,
                             uint64_t d) noexcept nogil:
    return fmix(mix(mix(mix(mix(kind * <uint64_t>0x51ED27, a), b), c_), d))


cdef inline int lab(const O3C* c, int label) noexcept nogil:
    """A label id as conjoined (0 when label tuples are off or there is no label)."""
    return label + 1 if c.label_tuples and label >= 0 else 0


cdef inline int start_or(const O3C* c, int word, int head) noexcept nogil:
    """``word``, or the start symbol row when it is missing (-1) or the head itself."""
    return c.n + 1 if word < 0 or word == head else word


# -- one function per part kind --------------------------------------------------------------------

cdef int sib_feats(const O3C* c, int h, int s, int m, int ls, int lm,
                   uint64_t* out) noexcept nogil:
    """sib part (h, s, m): s h's modifier just inside m, -1 or h for none; labels ls, lm."""
    cdef int right = m > h, inner = start_or(c, s, h)
    cdef int gap = m - (h if inner > c.n else s)
    if gap < 0:
        gap = -gap
    return emit(c, K_SIB, h, inner, m, -1,
                context(1, right, distance_bin(gap), 0, 0),
                context(2, right, lab(c, ls if inner <= c.n else -1), lab(c, lm), 0), out)


cdef int grand_feats(const O3C* c, int h, int m, int gc, int l, int lgc,
                     uint64_t* out) noexcept nogil:
    """grand part (h, m, gc): gc an outermost modifier of m; labels l (h -> m), lgc."""
    cdef int dirs = 2 * (h < m) + (m < gc)
    cdef int gap = gc - m if gc > m else m - gc
    return emit(c, K_GRAND, h, m, gc, -1, context(3, dirs, distance_bin(gap), 0, 0),
                context(4, dirs, lab(c, l), lab(c, lgc), 0), out)


cdef int trisib_feats(const O3C* c, int h, int s2, int s, int m, int ls2, int ls, int lm,
                      uint64_t* out) noexcept nogil:
    """trisib part (h, s2, s, m): s2 -1 or h for the start symbol."""
    cdef int right = m > h, inner = start_or(c, s2, h)
    cdef int gap = m - s if m > s else s - m
    return emit(c, K_TRISIB, h, inner, s, m, context(5, right, distance_bin(gap), 0, 0),
                context(6, right, lab(c, ls2 if inner <= c.n else -1), lab(c, ls),
                        lab(c, lm)), out)


cdef int gsib_feats(const O3C* c, int h, int m, int gc2, int gc, int l, int lgc2, int lgc,
                    uint64_t* out) noexcept nogil:
    """gsib part (h, m, gc2, gc): gc outermost on a side of m, gc2 inside it (-1 or m: start)."""
    cdef int dirs = 2 * (h < m) + (m < gc), inner = start_or(c, gc2, m)
    return emit(c, K_GSIB, h, m, inner, gc, context(7, dirs, 0, 0, 0),
                context(8, dirs, lab(c, l), lab(c, lgc2 if inner <= c.n else -1),
                        lab(c, lgc)), out)


cdef int sibgrand_feats(const O3C* c, int h, int s, int m, int gc, int ls, int l, int lgc,
                        uint64_t* out) noexcept nogil:
    """sibgrand part (h, s, m, gc): s as for sib (-1 or h: start), gc as for grand."""
    cdef int dirs = 2 * (h < m) + (m < gc), inner = start_or(c, s, h)
    return emit(c, K_SIBGRAND, h, inner, m, gc, context(9, dirs, 0, 0, 0),
                context(10, dirs, lab(c, ls if inner <= c.n else -1), lab(c, l), lab(c, lgc)),
                out)


cdef int valency_feats(const O3C* c, int h, int m, int l, int right_side, int count,
                       uint64_t* out) noexcept nogil:
    """valency of m on one side (right_side 1: its right modifiers), m's arc h -l-> m."""
    cdef int v = count if count < 6 else 6
    return emit(c, K_VALENCY, h, m, -1, -1, context(11, right_side, h < m, v, 0),
                context(12, right_side, h < m, v, lab(c, l)), out)


cdef int position_feats(const O3C* c, int h, int m, int l, int position,
                        uint64_t* out) noexcept nogil:
    """position of m among h's modifiers on its side (1 = innermost)."""
    cdef int p = position if position < 6 else 6
    return emit(c, K_POSITION, h, m, -1, -1, context(13, h < m, p, 0, 0),
                context(14, h < m, p, lab(c, l), 0), out)


cdef int label_rows(const O3C* c, int h, int m, int first, uint64_t* out) noexcept nogil:
    """Rows (< 2**label_bits) of the labeled-arc features of h -> m (every label's weights
    are a row of L); ``first`` (>= 0) is the first-order model's best label of the arc, a
    stacked feature alone and with m's XPOS."""
    cdef int t, k = 0, right = h < m, gap = m - h if m > h else h - m
    cdef uint64_t key
    cdef uint64_t plain = context(15, right, 0, 0, 0)
    cdef uint64_t far = context(16, right, distance_bin(gap), 0, 0)
    for t in range(T_LABEL):
        key = key_of(c, K_LABEL, t, h, m, -1, -1)
        out[k] = bucket(key, plain, c.label_shift)
        k += 1
        if t >= 8:
            out[k] = bucket(key, far, c.label_shift)
            k += 1
    if first >= 0:
        key = fmix(<uint64_t>(0x5EED0000 + first))
        out[k] = bucket(key, plain, c.label_shift)
        out[k + 1] = bucket(key ^ key_of(c, K_LABEL, 3, -1, m, -1, -1), plain, c.label_shift)
        k += 2
    return k


# -- one chart step --------------------------------------------------------------------------------

cdef int side_feats(const O3C* c, const PartContextC* p, int right_side,
                    uint64_t* out) noexcept nogil:
    """Parts of h -> m that need m's modifiers on one (now complete) side."""
    cdef int k = 0, g = c.groups
    if p.grandchild >= 0:
        if g & G_GRAND:
            k += grand_feats(c, p.head, p.modifier, p.grandchild, p.label, p.grandchild_label,
                             out + k)
        if g & G_GSIB:
            k += gsib_feats(c, p.head, p.modifier, p.grandchild2, p.grandchild, p.label,
                            p.grandchild2_label, p.grandchild_label, out + k)
        if g & G_SIBGRAND:
            k += sibgrand_feats(c, p.head, p.sibling, p.modifier, p.grandchild,
                                p.sibling_label, p.label, p.grandchild_label, out + k)
    if g & G_VALENCY:
        k += valency_feats(c, p.head, p.modifier, p.label, right_side, p.valency, out + k)
    return k


cdef int head_side_feats(const O3C* c, const PartContextC* p, uint64_t* out) noexcept nogil:
    """Parts of h -> m that need h's modifiers inside m (rule (b))."""
    cdef int k = 0, g = c.groups, h = p.head, m = p.modifier
    if g & G_SIB:
        k += sib_feats(c, h, p.sibling, m, p.sibling_label, p.label, out + k)
    if g & G_TRISIB and p.sibling >= 0:
        k += trisib_feats(c, h, p.sibling2, p.sibling, m, p.sibling2_label, p.sibling_label,
                          p.label, out + k)
    if g & G_POSITION:
        k += position_feats(c, h, m, p.label, p.position, out + k)
    return k


cdef int arc_step_feats(const O3C* c, const PartContextC* p, uint64_t* out) noexcept nogil:
    """Higher-order features of rule (b) building h -> m (ChartScorer.arc_parts)."""
    cdef int k = head_side_feats(c, p, out)
    return k + side_feats(c, p, p.modifier < p.head, out + k)


cdef int close_step_feats(const O3C* c, const PartContextC* p, uint64_t* out) noexcept nogil:
    """Higher-order features of rule (a) closing h's item over m (ChartScorer.close_parts)."""
    return side_feats(c, p, p.modifier > p.head, out)


# -- sentences and scorers -------------------------------------------------------------------------

cdef class O3Sentence:
    """One sentence scored under one weight vector: the labeled arc scores of the allowed arcs,
    each arc's candidate labels, and the feature core the scorers share.

    tokens: int32 [n+1, NCOLS] (arcfeatures encoding); weights: float32 or float64 [size], the
    whole weight vector; unlabeled: float64 [n+1, n+1], the first-order unlabeled score of each
    allowed arc, -inf for the others; label_offset, ho_offset: where the label rows and the
    higher-order weights start; label_bits, ho_bits, num_labels: their sizes; groups: names
    from GROUPS; label_tuples: labels in higher-order features; labels_per_arc: candidates kept
    per arc (best first by labeled arc score, cost included); gold_heads, gold_labels (int32
    [n+1], optional):
    add the labeled Hamming cost (a wrong head 2, a right head with a wrong label 1);
    first_labels (int32 [n+1, n+1], optional): the first-order model's best label of every
    arc, a stacked label feature.

    ``arc`` (float64 [n+1, n+1]): each allowed arc's score under its best candidate label, cost
    included (-inf if not allowed); ``candidates`` (int32 [n+1, n+1, labels_per_arc], -1
    padded).
    """

    cdef O3C core
    cdef const float* w32
    cdef const double* w64
    cdef object weights_ref
    cdef readonly object arc
    cdef readonly object candidates
    cdef readonly object labeled       # float64 [n+1, n+1, L]
    cdef const double* lab_data
    cdef const double* arc_data
    cdef readonly object first_labels  # int32 [n+1, n+1] or None
    cdef const int32_t* first
    cdef readonly int num_labels
    cdef readonly int groups_mask
    cdef readonly bint label_tuples
    cdef int64_t label_offset, ho_offset

    def __cinit__(self):
        self.core.share = NULL

    def __init__(self, const int32_t[:, ::1] tokens, weights, unlabeled, int64_t label_offset,
                 int label_bits, int64_t ho_offset, int ho_bits, int num_labels, groups,
                 bint label_tuples, int labels_per_arc, gold_heads=None, gold_labels=None,
                 first_labels=None):
        cdef int n = tokens.shape[0] - 1, N = n + 1, h, m, l, i, nr, L = num_labels, K
        unknown = set(groups) - set(GROUPS)
        if unknown:
            raise ValueError(f"unknown feature group(s) {sorted(unknown)}; known: {GROUPS}")
        if labels_per_arc < 1 or num_labels < 1:
            raise ValueError("labels_per_arc and num_labels must be >= 1")
        cdef int mask = 0
        for i, name in enumerate(GROUPS):
            if name in groups:
                mask |= 1 << i
        self.groups_mask = mask
        self.label_tuples = label_tuples
        self.num_labels = L
        self.label_offset = label_offset
        self.ho_offset = ho_offset
        weights = np.asarray(weights)
        need = max(label_offset + ((<int64_t>1) << label_bits) * L,
                   ho_offset + ((<int64_t>1) << ho_bits))
        if weights.ndim != 1 or weights.shape[0] < need:
            raise ValueError(f"weights must be a vector of at least {need} entries")
        cdef const float[::1] v32
        cdef const double[::1] v64
        if weights.dtype == np.float32:
            weights = np.ascontiguousarray(weights)
            v32 = weights
            self.w32 = &v32[0]
            self.w64 = NULL
        else:
            weights = np.ascontiguousarray(weights, dtype=np.float64)
            v64 = weights
            self.w64 = &v64[0]
            self.w32 = NULL
        self.weights_ref = weights
        cdef const double[:, ::1] u = np.ascontiguousarray(unlabeled, dtype=np.float64)
        if u.shape[0] != N or u.shape[1] != N:
            raise ValueError(f"unlabeled must be [{N}, {N}]")
        cdef bint cost = gold_heads is not None
        cdef const int32_t[::1] gh
        cdef const int32_t[::1] gl
        if cost:
            gh = np.ascontiguousarray(gold_heads, dtype=np.int32)
            gl = np.ascontiguousarray(gold_labels, dtype=np.int32)
            if gh.shape[0] != N or gl.shape[0] != N:
                raise ValueError("gold heads and labels must be [n+1]")
        cdef const int32_t[:, ::1] fl
        self.first = NULL
        if first_labels is not None:
            self.first_labels = np.ascontiguousarray(first_labels, dtype=np.int32)
            fl = self.first_labels
            if fl.shape[0] != N or fl.shape[1] != N:
                raise ValueError(f"first_labels must be [{N}, {N}]")
            self.first = &fl[0, 0]
        init_core(&self.core, tokens, mask, label_tuples, label_bits, ho_bits)
        K = min(labels_per_arc, L)
        labeled = np.full((N, N, L), -np.inf, dtype=np.float64)
        arc = np.full((N, N), -np.inf, dtype=np.float64)
        cands = np.full((N, N, K), -1, dtype=np.int32)
        cdef double[:, :, ::1] lv = labeled
        cdef double[:, ::1] av = arc
        cdef int32_t[:, :, ::1] cv = cands
        cdef uint64_t rows[MAX_LABEL_ROWS]
        cdef double* acc = <double*>malloc(L * sizeof(double))
        cdef const float* w32
        cdef double base, best, val
        cdef int j, x, pick
        if acc == NULL:
            raise MemoryError()
        with nogil:
            for h in range(N):
                for m in range(1, N):
                    base = u[h, m]
                    if h == m or not base > -INFINITY:
                        continue
                    nr = label_rows(&self.core, h, m, self.first_label(h, m), rows)
                    memset(acc, 0, L * sizeof(double))
                    if self.w32 != NULL:  # summed in double, as every other score
                        for i in range(nr):
                            w32 = self.w32 + label_offset + <int64_t>rows[i] * L
                            for l in range(L):
                                acc[l] += w32[l]
                    else:
                        for i in range(nr):
                            add_row(acc, self.w64 + label_offset + <int64_t>rows[i] * L, L)
                    for l in range(L):
                        val = base + acc[l]
                        if cost:
                            if gh[m] != h:
                                val += 2.0
                            elif gl[m] != l:
                                val += 1.0
                        lv[h, m, l] = val
                    # the K best labels by labeled score, cost included (choosing them
                    # without the cost gave 0.3 lower dev LAS), best first (ties: smaller id)
                    for x in range(K):
                        pick = -1
                        best = -INFINITY
                        for l in range(L):
                            val = lv[h, m, l]
                            if pick < 0 or val > best:
                                for j in range(x):
                                    if cv[h, m, j] == l:
                                        break
                                else:
                                    pick = l
                                    best = val
                        cv[h, m, x] = pick
                    best = -INFINITY
                    for x in range(K):
                        if lv[h, m, cv[h, m, x]] > best:
                            best = lv[h, m, cv[h, m, x]]
                    av[h, m] = best
        free(acc)
        self.arc = arc
        self.candidates = cands
        self.labeled = labeled
        self.lab_data = &lv[0, 0, 0]
        self.arc_data = &av[0, 0]

    def __dealloc__(self):
        free(self.core.share)

    @property
    def n(self):
        return self.core.n

    cdef inline double gather(self, const uint64_t* feats, int nf) noexcept nogil:
        if self.w32 != NULL:
            return gather_sum(self.w32 + self.ho_offset, feats, nf)
        return gather_sum(self.w64 + self.ho_offset, feats, nf)

    cdef inline int first_label(self, int h, int m) noexcept nogil:
        """The first-order best label of h -> m (-1 without first-order labels)."""
        if self.first == NULL:
            return -1
        return self.first[h * (self.core.n + 1) + m]

    cdef inline double labeled_arc(self, int h, int m, int l) noexcept nogil:
        cdef Py_ssize_t N = self.core.n + 1
        return self.lab_data[(h * N + m) * self.num_labels + l]


cdef struct MemoC:
    # A remembered score: the packed fields it depends on (key[0] all ones: empty).
    uint64_t key[3]
    double score


cdef enum:
    MEMO_BITS = 12


cdef inline double memo_lookup(MemoC* table, uint64_t a, uint64_t b, uint64_t c_,
                               MemoC** slot) noexcept nogil:
    """The remembered score of (a, b, c_), NaN if none; ``slot`` is where to remember it."""
    cdef MemoC* e = &table[fmix(a ^ mix(b, c_)) >> (64 - MEMO_BITS)]
    slot[0] = e
    if e.key[0] == a and e.key[1] == b and e.key[2] == c_:
        return e.score
    return NAN


cdef inline double memo_store(MemoC* e, uint64_t a, uint64_t b, uint64_t c_,
                              double score) noexcept nogil:
    e.key[0] = a
    e.key[1] = b
    e.key[2] = c_
    e.score = score
    return score


cdef inline uint64_t pack4(int a, int b, int c_, int d) noexcept nogil:
    """Four fields in -1 .. 65534 as one key word."""
    return (<uint64_t>(a + 1) | (<uint64_t>(b + 1) << 16) | (<uint64_t>(c_ + 1) << 32)
            | (<uint64_t>(d + 1) << 48))


cdef class O3ChartScorer(ChartScorer):
    """The ``cube`` chart's scorer for an :class:`O3Sentence` (labeled, every group).

    The chart asks for the same parts many times (one item against several others, several
    split points with the same histories), so the two halves of a step's score, the head's
    side (sib, trisib, position) and the modifier's side (grand, gsib, sibgrand, valency), are
    remembered in small direct-mapped tables keyed by every field they read.
    """

    cdef readonly O3Sentence sentence
    cdef MemoC* head_memo
    cdef MemoC* side_memo

    def __cinit__(self):
        self.head_memo = NULL
        self.side_memo = NULL

    def __dealloc__(self):
        free(self.head_memo)
        free(self.side_memo)

    def __init__(self, O3Sentence sentence not None):
        cdef int g = sentence.groups_mask
        if sentence.core.n + 2 >= 65535 or sentence.num_labels >= 65535:
            raise ValueError("sentences and label sets are limited to 65533 entries")
        self.head_memo = <MemoC*>malloc((1 << MEMO_BITS) * sizeof(MemoC))
        self.side_memo = <MemoC*>malloc((1 << MEMO_BITS) * sizeof(MemoC))
        if self.head_memo == NULL or self.side_memo == NULL:
            raise MemoryError()
        memset(self.head_memo, 0xFF, (1 << MEMO_BITS) * sizeof(MemoC))
        memset(self.side_memo, 0xFF, (1 << MEMO_BITS) * sizeof(MemoC))
        self.sentence = sentence
        self.size = sentence.core.n + 1
        self.num_labels = sentence.num_labels
        if g & (G_TRISIB | G_GSIB | G_SIBGRAND):
            self.history.modifiers = 2
        elif g & (G_SIB | G_GRAND):
            self.history.modifiers = 1
        else:
            self.history.modifiers = 0
        self.history.labels = sentence.label_tuples and self.history.modifiers > 0
        self.history.valency = (g & (G_VALENCY | G_POSITION)) != 0

    cdef inline double head_side(self, const PartContextC* p) noexcept nogil:
        cdef uint64_t feats[MAX_STEP_FEATS]
        cdef MemoC* slot
        cdef uint64_t a = pack4(p.head, p.modifier, p.sibling, p.sibling2)
        cdef uint64_t b = pack4(p.label, p.sibling_label, p.sibling2_label, p.position)
        cdef double score = memo_lookup(self.head_memo, a, b, 0, &slot)
        if score == score:
            return score
        score = self.sentence.gather(feats, head_side_feats(&self.sentence.core, p, feats))
        return memo_store(slot, a, b, 0, score)

    cdef inline double mod_side(self, const PartContextC* p, int right_side) noexcept nogil:
        cdef uint64_t feats[MAX_STEP_FEATS]
        cdef MemoC* slot
        cdef uint64_t a = pack4(p.head, p.modifier, p.grandchild, p.grandchild2)
        cdef uint64_t b = pack4(p.label, p.grandchild_label, p.grandchild2_label, p.valency)
        cdef uint64_t c_ = pack4(p.sibling, p.sibling_label, right_side, 0)
        cdef double score = memo_lookup(self.side_memo, a, b, c_, &slot)
        if score == score:
            return score
        score = self.sentence.gather(feats, side_feats(&self.sentence.core, p, right_side,
                                                       feats))
        return memo_store(slot, a, b, c_, score)

    cdef score_t arc_parts(self, const PartContextC* part) noexcept nogil:
        cdef int l = part.label if part.label >= 0 else 0
        return (self.sentence.labeled_arc(part.head, part.modifier, l) + self.head_side(part)
                + self.mod_side(part, part.modifier < part.head))

    cdef score_t close_parts(self, const PartContextC* part) noexcept nogil:
        return self.mod_side(part, part.modifier > part.head)


cdef class O3PartScorer(PartScorer):
    """The exact ``eisner3-outermost`` chart's scorer for an :class:`O3Sentence`: unlabeled
    parts (each arc under its best label; groups sib, grand, trisib, gsib only)."""

    cdef readonly O3Sentence sentence

    def __init__(self, O3Sentence sentence not None):
        if sentence.groups_mask & (G_SIBGRAND | G_VALENCY | G_POSITION) or \
                sentence.label_tuples:
            raise ValueError(f"the exact third-order chart scores only the groups "
                             f"{', '.join(EXACT_GROUPS)}, without label tuples")
        PartScorer.__init__(self, sentence.core.n)
        self.sentence = sentence

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        """The arc under its best candidate label (``O3Sentence.arc``)."""
        return self.sentence.arc_data[h * (self.n + 1) + m]

    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil:
        cdef uint64_t feats[2 * T_SIB]
        if not self.sentence.groups_mask & G_SIB:
            return 0.0
        return self.sentence.gather(feats, sib_feats(&self.sentence.core, <int>h, <int>m,
                                                     <int>s, -1, -1, feats))

    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        cdef uint64_t feats[2 * T_GRAND]
        if not self.sentence.groups_mask & G_GRAND:
            return 0.0
        return self.sentence.gather(feats, grand_feats(&self.sentence.core, <int>g, <int>h,
                                                       <int>m, -1, -1, feats))

    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil:
        cdef uint64_t feats[2 * T_TRISIB]
        if not self.sentence.groups_mask & G_TRISIB:
            return 0.0
        return self.sentence.gather(feats, trisib_feats(&self.sentence.core, <int>h, <int>a,
                                                        <int>b, <int>c, -1, -1, -1, feats))

    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
        cdef uint64_t feats[2 * T_GSIB]
        if not self.sentence.groups_mask & G_GSIB:
            return 0.0
        return self.sentence.gather(feats, gsib_feats(&self.sentence.core, <int>g, <int>h,
                                                      <int>m, <int>s, -1, -1, -1, feats))


# -- a whole tree ----------------------------------------------------------------------------------

cdef int tree_steps(O3Sentence sent, const int32_t* heads, const int32_t* labels,
                    uint64_t* ho, int64_t* rows, int* row_count) noexcept nogil:
    """Writes the higher-order feature indices of every part of the tree (into ``ho``,
    relative to ho_offset; returns their number), chart step by chart step as the chart scores
    them, and its label-weight indices (into ``rows``, relative to label_offset: row * L +
    label; their number into ``row_count``). Sides are taken by position, so that a
    non-projective (gold) tree has parts too."""
    cdef const O3C* c = &sent.core
    cdef int n = c.n, h, m, d, i, k = 0, r = 0, nr, count, gc, gc2, s, s2, step, out
    cdef int64_t L = sent.num_labels
    cdef uint64_t lrows[MAX_LABEL_ROWS]
    cdef PartContextC p
    for m in range(1, n + 1):
        h = heads[m]
        nr = label_rows(c, h, m, sent.first_label(h, m), lrows)
        for i in range(nr):
            rows[r] = <int64_t>lrows[i] * L + labels[m]
            r += 1
        p.head = h
        p.modifier = m
        p.label = labels[m]
        # h's modifiers strictly between h and m, from h outwards: s the last, s2 before it
        step = 1 if m > h else -1
        count = outer_modifiers(heads, h, h + step, m, step, &s, &s2)
        p.sibling = s
        p.sibling_label = labels[s] if s >= 0 else -1
        p.sibling2 = s2
        p.sibling2_label = labels[s2] if s2 >= 0 else -1
        p.position = count + 1
        for d in range(2):
            # d == 0: m's inner side (towards h), rule (b); d == 1: its outer side, rule (a).
            # m's modifiers on that side from m outwards: gc the outermost, gc2 inside it.
            out = -step if d == 0 else step
            count = outer_modifiers(heads, m, m + out, n + 1 if out > 0 else 0, out, &gc, &gc2)
            p.grandchild = gc
            p.grandchild_label = labels[gc] if gc >= 0 else -1
            p.grandchild2 = gc2
            p.grandchild2_label = labels[gc2] if gc2 >= 0 else -1
            p.valency = count
            if d == 0:
                k += arc_step_feats(c, &p, ho + k)
            else:
                p.sibling2 = -1
                p.sibling2_label = -1
                k += close_step_feats(c, &p, ho + k)
    row_count[0] = r
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
def tree_feature_indices(O3Sentence sentence not None, heads, labels):
    """Weight indices (int64 [k], into the whole weight vector; repeats possible) of the
    labeled-arc label rows and the higher-order parts of the tree ``heads`` (int [n+1],
    heads[0] == -1) with label ids ``labels`` (int [n+1]): the parts the chart scores for that
    tree (module docstring). The unlabeled first-order arc features are not included."""
    cdef int n = sentence.core.n, k, r = 0, m
    cdef const int32_t[::1] hv = np.ascontiguousarray(heads, dtype=np.int32)
    cdef const int32_t[::1] lv = np.ascontiguousarray(labels, dtype=np.int32)
    if hv.shape[0] != n + 1 or lv.shape[0] != n + 1:
        raise ValueError(f"heads and labels must be [{n + 1}]")
    for m in range(1, n + 1):
        if not (0 <= hv[m] <= n and hv[m] != m and 0 <= lv[m] < sentence.num_labels):
            raise ValueError(f"word {m}: bad head {hv[m]} or label {lv[m]}")
    ho = np.empty(n * MAX_STEP_FEATS * 2, dtype=np.uint64)
    rows = np.empty(n * MAX_LABEL_ROWS, dtype=np.int64)
    cdef uint64_t[::1] hov = ho
    cdef int64_t[::1] rv = rows
    with nogil:
        k = tree_steps(sentence, &hv[0], &lv[0], &hov[0], &rv[0], &r)
    return np.concatenate([rows[:r] + sentence.label_offset,
                           ho[:k].astype(np.int64) + sentence.ho_offset])
