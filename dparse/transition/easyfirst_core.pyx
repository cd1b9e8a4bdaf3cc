# cython: language_level=3
"""Easy-first non-directional dependency parsing (Goldberg and Elhadad 2010), in C.

The parser keeps a list of pending structures p_1..p_k, initialised with the root and the n words
(node 0, the artificial root, sits at the left end), and repeatedly performs the best-scoring
action over a pair of neighbours (Algorithm 1):

- ATTACHLEFT(i) (``LEFT``): p_i becomes the head of p_{i+1}; p_{i+1} leaves the list.
- ATTACHRIGHT(i) (``RIGHT``): p_{i+1} becomes the head of p_i; p_i leaves the list.

The root never becomes a child; with ``single_root`` it takes its child only when it is the last
pending structure besides the root (so exactly one word attaches to it). A location is named by
the token heading its left structure; locations are compared by (score, leftmost first), and
within a location ATTACHLEFT wins ties, so the heap and the scan argmax pick the same action.

Efficient implementation (Section 6): the score of every location is cached; after an attachment
only the k = 6 locations whose window p_{i-2}..p_{i+3} contains the new parent are re-extracted,
so a sentence of n words costs at most n + 6 (n - 1) feature extractions. The argmax is a
max-scan over the pending list or an indexed binary max-heap.

Features (Figure 2), each conjoined with the action: a feature picks a row of two weights (one per
action) among ``2**action_bits`` rows, so both actions of a location are scored by the same
memory reads. The label of an arc is chosen when the arc is made, by a multi-class classifier
over features of the parent and the (complete) child: a feature picks one of ``2**label_bits``
rows of ``n_labels`` weights, stored from ``label_offset = 2 * 2**action_bits`` on.

Training (Algorithm 2) is the structured perceptron with the valid-action update, on the
averaged-perceptron weights of :class:`dparse.learning.AveragedLearner` (``w`` and ``u``, the sum
of ``c * update``); a shard's learner of :mod:`dparse.mixing` also has every written weight
marked in its ``touched`` bit mask.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

cimport cython
from cython cimport floating

from dparse._ext.hashing cimport distance_bin, fmix, mix
from dparse._ext.tokens cimport BOS_ID, EOS_ID, LEMMA, NCOLS, SUFFIX, UPOS, WORD, XPOS
from dparse._ext.weights cimport argmax, mark

cdef enum:
    # Stand-in for "no child" in the child features (not a vocabulary id).
    NONE_ID = 0x7FFFFFF0
    # Actions.
    LEFT = 0
    RIGHT = 1
    # Tag flags (bit set per tag id).
    FLAG_LEXICAL = 1
    FLAG_PREPOSITION = 2
    # Most features of one location / one labeled arc (a location with every group: 103 of
    # the paper's templates, 32 lexical, 14 feats, 3 * 2 * MAX_ATOMS atoms = 185).
    MAX_ACTION_FEATURES = 192
    # Template groups beyond the paper's (bit set in ``templates``).
    GROUP_LEXICAL = 1
    GROUP_FEATS = 2
    GROUP_ATOMS = 4
    # GROUP_ATOMS: morphological features read one by one, at most this many of a word.
    MAX_ATOMS = 6
    MAX_LABEL_FEATURES = 32
    # Status codes of the nogil cores.
    OK = 0
    NO_MEMORY = -1
    NO_VALID_ACTION = -2

TAG_LEXICAL = FLAG_LEXICAL
TAG_PREPOSITION = FLAG_PREPOSITION
TEMPLATE_GROUPS = {"lexical": GROUP_LEXICAL, "feats": GROUP_FEATS, "atoms": GROUP_ATOMS}
#: The version of the action and label templates of this module (the paper's and the groups'),
#: saved with every easy-first model (dparse.templates): a change that gives any location or
#: arc other features takes the next version.
TEMPLATES_VERSION = 1


cdef inline uint64_t key(uint64_t t, uint64_t a, uint64_t b, uint64_t c,
                         uint64_t d) noexcept nogil:
    """The key of template t over up to four values (unused ones 0)."""
    return fmix(mix(mix(mix(mix(t + 1, a), b), c), d))


cdef inline uint32_t bucket(uint64_t k, int shift) noexcept nogil:
    """Multiply-shift hash of a key: its row among 2**(64 - shift)."""
    return <uint32_t>((k * <uint64_t>0x9FB21C651E98DF25ULL) >> shift)


ctypedef struct StateC:
    # The sentence.
    int n
    const int32_t* tok          # [n+1, NCOLS], row 0 the root
    int tagcol                  # the column t_p reads (UPOS or XPOS)
    int othercol                # the other tag column (XPOS or UPOS)
    int templates               # GROUP_* bits: template groups beyond the paper's
    const uint8_t* flags        # FLAG_* per tag id [n_flags]
    int n_flags
    bint single_root
    # The pending list over token ids (-1 past either end) and its length.
    int32_t* nxt                # [n+1]
    int32_t* prv                # [n+1]
    int length
    # Per token, the structure it heads: leftmost / rightmost child (-1: none), span, tag key.
    int32_t* lc                 # [n+1]
    int32_t* rc                 # [n+1]
    int32_t* lo                 # [n+1]
    int32_t* hi                 # [n+1]
    uint64_t* tkey              # [n+1] t_p: the tag, or word + tag for lexicalized tags
    uint64_t* mkey              # [n+1] the token's morphological features, hashed together
    const int32_t* morph_ptr    # [n+2] CSR morphological feature ids (NULL: none)
    const int32_t* morph
    # The parse built so far.
    int32_t* heads              # [n+1]
    int32_t* labels             # [n+1]
    # Per location (left token): cached scores of both actions [n+1, 2] and, in training,
    # the cached feature rows [n+1, MAX_ACTION_FEATURES] with their counts [n+1].
    double* score
    uint32_t* rows
    int32_t* n_rows
    int64_t extractions


ctypedef struct SlotC:
    # What the features read of one structure of the window (a padding slot outside the list).
    uint64_t w, t, lct, rct, rcw
    uint64_t sfx, lem, u        # GROUP_LEXICAL: suffix, lemma, the other tag column
    uint64_t m                  # GROUP_FEATS: the morphological features
    int pos, length, nc, prep


cdef int init_state(StateC* s, const int32_t[:, ::1] tokens, int tagcol,
                    const uint8_t[::1] flags, bint single_root, bint training,
                    int templates, const int32_t* morph_ptr,
                    const int32_t* morph) noexcept nogil:
    """Allocate and fill the initial state: every token its own pending structure.
    ``morph_ptr`` [n+2] / ``morph``: the CSR morphological feature ids (dparse.vocab), or
    NULL (no features)."""
    cdef int n = tokens.shape[0] - 1, i, tag, f
    cdef uint64_t h
    cdef int N = n + 1
    s.n = n
    s.tok = &tokens[0, 0]
    s.tagcol = tagcol
    s.othercol = XPOS if tagcol == UPOS else UPOS
    s.templates = templates
    s.morph_ptr = morph_ptr
    s.morph = morph
    s.flags = &flags[0] if flags.shape[0] > 0 else NULL
    s.n_flags = flags.shape[0]
    s.single_root = single_root
    s.length = N
    s.extractions = 0
    s.nxt = <int32_t*>malloc(8 * N * sizeof(int32_t))
    s.tkey = <uint64_t*>malloc(2 * N * sizeof(uint64_t))
    s.score = <double*>malloc(2 * N * sizeof(double))
    s.rows = <uint32_t*>malloc(N * MAX_ACTION_FEATURES * sizeof(uint32_t)) if training else NULL
    s.n_rows = <int32_t*>malloc(N * sizeof(int32_t)) if training else NULL
    if (s.nxt == NULL or s.tkey == NULL or s.score == NULL
            or (training and (s.rows == NULL or s.n_rows == NULL))):
        return NO_MEMORY
    s.prv = s.nxt + N
    s.mkey = s.tkey + N
    s.lc = s.nxt + 2 * N
    s.rc = s.nxt + 3 * N
    s.lo = s.nxt + 4 * N
    s.hi = s.nxt + 5 * N
    s.heads = s.nxt + 6 * N
    s.labels = s.nxt + 7 * N
    for i in range(N):
        s.nxt[i] = i + 1 if i < n else -1
        s.prv[i] = i - 1
        s.lc[i] = -1
        s.rc[i] = -1
        s.lo[i] = i
        s.hi[i] = i
        s.heads[i] = -1
        s.labels[i] = -1
        tag = s.tok[i * NCOLS + tagcol]
        s.tkey[i] = <uint64_t>tag
        h = <uint64_t>(i == 0)  # the root's features differ from any word's
        if morph_ptr != NULL:
            for f in range(morph_ptr[i], morph_ptr[i + 1]):
                h = mix(h, <uint64_t>morph[f] + 1)
        s.mkey[i] = fmix(h + 7)
        if 0 <= tag < s.n_flags and s.flags[tag] & FLAG_LEXICAL:
            s.tkey[i] |= (<uint64_t>(s.tok[i * NCOLS + WORD] + 1)) << 32
    return OK


cdef void free_state(StateC* s) noexcept nogil:
    free(s.nxt)
    free(s.tkey)
    free(s.score)
    free(s.rows)
    free(s.n_rows)


cdef inline bint is_prep(const StateC* s, int t) noexcept nogil:
    cdef int tag = s.tok[t * NCOLS + s.tagcol]
    return 0 <= tag < s.n_flags and (s.flags[tag] & FLAG_PREPOSITION) != 0


cdef inline void fill_slot(const StateC* s, int t, uint64_t pad, SlotC* o) noexcept nogil:
    """The slot of the structure headed by token t, or a padding slot if t < 0."""
    if t < 0:
        o.w = pad; o.t = pad; o.lct = NONE_ID; o.rct = NONE_ID; o.rcw = NONE_ID
        o.sfx = pad; o.lem = pad; o.u = pad; o.m = pad
        o.pos = -1; o.length = 0; o.nc = 2; o.prep = 0
        return
    o.w = <uint64_t>s.tok[t * NCOLS + WORD]
    o.sfx = <uint64_t>s.tok[t * NCOLS + SUFFIX]
    o.lem = <uint64_t>s.tok[t * NCOLS + LEMMA]
    o.u = <uint64_t>s.tok[t * NCOLS + s.othercol]
    o.m = s.mkey[t]
    o.t = s.tkey[t]
    o.pos = t
    o.length = distance_bin(s.hi[t] - s.lo[t] + 1)
    o.nc = s.lc[t] < 0
    o.prep = is_prep(s, t)
    if s.lc[t] >= 0:
        o.lct = <uint64_t>s.tok[s.lc[t] * NCOLS + s.tagcol]
        o.rct = <uint64_t>s.tok[s.rc[t] * NCOLS + s.tagcol]
        o.rcw = <uint64_t>s.tok[s.rc[t] * NCOLS + WORD]
    else:
        o.lct = NONE_ID; o.rct = NONE_ID; o.rcw = NONE_ID


cdef inline int distance(const SlotC* p, const SlotC* q) noexcept nogil:
    """Delta_pq: the binned surface distance between the heads (0 if one is padding)."""
    if p.pos < 0 or q.pos < 0:
        return 0
    return distance_bin(q.pos - p.pos if q.pos > p.pos else p.pos - q.pos)


cdef int location_keys(const StateC* s, int a, uint64_t* out) noexcept nogil:
    """The feature keys of the location whose left structure is headed by a (Figure 2).

    The window is p_{i-2}, p_{i-1}, p_i = a, p_{i+1} = nxt[a], p_{i+2}, p_{i+3}, padded with
    BOS / EOS slots. Every template has a fixed id t, whether or not it fires; keys are not yet
    conjoined with the action (the row holds one weight per action).
    """
    cdef SlotC P[6]
    cdef int b = s.nxt[a], k, nf = 0, j
    cdef int pa = s.prv[a]
    cdef int pb = s.nxt[b]
    fill_slot(s, s.prv[pa] if pa >= 0 else -1, BOS_ID, &P[0])
    fill_slot(s, pa, BOS_ID, &P[1])
    fill_slot(s, a, BOS_ID, &P[2])
    fill_slot(s, b, EOS_ID, &P[3])
    fill_slot(s, pb, EOS_ID, &P[4])
    fill_slot(s, s.nxt[pb] if pb >= 0 else -1, EOS_ID, &P[5])
    cdef const SlotC* p
    cdef const SlotC* q
    # bias
    out[nf] = key(0, 0, 0, 0, 0); nf += 1
    # Structural: len_p, nc_p for the six structures (t = 1..12).
    for k in range(6):
        out[nf] = key(1 + 2 * k, <uint64_t>P[k].length, 0, 0, 0)
        out[nf + 1] = key(2 + 2 * k, <uint64_t>P[k].nc, 0, 0, 0)
        nf += 2
    # Structural: Delta_qp and Delta_qp t_p t_q for consecutive pairs (t = 13..22).
    for k in range(5):
        p = &P[k]
        q = &P[k + 1]
        j = distance(p, q)
        out[nf] = key(13 + 2 * k, <uint64_t>j, 0, 0, 0)
        out[nf + 1] = key(14 + 2 * k, <uint64_t>j, p.t, q.t, 0)
        nf += 2
    # Unigram: t_p, w_p, t_p lc_p, t_p rc_p, t_p rc_p lc_p (t = 23..52).
    for k in range(6):
        p = &P[k]
        out[nf] = key(23 + 5 * k, p.t, 0, 0, 0)
        out[nf + 1] = key(24 + 5 * k, p.w, 0, 0, 0)
        out[nf + 2] = key(25 + 5 * k, p.t, p.lct, 0, 0)
        out[nf + 3] = key(26 + 5 * k, p.t, p.rct, 0, 0)
        out[nf + 4] = key(27 + 5 * k, p.t, p.rct, p.lct, 0)
        nf += 5
    # Bigram over (p_i, p_{i+1}), (p_i, p_{i+2}), (p_{i-1}, p_i), (p_{i-1}, p_{i+2}),
    # (p_{i+1}, p_{i+2}) (t = 53..92).
    cdef int pairs[10]
    pairs[0] = 2; pairs[1] = 3; pairs[2] = 2; pairs[3] = 4; pairs[4] = 1; pairs[5] = 2
    pairs[6] = 1; pairs[7] = 4; pairs[8] = 3; pairs[9] = 4
    for k in range(5):
        p = &P[pairs[2 * k]]
        q = &P[pairs[2 * k + 1]]
        j = 53 + 8 * k
        out[nf] = key(j, p.t, q.t, 0, 0)
        out[nf + 1] = key(j + 1, p.w, q.w, 0, 0)
        out[nf + 2] = key(j + 2, p.t, q.w, 0, 0)
        out[nf + 3] = key(j + 3, p.w, q.t, 0, 0)
        out[nf + 4] = key(j + 4, p.t, q.t, p.lct, q.lct)
        out[nf + 5] = key(j + 5, p.t, q.t, p.rct, q.lct)
        out[nf + 6] = key(j + 6, p.t, q.t, p.lct, q.rct)
        out[nf + 7] = key(j + 7, p.t, q.t, p.rct, q.rct)
        nf += 8
    # PP-attachment, when p_i, p_{i+1} or p_{i+2} is a preposition (t = 93..102): the word (or
    # tag) of the candidate head, the preposition's word, and its object's tag (or word).
    if P[2].prep:
        out[nf] = key(93, P[1].w, P[2].w, P[2].rct, 0)
        out[nf + 1] = key(94, P[1].t, P[2].w, P[2].rcw, 0)
        nf += 2
    if P[3].prep:
        out[nf] = key(95, P[1].w, P[3].w, P[3].rct, 0)
        out[nf + 1] = key(96, P[1].t, P[3].w, P[3].rcw, 0)
        out[nf + 2] = key(97, P[2].w, P[3].w, P[3].rct, 0)
        out[nf + 3] = key(98, P[2].t, P[3].w, P[3].rcw, 0)
        nf += 4
    if P[4].prep:
        out[nf] = key(99, P[3].w, P[4].w, P[4].rct, 0)
        out[nf + 1] = key(100, P[3].t, P[4].w, P[4].rcw, 0)
        out[nf + 2] = key(101, P[2].w, P[4].w, P[4].rct, 0)
        out[nf + 3] = key(102, P[2].t, P[4].w, P[4].rcw, 0)
        nf += 4
    if s.templates & GROUP_LEXICAL:
        nf += lexical_keys(P, out + nf)
    if s.templates & GROUP_FEATS:
        nf += feats_keys(P, out + nf)
    if s.templates & GROUP_ATOMS and s.morph_ptr != NULL:
        nf += atom_keys(s, P, out + nf)
    return nf


cdef int atom_keys(const StateC* s, const SlotC* P, uint64_t* out) noexcept nogil:
    """GROUP_ATOMS templates (t = 180..185): each morphological feature f (at most MAX_ATOMS
    of a word) of the two structures a location joins, p_i and p_{i+1}: f alone, with the own
    tag and with the other structure's tag (case and agreement, read one feature at a time
    where FEATS strings as a whole are sparse)."""
    cdef int k, f, first, nf = 0, t
    cdef const SlotC* p
    cdef const SlotC* q
    for k in range(2):
        p = &P[2 + k]
        q = &P[3 - k]
        if p.pos < 0:  # padding (the root's range is empty: morph_pointers)
            continue
        first = s.morph_ptr[p.pos]
        t = 180 + 3 * k
        for f in range(first, min(s.morph_ptr[p.pos + 1], first + MAX_ATOMS)):
            out[nf] = key(t, <uint64_t>s.morph[f], 0, 0, 0)
            out[nf + 1] = key(t + 1, <uint64_t>s.morph[f], p.t, 0, 0)
            out[nf + 2] = key(t + 2, <uint64_t>s.morph[f], q.t, 0, 0)
            nf += 3
    return nf


cdef int feats_keys(const SlotC* P, uint64_t* out) noexcept nogil:
    """GROUP_FEATS templates (t = 160..): the morphological features (FEATS, hashed whole)
    of the four central structures, alone and with t_p, and of the pairs (p_{i-1}, p_i),
    (p_i, p_{i+1}), (p_{i+1}, p_{i+2}), alone and with both tags."""
    cdef int k, nf = 0
    cdef const SlotC* p
    cdef const SlotC* q
    for k in range(1, 5):
        p = &P[k]
        out[nf] = key(160 + 2 * k, p.m, 0, 0, 0)
        out[nf + 1] = key(161 + 2 * k, p.m, p.t, 0, 0)
        nf += 2
    for k in range(1, 4):
        p = &P[k]
        q = &P[k + 1]
        out[nf] = key(170 + 2 * k, p.m, q.m, 0, 0)
        out[nf + 1] = key(171 + 2 * k, p.m, q.m, p.t, q.t)
        nf += 2
    return nf


cdef int lexical_keys(const SlotC* P, uint64_t* out) noexcept nogil:
    """GROUP_LEXICAL templates (t = 110..): the suffix, lemma and other tag column of the four
    central structures p_{i-1}..p_{i+2}, alone and with t_p, and pairs of suffixes and of
    other tags over (p_{i-1}, p_i), (p_i, p_{i+1}) and (p_{i+1}, p_{i+2}) (case endings,
    agreement). Static attributes of the window's heads only, so the k = 6 rescoring window
    still covers every location whose keys change."""
    cdef int k, nf = 0, j
    cdef const SlotC* p
    cdef const SlotC* q
    for k in range(1, 5):
        p = &P[k]
        j = 110 + 5 * k
        out[nf] = key(j, p.sfx, 0, 0, 0)
        out[nf + 1] = key(j + 1, p.sfx, p.t, 0, 0)
        out[nf + 2] = key(j + 2, p.lem, 0, 0, 0)
        out[nf + 3] = key(j + 3, p.u, 0, 0, 0)
        out[nf + 4] = key(j + 4, p.u, p.t, 0, 0)
        nf += 5
    for k in range(3):
        p = &P[1 + k]
        q = &P[2 + k]
        j = 140 + 4 * k
        out[nf] = key(j, p.sfx, q.sfx, 0, 0)
        out[nf + 1] = key(j + 1, p.sfx, q.t, 0, 0)
        out[nf + 2] = key(j + 2, p.t, q.sfx, 0, 0)
        out[nf + 3] = key(j + 3, p.u, q.u, 0, 0)
        nf += 4
    return nf


cdef inline uint64_t lab_of(const StateC* s, int t) noexcept nogil:
    """The label of token t's arc (NONE_ID for no token)."""
    return NONE_ID if t < 0 else <uint64_t>(s.labels[t] + 1)


