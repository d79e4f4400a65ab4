/* halfcheck headroom (harness/run/headroom.h, docs/EMULATION.md "Headroom"): on a synthetic net of every
 * block kind with a spatial RMSNorm tip, nothing overflows fp16; scaled through the model writer so that
 * one convolution's output passes 65504, that convolution is named (exit 1); scaled so that only the
 * tip's sum of squares passes it, the tip is named with "sum of squares" (exit 1, and 0 in bf16), and the
 * emulation with only its norm sums in fp16 fails at that layer too (the same verdict by another
 * computation), while it passes the unscaled net. On the shared nets at 19x19: nothing overflows, every
 * tap has a stored figure, the bounds bound their sums, attention figures keep their relations, and a
 * figure's position, measured alone, gives the figure. Usage errors exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/run/headroom.h"
#include "harness/model/heads.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "harness/model/synth.h"

static const char *dir;

/* The figure (layer, what), or NULL. */
static const hc_headroom_fig *fig(const hc_headroom *h, const char *layer, const char *what)
{
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        if (!strcmp(f->layer, layer) && !strcmp(f->what, what))
            return f;
    }
    return NULL;
}

static hc_headroom *measure(const hc_net *net, const hc_position *ps, size_t n, hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(19, 19);
    hc_headroom_opts o = {.settings = &s, .batch = 2};
    return hc_headroom_measure(net, ps, n, &o, err);
}

/* `halfcheck headroom` on net, its exit status; its output in dir/NAME.txt. */
static int cli(const char *net, const char *name, const char *extra)
{
    return hc_shf("%s headroom --net %s --positions %s/pos19.jsonl.gz --nn 19x19 %s > %s/%s.txt 2>&1",
                  hc_halfcheck_bin(), net, dir, extra, dir, name);
}

static const char *last_line(const char *name)
{
    static char buf[1024];
    const char *t = hc_text(hc_path(dir, name));
    const char *end = t + strlen(t);
    while (end > t && end[-1] == '\n')
        end--;
    const char *s = end;
    while (s > t && s[-1] != '\n')
        s--;
    snprintf(buf, sizeof buf, "%.*s", (int)(end - s), s);
    return buf;
}

static void scale(float *w, size_t n, float k)
{
    for (size_t i = 0; i < n; i++)
        w[i] *= k;
}

