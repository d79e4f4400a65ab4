/* halfcheck bisect-precision: the layers a profile must run in fp32 for a tier to pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/config/config.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "harness/run/precbisect.h"
#include "backends/profile.h"
#include "harness/base/stream.h"
#include "harness/metrics/tiers.h"

static const cli_opt opts[] = {
    {"net", 1, 0, "KataGo model file", "PATH"},
    {"positions", 1, 0, "positions file (.jsonl[.gz])", "PATH"},
    {"nn", 1, 0, "NN buffer WxH", "WxH"},
    {"profile", 1, 0, "precision profile: a built-in name (fp16, bf16, ...) or a .yaml path", "PROFILE"},
    {"tier", 1, 0, "built-in tier to pass: fp32, fp16, fp32-strict, exact", "TIER"},
    {"tier-file", 1, 0, "YAML file holding the tier to pass (instead of --tier)", "PATH"},
    {"verify-positions", 1, 0,
     "verify the result on these positions (default: every 4th of --positions, held out of the search)", "PATH"},
    {"out", 1, 0, "write the result profile (YAML) here, only once verified", "PATH"},
    {"max-positions", 1, 0, "use at most this many positions of each file (default 100)", "N"},
    {"threads", 1, 0, "evaluation threads (default 1)", "N"},
    {"batch", 1, 0, "positions per batch (default 8)", "N"},
    {"device", 1, 0,
     "cpu (default) or cuda: the emulation and the reference on an NVIDIA GPU (cuda:emulate, cuda:ref32; the "
     "same results, every built-in profile: docs/EMULATION.md)",
     "DEVICE"},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

static void print_check(const char *what, const hc_tier *t, const hc_stats *st, const hc_tier_check *c)
{
    if (c->nonfinite && st->n_positions == 0) {
        printf("%s: tier %s FAIL (a non-finite output stopped the evaluation)\n", what, t->name);
        return;
    }
    printf("%s: tier %s %s, worst ratio %.3f", what, t->name, c->pass ? "PASS" : "FAIL", c->worst_all_ratio);
    if (c->worst_all_metric >= 0)
        printf(" (%s %s)", hc_metric_infos[c->worst_all_metric].key, hc_pct_names[c->worst_all_pct]);
    printf("; winrate avg %.5f%% p99 %.5f%% max %.5f%%%s\n", 100 * st->m[HC_M_WINRATE].v[HC_P_AVG],
           100 * st->m[HC_M_WINRATE].v[HC_P_99], 100 * st->m[HC_M_WINRATE].v[HC_P_MAX],
           c->nonfinite ? ", NON-FINITE outputs" : "");
}

int cmd_bisect_precision(int argc, char **argv)
{
    const char *cmd = "bisect-precision";
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"bisect-precision", opts,
        "usage: halfcheck bisect-precision --net NET --positions POS --nn WxH --profile P --tier T "
        "[--out FILE.yaml] [options]\n"
        "Finds a small set of layers that must run in fp32 for profile P to pass tier T against ref32,\n"
        "reports each layer's share of the error (its single-layer worst tier ratio over the sum), and\n"
        "writes P plus fp32 rules for those layers once verified: re-read from its YAML and evaluated\n"
        "on positions the search did not use (every 4th of --positions, or --verify-positions).\n"
        "Exit: 0 found and verified; 1 the tier passes already (profile written unchanged), or no set\n"
        "passes, or the result failed its verification (NOT VERIFIED: --out is not written, a file\n"
        "already there is left as it was); 2 usage or input error.\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *net_path = cli_require(&a, "net", &err);
    const char *pos_path = net_path ? cli_require(&a, "positions", &err) : NULL;
    const char *nn = pos_path ? cli_require(&a, "nn", &err) : NULL;
    const char *prof = nn ? cli_require(&a, "profile", &err) : NULL;
    if (!prof)
        return cli_fail(cmd, &err);
    const char *tname = cli_get(&a, "tier", NULL), *tfile = cli_get(&a, "tier-file", NULL);
    if (!tname == !tfile) {
        hc_err_set(&err, HC_EUSAGE, "give exactly one of --tier and --tier-file");
        return cli_fail(cmd, &err);
    }
    int nx, ny, maxp, threads, batch;
    if (cli_parse_size(nn, &nx, &ny, &err) || cli_get_int(&a, "max-positions", 100, &maxp, &err) ||
        cli_get_int(&a, "threads", 1, &threads, &err) || cli_get_int(&a, "batch", 8, &batch, &err))
        return cli_fail(cmd, &err);
    if (maxp < 1 || threads < 1 || threads > 256 || batch < 1 || batch > 64) {
        hc_err_set(&err, HC_EUSAGE, "--max-positions must be >= 1, --threads 1..256, --batch 1..64");
        return cli_fail(cmd, &err);
    }
    hc_tier tier;
    if (tname ? hc_tier_builtin(tname, &tier, &err) : hc_tier_cfg_load(tfile, &tier, &err))
        return cli_fail(cmd, &err);
    hc_net *net = hc_net_load(net_path, &err);
    if (!net)
        return cli_fail(cmd, &err);
    hc_net_reduce_activations(net);
    const char *vpath = cli_get(&a, "verify-positions", NULL);
    hc_position *ps = NULL, *vs = NULL;
    size_t n = 0, nv = 0;
    hc_pbisect_split sp = {0};
    hc_pbisect *r = NULL;
    int rc = HC_EXIT_OK;
    if (hc_positions_load(pos_path, &ps, &n, &err) || (vpath && hc_positions_load(vpath, &vs, &nv, &err))) {
        rc = cli_fail(cmd, &err);
        goto done;
    }
    size_t use = n < (size_t)maxp ? n : (size_t)maxp;
    hc_pbisect_opts po = {.search = ps, .n_search = use, .verify = vs, .n_verify = nv < (size_t)maxp ? nv : (size_t)maxp};
    if (!vpath) {
        if (hc_pbisect_split_positions(ps, use, &sp, &err)) {
            hc_err_prefix(&err, "%s: ", pos_path);
            char why[sizeof err.msg];
            snprintf(why, sizeof why, "%s", err.msg);
            hc_err_set(&err, HC_EUSAGE, "%s; give more positions or --verify-positions FILE", why);
            rc = cli_fail(cmd, &err);
            goto done;
        }
        po.search = sp.search;
        po.n_search = sp.n_search;
        po.verify = sp.verify;
        po.n_verify = sp.n_verify;
    } else if (nv == 0) {
        hc_err_set(&err, HC_EUSAGE, "%s: no positions", vpath);
        rc = cli_fail(cmd, &err);
        goto done;
    }
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    po.settings = &s;
    po.profile = prof;
    po.tier = &tier;
    po.batch = batch;
    po.threads = threads;
    {
        const char *dev = cli_get(&a, "device", "cpu");
        if (dev && strcmp(dev, "cpu") != 0 && strcmp(dev, "cuda") != 0) {
            hc_err_set(&err, HC_EUSAGE, "--device must be cpu or cuda (got \"%s\")", dev);
            rc = cli_fail(cmd, &err);
            goto done;
        }
        po.cuda = dev && strcmp(dev, "cuda") == 0;
    }
    if (hc_pbisect_run(net, &po, &r, &err)) {
        rc = cli_fail(cmd, &err);
        goto done;
    }
    printf("bisect-precision: profile %s, tier %s at %dx%d, %d evaluations\n", prof, tier.name, nx, ny, r->n_evals);
    if (vpath)
        printf("positions: search on %zu from %s, verification on %zu from %s%s\n", r->n_search, pos_path,
               r->n_verify, vpath,
               strcmp(vpath, pos_path) == 0 ? " (the same file: nothing is held out of the search)" : "");
    else
        printf("positions: search on %zu, verification on %zu held out (every %dth of the first %zu of %s)\n",
               r->n_search, r->n_verify, HC_PBISECT_HOLDOUT_EVERY, use, pos_path);
    print_check("whole profile", &tier, &r->full_stats, &r->full_check);
    if (r->outcome == HC_PB_IMPOSSIBLE) {
        printf("no set passes: even every layer in fp32 fails tier %s (the reference or the tier is broken)\n",
               tier.name);
        rc = HC_EXIT_FAIL;
        goto done;
    }
    /* the whole profile passed on the search positions: nothing was searched (the outcome is
     * HC_PB_PASSES, or HC_PB_UNVERIFIED when the verification positions disagree) */
    int passed_already = r->full_check.pass && !r->full_check.nonfinite;
    if (!passed_already) {
        printf("%-4s %-48s %10s %7s %s\n", "#", "layer", "ratio", "share", "");
        for (int i = 0; i < r->n_layers; i++) {
            const hc_pbisect_layer *l = &r->layers[i];
            if (!l->reduced)
                continue;
            printf("%-4d %-48s %10.4g %6.2f%%%s\n", i, l->name, l->score, 100 * l->share,
                   l->escalated ? "  -> fp32" : "");
        }
        printf("ratio: the tier's worst ratio with only that layer reduced; share: of the sum over layers\n");
        printf("escalated to fp32 (%d of %d layers):", r->n_escalated, r->n_layers);
        for (int i = 0; i < r->n_layers; i++)
            if (r->layers[i].escalated)
                printf(" %s", r->layers[i].name);
        printf("\n");
    } else {
        printf("the profile passes tier %s already on the search positions: nothing to escalate (empty set); "
               "profile unchanged\n",
               tier.name);
        rc = HC_EXIT_FAIL;
    }
    char what[160];
    snprintf(what, sizeof what, "result profile (re-read from its YAML) on the %zu verification positions",
             r->n_verify);
    print_check(what, &tier, &r->result_stats, &r->result_check);
    const char *out = cli_get(&a, "out", NULL);
    if (r->outcome == HC_PB_UNVERIFIED) {
        /* An unverified profile never takes a verified one's place: nothing is written (a file
         * already at --out is left as it was), and a script sees a non-zero status. */
        printf("NOT VERIFIED: the result profile (%d layer(s) escalated) passes tier %s on the %zu search "
               "positions but fails it on the %zu verification positions%s%s%s\n",
               r->n_escalated, tier.name, r->n_search, r->n_verify, out ? "; " : "", out ? out : "",
               out ? " not written" : "");
        fprintf(stderr, "halfcheck %s: NOT VERIFIED on the verification positions: %s\n", cmd,
                out ? "--out not written" : "no profile");
        rc = HC_EXIT_FAIL;
        goto done;
    } else if (r->outcome == HC_PB_FOUND) {
        printf("verified: the result profile passes tier %s\n", tier.name);
    }
    if (out) {
        hc_ostream *o = hc_ostream_open(out, &err);
        int bad = !o;
        if (o && hc_ostream_write(o, r->yaml, r->yaml_len, &err)) {
            hc_ostream_abort(o);
            bad = 1;
        } else if (o) {
            bad = hc_ostream_commit(o, &err) != 0;
        }
        if (bad) {
            rc = cli_fail(cmd, &err);
            goto done;
        }
        printf("wrote %s\n", out);
    } else if (r->outcome == HC_PB_FOUND) {
        printf("(no --out: the result profile follows)\n%s", r->yaml);
    }
done:
    hc_pbisect_free(r);
    hc_pbisect_split_free(&sp);
    hc_positions_free(vs, nv);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return rc;
}
