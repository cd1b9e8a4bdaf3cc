# cython: language_level=3
"""Second-order part features: consecutive siblings (h, m, s) and grandparents (g, h, m).

Templates follow McDonald and Pereira (2006) for siblings and Koo and Collins (2010) / Martins
et al. (2013, TurboParser) for grandparents: POS trigrams and bigrams of the words of the part
on both POS columns, with one word form in place of its POS, conjoined with the directions of
the arcs involved and with a binned distance.

Conventions (as in ``dparse.decoders``):
- ``sib[h, m, s]``: m and s are consecutive modifiers of h on the same side, s the next one
  farther from h; m == h means s is the innermost modifier on its side (a start symbol stands
  for m). There is no stop part.
- ``grand[g, h, m]``: g -> h -> m; arcs out of the root (h == 0) have no grandparent part.
- Weights: the first-order space (``arcfeatures.FeatureSpace``) comes first in the weight
  vector; then ``2**sib_bits`` sibling weights, then ``2**grand_bits`` grandparent weights.
- The encoded sentence is the one of ``arcfeatures`` (``tokens`` int32 [n+1, N_COLS]).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

cimport cython
from cython cimport floating

from dparse._ext.arcfeatures cimport FeatureSpace
from dparse._ext.hashing cimport bucket, distance_bin, fmix, side
from dparse._ext.tokens cimport LEMMA, NCOLS, UPOS, WORD, XPOS, token_attr
from dparse._ext.weights cimport gather_sum, prefetch_gather

cdef enum:
    # Sibling templates, each the xor of a head, a modifier and a sibling share.
    N_SIB = 12
    # Grandparent templates, each the xor of a grandparent, a head and a modifier share.
    N_GRAND = 10
    # Stand-in attribute of the start symbol (m == h in a sibling part).
    START_ID = 0x7FFFFFF0

#: The version of the sibling and grandparent templates, saved with every second-order model
#: (dparse.templates): a change that gives any part other features takes the next version.
TEMPLATES_VERSION = 1


cdef class SecondOrderSpace:
    """The first-order space followed by the sibling and grandparent weight regions."""

    cdef readonly FeatureSpace first
    cdef readonly int sib_bits, grand_bits
    cdef readonly int64_t sib_offset, grand_offset, size

    def __init__(self, FeatureSpace first, int sib_bits, int grand_bits):
        if not (10 <= sib_bits <= 30 and 10 <= grand_bits <= 30):
            raise ValueError("sib_bits and grand_bits must be in 10..30")
        self.first = first
        self.sib_bits = sib_bits
        self.grand_bits = grand_bits
        self.sib_offset = first.size
        self.grand_offset = self.sib_offset + ((<int64_t>1) << sib_bits)
        self.size = self.grand_offset + ((<int64_t>1) << grand_bits)

    def __reduce__(self):
        return (SecondOrderSpace, (self.first, self.sib_bits, self.grand_bits))


ctypedef struct Shares:
    int n
    uint64_t* sib_h    # [n+1, N_SIB] head share of each sibling template
    uint64_t* sib_m    # [n+2, N_SIB] modifier share (row n+1: the start symbol)
    uint64_t* sib_s    # [n+1, N_SIB] sibling share
    uint64_t* gp_g     # [n+1, N_GRAND] grandparent share
    uint64_t* gp_h     # [n+1, N_GRAND] head share
    uint64_t* gp_m     # [n+1, N_GRAND] modifier share


cdef void fill_sib(uint64_t* row, int role, uint64_t w, uint64_t l, uint64_t u,
                   uint64_t x) noexcept nogil:
    """One word's share of every sibling template, in role 0 (head), 1 (modifier), 2 (sibling).

    Templates (t: head | modifier | sibling): 0 u|u|u, 1 x|x|x, 2 -|u|u, 3 -|x|x, 4 -|w|x,
    5 -|x|w, 6 -|w|w, 7 w|x|x, 8 x|x|w, 9 x|w|x, 10 u|-|u, 11 x|-|x.
    """
    cdef uint64_t seed = 5000 + 100 * role
    cdef uint64_t wv[12]
    cdef int uses[12]
    cdef int t
    # Attribute of each template for this role; uses[t] == 0 when the role is not in template t.
    if role == 0:
        wv[:] = [u, x, 0, 0, 0, 0, 0, w, x, x, u, x]
        uses[:] = [1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    elif role == 1:
        wv[:] = [u, x, u, x, w, x, w, x, x, w, 0, 0]
        uses[:] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]
    else:
        wv[:] = [u, x, u, x, x, w, w, x, w, x, u, x]
        uses[:] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    for t in range(N_SIB):
        row[t] = side(seed + t, wv[t], 0, 0) if uses[t] else 0


cdef void fill_grand(uint64_t* row, int role, uint64_t w, uint64_t l, uint64_t u,
                     uint64_t x) noexcept nogil:
    """One word's share of every grandparent template, in role 0 (g), 1 (h), 2 (m).

    Templates (t: g | h | m): 0 u|u|u, 1 x|x|x, 2 u|-|u, 3 x|-|x, 4 w|x|x, 5 x|w|x, 6 x|x|w,
    7 w|-|x, 8 x|-|w, 9 l|-|l.
    """
    cdef uint64_t seed = 7000 + 100 * role
    cdef uint64_t wv[10]
    cdef int uses[10]
    cdef int t
    if role == 0:
        wv[:] = [u, x, u, x, w, x, x, w, x, l]
        uses[:] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    elif role == 1:
        wv[:] = [u, x, 0, 0, x, w, x, 0, 0, 0]
        uses[:] = [1, 1, 0, 0, 1, 1, 1, 0, 0, 0]
    else:
        wv[:] = [u, x, u, x, x, x, w, x, w, l]
        uses[:] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    for t in range(N_GRAND):
        row[t] = side(seed + t, wv[t], 0, 0) if uses[t] else 0


cdef int init_shares(Shares* sh, const int32_t[:, ::1] tokens) except -1:
    """Compute every word's share of every template, in every role."""
    if tokens.shape[1] != NCOLS:
        raise ValueError(f"tokens must have {NCOLS} columns, got {tokens.shape[1]}")
    cdef int n = tokens.shape[0] - 1, i, role
    cdef const int32_t* tok = &tokens[0, 0]
    sh.n = n
    sh.sib_h = <uint64_t*>malloc((n + 1) * N_SIB * sizeof(uint64_t))
    sh.sib_m = <uint64_t*>malloc((n + 2) * N_SIB * sizeof(uint64_t))
    sh.sib_s = <uint64_t*>malloc((n + 1) * N_SIB * sizeof(uint64_t))
    sh.gp_g = <uint64_t*>malloc((n + 1) * N_GRAND * sizeof(uint64_t))
    sh.gp_h = <uint64_t*>malloc((n + 1) * N_GRAND * sizeof(uint64_t))
    sh.gp_m = <uint64_t*>malloc((n + 1) * N_GRAND * sizeof(uint64_t))
    if not (sh.sib_h and sh.sib_m and sh.sib_s and sh.gp_g and sh.gp_h and sh.gp_m):
        free_shares(sh)
        raise MemoryError()
    cdef uint64_t w, l, u, x
    for i in range(n + 1):
        w = token_attr(tok, n, i, WORD)
        l = token_attr(tok, n, i, LEMMA)
        u = token_attr(tok, n, i, UPOS)
        x = token_attr(tok, n, i, XPOS)
        fill_sib(sh.sib_h + i * N_SIB, 0, w, l, u, x)
        fill_sib(sh.sib_m + i * N_SIB, 1, w, l, u, x)
        fill_sib(sh.sib_s + i * N_SIB, 2, w, l, u, x)
        fill_grand(sh.gp_g + i * N_GRAND, 0, w, l, u, x)
        fill_grand(sh.gp_h + i * N_GRAND, 1, w, l, u, x)
        fill_grand(sh.gp_m + i * N_GRAND, 2, w, l, u, x)
    fill_sib(sh.sib_m + (n + 1) * N_SIB, 1, START_ID, START_ID, START_ID, START_ID)
    return 0


