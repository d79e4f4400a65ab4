/* fp16 accumulation (acc16) on the CPU, as the GPU computes it: refs/acc16_core.inc's per-output
 * functions (the ones backends/cuda_ref.cu's k_gemm_acc16 and k_softmax_acc16 run, one thread per
 * output), mapped to outputs the way cuda_ref.cu's launchers and backends/cuda.cu map them, give
 * every output of the CPU emulation's kernels bit for bit: convolutions (1x1 over the batch,
 * im2col for other kernels, accumulate on and off), the Winograd tile GEMMs (hc_sgemm_acc16 on
 * their strided tiles), the BC and CS matmuls and the attention's fp16-accumulation path with
 * its score and probability formats (grouped heads, rows on a 13x13 board in a 19x19 buffer).
 * Shapes are odd on purpose: K not a multiple of 16, channel counts 5..105. The chunk of 8 (the
 * GPU test's planted fault acc16_chunk8) must differ, and acc16 must differ from fp32 accumulation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/acc16.h"
#include "refs/gemm.h"
#include "hc_test.h"
#include "refs/kernels.h"
#include "refs/kernels_impl.h"

enum { NX = 19, NY = 19, HW = NX * NY };

static uint32_t seed = 12345u;

static float urand(float lo, float hi)
{
    seed = seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
}

static void fill(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = urand(lo, hi);
}

/* The board mask of row b: the whole 19x19 buffer for even rows, a 13x13 board in its corner for
 * odd ones. */
static float board(int b, int p)
{
    return b % 2 == 0 || (p % NX < 13 && p / NX < 13) ? 1.0f : 0.0f;
}

/* A CBP activation [c][B][hw], zero off the row's board (as the engine's layers leave it). */
static float *activation(int C, int B)
{
    float *x = malloc((size_t)C * B * HW * sizeof(float));
    for (int c = 0; x && c < C; c++)
        for (int b = 0; b < B; b++)
            for (int p = 0; p < HW; p++)
                x[((size_t)c * B + b) * HW + p] = board(b, p) * urand(-1.5f, 1.5f);
    return x;
}

/* The first index where a and b differ in bits (-1: none). */
static long first_diff(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            return (long)i;
    return -1;
}

static int differs(const float *a, const float *b, size_t n)
{
    return first_diff(a, b, n) >= 0;
}

/* The GPU's convolution (cuda.cu conv_ref): 1x1 one gemm over the batch's S columns; other
 * kernels cuda_ref.cu's im2col (col[(i*kh + dy)*kw + dx][b*hw + p]) then one gemm; each output
 * k_gemm_acc16's acc16_dot (fused chunks), added to out in fp32 when accumulate. */
static void gpu_conv(int ic, int oc, int kh, int kw, int B, const float *in, const float *w, float *out,
                     int accumulate, int chunk)
{
    size_t S = (size_t)B * HW;
    int K = ic * kh * kw;
    float *col = (float *)in;
    if (kh != 1 || kw != 1) {
        col = malloc((size_t)K * S * sizeof(float));
        for (size_t i = 0; col && i < (size_t)K * S; i++) {
            size_t j = i % S, r = i / S;
            int dx = (int)(r % kw), dy = (int)((r / kw) % kh), c = (int)(r / ((size_t)kw * kh));
            int b = (int)(j / HW), p = (int)(j % HW);
            int y = p / NX + dy - kh / 2, x = p % NX + dx - kw / 2;
            col[i] = x >= 0 && x < NX && y >= 0 && y < NY ? in[((size_t)c * B + b) * HW + (size_t)y * NX + x] : 0.0f;
        }
    }
    for (int o = 0; col && o < oc; o++)
        for (size_t j = 0; j < S; j++) {
            float v = hc_acc16_dot(K, w + (size_t)o * K, 1, col + j, (long long)S, HC_ACC16_FUSED, chunk);
            float *c = out + (size_t)o * S + j;
            *c = accumulate ? *c + v : v;
        }
    if (col != in)
        free(col);
}

