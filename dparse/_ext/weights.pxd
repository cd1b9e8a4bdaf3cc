# cython: language_level=3
"""Inner loops over weight vectors (float32 at parse time, float64 in training).

Written in C so that the compiler vectorizes the row additions (no aliasing) and breaks the
floating-point dependency chain of a gathered sum (four accumulators).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

from cython cimport floating


cdef extern from *:
    """
    /* Hot inner loops written in C so that the compiler may vectorize them (no aliasing) and
       break the floating-point dependency chain of a gathered sum. */
    /* Not inlined: inlined into the scoring loop, gcc no longer vectorizes it. */
    static __attribute__((noinline)) void dp_add_row_f32(float* __restrict acc,
                                                         const float* __restrict row, int L) {
        for (int l = 0; l < L; l++) acc[l] += row[l];
    }
    static __attribute__((noinline)) void dp_add_row_f64(double* __restrict acc,
                                                         const double* __restrict row, int L) {
        for (int l = 0; l < L; l++) acc[l] += row[l];
    }
    #define DP_GATHER_SUM(W, idx, n, out) do { \
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0; int k_ = 0; \
        for (; k_ + 4 <= (n); k_ += 4) { \
            s0 += (W)[(idx)[k_]]; s1 += (W)[(idx)[k_ + 1]]; \
            s2 += (W)[(idx)[k_ + 2]]; s3 += (W)[(idx)[k_ + 3]]; } \
        for (; k_ < (n); k_++) s0 += (W)[(idx)[k_]]; \
        (out) = (s0 + s1) + (s2 + s3); } while (0)
    /* Software prefetch of the weights a later gather or row sum will read. */
    static inline void dp_prefetch_gather(const char* W, int size, const uint64_t* idx, int n) {
        for (int k = 0; k < n; k++) __builtin_prefetch(W + idx[k] * size, 0, 1);
    }
    static inline void dp_prefetch_rows(const char* W, int row_bytes, const uint64_t* idx,
                                        int n) {
        for (int k = 0; k < n; k++)
            for (int b = 0; b < row_bytes; b += 64)
                __builtin_prefetch(W + idx[k] * row_bytes + b, 0, 1);
    }
    /* out[l] = a[l] + b[l] + W[rows[0] * L + l] + W[rows[1] * L + l] + ..., added in that
       order (the same sums, bit for bit, as a + b followed by add_row row by row), a vector
       of labels at a time in registers (16 float32, 4 float64): no call and no store per row.
       Cloned for AVX-512 (float32) and AVX2 where the CPU has them (the same additions in the
       same order: the same results). */
    typedef float dp_v8f __attribute__((vector_size(32)));
    typedef float dp_v16f __attribute__((vector_size(64)));
    typedef double dp_v4d __attribute__((vector_size(32)));
    #define DP_LABEL_SUM(T, V) \
        const int w = (int)(sizeof(V) / sizeof(T)); \
        int l0 = 0; \
        for (; l0 + w <= L; l0 += w) { \
            V acc, x; \
            __builtin_memcpy(&acc, a + l0, sizeof(V)); \
            __builtin_memcpy(&x, b + l0, sizeof(V)); \
            acc += x; \
            for (int r = 0; r < nrows; r++) { \
                __builtin_memcpy(&x, W + rows[r] * (uint64_t)L + l0, sizeof(V)); \
                acc += x; } \
            __builtin_memcpy(out + l0, &acc, sizeof(V)); } \
        for (; l0 < L; l0++) { \
            T acc = a[l0] + b[l0]; \
            for (int r = 0; r < nrows; r++) acc += W[rows[r] * (uint64_t)L + l0]; \
            out[l0] = acc; }
    __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
    static void dp_label_sum_f32(float* __restrict out, const float* __restrict a,
                                 const float* __restrict b, const float* __restrict W,
                                 const uint64_t* __restrict rows, int nrows, int L) {
        DP_LABEL_SUM(float, dp_v16f)
    }
    __attribute__((target_clones("avx2", "default")))
    static void dp_label_sum_f64(double* __restrict out, const double* __restrict a,
                                 const double* __restrict b, const double* __restrict W,
                                 const uint64_t* __restrict rows, int nrows, int L) {
        DP_LABEL_SUM(double, dp_v4d)
    }
    /* The first index of the largest of x[0..L-1] (L >= 1, no NaN): the maximum taken a
       vector at a time, then the first entry equal to it. */
    #define DP_ARGMAX(T, V, VI) \
        const int w = (int)(sizeof(V) / sizeof(T)); \
        T best = x[0]; \
        int l0 = 0; \
        if (L >= w) { \
            V acc, v; \
            __builtin_memcpy(&acc, x, sizeof(V)); \
            for (l0 = w; l0 + w <= L; l0 += w) { \
                __builtin_memcpy(&v, x + l0, sizeof(V)); \
                VI take = v > acc; \
                acc = (V)(((VI)v & take) | ((VI)acc & ~take)); } \
            for (int k = 0; k < w; k++) best = acc[k] > best ? acc[k] : best; } \
        for (; l0 < L; l0++) best = x[l0] > best ? x[l0] : best; \
        for (int l = 0; l < L; l++) if (x[l] == best) return l; \
        return 0;
    typedef int dp_v8i __attribute__((vector_size(32)));
    typedef long long dp_v4l __attribute__((vector_size(32)));
    __attribute__((target_clones("avx2", "default")))
    static int dp_argmax_f32(const float* __restrict x, int L) { DP_ARGMAX(float, dp_v8f, dp_v8i) }
    __attribute__((target_clones("avx2", "default")))
    static int dp_argmax_f64(const double* __restrict x, int L) { DP_ARGMAX(double, dp_v4d, dp_v4l) }
    static inline double dp_gather_sum_f32(const float* W, const uint64_t* idx, int n) {
        double out; DP_GATHER_SUM(W, idx, n, out); return out;
    }
    static inline double dp_gather_sum_f64(const double* W, const uint64_t* idx, int n) {
        double out; DP_GATHER_SUM(W, idx, n, out); return out;
    }
    """
    void dp_add_row_f32(float* acc, const float* row, int L) noexcept nogil
    void dp_add_row_f64(double* acc, const double* row, int L) noexcept nogil
    void dp_prefetch_gather(const char* W, int size, const uint64_t* idx, int n) noexcept nogil
    void dp_prefetch_rows(const char* W, int row_bytes, const uint64_t* idx,
                          int n) noexcept nogil
    void dp_label_sum_f32(float* out, const float* a, const float* b, const float* W,
                          const uint64_t* rows, int nrows, int L) noexcept nogil
    void dp_label_sum_f64(double* out, const double* a, const double* b, const double* W,
                          const uint64_t* rows, int nrows, int L) noexcept nogil
    int dp_argmax_f32(const float* x, int L) noexcept nogil
    int dp_argmax_f64(const double* x, int L) noexcept nogil
    double dp_gather_sum_f32(const float* W, const uint64_t* idx, int n) noexcept nogil
    double dp_gather_sum_f64(const double* W, const uint64_t* idx, int n) noexcept nogil


cdef inline void add_row(floating* acc, const floating* row, int L) noexcept nogil:
    """acc[0:L] += row[0:L]."""
    if floating is float:
        dp_add_row_f32(acc, row, L)
    else:
        dp_add_row_f64(acc, row, L)


cdef inline void label_sum(floating* out, const floating* a, const floating* b,
                           const floating* W, const uint64_t* rows, int nrows,
                           int L) noexcept nogil:
    """out[0:L] = a + b + the rows W[rows[k] * L : (rows[k] + 1) * L], k < nrows, added in
    that order (bit for bit a + b then ``add_row`` per row, without a call or store per row)."""
    if floating is float:
        dp_label_sum_f32(out, a, b, W, rows, nrows, L)
    else:
        dp_label_sum_f64(out, a, b, W, rows, nrows, L)


cdef inline double gather_sum(const floating* W, const uint64_t* idx, int n) noexcept nogil:
    """sum(W[idx[0:n]]) with four independent accumulators."""
    if floating is float:
        return dp_gather_sum_f32(W, idx, n)
    else:
        return dp_gather_sum_f64(W, idx, n)


cdef inline void prefetch_gather(const floating* W, const uint64_t* idx, int n) noexcept nogil:
    """Prefetch W[idx[0:n]] (a later ``gather_sum``)."""
    dp_prefetch_gather(<const char*>W, sizeof(floating), idx, n)


cdef inline void prefetch_rows(const floating* W, const uint64_t* idx, int n,
                               int L) noexcept nogil:
    """Prefetch the rows W[idx[k] * L : (idx[k] + 1) * L], k < n (later ``add_row`` calls)."""
    dp_prefetch_rows(<const char*>W, <int>(L * sizeof(floating)), idx, n)


cdef inline int argmax(const floating* x, int L) noexcept nogil:
    """The first index of the largest of x[0:L] (L >= 1, no NaN)."""
    if floating is float:
        return dp_argmax_f32(x, L)
    else:
        return dp_argmax_f64(x, L)


cdef inline void mark(uint8_t* bits, int64_t i) noexcept nogil:
    """Set bit i of a bit mask over a weight vector (bit i & 7 of byte i >> 3; the mask has
    (size + 7) // 8 bytes): the touched marks of a worker's training (dparse.mixing)."""
    bits[i >> 3] |= <uint8_t>(1 << (i & 7))
