/* GPU tests (make test-gpu, never make test): cuda:fp32 and cuda:fp16 against the fp32
 * reference on the shared nets (testgpuerror's configs, the GQA net too) and the synthesized
 * nets of other model versions, unbatched (batch 1) and batched (batch 6, testgpuerror's).
 * Checks: cuda:fp32 passes the fp32 tier and max winrate error <= 1e-4; cuda:fp16 passes the
 * fp16 tier. With HC_GPU_OUT=DIR it also writes DIR/calibration.md: cuda:fp16's error
 * distribution beside emulate:PROFILE's (HC_GPU_EMULATE, default fp16) per config.
 * With HC_GPU_VARIANTS="SPEC;SPEC..." it runs instead, per config, emulate:fp16 and each
 * listed spec (e.g. cuda:fp16,pool32) at batch 6 and appends their p99s to
 * DIR/variants.md (the calibration experiments; checks only that they ran).
 * Arguments: config names to run (default all). Skips everything without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

typedef struct cfg {
    const char *name, *net, *positions;
    int nx, ny;
} cfg;

static const cfg cfgs[] = {
    {"g170_size9", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size9.jsonl.gz", 9, 9},
    {"g170_size13", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size13.jsonl.gz", 13, 13},
    {"g170_size19", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size19.jsonl.gz", 19, 19},
    {"g170_size10x14", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"g170_sizerect", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/sizerect.jsonl.gz", 19, 19},
    {"g170_size13_rectbuffer", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size13.jsonl.gz", 18, 19},
    {"tfrs_sizerect", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", "positions/sizerect.jsonl.gz", 19, 19},
    {"tfrs_size19", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", "positions/size19.jsonl.gz", 19, 19},
    {"kv3_sizerect", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", "positions/sizerect.jsonl.gz", 19, 19},
    {"kv3_size19", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", "positions/size19.jsonl.gz", 19, 19},
    {"synth_v5", "nets/synth/pub_v5.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"synth_v7", "nets/synth/pub_v7.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"synth_v11nbt", "nets/synth/pub_v11nbt.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"synth_v15meta", "nets/synth/pub_v15meta.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"synth_v16", "nets/synth/pub_v16.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
    {"synth_v17nbttf", "nets/synth/pub_v17nbttf.bin.gz", "positions/size10x14.jsonl.gz", 10, 14},
};
enum { N_CFG = sizeof cfgs / sizeof cfgs[0] };

/* Evaluation threads (HC_GPU_THREADS, default 4). */
static int gpu_threads(void)
{
    return hc_env_int("HC_GPU_THREADS", 4, 1, 64);
}

static const int cal_metrics[] = {HC_M_WINRATE, HC_M_LEAD, HC_M_TOP_POLICY, HC_M_POLICY_KL,
                                  HC_M_OWNERSHIP};
static const char *const cal_names[] = {"winrate", "lead", "topPolicy", "policyKL", "ownership"};

static void cal_write(FILE *f, const char *name, size_t n, const hc_stats *cu, const hc_stats *em,
                      const char *emu)
{
    fprintf(f, "\n### %s (%zu positions, batch 6)\n\n", name, n);
    fprintf(f, "| metric | cuda:fp16 avg | p90 | p99 | max | emulate:%s avg | p90 | p99 | max | p99 ratio |\n", emu);
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof cal_metrics / sizeof *cal_metrics; k++) {
        const double *a = cu->m[cal_metrics[k]].v, *b = em->m[cal_metrics[k]].v;
        double ratio = b[HC_P_99] > 0 ? a[HC_P_99] / b[HC_P_99] : 0;
        fprintf(f, "| %s | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.2f%s |\n",
                cal_names[k], a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], ratio,
                ratio > 1.5 || (ratio > 0 && ratio < 1 / 1.5) ? " **" : "");
    }
    fflush(f);
}

