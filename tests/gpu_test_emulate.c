/* GPU tests (make test-gpu, never make test): cuda:emulate:PROFILE gives emulate:PROFILE's bits.
 * For every built-in profile (docs/EMULATION.md: fp16, bf16, cuda-fp16, coreml-tiers, fp16-acc16,
 * fp16-winograd, fp16-winograd2, ane-fp16), tests/data/ane-fp16-acc16.yaml (ane-fp16's fp16
 * accumulation without its pooling and RMSNorm sums), tests/data/f2x2-tiles16.yaml
 * (fp16-winograd2's F(2x2,3x3) with fp16 tiles without its pooling sums) and
 * tests/data/acc16-f2x2.yaml (fp16 accumulation in F(2x2,3x3) convolutions) on the shared convnet
 * and transformers and on synthetic nets of the model families (v8 convnet, v11 nested
 * bottleneck, v15 metadata encoder, v16 spatial RMSNorm tip, v17 transformer with RoPE and FFN):
 * the raw heads and every tap on random rows (19x19 buffer, rows on a 13x13 board too, batch 5)
 * are the same bits as the CPU emulation's; on the shared nets also every post-processed output
 * of the rectangular-board positions in a 19x19 buffer at batch 1 and 5. A profile that does not
 * exist is refused at open with the CPU's error. Planted faults (backends/cuda.h: hc_cuda_faults,
 * set here after parsing the spec): a moved rounding point (noround: one layer's storage rounding
 * left out) must be caught, and so must acc16 chunks of 8 products (acc16_chunk8) wherever the
 * profile accumulates in fp16 (ane-fp16-acc16 on the convnet: nowhere, so there the bits must not
 * move) and unrounded Winograd tile products (tiles: every shared net has a 3x3 convolution). bisect-precision with the device
 * cuda finds and verifies the same profile as on the CPU (g170, 9x9, fp16 against the fp32
 * tier), and taps --precision --device cuda every layer's errors bit for bit
 * (gpu-emu-taps-precision). Positions per set: HC_EMU_LIMIT (default 24).
 * The emulated reductions (poolSum, normSum: refs/sums_core.h) through profile YAMLs on top of
 * fp16 and bf16 (sums_profiles[], written to a scratch directory): the same bits on every net,
 * the trunk tip's normSum included; sums pushed past 65504 (a weight tweak per net: a pooling
 * sum, a transformer pre-norm, a trunk tip) fail the eval on the GPU with the CPU's message
 * naming the layer; the planted moved rounding point (faults.sums) must be caught.
 * Skips without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "lib/cudalib.h"
#include "harness/model/model.h"
#include "harness/run/precbisect.h"
#include "harness/model/synth.h"
#include "harness/run/taps.h"
#include "harness/metrics/tiers.h"

/* built-in names, or a profile YAML (its name in check names: the file's base name) */
static const char *const profiles[] = {"fp16",          "bf16",
                                       "cuda-fp16",     "coreml-tiers",
                                       "fp16-acc16",    "tests/data/ane-fp16-acc16.yaml",
                                       "fp16-winograd", "tests/data/f2x2-tiles16.yaml",
                                       "fp16-winograd2", "ane-fp16",
                                       "tests/data/acc16-f2x2.yaml"};
enum { N_PROF = sizeof profiles / sizeof profiles[0], P_ACC16 = 4, P_ANE_ACC16 = 5, P_WINO = 6, P_F2 = 7,
       P_ACC_F2 = 10 };
static const char *const nets[] = {
    "nets/g170-b6c96-s175395328-d26788732.bin.gz",
    "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
    "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
};
enum { N_NETS = sizeof nets / sizeof nets[0] };
static const int batches[] = {1, 5};
enum { N_B = 2 };
/* Profiles of the emulated reductions (poolSum, normSum) alone on top of fp16 and bf16, until the
 * built-ins that use them (fp16-winograd2, ane-fp16) run on the GPU whole. fp16-sums keeps the
 * trunk tip's sums fp32 as ane-fp16 does; fp16-sums-tip rounds them too (a spatial tip's one sum
 * over the board); fp16-normsum rounds only the RMSNorm reductions. */
