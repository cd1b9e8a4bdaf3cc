# cython: language_level=3
"""The tagging family's hot loops: a greedy left-to-right classifier over hashed features.

A tagger (dparse.tagging) predicts one *column* at a time (UPOS, XPOS, FEATS, then a lemma rule),
word by word from the left of each sentence; the features of a word read hashed attributes
("atoms": form, lower-cased form, affixes, shape, ...) of the words around it, the values already
predicted for earlier columns anywhere in the sentence, and the values of the current column
already predicted to its left. Training is the averaged perceptron with the same greedy search:
each word is predicted from the words predicted before it, and a wrong prediction moves the
weights of its features toward the gold class (Collins 2002; greedy, as Ratnaparkhi 1996 tags).

Conventions of every function here (the arrays are validated by the Python callers):

- A batch holds T words; sentence s is words ``sent_ptr[s]`` .. ``sent_ptr[s + 1] - 1``.
- ``tok_type[T]`` int32: the word's row in the type tables: rows ``0 .. V-1`` of
  ``atoms_known`` [V, A] (types seen in training) or rows ``V ..`` of ``atoms_extra`` (the other
  forms of the batch). ``cand_ptr`` [types + 1] / ``cand_ids``: per type (known, then extra), the
  classes allowed for the word (none listed: every class).
- ``values[T, K]`` int32: the class of every column of every word (-1: none). The column
  ``col`` is written where it is -1 (a class already there is given, and kept: a word the
  tagger's lexicon lemmatizes); the others are read (predicted earlier, or gold in training).
- ``templates[F, 7]`` int32: per feature template, the number of parts (1..3) and up to three
  ``(source, offset)`` pairs: source ``a < A`` is atom ``a`` of the word at ``offset``,
  ``A + k`` is column k's value there (for k == col, offset < 0 only). Positions before or after
  the sentence read a boundary value.
- ``cond`` (-1: none) and ``compat`` [R, C] uint8: a class c of the word is allowed only if
  ``compat[values[i, cond], c]`` (a value -1 allows all); a word left with no class keeps its
  unfiltered list.
- The weight of feature key k and class c is ``W[bucket(k, salt(c), 64 - bits)]``.
"""

from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

cimport cython
from cython cimport floating

from dparse._ext.hashing cimport bucket, fmix, mix

TEMPLATE_WIDTH = 7  # columns of a template row: parts, then (source, offset) x 3

cdef uint64_t BOS_VALUE = 0x2545F4914F6CDD1DULL
cdef uint64_t EOS_VALUE = 0x9E6C63D0676A9A99ULL
cdef uint64_t CLASS_SALT = 0xD1B54A32D192ED03ULL
cdef uint64_t TEMPLATE_SALT = 0x8CB92BA72F3D8DD7ULL
cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL


cdef struct Batch:
    const uint64_t* atoms_known
    const uint64_t* atoms_extra
    Py_ssize_t n_known
    int A
    const int32_t* tok_type
    int32_t* values
    int K
    int col
    const int32_t* templates
    int F
    const int32_t* cand_ptr
    const int32_t* cand_ids
    const uint8_t* compat
    int cond
    int C
    int shift


cdef inline uint64_t atom_of(const Batch* b, Py_ssize_t tok, int a) noexcept nogil:
    cdef int32_t t = b.tok_type[tok]
    if t < b.n_known:
        return b.atoms_known[t * b.A + a]
    return b.atoms_extra[(t - b.n_known) * b.A + a]


cdef void feature_keys(const Batch* b, Py_ssize_t start, Py_ssize_t end, Py_ssize_t i,
                       uint64_t* keys) noexcept nogil:
    """keys[f]: the hashed key of template f at word i of the sentence [start, end)."""
    cdef int f, p, src, parts
    cdef Py_ssize_t j
    cdef uint64_t h, v
    cdef const int32_t* row
    for f in range(b.F):
        row = b.templates + f * 7
        parts = row[0]
        h = <uint64_t>(f + 1) * TEMPLATE_SALT
        for p in range(parts):
            src = row[1 + 2 * p]
            j = i + row[2 + 2 * p]
            if j < start:
                v = BOS_VALUE + <uint64_t>(start - j)
            elif j >= end:
                v = EOS_VALUE + <uint64_t>(j - end)
            elif src < b.A:
                v = atom_of(b, j, src)
            else:
                v = <uint64_t>(b.values[j * b.K + (src - b.A)] + 2)
            h = mix(h, v)
        keys[f] = fmix(h)