/* acc16-1.N: one convolution shape, CPU (hc_kconv_run with acc_fp16) against gpu_conv, with
 * accumulate off and on; the planted chunk of 8 and fp32 accumulation must both differ. */
static void check_conv(const char *name, int ic, int oc, int kh, int kw, int B)
{
    size_t S = (size_t)B * HW, n = (size_t)oc * S;
    float *in = activation(ic, B), *w = malloc((size_t)oc * ic * kh * kw * sizeof(float));
    float *cpu = malloc(n * sizeof(float)), *gpu = malloc(n * sizeof(float)), *alt = malloc(n * sizeof(float));
    float *base = malloc(n * sizeof(float));
    hc_kconv cv, c32;
    hc_err err = {0};
    if (!in || !w || !cpu || !gpu || !alt || !base || hc_kconv_init(&cv, w, oc, ic, kh, kw, &err) ||
        hc_kconv_init(&c32, w, oc, ic, kh, kw, &err)) {
        hc_fail_n(name, 1, "setup: %s", err.msg);
        goto out;
    }
    fill(w, (size_t)oc * ic * kh * kw, -0.4f, 0.4f);
    fill(base, n, -2.0f, 2.0f);
    hc_kconv_set_modes(&cv, 1, 0);
    float *ws = malloc((hc_kconv_workspace(&cv, B, NX, NY) + 1) * sizeof(float));
    long d[2] = {-2, -2};
    int planted = 0, vs32 = 0;
    for (int acc = 0; ws && acc < 2; acc++) {
        memcpy(cpu, base, n * sizeof(float));
        memcpy(gpu, base, n * sizeof(float));
        hc_kconv_run(&cv, B, NX, NY, in, cpu, acc, ws);
        gpu_conv(ic, oc, kh, kw, B, in, w, gpu, acc, HC_ACC16_CHUNK);
        d[acc] = first_diff(cpu, gpu, n);
        if (acc == 0) {
            gpu_conv(ic, oc, kh, kw, B, in, w, alt, 0, 8);
            planted = differs(cpu, alt, n);
            hc_kconv_run(&c32, B, NX, NY, in, alt, 0, ws);
            vs32 = differs(cpu, alt, n);
        }
    }
    hc_check(name, ws && d[0] < 0 && d[1] < 0 && planted && vs32,
             "conv %dx%d %d->%d batch %d: first differing output %ld (=) / %ld (+=)%s%s", kh, kw, ic, oc, B, d[0],
             d[1], planted ? "" : "; chunks of 8 give the same bits", vs32 ? "" : "; same as fp32 accumulation");
    free(ws);
    hc_kconv_free(&cv);
    hc_kconv_free(&c32);
out:
    free(in);
    free(w);
    free(cpu);
    free(gpu);
    free(alt);
    free(base);
}

/* acc16-2.N: a Winograd tile GEMM as refs/winograd.c runs it (U [oc][ic] by V's tile k in rows
 * of stride 36*ld, M written with the same stride) against cuda_ref.cu wino_conv's gemm mapping
 * (U row o, V column g, fused chunks). */
