/* Reference Winograd F(4x4,3x3) and F(2x2,5x5), KataGo's Eigen transforms: the weights, the chunk runners, AVX2/AVX-512 and vector-extension transforms (NEON: winograd_neon.c). */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/winograd_impl.h"
#include "refs/gemm.h"
#include "refs/round.h"

#define HC_WT_FN static inline
#define HC_WT_HOST static inline
#define HC_WT_ROUND16(x) hc_round_fp16(x)
#include "refs/wino_tile.inc"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cv's k x k weights as 6x6 tiles (refs/wino_tile.inc's hc_wt_filter, which the GPU runs too),
 * [36][oc][ic]. */
static int wino_weights(hc_kconv *cv, int k, hc_err *err)
{
    size_t per = (size_t)cv->oc * cv->ic;
    cv->wino = hc_malloc(36 * per * sizeof(float), err, "winograd weights");
    if (!cv->wino)
        return -1;
    for (size_t f = 0; f < per; f++) {
        float u[36];
        hc_wt_filter(k, cv->w + f * k * k, u);
        for (int t = 0; t < 36; t++)
            cv->wino[(size_t)t * per + f] = u[t];
    }
    return 0;
}

/* 3x3 convolutions by F(4x4,3x3), and 5x5 ones (the initial conv of most nets) by F(2x2,5x5), on
 * 6x6 tiles as KataGo's Eigen backend runs them: the same transforms in the same order, so the
 * only difference left is the GEMMs' summation order. */
int hc_kconv_use_winograd(hc_kconv *cv, hc_err *err)
{
    if (cv->wino)
        return 0;
    if (cv->kh == 5 && cv->kw == 5)
        return wino_weights(cv, 5, err);
    if (cv->kh == 3 && cv->kw == 3)
        return wino_weights(cv, 3, err);
    return 0;
}

/* Moves each of cv->wino's 36 matrices between [oc][ic] and hc_gemm_p4's blocks of 4 rows. Rows
 * 4b..4b+3 and block b hold the same floats, so each block is a 4 x ic transpose of its own
 * (through a buffer on the stack: ic <= WINO_P4_IC, which hc_kconv_pack checks). */
enum { WINO_P4_IC = 2048 };
static void wino_relayout(hc_kconv *cv, int to_p4)
{
    size_t ic = (size_t)cv->ic, n = 4 * ic;
    float t[4 * WINO_P4_IC];
    for (size_t b = 0; b < (size_t)36 * cv->oc / 4; b++) {
        float *u = cv->wino + b * n;
        memcpy(t, u, n * sizeof *t);
        if (to_p4)
            hc_gemm_p4_pack(4, cv->ic, t, ic, 1, u);
        else
            hc_gemm_p4_unpack(4, cv->ic, t, u, ic, 1);
    }
    cv->wino_p4 = to_p4;
}

void hc_kconv_pack(hc_kconv *cv)
{
    if (hc_gemm_p4_fast() && cv->wino && !cv->wino_p4 && !cv->acc_fp16 && cv->oc % 4 == 0 &&
        cv->ic <= WINO_P4_IC)
        wino_relayout(cv, 1);
}

void hc_wino_unpack(hc_kconv *cv)
{
    if (cv->wino && cv->wino_p4)
        wino_relayout(cv, 0);
}

static int wino_tiles(int nx, int ny)
{
    return ((nx + 3) / 4) * ((ny + 3) / 4);
}

static int wino5_tiles(int nx, int ny)
{
    return ((nx + 1) / 2) * ((ny + 1) / 2);
}

/* The chunk of (row, tile) pairs the runners work on: WINO_NC (winograd_impl.h), or every pair
 * when there are fewer. */
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

#ifndef HC_NEON /* the 8-lane transposes of the AVX2 and vector-extension transforms */
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
#endif

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
            hc_sgemm_acc16(cv->oc, n, cv->ic, U, cv->ic, Vk, 36 * ld, Mk, 36 * ld,
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
                hc_sgemm_acc16(nb, n, cv->ic, U, cv->ic, Vk, ld, Mk, 36 * ld, M + (size_t)36 * ob * ld);
            else if (cv->wino_p4) /* oc0 and nb multiples of 4: U starts a block */
                hc_gemm_p4(nb, n, cv->ic, U, Vk, (size_t)ld, Mk, (size_t)36 * ld);
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
 * outputs, offset -2), both on 6x6 input tiles with the same B^T. The chunk's input rows are
 * copied into a zero-bordered buffer; the transforms put a group of tiles in the lanes of a
 * vector (8 lanes of vector extensions, or 4 of NEON intrinsics on aarch64), each lane doing
 * the scalar transform's operations in the same order (along x first, then y, as KataGo), so
 * the lanes change no bits. */

#ifndef HC_NEON /* the NEON forms: refs/winograd_neon.c */
/* The vector-extension transforms (8 tiles per vector). One channel's input transform into
 * Vi [36][ld]: eight tiles' input rows transposed into lanes, B^T along x, then along y. */
