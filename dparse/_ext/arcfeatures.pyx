# cython: language_level=3
"""First-order (arc and arc-label) features, hashed, extracted and scored in C.

Feature templates follow MSTParser (McDonald et al. 2005) and TurboParser (Martins et al. 2013):
head/modifier unigrams and bigrams over word, lemma, prefix, suffix and both POS columns, the
POS of the surrounding words, the POS of the words in between, and morphological features, each
conjoined with the arc direction and with direction + binned distance.

Conventions
-----------
- A sentence of n words is encoded as ``tokens``: int32 [n+1, N_COLS] (columns WORD, LEMMA,
  UPOS, XPOS, PREFIX, SUFFIX; row 0 is the artificial root, whose ids are ``ROOT_ID``), and its
  morphological features in CSR form: ``morph_ptr`` int32 [n+2], ``morph`` int32 [nnz] (the
  features of word i are ``morph[morph_ptr[i]:morph_ptr[i+1]]``).
- Weights live in one flat vector (float32 at parse time, float64 in training):
  ``[0, 2**arc_bits)`` holds the unlabeled arc features; from ``lab_offset = 2**arc_bits`` on,
  ``2**lab_bits`` rows of ``n_labels`` weights hold the arc-label features (a feature picks a row;
  the label picks the column), so that all labels of one feature are scored by one
  contiguous read.
- Scores: ``arc[h, m]`` (head first) = unlabeled score + best label score; ``label[h, m]`` is that
  best label. Choosing the label per arc before decoding is exact for arc-factored models.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.math cimport INFINITY

from dparse._ext.hashing cimport (
    bucket, bucket_pair, distance_bin, fmix, key_features_of, lowest_bit, side,
)
from dparse._ext.tokens cimport (
    BOS_ID, EOS_ID, LEMMA, NCOLS, PREFIX, ROOT_ID, SUFFIX, UNK_ID, UPOS, WORD, XPOS, token_attr,
)
from dparse._ext.weights cimport (
    argmax, gather_sum, label_sum, prefetch_gather, prefetch_rows,
)

import numpy as np

cimport cython
from cython cimport floating

cdef enum:
    # Sparse-table levels for the between-POS masks: sentences up to 2**20 words.
    MAX_LEVELS = 21
    # Templates (see build_parts): fixed arc templates 0..N_ARC-1, the adjacent-arc one, two
    # between-POS bases, then the label-pair templates; NT in all.
    N_ARC = 52
    T_ADJACENT = 52
    T_BETWEEN = 53
    T_LABEL = 55
    NT = 60
    # Marks of the per-word sums that the arcs to score need (score_arcs with ``allowed``).
    NEED_HEAD = 1
    NEED_MOD = 2

N_COLS = NCOLS
COLUMNS = {"word": WORD, "lemma": LEMMA, "upos": UPOS, "xpos": XPOS, "prefix": PREFIX,
           "suffix": SUFFIX}  # the columns of an encoded sentence's tokens
SPECIAL_IDS = {"unk": UNK_ID, "root": ROOT_ID, "bos": BOS_ID, "eos": EOS_ID}
#: The version of the arc and arc-label templates of this module (build_parts and what reads
#: its parts), saved with every model that reads them (dparse.templates): a change that gives
#: any arc other features takes the next version.
TEMPLATES_VERSION = 1

# The between-POS keys fmix(b + 64 c + 7919) of tag id b (modulo 64) in column c (0 UPOS,
# 1 XPOS), computed once.
cdef uint64_t BETWEEN_KEYS[128]
for _b in range(128):
    BETWEEN_KEYS[_b] = fmix(<uint64_t>(_b + 7919))


cdef inline int att(const SentC* s, int i, int col) noexcept nogil:
    """Attribute ``col`` of position i, with BOS/EOS ids outside 0..n."""
    return token_attr(s.tok, s.n, i, col)


cdef inline uint64_t range_mask(const uint64_t* table, int n, int lo, int hi) noexcept nogil:
    """OR of the bit masks of positions lo..hi (inclusive), from a sparse table; 0 if empty."""
    if lo > hi:
        return 0
    cdef int length = hi - lo + 1
    cdef int lvl = 0
    while (2 << lvl) <= length:
        lvl += 1
    return table[lvl * (n + 1) + lo] | table[lvl * (n + 1) + hi - (1 << lvl) + 1]


cdef void build_masks(SentC* s) noexcept nogil:
    """Fill the sparse tables of UPOS and XPOS bit masks (ids taken modulo 64)."""
    cdef int n = s.n, i, lvl, width
    for i in range(n + 1):
        s.umask[i] = (<uint64_t>1) << (s.tok[i * NCOLS + UPOS] & 63)
        s.xmask[i] = (<uint64_t>1) << (s.tok[i * NCOLS + XPOS] & 63)
    lvl = 1
    width = 2
    while width <= n + 1 and lvl < MAX_LEVELS:
        for i in range(n + 2 - width):
            s.umask[lvl * (n + 1) + i] = (s.umask[(lvl - 1) * (n + 1) + i]
                                          | s.umask[(lvl - 1) * (n + 1) + i + width // 2])
            s.xmask[lvl * (n + 1) + i] = (s.xmask[(lvl - 1) * (n + 1) + i]
                                          | s.xmask[(lvl - 1) * (n + 1) + i + width // 2])
        lvl += 1
        width *= 2


cdef void build_parts(SentC* s) noexcept nogil:
    """Precompute, for every token, the head-side and modifier-side key of every template.

    A template's key for the arc h -> m is ``hpart[h, t] ^ mpart[m, t]``; a side that the
    template does not look at is 0. Seeds: 2t+1 for head sides, 2t+2 for modifier sides.
    Templates 0..N_ARC-1 are the fixed arc templates (MSTParser's unigrams, bigrams and
    surrounding POS, on both POS columns); then the adjacent-arc and between-POS templates,
    then the label-pair templates.
    """
    cdef int i, c, t
    cdef uint64_t w, l, u, x, p, sf, P, Pl, Pr
    cdef uint64_t* H
    cdef uint64_t* M
    for i in range(s.n + 1):
        H = s.hpart + i * NT
        M = s.mpart + i * NT
        w = att(s, i, WORD); l = att(s, i, LEMMA); u = att(s, i, UPOS)
        x = att(s, i, XPOS); p = att(s, i, PREFIX); sf = att(s, i, SUFFIX)
        for t in range(NT):
            H[t] = 0
            M[t] = 0
        # Unigrams: head side (0..6), modifier side (7..13).
        H[0] = side(1, w, x, 0); H[1] = side(3, w, 0, 0); H[2] = side(5, x, 0, 0)
        H[3] = side(7, u, 0, 0); H[4] = side(9, l, u, 0); H[5] = side(11, p, x, 0)
        H[6] = side(13, sf, u, 0)
        M[7] = side(16, w, x, 0); M[8] = side(18, w, 0, 0); M[9] = side(20, x, 0, 0)
        M[10] = side(22, u, 0, 0); M[11] = side(24, l, u, 0); M[12] = side(26, p, x, 0)
        M[13] = side(28, sf, u, 0)
        # Bigrams (14..31).
        H[14] = side(29, w, x, 0); M[14] = side(30, w, x, 0)
        H[15] = side(31, x, 0, 0); M[15] = side(32, w, x, 0)
        H[16] = side(33, w, 0, 0); M[16] = side(34, w, x, 0)
        H[17] = side(35, w, x, 0); M[17] = side(36, x, 0, 0)
        H[18] = side(37, w, x, 0); M[18] = side(38, w, 0, 0)
        H[19] = side(39, w, 0, 0); M[19] = side(40, w, 0, 0)
        H[20] = side(41, x, 0, 0); M[20] = side(42, x, 0, 0)
        H[21] = side(43, u, 0, 0); M[21] = side(44, u, 0, 0)
        H[22] = side(45, l, 0, 0); M[22] = side(46, l, 0, 0)
        H[23] = side(47, l, 0, 0); M[23] = side(48, u, x, 0)
        H[24] = side(49, u, x, 0); M[24] = side(50, l, 0, 0)
        H[25] = side(51, w, 0, 0); M[25] = side(52, x, 0, 0)
        H[26] = side(53, x, 0, 0); M[26] = side(54, w, 0, 0)
        H[27] = side(55, p, x, 0); M[27] = side(56, p, x, 0)
        H[28] = side(57, p, 0, 0); M[28] = side(58, p, x, 0)
        H[29] = side(59, p, x, 0); M[29] = side(60, p, 0, 0)
        H[30] = side(61, sf, 0, 0); M[30] = side(62, sf, 0, 0)
        H[31] = side(63, u, 0, 0); M[31] = side(64, u, sf, 0)
        # Surrounding POS (32..51), for UPOS then XPOS.
        for c in range(2):
            t = 32 + 10 * c
            P = att(s, i, UPOS + c); Pl = att(s, i - 1, UPOS + c); Pr = att(s, i + 1, UPOS + c)
            H[t] = side(2 * t + 1, P, Pr, 0); M[t] = side(2 * t + 2, Pl, P, 0)
            H[t + 1] = side(2 * t + 3, Pl, P, 0); M[t + 1] = side(2 * t + 4, Pl, P, 0)
            H[t + 2] = side(2 * t + 5, P, Pr, 0); M[t + 2] = side(2 * t + 6, P, Pr, 0)
            H[t + 3] = side(2 * t + 7, Pl, P, 0); M[t + 3] = side(2 * t + 8, P, Pr, 0)
            H[t + 4] = side(2 * t + 9, Pl, P, 0); M[t + 4] = side(2 * t + 10, P, 0, 0)
            H[t + 5] = side(2 * t + 11, P, Pr, 0); M[t + 5] = side(2 * t + 12, P, 0, 0)
            H[t + 6] = side(2 * t + 13, P, 0, 0); M[t + 6] = side(2 * t + 14, Pl, P, 0)
            H[t + 7] = side(2 * t + 15, P, 0, 0); M[t + 7] = side(2 * t + 16, P, Pr, 0)
            H[t + 8] = side(2 * t + 17, Pl, P, 0); M[t + 8] = side(2 * t + 18, Pr, 0, 0)
            H[t + 9] = side(2 * t + 19, Pr, 0, 0); M[t + 9] = side(2 * t + 20, Pl, P, 0)
        # Adjacent arcs (no word in between), between-POS bases for UPOS and XPOS.
        H[T_ADJACENT] = side(2 * T_ADJACENT + 1, u, 0, 0)
        M[T_ADJACENT] = side(2 * T_ADJACENT + 2, u, 0, 0)
        H[T_BETWEEN] = side(2 * T_BETWEEN + 1, u, 0, 0)
        M[T_BETWEEN] = side(2 * T_BETWEEN + 2, u, 0, 0)
        H[T_BETWEEN + 1] = side(2 * T_BETWEEN + 3, x, 0, 0)
        M[T_BETWEEN + 1] = side(2 * T_BETWEEN + 4, x, 0, 0)
        # Label-pair templates: POS only, so that the label rows they touch stay in cache
        # (lexical label features are per-token: label_head_features, label_mod_features).
        t = T_LABEL
        H[t] = side(2 * t + 1, x, 0, 0); M[t] = side(2 * t + 2, x, 0, 0)
        H[t + 1] = side(2 * t + 3, u, 0, 0); M[t + 1] = side(2 * t + 4, u, 0, 0)
        H[t + 2] = side(2 * t + 5, u, 0, 0)
        M[t + 2] = side(2 * t + 6, u, att(s, i + 1, UPOS), 0)
        H[t + 3] = side(2 * t + 7, u, 0, 0)
        M[t + 3] = side(2 * t + 8, u, att(s, i - 1, UPOS), 0)
        H[t + 4] = side(2 * t + 9, u, x, 0); M[t + 4] = side(2 * t + 10, u, x, 0)
        # Morphological features of token i: [f with its UPOS as modifier, f alone as
        # modifier, f with its UPOS as head].
        for c in range(s.morph_ptr[i], s.morph_ptr[i + 1]):
            s.mkeys[3 * c] = side(1001, s.morph[c], u, 0)
            s.mkeys[3 * c + 1] = side(1003, s.morph[c], 0, 0)
            s.mkeys[3 * c + 2] = side(1005, s.morph[c], u, 0)


cdef int init_sentence(SentC* s, const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                       const int32_t[::1] morph) except -1:
    """Point ``s`` at the encoded sentence and build its between-POS tables and template keys."""
    if tokens.shape[1] != NCOLS:
        raise ValueError(f"tokens must have {NCOLS} columns, got {tokens.shape[1]}")
    if morph_ptr.shape[0] != tokens.shape[0] + 1:
        raise ValueError("morph_ptr must have n+2 entries")
    if morph_ptr[morph_ptr.shape[0] - 1] != morph.shape[0]:
        raise ValueError("morph_ptr does not end at the number of morphological features")
    s.n = tokens.shape[0] - 1
    s.tok = &tokens[0, 0]
    s.morph_ptr = &morph_ptr[0]
    s.morph = &morph[0] if morph.shape[0] > 0 else NULL
    s.umask = <uint64_t*>malloc(MAX_LEVELS * (s.n + 1) * sizeof(uint64_t))
    s.xmask = <uint64_t*>malloc(MAX_LEVELS * (s.n + 1) * sizeof(uint64_t))
    s.hpart = <uint64_t*>malloc(NT * (s.n + 1) * sizeof(uint64_t))
    s.mpart = <uint64_t*>malloc(NT * (s.n + 1) * sizeof(uint64_t))
    s.mkeys = <uint64_t*>malloc((3 * morph.shape[0] + 1) * sizeof(uint64_t))
    if not (s.umask and s.xmask and s.hpart and s.mpart and s.mkeys):
        free_sentence(s)
        raise MemoryError()
    build_masks(s)
    build_parts(s)
    return 0


cdef void free_sentence(SentC* s) noexcept nogil:
    free(s.umask)
    free(s.xmask)
    free(s.hpart)
    free(s.mpart)
    free(s.mkeys)


cdef int max_morph(const SentC* s) noexcept nogil:
    cdef int i, best = 0
    for i in range(s.n + 1):
        if s.morph_ptr[i + 1] - s.morph_ptr[i] > best:
            best = s.morph_ptr[i + 1] - s.morph_ptr[i]
    return best


cdef int max_arc_features(const SentC* s) noexcept nogil:
    """Upper bound on the number of indices ``arc_features`` writes for one arc."""
    return 2 * (N_ARC + 1 + 2 * 64 + 3 * max_morph(s))


cdef inline void key_features(uint64_t key, uint64_t dk, uint64_t ddk, int shift, int layout,
                              uint64_t* out) noexcept nogil:
    """The two weight indices of a template key: conjoined with the direction ``dk`` and with
    direction + distance ``ddk``, hashed apart or into one block (see FeatureSpace)."""
    if layout == LAYOUT_BLOCKED:
        bucket_pair(key, dk, ddk, shift, out)
    else:
        out[0] = bucket(key, dk, shift)
        out[1] = bucket(key, ddk, shift)


cdef int arc_features(const SentC* s, int h, int m, uint64_t* out, int bits) noexcept nogil:
    """``layout_arc_features`` in the hashed layout (the extractors built on the first-order
    features: reranker, third order)."""
    return layout_arc_features(s, h, m, out, bits, LAYOUT_HASHED, 0)


cdef int layout_arc_features(const SentC* s, int h, int m, uint64_t* out, int bits,
                             int layout, int first) noexcept nogil:
    """Write the weight indices (< 2**bits) of the unlabeled arc h -> m; return their count.

    Every template key is conjoined twice: with the direction, and with direction + distance.
    ``first`` = N_ONE_SIDED leaves out the templates that read one side only (their weights
    are summed once per word by ``one_sided_scores``); 0 writes them all.
    """
    cdef int nf, c, lo, hi, shift = 64 - bits
    cdef int right = h < m
    cdef uint64_t dk = fmix(<uint64_t>(1 + right))
    cdef uint64_t ddk = fmix(<uint64_t>(3 + 2 * distance_bin(h - m if h > m else m - h) + right))
    cdef const uint64_t* H = s.hpart + h * NT
    cdef const uint64_t* M = s.mpart + m * NT
    cdef uint64_t key, bits_between, b
    key_features_of(H + first, M + first, N_ARC - first, dk, ddk, shift,
                    layout == LAYOUT_BLOCKED, out)
    nf = 2 * (N_ARC - first)
    # POS of the words in between (each distinct tag once; ids modulo 64).
    lo = (h if h < m else m) + 1
    hi = (m if h < m else h) - 1
    if lo > hi:
        key = H[T_ADJACENT] ^ M[T_ADJACENT]
        key_features(key, dk, ddk, shift, layout, &out[nf])
        nf += 2
    else:
        for c in range(2):
            bits_between = range_mask(s.umask if c == 0 else s.xmask, s.n, lo, hi)
            while bits_between:
                b = lowest_bit(bits_between)
                bits_between &= bits_between - 1
                key = H[T_BETWEEN + c] ^ M[T_BETWEEN + c] ^ BETWEEN_KEYS[b + 64 * c]
                key_features(key, dk, ddk, shift, layout, &out[nf])
                nf += 2
    # Morphological features: of the modifier with both UPOS, of the modifier with the head's
    # lemma, of the head with both UPOS.
    for c in range(s.morph_ptr[m], s.morph_ptr[m + 1]):
        key = H[3] ^ s.mkeys[3 * c]
        key_features(key, dk, ddk, shift, layout, &out[nf])
        key = H[22] ^ s.mkeys[3 * c + 1]
        key_features(key, dk, ddk, shift, layout, &out[nf + 2])
        nf += 4
    for c in range(s.morph_ptr[h], s.morph_ptr[h + 1]):
        key = M[10] ^ s.mkeys[3 * c + 2]
        key_features(key, dk, ddk, shift, layout, &out[nf])
        nf += 2
    return nf


cdef inline int label_head_features(const SentC* s, int h, int right, uint64_t* out,
                                    int bits) noexcept nogil:
    """Row indices of the label features that look only at the head h (and the direction)."""
    cdef int nf = 0, i, shift = 64 - bits
    cdef uint64_t d = fmix(<uint64_t>(101 + right))
    cdef const uint64_t* H = s.hpart + h * NT
    for i in range(7):
        out[nf] = bucket(H[i], d, shift); nf += 1
    out[nf] = bucket(side(2011, att(s, h - 1, WORD), att(s, h, UPOS), 0), d, shift); nf += 1
    out[nf] = bucket(side(2013, att(s, h + 1, WORD), att(s, h, UPOS), 0), d, shift); nf += 1
    for i in range(s.morph_ptr[h], s.morph_ptr[h + 1]):
        out[nf] = bucket(s.mkeys[3 * i + 2], d, shift); nf += 1
    return nf


cdef inline int label_mod_features(const SentC* s, int m, int right, uint64_t* out,
                                   int bits) noexcept nogil:
    """Row indices of the label features that look only at the modifier m (and the direction)."""
    cdef int nf = 0, i, t, shift = 64 - bits
    cdef uint64_t d = fmix(<uint64_t>(201 + right))
    cdef const uint64_t* M = s.mpart + m * NT
    for i in range(7, 14):
        out[nf] = bucket(M[i], d, shift); nf += 1
    # Surrounding POS of the modifier (both columns) and its UPOS with each neighbour's.
    out[nf] = bucket(M[32], d, shift); nf += 1
    out[nf] = bucket(M[34], d, shift); nf += 1
    out[nf] = bucket(M[42], d, shift); nf += 1
    out[nf] = bucket(M[44], d, shift); nf += 1
    out[nf] = bucket(M[T_LABEL + 2], d, shift); nf += 1
    out[nf] = bucket(M[T_LABEL + 3], d, shift); nf += 1
    # The neighbouring words with the modifier's UPOS, and its lemma.
    out[nf] = bucket(side(2001, att(s, m - 1, WORD), att(s, m, UPOS), 0), d, shift); nf += 1
    out[nf] = bucket(side(2003, att(s, m + 1, WORD), att(s, m, UPOS), 0), d, shift); nf += 1
    out[nf] = bucket(side(2005, att(s, m, LEMMA), att(s, m, XPOS), 0), d, shift); nf += 1
    out[nf] = bucket(side(2007, att(s, m - 2, WORD), att(s, m, UPOS), 0), d, shift); nf += 1
    out[nf] = bucket(side(2009, att(s, m - 3, WORD), att(s, m, UPOS), 0), d, shift); nf += 1
    for i in range(s.morph_ptr[m], s.morph_ptr[m + 1]):
        out[nf] = bucket(s.mkeys[3 * i + 1], d, shift); nf += 1
    return nf


cdef inline int label_pair_features(const SentC* s, int h, int m, uint64_t* out,
                                    int bits) noexcept nogil:
    """Row indices of the label features of the head-modifier pair."""
    cdef int nf = 0, t, shift = 64 - bits
    cdef int right = h < m
    cdef uint64_t d = fmix(<uint64_t>(301 + right))
    cdef uint64_t dd = fmix(<uint64_t>(303 + 2 * distance_bin(h - m if h > m else m - h) + right))
    cdef const uint64_t* H = s.hpart + h * NT
    cdef const uint64_t* M = s.mpart + m * NT
    for t in range(T_LABEL, NT):
        out[nf] = bucket(H[t] ^ M[t], d, shift); nf += 1
    out[nf] = bucket(H[T_LABEL] ^ M[T_LABEL], dd, shift); nf += 1
    out[nf] = bucket(H[T_LABEL + 1] ^ M[T_LABEL + 1], dd, shift); nf += 1
    # Each distinct UPOS between head and modifier (a preposition, a conjunction, a comma...).
    cdef int lo = (h if h < m else m) + 1, hi = (m if h < m else h) - 1
    cdef uint64_t bits_between = range_mask(s.umask, s.n, lo, hi), b
    while bits_between:
        b = lowest_bit(bits_between)
        bits_between &= bits_between - 1
        out[nf] = bucket(H[T_BETWEEN] ^ M[T_BETWEEN] ^ BETWEEN_KEYS[b], d, shift); nf += 1
    return nf


cdef inline int max_label_features(const SentC* s) noexcept nogil:
    """Upper bound on the row indices of one side or the pair of label features."""
    return 24 + 64 + max_morph(s)


LAYOUTS = ("hashed", "blocked")


cdef class FeatureSpace:
    """Sizes of the hashed weight vector: arc features, then rows of label weights.

    ``layout`` says where the two features of an arc template key (with the direction, with
    direction + distance) go: ``hashed``, two independent hashes over the arc weights (models
    made before the blocked layout); ``blocked``, one 16-weight block per key, so that both are
    read from one cache line (hashing.bucket_pair; the arc weights should then be 64-byte
    aligned: see dparse.aligned).
    """

    def __init__(self, int arc_bits, int lab_bits, int n_labels, str layout="hashed"):
        if not (10 <= arc_bits <= 30 and 8 <= lab_bits <= 26):
            raise ValueError("arc_bits must be in 10..30 and lab_bits in 8..26")
        if n_labels < 1:
            raise ValueError("n_labels must be positive")
        if layout not in LAYOUTS:
            raise ValueError(f"unknown feature layout {layout!r}; choose one of "
                             f"{', '.join(LAYOUTS)}")
        self.arc_bits = arc_bits
        self.lab_bits = lab_bits
        self.n_labels = n_labels
        self.layout_id = LAYOUTS.index(layout)
        self.lab_offset = (<int64_t>1) << arc_bits
        self.size = self.lab_offset + ((<int64_t>1) << lab_bits) * n_labels

    @property
    def layout(self) -> str:
        """``hashed`` or ``blocked`` (see the class docstring)."""
        return LAYOUTS[self.layout_id]

    def __reduce__(self):
        return (FeatureSpace, (self.arc_bits, self.lab_bits, self.n_labels, self.layout))


def block_pair(uint64_t key, uint64_t conj1, uint64_t conj2, int bits):
    """Test shim: the two indices (< 2**bits) ``hashing.bucket_pair`` gives a template key
    conjoined with ``conj1`` and ``conj2`` in the blocked layout."""
    if not 10 <= bits <= 60:
        raise ValueError("bits must be in 10..60")
    cdef uint64_t out[2]
    bucket_pair(key, conj1, conj2, 64 - bits, out)
    return int(out[0]), int(out[1])


cdef void one_sided_scores(const SentC* s, const floating* W, int bits, int layout,
                           const uint8_t* need, double* head_only,
                           double* mod_only) noexcept nogil:
    """The weights of the one-sided arc templates summed per word, direction and distance bin:
    ``head_only[(i * 2 + right) * N_BINS + bin]`` over templates 0..6 of word i as the head
    of an arc in direction ``right`` (h < m), ``mod_only`` over templates 7..13 of word i as
    its modifier; only the bins that such arcs can have are filled (the rest is left unset),
    and given ``need`` (uint8, the same shape: bit 1 head, bit 2 modifier) only those marked."""
    cdef int i, right, bin, t, hlast, mlast, k, shift = 64 - bits
    cdef uint64_t dk, ddk
    cdef uint64_t idx[2]
    cdef double total
    for i in range(s.n + 1):
        for right in range(2):
            dk = fmix(<uint64_t>(1 + right))
            # the bins of the longest arcs with i as the head, and as the modifier
            hlast = distance_bin(s.n - i if right else i)
            mlast = distance_bin(i if right else s.n - i)
            for bin in range(1, (hlast if hlast > mlast else mlast) + 1):
                ddk = fmix(<uint64_t>(3 + 2 * bin + right))
                k = (i * 2 + right) * N_BINS + bin
                if bin <= hlast and (need == NULL or need[k] & NEED_HEAD):
                    total = 0.0
                    for t in range(N_HEAD_ONLY):
                        key_features(s.hpart[i * NT + t], dk, ddk, shift, layout, idx)
                        total += <double>W[idx[0]]
                        total += <double>W[idx[1]]
                    head_only[k] = total
                if bin <= mlast and (need == NULL or need[k] & NEED_MOD):
                    total = 0.0
                    for t in range(N_HEAD_ONLY, N_ONE_SIDED):
                        key_features(s.mpart[i * NT + t], dk, ddk, shift, layout, idx)
                        total += <double>W[idx[0]]
                        total += <double>W[idx[1]]
                    mod_only[k] = total


@cython.boundscheck(False)
@cython.wraparound(False)
def score_arcs(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
               const int32_t[::1] morph, const floating[::1] weights, FeatureSpace space,
               double[:, ::1] arc_out, int32_t[:, ::1] label_out,
               const int32_t[::1] gold_heads=None, const int32_t[::1] gold_labels=None,
               const uint8_t[:, ::1] allowed=None):
    """Score every arc h -> m (or, given ``allowed``, uint8 [n+1, n+1], the arcs with
    allowed[h, m] != 0; the others get -inf and label 0) and choose its best label.

    Writes ``arc_out[h, m]`` (float64 [n+1, n+1]; -inf on the diagonal and in column 0) and
    ``label_out[h, m]`` (int32 [n+1, n+1]). With ``gold_heads``/``gold_labels`` (int32 [n+1]) the
    scores are cost-augmented by the labeled Hamming cost: +1 for a wrong head, +1 for a wrong
    (head, label) pair, so a wrong head costs 2 and a right head with a wrong label costs 1.
    """
    cdef SentC s
    init_sentence(&s, tokens, morph_ptr, morph)
    cdef int n = s.n, h, m, i, l, nf, right, L = space.n_labels
    cdef bint cost = gold_heads is not None
    cdef bint masked = allowed is not None
    if masked and (allowed.shape[0] != n + 1 or allowed.shape[1] != n + 1):
        free_sentence(&s)
        raise ValueError("allowed must be [n+1, n+1]")
    if arc_out.shape[0] != n + 1 or arc_out.shape[1] != n + 1:
        free_sentence(&s)
        raise ValueError("arc_out must be [n+1, n+1]")
    if label_out.shape[0] != n + 1 or label_out.shape[1] != n + 1:
        free_sentence(&s)
        raise ValueError("label_out must be [n+1, n+1]")
    if weights.shape[0] != space.size:
        free_sentence(&s)
        raise ValueError(f"weights has {weights.shape[0]} entries, the space {space.size}")
    if cost and (gold_heads.shape[0] != n + 1 or gold_labels is None
                 or gold_labels.shape[0] != n + 1):
        free_sentence(&s)
        raise ValueError("gold_heads and gold_labels must both be [n+1]")
    cdef int arc_bits = space.arc_bits, lab_bits = space.lab_bits, layout = space.layout_id
    cdef const floating* W = &weights[0]
    cdef const floating* LW = &weights[space.lab_offset]
    cdef int cap = max_arc_features(&s)
    cdef int lcap = max_label_features(&s)
    cdef uint64_t* feats = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint64_t* lfeats = <uint64_t*>malloc(lcap * sizeof(uint64_t))
    cdef uint64_t* feats_next = <uint64_t*>malloc(cap * sizeof(uint64_t))
    cdef uint64_t* lfeats_next = <uint64_t*>malloc(lcap * sizeof(uint64_t))
    cdef uint64_t* swap
    cdef int* todo = <int*>malloc((n + 1) * sizeof(int))
    cdef int count, k, nl = 0, nf_next = 0, nl_next = 0
    # Label scores of the head side and modifier side: [n+1, 2 directions, L].
    cdef floating* head_side = <floating*>malloc((n + 1) * 2 * L * sizeof(floating))
    cdef floating* mod_side = <floating*>malloc((n + 1) * 2 * L * sizeof(floating))
    cdef floating* lab = <floating*>malloc(L * sizeof(floating))
    cdef uint64_t* side_rows = <uint64_t*>malloc(8 * lcap * sizeof(uint64_t))
    # One-sided arc template scores [n+1, 2 directions, N_BINS] of heads and of modifiers.
    cdef double* head_only = <double*>malloc((n + 1) * 2 * N_BINS * sizeof(double))
    cdef double* mod_only = <double*>malloc((n + 1) * 2 * N_BINS * sizeof(double))
    # Given ``allowed``, which of those sums its arcs read (NEED_HEAD, NEED_MOD): a pruned
    # sentence reads a few of each word's, not all (the sums are the same, bit for bit).
    cdef uint8_t* need_only = NULL
    cdef uint8_t* need_side = NULL
    if masked:
        need_only = <uint8_t*>calloc((n + 1) * 2 * N_BINS, 1)
        need_side = <uint8_t*>calloc((n + 1) * 2, 1)
    cdef int bin
    cdef double total
    cdef int best_l
    if not (feats and lfeats and feats_next and lfeats_next and todo and head_side
            and mod_side and lab and side_rows and head_only and mod_only
            and (not masked or (need_only and need_side))):
        free(feats); free(lfeats); free(feats_next); free(lfeats_next); free(todo)
        free(head_side); free(mod_side); free(lab); free(side_rows)
        free(head_only); free(mod_only); free(need_only); free(need_side)
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for l in range(L):
            lab[l] = 0.0
        if masked:
            for h in range(n + 1):
                for m in range(1, n + 1):
                    if h != m and allowed[h, m] != 0:
                        right = h < m
                        bin = distance_bin(h - m if h > m else m - h)
                        need_only[(h * 2 + right) * N_BINS + bin] |= NEED_HEAD
                        need_only[(m * 2 + right) * N_BINS + bin] |= NEED_MOD
                        need_side[h * 2 + right] |= NEED_HEAD
                        need_side[m * 2 + right] |= NEED_MOD
        side_label_scores(&s, LW, L, lab_bits, lab, need_side, head_side, mod_side, side_rows,
                          lcap)
        one_sided_scores(&s, W, arc_bits, layout, need_only, head_only, mod_only)
        for h in range(n + 1):
            arc_out[h, 0] = -INFINITY
            label_out[h, 0] = 0
        # Row by row, the features of the next arc are hashed and their weights prefetched
        # before the current arc's are summed (the weight tables are far larger than the cache).
        for h in range(n + 1):
            count = 0
            for m in range(1, n + 1):
                if h == m or (masked and allowed[h, m] == 0):
                    arc_out[h, m] = -INFINITY
                    label_out[h, m] = 0
                else:
                    todo[count] = m
                    count += 1
            if count:
                nf = layout_arc_features(&s, h, todo[0], feats, arc_bits, layout, N_ONE_SIDED)
                nl = label_pair_features(&s, h, todo[0], lfeats, lab_bits)
            for k in range(count):
                m = todo[k]
                if k + 1 < count:
                    nf_next = layout_arc_features(&s, h, todo[k + 1], feats_next, arc_bits,
                                                  layout, N_ONE_SIDED)
                    nl_next = label_pair_features(&s, h, todo[k + 1], lfeats_next, lab_bits)
                    prefetch_gather(W, feats_next, nf_next)
                    prefetch_rows(LW, lfeats_next, nl_next, L)
                right = h < m
                total = plus_one_sided(gather_sum(W, feats, nf), head_only, mod_only, h, m)
                label_sum(lab, &head_side[(h * 2 + right) * L], &mod_side[(m * 2 + right) * L],
                          LW, lfeats, nl, L)
                if cost:
                    if gold_heads[m] == h:
                        for l in range(L):
                            if l != gold_labels[m]:
                                lab[l] += 1.0
                    else:
                        total = total + 2.0
                best_l = argmax(lab, L)
                arc_out[h, m] = total + lab[best_l]
                label_out[h, m] = best_l
                swap = feats; feats = feats_next; feats_next = swap
                swap = lfeats; lfeats = lfeats_next; lfeats_next = swap
                nf = nf_next
                nl = nl_next
    free(feats); free(lfeats); free(feats_next); free(lfeats_next); free(todo)
    free(head_side); free(mod_side); free(lab); free(side_rows)
    free(head_only); free(mod_only); free(need_only); free(need_side)
    free_sentence(&s)


cdef inline void side_label_rows(const SentC* s, int i, int bits, const uint8_t* need,
                                 uint64_t* rows, int cap, int* counts) noexcept nogil:
    """The label rows of word i as a head (lists 0, 1: left, right) and as a modifier (lists 2,
    3), each list at ``rows + list * cap``, its length in ``counts[list]``; given ``need``
    (see side_label_scores), an unmarked list is left empty."""
    cdef int right
    for right in range(2):
        counts[right] = 0
        counts[2 + right] = 0
        if need == NULL or need[i * 2 + right] & NEED_HEAD:
            counts[right] = label_head_features(s, i, right, rows + right * cap, bits)
        if need == NULL or need[i * 2 + right] & NEED_MOD:
            counts[2 + right] = label_mod_features(s, i, right, rows + (2 + right) * cap, bits)


cdef void side_label_scores(const SentC* s, const floating* LW, int L, int bits,
                            const floating* zeros, const uint8_t* need, floating* head_side,
                            floating* mod_side, uint64_t* rows, int cap) noexcept nogil:
    """Label scores of every word's head-side and modifier-side features: ``head_side`` and
    ``mod_side`` [n+1, 2 directions, L], each the sum of its rows in order (from ``zeros``,
    L zeros); given ``need`` (uint8 [n+1, 2 directions]: bit 1 head, bit 2 modifier), only
    those marked (the rest is left unset). The rows of word i + 1 are prefetched while word
    i's are summed; ``rows`` holds 8 lists of ``cap`` indices (two words' lists of
    ``side_label_rows``)."""
    cdef int i, right, cur
    cdef int counts[8]
    side_label_rows(s, 0, bits, need, rows, cap, counts)
    for i in range(s.n + 1):
        cur = 4 * (i & 1)
        if i < s.n:
            side_label_rows(s, i + 1, bits, need, rows + (4 - cur) * cap, cap, counts + 4 - cur)
            for right in range(4):
                prefetch_rows(LW, rows + (4 - cur + right) * cap, counts[4 - cur + right], L)
        for right in range(2):
            if need == NULL or need[i * 2 + right] & NEED_HEAD:
                label_sum(&head_side[(i * 2 + right) * L], zeros, zeros, LW,
                          rows + (cur + right) * cap, counts[cur + right], L)
            if need == NULL or need[i * 2 + right] & NEED_MOD:
                label_sum(&mod_side[(i * 2 + right) * L], zeros, zeros, LW,
                          rows + (cur + 2 + right) * cap, counts[cur + 2 + right], L)


cdef int arc_label_indices(const SentC* s, FeatureSpace space, int h, int m, int label,
                           uint64_t* feats, int64_t* out) noexcept nogil:
    """Write all weight indices (arc and labeled) of the labeled arc (h, m, label)."""
    cdef int nf, i, part, k = 0, right = h < m
    cdef int64_t L = space.n_labels
    nf = layout_arc_features(s, h, m, feats, space.arc_bits, space.layout_id, 0)
    for i in range(nf):
        out[k] = <int64_t>feats[i]; k += 1
    for part in range(3):
        if part == 0:
            nf = label_head_features(s, h, right, feats, space.lab_bits)
        elif part == 1:
            nf = label_mod_features(s, m, right, feats, space.lab_bits)
        else:
            nf = label_pair_features(s, h, m, feats, space.lab_bits)
        for i in range(nf):
            out[k] = space.lab_offset + <int64_t>feats[i] * L + label; k += 1
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
def feature_delta(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                  const int32_t[::1] morph, FeatureSpace space,
                  const int32_t[::1] gold_heads, const int32_t[::1] gold_labels,
                  const int32_t[::1] pred_heads, const int32_t[::1] pred_labels):
    """phi(gold) - phi(pred) as a sparse vector (indices int64 [k], values float64 [k]).

    Only the words whose (head, label) differ contribute; an index may repeat (the caller sums
    repeats, e.g. with numpy). Heads and labels are int32 [n+1] with entry 0 ignored.
    """
    cdef SentC s
    init_sentence(&s, tokens, morph_ptr, morph)
    cdef int n = s.n, m, k, i, total = 0
    if (gold_heads.shape[0] != n + 1 or gold_labels.shape[0] != n + 1
            or pred_heads.shape[0] != n + 1 or pred_labels.shape[0] != n + 1):
        free_sentence(&s)
        raise ValueError("heads and labels must be [n+1]")
    cdef int per_arc = max_arc_features(&s) + 3 * max_label_features(&s)
    cdef int wrong = 0
    for m in range(1, n + 1):
        if gold_heads[m] != pred_heads[m] or gold_labels[m] != pred_labels[m]:
            wrong += 1
    idx = np.empty(2 * wrong * per_arc, dtype=np.int64)
    val = np.empty(2 * wrong * per_arc, dtype=np.float64)
    cdef int64_t[::1] idx_v = idx
    cdef double[::1] val_v = val
    cdef uint64_t* feats = <uint64_t*>malloc(per_arc * sizeof(uint64_t))
    if feats == NULL:
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for m in range(1, n + 1):
            if gold_heads[m] == pred_heads[m] and gold_labels[m] == pred_labels[m]:
                continue
            k = arc_label_indices(&s, space, gold_heads[m], m, gold_labels[m], feats,
                                  &idx_v[total])
            for i in range(k):
                val_v[total + i] = 1.0
            total += k
            k = arc_label_indices(&s, space, pred_heads[m], m, pred_labels[m], feats,
                                  &idx_v[total])
            for i in range(k):
                val_v[total + i] = -1.0
            total += k
    free(feats)
    free_sentence(&s)
    return idx[:total], val[:total]


@cython.boundscheck(False)
@cython.wraparound(False)
def arc_list_scores(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                    const int32_t[::1] morph, const floating[::1] weights, FeatureSpace space,
                    const int32_t[::1] heads, const int32_t[::1] mods):
    """Unlabeled scores of the arcs heads[k] -> mods[k] (int32 [K]): float64 [K].

    Only the arc features (no label part); used by undirected models, which score each edge
    {i, j}, i < j, as the arc i -> j (Levi et al. 2016: direction stripped, as the arc's
    direction is then always the same) and only for the edges a pruner kept.
    """
    cdef SentC s
    cdef Py_ssize_t K = heads.shape[0], k
    if mods.shape[0] != K:
        raise ValueError("heads and mods must have the same length")
    if weights.shape[0] != space.size:
        raise ValueError(f"weights has {weights.shape[0]} entries, the space {space.size}")
    init_sentence(&s, tokens, morph_ptr, morph)
    for k in range(K):
        if not (0 <= heads[k] <= s.n and 1 <= mods[k] <= s.n):
            free_sentence(&s)
            raise ValueError(f"arc {k} ({heads[k]} -> {mods[k]}) is out of range")
    out = np.empty(K, dtype=np.float64)
    cdef double[::1] out_v = out
    cdef const floating* W = &weights[0]
    cdef uint64_t* feats = <uint64_t*>malloc(max_arc_features(&s) * sizeof(uint64_t))
    cdef int nf
    if feats == NULL:
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for k in range(K):
            nf = layout_arc_features(&s, heads[k], mods[k], feats, space.arc_bits,
                                     space.layout_id, 0)
            out_v[k] = gather_sum(W, feats, nf)
    free(feats)
    free_sentence(&s)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def arc_list_indices(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                     const int32_t[::1] morph, FeatureSpace space,
                     const int32_t[::1] heads, const int32_t[::1] mods):
    """Weight indices of the unlabeled features of the arcs heads[k] -> mods[k]: int64, all
    arcs' indices concatenated (an index may repeat)."""
    cdef SentC s
    cdef Py_ssize_t K = heads.shape[0], k
    if mods.shape[0] != K:
        raise ValueError("heads and mods must have the same length")
    init_sentence(&s, tokens, morph_ptr, morph)
    for k in range(K):
        if not (0 <= heads[k] <= s.n and 1 <= mods[k] <= s.n):
            free_sentence(&s)
            raise ValueError(f"arc {k} ({heads[k]} -> {mods[k]}) is out of range")
    cdef int cap = max_arc_features(&s), nf, i, total = 0
    idx = np.empty(K * cap, dtype=np.int64)
    cdef int64_t[::1] idx_v = idx
    cdef uint64_t* feats = <uint64_t*>malloc(cap * sizeof(uint64_t))
    if feats == NULL:
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for k in range(K):
            nf = layout_arc_features(&s, heads[k], mods[k], feats, space.arc_bits,
                                     space.layout_id, 0)
            for i in range(nf):
                idx_v[total + i] = <int64_t>feats[i]
            total += nf
    free(feats)
    free_sentence(&s)
    return idx[:total]


