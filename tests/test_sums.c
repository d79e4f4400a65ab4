/* The emulated reductions of refs/kernels.h (hc_pool_*_fmt, hc_rmsnorm_*_fmt): fp32 gives the
 * reference kernels' bits; fp16 matches scalar models built from the rounding primitive
 * (round after every add), differs from fp32 where it must, overflows to inf and flags the row,
 * and honors eps as a binary16 subnormal. The GPU's kernels for them (backends/cuda_ref.cu, one
 * thread per output running refs/sums_core.h's thread functions) run here on the CPU, threads in
 * reverse order: the CPU kernels' bits and flagged rows; their planted fault changes the bits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "refs/kernels.h"
#include "refs/round.h"
#include "refs/sums_core.h"

static hc_rng rng = {0x2545F4914F6CDD1Dull};

static int same_bits(size_t n, const float *a, const float *b)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

static float r16(float x) { return hc_round_fp16(x); }

/* The masked activation the engine pools: zero off the board, values stored as fp16. */
static float *masked_fp16(int c, int batch, int hw, const float *mask, double scale)
{
    float *x = hc_rvec(&rng, (size_t)c * batch * hw, scale);
    for (int ch = 0; ch < c; ch++)
        for (int b = 0; b < batch; b++)
            for (int p = 0; p < hw; p++) {
                float *v = &x[((size_t)ch * batch + b) * hw + p];
                *v = mask[(size_t)b * hw + p] != 0.0f ? r16(*v) : 0.0f;
            }
    return x;
}

