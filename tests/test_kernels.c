/* Kernels against naive double-precision implementations written from KataGo's formulas, at
 * several batch sizes, with boards smaller than the buffer (each row its own mask). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/hcmath.h"
#include "refs/gemm.h"
#include "refs/kernels.h"

static hc_rng rng = {0x9E3779B97F4A7C15ull};

/* Relative error against a scale: |got - want| / (|scale| + tiny). */
static double maxerr_rel(size_t n, const float *got, const double *want, const double *scale)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]) / (scale[i] + 1e-30);
        e = hc_max_nan(e, d);
    }
    return e;
}

static double act_d(int act, double x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0 ? x : 0;
    case HC_ACT_MISH: return x * tanh(log1p(exp(x)));
    case HC_ACT_SILU: return x / (1 + exp(-x));
    case HC_ACT_MISH_SCALE8: return x * tanh(log1p(exp(8 * x)));
    default: return x;
    }
}

static void test_conv(void)
{
    /* oc, ic, kh, kw, nx, ny, winograd */
    static const int shapes[][7] = {{5, 3, 3, 3, 7, 6, 0}, {5, 3, 3, 3, 7, 6, 1}, {9, 10, 3, 3, 19, 13, 1},
                                    {4, 6, 3, 3, 4, 8, 1}, {4, 6, 5, 5, 7, 6, 0}, {3, 4, 1, 1, 7, 6, 0},
                                    {2, 3, 1, 3, 7, 6, 0}, {3, 2, 7, 7, 7, 6, 0}};
    static const int batches[] = {1, 2, 5};
    int id = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
            int oc = shapes[si][0], ic = shapes[si][1], kh = shapes[si][2], kw = shapes[si][3];
            int batch = batches[bi], nx = shapes[si][4], ny = shapes[si][5], hw = nx * ny;
            int wino = shapes[si][6];
            for (int acc = 0; acc < 2; acc++) {
                id++;
                float *w = hc_rvec(&rng, (size_t)oc * ic * kh * kw, 1.0);
                float *in = hc_rvec(&rng, (size_t)ic * batch * hw, 1.0);
                float *out = hc_rvec(&rng, (size_t)oc * batch * hw, 1.0);
                double *want = malloc((size_t)oc * batch * hw * sizeof(double));
                double *scale = malloc((size_t)oc * batch * hw * sizeof(double));
                hc_kconv cv;
                hc_err err = {0};
                char name[64];
                int init_ok = hc_kconv_init(&cv, w, oc, ic, kh, kw, &err) == 0 &&
                              (!wino || hc_kconv_use_winograd(&cv, &err) == 0);
                snprintf(name, sizeof name, "kernels-1.%d.init", id);
                hc_check(name, init_ok && (!wino || cv.wino), "%s",
                         init_ok ? "3x3 conv did not switch to Winograd" : err.msg);
                snprintf(name, sizeof name, "kernels-1.%d", id);
                if (!init_ok) {
                    hc_fail_n(name, 1, "not run: no convolution");
                    continue;
                }
                for (int o = 0; o < oc; o++)
                    for (int b = 0; b < batch; b++)
                        for (int y = 0; y < ny; y++)
                            for (int x = 0; x < nx; x++) {
                                size_t oi = ((size_t)o * batch + b) * hw + y * nx + x;
                                double s = acc ? out[oi] : 0, a = acc ? fabs(out[oi]) : 0;
                                for (int i = 0; i < ic; i++)
                                    for (int dy = 0; dy < kh; dy++)
                                        for (int dx = 0; dx < kw; dx++) {
                                            int sy = y + dy - kh / 2, sx = x + dx - kw / 2;
                                            if (sy < 0 || sy >= ny || sx < 0 || sx >= nx)
                                                continue;
                                            double t = (double)w[((o * ic + i) * kh + dy) * kw + dx] *
                                                       in[((size_t)i * batch + b) * hw + sy * nx + sx];
                                            s += t;
                                            a += fabs(t);
                                        }
                                want[oi] = s;
                                scale[oi] = a;
                            }
                float *ws = malloc((hc_kconv_workspace(&cv, batch, nx, ny) + 1) * sizeof(float));
                hc_kconv_run(&cv, batch, nx, ny, in, out, acc, ws);
                double e = maxerr_rel((size_t)oc * batch * hw, out, want, scale);
                hc_check(name, e < (wino ? 1e-5 : 1e-6), "conv %dx%d %d->%d %dx%d batch %d acc %d wino %d: rel err %g",
                         kh, kw, ic, oc, nx, ny, batch, acc, wino, e);
                hc_kconv_free(&cv);
                free(w), free(in), free(out), free(want), free(scale), free(ws);
            }
        }
}

static void test_bn_pool(void)
{
    static const int acts[] = {HC_ACT_IDENTITY, HC_ACT_RELU, HC_ACT_MISH, HC_ACT_SILU, HC_ACT_MISH_SCALE8};
    int id = 0;
    for (int batch = 1; batch <= 4; batch += 3)
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
            int c = 5, nx = 6, ny = 5, hw = nx * ny, act = acts[ai];
            float msum[8];
            float *mask = hc_board_mask(batch, nx, ny, msum);
            float *in = hc_rvec(&rng, (size_t)c * batch * hw, 3.0);
            float *mean = hc_rvec(&rng, c, 1.0), *var = hc_rvec(&rng, c, 1.0), *gam = hc_rvec(&rng, c, 2.0), *bet = hc_rvec(&rng, c, 1.0);
            for (int i = 0; i < c; i++)
                var[i] = fabsf(var[i]) + 0.1f;
            float sc[8], bi[8];
            hc_bn_merge(c, 1e-3f, mean, var, gam, bet, sc, bi);
            float *out = malloc((size_t)c * batch * hw * sizeof(float));
            hc_bn_act(c, batch, hw, in, out, sc, bi, act, mask);
            double e = 0;
            for (int ch = 0; ch < c; ch++)
                for (int b = 0; b < batch; b++)
                    for (int p = 0; p < hw; p++) {
                        size_t i = ((size_t)ch * batch + b) * hw + p;
                        double x = ((double)in[i] - mean[ch]) / sqrt((double)var[ch] + 1e-3) * gam[ch] + bet[ch];
                        double want = mask[b * hw + p] == 1.0f ? act_d(act, x) : 0.0;
                        /* the merged form rounds relative to its terms, not to the result */
                        double terms = fabs((double)in[i] * sc[ch]) + fabs((double)sc[ch] * mean[ch]) + fabs((double)bet[ch]) + 1e-6;
                        double d = fabs(out[i] - want) / (fabs(want) + terms);
                        e = hc_max_nan(e, d);
                        if (mask[b * hw + p] == 0.0f && out[i] != 0.0f)
                            e = INFINITY;
                    }
            char name[64];
            snprintf(name, sizeof name, "kernels-2.%d", ++id);
            hc_check(name, e < 2e-6, "bn act %d batch %d: err %g", act, batch, e);

            /* pooling of the masked activation */
            float *g = malloc((size_t)batch * 3 * c * sizeof(float));
            float *v = malloc((size_t)batch * 3 * c * sizeof(float));
            hc_pool_gpool(c, batch, hw, out, mask, msum, g);
            hc_pool_value(c, batch, hw, out, msum, v);
            double eg = 0, ev = 0;
            for (int b = 0; b < batch; b++) {
                double area = 0;
                for (int p = 0; p < hw; p++)
                    area += mask[b * hw + p];
                double q = sqrt(area) - 14.0;
                for (int ch = 0; ch < c; ch++) {
                    double s = 0, sa = 0, mx = -1.0;
                    for (int p = 0; p < hw; p++) {
                        double x = out[((size_t)ch * batch + b) * hw + p];
                        s += x;
                        sa += fabs(x);
                        if (mask[b * hw + p] == 1.0f && x > mx)
                            mx = x;
                    }
                    double mean_ = s / area, tol = sa / area + 1e-6;
                    const float *gr = g + (size_t)b * 3 * c, *vr = v + (size_t)b * 3 * c;
                    double d1 = hc_max_nan(fabs(gr[ch] - mean_), fabs(gr[c + ch] - mean_ * q * 0.1) / (fabs(q) * 0.1 + 1e-9));
                    d1 = hc_max_nan(d1 / tol, fabs(gr[2 * c + ch] - mx) / (fabs(mx) + 1e-6));
                    double d2 = hc_max_nan(fabs(vr[ch] - mean_), fabs(vr[c + ch] - mean_ * q * 0.1) / (fabs(q) * 0.1 + 1e-9));
                    d2 = hc_max_nan(d2, fabs(vr[2 * c + ch] - mean_ * (q * q * 0.01 - 0.1)) / fabs(q * q * 0.01 - 0.1));
                    d2 /= tol;
                    eg = hc_max_nan(eg, d1);
                    ev = hc_max_nan(ev, d2);
                }
            }
            snprintf(name, sizeof name, "kernels-3.%d", id);
            hc_check(name, eg < 1e-5, "gpool act %d batch %d: err %g", act, batch, eg);
            snprintf(name, sizeof name, "kernels-4.%d", id);
            hc_check(name, ev < 1e-5, "value pool act %d batch %d: err %g", act, batch, ev);
            free(mask), free(in), free(mean), free(var), free(gam), free(bet), free(out), free(g), free(v);
        }
}