#define SUMS_FP16 "storage: fp16\nweights: fp16\npool: fp16\nattnScores: fp16\nsoftmax: fp16\n"
static const struct {
    const char *label, *yaml;
} sums_profiles[] = {
    {"fp16-sums", "name: fp16-sums\n" SUMS_FP16 "poolSum: fp16\nnormSum: fp16\nrules:\n  - kind: trunk_tip\n    normSum: fp32\n"},
    {"fp16-sums-tip", "name: fp16-sums-tip\n" SUMS_FP16 "poolSum: fp16\nnormSum: fp16\n"},
    {"bf16-sums", "name: bf16-sums\nstorage: bf16\nweights: bf16\npool: bf16\nattnScores: bf16\nsoftmax: bf16\n"
                  "poolSum: bf16\nnormSum: bf16\n"},
    {"fp16-normsum", "name: fp16-normsum\n" SUMS_FP16 "normSum: fp16\n"},
};
enum { N_SUMS = sizeof sums_profiles / sizeof sums_profiles[0] };
enum { S_FP16 = 0, S_TIP = 1, S_NORM = 3 };
static char sums_path[N_SUMS][600];

/* per shared net: per profile raw + taps + N_B position runs; the refusals; the planted faults
 * (a moved rounding point; acc16 chunks of 8 in fp16-acc16, ane-fp16-acc16 and acc16-f2x2;
 * unrounded tile products in fp16-winograd and f2x2-tiles16); per sums profile raw + taps,
 * fp16-sums' N_B position runs, its planted fault, its overflow */
enum { NET_CHECKS = N_PROF * (2 + N_B) + 1 + 1 + 3 + 2 + N_SUMS * 2 + N_B + 1 + 1 };
/* per synthetic net: per profile and per sums profile raw + taps; v16 and v17 the planted sums
 * fault, v16 a spatial tip's overflow */
enum { N_SYNTH = 5, SYNTH_CHECKS = N_SYNTH * (N_PROF + N_SUMS) * 2 + 2 + 1, BISECT_CHECKS = 2 };
static unsigned synth_checks(int v)
{
    return (N_PROF + N_SUMS) * 2 + (v == 16 || v == 17) + (v == 16);
}

/* A profile's name in check names: a YAML path's base name without .yaml. */
static const char *label(const char *prof, char buf[96])
{
    const char *b = strrchr(prof, '/');
    snprintf(buf, 96, "%s", b ? b + 1 : prof);
    char *dot = strstr(buf, ".yaml");
    if (dot)
        *dot = 0;
    return buf;
}

/* The rectangular-board positions in a 19x19 buffer, CPU emulation against the GPU's (label:
 * the profile's name in the checks' names). */
static void run_positions_as(const char *id, const hc_net *net, const char *label, const char *prof, int threads,
                             int limit)
{
    const char *p = hc_shared("positions/sizerect.jsonl.gz");
    char sub[160];
    snprintf(sub, sizeof sub, "%s.%s.pos", id, label);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    if (!p) {
        hc_skip_n(sub, N_B, "../shared/positions/sizerect.jsonl.gz absent");
        return;
    }
    if (hc_positions_load(p, &ps, &n, &err)) {
        hc_fail_n(sub, N_B, "%s", err.msg);
        return;
    }
    size_t use = n < (size_t)limit ? n : (size_t)limit;
    char cpu[700], gpu[720];
    snprintf(cpu, sizeof cpu, "emulate:%s", prof);
    snprintf(gpu, sizeof gpu, "cuda:emulate:%s", prof);
    const hc_eval_settings es = hc_eval_settings_default(19, 19);
    hc_nnoutput *ref = NULL;
    if (hc_eval_spec(cpu, net, ps, use, &es, 8, threads, &ref, NULL, &err)) {
        hc_fail_n(sub, N_B, "%s: %s: %s", net->name, cpu, err.msg);
    } else {
        for (int bi = 0; bi < N_B; bi++) {
            char nm[200];
            snprintf(nm, sizeof nm, "%s.b%d", sub, batches[bi]);
            hc_nnoutput *got = NULL;
            if (hc_eval_spec(gpu, net, ps, use, &es, batches[bi], 1, &got, NULL, &err)) {
                hc_check(nm, 0, "%s batch %d: %s: %s", net->name, batches[bi], gpu, err.msg);
            } else {
                long d = hc_outputs_first_diff(ref, got, use);
                hc_check(nm, d < 0, "%s %s batch %d: position %ld of %zu differs from %s (winrate %.9g vs %.9g)",
                         net->name, gpu, batches[bi], d, use, cpu, d >= 0 ? ref[d].white_win_prob : 0.0,
                         d >= 0 ? got[d].white_win_prob : 0.0);
            }
            hc_nnoutputs_free(got, got ? use : 0);
        }
    }
    hc_nnoutputs_free(ref, ref ? use : 0);
    hc_positions_free(ps, n);
}