static void test_pool_sums(void)
{
    /* fp32: the _fmt kernels are the reference kernels bit for bit */
    int ok32 = 1;
    for (int batch = 1; batch <= 5; batch += 2) {
        int c = 6, nx = 19, ny = 19, hw = nx * ny;
        float msum[8];
        float *mask = hc_board_mask(batch, nx, ny, msum);
        float *in = masked_fp16(c, batch, hw, mask, 3.0);
        size_t no = (size_t)batch * 3 * c;
        float *a = malloc(no * sizeof(float)), *b = malloc(no * sizeof(float));
        hc_pool_gpool(c, batch, hw, in, mask, msum, a);
        hc_pool_gpool_fmt(HC_KFMT_FP32, c, batch, hw, in, mask, msum, b, NULL);
        ok32 &= same_bits(no, a, b);
        hc_pool_value(c, batch, hw, in, msum, a);
        hc_pool_value_fmt(HC_KFMT_FP32, c, batch, hw, in, msum, b, NULL);
        ok32 &= same_bits(no, a, b);
        free(mask), free(in), free(a), free(b);
    }
    hc_check("sums-1.1", ok32, "fp32 pooling sums differ from the reference kernels");

    /* fp16: a scalar model from the rounding primitive, rounding after every add */
    {
        int c = 4, batch = 3, nx = 19, ny = 19, hw = nx * ny;
        float msum[4];
        float *mask = hc_board_mask(batch, nx, ny, msum);
        float *in = masked_fp16(c, batch, hw, mask, 2.0);
        for (int p = 0; p < hw; p++) /* channel 0 of row 0: sums that lose bits in fp16 */
            if (mask[p] != 0.0f)
                in[p] = r16(0.2f);
        size_t no = (size_t)batch * 3 * c;
        float *g16 = malloc(no * sizeof(float)), *v16 = malloc(no * sizeof(float));
        float *g32 = malloc(no * sizeof(float));
        hc_pool_gpool_fmt(HC_KFMT_FP16, c, batch, hw, in, mask, msum, g16, NULL);
        hc_pool_value_fmt(HC_KFMT_FP16, c, batch, hw, in, msum, v16, NULL);
        hc_pool_gpool(c, batch, hw, in, mask, msum, g32);
        int bad = 0;
        for (int b = 0; b < batch; b++) {
            float area = r16(msum[b]), t = r16(r16(sqrtf(area)) - 14.0f), tenth = r16(0.1f);
            float q = r16(r16(r16(t * t) * r16(0.01f)) - tenth);
            for (int ch = 0; ch < c; ch++) {
                const float *x = in + ((size_t)ch * batch + b) * hw;
                float s = 0.0f, mx = -1.0f;
                for (int p = 0; p < hw; p++) {
                    s = r16(s + x[p]);
                    float m = mask[(size_t)b * hw + p] != 0.0f ? x[p] : -1.0f;
                    mx = m > mx ? m : mx;
                }
                float mean = r16(s / area), sc = r16(r16(mean * t) * tenth);
                const float *g = g16 + (size_t)b * 3 * c, *v = v16 + (size_t)b * 3 * c;
                bad += g[ch] != mean || g[c + ch] != sc || g[2 * c + ch] != mx;
                bad += v[ch] != mean || v[c + ch] != sc || v[2 * c + ch] != r16(mean * q);
            }
        }
        hc_check("sums-1.2", bad == 0, "%d fp16 pooled values differ from the scalar model", bad);
        /* 342 adds of 0.2: past 32 fp16's spacing (1/32, then 1/16) rounds each add to 0.1875,
         * the fp32 sum keeps the mean at 0.2 */
        hc_check("sums-1.3", fabsf(g32[0] - r16(0.2f)) < 1e-6f && fabsf(g16[0] - g32[0]) > 2e-3f,
                 "fp16 mean %.9g vs fp32 %.9g: the fp16 sum must lose the small parts", g16[0], g32[0]);
        free(mask), free(in), free(g16), free(v16), free(g32);
    }

    /* a sum past 65504 is inf in fp16 (never clamped); the matmul reading it is not finite */
    {
        int c = 2, batch = 1, hw = 361;
        float msum[1] = {361.0f};
        float *mask = malloc(hw * sizeof(float)), *in = malloc((size_t)c * hw * sizeof(float));
        for (int p = 0; p < hw; p++) {
            mask[p] = 1.0f;
            in[p] = 200.0f;              /* sum 72200 */
            in[hw + p] = p % 2 ? -1.0f : 1.0f; /* small: stays finite */
        }
        float g[6], v[6], g32[6], b16[6], h[3];
        unsigned char bad_g[1] = {0}, bad_v[1] = {0}, bad_b[1] = {0};
        hc_pool_gpool_fmt(HC_KFMT_FP16, c, batch, hw, in, mask, msum, g, bad_g);
        hc_pool_value_fmt(HC_KFMT_FP16, c, batch, hw, in, msum, v, bad_v);
        hc_pool_gpool(c, batch, hw, in, mask, msum, g32);
        hc_pool_gpool_fmt(HC_KFMT_BF16, c, batch, hw, in, mask, msum, b16, bad_b);
        float w[6 * 3];
        for (int i = 0; i < 18; i++)
            w[i] = 0.01f * (float)(i + 1);
        hc_matmul_bc(1, 6, 3, g, w, h);
        hc_check("sums-1.4",
                 isinf(g[0]) && g[0] > 0 && isinf(g[2]) && isinf(v[0]) && isinf(v[2]) && isinf(v[4]) &&
                     isfinite(g[1]) && g[4] == 200.0f && g32[0] == 200.0f && isfinite(b16[0]) &&
                     !isfinite(h[0]) && !isfinite(h[1]) && !isfinite(h[2]) && bad_g[0] && bad_v[0] && !bad_b[0],
                 "fp16 sum of 361 x 200: mean %g scaled %g value-head %g %g %g, max %g; fp32 %g bf16 %g; "
                 "matmul %g %g %g",
                 g[0], g[2], v[0], v[2], v[4], g[4], g32[0], b16[0], h[0], h[1], h[2]);
        free(mask), free(in);
    }
}

