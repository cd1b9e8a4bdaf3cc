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
  forms of the batch). ``cand_ptr`` [V + 1] / ``cand_ids`` (CSR) list, for each known type, the
  classes allowed for the word (none listed: every class), and ``extra_ptr`` / ``extra_ids``
  the same for the rows of ``atoms_extra``: the known lists are the model's, passed as they are.
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
- Weights are exact, one per (feature key, class) pair that training updated (no hashing of
  pairs into a fixed vector, so no collisions). Training keeps them in a :class:`ColumnWeights`
  (open addressing on the pair); :meth:`ColumnWeights.averaged` compiles the averaged weights
  into the *feature table* that tagging reads: ``slots`` uint64 [S, 2] (S a power of two) holds
  each feature key (0: an empty slot; feature keys are never 0) at the first free slot from
  ``key >> (64 - log2 S)``, with ``start << 24 | count`` of its entries; ``entry_class`` int32
  [E] and ``entry_weight`` float32 [E] list the key's classes and weights, so that one probe
  gives a word's feature its weights for every class.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

cimport cython
from cpython.unicode cimport Py_UNICODE_ISDIGIT, Py_UNICODE_ISLOWER, Py_UNICODE_ISUPPER

from dparse._ext.hashing cimport bucket, fmix, lowest_bit, mix


cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil

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
    Py_ssize_t T
    int32_t* values
    int K
    int col
    const int32_t* templates
    int F
    const int32_t* cand_ptr
    const int32_t* cand_ids
    const int32_t* extra_ptr
    const int32_t* extra_ids
    const uint8_t* compat
    int cond
    int C


cdef inline uint64_t atom_of(const Batch* b, Py_ssize_t tok, int a) noexcept nogil:
    cdef int32_t t = b.tok_type[tok]
    if t < b.n_known:
        return b.atoms_known[t * b.A + a]
    return b.atoms_extra[(t - b.n_known) * b.A + a]


cdef inline uint64_t template_key(const Batch* b, Py_ssize_t start, Py_ssize_t end,
                                  Py_ssize_t i, int f) noexcept nogil:
    """The hashed key of template f at word i of the sentence [start, end) (never 0)."""
    cdef int p, src
    cdef Py_ssize_t j
    cdef uint64_t h = <uint64_t>(f + 1) * TEMPLATE_SALT, v
    cdef const int32_t* row = b.templates + f * 7
    for p in range(row[0]):
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
    h = fmix(h)
    return h if h != 0 else 1  # 0 marks an empty slot of the tables


cdef void feature_keys(const Batch* b, Py_ssize_t start, Py_ssize_t end, Py_ssize_t i,
                       uint64_t* keys) noexcept nogil:
    """keys[f]: the key of template f at word i of the sentence [start, end)."""
    cdef int f
    for f in range(b.F):
        keys[f] = template_key(b, start, end, i, f)


cdef int candidates(const Batch* b, Py_ssize_t i, int32_t* out) noexcept nogil:
    """The classes allowed for word i into ``out`` (at most C); returns how many (>= 1)."""
    cdef int32_t t = b.tok_type[i], c, cv = -1, lo, hi, k
    cdef const int32_t* ids = b.cand_ids
    cdef int n = 0
    if t < b.n_known:
        lo, hi = b.cand_ptr[t], b.cand_ptr[t + 1]
    else:
        lo, hi, ids = b.extra_ptr[t - b.n_known], b.extra_ptr[t - b.n_known + 1], b.extra_ids
    if b.cond >= 0:
        cv = b.values[i * b.K + b.cond]
    if hi > lo:
        for k in range(lo, hi):
            c = ids[k]
            if cv < 0 or b.compat[cv * b.C + c]:
                out[n] = c
                n += 1
        if n == 0:
            for k in range(lo, hi):
                out[n] = ids[k]
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


cdef struct Pair:
    uint64_t key      # the feature key (0: an empty slot)
    int32_t cls       # the class
    float w           # the perceptron's weight (a whole number: exact in float32 to 2**24)


