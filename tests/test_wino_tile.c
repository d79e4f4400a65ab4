/* refs/wino_tile.inc (the Winograd tile arithmetic cuda:emulate's GPU kernels run) against the CPU's
 * convolutions: the GPU's pipeline replayed on the CPU (one input transform per (channel, tile),
 * the tile GEMMs as one fmaf chain per output, one output transform per (channel, tile)) must give
 * hc_kconv_run's bits for F(4x4,3x3), F(2x2,5x5) and F(2x2,3x3), with and without the emulation's
 * fp16 tiles, on boards whose tiles cross the buffer's edge, stored and accumulated; and a moved
 * rounding point (the products left unrounded, cuda:emulate's planted fault tiles) must not. And what
 * cuda:emulate asks per convolution (hc_emulate_conv_mode, prepared by hc_engine_conv_prepare):
 * fp16 tiles on 3x3 convolutions only, F(2x2,3x3) where the profile says f2x2 (fp16-winograd2
 * too). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/emulate.h"
#include "refs/engine.h"
#include "refs/gemm.h"
#include "hc_test.h"
#include "refs/kernels.h"
#include "backends/profile.h"
#include "refs/round.h"
#include "harness/model/synth.h"

#define HC_WT_FN static inline
#define HC_WT_HOST static inline
#define HC_WT_ROUND16(x) hc_round_fp16(x)
#include "refs/wino_tile.inc"

static unsigned rng = 12345u;
static float frand(float scale)
{
    rng = rng * 1103515245u + 12345u;
    return ((float)((rng >> 8) & 0xffff) / 65536.0f - 0.5f) * scale;
}

/* The GPU's wino_conv on the CPU: hc_wt_in_at for every (channel, tile), M[k] = U[k] V[k] by
 * hc_gemm_ref (one fmaf chain over the input channels, as hcref::gemm), hc_wt_out_at for every
 * (channel, tile). round_m: the products' rounding (0 plants the moved rounding point). */
static void gpu_replay(int kind, const float *U, int ic, int oc, int B, int nx, int ny, const float *in, float *out,
                       int accumulate, int tiles16, int round_m)
{
    hc_wt_geom w = hc_wt_geom_make(kind, B, nx, ny);
    float *V = malloc((size_t)w.nk * ic * w.G * sizeof(float)), *M = malloc((size_t)w.nk * oc * w.G * sizeof(float));
    if (!V || !M) {
        free(V);
        free(M);
        return;
    }
    for (long long idx = 0; idx < (long long)ic * w.G; idx++)
        hc_wt_in_at(&w, ic, in, V, idx, tiles16);
    for (int k = 0; k < w.nk; k++)
        hc_gemm_ref(oc, (int)w.G, ic, U + (size_t)k * oc * ic, (size_t)ic, 1, V + (size_t)k * ic * w.G,
                    (size_t)w.G, M + (size_t)k * oc * w.G, (size_t)w.G, 0);
    for (long long idx = 0; idx < (long long)oc * w.G; idx++)
        hc_wt_out_at(&w, oc, M, out, accumulate, idx, tiles16 && round_m);
    free(V);
    free(M);
}

typedef struct shape {
    int ic, oc, B, nx, ny;
} shape;

/* One convolution: the CPU engine's preparation (hc_engine_conv_prepare with the emulation's
 * mode) and run, against the replay; returns the number of differing floats (-1: setup failed),
 * *planted_differs whether the planted replay differs from the CPU somewhere. */
