/* halfcheck taps: two tensor backends on the same rows, compared layer by layer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/eval/evaluate.h"
#include "harness/run/headroom.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "backends/profile.h"
#include "harness/run/taps.h"

static const cli_opt opts[] = {
    {"net", 1, 0, "KataGo model file", "PATH"},
    {"positions", 1, 0, "positions file (.jsonl[.gz])", "PATH"},
    {"nn", 1, 0, "NN buffer WxH", "WxH"},
    {"backend", 1, 1, "backend spec, given twice: A (the reference, default ref32) then B; any tensor backend "
                      "that taps: ref32, emulate:PROFILE, pipe: (protocol version 2), tensors:DIR|FILE.safetensors (layers "
                      "another tool wrote, docs/TAPS.md), cuda: (where built)", "SPEC"},
    {"threshold", 1, 0, "also name the first layer whose max relative error (max|a-b| / max|a|) exceeds X; the first "
                        "divergent layer itself is the first whose error its inputs, storage and format do not explain "
                        "(--factor, docs/TAPS.md)", "X"},
    {"limit", 1, 0, "at most this many positions (default 20)", "N"},
    {"batch", 1, 0, "positions per batch (default 1; --precision: 8)", "N"},
    {"precision", 1, 0, "PROFILE: instead of two backends, the profile applied to one layer at a time (the others "
                        "fp32), each layer's output errors against ref32, largest first (bisect-precision)", "PROFILE"},
    {"show-profile", 1, 0, "PROFILE: print what the profile gives each layer of the net (kinds, formats, the rule "
                           "that decided) and exit; needs only --net", "PROFILE"},
    {"top", 1, 0, "with --precision: print the N most sensitive layers (default 20)", "N"},
    {"threads", 1, 0, "with --precision: evaluation threads (default 1)", "N"},
    {"device", 1, 0,
     "with --precision: cpu (default) or cuda: the subsets on cuda:emulate and the reference on cuda:ref32, an "
     "NVIDIA GPU (the same bits, docs/EMULATION.md)",
     "DEVICE"},
    {"layers", 0, 0, "list every tap name the reference (ref32) produces for --net, with its shape, and exit "
                     "(--nn: the buffer, default 19x19)", NULL},
    {"factor", 1, 0, "a layer diverges when its max_rel exceeds this factor times what its inputs' error, its "
                     "storage and its format explain, or its mean_rel or rms_rel half this factor times theirs "
                     "(docs/TAPS.md; default 8)", "X"},
    {"save", 1, 0, "DIR: instead of comparing, write golden layers of one tapping backend (--backend, default ref32) "
                   "into DIR: every position's input rows, every tap and the raw heads, with index.json "
                   "(docs/TAPS.md)", "DIR"},
    {"save-format", 1, 0, "with --save: npy, safetensors or both (default both)", "FMT"},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

/* A layer's fp16 margins from headroom's figures: its stored value's, and the smallest of the exact sums it
 * forms (bounds left out: they say what may overflow, not what does); +inf where there is no such figure. */
static void layer_margins(const hc_headroom *h, const char *layer, double *stored, double *sum)
{
    double lim = hc_headroom_limit(HC_TAPFMT_F16);
    *stored = *sum = INFINITY;
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        if (f->bound || strcmp(f->layer, layer) != 0)
            continue;
        double m = hc_headroom_margin(f->value, lim);
        if (!strcmp(f->what, "stored"))
            *stored = m;
        else if (m < *sum)
            *sum = m;
    }
}

static int by_winrate(const void *a, const void *b)
{
    const hc_prec_row *x = a, *y = b;
    if (x->winrate_avg != y->winrate_avg)
        return x->winrate_avg < y->winrate_avg ? 1 : -1;
    if (x->policy_kl_avg != y->policy_kl_avg)
        return x->policy_kl_avg < y->policy_kl_avg ? 1 : -1;
    return 0;
}

