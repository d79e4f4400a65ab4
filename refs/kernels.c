#include "kernels.h"
#include "gemm.h"
#include "round.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

/* The 8-lane helpers are static, so passing 32-byte vectors by value never crosses an ABI
 * boundary; GCC warns about it when AVX is off (SAN=1 builds without -march=native). */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float hc_v8f __attribute__((vector_size(32)));

/* Eight lanes rounded to an emulated format with hc_round_fmt_array's bits, in registers: a
 * round trip through memory per 8 scores stalled on store forwarding (a quarter of a
 * transformer's emulation time). */
static inline hc_v8f v8_round(int fmt, hc_v8f v)
{
#ifdef HC_ROUND_M256
    if (fmt == HC_KFMT_FP16)
        return (hc_v8f)hc_round_fp16_m256((__m256)v);
    if (fmt == HC_KFMT_BF16)
        return (hc_v8f)hc_round_bf16_m256((__m256)v);
    return v;
#else
    float t[8];
    memcpy(t, &v, sizeof t);
    hc_round_fmt_array(fmt, t, 8);
    memcpy(&v, t, sizeof v);
    return v;
#endif
}
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

/* exp over an array, 8 lanes at a time (GCC vector extensions), within ~2 ulp of expf: range
 * reduction by ln 2 (split in two constants), a degree-6 polynomial, 2^k from the exponent
 * bits. Inputs are clamped to [-87, 88] (a finite result, never inf). Used by the attention
 * softmax and SwiGLU (KataGo uses expf there; this differs by rounding only). */

