/* GPU benchmark (make test-gpu runs it after the tests): positions/s of cuda:fp16 and
 * cuda:fp32 per shared net and board size at batch 1, 16 and 256, on random input rows
 * (speed does not depend on the values). Prints a table; never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "harness/model/model.h"

int main(void)
{
    static const char *const nets[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz",
                                       "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                       "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    static const int sizes[] = {9, 13, 19};
    static const int batches[] = {1, 16, 256};
    static const char *const specs[] = {"cuda:fp16", "cuda:fp32"};
    printf("| net | board | backend | batch 1 pos/s | batch 16 pos/s | batch 256 pos/s |\n");
    printf("|---|---|---|---|---|---|\n");
    unsigned seed = 12345;
    for (int ni = 0; ni < 3; ni++) {
        const char *p = hc_shared(nets[ni]);
        if (!p) {
            printf("# %s absent\n", nets[ni]);
            continue;
        }
        hc_err err = {0};
        hc_net *net = hc_net_load(p, &err);
        if (!net) {
            printf("# %s: %s\n", nets[ni], err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        for (int si = 0; si < 3; si++) {
            int nx = sizes[si], ny = sizes[si], hw = nx * ny;
            size_t cin = (size_t)net->num_input_c, cg = (size_t)net->num_input_global_c;
            float *sp = malloc(256 * cin * hw * sizeof(float));
            float *gl = malloc(256 * (cg + 1) * sizeof(float));
            float *meta = net->num_input_meta_c ? calloc(256 * (size_t)net->num_input_meta_c, sizeof(float)) : NULL;
            for (size_t i = 0; i < 256 * cin * hw; i++) {
                seed = seed * 1103515245u + 12345u;
                sp[i] = (i / hw) % cin == 0 ? 1.0f : (float)((seed >> 16) & 1);
            }
            for (size_t i = 0; i < 256 * cg; i++)
                gl[i] = 0.25f;
            for (int k = 0; k < 2; k++) {
                double rate[3] = {0, 0, 0};
                for (int bi = 0; bi < 3; bi++) {
                    int B = batches[bi];
                    hc_backend b = {0};
                    hc_raw_heads *out = hc_raw_heads_new(B, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
                    if (!out || hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = specs[k], .net = net,
                                                                                 .nx = nx, .ny = ny, .max_batch = B,
                                                                                 .threads = 1}, &err)) {
                        printf("# %s %dx%d %s batch %d: %s\n", net->name, nx, ny, specs[k], B, err.msg);
                        hc_raw_heads_free(out);
                        continue;
                    }
                    int ok = 1;
                    for (int w = 0; w < 3 && ok; w++)
                        ok = hc_backend_eval(&b, B, sp, gl, meta, out, &err) == 0;
                    double t0 = hc_now_s(), el = 0;
                    long evals = 0;
                    while (ok && (el < 0.5 || evals < 5)) {
                        ok = hc_backend_eval(&b, B, sp, gl, meta, out, &err) == 0;
                        evals++;
                        el = hc_now_s() - t0;
                    }
                    if (!ok)
                        printf("# %s %s batch %d: %s\n", net->name, specs[k], B, err.msg);
                    else
                        rate[bi] = (double)evals * B / el;
                    hc_backend_close(&b);
                    hc_raw_heads_free(out);
                }
                printf("| %s | %dx%d | %s | %.0f | %.0f | %.0f |\n", net->name, nx, ny, specs[k], rate[0],
                       rate[1], rate[2]);
                fflush(stdout);
            }
            free(sp);
            free(gl);
            free(meta);
        }
        hc_net_free(net);
    }
    return 0;
}