/* KataGo starts the masked max at -1, so a row whose on-board values are all below -1 pools
 * to -1, whether or not the board fills the buffer. */
static void test_gpool_max_padding(void)
{
    float in[2 * 4] = {-2, -3, 0, 0, -2, -3, -4, -5}; /* batch 2, hw 4, one channel */
    float mask[8] = {1, 1, 0, 0, 1, 1, 1, 1};
    float ms[2] = {2, 4};
    float out[6];
    hc_pool_gpool(1, 2, 4, in, mask, ms, out);
    hc_check("kernels-5.1", out[2] == -1.0f && out[5] == -1.0f,
             "masked max: want -1 (KataGo's init), got %g %g", out[2], out[5]);
    hc_check("kernels-5.2", out[0] == -2.5f && out[3] == -3.5f, "means %g %g", out[0], out[3]);
}

/* The pools run several channels' chains side by side: each channel's sum and max must still
 * be the plain loop's, in point order, bit for bit (channel counts around the group of 8,
 * masked points, batch rows). */
static void test_pool_bits(void)
{
    int chans[] = {1, 7, 8, 9, 17, 32}, hws[] = {1, 5, 361}, bad = 0, cases = 0;
    for (size_t ci = 0; ci < sizeof chans / sizeof chans[0]; ci++)
        for (size_t hi = 0; hi < sizeof hws / sizeof hws[0]; hi++)
            for (int batch = 1; batch <= 3; batch++) {
                int c = chans[ci], hw = hws[hi];
                size_t n = (size_t)c * batch * hw;
                float *in = malloc(n * sizeof(float)), *mask = malloc((size_t)batch * hw * sizeof(float));
                uint32_t st = 12345u + (uint32_t)(c * 1000 + hw); /* its own values: urand's sequence feeds later tests */
                for (size_t i = 0; i < n; i++) {
                    st = st * 1664525u + 1013904223u;
                    in[i] = (float)((int32_t)(st >> 8) - (1 << 23)) / (float)(1 << 20); /* -8 .. 8 */
                }
                float ms[3], *g = malloc((size_t)batch * 3 * c * sizeof(float)), *v = malloc((size_t)batch * 3 * c * sizeof(float));
                for (int b = 0; b < batch; b++) {
                    ms[b] = 0.0f;
                    for (int p = 0; p < hw; p++) {
                        mask[b * hw + p] = (p * 7 + b) % 5 == 4 && hw > 1 ? 0.0f : 1.0f;
                        ms[b] += mask[b * hw + p];
                    }
                }
                hc_pool_gpool(c, batch, hw, in, mask, ms, g);
                hc_pool_value(c, batch, hw, in, ms, v);
                for (int b = 0; b < batch; b++)
                    for (int ch = 0; ch < c; ch++) {
                        const float *src = in + ((size_t)ch * batch + b) * hw;
                        float sum = 0.0f, mx = -1.0f;
                        for (int p = 0; p < hw; p++) {
                            sum += src[p];
                            float w = src[p] + (mask[b * hw + p] - 1.0f);
                            mx = mx > w ? mx : w;
                        }
                        float mean = sum / ms[b], sq = sqrtf(ms[b]);
                        const float *og = g + (size_t)b * 3 * c, *ov = v + (size_t)b * 3 * c;
                        float want[5] = {mean, mean * (sq - 14.0f) * 0.1f, mx,
                                         mean * ((sq - 14.0f) * (sq - 14.0f) * 0.01f - 0.1f)};
                        bad += memcmp(&og[ch], &want[0], 4) || memcmp(&og[ch + c], &want[1], 4) ||
                               memcmp(&og[ch + 2 * c], &want[2], 4) || memcmp(&ov[ch], &want[0], 4) ||
                               memcmp(&ov[ch + c], &want[1], 4) || memcmp(&ov[ch + 2 * c], &want[3], 4);
                    }
                cases++;
                free(in), free(mask), free(g), free(v);
            }
    hc_check("kernels-5.3", bad == 0, "%d pooled values of %d cases differ from the plain loops", bad, cases);
}

static void test_matmul(void)
{
    int id = 0;
    for (int batch = 1; batch <= 7; batch += 3) {
        int ic = 9, oc = 6;
        float *in = hc_rvec(&rng, (size_t)batch * ic, 1), *w = hc_rvec(&rng, (size_t)ic * oc, 1), *bias = hc_rvec(&rng, oc, 1);
        float *out = malloc((size_t)batch * oc * sizeof(float));
        hc_matmul_bc(batch, ic, oc, in, w, out);
        hc_bias_act_bc(batch, oc, out, bias, HC_ACT_MISH);
        double e = 0;
        for (int b = 0; b < batch; b++)
            for (int o = 0; o < oc; o++) {
                double s = bias[o], a = fabs(bias[o]);
                for (int i = 0; i < ic; i++) {
                    s += (double)in[b * ic + i] * w[i * oc + o];
                    a += fabs((double)in[b * ic + i] * w[i * oc + o]);
                }
                double d = fabs(out[b * oc + o] - act_d(HC_ACT_MISH, s)) / (a + 1e-9);
                e = hc_max_nan(e, d);
            }
        char name[64];
        snprintf(name, sizeof name, "kernels-6.%d", ++id);
        hc_check(name, e < 1e-6, "matmul_bc batch %d: err %g", batch, e);

        int s = batch * 5;
        float *x = hc_rvec(&rng, (size_t)ic * s, 1), *y = malloc((size_t)oc * s * sizeof(float));
        hc_matmul_cs(batch, 5, ic, oc, x, w, y);
        e = 0;
        for (int o = 0; o < oc; o++)
            for (int j = 0; j < s; j++) {
                double acc = 0, a = 0;
                for (int i = 0; i < ic; i++) {
                    acc += (double)w[i * oc + o] * x[(size_t)i * s + j];
                    a += fabs((double)w[i * oc + o] * x[(size_t)i * s + j]);
                }
                double d = fabs(y[(size_t)o * s + j] - acc) / (a + 1e-9);
                e = hc_max_nan(e, d);
            }
        snprintf(name, sizeof name, "kernels-7.%d", id);
        hc_check(name, e < 1e-6, "matmul_cs s %d: err %g", s, e);
        free(in), free(w), free(bias), free(out), free(x), free(y);
    }
}

