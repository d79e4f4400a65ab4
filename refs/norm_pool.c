/* Reference kernels: masks, batch norm, pooling, vectors, RMSNorm, residuals, SwiGLU. */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/gemm.h"
#include "harness/base/hcmath.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* KataGo's pooling of each row into 3 x channels features: the mean over the board, the mean
 * scaled by (sqrt(area) - 14) / 10, and then the max over the board (the gpool layers, value 0)
 * or the mean times ((sqrt(area) - 14)^2 / 100 - 0.1) (the value head, value 1; mask unread). */
static void pool_rows(int value, int channels, int batch, int hw, const float *in, const float *mask,
                      const float *mask_sum, float *out)
{
    for (int b = 0; b < batch; b++) {
        const float *m = value ? NULL : mask + (size_t)b * hw;
        float div = mask_sum[b];
        float sqrtdiv = sqrtf(div);
        float *o = out + (size_t)b * 3 * channels;
        for (int c0 = 0; c0 < channels; c0 += POOL_CH) {
            int n = channels - c0 < POOL_CH ? channels - c0 : POOL_CH;
            float sum[POOL_CH], mx[POOL_CH];
            pool_chains(n, batch, hw, in, c0, b, m, sum, value ? NULL : mx);
            for (int l = 0; l < n; l++) {
                int c = c0 + l;
                float mean = sum[l] / div;
                o[c] = mean;
                o[c + channels] = mean * (sqrtdiv - 14.0f) * 0.1f;
                o[c + 2 * channels] = value ? mean * ((sqrtdiv - 14.0f) * (sqrtdiv - 14.0f) * 0.01f - 0.1f) : mx[l];
            }
        }
    }
}

void hc_pool_gpool(int channels, int batch, int hw, const float *in, const float *mask,
                   const float *mask_sum, float *out)
{
    pool_rows(0, channels, batch, hw, in, mask, mask_sum, out);
}

void hc_pool_value(int channels, int batch, int hw, const float *in, const float *mask_sum,
                   float *out)
{
    pool_rows(1, channels, batch, hw, in, NULL, mask_sum, out);
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
