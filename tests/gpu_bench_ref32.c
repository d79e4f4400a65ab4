/* GPU benchmark (make test-gpu runs it after the tests): the fp32 reference on the CPU (ref32 on
 * every core) against cuda:ref32 (the same bits on the GPU) and cuda:fp32 (cuBLAS), positions/s
 * at 19x19 on random input rows, on a b18c384nbt-size synthetic net (synth-net preset) and the
 * shared nets. Also each backend's GEMM rate: the multiply-adds of the reference's algorithm
 * (Winograd tile products for 3x3 and 5x5 convolutions, direct products elsewhere) per second,
 * to set against the GPU's fp32 peak (docs/PERFORMANCE.md). Prints a table; never fails on speed.
 * HC_BENCH_CPU_THREADS: the CPU's threads (default: every online core). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "harness/model/layers.h"
#include "harness/model/model.h"
#include "harness/model/synth.h"

/* Flops (2 per multiply-add) of a convolution as the reference computes it on one position's
 * nx x ny buffer. */
static double conv_flops(const hc_conv *c, int nx, int ny)
{
    double oc = c->out_c, ic = c->in_c;
    if ((c->ky == 3 && c->kx == 3) || (c->ky == 5 && c->kx == 5)) {
        int step = c->ky == 3 ? 4 : 2;
        double tiles = (double)((nx + step - 1) / step) * ((ny + step - 1) / step);
        return 2.0 * 36.0 * oc * ic * tiles;
    }
    return 2.0 * oc * ic * c->ky * c->kx * nx * ny;
}

static double stack_flops(const hc_block *b, int n, int nx, int ny)
{
    double f = 0, hw = (double)nx * ny;
    for (int i = 0; i < n; i++, b++)
        switch (b->kind) {
        case HC_BLOCK_ORDINARY:
            f += conv_flops(&b->ordinary.regular_conv, nx, ny) + conv_flops(&b->ordinary.final_conv, nx, ny);
            break;
        case HC_BLOCK_GPOOL:
            f += conv_flops(&b->gpool.regular_conv, nx, ny) + conv_flops(&b->gpool.gpool_conv, nx, ny) +
                 conv_flops(&b->gpool.final_conv, nx, ny);
            break;
        case HC_BLOCK_NESTED_BOTTLENECK:
            f += conv_flops(&b->nbt.pre_conv, nx, ny) + conv_flops(&b->nbt.post_conv, nx, ny) +
                 stack_flops(b->nbt.blocks, b->nbt.num_blocks, nx, ny);
            break;
        case HC_BLOCK_ATTENTION: {
            const hc_attn_block *a = &b->attn;
            f += 2.0 * hw * ((double)a->q_proj.in_c * (a->q_proj.out_c + a->k_proj.out_c + a->v_proj.out_c) +
                             (double)a->out_proj.in_c * a->out_proj.out_c);
            f += 2.0 * hw * hw * a->num_heads * (double)(a->q_head_dim + a->v_head_dim);
            break;
        }
        case HC_BLOCK_FFN:
            f += 2.0 * hw * ((double)b->ffn.linear1.in_c * 2 * b->ffn.ffn_c + (double)b->ffn.linear2.in_c * b->ffn.linear2.out_c);
            break;
        }
    return f;
}

static double net_flops(const hc_net *net, int nx, int ny)
{
    const hc_trunk *t = &net->trunk;
    return conv_flops(&t->initial_conv, nx, ny) + stack_flops(t->blocks, t->num_blocks, nx, ny) +
           conv_flops(&net->policy.p1_conv, nx, ny) + conv_flops(&net->policy.g1_conv, nx, ny) +
           conv_flops(&net->policy.p2_conv, nx, ny) + conv_flops(&net->value.v1_conv, nx, ny) +
           conv_flops(&net->value.ownership_conv, nx, ny);
}