static void test_rmsnorm(void)
{
    int id = 0;
    for (int batch = 1; batch <= 3; batch += 2)
        for (int mode = 0; mode < 3; mode++) { /* 0 pos, 1 tip per position, 2 tip spatial */
            int c = 7, nx = 5, ny = 4, hw = nx * ny;
            size_t cs = (size_t)batch * hw;
            float msum[4];
            float *mask = hc_board_mask(batch, nx, ny, msum);
            float *in = hc_rvec(&rng, c * cs, 2), *gam = hc_rvec(&rng, c, 1), *bet = hc_rvec(&rng, c, 1);
            float *out = malloc(c * cs * sizeof(float));
            float eps = 1e-5f;
            int act = mode == 2 ? HC_ACT_SILU : HC_ACT_MISH;
            if (mode == 0)
                hc_rmsnorm_pos(c, batch, hw, in, out, gam, eps, mask);
            else
                hc_rmsnorm_tip(c, batch, hw, in, out, gam, bet, eps, mode == 2, act, mask);
            double e = 0;
            for (int b = 0; b < batch; b++) {
                double ssrow = 0;
                int cnt = 0;
                for (int p = 0; p < hw; p++)
                    if (mask[b * hw + p] != 0.0f) {
                        cnt++;
                        for (int ch = 0; ch < c; ch++)
                            ssrow += (double)in[ch * cs + b * hw + p] * in[ch * cs + b * hw + p];
                    }
                for (int p = 0; p < hw; p++) {
                    size_t col = (size_t)b * hw + p;
                    double ss = 0;
                    for (int ch = 0; ch < c; ch++)
                        ss += (double)in[ch * cs + col] * in[ch * cs + col];
                    double r = mode == 2 ? 1.0 / sqrt(ssrow / ((double)cnt * c) + eps) : 1.0 / sqrt(ss / c + eps);
                    for (int ch = 0; ch < c; ch++) {
                        double want, term = in[ch * cs + col] * r * gam[ch], b = mode == 0 ? 0 : bet[ch];
                        if (mask[col] == 0.0f)
                            want = 0;
                        else if (mode == 0)
                            want = term;
                        else
                            want = act_d(act, term + b);
                        /* float's error is relative to the terms, not to a result they cancel
                         * to: the sums of squares and the scale (~1e-6 relative) carry into
                         * term, and term + bias rounds at their magnitude */
                        double allowed = 2e-5 * fabs(want) + 1e-5 * (fabs(term) + fabs(b)) + 1e-12;
                        double d = fabs(out[ch * cs + col] - want) / allowed;
                        e = hc_max_nan(e, d);
                    }
                }
            }
            char name[64];
            snprintf(name, sizeof name, "kernels-8.%d", ++id);
            hc_check(name, e <= 1.0, "rmsnorm mode %d batch %d: error %g times the allowance", mode, batch, e);
            free(mask), free(in), free(gam), free(bet), free(out);
        }
}

/* Attention with RoPE against a double implementation that computes its own angles. */
static void test_attention(void)
{
    static const int cfg[][5] = {
        /* heads, kv_heads, qd, vd, learnable */
        {3, 3, 8, 8, 0}, {6, 3, 8, 4, 1}, {4, 2, 6, 10, 0}, {2, 1, 4, 4, 1}};
    int id = 0;
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (int batch = 1; batch <= 3; batch += 2) {
            int heads = cfg[ci][0], kvh = cfg[ci][1], qd = cfg[ci][2], vd = cfg[ci][3], learn = cfg[ci][4];
            int nx = 5, ny = 4, hw = nx * ny, pairs = qd / 2;
            size_t s = (size_t)batch * hw;
            float msum[4];
            float *mask = hc_board_mask(batch, nx, ny, msum);
            float *q = hc_rvec(&rng, (size_t)heads * qd * s, 1.5), *k = hc_rvec(&rng, (size_t)kvh * qd * s, 1.5);
            float *v = hc_rvec(&rng, (size_t)kvh * vd * s, 1);
            float *freqs = learn ? hc_rvec(&rng, (size_t)kvh * pairs * 2, 1.0) : NULL;
            float theta = 100.0f;
            size_t tsz = (size_t)(learn ? kvh : 1) * pairs * hw;
            float *ct = malloc(tsz * sizeof(float)), *st = malloc(tsz * sizeof(float));
            hc_rope_tables(nx, ny, pairs, kvh, freqs, theta, ct, st);
            float *qr = malloc((size_t)heads * qd * s * sizeof(float));
            float *kr = malloc((size_t)kvh * qd * s * sizeof(float));
            memcpy(qr, q, (size_t)heads * qd * s * sizeof(float));
            memcpy(kr, k, (size_t)kvh * qd * s * sizeof(float));
            hc_rope_apply(batch, hw, heads, qd, kvh, learn, ct, st, qr);
            hc_rope_apply(batch, hw, kvh, qd, kvh, learn, ct, st, kr);
            float *out = malloc((size_t)heads * vd * s * sizeof(float));
            float *ws = malloc((size_t)2 * hw * hw * sizeof(float));
            hc_attention(batch, hw, heads, kvh, qd, vd, qr, kr, v, mask, out, ws);

            /* reference */
            double e = 0;
            double *qq = malloc(sizeof(double) * qd * hw), *kk = malloc(sizeof(double) * qd * hw);
            double *pr = malloc(sizeof(double) * hw);
            for (int b = 0; b < batch; b++)
                for (int h = 0; h < heads; h++) {
                    int kh = h / (heads / kvh);
                    for (int which = 0; which < 2; which++) {
                        const float *src = which ? k + (size_t)kh * qd * s : q + (size_t)h * qd * s;
                        double *dst = which ? kk : qq;
                        int th = kh; /* learnable table is per kv head, queries map to theirs */
                        for (int i = 0; i < hw; i++) {
                            int x = i % nx, y = i / nx;
                            for (int p = 0; p < pairs; p++) {
                                double ang;
                                if (learn)
                                    ang = x * (double)freqs[(th * pairs + p) * 2] + y * (double)freqs[(th * pairs + p) * 2 + 1];
                                else {
                                    int per = pairs / 2, pe = p < per ? p : p - per;
                                    double f = 1.0 / pow(theta, 2.0 * pe / pairs);
                                    ang = (p < per ? y : x) * f;
                                }
                                double x0 = src[(size_t)(2 * p) * s + b * hw + i], x1 = src[(size_t)(2 * p + 1) * s + b * hw + i];
                                dst[(2 * p) * hw + i] = x0 * cos(ang) - x1 * sin(ang);
                                dst[(2 * p + 1) * hw + i] = x0 * sin(ang) + x1 * cos(ang);
                            }
                        }
                    }
                    for (int qi = 0; qi < hw; qi++) {
                        int on = mask[b * hw + qi] != 0.0f;
                        double mx = -1e300, sum = 0;
                        for (int ki = 0; ki < hw; ki++) {
                            double d = 0;
                            for (int j = 0; j < qd; j++)
                                d += qq[j * hw + qi] * kk[j * hw + ki];
                            pr[ki] = d / sqrt((double)qd);
                            if (mask[b * hw + ki] != 0.0f && pr[ki] > mx)
                                mx = pr[ki];
                        }
                        for (int ki = 0; ki < hw; ki++) {
                            pr[ki] = mask[b * hw + ki] != 0.0f ? exp(pr[ki] - mx) : 0;
                            sum += pr[ki];
                        }
                        for (int j = 0; j < vd; j++) {
                            double o = 0, a = 0;
                            for (int ki = 0; ki < hw; ki++) {
                                double t = pr[ki] / sum * v[(size_t)(kh * vd + j) * s + b * hw + ki];
                                o += t;
                                a += fabs(t);
                            }
                            if (!on)
                                o = 0, a = 0;
                            double got = out[(size_t)(h * vd + j) * s + b * hw + qi];
                            double d = fabs(got - o) / (a + 1e-6);
                            e = hc_max_nan(e, d);
                        }
                    }
                }
            char name[64];
            snprintf(name, sizeof name, "kernels-9.%d", ++id);
            hc_check(name, e < 2e-5, "attention heads %d/%d qd %d vd %d learnable %d batch %d: err %g",
                     heads, kvh, qd, vd, learn, batch, e);
            free(mask), free(q), free(k), free(v), free(freqs), free(ct), free(st), free(qr), free(kr);
            free(out), free(ws), free(qq), free(kk), free(pr);
        }
}