cdef class ColumnWeights:
    """A column's weights in training: one :c:type:`Pair` per (feature key, class) updated, in
    an open-addressing table that doubles when half full, and beside it (``acc``, slot by
    slot) the sums of counter * change that averaging needs. :meth:`averaged` compiles the
    averaged weights into a feature table (see the module docstring)."""

    cdef Pair* table
    cdef double* acc
    cdef Py_ssize_t size   # slots, a power of two
    cdef Py_ssize_t count  # pairs stored
    cdef int shift         # 64 - log2(size)

    def __cinit__(self) -> None:
        self.size = 1 << 16
        self.shift = 48
        self.count = 0
        self.table = <Pair*>calloc(self.size, sizeof(Pair))
        self.acc = <double*>calloc(self.size, sizeof(double))
        if self.table == NULL or self.acc == NULL:
            raise MemoryError("tagger weights")

    def __dealloc__(self) -> None:
        free(self.table)
        free(self.acc)

    def __len__(self) -> int:
        return self.count

    cdef inline Py_ssize_t slot(self, uint64_t key, int32_t c) noexcept nogil:
        return <Py_ssize_t>bucket(key, <uint64_t>(c + 1) * CLASS_SALT, self.shift)

    cdef Py_ssize_t insert(self, uint64_t key, int32_t c) noexcept nogil:
        """The slot of the pair (key, c), added with weight 0 if new; -1 if memory ran out."""
        cdef Py_ssize_t s, mask
        if 2 * (self.count + 1) > self.size and self.grow() < 0:
            return -1
        s = self.slot(key, c)
        mask = self.size - 1
        while True:
            if self.table[s].key == key and self.table[s].cls == c:
                return s
            if self.table[s].key == 0:
                self.table[s].key, self.table[s].cls, self.table[s].w = key, c, 0.0
                self.acc[s] = 0.0
                self.count += 1
                return s
            s = (s + 1) & mask

    cdef int grow(self) noexcept nogil:
        """Double the table (0; -1 if memory ran out, the table unchanged)."""
        cdef Pair* old = self.table
        cdef double* old_acc = self.acc
        cdef Py_ssize_t old_size = self.size, i, s, mask
        cdef Pair* table = <Pair*>calloc(2 * old_size, sizeof(Pair))
        cdef double* acc = <double*>calloc(2 * old_size, sizeof(double))
        if table == NULL or acc == NULL:
            free(table)
            free(acc)
            return -1
        self.table, self.acc = table, acc
        self.size, self.shift = 2 * old_size, self.shift - 1
        mask = self.size - 1
        for i in range(old_size):
            if old[i].key != 0:
                s = self.slot(old[i].key, old[i].cls)
                while table[s].key != 0:
                    s = (s + 1) & mask
                table[s] = old[i]
                acc[s] = old_acc[i]
        free(old)
        free(old_acc)
        return 0

    cdef double score(self, const uint64_t* keys, int F, int32_t c,
                      uint64_t* slots) noexcept nogil:
        """The weight of class c: the sum of its pairs' weights over the F keys, in order
        (``slots`` [F]: scratch; the keys' first slots are prefetched before any is read)."""
        cdef double s = 0.0
        cdef int f
        cdef Py_ssize_t i, mask = self.size - 1
        for f in range(F):
            slots[f] = <uint64_t>self.slot(keys[f], c)
            __builtin_prefetch(&self.table[slots[f]])
        for f in range(F):
            i = <Py_ssize_t>slots[f]
            while self.table[i].key != 0:
                if self.table[i].key == keys[f] and self.table[i].cls == c:
                    s += self.table[i].w
                    break
                i = (i + 1) & mask
        return s

    cdef int update(self, const uint64_t* keys, int F, int32_t c, double delta,
                    double counter) noexcept nogil:
        """Averaged perceptron step on class c's features: w += delta, acc += counter * delta
        (0; -1 if memory ran out)."""
        cdef int f
        cdef Py_ssize_t i
        for f in range(F):
            i = self.insert(keys[f], c)
            if i < 0:
                return -1
            self.table[i].w += <float>delta
            self.acc[i] += counter * delta
        return 0

    def averaged(self, double counter) -> tuple:
        """The averaged weights ``w - acc / counter`` (float32) as a feature table
        ``(slots, entry_class, entry_weight)`` (see the module docstring); pairs whose
        average is 0 are left out."""
        import numpy as np

        cdef Py_ssize_t i, n = 0
        keys = np.empty(self.count, dtype=np.uint64)
        classes = np.empty(self.count, dtype=np.int32)
        weights = np.empty(self.count, dtype=np.float32)
        cdef uint64_t[::1] k = keys
        cdef int32_t[::1] cl = classes
        cdef float[::1] wt = weights
        cdef float avg
        for i in range(self.size):
            if self.table[i].key != 0:
                avg = <float>(self.table[i].w - self.acc[i] / counter)
                if avg != 0.0:
                    k[n], cl[n], wt[n] = self.table[i].key, self.table[i].cls, avg
                    n += 1
        order = np.lexsort((classes[:n], keys[:n]))
        keys, classes, weights = keys[:n][order], classes[:n][order], weights[:n][order]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:n - 1]]) if n else \
            np.zeros(0, dtype=np.int64)
        counts = np.diff(np.r_[first, n])
        return (feature_slots(keys[first], first.astype(np.int64), counts.astype(np.int64)),
                classes, weights)


def feature_slots(const uint64_t[::1] keys, const int64_t[::1] starts,
                  const int64_t[::1] counts) -> object:
    """The ``slots`` [S, 2] of a feature table (see the module docstring) for distinct
    nonzero ``keys`` whose entries are ``starts[i] .. starts[i] + counts[i] - 1``; S is the
    smallest power of two >= 2 * len(keys) (at least 2)."""
    import numpy as np

    cdef Py_ssize_t n = keys.shape[0], size = 2, i, s
    cdef int bits = 1
    while size < 2 * n:
        size *= 2
        bits += 1
    out = np.zeros((size, 2), dtype=np.uint64)
    cdef uint64_t[:, ::1] slots = out
    for i in range(n):
        if keys[i] == 0 or counts[i] >= (1 << 24) or starts[i] >= (<int64_t>1 << 40):
            raise ValueError(f"feature {i}: key 0, or too many entries")
        s = <Py_ssize_t>(keys[i] >> (64 - bits))
        while slots[s, 0] != 0:
            if slots[s, 0] == keys[i]:
                raise ValueError(f"feature key {keys[i]} listed twice")
            s = (s + 1) & (size - 1)
        slots[s, 0] = keys[i]
        slots[s, 1] = (<uint64_t>starts[i] << 24) | <uint64_t>counts[i]
    return out