static inline hc_v8f vexp8(hc_v8f x)
{
    const hc_v8f lo = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
    const hc_v8f hi = {88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f};
    /* x < lo ? lo : x, then x > hi ? hi : x (NaN passes both) as one MAXPS and one MINPS */
    x = v8_min(hi, v8_max(lo, x));
    hc_v8f t = x * 1.44269504088896341f + 12582912.0f; /* round to nearest via 1.5 * 2^23 */
    hc_v8f k = t - 12582912.0f;
    hc_v8f r = x - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    hc_v8f p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
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

int hc_act_valid(int code)
{
    return code == HC_ACT_IDENTITY || code == HC_ACT_RELU || code == HC_ACT_MISH ||
           code == HC_ACT_SILU || code == HC_ACT_MISH_SCALE8;
}

static inline float mish_softplus(float x)
{
    float lo = x < 20.0f ? x : 20.0f;
    float hi = x > 20.0f ? x : 20.0f;
    return log1pf(expf(lo)) + (hi - 20.0f);
}

float hc_act_apply(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(mish_softplus(x));
    case HC_ACT_SILU: return x / (expf(-x) + 1.0f);
    case HC_ACT_MISH_SCALE8: return x * tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

float hc_act_apply_rmstip(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(x < 20.0f ? log1pf(expf(x)) : x);
    case HC_ACT_SILU: return x / (1.0f + expf(-x));
    case HC_ACT_MISH_SCALE8: return x * tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

void hc_mask_from_input(int batch, int hw, int c_spatial, const float *spatial, float *mask,
                        float *mask_sum)
{
    for (int b = 0; b < batch; b++) {
        const float *src = spatial + (size_t)b * c_spatial * hw;
        float s = 0.0f;
        for (int p = 0; p < hw; p++) {
            mask[(size_t)b * hw + p] = src[p];
            s += src[p];
        }
        mask_sum[b] = s;
    }
}

/* ---- convolution ---------------------------------------------------------------------- */

int hc_kconv_init(hc_kconv *cv, const float *weights, int oc, int ic, int kh, int kw, hc_err *err)
{
    memset(cv, 0, sizeof *cv);
    if (oc <= 0 || ic <= 0 || kh <= 0 || kw <= 0 || kh % 2 != 1 || kw % 2 != 1)
        return hc_err_set(err, HC_EINTERNAL, "conv %dx%d %d->%d: unsupported shape", kh, kw, ic,
                          oc);
    cv->w = weights;
    cv->wino = NULL;
    cv->oc = oc;
    cv->ic = ic;
    cv->kh = kh;
    cv->kw = kw;
    return 0;
}

void hc_kconv_free(hc_kconv *cv)
{
    if (cv) {
        free(cv->wino);
        cv->wino = NULL;
        free(cv->wino2);
        cv->wino2 = NULL;
    }
}

/* G (6x3) of F(4x4,3x3) on 3 values, rounded exactly where KataGo's Eigen backend rounds
 * (float sums for the 1/6 rows, double sums for the 1/24 rows, float between the two passes),
 * so that the transformed weights are KataGo's to the bit. */
static void wino_g(float *a0, float *a1, float *a2, float *a3, float *a4, float *a5)
{
    float z0 = *a0, z1 = *a1, z2 = *a2;
    *a0 = 0.25f * z0;
    *a1 = (float)((1.0 / 6.0) * (-z0 - z1 - z2));
    *a2 = (float)((1.0 / 6.0) * (-z0 + z1 - z2));
    *a3 = (float)((1.0 / 24.0) * (z0 + 2.0 * z1 + 4.0 * z2));
    *a4 = (float)((1.0 / 24.0) * (z0 - 2.0 * z1 + 4.0 * z2));
    *a5 = 1.0f * z2;
}

/* The 6x5 G of F(2x2,5x5), rounded where KataGo's Eigen backend rounds. */
static void wino_g5(float *a0, float *a1, float *a2, float *a3, float *a4, float *a5)
{
    float z0 = *a0, z1 = *a1, z2 = *a2, z3 = *a3, z4 = *a4;
    *a0 = 0.25f * z0;
    *a1 = (float)((1.0 / 6.0) * (-z0 - z1 - z2 - z3 - z4));
    *a2 = (float)((1.0 / 6.0) * (-z0 + z1 - z2 + z3 - z4));
    *a3 = (float)((1.0 / 24.0) * (z0 + 2.0 * z1 + 4.0 * z2 + 8.0 * z3 + 16.0 * z4));
    *a4 = (float)((1.0 / 24.0) * (z0 - 2.0 * z1 + 4.0 * z2 - 8.0 * z3 + 16.0 * z4));
    *a5 = 1.0f * z4;
}

/* 5x5 convolutions by F(2x2,5x5) on 6x6 tiles, as KataGo's Eigen backend runs them (the
 * initial conv of most nets): the same transforms in the same order, so the only difference
 * left is the GEMMs' summation order. */
static int use_winograd5(hc_kconv *cv, hc_err *err)
{
    size_t per = (size_t)cv->oc * cv->ic;
    cv->wino = hc_malloc(36 * per * sizeof(float), err, "winograd weights");
    if (!cv->wino)
        return -1;
    for (int o = 0; o < cv->oc; o++)
        for (int i = 0; i < cv->ic; i++) {
            const float *g = cv->w + ((size_t)o * cv->ic + i) * 25;
            float u[6][6] = {{0}};
            for (int y = 0; y < 5; y++)
                for (int x = 0; x < 5; x++)
                    u[y][x] = g[y * 5 + x];
            for (int y = 0; y < 5; y++)
                wino_g5(&u[y][0], &u[y][1], &u[y][2], &u[y][3], &u[y][4], &u[y][5]);
            for (int x = 0; x < 6; x++)
                wino_g5(&u[0][x], &u[1][x], &u[2][x], &u[3][x], &u[4][x], &u[5][x]);
            for (int k = 0; k < 36; k++)
                cv->wino[(size_t)k * per + (size_t)o * cv->ic + i] = u[k / 6][k % 6];
        }
    return 0;
}

int hc_kconv_use_winograd(hc_kconv *cv, hc_err *err)
{
    if (cv->wino)
        return 0;
    if (cv->kh == 5 && cv->kw == 5)
        return use_winograd5(cv, err);
    if (cv->kh != 3 || cv->kw != 3)
        return 0;
    size_t per = (size_t)cv->oc * cv->ic;
    cv->wino = hc_malloc(36 * per * sizeof(float), err, "winograd weights");
    if (!cv->wino)
        return -1;
    for (int o = 0; o < cv->oc; o++)
        for (int i = 0; i < cv->ic; i++) {
            const float *g = cv->w + ((size_t)o * cv->ic + i) * 9;
            float u[6][6] = {{0}};
            for (int y = 0; y < 3; y++)
                for (int x = 0; x < 3; x++)
                    u[y][x] = g[y * 3 + x];
            for (int y = 0; y < 3; y++) /* along x first, as KataGo */
                wino_g(&u[y][0], &u[y][1], &u[y][2], &u[y][3], &u[y][4], &u[y][5]);
            for (int x = 0; x < 6; x++) /* then along y */
                wino_g(&u[0][x], &u[1][x], &u[2][x], &u[3][x], &u[4][x], &u[5][x]);
            for (int k = 0; k < 36; k++)
                cv->wino[(size_t)k * per + (size_t)o * cv->ic + i] = u[k / 6][k % 6];
        }
    return 0;
}

static int wino_tiles(int nx, int ny)
{
    return ((nx + 3) / 4) * ((ny + 3) / 4);
}

void hc_kconv_set_modes(hc_kconv *cv, int acc_fp16, int tiles_fp16)
{
    cv->acc_fp16 = acc_fp16 != 0;
    cv->tiles_fp16 = tiles_fp16 != 0 && (cv->wino || cv->wino2) && cv->kh == 3;
    if (cv->tiles_fp16 && cv->wino2)
        hc_round_fp16_array(cv->wino2, (size_t)16 * cv->oc * cv->ic);
    else if (cv->tiles_fp16)
        hc_round_fp16_array(cv->wino, (size_t)36 * cv->oc * cv->ic);
}

/* C (M x N, row stride ldc) = A (M x K) * B (K x N) accumulated in fp16 (hc_kconv_set_modes);
 * tmp holds M x N floats. */
static void sgemm_acc16(int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
                        int ldc, float *tmp)
{
    for (int k0 = 0; k0 < K; k0 += HC_ACC16_CHUNK) {
        int kc = K - k0 < HC_ACC16_CHUNK ? K - k0 : HC_ACC16_CHUNK;
        hc_gemm(M, N, kc, A + k0, (size_t)lda, 1, B + (size_t)k0 * ldb, (size_t)ldb, tmp, (size_t)N, 0);
        for (int i = 0; i < M; i++) {
            float *c = C + (size_t)i * ldc;
            const float *t = tmp + (size_t)i * N;
            for (int j = 0; j < N; j++) {
                float part = hc_round_fp16(t[j]);
                c[j] = k0 ? hc_round_fp16(c[j] + part) : part;
            }
        }
    }
}

static int wino5_tiles(int nx, int ny)
{
    return ((nx + 1) / 2) * ((ny + 1) / 2);
}

/* Winograd runs over chunks of WINO_NC (row, tile) pairs of the thread's rows: every tile GEMM
 * then has up to WINO_NC columns whatever the board size. */
#if defined(__AVX512F__)
enum { WINO_NC = 32 }; /* two full 16-lane vectors in refs/gemm.c's AVX-512 kernel; L2 is larger there too */
#elif defined(__AVX2__)
enum { WINO_NC = 24 }; /* one 24-column panel of refs/gemm.c's AVX2 4x3-vector kernel, read in place (A read once) */
#else
enum { WINO_NC = 24 };
#endif

static int wino_chunk(const hc_kconv *cv, int batch, int nx, int ny)
{
    int T = cv->kh == 5 ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    long all = (long)batch * T;
    return all < WINO_NC ? (int)all : WINO_NC;
}

/* The row stride of V and M: the chunk rounded up to whole 8-lane vectors, so that the
 * transforms load and store full vectors (the GEMMs read and write only the chunk's n columns;
 * the columns past n are never used). */
static int wino_ld(int nc)
{
    return (nc + 7) & ~7;
}

/* Floats from one tile's V block to the next (AVX2 form): the chunk's ic rows, plus a line so
 * that a tile's 36 stores do not fall on the same few 4 KiB offsets (they did with blocks of
 * 96 x 16 floats: false store-to-load dependencies made the input transform 1.6x slower). */
enum { WINO_VPAD = 16 };
static size_t wino_vk(const hc_kconv *cv, int ld)
{
    return (size_t)cv->ic * ld + WINO_VPAD;
}

#if defined(__AVX2__)
#include <immintrin.h>
#define WINO_AVX2 1 /* transforms gather from and scatter to the planes directly (no padded copy) */
enum {
    WINO_PF = 2,  /* channels ahead whose span of the planes is prefetched */
    WINO_OB = 96, /* output channels per block of tile GEMMs (fewer were slower: more calls) */
};
#endif

#ifndef WINO_AVX2
/* The input planes of a chunk's rows are copied into a zero-bordered buffer so that every
 * tile's 6x6 gather is unconditional: rows of one channel, each (tyn-1)*step+6 by
 * (txn-1)*step+6 with the board at (off, off). */
static void wino_pad_dims(const hc_kconv *cv, int batch, int nx, int ny, int *wp, int *hp,
                          int *rows)
{
    int five = cv->kh == 5, step = five ? 2 : 4;
    int txn = (nx + step - 1) / step, tyn = (ny + step - 1) / step;
    int T = txn * tyn, nc = wino_chunk(cv, batch, nx, ny);
    *wp = (txn - 1) * step + 6;
    *hp = (tyn - 1) * step + 6;
    *rows = (nc - 1) / T + 2 < batch ? (nc - 1) / T + 2 : batch;
}
#endif

static size_t wino_pad_size(const hc_kconv *cv, int batch, int nx, int ny)
{
#ifdef WINO_AVX2
    (void)cv, (void)batch, (void)nx, (void)ny;
    return 0; /* the AVX2 transforms read the planes in place */
#else
    int wp, hp, rows;
    wino_pad_dims(cv, batch, nx, ny, &wp, &hp, &rows);
    return (size_t)wp * hp * rows + 8; /* + 8: the last tile's rows are read 8 wide */
#endif
}

#ifndef WINO_AVX2
/* Copies n floats without a library call (rows are short: 19 floats on a 19x19 board). */
static inline void copy_short(float *d, const float *s, int n)
{
    int x = 0;
    for (; x + 8 <= n; x += 8)
        memcpy(d + x, s + x, 8 * sizeof(float));
    for (; x < n; x++)
        d[x] = s[x];
}
#endif

/* Two-vector lane shuffle with constant indices: GCC and clang (the fuzz build) spell it
 * differently. */
#if defined(__clang__)
#define SHUF8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUF8(a, b, ...) __builtin_shuffle(a, b, (hc_v8i){__VA_ARGS__})
#endif

/* d[l] = (r[0][l], ..., r[7][l]): an 8x8 transpose (pure data movement). */
static inline void transpose8x8(const hc_v8f r[8], hc_v8f d[8])
{
    hc_v8f t0 = SHUF8(r[0], r[1], 0,8,1,9,4,12,5,13), t1 = SHUF8(r[0], r[1], 2,10,3,11,6,14,7,15);
    hc_v8f t2 = SHUF8(r[2], r[3], 0,8,1,9,4,12,5,13), t3 = SHUF8(r[2], r[3], 2,10,3,11,6,14,7,15);
    hc_v8f t4 = SHUF8(r[4], r[5], 0,8,1,9,4,12,5,13), t5 = SHUF8(r[4], r[5], 2,10,3,11,6,14,7,15);
    hc_v8f t6 = SHUF8(r[6], r[7], 0,8,1,9,4,12,5,13), t7 = SHUF8(r[6], r[7], 2,10,3,11,6,14,7,15);
    hc_v8f u0 = SHUF8(t0, t2, 0,1,8,9,4,5,12,13), u1 = SHUF8(t0, t2, 2,3,10,11,6,7,14,15);
    hc_v8f u2 = SHUF8(t1, t3, 0,1,8,9,4,5,12,13), u3 = SHUF8(t1, t3, 2,3,10,11,6,7,14,15);
    hc_v8f u4 = SHUF8(t4, t6, 0,1,8,9,4,5,12,13), u5 = SHUF8(t4, t6, 2,3,10,11,6,7,14,15);
    hc_v8f u6 = SHUF8(t5, t7, 0,1,8,9,4,5,12,13), u7 = SHUF8(t5, t7, 2,3,10,11,6,7,14,15);
    d[0] = SHUF8(u0, u4, 0,1,2,3,8,9,10,11);
    d[1] = SHUF8(u1, u5, 0,1,2,3,8,9,10,11);
    d[2] = SHUF8(u2, u6, 0,1,2,3,8,9,10,11);
    d[3] = SHUF8(u3, u7, 0,1,2,3,8,9,10,11);
    d[4] = SHUF8(u0, u4, 4,5,6,7,12,13,14,15);
    d[5] = SHUF8(u1, u5, 4,5,6,7,12,13,14,15);
    d[6] = SHUF8(u2, u6, 4,5,6,7,12,13,14,15);
    d[7] = SHUF8(u3, u7, 4,5,6,7,12,13,14,15);
}

/* d[c][l] = r[l][c] for c < 6: the first six rows of the 8x8 transpose (the two it does not
 * keep are dropped by the compiler once inlined). */
static inline void transpose8x6(const hc_v8f r[8], hc_v8f *d)
{
    hc_v8f t[8];
    transpose8x8(r, t);
    for (int c = 0; c < 6; c++)
        d[c] = t[c];
}

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

size_t hc_kconv_workspace(const hc_kconv *cv, int batch, int nx, int ny)
{
    if (cv->wino2) /* V [16][ic][T] and M [16][oc][T] of one row (+ an fp16-accumulation chunk) */
        return (size_t)(16 * (cv->ic + cv->oc) + (cv->acc_fp16 ? cv->oc : 0)) * (size_t)(((nx + 1) / 2) * ((ny + 1) / 2));
    if (cv->wino) { /* V and M of one chunk (+ an fp16-accumulation chunk), then the padded
                     * input planes where the transforms use them */
        int mo = cv->oc;
#ifdef WINO_AVX2
        mo = cv->oc < WINO_OB ? cv->oc : WINO_OB; /* M of one block of output channels */
#endif
        int ld = wino_ld(wino_chunk(cv, batch, nx, ny));
        return 36 * wino_vk(cv, ld) + (size_t)(36 * mo + (cv->acc_fp16 ? mo : 0)) * ld +
               wino_pad_size(cv, batch, nx, ny);
    }
    size_t acc = cv->acc_fp16 ? (size_t)2 * cv->oc * nx * ny : 0; /* result and chunk */
    if (cv->kh == 1 && cv->kw == 1)
        return acc;
    return (size_t)cv->ic * cv->kh * cv->kw * nx * ny + acc;
}

#ifndef WINO_AVX2
/* The 36 tile GEMMs M[k] = U[k] V[k] of one chunk of n columns (V [ic][36][ld], M [oc][36][ld]:
 * a tile's 36 values close together for the transforms; the GEMMs use a row stride of 36*ld),
 * with the emulation modes: fp16 tiles round V before and M after, fp16 accumulation uses the
 * chunk after M in the workspace. */
static void wino_gemms(const hc_kconv *cv, int n, int ld, float *V, float *M)
{
    if (cv->tiles_fp16)
        for (int r = 0; r < 36 * cv->ic; r++)
            hc_round_fp16_array(V + (size_t)r * ld, (size_t)n);
    for (int k = 0; k < 36; k++) {
        const float *U = cv->wino + (size_t)k * cv->oc * cv->ic;
        float *Vk = V + (size_t)k * ld, *Mk = M + (size_t)k * ld;
        if (cv->acc_fp16)
            sgemm_acc16(cv->oc, n, cv->ic, U, cv->ic, Vk, 36 * ld, Mk, 36 * ld,
                        M + (size_t)36 * cv->oc * ld);
        else
            hc_gemm(cv->oc, n, cv->ic, U, (size_t)cv->ic, 1, Vk, (size_t)36 * ld, Mk,
                    (size_t)36 * ld, 0);
    }
    if (cv->tiles_fp16)
        for (int r = 0; r < 36 * cv->oc; r++)
            hc_round_fp16_array(M + (size_t)r * ld, (size_t)n);
}
#endif

/* B^T of F(4x4,3x3) on 6 values (8 tiles per lane vector). */
#define WINO_BT(z0, z1, z2, z3, z4, z5, o)                                                      \
    do {                                                                                       \
        o[0] = 4.0f * z0 - 5.0f * z2 + z4;                                                     \
        o[1] = -4.0f * z1 - 4.0f * z2 + z3 + z4;                                               \
        o[2] = 4.0f * z1 - 4.0f * z2 - z3 + z4;                                                \
        o[3] = -2.0f * z1 - z2 + 2.0f * z3 + z4;                                               \
        o[4] = 2.0f * z1 - z2 - 2.0f * z3 + z4;                                                \
        o[5] = 4.0f * z1 - 5.0f * z3 + z5;                                                     \
    } while (0)

/* A^T of F(4x4,3x3) on 6 values. */
#define WINO_AT(z0, z1, z2, z3, z4, z5, o)                                                      \
    do {                                                                                       \
        o[0] = z0 + z1 + z2 + z3 + z4;                                                         \
        o[1] = (z1 - z2) + 2.0f * (z3 - z4);                                                   \
        o[2] = (z1 + z2) + 4.0f * (z3 + z4);                                                   \
        o[3] = (z1 - z2) + 8.0f * (z3 - z4) + z5;                                              \
    } while (0)

/* col[(i*kh+dy)*kw+dx][y*nx + x] = in[i][b][y+dy-ph][x+dx-pw] or 0 outside the buffer, for
 * one row b of a CBP tensor of `batch` rows. */
static void im2col_row(const hc_kconv *cv, int batch, int b, int nx, int ny, const float *in,
                       float *col)
{
    int hw = nx * ny, ph = cv->kh / 2, pw = cv->kw / 2;
    for (int i = 0; i < cv->ic; i++) {
        const float *src = in + ((size_t)i * batch + b) * hw;
        for (int dy = 0; dy < cv->kh; dy++) {
            for (int dx = 0; dx < cv->kw; dx++) {
                float *dst = col + (((size_t)i * cv->kh + dy) * cv->kw + dx) * hw;
                int ox = dx - pw;
                int x0 = ox < 0 ? -ox : 0;      /* first x with a source */
                int x1 = ox > 0 ? nx - ox : nx; /* one past the last */
                if (x1 < x0)
                    x1 = x0;
                for (int y = 0; y < ny; y++) {
                    float *d = dst + (size_t)y * nx;
                    int sy = y + dy - ph;
                    if (sy < 0 || sy >= ny) {
                        memset(d, 0, (size_t)nx * sizeof(float));
                        continue;
                    }
                    const float *srow = src + (size_t)sy * nx + ox;
                    for (int x = 0; x < x0; x++)
                        d[x] = 0.0f;
                    if (x1 > x0)
                        memcpy(d + x0, srow + x0, (size_t)(x1 - x0) * sizeof(float));
                    for (int x = x1; x < nx; x++)
                        d[x] = 0.0f;
                }
            }
        }
    }
}

#ifdef WINO_AVX2
/* Lane bookkeeping of a chunk, at most WINO_NC pairs rounded up to whole vectors. */
enum { WINO_LANES = (WINO_NC + 7) & ~7 };

/* p + k floats, k possibly negative (a tile's first column left of the plane): only ever
 * read through a lane mask that excludes the elements outside the tensor. */
static inline const float *wino_at(const float *p, ptrdiff_t k)
{
    return (const float *)((uintptr_t)p + (uintptr_t)(k * (ptrdiff_t)sizeof(float)));
}

/* The pair of the chunk (offset from its first) that V/M column j holds. In a full group of
 * 8 columns of a 3x3 chunk, column l < 4 holds pair 2l and column l + 4 pair 2l + 1, so that
 * the output's in-lane 4x4 transposes leave horizontally adjacent tiles in the two halves of
 * one vector (one 8-float store when they are in the same tile row). */
static inline int wino_lane(int five, int n, int j)
{
    int l0 = j & ~7, l = j & 7;
    if (five || l0 + 8 > n)
        return j;
    return l0 + (l < 4 ? 2 * l : 2 * (l - 4) + 1);
}

/* The input transform of a chunk, from the planes themselves: each lane's 6 tile rows are
 * 8-wide masked loads (the columns and rows outside the board read as the zero border),
 * transposed into lanes; then B^T along x and along y as the scalar form. */
static void wino_in_avx2(const hc_kconv *cv, int batch, int nx, int ny, const float *in,
                         int g0, int n, int ld, float *V)
{
    int five = cv->kh == 5, step = five ? 2 : 4, off = five ? 2 : 1;
    int hw = nx * ny, txn = (nx + step - 1) / step;
    int T = five ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    int nl = wino_ld(n);
    ptrdiff_t src[WINO_LANES][6]; /* each lane's row r: its first column in channel 0 */
    hc_v8i cm[WINO_LANES][6];     /* and the columns read there (none off the board) */
    for (int j = 0; j < nl; j++) {
        int g = g0 + wino_lane(five, n, j), b = g / T, t = g % T;
        int y0 = (t / txn) * step - off, x0 = (t % txn) * step - off;
        hc_v8i cols;
        for (int c = 0; c < 8; c++)
            cols[c] = j < n && c < 6 && x0 + c >= 0 && x0 + c < nx ? -1 : 0;
        for (int r = 0; r < 6; r++) {
            int y = y0 + r, ok = y >= 0 && y < ny;
            src[j][r] = ok ? (ptrdiff_t)b * hw + (ptrdiff_t)y * nx + x0 : 0;
            cm[j][r] = ok ? cols : (hc_v8i){0};
        }
    }
    /* the chunk's rows span one contiguous range of each channel: the next channels' range is
     * prefetched while this one is transformed (they come from L3 or memory) */
    ptrdiff_t lo = PTRDIFF_MAX, hi = 0;
    for (int j = 0; j < n; j++)
        for (int r = 0; r < 6; r++)
            if (cm[j][r][0] | cm[j][r][1]) {
                lo = src[j][r] < lo ? src[j][r] : lo;
                hi = src[j][r] + 8 > hi ? src[j][r] + 8 : hi;
            }
    lo = lo < 0 ? 0 : lo;
    int slots = (n + 7) / 8 * 6, per = (int)((hi - lo + 15) / 16 + slots - 1) / slots;
    for (int i = 0; i < cv->ic; i++) {
        const float *plane = in + (size_t)i * batch * hw, *pf = plane + (size_t)WINO_PF * batch * hw;
        ptrdiff_t pk = i + WINO_PF < cv->ic ? lo : hi;
        for (int l0 = 0; l0 < n; l0 += 8) {
            hc_v8f tmp[36], o[6];
            for (int r = 0; r < 6; r++) { /* 8 tiles' input row r into lanes, then along x */
                hc_v8f rows[8], z[6];
                for (int q = 0; q < per && pk < hi; q++, pk += 16)
                    __builtin_prefetch(pf + pk, 0, 3);
#pragma GCC unroll 8
                for (int l = 0; l < 8; l++)
                    rows[l] = (hc_v8f)_mm256_maskload_ps(wino_at(plane, src[l0 + l][r]),
                                                          (__m256i)cm[l0 + l][r]);
                transpose8x6(rows, z);
                hc_v8f *t = tmp + r * 6; /* written in place: a copy became a memcpy call */
                WINO_BT(z[0], z[1], z[2], z[3], z[4], z[5], t);
            }
            float *vi = V + (size_t)i * ld + l0;
            size_t kst = wino_vk(cv, ld); /* V [36][ic][ld]: each tile GEMM's B contiguous */
            for (int c = 0; c < 6; c++) { /* then along y */
                WINO_BT(tmp[c], tmp[6 + c], tmp[12 + c], tmp[18 + c], tmp[24 + c], tmp[30 + c], o);
                _mm256_storeu_ps(vi + (size_t)(0 * 6 + c) * kst, (__m256)o[0]);
                _mm256_storeu_ps(vi + (size_t)(1 * 6 + c) * kst, (__m256)o[1]);
                _mm256_storeu_ps(vi + (size_t)(2 * 6 + c) * kst, (__m256)o[2]);
                _mm256_storeu_ps(vi + (size_t)(3 * 6 + c) * kst, (__m256)o[3]);
                _mm256_storeu_ps(vi + (size_t)(4 * 6 + c) * kst, (__m256)o[4]);
                _mm256_storeu_ps(vi + (size_t)(5 * 6 + c) * kst, (__m256)o[5]);
            }
        }
    }
}

/* One output row piece of a tile: x's first k (1..4) values stored, or added to what is there
 * (d + v, as the scalar form); the columns past the board are not touched. */
static inline void wino_put(float *p, __m128 x, int k, int accumulate)
{
    if (k == 4) {
        if (accumulate)
            x = _mm_add_ps(_mm_loadu_ps(p), x);
        _mm_storeu_ps(p, x);
        return;
    }
    if (k >= 2) {
        __m128 v = x;
        if (accumulate)
            v = _mm_add_ps(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)p), v);
        _mm_storel_pi((__m64 *)p, v);
        if (k == 2)
            return;
        p += 2;
        x = _mm_movehl_ps(x, x);
    }
    if (accumulate)
        x = _mm_add_ss(_mm_load_ss(p), x);
    _mm_store_ss(p, x);
}

/* bn_act8 on ov vectors, the activation chosen once: relu and identity as bn_act8's
 * selects written as the masks they are (x & (x > 0) & on: the same bits). */
static inline void wino_epi(hc_v8f *res, int ov, float sc, float bi, int act, const hc_v8f *mk,
                            const hc_v8i *on, const hc_v8f *rb)
{
    const hc_v8f zero = v8_splat(0.0f);
    if (rb) /* hc_add_bias_bc's add, before the batch norm */
        for (int k = 0; k < ov; k++)
            res[k] = res[k] + *rb;
    switch (act) {
    case HC_ACT_RELU:
        for (int k = 0; k < ov; k++) {
            hc_v8f x = res[k] * sc + bi;
            res[k] = (hc_v8f)((hc_v8i)x & (x > zero) & on[k]);
        }
        break;
    case HC_ACT_IDENTITY:
        for (int k = 0; k < ov; k++) {
            hc_v8f x = res[k] * sc + bi;
            res[k] = (hc_v8f)((hc_v8i)x & on[k]);
        }
        break;
    default:
        for (int k = 0; k < ov; k++)
            res[k] = bn_act8(res[k], sc, bi, act, mk[k]);
        break;
    }
}

/* Where each lane of a chunk's output transform goes. */
typedef struct wino_olanes {
    size_t dst[WINO_LANES];
    int row[WINO_LANES]; /* the lane's batch row (0 past the chunk) */
    int rmax[WINO_LANES], cmax[WINO_LANES], full[WINO_LANES];
    hc_v8f mk[WINO_LANES / 8][16]; /* the epilogue's mask in the outputs' layout (0 off the board) */
    hc_v8i on[WINO_LANES / 8][16]; /* mk == 1: the lanes the epilogue keeps */
    size_t lo, hi;                 /* the chunk's span of each output plane */
    int merge[WINO_LANES / 8][4];  /* group, pair of lanes (p, p + 4) (3x3) or (2p, 2p + 1)
                                    * (5x5): whole tiles side by side, their rows stored as one */
} wino_olanes;

static void wino_olanes_init(wino_olanes *ol, const hc_kconv *cv, int nx, int ny, int g0, int n,
                             const hc_kepi *epi)
{
    int five = cv->kh == 5, osz = five ? 2 : 4, ov = osz * osz;
    int hw = nx * ny, txn = (nx + osz - 1) / osz;
    int T = five ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    ol->lo = SIZE_MAX, ol->hi = 0;
    for (int j = 0; j < wino_ld(n); j++) {
        int g = g0 + (j < n ? wino_lane(five, n, j) : 0), b = g / T, t = g % T;
        int ty = t / txn, tx = t % txn;
        size_t d = (size_t)b * hw + (size_t)(ty * osz) * nx + tx * osz;
        int rm = j >= n ? 0 : ny - ty * osz < osz ? ny - ty * osz : osz;
        int cm = nx - tx * osz < osz ? nx - tx * osz : osz;
        ol->dst[j] = d, ol->rmax[j] = rm, ol->cmax[j] = cm, ol->full[j] = cm == osz;
        ol->row[j] = j < n ? b : 0;
        if (epi)
            for (int k = 0; k < ov; k++) {
                int r = k / osz, c = k % osz;
                ol->mk[j / 8][k][j % 8] = r < rm && c < cm ? epi->mask[d + (size_t)r * nx + c] : 0.0f;
            }
        if (rm) {
            size_t e = d + (size_t)(rm - 1) * nx + cm;
            ol->lo = d < ol->lo ? d : ol->lo;
            ol->hi = e > ol->hi ? e : ol->hi;
        }
    }
    for (int q = 0; q < wino_ld(n) / 8; q++) {
        int l0 = q * 8;
        if (epi)
            for (int k = 0; k < ov; k++)
                ol->on[q][k] = ol->mk[q][k] == 1.0f;
        for (int p = 0; p < 4; p++) {
            int a = l0 + (five ? 2 * p : p), b = l0 + (five ? 2 * p + 1 : p + 4);
            ol->merge[q][p] = ol->rmax[a] == osz && ol->full[a] && ol->rmax[b] == osz &&
                              ol->full[b] && ol->dst[b] == ol->dst[a] + (size_t)osz;
        }
    }
}

/* The output transform of output channels oc0 .. oc1-1 of a chunk (A^T along x, then y, then
 * the fused epilogue) from M [oc - oc0][36][ld], each lane's rows stored straight into its
 * tile of the output planes. */
static void wino_out_avx2(const hc_kconv *cv, int batch, int nx, int ny, float *out,
                          int accumulate, int n, int ld, const float *M, int oc0, int oc1,
                          const wino_olanes *ol, const hc_kepi *epi)
{
    int five = cv->kh == 5, osz = five ? 2 : 4, ov = osz * osz;
    int hw = nx * ny;
    const size_t *dst = ol->dst;
    const int *rmax = ol->rmax, *cmax = ol->cmax;
    size_t lo = ol->lo, hi = ol->hi;
    /* the prefetches of a later channel's span, spread over the row stores (all at once, they
     * stalled on the miss buffers) */
    int slots = (n + 7) / 8 * osz, per = (int)((hi - lo + 15) / 16 + (size_t)slots - 1) / slots;
    for (int oc = oc0; oc < oc1; oc++) {
        const float *pf = out + (size_t)(oc + WINO_PF) * batch * hw;
        size_t pk = oc + WINO_PF < oc1 ? lo : hi;
        for (int l0 = 0; l0 < n; l0 += 8) {
            const float *mo = M + (size_t)(oc - oc0) * 36 * ld + l0;
            hc_v8f res[16];
#define WINO_M(k) ((hc_v8f)_mm256_loadu_ps(mo + (size_t)(k) * ld))
            if (!five) {
                hc_v8f tmp[24], y4[4];
                for (int r = 0; r < 6; r++) { /* along x first: 6 columns -> 4 */
                    hc_v8f z0 = WINO_M(r * 6), z1 = WINO_M(r * 6 + 1), z2 = WINO_M(r * 6 + 2);
                    hc_v8f z3 = WINO_M(r * 6 + 3), z4 = WINO_M(r * 6 + 4), z5 = WINO_M(r * 6 + 5);
                    hc_v8f *t = tmp + r * 4;
                    WINO_AT(z0, z1, z2, z3, z4, z5, t);
                }
                for (int c = 0; c < 4; c++) { /* then along y: 6 rows -> 4 */
                    WINO_AT(tmp[c], tmp[4 + c], tmp[8 + c], tmp[12 + c], tmp[16 + c], tmp[20 + c], y4);
                    res[0 * 4 + c] = y4[0];
                    res[1 * 4 + c] = y4[1];
                    res[2 * 4 + c] = y4[2];
                    res[3 * 4 + c] = y4[3];
                }
            } else {
                hc_v8f h[6][2];
                for (int r = 0; r < 6; r++) {
                    hc_v8f z0 = WINO_M(r * 6), z1 = WINO_M(r * 6 + 1), z2 = WINO_M(r * 6 + 2);
                    hc_v8f z3 = WINO_M(r * 6 + 3), z4 = WINO_M(r * 6 + 4), z5 = WINO_M(r * 6 + 5);
                    h[r][0] = z0 + z1 + z2 + z3 + z4;
                    h[r][1] = (z1 - z2) + 2.0f * (z3 - z4) + z5;
                }
                for (int c = 0; c < 2; c++) {
                    res[0 * 2 + c] = h[0][c] + h[1][c] + h[2][c] + h[3][c] + h[4][c];
                    res[1 * 2 + c] = (h[1][c] - h[2][c]) + 2.0f * (h[3][c] - h[4][c]) + h[5][c];
                }
            }
#undef WINO_M
            if (epi) {
                hc_v8f rb;
                if (epi->row_bias)
                    for (int l = 0; l < 8; l++)
                        rb[l] = epi->row_bias[(size_t)ol->row[l0 + l] * cv->oc + oc];
                wino_epi(res, ov, epi->scale[oc], epi->bias[oc], epi->act, ol->mk[l0 / 8], ol->on[l0 / 8],
                         epi->row_bias ? &rb : NULL);
            }
            float *plane = out + (size_t)oc * batch * hw;
            for (int r = 0; r < osz; r++) {
                for (int q = 0; q < per && pk < hi; q++, pk += 16)
                    __builtin_prefetch(pf + pk, 1, 3);
                __m128 x[8]; /* x[l]: lane l's row r (its first osz floats) */
                if (!five) {
                    __m256 a0 = (__m256)res[r * 4], a1 = (__m256)res[r * 4 + 1];
                    __m256 a2 = (__m256)res[r * 4 + 2], a3 = (__m256)res[r * 4 + 3];
                    __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
                    __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
                    __m256 q[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xee),
                                   _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xee)};
#pragma GCC unroll 4
                    for (int l = 0; l < 4; l++) {
                        x[l] = _mm256_castps256_ps128(q[l]);
                        x[l + 4] = _mm256_extractf128_ps(q[l], 1);
                    }
                } else {
                    __m256 a0 = (__m256)res[r * 2], a1 = (__m256)res[r * 2 + 1];
                    __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
                    __m128 p0 = _mm256_castps256_ps128(t0), p1 = _mm256_castps256_ps128(t1);
                    __m128 p4 = _mm256_extractf128_ps(t0, 1), p5 = _mm256_extractf128_ps(t1, 1);
                    x[0] = p0, x[1] = _mm_movehl_ps(p0, p0), x[2] = p1, x[3] = _mm_movehl_ps(p1, p1);
                    x[4] = p4, x[5] = _mm_movehl_ps(p4, p4), x[6] = p5, x[7] = _mm_movehl_ps(p5, p5);
                }
                const int *mg = ol->merge[l0 / 8];
                float *pr = plane + (size_t)r * nx;
#pragma GCC unroll 4
                for (int p = 0; p < 4; p++) { /* lanes a, b: adjacent tiles when merged */
                    int a = l0 + (five ? 2 * p : p), b = l0 + (five ? 2 * p + 1 : p + 4);
                    __m128 xa = x[a - l0], xb = x[b - l0];
                    if (mg[p]) {
                        if (!five) {
                            __m256 v = _mm256_set_m128(xb, xa);
                            if (accumulate)
                                v = _mm256_add_ps(_mm256_loadu_ps(pr + dst[a]), v);
                            _mm256_storeu_ps(pr + dst[a], v);
                        } else {
                            __m128 v = _mm_movelh_ps(xa, xb);
                            if (accumulate)
                                v = _mm_add_ps(_mm_loadu_ps(pr + dst[a]), v);
                            _mm_storeu_ps(pr + dst[a], v);
                        }
                        continue;
                    }
                    if (r < rmax[a])
                        wino_put(pr + dst[a], xa, cmax[a], accumulate);
                    if (r < rmax[b])
                        wino_put(pr + dst[b], xb, cmax[b], accumulate);
                }
            }
        }
    }
}