static void test_swiglu_residual(void)
{
    size_t n = 50;
    float *a = hc_rvec(&rng, n, 4), *g = hc_rvec(&rng, n, 2), *a0 = malloc(n * sizeof(float));
    memcpy(a0, a, n * sizeof(float));
    hc_swiglu(n, a, g);
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double want = act_d(HC_ACT_SILU, a0[i]) * g[i];
        double d = fabs(a[i] - want) / (fabs(want) + 1e-6);
        e = hc_max_nan(e, d);
    }
    hc_check("kernels-10.1", e < 1e-5, "swiglu err %g", e);

    int c = 3, batch = 2, nx = 4, ny = 3, hw = nx * ny;
    float ms[2];
    float *mask = hc_board_mask(batch, nx, ny, ms);
    float *t = hc_rvec(&rng, (size_t)c * batch * hw, 1), *d = hc_rvec(&rng, (size_t)c * batch * hw, 1);
    float *t0 = malloc((size_t)c * batch * hw * sizeof(float));
    memcpy(t0, t, (size_t)c * batch * hw * sizeof(float));
    hc_residual_masked(c, batch, hw, t, d, mask);
    int ok = 1;
    for (int ch = 0; ch < c; ch++)
        for (int b = 0; b < batch; b++)
            for (int p = 0; p < hw; p++) {
                size_t i = ((size_t)ch * batch + b) * hw + p;
                float want = mask[b * hw + p] != 0.0f ? t0[i] + d[i] : t0[i];
                if (t[i] != want)
                    ok = 0;
            }
    hc_check("kernels-10.2", ok, "masked residual add wrong");

    float bias[2 * 3] = {1, 2, 3, 4, 5, 6};
    memcpy(t, t0, (size_t)c * batch * hw * sizeof(float));
    hc_add_bias_bc(c, batch, hw, t, bias);
    ok = 1;
    for (int ch = 0; ch < c; ch++)
        for (int b = 0; b < batch; b++)
            for (int p = 0; p < hw; p++) {
                size_t i = ((size_t)ch * batch + b) * hw + p;
                if (t[i] != t0[i] + bias[b * c + ch])
                    ok = 0;
            }
    hc_check("kernels-10.3", ok, "bias add (BC bias on CBP tensor) wrong");

    float spatial[2 * 2 * 3] = {1, 1, 0, 9, 9, 9, 1, 0, 0, 9, 9, 9};
    float m[6], msum[2];
    hc_mask_from_input(2, 3, 2, spatial, m, msum);
    hc_check("kernels-10.4", msum[0] == 2.0f && msum[1] == 1.0f && m[3] == 1.0f && m[4] == 0.0f,
             "mask from channel 0: sums %g %g", msum[0], msum[1]);
    free(a), free(g), free(a0), free(mask), free(t), free(d), free(t0);
}

static void test_vexpf(void)
{
    size_t n = 20011; /* not a multiple of 8: the tail path too */
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = -87.0f + 175.0f * (float)i / (float)(n - 1);
    memcpy(y, x, n * sizeof(float));
    hc_vexpf(n, y);
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double want = exp((double)x[i]);
        double d = fabs(y[i] - want) / want;
        e = hc_max_nan(e, d);
    }
    hc_check("kernels-vexpf.1", e < 3.0e-7, "vexpf max rel err %g (want < 2.5 ulp)", e);
    float big[3] = {-1000.0f, 1000.0f, 0.0f};
    hc_vexpf(3, big);
    hc_check("kernels-vexpf.2", isfinite(big[0]) && isfinite(big[1]) && big[0] < 1e-37f && big[2] == 1.0f,
             "clamping: exp(-1000) %g exp(1000) %g exp(0) %g", big[0], big[1], big[2]);
    free(x), free(y);
}

/* The vector exp's clamp and hc_expf, one lane written out as scalar C: MAXPS/MINPS's selects
 * (NaN passes both), then hc_expf, which the vector lanes equal inside [-87, 88]. */
static float vexp_lane(float x)
{
    x = -87.0f > x ? -87.0f : x;
    x = 88.0f < x ? 88.0f : x;
    return hc_expf(x);
}

/* The same bits, or both NaN (which NaN is no part of the contract). */
static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* The vector exp, Mish, SiLU and SwiGLU (NEON intrinsics on aarch64, vector extensions
 * elsewhere) against their definitions written here one scalar lane at a time: the same bits
 * over every float exponent that matters, the clamps' edges and the special values, every
 * tail length. Mish and SiLU go through hc_bn_act (scale and bias applied first, the mask's 0
 * lanes +0). */