static void run_positions(const char *id, const hc_net *net, const char *prof, int threads, int limit)
{
    char lb[96];
    run_positions_as(id, net, label(prof, lb), prof, threads, limit);
}

/* Random input rows (hc_random_rows): global inputs off the fp16 grid (0.1 steps), so that the
 * input rounding matters. */
static const hc_rows_spec rows_spec = {.seed = 2026, .gl_levels = 11, .gl_step = 0.1f, .meta_levels = 7, .meta_step = 0.3f};

/* Raw heads (.raw) and taps (.taps) of specs[0] (CPU) and specs[1] (GPU) on random rows;
 * with planted faults (plant: set on a third GPU instance, e.g. noround = conv1), check
 * `plant_check` that its raw heads differ from the CPU's (plant_differs) or, where the fault has
 * nothing to act on, that they do not. label: the profile's name in the checks' names. */
static void run_raw_as(const char *id, const hc_net *net, const char *label, const char *prof, int threads,
                       const hc_cuda_faults *plant, const char *plant_check, int plant_differs)
{
    enum { B = 5, NX = 19, NY = 19 };
    char nm[3][200], specs[3][900];
    snprintf(nm[0], sizeof nm[0], "%s.%s.raw", id, label);
    snprintf(nm[1], sizeof nm[1], "%s.%s.taps", id, label);
    snprintf(nm[2], sizeof nm[2], "%s.%s", id, plant_check ? plant_check : "plant");
    snprintf(specs[0], sizeof specs[0], "emulate:%s", prof);
    snprintf(specs[1], sizeof specs[1], "cuda:emulate:%s", prof);
    char ftext[300];
    snprintf(specs[2], sizeof specs[2], "cuda:emulate:%s with faults %s", prof,
             plant ? hc_test_cuda_faults_text(plant, ftext, sizeof ftext) : "none");
    const char *spec_of[2] = {specs[0], specs[1]};
    char who[300];
    snprintf(who, sizeof who, "%s %s", net->name, label);
    hc_rows_cmp c;
    hc_compare_rows(net, &rows_spec, B, NX, NY, spec_of, plant, threads, who, &c);
    hc_check(nm[0], c.same[1], "%s: raw heads of %s differ from %s's%s", net->name, specs[1], specs[0],
             c.ok[0] && c.ok[1] ? "" : " (an eval failed)");
    hc_check(nm[1], c.ok[0] && c.ok[1] && c.n_bad == 0 && c.n_taps > 0, "%s: taps: %d of %d differ, the first %s", who,
             c.n_bad, c.n_taps, c.first);
    if (plant)
        hc_check(nm[2], c.ok[0] && c.ok[2] && c.same[2] != plant_differs,
                 plant_differs ? "%s: the planted fault (%s) was not caught%s"
                               : "%s: the planted fault (%s) changed outputs it has nothing to act on%s",
                 net->name, specs[2], c.ok[2] ? "" : " (its eval failed)");
}

static void run_raw(const char *id, const hc_net *net, const char *prof, int threads, const hc_cuda_faults *plant,
                    const char *plant_check, int plant_differs)
{
    char lb[96];
    run_raw_as(id, net, label(prof, lb), prof, threads, plant, plant_check, plant_differs);
}

/* Whether the trunk holds an attention block (where ane-fp16's rules accumulate in fp16). */
static int has_attention(const hc_net *net)
{
    for (int i = 0; i < net->trunk.num_blocks; i++)
        if (net->trunk.blocks[i].kind == HC_BLOCK_ATTENTION)
            return 1;
    return 0;
}

/* One eval of spec on the random rows: 0, or -1 with err (the raw heads are kept either way).
 * faults (NULL: none): planted in a "cuda:" spec's instance. */
