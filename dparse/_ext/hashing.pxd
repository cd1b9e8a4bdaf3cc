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


cdef extern from *:
    """
    /* Weight indices of template keys; see bucket and bucket_pair below. Written once as
       expressions that hold for a scalar key and for a vector of keys (GCC vector
       extensions), so that dp_key_features computes the same indices eight at a time. */
    #define DP_BUCKET(key, conj, shift) ((((key) ^ (conj)) * 0x9FB21C651E98DF25ULL) >> (shift))
    #define DP_BUCKET_PAIR(T, key, conj1, conj2, shift, out0, out1) do { \
        T block_ = (((key) * 0xD6E8FEB86659FD93ULL) >> ((shift) + 4)) << 4; \
        T first_ = DP_BUCKET(key, conj1, 60); \
        T other_ = ((DP_BUCKET(key, conj2, 32)) * 15) >> 32; \
        (out0) = block_ | first_; \
        (out1) = block_ | ((first_ + 1 + other_) & 15); } while (0)
    static inline uint64_t dp_bucket(uint64_t key, uint64_t conj, int shift) {
        return DP_BUCKET(key, conj, shift);
    }
    static inline void dp_bucket_pair(uint64_t key, uint64_t conj1, uint64_t conj2, int shift,
                                      uint64_t* out) {
        DP_BUCKET_PAIR(uint64_t, key, conj1, conj2, shift, out[0], out[1]);
    }
    /* The two indices of each key H[t] ^ M[t], t < count, into out[2t], out[2t + 1]: those
       of dp_bucket_pair (blocked) or dp_bucket twice, eight keys at a time in vectors (64-bit
       multiplies in one instruction where the CPU has AVX-512). */
    typedef uint64_t dp_v8u __attribute__((vector_size(64)));
    __attribute__((target_clones("arch=x86-64-v4", "default"), unused))
    static void dp_key_features(const uint64_t* __restrict H, const uint64_t* __restrict M,
                                int count, uint64_t conj1, uint64_t conj2, int shift,
                                int blocked, uint64_t* __restrict out) {
        const dp_v8u lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = {4, 12, 5, 13, 6, 14, 7, 15};
        int t = 0;
        for (; t + 8 <= count; t += 8) {
            dp_v8u h, m, key, a, b;
            __builtin_memcpy(&h, H + t, sizeof h);
            __builtin_memcpy(&m, M + t, sizeof m);
            key = h ^ m;
            if (blocked) {
                DP_BUCKET_PAIR(dp_v8u, key, conj1, conj2, shift, a, b);
            } else {
                a = DP_BUCKET(key, conj1, shift);
                b = DP_BUCKET(key, conj2, shift);
            }
            dp_v8u x = __builtin_shuffle(a, b, lo), y = __builtin_shuffle(a, b, hi);
            __builtin_memcpy(out + 2 * t, &x, sizeof x);
            __builtin_memcpy(out + 2 * t + 8, &y, sizeof y);
        }
        for (; t < count; t++) {
            if (blocked) {
                dp_bucket_pair(H[t] ^ M[t], conj1, conj2, shift, out + 2 * t);
            } else {
                out[2 * t] = dp_bucket(H[t] ^ M[t], conj1, shift);
                out[2 * t + 1] = dp_bucket(H[t] ^ M[t], conj2, shift);
            }
        }
    }
    static inline int dp_lowest_bit(uint64_t x) { return __builtin_ctzll(x); }
    """
    uint64_t bucket "dp_bucket"(uint64_t key, uint64_t conj, int shift) noexcept nogil
    void bucket_pair "dp_bucket_pair"(uint64_t key, uint64_t conj1, uint64_t conj2, int shift,
                                      uint64_t* out) noexcept nogil
    void key_features_of "dp_key_features"(const uint64_t* H, const uint64_t* M, int count,
                                           uint64_t conj1, uint64_t conj2, int shift,
                                           int blocked, uint64_t* out) noexcept nogil
    int lowest_bit "dp_lowest_bit"(uint64_t x) noexcept nogil

# bucket(key, conj, shift): multiply-shift hash of a template key conjoined with ``conj``, the
#   top 64 - shift bits.
# bucket_pair(key, conj1, conj2, shift, out): two features of one template key, conjoined with
#   ``conj1`` and ``conj2``, hashed into one block of 16 weights (the top 64 - shift bits of the
#   index; shift <= 60): the key alone picks the block, each conjunction a slot in it, the second
#   always another slot than the first. All the features of a key then share one 64-byte line of
#   float32 weights (one memory read instead of two) while the blocks and the slots are spread
#   like independent hashes.
# key_features_of(H, M, count, conj1, conj2, shift, blocked, out): both indices of count keys.
# lowest_bit(x): the index of the lowest set bit of x != 0.


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