static void test_norm_sums(void)
{
    /* fp32: bit for bit the reference kernels (all three forms, several batches) */
    int ok32 = 1;
    for (int batch = 1; batch <= 3; batch += 2)
        for (int mode = 0; mode < 3; mode++) {
            int c = 9, nx = 5, ny = 4, hw = nx * ny;
            size_t n = (size_t)c * batch * hw;
            float msum[4];
            float *mask = hc_board_mask(batch, nx, ny, msum);
            float *in = hc_rvec(&rng, n, 2), *gam = hc_rvec(&rng, c, 1), *bet = hc_rvec(&rng, c, 1);
            float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
            if (mode == 0) {
                hc_rmsnorm_pos(c, batch, hw, in, a, gam, 1e-5f, mask);
                hc_rmsnorm_pos_fmt(HC_KFMT_FP32, c, batch, hw, in, b, gam, 1e-5f, mask, NULL);
            } else {
                hc_rmsnorm_tip(c, batch, hw, in, a, gam, bet, 1e-5f, mode == 2, HC_ACT_MISH, mask);
                hc_rmsnorm_tip_fmt(HC_KFMT_FP32, c, batch, hw, in, b, gam, bet, 1e-5f, mode == 2, HC_ACT_MISH, mask, NULL);
            }
            ok32 &= same_bits(n, a, b);
            free(mask), free(in), free(gam), free(bet), free(a), free(b);
        }
    hc_check("sums-2.1", ok32, "fp32 RMSNorm reductions differ from the reference kernels");

    /* fp16 against a scalar model (per position) */
    {
        int c = 24, batch = 2, nx = 4, ny = 3, hw = nx * ny;
        size_t cs = (size_t)batch * hw, n = (size_t)c * cs;
        float msum[2];
        float *mask = hc_board_mask(batch, nx, ny, msum);
        float *in = hc_rvec(&rng, n, 3), *gam = hc_rvec(&rng, c, 1);
        for (size_t i = 0; i < n; i++)
            in[i] = r16(in[i]);
        float *o16 = malloc(n * sizeof(float)), *o32 = malloc(n * sizeof(float));
        hc_rmsnorm_pos_fmt(HC_KFMT_FP16, c, batch, hw, in, o16, gam, 1e-5f, mask, NULL);
        hc_rmsnorm_pos(c, batch, hw, in, o32, gam, 1e-5f, mask);
        int bad = 0, differ = 0;
        for (size_t j = 0; j < cs; j++) {
            float ss = 0.0f;
            for (int ch = 0; ch < c; ch++)
                ss = r16(ss + r16(in[ch * cs + j] * in[ch * cs + j]));
            float rms = r16(1.0f / r16(sqrtf(r16(r16(ss / r16((float)c)) + r16(1e-5f)))));
            for (int ch = 0; ch < c; ch++) {
                float want = mask[j] == 0.0f ? 0.0f : r16(r16(in[ch * cs + j] * rms) * gam[ch]);
                bad += o16[ch * cs + j] != want;
                differ += o16[ch * cs + j] != o32[ch * cs + j];
            }
        }
        hc_check("sums-2.2", bad == 0 && differ > 0, "fp16 RMSNorm: %d values differ from the model, %d from fp32",
                 bad, differ);
        free(mask), free(in), free(gam), free(o16), free(o32);
    }

    /* eps in fp16: 1e-5 is the subnormal 168 * 2^-24. Inputs 2^-14 square to 2^-28, which
     * underflows to 0 in fp16, so the sum is 0 and the scale is 1 / sqrt(round16(1e-5)):
     * the output is that scale times 2^-14 times the weight (1 here), exactly. */
    {
        int c = 8, batch = 1, hw = 2;
        float mask[2] = {1.0f, 1.0f}, in[16], w[8], beta[8], out[16], tip[16], o32[16];
        for (int i = 0; i < 16; i++)
            in[i] = i % 2 ? 0.5f : 1.0f / 16384.0f; /* position 0: 2^-14, position 1: 0.5 */
        for (int i = 0; i < 8; i++)
            w[i] = 1.0f, beta[i] = 0.0f;
        hc_rmsnorm_pos_fmt(HC_KFMT_FP16, c, batch, hw, in, out, w, 1e-5f, mask, NULL);
        hc_rmsnorm_tip_fmt(HC_KFMT_FP16, c, batch, hw, in, tip, w, beta, 1e-5f, 0, HC_ACT_IDENTITY, mask, NULL);
        hc_rmsnorm_pos(c, batch, hw, in, o32, w, 1e-5f, mask);
        float eps16 = r16(1e-5f);
        float scale = r16(1.0f / r16(sqrtf(eps16)));
        float got = out[0] * 16384.0f;
        hc_check("sums-2.3",
                 eps16 == 168.0f / 16777216.0f && got == scale && tip[0] == out[0] &&
                     fabsf(got - 1.0f / sqrtf(eps16)) <= 1.0f / sqrtf(eps16) / 1024.0f &&
                     fabsf(o32[0] * 16384.0f - got) > 0.05f && out[1] == r16(1.0f / r16(sqrtf(r16(0.25f + eps16)))) * 0.5f,
                 "eps16 %.9g, fp16 scale %.9g (want %.9g = round16(1/sqrt(eps16)), 1/sqrt(eps16) %.9g), fp32 %.9g, "
                 "tip %.9g, position 1 %.9g",
                 eps16, got, scale, 1.0f / sqrtf(eps16), o32[0] * 16384.0f, tip[0] * 16384.0f, out[1]);
    }
}

