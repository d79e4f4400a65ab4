/* The per-output arithmetic of the emulated reductions (poolSum, normSum): refs/emulated.c's
 * hc_pool_*_fmt and hc_rmsnorm_*_fmt loop over these, and backends/cuda_ref.cu's _fmt kernels
 * call them from one GPU thread per output (host and device functions under nvcc, HC_HD), so
 * the CPU emulation and cuda:emulate run one source and cannot drift.
 *
 * fmt is HC_KFMT_* (refs/kernels.h); every add, product, divide, sqrt and reciprocal is rounded
 * to it, in the reference's order (docs/EMULATION.md, "Pooling sums and normalization
 * reductions"). No FMA: both compilers build these without contraction (-ffp-contract=off,
 * nvcc -fmad=false), and sqrtf and the divide are IEEE on both (nvcc -prec-sqrt -prec-div).
 *
 * plant (tests only, never set by the emulation): a moved rounding point for tests/
 * gpu_test_emulate.c to catch: the running sums are rounded after every second add only. */
#ifndef HC_SUMS_CORE_H
#define HC_SUMS_CORE_H

#include <math.h>
#include <stddef.h>

#include "refs/kernels.h"
#include "refs/round.h"

/* x rounded to fmt (fp32: unchanged). */
static inline HC_HD float hc_sums_rfmt(int fmt, float x)
{
    return fmt == HC_KFMT_FP16 ? hc_round_fp16(x) : fmt == HC_KFMT_BF16 ? hc_round_bf16(x) : x;
}

/* 1 for inf or NaN (the emulation flags the row: an overflowed sum). */
static inline HC_HD int hc_sums_nonfinite(float x)
{
    return (hc_f32_bits(x) & 0x7f800000u) == 0x7f800000u;
}

/* The running sum s + x rounded (plant: only after odd-numbered terms i). */
static inline HC_HD float hc_sums_add(int fmt, float s, float x, int i, int plant)
{
    return plant && (i & 1) == 0 ? s + x : hc_sums_rfmt(fmt, s + x);
}

/* One (row b, channel c) of hc_pool_gpool_fmt (mask given: the third value the masked max) or
 * hc_pool_value_fmt (mask NULL: the value head's third value): in CBP [C][B][hw], area the row's
 * mask sum; writes out[b*3C + c], [.. + C + c], [.. + 2C + c]. Returns 1 when the sum is not
 * finite (the row is flagged). */
static inline HC_HD int hc_sums_pool_one(int fmt, int C, int B, int hw, const float *in, const float *mask,
                                         float area, int b, int c, float *out, int plant)
{
    const float *src = in + ((size_t)c * B + b) * hw;
    float div = hc_sums_rfmt(fmt, area);
    float t = hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, sqrtf(div)) - 14.0f);
    float tenth = hc_sums_rfmt(fmt, 0.1f);
    float s = 0.0f;
    for (int p = 0; p < hw; p++)
        s = hc_sums_add(fmt, s, src[p], p, plant);
    float mean = hc_sums_rfmt(fmt, s / div);
    float *o = out + (size_t)b * 3 * C;
    o[c] = mean;
    o[c + C] = hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, mean * t) * tenth);
    if (mask) {
        /* the reference's masked max: exact on stored values in any format */
        const float *m = mask + (size_t)b * hw;
        float mx = -1.0f;
        for (int p = 0; p < hw; p++) {
            float v = src[p] + (m[p] - 1.0f);
            mx = mx > v ? mx : v;
        }
        o[c + 2 * C] = mx;
    } else {
        /* (sqrt(area) - 14)^2 * 0.01 - 0.1, each step in fmt */
        float q = hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, t * t) * hc_sums_rfmt(fmt, 0.01f)) - tenth);
        o[c + 2 * C] = hc_sums_rfmt(fmt, mean * q);
    }
    return hc_sums_nonfinite(s);
}

/* 1 / sqrt(ss / count + eps) with every step in fmt: the divide, eps itself (1e-5 is a binary16
 * subnormal), the add, the sqrt and the reciprocal each rounded. */
static inline HC_HD float hc_sums_rms_scale(int fmt, float ss, float count, float eps)
{
    float mean = hc_sums_rfmt(fmt, ss / hc_sums_rfmt(fmt, count));
    float r = hc_sums_rfmt(fmt, sqrtf(hc_sums_rfmt(fmt, mean + hc_sums_rfmt(fmt, eps))));
    return hc_sums_rfmt(fmt, 1.0f / r);
}

/* ss continued by the squares of column col of [C][cs] over channels in order, each square and
 * each add rounded (plant: the add's index is the channel). */
static inline HC_HD float hc_sums_sumsq(int fmt, int C, const float *in, size_t cs, size_t col, float ss, int plant)
{
    for (int c = 0; c < C; c++) {
        float v = in[c * cs + col];
        ss = hc_sums_add(fmt, ss, hc_sums_rfmt(fmt, v * v), c, plant);
    }
    return ss;
}

/* One column j of hc_rmsnorm_pos_fmt over [C][cs] (mj its mask): out's column, 0 off the board.
 * Returns 1 when an on-board column's sum of squares is not finite. */
