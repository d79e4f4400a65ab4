/* GPU tests (make test-gpu, never make test): cuda:ref32 gives ref32's bits. For every shared
 * net and every public synthetic net (../shared/nets/synth), on every shared positions set
 * (9x9, 19x19, 10x14, rectangular boards in 19x19): every output float of cuda:ref32 at batch 1
 * and at a ragged batch (7) equals the CPU ref32's (memcmp of the post-processed outputs). On
 * random input rows (19x19 buffer, some rows on a 13x13 board, batch 5): the raw heads and every
 * tap ref32 hands back are the same bits. A planted reorder (backends/cuda.h: hc_cuda_faults
 * split_k, every GEMM sums k in two halves) must be caught: its outputs differ. The runner
 * (gpu-ref32-run): a reference cache entry computed with --ref cuda:ref32 is byte for byte the
 * one computed with ref32; the planted reorder as the reference must fail the CPU's self-check,
 * naming the position, caching nothing (gpu-ref32-run.3: this test's own registry opens the
 * reference with the planted fault, which no user spec names).
 * Synthetic nets of every model version 3..17 and the large presets (run_synth): raw heads and
 * taps. cuda:ref32 runs on HC_GPU_THREADS lanes (whole batches side by side, gpu-ref32-lanes).
 * Positions per set: HC_REF_LIMIT (default 160). Skips everything without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/cuda.h"
#include "harness/config/config.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "lib/cudalib.h"
#include "harness/model/model.h"
#include "harness/run/runner.h"
#include "harness/model/synth.h"

static const char *const nets[] = {
    "nets/g170-b6c96-s175395328-d26788732.bin.gz", "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
    "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", "nets/synth/pub_v5.bin.gz",
    "nets/synth/pub_v7.bin.gz", "nets/synth/pub_v11nbt.bin.gz",
    "nets/synth/pub_v15meta.bin.gz", "nets/synth/pub_v16.bin.gz",
    "nets/synth/pub_v17nbttf.bin.gz",
};
enum { N_NETS = sizeof nets / sizeof nets[0] };

typedef struct pset {
    const char *path;
    int nx, ny;
} pset;
static const pset sets[] = {
    {"positions/size9.jsonl.gz", 9, 9},
    {"positions/size19.jsonl.gz", 19, 19},
    {"positions/size10x14.jsonl.gz", 10, 14},
    {"positions/sizerect.jsonl.gz", 19, 19},
};
enum { N_SETS = sizeof sets / sizeof sets[0] };
static const int batches[] = {1, 7};
enum { N_B = 2 };
/* per net: sets x batches, the raw heads, the taps, the planted reorder */
enum { NET_CHECKS = N_SETS * N_B + 3 };

/* Positions of every set against ref32: batch 1 and 7 (checks .sS.bB), bit for bit. */
static void run_sets(const char *id, const hc_net *net, int threads, int limit)
{
    for (int si = 0; si < N_SETS; si++) {
        const pset *s = &sets[si];
        char sub[128];
        snprintf(sub, sizeof sub, "%s.s%d", id, si + 1);
        const char *p = hc_shared(s->path);
        hc_position *ps = NULL;
        size_t n = 0;
        hc_err err = {0};
        if (!p) {
            hc_skip_n(sub, N_B, "../shared/%s absent", s->path);
            continue;
        }
        if (hc_positions_load(p, &ps, &n, &err)) {
            hc_fail_n(sub, N_B, "%s: %s", s->path, err.msg);
            continue;
        }
        size_t use = n < (size_t)limit ? n : (size_t)limit;
        const hc_eval_settings es = hc_eval_settings_default(s->nx, s->ny);
        hc_nnoutput *ref = NULL;
        double secs;
        if (hc_eval_spec("ref32", net, ps, use, &es, 16, threads, &ref, &secs, &err)) {
            hc_fail_n(sub, N_B, "%s %s: ref32: %s", net->name, s->path, err.msg);
        } else {
            printf("INFO %s %s: ref32 %zu positions in %.2fs\n", net->name, s->path, use, secs);
            for (int bi = 0; bi < N_B; bi++) {
                char nm[160];
                snprintf(nm, sizeof nm, "%s.b%d", sub, batches[bi]);
                hc_nnoutput *got = NULL;
                /* on `threads` lanes (HC_LANES_WHOLE_BATCH: passes of the whole batch side by side,
                 * each on its thread's stream) */
                int lanes = threads;
                if (hc_eval_spec("cuda:ref32", net, ps, use, &es, batches[bi], lanes, &got, &secs, &err)) {
                    hc_check(nm, 0, "%s %s batch %d: cuda:ref32: %s", net->name, s->path, batches[bi], err.msg);
                } else {
                    long d = hc_outputs_first_diff(ref, got, use);
                    printf("INFO %s %s: cuda:ref32 batch %d (%d lanes) %zu positions in %.2fs\n", net->name,
                           s->path, batches[bi], hc_evaluator_lanes_for("cuda:ref32", batches[bi], lanes), use, secs);
                    hc_check(nm, d < 0, "%s %s batch %d: position %ld differs from ref32 (winrate %.9g vs %.9g)",
                             net->name, s->path, batches[bi], d, d >= 0 ? ref[d].white_win_prob : 0.0,
                             d >= 0 ? got[d].white_win_prob : 0.0);
                }
                hc_nnoutputs_free(got, got ? use : 0);
            }
        }
        hc_nnoutputs_free(ref, ref ? use : 0);
        hc_positions_free(ps, n);
    }
}