cdef int label_keys(const StateC* s, int parent, int child, uint64_t* out) noexcept nogil:
    """The label-feature keys of the arc parent -> child, made when the child is complete."""
    cdef SlotC P, C
    cdef int nf = 0
    cdef uint64_t right = child > parent
    cdef uint64_t dist = distance_bin(child - parent if child > parent else parent - child)
    cdef uint64_t up = s.tok[parent * NCOLS + UPOS]
    cdef uint64_t uc = s.tok[child * NCOLS + UPOS]
    cdef uint64_t cl = (<uint64_t>s.tok[(child - 1) * NCOLS + s.tagcol]) if child > 1 else BOS_ID
    cdef uint64_t cr = (<uint64_t>s.tok[(child + 1) * NCOLS + s.tagcol]) if child < s.n else EOS_ID
    fill_slot(s, parent, 0, &P)
    fill_slot(s, child, 0, &C)
    out[nf] = key(200, right, 0, 0, 0); nf += 1
    out[nf] = key(201, right, C.t, 0, 0); nf += 1
    out[nf] = key(202, right, C.w, 0, 0); nf += 1
    out[nf] = key(203, right, P.t, 0, 0); nf += 1
    out[nf] = key(204, right, P.w, 0, 0); nf += 1
    out[nf] = key(205, right, P.t, C.t, 0); nf += 1
    out[nf] = key(206, right, P.t, C.w, 0); nf += 1
    out[nf] = key(207, right, P.w, C.t, 0); nf += 1
    out[nf] = key(208, right, P.w, C.w, 0); nf += 1
    out[nf] = key(209, right, C.t, C.lct, C.rct); nf += 1
    out[nf] = key(210, right, C.t, C.lct, 0); nf += 1
    out[nf] = key(211, right, C.t, C.rct, 0); nf += 1
    out[nf] = key(212, right, P.t, C.t, dist); nf += 1
    out[nf] = key(213, right, up, uc, 0); nf += 1
    out[nf] = key(214, right, uc, 0, 0); nf += 1
    out[nf] = key(215, right, up, uc, dist); nf += 1
    out[nf] = key(216, right, C.t, C.rcw, 0); nf += 1
    out[nf] = key(217, right, P.t, P.lct, P.rct); nf += 1
    out[nf] = key(218, right, C.t, cl, cr); nf += 1
    out[nf] = key(219, right, uc, <uint64_t>C.nc, P.t); nf += 1
    out[nf] = key(220, right, C.w, P.t, <uint64_t>C.length); nf += 1
    # the labels the child's outermost children got (its structure is complete)
    out[nf] = key(221, right, C.t, lab_of(s, s.lc[child]), lab_of(s, s.rc[child])); nf += 1
    out[nf] = key(222, right, uc, lab_of(s, s.lc[child]), 0); nf += 1
    out[nf] = key(223, right, uc, lab_of(s, s.rc[child]), 0); nf += 1
    out[nf] = key(224, right, P.t, C.t, lab_of(s, s.lc[child])); nf += 1
    # lemmas, suffix, and the label of the sibling attached just before on the child's side
    out[nf] = key(225, right, s.tok[child * NCOLS + LEMMA], P.t, 0); nf += 1
    out[nf] = key(226, right, s.tok[parent * NCOLS + LEMMA], uc, 0); nf += 1
    out[nf] = key(227, right, s.tok[child * NCOLS + SUFFIX], uc, 0); nf += 1
    out[nf] = key(228, right, C.w, up, 0); nf += 1
    out[nf] = key(229, right, up, uc, lab_of(s, s.lc[parent] if child < parent
                                                 else s.rc[parent])); nf += 1
    return nf


