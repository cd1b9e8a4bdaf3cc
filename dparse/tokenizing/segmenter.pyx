# cython: language_level=3
"""The tokenizer's hot loops: a greedy left-to-right classifier over the characters of a text.

Each non-space character i gets one of three labels, what follows it (the boundary between
i and i + 1): ``INSIDE`` (its token goes on), ``TOKEN_END`` (its token ends), ``SENTENCE_END``
(its token and its sentence end). White space always separates tokens and gets no label. A
character followed by white space, or by nothing, ends its token; one followed by white space
that holds a line break (``NEWLINE`` class), or by nothing, ends its sentence.

The features of character i (``features``) read the lowered characters and character classes
of a window around it, the token so far (from its first character to i: a hash of it and
whether the training vocabulary has it), the string ahead up to the next white space (whether
it, and the token so far continued by it, are in the vocabulary) and the first characters after
the white space that follows (for sentence ends: their hash, the first two classes, and
whether training had that token in lower case: ``LOWERCASE_MARK``), the sentence's place in
its line (how many sentences of the line came before it: a document's headline comes first),
and, next to letters without case (Chinese, Japanese), the longest vocabulary words that end at
i and start at i + 1. Each feature is a 64-bit key mapped to a
bucket of ``2 ** bits``; ``weights[bucket * 3 + label]``. Training is the averaged perceptron
over the same greedy search, with the gold history (the token so far starts where gold's does).

Arrays (validated by the Python callers, dparse.tokenizing.model):

- ``low[N]`` uint32: each character lowered (one code point where ``str.lower`` gives one),
  white space as 32, line breaks as 10; ``cls[N]`` uint8: its class (dparse.tokenizing.chars;
  ``SPACE`` and ``NEWLINE`` are white space);
- ``vocab[S]`` uint64: the hashes (``token_hashes``) of the lowered training tokens as a hash
  set (``vocab_table``: S a power of two, 0 an empty slot), and ``hash ^ LOWERCASE_MARK`` of
  those that training wrote in lower case;
- ``labels[N]`` int8: -1 for white space, else one of the three labels;
- ``spans[K, 2]`` int64: the training units (sentences), each [start, end) in the text, each
  starting at a token start; ``folds[K]`` int64 their folds, ``vocabs`` and ``vocab_ptr``
  [F + 1] int64 the vocabulary table each fold reads (``train_epoch``).
"""

from libc.stdint cimport int8_t, int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

from dparse._ext.hashing cimport fmix, mix

cdef enum:
    INSIDE_ = 0
    TOKEN_END_ = 1
    SENTENCE_END_ = 2
    N_LABELS = 3
    N_FEATURES = 36
    AHEAD = 24  # the string ahead is read up to this many characters
    WORD = 6  # dictionary words around a boundary: up to this many characters

# the version of the features below (dparse.templates): raise it with any change of them
TEMPLATES_VERSION = 2
INSIDE, TOKEN_END, SENTENCE_END = INSIDE_, TOKEN_END_, SENTENCE_END_
FEATURES = N_FEATURES
cdef enum:
    # the white-space classes of dparse.tokenizing.chars (which assigns every class)
    SPACE_ = 1
    NEWLINE_ = 2
    OTHER_LETTER_ = 5
SPACE, NEWLINE, OTHER_LETTER = SPACE_, NEWLINE_, OTHER_LETTER_

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL
cdef uint64_t LONG = 0x6A09E667F3BCC909ULL  # the string ahead did not end within AHEAD
# a token's hash xor this, in the vocabulary: training had the token in lower case
cdef uint64_t LOWER_ = 0xBB67AE8584CAA73BULL
LOWERCASE_MARK = LOWER_


cdef inline uint64_t fnv(uint64_t h, uint32_t c) noexcept nogil:
    return (h ^ c) * FNV_PRIME


cdef inline bint is_space(uint8_t k) noexcept nogil:
    return k == SPACE_ or k == NEWLINE_


cdef inline uint64_t key(uint64_t template, uint64_t a) noexcept nogil:
    return fmix(mix(template + 1, a))


cdef inline uint64_t key2(uint64_t template, uint64_t a, uint64_t b) noexcept nogil:
    return fmix(mix(mix(template + 1, a), b))


