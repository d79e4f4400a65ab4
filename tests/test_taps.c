/* Taps: ref32 against itself is zero at every layer; against emulate:fp16 every layer differs
 * and the first divergent layer is the same across two runs; the recorder reassembles rows
 * computed by several threads; halfcheck taps prints the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/engine.h"
#include "harness/eval/evaluate.h"
#include <sys/wait.h>

#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "backends/profile.h"
#include "harness/run/taps.h"

static hc_tapcmp *cmp_run(const hc_net *net, const hc_position *ps, size_t n, const char *a, const char *b,
                          int batch, hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(10, 14);
    return hc_taps_compare(net, ps, n, &s, a, b, batch, err);
}

static void test_threads(const hc_net *net)
{
    /* the same 4 rows by one thread and by two: the recorders must hold the same tensors */
    int B = 4, hw = 140;
    hc_err err = {0};
    float *sp = calloc((size_t)B * net->num_input_c * hw, sizeof(float));
    float *gl = calloc((size_t)B * net->num_input_global_c, sizeof(float));
    for (int b = 0; b < B; b++)
        for (int c = 0; c < net->num_input_c; c++)
            for (int p = 0; p < hw; p++)
                sp[((size_t)b * net->num_input_c + c) * hw + p] =
                    c == 0 ? 1.0f : (float)(((p * 7 + c * 3 + b * 5) % 11) == 0);
    hc_engine *e1 = hc_engine_new(net, B, 10, 14, 1, &err), *e2 = hc_engine_new(net, B, 10, 14, 2, &err);
    hc_taprec *r1 = hc_taprec_new(B, &err), *r2 = hc_taprec_new(B, &err);
    hc_raw_heads *h = hc_raw_heads_new(B, 10, 14, net->num_policy_c, net->num_score_value_c, &err);
    if (!e1 || !e2 || !r1 || !r2 || !h) {
        hc_check("taps-3.1", 0, "%s", err.msg);
    } else {
        hc_engine_set_hook(e1, hc_taprec_hook, r1);
        hc_engine_set_hook(e2, hc_taprec_hook, r2);
        hc_engine_eval(e1, B, sp, gl, NULL, h, &err);
        hc_engine_eval(e2, B, sp, gl, NULL, h, &err);
        int same = hc_taprec_count(r1) == hc_taprec_count(r2) && hc_taprec_count(r1) > 10;
        const char *bad = "";
        for (int i = 0; same && i < hc_taprec_count(r1); i++) {
            const hc_taprec_layer *a = hc_taprec_layer_at(r1, i), *b = hc_taprec_find(r2, a->name);
            same = b && a->rows == B && b->rows == B &&
                   memcmp(a->data, b->data, (size_t)B * a->channels * a->hw * sizeof(float)) == 0;
            if (!same)
                bad = a->name;
        }
        hc_check("taps-3.1", same, "1 vs 2 threads: layer %s differs (%d vs %d layers)", bad, hc_taprec_count(r1),
                 hc_taprec_count(r2));
        /* the recorder's [row][channel][hw] layout: row 2 of the trunk tip equals a batch-1 eval of row 2 */
        hc_engine *e3 = hc_engine_new(net, 1, 10, 14, 1, &err);
        hc_taprec *r3 = hc_taprec_new(1, &err);
        if (e3 && r3) {
            hc_engine_set_hook(e3, hc_taprec_hook, r3);
            hc_engine_eval(e3, 1, sp + (size_t)2 * net->num_input_c * hw, gl, NULL, h, &err);
            const hc_taprec_layer *a = hc_taprec_find(r1, net->trunk.tip_bn.name),
                                  *b = hc_taprec_find(r3, net->trunk.tip_bn.name);
            hc_check("taps-3.2",
                     a && b && memcmp(a->data + (size_t)2 * a->channels * hw, b->data,
                                      (size_t)a->channels * hw * sizeof(float)) == 0,
                     "row 2 of a batch of 4 differs from the same row alone");
        }
        hc_taprec_free(r3);
        hc_engine_free(e3);
    }
    hc_raw_heads_free(h);
    hc_taprec_free(r1);
    hc_taprec_free(r2);
    hc_engine_free(e1);
    hc_engine_free(e2);
    free(sp);
    free(gl);
}

