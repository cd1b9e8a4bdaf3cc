# cython: language_level=3
"""The first-order features of arcfeatures.pyx shared with other extractors: the encoded sentence
(``SentC``), the hashed features of one arc, and the layout of the first-order weight vector."""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from cython cimport floating

from dparse._ext.hashing cimport distance_bin


ctypedef struct SentC:
    int n
    const int32_t* tok       # [n+1, NCOLS]
    const int32_t* morph_ptr # [n+2]
    const int32_t* morph     # [nnz]
    uint64_t* umask          # sparse table of UPOS bit masks [MAX_LEVELS, n+1]
    uint64_t* xmask          # sparse table of XPOS bit masks [MAX_LEVELS, n+1]
    uint64_t* hpart          # head-side key of every template at every token [n+1, NT]
    uint64_t* mpart          # modifier-side key of every template at every token [n+1, NT]
    uint64_t* mkeys          # keys of each morphological feature occurrence [nnz, 3]


cdef int init_sentence(SentC* s, const int32_t[:, ::1] tokens, const int32_t[::1] morph_ptr,
                       const int32_t[::1] morph) except -1
cdef void free_sentence(SentC* s) noexcept nogil
cdef int max_arc_features(const SentC* s) noexcept nogil
# Upper bound on the number of indices ``arc_features`` writes for one arc.
cdef int arc_features(const SentC* s, int h, int m, uint64_t* out, int bits) noexcept nogil
# The weight indices (< 2**bits) of the unlabeled arc h -> m in the hashed layout; returns their
# count.
cdef int layout_arc_features(const SentC* s, int h, int m, uint64_t* out, int bits,
                             int layout, int first) noexcept nogil
# The same in the given layout (LAYOUT_HASHED or LAYOUT_BLOCKED), from template ``first`` on
# (0: all of them).

cdef void one_sided_scores(const SentC* s, const floating* W, int bits, int layout,
                           const uint8_t* need, double* head_only,
                           double* mod_only) noexcept nogil
# The weights of the one-sided arc templates (0..N_ONE_SIDED-1) summed per word, direction and
# distance bin, [n+1, 2, N_BINS] for heads and for modifiers (see arcfeatures.pyx).

cdef enum:
    # Templates 0..6 read only the head, 7..13 only the modifier (the unigrams).
    N_HEAD_ONLY = 7
    N_ONE_SIDED = 14
    # Distance bins (hashing.distance_bin) of distances >= 1: bins 1..10.
    N_BINS = 11


cdef inline double plus_one_sided(double two_sided, const double* head_only,
                                  const double* mod_only, int h, int m) noexcept nogil:
    """The unlabeled score of the arc h -> m: ``two_sided`` (the sum of its other templates'
    weights) plus its head's and its modifier's sums from ``one_sided_scores``, in that
    order."""
    cdef int right = h < m
    cdef int bin = distance_bin(h - m if h > m else m - h)
    return (two_sided + head_only[(h * 2 + right) * N_BINS + bin]
            + mod_only[(m * 2 + right) * N_BINS + bin])

cdef enum:
    # How the arc features of a template key map to weight indices (FeatureSpace.layout):
    # two independent hashes, or one block of 16 weights per key (hashing.bucket_pair).
    LAYOUT_HASHED = 0
    LAYOUT_BLOCKED = 1


cdef class FeatureSpace:
    cdef readonly int arc_bits, lab_bits, n_labels
    cdef int layout_id
    cdef readonly int64_t lab_offset, size