/* An RMSNorm sum of squares past 65504 is inf in fp16: 1 / sqrt(inf) = 0 would hide it as
 * zero outputs, so the row is flagged (and only that row). */
static void test_norm_overflow(void)
{
    int c = 4, batch = 2, hw = 3;
    size_t cs = (size_t)batch * hw, n = (size_t)c * cs;
    float mask[6] = {1, 1, 1, 1, 1, 1}, in[24], w[4] = {1, 1, 1, 1}, beta[4] = {0, 0, 0, 0}, out[24], tip[24];
    for (size_t i = 0; i < n; i++)
        in[i] = (i % cs) == 1 ? 200.0f : 0.5f; /* row 0, position 1: 4 * 200^2 = 160000 */
    unsigned char bad[2] = {0, 0}, badt[2] = {0, 0}, bads[2] = {0, 0};
    hc_rmsnorm_pos_fmt(HC_KFMT_FP16, c, batch, hw, in, out, w, 1e-5f, mask, bad);
    hc_rmsnorm_tip_fmt(HC_KFMT_FP16, c, batch, hw, in, tip, w, beta, 1e-5f, 0, HC_ACT_IDENTITY, mask, badt);
    hc_rmsnorm_tip_fmt(HC_KFMT_BF16, c, batch, hw, in, tip, w, beta, 1e-5f, 1, HC_ACT_IDENTITY, mask, bads);
    hc_check("sums-2.4", bad[0] && !bad[1] && badt[0] && !badt[1] && !bads[0] && !bads[1] && out[1] == 0.0f &&
                                 out[0] != 0.0f,
             "flags pos %d %d tip %d %d bf16 spatial %d %d; overflowed position's output %g (1/sqrt(inf) = 0)", bad[0],
             bad[1], badt[0], badt[1], bads[0], bads[1], out[1]);
}

/* A 19x19 buffer, odd rows a 13x13 board in its top-left corner; mask_sum in buffer order. */
static float *board_mask(int batch, float *mask_sum)
{
    int nx = 19, hw = 361;
    float *m = calloc((size_t)batch * hw, sizeof(float));
    for (int b = 0; b < batch; b++) {
        float s = 0.0f;
        for (int p = 0; p < hw; p++) {
            m[(size_t)b * hw + p] = b % 2 == 0 || (p % nx < 13 && p / nx < 13) ? 1.0f : 0.0f;
            s += m[(size_t)b * hw + p];
        }
        mask_sum[b] = s;
    }
    return m;
}

/* Bits and flags of n outputs against the CPU kernel's: differing floats, plus 1 per flag that differs. */
static int n_diff(size_t n, const float *a, const float *b, int batch, const unsigned char *fa, const unsigned char *fb)
{
    int d = 0;
    for (size_t i = 0; i < n; i++)
        d += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    for (int r = 0; r < batch; r++)
        d += (fa[r] != 0) != (fb[r] != 0);
    return d;
}

/* Marks row r of flags, the row a thread flagged (r < 0: none). */
static void flag_row(unsigned char *flags, int r)
{
    if (r >= 0)
        flags[r] = 1;
}

