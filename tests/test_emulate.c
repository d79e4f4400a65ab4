/* emulate:PROFILE end to end on the shared g170 net (10x14 set): fp16 differs from ref32 but
 * stays inside KataGo's fp16 tier; bf16 errs more than fp16; an all-fp32 profile reproduces
 * ref32 bit for bit (the private clone is exact); coreml-tiers is fp16 on a convnet and fp32
 * on a narrow transformer; fp16 overflow gives inf/NaN, never a clamp; determinism across
 * runs and thread counts; a profile asking fp16 accumulation is refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/emulate.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "refs/kernels.h"
#include "refs/round.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

static const char *NX14 = "positions/size10x14.jsonl.gz";

typedef struct run_out {
    hc_nnoutput *o;
    size_t n;
    int rc;
    hc_err err;
} run_out;

static run_out run(const char *spec, const hc_net *net, const hc_position *ps, size_t n, int nx, int ny, int threads)
{
    run_out r = {0};
    r.n = n;
    r.o = calloc(n, sizeof *r.o);
    hc_backend b = {0};
    r.rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = nx, .ny = ny,
                                                            .max_batch = 8, .threads = threads}, &r.err);
    if (r.rc == 0) {
        hc_eval_settings s = hc_eval_settings_default(nx, ny);
        hc_eval_failure fail;
        r.rc = hc_eval_positions(&b, net, ps, n, NULL, 8, &s, r.o, NULL, &fail, NULL, NULL, &r.err);
    }
    hc_backend_close(&b);
    return r;
}

static void run_free(run_out *r)
{
    hc_nnoutputs_free(r->o, r->n);
    r->o = NULL;
}

static int same_outputs(const run_out *a, const run_out *b)
{
    if (a->rc || b->rc || a->n != b->n)
        return 0;
    hc_stats st;
    hc_err err;
    if (hc_stats_compute(a->o, b->o, a->n, &st, &err))
        return 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        if (st.m[m].v[HC_P_MAX] != 0.0)
            return 0;
    return 1;
}

static hc_net *load_reduced(const char *rel)
{
    const char *p = hc_shared(rel);
    if (!p)
        return NULL;
    hc_err err;
    hc_net *net = hc_net_load(p, &err);
    if (net)
        hc_net_reduce_activations(net);
    return net;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* Overflow: the hook of an emulate instance sees the scaled layer after rounding. */
typedef struct ovf {
    const char *layer;
    int saw_inf;
    float max_finite;
} ovf;

static void ovf_hook(void *user, const hc_tap *t)
{
    ovf *o = user;
    if (strcmp(t->layer, o->layer) != 0)
        return;
    size_t n = (size_t)t->channels * t->rows * t->hw;
    for (size_t i = 0; i < n; i++) {
        float v = fabsf(t->data[i]);
        if (isinf(v))
            o->saw_inf = 1;
        else
            o->max_finite = (float)hc_max_nan(o->max_finite, v);
    }
}

static void test_overflow(hc_net *net, const hc_position *ps, size_t n)
{
    /* Scale the first block's mid batch norm (merged form, what the engine computes with) so
     * that its post-ReLU activations exceed fp16's 65504 but stay far inside fp32. */
    hc_bn *bn = &net->trunk.blocks[0].ordinary.mid_bn;
    float *saved = malloc((size_t)bn->c * 2 * sizeof(float));
    memcpy(saved, bn->merged_scale, (size_t)bn->c * sizeof(float));
    memcpy(saved + bn->c, bn->merged_bias, (size_t)bn->c * sizeof(float));
    /* 6e4 is a valid fp16 weight; the conv outputs it scales exceed 1.1 */
    for (int c = 0; c < bn->c; c++) {
        bn->merged_scale[c] = 6e4f;
        bn->merged_bias[c] = 0.0f;
    }
    size_t m = n < 8 ? n : 8;
    run_out r32 = run("ref32", net, ps, m, 10, 14, 1);
    run_out r16 = run("emulate:fp16", net, ps, m, 10, 14, 1);
    run_out rbf = run("emulate:bf16", net, ps, m, 10, 14, 1);
    hc_check("emulate-4.1", r32.rc == 0, "ref32 on the scaled net stays finite: %s", r32.err.msg);
    hc_check("emulate-4.2", r16.rc != 0 && r16.err.code == HC_EBACKEND && strstr(r16.err.msg, "non-finite"),
             "fp16 overflow must reach the outputs as non-finite: rc %d, %s", r16.rc, r16.err.msg);
    hc_check("emulate-4.3", rbf.rc == 0, "bf16 has fp32's range: %s", rbf.err.msg);
    /* the layer itself: inf, not clamped to 65504 */
    hc_err err = {0};
    hc_emulate *em = hc_emulate_open("fp16", net, 10, 14, 1, 1, &err);
    ovf o = {.layer = bn->name};
    if (em) {
        hc_emulate_set_hook(em, ovf_hook, &o);
        hc_raw_heads *h = hc_raw_heads_new(1, 10, 14, net->num_policy_c, net->num_score_value_c, &err);
        float *sp = calloc((size_t)net->num_input_c * 140, sizeof(float));
        float *gl = calloc((size_t)net->num_input_global_c, sizeof(float));
        for (int i = 0; i < 140; i++)
            sp[i] = 1.0f;
        int erc = hc_emulate_eval(em, 1, sp, gl, NULL, h, &err);
        hc_check("emulate-4.5", erc != 0 && strstr(err.msg, "non-finite value in layer rconv1/norm2 (stored as fp16") && !strstr(err.msg, "weights"),
                 "the eval must fail naming the layer: %s", erc ? err.msg : "succeeded");
        int nonfinite = 0;
        for (int i = 0; i < 3; i++)
            nonfinite |= !isfinite(h->value[i]);
        hc_check("emulate-4.4", o.saw_inf && o.max_finite <= 65504.0f && nonfinite,
                 "layer %s: inf %d, largest finite %g, value head non-finite %d", bn->name, o.saw_inf,
                 (double)o.max_finite, nonfinite);
        free(sp);
        free(gl);
        hc_raw_heads_free(h);
    } else {
        hc_check("emulate-4.4", 0, "%s", err.msg);
    }
    hc_emulate_close(em);
    /* a weight past fp16's range: inf when rounded, named in the error */
    for (int c = 0; c < bn->c; c++)
        bn->merged_scale[c] = 1e5f;
    run_out rw = run("emulate:fp16", net, ps, 1, 10, 14, 1);
    hc_check("emulate-4.6", rw.rc != 0 && strstr(rw.err.msg, "96 weights of layer rconv1/norm2 are not finite in fp16"),
             "%s", rw.rc ? rw.err.msg : "succeeded");
    run_free(&rw);
    memcpy(bn->merged_scale, saved, (size_t)bn->c * sizeof(float));
    memcpy(bn->merged_bias, saved + bn->c, (size_t)bn->c * sizeof(float));
    free(saved);
    run_free(&r32);
    run_free(&r16);
    run_free(&rbf);
}