static long one_case(int ksize, int f2, int tiles16, int accumulate, const shape *s, int *planted_differs,
                     char *why, size_t why_n)
{
    int ic = s->ic, oc = s->oc, B = s->B, nx = s->nx, ny = s->ny, hw = nx * ny;
    size_t nin = (size_t)ic * B * hw, nout = (size_t)oc * B * hw;
    float *w = malloc((size_t)oc * ic * ksize * ksize * sizeof(float)), *in = malloc(nin * sizeof(float));
    float *cpu = malloc(nout * sizeof(float)), *gpu = malloc(nout * sizeof(float)), *pl = malloc(nout * sizeof(float));
    float *ws = NULL;
    long diff = -1;
    *planted_differs = 0;
    hc_conv c;
    memset(&c, 0, sizeof c);
    hc_kconv k;
    memset(&k, 0, sizeof k);
    hc_err err = {0};
    int prepared = 0;
    if (!w || !in || !cpu || !gpu || !pl) {
        snprintf(why, why_n, "out of memory");
        goto done;
    }
    /* fp16 weights (the emulation rounds the net's), inputs as a board in a larger buffer: a
     * 13x13 board holds values, the buffer's rest 0 except row 1 (off-board garbage is still
     * convolved, as the engine does) */
    for (size_t i = 0; i < (size_t)oc * ic * ksize * ksize; i++)
        w[i] = hc_round_fp16(frand(0.6f));
    for (size_t i = 0; i < nin; i++) {
        int p = (int)(i % (size_t)hw), x = p % nx, y = p / nx, b = (int)(i / (size_t)hw) % B;
        int on = b == 0 || (x < 13 && y < 13);
        in[i] = on ? hc_round_fp16(frand(8.0f)) : 0.0f;
    }
    for (size_t i = 0; i < nout; i++)
        cpu[i] = gpu[i] = pl[i] = accumulate ? hc_round_fp16(frand(4.0f)) : 0.0f;
    c.name = "conv";
    c.w = w;
    c.out_c = oc;
    c.in_c = ic;
    c.ky = c.kx = ksize;
    int mode = (tiles16 ? HC_CONV_TILES_FP16 : 0) | (f2 ? HC_CONV_WINO_F2 : 0);
    if (hc_engine_conv_prepare(&k, &c, 1, mode, &err)) {
        snprintf(why, why_n, "prepare: %s", err.msg);
        goto done;
    }
    prepared = 1;
    ws = malloc(hc_kconv_workspace(&k, B, nx, ny) * sizeof(float) + 64);
    if (!ws) {
        snprintf(why, why_n, "out of memory");
        goto done;
    }
    hc_kconv_run(&k, B, nx, ny, in, cpu, accumulate, ws);
    int kind = k.wino2 ? HC_WT_F2 : ksize == 5 ? HC_WT_F2_5 : HC_WT_F4;
    const float *U = k.wino2 ? k.wino2 : k.wino;
    if (!U || (f2 && !k.wino2) || k.tiles_fp16 != (tiles16 && ksize == 3)) {
        snprintf(why, why_n, "prepared: wino %p, wino2 %p, tiles %d", (void *)k.wino, (void *)k.wino2, k.tiles_fp16);
        goto done;
    }
    gpu_replay(kind, U, ic, oc, B, nx, ny, in, gpu, accumulate, k.tiles_fp16, 1);
    gpu_replay(kind, U, ic, oc, B, nx, ny, in, pl, accumulate, k.tiles_fp16, 0);
    diff = 0;
    size_t first = 0;
    for (size_t i = 0; i < nout; i++) {
        if (memcmp(&cpu[i], &gpu[i], sizeof(float)) != 0 && diff++ == 0)
            first = i;
        if (memcmp(&cpu[i], &pl[i], sizeof(float)) != 0)
            *planted_differs = 1;
    }
    if (diff)
        snprintf(why, why_n, "%ld of %zu floats differ, first at %zu: cpu %.9g, replay %.9g", diff, nout, first,
                 cpu[first], gpu[first]);
done:
    if (prepared)
        hc_kconv_free(&k);
    free(w);
    free(in);
    free(cpu);
    free(gpu);
    free(pl);
    free(ws);
    return diff;
}

/* hc_wt_in_tile / hc_wt_out_tile for F(2x2,3x3) against the textbook matrices (B^T d B,
 * A^T m A) in double on small integers, where every float step is exact: the formulas are the
 * transforms, not just self-consistent. */
static int f2_matrices_ok(void)
{
    static const double BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
    static const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
    for (int trial = 0; trial < 50; trial++) {
        float d[16], v[16], m[16], y[4];
        for (int i = 0; i < 16; i++) {
            d[i] = (float)((int)(frand(64.0f)));
            m[i] = (float)((int)(frand(64.0f)));
        }
        hc_wt_in_tile(HC_WT_F2, d, v, 0);
        hc_wt_out_tile(HC_WT_F2, m, y, 0);
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                double s = 0;
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        s += BT[r][i] * d[i * 4 + j] * BT[c][j];
                if (s != v[r * 4 + c])
                    return 0;
            }
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                double s = 0;
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        s += AT[r][i] * m[i * 4 + j] * AT[c][j];
                if (s != y[r * 2 + c])
                    return 0;
            }
    }
    return 1;
}

