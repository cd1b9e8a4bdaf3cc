# cython: language_level=3
"""The action feature templates of the shift-reduce parser: :c:func:`state_keys`, the one place
they live (their version, TEMPLATES_VERSION of shiftreduce_templates.pyx, is saved with a model:
a change to a template changes it), and :c:func:`score_state`, the scores of a state's actions.
Both are inline, compiled into the search and the training step that call them for every state.

Features (Huang and Sagae's templates plus Hayashi et al. 2013's Table 1, distance, valency, a
few lexical pairs with the queue front, suffixes and universal tags, Zhang and Nivre 2011's
child and second-child unigrams, McDonald et al. 2005's context tags around the heads of s1 and
s0, alone and with the words of s0 and s1; all read from the signature, so merging stays exact)
are hashed; the tag t of the templates is one POS column or, with ``tagcol`` PAIRED, the pair
(XPOS, UPOS). A feature picks one of ``2**action_bits`` rows of 4 weights (one per action), so
one memory read scores every action.
"""

from libc.stdint cimport int32_t, uint64_t

from cython cimport floating

from dparse._ext.hashing cimport distance_bin, fmix, mix
from dparse._ext.tokens cimport EOS_ID, NCOLS, SUFFIX, UPOS, WORD, XPOS
from dparse._ext.weights cimport add_row, prefetch_rows
from dparse.transition.shiftreduce_state cimport N_ACTIONS, SentC, SigC

cdef enum:
    NONE_ID = 0x7FFFFFF0                     # the attribute of a missing node (no child, ...)
    MAX_FEATURES = 112                       # room for state_keys' keys
    PAIRED = 99                              # tag column: the pair (XPOS, UPOS)


cdef inline uint64_t fkey(uint64_t t, uint64_t a, uint64_t b, uint64_t c,
                          uint64_t d) noexcept nogil:
    """The key of template t over the values a, b, c, d."""
    return fmix(mix(mix(mix(mix(t + 1, a), b), c), d))


cdef inline uint64_t row_of(uint64_t k, int shift) noexcept nogil:
    """The weight row of key k: its multiply-shift hash, the top 64 - shift bits."""
    return (k * <uint64_t>0x9FB21C651E98DF25ULL) >> shift


cdef inline uint64_t attr(const SentC* s, int pos, int col) noexcept nogil:
    """Column col (or PAIRED) of node pos: NONE_ID for no node (pos -1), EOS_ID past the end."""
    if pos < 0:
        return NONE_ID
    if pos > s.n:
        return EOS_ID
    if col == PAIRED:
        return ((<uint64_t>s.tok[pos * NCOLS + XPOS]) << 16) | <uint64_t>s.tok[pos * NCOLS + UPOS]
    return <uint64_t>s.tok[pos * NCOLS + col]


cdef inline int state_keys(const SentC* s, const SigC* g, uint64_t* out) noexcept nogil:
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