cdef int TYPE_TEMPLATE = 1 << 30  # type_offset of a template that reads more than one word
cdef uint64_t NOT_PROBED = 1 << 24  # a probe cache entry not yet filled (start 1, count 0)


cdef class Buffers:
    """Scratch arrays of one call: feature keys, their slots and probe cache entries [F],
    candidates and scores [classes]; for tagging (:meth:`cache_types`) the probe cache."""

    cdef uint64_t* keys
    cdef uint64_t* found
    cdef uint64_t** fill
    cdef int32_t* cands
    cdef double* scores
    cdef int* type_offset     # [F] the offset of the one word a template reads, or TYPE_TEMPLATE
    cdef int32_t* local       # [types] a type's index in the probe cache (-1: not in the batch)
    cdef Py_ssize_t n_local   # types in the batch
    cdef uint64_t* probes     # [F, n_local] a template's probe result (found) for a type

    def __cinit__(self, int F, int n_classes) -> None:
        self.keys = <uint64_t*>malloc(max(F, 1) * sizeof(uint64_t))
        self.found = <uint64_t*>malloc(max(F, 1) * sizeof(uint64_t))
        self.fill = <uint64_t**>malloc(max(F, 1) * sizeof(uint64_t*))
        self.type_offset = <int*>malloc(max(F, 1) * sizeof(int))
        self.cands = <int32_t*>malloc(n_classes * sizeof(int32_t))
        self.scores = <double*>calloc(n_classes, sizeof(double))
        if (self.keys == NULL or self.found == NULL or self.fill == NULL or self.cands == NULL
                or self.scores == NULL or self.type_offset == NULL):
            raise MemoryError("tagger buffers")

    def __dealloc__(self) -> None:
        free(self.keys)
        free(self.found)
        free(self.fill)
        free(self.type_offset)
        free(self.cands)
        free(self.scores)
        free(self.local)
        free(self.probes)

    cdef int cache_types(self, const Batch* b, Py_ssize_t n_types) except -1:
        """Set up the probe cache: which templates read atoms of one word only (at what
        offset), and an index for each type of the batch's words."""
        cdef int f, p
        cdef const int32_t* row
        cdef Py_ssize_t i, k
        for f in range(b.F):
            row = b.templates + f * 7
            self.type_offset[f] = row[2]
            for p in range(row[0]):
                if row[1 + 2 * p] >= b.A or row[2 + 2 * p] != row[2]:
                    self.type_offset[f] = TYPE_TEMPLATE
        self.local = <int32_t*>malloc(max(n_types, 1) * sizeof(int32_t))
        if self.local == NULL:
            raise MemoryError("tagger buffers")
        for i in range(n_types):
            self.local[i] = -1
        for i in range(b.T):
            if self.local[b.tok_type[i]] < 0:
                self.local[b.tok_type[i]] = self.n_local
                self.n_local += 1
        self.probes = <uint64_t*>malloc(max(b.F * self.n_local, 1) * sizeof(uint64_t))
        if self.probes == NULL:
            raise MemoryError("tagger buffers")
        for k in range(b.F * self.n_local):
            self.probes[k] = NOT_PROBED
        return 0


cdef struct FeatureTable:
    const uint64_t* slots
    uint64_t mask
    int shift
    const int32_t* entry_class
    const float* entry_weight


cdef FeatureTable make_table(const uint64_t[:, ::1] slots, const int32_t[::1] entry_class,
                             const float[::1] entry_weight, int n_classes) except *:
    cdef FeatureTable t
    cdef Py_ssize_t S = slots.shape[0], i, E = entry_class.shape[0]
    cdef int bits = 0
    cdef uint64_t end, last_end = 0
    cdef int32_t lo = 0, hi = 0
    if S < 2 or S & (S - 1) or slots.shape[1] != 2 or entry_weight.shape[0] != E:
        raise ValueError("slots must be [S, 2], S a power of two >= 2, with one weight per "
                         "entry class")
    while (<Py_ssize_t>1 << bits) < S:
        bits += 1
    # the checks find the extremes without a branch per slot or entry, then, only when one is
    # out of bounds, the first culprit
    for i in range(S):
        end = (slots[i, 1] >> 24) + (slots[i, 1] & 0xFFFFFF)
        end &= -(<uint64_t>(slots[i, 0] != 0))  # an empty slot's entries are never read
        last_end = end if end > last_end else last_end
    if last_end > <uint64_t>E:
        for i in range(S):
            if slots[i, 0] != 0 and (slots[i, 1] >> 24) + (slots[i, 1] & 0xFFFFFF) > <uint64_t>E:
                raise ValueError(f"slot {i}: entries outside the {E} given")
    for i in range(E):
        lo = entry_class[i] if entry_class[i] < lo else lo
        hi = entry_class[i] if entry_class[i] > hi else hi
    if lo < 0 or hi >= n_classes:
        for i in range(E):
            if not 0 <= entry_class[i] < n_classes:
                raise ValueError(f"entry_class[{i}] = {entry_class[i]} outside "
                                 f"0..{n_classes - 1}")
    t.slots = &slots[0, 0]
    t.mask = <uint64_t>(S - 1)
    t.shift = 64 - bits
    t.entry_class = &entry_class[0] if E > 0 else NULL
    t.entry_weight = &entry_weight[0] if E > 0 else NULL
    return t