/* Random input rows (hc_random_rows): binary spatial inputs, global inputs in 0.25 steps. */
static const hc_rows_spec rows_spec = {.seed = 2024, .gl_levels = 5, .gl_step = 0.25f, .meta_levels = 2, .meta_step = 1.0f};

/* Raw heads and taps of ref32 and cuda:ref32 on the same rows (checks .raw and .taps); then the
 * planted reorder (.plant): cuda:ref32 with faults.split_k must not give ref32's raw heads. */
static void run_raw(const char *id, const hc_net *net, int threads, int plant)
{
    enum { B = 5, NX = 19, NY = 19 };
    char nm[3][128];
    snprintf(nm[0], sizeof nm[0], "%s.raw", id);
    snprintf(nm[1], sizeof nm[1], "%s.taps", id);
    snprintf(nm[2], sizeof nm[2], "%s.plant", id);
    const char *specs[2] = {"ref32", "cuda:ref32"};
    const hc_cuda_faults split = {.split_k = 1};
    hc_rows_cmp c;
    hc_compare_rows(net, &rows_spec, B, NX, NY, specs, plant ? &split : NULL, threads, net->name, &c);
    hc_check(nm[0], c.same[1], "%s: raw heads of cuda:ref32 differ from ref32's%s", net->name,
             c.ok[0] && c.ok[1] ? "" : " (an eval failed)");
    /* every tap of ref32 is in cuda:ref32's set with the same shape, format and bits */
    hc_check(nm[1], c.ok[0] && c.ok[1] && c.n_bad == 0 && c.n_taps > 0, "%s: taps: %d of %d differ, the first %s",
             net->name, c.n_bad, c.n_taps, c.first);
    if (plant)
        hc_check(nm[2], c.ok[0] && c.ok[2] && !c.same[2], "%s: the planted reorder (faults.split_k) was not caught%s",
                 net->name, c.ok[2] ? "" : " (its eval failed)");
}

/* The bytes of a file (malloc'd, *n its size), NULL when unreadable. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len == cap) {
            unsigned char *g = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return buf;
}

/* The one file in dir (the cache of a one-reference suite), into path; 0 when not exactly one. */
static int only_file(const char *dir, char *path, size_t cap)
{
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "ls %s", dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char name[512];
    int k = 0;
    while (fgets(name, sizeof name, p)) {
        name[strcspn(name, "\n")] = 0;
        if (k++ == 0)
            snprintf(path, cap, "%s/%s", dir, name);
    }
    pclose(p);
    return k == 1;
}

/* A registry for this test only: "cuda" whose params may end in ",split-k" (faults.split_k), ahead
 * of the user registry, so that the runner can be given the planted reorder as its reference
 * (no user spec names a fault). */
static void *split_parse(const char *params, hc_err *err)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", params ? params : "");
    size_t l = strlen(p);
    int split = l >= 8 && strcmp(p + l - 8, ",split-k") == 0;
    if (split)
        p[l - 8] = '\0';
    hc_cuda_opts *o = hc_backend_cuda.parse(p, err);
    if (o)
        o->faults.split_k = split;
    return o;
}

static hc_backend_kind split_kind(void)
{
    hc_backend_kind k = hc_backend_cuda;
    k.parse = split_parse;
    return k;
}

/* halfcheck run's reference from the GPU: a suite of g170 on 48 19x19 positions (cuda:ref32 as
 * its backend, tier exact) run twice: --ref ref32, --ref cuda:ref32, each into its own cache.
 * The third, the planted reorder as the reference ("cuda:ref32,split-k" in this test's registry):
 * its self-check must fail, naming the position, and cache nothing. */
