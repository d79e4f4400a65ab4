/* Reference engine throughput: positions per second for each shared net at 19x19, batch 1
 * and 16, 1 and 2 threads (random well-formed inputs; full board). Never fails on speed.
 * "pos/cpu-s" is positions per second of process CPU time: on a loaded machine it estimates
 * what one idle core does (wall-clock pos/s is what this run got). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "refs/engine.h"
#include "hc_test.h"
#include "harness/model/model.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

int main(void)
{
    static const char *nets[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz",
                                 "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                 "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    const int nx = 19, ny = 19, hw = nx * ny, maxb = 16;
    printf("%-44s %6s %7s %10s %10s\n", "net (19x19)", "batch", "threads", "pos/s", "pos/cpu-s");
    for (int i = 0; i < 3; i++) {
        const char *p = hc_shared(nets[i]);
        if (!p) {
            printf("%-44s skipped (absent)\n", nets[i]);
            continue;
        }
        hc_err err = {0};
        hc_net *net = hc_net_load(p, &err);
        if (!net) {
            printf("%-44s load failed: %s\n", nets[i], err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        float *sp = calloc((size_t)maxb * net->num_input_c * hw, sizeof(float));
        float *gl = calloc((size_t)maxb * net->num_input_global_c, sizeof(float));
        float *meta = net->num_input_meta_c ? calloc((size_t)maxb * net->num_input_meta_c, sizeof(float)) : NULL;
        unsigned s = 1;
        for (int b = 0; b < maxb; b++)
            for (int c = 0; c < net->num_input_c; c++)
                for (int q = 0; q < hw; q++) {
                    s = s * 1103515245u + 12345u;
                    sp[((size_t)b * net->num_input_c + c) * hw + q] = c == 0 ? 1.0f : ((s >> 16) % 5 == 0);
                }
        hc_raw_heads *h = hc_raw_heads_new(maxb, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
        static const int batches[] = {1, 16};
        for (int bi = 0; bi < 2; bi++)
            for (int th = 1; th <= 2; th++) {
                int batch = batches[bi];
                hc_engine_opts o = hc_engine_default_opts();
                if (getenv("HC_BENCH_WINOGRAD"))
                    o.winograd = atoi(getenv("HC_BENCH_WINOGRAD"));
                hc_engine *e = hc_engine_new_opts(net, batch, nx, ny, th, &o, &err);
                if (!e) {
                    printf("%-44s engine failed: %s\n", nets[i], err.msg);
                    continue;
                }
                hc_engine_eval(e, batch, sp, gl, meta, h, &err); /* warm up */
                int evals = 0;
                double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t;
                do {
                    hc_engine_eval(e, batch, sp, gl, meta, h, &err);
                    evals++;
                    t = now() - t0;
                } while (t < 1.5);
                double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                printf("%-44s %6d %7d %10.1f %10.1f\n", nets[i] + 5, batch, th, evals * batch / t,
                       evals * batch / cpu);
                fflush(stdout);
                hc_engine_free(e);
            }
        hc_raw_heads_free(h);
        free(sp), free(gl), free(meta);
        hc_net_free(net);
    }
    return 0;
}