/* The tile GEMMs run over blocks of WINO_OB output channels, each block's output transform
 * right after its 36 GEMMs, while its M is still in L1/L2; each M element is still one hc_gemm
 * chain over all input channels (a row's bits do not depend on the rows sharing its call). */
static void wino_chunk_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in,
                           float *out, int accumulate, float *ws, int g0, int n, int ld,
                           const hc_kepi *epi)
{
    float *V = ws, *M = ws + 36 * wino_vk(cv, ld);
    int ob = cv->oc < WINO_OB ? cv->oc : WINO_OB;
    wino_in_avx2(cv, batch, nx, ny, in, g0, n, ld, V);
    size_t vk = wino_vk(cv, ld);
    if (cv->tiles_fp16)
        for (int k = 0; k < 36; k++)
            for (int i = 0; i < cv->ic; i++)
                hc_round_fp16_array(V + k * vk + (size_t)i * ld, (size_t)n);
    wino_olanes ol;
    wino_olanes_init(&ol, cv, nx, ny, g0, n, epi);
    size_t per = (size_t)cv->oc * cv->ic;
    for (int oc0 = 0; oc0 < cv->oc; oc0 += ob) {
        int nb = cv->oc - oc0 < ob ? cv->oc - oc0 : ob;
        for (int k = 0; k < 36; k++) {
            const float *U = cv->wino + (size_t)k * per + (size_t)oc0 * cv->ic;
            const float *Vk = V + k * vk;
            float *Mk = M + (size_t)k * ld;
            if (cv->acc_fp16)
                sgemm_acc16(nb, n, cv->ic, U, cv->ic, Vk, ld, Mk, 36 * ld, M + (size_t)36 * ob * ld);
            else
                hc_gemm(nb, n, cv->ic, U, (size_t)cv->ic, 1, Vk, (size_t)ld, Mk, (size_t)36 * ld, 0);
        }
        if (cv->tiles_fp16)
            for (int r = 0; r < 36 * nb; r++)
                hc_round_fp16_array(M + (size_t)r * ld, (size_t)n);
        wino_out_avx2(cv, batch, nx, ny, out, accumulate, n, ld, M, oc0, oc0 + nb, &ol, epi);
    }
}