cdef int candidates(const Batch* b, Py_ssize_t i, int32_t* out) noexcept nogil:
    """The classes allowed for word i into ``out`` (at most C); returns how many (>= 1)."""
    cdef int32_t t = b.tok_type[i], c, cv = -1
    cdef int32_t lo = b.cand_ptr[t], hi = b.cand_ptr[t + 1], k
    cdef int n = 0
    if b.cond >= 0:
        cv = b.values[i * b.K + b.cond]
    if hi > lo:
        for k in range(lo, hi):
            c = b.cand_ids[k]
            if cv < 0 or b.compat[cv * b.C + c]:
                out[n] = c
                n += 1
        if n == 0:
            for k in range(lo, hi):
                out[n] = b.cand_ids[k]
                n += 1
        return n
    for c in range(b.C):
        if cv < 0 or b.compat[cv * b.C + c]:
            out[n] = c
            n += 1
    if n == 0:
        for c in range(b.C):
            out[c] = c
        n = b.C
    return n


cdef inline Py_ssize_t weight_index(uint64_t key, int c, int shift) noexcept nogil:
    return <Py_ssize_t>bucket(key, <uint64_t>(c + 1) * CLASS_SALT, shift)


cdef inline double class_score(const floating* W, const uint64_t* keys, int F, int c,
                               int shift) noexcept nogil:
    cdef double s = 0.0
    cdef int f
    for f in range(F):
        s += W[weight_index(keys[f], c, shift)]
    return s


cdef int32_t best_class(const Batch* b, const floating* W, const uint64_t* keys,
                        const int32_t* cands, int n) noexcept nogil:
    """The candidate of highest score (the first listed among equals)."""
    cdef int k
    cdef int32_t best = cands[0]
    cdef double s, best_score
    if n == 1:
        return best
    best_score = class_score(W, keys, b.F, best, b.shift)
    for k in range(1, n):
        s = class_score(W, keys, b.F, cands[k], b.shift)
        if s > best_score:
            best_score = s
            best = cands[k]
    return best


cdef void update(double* w, double* acc, double counter, const uint64_t* keys, int F, int c,
                 double delta, int shift) noexcept nogil:
    """Averaged perceptron step: w += delta, acc += counter * delta on class c's features."""
    cdef int f
    cdef Py_ssize_t j
    for f in range(F):
        j = weight_index(keys[f], c, shift)
        w[j] += delta
        acc[j] += counter * delta


cdef Batch make_batch(const uint64_t[:, ::1] atoms_known, const uint64_t[:, ::1] atoms_extra,
                      const int32_t[::1] tok_type, int32_t[:, ::1] values, int col,
                      const int32_t[:, ::1] templates, const int32_t[::1] cand_ptr,
                      const int32_t[::1] cand_ids, const uint8_t[:, ::1] compat, int cond,
                      int n_classes, int bits) except *:
    cdef Batch b
    cdef Py_ssize_t T = tok_type.shape[0], n_types = cand_ptr.shape[0] - 1, i
    if atoms_known.shape[1] != atoms_extra.shape[1] and atoms_extra.shape[0] > 0:
        raise ValueError("atoms_known and atoms_extra must have the same number of atoms")
    if values.shape[0] != T or not 0 <= col < values.shape[1]:
        raise ValueError(f"values must be [{T}, K] with column {col} in it")
    if templates.shape[1] != 7 or templates.shape[0] > 512:
        raise ValueError("templates must be [F <= 512, 7]")
    if n_types != atoms_known.shape[0] + atoms_extra.shape[0]:
        raise ValueError("cand_ptr must have one entry per type, plus one")
    if not 1 <= n_classes <= 65536 or not 8 <= bits <= 32:
        raise ValueError("n_classes in 1..65536, bits in 8..32")
    if cond >= 0 and (cond >= values.shape[1] or cond == col or compat.shape[1] != n_classes):
        raise ValueError("cond must name another column, with compat [R, n_classes]")
    for i in range(T):
        if not 0 <= tok_type[i] < n_types:
            raise ValueError(f"tok_type[{i}] = {tok_type[i]} outside 0..{n_types - 1}")
        if cond >= 0 and values[i, cond] >= compat.shape[0]:
            raise ValueError(f"column {cond} value {values[i, cond]} outside compat's rows")
    b.atoms_known = &atoms_known[0, 0] if atoms_known.shape[0] > 0 else NULL
    b.atoms_extra = &atoms_extra[0, 0] if atoms_extra.shape[0] > 0 else NULL
    b.n_known = atoms_known.shape[0]
    b.A = atoms_known.shape[1]
    b.tok_type = &tok_type[0] if T > 0 else NULL
    b.values = &values[0, 0] if T > 0 else NULL
    b.K = values.shape[1]
    b.col = col
    b.templates = &templates[0, 0] if templates.shape[0] > 0 else NULL
    b.F = templates.shape[0]
    b.cand_ptr = &cand_ptr[0]
    b.cand_ids = &cand_ids[0] if cand_ids.shape[0] > 0 else NULL
    b.compat = &compat[0, 0] if cond >= 0 and compat.shape[0] > 0 else NULL
    b.cond = cond if cond >= 0 and compat.shape[0] > 0 else -1
    b.C = n_classes
    b.shift = 64 - bits
    for i in range(cand_ids.shape[0]):
        if not 0 <= cand_ids[i] < n_classes:
            raise ValueError(f"cand_ids[{i}] = {cand_ids[i]} outside 0..{n_classes - 1}")
    check_templates(templates, b.A, values.shape[1], col)
    return b


