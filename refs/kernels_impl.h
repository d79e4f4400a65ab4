/* Internal to refs/'s kernel files: the 8-lane vector helpers they share (static inline, as they
 * were when one file held every kernel) and the entry points between the convolution, Winograd and
 * emulation files. Not part of the kernels' public API (kernels.h). */
#ifndef HC_KERNELS_IMPL_H
#define HC_KERNELS_IMPL_H

#include <stdint.h>
#include <string.h>

#include "harness/base/hcmath.h"
#include "refs/kernels.h"

#ifdef __AVX__
#include <immintrin.h>
#endif

/* aarch64: the vector exp, the activations, the Winograd transforms and the softmax strips are
 * NEON intrinsics (refs/kernels_neon.h), the same operations per lane as the vector-extension
 * forms below; -DHC_NO_NEON keeps those forms instead (a baseline for measuring the NEON ones). */
#if defined(__aarch64__) && !defined(HC_NO_NEON)
#define HC_NEON 1
#include "refs/kernels_neon.h"
#endif


/* The 8-lane helpers are static, so passing 32-byte vectors by value never crosses an ABI
 * boundary; GCC warns about it when AVX is off (SAN=1 builds without -march=native). */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float hc_v8f __attribute__((vector_size(32)));

typedef int32_t hc_v8i __attribute__((vector_size(32)));
typedef float hc_v4f __attribute__((vector_size(16)));

static inline hc_v8f v8_splat(float x)
{
    hc_v8f v = {x, x, x, x, x, x, x, x};
    return v;
}

static inline hc_v8f v8_select(hc_v8i m, hc_v8f a, hc_v8f b) /* m ? a : b per lane */
{
    return (hc_v8f)(((hc_v8i)a & m) | ((hc_v8i)b & ~m));
}

/* a > b ? a : b per lane (b when either is NaN, and for +0 against -0): MAXPS's definition, one
 * instruction where AVX is on (GCC keeps the compare and blend of the select form). */
static inline hc_v8f v8_max(hc_v8f a, hc_v8f b)
{
#ifdef __AVX__
    return (hc_v8f)_mm256_max_ps((__m256)a, (__m256)b);
#else
    return v8_select(a > b, a, b);
#endif
}

/* a < b ? a : b per lane: MINPS's definition, as v8_max. */
static inline hc_v8f v8_min(hc_v8f a, hc_v8f b)
{
#ifdef __AVX__
    return (hc_v8f)_mm256_min_ps((__m256)a, (__m256)b);
#else
    return v8_select(a < b, a, b);
#endif
}

/* Loads / stores k <= 8 floats (fixed-size copies for full vectors, so they compile to moves). */
static inline hc_v8f v8_load(const float *p, int k)
{
    hc_v8f v = {0};
    if (k == 8)
        memcpy(&v, p, sizeof v);
    else
        for (int j = 0; j < k; j++)
            v[j] = p[j];
    return v;
}

static inline void v8_store(float *p, hc_v8f v, int k)
{
    if (k == 8)
        memcpy(p, &v, sizeof v);
    else
        for (int j = 0; j < k; j++)
            p[j] = v[j];
}

/* exp over 8 lanes (GCC vector extensions): HC_EXPF_REDUCE, hcmath.h's one definition that
 * hc_expf expands too, so each lane has hc_expf's bits. Inputs are clamped to [-87, 88] (a finite
 * result, never inf; hc_expf's own range where 2^k is a normal float). Used by the attention
 * softmax, SwiGLU and the vector Mish and SiLU (KataGo uses expf there; this differs by rounding
 * only). */

#ifdef HC_NEON
/* An 8-lane vector as its two NEON halves (lanes 0-3, 4-7) and back: register moves. */
static inline void v8_split(hc_v8f v, float32x4_t *lo, float32x4_t *hi)
{
    memcpy(lo, &v, sizeof *lo);
    memcpy(hi, (const char *)&v + sizeof *lo, sizeof *hi);
}

static inline hc_v8f v8_join(float32x4_t lo, float32x4_t hi)
{
    hc_v8f v;
    memcpy(&v, &lo, sizeof lo);
    memcpy((char *)&v + sizeof lo, &hi, sizeof hi);
    return v;
}