#else
/* Winograd of one chunk of n (row, tile) pairs g = g0 .. g0+n-1 (row g / T, tile g % T):
 * F(4x4,3x3) (4x4 outputs per tile, input offset -1) or, for 5x5 kernels, F(2x2,5x5) (2x2
 * outputs, offset -2), both on 6x6 input tiles with the same B^T. Eight pairs at a time sit in
 * the lanes of a vector; each lane does the scalar transform's operations in the same order
 * (along x first, then y, as KataGo), so the lanes change no bits. */
static void wino_chunk_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in,
                           float *out, int accumulate, float *ws, int g0, int n, int ld,
                           const hc_kepi *epi)
{
    int five = cv->kh == 5, step = five ? 2 : 4, off = five ? 2 : 1;
    int hw = nx * ny, txn = (nx + step - 1) / step;
    int T = five ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    float *V = ws, *M = ws + (size_t)36 * cv->ic * ld;
    float *pad = M + (size_t)(36 + (cv->acc_fp16 ? 1 : 0)) * cv->oc * ld;
    int wp, hp, prow;
    wino_pad_dims(cv, batch, nx, ny, &wp, &hp, &prow);
    int b_first = g0 / T, b_last = (g0 + n - 1) / T;
    size_t psz = (size_t)wp * hp;
    memset(pad, 0, psz * (size_t)(b_last - b_first + 1) * sizeof(float));
    size_t lane_off[WINO_NC]; /* each pair's tile (0,0) input in the padded buffer */
    for (int j = 0; j < n; j++) {
        int g = g0 + j, b = g / T, t = g % T;
        lane_off[j] = (size_t)(b - b_first) * psz + (size_t)((t / txn) * step) * wp + (t % txn) * step;
    }
    /* only the input rows that the chunk's tiles read: its first and last batch rows may have
     * only some tile rows in the chunk */
    int ylo[WINO_NC + 2], yhi[WINO_NC + 2], tyn = (T + txn - 1) / txn;
    for (int b = b_first; b <= b_last; b++) {
        int tlo = b == b_first ? (g0 % T) / txn : 0;
        int thi = b == b_last ? ((g0 + n - 1) % T) / txn : tyn - 1;
        int lo = tlo * step - off, hi = thi * step + 6 - off;
        ylo[b - b_first] = lo < 0 ? 0 : lo;
        yhi[b - b_first] = hi > ny ? ny : hi;
    }
    for (int i = 0; i < cv->ic; i++) {
        const float *plane = in + (size_t)i * batch * hw;
        for (int b = b_first; b <= b_last; b++) {
            float *pb = pad + (size_t)(b - b_first) * psz + (size_t)off * wp + off;
            const float *sb = plane + (size_t)b * hw;
            for (int y = ylo[b - b_first]; y < yhi[b - b_first]; y++)
                copy_short(pb + (size_t)y * wp, sb + (size_t)y * nx, nx);
        }
        for (int l0 = 0; l0 < n; l0 += 8) {
            int lanes = n - l0 < 8 ? n - l0 : 8;
            hc_v8f d[36], tmp[36], o[6];
            for (int r = 0; r < 6; r++) { /* 8 tiles' input row r, transposed into lanes */
                hc_v8f rows[8];
                for (int l = 0; l < 8; l++) {
                    if (l < lanes)
                        memcpy(&rows[l], pad + lane_off[l0 + l] + (size_t)r * wp, sizeof rows[l]);
                    else
                        rows[l] = v8_splat(0.0f);
                }
                transpose8x6(rows, d + r * 6);
            }
            for (int r = 0; r < 6; r++) { /* along x first */
                const hc_v8f *z = d + r * 6;
                WINO_BT(z[0], z[1], z[2], z[3], z[4], z[5], o);
                for (int c = 0; c < 6; c++)
                    tmp[r * 6 + c] = o[c];
            }
            for (int c = 0; c < 6; c++) { /* then along y */
                WINO_BT(tmp[c], tmp[6 + c], tmp[12 + c], tmp[18 + c], tmp[24 + c], tmp[30 + c], o);
                for (int r = 0; r < 6; r++)
                    v8_store(V + ((size_t)i * 36 + r * 6 + c) * ld + l0, o[r], lanes);
            }
        }
    }
    wino_gemms(cv, n, ld, V, M);
    int osz = five ? 2 : 4, ov = osz * osz;
    for (int l0 = 0; l0 < n; l0 += 8) {
        int lanes = n - l0 < 8 ? n - l0 : 8;
        size_t dst_off[8];
        int rmax[8], cmax[8], full[8], row[8];
        hc_v8f mk[16]; /* the epilogue's mask in the outputs' layout (0 off the board) */
        for (int l = 0; l < 8; l++) {
            int g = g0 + l0 + (l < lanes ? l : 0), b = g / T, t = g % T;
            int ty = t / txn, tx = t % txn;
            dst_off[l] = (size_t)b * hw + (size_t)(ty * osz) * nx + tx * osz;
            row[l] = b;
            rmax[l] = ny - ty * osz < osz ? ny - ty * osz : osz;
            cmax[l] = nx - tx * osz < osz ? nx - tx * osz : osz;
            full[l] = rmax[l] == osz && cmax[l] == osz;
            if (epi)
                for (int k = 0; k < ov; k++) {
                    int r = k / osz, c = k % osz;
                    mk[k][l] = l < lanes && r < rmax[l] && c < cmax[l]
                                   ? epi->mask[dst_off[l] + (size_t)r * nx + c]
                                   : 0.0f;
                }
        }
        for (int oc = 0; oc < cv->oc; oc++) {
            hc_v8f m[36], res[16];
            const float *mo = M + (size_t)oc * 36 * ld + l0;
            if (lanes == 8)
                for (int k = 0; k < 36; k++)
                    memcpy(&m[k], mo + (size_t)k * ld, sizeof m[k]);
            else
                for (int k = 0; k < 36; k++)
                    m[k] = v8_load(mo + (size_t)k * ld, lanes);
            if (!five) {
                hc_v8f tmp[24], y4[4];
                for (int r = 0; r < 6; r++) { /* along x first: 6 columns -> 4 */
                    const hc_v8f *z = m + r * 6;
                    WINO_AT(z[0], z[1], z[2], z[3], z[4], z[5], y4);
                    for (int c = 0; c < 4; c++)
                        tmp[r * 4 + c] = y4[c];
                }
                for (int c = 0; c < 4; c++) { /* then along y: 6 rows -> 4 */
                    WINO_AT(tmp[c], tmp[4 + c], tmp[8 + c], tmp[12 + c], tmp[16 + c], tmp[20 + c], y4);
                    for (int r = 0; r < 4; r++)
                        res[r * 4 + c] = y4[r];
                }
            } else {
                hc_v8f h[6][2];
                for (int r = 0; r < 6; r++) {
                    const hc_v8f *z = m + r * 6;
                    h[r][0] = z[0] + z[1] + z[2] + z[3] + z[4];
                    h[r][1] = (z[1] - z[2]) + 2.0f * (z[3] - z[4]) + z[5];
                }
                for (int c = 0; c < 2; c++) {
                    res[0 * 2 + c] = h[0][c] + h[1][c] + h[2][c] + h[3][c] + h[4][c];
                    res[1 * 2 + c] = (h[1][c] - h[2][c]) + 2.0f * (h[3][c] - h[4][c]) + h[5][c];
                }
                for (int k = 4; k < 16; k++)
                    res[k] = v8_splat(0.0f);
            }
            if (epi) {
                if (epi->row_bias) { /* hc_add_bias_bc's add, before the batch norm */
                    hc_v8f rb;
                    for (int l = 0; l < 8; l++)
                        rb[l] = epi->row_bias[(size_t)row[l] * cv->oc + oc];
                    for (int k = 0; k < ov; k++)
                        res[k] = res[k] + rb;
                }
                for (int k = 0; k < ov; k++)
                    res[k] = bn_act8(res[k], epi->scale[oc], epi->bias[oc], epi->act, mk[k]);
            }
            /* lanes -> tiles: tv[l] holds outputs k = 0..7 of tile l, tv[8 + l] k = 8..15 */
            hc_v8f tv[16];
            transpose8x8(res, tv);
            if (!five)
                transpose8x8(res + 8, tv + 8);
            float *plane = out + (size_t)oc * batch * hw;
            for (int l = 0; l < lanes; l++) {
                float tb[16];
                memcpy(tb, &tv[l], sizeof tv[l]);
                if (!five)
                    memcpy(tb + 8, &tv[8 + l], sizeof tv[8 + l]);
                float *drow = plane + dst_off[l];
                if (full[l] && !five) {
                    for (int r = 0; r < 4; r++, drow += nx) {
                        hc_v4f v;
                        memcpy(&v, tb + r * 4, sizeof v);
                        if (accumulate) {
                            hc_v4f d;
                            memcpy(&d, drow, sizeof d);
                            v = d + v;
                        }
                        memcpy(drow, &v, sizeof v);
                    }
                    continue;
                }
                for (int r = 0; r < rmax[l]; r++, drow += nx) {
                    const float *v = tb + r * osz;
                    if (accumulate)
                        for (int c = 0; c < cmax[l]; c++)
                            drow[c] += v[c];
                    else
                        for (int c = 0; c < cmax[l]; c++)
                            drow[c] = v[c];
                }
            }
        }
    }
}