static void test_gpu_threads(void)
{
    enum { B = 3, HW = 361 };
    float msum[B];
    float *mask = board_mask(B, msum);
    int fmts[2] = {HC_KFMT_FP16, HC_KFMT_BF16};
    int planted[3] = {0, 0, 0}; /* outputs the planted fault changed: pooling, RMSNorm, tip */

    /* pooling: 7 channels; row 2's channel 3 sums 361 x 300 (inf in fp16) */
    {
        int C = 7;
        float *in = masked_fp16(C, B, HW, mask, 3.0);
        for (int p = 0; p < HW; p++)
            in[((size_t)3 * B + 2) * HW + p] = 300.0f;
        size_t no = (size_t)B * 3 * C;
        float *cpu = malloc(no * sizeof(float)), *gpu = malloc(no * sizeof(float)), *pl = malloc(no * sizeof(float));
        int bad = 0, flagged = 0;
        for (int k = 0; k < 4; k++) {
            int fmt = fmts[k % 2];
            const float *mk = k < 2 ? mask : NULL; /* gpool, then the value head */
            unsigned char fc[B] = {0}, fg[B] = {0}, fp[B] = {0};
            if (mk)
                hc_pool_gpool_fmt(fmt, C, B, HW, in, mask, msum, cpu, fc);
            else
                hc_pool_value_fmt(fmt, C, B, HW, in, msum, cpu, fc);
            for (size_t i = (size_t)B * C; i-- > 0;) {
                flag_row(fg, hc_sums_pool_thread(fmt, C, B, HW, in, mk, msum, gpu, i, 0));
                flag_row(fp, hc_sums_pool_thread(fmt, C, B, HW, in, mk, msum, pl, i, 1));
            }
            bad += n_diff(no, cpu, gpu, B, fc, fg);
            flagged += fmt == HC_KFMT_FP16 && fc[2] && !fc[0] && !fc[1];
            planted[0] += n_diff(no, cpu, pl, B, fc, fp);
        }
        hc_check("sums-3.1", bad == 0 && flagged == 2,
                 "GPU pooling threads: %d outputs or flags differ from the CPU kernels (fp16, bf16; gpool, value "
                 "head); fp16 overflow flagged row 2 alone in %d of 2",
                 bad, flagged);
        free(in), free(cpu), free(gpu), free(pl);
    }

    /* a transformer pre-norm: 13 channels; row 1's on-board column 20 sums 13 x 100^2 (inf in
     * fp16); its off-board column 300 holds 1000s, which must neither be summed nor flag */
    {
        int C = 13;
        size_t cs = (size_t)B * HW, n = (size_t)C * cs;
        float *in = hc_rvec(&rng, n, 3), *w = hc_rvec(&rng, (size_t)C, 1);
        for (size_t i = 0; i < n; i++)
            in[i] = r16(in[i]);
        for (int c = 0; c < C; c++) {
            in[(size_t)c * cs + HW + 20] = 100.0f;
            in[(size_t)c * cs + HW + 300] = 1000.0f;
        }
        float *cpu = malloc(n * sizeof(float)), *gpu = malloc(n * sizeof(float)), *pl = malloc(n * sizeof(float));
        int bad = 0, flagged = 0;
        for (int k = 0; k < 2; k++) {
            unsigned char fc[B] = {0}, fg[B] = {0}, fp[B] = {0};
            hc_rmsnorm_pos_fmt(fmts[k], C, B, HW, in, cpu, w, 1e-6f, mask, fc);
            for (size_t j = cs; j-- > 0;) {
                flag_row(fg, hc_sums_rmsnorm_pos_thread(fmts[k], C, B, HW, in, gpu, w, 1e-6f, mask, j, 0));
                flag_row(fp, hc_sums_rmsnorm_pos_thread(fmts[k], C, B, HW, in, pl, w, 1e-6f, mask, j, 1));
            }
            bad += n_diff(n, cpu, gpu, B, fc, fg);
            flagged += k == 0 && fc[1] && !fc[0] && !fc[2];
            planted[1] += n_diff(n, cpu, pl, B, fc, fp);
        }
        hc_check("sums-3.2", bad == 0 && flagged == 1,
                 "GPU RMSNorm threads: %d outputs or flags differ from the CPU kernel; fp16 overflow flagged row 1 "
                 "alone: %d",
                 bad, flagged);
        free(in), free(w), free(cpu), free(gpu), free(pl);
    }

    /* the trunk tip, spatial and per position: 5 channels, mish; row 2's column 7 squares to
     * 5 x 200^2 (inf in fp16, per position and spatial) */
    {
        int C = 5;
        size_t cs = (size_t)B * HW, n = (size_t)C * cs;
        float *in = hc_rvec(&rng, n, 1), *g = hc_rvec(&rng, (size_t)C, 1), *be = hc_rvec(&rng, (size_t)C, 1);
        for (size_t i = 0; i < n; i++)
            in[i] = r16(in[i]);
        for (int c = 0; c < C; c++)
            in[(size_t)c * cs + 2 * HW + 7] = 200.0f;
        float *cpu = malloc(n * sizeof(float)), *gpu = malloc(n * sizeof(float)), *pl = malloc(n * sizeof(float));
        float *rms = malloc(cs * sizeof(float)), *rpl = malloc(cs * sizeof(float));
        int bad = 0, flagged = 0;
        for (int k = 0; k < 4; k++) {
            int fmt = fmts[k % 2], spatial = k >= 2;
            unsigned char fc[B] = {0}, fg[B] = {0}, fp[B] = {0};
            hc_rmsnorm_tip_fmt(fmt, C, B, HW, in, cpu, g, be, 1e-5f, spatial, HC_ACT_MISH, mask, fc);
            for (size_t t = spatial ? (size_t)B : cs; t-- > 0;) {
                flag_row(fg, spatial ? hc_sums_tip_row_thread(fmt, C, B, HW, in, mask, 1e-5f, rms, t, 0)
                                     : hc_sums_tip_col_thread(fmt, C, B, HW, in, mask, 1e-5f, rms, t, 0));
                flag_row(fp, spatial ? hc_sums_tip_row_thread(fmt, C, B, HW, in, mask, 1e-5f, rpl, t, 1)
                                     : hc_sums_tip_col_thread(fmt, C, B, HW, in, mask, 1e-5f, rpl, t, 1));
            }
            for (size_t i = n; i-- > 0;) { /* k_tip_apply_fmt: its activation is the device's act_rmstip */
                int on = mask[i % cs] != 0.0f;
                gpu[i] = on ? hc_act_apply_rmstip(HC_ACT_MISH, hc_sums_tip_apply_thread(fmt, cs, in, g, be, rms, i)) : 0.0f;
                pl[i] = on ? hc_act_apply_rmstip(HC_ACT_MISH, hc_sums_tip_apply_thread(fmt, cs, in, g, be, rpl, i)) : 0.0f;
            }
            bad += n_diff(n, cpu, gpu, B, fc, fg);
            flagged += fmt == HC_KFMT_FP16 && fc[2] && !fc[0] && !fc[1];
            planted[2] += n_diff(n, cpu, pl, B, fc, fp);
        }
        hc_check("sums-3.3", bad == 0 && flagged == 2,
                 "GPU trunk-tip threads: %d outputs or flags differ from the CPU kernel (fp16, bf16; per position, "
                 "spatial); fp16 overflow flagged row 2 alone in %d of 2",
                 bad, flagged);
        free(in), free(g), free(be), free(cpu), free(gpu), free(pl), free(rms), free(rpl);
    }
    hc_check("sums-3.4", planted[0] > 0 && planted[1] > 0 && planted[2] > 0,
             "the planted moved rounding point (sums rounded after every second add) must change the bits: "
             "pooling %d, RMSNorm %d, tip %d outputs differ",
             planted[0], planted[1], planted[2]);
    free(mask);
}

int main(void)
{
    hc_plan(4 + 4 + 4);
    test_pool_sums();
    test_norm_sums();
    test_norm_overflow();
    test_gpu_threads();
    return hc_test_exit();
}