# -- Undirected edge templates (U-MST-uf, Levi et al. 2016) -----------------------------------
# Extra templates of an undirected edge {l, r}, l < r, symmetric by construction (they read the
# left and the right word, never a head and a modifier). The directed features above do not use
# them: adding them leaves every directed weight index unchanged.

EDGE_GROUPS = {"between-counts": 1, "between-xpos": 2, "context": 4, "morph": 8}
#: The version of the edge templates, saved with the undirected models that read them
#: (dparse.templates).
EDGE_TEMPLATES_VERSION = 1

cdef enum:
    G_BETWEEN_COUNTS = 1
    G_BETWEEN_XPOS = 2
    G_CONTEXT = 4
    G_MORPH = 8
    G_ALL = 15
    N_CONTEXT = 8


cdef int* tag_counts(const SentC* s) noexcept nogil:
    """Prefix counts of UPOS and XPOS ids (modulo 64): ``cnt[k * 128 + 64 * c + t]`` =
    #{p < k: tag c (0 UPOS, 1 XPOS) of p = t}, int [(n+2) * 128]; NULL if out of memory."""
    cdef int n = s.n, k, t
    cdef int* cnt = <int*>malloc((n + 2) * 128 * sizeof(int))
    if cnt == NULL:
        return NULL
    for t in range(128):
        cnt[t] = 0
    for k in range(n + 1):
        for t in range(128):
            cnt[(k + 1) * 128 + t] = cnt[k * 128 + t]
        cnt[(k + 1) * 128 + (s.tok[k * NCOLS + UPOS] & 63)] += 1
        cnt[(k + 1) * 128 + 64 + (s.tok[k * NCOLS + XPOS] & 63)] += 1
    return cnt