#endif

/* ---- Winograd F(2x2,3x3) (emulation of MLX's convolution) ---- */

int hc_kconv_use_winograd2(hc_kconv *cv, hc_err *err)
{
    if (cv->kh != 3 || cv->kw != 3 || cv->wino2)
        return 0;
    size_t per = (size_t)cv->oc * cv->ic;
    cv->wino2 = hc_malloc(16 * per * sizeof(float), err, "winograd F(2x2) weights");
    if (!cv->wino2)
        return -1;
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    for (int o = 0; o < cv->oc; o++)
        for (int i = 0; i < cv->ic; i++) {
            const float *g = cv->w + ((size_t)o * cv->ic + i) * 9;
            double t[3][4]; /* g G^T: along x first */
            for (int y = 0; y < 3; y++)
                for (int c = 0; c < 4; c++)
                    t[y][c] = G[c][0] * g[y * 3] + G[c][1] * g[y * 3 + 1] + G[c][2] * g[y * 3 + 2];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++)
                    cv->wino2[(size_t)(r * 4 + c) * per + (size_t)o * cv->ic + i] =
                        (float)(G[r][0] * t[0][c] + G[r][1] * t[1][c] + G[r][2] * t[2][c]);
        }
    free(cv->wino);
    cv->wino = NULL;
    return 0;
}

/* F(2x2,3x3) of one batch row b, scalar: V = B^T d B per input tile, 16 GEMMs
 * M[k] = U[k] V[k] (oc x T x ic), Y = A^T M A; fp16 tiles round V before and M after the
 * GEMMs, as MLX stores them. */
static void wino2_row(const hc_kconv *cv, int batch, int b, int nx, int ny, const float *in, float *out,
                      int accumulate, float *ws)
{
    int hw = nx * ny, txn = (nx + 1) / 2, T = ((nx + 1) / 2) * ((ny + 1) / 2);
    float *V = ws, *M = ws + (size_t)16 * cv->ic * T;
    for (int i = 0; i < cv->ic; i++) {
        const float *src = in + ((size_t)i * batch + b) * hw;
        for (int t = 0; t < T; t++) {
            int y0 = (t / txn) * 2 - 1, x0 = (t % txn) * 2 - 1;
            float d[4][4], u[4][4];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) {
                    int y = y0 + r, x = x0 + c;
                    d[r][c] = y >= 0 && y < ny && x >= 0 && x < nx ? src[(size_t)y * nx + x] : 0.0f;
                }
            for (int r = 0; r < 4; r++) { /* d B along x */
                u[r][0] = d[r][0] - d[r][2];
                u[r][1] = d[r][1] + d[r][2];
                u[r][2] = d[r][2] - d[r][1];
                u[r][3] = d[r][1] - d[r][3];
            }
            for (int c = 0; c < 4; c++) { /* B^T (d B) along y */
                V[((size_t)0 * cv->ic + i) * T + t + (size_t)c * cv->ic * T] = u[0][c] - u[2][c];
                V[((size_t)4 * cv->ic + i) * T + t + (size_t)c * cv->ic * T] = u[1][c] + u[2][c];
                V[((size_t)8 * cv->ic + i) * T + t + (size_t)c * cv->ic * T] = u[2][c] - u[1][c];
                V[((size_t)12 * cv->ic + i) * T + t + (size_t)c * cv->ic * T] = u[1][c] - u[3][c];
            }
        }
    }
    if (cv->tiles_fp16)
        hc_round_fp16_array(V, (size_t)16 * cv->ic * T);
    size_t per = (size_t)cv->oc * cv->ic;
    for (int k = 0; k < 16; k++) {
        if (cv->acc_fp16)
            sgemm_acc16(cv->oc, T, cv->ic, cv->wino2 + (size_t)k * per, cv->ic, V + (size_t)k * cv->ic * T, T,
                        M + (size_t)k * cv->oc * T, T, M + (size_t)16 * cv->oc * T);
        else
            hc_gemm(cv->oc, T, cv->ic, cv->wino2 + (size_t)k * per, (size_t)cv->ic, 1, V + (size_t)k * cv->ic * T,
                    (size_t)T, M + (size_t)k * cv->oc * T, (size_t)T, 0);
    }
    if (cv->tiles_fp16)
        hc_round_fp16_array(M, (size_t)16 * cv->oc * T);
    for (int o = 0; o < cv->oc; o++) {
        float *dst = out + ((size_t)o * batch + b) * hw;
        for (int t = 0; t < T; t++) {
            int ty = t / txn, tx = t % txn;
            float m[4][4], a[4][2];
            for (int k = 0; k < 16; k++)
                m[k / 4][k % 4] = M[((size_t)k * cv->oc + o) * T + t];
            for (int r = 0; r < 4; r++) { /* m A along x */
                a[r][0] = m[r][0] + m[r][1] + m[r][2];
                a[r][1] = m[r][1] - m[r][2] - m[r][3];
            }
            for (int c = 0; c < 2; c++) { /* A^T (m A) along y */
                float y2[2] = {a[0][c] + a[1][c] + a[2][c], a[1][c] - a[2][c] - a[3][c]};
                for (int r = 0; r < 2; r++) {
                    int y = ty * 2 + r, x = tx * 2 + c;
                    if (y >= ny || x >= nx)
                        continue;
                    float *p = dst + (size_t)y * nx + x;
                    *p = accumulate ? *p + y2[r] : y2[r];
                }
            }
        }
    }
}

/* Every GEMM here is hc_gemm, whose outputs are each one FMA chain: a row's bits do not depend
 * on the rows it shares a call with, so the batch runs in large calls. */
static void kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                      int accumulate, float *ws, const hc_kepi *epi)
{
    int hw = nx * ny;
    int s = batch * hw;
    int k = cv->ic * cv->kh * cv->kw;
    int one = cv->kh == 1 && cv->kw == 1;
    if (cv->wino2) {
        for (int b = 0; b < batch; b++)
            wino2_row(cv, batch, b, nx, ny, in, out, accumulate, ws);
        return;
    }
    if (cv->wino) {
        int T = cv->kh == 5 ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
        int all = batch * T, nc = wino_chunk(cv, batch, nx, ny);
        for (int g0 = 0; g0 < all; g0 += nc)
            wino_chunk_run(cv, batch, nx, ny, in, out, accumulate, ws, g0,
                           all - g0 < nc ? all - g0 : nc, wino_ld(nc), epi);
        return;
    }
    if (one && !cv->acc_fp16) {
        hc_gemm(cv->oc, s, k, cv->w, (size_t)k, 1, in, (size_t)s, out, (size_t)s, accumulate);
        return;
    }
    for (int b = 0; b < batch; b++) {
        const float *bmat = in + (size_t)b * hw;
        int ldb = s;
        if (!one) {
            im2col_row(cv, batch, b, nx, ny, in, ws);
            bmat = ws;
            ldb = hw;
        }
        if (cv->acc_fp16) {
            float *res = ws + (one ? 0 : (size_t)k * hw), *tmp = res + (size_t)cv->oc * hw;
            sgemm_acc16(cv->oc, hw, k, cv->w, k, bmat, ldb, res, hw, tmp);
            for (int o = 0; o < cv->oc; o++) {
                float *dst = out + (size_t)o * s + (size_t)b * hw;
                const float *r = res + (size_t)o * hw;
                for (int p = 0; p < hw; p++)
                    dst[p] = accumulate ? dst[p] + r[p] : r[p];
            }
            continue;
        }
        hc_gemm(cv->oc, hw, k, cv->w, (size_t)k, 1, bmat, (size_t)ldb, out + (size_t)b * hw,
                (size_t)s, accumulate);
    }
}

void hc_kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                  int accumulate, float *ws)
{
    kconv_run(cv, batch, nx, ny, in, out, accumulate, ws, NULL);
}

void hc_kconv_run_bn(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                     float *ws, const hc_kepi *epi)
{
    if (cv->wino && !cv->wino2) {
        kconv_run(cv, batch, nx, ny, in, out, 0, ws, epi);
        return;
    }
    kconv_run(cv, batch, nx, ny, in, out, 0, ws, NULL);
    if (epi->row_bias)
        hc_add_bias_bc(cv->oc, batch, nx * ny, out, epi->row_bias);
    hc_bn_act(cv->oc, batch, nx * ny, out, out, epi->scale, epi->bias, epi->act, epi->mask);
}

/* ---- batch norm, bias, activation ----------------------------------------------------- */

/* One plane of hc_bias_bn_act: hc_add_bias_bc's add first when has_rb (none at all without a
 * bias: hc_bn_act's own arithmetic). Always inlined with has_rb a constant, so the bias-free
 * form (every block's input batch norm) has no test in its loops. */
static inline __attribute__((always_inline)) void bn_act_plane(const float *src, float *dst, const float *m,
                                                               int hw, float sc, float bi, int act, int has_rb,
                                                               float rb)
{
    switch (act) {
    case HC_ACT_IDENTITY:
    case HC_ACT_RELU: /* 8 lanes, each the scalar expression */
        for (int p = 0; p < hw; p += 8) {
            int k = hw - p < 8 ? hw - p : 8;
            hc_v8f v = v8_load(src + p, k), on = v8_load(m + p, k);
            v8_store(dst + p, bn_act8(has_rb ? v + rb : v, sc, bi, act, on), k);
        }
        break;
    case HC_ACT_MISH:
    case HC_ACT_SILU:
        for (int p = 0; p < hw; p += 8) {
            int k = hw - p < 8 ? hw - p : 8;
            hc_v8f v = v8_load(src + p, k);
            hc_v8f x = (has_rb ? v + rb : v) * sc + bi;
            hc_v8f y = act == HC_ACT_MISH ? vmish8(x) : vsilu8(x);
            hc_v8f on = v8_load(m + p, k);
            v8_store(dst + p, v8_select(on == 1.0f, y, v8_splat(0.0f)), k);
        }
        break;
    default:
        for (int p = 0; p < hw; p++)
            dst[p] = m[p] == 1.0f ? hc_act_apply(act, (has_rb ? src[p] + rb : src[p]) * sc + bi) : 0.0f;
        break;
    }
}

void hc_bn_act(int channels, int batch, int hw, const float *in, float *out, const float *scale,
               const float *bias, int act, const float *mask)
{
    hc_bias_bn_act(channels, batch, hw, in, out, NULL, scale, bias, act, mask);
}

void hc_bias_bn_act(int channels, int batch, int hw, const float *in, float *out, const float *row_bias,
                    const float *scale, const float *bias, int act, const float *mask)
{
    for (int c = 0; c < channels; c++)
        for (int b = 0; b < batch; b++) {
            size_t at = ((size_t)c * batch + b) * hw;
            const float *m = mask + (size_t)b * hw;
            if (row_bias)
                bn_act_plane(in + at, out + at, m, hw, scale[c], bias[c], act, 1, row_bias[(size_t)b * channels + c]);
            else
                bn_act_plane(in + at, out + at, m, hw, scale[c], bias[c], act, 0, 0.0f);
        }
}