static int eval_rows(const char *spec, const hc_cuda_faults *faults, const hc_net *net, int threads, hc_raw_heads **out,
                     hc_err *err)
{
    enum { B = 5, NX = 19, NY = 19 };
    float *sp, *gl, *meta;
    hc_random_rows(net, B, NX, NY, &rows_spec, &sp, &gl, &meta);
    hc_backend b = {0};
    int rc = -1;
    *out = hc_raw_heads_new(B, NX, NY, net->num_policy_c, net->num_score_value_c, err);
    if (*out && sp && gl &&
        (faults ? hc_test_cuda_open(&b, spec + 5, faults, net, NX, NY, B, err)
                : hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = NX, .ny = NY, .max_batch = B, .threads = threads}, err)) == 0) {
        rc = hc_backend_eval(&b, B, sp, gl, meta, *out, err);
        hc_backend_close(&b);
    } else if (*out && (!sp || !gl)) {
        hc_err_set(err, HC_ENOMEM, "rows");
    }
    free(sp);
    free(gl);
    free(meta);
    return rc;
}

/* The planted moved rounding point of the emulated sums (faults.sums: sums rounded after every
 * second add only) changes the GPU's raw heads, where the CPU's and the GPU's are otherwise the
 * same bits (run_raw_as). */
static void run_plant_sums(const char *id, const hc_net *net, int si, int threads)
{
    char nm[160], cpu[700], gpu[720];
    snprintf(nm, sizeof nm, "%s.%s.plant-sums", id, sums_profiles[si].label);
    snprintf(cpu, sizeof cpu, "emulate:%s", sums_path[si]);
    snprintf(gpu, sizeof gpu, "cuda:emulate:%s", sums_path[si]);
    hc_cuda_faults plant = {.sums = 1};
    hc_raw_heads *h[2] = {NULL, NULL};
    hc_err e[2] = {{0}, {0}};
    int ok0 = eval_rows(cpu, NULL, net, threads, &h[0], &e[0]) == 0, ok1 = eval_rows(gpu, &plant, net, 1, &h[1], &e[1]) == 0;
    hc_check(nm, ok0 && ok1 && !hc_raw_heads_equal(h[0], h[1], 5), "%s: the planted sums fault (%s, faults.sums) was not caught%s%s %s",
             net->name, gpu, ok0 && ok1 ? "" : ": an eval failed: ", e[0].msg, e[1].msg);
    hc_raw_heads_free(h[0]);
    hc_raw_heads_free(h[1]);
}

/* A weight tweak pushing a sum past fp16's range: p[i] = p[i] * mul + add, undone after. */
typedef struct tweak {
    float *p;
    size_t n;
    float mul, add;
} tweak;

/* Sums past 65504: the CPU eval fails naming the layer and the reduction (want), and the GPU's
 * fails with the same message and the same raw heads (the rows hit NaN, the others equal). */
static void run_overflow(const char *nm, hc_net *net, int si, const tweak *tw, int n_tw, const char *want,
                         int threads)
{
    float *saved[4] = {NULL, NULL, NULL, NULL};
    int ok = n_tw <= 4;
    for (int t = 0; ok && t < n_tw; t++) {
        saved[t] = malloc(tw[t].n * sizeof(float));
        ok = saved[t] != NULL;
        if (ok) {
            memcpy(saved[t], tw[t].p, tw[t].n * sizeof(float));
            for (size_t i = 0; i < tw[t].n; i++)
                tw[t].p[i] = tw[t].p[i] * tw[t].mul + tw[t].add;
        }
    }
    char cpu[700], gpu[720];
    snprintf(cpu, sizeof cpu, "emulate:%s", sums_path[si]);
    snprintf(gpu, sizeof gpu, "cuda:emulate:%s", sums_path[si]);
    hc_raw_heads *h[2] = {NULL, NULL};
    hc_err e[2] = {{0}, {0}};
    int rc0 = ok ? eval_rows(cpu, NULL, net, threads, &h[0], &e[0]) : 0,
        rc1 = ok ? eval_rows(gpu, NULL, net, 1, &h[1], &e[1]) : 0;
    for (int t = 0; t < n_tw && t < 4; t++)
        if (saved[t]) {
            memcpy(tw[t].p, saved[t], tw[t].n * sizeof(float));
            free(saved[t]);
        }
    printf("INFO %s %s overflow: cpu: %s | gpu: %s\n", net->name, sums_profiles[si].label, e[0].msg, e[1].msg);
    hc_check(nm,
             ok && rc0 != 0 && strstr(e[0].msg, want) && strstr(e[0].msg, "overflowed in fp16") && rc1 != 0 &&
                 strcmp(e[0].msg, e[1].msg) == 0 && h[0] && h[1] && hc_raw_heads_equal(h[0], h[1], 5),
             "%s %s: the CPU must fail naming %s and the GPU with the same message and raw heads: cpu \"%s\", gpu "
             "\"%s\"%s",
             net->name, sums_profiles[si].label, want, e[0].msg, e[1].msg,
             h[0] && h[1] && !hc_raw_heads_equal(h[0], h[1], 5) ? " (raw heads differ)" : "");
    hc_raw_heads_free(h[0]);
    hc_raw_heads_free(h[1]);
}