cdef inline int max_edge_features(const SentC* s) noexcept nogil:
    """Upper bound on the number of indices ``edge_features`` writes for one edge."""
    cdef int mm = max_morph(s)
    return 2 * (2 * 4 * 64 + N_CONTEXT + 2 * mm * mm)


cdef int edge_features(const SentC* s, const int* cnt, int groups, int i, int j, uint64_t* out,
                       int bits) noexcept nogil:
    """Write the weight indices (< 2**bits) of the undirected templates of the edge {i, j} in
    ``groups`` (bits of EDGE_GROUPS); return their count. ``cnt``: tag_counts, or NULL when
    ``groups`` has neither between group. A function of the unordered pair {i, j}:
    l = min(i, j) (``lw`` below), r = max(i, j) (``rw``).

    Every key is conjoined twice: alone, and with the binned distance.
    - between-counts: each distinct UPOS t between l and r with its count binned 1, 2, 3, 4+,
      alone, with the UPOS of both l and r, with that of l, with that of r (how many verbs,
      commas, conjunctions separate the two words).
    - between-xpos: the same over XPOS.
    - context: the three-word UPOS windows around l and r against the other word's UPOS, word
      or window; the windows of both words in XPOS.
    - morph: every pair (f, g) of a morphological feature f of l and g of r, alone and with the
      UPOS of both (agreement).
    """
    cdef int lw = i if i < j else j, rw = j if i < j else i
    cdef int nf = 0, c, d, t, col, shift = 64 - bits
    cdef uint64_t ck = fmix(<uint64_t>4001)
    cdef uint64_t dk = fmix(<uint64_t>(4003 + distance_bin(rw - lw)))
    cdef uint64_t key, tags, b
    cdef uint64_t pl = att(s, lw, UPOS), pr = att(s, rw, UPOS), ql, qr
    cdef uint64_t keys[N_CONTEXT]
    cdef uint64_t base
    for col in range(2):
        if rw - lw <= 1 or not groups & (G_BETWEEN_COUNTS if col == 0 else G_BETWEEN_XPOS):
            continue
        tags = range_mask(s.umask if col == 0 else s.xmask, s.n, lw + 1, rw - 1)
        ql = att(s, lw, UPOS + col)
        qr = att(s, rw, UPOS + col)
        while tags:
            b = lowest_bit(tags)
            tags &= tags - 1
            c = cnt[rw * 128 + 64 * col + b] - cnt[(lw + 1) * 128 + 64 * col + b]
            base = side(3001 + 100 * col, b, 4 if c > 4 else c, 0)
            out[nf] = bucket(base, ck, shift)
            out[nf + 1] = bucket(base, dk, shift)
            key = base ^ side(3003 + 100 * col, ql, qr, 0)
            out[nf + 2] = bucket(key, ck, shift)
            out[nf + 3] = bucket(key, dk, shift)
            key = base ^ side(3005 + 100 * col, ql, 0, 0)
            out[nf + 4] = bucket(key, ck, shift)
            out[nf + 5] = bucket(key, dk, shift)
            key = base ^ side(3007 + 100 * col, qr, 0, 0)
            out[nf + 6] = bucket(key, ck, shift)
            out[nf + 7] = bucket(key, dk, shift)
            nf += 8
    if groups & G_CONTEXT:
        for c in range(2):
            t = UPOS + c
            keys[4 * c] = (side(3011 + 10 * c, att(s, lw - 1, t), att(s, lw, t), att(s, lw + 1, t))
                           ^ side(3012 + 10 * c, att(s, rw, t), 0, 0))
            keys[4 * c + 1] = (side(3013 + 10 * c, att(s, lw, t), 0, 0)
                               ^ side(3014 + 10 * c, att(s, rw - 1, t), att(s, rw, t),
                                      att(s, rw + 1, t)))
            keys[4 * c + 2] = (side(3015 + 10 * c, att(s, lw - 1, t), att(s, lw, t),
                                    att(s, lw + 1, t))
                               ^ side(3016 + 10 * c, att(s, rw - 1, t), att(s, rw, t),
                                      att(s, rw + 1, t)))
        keys[3] = (side(3017, att(s, lw, WORD), 0, 0)
                   ^ side(3018, att(s, rw - 1, UPOS), pr, att(s, rw + 1, UPOS)))
        keys[7] = (side(3019, att(s, lw - 1, UPOS), pl, att(s, lw + 1, UPOS))
                   ^ side(3020, att(s, rw, WORD), 0, 0))
        for c in range(N_CONTEXT):
            out[nf] = bucket(keys[c], ck, shift)
            out[nf + 1] = bucket(keys[c], dk, shift)
            nf += 2
    if groups & G_MORPH:
        for c in range(s.morph_ptr[lw], s.morph_ptr[lw + 1]):
            for d in range(s.morph_ptr[rw], s.morph_ptr[rw + 1]):
                key = side(3031, s.morph[c], s.morph[d], 0)
                out[nf] = bucket(key, ck, shift)
                out[nf + 1] = bucket(key, dk, shift)
                key = key ^ side(3033, pl, pr, 0)
                out[nf + 2] = bucket(key, ck, shift)
                out[nf + 3] = bucket(key, dk, shift)
                nf += 4
    return nf


