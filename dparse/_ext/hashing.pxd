# cython: language_level=3
"""Feature hashing shared by the feature extractors.

A feature is a template key (``side`` hashes of attribute ids, combined across the words of a
part with xor) conjoined with a small context value (direction, distance, ...) and mapped to a
weight index by ``bucket``, a multiply-shift hash keeping the top ``bits`` bits.
"""

from libc.stdint cimport uint64_t


cdef inline uint64_t mix(uint64_t h, uint64_t v) noexcept nogil:
    """Combine a running key with one more value (order-sensitive)."""
    h ^= v * <uint64_t>0x9E3779B97F4A7C15ULL
    h = (h << 27) | (h >> 37)
    return h * <uint64_t>0xBF58476D1CE4E5B9ULL + <uint64_t>0x94D049BB133111EBULL


cdef inline uint64_t fmix(uint64_t k) noexcept nogil:
    """MurmurHash3's 64-bit finalizer: spreads the key over all bits."""
    k ^= k >> 33
    k *= <uint64_t>0xFF51AFD7ED558CCDULL
    k ^= k >> 33
    k *= <uint64_t>0xC4CEB9FE1A85EC53ULL
    k ^= k >> 33
    return k


cdef inline uint64_t side(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    """The key of one word's share of a template: a hash of up to three attribute ids and a seed."""
    return fmix(mix(mix(mix(seed, a), b), c))


cdef inline uint64_t bucket(uint64_t key, uint64_t conj, int shift) noexcept nogil:
    """Multiply-shift hash of a template key conjoined with ``conj``: the top 64 - shift bits."""
    return ((key ^ conj) * <uint64_t>0x9FB21C651E98DF25ULL) >> shift


cdef inline void bucket_pair(uint64_t key, uint64_t conj1, uint64_t conj2, int shift,
                             uint64_t* out) noexcept nogil:
    """Two features of one template key, conjoined with ``conj1`` and ``conj2``, hashed into one
    block of 16 weights (the top 64 - shift bits of the index; shift <= 60): the key alone picks
    the block, each conjunction a slot in it, the second always another slot than the first.
    All the features of a key then share one 64-byte line of float32 weights (one memory read
    instead of two) while the blocks and the slots are spread like independent hashes."""
    cdef uint64_t block = ((key * <uint64_t>0xD6E8FEB86659FD93ULL) >> (shift + 4)) << 4
    cdef uint64_t first = ((key ^ conj1) * <uint64_t>0x9FB21C651E98DF25ULL) >> 60
    cdef uint64_t other = ((((key ^ conj2) * <uint64_t>0x9FB21C651E98DF25ULL) >> 32) * 15) >> 32
    out[0] = block | first
    out[1] = block | ((first + 1 + other) & 15)


cdef inline int distance_bin(int d) noexcept nogil:
    """Bins of a distance or length d >= 0: 0, 1, 2, 3, 4, 5, 6-7, 8-10, 11-14, 15-19, 20+."""
    if d <= 5:
        return d
    if d <= 7:
        return 6
    if d <= 10:
        return 7
    if d <= 14:
        return 8
    if d <= 19:
        return 9
    return 10