static void run_runner(int threads)
{
    enum { CHECKS = 3 };
    const char *net = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char net_path[4096], pos_path[4300], yaml[9000], caches[2][4400], cmd[9000];
    char cwd[2048];
    if (net && net[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(net_path, sizeof net_path, "%s/%s", cwd, net);
    else if (net)
        snprintf(net_path, sizeof net_path, "%s", net);
    if (!net) {
        hc_skip_n("gpu-ref32-run", CHECKS, "../shared/nets/g170 absent");
        return;
    }
    const char *dir = hc_tmpdir("gpu_test_ref32");
    const char *pos = hc_shared("positions/size19.jsonl.gz");
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    if (!dir || !pos || hc_positions_load(pos, &ps, &n, &err)) {
        hc_skip_n("gpu-ref32-run", CHECKS, "no scratch directory or 19x19 positions: %s", err.msg);
        return;
    }
    snprintf(pos_path, sizeof pos_path, "%s/pos.jsonl", dir);
    hc_poswriter *w = hc_poswriter_open(pos_path, &err);
    for (size_t i = 0; w && i < n && i < 48; i++)
        hc_poswriter_write(w, &ps[i], &err);
    if (w)
        hc_poswriter_commit(w, &err);
    hc_positions_free(ps, n);
    snprintf(yaml, sizeof yaml,
             "name: gpuref\nnets:\n  - {name: g170, model: %s, modelVersion: 8}\n"
             "boards:\n  - {name: b, positions: %s, nnBuffer: 19x19, maxBatchSize: 6}\n"
             "backends:\n  - {name: cuda-ref32, backend: cuda:ref32, tiers: [exact]}\nmodes: [batched]\n",
             net_path, pos_path);
    hc_suite *suite = hc_suite_parse(yaml, strlen(yaml), "gpuref.yaml", &err);
    if (!suite) {
        hc_fail_n("gpu-ref32-run", CHECKS, "suite: %s", err.msg);
        return;
    }
    const hc_backend_kind split = split_kind();
    const hc_backend_kind *const kinds[] = {&split, NULL};
    const hc_backend_registry reg = {kinds, hc_backend_registry_user()};
    const char *refs[3] = {"ref32", "cuda:ref32", "cuda:ref32,split-k"};
    int status[3] = {-1, -1, -1};
    char msg[3][600] = {"", "", ""};
    for (int k = 0; k < 3; k++) {
        if (k < 2) {
            snprintf(caches[k], sizeof caches[k], "%s/cache%d", dir, k);
            snprintf(cmd, sizeof cmd, "rm -rf %s", caches[k]);
            if (system(cmd) != 0)
                continue;
        }
        hc_run_options o = hc_run_options_default();
        o.threads = threads;
        o.cache_dir = k < 2 ? caches[k] : NULL;
        o.timeout_s = 300;
        o.ref_spec = refs[k];
        o.registry = k == 2 ? &reg : NULL;
        hc_run *r = hc_run_suite(suite, &o, &err);
        if (!r) {
            snprintf(msg[k], sizeof msg[k], "%s", err.msg);
            continue;
        }
        status[k] = hc_run_status(r);
        const hc_results *rs = hc_run_results(r);
        if (rs->n > 0 && rs->items[0].message)
            snprintf(msg[k], sizeof msg[k], "%s", rs->items[0].message);
        hc_run_free(r);
    }
    if (status[1] != 0 && (strstr(msg[1], "no CUDA device") || strstr(msg[1], "unknown backend"))) {
        hc_skip_n("gpu-ref32-run", CHECKS, "%s", msg[1]);
        hc_suite_free(suite);
        return;
    }
    char f0[4600] = "", f1[4600] = "";
    size_t n0 = 0, n1 = 0;
    unsigned char *b0 = status[0] == 0 && only_file(caches[0], f0, sizeof f0) ? slurp(f0, &n0) : NULL;
    unsigned char *b1 = status[1] == 0 && only_file(caches[1], f1, sizeof f1) ? slurp(f1, &n1) : NULL;
    hc_check("gpu-ref32-run.1", status[0] == 0 && status[1] == 0, "runs with --ref ref32 / cuda:ref32: status %d (%s), %d (%s)",
             status[0], msg[0], status[1], msg[1]);
    hc_check("gpu-ref32-run.2", b0 && b1 && n0 == n1 && n0 > 0 && memcmp(b0, b1, n0) == 0 && strcmp(strrchr(f0, '/'), strrchr(f1, '/')) == 0,
             "the cache entry written from the GPU (%s, %zu bytes) is not the CPU's (%s, %zu bytes)", f1, n1, f0, n0);
    hc_check("gpu-ref32-run.3", status[2] == 2 && strstr(msg[2], "differs from ref32 on the CPU at position"),
             "the planted reorder as the reference: status %d, \"%s\"", status[2], msg[2]);
    free(b0);
    free(b1);
    hc_suite_free(suite);
}

/* Synthetic nets built here: every model version 3..17 (a small net of the blocks its format
 * holds) and the large and special presets (b18c384nbt, b28c512nbt, humanv0 with its metadata
 * encoder, b5c192nbt, b4c256h4nbttflrs, v3): raw heads and taps on random rows (.raw, .taps). */
static const char *const presets[] = {"b18c384nbt", "b28c512nbt", "humanv0", "b5c192nbt", "b4c256h4nbttflrs", "v3"};
enum { N_PRESETS = sizeof presets / sizeof presets[0], N_VERSIONS = 15, SYNTH_CHECKS = 2 * (N_VERSIONS + N_PRESETS) };

static void run_synth(int threads)
{
    for (int i = 0; i < N_VERSIONS + N_PRESETS; i++) {
        char id[64];
        hc_err err = {0};
        hc_synth_spec sp;
        int ok;
        if (i < N_VERSIONS) {
            int v = 3 + i;
            snprintf(id, sizeof id, "gpu-ref32-v%d", v);
            hc_synth_spec_default(&sp);
            sp.version = v;
            sp.act = v == 13 || v == 17 ? HC_ACT_SILU : -1; /* -1: relu below version 11, else mish */
            sp.vary_bn = v < 11;
            snprintf(sp.blocks, sizeof sp.blocks, "%s",
                     v >= 17 ? "res,gpool,nbt(res,gpool),attn,ffn" : "res,gpool,nbt(res,gpool)");
            sp.meta = v == 15;
            sp.tip = v >= 16 ? HC_TRUNK_NORM_RMSNORM : HC_TRUNK_NORM_BN;
            sp.tip_rms_spatial = v == 16;
            ok = hc_synth_check(&sp, &err) == 0;
        } else {
            snprintf(id, sizeof id, "gpu-ref32-preset-%s", presets[i - N_VERSIONS]);
            ok = hc_synth_preset(presets[i - N_VERSIONS], &sp, &err) == 0;
        }
        hc_net *net = ok ? hc_synth_net(&sp, &err) : NULL;
        if (!net) {
            hc_fail_n(id, SYNTH_CHECKS / (N_VERSIONS + N_PRESETS), "synth: %s", err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        run_raw(id, net, threads, 0);
        hc_net_free(net);
    }
}

int main(void)
{
    int threads = hc_env_int("HC_GPU_THREADS", 4, 1, 256), limit = hc_env_int("HC_REF_LIMIT", 160, 1, 1 << 30), any_device = 0;
    hc_plan(N_NETS * NET_CHECKS + 3 + SYNTH_CHECKS + 1);
    hc_check("gpu-ref32-lanes",
             hc_evaluator_lanes_for("cuda:ref32", 1, 4) == 4 && hc_evaluator_lanes_for("cuda:emulate:fp16", 1, 3) == 3 &&
                 hc_evaluator_lanes_for("cuda:fp16", 6, 4) == 4 && hc_evaluator_lanes_for("cuda:ref32", 7, 1) == 0,
             "cuda runs lanes given threads (HC_LANES_WHOLE_BATCH)");
    /* First: the runner forks its GPU work into child processes, which cannot use the device once
     * this process has initialised CUDA (as the checks below do). */
    run_runner(threads);
    for (int ni = 0; ni < N_NETS; ni++) {
        char id[64];
        snprintf(id, sizeof id, "gpu-ref32-%d", ni + 1);
        char why[1200];
        hc_net *net;
        if (hc_unrun_n(id, NET_CHECKS, hc_gpu_shared_net(nets[ni], "cuda:ref32", 9, 9, &net, why, sizeof why), why))
            continue;
        any_device = 1;
        run_sets(id, net, threads, limit);
        run_raw(id, net, threads, 1);
        hc_net_free(net);
    }
    if (any_device)
        run_synth(threads);
    else
        hc_skip_n("gpu-ref32-synth", SYNTH_CHECKS, "no CUDA device (the shared nets said why)");
    return hc_test_exit();
}