static int precision(const hc_net *net, const hc_position *ps, size_t n, const hc_prec_opts *po, int top,
                     hc_err *err)
{
    hc_prec_row *rows = NULL, full;
    int nr = 0;
    const hc_eval_settings *s = po->settings;
    const char *profile = po->profile;
    if (hc_taps_precision(net, ps, n, po, &rows, &nr, &full, err))
        return -1;
    qsort(rows, (size_t)nr, sizeof *rows, by_winrate);
    double sum = 0;
    int reduced = 0;
    for (int i = 0; i < nr; i++) {
        sum += rows[i].winrate_avg;
        reduced += rows[i].storage != 0 || rows[i].weights != 0;
    }
    printf("precision of %semulate:%s, one layer at a time (others fp32), vs %sref32 over %zu positions, %dx%d\n",
           po->cuda ? "cuda:" : "", profile, po->cuda ? "cuda:" : "", n, s->nn_x, s->nn_y);
    printf("%-48s %-5s %-5s %12s %12s %10s %12s %7s\n", "layer", "store", "wts", "winrate avg", "winrate p99",
           "lead avg", "policyKL avg", "share");
    for (int i = 0; i < nr && i < top; i++) {
        const hc_prec_row *r = &rows[i];
        printf("%-48s %-5s %-5s %11.5f%% %11.5f%% %10.5f %12.3g %6.1f%%\n", r->name, hc_fmt_str(r->storage),
               hc_fmt_str(r->weights), 100 * r->winrate_avg, 100 * r->winrate_p99, r->lead_avg, r->policy_kl_avg,
               sum > 0 ? 100 * r->winrate_avg / sum : 0.0);
    }
    printf("%-48s %-5s %-5s %11.5f%% %11.5f%% %10.5f %12.3g\n", "(the whole profile)", "", "", 100 * full.winrate_avg,
           100 * full.winrate_p99, full.lead_avg, full.policy_kl_avg);
    printf("%d of %d layers (input rows included) reduced; share: of the sum of single-layer winrate errors\n",
           reduced, nr);
    free(rows);
    return 0;
}

static int show_profile(const char *net_path, const char *spec, hc_err *err)
{
    hc_net *net = hc_net_load(net_path, err);
    if (!net)
        return -1;
    hc_net_reduce_activations(net);
    hc_profile *p = hc_profile_load(spec, err);
    hc_layer_ref *ls = NULL;
    int n = 0, rc = -1;
    if (p && hc_net_layers(net, &ls, &n, err) == 0) {
        printf("profile %s (%s) on %s: %s\n", p->name, p->source, net->name ? net->name : net_path,
               p->description ? p->description : "");
        printf("3x3 convolutions by Winograd F(%dx%d,3x3) where the engine uses Winograd\n", p->winograd, p->winograd);
        printf("%-44s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-34s %s\n", "layer", "store", "wts", "accum", "tiles",
               "pool", "score", "smax", "psum", "nsum", "decided by", "kinds");
        for (int i = 0; i <= n; i++) {
            const char *name = i < n ? ls[i].name : "input";
            unsigned kinds = i < n ? ls[i].kinds : HC_LK_INPUT;
            hc_prof_choice ch = hc_profile_resolve(p, net, name, kinds);
            char kb[256];
            printf("%-44s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-5s %-34s %s\n", name ? name : "?",
                   hc_fmt_str(ch.storage), hc_fmt_str(ch.weights), hc_fmt_str(ch.accum), hc_fmt_str(ch.tiles),
                   hc_fmt_str(ch.pool), hc_fmt_str(ch.scores), hc_fmt_str(ch.probs), hc_fmt_str(ch.pool_sum),
                   hc_fmt_str(ch.norm_sum), ch.rule >= 0 ? p->rules[ch.rule].where : "defaults",
                   hc_layer_kinds_str(kinds, kb, sizeof kb));
        }
        rc = 0;
    }
    free(ls);
    hc_profile_free(p);
    hc_net_free(net);
    return rc;
}