void hc_bn_merge(int channels, float eps, const float *mean, const float *var, const float *gamma,
                 const float *beta, float *scale, float *bias)
{
    for (int c = 0; c < channels; c++) {
        float g = gamma ? gamma[c] : 1.0f;
        float be = beta ? beta[c] : 0.0f;
        scale[c] = g / sqrtf(var[c] + eps);
        bias[c] = be - scale[c] * mean[c];
    }
}

void hc_add_bias_bc(int channels, int batch, int hw, float *x, const float *bias)
{
    for (int c = 0; c < channels; c++)
        for (int b = 0; b < batch; b++) {
            float v = bias[(size_t)b * channels + c];
            float *d = x + ((size_t)c * batch + b) * hw;
            for (int p = 0; p < hw; p++)
                d[p] += v;
        }
}

/* ---- pooling -------------------------------------------------------------------------- */

/* Each channel's sum and max are one chain over the points in order (the bits of the plain
 * loop); POOL_CH channels' chains run side by side, since a lone chain waits on each add. */
enum { POOL_CH = 8 };

/* Sums (and, when mx, masked maxima) of channels c0 .. c0+n-1 of row b, n <= POOL_CH. */
static void pool_chains(int n, int batch, int hw, const float *in, int c0, int b, const float *m,
                        float *sum, float *mx)
{
    const float *src[POOL_CH];
    float s[POOL_CH], x[POOL_CH];
    for (int l = 0; l < POOL_CH; l++) {
        src[l] = in + ((size_t)(c0 + (l < n ? l : 0)) * batch + b) * hw;
        s[l] = 0.0f;
        x[l] = -1.0f;
    }
    if (mx) {
        for (int p = 0; p < hw; p++) {
            float mp = m[p] - 1.0f;
#pragma GCC unroll 8
            for (int l = 0; l < POOL_CH; l++) {
                float v = src[l][p];
                s[l] += v;
                float w = v + mp;
                x[l] = x[l] > w ? x[l] : w;
            }
        }
    } else {
        for (int p = 0; p < hw; p++)
#pragma GCC unroll 8
            for (int l = 0; l < POOL_CH; l++)
                s[l] += src[l][p];
    }
    for (int l = 0; l < n; l++) {
        sum[l] = s[l];
        if (mx)
            mx[l] = x[l];
    }
}

void hc_pool_gpool(int channels, int batch, int hw, const float *in, const float *mask,
                   const float *mask_sum, float *out)
{
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        float div = mask_sum[b];
        float sqrtdiv = sqrtf(div);
        float *o = out + (size_t)b * 3 * channels;
        for (int c0 = 0; c0 < channels; c0 += POOL_CH) {
            int n = channels - c0 < POOL_CH ? channels - c0 : POOL_CH;
            float sum[POOL_CH], mx[POOL_CH];
            pool_chains(n, batch, hw, in, c0, b, m, sum, mx);
            for (int l = 0; l < n; l++) {
                int c = c0 + l;
                float mean = sum[l] / div;
                o[c] = mean;
                o[c + channels] = mean * (sqrtdiv - 14.0f) * 0.1f;
                o[c + 2 * channels] = mx[l];
            }
        }
    }
}

void hc_pool_value(int channels, int batch, int hw, const float *in, const float *mask_sum,
                   float *out)
{
    for (int b = 0; b < batch; b++) {
        float div = mask_sum[b];
        float sqrtdiv = sqrtf(div);
        float *o = out + (size_t)b * 3 * channels;
        for (int c0 = 0; c0 < channels; c0 += POOL_CH) {
            int n = channels - c0 < POOL_CH ? channels - c0 : POOL_CH;
            float sum[POOL_CH];
            pool_chains(n, batch, hw, in, c0, b, NULL, sum, NULL);
            for (int l = 0; l < n; l++) {
                int c = c0 + l;
                float mean = sum[l] / div;
                o[c] = mean;
                o[c + channels] = mean * (sqrtdiv - 14.0f) * 0.1f;
                o[c + 2 * channels] = mean * ((sqrtdiv - 14.0f) * (sqrtdiv - 14.0f) * 0.01f - 0.1f);
            }
        }
    }
}

/* Rounding to an emulated compute format (fp32: unchanged). */
static inline float rfmt(int fmt, float x)
{
    return fmt == HC_KFMT_FP16 ? hc_round_fp16(x) : fmt == HC_KFMT_BF16 ? hc_round_bf16(x) : x;
}

/* The pooling scalars of an area in fmt: sqrt(area) - 14 and 0.1, each rounded. */
static void pool_scalars_fmt(int fmt, float area, float *div, float *t, float *tenth)
{
    *div = rfmt(fmt, area);
    *t = rfmt(fmt, rfmt(fmt, sqrtf(*div)) - 14.0f);
    *tenth = rfmt(fmt, 0.1f);
}

/* A row's sum of src over hw in fmt, rounded after every add, in buffer order. */
static float sum_fmt(int fmt, const float *src, int hw)
{
    float s = 0.0f;
    for (int p = 0; p < hw; p++)
        s = rfmt(fmt, s + src[p]);
    return s;
}

void hc_pool_gpool_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask,
                       const float *mask_sum, float *out, unsigned char *row_bad)
{
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        float div, t, tenth;
        pool_scalars_fmt(fmt, mask_sum[b], &div, &t, &tenth);
        for (int c = 0; c < channels; c++) {
            const float *src = in + ((size_t)c * batch + b) * hw;
            float mx = -1.0f;
            for (int p = 0; p < hw; p++) {
                float v = src[p] + (m[p] - 1.0f);
                mx = mx > v ? mx : v;
            }
            float sum = sum_fmt(fmt, src, hw), mean = rfmt(fmt, sum / div);
            if (row_bad && !isfinite(sum))
                row_bad[b] = 1;
            float *o = out + (size_t)b * 3 * channels;
            o[c] = mean;
            o[c + channels] = rfmt(fmt, rfmt(fmt, mean * t) * tenth);
            o[c + 2 * channels] = mx;
        }
    }
}

void hc_pool_value_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask_sum,
                       float *out, unsigned char *row_bad)
{
    for (int b = 0; b < batch; b++) {
        float div, t, tenth;
        pool_scalars_fmt(fmt, mask_sum[b], &div, &t, &tenth);
        /* (sqrt(area) - 14)^2 * 0.01 - 0.1, each step in fmt */
        float q = rfmt(fmt, rfmt(fmt, rfmt(fmt, t * t) * rfmt(fmt, 0.01f)) - tenth);
        for (int c = 0; c < channels; c++) {
            const float *src = in + ((size_t)c * batch + b) * hw;
            float sum = sum_fmt(fmt, src, hw), mean = rfmt(fmt, sum / div);
            if (row_bad && !isfinite(sum))
                row_bad[b] = 1;
            float *o = out + (size_t)b * 3 * channels;
            o[c] = mean;
            o[c + channels] = rfmt(fmt, rfmt(fmt, mean * t) * tenth);
            o[c + 2 * channels] = rfmt(fmt, mean * q);
        }
    }
}

/* ---- vectors -------------------------------------------------------------------------- */

void hc_matmul_bc(int batch, int in_c, int out_c, const float *in, const float *w, float *out)
{
    hc_gemm(batch, out_c, in_c, in, (size_t)in_c, 1, w, (size_t)out_c, out, (size_t)out_c, 0);
}

void hc_bias_act_bc(int batch, int channels, float *x, const float *bias, int act)
{
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < channels; c++) {
            float *d = x + (size_t)b * channels + c;
            if (bias)
                *d += bias[c];
            *d = hc_act_apply(act, *d);
        }
}

/* ---- per-position ops ----------------------------------------------------------------- */

void hc_matmul_cs(int batch, int hw, int in_c, int out_c, const float *in, const float *w,
                  float *out)
{
    size_t s = (size_t)batch * hw;
    hc_gemm(out_c, (int)s, in_c, w, 1, (size_t)out_c, in, s, out, s, 0);
}

void hc_rmsnorm_cols(int channels, int n, const float *in, size_t ldi, float *out, size_t ldo,
                     const float *weight, float eps, const float *mask)
{
    /* Blocks of up to 8 vectors of columns: the channel loop runs along contiguous memory with
     * one independent sum-of-squares chain per vector; each column still sums its squares in
     * channel order, as KataGo does. Full vectors by plain loads (the partial-vector helpers
     * went through the stack), a last partial one through v8_load / v8_store. */
    enum { NV = 8, BLK = 8 * NV };
    const hc_v8f zero = v8_splat(0.0f);
    for (int j0 = 0; j0 < n; j0 += BLK) {
        int nb = n - j0 < BLK ? n - j0 : BLK, nf = nb / 8, tail = nb % 8, nv = nf + (tail > 0);
        hc_v8f ss[NV], rms[NV], mk[NV];
        for (int u = 0; u < nv; u++) {
            ss[u] = zero;
            mk[u] = v8_load(mask + j0 + 8 * u, u < nf ? 8 : tail);
        }
        for (int c = 0; c < channels; c++) {
            const float *src = in + (size_t)c * ldi + j0;
            for (int u = 0; u < nf; u++) {
                hc_v8f x;
                memcpy(&x, src + 8 * u, sizeof x);
                ss[u] += x * x;
            }
            if (tail) {
                hc_v8f x = v8_load(src + 8 * nf, tail);
                ss[nf] += x * x;
            }
        }
        for (int u = 0; u < nv; u++) {
            hc_v8f d = ss[u] / (float)channels + eps;
            for (int l = 0; l < 8; l++)
                d[l] = sqrtf(d[l]);
            rms[u] = v8_select(mk[u] == zero, zero, 1.0f / d);
        }
        for (int c = 0; c < channels; c++) {
            const float *src = in + (size_t)c * ldi + j0;
            float *dst = out + (size_t)c * ldo + j0;
            float wc = weight[c];
            for (int u = 0; u < nf; u++) {
                hc_v8f x;
                memcpy(&x, src + 8 * u, sizeof x);
                x = v8_select(mk[u] == zero, zero, x * rms[u] * wc);
                memcpy(dst + 8 * u, &x, sizeof x);
            }
            if (tail)
                v8_store(dst + 8 * nf, v8_select(mk[nf] == zero, zero, v8_load(src + 8 * nf, tail) * rms[nf] * wc), tail);
        }
    }
}

void hc_rmsnorm_pos(int channels, int batch, int hw, const float *in, float *out,
                    const float *weight, float eps, const float *mask)
{
    size_t cs = (size_t)batch * hw;
    hc_rmsnorm_cols(channels, (int)cs, in, cs, out, cs, weight, eps, mask);
}

void hc_rmsnorm_tip(int channels, int batch, int hw, const float *in, float *out,
                    const float *gamma, const float *beta, float eps, int spatial, int act,
                    const float *mask)
{
    size_t cs = (size_t)batch * hw;
    for (int b = 0; b < batch; b++) {
        float rms_row = 0.0f;
        if (spatial) {
            float ss = 0.0f;
            int count = 0;
            for (int p = 0; p < hw; p++) {
                size_t col = (size_t)b * hw + p;
                if (mask[col] == 0.0f)
                    continue;
                for (int c = 0; c < channels; c++) {
                    float v = in[c * cs + col];
                    ss += v * v;
                }
                count++;
            }
            float total = (float)count * (float)channels;
            rms_row = 1.0f / sqrtf(ss / total + eps);
        }
        for (int p = 0; p < hw; p++) {
            size_t col = (size_t)b * hw + p;
            if (mask[col] == 0.0f) {
                for (int c = 0; c < channels; c++)
                    out[c * cs + col] = 0.0f;
                continue;
            }
            float rms = rms_row;
            if (!spatial) {
                float ss = 0.0f;
                for (int c = 0; c < channels; c++) {
                    float v = in[c * cs + col];
                    ss += v * v;
                }
                rms = 1.0f / sqrtf(ss / (float)channels + eps);
            }
            for (int c = 0; c < channels; c++)
                out[c * cs + col] =
                    hc_act_apply_rmstip(act, in[c * cs + col] * rms * gamma[c] + beta[c]);
        }
    }
}

/* 1 / sqrt(ss / count + eps) with every step in fmt: the divide, eps itself (1e-5 is a
 * binary16 subnormal), the add, the sqrt and the reciprocal each rounded. */