static void synthetic(const hc_position *ps, size_t n)
{
    hc_err err = {0};
    hc_synth_spec sp;
    hc_synth_spec_default(&sp);
    sp.trunk_c = 16;
    snprintf(sp.blocks, sizeof sp.blocks, "res,gpool,nbt(res),attn,ffn");
    sp.tip = HC_TRUNK_NORM_RMSNORM;
    sp.tip_rms_spatial = 1;
    sp.meta = 1;
    char base[600], conv[600], tip[600];
    snprintf(base, sizeof base, "%s/base.bin.gz", dir);
    snprintf(conv, sizeof conv, "%s/conv.bin.gz", dir);
    snprintf(tip, sizeof tip, "%s/tip.bin.gz", dir);
    /* the scaled nets go through the writer and the reader, as a user's file would */
    hc_net *net = hc_synth_write(&sp, base, 1, &err) == 0 ? hc_net_load(base, &err) : NULL;
    if (!net) {
        hc_fail_n("hr-1", 12, "synthetic net: %s", err.msg);
        return;
    }
    hc_net_reduce_activations(net);
    hc_headroom *h = measure(net, ps, n, &err);
    char tipname[256];
    snprintf(tipname, sizeof tipname, "%s", net->trunk.tip_rmsnorm.name);
    const hc_headroom_fig *sq = h ? fig(h, tipname, "sum of squares") : NULL;
    double lim = hc_headroom_limit(HC_TAPFMT_F16);
    hc_check("hr-1.1", h && hc_headroom_first_over(h, lim, 0) < 0 && sq && sq->value > 0 && sq->value < lim,
             "the synthetic net overflows already or lacks the tip's sum of squares: %s", h ? "" : err.msg);
    /* every block kind's figures are there */
    const char *want[][2] = {{"model.blocks.1.w1r", "pooling sum"}, {"model.blocks.3.attn.out_preproj", "softmax sum"},
                             {"model.blocks.3.norm1", "sum of squares"}, {"model.blocks.4.ffn.gate", "sum bound"},
                             {"model.blocks.2.normactconvq.conv", "sum"}, {"model.sgf_metadata_encoder.mul1", "sum"}};
    int have = 0;
    for (size_t i = 0; h && i < sizeof want / sizeof want[0]; i++)
        have += fig(h, want[i][0], want[i][1]) != NULL;
    hc_check("hr-1.2", have == 6, "%d of 6 block kinds' figures found", have);
    double sq0 = sq ? sq->value : 0;
    hc_headroom_free(h);
    hc_net_free(net);

    /* one convolution's weights times 1e6: its output passes 65504 before anything else does */
    net = hc_net_load(base, &err);
    const hc_conv *c = net ? &net->trunk.blocks[0].ordinary.regular_conv : NULL;
    if (c) {
        scale(c->w, (size_t)c->out_c * c->in_c * c->ky * c->kx, 1e6f);
        if (hc_net_write(net, conv, 1, &err))
            c = NULL;
    }
    char expect[600];
    snprintf(expect, sizeof expect, "first overflow in fp16: %s (stored ", c ? c->name : "?");
    int rc = c ? cli(conv, "conv", "") : -1;
    const char *ll = last_line("conv.txt");
    hc_check("hr-1.3", rc == 1 && !strncmp(ll, expect, strlen(expect)) && strstr(ll, "> 65504"),
             "exit %d, last line \"%s\", want \"%s...\"", rc, ll, expect);
    hc_check("hr-1.4", strstr(hc_text(hc_path(dir, "conv.txt")), "  OVERFLOW") != NULL, "no OVERFLOW mark");
    /* taps shows the same margin as a column: the overflowing convolution's f16_mgn is negative, and a
     * layer before it is not */
    double mgn = INFINITY, mgn0 = -INFINITY;
    int trc = c ? hc_shf("%s taps --net %s --positions %s/pos19.jsonl.gz --nn 19x19 --limit 2 --backend ref32 "
                         "--backend ref32 > %s/taps.txt 2>&1", hc_halfcheck_bin(), conv, dir, dir) : -1;
    for (const char *line = hc_text(hc_path(dir, "taps.txt")); line && *line;) {
        char tok[16][96];
        int nt = sscanf(line, "%95s %95s %95s %95s %95s %95s %95s %95s %95s %95s %95s %95s %95s %95s", tok[0], tok[1],
                        tok[2], tok[3], tok[4], tok[5], tok[6], tok[7], tok[8], tok[9], tok[10], tok[11], tok[12],
                        tok[13]);
        if (nt == 14 && c && !strcmp(tok[1], c->name))
            mgn = atof(tok[13]);
        if (nt == 14 && !strcmp(tok[0], "0")) /* the first layer, far below the overflow */
            mgn0 = atof(tok[13]);
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    hc_check("hr-1.13", trc == 0 && mgn < 0 && mgn0 > 0, "taps: exit %d, f16_mgn of %s %g, of the first layer %g", trc,
             c ? c->name : "?", mgn, mgn0);
    hc_net_free(net);

    /* the FFN's output projection (the last block, into the tip) times 16: the trunk stays far below
     * 65504, the spatial tip's sum of squares over 16 channels x 361 points does not */
    net = hc_net_load(base, &err);
    hc_matmul *l2 = net ? &net->trunk.blocks[4].ffn.linear2 : NULL;
    if (l2) {
        scale(l2->w, (size_t)l2->in_c * l2->out_c, 16.0f);
        if (hc_net_write(net, tip, 1, &err))
            l2 = NULL;
    }
    snprintf(expect, sizeof expect, "first overflow in fp16: %s (sum of squares ", tipname);
    rc = l2 ? cli(tip, "tip", "") : -1;
    ll = last_line("tip.txt");
    hc_check("hr-1.5", rc == 1 && !strncmp(ll, expect, strlen(expect)), "exit %d, last line \"%s\", want \"%s...\"",
             rc, ll, expect);
    rc = l2 ? cli(tip, "tip-bf16", "--format bf16") : -1;
    ll = last_line("tip-bf16.txt");
    hc_check("hr-1.6", rc == 0 && !strncmp(ll, "bf16 headroom: every layer within 2^-", 37),
             "bf16: exit %d, last line \"%s\"", rc, ll);
    /* the library's view of the same: the stored trunk far below, the sum of squares over, by ~16^2 */
    if (net)
        hc_net_reduce_activations(net);
    h = net ? measure(net, ps, n, &err) : NULL;
    const hc_headroom_fig *trunk = h ? fig(h, "model.blocks.4", "stored") : NULL;
    sq = h ? fig(h, tipname, "sum of squares") : NULL;
    int first = h ? hc_headroom_first_over(h, lim, 0) : -1;
    hc_check("hr-1.7", trunk && sq && trunk->value < lim / 64 && sq->value > lim && sq->value > 16 * sq0 &&
                           first >= 0 && hc_headroom_at(h, first) == sq,
             "trunk %g, sum of squares %g (unscaled %g)", trunk ? trunk->value : -1, sq ? sq->value : -1, sq0);
    hc_headroom_free(h);
    hc_net_free(net);

    /* Another computation of the same verdict: the emulation with only its RMSNorm sums in fp16
     * fails on the scaled net naming the tip, and passes the unscaled one. */
    FILE *f = fopen(hc_path(dir, "normsum16.yaml"), "w");
    if (f) {
        fprintf(f, "name: normsum16\ndescription: only the RMSNorm sums in fp16\nstorage: fp32\nweights: fp32\n"
                   "accum: fp32\npool: fp32\nattnScores: fp32\nsoftmax: fp32\npoolSum: fp32\nnormSum: fp16\n");
        fclose(f);
    }
    int e_tip = hc_shf("%s eval --net %s --positions %s/pos19.jsonl.gz --nn 19x19 --backend "
                       "emulate:%s/normsum16.yaml --out %s/e.out > %s/etip.txt 2>&1",
                       hc_halfcheck_bin(), tip, dir, dir, dir, dir);
    int e_base = hc_shf("%s eval --net %s --positions %s/pos19.jsonl.gz --nn 19x19 --backend "
                        "emulate:%s/normsum16.yaml --out %s/e.out > %s/ebase.txt 2>&1",
                        hc_halfcheck_bin(), base, dir, dir, dir, dir);
    const char *et = hc_text(hc_path(dir, "etip.txt"));
    hc_check("hr-1.8", e_tip != 0 && strstr(et, tipname) && strstr(et, "sum of squares"),
             "emulate (normSum fp16) on the scaled net: exit %d: %s", e_tip, et);
    hc_check("hr-1.9", e_base == 0, "emulate (normSum fp16) on the unscaled net: exit %d: %s", e_base,
             hc_text(hc_path(dir, "ebase.txt")));

    /* usage and input errors: exit 2 */
    hc_check("hr-1.10", cli(base, "badfmt", "--format fp8") == 2 &&
                            strstr(hc_text(hc_path(dir, "badfmt.txt")), "--format must be fp16 or bf16"),
             "--format fp8: %s", hc_text(hc_path(dir, "badfmt.txt")));
    hc_check("hr-1.11", cli("/nonexistent.bin.gz", "nonet", "") == 2 &&
                            strstr(hc_text(hc_path(dir, "nonet.txt")), "/nonexistent.bin.gz"),
             "a missing net: %s", hc_text(hc_path(dir, "nonet.txt")));
    rc = hc_shf("%s headroom --net %s --nn 19x19 > %s/nopos.txt 2>&1", hc_halfcheck_bin(), base, dir);
    hc_check("hr-1.12", rc == 2 && strstr(hc_text(hc_path(dir, "nopos.txt")), "positions"), "no --positions: %d %s",
             rc, hc_text(hc_path(dir, "nopos.txt")));
}

/* The shared nets on 19x19 boards. */
static void shared(const char *tag, const char *rel, const hc_position *ps, size_t n)
{
    const char *p = hc_shared(rel);
    hc_err err = {0};
    hc_net *net = p ? hc_net_load(p, &err) : NULL;
    if (!net) {
        if (p)
            hc_fail_n(tag, 6, "%s: %s", rel, err.msg);
        else
            hc_skip_n(tag, 6, "../shared/%s absent", rel);
        return;
    }
    char name[64];
    hc_net_reduce_activations(net);
    hc_headroom *h = measure(net, ps, n, &err);
    double lim = hc_headroom_limit(HC_TAPFMT_F16);
    int small = h ? hc_headroom_smallest(h, 0) : -1;
    snprintf(name, sizeof name, "%s.1", tag);
    hc_check(name, h && hc_headroom_first_over(h, lim, 0) < 0 && small >= 0 &&
                       hc_headroom_margin(hc_headroom_at(h, small)->value, lim) > 1,
             "%s: %s", rel, h ? (small >= 0 ? hc_headroom_at(h, small)->layer : "no figure") : err.msg);
    if (!h) {
        hc_fail_n(tag, 5, "no measurement");
        hc_net_free(net);
        return;
    }
    /* every figure measured, finite, with a position among the ones given */
    int bad = 0, stored = 0;
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        bad += !(f->position >= 0 && (size_t)f->position < n && isfinite(f->value) && f->value >= 0);
        stored += !strcmp(f->what, "stored");
    }
    snprintf(name, sizeof name, "%s.2", tag);
    hc_check(name, bad == 0 && stored > 40, "%d figures unmeasured or odd, %d stored figures", bad, stored);
    /* bounds bound: sum bound >= sum, pooling sum bound >= pooling sum, q.k bound >= q.k sum */
    int viol = 0;
    char where[300] = "";
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *b = hc_headroom_at(h, i);
        const char *of = !strcmp(b->what, "sum bound") ? "sum"
                       : !strcmp(b->what, "pooling sum bound") ? "pooling sum"
                       : !strcmp(b->what, "q.k bound") ? "q.k sum" : NULL;
        const hc_headroom_fig *s = of ? fig(h, b->layer, of) : NULL;
        if (s && s->value > b->value * (1 + 1e-6)) {
            viol++;
            snprintf(where, sizeof where, "%s: %s %g > %s %g", b->layer, of, s->value, b->what, b->value);
        }
    }
    snprintf(name, sizeof name, "%s.3", tag);
    hc_check(name, viol == 0, "%d bounds below their sums: %s", viol, where);
    /* attention: softmax sums in [1, 361] (the row max's term is 1, at most 361 keys), the p.v bound
     * at most the largest |v| */
    int att = 0;
    viol = 0;
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        if (strcmp(f->what, "softmax sum") != 0)
            continue;
        att++;
        char vname[300];
        snprintf(vname, sizeof vname, "%.*s.v_proj", (int)(strstr(f->layer, ".attn.out_preproj") - f->layer), f->layer);
        const hc_headroom_fig *pv = fig(h, f->layer, "p.v bound"), *v = fig(h, vname, "stored");
        if (!(f->value >= 1 && f->value <= 361) || !pv || !v || pv->value > v->value * (1 + 1e-6))
            viol++;
    }
    snprintf(name, sizeof name, "%s.4", tag);
    hc_check(name, viol == 0 && (att > 0) == (hc_net_has_transformer(net) != 0), "%d of %d attention layers off",
             viol, att);
    /* the smallest margin's position, measured alone, gives the same figure */
    const hc_headroom_fig *sf = hc_headroom_at(h, small);
    hc_headroom *one = measure(net, ps + sf->position, 1, &err);
    const hc_headroom_fig *o = one ? fig(one, sf->layer, sf->what) : NULL;
    snprintf(name, sizeof name, "%s.5", tag);
    hc_check(name, o && o->value == sf->value && o->position == 0, "%s %s: %g over %zu positions, %g alone",
             sf->layer, sf->what, sf->value, n, o ? o->value : -1);
    /* and every figure of that position alone is at most the figure over all */
    viol = 0;
    for (int i = 0; one && i < hc_headroom_count(one); i++) {
        const hc_headroom_fig *a = hc_headroom_at(one, i), *b = fig(h, a->layer, a->what);
        viol += !b || a->value > b->value;
    }
    snprintf(name, sizeof name, "%s.6", tag);
    hc_check(name, one && viol == 0 && hc_headroom_count(one) == hc_headroom_count(h), "%d figures over the whole's",
             viol);
    printf("%s: smallest margin %.2f at %s (%s %g)\n", rel, hc_headroom_margin(sf->value, lim), sf->layer, sf->what,
           sf->value);
    hc_headroom_free(one);
    hc_headroom_free(h);
    hc_net_free(net);
}