/* Every tap ref32 hands back for one row of an empty board: names and shapes. */
static int list_layers(const char *net_path, const char *nn, hc_err *err)
{
    int nx = 19, ny = 19, rc = -1;
    if (nn && cli_parse_size(nn, &nx, &ny, err))
        return -1;
    hc_net *net = hc_net_load(net_path, err);
    if (!net)
        return -1;
    hc_net_reduce_activations(net);
    size_t area = (size_t)nx * ny;
    float *sp = calloc((size_t)net->num_input_c * area, sizeof(float));
    float *gl = calloc((size_t)net->num_input_global_c + 1, sizeof(float));
    float *me = calloc((size_t)net->num_input_meta_c + 1, sizeof(float));
    hc_raw_heads *out = hc_raw_heads_new(1, nx, ny, net->num_policy_c, net->num_score_value_c, err);
    hc_tapped *t = out && sp && gl && me ? hc_tapped_open("ref32", net, nx, ny, 1, err) : NULL;
    if (!sp || !gl || !me)
        hc_err_set(err, HC_ENOMEM, "out of memory");
    if (t) {
        for (size_t p = 0; p < area; p++)
            sp[p] = 1.0f; /* the board mask */
        if (hc_tapped_eval(t, 1, sp, gl, net->num_input_meta_c ? me : NULL, out, err) == 0) {
            const hc_tapset *ts = hc_tapped_rec(t);
            printf("taps of %s (ref32, %dx%d buffer), forward order; shape per row: channels x points\n",
                   net->name ? net->name : net_path, nx, ny);
            printf("%-4s %-56s %8s %6s %s\n", "#", "tap", "channels", "points", "layout");
            for (int i = 0; i < hc_tapset_count(ts); i++) {
                const hc_tapset_entry *e = hc_tapset_at(ts, i);
                printf("%-4d %-56s %8d %6d %s\n", i, e->name, e->channels, e->hw,
                       e->hw > 1 ? "spatial [C][nnY*nnX]" : "vector [C]");
            }
            rc = 0;
        }
    }
    hc_tapped_free(t);
    hc_raw_heads_free(out);
    free(sp);
    free(gl);
    free(me);
    hc_net_free(net);
    return rc;
}