cdef inline int legal(const StateC* s, int a, int act) noexcept nogil:
    """Whether action act may be taken at location a (the root never becomes a child)."""
    if a != 0:
        return 1
    return act == LEFT and (not s.single_root or s.length == 2)


cdef inline int location_best(const StateC* s, int a, double* best) noexcept nogil:
    """The best legal action of location a (ATTACHLEFT on ties) and its score; -1 if none."""
    cdef double sl = s.score[2 * a], sr = s.score[2 * a + 1]
    if a == 0:
        if not legal(s, 0, LEFT):
            return -1
        best[0] = sl
        return LEFT
    if sl >= sr:
        best[0] = sl
        return LEFT
    best[0] = sr
    return RIGHT


cdef inline void score_rows(const floating* W, const uint32_t* rows, int nf,
                            double* out) noexcept nogil:
    """out[0], out[1] = the ATTACHLEFT and ATTACHRIGHT scores of the feature rows."""
    cdef double l0 = 0.0, l1 = 0.0, r0 = 0.0, r1 = 0.0
    cdef int f = 0
    cdef const floating* row
    while f + 1 < nf:
        row = W + 2 * <size_t>rows[f]
        l0 += row[0]; r0 += row[1]
        row = W + 2 * <size_t>rows[f + 1]
        l1 += row[0]; r1 += row[1]
        f += 2
    if f < nf:
        row = W + 2 * <size_t>rows[f]
        l0 += row[0]; r0 += row[1]
    out[0] = l0 + l1
    out[1] = r0 + r1