/* The last trunk block's output weights (what the trunk tip reads next), or NULL. */
static const hc_block *last_block(const hc_net *net)
{
    return net->trunk.num_blocks > 0 ? &net->trunk.blocks[net->trunk.num_blocks - 1] : NULL;
}

static int block_out(const hc_block *bl, float **p, size_t *n, const char **name)
{
    const hc_conv *cv = NULL;
    const hc_matmul *m = NULL;
    switch (bl ? (int)bl->kind : -1) {
    case HC_BLOCK_ORDINARY: cv = &bl->ordinary.final_conv; break;
    case HC_BLOCK_GPOOL: cv = &bl->gpool.final_conv; break;
    case HC_BLOCK_NESTED_BOTTLENECK: cv = &bl->nbt.post_conv; break;
    case HC_BLOCK_ATTENTION: m = &bl->attn.out_proj; break;
    case HC_BLOCK_FFN: m = &bl->ffn.linear2; break;
    default: return -1;
    }
    *p = cv ? cv->w : m->w;
    *n = cv ? (size_t)cv->out_c * cv->in_c * cv->ky * cv->kx : (size_t)m->in_c * m->out_c;
    *name = cv ? cv->name : m->name;
    return 0;
}

/* The first transformer pre-norm of the trunk's top-level blocks (NULL: none). */
static const char *first_prenorm(const hc_net *net)
{
    for (int i = 0; i < net->trunk.num_blocks; i++) {
        const hc_block *bl = &net->trunk.blocks[i];
        if (bl->kind == HC_BLOCK_ATTENTION)
            return bl->attn.pre_ln.name;
        if (bl->kind == HC_BLOCK_FFN)
            return bl->ffn.pre_ln.name;
    }
    return NULL;
}

/* The overflow case of a net (kind: 0 a pooling sum, 1 the first pre-norm, 2 the trunk tip):
 * the tweak pushing it past 65504 and the layer the message must name. */
static void run_overflow_kind(const char *nm, hc_net *net, int kind, int threads)
{
    char want[400];
    tweak tw[2];
    int n_tw = 0, si = S_FP16;
    const char *layer = NULL;
    if (kind == 0) {
        /* the value head's v1 = 200 on the board: 361 points sum to 72200 (inf), 169 to 33800 */
        hc_bn *bn = &net->value.v1_bn;
        tw[0] = (tweak){bn->merged_scale, (size_t)bn->c, 0.0f, 0.0f};
        tw[1] = (tweak){bn->merged_bias, (size_t)bn->c, 0.0f, 200.0f};
        n_tw = 2;
        layer = net->value.v2_mul.name;
        snprintf(want, sizeof want, "in layer %s: its pooling sum", layer ? layer : "?");
    } else if (kind == 1) {
        /* the trunk scaled up from the input conv: the first pre-norm's sum of squares */
        const hc_conv *cv = &net->trunk.initial_conv;
        tw[0] = (tweak){cv->w, (size_t)cv->out_c * cv->in_c * cv->ky * cv->kx, 64.0f, 0.0f};
        n_tw = 1;
        layer = first_prenorm(net);
        snprintf(want, sizeof want, "in layer %s: its RMSNorm sum of squares", layer ? layer : "?");
    } else {
        /* the last block's output scaled up: only the trunk tip's sum sees it */
        const char *wn = NULL;
        tw[0].mul = 64.0f;
        tw[0].add = 0.0f;
        n_tw = block_out(last_block(net), &tw[0].p, &tw[0].n, &wn) == 0;
        layer = net->trunk.norm_kind == HC_TRUNK_NORM_RMSNORM ? net->trunk.tip_rmsnorm.name : NULL;
        si = S_TIP;
        snprintf(want, sizeof want, "in layer %s: its RMSNorm sum of squares", layer ? layer : "?");
    }
    if (!layer || !n_tw) {
        hc_fail_n(nm, 1, "%s: no layer for overflow case %d", net->name, kind);
        return;
    }
    run_overflow(nm, net, si, tw, n_tw, want, threads);
}