/* positions/s of spec at batch B (threads), 0 when it cannot run (the reason printed) */
static double rate(const char *spec, const hc_net *net, int nx, int ny, int B, int threads, double min_s)
{
    hc_err err = {0};
    size_t hw = (size_t)nx * ny, cin = (size_t)net->num_input_c, cg = (size_t)net->num_input_global_c;
    size_t cm = (size_t)net->num_input_meta_c;
    float *sp = malloc((size_t)B * cin * hw * sizeof(float));
    float *gl = calloc((size_t)B * (cg + 1), sizeof(float));
    float *meta = cm ? calloc((size_t)B * cm, sizeof(float)) : NULL;
    unsigned seed = 12345;
    for (size_t i = 0; sp && i < (size_t)B * cin * hw; i++) {
        seed = seed * 1103515245u + 12345u;
        sp[i] = (i / hw) % cin == 0 ? 1.0f : (float)((seed >> 16) & 1);
    }
    for (size_t i = 0; gl && i < (size_t)B * cg; i++)
        gl[i] = 0.25f;
    hc_backend b = {0};
    hc_raw_heads *out = hc_raw_heads_new(B, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
    double r = 0;
    if (!sp || !gl || !out || hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = nx,
                                                                               .ny = ny, .max_batch = B,
                                                                               .threads = threads}, &err)) {
        printf("# %s %s batch %d: %s\n", net->name, spec, B, err.msg);
    } else {
        int ok = hc_backend_eval(&b, B, sp, gl, meta, out, &err) == 0; /* warm-up */
        double t0 = hc_now_s(), el = 0;
        long evals = 0;
        while (ok && (el < min_s || evals < 3)) {
            ok = hc_backend_eval(&b, B, sp, gl, meta, out, &err) == 0;
            evals++;
            el = hc_now_s() - t0;
        }
        if (!ok)
            printf("# %s %s batch %d: %s\n", net->name, spec, B, err.msg);
        else
            r = (double)evals * B / el;
        hc_backend_close(&b);
    }
    hc_raw_heads_free(out);
    free(sp);
    free(gl);
    free(meta);
    return r;
}

int main(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *te = getenv("HC_BENCH_CPU_THREADS");
    int cpu_threads = te && atoi(te) > 0 ? atoi(te) : (int)(ncpu > 0 ? ncpu : 1);
    static const char *const shared[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz",
                                         "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                         "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    printf("| net (19x19) | ref32 %d threads pos/s | cuda:ref32 pos/s | cuda:fp32 pos/s | cuda:ref32 / ref32 | "
           "GEMM TFLOP/s ref32 | cuda:ref32 | cuda:fp32 |\n",
           cpu_threads);
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int ni = -1; ni < 3; ni++) {
        hc_err err = {0};
        hc_net *net = NULL;
        if (ni < 0) {
            hc_synth_spec s;
            if (hc_synth_preset("b18c384nbt", &s, &err) == 0)
                net = hc_synth_net(&s, &err);
        } else {
            const char *p = hc_shared(shared[ni]);
            if (!p) {
                printf("# %s absent\n", shared[ni]);
                continue;
            }
            net = hc_net_load(p, &err);
        }
        if (!net) {
            printf("# %s: %s\n", ni < 0 ? "b18c384nbt" : shared[ni], err.msg);
            continue;
        }
        hc_net_reduce_activations(net);
        int big = ni < 0;
        double fl = net_flops(net, 19, 19);
        double cpu = rate("ref32", net, 19, 19, big ? 4 * cpu_threads : 16 * cpu_threads, cpu_threads, big ? 4.0 : 2.0);
        double gr = rate("cuda:ref32", net, 19, 19, 256, 1, 2.0);
        double gf = rate("cuda:fp32", net, 19, 19, 256, 1, 2.0);
        printf("| %s | %.0f | %.0f | %.0f | %.1fx | %.2f | %.2f | %.2f |\n", big ? "synth b18c384nbt" : net->name, cpu,
               gr, gf, cpu > 0 ? gr / cpu : 0, cpu * fl * 1e-12, gr * fl * 1e-12, gf * fl * 1e-12);
        fflush(stdout);
        hc_net_free(net);
    }
    return 0;
}