cdef class CheckedTable:
    """A feature table ``(slots, entry_class, entry_weight)`` of a column of ``n_classes``
    classes (module doc), checked once when made: what :func:`tag_column` reads (checking
    the whole table at every call would cost more than tagging one sentence)."""

    cdef FeatureTable t
    cdef object arrays  # the arrays t points into, kept alive
    cdef readonly int n_classes

    def __cinit__(self, const uint64_t[:, ::1] slots, const int32_t[::1] entry_class,
                  const float[::1] entry_weight, int n_classes) -> None:
        self.t = make_table(slots, entry_class, entry_weight, n_classes)
        self.arrays = (slots, entry_class, entry_weight)
        self.n_classes = n_classes


cdef void add_features(const FeatureTable* t, const Batch* b, Py_ssize_t start, Py_ssize_t end,
                       Py_ssize_t i, Buffers buf) noexcept nogil:
    """buf.scores[c] += the weight of (key, c) for every feature of word i of the sentence
    [start, end) and every class c its key has a weight for, feature by feature. A template
    that reads atoms of one word only (``buf.type_offset``) takes its probe result from the
    probe cache of that word's type once an earlier word filled it. So that the memory reads
    of the features overlap, the keys' first slots are prefetched, then probed, then their
    entries prefetched, then added."""
    cdef int f, o
    cdef Py_ssize_t j, stop
    cdef uint64_t s, packed, key
    cdef uint64_t* found = buf.found
    cdef uint64_t* keys = buf.keys
    for f in range(b.F):
        buf.fill[f] = NULL
        o = buf.type_offset[f]
        j = i + o
        if o != TYPE_TEMPLATE and start <= j < end:
            buf.fill[f] = &buf.probes[f * buf.n_local + buf.local[b.tok_type[j]]]
            if buf.fill[f][0] != NOT_PROBED:
                found[f] = buf.fill[f][0]
                keys[f] = 0  # no probe
                continue
        keys[f] = template_key(b, start, end, i, f)
        found[f] = keys[f] >> t.shift
        __builtin_prefetch(&t.slots[2 * found[f]])
    for f in range(b.F):
        key = keys[f]
        if key == 0:
            continue
        s = found[f]
        found[f] = 0
        while t.slots[2 * s] != 0:
            if t.slots[2 * s] == key:
                found[f] = t.slots[2 * s + 1]
                break
            s = (s + 1) & t.mask
        if buf.fill[f] != NULL:
            buf.fill[f][0] = found[f]
    for f in range(b.F):
        if found[f]:
            __builtin_prefetch(&t.entry_class[found[f] >> 24])
            __builtin_prefetch(&t.entry_weight[found[f] >> 24])
    for f in range(b.F):
        packed = found[f]
        stop = <Py_ssize_t>(packed >> 24) + <Py_ssize_t>(packed & 0xFFFFFF)
        for j in range(<Py_ssize_t>(packed >> 24), stop):
            buf.scores[t.entry_class[j]] += t.entry_weight[j]


cdef inline int32_t best_of(const double* scores, const int32_t* cands, int n) noexcept nogil:
    """The candidate of highest score (the first listed among equals)."""
    cdef int k
    cdef int32_t best = cands[0]
    for k in range(1, n):
        if scores[cands[k]] > scores[best]:
            best = cands[k]
    return best