#define HC_V8_BY_HALVES(fn, x)                                                                  \
    do {                                                                                       \
        float32x4_t lo_, hi_;                                                                  \
        v8_split(x, &lo_, &hi_);                                                               \
        return v8_join(fn(lo_), fn(hi_));                                                      \
    } while (0)

static inline hc_v8f vexp8(hc_v8f x)
{
    HC_V8_BY_HALVES(n4_exp, x);
}

static inline hc_v8f vmish8(hc_v8f x)
{
    HC_V8_BY_HALVES(n4_mish, x);
}

static inline hc_v8f vsilu8(hc_v8f x)
{
    HC_V8_BY_HALVES(n4_silu, x);
}
#else
static inline hc_v8f vexp8(hc_v8f x)
{
    const hc_v8f lo = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
    const hc_v8f hi = {88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f};
    /* x < lo ? lo : x, then x > hi ? hi : x (NaN passes both) as one MAXPS and one MINPS */
    x = v8_min(hi, v8_max(lo, x));
    hc_v8f k, r, p;
    HC_EXPF_REDUCE(x, k, r, p);
    hc_v8i e = (__builtin_convertvector(k, hc_v8i) + 127) << 23;
    hc_v8f sc;
    memcpy(&sc, &e, sizeof sc);
    return p * sc;
}

/* mish(x) = x * tanh(softplus(x)) = x * n(n+2) / (n(n+2) + 2) with n = exp(x): no log or
 * tanh, no cancellation; x >= 20 gives x as KataGo's form does (the ratio rounds to 1). */
static inline hc_v8f vmish8(hc_v8f x)
{
    const hc_v8f twenty = v8_splat(20.0f);
    hc_v8f n = vexp8(v8_select(x < twenty, x, twenty));
    hc_v8f q = n * (n + 2.0f);
    return x * (q / (q + 2.0f));
}

static inline hc_v8f vsilu8(hc_v8f x)
{
    return x / (vexp8(-x) + 1.0f);
}
#endif

/* hc_bn_act's arithmetic on 8 values whose mask values are mk: each lane does exactly what
 * hc_bn_act does to one element (the same expression, the same vector mish / silu). */
static inline hc_v8f bn_act8(hc_v8f v, float sc, float bi, int act, hc_v8f mk)
{
    const hc_v8f zero = v8_splat(0.0f);
    hc_v8f x = v * sc + bi, y;
    switch (act) {
    case HC_ACT_IDENTITY: y = x; break;
    case HC_ACT_RELU: y = v8_select(x > zero, x, zero); break;
    case HC_ACT_MISH: y = vmish8(x); break;
    case HC_ACT_SILU: y = vsilu8(x); break;
    default:
        for (int l = 0; l < 8; l++)
            y[l] = hc_act_apply(act, x[l]);
        break;
    }
    return v8_select(mk == 1.0f, y, zero);
}

/* C (M x N, row stride ldc) = A (M x K) * B (K x N) accumulated in fp16 (hc_kconv_set_modes);
 * tmp holds M x N floats. refs/emulated.c. */
void hc_sgemm_acc16(int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *C, int ldc,
                    float *tmp);

/* C(m,n) = sum_k A(m,k) X(k,n) with fp16 accumulation, every operand addressed by strides
 * (refs/emulated.c). */
void hc_gemm_acc16_strided(int M, int N, int K, const float *A, size_t sam, size_t sak, const float *X,
                           size_t sxk, size_t sxn, float *C, size_t scm, size_t scn);

/* Puts cv->wino back in [36][oc][ic] after hc_kconv_pack (for the fp16-accumulation GEMMs, which
 * read that layout); a no-op when it is not packed. */
void hc_wino_unpack(hc_kconv *cv);

/* A Winograd convolution (cv->wino set: F(4x4,3x3) or F(2x2,5x5)) over the whole batch, and the
 * workspace it needs (refs/winograd.c). epi: hc_kconv_run_bn's epilogue or NULL. */
void hc_wino_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out, int accumulate,
                 float *ws, const hc_kepi *epi);
size_t hc_wino_workspace(const hc_kconv *cv, int batch, int nx, int ny);

/* MLX's F(2x2,3x3) (cv->wino2 set) over the whole batch, and its workspace (refs/emulated.c). */
void hc_wino2_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out, int accumulate,
                  float *ws);
size_t hc_wino2_workspace(const hc_kconv *cv, int nx, int ny);

#endif
