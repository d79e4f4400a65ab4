/* GPU tests (make test-gpu, never make test): cuda:emulate:PROFILE gives emulate:PROFILE's bits.
 * For every built-in profile the GPU follows (docs/EMULATION.md: fp16, bf16, cuda-fp16,
 * coreml-tiers, fp16-winograd) and a profile YAML written here, fp16-winograd2 without its
 * poolSum (F(2x2,3x3) with fp16 tiles), on the shared convnet and transformers and on synthetic
 * nets of the model families (v8 convnet, v11 nested bottleneck, v15 metadata encoder, v16
 * spatial RMSNorm tip, v17 transformer with RoPE and FFN): the raw heads and every tap on random
 * rows (19x19 buffer, rows on a 13x13 board too, batch 5) are the same bits as the CPU
 * emulation's; on the shared nets also every post-processed output of the rectangular-board
 * positions in a 19x19 buffer at batch 1 and 5. The profiles the GPU does not follow are refused
 * at open with an error naming the feature (fp16 accumulation with F(2x2,3x3) too). A moved
 * rounding point (",noround=LAYER": one layer's storage rounding left out; ",plant-tiles": the
 * Winograd tile products left unrounded in the GPU's kernel) must be caught. bisect-precision
 * with the device cuda finds and verifies the same profile as on the CPU (g170, 9x9, fp16
 * against the fp32 tier). Positions per set: HC_EMU_LIMIT (default 24).
 * Skips without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "evaluate.h"
#include "hc_test.h"
#include "model.h"
#include "precbisect.h"
#include "synth.h"
#include "tiers.h"

/* The profiles checked: a built-in's name, or a file written in main's temporary directory
 * (yaml: its text; the spec is its path). plant: the planted fault checked on the shared nets
 * (its raw heads must differ), "" none. */
typedef struct prof {
    const char *name, *yaml, *plant;
    char spec[1024];
} prof;
static prof profiles[] = {
    {"fp16", NULL, "noround", ""},
    {"bf16", NULL, "", ""},
    {"cuda-fp16", NULL, "", ""},
    {"coreml-tiers", NULL, "", ""},
    {"fp16-winograd", NULL, ",plant-tiles", ""},
    /* fp16-winograd2 less its poolSum (the pooling sums are another feature's kernels) */
    {"f2x2-tiles16",
     "name: f2x2-tiles16\n"
     "description: fp16-winograd2 without poolSum (tests/gpu_test_emulate.c)\n"
     "storage: fp16\nweights: fp16\naccum: fp32\nwinogradTiles: fp16\nwinograd: f2x2\n"
     "pool: fp16\nattnScores: fp16\nsoftmax: fp16\n",
     ",plant-tiles", ""},
};
enum { N_PROF = sizeof profiles / sizeof profiles[0], N_PLANTS = 3 };
static prof refused[] = {
    {"fp16-acc16", NULL, "", ""},
    {"fp16-winograd2", NULL, "", ""}, /* its poolSum */
    {"ane-fp16", NULL, "", ""},
    /* fp16 accumulation inside F(2x2,3x3) (no built-in asks it) */
    {"acc16-f2x2",
     "name: acc16-f2x2\ndescription: fp16 accumulation with F(2x2,3x3) (tests/gpu_test_emulate.c)\n"
     "storage: fp16\nweights: fp16\nwinograd: f2x2\nrules:\n  - kind: conv\n    accum: fp16\n",
     "", ""},
};
enum { N_REFUSED = sizeof refused / sizeof refused[0] };
static const char *const nets[] = {
    "nets/g170-b6c96-s175395328-d26788732.bin.gz",
    "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
    "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
};
enum { N_NETS = sizeof nets / sizeof nets[0] };
static const int batches[] = {1, 5};
enum { N_B = 2 };
/* per shared net: per profile raw + taps + N_B position runs; the refusals; the planted faults */
enum { NET_CHECKS = N_PROF * (2 + N_B) + 1 + N_PLANTS };
enum { N_SYNTH = 5, SYNTH_CHECKS = N_SYNTH * N_PROF * 2, BISECT_CHECKS = 1 };

static int env_int(const char *name, int dflt, int lo, int hi)
{
    const char *t = getenv(name);
    int n = t && *t ? atoi(t) : dflt;
    return n >= lo && n <= hi ? n : dflt;
}

static int same_bits(const void *a, const void *b, size_t bytes)
{
    return (a == NULL && b == NULL) || (a && b && memcmp(a, b, bytes) == 0);
}

static int run_spec(const char *spec, const hc_net *net, const hc_position *ps, size_t n, int batch, int threads,
                    hc_nnoutput **outs, hc_err *err)
{
    hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = hc_eval_settings_default(19, 19),
                            .batch = batch, .threads = threads};
    *outs = calloc(n, sizeof **outs);
    if (!*outs)
        return hc_err_set(err, HC_ENOMEM, "outputs");
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = *outs};
    int rc = ev ? hc_evaluator_run(ev, &req, err) : -1;
    hc_evaluator_close(ev);
    return rc;
}