cdef Batch make_batch(const uint64_t[:, ::1] atoms_known, const uint64_t[:, ::1] atoms_extra,
                      const int32_t[::1] tok_type, int32_t[:, ::1] values, int col,
                      const int32_t[:, ::1] templates, const int32_t[::1] cand_ptr,
                      const int32_t[::1] cand_ids, const int32_t[::1] extra_ptr,
                      const int32_t[::1] extra_ids, const uint8_t[:, ::1] compat, int cond,
                      int n_classes) except *:
    cdef Batch b
    cdef Py_ssize_t T = tok_type.shape[0], i
    cdef Py_ssize_t n_types = atoms_known.shape[0] + atoms_extra.shape[0]
    if atoms_known.shape[1] != atoms_extra.shape[1] and atoms_extra.shape[0] > 0:
        raise ValueError("atoms_known and atoms_extra must have the same number of atoms")
    if values.shape[0] != T or not 0 <= col < values.shape[1]:
        raise ValueError(f"values must be [{T}, K] with column {col} in it")
    if templates.shape[1] != 7 or templates.shape[0] > 512:
        raise ValueError("templates must be [F <= 512, 7]")
    if (cand_ptr.shape[0] != atoms_known.shape[0] + 1
            or extra_ptr.shape[0] != atoms_extra.shape[0] + 1):
        raise ValueError("cand_ptr and extra_ptr must have one entry per known and extra type, "
                         "plus one")
    if not 1 <= n_classes <= 65536:
        raise ValueError("n_classes in 1..65536")
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
    b.T = T
    b.values = &values[0, 0] if T > 0 else NULL
    b.K = values.shape[1]
    b.col = col
    b.templates = &templates[0, 0] if templates.shape[0] > 0 else NULL
    b.F = templates.shape[0]
    b.cand_ptr = &cand_ptr[0]
    b.cand_ids = &cand_ids[0] if cand_ids.shape[0] > 0 else NULL
    b.extra_ptr = &extra_ptr[0]
    b.extra_ids = &extra_ids[0] if extra_ids.shape[0] > 0 else NULL
    b.compat = &compat[0, 0] if cond >= 0 and compat.shape[0] > 0 else NULL
    b.cond = cond if cond >= 0 and compat.shape[0] > 0 else -1
    b.C = n_classes
    check_candidates(tok_type, cand_ptr, cand_ids, extra_ptr, extra_ids, n_classes)
    check_templates(templates, b.A, values.shape[1], col)
    return b


cdef int check_candidates(const int32_t[::1] tok_type, const int32_t[::1] cand_ptr,
                          const int32_t[::1] cand_ids, const int32_t[::1] extra_ptr,
                          const int32_t[::1] extra_ids, int n_classes) except -1:
    """The candidate lists of the types the words take lie in their ids and name classes
    (each type checked once: not the lists of every known type, which for lemma rules run to
    millions, at every call)."""
    cdef Py_ssize_t i, k, V = cand_ptr.shape[0] - 1, n_ids
    cdef int32_t t, u
    cdef const int32_t* ptr
    cdef const int32_t* ids
    cdef const int32_t* known = &cand_ids[0] if cand_ids.shape[0] > 0 else NULL
    cdef const int32_t* extra = &extra_ids[0] if extra_ids.shape[0] > 0 else NULL
    cdef uint8_t* seen = <uint8_t*>calloc(max(V + extra_ptr.shape[0], 1), 1)
    if seen == NULL:
        raise MemoryError("tagger buffers")
    try:
        for i in range(tok_type.shape[0]):
            t = tok_type[i]
            if seen[t]:
                continue
            seen[t] = 1
            if t < V:
                ptr, ids, u, n_ids = &cand_ptr[0], known, t, cand_ids.shape[0]
            else:
                ptr, ids, u, n_ids = &extra_ptr[0], extra, t - V, extra_ids.shape[0]
            if not 0 <= ptr[u] <= ptr[u + 1] <= n_ids:
                raise ValueError(f"type {t}'s candidate list outside its {n_ids} ids")
            for k in range(ptr[u], ptr[u + 1]):
                if not 0 <= ids[k] < n_classes:
                    raise ValueError(f"type {t}: candidate {ids[k]} outside 0..{n_classes - 1}")
    finally:
        free(seen)
    return 0


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
               const int32_t[::1] extra_ptr, const int32_t[::1] extra_ids,
               const uint8_t[:, ::1] compat, int cond, int n_classes,
               CheckedTable table not None) -> None:
    """Predict column ``col`` of every word of the batch whose ``values[:, col]`` is -1, with
    the feature ``table`` (see the module docstring)."""
    cdef Batch b = make_batch(atoms_known, atoms_extra, tok_type, values, col, templates,
                              cand_ptr, cand_ids, extra_ptr, extra_ids, compat, cond,
                              n_classes)
    if table.n_classes != n_classes:
        raise ValueError(f"a table of {table.n_classes} classes for {n_classes}")
    cdef FeatureTable t = table.t
    cdef Py_ssize_t s, i, S = sent_ptr.shape[0] - 1
    cdef int n, k
    check_sentences(sent_ptr, tok_type.shape[0])
    cdef Buffers buf = Buffers(b.F, n_classes)
    buf.cache_types(&b, atoms_known.shape[0] + atoms_extra.shape[0])
    with nogil:
        for s in range(S):
            for i in range(sent_ptr[s], sent_ptr[s + 1]):
                if b.values[i * b.K + col] >= 0:
                    continue
                n = candidates(&b, i, buf.cands)
                if n > 1:
                    for k in range(n):
                        buf.scores[buf.cands[k]] = 0.0
                    add_features(&t, &b, sent_ptr[s], sent_ptr[s + 1], i, buf)
                b.values[i * b.K + col] = best_of(buf.scores, buf.cands, n)