/* The emulated reductions on a net: every sums profile's raw heads and taps. */
static void run_sums(const char *id, const hc_net *net, int threads)
{
    for (int si = 0; si < N_SUMS; si++)
        run_raw_as(id, net, sums_profiles[si].label, sums_path[si], threads, NULL, NULL, 0);
}

/* The sums profiles written to a scratch directory (removed at exit): 0, or -1. */
static char sums_dir[512];
static int write_sums_profiles(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(sums_dir, sizeof sums_dir, "%s/halfcheck-gpu-sums-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(sums_dir)) {
        sums_dir[0] = 0;
        return -1;
    }
    for (int si = 0; si < N_SUMS; si++) {
        snprintf(sums_path[si], sizeof sums_path[si], "%s/%s.yaml", sums_dir, sums_profiles[si].label);
        FILE *f = fopen(sums_path[si], "w");
        if (!f || fputs(sums_profiles[si].yaml, f) < 0 || fclose(f) != 0)
            return -1;
    }
    return 0;
}

static void remove_sums_profiles(void)
{
    for (int si = 0; si < N_SUMS && sums_dir[0]; si++)
        if (sums_path[si][0])
            unlink(sums_path[si]);
    if (sums_dir[0])
        rmdir(sums_dir);
}

/* The profiles the GPU does not follow bit for bit are refused, naming what it would miss. */
static void run_refused(const char *id, const hc_net *net)
{
    /* every profile is followed: what is refused is what the CPU refuses, with its message */
    char nm[160];
    snprintf(nm, sizeof nm, "%s.refused", id);
    hc_backend b[2] = {{0}, {0}};
    hc_err e[2] = {{0}, {0}};
    int rc0 = hc_backend_open_with(&b[0], &(hc_backend_open_opts){.spec = "emulate:fp61", .net = net, .nx = 19,
                                                                  .ny = 19, .max_batch = 2, .threads = 1}, &e[0]);
    int rc1 = hc_backend_open_with(&b[1], &(hc_backend_open_opts){.spec = "cuda:emulate:fp61", .net = net, .nx = 19,
                                                                  .ny = 19, .max_batch = 2, .threads = 1}, &e[1]);
    hc_backend_close(&b[0]);
    hc_backend_close(&b[1]);
    hc_check(nm, rc0 != 0 && rc1 != 0 && strstr(e[1].msg, "fp61") && strstr(e[0].msg, "did you mean") &&
                     strstr(e[1].msg, "did you mean"),
             "%s: an unknown profile: cpu \"%s\", gpu \"%s\"", net->name, e[0].msg, e[1].msg);
}