static void run_variants(const cfg *c, const char *id, const hc_net *net, const hc_position *ps,
                         size_t n, const hc_nnoutput *ref, FILE *vf)
{
    char list[1024];
    const hc_eval_settings es = hc_eval_settings_default(c->nx, c->ny);
    snprintf(list, sizeof list, "emulate:fp16;%s", getenv("HC_GPU_VARIANTS"));
    double emu99[HC_M_COUNT] = {0};
    char *save = NULL;
    int k = 0;
    for (char *spec = strtok_r(list, ";", &save); spec; spec = strtok_r(NULL, ";", &save), k++) {
        hc_nnoutput *o = NULL;
        hc_stats *st = calloc(1, sizeof *st);
        hc_err err = {0};
        double secs;
        char sub[160];
        snprintf(sub, sizeof sub, "%s.variant%d", id, k);
        if (!st || hc_eval_spec(spec, net, ps, n, &es, 6, gpu_threads(), &o, &secs, &err) ||
            hc_stats_compute(ref, o, n, st, &err)) {
            hc_check(sub, 0, "%s %s: %s", c->name, spec, err.msg);
        } else {
            if (k == 0)
                for (int m = 0; m < HC_M_COUNT; m++)
                    emu99[m] = st->m[m].v[HC_P_99];
            if (vf) {
                fprintf(vf, "| %s | %s |", c->name, spec);
                for (size_t j = 0; j < sizeof cal_metrics / sizeof *cal_metrics; j++) {
                    double v = st->m[cal_metrics[j]].v[HC_P_99], e = emu99[cal_metrics[j]];
                    fprintf(vf, " %.3g (%.2f) |", v, e > 0 ? v / e : 0);
                }
                fprintf(vf, "\n");
                fflush(vf);
            }
            hc_check(sub, 1, "ran");
        }
        hc_nnoutputs_free(o, o ? n : 0);
        free(st);
    }
}

/* The backends and batches every config runs: a tier check each, and cuda:fp32's winrate bound. */
static const char *const specs[] = {"cuda:fp32", "cuda:fp16"};
static const int batches[] = {1, 6};
enum { N_SPECS = sizeof specs / sizeof specs[0], N_BATCHES = sizeof batches / sizeof batches[0],
       CFG_CHECKS = N_SPECS * N_BATCHES + N_BATCHES };

/* With HC_GPU_VARIANTS, a config's checks: one per spec run (emulate:fp16 and each listed one). */
static unsigned n_variants(void)
{
    char list[1024];
    snprintf(list, sizeof list, "emulate:fp16;%s", getenv("HC_GPU_VARIANTS"));
    unsigned k = 0;
    char *save = NULL;
    for (char *spec = strtok_r(list, ";", &save); spec; spec = strtok_r(NULL, ";", &save))
        k++;
    return k;
}

static unsigned cfg_checks(void)
{
    return getenv("HC_GPU_VARIANTS") ? n_variants() : CFG_CHECKS;
}

/* Whether spec can open at all: without a CUDA device every config skips its checks before
 * the (slow) fp32 reference runs. */
static int no_device(const hc_net *net, const cfg *c, hc_err *err)
{
    hc_backend b = {0};
    int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "cuda:fp32", .net = net, .nx = c->nx,
                                                              .ny = c->ny, .max_batch = 1, .threads = 1}, err);
    hc_backend_close(&b);
    return rc != 0 && strstr(err->msg, "no CUDA device") != NULL;
}