cdef inline void extract(StateC* s, const floating* W, int a, int shift,
                         uint32_t* rows) noexcept nogil:
    """Extract the features of location a into ``rows`` (or the location's cache in training)
    and cache its two action scores."""
    cdef uint64_t keys[MAX_ACTION_FEATURES]
    cdef int nf = location_keys(s, a, keys), f
    if s.rows != NULL:
        rows = s.rows + a * MAX_ACTION_FEATURES
        s.n_rows[a] = nf
    for f in range(nf):
        rows[f] = bucket(keys[f], shift)
    score_rows(W, rows, nf, s.score + 2 * a)
    s.extractions += 1


cdef int best_label(const StateC* s, const floating* W, size_t offset, int L, int lshift,
                    int parent, int child, uint32_t* rows, int* nrows,
                    double* acc) noexcept nogil:
    """The best label of parent -> child; fills its feature rows (``rows``, ``nrows``)."""
    cdef uint64_t keys[MAX_LABEL_FEATURES]
    cdef int nf = label_keys(s, parent, child, keys), f, l
    cdef const floating* row
    for l in range(L):
        acc[l] = 0.0
    for f in range(nf):
        rows[f] = bucket(keys[f], lshift)
        row = W + offset + <size_t>rows[f] * L
        for l in range(L):
            acc[l] += row[l]
    nrows[0] = nf
    return argmax(acc, L)