static void test_vector_lanes(void)
{
    enum { N = 40000 };
    static const float odd[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -87.0f, 88.0f, -87.00001f, 88.00001f,
                                20.0f, 19.999998f, 1e-40f, -1e-40f, 3e38f, -3e38f, 89.0f, -104.0f};
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *g = hc_rvec(&rng, N, 4.0);
    float *m = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        if (i < (int)(sizeof odd / sizeof *odd))
            x[i] = odd[i];
        else /* magnitudes 2^-30 .. 2^7 of both signs, random mantissas */
            x[i] = (float)((hc_urand(&rng) - 0.5) * 2.0 * ldexp(1.0, (int)(hc_urand(&rng) * 38.0) - 30));
        m[i] = (i % 13) ? 1.0f : 0.0f;
    }
    int bad = 0, at = -1;
    for (int len = N - 7; len <= N; len++) { /* every tail length */
        memcpy(y, x, (size_t)len * sizeof(float));
        hc_vexpf((size_t)len, y);
        for (int i = 0; i < len; i++)
            if (!same_bits(y[i], vexp_lane(x[i])) && bad++ == 0)
                at = i;
    }
    hc_check("kernels-13.1", bad == 0, "%d exp lanes differ from hc_expf's scalar lane (first x = %a)", bad,
             at >= 0 ? (double)x[at] : 0.0);

    int acts[2] = {HC_ACT_MISH, HC_ACT_SILU};
    for (int a = 0; a < 2; a++) {
        float sc = 1.25f, bi = -0.375f;
        int hw = N / 3 - 1; /* three channels, batch 1, a plane that is not whole vectors */
        float scs[3] = {sc, sc, sc}, bis[3] = {bi, bi, bi}, *mk = m;
        hc_bn_act(3, 1, hw, x, y, scs, bis, acts[a], mk);
        int abad = 0, aat = -1;
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < hw; p++) {
                int i = c * hw + p;
                float v = x[i] * sc + bi, want;
                if (acts[a] == HC_ACT_MISH) {
                    float n = vexp_lane(v < 20.0f ? v : 20.0f), q = n * (n + 2.0f);
                    want = v * (q / (q + 2.0f));
                } else {
                    want = v / (vexp_lane(-v) + 1.0f);
                }
                want = mk[p] == 1.0f ? want : 0.0f;
                if (!same_bits(y[i], want) && abad++ == 0)
                    aat = i;
            }
        hc_check(a == 0 ? "kernels-13.2" : "kernels-13.3", abad == 0,
                 "%s: %d lanes differ from the scalar definition (first x = %a)", a == 0 ? "mish" : "silu", abad,
                 aat >= 0 ? (double)x[aat] : 0.0);
    }

    memcpy(y, x, N * sizeof(float));
    hc_swiglu(N - 3, y, g);
    int sbad = 0;
    for (int i = 0; i < N - 3; i++)
        sbad += !same_bits(y[i], x[i] / (1.0f + vexp_lane(-x[i])) * g[i]);
    hc_check("kernels-13.4", sbad == 0, "swiglu: %d lanes differ from the scalar definition", sbad);
    free(x), free(y), free(g), free(m);
}

/* hc_kconv_run_bn (batch norm + activation fused into the convolution's output stage, with or
 * without a per-row bias added first) gives the same bits as hc_kconv_run followed by
 * hc_add_bias_bc and hc_bn_act, on Winograd 3x3 and 5x5, im2col and 1x1 convolutions, boards
 * with padding, several batch sizes and every activation. */
/* The Winograd convolutions' bits, element by element, against a scalar form of the same
 * arithmetic written here: B^T along x then y on each zero-bordered 6x6 tile, each M element
 * one fmaf chain over the input channels in order (hc_gemm's contract), A^T along x then y,
 * then out = acc ? out + y : y. Shapes with boards smaller than a tile, single rows and
 * columns, partial tiles and batches whose tiles straddle the chunks. */
static void wino_bt_ref(const float z[6], float o[6])
{
    o[0] = 4.0f * z[0] - 5.0f * z[2] + z[4];
    o[1] = -4.0f * z[1] - 4.0f * z[2] + z[3] + z[4];
    o[2] = 4.0f * z[1] - 4.0f * z[2] - z[3] + z[4];
    o[3] = -2.0f * z[1] - z[2] + 2.0f * z[3] + z[4];
    o[4] = 2.0f * z[1] - z[2] - 2.0f * z[3] + z[4];
    o[5] = 4.0f * z[1] - 5.0f * z[3] + z[5];
}

static void wino_at_ref(int five, const float z[6], float *o)
{
    if (five) {
        o[0] = z[0] + z[1] + z[2] + z[3] + z[4];
        o[1] = (z[1] - z[2]) + 2.0f * (z[3] - z[4]) + z[5];
        return;
    }
    o[0] = z[0] + z[1] + z[2] + z[3] + z[4];
    o[1] = (z[1] - z[2]) + 2.0f * (z[3] - z[4]);
    o[2] = (z[1] + z[2]) + 4.0f * (z[3] + z[4]);
    o[3] = (z[1] - z[2]) + 8.0f * (z[3] - z[4]) + z[5];
}

static void wino_conv_ref(const hc_kconv *cv, int batch, int nx, int ny, const float *in,
                          float *out, int acc)
{
    int five = cv->kh == 5, step = five ? 2 : 4, off = five ? 2 : 1, osz = step;
    int hw = nx * ny, txn = (nx + step - 1) / step, tyn = (ny + step - 1) / step;
    float *v = malloc((size_t)cv->ic * 36 * sizeof(float));
    for (int b = 0; b < batch; b++)
        for (int ty = 0; ty < tyn; ty++)
            for (int tx = 0; tx < txn; tx++) {
                for (int i = 0; i < cv->ic; i++) {
                    float d[6][6], t[6][6], col[6], o[6];
                    for (int r = 0; r < 6; r++)
                        for (int c = 0; c < 6; c++) {
                            int y = ty * step - off + r, x = tx * step - off + c;
                            d[r][c] = y >= 0 && y < ny && x >= 0 && x < nx
                                          ? in[((size_t)i * batch + b) * hw + (size_t)y * nx + x]
                                          : 0.0f;
                        }
                    for (int r = 0; r < 6; r++)
                        wino_bt_ref(d[r], t[r]);
                    for (int c = 0; c < 6; c++) {
                        for (int r = 0; r < 6; r++)
                            col[r] = t[r][c];
                        wino_bt_ref(col, o);
                        for (int r = 0; r < 6; r++)
                            v[(size_t)i * 36 + r * 6 + c] = o[r];
                    }
                }
                for (int oc = 0; oc < cv->oc; oc++) {
                    float m[6][6], h[6][4], res[4][4], col[6], y[4];
                    for (int k = 0; k < 36; k++) {
                        float a = 0.0f;
                        for (int i = 0; i < cv->ic; i++)
                            a = fmaf(cv->wino[((size_t)k * cv->oc + oc) * cv->ic + i], v[(size_t)i * 36 + k], a);
                        m[k / 6][k % 6] = a;
                    }
                    for (int r = 0; r < 6; r++)
                        wino_at_ref(five, m[r], h[r]);
                    for (int c = 0; c < osz; c++) {
                        for (int r = 0; r < 6; r++)
                            col[r] = h[r][c];
                        wino_at_ref(five, col, y);
                        for (int r = 0; r < osz; r++)
                            res[r][c] = y[r];
                    }
                    for (int r = 0; r < osz; r++)
                        for (int c = 0; c < osz; c++) {
                            int yy = ty * osz + r, xx = tx * osz + c;
                            if (yy >= ny || xx >= nx)
                                continue;
                            float *p = out + ((size_t)oc * batch + b) * hw + (size_t)yy * nx + xx;
                            *p = acc ? *p + res[r][c] : res[r][c];
                        }
                }
            }
    free(v);
}