def word_features(const uint64_t[:, ::1] atoms_known, const uint64_t[:, ::1] atoms_extra,
                  const int32_t[::1] tok_type, const int32_t[::1] sent_ptr,
                  int32_t[:, ::1] values, int col, const int32_t[:, ::1] templates) -> object:
    """The feature keys that column ``col`` reads at every word, as the values stand: uint64
    [T, F] (what :func:`tag_column` reads at a word once the words to its left have their
    classes; for tests and inspection)."""
    import numpy as np

    none = np.zeros(0, dtype=np.int32)
    cdef Batch b = make_batch(atoms_known, atoms_extra, tok_type, values, col, templates,
                              np.zeros(atoms_known.shape[0] + 1, dtype=np.int32), none,
                              np.zeros(atoms_extra.shape[0] + 1, dtype=np.int32), none,
                              np.zeros((0, 1), dtype=np.uint8), -1, 1)
    check_sentences(sent_ptr, tok_type.shape[0])
    out = np.zeros((tok_type.shape[0], b.F), dtype=np.uint64)
    cdef uint64_t[:, ::1] keys = out
    cdef Py_ssize_t s, i
    if b.F > 0:
        for s in range(sent_ptr.shape[0] - 1):
            for i in range(sent_ptr[s], sent_ptr[s + 1]):
                feature_keys(&b, sent_ptr[s], sent_ptr[s + 1], i, &keys[i, 0])
    return out


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
                       const int32_t[::1] extra_ptr, const int32_t[::1] extra_ids,
                       const uint8_t[:, ::1] compat, int cond, int n_classes,
                       const int32_t[::1] gold, const int32_t[::1] order,
                       ColumnWeights weights not None, double[::1] counter) -> int:
    """One averaged-perceptron epoch over the sentences in ``order``: each word of column
    ``col`` predicted greedily (as :func:`tag_column`, with the current, not averaged,
    ``weights``, but whatever ``values[:, col]`` holds), and where the prediction is not
    ``gold`` (-1: no gold class, not learned from) and gold is among the word's candidates,
    its features move by +1 toward gold and -1 away from the prediction. ``counter[0]``
    counts the words seen (the averaged weights: :meth:`ColumnWeights.averaged`). Returns
    the number of words predicted right."""
    cdef Batch b = make_batch(atoms_known, atoms_extra, tok_type, values, col, templates,
                              cand_ptr, cand_ids, extra_ptr, extra_ids, compat, cond,
                              n_classes)
    cdef Py_ssize_t k, s, i, S = sent_ptr.shape[0] - 1
    cdef int32_t pred, g
    cdef int n, j, right = 0, failed = 0
    cdef double score, best_score
    cdef bint reachable
    if counter.shape[0] != 1:
        raise ValueError("counter must have one entry")
    if gold.shape[0] != tok_type.shape[0]:
        raise ValueError("gold must have one entry per word")
    check_sentences(sent_ptr, tok_type.shape[0])
    for k in range(order.shape[0]):
        if not 0 <= order[k] < S:
            raise ValueError(f"order[{k}] = {order[k]} is not a sentence")
    cdef Buffers buf = Buffers(b.F, n_classes)
    with nogil:
        for k in range(order.shape[0]):
            s = order[k]
            for i in range(sent_ptr[s], sent_ptr[s + 1]):
                counter[0] += 1.0
                g = gold[i]
                n = candidates(&b, i, buf.cands)
                pred = buf.cands[0]
                if n > 1:
                    feature_keys(&b, sent_ptr[s], sent_ptr[s + 1], i, buf.keys)
                    best_score = weights.score(buf.keys, b.F, pred, buf.found)
                    for j in range(1, n):
                        score = weights.score(buf.keys, b.F, buf.cands[j], buf.found)
                        if score > best_score:
                            best_score, pred = score, buf.cands[j]
                b.values[i * b.K + col] = pred
                if pred == g:
                    right += 1
                    continue
                if g < 0 or n == 1:
                    continue
                reachable = False
                for j in range(n):
                    if buf.cands[j] == g:
                        reachable = True
                if reachable and (
                        weights.update(buf.keys, b.F, g, 1.0, counter[0]) < 0
                        or weights.update(buf.keys, b.F, pred, -1.0, counter[0]) < 0):
                    failed = 1
                    break
            if failed:
                break
    if failed:
        raise MemoryError("tagger weights")
    return right