static void check_tiles(const char *name, int oc, int ic, int n)
{
    int ld = n + 3;
    size_t ldv = (size_t)36 * ld;
    float *U = malloc((size_t)oc * ic * sizeof(float)), *V = malloc((size_t)ic * ldv * sizeof(float));
    float *M = malloc((size_t)oc * ldv * sizeof(float)), *tmp = malloc((size_t)oc * n * sizeof(float));
    if (!U || !V || !M || !tmp) {
        hc_fail_n(name, 1, "out of memory");
    } else {
        /* transformed values: B^T d B of inputs in [-1.5, 1.5] reach about +-30 */
        fill(U, (size_t)oc * ic, -3.0f, 3.0f);
        fill(V, (size_t)ic * ldv, -30.0f, 30.0f);
        hc_sgemm_acc16(oc, n, ic, U, ic, V, (int)ldv, M, (int)ldv, tmp);
        long bad = -1;
        int planted = 0;
        for (int o = 0; o < oc; o++)
            for (int g = 0; g < n; g++) {
                float c = M[(size_t)o * ldv + g];
                float v = hc_acc16_dot(ic, U + (size_t)o * ic, 1, V + g, (long long)ldv, HC_ACC16_FUSED, HC_ACC16_CHUNK);
                float p = hc_acc16_dot(ic, U + (size_t)o * ic, 1, V + g, (long long)ldv, HC_ACC16_FUSED, 8);
                if (memcmp(&c, &v, sizeof c) != 0 && bad < 0)
                    bad = (long)o * n + g;
                planted |= memcmp(&c, &p, sizeof c) != 0;
            }
        hc_check(name, bad < 0 && planted, "tile GEMM %d x %d x %d: first differing output %ld%s", oc, n, ic, bad,
                 planted ? "" : "; chunks of 8 give the same bits");
    }
    free(U);
    free(V);
    free(M);
    free(tmp);
}

/* acc16-3.1, 3.2: hc_matmul_bc_acc16 and hc_matmul_cs_acc16 against cuda.cu's gemm mappings
 * (BC: A = in rows, B = w [in][out]; CS: A = w transposed, B = the S columns), product-then-add
 * chunks. */
static void check_matmuls(void)
{
    enum { BB = 5, IN_BC = 105, OUT_BC = 33, BC = 3, IN_CS = 37, OUT_CS = 19 };
    float *in = malloc((size_t)BB * IN_BC * sizeof(float)), *w = malloc((size_t)IN_BC * OUT_BC * sizeof(float));
    float *out = malloc((size_t)BB * OUT_BC * sizeof(float));
    size_t S = (size_t)BC * HW;
    float *cin = activation(IN_CS, BC), *cw = malloc((size_t)IN_CS * OUT_CS * sizeof(float));
    float *cout = malloc((size_t)OUT_CS * S * sizeof(float));
    if (!in || !w || !out || !cin || !cw || !cout) {
        hc_fail_n("acc16-3", 2, "out of memory");
        goto out;
    }
    fill(in, (size_t)BB * IN_BC, -3.0f, 3.0f);
    fill(w, (size_t)IN_BC * OUT_BC, -0.5f, 0.5f);
    fill(cw, (size_t)IN_CS * OUT_CS, -0.5f, 0.5f);
    hc_matmul_bc_acc16(BB, IN_BC, OUT_BC, in, w, out);
    long bad = -1;
    int planted = 0;
    for (int b = 0; b < BB; b++)
        for (int o = 0; o < OUT_BC; o++) {
            float c = out[(size_t)b * OUT_BC + o];
            float v = hc_acc16_dot(IN_BC, in + (size_t)b * IN_BC, 1, w + o, OUT_BC, HC_ACC16_MULADD, HC_ACC16_CHUNK);
            float p = hc_acc16_dot(IN_BC, in + (size_t)b * IN_BC, 1, w + o, OUT_BC, HC_ACC16_MULADD, 8);
            if (memcmp(&c, &v, sizeof c) != 0 && bad < 0)
                bad = (long)b * OUT_BC + o;
            planted |= memcmp(&c, &p, sizeof c) != 0;
        }
    hc_check("acc16-3.1", bad < 0 && planted, "matmul BC %d x %d -> %d: first differing output %ld%s", BB, IN_BC,
             OUT_BC, bad, planted ? "" : "; chunks of 8 give the same bits");
    hc_matmul_cs_acc16(BC, HW, IN_CS, OUT_CS, cin, cw, cout);
    bad = -1;
    planted = 0;
    for (int o = 0; o < OUT_CS; o++)
        for (size_t j = 0; j < S; j++) {
            float c = cout[(size_t)o * S + j];
            float v = hc_acc16_dot(IN_CS, cw + o, OUT_CS, cin + j, (long long)S, HC_ACC16_MULADD, HC_ACC16_CHUNK);
            float p = hc_acc16_dot(IN_CS, cw + o, OUT_CS, cin + j, (long long)S, HC_ACC16_MULADD, 8);
            if (memcmp(&c, &v, sizeof c) != 0 && bad < 0)
                bad = (long)(o * S + j);
            planted |= memcmp(&c, &p, sizeof c) != 0;
        }
    hc_check("acc16-3.2", bad < 0 && planted, "matmul CS %d -> %d over %zu columns: first differing output %ld%s",
             IN_CS, OUT_CS, S, bad, planted ? "" : "; chunks of 8 give the same bits");
out:
    free(in);
    free(w);
    free(out);
    free(cin);
    free(cw);
    free(cout);
}