static float rms_scale_fmt(int fmt, float ss, float count, float eps)
{
    float mean = rfmt(fmt, ss / rfmt(fmt, count));
    float r = rfmt(fmt, sqrtf(rfmt(fmt, mean + rfmt(fmt, eps))));
    return rfmt(fmt, 1.0f / r);
}

/* Sum of squares of column col over channels in fmt: each square and each add rounded. */
static float sumsq_fmt(int fmt, int channels, const float *in, size_t cs, size_t col, float ss)
{
    for (int c = 0; c < channels; c++) {
        float v = in[c * cs + col];
        ss = rfmt(fmt, ss + rfmt(fmt, v * v));
    }
    return ss;
}

void hc_rmsnorm_pos_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *weight, float eps, const float *mask, unsigned char *row_bad)
{
    size_t cs = (size_t)batch * hw;
    for (size_t j = 0; j < cs; j++) {
        if (mask[j] == 0.0f) {
            for (int c = 0; c < channels; c++)
                out[c * cs + j] = 0.0f;
            continue;
        }
        float ss = sumsq_fmt(fmt, channels, in, cs, j, 0.0f);
        if (row_bad && !isfinite(ss))
            row_bad[j / (size_t)hw] = 1;
        float rms = rms_scale_fmt(fmt, ss, (float)channels, eps);
        for (int c = 0; c < channels; c++)
            out[c * cs + j] = rfmt(fmt, rfmt(fmt, in[c * cs + j] * rms) * weight[c]);
    }
}

void hc_rmsnorm_tip_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *gamma, const float *beta, float eps, int spatial, int act,
                        const float *mask, unsigned char *row_bad)
{
    size_t cs = (size_t)batch * hw;
    for (int b = 0; b < batch; b++) {
        float rms_row = 0.0f;
        if (spatial) {
            float ss = 0.0f;
            int count = 0;
            for (int p = 0; p < hw; p++) {
                size_t col = (size_t)b * hw + p;
                if (mask[col] == 0.0f)
                    continue;
                ss = sumsq_fmt(fmt, channels, in, cs, col, ss);
                count++;
            }
            if (row_bad && !isfinite(ss))
                row_bad[b] = 1;
            rms_row = rms_scale_fmt(fmt, ss, (float)count * (float)channels, eps);
        }
        for (int p = 0; p < hw; p++) {
            size_t col = (size_t)b * hw + p;
            if (mask[col] == 0.0f) {
                for (int c = 0; c < channels; c++)
                    out[c * cs + col] = 0.0f;
                continue;
            }
            float rms = rms_row;
            if (!spatial) {
                float ss = sumsq_fmt(fmt, channels, in, cs, col, 0.0f);
                if (row_bad && !isfinite(ss))
                    row_bad[b] = 1;
                rms = rms_scale_fmt(fmt, ss, (float)channels, eps);
            }
            for (int c = 0; c < channels; c++) {
                float y = rfmt(fmt, rfmt(fmt, rfmt(fmt, in[c * cs + col] * rms) * gamma[c]) + beta[c]);
                out[c * cs + col] = hc_act_apply_rmstip(act, y);
            }
        }
    }
}

void hc_residual_cols(int channels, int n, float *trunk, size_t ldt, const float *delta, size_t ldd,
                      const float *mask)
{
    int nf = n / 8 * 8;
    for (int c = 0; c < channels; c++) {
        float *t = trunk + (size_t)c * ldt;
        const float *d = delta + (size_t)c * ldd;
        for (int j = 0; j < nf; j += 8) {
            hc_v8f tv, dv, mv;
            memcpy(&tv, t + j, sizeof tv);
            memcpy(&dv, d + j, sizeof dv);
            memcpy(&mv, mask + j, sizeof mv);
            tv = tv + dv * mv;
            memcpy(t + j, &tv, sizeof tv);
        }
        if (nf < n)
            v8_store(t + nf, v8_load(t + nf, n - nf) + v8_load(d + nf, n - nf) * v8_load(mask + nf, n - nf), n - nf);
    }
}

void hc_residual_masked(int channels, int batch, int hw, float *trunk, const float *delta,
                        const float *mask)
{
    size_t cs = (size_t)batch * hw;
    hc_residual_cols(channels, (int)cs, trunk, cs, delta, cs, mask);
}

void hc_swiglu(size_t n, float *a, const float *g)
{
    size_t nf = n / 8 * 8;
    for (size_t i = 0; i < nf; i += 8) { /* full vectors by plain loads, as hc_rmsnorm_cols */
        hc_v8f x, gv;
        memcpy(&x, a + i, sizeof x);
        memcpy(&gv, g + i, sizeof gv);
        x = x / (1.0f + vexp8(-x)) * gv;
        memcpy(a + i, &x, sizeof x);
    }
    if (nf < n) {
        int k = (int)(n - nf);
        hc_v8f x = v8_load(a + nf, k);
        v8_store(a + nf, x / (1.0f + vexp8(-x)) * v8_load(g + nf, k), k);
    }
}

void hc_rope_tables(int nx, int ny, int pairs, int kv_heads, const float *freqs, float theta,
                    float *cos_t, float *sin_t)
{
    int hw = nx * ny;
    if (freqs) {
        for (int h = 0; h < kv_heads; h++)
            for (int p = 0; p < pairs; p++) {
                float fx = freqs[((size_t)h * pairs + p) * 2 + 0];
                float fy = freqs[((size_t)h * pairs + p) * 2 + 1];
                for (int y = 0; y < ny; y++)
                    for (int x = 0; x < nx; x++) {
                        float angle = (float)x * fx + (float)y * fy;
                        size_t idx = ((size_t)h * pairs + p) * hw + (size_t)y * nx + x;
                        cos_t[idx] = cosf(angle);
                        sin_t[idx] = sinf(angle);
                    }
            }
        return;
    }
    int per_dim = pairs / 2;
    int dim_half = pairs; /* head_dim / 2 */
    for (int p = 0; p < pairs; p++) {
        int pe = p < per_dim ? p : p - per_dim;
        float freq = 1.0f / powf(theta, (float)(2 * pe) / (float)dim_half);
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float angle = p < per_dim ? (float)y * freq : (float)x * freq;
                size_t idx = (size_t)p * hw + (size_t)y * nx + x;
                cos_t[idx] = cosf(angle);
                sin_t[idx] = sinf(angle);
            }
    }
}

void hc_rope_cols(int hw, size_t j0, int n, int heads, int head_dim, int kv_heads, int learnable,
                  const float *cos_t, const float *sin_t, float *x, size_t ldx)
{
    int pairs = head_dim / 2;
    for (int h = 0; h < heads; h++) {
        const float *ct = cos_t, *st = sin_t;
        if (learnable) {
            int kvh = h * kv_heads / heads;
            ct += (size_t)kvh * pairs * hw;
            st += (size_t)kvh * pairs * hw;
        }
        for (int p = 0; p < pairs; p++) {
            float *r0 = x + ((size_t)h * head_dim + 2 * p) * ldx;
            float *r1 = r0 + ldx;
            const float *cp = ct + (size_t)p * hw, *sp = st + (size_t)p * hw;
            /* runs of columns within one board: point i = column % hw */
            for (size_t j = j0, end = j0 + (size_t)n; j < end;) {
                size_t i0 = j % (size_t)hw;
                int len = end - j < (size_t)hw - i0 ? (int)(end - j) : (int)((size_t)hw - i0);
                float *a0 = r0 + j, *a1 = r1 + j;
                const float *c0 = cp + i0, *s0 = sp + i0;
                int i = 0;
                for (; i + 8 <= len; i += 8) {
                    hc_v8f x0, x1, c, sn;
                    memcpy(&x0, a0 + i, sizeof x0);
                    memcpy(&x1, a1 + i, sizeof x1);
                    memcpy(&c, c0 + i, sizeof c);
                    memcpy(&sn, s0 + i, sizeof sn);
                    hc_v8f y0 = x0 * c - x1 * sn, y1 = x0 * sn + x1 * c;
                    memcpy(a0 + i, &y0, sizeof y0);
                    memcpy(a1 + i, &y1, sizeof y1);
                }
                if (i < len) {
                    int k = len - i;
                    hc_v8f x0 = v8_load(a0 + i, k), x1 = v8_load(a1 + i, k);
                    hc_v8f c = v8_load(c0 + i, k), sn = v8_load(s0 + i, k);
                    v8_store(a0 + i, x0 * c - x1 * sn, k);
                    v8_store(a1 + i, x0 * sn + x1 * c, k);
                }
                j += (size_t)len;
            }
        }
    }
}

void hc_rope_apply(int batch, int hw, int heads, int head_dim, int kv_heads, int learnable,
                   const float *cos_t, const float *sin_t, float *x)
{
    size_t cs = (size_t)batch * hw;
    hc_rope_cols(hw, 0, (int)cs, heads, head_dim, kv_heads, learnable, cos_t, sin_t, x, cs);
}

void hc_vexpf(size_t n, float *x)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        hc_v8f v;
        memcpy(&v, x + i, sizeof v);
        v = vexp8(v);
        memcpy(x + i, &v, sizeof v);
    }
    if (i < n) {
        hc_v8f v = {0};
        memcpy(&v, x + i, (n - i) * sizeof(float));
        v = vexp8(v);
        memcpy(x + i, &v, (n - i) * sizeof(float));
    }
}

/* Masked softmax of one score row in place (scores times scale first): keys with m == 0 get 0.
 * Vectorized 8 lanes at a time; a short tail is padded with masked-out lanes. */
static void softmax_row(int n, float *row, const float *m, float scale)
{
    const hc_v8f neg = v8_splat(-1e30f), zero = v8_splat(0.0f);
    hc_v8f vmx = neg;
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        hc_v8f v = v8_load(row + i, k) * scale, mk = v8_load(m + i, k);
        v8_store(row + i, v, k);
        hc_v8f c = v8_select(mk != zero, v, neg);
        vmx = v8_select(c > vmx, c, vmx);
    }
    float mx = -1e30f;
    for (int j = 0; j < 8; j++)
        mx = vmx[j] > mx ? vmx[j] : mx;
    hc_v8f vsum = zero;
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        /* the mask is exactly 0 or 1; padding lanes have mask 0 */
        hc_v8f v = vexp8(v8_load(row + i, k) - mx) * v8_load(m + i, k);
        v8_store(row + i, v, k);
        vsum += v;
    }
    float sum = 0.0f;
    for (int j = 0; j < 8; j++)
        sum += vsum[j];
    hc_v8f inv = v8_splat(1.0f / sum);
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        v8_store(row + i, v8_load(row + i, k) * inv, k);
    }
}

/* One head's slices of batch row b in the [channel][batch * hw] q/k/v/out planes: q and out by
 * head, k and v by the head's KV group (grouped-query attention). */
typedef struct att_head {
    const float *q, *k, *v;
    float *o;
} att_head;

static att_head att_head_at(int batch, int hw, int b, int h, int group, int qd, int vd, const float *q,
                            const float *k, const float *v, float *out)
{
    size_t s = (size_t)batch * hw, row = (size_t)b * hw;
    int kvh = h / group;
    att_head a = {q + (size_t)h * qd * s + row, k + (size_t)kvh * qd * s + row, v + (size_t)kvh * vd * s + row,
                  out + (size_t)h * vd * s + row};
    return a;
}

/* The exact softmax strips (refs/softmax_strip.inc): 8 lanes, and 16 where AVX-512 is on
 * (HC_SM16=1 forces the 16-lane form elsewhere, so that it can be tested there). */
#if !defined(HC_SM16)
#if defined(__AVX512F__)
#define HC_SM16 1
#else
#define HC_SM16 0
#endif
#endif
#if !HC_SM16
#define SM_W 8
#define SM_VF hc_v8f
#define SM_VI hc_v8i
#include "softmax_strip.inc"
#undef SM_W
#undef SM_VF
#undef SM_VI
#else
typedef float hc_v16f __attribute__((vector_size(64)));
typedef int32_t hc_v16i __attribute__((vector_size(64)));
#define SM_W 16
#define SM_VF hc_v16f
#define SM_VI hc_v16i
#include "softmax_strip.inc"
#undef SM_W
#undef SM_VF
#undef SM_VI
#endif

/* Attention probabilities of a block of nq queries computed transposed: st[ki][j] (row stride
 * ld) holds query j's score for key ki on entry and its probability on return, so the value
 * GEMM reads them as its B matrix without a transpose. Each query's arithmetic is exactly
 * softmax_row's on its row (the same products, the same max, the key i's exp summed into
 * partial sum i % 8 in key order, the partial sums added in order 0..7, the same
 * normalisation), with hc_attention_emul's roundings; 8 queries per vector instead of 8 keys.
 * mq: the queries' mask values, mk: the keys'. */