cdef inline uint64_t fnv_bytes(uint64_t h, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """FNV-1a over n bytes, from state h."""
    cdef Py_ssize_t j
    for j in range(n):
        h = (h ^ p[j]) * FNV_PRIME
    return h


@cython.boundscheck(False)
@cython.wraparound(False)
def hash_strings(list strings) -> object:
    """Stable 64-bit hashes of strings (FNV-1a over UTF-8, then MurmurHash3's finalizer): the
    same on every run and machine, unlike Python's ``hash``. Returns a uint64 numpy array."""
    import numpy as np

    cdef Py_ssize_t i, n = len(strings)
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef bytes data
    for i in range(n):
        data = (<str>strings[i]).encode("utf-8", "surrogatepass")
        o[i] = fmix(fnv_bytes(FNV_OFFSET, data, len(data)))
    return out


cdef inline uint64_t tagged_hash(const unsigned char* tag, Py_ssize_t n_tag,
                                 const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The :func:`hash_strings` hash of the string ``tag`` + ``p[:n]`` (both UTF-8)."""
    return fmix(fnv_bytes(fnv_bytes(FNV_OFFSET, tag, n_tag), p, n))


cdef inline Py_ssize_t put_utf8(unsigned char* out, unsigned int ch) noexcept nogil:
    """Write code point ``ch`` as UTF-8 (surrogates as three bytes, as "surrogatepass" does);
    return the number of bytes."""
    if ch < 0x80:
        out[0] = <unsigned char>ch
        return 1
    if ch < 0x800:
        out[0] = <unsigned char>(0xC0 | (ch >> 6))
        out[1] = <unsigned char>(0x80 | (ch & 0x3F))
        return 2
    if ch < 0x10000:
        out[0] = <unsigned char>(0xE0 | (ch >> 12))
        out[1] = <unsigned char>(0x80 | ((ch >> 6) & 0x3F))
        out[2] = <unsigned char>(0x80 | (ch & 0x3F))
        return 3
    out[0] = <unsigned char>(0xF0 | (ch >> 18))
    out[1] = <unsigned char>(0x80 | ((ch >> 12) & 0x3F))
    out[2] = <unsigned char>(0x80 | ((ch >> 6) & 0x3F))
    out[3] = <unsigned char>(0x80 | (ch & 0x3F))
    return 4


cdef uint64_t shape_hash(str form):
    """The :func:`hash_strings` hash of ``"h"`` + the shape of ``form``
    (dparse.tagging.features.word_shape: upper ``X``, lower ``x``, digit ``d``, other
    characters kept, runs of one symbol cut to two), made without building the shape."""
    cdef uint64_t h = fnv_bytes(FNV_OFFSET, <const unsigned char*>b"h", 1)
    cdef Py_UCS4 ch, symbol, last = 0, before = 0
    cdef Py_ssize_t run = 0, nb
    cdef unsigned char buf[4]
    for ch in form:
        if Py_UNICODE_ISUPPER(ch):
            symbol = 88  # X
        elif Py_UNICODE_ISLOWER(ch):
            symbol = 120  # x
        elif Py_UNICODE_ISDIGIT(ch):
            symbol = 100  # d
        else:
            symbol = ch
        if run >= 2 and symbol == last and symbol == before:
            continue
        before = last
        last = symbol
        run += 1
        nb = put_utf8(buf, <unsigned int>symbol)
        h = fnv_bytes(h, buf, nb)
    return fmix(h)


@cython.boundscheck(False)
@cython.wraparound(False)
def form_atoms(list forms, list ambiguity) -> object:
    """The atoms of word types (dparse.tagging.features.ATOMS, in that order): uint64
    [len(forms), 14], each the :func:`hash_strings` hash of its string (``"p3"`` + the first
    three characters of the lower-cased form, ``"h"`` + its shape, ...), made from the forms'
    UTF-8 bytes without building the strings; ``ambiguity`` gives each form's ambiguity
    class."""
    import numpy as np

    cdef Py_ssize_t i, n = len(forms), k, nb, nc
    out = np.empty((n, 14), dtype=np.uint64)
    cdef uint64_t[:, ::1] o = out
    cdef bytes form_b, lower_b, amb_b
    cdef const unsigned char* lp
    cdef Py_ssize_t starts[6]  # byte offsets where the lower-cased form's characters 0-5 start
    cdef Py_ssize_t ends[6]    # ... and where its last 1-5 characters start
    cdef Py_ssize_t last[6]    # the byte offsets of its last 6 characters, by index mod 6
    cdef uint64_t bias = tagged_hash(<const unsigned char*>b"b", 1, NULL, 0)
    for i in range(n):
        form_b = (<str>forms[i]).encode("utf-8", "surrogatepass")
        lower_b = (<str>forms[i]).lower().encode("utf-8", "surrogatepass")
        amb_b = (<str>ambiguity[i]).encode("utf-8", "surrogatepass")
        lp = lower_b
        nb = len(lower_b)
        nc = 0  # characters seen
        for k in range(nb):
            if (lp[k] & 0xC0) != 0x80:  # a character starts
                if nc <= 5:
                    starts[nc] = k
                last[nc % 6] = k
                nc += 1
        for k in range(nc, 6):
            starts[k] = nb
        for k in range(1, 6):  # the last k characters begin at character max(nc - k, 0)
            ends[k] = last[(nc - k) % 6] if nc > k else 0
        o[i, 0] = bias
        o[i, 1] = tagged_hash(<const unsigned char*>b"f", 1, form_b, len(form_b))
        o[i, 2] = tagged_hash(<const unsigned char*>b"l", 1, lp, nb)
        o[i, 3] = tagged_hash(<const unsigned char*>b"p1", 2, lp, starts[1])
        o[i, 4] = tagged_hash(<const unsigned char*>b"p2", 2, lp, starts[2])
        o[i, 5] = tagged_hash(<const unsigned char*>b"p3", 2, lp, starts[3])
        o[i, 6] = tagged_hash(<const unsigned char*>b"p4", 2, lp, starts[4])
        o[i, 7] = tagged_hash(<const unsigned char*>b"s1", 2, lp + ends[1], nb - ends[1])
        o[i, 8] = tagged_hash(<const unsigned char*>b"s2", 2, lp + ends[2], nb - ends[2])
        o[i, 9] = tagged_hash(<const unsigned char*>b"s3", 2, lp + ends[3], nb - ends[3])
        o[i, 10] = tagged_hash(<const unsigned char*>b"s4", 2, lp + ends[4], nb - ends[4])
        o[i, 11] = tagged_hash(<const unsigned char*>b"s5", 2, lp + ends[5], nb - ends[5])
        o[i, 12] = shape_hash(<str>forms[i])
        o[i, 13] = tagged_hash(<const unsigned char*>b"a", 1, amb_b, len(amb_b))
    return out


cdef inline int32_t trie_child(const int32_t* child_ptr, const int32_t* child_char,
                               const int32_t* child_node, int32_t node,
                               Py_UCS4 ch) noexcept nogil:
    """The child of ``node`` along character ``ch`` (children sorted by character), -1 if none."""
    cdef int32_t lo = child_ptr[node], hi = child_ptr[node + 1], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if <Py_UCS4>child_char[mid] < ch:
            lo = mid + 1
        else:
            hi = mid
    if lo < child_ptr[node + 1] and <Py_UCS4>child_char[lo] == ch:
        return child_node[lo]
    return -1


@cython.boundscheck(False)
@cython.wraparound(False)
def applicable_rules(list forms, const int32_t[::1] child_ptr, const int32_t[::1] child_char,
                     const int32_t[::1] child_node, const int32_t[::1] back_root,
                     const int32_t[::1] rule_ptr, const int32_t[::1] rule_ids,
                     int n_rules) -> tuple:
    """The lemma rules that apply to each form, as CSR int32 arrays (ptr [len(forms) + 1],
    ids ascending per form), from the tries of dparse.tagging.lemma_rules.RuleIndex.

    Nodes 0 and 1 are the roots of the front-strip tries of the cases ``keep`` (the form as it
    is) and ``lower`` (the form lower-cased); node x's children are ``child_node[child_ptr[x]
    : child_ptr[x + 1]]``, along the code points ``child_char`` (ascending). A front-trie node
    where front strips end has ``back_root`` >= 0: the root of the trie of those rules' back
    strips, read from the end of the form; a back-trie node lists the rules whose back strip
    ends there (``rule_ids[rule_ptr[x] : rule_ptr[x + 1]]``). A rule applies to a form whose
    source starts with its front strip and ends with its back strip, the two not overlapping.
    """
    import numpy as np

    cdef Py_ssize_t i, n_forms = len(forms), n, f, b, w, W = (n_rules + 63) // 64
    cdef Py_ssize_t size = 0, cap = 1024
    cdef int case, k
    cdef int32_t node, bnode
    cdef uint64_t bits
    cdef str source
    ptr = np.zeros(n_forms + 1, dtype=np.int32)
    cdef int32_t[::1] p = ptr
    cdef uint64_t* mask = <uint64_t*>calloc(W + 1, sizeof(uint64_t))  # (+1: never calloc(0))
    cdef int32_t* ids = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int32_t* grown
    cdef int32_t[::1] o
    # the tries as pointers for trie_child (no memoryview handed over per character)
    cdef const int32_t* cptr = &child_ptr[0]
    cdef const int32_t* cchar = &child_char[0] if child_char.shape[0] else NULL
    cdef const int32_t* cnode = &child_node[0] if child_node.shape[0] else NULL
    if mask == NULL or ids == NULL:
        free(mask); free(ids)
        raise MemoryError("lemma rules")
    try:
        for i in range(n_forms):
            for case in range(2):
                source = <str?>forms[i] if case == 0 else (<str?>forms[i]).lower()
                n = len(source)
                node = case
                f = 0
                while node >= 0:
                    bnode = back_root[node]
                    b = 0
                    while bnode >= 0:          # back strips of at most n - f characters
                        for k in range(rule_ptr[bnode], rule_ptr[bnode + 1]):
                            mask[rule_ids[k] >> 6] |= (<uint64_t>1) << (rule_ids[k] & 63)
                        if b == n - f:
                            break
                        bnode = trie_child(cptr, cchar, cnode, bnode, source[n - 1 - b])
                        b += 1
                    if f == n:
                        break
                    node = trie_child(cptr, cchar, cnode, node, source[f])
                    f += 1
            for w in range(W):
                bits = mask[w]
                mask[w] = 0
                while bits:
                    if size == cap:
                        cap *= 2
                        grown = <int32_t*>realloc(ids, cap * sizeof(int32_t))
                        if grown == NULL:
                            raise MemoryError("lemma rules")
                        ids = grown
                    ids[size] = <int32_t>(64 * w + lowest_bit(bits))
                    size += 1
                    bits &= bits - 1
            p[i + 1] = <int32_t>size
        out = np.empty(size, dtype=np.int32)
        if size:
            o = out
            memcpy(&o[0], ids, size * sizeof(int32_t))
    finally:
        free(mask)
        free(ids)
    return ptr, out