/* The GPU's attention_head with acc16, head by head (cuda.cu attention_ref): scores
 * sc[b][ki][qi] by acc16_dot of k and q over d, k_softmax_acc16 per query (zeros for a
 * masked-out query), out by acc16_dot of v and the probabilities over ki. */
static void gpu_attention(int B, int heads, int kvh, int qd, int vd, const float *q, const float *k, const float *v,
                          const float *mask, float *out, float *sc, int sfmt, int pfmt, int chunk)
{
    size_t S = (size_t)B * HW, hh = (size_t)HW * HW;
    float scale = 1.0f / sqrtf((float)qd);
    for (int h = 0; h < heads; h++) {
        int g = h / (heads / kvh);
        const float *qh = q + (size_t)h * qd * S, *kh = k + (size_t)g * qd * S, *vh = v + (size_t)g * vd * S;
        float *oh = out + (size_t)h * vd * S;
        for (int b = 0; b < B; b++)
            for (int ki = 0; ki < HW; ki++)
                for (int qi = 0; qi < HW; qi++)
                    sc[b * hh + (size_t)ki * HW + qi] = hc_acc16_dot(qd, kh + (size_t)b * HW + ki, (long long)S,
                                                                     qh + (size_t)b * HW + qi, (long long)S,
                                                                     HC_ACC16_MULADD, chunk);
        for (int b = 0; b < B; b++)
            for (int qi = 0; qi < HW; qi++) {
                const float *m = mask + (size_t)b * HW;
                float *col = sc + b * hh + qi;
                if (m[qi] == 0.0f)
                    for (int ki = 0; ki < HW; ki++)
                        col[(size_t)ki * HW] = 0.0f;
                else
                    hc_acc16_softmax_row(HW, col, HW, m, scale, sfmt, pfmt);
            }
        for (int d = 0; d < vd; d++)
            for (int b = 0; b < B; b++)
                for (int qi = 0; qi < HW; qi++)
                    oh[(size_t)d * S + (size_t)b * HW + qi] =
                        hc_acc16_dot(HW, vh + (size_t)d * S + (size_t)b * HW, 1, sc + b * hh + qi, HW,
                                     HC_ACC16_MULADD, chunk);
    }
}

/* acc16-4.N: hc_attention_emul's fp16-accumulation path against gpu_attention. offboard: q, k
 * and v nonzero off the boards too (the engine's are 0 there), so that a masked-out key taking
 * part in the max or the sum shows. */