static void test_wino_bits(void)
{
    /* oc, ic, k, nx, ny */
    static const int shapes[][5] = {{5, 3, 3, 1, 1},   {7, 4, 3, 2, 3},   {9, 10, 3, 19, 13},
                                    {13, 6, 3, 9, 9},  {4, 5, 3, 5, 4},   {16, 17, 3, 19, 19},
                                    {3, 2, 3, 1, 11},  {6, 4, 5, 11, 7},  {5, 3, 5, 1, 2},
                                    {7, 22, 5, 19, 19}, {4, 3, 5, 4, 4},  {11, 9, 3, 18, 19},
                                    /* whole vectors of channels, and more output channels than
                                     * one block of tile GEMMs (c256 and c384 nets' shape) */
                                    {16, 16, 3, 19, 19}, {48, 32, 3, 5, 4}, {128, 16, 3, 9, 9},
                                    {200, 8, 3, 7, 6}};
    static const int batches[] = {1, 2, 3, 7};
    int id = 0, p_bad = 0, p_runs = 0, p_packed = 0, p_want = 0, p_restored = 0, p_four = 0;
    int packs = strcmp(hc_gemm_isa(), "avx2") == 0; /* the build whose tile GEMMs read packed weights */
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++)
            for (int acc = 0; acc < 2; acc++) {
                int oc = shapes[si][0], ic = shapes[si][1], k = shapes[si][2];
                int nx = shapes[si][3], ny = shapes[si][4], batch = batches[bi];
                size_t no = (size_t)oc * batch * nx * ny;
                float *w = hc_rvec(&rng, (size_t)oc * ic * k * k, 1.0);
                float *in = hc_rvec(&rng, (size_t)ic * batch * nx * ny, 1.0);
                float *got = hc_rvec(&rng, no, 1.0), *want = malloc(no * sizeof(float));
                float *init = malloc(no * sizeof(float));
                memcpy(want, got, no * sizeof(float));
                memcpy(init, got, no * sizeof(float));
                hc_kconv cv;
                hc_err err = {0};
                char name[64];
                snprintf(name, sizeof name, "kernels-12.%d", ++id);
                if (hc_kconv_init(&cv, w, oc, ic, k, k, &err) != 0 || hc_kconv_use_winograd(&cv, &err) != 0 ||
                    !cv.wino) {
                    hc_check(name, 0, "winograd %dx%d: %s", k, k, err.msg);
                    free(w), free(in), free(got), free(want), free(init);
                    continue;
                }
                float *ws = malloc((hc_kconv_workspace(&cv, batch, nx, ny) + 1) * sizeof(float));
                hc_kconv_run(&cv, batch, nx, ny, in, got, acc, ws);
                wino_conv_ref(&cv, batch, nx, ny, in, want, acc);
                size_t bad = 0;
                while (bad < no && memcmp(got + bad, want + bad, sizeof(float)) == 0)
                    bad++;
                hc_check(name, bad == no, "winograd %dx%d %d->%d %dx%d batch %d acc %d: element %zu %.9g, want %.9g",
                         k, k, ic, oc, nx, ny, batch, acc, bad, bad < no ? got[bad] : 0.0,
                         bad < no ? want[bad] : 0.0);
                /* the same convolution on hc_kconv_pack's layout: the same bits; fp16
                 * accumulation switched on afterwards puts the weights back as they were */
                size_t nw = (size_t)36 * oc * ic;
                float *u0 = malloc(nw * sizeof(float));
                memcpy(u0, cv.wino, nw * sizeof(float));
                hc_kconv_pack(&cv);
                p_packed += cv.wino_p4;
                p_want += packs && oc % 4 == 0;
                memcpy(got, init, no * sizeof(float)); /* acc: the same outputs to add to */
                hc_kconv_run(&cv, batch, nx, ny, in, got, acc, ws);
                p_bad += memcmp(got, want, no * sizeof(float)) != 0;
                p_runs++;
                if (cv.wino_p4) {
                    p_four++;
                    hc_kconv_set_modes(&cv, 1, 0);
                    p_restored += !cv.wino_p4 && memcmp(u0, cv.wino, nw * sizeof(float)) == 0;
                }
                free(u0), free(init);
                hc_kconv_free(&cv);
                free(w), free(in), free(got), free(want), free(ws);
            }
    hc_check("kernels-12.p1", p_bad == 0 && p_runs == 128, "%d of %d Winograd runs on packed weights differ", p_bad,
             p_runs);
    hc_check("kernels-12.p2", p_packed == p_want && (!packs || p_packed > 40),
             "%d convolutions packed, want %d (%s build)", p_packed, p_want, hc_gemm_isa());
    hc_check("kernels-12.p3", p_restored == p_four, "fp16 accumulation restored the weights of %d of %d packed convolutions",
             p_restored, p_four);
}

/* hc_bias_bn_act is hc_add_bias_bc then hc_bn_act, bit for bit, in place or not, for every
 * activation, on masked rows and on planes whose last vector is partial. */
static void test_bias_bn_act(void)
{
    static const int acts[] = {HC_ACT_IDENTITY, HC_ACT_RELU, HC_ACT_MISH, HC_ACT_SILU, HC_ACT_MISH_SCALE8};
    static const int dims[][3] = {{7, 19, 19}, {3, 5, 1}, {9, 9, 7}};
    int id = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (int batch = 1; batch <= 4; batch += 3)
            for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    int c = dims[di][0], nx = dims[di][1], ny = dims[di][2], hw = nx * ny;
                    size_t n = (size_t)c * batch * hw;
                    float msum[8];
                    float *mask = hc_board_mask(batch, nx, ny, msum);
                    float *in = hc_rvec(&rng, n, 2.0), *rb = hc_rvec(&rng, (size_t)batch * c, 2.0);
                    float *sc = hc_rvec(&rng, c, 1.5), *bi = hc_rvec(&rng, c, 1.0);
                    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
                    memcpy(want, in, n * sizeof(float));
                    hc_add_bias_bc(c, batch, hw, want, rb);
                    hc_bn_act(c, batch, hw, want, want, sc, bi, acts[ai], mask);
                    const float *src = in;
                    if (in_place) {
                        memcpy(got, in, n * sizeof(float));
                        src = got;
                    }
                    hc_bias_bn_act(c, batch, hw, src, got, rb, sc, bi, acts[ai], mask);
                    char name[64];
                    snprintf(name, sizeof name, "kernels-11b.%d", ++id);
                    hc_check(name, memcmp(want, got, n * sizeof(float)) == 0,
                             "%d channels %dx%d batch %d act %d in place %d: differs from bias + bn", c, nx, ny,
                             batch, acts[ai], in_place);
                    free(mask), free(in), free(rb), free(sc), free(bi), free(want), free(got);
                }
}