cdef int init_edges(SentC* s, const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                    const int32_t[::1] morph, const int32_t[::1] i, const int32_t[::1] j,
                    int groups, int** cnt) except -1:
    """Check the edge list and the groups, init the sentence and (for between-counts) its tag
    counts; the caller frees both."""
    cdef Py_ssize_t k
    if j.shape[0] != i.shape[0]:
        raise ValueError("i and j must have the same length")
    if groups < 0 or groups > G_ALL:
        raise ValueError(f"groups must be a combination of {EDGE_GROUPS}, got {groups}")
    init_sentence(s, tokens, morph_ptr, morph)
    for k in range(i.shape[0]):
        if not (0 <= i[k] <= s.n and 0 <= j[k] <= s.n and i[k] != j[k]):
            free_sentence(s)
            raise ValueError(f"edge {k} ({i[k]}, {j[k]}) is a self edge or out of range")
    cnt[0] = NULL
    if groups & (G_BETWEEN_COUNTS | G_BETWEEN_XPOS):
        cnt[0] = tag_counts(s)
        if cnt[0] == NULL:
            free_sentence(s)
            raise MemoryError()
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
def edge_list_scores(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                     const int32_t[::1] morph, const floating[::1] weights, FeatureSpace space,
                     const int32_t[::1] i, const int32_t[::1] j, int groups):
    """Scores float64 [K] of the undirected templates ``groups`` (a sum of EDGE_GROUPS values)
    of the edges {i[k], j[k]} (int32 [K], either order); read from ``weights[:2**arc_bits]``."""
    cdef SentC s
    cdef int* cnt
    if weights.shape[0] != space.size:
        raise ValueError(f"weights has {weights.shape[0]} entries, the space {space.size}")
    init_edges(&s, tokens, morph_ptr, morph, i, j, groups, &cnt)
    cdef Py_ssize_t K = i.shape[0], k
    out = np.empty(K, dtype=np.float64)
    cdef double[::1] out_v = out
    cdef const floating* W = &weights[0]
    cdef uint64_t* feats = <uint64_t*>malloc(max_edge_features(&s) * sizeof(uint64_t))
    cdef int nf
    if feats == NULL:
        free(cnt)
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for k in range(K):
            nf = edge_features(&s, cnt, groups, i[k], j[k], feats, space.arc_bits)
            out_v[k] = gather_sum(W, feats, nf)
    free(feats)
    free(cnt)
    free_sentence(&s)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def edge_list_indices(const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                      const int32_t[::1] morph, FeatureSpace space,
                      const int32_t[::1] i, const int32_t[::1] j, int groups):
    """Weight indices of the undirected templates ``groups`` of the edges {i[k], j[k]}: int64,
    all edges' indices concatenated (an index may repeat)."""
    cdef SentC s
    cdef int* cnt
    init_edges(&s, tokens, morph_ptr, morph, i, j, groups, &cnt)
    cdef Py_ssize_t K = i.shape[0], k
    cdef int cap = max_edge_features(&s), nf, f, total = 0
    idx = np.empty(K * cap, dtype=np.int64)
    cdef int64_t[::1] idx_v = idx
    cdef uint64_t* feats = <uint64_t*>malloc(cap * sizeof(uint64_t))
    if feats == NULL:
        free(cnt)
        free_sentence(&s)
        raise MemoryError()
    with nogil:
        for k in range(K):
            nf = edge_features(&s, cnt, groups, i[k], j[k], feats, space.arc_bits)
            for f in range(nf):
                idx_v[total + f] = <int64_t>feats[f]
            total += nf
    free(feats)
    free(cnt)
    free_sentence(&s)
    return idx[:total]