cdef int check_templates(const int32_t[:, ::1] templates, int A, int K, int col) except -1:
    cdef Py_ssize_t f
    cdef int p, src
    for f in range(templates.shape[0]):
        if not 1 <= templates[f, 0] <= 3:
            raise ValueError(f"template {f}: 1 to 3 parts")
        for p in range(templates[f, 0]):
            src = templates[f, 1 + 2 * p]
            if not 0 <= src < A + K:
                raise ValueError(f"template {f}: source {src} outside 0..{A + K - 1}")
            if src == A + col and templates[f, 2 + 2 * p] >= 0:
                raise ValueError(f"template {f}: the predicted column is read to the left only")
    return 0


def tag_column(const uint64_t[:, ::1] atoms_known, const uint64_t[:, ::1] atoms_extra,
               const int32_t[::1] tok_type, const int32_t[::1] sent_ptr,
               int32_t[:, ::1] values, int col, const int32_t[:, ::1] templates,
               const int32_t[::1] cand_ptr, const int32_t[::1] cand_ids,
               const uint8_t[:, ::1] compat, int cond, int n_classes,
               const float[::1] weights, int bits) -> None:
    """Predict column ``col`` of every word of the batch whose ``values[:, col]`` is -1 (see
    the module docstring); ``weights``: float32 [2**bits]."""
    cdef Batch b = make_batch(atoms_known, atoms_extra, tok_type, values, col, templates,
                              cand_ptr, cand_ids, compat, cond, n_classes, bits)
    cdef Py_ssize_t s, i, S = sent_ptr.shape[0] - 1
    if weights.shape[0] != (<Py_ssize_t>1 << bits):
        raise ValueError(f"weights must have 2**{bits} entries")
    check_sentences(sent_ptr, tok_type.shape[0])
    cdef uint64_t* keys = <uint64_t*>malloc(max(b.F, 1) * sizeof(uint64_t))
    cdef int32_t* cands = <int32_t*>malloc(n_classes * sizeof(int32_t))
    cdef int n
    if keys == NULL or cands == NULL:
        free(keys)
        free(cands)
        raise MemoryError("tagger buffers")
    with nogil:
        for s in range(S):
            for i in range(sent_ptr[s], sent_ptr[s + 1]):
                if b.values[i * b.K + col] >= 0:
                    continue
                n = candidates(&b, i, cands)
                if n > 1:
                    feature_keys(&b, sent_ptr[s], sent_ptr[s + 1], i, keys)
                b.values[i * b.K + col] = best_class(&b, &weights[0], keys, cands, n)
    free(keys)
    free(cands)


cdef int check_sentences(const int32_t[::1] sent_ptr, Py_ssize_t T) except -1:
    cdef Py_ssize_t s
    if sent_ptr.shape[0] < 1 or sent_ptr[0] != 0 or sent_ptr[sent_ptr.shape[0] - 1] != T:
        raise ValueError(f"sent_ptr must run from 0 to {T}")
    for s in range(sent_ptr.shape[0] - 1):
        if sent_ptr[s + 1] < sent_ptr[s]:
            raise ValueError("sent_ptr must not decrease")
    return 0