/* fp16 tiles in 3x3 convolutions only; F(2x2,3x3) weights (on the fp16 grid with fp16 tiles)
 * when f2 */
static int conv_prepared_ok(const hc_emulate *em, const hc_conv *c, int f2, char *why, size_t why_n)
{
    hc_kconv k;
    hc_err err = {0};
    int mode = hc_emulate_conv_mode(em, c), three = c->ky == 3 && c->kx == 3;
    if (hc_engine_conv_prepare(&k, c, 1, mode, &err)) {
        snprintf(why, why_n, "%s: prepare: %s", c->name, err.msg);
        return 0;
    }
    int ok = k.tiles_fp16 == three && !k.acc_fp16 && (k.wino2 != NULL) == (f2 && three);
    for (size_t i = 0; ok && k.wino2 && i < (size_t)16 * k.oc * k.ic; i++)
        ok = hc_round_fp16(k.wino2[i]) == k.wino2[i];
    for (size_t i = 0; ok && k.wino && !k.wino2 && three && i < (size_t)36 * k.oc * k.ic; i++)
        ok = hc_round_fp16(k.wino[i]) == k.wino[i];
    if (!ok)
        snprintf(why, why_n, "%s (%dx%d, mode %d): tiles %d, acc %d, F(2x2) weights %s", c->name, c->ky, c->kx, mode,
                 k.tiles_fp16, k.acc_fp16, k.wino2 ? "yes" : "no");
    hc_kconv_free(&k);
    return ok;
}

/* cuda:emulate's view of the emulation on a synthetic convnet (5x5 initial conv, 3x3 blocks, 1x1
 * heads): accepted profiles and the modes of each kind of convolution. */
static void modes_checks(void)
{
    hc_err err = {0};
    hc_synth_spec sp;
    hc_synth_spec_default(&sp);
    sp.version = 11;
    sp.act = -1;
    snprintf(sp.blocks, sizeof sp.blocks, "res,gpool,nbt(res)");
    hc_net *net = hc_synth_check(&sp, &err) == 0 ? hc_synth_net(&sp, &err) : NULL;
    if (!net) {
        hc_fail_n("wino-tile-3", 3, "synth: %s", err.msg);
        return;
    }
    static const char f2yaml[] = "name: f2x2-tiles16\nstorage: fp16\nweights: fp16\nwinogradTiles: fp16\n"
                                 "winograd: f2x2\npool: fp16\n";
    for (int k = 0; k < 2; k++) {
        char name[32], why[300] = "";
        snprintf(name, sizeof name, "wino-tile-3.%d", k + 1);
        hc_profile *pr = k ? hc_profile_parse(f2yaml, sizeof f2yaml - 1, "f2x2-tiles16.yaml", &err)
                           : hc_profile_load("fp16-winograd", &err);
        hc_emulate *em = pr ? hc_emulate_open_profile(pr, net, 9, 9, 1, 1, NULL, 0, &err) : NULL;
        int ok = em != NULL;
        if (!ok)
            snprintf(why, sizeof why, "open: %s", err.msg);
        const hc_net *rn = em ? hc_emulate_net(em) : NULL;
        const hc_block *b0 = rn ? &rn->trunk.blocks[0] : NULL;
        ok = ok && b0 && b0->kind == HC_BLOCK_ORDINARY && rn->trunk.initial_conv.ky == 5 &&
             conv_prepared_ok(em, &rn->trunk.initial_conv, k, why, sizeof why) &&
             conv_prepared_ok(em, &b0->ordinary.regular_conv, k, why, sizeof why) &&
             conv_prepared_ok(em, &b0->ordinary.final_conv, k, why, sizeof why) &&
             conv_prepared_ok(em, &rn->policy.p1_conv, k, why, sizeof why);
        hc_check(name, ok, "%s: %s", k ? "f2x2 with fp16 tiles" : "fp16-winograd", why);
        hc_emulate_close(em);
        hc_profile_free(pr);
    }
    /* fp16-winograd2 (the built-in): its 3x3 convolutions by F(2x2,3x3) with fp16 tiles */
    hc_emulate *em = hc_emulate_open("fp16-winograd2", net, 9, 9, 1, 1, &err);
    char why[300] = "";
    const hc_net *rn = em ? hc_emulate_net(em) : NULL;
    hc_check("wino-tile-3.3",
             rn && rn->trunk.blocks[0].kind == HC_BLOCK_ORDINARY &&
                 conv_prepared_ok(em, &rn->trunk.blocks[0].ordinary.regular_conv, 1, why, sizeof why),
             "fp16-winograd2: %s%s", em ? "" : err.msg, why);
    hc_emulate_close(em);
    hc_net_free(net);
}