int main(void)
{
    hc_plan(13 + 3 * 6 + 1);
    dir = hc_tmpdir("test_headroom");
    hc_err err = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    int rc = hc_shf("%s selfplay --size 19 --games 2 --seed 7 --moves 120 --stride 30 --out %s/pos19.jsonl.gz "
                    ">/dev/null 2>&1", hc_halfcheck_bin(), dir);
    if (rc || hc_positions_load(hc_path(dir, "pos19.jsonl.gz"), &ps, &n, &err) || n < 4) {
        hc_fail_rest("hr", "positions: selfplay exit %d: %s", rc, err.msg);
        return hc_test_exit();
    }
    synthetic(ps, n);
    hc_positions_free(ps, n);
    ps = NULL;
    n = 0;
    const char *pp = hc_shared("positions/size19.jsonl.gz");
    if (!pp || hc_positions_load(pp, &ps, &n, &err)) {
        hc_skip_rest("hr-2", "../shared/positions/size19.jsonl.gz absent or unreadable");
        return hc_test_exit();
    }
    size_t use = n < 6 ? n : 6;
    hc_check("hr-2.0", use == 6, "%zu positions in size19", n);
    shared("hr-2", "nets/g170-b6c96-s175395328-d26788732.bin.gz", ps, use);
    shared("hr-3", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", ps, use);
    shared("hr-4", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", ps, use);
    hc_positions_free(ps, n);
    return hc_test_exit();
}
