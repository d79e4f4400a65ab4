/* hc_gemm: the fp32 GEMM whose every output is one FMA chain (AVX-512, AVX2+FMA, NEON or scalar, same bits). */
#include "refs/gemm.h"

#include <math.h>
#include <stdint.h>

void hc_gemm_ref(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
                 size_t ldb, float *C, size_t ldc, int accumulate)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = fmaf(A[(size_t)i * rsa + (size_t)k * csa], B[(size_t)k * ldb + j], acc);
            float *c = C + (size_t)i * ldc + j;
            *c = accumulate ? *c + acc : acc;
        }
}

#if defined(__AVX512F__) || (defined(__FMA__) && defined(__AVX2__))
#include <immintrin.h>

/* Asks for the rows of A that the block of mr rows at `a` reads, ahead of its kernel: a
 * Winograd GEMM's A (one of 36 weight matrices, together larger than L2) comes from L3, in
 * runs too short for the hardware prefetchers. Row-major A: each row's lines; transposed A
 * (rsa 1): one line per k, only when the block starts a new line. */
static void prefetch_a(const float *a, int mr, int K, size_t rsa, size_t csa)
{
    if (csa == 1) {
        for (int r = 0; r < mr; r++)
            for (int k = 0; k < K; k += 16)
                _mm_prefetch((const char *)(a + (size_t)r * rsa + k), _MM_HINT_T0);
    } else if (rsa == 1 && ((uintptr_t)(a + mr - 1) & 63) < (size_t)mr * sizeof(float)) {
        for (int k = 0; k < K; k++)
            _mm_prefetch((const char *)(a + (size_t)k * csa + mr - 1), _MM_HINT_T0);
    }
}

#endif

#if defined(__AVX512F__)

/* The AVX-512 form of the kernels below: blocks of MR rows x NV vectors of 16 columns, the
 * last vector holding `last` (1..16) columns through a lane mask when PART. 12 rows x 2 vectors
 * keep 24 of the 32 registers accumulating. Every lane is still one output's FMA chain over k
 * in order from 0, so the bits equal the AVX2 and scalar forms'. */