cdef inline void attach(StateC* s, int a, int act, int label) noexcept nogil:
    """Perform ACTION(a): add the arc, update the parent's structure, drop the child."""
    cdef int b = s.nxt[a]
    cdef int parent = a if act == LEFT else b
    cdef int child = b if act == LEFT else a
    s.heads[child] = parent
    s.labels[child] = label
    if child < parent:
        s.lc[parent] = child  # left of every child the parent has so far
        if s.rc[parent] < 0:
            s.rc[parent] = child
        s.lo[parent] = s.lo[child]
    else:
        s.rc[parent] = child
        if s.lc[parent] < 0:
            s.lc[parent] = child
        s.hi[parent] = s.hi[child]
    if s.prv[child] >= 0:
        s.nxt[s.prv[child]] = s.nxt[child]
    if s.nxt[child] >= 0:
        s.prv[s.nxt[child]] = s.prv[child]
    s.length -= 1


cdef inline int window(const StateC* s, int parent, int* out) noexcept nogil:
    """The locations whose feature window contains the structure of ``parent``: the left tokens
    of locations i-3..i+2 around its index i (those with a right neighbour)."""
    cdef int t = parent, k, m = 0, seen = 0, after = 0
    for k in range(3):
        if s.prv[t] < 0:
            break
        t = s.prv[t]
    while t >= 0 and s.nxt[t] >= 0:
        out[m] = t
        m += 1
        if seen:
            after += 1
            if after == 2:
                break
        if t == parent:
            seen = 1
        t = s.nxt[t]
    return m


# ---------------------------------------------------------------- the indexed max-heap

ctypedef struct HeapC:
    int32_t* item    # [n+1] heap of locations
    int32_t* pos     # [n+1] index of each location in ``item``, -1 if absent
    double* key      # [n+1] best score of each location
    int size


cdef inline bint above(const HeapC* h, int x, int y) noexcept nogil:
    """Whether location x comes before y: higher score, then leftmost."""
    return h.key[x] > h.key[y] or (h.key[x] == h.key[y] and x < y)


cdef inline void heap_swap(HeapC* h, int i, int j) noexcept nogil:
    cdef int x = h.item[i]
    h.item[i] = h.item[j]
    h.item[j] = x
    h.pos[h.item[i]] = i
    h.pos[h.item[j]] = j