cdef void free_shares(Shares* sh) noexcept nogil:
    free(sh.sib_h)
    free(sh.sib_m)
    free(sh.sib_s)
    free(sh.gp_g)
    free(sh.gp_h)
    free(sh.gp_m)


cdef inline int sib_features(const Shares* sh, int h, int m, int s, int bits,
                             uint64_t* out) noexcept nogil:
    """Weight indices (< 2**bits) of the sibling part (h, m, s): each template conjoined with
    the side, and with the side + binned distance between m and s."""
    cdef int t, shift = 64 - bits
    cdef int right = s > h
    cdef int gap = s - m if s > m else m - s
    cdef uint64_t d = fmix(<uint64_t>(11 + right))
    cdef uint64_t dd = fmix(<uint64_t>(31 + 2 * distance_bin(gap) + right))
    cdef const uint64_t* H = sh.sib_h + h * N_SIB
    cdef const uint64_t* M = sh.sib_m + (sh.n + 1 if m == h else m) * N_SIB
    cdef const uint64_t* S = sh.sib_s + s * N_SIB
    cdef uint64_t key
    for t in range(N_SIB):
        key = H[t] ^ M[t] ^ S[t]
        out[2 * t] = bucket(key, d, shift)
        out[2 * t + 1] = bucket(key, dd, shift)
    return 2 * N_SIB