static long first_diff(const hc_nnoutput *a, const hc_nnoutput *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const hc_nnoutput *x = &a[i], *y = &b[i];
        size_t hw = (size_t)x->nn_x_len * x->nn_y_len;
        if (x->nn_x_len != y->nn_x_len || x->nn_y_len != y->nn_y_len ||
            !same_bits(&x->white_win_prob, &y->white_win_prob, 10 * sizeof(float)) ||
            !same_bits(x->policy_probs, y->policy_probs, (hw + 1) * sizeof(float)) ||
            !same_bits(x->white_owner_map, y->white_owner_map, hw * sizeof(float)))
            return (long)i;
    }
    return -1;
}

/* The rectangular-board positions in a 19x19 buffer, CPU emulation against the GPU's. */
static void run_positions(const char *id, const hc_net *net, const prof *pr, int threads, int limit)
{
    const char *prof = pr->name;
    const char *p = hc_shared("positions/sizerect.jsonl.gz");
    char sub[160];
    snprintf(sub, sizeof sub, "%s.%s.pos", id, prof);
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
    char cpu[1100], gpu[1100];
    snprintf(cpu, sizeof cpu, "emulate:%s", pr->spec);
    snprintf(gpu, sizeof gpu, "cuda:emulate:%s", pr->spec);
    hc_nnoutput *ref = NULL;
    if (run_spec(cpu, net, ps, use, 8, threads, &ref, &err)) {
        hc_fail_n(sub, N_B, "%s: %s: %s", net->name, cpu, err.msg);
    } else {
        for (int bi = 0; bi < N_B; bi++) {
            char nm[200];
            snprintf(nm, sizeof nm, "%s.b%d", sub, batches[bi]);
            hc_nnoutput *got = NULL;
            if (run_spec(gpu, net, ps, use, batches[bi], 1, &got, &err)) {
                hc_check(nm, 0, "%s batch %d: %s: %s", net->name, batches[bi], gpu, err.msg);
            } else {
                long d = first_diff(ref, got, use);
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

static void random_rows(const hc_net *net, int B, int nx, int ny, float **sp, float **gl, float **meta)
{
    size_t hw = (size_t)nx * ny, cin = (size_t)net->num_input_c, cg = (size_t)net->num_input_global_c;
    size_t cm = (size_t)net->num_input_meta_c;
    *sp = calloc((size_t)B * cin * hw, sizeof(float));
    *gl = calloc((size_t)B * (cg + 1), sizeof(float));
    *meta = cm ? calloc((size_t)B * cm, sizeof(float)) : NULL;
    unsigned seed = 2026;
    for (int b = 0; b < B && *sp; b++)
        for (size_t c = 0; c < cin; c++)
            for (size_t p = 0; p < hw; p++) {
                int on = b % 2 == 0 || ((int)(p % nx) < 13 && (int)(p / nx) < 13);
                seed = seed * 1103515245u + 12345u;
                float v = c == 0 ? 1.0f : (float)((seed >> 16) & 1);
                (*sp)[((size_t)b * cin + c) * hw + p] = on ? v : 0.0f;
            }
    /* global inputs off the fp16 grid (0.1 steps): the input rounding matters */
    for (size_t i = 0; *gl && i < (size_t)B * cg; i++) {
        seed = seed * 1103515245u + 12345u;
        (*gl)[i] = (float)((seed >> 16) % 11) * 0.1f - 0.5f;
    }
    for (size_t i = 0; *meta && i < (size_t)B * cm; i++) {
        seed = seed * 1103515245u + 12345u;
        (*meta)[i] = (float)((seed >> 16) % 7) * 0.3f;
    }
}

static int raw_equal(const hc_raw_heads *a, const hc_raw_heads *b, int B)
{
    size_t hw = (size_t)a->nx * a->ny, pc = (size_t)a->policy_channels, sc = (size_t)a->score_channels;
    return same_bits(a->policy, b->policy, B * pc * hw * sizeof(float)) &&
           same_bits(a->policy_pass, b->policy_pass, B * pc * sizeof(float)) &&
           same_bits(a->value, b->value, B * 3 * sizeof(float)) &&
           same_bits(a->score, b->score, B * sc * sizeof(float)) &&
           same_bits(a->ownership, b->ownership, B * hw * sizeof(float));
}

/* Raw heads (.raw) and taps (.taps) of specs[0] (CPU) and specs[1] (GPU) on random rows;
 * with specs[2] (a planted fault: plant, e.g. ",noround=conv1"), check `.plant` that its raw
 * heads differ. */
static void run_raw(const char *id, const hc_net *net, const prof *pr, int threads, const char *plant)
{
    enum { B = 5, NX = 19, NY = 19 };
    const char *prof = pr->name, *plant_layer = plant;
    char nm[3][200], specs[3][1300];
    snprintf(nm[0], sizeof nm[0], "%s.%s.raw", id, prof);
    snprintf(nm[1], sizeof nm[1], "%s.%s.taps", id, prof);
    snprintf(nm[2], sizeof nm[2], "%s.%s.plant", id, prof);
    snprintf(specs[0], sizeof specs[0], "emulate:%s", pr->spec);
    snprintf(specs[1], sizeof specs[1], "cuda:emulate:%s", pr->spec);
    snprintf(specs[2], sizeof specs[2], "cuda:emulate:%s%s", pr->spec, plant ? plant : "");
    hc_err err = {0};
    float *sp, *gl, *meta;
    random_rows(net, B, NX, NY, &sp, &gl, &meta);
    hc_raw_heads *h[3] = {NULL, NULL, NULL};
    hc_tapset *ts[2] = {hc_tapset_new(B, &err), hc_tapset_new(B, &err)};
    int ok[3] = {0, 0, 0};
    for (int k = 0; k < (plant_layer ? 3 : 2); k++) {
        hc_backend b = {0};
        h[k] = hc_raw_heads_new(B, NX, NY, net->num_policy_c, net->num_score_value_c, &err);
        if (!h[k] || !sp || !gl || !ts[0] || !ts[1] ||
            hc_backend_open(&b, specs[k], net, NX, NY, B, k == 0 ? threads : 1, &err)) {
            printf("INFO %s %s: %s\n", net->name, specs[k], err.msg);
            continue;
        }
        h[k]->taps = k < 2 ? ts[k] : NULL;
        ok[k] = b.vt->eval(b.inst, B, sp, gl, meta, h[k], &err) == 0;
        if (!ok[k])
            printf("INFO %s %s: %s\n", net->name, specs[k], err.msg);
        h[k]->taps = NULL;
        hc_backend_close(&b);
    }
    hc_check(nm[0], ok[0] && ok[1] && raw_equal(h[0], h[1], B), "%s: raw heads of %s differ from %s's%s", net->name,
             specs[1], specs[0], ok[0] && ok[1] ? "" : " (an eval failed)");
    int taps_ok = ok[0] && ok[1], n_taps = ok[0] ? hc_tapset_count(ts[0]) : 0, n_bad = 0;
    char first[160] = "";
    for (int i = 0; ok[0] && ok[1] && i < n_taps; i++) {
        const hc_tapset_entry *a = hc_tapset_at(ts[0], i), *g = hc_tapset_find(ts[1], a->name);
        size_t n = (size_t)a->rows * a->channels * a->hw, nd = 0, at = 0;
        if (g && g->rows == a->rows && g->channels == a->channels && g->hw == a->hw && g->fmt == a->fmt) {
            for (size_t j = 0; j < n; j++)
                if (memcmp(&a->data[j], &g->data[j], sizeof(float)) != 0 && nd++ == 0)
                    at = j;
            if (nd == 0)
                continue;
            printf("INFO %s %s: tap %s: %zu of %zu floats differ, first at %zu: %.9g vs %.9g\n", net->name, prof,
                   a->name, nd, n, at, a->data[at], g->data[at]);
        } else {
            printf("INFO %s %s: tap %s: %s\n", net->name, prof, a->name,
                   g ? "shape or format differs" : "missing");
        }
        if (n_bad++ == 0)
            snprintf(first, sizeof first, "%s", a->name);
        taps_ok = 0;
    }
    if (taps_ok)
        printf("INFO %s %s: %d taps equal\n", net->name, prof, n_taps);
    hc_check(nm[1], taps_ok && n_taps > 0, "%s %s: taps: %d of %d differ, the first %s", net->name, prof, n_bad,
             n_taps, first);
    if (plant_layer)
        hc_check(nm[2], ok[0] && ok[2] && !raw_equal(h[0], h[2], B),
                 "%s: the moved rounding point (%s) was not caught%s", net->name, specs[2],
                 ok[2] ? "" : " (its eval failed)");
    for (int k = 0; k < 3; k++)
        hc_raw_heads_free(h[k]);
    hc_tapset_free(ts[0]);
    hc_tapset_free(ts[1]);
    free(sp);
    free(gl);
    free(meta);
}

/* The profiles the GPU does not follow bit for bit are refused, naming what it would miss. */
static void run_refused(const char *id, const hc_net *net)
{
    char nm[160], bad[1400] = "";
    snprintf(nm, sizeof nm, "%s.refused", id);
    int all = 1;
    for (int i = 0; i < N_REFUSED; i++) {
        char spec[1100];
        snprintf(spec, sizeof spec, "cuda:emulate:%s", refused[i].spec);
        hc_backend b = {0};
        hc_err err = {0};
        if (hc_backend_open(&b, spec, net, 19, 19, 2, 1, &err) == 0) {
            hc_backend_close(&b);
            all = 0;
            snprintf(bad, sizeof bad, "%s opened", spec);
        } else if (!strstr(err.msg, "does not follow bit")) {
            all = 0;
            snprintf(bad, sizeof bad, "%s: unexpected error: %s", spec, err.msg);
        } else {
            printf("INFO %s: %s\n", spec, err.msg);
        }
    }
    hc_check(nm, all, "%s: %s", net->name, bad);
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
        hc_skip("gpu-emu-bisect", "no 9x9 positions or no fp32 tier: %s", err.msg);
        return;
    }
    hc_pbisect_split sp;
    size_t use = n < 16 ? n : 16;
    if (hc_pbisect_split_positions(ps, use, &sp, &err)) {
        hc_fail_n("gpu-emu-bisect", 1, "split: %s", err.msg);
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
    hc_positions_free(ps, n);
}

int main(void)
{
    int threads = env_int("HC_GPU_THREADS", 4, 1, 256), limit = env_int("HC_EMU_LIMIT", 24, 1, 1 << 30);
    int any_device = 0, bisect_done = 0;
    hc_plan(N_NETS * NET_CHECKS + SYNTH_CHECKS + BISECT_CHECKS);
    /* the profile YAMLs, in a private temporary directory removed at the end */
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/halfcheck-gpuemu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int have_dir = mkdtemp(dir) != NULL, written = 1;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? N_REFUSED : N_PROF); i++) {
            prof *p = k ? &refused[i] : &profiles[i];
            if (!p->yaml) {
                snprintf(p->spec, sizeof p->spec, "%s", p->name);
                continue;
            }
            snprintf(p->spec, sizeof p->spec, "%s/%s.yaml", dir, p->name);
            FILE *f = have_dir ? fopen(p->spec, "w") : NULL;
            written &= f && fputs(p->yaml, f) >= 0;
            written &= f && fclose(f) == 0;
        }
    if (!written)
        printf("INFO cannot write the profile YAMLs under %s: their checks will fail\n", dir);
    for (int ni = 0; ni < N_NETS; ni++) {
        char id[64];
        snprintf(id, sizeof id, "gpu-emu-%d", ni + 1);
        const char *p = hc_shared(nets[ni]);
        if (!p) {
            hc_skip_n(id, NET_CHECKS, "../shared/%s absent", nets[ni]);
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s", p);
        hc_err err = {0};
        hc_net *net = hc_net_load(path, &err);
        if (!net) {
            hc_fail_n(id, NET_CHECKS, "%s: %s", nets[ni], err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        hc_backend b = {0};
        if (hc_backend_open(&b, "cuda:emulate:fp16", net, 9, 9, 1, 1, &err)) {
            if (strstr(err.msg, "no CUDA device") || strstr(err.msg, "unknown backend") ||
                strstr(err.msg, "not built")) {
                hc_skip_n(id, NET_CHECKS, "%s", err.msg);
                hc_net_free(net);
                continue;
            }
            hc_fail_n(id, NET_CHECKS, "%s: cuda:emulate:fp16: %s", nets[ni], err.msg);
            hc_net_free(net);
            continue;
        }
        hc_backend_close(&b);
        any_device = 1;
        for (int pi = 0; pi < N_PROF; pi++) { /* N_PLANTS of them have a planted fault */
            const prof *pr = &profiles[pi];
            char plant[200];
            if (!strcmp(pr->plant, "noround"))
                snprintf(plant, sizeof plant, ",noround=%s", net->trunk.initial_conv.name);
            else
                snprintf(plant, sizeof plant, "%s", pr->plant);
            run_raw(id, net, pr, threads, plant[0] ? plant : NULL);
            run_positions(id, net, pr, threads, limit);
        }
        run_refused(id, net);
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
            hc_skip_n(id, SYNTH_CHECKS / N_SYNTH, "no CUDA device (the shared nets said why)");
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
            hc_fail_n(id, SYNTH_CHECKS / N_SYNTH, "synth: %s", err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        for (int pi = 0; pi < N_PROF; pi++)
            run_raw(id, net, &profiles[pi], threads, NULL);
        hc_net_free(net);
    }
    if (!bisect_done)
        hc_skip("gpu-emu-bisect", "g170 absent or no CUDA device");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? N_REFUSED : N_PROF); i++) {
            const prof *p = k ? &refused[i] : &profiles[i];
            if (p->yaml && have_dir)
                unlink(p->spec);
        }
    if (have_dir)
        rmdir(dir);
    return hc_test_exit();
}