/* bisect-precision on the CPU and on the GPU: the same evaluations, the same result profile. */
static void run_bisect(const hc_net *net, int threads)
{
    const char *p = hc_shared("positions/size9.jsonl.gz");
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    hc_tier tier;
    if (!p || hc_positions_load(p, &ps, &n, &err) || hc_tier_builtin("fp32", &tier, &err)) {
        hc_skip_n("gpu-emu-bisect", BISECT_CHECKS, "no 9x9 positions or no fp32 tier: %s", err.msg);
        return;
    }
    hc_pbisect_split sp;
    size_t use = n < 16 ? n : 16;
    if (hc_pbisect_split_positions(ps, use, &sp, &err)) {
        hc_fail_n("gpu-emu-bisect", BISECT_CHECKS, "split: %s", err.msg);
        hc_positions_free(ps, n);
        return;
    }
    hc_eval_settings s = hc_eval_settings_default(9, 9);
    hc_pbisect *r[2] = {NULL, NULL};
    char msg[2][400] = {"", ""};
    for (int k = 0; k < 2; k++) {
        hc_pbisect_opts o = {.search = sp.search, .n_search = sp.n_search, .verify = sp.verify,
                             .n_verify = sp.n_verify, .settings = &s, .profile = "fp16", .tier = &tier,
                             .batch = 8, .threads = k == 0 ? threads : 1, .cuda = k};
        if (hc_pbisect_run(net, &o, &r[k], &err))
            snprintf(msg[k], sizeof msg[k], "%s", err.msg);
    }
    hc_check("gpu-emu-bisect",
             r[0] && r[1] && r[0]->n_evals == r[1]->n_evals && r[0]->yaml && r[1]->yaml &&
                 strcmp(r[0]->yaml, r[1]->yaml) == 0,
             "bisect-precision cpu vs cuda: %s / %s; %d vs %d evaluations; result profiles %s", msg[0], msg[1],
             r[0] ? r[0]->n_evals : -1, r[1] ? r[1]->n_evals : -1,
             r[0] && r[1] && r[0]->yaml && r[1]->yaml && !strcmp(r[0]->yaml, r[1]->yaml) ? "equal" : "differ");
    if (r[0])
        printf("INFO bisect-precision on g170 9x9 (fp16, tier fp32): %d evaluations each\n", r[0]->n_evals);
    hc_pbisect_free(r[0]);
    hc_pbisect_free(r[1]);
    hc_pbisect_split_free(&sp);
    /* taps --precision --device cuda: every layer's errors the CPU's, to the bit */
    hc_prec_row *rows[2] = {NULL, NULL}, full[2];
    int nr[2] = {0, 0}, ok[2];
    for (int k = 0; k < 2; k++) {
        hc_prec_opts po = {.settings = &s, .profile = "fp16", .batch = 8, .threads = k == 0 ? threads : 2, .cuda = k};
        ok[k] = hc_taps_precision(net, ps, use, &po, &rows[k], &nr[k], &full[k], &err) == 0;
        if (!ok[k])
            snprintf(msg[k], sizeof msg[k], "%s", err.msg);
    }
    hc_check("gpu-emu-taps-precision",
             ok[0] && ok[1] && nr[0] == nr[1] && nr[0] > 0 &&
                 memcmp(rows[0], rows[1], (size_t)nr[0] * sizeof *rows[0]) == 0 &&
                 memcmp(&full[0], &full[1], sizeof full[0]) == 0,
             "taps --precision fp16 cpu vs cuda on g170 9x9: %s / %s; %d vs %d rows %s", ok[0] ? "ok" : msg[0],
             ok[1] ? "ok" : msg[1], nr[0], nr[1], ok[0] && ok[1] ? "differ" : "");
    free(rows[0]);
    free(rows[1]);
    hc_positions_free(ps, n);
}