cdef inline int grand_features(const Shares* sh, int g, int h, int m, int bits,
                               uint64_t* out) noexcept nogil:
    """Weight indices (< 2**bits) of the grandparent part (g, h, m): each template conjoined
    with the two arc directions, and with those + the binned distance between h and m."""
    cdef int t, shift = 64 - bits
    cdef int dirs = 2 * (g < h) + (h < m)
    cdef uint64_t d = fmix(<uint64_t>(71 + dirs))
    cdef uint64_t dd = fmix(<uint64_t>(101 + 4 * distance_bin(h - m if h > m else m - h) + dirs))
    cdef const uint64_t* G = sh.gp_g + g * N_GRAND
    cdef const uint64_t* H = sh.gp_h + h * N_GRAND
    cdef const uint64_t* M = sh.gp_m + m * N_GRAND
    cdef uint64_t key
    for t in range(N_GRAND):
        key = G[t] ^ H[t] ^ M[t]
        out[2 * t] = bucket(key, d, shift)
        out[2 * t + 1] = bucket(key, dd, shift)
    return 2 * N_GRAND


@cython.boundscheck(False)
@cython.wraparound(False)
def score_second_order(const int32_t[:, ::1] tokens, const floating[::1] weights,
                       SecondOrderSpace space, const uint8_t[:, ::1] allowed,
                       double[:, :, ::1] sib_out=None, double[:, :, ::1] grand_out=None):
    """Score the sibling (given ``sib_out``) and grandparent (given ``grand_out``) parts over
    allowed arcs, into zero-filled outputs.

    allowed: uint8 [n+1, n+1], allowed[h, m] != 0 when the arc h -> m survived pruning.
    Writes sib_out[h, m, s] (float64 [n+1, n+1, n+1], all zeros on entry) for h -> s allowed
    and, unless m == h, h -> m allowed with m between h and s; grand_out[g, h, m] (the same)
    for g -> h and h -> m allowed, h != 0. Every other entry stays 0 (its arcs cannot be in a
    tree the decoder returns): clearing arrays of n**3 entries is left to the caller, who can
    do it once for many sentences (``dparse.graph.model.PartScratch``).
    """
    cdef int n = tokens.shape[0] - 1
    if allowed.shape[0] != n + 1 or allowed.shape[1] != n + 1:
        raise ValueError("allowed must be [n+1, n+1]")
    cdef bint with_sib = sib_out is not None
    if with_sib and (sib_out.shape[0] != n + 1 or sib_out.shape[1] != n + 1
                     or sib_out.shape[2] != n + 1):
        raise ValueError("sib_out must be [n+1, n+1, n+1]")
    cdef bint with_grand = grand_out is not None
    if with_grand and (grand_out.shape[0] != n + 1 or grand_out.shape[1] != n + 1
                       or grand_out.shape[2] != n + 1):
        raise ValueError("grand_out must be [n+1, n+1, n+1]")
    if weights.shape[0] != space.size:
        raise ValueError(f"weights has {weights.shape[0]} entries, the space {space.size}")
    cdef Shares sh
    init_shares(&sh, tokens)
    # Each part's weights are prefetched when its features are hashed and summed one part
    # later (the weight tables are far larger than the cache): ``prev`` is the pending part.
    cdef uint64_t buf_a[2 * N_SIB + 2 * N_GRAND]
    cdef uint64_t buf_b[2 * N_SIB + 2 * N_GRAND]
    cdef uint64_t* feats = buf_a
    cdef uint64_t* prev = buf_b
    cdef uint64_t* swap
    cdef double* prev_out = NULL
    cdef const floating* SW = &weights[space.sib_offset]
    cdef const floating* GW = &weights[space.grand_offset]
    cdef const floating* prev_w = SW
    cdef int sib_bits = space.sib_bits, grand_bits = space.grand_bits
    cdef int g, h, m, s, nf, step, prev_nf = 0
    with nogil:
        for h in range(n + 1 if with_sib else 0):
            for s in range(1, n + 1):
                if s == h or not allowed[h, s]:
                    continue
                step = 1 if s > h else -1
                # m == h: s is the innermost modifier; otherwise m lies strictly between h and s.
                m = h
                while m != s:
                    if m == h or allowed[h, m]:
                        nf = sib_features(&sh, h, m, s, sib_bits, feats)
                        prefetch_gather(SW, feats, nf)
                        if prev_out != NULL:
                            prev_out[0] = gather_sum(prev_w, prev, prev_nf)
                        prev_out, prev_w, prev_nf = &sib_out[h, m, s], SW, nf
                        swap = prev; prev = feats; feats = swap
                    m += step
        if with_grand:
            for h in range(1, n + 1):
                for g in range(n + 1):
                    if g == h or not allowed[g, h]:
                        continue
                    for m in range(1, n + 1):
                        if m == h or m == g or not allowed[h, m]:
                            continue
                        nf = grand_features(&sh, g, h, m, grand_bits, feats)
                        prefetch_gather(GW, feats, nf)
                        if prev_out != NULL:
                            prev_out[0] = gather_sum(prev_w, prev, prev_nf)
                        prev_out, prev_w, prev_nf = &grand_out[g, h, m], GW, nf
                        swap = prev; prev = feats; feats = swap
        if prev_out != NULL:
            prev_out[0] = gather_sum(prev_w, prev, prev_nf)
    free_shares(&sh)