cdef inline uint64_t key3(uint64_t template, uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    return fmix(mix(mix(mix(template + 1, a), b), c))


cdef inline bint known(const uint64_t* table, Py_ssize_t size, uint64_t h) noexcept nogil:
    """Whether the vocabulary ``table`` (a hash set: ``vocab_table``) holds ``h``."""
    cdef uint64_t mask, slot
    if size == 0:
        return False
    if h == 0:
        h = 1  # 0 marks an empty slot
    mask = size - 1
    slot = fmix(h) & mask
    while table[slot] != 0:
        if table[slot] == h:
            return True
        slot = (slot + 1) & mask
    return False


def vocab_table(const uint64_t[::1] hashes):
    """The hash set of token hashes that the loops read (uint64 [S], S the smallest power of
    two >= 2 * len(hashes), at least 2): each hash (0 stored as 1) at the first empty slot
    (0) from ``fmix(hash) mod S``, in the order given (sort them for the same bytes)."""
    cdef Py_ssize_t size = 2, k
    while size < 2 * hashes.shape[0]:
        size *= 2
    out = np.zeros(size, dtype=np.uint64)
    cdef uint64_t[::1] table = out
    cdef uint64_t h, slot, mask = size - 1
    with nogil:
        for k in range(hashes.shape[0]):
            h = hashes[k] if hashes[k] != 0 else 1
            slot = fmix(h) & mask
            while table[slot] != 0 and table[slot] != h:
                slot = (slot + 1) & mask
            table[slot] = h
    return out


def in_vocab(const uint64_t[::1] table, const uint64_t[::1] hashes):
    """Whether the ``vocab_table`` ``table`` holds each of ``hashes`` (bool [K]; 0 and 1 are
    one key)."""
    if table.shape[0] & (table.shape[0] - 1):
        raise ValueError("a vocabulary table's size is a power of two (vocab_table)")
    out = np.zeros(hashes.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] found = out
    cdef Py_ssize_t k
    cdef const uint64_t* start = &table[0] if table.shape[0] else NULL
    with nogil:
        for k in range(hashes.shape[0]):
            found[k] = known(start, table.shape[0], hashes[k])
    return out.astype(bool)


cdef struct Text:
    const uint32_t* low
    const uint8_t* cls
    Py_ssize_t n
    const uint64_t* vocab  # the vocabulary table the features read
    Py_ssize_t nv
    const uint64_t* vocab0  # where the vocabulary array starts (training: every fold's)


cdef inline uint64_t ch(const Text* t, Py_ssize_t j) noexcept nogil:
    return t.low[j] if 0 <= j < t.n else 0x110000  # beyond the text: no code point


cdef inline uint64_t kl(const Text* t, Py_ssize_t j) noexcept nogil:
    return t.cls[j] if 0 <= j < t.n else 0


cdef inline Py_ssize_t white_run(const Text* t, Py_ssize_t j, bint* newline) noexcept nogil:
    """The first non-space position from j (t.n if none); ``newline``: a line break on the way."""
    newline[0] = False
    while j < t.n and is_space(t.cls[j]):
        if t.cls[j] == NEWLINE_:
            newline[0] = True
        j += 1
    return j


cdef int allowed(const Text* t, Py_ssize_t i) noexcept nogil:
    """The labels character i may take: 0 all three, 1 a token end of either kind, 2 only
    ``SENTENCE_END``."""
    cdef bint newline
    cdef Py_ssize_t j
    if i + 1 >= t.n:
        return 2
    if not is_space(t.cls[i + 1]):
        return 0
    j = white_run(t, i + 1, &newline)
    return 2 if newline or j >= t.n else 1


cdef void features(const Text* t, Py_ssize_t i, Py_ssize_t start, uint64_t htok,
                   Py_ssize_t before, uint64_t* out) noexcept nogil:
    """The N_FEATURES keys of character i, whose token began at ``start`` (``htok``: the hash
    of its lowered characters start..i), ``before`` sentences of its line before its
    sentence."""
    cdef Py_ssize_t j, o, behind, ahead_word
    cdef uint64_t word
    cdef uint64_t c_2 = ch(t, i - 2), c_1 = ch(t, i - 1), c0 = ch(t, i), c1 = ch(t, i + 1)
    cdef uint64_t c2 = ch(t, i + 2), c3 = ch(t, i + 3), c_3 = ch(t, i - 3)
    cdef uint64_t k_1 = kl(t, i - 1), k0 = kl(t, i), k1 = kl(t, i + 1), k2 = kl(t, i + 2)
    cdef uint64_t window = 0, ahead = FNV_OFFSET, whole = htok, nxt = FNV_OFFSET, following
    cdef uint64_t second
    cdef uint64_t line_place = before if before < 3 else 3
    cdef bint inv = known(t.vocab, t.nv, htok), ahead_known, whole_known, newline, spaced
    cdef uint64_t length = i - start + 1
    for o in range(-4, 5):
        window = (window << 5) | kl(t, i + o)
    if length > 12:
        length = 12
    out[0] = key(0, 0)
    out[1] = key(1, c_3)
    out[2] = key(2, c_2)
    out[3] = key(3, c_1)
    out[4] = key(4, c0)
    out[5] = key(5, c1)
    out[6] = key(6, c2)
    out[7] = key(7, c3)
    out[8] = key2(8, c_2, c_1)
    out[9] = key2(9, c_1, c0)
    out[10] = key2(10, c0, c1)
    out[11] = key2(11, c1, c2)
    out[12] = key3(12, c_1, c0, c1)
    out[13] = key3(13, c0, c1, c2)
    out[14] = key(14, (window >> 10) & 0x7FFF)        # classes i-1 .. i+1
    out[15] = key(15, (window >> 5) & 0x7FFF)         # classes i .. i+2
    out[16] = key(16, (window >> 5) & 0x1FFFFFF)      # classes i-2 .. i+2
    out[17] = key(17, window)                         # classes i-4 .. i+4
    out[18] = key(18, window >> 20)                   # classes i-4 .. i
    # the token so far
    out[19] = key2(19, inv, k1)
    out[20] = key(20, htok)
    out[21] = key2(21, htok, k1)
    out[22] = key3(22, length, inv, k1)
    # the string ahead, to the next white space
    j = i + 1
    while j < t.n and not is_space(t.cls[j]) and j - i <= AHEAD:
        ahead = fnv(ahead, t.low[j])
        whole = fnv(whole, t.low[j])
        j += 1
    if j - i > AHEAD:
        ahead = whole = LONG
    ahead_known = j > i + 1 and known(t.vocab, t.nv, ahead)
    whole_known = j > i + 1 and known(t.vocab, t.nv, whole)
    out[23] = key3(23, inv, ahead_known, whole_known)
    out[24] = key3(24, ahead_known * 2 + whole_known, k0, k1)
    # after the white space that follows (sentence ends)
    spaced = j == i + 1 and j < t.n and is_space(t.cls[j])
    if spaced:
        j = white_run(t, j, &newline)
    following = kl(t, j)  # the class of the next token's first character
    second = kl(t, j + 1) if j + 1 < t.n else 0
    o = 0
    while j < t.n and not is_space(t.cls[j]) and o < AHEAD:
        nxt = fnv(nxt, t.low[j])
        j += 1
        o += 1
    out[25] = key3(25, following, spaced, k0)
    out[26] = key2(26, nxt, spaced)
    out[27] = key3(27, htok, spaced, k2 if not spaced else 0)
    out[28] = key3(28, c0, spaced, known(t.vocab, t.nv, nxt))
    out[29] = key3(29, k_1 * 32 + k0, spaced, inv)
    # the next token's shape (its first two classes: Title or UPPER)
    out[32] = key3(32, following * 32 + second, spaced, k0)
    # the next token as training wrote it: a capital where training had it in lower case
    # starts a sentence more often than a name does
    out[33] = key3(33, known(t.vocab, t.nv, nxt ^ LOWER_) * 2 + known(t.vocab, t.nv, nxt),
                   following, spaced)
    out[34] = key3(34, known(t.vocab, t.nv, nxt ^ LOWER_), following * 32 + k0, spaced)
    # the sentence's place in its line (a document's first sentence is often its headline)
    out[35] = key3(35, line_place, spaced, following * 32 + k0)
    # the longest vocabulary words (up to WORD characters, within the run of non-space
    # characters) that end at i and that start at i + 1, where i or i + 1 is a letter without
    # case (OTHER_LETTER: Chinese, Japanese, Thai, ...): text without spaces is cut where
    # dictionary words meet
    behind = ahead_word = 0
    if k0 != OTHER_LETTER_ and k1 != OTHER_LETTER_:
        out[30] = key3(30, 0, 0, 0)
        out[31] = key3(31, 0, 0, k1)
        return
    for o in range(1, WORD + 1):
        if i - o + 1 < 0 or is_space(t.cls[i - o + 1]):
            break
        word = FNV_OFFSET
        for j in range(i - o + 1, i + 1):
            word = fnv(word, t.low[j])
        if known(t.vocab, t.nv, word):
            behind = o
    word = FNV_OFFSET
    for o in range(1, WORD + 1):
        if i + o >= t.n or is_space(t.cls[i + o]):
            break
        word = fnv(word, t.low[i + o])
        if known(t.vocab, t.nv, word):
            ahead_word = o
    out[30] = key3(30, behind, ahead_word, 0)
    out[31] = key3(31, behind == <Py_ssize_t>length, ahead_word, k1)


ctypedef fused weight_t:  # the averaged weights as parsing reads them (float32), or training's
    float
    double


cdef inline int best(const weight_t* weights, const uint64_t* keys, uint64_t mask, int allow,
                     double* scores) noexcept nogil:
    """The highest-scoring label ``allow`` permits (the lowest on a tie)."""
    cdef int f, y, lo = 0 if allow == 0 else (1 if allow == 1 else 2), arg
    cdef uint64_t b
    scores[0] = scores[1] = scores[2] = 0.0
    for f in range(N_FEATURES):
        b = (keys[f] & mask) * N_LABELS
        scores[0] += weights[b]
        scores[1] += weights[b + 1]
        scores[2] += weights[b + 2]
    arg = lo
    for y in range(lo + 1, N_LABELS):
        if scores[y] > scores[arg]:
            arg = y
    return arg


cdef Text bind(const uint32_t[::1] low, const uint8_t[::1] cls,
               const uint64_t[::1] vocab):
    cdef Text t
    if low.shape[0] != cls.shape[0]:
        raise ValueError("low and cls must have one entry per character")
    t.n = low.shape[0]
    t.low = &low[0] if t.n else NULL
    t.cls = &cls[0] if t.n else NULL
    t.nv = vocab.shape[0]
    if t.nv & (t.nv - 1):
        raise ValueError("a vocabulary table's size is a power of two (vocab_table)")
    t.vocab = &vocab[0] if t.nv else NULL
    t.vocab0 = t.vocab
    return t


def segment(const uint32_t[::1] low, const uint8_t[::1] cls, const float[::1] weights,
            const uint64_t[::1] vocab):
    """The label of every character of a text (int8 [N], -1 for white space), greedily from
    the left with ``weights`` float32 [B * 3], B a power of two."""
    cdef Text t = bind(low, cls, vocab)
    cdef Py_ssize_t nb = weights.shape[0] // N_LABELS, i, start = 0
    if nb < 1 or nb * N_LABELS != weights.shape[0] or nb & (nb - 1):
        raise ValueError("weights must hold 3 entries for each of a power of two buckets")
    out = np.full(t.n, -1, dtype=np.int8)
    cdef int8_t[::1] labels = out
    cdef uint64_t keys[N_FEATURES]
    cdef double scores[N_LABELS]
    cdef uint64_t mask = nb - 1, htok = FNV_OFFSET
    cdef const float* w = &weights[0]
    cdef int y
    cdef Py_ssize_t before = 0  # sentences of the line before the current one
    with nogil:
        for i in range(t.n):
            if is_space(t.cls[i]):
                if t.cls[i] == NEWLINE_:
                    before = 0
                start = i + 1
                htok = FNV_OFFSET
                continue
            htok = fnv(htok, t.low[i])
            features(&t, i, start, htok, before, keys)
            y = best(w, keys, mask, allowed(&t, i), scores)
            labels[i] = y
            if y != INSIDE_:
                start = i + 1
                htok = FNV_OFFSET
                before += y == SENTENCE_END_
    return out


def train_epoch(const uint32_t[::1] low, const uint8_t[::1] cls, const int8_t[::1] gold,
                const int64_t[:, ::1] spans, const int64_t[::1] folds,
                const int64_t[::1] places, double[::1] weights,
                double[::1] totals, int64_t clock, const uint64_t[::1] vocabs,
                const int64_t[::1] vocab_ptr):
    """One perceptron epoch over the units ``spans`` in their order: each character of each unit
    is predicted from the gold history (its token so far as gold has it); a wrong label moves
    ``weights`` towards gold, and ``totals`` gathers ``clock * change`` so that the averaged
    weights are ``weights - totals / clock`` (Daume's trick). ``clock`` counts the characters
    seen, from 1. A unit of fold f (``folds[k]``, int64 [K]) reads the vocabulary table
    ``vocabs[vocab_ptr[f]:vocab_ptr[f + 1]]`` (a ``vocab_table``): the vocabulary of the other folds' units, so
    that training meets unknown tokens about as often as new text does (a jackknife).
    ``places[k]`` (int64 [K]): the sentences of unit k's line before it. Returns
    (clock, characters, errors); a character whose gold label the constraints forbid is
    skipped (a token holding white space)."""
    cdef Text t = bind(low, cls, vocabs[:0])
    t.vocab0 = &vocabs[0] if vocabs.shape[0] else NULL
    cdef Py_ssize_t nb = weights.shape[0] // N_LABELS, k, i, start, size
    cdef Py_ssize_t nf = vocab_ptr.shape[0] - 1
    if gold.shape[0] != t.n or totals.shape[0] != weights.shape[0]:
        raise ValueError("gold must label every character and totals match weights")
    if nb < 1 or nb * N_LABELS != weights.shape[0] or nb & (nb - 1):
        raise ValueError("weights must hold 3 entries for each of a power of two buckets")
    if folds.shape[0] != spans.shape[0] or places.shape[0] != spans.shape[0]:
        raise ValueError("folds and places must give one entry per unit")
    if nf < 1 or vocab_ptr[0] != 0 or vocab_ptr[nf] != vocabs.shape[0]:
        raise ValueError("vocab_ptr must cut vocabs into one or more folds")
    for k in range(nf):
        size = vocab_ptr[k + 1] - vocab_ptr[k]
        if size < 0 or size & (size - 1):
            raise ValueError("vocab_ptr must cut vocabs into tables whose sizes are powers of "
                             "two (vocab_table)")
    for k in range(spans.shape[0]):
        if not 0 <= spans[k, 0] <= spans[k, 1] <= t.n:
            raise ValueError(f"span {k} is outside the text")
        if not 0 <= folds[k] < nf:
            raise ValueError(f"unit {k} has no fold vocabulary")
    cdef uint64_t keys[N_FEATURES]
    cdef double scores[N_LABELS]
    cdef uint64_t mask = nb - 1, htok, b
    cdef int y, g, allow, f
    cdef Py_ssize_t before
    cdef int64_t seen = 0, errors = 0
    with nogil:
        for k in range(spans.shape[0]):
            t.vocab = t.vocab0 + vocab_ptr[folds[k]] if t.vocab0 != NULL else NULL
            t.nv = vocab_ptr[folds[k] + 1] - vocab_ptr[folds[k]]
            start = spans[k, 0]
            htok = FNV_OFFSET
            before = places[k]
            for i in range(spans[k, 0], spans[k, 1]):
                if is_space(t.cls[i]):
                    if t.cls[i] == NEWLINE_:
                        before = 0
                    start = i + 1
                    htok = FNV_OFFSET
                    continue
                htok = fnv(htok, t.low[i])
                g = gold[i]
                allow = allowed(&t, i)
                if (g >= 0 and not (allow == 1 and g == INSIDE_)
                        and not (allow == 2 and g != SENTENCE_END_)):
                    features(&t, i, start, htok, before, keys)
                    y = best(&weights[0], keys, mask, allow, scores)
                    seen += 1
                    if y != g:
                        errors += 1
                        for f in range(N_FEATURES):
                            b = (keys[f] & mask) * N_LABELS
                            weights[b + g] += 1.0
                            weights[b + y] -= 1.0
                            totals[b + g] += <double>clock
                            totals[b + y] -= <double>clock
                    clock += 1
                if g > INSIDE_:
                    start = i + 1
                    htok = FNV_OFFSET
                    before += g == SENTENCE_END_
                elif g < 0:  # inside a token that holds white space
                    start = i + 1
                    htok = FNV_OFFSET
    return clock, seen, errors


def token_hashes(const uint32_t[::1] low, const int64_t[::1] starts, const int64_t[::1] ends):
    """The hash the loops give the token low[starts[k]:ends[k]], for each k (uint64 [K])."""
    cdef Py_ssize_t k, i, n = low.shape[0]
    if starts.shape[0] != ends.shape[0]:
        raise ValueError("starts and ends must have one entry per token")
    for k in range(starts.shape[0]):
        if not 0 <= starts[k] <= ends[k] <= n:
            raise ValueError(f"token {k} is outside the text")
    out = np.empty(starts.shape[0], dtype=np.uint64)
    cdef uint64_t[::1] h = out
    cdef uint64_t v
    with nogil:
        for k in range(starts.shape[0]):
            v = FNV_OFFSET
            for i in range(starts[k], ends[k]):
                v = fnv(v, low[i])
            h[k] = v
    return out
