# cython: language_level=3
"""Arc-standard beam search with dynamic programming (Huang and Sagae 2010), with and without
spurious ambiguity (Hayashi, Kondo and Matsumoto 2013, Sections 2-3), in C.

Nodes 0..n, node 0 the root, which starts on the stack. A state is
``l : (i, j, s2 | s1 | s0) : pi`` (step l, s0 spanning words i..j-1, the queue front j):

- SHIFT pushes word j. Spurious system: always valid while j <= n. Non-spurious: only when s0
  has been scanned; the pushed word is unscanned (``w_j*``).
- SCAN (non-spurious only) marks s0 scanned: after it s0 takes no more left dependents.
- LEFT makes s1 a left dependent of s0 (never the root). Non-spurious: only while s0 is
  unscanned, so all left dependents come before the scan and each tree has one derivation.
- RIGHT makes s0 a right dependent of s1. Non-spurious: only once s0 is scanned. With
  ``single_root`` the root takes its one dependent when the queue is empty.

Every derivation takes T = 2n steps (spurious) or 3n (non-spurious). The signature of a state
(what its features can read) is the span, the queue front, the positions of the heads, two
leftmost left and two rightmost right children of s0 and s1, the head of s2, the scan flag and
the valencies of s0 and s1 (:c:type:`SigC`). States of a step with equal signatures merge
(Huang and Sagae's DP): the prefix score c and inside score v are maxima, the predictor sets pi (states just before the
shift of s0's first word) are united. With x the shift score of a predictor p and y the
action score of q:

    shift  p -> q'        c' = c_p + x_p             v' = 0         pi' = {p}
    scan   q -> q'        c' = c_q + y               v' = v_q + y   pi' = pi(q)
    reduce (p in pi(q))   c' = c_p + x_p + v_q + y   v' = v_p + x_p + v_q + y   pi' = pi(p)

Features (Huang and Sagae's templates plus the paper's Table 1, distance, valency, a few
lexical pairs with the queue front, suffixes and universal tags, Zhang and Nivre 2011's child
and second-child unigrams, McDonald et al. 2005's context tags around the heads of s1 and s0,
alone and with the words of s0 and s1; all read from the signature, so merging stays exact)
are hashed; the tag t of the templates is one POS column or, with ``tagcol`` PAIRED_TAGS, the
pair (XPOS, UPOS). A feature picks one of ``2**action_bits`` rows of 4 weights (one per
action), so one memory read scores every action. Labels are chosen by a separate multi-class
classifier over the finished tree (rows of ``n_labels`` weights from
``label_offset = 4 * 2**action_bits`` on): the words, tags, direction and distance of the head
and the dependent, the dependent's outer children, neighbours and suffix, and the
grandparent's tag.

Training (averaged perceptron, the ``w``/``u`` trick of :class:`dparse.learning.AveragedLearner`)
updates on the beam with early update (Collins and Roark 2004) or max violation (Huang et al.
2012), against the canonical gold derivation; a merged state that holds the gold prefix but
whose best prefix scores higher counts as a violation (the gold cannot win from there). A
shard's learner of :mod:`dparse.mixing` also has every written weight marked in its
``touched`` bit mask.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memset

import numpy as np

from cython cimport floating

from dparse._ext.hashing cimport distance_bin, fmix, mix
from dparse._ext.tokens cimport EOS_ID, NCOLS, SUFFIX, UPOS, WORD, XPOS
from dparse._ext.weights cimport add_row, mark, prefetch_rows

cdef enum:
    SHIFT = 0
    SCAN = 1
    LEFT = 2
    RIGHT = 3
    N_ACTIONS = 4
    AXIOM = -1
    NONE_ID = 0x7FFFFFF0
    MAX_FEATURES = 112
    MAX_LABEL_FEATURES = 32
    PAIRED = 99                              # tag column: the pair (XPOS, UPOS)
    # update kinds
    EARLY = 0
    MAX_VIOLATION = 1
    # status codes
    OK = 0
    NO_MEMORY = -1
    NOT_PROJECTIVE = -2

UPDATES = {"early": EARLY, "max-violation": MAX_VIOLATION}
#: The ``tagcol`` that makes the templates read the pair (XPOS, UPOS) as the tag.
PAIRED_TAGS = PAIRED
#: The version of the action feature templates, saved with a model (older models are refused).
TEMPLATES_VERSION = 3


ctypedef struct SigC:
    # The signature of a state: everything its features and its successors read.
    int32_t i, j                             # s0 spans i..j-1; j is the queue front
    int32_t s0h, s0l, s0l2, s0r, s0r2        # s0 head, two leftmost left / rightmost right kids
    int32_t s1h, s1l, s1l2, s1r, s1r2        # the same of s1 (-1: none)
    int32_t s2h
    int32_t scanned
    int32_t s0vl, s0vr, s1vl, s1vr           # valencies: left / right dependents of s0, s1


ctypedef struct StateC:
    SigC sig
    int32_t step
    double c, v, sh                          # prefix, inside, shift score (once expanded)
    double sc[4]                             # action scores (once expanded)
    int32_t pred                             # head of its predictor list (-1: none)
    int32_t bc_act, bc_p, bc_q               # creation of the best prefix derivation
    int32_t bv_act, bv_p, bv_q               # creation of the best inside derivation
    int32_t edges                            # head of its creation list
    int32_t gold
    int32_t alive                            # kept in the beam


ctypedef struct LinkC:
    # A list cell: in a predictor list, ``a`` is the predictor state; in a creation list, the
    # action ``act`` applied to predictor ``a`` (SHIFT, reduces) and/or state ``b`` (SCAN,
    # reduces). ``next`` is the next cell (-1: end).
    int32_t a, b, act, next


ctypedef struct SentC:
    int n
    const int32_t* tok
    int tagcol
    int system                               # 0 spurious, 1 non-spurious
    int single_root


ctypedef struct RankC:
    double c
    int32_t idx


cdef struct SearchC:
    SentC s
    int beam
    int T
    StateC* st
    int n_st, cap_st
    LinkC* ln
    int n_ln, cap_ln
    int32_t* beam_start                      # [T+2] survivors of step l: kept[beam_start[l]:..]
    int32_t* kept
    int n_kept, cap_kept
    RankC* rank
    int cap_rank
    int32_t* table
    int cap_table
    # gold (training / forced decoding): action and predictor step per step; -1 none
    const int32_t* gold_act
    const int32_t* gold_pred
    int force_gold


# ---------------------------------------------------------------------------------------------
# Growable pools

cdef int grow(void** p, int* cap, int need, size_t size) noexcept nogil:
    cdef int c = cap[0]
    cdef void* q
    if need <= c:
        return OK
    if c < 64:
        c = 64
    while c < need:
        c *= 2
    q = realloc(p[0], c * size)
    if q == NULL:
        return NO_MEMORY
    p[0] = q
    cap[0] = c
    return OK


cdef int new_state(SearchC* S) noexcept nogil:
    if grow(<void**>&S.st, &S.cap_st, S.n_st + 1, sizeof(StateC)) != OK:
        return NO_MEMORY
    S.n_st += 1
    return S.n_st - 1


cdef int new_link(SearchC* S, int32_t a, int32_t b, int32_t act, int32_t nxt) noexcept nogil:
    if grow(<void**>&S.ln, &S.cap_ln, S.n_ln + 1, sizeof(LinkC)) != OK:
        return NO_MEMORY
    S.ln[S.n_ln].a = a
    S.ln[S.n_ln].b = b
    S.ln[S.n_ln].act = act
    S.ln[S.n_ln].next = nxt
    S.n_ln += 1
    return S.n_ln - 1


cdef void free_search(SearchC* S) noexcept nogil:
    free(S.st)
    free(S.ln)
    free(S.beam_start)
    free(S.kept)
    free(S.rank)
    free(S.table)


cdef int init_search(SearchC* S, const int32_t[:, ::1] tokens, int tagcol, int system,
                     bint single_root, int beam) noexcept nogil:
    memset(S, 0, sizeof(SearchC))
    S.s.n = tokens.shape[0] - 1
    S.s.tok = &tokens[0, 0]
    S.s.tagcol = tagcol
    S.s.system = system
    S.s.single_root = single_root
    S.beam = beam
    S.T = (3 if system else 2) * S.s.n
    S.beam_start = <int32_t*>malloc((S.T + 2) * sizeof(int32_t))
    if S.beam_start == NULL:
        return NO_MEMORY
    return OK


# ---------------------------------------------------------------------------------------------
# Transitions

cdef inline bint valid(const SentC* s, const SigC* g, int a) noexcept nogil:
    """Whether action a applies to a state with signature g (for every predictor)."""
    if a == SHIFT:
        return g.j <= s.n and (not s.system or g.scanned)
    if a == SCAN:
        return s.system and not g.scanned
    if g.s1h < 0:
        return False
    if a == LEFT:
        return g.s1h != 0 and (not s.system or not g.scanned)
    # RIGHT
    if s.system and not g.scanned:
        return False
    return g.s1h != 0 or not s.single_root or g.j > s.n


cdef inline void apply_shift(const SigC* p, SigC* o) noexcept nogil:
    o.i = p.j
    o.j = p.j + 1
    o.s0h = p.j
    o.s0l = -1
    o.s0l2 = -1
    o.s0r = -1
    o.s0r2 = -1
    o.s1h = p.s0h
    o.s1l = p.s0l
    o.s1l2 = p.s0l2
    o.s1r = p.s0r
    o.s1r2 = p.s0r2
    o.s2h = p.s1h
    o.scanned = 0
    o.s0vl = 0
    o.s0vr = 0
    o.s1vl = p.s0vl
    o.s1vr = p.s0vr


cdef inline void apply_reduce(const SigC* p, const SigC* q, int a, SigC* o) noexcept nogil:
    """The state after reducing q's s0 with its predictor p's s0."""
    o.i = p.i
    o.j = q.j
    if a == LEFT:
        o.s0h = q.s0h
        o.s0l = p.s0h
        o.s0l2 = q.s0l
        o.s0r = q.s0r
        o.s0r2 = q.s0r2
        o.scanned = q.scanned
        o.s0vl = q.s0vl + 1
        o.s0vr = q.s0vr
    else:
        o.s0h = p.s0h
        o.s0l = p.s0l
        o.s0l2 = p.s0l2
        o.s0r = q.s0h
        o.s0r2 = p.s0r
        o.scanned = p.scanned
        o.s0vl = p.s0vl
        o.s0vr = p.s0vr + 1
    o.s1h = p.s1h
    o.s1l = p.s1l
    o.s1l2 = p.s1l2
    o.s1r = p.s1r
    o.s1r2 = p.s1r2
    o.s2h = p.s2h
    o.s1vl = p.s1vl
    o.s1vr = p.s1vr


cdef inline void axiom(SigC* o, int system) noexcept nogil:
    o.i = 0
    o.j = 1
    o.s0h = 0
    o.s0l = o.s0l2 = o.s0r = o.s0r2 = -1
    o.s1h = o.s1l = o.s1l2 = o.s1r = o.s1r2 = -1
    o.s2h = -1
    o.scanned = 1 if system else 0
    o.s0vl = o.s0vr = o.s1vl = o.s1vr = 0


cdef inline uint64_t sig_hash(const SigC* g) noexcept nogil:
    cdef const int32_t* x = <const int32_t*>g
    cdef uint64_t h = 0x12345
    cdef int k
    for k in range(sizeof(SigC) // sizeof(int32_t)):
        h = mix(h, <uint64_t>(x[k] + 2))
    return fmix(h)


cdef inline bint sig_equal(const SigC* a, const SigC* b) noexcept nogil:
    cdef const int32_t* x = <const int32_t*>a
    cdef const int32_t* y = <const int32_t*>b
    cdef int k
    for k in range(sizeof(SigC) // sizeof(int32_t)):
        if x[k] != y[k]:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Features

cdef inline uint64_t fkey(uint64_t t, uint64_t a, uint64_t b, uint64_t c,
                          uint64_t d) noexcept nogil:
    return fmix(mix(mix(mix(mix(t + 1, a), b), c), d))


cdef inline uint64_t row_of(uint64_t k, int shift) noexcept nogil:
    return (k * <uint64_t>0x9FB21C651E98DF25ULL) >> shift


cdef inline uint64_t attr(const SentC* s, int pos, int col) noexcept nogil:
    if pos < 0:
        return NONE_ID
    if pos > s.n:
        return EOS_ID
    if col == PAIRED:
        return ((<uint64_t>s.tok[pos * NCOLS + XPOS]) << 16) | <uint64_t>s.tok[pos * NCOLS + UPOS]
    return <uint64_t>s.tok[pos * NCOLS + col]


cdef int state_keys(const SentC* s, const SigC* g, uint64_t* out) noexcept nogil:
    """The feature keys of a state (not conjoined with the action); returns their number."""
    cdef int tc = s.tagcol, k = 0
    cdef uint64_t s0w = attr(s, g.s0h, WORD), s0t = attr(s, g.s0h, tc)
    cdef uint64_t s1w = attr(s, g.s1h, WORD), s1t = attr(s, g.s1h, tc)
    cdef uint64_t s2t = attr(s, g.s2h, tc)
    cdef uint64_t q0w = attr(s, g.j, WORD), q0t = attr(s, g.j, tc)
    cdef uint64_t q1w = attr(s, g.j + 1, WORD), q1t = attr(s, g.j + 1, tc)
    cdef uint64_t q2t = attr(s, g.j + 2, tc)
    cdef uint64_t s0lt = attr(s, g.s0l, tc), s0l2t = attr(s, g.s0l2, tc)
    cdef uint64_t s0rt = attr(s, g.s0r, tc), s0r2t = attr(s, g.s0r2, tc)
    cdef uint64_t s1lt = attr(s, g.s1l, tc), s1l2t = attr(s, g.s1l2, tc)
    cdef uint64_t s1rt = attr(s, g.s1r, tc), s1r2t = attr(s, g.s1r2, tc)
    cdef uint64_t s0pt = attr(s, g.s0h - 1, tc), s0nt = attr(s, g.s0h + 1, tc)
    cdef uint64_t s1pt = attr(s, g.s1h - 1, tc), s1nt = attr(s, g.s1h + 1, tc)
    cdef uint64_t d = 99
    if g.s1h >= 0:
        d = <uint64_t>distance_bin(g.s0h - g.s1h)
    # (1) unigrams
    out[k] = fkey(0, s0w, 0, 0, 0); k += 1
    out[k] = fkey(1, s0t, 0, 0, 0); k += 1
    out[k] = fkey(2, s0w, s0t, 0, 0); k += 1
    out[k] = fkey(3, s1w, 0, 0, 0); k += 1
    out[k] = fkey(4, s1t, 0, 0, 0); k += 1
    out[k] = fkey(5, s1w, s1t, 0, 0); k += 1
    out[k] = fkey(6, q0w, 0, 0, 0); k += 1
    out[k] = fkey(7, q0t, 0, 0, 0); k += 1
    out[k] = fkey(8, q0w, q0t, 0, 0); k += 1
    # (2) bigrams
    out[k] = fkey(9, s0w, s1w, 0, 0); k += 1
    out[k] = fkey(10, s0t, s1t, 0, 0); k += 1
    out[k] = fkey(11, s0t, q0t, 0, 0); k += 1
    out[k] = fkey(12, s0w, s0t, s1t, 0); k += 1
    out[k] = fkey(13, s0t, s1w, s1t, 0); k += 1
    out[k] = fkey(14, s0w, s1w, s1t, 0); k += 1
    out[k] = fkey(15, s0w, s0t, s1w, 0); k += 1
    out[k] = fkey(16, s0w, s0t, s1w, s1t); k += 1
    # (3) trigrams
    out[k] = fkey(17, s0t, q0t, q1t, 0); k += 1
    out[k] = fkey(18, s1t, s0t, q0t, 0); k += 1
    out[k] = fkey(19, s0w, q0t, q1t, 0); k += 1
    out[k] = fkey(20, s1t, s0w, q0t, 0); k += 1
    # (4) children
    out[k] = fkey(21, s1t, s1lt, s0t, 0); k += 1
    out[k] = fkey(22, s1t, s1rt, s0t, 0); k += 1
    out[k] = fkey(23, s1t, s0t, s0rt, 0); k += 1
    out[k] = fkey(24, s1t, s1lt, s0w, 0); k += 1
    out[k] = fkey(25, s1t, s1rt, s0w, 0); k += 1
    out[k] = fkey(26, s1t, s0w, s0lt, 0); k += 1
    out[k] = fkey(27, s1t, s0t, s0lt, 0); k += 1
    # (5) s2
    out[k] = fkey(28, s2t, s1t, s0t, 0); k += 1
    # Table 1: second children and queue
    out[k] = fkey(29, s0t, s0lt, s0l2t, 0); k += 1
    out[k] = fkey(30, s0t, s0rt, s0r2t, 0); k += 1
    out[k] = fkey(31, s1t, s1lt, s1l2t, 0); k += 1
    out[k] = fkey(32, s1t, s1rt, s1r2t, 0); k += 1
    out[k] = fkey(33, s0t, s0lt, s0l2t, q0t); k += 1
    out[k] = fkey(34, s0t, s0rt, s0r2t, q0t); k += 1
    out[k] = fkey(35, s0t, s1t, q0t, q1t); k += 1
    out[k] = fkey(36, s0w, s1t, q0t, q1t); k += 1
    # distance between the heads of s0 and s1, and more queue context
    out[k] = fkey(37, s0w, d, 0, 0); k += 1
    out[k] = fkey(38, s0t, d, 0, 0); k += 1
    out[k] = fkey(39, s1w, d, 0, 0); k += 1
    out[k] = fkey(40, s1t, d, 0, 0); k += 1
    out[k] = fkey(41, s0w, s1w, d, 0); k += 1
    out[k] = fkey(42, s0t, s1t, d, 0); k += 1
    out[k] = fkey(43, q0t, q1t, q2t, 0); k += 1
    out[k] = fkey(44, q1w, 0, 0, 0); k += 1
    out[k] = fkey(45, q1w, q1t, 0, 0); k += 1
    out[k] = fkey(46, s0w, q0w, 0, 0); k += 1
    out[k] = fkey(47, s0t, s0lt, s0rt, 0); k += 1
    out[k] = fkey(48, s1t, s1lt, s1rt, 0); k += 1
    out[k] = fkey(49, s1w, s1rt, s0t, 0); k += 1
    # valencies (Zhang and Nivre 2011)
    out[k] = fkey(50, s0w, <uint64_t>g.s0vl, 0, 0); k += 1
    out[k] = fkey(51, s0w, <uint64_t>g.s0vr, 0, 0); k += 1
    out[k] = fkey(52, s0t, <uint64_t>g.s0vl, 0, 0); k += 1
    out[k] = fkey(53, s0t, <uint64_t>g.s0vr, 0, 0); k += 1
    out[k] = fkey(54, s1w, <uint64_t>g.s1vl, 0, 0); k += 1
    out[k] = fkey(55, s1w, <uint64_t>g.s1vr, 0, 0); k += 1
    out[k] = fkey(56, s1t, <uint64_t>g.s1vl, 0, 0); k += 1
    out[k] = fkey(57, s1t, <uint64_t>g.s1vr, 0, 0); k += 1
    # lexical pairs with the queue front and children's words
    out[k] = fkey(58, s0w, s0t, q0w, q0t); k += 1
    out[k] = fkey(59, s0t, q0w, 0, 0); k += 1
    out[k] = fkey(60, s0w, q0t, 0, 0); k += 1
    out[k] = fkey(61, s1w, s0t, q0t, 0); k += 1
    out[k] = fkey(62, s0t, attr(s, g.s0l, WORD), 0, 0); k += 1
    out[k] = fkey(63, s0t, attr(s, g.s0r, WORD), 0, 0); k += 1
    out[k] = fkey(64, s1t, attr(s, g.s1r, WORD), 0, 0); k += 1
    out[k] = fkey(65, s2t, s1t, s0t, q0t); k += 1
    # suffixes and universal tags, for rare and unknown words
    out[k] = fkey(66, attr(s, g.s0h, SUFFIX), s0t, 0, 0); k += 1
    out[k] = fkey(67, attr(s, g.s1h, SUFFIX), s1t, 0, 0); k += 1
    out[k] = fkey(68, attr(s, g.j, SUFFIX), q0t, 0, 0); k += 1
    out[k] = fkey(69, attr(s, g.s0h, UPOS), attr(s, g.s1h, UPOS), attr(s, g.j, UPOS), 0); k += 1
    out[k] = fkey(70, attr(s, g.s0h, SUFFIX), attr(s, g.s1h, SUFFIX), 0, 0); k += 1
    # children and second children alone, words and tags (Zhang and Nivre 2011's unigrams and
    # third-order unigrams): templates 71 + 2c (word) and 72 + 2c (tag) of child c
    cdef int32_t kids[8]
    kids[0] = g.s0l; kids[1] = g.s0r; kids[2] = g.s1l; kids[3] = g.s1r
    kids[4] = g.s0l2; kids[5] = g.s0r2; kids[6] = g.s1l2; kids[7] = g.s1r2
    cdef int c
    for c in range(8):
        out[k] = fkey(71 + 2 * c, attr(s, kids[c], WORD), 0, 0, 0); k += 1
        out[k] = fkey(72 + 2 * c, attr(s, kids[c], tc), 0, 0, 0); k += 1
    # the tags around the heads of s1 and s0 (McDonald et al. 2005's context tags)
    out[k] = fkey(87, s1t, s1nt, s0pt, s0t); k += 1
    out[k] = fkey(88, s1t, s1pt, s0pt, s0t); k += 1
    out[k] = fkey(89, s1t, s1nt, s0nt, s0t); k += 1
    out[k] = fkey(90, s1t, s1pt, s0nt, s0t); k += 1
    # the queue's first two words, and both valencies at once
    out[k] = fkey(91, q0w, q1w, 0, 0); k += 1
    out[k] = fkey(92, q0t, q1t, 0, 0); k += 1
    out[k] = fkey(93, s0t, <uint64_t>g.s0vl, <uint64_t>g.s0vr, 0); k += 1
    out[k] = fkey(94, s1t, <uint64_t>g.s1vl, <uint64_t>g.s1vr, 0); k += 1
    out[k] = fkey(95, s0t, s1t, <uint64_t>g.s0vl, <uint64_t>g.s1vr); k += 1
    # context tags with the distance, context trigrams, s0's right child and the queue, s2
    out[k] = fkey(160 + d, s1t, s1nt, s0pt, s0t); k += 1
    out[k] = fkey(180 + d, s1t, s1pt, s0nt, s0t); k += 1
    out[k] = fkey(150, s0pt, s0t, s1t, 0); k += 1
    out[k] = fkey(151, s1t, s1nt, s0t, 0); k += 1
    out[k] = fkey(152, s0rt, q0t, 0, 0); k += 1
    out[k] = fkey(153, s0t, s0rt, q0t, 0); k += 1
    out[k] = fkey(154, attr(s, g.s2h, WORD), s2t, 0, 0); k += 1
    out[k] = fkey(155, s2t, s0t, 0, 0); k += 1
    # the words of s0 and s1 with the tags beside them
    out[k] = fkey(156, s0w, s0pt, 0, 0); k += 1
    out[k] = fkey(157, s0w, s0nt, 0, 0); k += 1
    out[k] = fkey(158, s1w, s1pt, 0, 0); k += 1
    out[k] = fkey(159, s1w, s1nt, 0, 0); k += 1
    return k


cdef inline void score_state(const SentC* s, const SigC* g, const floating* W, int shift,
                             double* out) noexcept nogil:
    """out[a] = the score of action a at a state with signature g."""
    cdef uint64_t keys[MAX_FEATURES]
    cdef floating acc[N_ACTIONS]
    cdef int k, m = state_keys(s, g, keys)
    acc[0] = acc[1] = acc[2] = acc[3] = 0
    for k in range(m):
        keys[k] = row_of(keys[k], shift)
    prefetch_rows(W, keys, m, N_ACTIONS)
    for k in range(m):
        add_row(acc, W + keys[k] * N_ACTIONS, N_ACTIONS)
    for k in range(N_ACTIONS):
        out[k] = acc[k]


cdef inline void add_at(double* w, double* u, uint8_t* t, int64_t i, double val,
                        double cval) noexcept nogil:
    """w[i] += val, u[i] += cval, and bit i of t set (t NULL: no marks)."""
    w[i] += val
    u[i] += cval
    if t != NULL:
        mark(t, i)


cdef inline void update_state(const SentC* s, const SigC* g, int a, double val, double cval,
                              double* w, double* u, uint8_t* t, int shift) noexcept nogil:
    """w += val * phi(g, a), u += cval * phi(g, a); bit i of t set at every index written (t
    NULL: no marks)."""
    cdef uint64_t keys[MAX_FEATURES]
    cdef int k, m = state_keys(s, g, keys)
    for k in range(m):
        add_at(w, u, t, row_of(keys[k], shift) * N_ACTIONS + a, val, cval)


# ---------------------------------------------------------------------------------------------
# The beam search

cdef int rank_cmp(const void* a, const void* b) noexcept nogil:
    cdef const RankC* x = <const RankC*>a
    cdef const RankC* y = <const RankC*>b
    if x.c > y.c:
        return -1
    if x.c < y.c:
        return 1
    return -1 if x.idx < y.idx else (1 if x.idx > y.idx else 0)


cdef int offer(SearchC* S, const SigC* g, int step, int act, int p, int q, double c, double v,
               int pred, int gold, int32_t mask) noexcept nogil:
    """Merge a candidate into step ``step`` (the table holds that step's states). ``pred`` is
    the predictor list to copy (-1: none; SHIFT passes its source as ``p`` and gets {p})."""
    cdef uint64_t h = sig_hash(g)
    cdef int32_t slot = <int32_t>(h & mask)
    cdef int r, l, x, found
    cdef StateC* t
    while S.table[slot] >= 0:
        r = S.table[slot]
        if sig_equal(&S.st[r].sig, g):
            break
        slot = (slot + 1) & mask
    r = S.table[slot]
    if r < 0:
        r = new_state(S)
        if r < 0:
            return NO_MEMORY
        S.table[slot] = r
        t = &S.st[r]
        t.sig = g[0]
        t.step = step
        t.c = c
        t.v = v
        t.sh = 0
        t.pred = -1
        t.bc_act = t.bv_act = act
        t.bc_p = t.bv_p = p
        t.bc_q = t.bv_q = q
        t.edges = -1
        t.gold = gold
        t.alive = 0
        if act == SHIFT:
            l = new_link(S, p, -1, 0, -1)
            if l < 0:
                return NO_MEMORY
            S.st[r].pred = l
        else:
            x = pred
            while x >= 0:
                l = new_link(S, S.ln[x].a, -1, 0, S.st[r].pred)
                if l < 0:
                    return NO_MEMORY
                S.st[r].pred = l
                x = S.ln[x].next
    else:
        t = &S.st[r]
        if c > t.c:
            t.c = c
            t.bc_act = act
            t.bc_p = p
            t.bc_q = q
        if v > t.v:
            t.v = v
            t.bv_act = act
            t.bv_p = p
            t.bv_q = q
        t.gold = t.gold or gold
        if act == SHIFT:
            found = 0
            l = t.pred
            while l >= 0:
                if S.ln[l].a == p:
                    found = 1
                    break
                l = S.ln[l].next
            if not found:
                l = new_link(S, p, -1, 0, t.pred)
                if l < 0:
                    return NO_MEMORY
                S.st[r].pred = l
        else:
            x = pred
            while x >= 0:
                found = 0
                l = S.st[r].pred
                while l >= 0:
                    if S.ln[l].a == S.ln[x].a:
                        found = 1
                        break
                    l = S.ln[l].next
                if not found:
                    l = new_link(S, S.ln[x].a, -1, 0, S.st[r].pred)
                    if l < 0:
                        return NO_MEMORY
                    S.st[r].pred = l
                x = S.ln[x].next
    # the creation, for the forest
    l = new_link(S, p, q, act, S.st[r].edges)
    if l < 0:
        return NO_MEMORY
    S.st[r].edges = l
    return OK


cdef int run_search(SearchC* S, const floating* W, int shift) noexcept nogil:
    """Fill the chart: every step's merged candidates and its kept states (``kept``)."""
    cdef int step, b, q, p, a, x, start, count, k, cap, gold, gold_idx, limit
    cdef int created
    cdef int32_t mask
    cdef SigC g
    cdef StateC* sq
    cdef StateC* sp
    cdef double y
    cdef int r = new_state(S)
    if r < 0:
        return NO_MEMORY
    sq = &S.st[r]
    axiom(&sq.sig, S.s.system)
    sq.step = 0
    sq.c = sq.v = sq.sh = 0
    sq.pred = -1
    sq.bc_act = sq.bv_act = AXIOM
    sq.bc_p = sq.bc_q = sq.bv_p = sq.bv_q = -1
    sq.edges = -1
    sq.gold = S.gold_act != NULL
    sq.alive = 1
    if grow(<void**>&S.kept, &S.cap_kept, 1, sizeof(int32_t)) != OK:
        return NO_MEMORY
    S.kept[0] = r
    S.n_kept = 1
    S.beam_start[0] = 0
    S.beam_start[1] = 1
    for step in range(S.T):
        # score the kept states; count the candidates
        count = 0
        for b in range(S.beam_start[step], S.beam_start[step + 1]):
            q = S.kept[b]
            sq = &S.st[q]
            score_state(&S.s, &sq.sig, W, shift, sq.sc)
            sq.sh = sq.sc[SHIFT]
            for a in range(N_ACTIONS):
                if not valid(&S.s, &sq.sig, a):
                    continue
                if a == SHIFT or a == SCAN:
                    count += 1
                else:
                    x = sq.pred
                    while x >= 0:
                        count += 1
                        x = S.ln[x].next
        cap = 16
        while cap < 2 * count:
            cap *= 2
        if grow(<void**>&S.table, &S.cap_table, cap, sizeof(int32_t)) != OK:
            return NO_MEMORY
        for k in range(cap):
            S.table[k] = -1
        mask = cap - 1
        created = S.n_st
        for b in range(S.beam_start[step], S.beam_start[step + 1]):
            q = S.kept[b]
            for a in range(N_ACTIONS):
                sq = &S.st[q]
                if not valid(&S.s, &sq.sig, a):
                    continue
                y = sq.sc[a]
                if a == SHIFT:
                    apply_shift(&sq.sig, &g)
                    gold = sq.gold and S.gold_act != NULL and S.gold_act[step] == SHIFT
                    if offer(S, &g, step + 1, SHIFT, q, -1, sq.c + y, 0.0, -1, gold, mask) != OK:
                        return NO_MEMORY
                elif a == SCAN:
                    g = sq.sig
                    g.scanned = 1
                    gold = sq.gold and S.gold_act != NULL and S.gold_act[step] == SCAN
                    if offer(S, &g, step + 1, SCAN, -1, q, sq.c + y, sq.v + y, sq.pred, gold,
                             mask) != OK:
                        return NO_MEMORY
                else:
                    x = sq.pred
                    while x >= 0:
                        p = S.ln[x].a
                        sq = &S.st[q]
                        sp = &S.st[p]
                        apply_reduce(&sp.sig, &sq.sig, a, &g)
                        gold = (sq.gold and sp.gold and S.gold_act != NULL
                                and S.gold_act[step] == a and S.gold_pred[step] == sp.step)
                        if offer(S, &g, step + 1, a, p, q, sp.c + sp.sh + sq.v + y,
                                 sp.v + sp.sh + sq.v + y, sp.pred, gold, mask) != OK:
                            return NO_MEMORY
                        x = S.ln[x].next
        # prune to the beam
        count = S.n_st - created
        if grow(<void**>&S.rank, &S.cap_rank, count, sizeof(RankC)) != OK:
            return NO_MEMORY
        gold_idx = -1
        for k in range(count):
            S.rank[k].c = S.st[created + k].c
            S.rank[k].idx = created + k
            if S.st[created + k].gold:
                gold_idx = created + k
        qsort(S.rank, count, sizeof(RankC), rank_cmp)
        limit = count if count < S.beam else S.beam
        if grow(<void**>&S.kept, &S.cap_kept, S.n_kept + limit, sizeof(int32_t)) != OK:
            return NO_MEMORY
        start = S.n_kept
        for k in range(limit):
            S.kept[S.n_kept] = S.rank[k].idx
            S.st[S.rank[k].idx].alive = 1
            S.n_kept += 1
        if S.force_gold and gold_idx >= 0 and not S.st[gold_idx].alive:
            S.st[S.kept[S.n_kept - 1]].alive = 0
            S.kept[S.n_kept - 1] = gold_idx
            S.st[gold_idx].alive = 1
        S.beam_start[step + 2] = S.n_kept
    return OK


# ---------------------------------------------------------------------------------------------
# Derivations

cdef int derivation(const SearchC* S, int r, int32_t* out, int32_t* todo) noexcept nogil:
    """The (state, action) pairs of r's best prefix derivation, as out[2k], out[2k+1]; returns
    their number. ``todo`` is work space of 2 * (T + 1) ints."""
    cdef int m = 0, top = 0, x, mode, act, p, q
    cdef const StateC* t
    todo[0] = r
    todo[1] = 0
    top = 1
    while top > 0:
        top -= 1
        x = todo[2 * top]
        mode = todo[2 * top + 1]
        t = &S.st[x]
        act = t.bc_act if mode == 0 else t.bv_act
        if act == AXIOM:
            continue
        if act == SHIFT:
            if mode == 0:
                out[2 * m] = t.bc_p
                out[2 * m + 1] = SHIFT
                m += 1
                todo[2 * top] = t.bc_p
                todo[2 * top + 1] = 0
                top += 1
        elif act == SCAN:
            out[2 * m] = t.bc_q if mode == 0 else t.bv_q
            out[2 * m + 1] = SCAN
            m += 1
            todo[2 * top] = out[2 * m - 2]
            todo[2 * top + 1] = mode
            top += 1
        else:
            p = t.bc_p if mode == 0 else t.bv_p
            q = t.bc_q if mode == 0 else t.bv_q
            out[2 * m] = p
            out[2 * m + 1] = SHIFT
            out[2 * m + 2] = q
            out[2 * m + 3] = act
            m += 2
            todo[2 * top] = p
            todo[2 * top + 1] = mode
            todo[2 * top + 2] = q
            todo[2 * top + 3] = 1
            top += 2
    return m


cdef void heads_of(const SearchC* S, const int32_t* pairs, int m, int32_t* heads) noexcept nogil:
    """The arcs the reduce actions of a derivation add."""
    cdef int k, x, a
    for k in range(m):
        x = pairs[2 * k]
        a = pairs[2 * k + 1]
        if a == LEFT:
            heads[S.st[x].sig.s1h] = S.st[x].sig.s0h
        elif a == RIGHT:
            heads[S.st[x].sig.s0h] = S.st[x].sig.s1h


cdef int best_final(const SearchC* S) noexcept nogil:
    return S.kept[S.beam_start[S.T]]


# ---------------------------------------------------------------------------------------------
# The gold derivation

cdef int gold_derivation(const SentC* s, const int32_t* heads, int32_t* acts, int32_t* preds,
                         SigC* sigs) noexcept nogil:
    """The canonical derivation of the projective tree ``heads``: acts[l], the predictor step of
    each reduce in preds[l] (else -1), and the signature before each step in sigs[l]
    (l = 0..T). Returns NOT_PROJECTIVE if the tree has no derivation."""
    cdef int n = s.n, T = (3 if s.system else 2) * n, l, top, k, a, m
    cdef int32_t* missing = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef SigC* stack = <SigC*>malloc((n + 2) * sizeof(SigC))
    cdef int32_t* pstep = <int32_t*>malloc((n + 2) * sizeof(int32_t))
    cdef SigC g
    cdef int status = OK
    if missing == NULL or stack == NULL or pstep == NULL:
        free(missing)
        free(stack)
        free(pstep)
        return NO_MEMORY
    for k in range(n + 1):
        missing[k] = 0
    for k in range(1, n + 1):
        if heads[k] < 0 or heads[k] > n:
            status = NOT_PROJECTIVE
            break
        missing[heads[k]] += 1
    # The stack holds full element signatures in s0 fields; the state signature is assembled.
    axiom(&stack[0], s.system)
    pstep[0] = -1
    top = 1
    g = stack[0]
    for l in range(T):
        if status != OK:
            break
        # assemble the state's signature
        g = stack[top - 1]
        if top >= 2:
            g.s1h = stack[top - 2].s0h
            g.s1l = stack[top - 2].s0l
            g.s1l2 = stack[top - 2].s0l2
            g.s1r = stack[top - 2].s0r
            g.s1r2 = stack[top - 2].s0r2
            g.s1vl = stack[top - 2].s0vl
            g.s1vr = stack[top - 2].s0vr
        else:
            g.s1h = g.s1l = g.s1l2 = g.s1r = g.s1r2 = -1
            g.s1vl = g.s1vr = 0
        g.s2h = stack[top - 3].s0h if top >= 3 else -1
        sigs[l] = g
        preds[l] = -1
        a = -1
        if (top >= 2 and valid(s, &g, LEFT) and heads[g.s1h] == g.s0h):
            a = LEFT
        elif s.system and not g.scanned:
            a = SCAN
        elif (top >= 2 and valid(s, &g, RIGHT) and heads[g.s0h] == g.s1h
              and missing[g.s0h] == 0):
            a = RIGHT
        elif g.j <= n:
            a = SHIFT
        if a < 0:
            status = NOT_PROJECTIVE
            break
        acts[l] = a
        if a == SHIFT:
            apply_shift(&g, &stack[top])
            stack[top].s1h = -1
            pstep[top] = l
            stack[top].j = g.j + 1
            top += 1
        elif a == SCAN:
            stack[top - 1].scanned = 1
        else:
            preds[l] = pstep[top - 1]
            m = g.s1h if a == LEFT else g.s0h
            missing[heads[m]] -= 1
            apply_reduce(&stack[top - 2], &stack[top - 1], a, &g)
            g.j = stack[top - 1].j
            stack[top - 2] = g
            top -= 1
    if status == OK:
        g = stack[0]
        g.s1h = g.s1l = g.s1l2 = g.s1r = g.s1r2 = g.s2h = -1
        g.s1vl = g.s1vr = 0
        sigs[T] = g
        if top != 1:
            status = NOT_PROJECTIVE
    free(missing)
    free(stack)
    free(pstep)
    return status


# ---------------------------------------------------------------------------------------------
# Labels: a multi-class classifier over the arcs of the finished tree

cdef int label_keys(const SentC* s, const int32_t* heads, const int32_t* lmost,
                    const int32_t* rmost, int m, uint64_t* out) noexcept nogil:
    cdef int h = heads[m], tc = s.tagcol, k = 0
    cdef uint64_t hw = attr(s, h, WORD), ht = attr(s, h, tc)
    cdef uint64_t mw = attr(s, m, WORD), mt = attr(s, m, tc)
    cdef uint64_t dd = <uint64_t>(distance_bin(m - h if m > h else h - m) * 2 + (m > h))
    cdef uint64_t ml = attr(s, lmost[m], tc), mr = attr(s, rmost[m], tc)
    cdef uint64_t mp = attr(s, m - 1, tc) if m - 1 != h else NONE_ID
    cdef uint64_t mn = attr(s, m + 1, tc) if m + 1 != h else NONE_ID
    cdef uint64_t gt = attr(s, heads[h], tc) if h > 0 else NONE_ID
    out[k] = fkey(100, mw, 0, 0, 0); k += 1
    out[k] = fkey(101, mt, 0, 0, 0); k += 1
    out[k] = fkey(102, mw, mt, 0, 0); k += 1
    out[k] = fkey(103, hw, 0, 0, 0); k += 1
    out[k] = fkey(104, ht, 0, 0, 0); k += 1
    out[k] = fkey(105, ht, mt, 0, 0); k += 1
    out[k] = fkey(106, hw, mt, 0, 0); k += 1
    out[k] = fkey(107, ht, mw, 0, 0); k += 1
    out[k] = fkey(108, hw, mw, 0, 0); k += 1
    out[k] = fkey(109, ht, mt, dd, 0); k += 1
    out[k] = fkey(110, mt, dd, 0, 0); k += 1
    out[k] = fkey(111, mw, dd, 0, 0); k += 1
    out[k] = fkey(112, mt, ml, mr, 0); k += 1
    out[k] = fkey(113, ht, mt, ml, mr); k += 1
    out[k] = fkey(114, mt, mp, mn, dd); k += 1
    out[k] = fkey(115, gt, ht, mt, dd); k += 1
    out[k] = fkey(116, hw, ht, mt, dd); k += 1
    out[k] = fkey(117, mw, mt, dd, ht); k += 1
    out[k] = fkey(118, mw, ht, dd, 0); k += 1
    out[k] = fkey(119, hw, mw, dd, 0); k += 1
    out[k] = fkey(120, attr(s, m + 1, WORD), mt, 0, 0); k += 1
    out[k] = fkey(121, attr(s, m - 1, WORD), mt, 0, 0); k += 1
    out[k] = fkey(122, attr(s, m, SUFFIX), mt, 0, 0); k += 1
    out[k] = fkey(123, attr(s, lmost[m], WORD), mt, 0, 0); k += 1
    out[k] = fkey(124, attr(s, rmost[m], WORD), mt, 0, 0); k += 1
    out[k] = fkey(125, gt, ht, mw, dd); k += 1
    out[k] = fkey(126, ht, attr(s, h + 1, tc), mt, dd); k += 1
    out[k] = fkey(127, ht, attr(s, h - 1, tc), mt, dd); k += 1
    return k


cdef void outer_children(int n, const int32_t* heads, int32_t* lmost, int32_t* rmost) noexcept nogil:
    """lmost[h] / rmost[h]: the farthest left / right dependent of h (-1: none)."""
    cdef int m, h
    for m in range(n + 1):
        lmost[m] = -1
        rmost[m] = -1
    for m in range(1, n + 1):
        h = heads[m]
        if h < 0:
            continue
        if m < h and (lmost[h] < 0 or m < lmost[h]):
            lmost[h] = m
        if m > h and (rmost[h] < 0 or m > rmost[h]):
            rmost[h] = m


cdef int best_label(const SentC* s, const int32_t* heads, const int32_t* lmost,
                    const int32_t* rmost, int m, const floating* W, int shift, int L,
                    floating* acc, uint64_t* rows, int* n_rows) noexcept nogil:
    cdef uint64_t keys[MAX_LABEL_FEATURES]
    cdef int k, nk = label_keys(s, heads, lmost, rmost, m, keys), best = 0
    for k in range(L):
        acc[k] = 0
    for k in range(nk):
        rows[k] = row_of(keys[k], shift) * L
        add_row(acc, W + rows[k], L)
    n_rows[0] = nk
    for k in range(1, L):
        if acc[k] > acc[best]:
            best = k
    return best


cdef void label_all(const SentC* s, const int32_t* heads, int32_t* labels, int32_t* lm,
                    int32_t* rm, const floating* W, int shift, int L,
                    floating* acc) noexcept nogil:
    """labels[1..n] = the classifier's label of each word's arc in the tree ``heads``; lm, rm:
    work space of n + 1 entries each, acc of L."""
    cdef uint64_t rows[MAX_LABEL_FEATURES]
    cdef int k, nr
    outer_children(s.n, heads, lm, rm)
    for k in range(1, s.n + 1):
        labels[k] = best_label(s, heads, lm, rm, k, W, shift, L, acc, rows, &nr)


# ---------------------------------------------------------------------------------------------
# Python entry points

def layout_size(int action_bits, int label_bits, int n_labels) -> int:
    """Length of the weight vector: 4 * 2**action_bits action weights, then
    2**label_bits * n_labels label weights."""
    return N_ACTIONS * (1 << action_bits) + (1 << label_bits) * max(n_labels, 1)


def oracle(const int32_t[::1] heads, int system, bint single_root=True):
    """The canonical gold derivation of a projective tree: (actions int32 [T], predictor step
    of each reduce int32 [T] (-1 for shift and scan)). ValueError if there is none."""
    cdef SentC s
    cdef int n = heads.shape[0] - 1
    cdef int T = (3 if system else 2) * n
    acts = np.zeros(T, dtype=np.int32)
    preds = np.zeros(T, dtype=np.int32)
    cdef int32_t[::1] av = acts, pv = preds
    cdef SigC* sigs = <SigC*>malloc((T + 1) * sizeof(SigC))
    s.n = n
    s.tok = NULL
    s.tagcol = 0
    s.system = system
    s.single_root = single_root
    status = gold_derivation(&s, &heads[0], &av[0] if T else NULL, &pv[0] if T else NULL, sigs)
    free(sigs)
    if status != OK:
        raise ValueError("the tree has no derivation in this system (not projective, or "
                         "several root dependents with single_root)")
    return acts, preds


def score_actions(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
                  int tagcol, int system, bint single_root, const int32_t[::1] actions):
    """Run an action sequence without search: (its total score, heads int32 [n+1]).
    ValueError if an action is not valid where it is taken."""
    cdef SentC s
    cdef int n = tokens.shape[0] - 1, l, top = 1, a
    cdef double sc[4]
    cdef double total = 0
    cdef SigC g
    stack = np.zeros((n + 2, sizeof(SigC) // sizeof(int32_t)), dtype=np.int32)
    cdef int32_t[:, ::1] sv = stack
    cdef SigC* st = <SigC*>&sv[0, 0]
    heads = np.full(n + 1, -1, dtype=np.int32)
    cdef int32_t[::1] hv = heads
    s.n = n
    s.tok = &tokens[0, 0]
    s.tagcol = tagcol
    s.system = system
    s.single_root = single_root
    axiom(&st[0], system)
    for l in range(actions.shape[0]):
        g = st[top - 1]
        if top >= 2:
            g.s1h, g.s1l, g.s1l2 = st[top - 2].s0h, st[top - 2].s0l, st[top - 2].s0l2
            g.s1r, g.s1r2 = st[top - 2].s0r, st[top - 2].s0r2
            g.s1vl, g.s1vr = st[top - 2].s0vl, st[top - 2].s0vr
        else:
            g.s1h = g.s1l = g.s1l2 = g.s1r = g.s1r2 = -1
            g.s1vl = g.s1vr = 0
        g.s2h = st[top - 3].s0h if top >= 3 else -1
        a = actions[l]
        if not 0 <= a < N_ACTIONS or not valid(&s, &g, a):
            raise ValueError(f"action {a} is not valid at step {l}")
        score_state(&s, &g, &weights[0], 64 - action_bits, sc)
        total += sc[a]
        if a == SHIFT:
            apply_shift(&g, &st[top])
            top += 1
        elif a == SCAN:
            st[top - 1].scanned = 1
        else:
            if a == LEFT:
                hv[g.s1h] = g.s0h
            else:
                hv[g.s0h] = g.s1h
            apply_reduce(&st[top - 2], &st[top - 1], a, &g)
            g.j = st[top - 1].j
            st[top - 2] = g
            top -= 1
    return total, heads


cdef class Chart:
    """The merged search graph of one sentence (run by :func:`parse` or :func:`train`)."""

    cdef SearchC S
    cdef bint ready

    def __dealloc__(self):
        if self.ready:
            free_search(&self.S)

    @property
    def best_score(self) -> float:
        """The prefix score of the best final state."""
        return self.S.st[best_final(&self.S)].c

    @property
    def num_states(self) -> int:
        """Merged states created (kept or not)."""
        return self.S.n_st

    def forest(self):
        """The packed forest of the kept states, as the arrays of
        :class:`dparse.hypergraph.forest.Forest` (vertex_span, vertex_head, edge_head,
        edge_tails, edge_arc, edge_score, goal): scan states folded into their antecedents,
        every final state merged into the goal, states that do not reach it left out."""
        cdef SearchC* S = &self.S
        cdef int N = S.n_st, r, l, k, p, q, a, tp, tq, T = S.T
        vid = np.full(N, -1, dtype=np.int64)
        fold = np.arange(N, dtype=np.int64)
        used = np.zeros(N, dtype=np.uint8)
        cdef int64_t[::1] vv = vid, fv = fold
        cdef unsigned char[::1] uv = used
        for k in range(S.beam_start[T], S.beam_start[T + 1]):
            uv[S.kept[k]] = 1
        # backwards over the states (ids are topological): mark what the goal uses
        for r in range(N - 1, -1, -1):
            if not uv[r] or not S.st[r].alive:
                continue
            l = S.st[r].edges
            while l >= 0:
                a = S.ln[l].act
                if a == SCAN:
                    fv[r] = S.ln[l].b
                    uv[S.ln[l].b] = 1
                elif a == LEFT or a == RIGHT:
                    uv[S.ln[l].a] = 1
                    uv[S.ln[l].b] = 1
                l = S.ln[l].next
        goal_states = set(S.kept[k] for k in range(S.beam_start[T], S.beam_start[T + 1]))
        spans, vheads = [], []
        V = 0
        for r in range(N):
            if uv[r] and S.st[r].alive and fv[r] == r and r not in goal_states:
                vv[r] = V
                V += 1
                spans.append((S.st[r].sig.i, S.st[r].sig.j - 1))
                vheads.append(S.st[r].sig.s0h)
        goal = V
        spans.append((0, S.s.n))
        vheads.append(0)
        for r in goal_states:
            vv[r] = goal
        for r in range(N):
            if fv[r] != r:
                vv[r] = vv[fv[r]]
        e_head, e_tails, e_arc, e_score = [], [], [], []
        for r in range(N):
            if not uv[r] or not S.st[r].alive or fv[r] != r:
                continue
            l = S.st[r].edges
            leaf = S.st[r].bc_act == AXIOM
            if leaf:  # the root's leaf
                e_head.append(vv[r])
                e_tails.append((-1, -1))
                e_arc.append((-1, -1))
                e_score.append(0.0)
            while l >= 0:
                a = S.ln[l].act
                p = S.ln[l].a
                q = S.ln[l].b
                if a == SHIFT and not leaf:
                    leaf = True
                    e_head.append(vv[r])
                    e_tails.append((-1, -1))
                    e_arc.append((-1, -1))
                    e_score.append(0.0)
                elif a == LEFT or a == RIGHT:
                    score = S.st[p].sh + S.st[q].sc[a]
                    tp = fv[p]
                    tq = fv[q]
                    if tp != p:
                        score += S.st[tp].sc[SCAN]
                    if tq != q:
                        score += S.st[tq].sc[SCAN]
                    e_head.append(vv[r])
                    e_tails.append((vv[p], vv[q]))
                    if a == LEFT:
                        e_arc.append((S.st[q].sig.s0h, S.st[p].sig.s0h))
                    else:
                        e_arc.append((S.st[p].sig.s0h, S.st[q].sig.s0h))
                    e_score.append(score)
                l = S.ln[l].next
        eh = np.asarray(e_head, dtype=np.int32)
        order = np.argsort(eh, kind="stable")
        return (np.asarray(spans, dtype=np.int32).reshape(-1, 2),
                np.asarray(vheads, dtype=np.int32),
                eh[order],
                np.asarray(e_tails, dtype=np.int32).reshape(-1, 2)[order],
                np.asarray(e_arc, dtype=np.int32).reshape(-1, 2)[order],
                np.asarray(e_score, dtype=np.float64)[order],
                goal)


def parse(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
          int label_bits, int n_labels, int tagcol, int system, bint single_root, int beam,
          int32_t[::1] heads, int32_t[::1] labels, const int32_t[::1] gold_heads=None,
          bint keep_chart=False):
    """Beam search for one sentence (n >= 1): fills ``heads`` and ``labels`` (int32 [n+1],
    entry 0 left -1) and returns the best score, or the :class:`Chart` with ``keep_chart``.
    With ``gold_heads`` (a projective tree) the gold state is forced into every beam."""
    cdef Chart chart = Chart()
    cdef SearchC* S = &chart.S
    cdef int n = tokens.shape[0] - 1, status, m, k
    cdef int32_t* pairs
    cdef int32_t* todo
    cdef int32_t* lm
    cdef int32_t* rm
    cdef floating* acc
    cdef int32_t[::1] ga, gp
    if beam < 1:
        raise ValueError("beam must be at least 1")
    if init_search(S, tokens, tagcol, system, single_root, beam) != OK:
        raise MemoryError("shift-reduce chart")
    chart.ready = True
    gacts = gpreds = None
    if gold_heads is not None:
        gacts, gpreds = oracle(gold_heads, system, single_root)
        ga = gacts
        gp = gpreds
        S.gold_act = &ga[0]
        S.gold_pred = &gp[0]
        S.force_gold = 1
    pairs = <int32_t*>malloc((4 * S.T + 4) * sizeof(int32_t))
    todo = <int32_t*>malloc((4 * S.T + 8) * sizeof(int32_t))
    lm = <int32_t*>malloc(2 * (n + 1) * sizeof(int32_t))
    acc = <floating*>malloc((n_labels + 1) * sizeof(floating))
    if pairs == NULL or todo == NULL or lm == NULL or acc == NULL:
        free(pairs); free(todo); free(lm); free(acc)
        raise MemoryError("shift-reduce chart")
    rm = lm + n + 1
    with nogil:
        status = run_search(S, &weights[0], 64 - action_bits)
        if status == OK:
            m = derivation(S, best_final(S), pairs, todo)
            for k in range(n + 1):
                heads[k] = -1
                labels[k] = -1
            heads_of(S, pairs, m, &heads[0])
            label_all(&S.s, &heads[0], &labels[0], lm, rm,
                      &weights[N_ACTIONS * (1 << action_bits)], 64 - label_bits, n_labels, acc)
    free(pairs); free(todo); free(lm); free(acc)
    S.gold_act = NULL
    S.gold_pred = NULL
    if status != OK:
        raise MemoryError("shift-reduce chart")
    if keep_chart:
        return chart
    return chart.best_score


def label_tree(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
               int label_bits, int n_labels, int tagcol, const int32_t[::1] heads):
    """The label ids (int32 [n+1], entry 0 -1) the arc classifier gives the arcs of the tree
    ``heads`` (int32 [n+1], any tree, e.g. a reranker's): what :func:`parse` does with its own
    tree."""
    cdef SentC s
    cdef int n = tokens.shape[0] - 1
    if heads.shape[0] != n + 1 or n < 1:
        raise ValueError("heads must have n + 1 entries, n >= 1")
    memset(&s, 0, sizeof(SentC))
    s.n = n
    s.tok = &tokens[0, 0]
    s.tagcol = tagcol
    labels = np.full(n + 1, -1, dtype=np.int32)
    cdef int32_t[::1] lv = labels
    cdef int32_t[::1] work = np.empty(2 * (n + 1), dtype=np.int32)
    cdef floating[::1] acc = np.empty(max(n_labels, 1), dtype=np.asarray(weights).dtype)
    with nogil:
        label_all(&s, &heads[0], &lv[0], &work[0], &work[n + 1],
                  &weights[N_ACTIONS * (1 << action_bits)], 64 - label_bits, n_labels, &acc[0])
    return labels


def train_sentence(const int32_t[:, ::1] tokens, const int32_t[::1] gold_heads,
                   const int32_t[::1] gold_labels, double[::1] w, double[::1] u, double c,
                   int action_bits, int label_bits, int n_labels, int tagcol, int system,
                   bint single_root, int beam, int update, uint8_t[::1] touched=None):
    """One perceptron step on one sentence (a projective tree): beam search against the gold
    derivation, then an early (``update`` 0) or max-violation (1) update of the action weights,
    and a perceptron step of the label classifier on every gold arc; ``touched`` (a bit mask
    over ``w``, uint8 [(len(w) + 7) // 8]; None: not kept) has the bit of every index written
    set. Returns a dict of counts:
    updated (0/1), steps (searched before the update), correct (arcs of the best tree),
    label_correct, status (0, or -2 if the tree has no derivation)."""
    cdef SearchC S
    cdef int n = tokens.shape[0] - 1, status, T, l, k, m, best, viol_step, gm, nr, h, lab, pl
    cdef int32_t* pairs = NULL
    cdef int32_t* todo = NULL
    cdef int32_t* lm = NULL
    cdef int32_t* rm
    cdef int32_t* ph = NULL
    cdef int32_t* acts = NULL
    cdef int32_t* preds = NULL
    cdef SigC* sigs = NULL
    cdef double* acc = NULL
    cdef double* gscore = NULL
    cdef double sc[4]
    cdef double viol, bestv
    cdef uint64_t rows[MAX_LABEL_FEATURES]
    cdef int shift = 64 - action_bits, lshift = 64 - label_bits
    cdef int64_t loff = N_ACTIONS * (1 << action_bits)
    cdef int updated = 0, searched = 0, correct = 0, label_correct = 0
    if u.shape[0] != w.shape[0] or (touched is not None
                                    and touched.shape[0] != (w.shape[0] + 7) // 8):
        raise ValueError("w and u must have the same size, and touched a bit for each weight")
    cdef uint8_t* marks = &touched[0] if touched is not None else NULL
    if init_search(&S, tokens, tagcol, system, single_root, beam) != OK:
        raise MemoryError("shift-reduce chart")
    T = S.T
    with nogil:
        pairs = <int32_t*>malloc((4 * T + 4) * sizeof(int32_t))
        todo = <int32_t*>malloc((4 * T + 8) * sizeof(int32_t))
        lm = <int32_t*>malloc(3 * (n + 1) * sizeof(int32_t))
        acts = <int32_t*>malloc((2 * T + 2) * sizeof(int32_t))
        sigs = <SigC*>malloc((T + 1) * sizeof(SigC))
        acc = <double*>malloc((n_labels + T + 2) * sizeof(double))
        status = OK
        if (pairs == NULL or todo == NULL or lm == NULL or acts == NULL or sigs == NULL
                or acc == NULL):
            status = NO_MEMORY
        if status == OK:
            rm = lm + n + 1
            ph = lm + 2 * (n + 1)
            preds = acts + T + 1
            gscore = acc + n_labels
            status = gold_derivation(&S.s, &gold_heads[0], acts, preds, sigs)
        if status == OK:
            S.gold_act = acts
            S.gold_pred = preds
            status = run_search(&S, &w[0], shift)
        if status == OK:
            # gold prefix scores: gscore[l] is the score of the gold derivation's first l steps
            gscore[0] = 0
            for l in range(T):
                score_state(&S.s, &sigs[l], &w[0], shift, sc)
                gscore[l + 1] = gscore[l] + sc[acts[l]]
            # where to update: the first step whose beam lost the gold (early), or the step of
            # largest violation among those whose best state is not gold (max violation)
            viol_step = -1
            bestv = -1e300
            for l in range(1, T + 1):
                best = S.kept[S.beam_start[l]]
                gm = 0
                for k in range(S.beam_start[l], S.beam_start[l + 1]):
                    if S.st[S.kept[k]].gold:
                        gm = 1
                if update == EARLY:
                    if not gm:
                        viol_step = l
                        break
                elif not S.st[best].gold or S.st[best].c > gscore[l] + 1e-9:
                    # a merged gold state whose best prefix is not the gold one is lost too
                    viol = S.st[best].c - gscore[l]
                    if viol > bestv:
                        bestv = viol
                        viol_step = l
            # the best final tree
            m = derivation(&S, best_final(&S), pairs, todo)
            for k in range(n + 1):
                ph[k] = -1
            heads_of(&S, pairs, m, ph)
            for k in range(1, n + 1):
                correct += ph[k] == gold_heads[k]
            if viol_step < 0 and correct < n:
                viol_step = T
            if viol_step > 0:
                updated = 1
                searched = viol_step
                best = S.kept[S.beam_start[viol_step]]
                m = derivation(&S, best, pairs, todo)
                for l in range(viol_step):
                    update_state(&S.s, &sigs[l], acts[l], 1.0, c, &w[0], &u[0], marks, shift)
                for k in range(m):
                    update_state(&S.s, &S.st[pairs[2 * k]].sig, pairs[2 * k + 1], -1.0, -c,
                                 &w[0], &u[0], marks, shift)
            else:
                searched = T
            # labels, on the gold tree
            outer_children(n, &gold_heads[0], lm, rm)
            for k in range(1, n + 1):
                lab = gold_labels[k]
                if lab < 0:
                    continue
                pl = best_label(&S.s, &gold_heads[0], lm, rm, k, &w[loff], lshift, n_labels,
                                acc, rows, &nr)
                if pl == lab:
                    label_correct += 1
                    continue
                for h in range(nr):
                    add_at(&w[0], &u[0], marks, loff + rows[h] + lab, 1.0, c)
                    add_at(&w[0], &u[0], marks, loff + rows[h] + pl, -1.0, -c)
        free(pairs); free(todo); free(lm); free(acts); free(sigs); free(acc)
        free_search(&S)
    if status == NO_MEMORY:
        raise MemoryError("shift-reduce chart")
    return {"updated": updated, "steps": searched, "total_steps": T, "correct": correct,
            "label_correct": label_correct, "status": status}