static inline HC_HD int hc_sums_rmsnorm_col(int fmt, int C, size_t cs, const float *in, float *out, const float *w,
                                            float eps, float mj, size_t j, int plant)
{
    if (mj == 0.0f) {
        for (int c = 0; c < C; c++)
            out[c * cs + j] = 0.0f;
        return 0;
    }
    float ss = hc_sums_sumsq(fmt, C, in, cs, j, 0.0f, plant);
    float rms = hc_sums_rms_scale(fmt, ss, (float)C, eps);
    for (int c = 0; c < C; c++)
        out[c * cs + j] = hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, in[c * cs + j] * rms) * w[c]);
    return hc_sums_nonfinite(ss);
}

/* hc_rmsnorm_tip_fmt's spatial scale of row b: one sum over the on-board positions in buffer
 * order, channels within; *bad = 1 when that sum is not finite. */
static inline HC_HD float hc_sums_tip_row_rms(int fmt, int C, int B, int hw, const float *in, const float *mask,
                                              float eps, int b, int *bad, int plant)
{
    size_t cs = (size_t)B * hw;
    float ss = 0.0f;
    int count = 0;
    for (int p = 0; p < hw; p++) {
        size_t col = (size_t)b * hw + p;
        if (mask[col] == 0.0f)
            continue;
        ss = hc_sums_sumsq(fmt, C, in, cs, col, ss, plant);
        count++;
    }
    *bad = hc_sums_nonfinite(ss);
    return hc_sums_rms_scale(fmt, ss, (float)count * (float)C, eps);
}

/* hc_rmsnorm_tip_fmt's scale of one column (the per-position tip); *bad as above. */
static inline HC_HD float hc_sums_tip_col_rms(int fmt, int C, size_t cs, const float *in, float eps, size_t col,
                                              int *bad, int plant)
{
    float ss = hc_sums_sumsq(fmt, C, in, cs, col, 0.0f, plant);
    *bad = hc_sums_nonfinite(ss);
    return hc_sums_rms_scale(fmt, ss, (float)C, eps);
}

/* The tip's x * rms * gamma + beta, each step rounded; the activation follows in fp32. */
static inline HC_HD float hc_sums_tip_affine(int fmt, float x, float rms, float g, float be)
{
    return hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, hc_sums_rfmt(fmt, x * rms) * g) + be);
}

/* ---- backends/cuda_ref.cu's threads: each kernel's GRID_LOOP body is one of these, so that
 * tests/test_sums.c runs the GPU kernels' index mapping on the CPU. Each returns the batch row
 * its sum flags (not finite), or -1. */

/* k_pool_fmt, thread i of B*C: row i / C, channel i % C (mask NULL: the value head). */
static inline HC_HD int hc_sums_pool_thread(int fmt, int C, int B, int hw, const float *in, const float *mask,
                                            const float *msum, float *out, size_t i, int plant)
{
    int c = (int)(i % (size_t)C), b = (int)(i / (size_t)C);
    return hc_sums_pool_one(fmt, C, B, hw, in, mask, msum[b], b, c, out, plant) ? b : -1;
}

/* k_rmsnorm_pos_fmt, thread j of B*hw: column j. */
static inline HC_HD int hc_sums_rmsnorm_pos_thread(int fmt, int C, int B, int hw, const float *in, float *out,
                                                   const float *w, float eps, const float *mask, size_t j, int plant)
{
    return hc_sums_rmsnorm_col(fmt, C, (size_t)B * hw, in, out, w, eps, mask[j], j, plant) ? (int)(j / (size_t)hw)
                                                                                             : -1;
}

/* k_tip_rms_row_fmt, thread b of B: the spatial tip's scale into rms[b*hw .. b*hw + hw). */
static inline HC_HD int hc_sums_tip_row_thread(int fmt, int C, int B, int hw, const float *in, const float *mask,
                                               float eps, float *rms, size_t b, int plant)
{
    int bad = 0;
    float r = hc_sums_tip_row_rms(fmt, C, B, hw, in, mask, eps, (int)b, &bad, plant);
    for (int p = 0; p < hw; p++)
        rms[b * hw + p] = r;
    return bad ? (int)b : -1;
}

/* k_tip_rms_col_fmt, thread j of B*hw: column j's scale (every column; only an on-board one
 * flags its row, as the CPU sums on-board columns only). */
static inline HC_HD int hc_sums_tip_col_thread(int fmt, int C, int B, int hw, const float *in, const float *mask,
                                               float eps, float *rms, size_t j, int plant)
{
    int bad = 0;
    rms[j] = hc_sums_tip_col_rms(fmt, C, (size_t)B * hw, in, eps, j, &bad, plant);
    return bad && mask[j] != 0.0f ? (int)(j / (size_t)hw) : -1;
}

/* k_tip_apply_fmt, thread i of C*B*hw: the value before the tip's activation (0 off the board;
 * the caller applies the activation to on-board values only). */
static inline HC_HD float hc_sums_tip_apply_thread(int fmt, size_t S, const float *in, const float *g,
                                                   const float *be, const float *rms, size_t i)
{
    int c = (int)(i / S);
    size_t j = i % S;
    return hc_sums_tip_affine(fmt, in[i], rms[j], g[c], be[c]);
}

#endif
