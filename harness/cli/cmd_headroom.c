/* halfcheck headroom: per layer, how far below fp16's (or bf16's) largest finite value the reference's
 * values and the sums a reduced-precision kernel would form stay (harness/run/headroom.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/run/headroom.h"
#include "harness/model/heads.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"

static const cli_opt opts[] = {
    {"net", 1, 0, "KataGo model file", "PATH"},
    {"positions", 1, 0, "positions file (.jsonl[.gz])", "PATH"},
    {"nn", 1, 0, "NN buffer WxH", "WxH"},
    {"format", 1, 0, "the reduced format whose largest finite value the margins are to: fp16 (65504, default) or "
                     "bf16", "FMT"},
    {"limit", 1, 0, "at most this many positions (default 20)", "N"},
    {"batch", 1, 0, "positions per batch (default 1)", "N"},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

static void print_margin(double m)
{
    if (isinf(m))
        printf("%8s", m > 0 ? "inf" : "-inf");
    else
        printf("%8.2f", m);
}

static const char *fmt_name(int fmt) { return fmt == HC_TAPFMT_BF16 ? "bf16" : "fp16"; }

/* "LAYER (WHAT VALUE, position P)" for the last lines. */
static void print_where(const hc_headroom_fig *f, const hc_position *ps)
{
    printf("%s (%s %.6g, position %ld", f->layer, f->what, f->value, f->position);
    if (ps[f->position].file_line > 0)
        printf(", line %ld", ps[f->position].file_line);
    printf(")");
}

int cmd_headroom(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"headroom", opts,
        "usage: halfcheck headroom --net NET --positions POS --nn WxH [--format fp16|bf16] [--limit N]\n"
        "per layer (tap names, docs/TAPS.md), from the fp32 reference alone: the largest value stored and the largest\n"
        "sums the layer forms (accumulations, norms' sums of squares, pooling sums, attention logits and softmax sums),\n"
        "each with the position where it peaks and its margin to the format's largest finite value in powers of two,\n"
        "log2(limit / value); docs/EMULATION.md, \"Headroom\"\n"
        "exit status: 0 nothing overflows, 1 a value overflows the format, 2 bad usage or input\n",
        0, 0};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *net_path = cli_require(&a, "net", &err);
    const char *pos_path = net_path ? cli_require(&a, "positions", &err) : NULL;
    const char *nn = pos_path ? cli_require(&a, "nn", &err) : NULL;
    if (!nn)
        return cli_fail("headroom", &err);
    const char *fs = cli_get(&a, "format", "fp16");
    int fmt = !strcmp(fs, "fp16") ? HC_TAPFMT_F16 : !strcmp(fs, "bf16") ? HC_TAPFMT_BF16 : -1;
    int nx, ny, limit, batch;
    if (fmt < 0) {
        hc_err_set(&err, HC_EUSAGE, "--format must be fp16 or bf16 (got \"%s\")", fs);
        return cli_fail("headroom", &err);
    }
    if (cli_parse_size(nn, &nx, &ny, &err) || cli_get_int(&a, "limit", 20, &limit, &err) ||
        cli_get_int(&a, "batch", 1, &batch, &err))
        return cli_fail("headroom", &err);
    if (limit < 1 || batch < 1 || batch > 64) {
        hc_err_set(&err, HC_EUSAGE, "--limit must be >= 1, --batch 1..64");
        return cli_fail("headroom", &err);
    }
    hc_position *ps = NULL;
    size_t n = 0;
    hc_headroom *h = NULL;
    int rc = HC_EXIT_OK;
    hc_net *net = hc_net_load(net_path, &err);
    if (!net)
        return cli_fail("headroom", &err);
    hc_net_reduce_activations(net); /* what KataGo's backends compute with */
    if (hc_positions_load(pos_path, &ps, &n, &err)) {
        rc = cli_fail("headroom", &err);
        goto done;
    }
    size_t use = n < (size_t)limit ? n : (size_t)limit;
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    hc_headroom_opts o = {.settings = &s, .batch = batch};
    if (!(h = hc_headroom_measure(net, ps, use, &o, &err))) {
        rc = cli_fail("headroom", &err);
        goto done;
    }
    double lim = hc_headroom_limit(fmt);
    printf("headroom: ref32 over %zu positions of %s, %dx%d; %s's largest finite value %.6g; margin = log2(%.6g / "
           "value): powers of two left (negative: overflow); bound: a bound on partial sums in any order\n",
           use, pos_path, nx, ny, fmt_name(fmt), lim, lim);
    printf("%-4s %-48s %-18s %12s %8s %8s\n", "#", "layer", "what", "value", "margin", "position");
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        printf("%-4d %-48s %-18s %12.6g ", i, f->layer, f->what, f->value);
        print_margin(hc_headroom_margin(f->value, lim));
        printf(" %8ld%s\n", f->position, f->value > lim ? (f->bound ? "  MAY OVERFLOW" : "  OVERFLOW") : "");
    }
    int over = hc_headroom_first_over(h, lim, 0), over_b = hc_headroom_first_over(h, lim, 1);
    int small_b = hc_headroom_smallest(h, 1);
    if (small_b >= 0) {
        const hc_headroom_fig *f = hc_headroom_at(h, small_b);
        if (over_b >= 0) {
            printf("partial sums may overflow in %s in some summation orders: first ", fmt_name(fmt));
            print_where(hc_headroom_at(h, over_b), ps);
            printf(" > %.6g\n", lim);
        } else {
            printf("partial sums: every bound within 2^-%.2f of the limit; smallest margin %.2f: ",
                   hc_headroom_margin(f->value, lim), hc_headroom_margin(f->value, lim));
            print_where(f, ps);
            printf("\n");
        }
    }
    if (over >= 0) {
        const hc_headroom_fig *f = hc_headroom_at(h, over);
        printf("first overflow in %s: %s (%s %.6g > %.6g, position %ld)\n", fmt_name(fmt), f->layer, f->what, f->value,
               lim, f->position);
        rc = HC_EXIT_FAIL;
    } else {
        const hc_headroom_fig *f = hc_headroom_at(h, hc_headroom_smallest(h, 0));
        double m = hc_headroom_margin(f->value, lim);
        printf("%s headroom: every layer within 2^-%.2f of the limit; smallest margin %.2f: ", fmt_name(fmt), m, m);
        print_where(f, ps);
        printf("\n");
    }
done:
    hc_headroom_free(h);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return rc;
}