static void test_conv_bn(void)
{
    static const int shapes[][7] = {{9, 10, 3, 3, 19, 13, 1}, {8, 5, 3, 3, 9, 9, 1},
                                    {6, 4, 5, 5, 11, 7, 1},   {7, 3, 3, 3, 7, 6, 0},
                                    {5, 6, 1, 1, 8, 5, 0},    {16, 8, 3, 3, 19, 19, 1}};
    static const int acts[] = {HC_ACT_IDENTITY, HC_ACT_RELU, HC_ACT_MISH, HC_ACT_SILU, HC_ACT_MISH_SCALE8};
    int id = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int batch = 1; batch <= 5; batch += 2)
            for (int with_rb = 0; with_rb < 2; with_rb++)
            for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
                int oc = shapes[si][0], ic = shapes[si][1], kh = shapes[si][2], kw = shapes[si][3];
                int nx = shapes[si][4], ny = shapes[si][5], hw = nx * ny;
                float msum[8];
                float *mask = hc_board_mask(batch, nx, ny, msum);
                float *w = hc_rvec(&rng, (size_t)oc * ic * kh * kw, 1.0);
                float *in = hc_rvec(&rng, (size_t)ic * batch * hw, 1.0);
                float *sc = hc_rvec(&rng, oc, 1.5), *bi = hc_rvec(&rng, oc, 1.0);
                float *a = malloc((size_t)oc * batch * hw * sizeof(float));
                float *b = malloc((size_t)oc * batch * hw * sizeof(float));
                hc_kconv cv;
                hc_err err = {0};
                char name[64];
                snprintf(name, sizeof name, "kernels-11.%d", ++id);
                if (hc_kconv_init(&cv, w, oc, ic, kh, kw, &err) != 0 ||
                    (shapes[si][6] && hc_kconv_use_winograd(&cv, &err) != 0)) {
                    hc_check(name, 0, "%s", err.msg);
                    continue;
                }
                float *ws = malloc((hc_kconv_workspace(&cv, batch, nx, ny) + 1) * sizeof(float));
                /* a global-pooling block's per-row bias, large enough to move the activation's sign */
                float *rb = with_rb ? hc_rvec(&rng, (size_t)batch * oc, 2.0) : NULL;
                hc_kconv_run(&cv, batch, nx, ny, in, a, 0, ws);
                if (rb)
                    hc_add_bias_bc(oc, batch, hw, a, rb);
                hc_bn_act(oc, batch, hw, a, a, sc, bi, acts[ai], mask);
                hc_kepi epi = {sc, bi, acts[ai], mask, rb};
                hc_kconv_run_bn(&cv, batch, nx, ny, in, b, ws, &epi);
                hc_check(name, memcmp(a, b, (size_t)oc * batch * hw * sizeof(float)) == 0,
                         "conv %dx%d %d->%d %dx%d batch %d act %d row bias %d: fused bn differs from conv + bn",
                         kh, kw, ic, oc, nx, ny, batch, acts[ai], with_rb);
                hc_kconv_free(&cv);
                free(mask), free(w), free(in), free(sc), free(bi), free(a), free(b), free(ws), free(rb);
            }
}

/* ---- the transformer kernels against their plain forms, bit for bit ---------------------- */

/* Random 0/1 mask over batch rows of hw points: row 0 all on, the others with off points. */
static float *tf_mask(int batch, int hw)
{
    float *m = malloc((size_t)batch * hw * sizeof(float) + 1);
    for (int b = 0; b < batch; b++)
        for (int p = 0; p < hw; p++)
            m[(size_t)b * hw + p] = b == 0 || hc_urand(&rng) > -0.4 ? 1.0f : 0.0f;
    return m;
}

static float tf_exp(float x)
{
    hc_vexpf(1, &x);
    return x;
}

/* The plain forms: per element, the operations the kernels' headers specify, in order. */
static void plain_rmsnorm(int c, size_t cs, const float *in, float *out, const float *w, float eps,
                          const float *mask)
{
    for (size_t j = 0; j < cs; j++) {
        float ss = 0.0f;
        for (int ch = 0; ch < c; ch++)
            ss += in[ch * cs + j] * in[ch * cs + j];
        float r = mask[j] == 0.0f ? 0.0f : 1.0f / sqrtf(ss / (float)c + eps);
        for (int ch = 0; ch < c; ch++)
            out[ch * cs + j] = mask[j] == 0.0f ? 0.0f : in[ch * cs + j] * r * w[ch];
    }
}

static void plain_attention(int batch, int hw, int heads, int kvh, int qd, int vd, const float *q,
                            const float *k, const float *v, const float *mask, float *out)
{
    size_t s = (size_t)batch * hw;
    float scale = 1.0f / sqrtf((float)qd);
    float *e = malloc((size_t)hw * sizeof(float));
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++) {
            int g = h / (heads / kvh);
            const float *m = mask + (size_t)b * hw;
            for (int qi = 0; qi < hw; qi++) {
                size_t qc = (size_t)b * hw + qi;
                float mx = -1e30f;
                for (int ki = 0; ki < hw; ki++) {
                    float acc = 0.0f;
                    for (int d = 0; d < qd; d++)
                        acc = fmaf(k[((size_t)g * qd + d) * s + b * hw + ki], q[((size_t)h * qd + d) * s + qc], acc);
                    e[ki] = acc * scale;
                    if (m[ki] != 0.0f && e[ki] > mx)
                        mx = e[ki];
                }
                float ps[8] = {0};
                for (int ki = 0; ki < hw; ki++) {
                    e[ki] = m[ki] != 0.0f ? tf_exp(e[ki] - mx) * m[ki] : 0.0f;
                    ps[ki & 7] += e[ki];
                }
                float sum = 0.0f;
                for (int l = 0; l < 8; l++)
                    sum += ps[l];
                float inv = 1.0f / sum;
                for (int ki = 0; ki < hw; ki++)
                    e[ki] = m[qi] == 0.0f ? 0.0f : e[ki] * inv;
                for (int d = 0; d < vd; d++) {
                    float acc = 0.0f;
                    for (int ki = 0; ki < hw; ki++)
                        acc = fmaf(v[((size_t)g * vd + d) * s + b * hw + ki], e[ki], acc);
                    out[((size_t)h * vd + d) * s + qc] = acc;
                }
            }
        }
    free(e);
}