int cmd_taps(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"taps", opts,
        "usage: halfcheck taps --net NET --positions POS --nn WxH [--backend A] --backend B [options]\n"
        "       halfcheck taps --net NET --positions POS --nn WxH --precision PROFILE [options]\n"
        "       halfcheck taps --net NET --show-profile PROFILE\n"
        "       halfcheck taps --net NET --layers [--nn WxH]\n"
        "       halfcheck taps --net NET --positions POS --nn WxH [--backend A] --save DIR [--save-format FMT]\n"
        "exit status: 0 no divergent layer (or a listing, or layers saved), 1 a divergent layer found, 2 bad usage or "
        "input (tensors: files of other positions included) or nothing compared, 3 a backend crashed or failed\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *net_path = cli_require(&a, "net", &err);
    if (net_path && cli_has(&a, "show-profile"))
        return show_profile(net_path, cli_get(&a, "show-profile", ""), &err) ? cli_fail("taps", &err) : HC_EXIT_OK;
    if (net_path && cli_has(&a, "layers"))
        return list_layers(net_path, cli_get(&a, "nn", NULL), &err) ? cli_fail("taps", &err) : HC_EXIT_OK;
    const char *pos_path = net_path ? cli_require(&a, "positions", &err) : NULL;
    const char *nn = pos_path ? cli_require(&a, "nn", &err) : NULL;
    if (!nn)
        return cli_fail("taps", &err);
    const char *specs[3];
    int nb = cli_get_all(&a, "backend", specs, 3);
    const char *prof = cli_get(&a, "precision", NULL);
    if (prof && nb) {
        hc_err_set(&err, HC_EUSAGE, "--precision takes no --backend (it compares emulate:PROFILE subsets with ref32)");
        return cli_fail("taps", &err);
    }
    const char *dev = cli_get(&a, "device", NULL);
    if (dev && (!prof || (strcmp(dev, "cpu") != 0 && strcmp(dev, "cuda") != 0))) {
        hc_err_set(&err, HC_EUSAGE, !prof ? "--device goes with --precision (two backends: give cuda: specs)"
                                          : "--device must be cpu or cuda (got \"%s\")", dev);
        return cli_fail("taps", &err);
    }
    int cuda = dev && strcmp(dev, "cuda") == 0;
    const char *save = cli_get(&a, "save", NULL);
    int save_fmt = 0;
    if (save) {
        const char *sf = cli_get(&a, "save-format", "both");
        save_fmt = !strcmp(sf, "npy") ? HC_TAPS_SAVE_NPY : !strcmp(sf, "safetensors") ? HC_TAPS_SAVE_SAFETENSORS
                 : !strcmp(sf, "both") ? HC_TAPS_SAVE_NPY | HC_TAPS_SAVE_SAFETENSORS : 0;
        if (!save_fmt || prof || nb > 1) {
            hc_err_set(&err, HC_EUSAGE, !save_fmt ? "--save-format: npy, safetensors or both"
                                                  : "--save takes at most one --backend (default ref32), no --precision");
            return cli_fail("taps", &err);
        }
    }
    if (!prof && !save && (nb < 1 || nb > 2)) {
        hc_err_set(&err, HC_EUSAGE, "give --backend B, or --backend A --backend B");
        return cli_fail("taps", &err);
    }
    const char *spec_a = nb == 2 ? specs[0] : "ref32", *spec_b = nb == 2 ? specs[1] : nb ? specs[0] : NULL;
    int nx, ny, limit, batch, top, threads;
    double threshold, factor;
    if (cli_parse_size(nn, &nx, &ny, &err) || cli_get_double(&a, "factor", HC_TAPS_FACTOR, &factor, &err) || cli_get_int(&a, "limit", 20, &limit, &err) ||
        cli_get_int(&a, "batch", prof ? 8 : 1, &batch, &err) || cli_get_double(&a, "threshold", 1e-2, &threshold, &err) ||
        cli_get_int(&a, "top", 20, &top, &err) || cli_get_int(&a, "threads", 1, &threads, &err))
        return cli_fail("taps", &err);
    if (limit < 1 || batch < 1 || batch > 64 || !(threshold >= 0) || !(factor >= 1) || top < 1 || threads < 1 || threads > 256) {
        hc_err_set(&err, HC_EUSAGE, "--limit and --top must be >= 1, --batch 1..64, --threads 1..256, --threshold >= 0, --factor >= 1");
        return cli_fail("taps", &err);
    }
    int rc = HC_EXIT_OK;
    hc_position *ps = NULL;
    size_t n = 0;
    hc_tapcmp *cmp = NULL;
    hc_headroom *hr = NULL;
    hc_net *net = hc_net_load(net_path, &err);
    if (!net)
        return cli_fail("taps", &err);
    hc_net_reduce_activations(net);
    if (hc_positions_load(pos_path, &ps, &n, &err)) {
        rc = cli_fail("taps", &err);
        goto done;
    }
    size_t use = n < (size_t)limit ? n : (size_t)limit;
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    if (prof) {
        hc_prec_opts po = {.settings = &s, .profile = prof, .batch = batch, .threads = threads, .cuda = cuda};
        if (precision(net, ps, use, &po, top, &err))
            rc = cli_fail("taps", &err);
        goto done;
    }
    if (save) {
        hc_taps_save_opts so = {.dir = save, .formats = save_fmt, .net_path = net_path, .positions_path = pos_path};
        const char *spec = nb ? specs[0] : "ref32";
        int nt = 0;
        if (hc_taps_save(net, ps, use, &s, spec, batch, &so, &nt, &err))
            rc = cli_fail("taps", &err);
        else
            printf("taps: %s, %zu positions, %dx%d: %d tensors (input rows, taps, raw heads) written to %s (%s%s%s; "
                   "index.json)\n", spec, use, nx, ny, nt, save, save_fmt & HC_TAPS_SAVE_SAFETENSORS ? "taps.safetensors" : "",
                   save_fmt == (HC_TAPS_SAVE_NPY | HC_TAPS_SAVE_SAFETENSORS) ? ", " : "",
                   save_fmt & HC_TAPS_SAVE_NPY ? "npy/*.npy" : "");
        goto done;
    }
    if (!(cmp = hc_taps_compare(net, ps, use, &s, spec_a, spec_b, batch, &err))) {
        rc = cli_fail("taps", &err);
        goto done;
    }
    printf("taps: %s (A) vs %s (B), %zu positions, %dx%d; rel = |a-b| over |a| of the layer (max, mean, RMS); "
           "stor_rel: A's own tensor rounded to B's format (max); allowed: what inputs, storage and format explain "
           "for max, mean and RMS (x%g, x%g, docs/TAPS.md)\n",
           spec_a, spec_b, use, nx, ny, factor, HC_TAPS_AVG_FACTOR(factor));
    /* The fp16 headroom of every layer beside its errors (halfcheck headroom's figures, from ref32 on the same
     * positions): an error that grows where the margin is small points at an overflow or a lost digit. */
    hc_headroom_opts ho = {.settings = &s, .batch = batch};
    if (!(hr = hc_headroom_measure(net, ps, use, &ho, &err))) {
        rc = cli_fail("taps", &err);
        goto done;
    }
    printf("f16_mgn: the layer's largest stored |value| (ref32), f16_sum: its largest sum a kernel forms (exact "
           "figures of halfcheck headroom), each as log2(65504 / value), the powers of two left before fp16 "
           "overflows (-: no such figure)\n");
    printf("%-4s %-48s %6s %-4s %10s %10s %10s %10s %10s %10s %10s %10s %10s %8s %8s %s\n", "#", "layer", "C", "fmt",
           "max_abs", "mean_abs", "max_rel", "mean_rel", "rms_rel", "stor_rel", "allow_max", "allow_mean", "allow_rms",
           "f16_mgn", "f16_sum", "");
    int first = cli_has(&a, "threshold") ? hc_tapcmp_first_divergent(cmp, threshold) : -1;
    int why = -1;
    int unexpl = hc_tapcmp_first_unexplained_by(cmp, factor, &why);
    for (int i = 0; i < hc_tapcmp_count(cmp); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(cmp, i);
        if (d->missing) {
            printf("%-4d %-48s %6d %s\n", i, d->name, d->channels, "(absent in B)");
            continue;
        }
        if (d->mismatch) {
            printf("%-4d %-48s %6d shape mismatch, not compared: A %d x %d (%s), B %d x %d (%s)%s%s\n", i, d->name,
                   d->channels, d->channels, d->hw, d->layout == 1 ? "vector" : "spatial", d->b_channels, d->b_hw,
                   d->b_layout == 1 ? "vector" : "spatial", d->b_origin[0] ? " from " : "", d->b_origin);
            continue;
        }
        char mark[64] = "";
        if (i == unexpl)
            snprintf(mark, sizeof mark, "  <- first divergent (%s)", d->nonfinite ? "non-finite" : hc_tapstat_str(why));
        double mgn_stored, mgn_sum;
        layer_margins(hr, d->name, &mgn_stored, &mgn_sum);
        char ms[2][16];
        double mv[2] = {mgn_stored, mgn_sum};
        for (int k = 0; k < 2; k++)
            snprintf(ms[k], sizeof ms[k], isinf(mv[k]) && mv[k] > 0 ? "-" : "%.2f", mv[k]);
        printf("%-4d %-48s %6d %-4s %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %8s %8s%s%s%s\n",
               i, d->name, d->channels, hc_tap_fmt_str(d->fmt), d->max_abs, hc_tapdiff_mean_abs(d),
               hc_tapdiff_max_rel(d), hc_tapdiff_mean_rel(d), hc_tapdiff_rms_rel(d), hc_tapdiff_stor_rel(d),
               hc_tapcmp_allowed(cmp, i, HC_TAPSTAT_MAX, factor), hc_tapcmp_allowed(cmp, i, HC_TAPSTAT_MEAN, factor),
               hc_tapcmp_allowed(cmp, i, HC_TAPSTAT_RMS, factor), ms[0], ms[1], d->nonfinite ? "  NONFINITE" : "", mark,
               i == first && first != unexpl ? "  <- first over --threshold" : "");
    }
    if (cli_has(&a, "threshold")) {
        if (first >= 0)
            printf("first divergent layer (max_rel > %g): %s\n", threshold, hc_tapcmp_at(cmp, first)->name);
        else
            printf("no layer diverges (max_rel <= %g everywhere)\n", threshold);
    }
    if (unexpl >= 0) {
        const hc_tapdiff *d = hc_tapcmp_at(cmp, unexpl);
        if (d->nonfinite)
            printf("first divergent layer (a non-finite value in B): %s\n", d->name);
        else
            printf("first divergent layer (%s %.4g, allowed %.4g: beyond what its inputs, storage and format "
                   "explain): %s\n", hc_tapstat_str(why), hc_tapdiff_rel(d, why),
                   hc_tapcmp_allowed(cmp, unexpl, why, factor), d->name);
    } else {
        printf("no divergent layer: every compared layer's error is explained by its inputs, storage and format\n");
    }
    hc_tapcov cov;
    char covs[256];
    hc_tapcmp_coverage(cmp, &cov);
    hc_tapcov_str(&cov, covs, sizeof covs);
    printf("coverage: %s\n", covs);
    if (hc_tapcmp_extra_count(cmp)) {
        printf("%d tap(s) of B under names A has no tap of, not compared:", hc_tapcmp_extra_count(cmp));
        for (int i = 0; i < hc_tapcmp_extra_count(cmp); i++)
            printf(" %s", hc_tapcmp_extra_at(cmp, i));
        printf("\n");
    }
    /* A divergent layer is a finding, as a failed tier is for run: exit 1. */
    if (unexpl >= 0 || first >= 0)
        rc = HC_EXIT_FAIL;
done:
    hc_headroom_free(hr);
    hc_tapcmp_free(cmp);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return rc;
}