def train_column_epoch(const uint64_t[:, ::1] atoms_known, const uint64_t[:, ::1] atoms_extra,
                       const int32_t[::1] tok_type, const int32_t[::1] sent_ptr,
                       int32_t[:, ::1] values, int col, const int32_t[:, ::1] templates,
                       const int32_t[::1] cand_ptr, const int32_t[::1] cand_ids,
                       const uint8_t[:, ::1] compat, int cond, int n_classes,
                       const int32_t[::1] gold, const int32_t[::1] order, double[::1] w,
                       double[::1] acc, double[::1] counter, int bits) -> int:
    """One averaged-perceptron epoch over the sentences in ``order``: each word of column
    ``col`` predicted greedily (as :func:`tag_column`, with the weights ``w``, but whatever
    ``values[:, col]`` holds), and where the
    prediction is not ``gold`` (-1: no gold class, not learned from) and gold is among the
    word's candidates, its features move by +1 toward gold and -1 away from the prediction.
    ``acc`` accumulates counter * change and ``counter[0]`` counts the words seen, so that the
    averaged weights are ``w - acc / counter[0]`` (Daume's trick). Returns the number of words
    predicted right."""
    cdef Batch b = make_batch(atoms_known, atoms_extra, tok_type, values, col, templates,
                              cand_ptr, cand_ids, compat, cond, n_classes, bits)
    cdef Py_ssize_t k, s, i, S = sent_ptr.shape[0] - 1
    cdef Py_ssize_t size = <Py_ssize_t>1 << bits
    cdef int32_t pred, g
    cdef int n, j, right = 0
    cdef bint reachable
    if w.shape[0] != size or acc.shape[0] != size or counter.shape[0] != 1:
        raise ValueError(f"w and acc must have 2**{bits} entries, counter one")
    if gold.shape[0] != tok_type.shape[0]:
        raise ValueError("gold must have one entry per word")
    check_sentences(sent_ptr, tok_type.shape[0])
    for k in range(order.shape[0]):
        if not 0 <= order[k] < S:
            raise ValueError(f"order[{k}] = {order[k]} is not a sentence")
    cdef uint64_t* keys = <uint64_t*>malloc(max(b.F, 1) * sizeof(uint64_t))
    cdef int32_t* cands = <int32_t*>malloc(n_classes * sizeof(int32_t))
    if keys == NULL or cands == NULL:
        free(keys)
        free(cands)
        raise MemoryError("tagger buffers")
    with nogil:
        for k in range(order.shape[0]):
            s = order[k]
            for i in range(sent_ptr[s], sent_ptr[s + 1]):
                counter[0] += 1.0
                g = gold[i]
                n = candidates(&b, i, cands)
                if n > 1:
                    feature_keys(&b, sent_ptr[s], sent_ptr[s + 1], i, keys)
                pred = best_class(&b, &w[0], keys, cands, n)
                b.values[i * b.K + col] = pred
                if pred == g:
                    right += 1
                    continue
                if g < 0 or n == 1:
                    continue
                reachable = False
                for j in range(n):
                    if cands[j] == g:
                        reachable = True
                if reachable:
                    update(&w[0], &acc[0], counter[0], keys, b.F, g, 1.0, b.shift)
                    update(&w[0], &acc[0], counter[0], keys, b.F, pred, -1.0, b.shift)
    free(keys)
    free(cands)
    return right


@cython.boundscheck(False)
@cython.wraparound(False)
def hash_strings(list strings) -> object:
    """Stable 64-bit hashes of strings (FNV-1a over UTF-8, then MurmurHash3's finalizer): the
    same on every run and machine, unlike Python's ``hash``. Returns a uint64 numpy array."""
    import numpy as np

    cdef Py_ssize_t i, j, n = len(strings)
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef bytes data
    cdef const unsigned char* p
    cdef uint64_t h
    for i in range(n):
        data = (<str>strings[i]).encode("utf-8", "surrogatepass")
        p = data
        h = FNV_OFFSET
        for j in range(len(data)):
            h = (h ^ p[j]) * FNV_PRIME
        o[i] = fmix(h)
    return out