int main(void)
{
    hc_plan(16);
    const char *np0 = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char *np = np0 ? strdup(np0) : NULL;
    hc_err err = {0};
    hc_net *net = np ? hc_net_load(np, &err) : NULL;
    const char *pp = hc_shared("positions/size10x14.jsonl.gz");
    hc_position *ps = NULL;
    size_t n = 0;
    if (!net || !pp || hc_positions_load(pp, &ps, &n, &err)) {
        hc_skip_rest("taps", "shared g170 net or 10x14 positions absent");
        hc_net_free(net);
        free(np);
        return hc_test_exit();
    }
    hc_net_reduce_activations(net);
    size_t m = n < 12 ? n : 12;
    hc_layer_ref *ls = NULL;
    int nl = 0;
    hc_net_layers(net, &ls, &nl, &err);
    free(ls);

    hc_tapcmp *self = cmp_run(net, ps, m, "ref32", "ref32", 3, &err);
    if (hc_check("taps-1.1", self != NULL, "%s", err.msg)) {
        int zero = hc_tapcmp_count(self) == nl;
        for (int i = 0; zero && i < hc_tapcmp_count(self); i++) {
            const hc_tapdiff *d = hc_tapcmp_at(self, i);
            zero = d->n > 0 && d->max_abs == 0 && d->sum_abs == 0 && !d->nonfinite && !d->missing;
        }
        hc_check("taps-1.2", zero, "ref32 vs ref32 must be zero at all %d layers (%d compared)", nl,
                 hc_tapcmp_count(self));
        hc_check("taps-1.3", hc_tapcmp_first_divergent(self, 0.0) == -1, "no layer diverges even at threshold 0");
    } else {
        hc_fail_n("taps-1.2", 2, "not run: no ref32-vs-ref32 comparison (taps-1.1 failed)");
    }
    hc_tapcmp_free(self);

    hc_tapcmp *a = cmp_run(net, ps, m, "ref32", "emulate:fp16", 1, &err);
    hc_tapcmp *b = cmp_run(net, ps, m, "ref32", "emulate:fp16", 4, &err);
    if (hc_check("taps-2.1", a && b, "%s", err.msg)) {
        int all = hc_tapcmp_count(a) == nl;
        for (int i = 0; all && i < hc_tapcmp_count(a); i++) {
            const hc_tapdiff *d = hc_tapcmp_at(a, i);
            /* fp16 storage: nonzero error, and relative error within a few fp16 ulps (2^-11) */
            all = d->max_abs > 0 && hc_tapdiff_max_rel(d) < 1e-2 && hc_tapdiff_mean_rel(d) > 1e-5;
        }
        hc_check("taps-2.2", all, "fp16 must differ a little at every layer");
        int fa = hc_tapcmp_first_divergent(a, 8e-4), fb = hc_tapcmp_first_divergent(b, 8e-4);
        hc_check("taps-2.3", fa >= 0 && fa == fb, "first divergent layer: %s vs %s",
                 fa >= 0 ? hc_tapcmp_at(a, fa)->name : "none", fb >= 0 ? hc_tapcmp_at(b, fb)->name : "none");
        int same = hc_tapcmp_count(a) == hc_tapcmp_count(b);
        for (int i = 0; same && i < hc_tapcmp_count(a); i++)
            same = hc_tapcmp_at(a, i)->max_abs == hc_tapcmp_at(b, i)->max_abs &&
                   hc_tapcmp_at(a, i)->sum_abs == hc_tapcmp_at(b, i)->sum_abs;
        hc_check("taps-2.4", same, "batch 1 and batch 4 must give the same per-layer errors");
        hc_check("taps-2.5", hc_tapcmp_first_divergent(a, 1.0) == -1, "nothing diverges at threshold 1");
    } else {
        hc_fail_n("taps-2.2", 4, "not run: no fp16 comparison (taps-2.1 failed)");
    }
    hc_tapcmp_free(a);
    hc_tapcmp_free(b);

    hc_tapcmp *bad = cmp_run(net, ps, m, "ref32", "mutate:mask-stride:ref32", 1, &err);
    hc_check("taps-2.6", !bad && strstr(err.msg, "has no layer taps"), "%s", bad ? "accepted" : err.msg);
    hc_tapcmp_free(bad);

    test_threads(net);

    /* precision sensitivity: one layer at a time */
    hc_eval_settings es = hc_eval_settings_default(10, 14);
    hc_prec_row *rows = NULL, full;
    int nr = 0;
    if (hc_check("taps-5.1", hc_taps_precision(net, ps, 6, &(hc_prec_opts){.settings = &es, .profile = "fp16", .batch = 6, .threads = 2}, &rows, &nr,
                                                   &full, &err) == 0, "%s",
                 err.msg)) {
        double mx = 0;
        int nonzero = 0;
        for (int i = 0; i < nr; i++) {
            nonzero += rows[i].winrate_avg > 0 || rows[i].policy_kl_avg > 0;
            mx = hc_max_nan(mx, rows[i].winrate_avg);
        }
        hc_check("taps-5.2", nr == nl + 1 && strcmp(rows[nl].name, "input") == 0, "%d rows for %d layers", nr, nl);
        hc_check("taps-5.3", nonzero > nl / 2 && full.winrate_avg > 0 && mx < full.winrate_avg * 2,
                 "%d layers with an error; largest single %g vs whole %g", nonzero, mx, full.winrate_avg);
        free(rows);
    } else {
        hc_fail_n("taps-5.2", 2, "not run: no precision sensitivity rows (taps-5.1 failed)");
    }

    const char *bin = getenv("HALFCHECK");
    if (bin && *bin) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "%s taps --net %s --positions %s --nn 10x14 --backend ref32 --backend emulate:bf16 --limit 3 "
                 "--threshold 1e-3",
                 bin, np, pp);
        FILE *f = popen(cmd, "r");
        char line[512];
        int rows = 0, first = 0;
        while (f && fgets(line, sizeof line, f)) {
            rows += strstr(line, "rconv") != NULL;
            first += strstr(line, "first divergent layer (max_rel > 0.001): conv1") != NULL;
        }
        int rc = f ? pclose(f) : -1;
        /* A divergent layer found: exit 1, as a failed tier for run. */
        hc_check("taps-4.1", rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1 && rows > 20 && first == 1,
                 "halfcheck taps: status %d (want 1), %d rconv rows, first divergent conv1 %d", rc, rows, first);
        const char *tp = hc_shared("nets/b7c96h3tfrs-test5-cnorm.bin.gz");
        if (tp) {
            snprintf(cmd, sizeof cmd, "%s taps --net %s --show-profile coreml-tiers", bin, tp);
            f = popen(cmd, "r");
            int q32 = 0, lines = 0;
            while (f && fgets(line, sizeof line, f)) {
                lines++;
                q32 += strncmp(line, "model.blocks.0.q_proj ", 22) == 0 && strstr(line, " fp32  fp32  fp32 ") &&
                       strstr(line, "coreml-tiers.yaml:") && strstr(line, "attn_q");
            }
            rc = f ? pclose(f) : -1;
            hc_check("taps-4.2", rc == 0 && q32 == 1 && lines > 20,
                     "show-profile: rc %d, %d lines, q_proj fp32 by a coreml rule %d", rc, lines, q32);
        }
    } else {
        hc_skip("taps-4.1", "HALFCHECK not set");
    }

    hc_positions_free(ps, n);
    hc_net_free(net);
    free(np);
    return hc_test_exit();
}