static void run_cfg(int ci, FILE *cal, int *any_device)
{
    const cfg *c = &cfgs[ci];
    const hc_eval_settings es = hc_eval_settings_default(c->nx, c->ny);
    const unsigned long mark = hc_test_reported;
    const unsigned per = cfg_checks();
    char id[64], path[4096];
    snprintf(id, sizeof id, "gpu-cuda-%d", ci + 1);
    const char *p = hc_shared(c->net);
    if (!p) {
        hc_skip_n(id, per, "%s: ../shared/%s absent", c->name, c->net);
        return;
    }
    snprintf(path, sizeof path, "%s", p);
    hc_err err = {0};
    hc_net *net = hc_net_load(path, &err);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_nnoutput *ref = NULL;
    double secs;
    if (!net) {
        hc_fail_n(id, per, "%s: %s", c->name, err.msg);
        return;
    }
    hc_net_reduce_activations(net);
    if (no_device(net, c, &err)) {
        hc_skip_n(id, per, "%s: %s", c->name, err.msg);
        hc_net_free(net);
        return;
    }
    p = hc_shared(c->positions);
    if (!p) {
        hc_skip_n(id, per, "%s: ../shared/%s absent", c->name, c->positions);
        hc_net_free(net);
        return;
    }
    if (hc_positions_load(p, &ps, &n, &err)) {
        hc_fail_n(id, per, "%s: positions: %s", c->name, err.msg);
        hc_net_free(net);
        return;
    }
    if (hc_eval_spec("ref32", net, ps, n, &es, 16, gpu_threads(), &ref, &secs, &err)) {
        hc_fail_n(id, per, "%s: ref32: %s", c->name, err.msg);
        goto done;
    }
    printf("INFO %s: ref32 %zu positions in %.1fs\n", c->name, n, secs);
    if (getenv("HC_GPU_VARIANTS")) {
        run_variants(c, id, net, ps, n, ref, cal);
        goto done;
    }
    hc_tier t32, t16;
    hc_tier_builtin("fp32", &t32, &err);
    hc_tier_builtin("fp16", &t16, &err);
    hc_stats *st16b = NULL;
    for (int si = 0; si < N_SPECS; si++)
        for (int bi = 0; bi < N_BATCHES; bi++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.%s.b%d", id, specs[si] + 5, batches[bi]);
            hc_nnoutput *got = NULL;
            if (hc_eval_spec(specs[si], net, ps, n, &es, batches[bi], gpu_threads(), &got, &secs, &err)) {
                if (strstr(err.msg, "no CUDA device")) {
                    hc_skip_n(sub, hc_test_left(mark, per), "%s", err.msg);
                    hc_nnoutputs_free(got, n);
                    goto done;
                }
                hc_fail_n(sub, si == 0 ? 2 : 1, "%s %s: %s", c->name, specs[si], err.msg); /* .tier (.wr1e-4) */
                hc_nnoutputs_free(got, n);
                continue;
            }
            *any_device = 1;
            hc_stats *st = calloc(1, sizeof *st);
            if (!st || hc_stats_compute(ref, got, n, st, &err)) {
                hc_fail_n(sub, si == 0 ? 2 : 1, "%s: stats: %s", c->name, err.msg);
                free(st);
                hc_nnoutputs_free(got, n);
                continue;
            }
            hc_tier_check tc;
            hc_tier_check_stats(si == 0 ? &t32 : &t16, st, &tc);
            const double *wr = st->m[HC_M_WINRATE].v;
            printf("INFO %-24s %-9s batch %d: %6.0f pos/s (open included) winrate avg %.2e p99 %.2e max %.2e, "
                   "topPolicy max %.2e, lead max %.2e, ownership max %.2e; tier %s worst ratio %.3f\n",
                   c->name, specs[si], batches[bi], (double)n / secs, wr[0], wr[2], wr[3],
                   st->m[HC_M_TOP_POLICY].v[3], st->m[HC_M_LEAD].v[3], st->m[HC_M_OWNERSHIP].v[3],
                   si == 0 ? "fp32" : "fp16", tc.worst_all_ratio);
            char s2[160];
            snprintf(s2, sizeof s2, "%s.tier", sub);
            hc_check(s2, tc.pass, "%s %s batch %d: %s tier: %d of %d limits failed (first: metric %d pct %d), worst ratio %.3f",
                     c->name, specs[si], batches[bi], si == 0 ? "fp32" : "fp16", tc.n_failed,
                     tc.n_checked, tc.first_fail_metric, tc.first_fail_pct, tc.worst_all_ratio);
            if (si == 0) {
                snprintf(s2, sizeof s2, "%s.wr1e-4", sub);
                hc_check(s2, wr[3] <= 1e-4, "%s cuda:fp32 batch %d: max winrate error %.3g > 1e-4",
                         c->name, batches[bi], wr[3]);
            }
            if (si == 1 && bi == 1)
                st16b = st;
            else
                free(st);
            hc_nnoutputs_free(got, n);
        }
    if (cal && st16b) {
        const char *emu = getenv("HC_GPU_EMULATE");
        char spec[128];
        snprintf(spec, sizeof spec, "emulate:%s", emu && *emu ? emu : "fp16");
        hc_nnoutput *eo = NULL;
        hc_stats *se = calloc(1, sizeof *se);
        if (se && hc_eval_spec(spec, net, ps, n, &es, 6, gpu_threads(), &eo, &secs, &err) == 0 &&
            hc_stats_compute(ref, eo, n, se, &err) == 0)
            cal_write(cal, c->name, n, st16b, se, spec + 8);
        else
            printf("INFO %s: %s failed: %s\n", c->name, spec, err.msg);
        hc_nnoutputs_free(eo, eo ? n : 0);
        free(se);
    }
    free(st16b);
done:
    hc_nnoutputs_free(ref, ref ? n : 0);
    hc_positions_free(ps, n);
    hc_net_free(net);
}

int main(int argc, char **argv)
{
    FILE *cal = NULL;
    const char *out = getenv("HC_GPU_OUT");
    if (out && *out) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", out, getenv("HC_GPU_VARIANTS") ? "variants.md" : "calibration.md");
        cal = fopen(path, "w");
        if (cal && getenv("HC_GPU_VARIANTS"))
            fprintf(cal, "| config | backend | p99 winrate (x emulate) | lead | topPolicy | policyKL | ownership |\n|---|---|---|---|---|---|---|\n");
    }
    int any_device = 0, want[N_CFG];
    unsigned n_want = 0;
    for (int i = 0; i < N_CFG; i++) {
        want[i] = argc < 2;
        for (int a = 1; a < argc; a++)
            want[i] |= strcmp(argv[a], cfgs[i].name) == 0;
        n_want += (unsigned)want[i];
    }
    hc_plan(n_want * cfg_checks());
    for (int i = 0; i < N_CFG; i++)
        if (want[i])
            run_cfg(i, cal, &any_device);
    if (cal)
        fclose(cal);
    return hc_test_exit();
}