static void test_tf_bits(void)
{
    static const int hws[] = {1, 3, 7, 8, 9, 17, 20, 63, 81, 130, 361};
    int id = 0;
    char name[64];
    for (size_t hi = 0; hi < sizeof hws / sizeof hws[0]; hi++)
        for (int batch = 1; batch <= 3; batch++) {
            int hw = hws[hi], c = hi & 1 ? 96 : 7;
            size_t cs = (size_t)batch * hw;
            float *mask = tf_mask(batch, hw), *in = hc_rvec(&rng, (size_t)c * cs, 2), *w = hc_rvec(&rng, (size_t)c, 1);
            float *a = malloc((size_t)c * cs * sizeof(float) + 1), *b = malloc((size_t)c * cs * sizeof(float) + 1);
            /* RMSNorm: whole, and as columns [j0, j0 + n) into a compact block (the chunked path) */
            plain_rmsnorm(c, cs, in, a, w, 1e-5f, mask);
            hc_rmsnorm_pos(c, batch, hw, in, b, w, 1e-5f, mask);
            int same = memcmp(a, b, (size_t)c * cs * sizeof(float)) == 0;
            size_t j0 = cs / 3;
            int n = (int)(cs - j0) < 24 ? (int)(cs - j0) : 24;
            float *blk = malloc((size_t)c * 24 * sizeof(float));
            hc_rmsnorm_cols(c, n, in + j0, cs, blk, 24, w, 1e-5f, mask + j0);
            for (int ch = 0; ch < c; ch++)
                same &= memcmp(blk + (size_t)ch * 24, a + (size_t)ch * cs + j0, (size_t)n * sizeof(float)) == 0;
            snprintf(name, sizeof name, "kernels-tf-1.%d", ++id);
            hc_check(name, same, "rmsnorm hw %d batch %d c %d: not the plain form's bits", hw, batch, c);
            /* residual: an inf delta at an off point gives NaN (inf * 0), as the plain form */
            memcpy(a, in, (size_t)c * cs * sizeof(float));
            memcpy(b, in, (size_t)c * cs * sizeof(float));
            float *d = hc_rvec(&rng, (size_t)c * cs, 3);
            for (size_t j = 0; j < cs; j++)
                if (mask[j] == 0.0f) {
                    d[j] = INFINITY;
                    break;
                }
            for (int ch = 0; ch < c; ch++)
                for (size_t j = 0; j < cs; j++)
                    a[ch * cs + j] += d[ch * cs + j] * mask[j];
            if (batch == 2)
                for (size_t j = 0; j < cs; j += 24)
                    hc_residual_cols(c, cs - j < 24 ? (int)(cs - j) : 24, b + j, cs, d + j, cs, mask + j);
            else
                hc_residual_masked(c, batch, hw, b, d, mask);
            snprintf(name, sizeof name, "kernels-tf-2.%d", id);
            hc_check(name, memcmp(a, b, (size_t)c * cs * sizeof(float)) == 0,
                     "residual hw %d batch %d c %d: not the plain form's bits", hw, batch, c);
            free(mask), free(in), free(w), free(a), free(b), free(blk), free(d);
        }
    /* RoPE and attention: GQA, unequal head dims, learnable tables */
    static const int cfg[][5] = {{3, 3, 32, 32, 0}, {6, 3, 32, 16, 1}, {4, 2, 6, 10, 0}, {2, 1, 4, 4, 1}};
    id = 0;
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (size_t hi = 0; hi < sizeof hws / sizeof hws[0]; hi++)
            for (int batch = 1; batch <= 3; batch++) {
                int heads = cfg[ci][0], kvh = cfg[ci][1], qd = cfg[ci][2], vd = cfg[ci][3], learn = cfg[ci][4];
                int hw = hws[hi], nx = hw == 361 ? 19 : hw == 81 ? 9 : hw, ny = hw / nx;
                if (hw == 361 && batch == 3 && ci > 1)
                    continue; /* the plain form is slow: enough 19x19 cases */
                size_t s = (size_t)batch * hw;
                float *mask = tf_mask(batch, hw);
                float *q = hc_rvec(&rng, (size_t)heads * qd * s, 1), *k = hc_rvec(&rng, (size_t)kvh * qd * s, 1);
                float *v = hc_rvec(&rng, (size_t)kvh * vd * s, 1);
                int pairs = qd / 2;
                float *freqs = learn ? hc_rvec(&rng, (size_t)kvh * pairs * 2, 1) : NULL;
                size_t nt = (size_t)(learn ? kvh : 1) * pairs * hw + 1;
                float *ct = malloc(nt * sizeof(float)), *st = malloc(nt * sizeof(float));
                hc_rope_tables(nx, ny, pairs, kvh, freqs, 100.0f, ct, st);
                /* RoPE on q: the plain rotation per element */
                float *qp = malloc((size_t)heads * qd * s * sizeof(float));
                float *qc = malloc((size_t)heads * qd * s * sizeof(float));
                memcpy(qp, q, (size_t)heads * qd * s * sizeof(float));
                memcpy(qc, q, (size_t)heads * qd * s * sizeof(float));
                hc_rope_apply(batch, hw, heads, qd, kvh, learn, ct, st, q);
                /* by chunks of 24 columns, runs crossing board boundaries (the chunked path) */
                for (size_t j = 0; j < s; j += 24)
                    hc_rope_cols(hw, j, s - j < 24 ? (int)(s - j) : 24, heads, qd, kvh, learn, ct, st, qc, s);
                for (int h = 0; h < heads; h++)
                    for (int p = 0; p < pairs; p++) {
                        size_t t0 = learn ? ((size_t)(h * kvh / heads) * pairs + p) * hw : (size_t)p * hw;
                        for (size_t j = 0; j < s; j++) {
                            float *r0 = qp + ((size_t)h * qd + 2 * p) * s + j, *r1 = r0 + s;
                            float x0 = *r0, x1 = *r1, cc = ct[t0 + j % hw], sn = st[t0 + j % hw];
                            *r0 = x0 * cc - x1 * sn;
                            *r1 = x0 * sn + x1 * cc;
                        }
                    }
                snprintf(name, sizeof name, "kernels-tf-3.%d", ++id);
                hc_check(name, memcmp(q, qp, (size_t)heads * qd * s * sizeof(float)) == 0 &&
                                   memcmp(qc, qp, (size_t)heads * qd * s * sizeof(float)) == 0,
                         "rope heads %d/%d qd %d learnable %d hw %d batch %d: not the plain form's bits", heads, kvh, qd,
                         learn, hw, batch);
                free(qc);
                float *o1 = malloc((size_t)heads * vd * s * sizeof(float) + 1);
                float *o2 = malloc((size_t)heads * vd * s * sizeof(float) + 1);
                float *ws = malloc((size_t)2 * hw * hw * sizeof(float));
                plain_attention(batch, hw, heads, kvh, qd, vd, q, k, v, mask, o1);
                hc_attention(batch, hw, heads, kvh, qd, vd, q, k, v, mask, o2, ws);
                snprintf(name, sizeof name, "kernels-tf-4.%d", id);
                hc_check(name, memcmp(o1, o2, (size_t)heads * vd * s * sizeof(float)) == 0,
                         "attention heads %d/%d qd %d vd %d hw %d batch %d: not the plain form's bits", heads, kvh, qd,
                         vd, hw, batch);
                free(mask), free(q), free(k), free(v), free(freqs), free(ct), free(st), free(qp), free(o1), free(o2),
                    free(ws);
            }
}

int main(void)
{
    hc_plan(2 + 4 + 8 * 3 * 2 * 2 + 6 * 3 * 2 * 5 + 3 * 2 * 5 * 2 + 128 + 3 + 3 * 10 + 3 + 3 + 3 + 6 + 8 + 4 + 2 * 33 + 2 * 130); /* vexpf; kernels-13 vector lanes; kernels-1 conv (init and result per shape x batch x acc); 11 conv+bn (shape x batch x row bias x act); 11b (dims x batch x act x in place); 12 Winograd bits (and 3 on packed weights); 2-10 the smaller kernels; tf-1..4 */
    test_vexpf();
    test_vector_lanes();
    test_conv();
    test_conv_bn();
    test_bias_bn_act();
    test_wino_bits();
    test_bn_pool();
    test_gpool_max_padding();
    test_pool_bits();
    test_matmul();
    test_rmsnorm();
    test_attention();
    test_swiglu_residual();
    test_tf_bits();
    return hc_test_exit();
}