cdef int tree_part_indices(const Shares* sh, const int32_t* heads, int n, SecondOrderSpace space,
                           bint with_sib, bint with_grand, int64_t* out) noexcept nogil:
    """Write the weight indices of every sibling (if ``with_sib``) and grandparent (if
    ``with_grand``) part of a tree."""
    cdef int h, m, prev, k = 0, i, nf, side_
    cdef uint64_t feats[2 * N_SIB + 2 * N_GRAND]
    for h in range(n + 1 if with_sib else 0):
        for side_ in range(2):
            # Modifiers of h on this side, from the innermost out.
            prev = h
            m = h - 1 if side_ == 0 else h + 1
            while 1 <= m <= n:
                if heads[m] == h:
                    nf = sib_features(sh, h, prev, m, space.sib_bits, feats)
                    for i in range(nf):
                        out[k] = space.sib_offset + <int64_t>feats[i]
                        k += 1
                    prev = m
                m = m - 1 if side_ == 0 else m + 1
    if with_grand:
        for m in range(1, n + 1):
            h = heads[m]
            if h > 0:
                nf = grand_features(sh, heads[h], h, m, space.grand_bits, feats)
                for i in range(nf):
                    out[k] = space.grand_offset + <int64_t>feats[i]
                    k += 1
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
def second_order_delta(const int32_t[:, ::1] tokens, SecondOrderSpace space,
                       const int32_t[::1] gold_heads, const int32_t[::1] pred_heads,
                       bint with_grand=True, bint with_sib=True):
    """phi2(gold) - phi2(pred) over the sibling (if ``with_sib``) and grandparent (if
    ``with_grand``) parts, as a sparse vector: indices int64 [k] into the whole weight vector
    and values float64 [k] (repeats possible)."""
    cdef int n = tokens.shape[0] - 1
    if gold_heads.shape[0] != n + 1 or pred_heads.shape[0] != n + 1:
        raise ValueError("heads must be [n+1]")
    cdef Shares sh
    init_shares(&sh, tokens)
    cdef int per_tree = (n + 3) * (2 * N_SIB + 2 * N_GRAND)
    idx = np.empty(2 * per_tree, dtype=np.int64)
    val = np.empty(2 * per_tree, dtype=np.float64)
    cdef int64_t[::1] idx_v = idx
    cdef double[::1] val_v = val
    cdef int a, b, i
    with nogil:
        a = tree_part_indices(&sh, &gold_heads[0], n, space, with_sib, with_grand, &idx_v[0])
        b = tree_part_indices(&sh, &pred_heads[0], n, space, with_sib, with_grand, &idx_v[a])
        for i in range(a):
            val_v[i] = 1.0
        for i in range(a, a + b):
            val_v[i] = -1.0
    free_shares(&sh)
    return idx[:a + b], val[:a + b]
