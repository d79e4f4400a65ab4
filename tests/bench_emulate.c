/* emulate:PROFILE throughput next to ref32: positions per second for each shared net at
 * 19x19, batch 16, one thread (random well-formed inputs, full board; at least 1.5 s and 200
 * positions per figure). "pos/cpu-s" is per second of process CPU time (what one idle core
 * does on a loaded machine); "vs ref32" compares those. Target for fp16/bf16: >= 50%.
 * Never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"
#include "hc_test.h"
#include "model.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    static const char *nets[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz",
                                 "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                 "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    static const char *specs[] = {"ref32", "emulate:fp16", "emulate:bf16", "emulate:coreml-tiers", "emulate:fp16-winograd",
                                  "emulate:fp16-winograd2", "emulate:fp16-acc16"};
    const int nx = 19, ny = 19, hw = nx * ny, batch = 16, threads = 1;
    printf("%-40s %-22s %10s %10s %8s\n", "net (19x19, batch 16, 1 thread)", "backend", "pos/s", "pos/cpu-s",
           "vs ref32");
    for (int i = 0; i < 3; i++) {
        const char *p = hc_shared(nets[i]);
        if (!p) {
            printf("%-40s skipped (absent)\n", nets[i]);
            continue;
        }
        hc_err err = {0};
        hc_net *net = hc_net_load(p, &err);
        if (!net) {
            printf("%-40s load failed: %s\n", nets[i], err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        float *sp = calloc((size_t)batch * net->num_input_c * hw, sizeof(float));
        float *gl = calloc((size_t)batch * net->num_input_global_c, sizeof(float));
        float *meta = net->num_input_meta_c ? calloc((size_t)batch * net->num_input_meta_c, sizeof(float)) : NULL;
        unsigned s = 1;
        for (int b = 0; b < batch; b++)
            for (int c = 0; c < net->num_input_c; c++)
                for (int q = 0; q < hw; q++) {
                    s = s * 1103515245u + 12345u;
                    sp[((size_t)b * net->num_input_c + c) * hw + q] = c == 0 ? 1.0f : ((s >> 16) % 5 == 0);
                }
        hc_raw_heads *h = hc_raw_heads_new(batch, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
        double ref_cpu = 0;
        for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
            hc_backend b = {0};
            if (hc_backend_open(&b, specs[k], net, nx, ny, batch, threads, &err)) {
                printf("%-40s %-22s open failed: %s\n", nets[i] + 5, specs[k], err.msg);
                continue;
            }
            b.vt->eval(b.inst, batch, sp, gl, meta, h, &err); /* warm up */
            int evals = 0;
            double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t = 0;
            do {
                if (b.vt->eval(b.inst, batch, sp, gl, meta, h, &err)) {
                    printf("%-40s %-22s eval failed: %s\n", nets[i] + 5, specs[k], err.msg);
                    break;
                }
                evals++;
                t = clock_s(CLOCK_MONOTONIC) - t0;
            } while (t < 1.5 || evals * batch < 200);
            double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, pcs = evals * batch / cpu;
            if (k == 0)
                ref_cpu = pcs;
            printf("%-40s %-22s %10.1f %10.1f %7.0f%%\n", nets[i] + 5, specs[k], evals * batch / t, pcs,
                   ref_cpu > 0 ? 100.0 * pcs / ref_cpu : 0.0);
            fflush(stdout);
            hc_backend_close(&b);
        }
        hc_raw_heads_free(h);
        free(sp), free(gl), free(meta);
        hc_net_free(net);
    }
    return 0;
}