int main(void)
{
    /* 19x19 buffer (a 13x13 board in it), odd channel counts, boards whose last tile row and
     * column are partial (9x9: 9 = 2*4 + 1; 10x14 rectangular), a single row */
    static const shape shapes[] = {
        {7, 5, 3, 19, 19}, {13, 17, 2, 9, 9}, {5, 3, 2, 10, 14}, {22, 9, 1, 7, 5},
    };
    enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };
    /* kernel, F(2x2,3x3), fp16 tiles */
    static const int cases[][3] = {{3, 0, 0}, {3, 0, 1}, {3, 1, 0}, {3, 1, 1}, {5, 0, 0}, {5, 0, 1}};
    enum { N_CASES = sizeof cases / sizeof cases[0] };
    hc_plan(N_CASES * 2 + 1 + 2 + 3);
    for (int ci = 0; ci < N_CASES; ci++)
        for (int acc = 0; acc < 2; acc++) {
            char name[64], why[256] = "", bad[400] = "";
            int ok = 1, caught = 0, tiles = cases[ci][2] && cases[ci][0] == 3;
            for (int si = 0; si < N_SHAPES; si++) {
                int pd = 0;
                long d = one_case(cases[ci][0], cases[ci][1], cases[ci][2], acc, &shapes[si], &pd, why, sizeof why);
                caught |= pd;
                if (d != 0 && ok) {
                    ok = 0;
                    snprintf(bad, sizeof bad, "%dx%d ic %d oc %d batch %d: %s", shapes[si].nx, shapes[si].ny,
                             shapes[si].ic, shapes[si].oc, shapes[si].B, why);
                }
            }
            snprintf(name, sizeof name, "wino-tile-1.%d", ci * 2 + acc + 1);
            /* with fp16 tiles the planted replay (products unrounded) must differ somewhere;
             * without, the plant changes nothing and the replay must still match */
            const char *what = cases[ci][1] ? "F(2x2,3x3)" : cases[ci][0] == 5 ? "F(2x2,5x5)" : "F(4x4,3x3)";
            hc_check(name, ok && (tiles ? caught : !caught), "%s, fp16 tiles asked %d, %s: %s", what, cases[ci][2],
                     acc ? "accumulated" : "stored",
                     !ok     ? bad
                     : tiles ? "the planted unrounded products were not caught"
                             : "the plant changed fp32 tiles (5x5: the CPU keeps them fp32)");
        }
    hc_check("wino-tile-2.1", f2_matrices_ok(), "F(2x2,3x3) tile transforms differ from B^T d B / A^T m A");
    /* the tile functions round exactly where hc_round_fp16 does: a value between two fp16
     * neighbours comes out on the grid */
    {
        float d[36] = {0}, v[36], m[36] = {0}, y[16];
        d[7] = 1.0f + 1.0f / 4096.0f; /* not an fp16 value; B^T d B keeps multiples of it */
        m[7] = 1.0f + 1.0f / 4096.0f;
        hc_wt_in_tile(HC_WT_F4, d, v, 1);
        hc_wt_out_tile(HC_WT_F4, m, y, 1);
        int on_grid = 1;
        for (int k = 0; k < 36; k++)
            on_grid &= hc_round_fp16(v[k]) == v[k];
        hc_check("wino-tile-2.2", on_grid && y[0] == 1.0f,
                 "fp16 tiles: V not on the fp16 grid or M not rounded before A^T (y[0] %.9g, want 1)", y[0]);
        hc_wt_out_tile(HC_WT_F4, m, y, 0);
        hc_check("wino-tile-2.3", y[0] == 1.0f + 1.0f / 4096.0f, "fp32 tiles: M rounded (y[0] %.9g)", y[0]);
    }
    modes_checks();
    return hc_test_exit();
}
