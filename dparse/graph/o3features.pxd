# cython: language_level=3
"""Third-order part features (o3features.pyx): the per-sentence core and one C function per
part kind, shared with the forest reranker (rerank.pyx). Parts and templates: see the pyx."""

from libc.stdint cimport int32_t, uint64_t

cdef enum:
    G_SIB = 1
    G_GRAND = 2
    G_TRISIB = 4
    G_GSIB = 8
    G_SIBGRAND = 16
    G_VALENCY = 32
    G_POSITION = 64
    # attribute codes of a template role
    A_NONE = 0
    A_W = 1
    A_L = 2
    A_U = 3
    A_X = 4
    A_X3 = 5      # XPOS of i-1, i, i+1
    A_XR = 6      # XPOS of i, i+1
    A_XL = 7      # XPOS of i-1, i
    START_ID = 0x7FFFFFF0
    MAX_ROLES = 4
    # templates per kind
    T_LABEL = 20
    T_SIB = 12
    T_GRAND = 10
    T_TRISIB = 6
    T_GSIB = 6
    T_SIBGRAND = 5
    T_VALENCY = 4
    T_POSITION = 5
    # kinds (share blocks)
    K_LABEL = 0
    K_SIB = 1
    K_GRAND = 2
    K_TRISIB = 3
    K_GSIB = 4
    K_SIBGRAND = 5
    K_VALENCY = 6
    K_POSITION = 7
    N_KINDS = 8
    # most features one step can have
    MAX_STEP_FEATS = 2 * (T_SIB + 2 * T_GRAND + T_TRISIB + 2 * T_GSIB + 2 * T_SIBGRAND
                          + 2 * T_VALENCY + T_POSITION)
    MAX_LABEL_ROWS = 2 * T_LABEL + 2


ctypedef struct O3C:
    # One sentence under one feature configuration.
    int n                  # words; nodes 0..n, row n+1 of ``share`` is the start symbol
    int groups             # G_* bits of the higher-order groups in use
    bint label_tuples      # labels conjoined into higher-order features
    int label_shift        # 64 - label_bits
    int ho_shift           # 64 - ho_bits
    int slots              # share slots per word (sum over kinds of T * MAX_ROLES)
    int kind_start[N_KINDS]  # first slot of each kind
    uint64_t* share        # [n+2, slots]: each word's key in each (kind, template, role)


cdef inline int outer_modifiers(const int32_t* heads, int head, int x, int end, int step,
                                int* last, int* last2) noexcept nogil:
    """Walks the nodes x, x + step, ... up to ``end`` (excluded) of a tree ``heads``: the
    modifiers of ``head`` met, the last one into ``last`` and the one before it into ``last2``
    (-1: none); returns how many. From head + step towards m: h's modifiers just inside m; from
    m + step to the sentence end: m's outermost modifiers on that side."""
    cdef int count = 0
    last[0] = last2[0] = -1
    while x != end:
        if heads[x] == head:
            last2[0] = last[0]
            last[0] = x
            count += 1
        x += step
    return count


cdef int init_core(O3C* c, const int32_t[:, ::1] tokens, int groups, bint label_tuples,
                   int label_bits, int ho_bits) except -1
# Fills c (c.share malloc'ed: the caller frees it).
cdef int sib_feats(const O3C* c, int h, int s, int m, int ls, int lm,
                   uint64_t* out) noexcept nogil
cdef int grand_feats(const O3C* c, int h, int m, int gc, int l, int lgc,
                     uint64_t* out) noexcept nogil
cdef int trisib_feats(const O3C* c, int h, int s2, int s, int m, int ls2, int ls, int lm,
                      uint64_t* out) noexcept nogil
cdef int gsib_feats(const O3C* c, int h, int m, int gc2, int gc, int l, int lgc2, int lgc,
                    uint64_t* out) noexcept nogil
cdef int valency_feats(const O3C* c, int h, int m, int l, int right_side, int count,
                       uint64_t* out) noexcept nogil
cdef int label_rows(const O3C* c, int h, int m, int first, uint64_t* out) noexcept nogil
# The rows (< 2**label_bits, each a row of L label weights) of the labeled arc h -> m, at
# most MAX_LABEL_ROWS; ``first`` >= 0 adds a stacked first-order label (-1: none).
# Each writes the indices (< 2**ho_bits) of its part's features to out and returns their count
# (at most 2 * T of its kind); -1 labels when label tuples are off.