static void softmax_cols(int hw, int nq, float *st, size_t ld, const float *mq, const float *mk,
                         float scale, int scores_fmt, int probs_fmt)
{
    const hc_v8f neg = v8_splat(-1e30f), zero = v8_splat(0.0f);
    for (int j = 0; j < nq; j += 8) {
        int k = nq - j < 8 ? nq - j : 8;
        hc_v8f vmx = neg;
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            hc_v8f v = v8_load(p, k) * scale;
            if (scores_fmt != HC_KFMT_FP32)
                v = v8_round(scores_fmt, v);
            v8_store(p, v, k);
            if (mk[ki] != 0.0f)
                vmx = v8_select(v > vmx, v, vmx);
        }
        hc_v8f ps[8] = {zero, zero, zero, zero, zero, zero, zero, zero};
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            /* the mask is exactly 0 or 1: a masked key's exp times 0 is +0 */
            hc_v8f e = mk[ki] != 0.0f ? vexp8(v8_load(p, k) - vmx) * mk[ki] : zero;
            v8_store(p, e, k);
            ps[ki & 7] += e;
        }
        hc_v8f sum = zero;
        for (int l = 0; l < 8; l++)
            sum += ps[l];
        hc_v8f inv = 1.0f / sum;
        hc_v8f on = v8_load(mq + j, k);
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            hc_v8f v = v8_load(p, k) * inv;
            if (probs_fmt != HC_KFMT_FP32)
                v = v8_round(probs_fmt, v);
            v8_store(p, v8_select(on == zero, zero, v), k);
        }
    }
}

/* Queries per block of the transposed attention (rounding emulations): the block's scores stay
 * in L2. */
enum { ATT_NQ = 64 };

/* The exact attention runs over blocks of ATT_QB queries: the score GEMM writes the block's
 * transposed scores [key][ATT_QB] (two panels of refs/gemm.c's 24-column AVX2 kernel), then
 * each strip of ATT_QS queries gets its probabilities [key][ATT_QS] (23 KB at 19x19, in L1),
 * which the value GEMM reads in place (hc_gemm copies no B panel when ldb is its panel width,
 * 16 for K > 256). Boards under ATT_QB points (workspace 2 * hw * hw) use blocks of ATT_QS,
 * the scores and probabilities in one buffer. */
#if defined(__AVX512F__)
enum { ATT_QB = 64, ATT_QS = 16 }; /* two 32-column panels of the AVX-512 kernel */
#else
enum { ATT_QB = 48, ATT_QS = 16 };
#endif

/* hc_attention's arithmetic (as hc_attention_emul's exact path): per query, the same score
 * chains, softmax and value chains, so the same bits. ws: hw * (ATT_QB + ATT_QS) floats when
 * hw >= ATT_QB, else hw * ATT_QS. */
static void attention_strips(int batch, int hw, int heads, int kv_heads, int qd, int vd,
                             const float *q, const float *k, const float *v, const float *mask,
                             float *out, float *ws)
{
    int group = heads / kv_heads;
    size_t s = (size_t)batch * hw;
    float scale = 1.0f / sqrtf((float)qd);
    int qb = hw >= ATT_QB ? ATT_QB : ATT_QS;
    float *sc = ws, *pr = qb == ATT_QS ? ws : ws + (size_t)hw * ATT_QB;
    float mqp[ATT_QS];
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        int allon = 1;
        for (int i = 0; i < hw; i++)
            allon &= m[i] == 1.0f;
        for (int h = 0; h < heads; h++) {
            att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
            const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
            float *oh = ah.o;
            for (int q0 = 0; q0 < hw; q0 += qb) {
                int nqb = hw - q0 < qb ? hw - q0 : qb;
                /* sc(ki, qi) = sum_d k(d, ki) q(d, qi): the same FMA chains as q.k */
                hc_gemm(hw, nqb, qd, kh, 1, s, qh + q0, s, sc, (size_t)qb, 0);
                int nqb8 = HC_SM16 ? (nqb + 15) & ~15 : (nqb + 7) & ~7;
                if (nqb8 > nqb) /* padding lanes of a last partial strip: zeros, masked */
                    for (int ki = 0; ki < hw; ki++)
                        memset(sc + (size_t)ki * qb + nqb, 0, (size_t)(nqb8 - nqb) * sizeof(float));
                for (int t0 = 0; t0 < nqb; t0 += ATT_QS) {
                    int nq = nqb - t0 < ATT_QS ? nqb - t0 : ATT_QS;
                    const float *mq = m + q0 + t0;
                    if (nq < ATT_QS) {
                        memcpy(mqp, mq, (size_t)nq * sizeof(float));
                        memset(mqp + nq, 0, (size_t)(ATT_QS - nq) * sizeof(float));
                        mq = mqp;
                    }
#if HC_SM16
                    softmax_strip16(hw, sc + t0, (size_t)qb, pr, ATT_QS, mq, m, scale, allon);
#else
                    for (int j = 0; j < nq; j += 8)
                        softmax_strip8(hw, sc + t0 + j, (size_t)qb, pr + j, ATT_QS, mq + j, m, scale, allon);
#endif
                    hc_gemm(vd, nq, hw, vh, s, 1, pr, ATT_QS, oh + q0 + t0, s, 0);
                }
            }
        }
    }
}

void hc_attention(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                  const float *k, const float *v, const float *mask, float *out, float *ws)
{
    static const hc_attn_emul exact = {HC_KFMT_FP32, HC_KFMT_FP32, 0};
    hc_attention_emul(batch, hw, heads, kv_heads, qd, vd, q, k, v, mask, out, ws, &exact);
}

/* ---- reduced-precision emulation inside layers ------------------------------------------ */

void hc_round_fmt_array(int fmt, float *x, size_t n)
{
    if (fmt == HC_KFMT_FP16)
        hc_round_fp16_array(x, n);
    else if (fmt == HC_KFMT_BF16)
        hc_round_bf16_array(x, n);
}

/* C(m,n) = sum_k A(m,k) X(k,n) with fp16 accumulation in HC_ACC16_CHUNK runs; every operand
 * addressed by strides (A(m,k) = A[m*sam + k*sak] ...), no workspace. Slow but plain: the
 * fp16-acc16 emulation is measured, not bounded. */
static void gemm_acc16(int M, int N, int K, const float *A, size_t sam, size_t sak, const float *X, size_t sxk,
                       size_t sxn, float *C, size_t scm, size_t scn)
{
    enum { NB = 256 };
    float part[NB], acc[NB];
    for (int m = 0; m < M; m++)
        for (int n0 = 0; n0 < N; n0 += NB) {
            int nb = N - n0 < NB ? N - n0 : NB;
            for (int j = 0; j < nb; j++)
                acc[j] = 0.0f;
            for (int k0 = 0; k0 < K; k0 += HC_ACC16_CHUNK) {
                int kc = K - k0 < HC_ACC16_CHUNK ? K - k0 : HC_ACC16_CHUNK;
                for (int j = 0; j < nb; j++)
                    part[j] = 0.0f;
                for (int k = k0; k < k0 + kc; k++) {
                    float a = A[(size_t)m * sam + (size_t)k * sak];
                    const float *x = X + (size_t)k * sxk + (size_t)n0 * sxn;
                    if (sxn == 1)
                        for (int j = 0; j < nb; j++)
                            part[j] += a * x[j];
                    else
                        for (int j = 0; j < nb; j++)
                            part[j] += a * x[(size_t)j * sxn];
                }
                for (int j = 0; j < nb; j++) {
                    float p = hc_round_fp16(part[j]);
                    acc[j] = k0 ? hc_round_fp16(acc[j] + p) : p;
                }
            }
            for (int j = 0; j < nb; j++)
                C[(size_t)m * scm + (size_t)(n0 + j) * scn] = acc[j];
        }
}

void hc_matmul_bc_acc16(int batch, int in_c, int out_c, const float *in, const float *w, float *out)
{
    for (int b = 0; b < batch; b++)
        gemm_acc16(1, out_c, in_c, in + (size_t)b * in_c, 0, 1, w, (size_t)out_c, 1, out + (size_t)b * out_c, 0, 1);
}

void hc_matmul_cs_acc16(int batch, int hw, int in_c, int out_c, const float *in, const float *w,
                        float *out)
{
    size_t s = (size_t)batch * hw;
    for (int b = 0; b < batch; b++)
        gemm_acc16(out_c, hw, in_c, w, 1, (size_t)out_c, in + (size_t)b * hw, s, 1, out + (size_t)b * hw, s, 1);
}

void hc_attention_emul(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                       const float *k, const float *v, const float *mask, float *out, float *ws,
                       const hc_attn_emul *em)
{
    int group = heads / kv_heads;
    size_t s = (size_t)batch * hw;
    float scale = 1.0f / sqrtf((float)qd);
    float *sc = ws; /* [query][key] */
    if (!em->acc_fp16 && em->scores_fmt == HC_KFMT_FP32 && em->probs_fmt == HC_KFMT_FP32 &&
        (size_t)hw * (hw >= ATT_QB ? ATT_QB + ATT_QS : ATT_QS) <= 2 * (size_t)hw * hw) {
        attention_strips(batch, hw, heads, kv_heads, qd, vd, q, k, v, mask, out, ws);
        return;
    }
    if (!em->acc_fp16) { /* transposed scores [key][query], in blocks of queries */
        int nqb = hw < ATT_NQ ? hw : ATT_NQ;
        /* whole strips of 8 queries when the workspace (2*hw*hw) has room (hw >= 4) */
        int pad8 = ((nqb + 7) & ~7) <= 2 * hw;
        size_t ld = pad8 ? (size_t)(nqb + 7) & ~(size_t)7 : (size_t)nqb;
        float mqp[ATT_NQ + 8];
        for (int b = 0; b < batch; b++) {
            const float *m = mask + (size_t)b * hw;
            for (int h = 0; h < heads; h++) {
                att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
                const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
                float *oh = ah.o;
                for (int q0 = 0; q0 < hw; q0 += nqb) {
                    int nq = hw - q0 < nqb ? hw - q0 : nqb;
                    /* sc(ki, qi) = sum_d k(d, ki) q(d, qi): the same FMA chains as q.k */
                    hc_gemm(hw, nq, qd, kh, 1, s, qh + q0, s, sc, ld, 0);
                    int nq8 = pad8 ? (nq + 7) & ~7 : nq;
                    const float *mq = m + q0;
                    if (nq8 > nq) { /* a last partial strip: padding queries are zeros, masked */
                        for (int ki = 0; ki < hw; ki++)
                            memset(sc + (size_t)ki * ld + nq, 0, (size_t)(nq8 - nq) * sizeof(float));
                        memcpy(mqp, mq, (size_t)nq * sizeof(float));
                        memset(mqp + nq, 0, (size_t)(nq8 - nq) * sizeof(float));
                        mq = mqp;
                    }
                    softmax_cols(hw, nq8, sc, ld, mq, m, scale, em->scores_fmt, em->probs_fmt);
                    hc_gemm(vd, nq, hw, vh, s, 1, sc, ld, oh + q0, s, 0);
                }
            }
        }
        return;
    }
    /* fp16 accumulation (every other case returned above): scores [query][key] per head */
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        for (int h = 0; h < heads; h++) {
            att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
            const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
            float *oh = ah.o;
            gemm_acc16(hw, hw, qd, qh, 1, s, kh, s, 1, sc, (size_t)hw, 1); /* sc(qi, ki) = sum_d q(d, qi) k(d, ki) */
            for (int qi = 0; qi < hw; qi++) {
                float *row = sc + (size_t)qi * hw;
                if (m[qi] == 0.0f) {
                    memset(row, 0, (size_t)hw * sizeof(float));
                    continue;
                }
                if (em->scores_fmt == HC_KFMT_FP32) { /* softmax_row scales: the same products */
                    softmax_row(hw, row, m, scale);
                } else {
                    for (int j = 0; j < hw; j++)
                        row[j] *= scale;
                    hc_round_fmt_array(em->scores_fmt, row, (size_t)hw);
                    softmax_row(hw, row, m, 1.0f);
                }
                hc_round_fmt_array(em->probs_fmt, row, (size_t)hw);
            }
            gemm_acc16(vd, hw, hw, vh, s, 1, sc, 1, (size_t)hw, oh, s, 1); /* oh(d, qi) = sum_ki v(d, ki) p(qi, ki) */
        }
    }
}
