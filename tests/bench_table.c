/* The one table `make bench` prints: for each shared net x board size x backend (ref32 and the
 * emulated profiles), positions per second of wall time and of process CPU time, with model
 * load time and peak RSS while loading and while evaluating. Batch 16, 2 threads (the issue's
 * configuration), through the path `halfcheck eval` takes: the recorded positions of
 * ../shared/positions/sizeN.jsonl.gz featurized, evaluated (lanes: each thread its own instance),
 * post-processed; at least 0.4 s and 16 positions per figure (the first 16 positions, one batch,
 * repeated). "pos/cpu-s" is positions per CPU-second: on a loaded machine it estimates what
 * the cores would do idle. Peak RSS is the process's VmHWM, reset through /proc/self/clear_refs
 * before each phase (reported as "-" where the kernel does not allow it). Never fails on
 * speed; nets absent from ../shared are reported as skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resets the peak RSS; 0 on success. */
static int hwm_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Peak RSS in MB since the last reset, or -1. */
static double hwm_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    double mb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            mb = atof(line + 6) / 1024.0;
    fclose(f);
    return mb;
}

static void fmt_mb(char *buf, size_t n, int ok, double mb)
{
    if (ok && mb >= 0)
        snprintf(buf, n, "%.0f", mb);
    else
        snprintf(buf, n, "-");
}

int main(void)
{
    static const char *nets[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz",
                                 "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                 "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    static const char *specs[] = {"ref32",          "emulate:fp16",          "emulate:bf16",
                                  "emulate:fp16-acc16", "emulate:fp16-winograd", "emulate:fp16-winograd2",
                                  "emulate:coreml-tiers", "emulate:ane-fp16"};
    static const int sizes[] = {9, 13, 19};
    const int batch = 16, threads = 2;
    printf("bench (batch %d, %d threads; wall pos/s depends on the machine's load, pos/cpu-s less)\n",
           batch, threads);
    printf("%-40s %5s %-21s %9s %9s %7s %7s %8s %8s\n", "net", "board", "backend", "pos/s", "pos/cpu-s",
           "vs ref", "load s", "loadMB", "evalMB");
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        const char *p = hc_shared(nets[i]);
        const char *short_name = nets[i] + 5;
        if (!p) {
            printf("%-40s skipped (../shared absent)\n", short_name);
            continue;
        }
        hc_err err = {0};
        int hwm_ok = hwm_reset() == 0;
        double t0 = clock_s(CLOCK_MONOTONIC);
        hc_net *net = hc_net_load(p, &err);
        double load_s = clock_s(CLOCK_MONOTONIC) - t0, load_mb = hwm_mb();
        if (!net) {
            printf("%-40s load failed: %s\n", short_name, err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        char lmb[16];
        fmt_mb(lmb, sizeof lmb, hwm_ok, load_mb);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int nx = sizes[si], ny = sizes[si];
            char rel[64];
            snprintf(rel, sizeof rel, "positions/size%d.jsonl.gz", nx);
            const char *pp = hc_shared(rel);
            hc_position *ps = NULL;
            size_t n_all = 0;
            if (!pp || hc_positions_load(pp, &ps, &n_all, &err)) {
                printf("%-40s %2dx%-2d skipped (%s: %s)\n", short_name, nx, ny, rel, pp ? err.msg : "absent");
                continue;
            }
            size_t n = n_all < 16 ? n_all : 16; /* one batch, repeated */
            hc_nnoutput *outs = calloc(n ? n : 1, sizeof *outs);
            hc_eval_settings st = hc_eval_settings_default(nx, ny);
            double ref_cpu = 0;
            for (size_t k = 0; outs && k < sizeof specs / sizeof specs[0]; k++) {
                int eval_ok = hwm_reset() == 0;
                hc_evaluator_opts eo = {.spec = specs[k], .net = net, .settings = st, .batch = batch,
                                        .threads = threads};
                hc_evaluator *ev = hc_evaluator_open(&eo, &err);
                if (!ev || hc_evaluator_lanes(ev) == 0) {
                    printf("%-40s %2dx%-2d %-21s open failed: %s\n", short_name, nx, ny, specs[k],
                           !ev ? err.msg : "no lanes");
                    hc_evaluator_close(ev);
                    continue;
                }
                hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
                long evaluated = 0;
                int failed = 0;
                double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t = 0;
                while (!failed && (evaluated == 0 || t < 0.4)) {
                    failed = hc_evaluator_run(ev, &req, &err) != 0;
                    for (size_t i = 0; i < n; i++)
                        hc_nnoutput_free(&outs[i]);
                    evaluated += (long)n;
                    t = clock_s(CLOCK_MONOTONIC) - w0;
                }
                double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, pcs = evaluated / cpu;
                char emb[16];
                fmt_mb(emb, sizeof emb, eval_ok, hwm_mb());
                if (failed) {
                    printf("%-40s %2dx%-2d %-21s eval failed: %s\n", short_name, nx, ny, specs[k], err.msg);
                } else {
                    if (k == 0)
                        ref_cpu = pcs;
                    printf("%-40s %2dx%-2d %-21s %9.1f %9.1f %6.0f%% %7.2f %8s %8s\n", short_name, nx, ny,
                           specs[k], evaluated / t, pcs, ref_cpu > 0 ? 100.0 * pcs / ref_cpu : 0.0, load_s,
                           lmb, emb);
                }
                fflush(stdout);
                hc_evaluator_close(ev);
            }
            free(outs);
            hc_positions_free(ps, n_all);
        }
        hc_net_free(net);
    }
    return 0;
}