/* The engine's fp16 emulation modes at kernel level: a 1x1 conv of 40 inputs accumulated in
 * fp16 in chunks of 16, against the same sums done by hand; Winograd with fp16 tiles differs
 * from fp32 tiles by a few fp16 ulps only. */
static void test_kernel_modes(void)
{
    enum { IC = 40 };
    float w[IC], x[IC], out32 = 0, out16 = 0;
    for (int i = 0; i < IC; i++) {
        w[i] = 1.0f + (float)i * 1e-3f;
        x[i] = 0.1f * (float)(i + 1) + 1e-4f;
    }
    hc_kconv cv;
    hc_err err = {0};
    float ws[2 * 1 + 16];
    hc_kconv_init(&cv, w, 1, IC, 1, 1, &err);
    hc_kconv_run(&cv, 1, 1, 1, x, &out32, 0, ws);
    hc_kconv_set_modes(&cv, 1, 0);
    size_t need = hc_kconv_workspace(&cv, 1, 1, 1);
    hc_kconv_run(&cv, 1, 1, 1, x, &out16, 0, ws);
    float acc = 0;
    for (int k0 = 0; k0 < IC; k0 += HC_ACC16_CHUNK) {
        double part = 0;
        for (int i = k0; i < IC && i < k0 + HC_ACC16_CHUNK; i++)
            part += (double)w[i] * x[i];
        float p16 = hc_round_fp16((float)part);
        acc = k0 ? hc_round_fp16(acc + p16) : p16;
    }
    hc_check("emulate-5.1", need == 2 && out16 == acc && out16 != out32 && fabsf(out16 - out32) < 0.1f,
             "fp16 accumulation: %.9g, by hand %.9g, fp32 %.9g (workspace %zu)", (double)out16, (double)acc,
             (double)out32, need);
    hc_kconv_free(&cv);

    /* 3x3 Winograd, 8 -> 4 channels on 7x5 */
    enum { C = 8, O = 4, NX = 7, NY = 5, HW = NX * NY };
    float wk[O * C * 9], in[C * HW], a[O * HW], b[O * HW];
    unsigned s = 7;
    for (int i = 0; i < O * C * 9; i++) {
        s = s * 1103515245u + 12345u;
        wk[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
    }
    for (int i = 0; i < C * HW; i++) {
        s = s * 1103515245u + 12345u;
        in[i] = (float)((s >> 8) % 2001) / 100.0f - 10.0f;
    }
    hc_kconv c1, c2;
    hc_kconv_init(&c1, wk, O, C, 3, 3, &err);
    hc_kconv_init(&c2, wk, O, C, 3, 3, &err);
    hc_kconv_use_winograd(&c1, &err);
    hc_kconv_use_winograd(&c2, &err);
    hc_kconv_set_modes(&c2, 0, 1);
    float *wsw = malloc(hc_kconv_workspace(&c2, 1, NX, NY) * sizeof(float));
    hc_kconv_run(&c1, 1, NX, NY, in, a, 0, wsw);
    hc_kconv_run(&c2, 1, NX, NY, in, b, 0, wsw);
    double maxd = 0, maxa = 0;
    for (int i = 0; i < O * HW; i++) {
        maxd = hc_max_nan(maxd, fabs((double)a[i] - b[i]));
        maxa = hc_max_nan(maxa, fabs((double)a[i]));
    }
    hc_check("emulate-5.2", maxd > 0 && maxd < 1e-2 * maxa, "fp16 tiles: max diff %g of %g", maxd, maxa);
    free(wsw);
    hc_kconv_free(&c1);
    hc_kconv_free(&c2);
}

/* Winograd F(2x2,3x3): in fp32 it is the direct convolution up to fp32 rounding; fp16 tiles
 * add error, and less than F(4x4,3x3)'s fp16 tiles (smaller transform constants). */
static void test_winograd2(void)
{
    enum { C = 16, O = 6, NX = 9, NY = 7, HW = NX * NY, BT = 2 };
    static float wk[O * C * 9], in[C * BT * HW], d[O * BT * HW], f2[O * BT * HW], f2h[O * BT * HW],
        f4h[O * BT * HW];
    unsigned s = 3;
    for (int i = 0; i < O * C * 9; i++) {
        s = s * 1103515245u + 12345u;
        wk[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
    }
    for (int i = 0; i < C * BT * HW; i++) {
        s = s * 1103515245u + 12345u;
        in[i] = (float)((s >> 8) % 2001) / 300.0f - 3.0f;
    }
    hc_err err = {0};
    hc_kconv cd, c2, c2h, c4h;
    hc_kconv_init(&cd, wk, O, C, 3, 3, &err);
    hc_kconv_init(&c2, wk, O, C, 3, 3, &err);
    hc_kconv_init(&c2h, wk, O, C, 3, 3, &err);
    hc_kconv_init(&c4h, wk, O, C, 3, 3, &err);
    hc_kconv_use_winograd(&c2, &err); /* replaced by F(2x2) */
    hc_kconv_use_winograd2(&c2, &err);
    hc_kconv_use_winograd2(&c2h, &err);
    hc_kconv_set_modes(&c2h, 0, 1);
    hc_kconv_use_winograd(&c4h, &err);
    hc_kconv_set_modes(&c4h, 0, 1);
    size_t need = hc_kconv_workspace(&c4h, BT, NX, NY);
    size_t n2 = hc_kconv_workspace(&c2h, BT, NX, NY), nd = hc_kconv_workspace(&cd, BT, NX, NY);
    need = need > n2 ? need : n2;
    need = need > nd ? need : nd;
    float *ws = malloc(need * sizeof(float));
    hc_kconv_run(&cd, BT, NX, NY, in, d, 0, ws);
    hc_kconv_run(&c2, BT, NX, NY, in, f2, 0, ws);
    hc_kconv_run(&c2h, BT, NX, NY, in, f2h, 0, ws);
    hc_kconv_run(&c4h, BT, NX, NY, in, f4h, 0, ws);
    double e2 = 0, e2h = 0, e4h = 0, mx = 0, sum_abs = 0;
    for (int i = 0; i < O * BT * HW; i++) {
        e2 = hc_max_nan(e2, fabs((double)f2[i] - d[i]));
        e2h = hc_max_nan(e2h, fabs((double)f2h[i] - d[i]));
        e4h = hc_max_nan(e4h, fabs((double)f4h[i] - d[i]));
        mx = hc_max_nan(mx, fabs((double)d[i]));
        sum_abs += fabs((double)d[i]);
    }
    /* fp32: a 144-term sum of magnitude ~mx; a few ulps of the largest partial sums */
    hc_check("emulate-8.1", c2.wino2 && !c2.wino && e2 < 64 * 1.2e-7 * mx && sum_abs > 0,
             "F(2x2) fp32 vs direct: max diff %g of %g", e2, mx);
    hc_check("emulate-8.2", e2h > 8 * e2 && e2h < 1e-2 * mx, "F(2x2) fp16 tiles: max diff %g (fp32 %g) of %g", e2h, e2,
             mx);
    hc_check("emulate-8.3", e2h < e4h, "F(2x2) fp16 tiles must lose less than F(4x4)'s: %g vs %g", e2h, e4h);
    /* accumulate: out += conv */
    memcpy(f2h, d, sizeof d);
    hc_kconv_run(&c2, BT, NX, NY, in, f2h, 1, ws);
    int acc_ok = 1;
    for (int i = 0; i < O * BT * HW; i++)
        acc_ok &= fabs((double)f2h[i] - 2.0 * d[i]) <= 2 * e2 + 1e-6 * mx;
    hc_check("emulate-8.4", acc_ok, "F(2x2) with accumulate");
    free(ws);
    hc_kconv_free(&cd);
    hc_kconv_free(&c2);
    hc_kconv_free(&c2h);
    hc_kconv_free(&c4h);
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* The kernels behind pool / attnScores / softmax / matmul accumulation: the emulated attention
 * with nothing to round is hc_attention bit for bit; each rounding changes it; the fp16-
 * accumulating matmuls match a hand computation. */
static void test_inner_kernels(void)
{
    enum { B = 2, HW = 12, H = 2, KV = 1, QD = 20, VD = 4, S = B * HW, IN = 37, OUT = 5 };
    float q[H * QD * S], k[KV * QD * S], v[KV * VD * S], mask[B * HW], ws[2 * HW * HW];
    float o0[H * VD * S], o1[H * VD * S];
    unsigned st = 11;
    for (int i = 0; i < H * QD * S; i++)
        q[i] = (float)(lcg(&st) % 2001) / 500.0f - 2.0f;
    for (int i = 0; i < KV * QD * S; i++)
        k[i] = (float)(lcg(&st) % 2001) / 500.0f - 2.0f;
    for (int i = 0; i < KV * VD * S; i++)
        v[i] = (float)(lcg(&st) % 2001) / 1000.0f - 1.0f;
    for (int i = 0; i < B * HW; i++)
        mask[i] = i % HW < 10 ? 1.0f : 0.0f; /* two padding points per row */
    hc_attention(B, HW, H, KV, QD, VD, q, k, v, mask, o0, ws);
    const hc_attn_emul modes[4] = {{0, 0, 0}, {HC_KFMT_FP16, 0, 0}, {0, HC_KFMT_FP16, 0}, {0, 0, 1}};
    const char *what[4] = {"nothing", "scores fp16", "softmax fp16", "fp16 accumulation"};
    for (int m = 0; m < 4; m++) {
        hc_attention_emul(B, HW, H, KV, QD, VD, q, k, v, mask, o1, ws, &modes[m]);
        int same = memcmp(o0, o1, sizeof o0) == 0;
        double maxd = 0;
        for (int i = 0; i < H * VD * S; i++)
            maxd = hc_max_nan(maxd, fabs((double)o0[i] - o1[i]));
        char id[32];
        snprintf(id, sizeof id, "emulate-6.%d", m + 1);
        hc_check(id, m == 0 ? same : !same && maxd < 2e-2, "attention rounding %s: same %d, max diff %g", what[m], same,
                 maxd);
    }
    /* matmuls: out[b][o] = sum_i in[b][i] w[i][o], in 16-product fp16 chunks */
    float in[B * IN], w[IN * OUT], a[B * OUT], b32[B * OUT], cs16[OUT * B], cs32[OUT * B];
    for (int i = 0; i < B * IN; i++)
        in[i] = 0.3f + (float)(lcg(&st) % 1000) / 997.0f;
    for (int i = 0; i < IN * OUT; i++)
        w[i] = 0.7f + (float)(lcg(&st) % 1000) / 1009.0f;
    hc_matmul_bc_acc16(B, IN, OUT, in, w, a);
    hc_matmul_bc(B, IN, OUT, in, w, b32);
    int hand = 1, differs = 0;
    for (int r = 0; r < B; r++)
        for (int o = 0; o < OUT; o++) {
            float acc = 0;
            for (int k0 = 0; k0 < IN; k0 += HC_ACC16_CHUNK) {
                float part = 0;
                for (int i = k0; i < IN && i < k0 + HC_ACC16_CHUNK; i++)
                    part += in[r * IN + i] * w[i * OUT + o];
                float p16 = hc_round_fp16(part);
                acc = k0 ? hc_round_fp16(acc + p16) : p16;
            }
            hand &= a[r * OUT + o] == acc;
            differs |= a[r * OUT + o] != b32[r * OUT + o];
        }
    hc_check("emulate-6.5", hand && differs, "matmul_bc fp16 accumulation: by hand %d, differs from fp32 %d", hand,
             differs);
    /* the same products per position: CBP in [IN][B*1] with hw 1 */
    float inc[IN * B];
    for (int r = 0; r < B; r++)
        for (int i = 0; i < IN; i++)
            inc[i * B + r] = in[r * IN + i];
    hc_matmul_cs_acc16(B, 1, IN, OUT, inc, w, cs16);
    hc_matmul_cs(B, 1, IN, OUT, inc, w, cs32);
    int agree = 1;
    for (int r = 0; r < B; r++)
        for (int o = 0; o < OUT; o++)
            agree &= cs16[o * B + r] == a[r * OUT + o];
    hc_check("emulate-6.6", agree && memcmp(cs16, cs32, sizeof cs16) != 0,
             "matmul_cs fp16 accumulation agrees with matmul_bc's: %d", agree);
    float x[4] = {1.0f + 1e-6f, 3.14159265f, -70000.0f, 1e-8f};
    hc_round_fmt_array(HC_KFMT_FP32, x, 4);
    int kept = x[0] == 1.0f + 1e-6f && x[1] == 3.14159265f;
    hc_round_fmt_array(HC_KFMT_FP16, x, 4);
    hc_check("emulate-6.7", kept && x[0] == 1.0f && x[1] == hc_round_fp16(3.14159265f) && isinf(x[2]) && x[2] < 0,
             "hc_round_fmt_array");
}

/* Each in-layer key on its own changes the outputs of a net that has the layer (pool: the
 * g170 convnet's gpool blocks and heads; attnScores, softmax, matmul accumulation: the
 * transformer), and the same profile with the key at fp32 is ref32 bit for bit. */
static void test_inner_keys(const hc_net *net, const hc_net *tf, const hc_position *ps, const char *dir)
{
    static const struct {
        const char *id, *yaml;
        int transformer;
    } cases[] = {
        {"emulate-7.1", "pool: fp16\n", 0},
        {"emulate-7.2", "pool: bf16\n", 0},
        {"emulate-7.3", "rules:\n  - kind: matmul\n    accum: fp16\n", 0},
        {"emulate-7.4", "attnScores: fp16\n", 1},
        {"emulate-7.5", "softmax: fp16\n", 1},
        {"emulate-7.6", "rules:\n  - kind: attn_out\n    accum: fp16\n", 1},
        {"emulate-7.7", "rules:\n  - kind: ffn\n    accum: fp16\n", 1},
        {"emulate-7.8", "pool: fp16\n", 1},
        {"emulate-7.11", "poolSum: fp16\n", 0},
        {"emulate-7.12", "poolSum: bf16\n", 1},
        {"emulate-7.13", "normSum: fp16\n", 1},
        {"emulate-7.14", "rules:\n  - kind: trunk_tip\n    normSum: bf16\n", 1},
    };
    run_out r0 = run("ref32", net, ps, 12, 10, 14, 1);
    run_out t0 = tf ? run("ref32", tf, ps, 8, 10, 14, 1) : (run_out){0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].transformer && !tf) {
            hc_skip(cases[i].id, "transformer net absent");
            continue;
        }
        const hc_net *n = cases[i].transformer ? tf : net;
        size_t np = cases[i].transformer ? 8 : 12;
        char path[700], spec[800], text[400];
        snprintf(path, sizeof path, "%s/inner%zu.yaml", dir, i);
        snprintf(text, sizeof text, "storage: fp32\nweights: fp32\n%s", cases[i].yaml);
        write_file(path, text);
        snprintf(spec, sizeof spec, "emulate:%s", path);
        run_out e = run(spec, n, ps, np, 10, 14, 1);
        const run_out *ref = cases[i].transformer ? &t0 : &r0;
        hc_stats st;
        hc_err err = {0};
        double kl = 0, wr = 0;
        if (e.rc == 0 && ref->rc == 0 && hc_stats_compute(ref->o, e.o, np, &st, &err) == 0) {
            kl = st.m[HC_M_POLICY_KL].v[HC_P_MAX];
            wr = st.m[HC_M_WINRATE].v[HC_P_MAX];
        }
        hc_check(cases[i].id, e.rc == 0 && !same_outputs(ref, &e) && wr < 0.05,
                 "%s alone must change the outputs, a little (winrate max %g, KL max %g): %s", cases[i].yaml, wr, kl,
                 e.err.msg);
        run_free(&e);
    }
    /* the keys at fp32 explicitly: ref32's bits */
    char path[700], spec[800];
    snprintf(path, sizeof path, "%s/inner32.yaml", dir);
    write_file(path, "storage: fp32\nweights: fp32\naccum: fp32\npool: fp32\nattnScores: fp32\nsoftmax: fp32\n"
                     "winogradTiles: fp32\npoolSum: fp32\nnormSum: fp32\n");
    snprintf(spec, sizeof spec, "emulate:%s", path);
    run_out e = run(spec, net, ps, 12, 10, 14, 1);
    hc_check("emulate-7.9", same_outputs(&r0, &e), "every key fp32 must be ref32: %s", e.err.msg);
    run_free(&e);
    if (tf) {
        e = run(spec, tf, ps, 8, 10, 14, 1);
        hc_check("emulate-7.10", same_outputs(&t0, &e), "every key fp32 on the transformer must be ref32: %s",
                 e.err.msg);
        run_free(&e);
        run_free(&t0);
    }
    run_free(&r0);
}

/* Writes the built-in profile `name` with its sum keys set to fp32 (-1 on failure). */
static int write_without_sums(const char *name, const char *path)
{
    hc_err err = {0};
    hc_profile *p = hc_profile_load(name, &err);
    if (!p)
        return -1;
    p->pool_sum = p->norm_sum = HC_FMT_FP32;
    for (int i = 0; i < p->n_rules; i++) { /* a rule that sets them: fp32 there too */
        if (p->rules[i].pool_sum >= 0)
            p->rules[i].pool_sum = HC_FMT_FP32;
        if (p->rules[i].norm_sum >= 0)
            p->rules[i].norm_sum = HC_FMT_FP32;
    }
    int rc = hc_profile_write(p, NULL, path, &err);
    hc_profile_free(p);
    return rc;
}

/* poolSum / normSum end to end: the MLX and Neural Engine profiles stay finite and differ from
 * themselves without the sum rounding; a value-head pooling sum past 65504 fails the eval. */
static void test_sums(hc_net *net, const hc_net *tf, const hc_position *ps, const char *dir)
{
    static const char *const profs[] = {"fp16-winograd2", "ane-fp16"};
    int id = 0;
    for (int t = 0; t < 2; t++) {
        const hc_net *n = t ? tf : net;
        for (int k = 0; k < 2; k++) {
            char cid[32], path[700], spec[800], with[80];
            snprintf(cid, sizeof cid, "emulate-9.%d", ++id);
            if (!n) {
                hc_skip(cid, "transformer net absent");
                continue;
            }
            snprintf(path, sizeof path, "%s/nosums-%s.yaml", dir, profs[k]);
            snprintf(spec, sizeof spec, "emulate:%s", path);
            snprintf(with, sizeof with, "emulate:%s", profs[k]);
            if (write_without_sums(profs[k], path)) {
                hc_check(cid, 0, "cannot write %s", path);
                continue;
            }
            run_out a = run(with, n, ps, 12, 10, 14, 2), b = run(spec, n, ps, 12, 10, 14, 2);
            int finite = a.rc == 0 && b.rc == 0;
            for (size_t i = 0; finite && i < a.n; i++)
                finite = isfinite(a.o[i].white_win_prob) && isfinite(a.o[i].white_lead) && isfinite(a.o[i].policy_probs[0]);
            hc_stats st;
            hc_err err = {0};
            double wr = -1;
            if (finite && hc_stats_compute(a.o, b.o, a.n, &st, &err) == 0)
                wr = st.m[HC_M_WINRATE].v[HC_P_MAX];
            hc_check(cid, finite && !same_outputs(&a, &b) && wr >= 0 && wr < 0.05,
                     "%s on %s: finite %d, differs from itself without sum rounding %d (winrate max %g): %s | %s",
                     profs[k], t ? "the transformer" : "g170", finite, !same_outputs(&a, &b), wr, a.err.msg,
                     b.err.msg);
            run_free(&a);
            run_free(&b);
        }
    }
    /* value head v1 = 500 on the board: 140 positions sum to 70000, inf in fp16 */
    hc_bn *bn = &net->value.v1_bn;
    float *saved = malloc((size_t)bn->c * 2 * sizeof(float));
    memcpy(saved, bn->merged_scale, (size_t)bn->c * sizeof(float));
    memcpy(saved + bn->c, bn->merged_bias, (size_t)bn->c * sizeof(float));
    for (int c = 0; c < bn->c; c++) {
        bn->merged_scale[c] = 0.0f;
        bn->merged_bias[c] = 500.0f;
    }
    char path[700], spec[800];
    snprintf(path, sizeof path, "%s/poolsum16.yaml", dir);
    write_file(path, "storage: fp32\nweights: fp32\npoolSum: fp16\n");
    snprintf(spec, sizeof spec, "emulate:%s", path);
    run_out s16 = run(spec, net, ps, 2, 10, 14, 1);
    snprintf(path, sizeof path, "%s/poolsumbf.yaml", dir);
    write_file(path, "storage: fp16\nweights: fp32\npoolSum: bf16\n");
    snprintf(spec, sizeof spec, "emulate:%s", path);
    run_out sbf = run(spec, net, ps, 2, 10, 14, 1);
    hc_check("emulate-9.5",
             s16.rc != 0 && strstr(s16.err.msg, "non-finite value in layer") && strstr(s16.err.msg, net->value.v2_mul.name) &&
                 strstr(s16.err.msg, "pooling sum overflowed in fp16"),
             "a value-head pooling sum past 65504 must fail the eval at %s: %s", net->value.v2_mul.name,
             s16.rc ? s16.err.msg : "succeeded");
    hc_check("emulate-9.6", sbf.rc == 0, "bf16 sums have fp32's range: %s", sbf.err.msg);
    run_free(&s16);
    run_free(&sbf);
    memcpy(bn->merged_scale, saved, (size_t)bn->c * sizeof(float));
    memcpy(bn->merged_bias, saved + bn->c, (size_t)bn->c * sizeof(float));
    free(saved);
}

int main(void)
{
    hc_plan(59); /* a fixed sequence of checks (the attention modes: a fixed table of 4) */
    test_kernel_modes();
    test_inner_kernels();
    test_winograd2();
    hc_net *net = load_reduced("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    const char *pp = hc_shared(NX14);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    if (!net || !pp || hc_positions_load(pp, &ps, &n, &err)) {
        hc_skip_rest("emulate", "shared g170 net or %s absent", NX14);
        hc_net_free(net);
        return hc_test_exit();
    }

    run_out ref = run("ref32", net, ps, n, 10, 14, 2);
    run_out f16 = run("emulate:fp16", net, ps, n, 10, 14, 2);
    run_out bf = run("emulate:bf16", net, ps, n, 10, 14, 2);
    hc_check("emulate-1.1", ref.rc == 0 && f16.rc == 0 && bf.rc == 0, "%s | %s | %s", ref.err.msg, f16.err.msg,
             bf.err.msg);
    hc_stats s16, sbf;
    if (ref.rc == 0 && f16.rc == 0 && bf.rc == 0 && hc_stats_compute(ref.o, f16.o, n, &s16, &err) == 0 &&
        hc_stats_compute(ref.o, bf.o, n, &sbf, &err) == 0) {
        double wr16 = s16.m[HC_M_WINRATE].v[HC_P_99], wrbf = sbf.m[HC_M_WINRATE].v[HC_P_99];
        hc_check("emulate-1.2", s16.m[HC_M_WINRATE].v[HC_P_MAX] > 0 && s16.m[HC_M_POLICY_KL].v[HC_P_MAX] > 0,
                 "fp16 must differ from fp32");
        hc_tier tier;
        hc_tier_check tc;
        if (hc_tier_builtin("fp16", &tier, &err) == 0) {
            hc_tier_check_stats(&tier, &s16, &tc);
            hc_check("emulate-1.3", tc.pass, "emulate:fp16 fails KataGo's fp16 tier (first failing metric %d pct %d)",
                     tc.first_fail_metric, tc.first_fail_pct);
        } else {
            hc_check("emulate-1.3", 0, "no built-in tier fp16: %s", err.msg);
        }
        /* fp16 storage is far from fp32-exact: an fp32-class tier must see it */
        if (hc_tier_builtin("fp32-strict", &tier, &err) == 0) {
            hc_tier_check_stats(&tier, &s16, &tc);
            hc_check("emulate-1.4", !tc.pass, "emulate:fp16 passes fp32-strict: not really reduced?");
        } else {
            hc_check("emulate-1.4", 0, "no built-in tier fp32-strict: %s", err.msg);
        }
        hc_check("emulate-1.5",
                 wrbf > 2 * wr16 && sbf.m[HC_M_POLICY_KL].v[HC_P_AVG] > 2 * s16.m[HC_M_POLICY_KL].v[HC_P_AVG] &&
                     sbf.m[HC_M_LEAD].v[HC_P_AVG] > s16.m[HC_M_LEAD].v[HC_P_AVG],
                 "bf16 (8-bit mantissa) must err more than fp16 (11-bit): winrate p99 %g vs %g", wrbf, wr16);
        /* fp16 accumulation in the convolutions, fp16 Winograd tiles: more error than fp16 storage */
        run_out acc = run("emulate:fp16-acc16", net, ps, n, 10, 14, 2);
        run_out win = run("emulate:fp16-winograd", net, ps, n, 10, 14, 2);
        hc_stats sacc, swin;
        int have_win = 0;
        if (hc_check("emulate-1.7", acc.rc == 0 && win.rc == 0, "%s | %s", acc.err.msg, win.err.msg) &&
            hc_stats_compute(ref.o, acc.o, n, &sacc, &err) == 0 && hc_stats_compute(ref.o, win.o, n, &swin, &err) == 0) {
            have_win = 1;
            hc_check("emulate-1.8",
                     sacc.m[HC_M_WINRATE].v[HC_P_AVG] > 1.5 * s16.m[HC_M_WINRATE].v[HC_P_AVG] &&
                         sacc.m[HC_M_POLICY_KL].v[HC_P_AVG] > 1.5 * s16.m[HC_M_POLICY_KL].v[HC_P_AVG],
                     "fp16 accumulation must err more than fp32 accumulation: winrate avg %g vs %g",
                     sacc.m[HC_M_WINRATE].v[HC_P_AVG], s16.m[HC_M_WINRATE].v[HC_P_AVG]);
            hc_check("emulate-1.9",
                     swin.m[HC_M_WINRATE].v[HC_P_AVG] > 1.2 * s16.m[HC_M_WINRATE].v[HC_P_AVG] &&
                         swin.m[HC_M_POLICY_KL].v[HC_P_AVG] > 1.2 * s16.m[HC_M_POLICY_KL].v[HC_P_AVG],
                     "fp16 Winograd tiles must err more than fp32 tiles: winrate avg %g vs %g",
                     swin.m[HC_M_WINRATE].v[HC_P_AVG], s16.m[HC_M_WINRATE].v[HC_P_AVG]);
        } else {
            hc_fail_n("emulate-1.8", 2, "not run: no fp16-acc16/fp16-winograd statistics: %s", err.msg); /* 1.8, 1.9 */
        }
        /* MLX's F(2x2,3x3) with fp16 tiles: more error than plain fp16, less than F(4x4)'s */
        run_out w2 = run("emulate:fp16-winograd2", net, ps, n, 10, 14, 2);
        hc_stats sw2;
        if (!hc_check("emulate-8.5", w2.rc == 0, "%s", w2.err.msg) || hc_stats_compute(ref.o, w2.o, n, &sw2, &err) != 0)
            hc_check("emulate-8.6", 0, "not run: no fp16-winograd2 statistics: %s", w2.rc ? w2.err.msg : err.msg);
        else if (!have_win)
            hc_check("emulate-8.6", 0, "not run: no fp16-winograd statistics to compare with");
        else
            hc_check("emulate-8.6",
                     sw2.m[HC_M_POLICY_KL].v[HC_P_AVG] > s16.m[HC_M_POLICY_KL].v[HC_P_AVG] &&
                         sw2.m[HC_M_POLICY_KL].v[HC_P_AVG] < swin.m[HC_M_POLICY_KL].v[HC_P_AVG],
                     "policy KL avg: fp16 %g < fp16-winograd2 %g < fp16-winograd %g", s16.m[HC_M_POLICY_KL].v[HC_P_AVG],
                     sw2.m[HC_M_POLICY_KL].v[HC_P_AVG], swin.m[HC_M_POLICY_KL].v[HC_P_AVG]);
        run_free(&w2);
        run_free(&acc);
        run_free(&win);
        /* a plausibility band: what real fp16 backends show (shared/BACKENDS.md) */
        hc_check("emulate-1.6", wr16 > 1e-5 && wr16 < 1e-2, "fp16 winrate p99 %g outside 0.001%%..1%%", wr16);
    } else {
        /* 1.2-1.9, 8.5, 8.6 */
        hc_fail_n("emulate-1.2", 10, "not run: no outputs or statistics for ref32, fp16 and bf16: %s", err.msg);
    }

    /* determinism: same bits across runs and thread counts */
    run_out f16b = run("emulate:fp16", net, ps, n < 40 ? n : 40, 10, 14, 1);
    run_out f16c = run("emulate:fp16", net, ps, n < 40 ? n : 40, 10, 14, 1);
    hc_check("emulate-2.1", same_outputs(&f16b, &f16c), "two runs differ");
    f16b.n = f16c.n = n < 40 ? n : 40;
    run_out head = {f16.o, f16b.n, f16.rc, {0, ""}};
    hc_check("emulate-2.2", same_outputs(&head, &f16b), "1 thread vs 2 threads differ");

    /* an all-fp32 profile is ref32, bit for bit; coreml-tiers on a convnet is fp16 */
    const char *dir = hc_tmpdir("test_emulate");
    char p32[600], pacc[600], spec[700];
    snprintf(p32, sizeof p32, "%s/all32.yaml", dir ? dir : ".");
    snprintf(pacc, sizeof pacc, "%s/acc16.yaml", dir ? dir : ".");
    write_file(p32, "storage: fp32\nweights: fp32\naccum: fp32\n");
    write_file(pacc, "storage: fp16\nweights: fp16\nrules:\n  - kind: batchnorm\n    accum: fp16\n");
    snprintf(spec, sizeof spec, "emulate:%s", p32);
    size_t m = n < 40 ? n : 40;
    run_out e32 = run(spec, net, ps, m, 10, 14, 2);
    run_out ref40 = {ref.o, m, ref.rc, {0, ""}};
    hc_check("emulate-3.1", same_outputs(&ref40, &e32), "all-fp32 profile differs from ref32: %s", e32.err.msg);
    run_out cm = run("emulate:coreml-tiers", net, ps, m, 10, 14, 2);
    run_out f16m = {f16.o, m, f16.rc, {0, ""}};
    hc_check("emulate-3.2", same_outputs(&f16m, &cm), "coreml-tiers on a plain convnet must be pure fp16: %s",
             cm.err.msg);
    snprintf(spec, sizeof spec, "emulate:%s", pacc);
    hc_backend b = {0};
    int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = 10, .ny = 14,
                                                              .max_batch = 8, .threads = 1}, &err);
    hc_check("emulate-3.3", rc != 0 && strstr(err.msg, "accumulation") && strstr(err.msg, "acc16.yaml:4:5"),
             "fp16 accumulation of a batch norm must be refused, naming the rule: %s", rc ? err.msg : "opened");
    hc_backend_close(&b);
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "emulate", .net = net, .nx = 10, .ny = 14,
                                                          .max_batch = 8, .threads = 1}, &err);
    hc_check("emulate-3.4", rc != 0 && err.code == HC_ECONFIG, "emulate without a profile: %s", err.msg);
    hc_backend_close(&b);
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "emulate:fp8", .net = net, .nx = 10, .ny = 14,
                                                          .max_batch = 8, .threads = 1}, &err);
    hc_check("emulate-3.5", rc != 0 && strstr(err.msg, "fp8"), "unknown profile: %s", err.msg);
    hc_backend_close(&b);

    /* the narrow transformer under coreml-tiers: fp32 tier, so ref32's bits */
    hc_net *tf = load_reduced("nets/b7c96h3tfrs-test5-cnorm.bin.gz");
    if (tf) {
        run_out t32 = run("ref32", tf, ps, 16, 10, 14, 1);
        run_out tcm = run("emulate:coreml-tiers", tf, ps, 16, 10, 14, 1);
        run_out t16 = run("emulate:fp16", tf, ps, 16, 10, 14, 1);
        hc_check("emulate-3.6", same_outputs(&t32, &tcm), "coreml-tiers on a 96-channel transformer must be fp32: %s",
                 tcm.err.msg);
        hc_check("emulate-3.7", t16.rc == 0 && !same_outputs(&t32, &t16), "fp16 on the transformer: %s", t16.err.msg);
        run_free(&t32);
        run_free(&tcm);
        run_free(&t16);
    } else {
        hc_skip("emulate-3.6", "transformer net absent");
    }
    hc_net_free(tf);

    test_overflow(net, ps, n);
    {
        hc_net *tf2 = load_reduced("nets/b7c96h3tfrs-test5-cnorm.bin.gz");
        test_inner_keys(net, tf2, ps, dir ? dir : ".");
        test_sums(net, tf2, ps, dir ? dir : ".");
        hc_net_free(tf2);
    }

    run_free(&e32);
    run_free(&cm);
    run_free(&f16b);
    run_free(&f16c);
    run_free(&ref);
    run_free(&f16);
    run_free(&bf);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return hc_test_exit();
}