void hc_wino_in_channel(const wino_chunk_geom *ch, const float *pad, float *Vi)
{
    for (int l0 = 0; l0 < ch->n; l0 += 8) {
        int lanes = ch->n - l0 < 8 ? ch->n - l0 : 8;
        hc_v8f d[36], tmp[36], o[6];
        for (int r = 0; r < 6; r++) { /* 8 tiles' input row r, transposed into lanes */
            hc_v8f rows[8];
            for (int l = 0; l < 8; l++) {
                if (l < lanes)
                    memcpy(&rows[l], pad + ch->lane_off[l0 + l] + (size_t)r * ch->wp, sizeof rows[l]);
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
                v8_store(Vi + (size_t)(r * 6 + c) * ch->ld + l0, o[r], lanes);
        }
    }
}

/* The output transform from M [oc][36][ld]: A^T along x, then y, the fused epilogue, then the
 * lanes transposed back into tiles and stored into (or added to) the planes. */
void hc_wino_out_chunk(const wino_chunk_geom *ch, const float *M, float *out, int accumulate,
                       const hc_kepi *epi)
{
    const hc_kconv *cv = ch->cv;
    int five = ch->five, osz = ch->osz, ov = osz * osz, ld = ch->ld, nx = ch->nx;
    for (int l0 = 0; l0 < ch->n; l0 += 8) {
        int lanes = ch->n - l0 < 8 ? ch->n - l0 : 8;
        wino_lane_out lo[8];
        hc_v8f mk[16]; /* the epilogue's mask in the outputs' layout (0 off the board) */
        for (int l = 0; l < 8; l++)
            hc_wino_lane_out_at(ch, l0 + l, epi, &lo[l]);
        for (int k = 0; k < ov; k++)
            for (int l = 0; l < 8; l++)
                mk[k][l] = lo[l].mk[k];
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
                        rb[l] = epi->row_bias[(size_t)lo[l].row * cv->oc + oc];
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
            float *plane = out + (size_t)oc * ch->batch * ch->hw;
            for (int l = 0; l < lanes; l++) {
                float tb[16];
                memcpy(tb, &tv[l], sizeof tv[l]);
                if (!five)
                    memcpy(tb + 8, &tv[8 + l], sizeof tv[8 + l]);
                float *drow = plane + lo[l].dst;
                if (lo[l].rmax == 4 && lo[l].cmax == 4 && !five) {
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
                for (int r = 0; r < lo[l].rmax; r++, drow += nx)
                    hc_wino_put_row(drow, tb + r * osz, lo[l].cmax, accumulate);
            }
        }
    }
}
#endif

static void wino_chunk_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in,
                           float *out, int accumulate, float *ws, int g0, int n, int ld,
                           const hc_kepi *epi)
{
    wino_chunk_geom ch;
    int five = cv->kh == 5, step = five ? 2 : 4, off = five ? 2 : 1;
    ch.cv = cv, ch.batch = batch, ch.five = five, ch.osz = step, ch.nx = nx, ch.ny = ny;
    ch.hw = nx * ny, ch.txn = (nx + step - 1) / step;
    ch.T = five ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    ch.g0 = g0, ch.n = n, ch.ld = ld;
    int hw = ch.hw, txn = ch.txn, T = ch.T;
    float *V = ws, *M = ws + (size_t)36 * cv->ic * ld;
    float *pad = M + (size_t)(36 + (cv->acc_fp16 ? 1 : 0)) * cv->oc * ld;
    int wp, hp, prow;
    wino_pad_dims(cv, batch, nx, ny, &wp, &hp, &prow);
    ch.wp = wp;
    int b_first = g0 / T, b_last = (g0 + n - 1) / T;
    size_t psz = (size_t)wp * hp;
    memset(pad, 0, psz * (size_t)(b_last - b_first + 1) * sizeof(float));
    for (int j = 0; j < n; j++) {
        int g = g0 + j, b = g / T, t = g % T;
        ch.lane_off[j] = (size_t)(b - b_first) * psz + (size_t)((t / txn) * step) * wp + (t % txn) * step;
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
        hc_wino_in_channel(&ch, pad, V + (size_t)i * 36 * ld);
    }
    wino_gemms(cv, n, ld, V, M);
    hc_wino_out_chunk(&ch, M, out, accumulate, epi);
}

#endif

size_t hc_wino_workspace(const hc_kconv *cv, int batch, int nx, int ny)
{
    /* V and M of one chunk (+ an fp16-accumulation chunk), then the padded input planes where
     * the transforms use them */
    int mo = cv->oc;
#ifdef WINO_AVX2
    mo = cv->oc < WINO_OB ? cv->oc : WINO_OB; /* M of one block of output channels */
#endif
    int ld = wino_ld(wino_chunk(cv, batch, nx, ny));
    return 36 * wino_vk(cv, ld) + (size_t)(36 * mo + (cv->acc_fp16 ? mo : 0)) * ld +
           wino_pad_size(cv, batch, nx, ny);
}

void hc_wino_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out, int accumulate,
                 float *ws, const hc_kepi *epi)
{
    int T = cv->kh == 5 ? wino5_tiles(nx, ny) : wino_tiles(nx, ny);
    int all = batch * T, nc = wino_chunk(cv, batch, nx, ny);
    for (int g0 = 0; g0 < all; g0 += nc)
        wino_chunk_run(cv, batch, nx, ny, in, out, accumulate, ws, g0, all - g0 < nc ? all - g0 : nc,
                       wino_ld(nc), epi);
}

const char *hc_wino_isa(void)
{
#if defined(WINO_AVX2)
    return "avx2";
#elif defined(HC_NEON)
    return "neon";
#else
    return "vector";
#endif
}