int main(void)
{
    int threads = hc_env_int("HC_GPU_THREADS", 4, 1, 256), limit = hc_env_int("HC_EMU_LIMIT", 24, 1, 1 << 30);
    int any_device = 0, bisect_done = 0;
    hc_plan(N_NETS * NET_CHECKS + SYNTH_CHECKS + BISECT_CHECKS);
    if (write_sums_profiles()) {
        printf("INFO cannot write the sums profiles under %s\n", sums_dir[0] ? sums_dir : "TMPDIR");
        remove_sums_profiles();
        hc_fail_rest("gpu-emu", "no scratch directory for the sums profiles");
        return hc_test_exit();
    }
    for (int ni = 0; ni < N_NETS; ni++) {
        char id[64];
        snprintf(id, sizeof id, "gpu-emu-%d", ni + 1);
        char why[1200];
        hc_net *net;
        if (hc_unrun_n(id, NET_CHECKS, hc_gpu_shared_net(nets[ni], "cuda:emulate:fp16", 9, 9, &net, why, sizeof why), why))
            continue;
        any_device = 1;
        hc_cuda_faults noround = {0}, acc16 = {.acc16_chunk8 = 1}, tiles = {.tiles = 1};
        snprintf(noround.noround, sizeof noround.noround, "%s", net->trunk.initial_conv.name);
        for (int pi = 0; pi < N_PROF; pi++) {
            /* fp16: a moved rounding point; the acc16 profiles: chunks of 8 (ane-fp16-acc16
             * accumulates in fp16 only in transformer blocks); the Winograd ones: unrounded tile
             * products */
            if (pi == 0)
                run_raw(id, net, profiles[pi], threads, &noround, "plant", 1);
            else if (pi == P_ACC16 || pi == P_ANE_ACC16 || pi == P_ACC_F2)
                run_raw(id, net, profiles[pi], threads, &acc16,
                        pi == P_ACC16 ? "plant-acc16" : pi == P_ACC_F2 ? "plant-acc16-f2" : "plant-acc16-ane",
                        pi != P_ANE_ACC16 || has_attention(net));
            else if (pi == P_WINO || pi == P_F2) /* the Winograd tile products left unrounded */
                run_raw(id, net, profiles[pi], threads, &tiles, pi == P_WINO ? "plant-tiles" : "plant-tiles-f2",
                        1);
            else
                run_raw(id, net, profiles[pi], threads, NULL, NULL, 0);
            run_positions(id, net, profiles[pi], threads, limit);
        }
        run_refused(id, net);
        /* the emulated reductions: g170 pools (gpool blocks, both heads); b7c96h6kv3 has
         * pre-norms and a batch-norm tip; b7c96h3tfrs pre-norms and an RMSNorm tip */
        run_sums(id, net, threads);
        run_positions_as(id, net, sums_profiles[S_FP16].label, sums_path[S_FP16], threads, limit);
        run_plant_sums(id, net, ni == 0 ? S_FP16 : S_NORM, threads);
        char onm[96];
        snprintf(onm, sizeof onm, "%s.overflow", id);
        run_overflow_kind(onm, net, ni, threads);
        if (ni == 0) {
            run_bisect(net, threads);
            bisect_done = 1;
        }
        hc_net_free(net);
    }
    /* synthetic nets: one per model family */
    static const int versions[N_SYNTH] = {8, 11, 15, 16, 17};
    for (int i = 0; i < N_SYNTH; i++) {
        char id[64];
        snprintf(id, sizeof id, "gpu-emu-v%d", versions[i]);
        if (!any_device) {
            hc_skip_n(id, synth_checks(versions[i]), "no CUDA device (the shared nets said why)");
            continue;
        }
        hc_err err = {0};
        hc_synth_spec sp;
        hc_synth_spec_default(&sp);
        int v = versions[i];
        sp.version = v;
        sp.act = v == 17 ? HC_ACT_SILU : -1;
        sp.vary_bn = v < 11;
        snprintf(sp.blocks, sizeof sp.blocks, "%s",
                 v >= 17 ? "res,gpool,nbt(res,gpool),attn,ffn" : v >= 11 ? "res,gpool,nbt(res,gpool)" : "res,gpool");
        sp.meta = v == 15;
        sp.tip = v >= 16 ? HC_TRUNK_NORM_RMSNORM : HC_TRUNK_NORM_BN;
        sp.tip_rms_spatial = v == 16;
        hc_net *net = hc_synth_check(&sp, &err) == 0 ? hc_synth_net(&sp, &err) : NULL;
        if (!net) {
            hc_fail_n(id, synth_checks(v), "synth: %s", err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        for (int pi = 0; pi < N_PROF; pi++)
            run_raw(id, net, profiles[pi], threads, NULL, NULL, 0);
        /* v16: a spatial RMSNorm tip (one sum over the board); v17: pre-norms and a per-position tip */
        run_sums(id, net, threads);
        if (v == 16 || v == 17)
            run_plant_sums(id, net, S_NORM, threads);
        if (v == 16) {
            char onm[96];
            snprintf(onm, sizeof onm, "%s.overflow", id);
            run_overflow_kind(onm, net, 2, threads);
        }
        hc_net_free(net);
    }
    if (!bisect_done)
        hc_skip_n("gpu-emu-bisect", BISECT_CHECKS, "g170 absent or no CUDA device");
    remove_sums_profiles();
    return hc_test_exit();
}