cdef void sift(HeapC* h, int i) noexcept nogil:
    """Restore the heap order around index i (up, then down)."""
    cdef int c, best
    while i > 0 and above(h, h.item[i], h.item[(i - 1) // 2]):
        heap_swap(h, i, (i - 1) // 2)
        i = (i - 1) // 2
    while True:
        best = i
        c = 2 * i + 1
        if c < h.size and above(h, h.item[c], h.item[best]):
            best = c
        if c + 1 < h.size and above(h, h.item[c + 1], h.item[best]):
            best = c + 1
        if best == i:
            return
        heap_swap(h, i, best)
        i = best


cdef void heap_set(HeapC* h, int x, double score) noexcept nogil:
    """Insert location x with ``score``, or change its score."""
    h.key[x] = score
    if h.pos[x] < 0:
        h.item[h.size] = x
        h.pos[x] = h.size
        h.size += 1
    sift(h, h.pos[x])


cdef void heap_remove(HeapC* h, int x) noexcept nogil:
    """Remove location x if present."""
    cdef int i = h.pos[x]
    if i < 0:
        return
    h.size -= 1
    if i != h.size:
        heap_swap(h, i, h.size)
        h.pos[x] = -1
        sift(h, i)
    else:
        h.pos[x] = -1


cdef inline void heap_refresh(HeapC* h, const StateC* s, int a) noexcept nogil:
    """Put location a in the heap with its best legal score, or take it out."""
    cdef double best
    if a < 0 or s.nxt[a] < 0 or location_best(s, a, &best) < 0:
        heap_remove(h, a)
    else:
        heap_set(h, a, best)


cdef inline int scan_argmax(const StateC* s, int* act) noexcept nogil:
    """The best legal location by a max-scan over the pending list (-1 if none)."""
    cdef int a = 0, best_a = -1, x
    cdef double best = -INFINITY, v
    while a >= 0 and s.nxt[a] >= 0:
        x = location_best(s, a, &v)
        if x >= 0 and (best_a < 0 or v > best):
            best = v
            best_a = a
            act[0] = x
        a = s.nxt[a]
    return best_a


cdef int parse_core(StateC* s, const floating* W, int shift, size_t offset, int L, int lshift,
                    bint use_heap) noexcept nogil:
    """Algorithm 1 with cached location scores; heads and labels end up in ``s``."""
    cdef int N = s.n + 1, a, act = LEFT, parent, child, m, k
    cdef uint32_t rows[MAX_ACTION_FEATURES]
    cdef uint32_t lrows[MAX_LABEL_FEATURES]
    cdef int nl, label
    cdef int around[6]
    cdef double best
    cdef HeapC h
    cdef double* acc = <double*>malloc((L + 1) * sizeof(double))
    h.item = <int32_t*>malloc(2 * N * sizeof(int32_t))
    h.key = <double*>malloc(N * sizeof(double))
    if acc == NULL or h.item == NULL or h.key == NULL:
        free(acc); free(h.item); free(h.key)
        return NO_MEMORY
    h.pos = h.item + N
    h.size = 0
    for a in range(N):
        h.pos[a] = -1
    a = 0
    while s.nxt[a] >= 0:
        extract(s, W, a, shift, rows)
        if use_heap:
            heap_refresh(&h, s, a)
        a = s.nxt[a]
    while s.length > 1:
        if use_heap:
            a = h.item[0]
            act = location_best(s, a, &best)
        else:
            a = scan_argmax(s, &act)
        parent = a if act == LEFT else s.nxt[a]
        child = s.nxt[a] if act == LEFT else a
        label = best_label(s, W, offset, L, lshift, parent, child, lrows, &nl, acc) if L > 0 else -1
        attach(s, a, act, label)
        if use_heap:
            heap_remove(&h, child)
        m = window(s, parent, around)
        for k in range(m):
            extract(s, W, around[k], shift, rows)
            if use_heap:
                heap_refresh(&h, s, around[k])
        if use_heap:
            # the location left of the parent lost its right neighbour if the parent is last
            heap_refresh(&h, s, parent)
            if s.length == 2:
                heap_refresh(&h, s, 0)
    free(acc); free(h.item); free(h.key)
    return OK


# ---------------------------------------------------------------- constrained parsing

cdef bint completable(const StateC* s, int gone, const uint8_t* allowed, int32_t* items,
                      uint8_t* chart) noexcept nogil:
    """Whether the pending structures without ``gone`` (just attached) can still be joined
    into one tree of allowed arcs between their heads (allowed[h * (n+1) + m]), projective
    over the pending list and with one root child under ``single_root``: the arcs easy-first
    can still make. Eisner's chart over booleans; ``items`` [n+1] and ``chart`` 4 (n+1)^2
    bytes of work space."""
    cdef int N = s.n + 1, k = 0, d, i, t, r, K
    cdef int a = 0
    cdef uint8_t* CR
    cdef uint8_t* CL
    cdef uint8_t* IR
    cdef uint8_t* IL
    cdef bint ok, arc_r, arc_l
    while a >= 0:
        if a != gone:
            items[k] = a
            k += 1
        a = s.nxt[a]
    K = k
    CR = chart
    CL = chart + K * K
    IR = chart + 2 * K * K
    IL = chart + 3 * K * K
    for i in range(K):
        for t in range(K):
            CR[i * K + t] = i == t
            CL[i * K + t] = i == t
            IR[i * K + t] = 0
            IL[i * K + t] = 0
    for d in range(1, K):
        for i in range(K - d):
            t = i + d
            arc_r = allowed[items[i] * N + items[t]] != 0
            arc_l = allowed[items[t] * N + items[i]] != 0
            if arc_r or arc_l:
                ok = False
                for r in range(i, t):
                    if CR[i * K + r] and CL[(r + 1) * K + t]:
                        ok = True
                        break
                IR[i * K + t] = arc_r and ok
                IL[i * K + t] = arc_l and ok
            for r in range(i + 1, t + 1):
                if IR[i * K + r] and CR[r * K + t]:
                    CR[i * K + t] = 1
                    break
            for r in range(i, t):
                if CL[i * K + r] and IL[r * K + t]:
                    CL[i * K + t] = 1
                    break
    if K == 1:
        return True
    if not s.single_root:
        return CR[K - 1] != 0
    for r in range(1, K):
        if allowed[items[r]] and CL[1 * K + r] and CR[r * K + K - 1]:
            return True
    return False


cdef int parse_constrained_core(StateC* s, const floating* W, int shift, size_t offset, int L,
                                int lshift, const uint8_t* allowed, const int32_t* fixed,
                                const int32_t* fixed_label) noexcept nogil:
    """Algorithm 1 under constraints, with the max-scan: only attachments of allowed arcs
    (``allowed`` uint8 [(n+1) * (n+1)]) after which the pending structures can still form a
    tree of allowed arcs (:func:`completable`); among those, an attachment that makes a fixed
    arc (``fixed`` int32 [n+1], -1 free) before any other, then by score; a fixed label
    (``fixed_label`` int32 [n+1], -1 none) instead of the classifier's."""
    cdef int N = s.n + 1, a, b, act, parent, child, m, k, best_a, best_act, is_fixed
    cdef int best_fixed, nl, label
    cdef uint32_t rows[MAX_ACTION_FEATURES]
    cdef uint32_t lrows[MAX_LABEL_FEATURES]
    cdef int around[6]
    cdef double best, v
    cdef double* acc = <double*>malloc((L + 1) * sizeof(double))
    cdef uint8_t* blocked = <uint8_t*>malloc(2 * N + 4 * N * N)
    cdef int32_t* items = <int32_t*>malloc(N * sizeof(int32_t))
    if acc == NULL or blocked == NULL or items == NULL:
        free(acc); free(blocked); free(items)
        return NO_MEMORY
    a = 0
    while s.nxt[a] >= 0:
        extract(s, W, a, shift, rows)
        a = s.nxt[a]
    while s.length > 1:
        for a in range(2 * N):
            blocked[a] = 0
        while True:
            best_a = -1
            best_act = LEFT
            best_fixed = 0
            best = -INFINITY
            a = 0
            while a >= 0 and s.nxt[a] >= 0:
                b = s.nxt[a]
                for act in range(2):
                    if blocked[2 * a + act] or not legal(s, a, act):
                        continue
                    parent = a if act == LEFT else b
                    child = b if act == LEFT else a
                    if not allowed[parent * N + child]:
                        continue
                    is_fixed = fixed[child] == parent
                    v = s.score[2 * a + act]
                    if best_a < 0 or is_fixed > best_fixed or (is_fixed == best_fixed
                                                               and v > best):
                        best_a = a
                        best_act = act
                        best_fixed = is_fixed
                        best = v
                a = b
            if best_a < 0:
                free(acc); free(blocked); free(items)
                return NO_VALID_ACTION
            child = s.nxt[best_a] if best_act == LEFT else best_a
            if completable(s, child, allowed, items, blocked + 2 * N):
                break
            blocked[2 * best_a + best_act] = 1
        a = best_a
        act = best_act
        parent = a if act == LEFT else s.nxt[a]
        child = s.nxt[a] if act == LEFT else a
        if fixed_label[child] >= 0:
            label = fixed_label[child]
        elif L > 0:
            label = best_label(s, W, offset, L, lshift, parent, child, lrows, &nl, acc)
        else:
            label = -1
        attach(s, a, act, label)
        m = window(s, parent, around)
        for k in range(m):
            extract(s, W, around[k], shift, rows)
    free(acc); free(blocked); free(items)
    return OK


cdef inline void add_rows(double* W, double* U, uint8_t* T, size_t base, double c,
                          const uint32_t* rows, int nf, size_t stride, size_t col,
                          double step) noexcept nogil:
    """w[base + stride * row + col] += step (and u += c * step) for every feature row; the bit
    of every index written set in the bit mask T (NULL: no marks)."""
    cdef int f
    cdef size_t i
    for f in range(nf):
        i = base + stride * <size_t>rows[f] + col
        W[i] += step
        U[i] += c * step
        if T != NULL:
            mark(T, <int64_t>i)


cdef void rescore_all(StateC* s, const double* W) noexcept nogil:
    """Recompute every location's cached scores from its cached rows (weights changed)."""
    cdef int a = 0
    while s.nxt[a] >= 0:
        score_rows(W, s.rows + a * MAX_ACTION_FEATURES, s.n_rows[a], s.score + 2 * a)
        a = s.nxt[a]


ctypedef struct TrainStatsC:
    int64_t steps          # attachments made
    int64_t first_valid    # attachments whose first choice was valid
    int64_t updates        # perceptron updates of the action weights
    int64_t capped         # attachments forced after max_updates updates
    int64_t label_correct  # attachments whose label the classifier got right before learning


cdef int train_core(StateC* s, const int32_t* gold, const int32_t* glabel, double* W,
                    double* U, uint8_t* T, double c, int shift, size_t offset, int L,
                    int lshift, int max_updates, TrainStatsC* st) noexcept nogil:
    """Algorithm 2 on one sentence: parse with the current weights; when the chosen action is
    invalid, move the weights from it towards the best valid action and choose again (every
    weight written marked in T unless NULL)."""
    cdef int N = s.n + 1, a, act = LEFT, g, gact, parent, child, tries, x, nl, label, m, k
    cdef double v, gbest
    cdef uint32_t lrows[MAX_LABEL_FEATURES]
    cdef int around[6]
    cdef int32_t* missing = <int32_t*>malloc(N * sizeof(int32_t))
    cdef double* acc = <double*>malloc((L + 1) * sizeof(double))
    if missing == NULL or acc == NULL:
        free(missing); free(acc)
        return NO_MEMORY
    for a in range(N):
        missing[a] = 0
    for a in range(1, N):
        if gold[a] >= 0:
            missing[gold[a]] += 1
    a = 0
    while s.nxt[a] >= 0:
        extract(s, W, a, shift, NULL)
        a = s.nxt[a]
    while s.length > 1:
        tries = 0
        while True:
            a = scan_argmax(s, &act)
            parent = a if act == LEFT else s.nxt[a]
            child = s.nxt[a] if act == LEFT else a
            # isValid: the edge is in gold and the child has collected all its children
            if gold[child] == parent and missing[child] == 0:
                break
            # good: the best-scoring valid action (ATTACHLEFT and leftmost on ties)
            g = -1
            gact = LEFT
            gbest = -INFINITY
            x = 0
            while x >= 0 and s.nxt[x] >= 0:
                for k in range(2):
                    parent = x if k == LEFT else s.nxt[x]
                    child = s.nxt[x] if k == LEFT else x
                    if (legal(s, x, k) and gold[child] == parent and missing[child] == 0):
                        v = s.score[2 * x + k]
                        if g < 0 or v > gbest:
                            g = x
                            gact = k
                            gbest = v
                x = s.nxt[x]
            if g < 0:
                free(missing); free(acc)
                return NO_VALID_ACTION
            if tries == max_updates:
                st.capped += 1
                a = g
                act = gact
                break
            add_rows(W, U, T, 0, c, s.rows + g * MAX_ACTION_FEATURES, s.n_rows[g], 2, gact,
                     1.0)
            add_rows(W, U, T, 0, c, s.rows + a * MAX_ACTION_FEATURES, s.n_rows[a], 2, act,
                     -1.0)
            st.updates += 1
            tries += 1
            rescore_all(s, W)
        if tries == 0:
            st.first_valid += 1
        st.steps += 1
        parent = a if act == LEFT else s.nxt[a]
        child = s.nxt[a] if act == LEFT else a
        label = -1
        if L > 0:
            label = best_label(s, W, offset, L, lshift, parent, child, lrows, &nl, acc)
            if glabel[child] >= 0 and label != glabel[child]:
                add_rows(W, U, T, offset, c, lrows, nl, L, glabel[child], 1.0)
                add_rows(W, U, T, offset, c, lrows, nl, L, label, -1.0)
            elif label == glabel[child]:
                st.label_correct += 1
        attach(s, a, act, label)
        missing[parent] -= 1
        m = window(s, parent, around)
        for k in range(m):
            extract(s, W, around[k], shift, NULL)
    free(missing); free(acc)
    return OK


# ---------------------------------------------------------------- Python entry points

def _check(const int32_t[:, ::1] tokens, weights, size_t size) -> None:
    if tokens.shape[0] < 2 or tokens.shape[1] != NCOLS:
        raise ValueError(f"tokens must be int32 [n+1, {NCOLS}] with n >= 1")
    if weights.shape[0] != size:
        raise ValueError(f"weights have {weights.shape[0]} entries, the layout needs {size}")


cdef int morph_pointers(const int32_t[::1] morph_ptr, const int32_t[::1] morph, int N,
                        const int32_t** ptr, const int32_t** ids) except -1:
    """Check the CSR morphological features of a sentence of N - 1 words (the root's range
    empty, as dparse.vocab encodes it: every reader may read row 0 like a word's) and point
    ``ptr`` and ``ids`` at them (NULL when ``morph_ptr`` is None)."""
    cdef int i
    ptr[0] = NULL
    ids[0] = NULL
    if morph_ptr is None:
        return 0
    if morph is None or morph_ptr.shape[0] != N + 1:
        raise ValueError("morph_ptr must be int32 [n+2], with morph")
    if morph_ptr[N] > morph.shape[0] or morph_ptr[0] < 0:
        raise ValueError("morph_ptr points past morph")
    if morph_ptr[1] != morph_ptr[0]:
        raise ValueError("morph_ptr gives the root (row 0) morphological features")
    for i in range(N):
        if morph_ptr[i + 1] < morph_ptr[i]:
            raise ValueError("morph_ptr must not decrease")
    ptr[0] = &morph_ptr[0]
    ids[0] = &morph[0] if morph.shape[0] > 0 else NULL
    return 0


def layout_size(int action_bits, int label_bits, int n_labels) -> int:
    """Entries of the flat weight vector: 2 * 2**action_bits action weights, then
    2**label_bits rows of n_labels label weights."""
    return 2 * (1 << action_bits) + (1 << label_bits) * n_labels


@cython.boundscheck(False)
def parse(const int32_t[:, ::1] tokens, const uint8_t[::1] tag_flags,
          const floating[::1] weights, int action_bits, int label_bits, int n_labels,
          int tag_column, int32_t[::1] heads, int32_t[::1] labels, bint single_root=True,
          bint use_heap=False, int templates=0, const int32_t[::1] morph_ptr=None,
          const int32_t[::1] morph=None, const uint8_t[:, ::1] allowed=None,
          const int32_t[::1] fixed_heads=None, const int32_t[::1] fixed_labels=None) -> int:
    """Parse one encoded sentence (tokens int32 [n+1, 6]) into ``heads`` and ``labels``
    (int32 [n+1], entry 0 set to -1); returns the number of feature extractions.

    Constraints: with ``allowed`` (uint8 [n+1, n+1], allowed[h, m]: the arc h -> m may be
    made), ``fixed_heads`` (int32 [n+1], a word's fixed head or -1) and ``fixed_labels``
    (int32 [n+1], a word's fixed label id or -1), the max-scan (whatever ``use_heap``; both
    give the same parses) attaches only by allowed arcs that leave the pending structures a
    projective completion of allowed arcs, fixed arcs first (parse_constrained_core): the tree
    has every fixed arc and no disallowed one when some projective tree does (the caller
    checks that; ValueError otherwise).

    ``tag_flags`` uint8 [n_tags]: FLAG bits per id of the ``tag_column`` vocabulary
    (``TAG_LEXICAL``: t_p is lexicalized; ``TAG_PREPOSITION``: PP-attachment features fire).
    ``templates``: the OR of the ``TEMPLATE_GROUPS`` values added to the paper's templates;
    ``feats`` reads the CSR morphological features ``morph_ptr`` int32 [n+2] and ``morph``
    (:class:`dparse.vocab.EncodedSentence`; None: no features).
    """
    cdef size_t offset = 2 * (<size_t>1 << action_bits)
    _check(tokens, weights, layout_size(action_bits, label_bits, n_labels))
    cdef int N = tokens.shape[0], status, i
    if heads.shape[0] != N or labels.shape[0] != N:
        raise ValueError("heads and labels must have n+1 entries")
    cdef StateC s
    cdef int64_t count
    cdef const int32_t* mp
    cdef const int32_t* mi
    cdef const uint8_t* ap = NULL
    cdef const int32_t* fp = NULL
    cdef const int32_t* lp = NULL
    if allowed is not None:
        if (fixed_heads is None or fixed_labels is None or allowed.shape[0] != N
                or allowed.shape[1] != N or fixed_heads.shape[0] != N
                or fixed_labels.shape[0] != N):
            raise ValueError(f"constraints: allowed [{N}, {N}], fixed_heads and fixed_labels "
                             f"[{N}] go together")
        for i in range(N):
            if fixed_labels[i] >= n_labels:
                raise ValueError(f"fixed label id {fixed_labels[i]} of word {i}: "
                                 f"{n_labels} labels")
        ap = &allowed[0, 0]
        fp = &fixed_heads[0]
        lp = &fixed_labels[0]
    morph_pointers(morph_ptr, morph, N, &mp, &mi)
    with nogil:
        status = init_state(&s, tokens, tag_column, tag_flags, single_root, False, templates,
                            mp, mi)
        if status == OK and ap != NULL:
            status = parse_constrained_core(&s, &weights[0], 64 - action_bits, offset,
                                            n_labels, 64 - label_bits, ap, fp, lp)
        elif status == OK:
            status = parse_core(&s, &weights[0], 64 - action_bits, offset, n_labels,
                                64 - label_bits, use_heap)
        if status == OK:
            for i in range(N):
                heads[i] = s.heads[i]
                labels[i] = s.labels[i]
        count = s.extractions
        free_state(&s)
    if status == NO_VALID_ACTION:
        raise ValueError("constraints: no projective tree of allowed arcs")
    if status != OK:
        raise MemoryError("easy-first parser state")
    return count


@cython.boundscheck(False)
def train_sentence(const int32_t[:, ::1] tokens, const uint8_t[::1] tag_flags,
                   const int32_t[::1] gold_heads, const int32_t[::1] gold_labels,
                   double[::1] w, double[::1] u, double c, int action_bits, int label_bits,
                   int n_labels, int tag_column, bint single_root=True,
                   int max_updates=1000, int32_t[::1] heads_out=None,
                   int templates=0, const int32_t[::1] morph_ptr=None,
                   const int32_t[::1] morph=None, uint8_t[::1] touched=None) -> dict:
    """One sentence of Algorithm 2: updates ``w`` (and ``u``, the running ``c``-weighted sum of
    updates of the averaged perceptron) in place, and sets the bit of every index it writes
    in ``touched`` (a bit mask over ``w``, uint8 [(len(w) + 7) // 8]; None: not kept).

    The gold tree (``gold_heads`` int32 [n+1]) must be projective; ``gold_labels`` int32 [n+1]
    holds label ids (-1: unknown). Returns counts: steps, first_valid, updates, capped (steps
    forced after ``max_updates`` updates without a valid choice), label_correct, extractions.
    Raises ValueError if no valid action exists (a non-projective gold tree). ``heads_out``
    int32 [n+1], if given, receives the tree built. ``templates`` as for :func:`parse`.
    """
    cdef size_t offset = 2 * (<size_t>1 << action_bits)
    _check(tokens, w, layout_size(action_bits, label_bits, n_labels))
    if u.shape[0] != w.shape[0] or (touched is not None
                                    and touched.shape[0] != (w.shape[0] + 7) // 8):
        raise ValueError("w and u must have the same size, and touched a bit for each weight")
    cdef int N = tokens.shape[0], status, i
    if gold_heads.shape[0] != N or gold_labels.shape[0] != N:
        raise ValueError("gold heads and labels must have n+1 entries")
    cdef StateC s
    cdef TrainStatsC st
    cdef const int32_t* mp
    cdef const int32_t* mi
    cdef uint8_t* marks = &touched[0] if touched is not None else NULL
    morph_pointers(morph_ptr, morph, N, &mp, &mi)
    st.steps = st.first_valid = st.updates = st.capped = st.label_correct = 0
    with nogil:
        status = init_state(&s, tokens, tag_column, tag_flags, single_root, True, templates,
                            mp, mi)
        if status == OK:
            status = train_core(&s, &gold_heads[0], &gold_labels[0], &w[0], &u[0], marks, c,
                                64 - action_bits, offset, n_labels, 64 - label_bits,
                                max_updates, &st)
    extractions = s.extractions
    if status == OK and heads_out is not None:
        for i in range(min(N, heads_out.shape[0])):
            heads_out[i] = s.heads[i]
    free_state(&s)
    if status == NO_MEMORY:
        raise MemoryError("easy-first parser state")
    if status == NO_VALID_ACTION:
        raise ValueError("no valid action: the gold tree is not projective")
    return {"steps": st.steps, "first_valid": st.first_valid, "updates": st.updates,
            "capped": st.capped, "label_correct": st.label_correct,
            "extractions": extractions}


def _replay(const int32_t[:, ::1] tokens, const uint8_t[::1] tag_flags, int tag_column,
            actions, int templates=0, const int32_t[::1] morph_ptr=None,
            const int32_t[::1] morph=None) -> tuple:
    """Test shim: apply ``actions``, (pending index, 0 for ATTACHLEFT / 1 for ATTACHRIGHT)
    pairs, to the initial state (without the single-root rule). Returns the heads int32 [n+1]
    and, per step, the locations (left tokens) whose feature keys changed and those that
    the parser re-extracts (the window of the new parent)."""
    cdef StateC s
    cdef int a, i, k, m, parent, act
    cdef int around[6]
    cdef uint64_t keys[MAX_ACTION_FEATURES]
    cdef const int32_t* mp
    cdef const int32_t* mi
    morph_pointers(morph_ptr, morph, tokens.shape[0], &mp, &mi)
    if init_state(&s, tokens, tag_column, tag_flags, False, False, templates, mp, mi) != OK:
        free_state(&s)
        raise MemoryError("easy-first parser state")

    def snapshot():
        out = {}
        cdef int x = 0, nf
        while s.nxt[x] >= 0:
            nf = location_keys(&s, x, keys)
            out[x] = tuple(keys[f] for f in range(nf))
            x = s.nxt[x]
        return out

    steps = []
    try:
        for index, act in actions:
            a = 0
            for i in range(index):
                a = s.nxt[a]
                if a < 0 or s.nxt[a] < 0:
                    raise ValueError(f"no location {index} in a pending list of {s.length}")
            if a == 0 and act == RIGHT:
                raise ValueError("the root cannot become a child")
            before = snapshot()
            parent = a if act == LEFT else s.nxt[a]
            attach(&s, a, act, -1)
            after = snapshot()
            m = window(&s, parent, around)
            changed = {x for x, f in after.items() if before.get(x) != f}
            steps.append((changed, {around[k] for k in range(m)}))
        heads = [s.heads[i] for i in range(s.n + 1)]
    finally:
        free_state(&s)
    return heads, steps