#define HC_KERN(MR, NV, PART)                                                                    \
    static void kern_##MR##_##NV##_##PART(int K, const float *A, size_t rsa, size_t csa,       \
                                          const float *B, size_t ldb, float *C, size_t ldc,    \
                                          int accumulate, int last)                            \
    {                                                                                          \
        __m512 acc[MR][NV];                                                                    \
        __mmask16 mk = (__mmask16)((1u << last) - 1u);                                         \
        (void)mk;                                                                              \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                  \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps(); \
        _Pragma("GCC unroll 4") for (int k = 0; k < K; k++) {                                   \
            const float *b = B + (size_t)k * ldb;                                              \
            __m512 bv[NV];                                                                     \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) bv[v] =                       \
                (PART && v == NV - 1) ? _mm512_maskz_loadu_ps(mk, b + 16 * v)                  \
                                      : _mm512_loadu_ps(b + 16 * v);                           \
            const float *a = A + (size_t)k * csa;                                              \
            _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                              \
            {                                                                                  \
                __m512 av = _mm512_set1_ps(a[(size_t)i * rsa]);                                \
                _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) acc[i][v] =               \
                    _mm512_fmadd_ps(av, bv[v], acc[i][v]);                                     \
            }                                                                                  \
        }                                                                                      \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                  \
        {                                                                                      \
            float *c = C + (size_t)i * ldc;                                                    \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++)                               \
            {                                                                                  \
                __m512 r = acc[i][v];                                                          \
                if (PART && v == NV - 1) {                                                     \
                    if (accumulate)                                                            \
                        r = _mm512_add_ps(_mm512_maskz_loadu_ps(mk, c + 16 * v), r);           \
                    _mm512_mask_storeu_ps(c + 16 * v, mk, r);                                  \
                } else {                                                                       \
                    if (accumulate)                                                            \
                        r = _mm512_add_ps(_mm512_loadu_ps(c + 16 * v), r);                     \
                    _mm512_storeu_ps(c + 16 * v, r);                                           \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

#define HC_KERN_ALL(MR) HC_KERN(MR, 1, 0) HC_KERN(MR, 1, 1) HC_KERN(MR, 2, 0) HC_KERN(MR, 2, 1)
HC_KERN_ALL(1)
HC_KERN_ALL(2)
HC_KERN_ALL(3)
HC_KERN_ALL(4)
HC_KERN_ALL(5)
HC_KERN_ALL(6)
HC_KERN_ALL(7)
HC_KERN_ALL(8)
HC_KERN_ALL(9)
HC_KERN_ALL(10)
HC_KERN_ALL(11)
HC_KERN_ALL(12)

typedef void (*kern_fn)(int, const float *, size_t, size_t, const float *, size_t, float *, size_t,
                        int, int);
#define HC_KROW(MR) {kern_##MR##_1_0, kern_##MR##_1_1, kern_##MR##_2_0, kern_##MR##_2_1}
static const kern_fn kerns[12][4] = {HC_KROW(1), HC_KROW(2), HC_KROW(3),  HC_KROW(4),
                                     HC_KROW(5), HC_KROW(6), HC_KROW(7),  HC_KROW(8),
                                     HC_KROW(9), HC_KROW(10), HC_KROW(11), HC_KROW(12)};

void hc_gemm(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
             size_t ldb, float *C, size_t ldc, int accumulate)
{
    /* As the AVX2 form below: column panels of 32 outer (narrower panels for K > 256 were
     * slower here: an AVX-512 core's L1 is larger), row blocks of up to 12 rows inner, split
     * evenly, the next block's A and the next panel's B prefetched. */
    enum { PACK_K = 512, NR = 32 };
    float panel[PACK_K * NR]; /* no arithmetic: a copy */
    for (int j0 = 0; j0 < N; j0 += NR) {
        int n = N - j0 < NR ? N - j0 : NR;
        int nv = n > 16 ? 2 : 1, last = n - 16 * (nv - 1);
        int sel = (nv - 1) * 2 + (last < 16);
        const float *bp = B + j0;
        size_t ldp = ldb;
        if (M > 12 && K <= PACK_K && ldb != (size_t)(16 * nv)) {
            __mmask16 mk = (__mmask16)((1u << last) - 1u);
            size_t pf0 = (size_t)(j0 + n), pf1 = pf0 + (size_t)NR - 1;
            int far = pf0 < ldb;
            if (pf1 >= ldb)
                pf1 = ldb - 1;
            for (int k = 0; k < K; k++) {
                const float *b = B + (size_t)k * ldb + j0;
                float *p = panel + (size_t)k * 16 * nv;
                if (nv == 2)
                    _mm512_storeu_ps(p, _mm512_loadu_ps(b));
                _mm512_storeu_ps(p + 16 * (nv - 1), _mm512_maskz_loadu_ps(mk, b + 16 * (nv - 1)));
                if (far) {
                    _mm_prefetch((const char *)(b - j0 + pf0), _MM_HINT_T1);
                    _mm_prefetch((const char *)(b - j0 + pf1), _MM_HINT_T1);
                }
            }
            bp = panel;
            ldp = (size_t)(16 * nv);
        }
        int nb = (M + 11) / 12, base = M / nb, extra = M % nb;
        for (int ib = 0, i0 = 0; ib < nb; ib++) {
            int mr = base + (ib < extra);
            if (ib + 1 < nb)
                prefetch_a(A + (size_t)(i0 + mr) * rsa, base + (ib + 1 < extra), K, rsa, csa);
            kerns[mr - 1][sel](K, A + (size_t)i0 * rsa, rsa, csa, bp, ldp, C + (size_t)i0 * ldc + j0,
                               ldc, accumulate, last);
            i0 += mr;
        }
    }
}

#elif defined(__FMA__) && defined(__AVX2__)

/* mask_tab + 8 - n: a lane mask selecting the first n (1..8) of 8 lanes. */
static const int32_t mask_tab[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* A K x (8 nv) panel of B (rows ldb apart, the last vector's `last` columns kept, the rest zero)
 * copied contiguous (no arithmetic). pf (NULL: none): the first column of rows to prefetch into
 * L2 as the copy walks B, with its column pf + pfw. */
static void copy_panel(const float *B, size_t ldb, int K, int nv, int last, float *panel, const float *pf,
                       size_t pfw)
{
    __m256i mk = _mm256_loadu_si256((const __m256i *)(mask_tab + 8 - last));
    for (int k = 0; k < K; k++) {
        const float *b = B + (size_t)k * ldb;
        float *p = panel + (size_t)k * 8 * nv;
        for (int v = 0; v < nv - 1; v++)
            _mm256_storeu_ps(p + 8 * v, _mm256_loadu_ps(b + 8 * v));
        _mm256_storeu_ps(p + 8 * (nv - 1), _mm256_maskload_ps(b + 8 * (nv - 1), mk));
        if (pf) {
            _mm_prefetch((const char *)(pf + (size_t)k * ldb), _MM_HINT_T1);
            _mm_prefetch((const char *)(pf + (size_t)k * ldb + pfw), _MM_HINT_T1);
        }
    }
}

/* One block of MR rows x NV vectors of 8 columns; the last vector holds `last` (1..8) columns,
 * read and written through a lane mask when PART. Each accumulator lane is one output's chain.
 * MR x NV accumulators + NV columns of B + one broadcast fit the 16 registers for 4 x 3, 6 x 2
 * and 12 x 1. The k loop is unrolled: its counter and address updates otherwise take issue
 * slots the FMAs need. PACKED (a constant): A in hc_gemm_p4's blocks of 4 rows (row i's
 * element k at A[(i / 4) * 4K + 4k + i % 4]; rsa and csa unused), else A[i * rsa + k * csa]. */
#define HC_KERN_AT(PFX, PACKED, MR, NV, PART)                                                   \
    static void PFX##_##MR##_##NV##_##PART(int K, const float *A, size_t rsa, size_t csa,      \
                                           const float *B, size_t ldb, float *C, size_t ldc,   \
                                           int accumulate, int last)                           \
    {                                                                                          \
        __m256 acc[MR][NV];                                                                    \
        __m256i mk = _mm256_loadu_si256((const __m256i *)(mask_tab + 8 - last));              \
        (void)mk;                                                                              \
        size_t bs = (size_t)4 * (size_t)K;                                                     \
        (void)bs;                                                                              \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                   \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[i][v] = _mm256_setzero_ps(); \
        _Pragma("GCC unroll 4") for (int k = 0; k < K; k++) {                                   \
            const float *b = B + (size_t)k * ldb;                                              \
            __m256 bv[NV];                                                                     \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) bv[v] =                       \
                (PART && v == NV - 1) ? _mm256_maskload_ps(b + 8 * v, mk)                      \
                                      : _mm256_loadu_ps(b + 8 * v);                            \
            const float *a = A + (size_t)k * (PACKED ? 4 : csa);                               \
            _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                               \
            {                                                                                  \
                __m256 av = _mm256_broadcast_ss(PACKED ? a + (size_t)(i / 4) * bs + i % 4     \
                                                       : a + (size_t)i * rsa);                 \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[i][v] =               \
                    _mm256_fmadd_ps(av, bv[v], acc[i][v]);                                     \
            }                                                                                  \
        }                                                                                      \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                   \
        {                                                                                      \
            float *c = C + (size_t)i * ldc;                                                    \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)                               \
            {                                                                                  \
                __m256 r = acc[i][v];                                                          \
                if (PART && v == NV - 1) {                                                     \
                    if (accumulate)                                                            \
                        r = _mm256_add_ps(_mm256_maskload_ps(c + 8 * v, mk), r);               \
                    _mm256_maskstore_ps(c + 8 * v, mk, r);                                     \
                } else {                                                                       \
                    if (accumulate)                                                            \
                        r = _mm256_add_ps(_mm256_loadu_ps(c + 8 * v), r);                      \
                    _mm256_storeu_ps(c + 8 * v, r);                                            \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }
#define HC_KERN(MR, NV, PART) HC_KERN_AT(kern, 0, MR, NV, PART)

/* Kernels by panel width: 3 vectors (24 columns) take 4 rows, 2 vectors 6 rows, and one vector
 * 12 rows (6 rows of one vector would keep only 6 FMA chains in flight, fewer than the FMA
 * units' latency x throughput). */
#define HC_KERN_V(MR, NV) HC_KERN(MR, NV, 0) HC_KERN(MR, NV, 1)
HC_KERN_V(1, 3)
HC_KERN_V(2, 3)
HC_KERN_V(3, 3)
HC_KERN_V(4, 3)
HC_KERN_V(1, 2)
HC_KERN_V(2, 2)
HC_KERN_V(3, 2)
HC_KERN_V(4, 2)
HC_KERN_V(5, 2)
HC_KERN_V(6, 2)
HC_KERN_V(1, 1)
HC_KERN_V(2, 1)
HC_KERN_V(3, 1)
HC_KERN_V(4, 1)
HC_KERN_V(5, 1)
HC_KERN_V(6, 1)
HC_KERN_V(7, 1)
HC_KERN_V(8, 1)
HC_KERN_V(9, 1)
HC_KERN_V(10, 1)
HC_KERN_V(11, 1)
HC_KERN_V(12, 1)

typedef void (*kern_fn)(int, const float *, size_t, size_t, const float *, size_t, float *, size_t,
                        int, int);
#define HC_K2(MR, NV) {kern_##MR##_##NV##_0, kern_##MR##_##NV##_1}
/* [vectors - 1][rows - 1][partial last vector] */
static const kern_fn kerns[3][12][2] = {
    {HC_K2(1, 1), HC_K2(2, 1), HC_K2(3, 1), HC_K2(4, 1), HC_K2(5, 1), HC_K2(6, 1), HC_K2(7, 1),
     HC_K2(8, 1), HC_K2(9, 1), HC_K2(10, 1), HC_K2(11, 1), HC_K2(12, 1)},
    {HC_K2(1, 2), HC_K2(2, 2), HC_K2(3, 2), HC_K2(4, 2), HC_K2(5, 2), HC_K2(6, 2)},
    {HC_K2(1, 3), HC_K2(2, 3), HC_K2(3, 3), HC_K2(4, 3)},
};
static const int kern_rows[3] = {12, 6, 4};

/* hc_gemm_p4's kernels: A packed in blocks of 4 rows, so that a block's 4 x K values are one
 * run of memory and the blocks follow each other (a Winograd chunk's 36 weight matrices stream
 * from L3 in order, where a row-major A has each block read 4 rows K floats apart). */
#define HC_KERNP(MR, NV, PART) HC_KERN_AT(kernp, 1, MR, NV, PART)
#define HC_KERNP_V(MR, NV) HC_KERNP(MR, NV, 0) HC_KERNP(MR, NV, 1)
HC_KERNP_V(4, 3)
HC_KERNP_V(4, 2)
HC_KERNP_V(4, 1)
HC_KERNP_V(8, 1)
HC_KERNP_V(12, 1)

void hc_gemm_p4(int M, int N, int K, const float *A, const float *B, size_t ldb, float *C, size_t ldc)
{
    /* Column panels of 24 outer, row blocks inner: 4 rows for 24 or 16 columns, up to 12
     * (three packed blocks) for 8 or fewer, so that a panel keeps 8-12 FMA chains in flight.
     * A panel of B is read in place when its rows are contiguous (the Winograd chunks' V),
     * else copied contiguous first when several row blocks read it, as hc_gemm does. */
    enum { PACK_K = 512, PACK_W = 24 };
    float panel[PACK_K * PACK_W]; /* no arithmetic: a copy */
    static const kern_fn k24[2] = {kernp_4_3_0, kernp_4_3_1}, k16[2] = {kernp_4_2_0, kernp_4_2_1};
    static const kern_fn k8[3][2] = {{kernp_4_1_0, kernp_4_1_1}, {kernp_8_1_0, kernp_8_1_1},
                                     {kernp_12_1_0, kernp_12_1_1}};
    size_t bs = (size_t)4 * (size_t)K;
    for (int j0 = 0; j0 < N; j0 += 24) {
        int n = N - j0 < 24 ? N - j0 : 24;
        int nv = (n + 7) / 8, last = n - 8 * (nv - 1), part = last < 8;
        const float *bp = B + j0;
        size_t ldp = ldb;
        if (M > 12 && K <= PACK_K && ldb != (size_t)(8 * nv)) {
            copy_panel(B + j0, ldb, K, nv, last, panel, NULL, 0);
            bp = panel;
            ldp = (size_t)(8 * nv);
        }
        for (int i0 = 0; i0 < M;) {
            int mr = nv > 1 ? 4 : M - i0 >= 12 ? 12 : M - i0 >= 8 ? 8 : 4;
            kern_fn f = nv == 3 ? k24[part] : nv == 2 ? k16[part] : k8[mr / 4 - 1][part];
            f(K, A + (size_t)(i0 / 4) * bs, 1, 4, bp, ldp, C + (size_t)i0 * ldc + j0, ldc, 0, last);
            i0 += mr;
        }
    }
}

void hc_gemm(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
             size_t ldb, float *C, size_t ldc, int accumulate)
{
    /* Column panels outer (a K x nr panel of B, copied contiguous when several row blocks
     * read it, stays in L1 while every row block of A passes over it), row blocks inner.
     * Panels of 24 columns (4 x 3 kernel) while such a panel fits L1, else 16 (6 x 2). A
     * Winograd chunk of 24 columns is then one panel: A is read once. */
    enum { PACK_K = 512, PACK_W = 24, WIDE_K = 256 };
    float panel[PACK_K * PACK_W]; /* no arithmetic: a copy */
    int nr = K <= WIDE_K ? 24 : 16;
    for (int j0 = 0; j0 < N; j0 += nr) {
        int n = N - j0 < nr ? N - j0 : nr;
        int nv = (n + 7) / 8, last = n - 8 * (nv - 1), mr_max = kern_rows[nv - 1];
        const float *bp = B + j0;
        size_t ldp = ldb;
        if (M > mr_max && K <= PACK_K && ldb != (size_t)(8 * nv)) {
            /* The rows of the next nr columns, whether this call's next panel or, past N,
             * the next call's first one: the Winograd tile GEMMs and the attention strips
             * walk B left to right, a call's B starting where the last one's ended. Rows far
             * apart (ldb 36 x chunk, batch x 361) are not followed by the hardware
             * prefetchers. Into L2: A streaming through L1 while this panel is used would
             * evict them from L1 before their turn. Its first and last column: 24 floats
             * span two or three lines. */
            size_t pf0 = (size_t)(j0 + n), pf1 = pf0 + (size_t)nr - 1;
            if (pf1 >= ldb)
                pf1 = ldb - 1;
            copy_panel(B + j0, ldb, K, nv, last, panel, pf0 < ldb ? B + pf0 : NULL, pf1 - pf0);
            bp = panel;
            ldp = (size_t)(8 * nv);
        }
        /* row blocks splitting M as evenly as possible: the first `extra` of nb blocks take
         * one row more than the rest, so no block of one or two rows (too few FMA chains to
         * fill the pipes) follows a run of full ones */
        int nb = (M + mr_max - 1) / mr_max, base = M / nb, extra = M % nb;
        for (int ib = 0, i0 = 0; ib < nb; ib++) {
            int mr = base + (ib < extra);
            if (ib + 1 < nb)
                prefetch_a(A + (size_t)(i0 + mr) * rsa, base + (ib + 1 < extra), K, rsa, csa);
            kerns[nv - 1][mr - 1][last < 8](K, A + (size_t)i0 * rsa, rsa, csa, bp, ldp,
                                            C + (size_t)i0 * ldc + j0, ldc, accumulate, last);
            i0 += mr;
        }
    }
}

#elif defined(__aarch64__)
#include <arm_neon.h>

/* The NEON form (every aarch64 target has Advanced SIMD): blocks of MR rows x NV vectors of 4
 * columns, the last vector holding `last` (1..4) columns when PART. NEON has no masked loads or
 * stores: a partial vector goes through a zeroed 4-float buffer (the columns past N are never
 * read or written). Each lane is one output's chain, vfmaq_f32 being the same single-rounding
 * FMA as fmaf and _mm256_fmadd_ps, over k in order from 0: the bits equal the other forms'. The
 * 32 registers hold 6 x 4, 8 x 3 or 12 x 2 accumulators with B's vectors and one broadcast. */
static inline float32x4_t neon_load_part(const float *p, int n)
{
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n; j++)
        t[j] = p[j];
    return vld1q_f32(t);
}

static inline void neon_store_part(float *p, float32x4_t v, int n)
{
    float t[4];
    vst1q_f32(t, v);
    for (int j = 0; j < n; j++)
        p[j] = t[j];
}

#define HC_KERN(MR, NV, PART)                                                                    \
    static void kern_##MR##_##NV##_##PART(int K, const float *A, size_t rsa, size_t csa,       \
                                          const float *B, size_t ldb, float *C, size_t ldc,    \
                                          int accumulate, int last)                            \
    {                                                                                          \
        float32x4_t acc[MR][NV];                                                               \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                   \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = vdupq_n_f32(0.0f); \
        _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {                                   \
            const float *b = B + (size_t)k * ldb;                                              \
            float32x4_t bv[NV];                                                                \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] =                       \
                (PART && v == NV - 1) ? neon_load_part(b + 4 * v, last) : vld1q_f32(b + 4 * v); \
            const float *a = A + (size_t)k * csa;                                              \
            _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                               \
            {                                                                                  \
                float32x4_t av = vld1q_dup_f32(a + (size_t)i * rsa);                           \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] =               \
                    vfmaq_f32(acc[i][v], av, bv[v]);                                           \
            }                                                                                  \
        }                                                                                      \
        _Pragma("GCC unroll 12") for (int i = 0; i < MR; i++)                                   \
        {                                                                                      \
            float *c = C + (size_t)i * ldc;                                                    \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                               \
            {                                                                                  \
                float32x4_t r = acc[i][v];                                                     \
                if (PART && v == NV - 1) {                                                     \
                    if (accumulate)                                                            \
                        r = vaddq_f32(neon_load_part(c + 4 * v, last), r);                     \
                    neon_store_part(c + 4 * v, r, last);                                       \
                } else {                                                                       \
                    if (accumulate)                                                            \
                        r = vaddq_f32(vld1q_f32(c + 4 * v), r);                                \
                    vst1q_f32(c + 4 * v, r);                                                   \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

#define HC_KERN_V(MR, NV) HC_KERN(MR, NV, 0) HC_KERN(MR, NV, 1)
HC_KERN_V(1, 4)
HC_KERN_V(2, 4)
HC_KERN_V(3, 4)
HC_KERN_V(4, 4)
HC_KERN_V(5, 4)
HC_KERN_V(6, 4)
HC_KERN_V(1, 3)
HC_KERN_V(2, 3)
HC_KERN_V(3, 3)
HC_KERN_V(4, 3)
HC_KERN_V(5, 3)
HC_KERN_V(6, 3)
HC_KERN_V(7, 3)
HC_KERN_V(8, 3)
HC_KERN_V(1, 2)
HC_KERN_V(2, 2)
HC_KERN_V(3, 2)
HC_KERN_V(4, 2)
HC_KERN_V(5, 2)
HC_KERN_V(6, 2)
HC_KERN_V(7, 2)
HC_KERN_V(8, 2)
HC_KERN_V(9, 2)
HC_KERN_V(10, 2)
HC_KERN_V(11, 2)
HC_KERN_V(12, 2)
HC_KERN_V(1, 1)
HC_KERN_V(2, 1)
HC_KERN_V(3, 1)
HC_KERN_V(4, 1)
HC_KERN_V(5, 1)
HC_KERN_V(6, 1)
HC_KERN_V(7, 1)
HC_KERN_V(8, 1)
HC_KERN_V(9, 1)
HC_KERN_V(10, 1)
HC_KERN_V(11, 1)
HC_KERN_V(12, 1)

typedef void (*kern_fn)(int, const float *, size_t, size_t, const float *, size_t, float *, size_t,
                        int, int);
#define HC_K2(MR, NV) {kern_##MR##_##NV##_0, kern_##MR##_##NV##_1}
/* [vectors - 1][rows - 1][partial last vector] */
static const kern_fn kerns[4][12][2] = {
    {HC_K2(1, 1), HC_K2(2, 1), HC_K2(3, 1), HC_K2(4, 1), HC_K2(5, 1), HC_K2(6, 1), HC_K2(7, 1),
     HC_K2(8, 1), HC_K2(9, 1), HC_K2(10, 1), HC_K2(11, 1), HC_K2(12, 1)},
    {HC_K2(1, 2), HC_K2(2, 2), HC_K2(3, 2), HC_K2(4, 2), HC_K2(5, 2), HC_K2(6, 2), HC_K2(7, 2),
     HC_K2(8, 2), HC_K2(9, 2), HC_K2(10, 2), HC_K2(11, 2), HC_K2(12, 2)},
    {HC_K2(1, 3), HC_K2(2, 3), HC_K2(3, 3), HC_K2(4, 3), HC_K2(5, 3), HC_K2(6, 3), HC_K2(7, 3),
     HC_K2(8, 3)},
    {HC_K2(1, 4), HC_K2(2, 4), HC_K2(3, 4), HC_K2(4, 4), HC_K2(5, 4), HC_K2(6, 4)},
};
static const int kern_rows[4] = {12, 12, 8, 6};

void hc_gemm(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
             size_t ldb, float *C, size_t ldc, int accumulate)
{
    /* As the AVX2 form: column panels of 16 outer (a K x 16 panel of B, copied contiguous and
     * zero-padded to whole vectors when several row blocks read it), row blocks split evenly
     * inner. The copy is no arithmetic; a padded panel is read as full vectors (its zero
     * columns are computed and never stored). */
    enum { PACK_K = 512, NR = 16 };
    float panel[PACK_K * NR];
    for (int j0 = 0; j0 < N; j0 += NR) {
        int n = N - j0 < NR ? N - j0 : NR;
        int nv = (n + 3) / 4, last = n - 4 * (nv - 1), mr_max = kern_rows[nv - 1];
        int part = last < 4;
        const float *bp = B + j0;
        size_t ldp = ldb;
        if (M > mr_max && K <= PACK_K && ldb != (size_t)(4 * nv)) {
            for (int k = 0; k < K; k++) {
                const float *b = B + (size_t)k * ldb + j0;
                float *p = panel + (size_t)k * 4 * nv;
                for (int v = 0; v < nv - 1; v++)
                    vst1q_f32(p + 4 * v, vld1q_f32(b + 4 * v));
                vst1q_f32(p + 4 * (nv - 1), neon_load_part(b + 4 * (nv - 1), last));
            }
            bp = panel;
            ldp = (size_t)(4 * nv);
        }
        int nb = (M + mr_max - 1) / mr_max, base = M / nb, extra = M % nb;
        for (int ib = 0, i0 = 0; ib < nb; ib++) {
            int mr = base + (ib < extra);
            kerns[nv - 1][mr - 1][part](K, A + (size_t)i0 * rsa, rsa, csa, bp, ldp,
                                        C + (size_t)i0 * ldc + j0, ldc, accumulate, last);
            i0 += mr;
        }
    }
}

#else

void hc_gemm(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
             size_t ldb, float *C, size_t ldc, int accumulate)
{
    hc_gemm_ref(M, N, K, A, rsa, csa, B, ldb, C, ldc, accumulate);
}

#endif

void hc_gemm_p4_pack(int M, int K, const float *A, size_t rsa, size_t csa, float *P)
{
    for (size_t i = 0; i < (size_t)M; i++)
        for (size_t k = 0; k < (size_t)K; k++)
            P[(i / 4) * 4 * (size_t)K + k * 4 + i % 4] = A[i * rsa + k * csa];
}

void hc_gemm_p4_unpack(int M, int K, const float *P, float *A, size_t rsa, size_t csa)
{
    for (size_t i = 0; i < (size_t)M; i++)
        for (size_t k = 0; k < (size_t)K; k++)
            A[i * rsa + k * csa] = P[(i / 4) * 4 * (size_t)K + k * 4 + i % 4];
}

void hc_gemm_p4_ref(int M, int N, int K, const float *A, const float *B, size_t ldb, float *C, size_t ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = fmaf(A[(size_t)(i / 4) * 4 * (size_t)K + (size_t)k * 4 + (size_t)(i % 4)],
                           B[(size_t)k * ldb + j], acc);
            C[(size_t)i * ldc + j] = acc;
        }
}

#if !(defined(__FMA__) && defined(__AVX2__)) || defined(__AVX512F__)
void hc_gemm_p4(int M, int N, int K, const float *A, const float *B, size_t ldb, float *C, size_t ldc)
{
    hc_gemm_p4_ref(M, N, K, A, B, ldb, C, ldc);
}

int hc_gemm_p4_fast(void)
{
    return 0;
}
#else
int hc_gemm_p4_fast(void)
{
    return 1;
}
#endif

const char *hc_gemm_isa(void)
{
#if defined(__AVX512F__)
    return "avx512";
#elif defined(__FMA__) && defined(__AVX2__)
    return "avx2";
#elif defined(__aarch64__)
    return "neon";
#else
    return "scalar";
#endif
}