static void check_attention(const char *name, int heads, int kvh, int qd, int vd, int sfmt, int pfmt, int offboard)
{
    enum { B = 3 };
    size_t S = (size_t)B * HW, no = (size_t)heads * vd * S;
    float *q = activation(heads * qd, B), *k = activation(kvh * qd, B), *v = activation(kvh * vd, B);
    float *mask = malloc(S * sizeof(float)), *cpu = malloc(no * sizeof(float)), *gpu = malloc(no * sizeof(float));
    float *alt = malloc(no * sizeof(float)), *ws = malloc((size_t)2 * HW * HW * sizeof(float));
    float *sc = malloc((size_t)B * HW * HW * sizeof(float));
    if (!q || !k || !v || !mask || !cpu || !gpu || !alt || !ws || !sc) {
        hc_fail_n(name, 1, "out of memory");
        goto out;
    }
    for (int b = 0; b < B; b++)
        for (int p = 0; p < HW; p++)
            mask[(size_t)b * HW + p] = board(b, p);
    if (offboard) {
        fill(q, (size_t)heads * qd * S, -1.5f, 1.5f);
        fill(k, (size_t)kvh * qd * S, -1.5f, 1.5f);
        fill(v, (size_t)kvh * vd * S, -1.5f, 1.5f);
        for (int b = 1; b < B; b += 2) /* the 13x13 rows' off-board keys score highest */
            for (int p = 0; p < HW; p++)
                for (int d = 0; d < kvh * qd && board(b, p) == 0.0f; d++)
                    k[(size_t)d * S + (size_t)b * HW + p] *= 8.0f;
    }
    /* scores of a few units: the softmax is neither flat nor one-hot */
    for (size_t i = 0; i < (size_t)heads * qd * S; i++)
        q[i] *= 2.0f;
    hc_attn_emul em = {sfmt, pfmt, 1};
    hc_attention_emul(B, HW, heads, kvh, qd, vd, q, k, v, mask, cpu, ws, &em);
    gpu_attention(B, heads, kvh, qd, vd, q, k, v, mask, gpu, sc, sfmt, pfmt, HC_ACC16_CHUNK);
    long d = first_diff(cpu, gpu, no);
    gpu_attention(B, heads, kvh, qd, vd, q, k, v, mask, alt, sc, sfmt, pfmt, 8);
    int planted = differs(cpu, alt, no);
    hc_check(name, d < 0 && planted,
             "attention %d heads (%d kv) qd %d vd %d, scores fmt %d, probabilities fmt %d: first differing output "
             "%ld of %zu%s",
             heads, kvh, qd, vd, sfmt, pfmt, d, no, planted ? "" : "; chunks of 8 give the same bits");
out:
    free(q);
    free(k);
    free(v);
    free(mask);
    free(cpu);
    free(gpu);
    free(alt);
    free(ws);
    free(sc);
}

int main(void)
{
    hc_plan(6 + 3 + 2 + 3);
    /* 1x1 (one GEMM over the batch), im2col kernels; K = 35, 96, 117, 175, 245, 33 */
    check_conv("acc16-1.1", 35, 17, 1, 1, 3);
    check_conv("acc16-1.2", 96, 40, 1, 1, 2);
    check_conv("acc16-1.3", 13, 9, 3, 3, 3);
    check_conv("acc16-1.4", 7, 5, 5, 5, 2);
    check_conv("acc16-1.5", 5, 6, 7, 7, 2);
    check_conv("acc16-1.6", 11, 7, 3, 1, 3);
    /* Winograd tile GEMMs: g170's 96 channels over 5 rows of 25 tiles; odd sizes */
    check_tiles("acc16-2.1", 96, 96, 125);
    check_tiles("acc16-2.2", 33, 45, 77);
    check_tiles("acc16-2.3", 7, 17, 9);
    check_matmuls();
    /* grouped heads with fp16 scores and probabilities (fp16-acc16), fp32 ones, bf16 scores */
    check_attention("acc16-4.1", 3, 1, 20, 12, HC_KFMT_FP16, HC_KFMT_FP16, 0);
    check_attention("acc16-4.2", 2, 2, 32, 16, HC_KFMT_FP32, HC_KFMT_FP32, 0);
    check_attention("acc16-4.3", 2, 1, 9, 5, HC_KFMT_BF16, HC_KFMT_FP16, 1);
    return hc_test_exit();
}
