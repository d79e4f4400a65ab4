/* Taps: two tensor backends' per-layer outputs on the same rows, compared layer by layer. */
#include "harness/run/taps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/model/layers.h"
#include "backends/profile.h"
#include "refs/round.h"
#include "harness/metrics/stats.h"

/* ---- the older recorder names: a tapset ---- */

hc_taprec *hc_taprec_new(int max_batch, hc_err *err) { return hc_tapset_new(max_batch, err); }
void hc_taprec_free(hc_taprec *r) { hc_tapset_free(r); }
void hc_taprec_reset(hc_taprec *r) { hc_tapset_reset(r); }
void hc_taprec_hook(void *user, const hc_tap *t) { hc_tapset_hook(user, t); }
int hc_taprec_count(const hc_taprec *r) { return hc_tapset_count(r); }
const hc_taprec_layer *hc_taprec_layer_at(const hc_taprec *r, int i) { return hc_tapset_at(r, i); }
const hc_taprec_layer *hc_taprec_find(const hc_taprec *r, const char *name) { return hc_tapset_find(r, name); }
int hc_taprec_status(const hc_taprec *r, hc_err *err) { return hc_tapset_status(r, err); }

/* ---- tapped backends ---- */

struct hc_tapped {
    hc_backend b;
    hc_tapset *set;
};

void hc_tapped_free(hc_tapped *t)
{
    if (!t)
        return;
    hc_backend_close(&t->b);
    hc_tapset_free(t->set);
    free(t);
}

hc_tapped *hc_tapped_open(const char *spec, const hc_net *net, int nx, int ny, int max_batch, hc_err *err)
{
    hc_tapped *t = hc_calloc(1, sizeof *t, err, "tapped backend");
    if (!t || !(t->set = hc_tapset_new(max_batch, err)) ||
        hc_backend_open_with(&t->b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = nx, .ny = ny,
                                                             .max_batch = max_batch, .threads = 1}, err))
        goto fail;
    if (!hc_backend_taps(&t->b)) {
        hc_err_set(err, HC_EUSAGE, "taps: backend \"%s\" has no layer taps (ref32, emulate:PROFILE, cuda:, tensors: "
                   "and pipe: programs speaking protocol version 2 do)", spec);
        goto fail;
    }
    return t;
fail:
    hc_tapped_free(t);
    return NULL;
}

int hc_tapped_eval(hc_tapped *t, int batch, const float *spatial, const float *global, const float *meta,
                   hc_raw_heads *out, hc_err *err)
{
    hc_tapset_reset(t->set);
    struct hc_tapset *keep = out->taps;
    out->taps = t->set;
    int rc = hc_backend_eval(&t->b, batch, spatial, global, meta, out, err);
    out->taps = keep;
    return rc;
}

const hc_tapset *hc_tapped_rec(const hc_tapped *t) { return t->set; }

/* ---- comparison ---- */

struct hc_tapcmp {
    hc_tapdiff *d;
    int n, cap;
    char **extra; /* B's names A lacks */
    int n_extra, cap_extra;
};

hc_tapcmp *hc_tapcmp_new(hc_err *err) { return hc_calloc(1, sizeof(hc_tapcmp), err, "tap comparison"); }

void hc_tapcmp_free(hc_tapcmp *c)
{
    if (c) {
        for (int i = 0; i < c->n_extra; i++)
            free(c->extra[i]);
        free(c->extra);
        free(c->d);
        free(c);
    }
}

int hc_tapcmp_count(const hc_tapcmp *c) { return c->n; }
const hc_tapdiff *hc_tapcmp_at(const hc_tapcmp *c, int i) { return &c->d[i]; }
int hc_tapcmp_extra_count(const hc_tapcmp *c) { return c->n_extra; }
const char *hc_tapcmp_extra_at(const hc_tapcmp *c, int i) { return c->extra[i]; }

/* Records B's taps that A lacks, once each. */
static int note_extras(hc_tapcmp *c, const hc_tapset *a, const hc_tapset *b, hc_err *err)
{
    for (int i = 0; i < hc_tapset_count(b); i++) {
        const hc_tapset_entry *lb = hc_tapset_at(b, i);
        if (!lb->rows || hc_tapset_find(a, lb->name))
            continue;
        int seen = 0;
        for (int k = 0; k < c->n_extra && !seen; k++)
            seen = !strcmp(c->extra[k], lb->name);
        if (seen)
            continue;
        if (c->n_extra == c->cap_extra) {
            int cap = c->cap_extra ? 2 * c->cap_extra : 16;
            char **ne = realloc(c->extra, (size_t)cap * sizeof *ne);
            if (!ne)
                return hc_err_set(err, HC_ENOMEM, "out of memory comparing taps");
            c->extra = ne;
            c->cap_extra = cap;
        }
        if (!(c->extra[c->n_extra] = strdup(lb->name)))
            return hc_err_set(err, HC_ENOMEM, "out of memory comparing taps");
        c->n_extra++;
    }
    return 0;
}

static hc_tapdiff *cmp_layer(hc_tapcmp *c, const hc_tapset_entry *l, hc_err *err)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->d[i].name, l->name) == 0)
            return &c->d[i];
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        hc_tapdiff *nd = realloc(c->d, (size_t)cap * sizeof *nd);
        if (!nd) {
            hc_err_set(err, HC_ENOMEM, "out of memory comparing taps");
            return NULL;
        }
        c->d = nd;
        c->cap = cap;
    }
    hc_tapdiff *d = &c->d[c->n++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", l->name);
    d->channels = l->channels;
    d->hw = l->hw;
    d->layout = l->layout;
    return d;
}

static float round_to(int fmt, float x)
{
    return fmt == HC_TAPFMT_F16 ? hc_round_fp16(x) : fmt == HC_TAPFMT_BF16 ? hc_round_bf16(x) : x;
}

int hc_tapcmp_add(hc_tapcmp *c, const hc_tapset *a, const hc_tapset *b, const float *spatial, int nc, hc_err *err)
{
    for (int i = 0; i < hc_tapset_count(a); i++) {
        const hc_tapset_entry *la = hc_tapset_at(a, i);
        if (!la->rows)
            continue;
        hc_tapdiff *d = cmp_layer(c, la, err);
        if (!d)
            return -1;
        const hc_tapset_entry *lb = hc_tapset_find(b, la->name);
        if (!lb || lb->rows != la->rows) {
            d->missing = 1;
            continue;
        }
        if (lb->channels != la->channels || lb->hw != la->hw || lb->layout != la->layout) {
            d->mismatch = 1;
            d->b_channels = lb->channels;
            d->b_hw = lb->hw;
            d->b_layout = lb->layout;
            if (lb->origin)
                snprintf(d->b_origin, sizeof d->b_origin, "%s", lb->origin);
            continue;
        }
        d->fmt = lb->fmt;
        size_t C = (size_t)la->channels, hw = (size_t)la->hw;
        for (int r = 0; r < la->rows; r++) {
            const float *mask = la->hw > 1 ? spatial + (size_t)r * nc * hw : NULL;
            const float *pa = la->data + (size_t)r * C * hw, *pb = lb->data + (size_t)r * C * hw;
            for (size_t ch = 0; ch < C; ch++)
                for (size_t p = 0; p < hw; p++) {
                    if (mask && mask[p] == 0.0f)
                        continue;
                    float x = pa[ch * hw + p], y = pb[ch * hw + p];
                    d->n++;
                    if (!isfinite(x) || !isfinite(y)) {
                        d->nonfinite++;
                        continue;
                    }
                    double e = fabs((double)x - (double)y), ax = fabs((double)x);
                    double se = fabs((double)x - (double)round_to(lb->fmt, x));
                    d->sum_abs += e;
                    d->sum_ref += ax;
                    d->stor_sum_abs += se;
                    d->sum_sq += e * e;
                    d->sum_sq_ref += ax * ax;
                    d->stor_sum_sq += se * se;
                    if (e > d->max_abs)
                        d->max_abs = e;
                    if (ax > d->max_ref)
                        d->max_ref = ax;
                    if (se > d->stor_max_abs)
                        d->stor_max_abs = se;
                }
        }
    }
    return note_extras(c, a, b, err);
}

double hc_tapdiff_mean_abs(const hc_tapdiff *d) { return d->n ? d->sum_abs / (double)d->n : 0.0; }

/* err over ref, 0 when there is no error, infinite when a layer of zeros gains one. */
static double ratio(double err, double ref) { return err == 0.0 ? 0.0 : ref > 0 ? err / ref : INFINITY; }

double hc_tapdiff_max_rel(const hc_tapdiff *d) { return d->nonfinite ? INFINITY : ratio(d->max_abs, d->max_ref); }
double hc_tapdiff_mean_rel(const hc_tapdiff *d) { return ratio(d->sum_abs, d->sum_ref); }
double hc_tapdiff_rms_rel(const hc_tapdiff *d) { return sqrt(ratio(d->sum_sq, d->sum_sq_ref)); }

int hc_tapcmp_first_divergent(const hc_tapcmp *c, double threshold)
{
    for (int i = 0; i < c->n; i++)
        if (c->d[i].missing || c->d[i].mismatch || c->d[i].nonfinite || hc_tapdiff_max_rel(&c->d[i]) > threshold)
            return i;
    return -1;
}

double hc_tapdiff_stor_rel(const hc_tapdiff *d)
{
    return d->max_ref > 0 ? d->stor_max_abs / d->max_ref : 0.0;
}

const char *hc_tapstat_str(int stat)
{
    return stat == HC_TAPSTAT_MEAN ? "mean_rel" : stat == HC_TAPSTAT_RMS ? "rms_rel" : "max_rel";
}

double hc_tapdiff_rel(const hc_tapdiff *d, int stat)
{
    return stat == HC_TAPSTAT_MEAN ? hc_tapdiff_mean_rel(d) : stat == HC_TAPSTAT_RMS ? hc_tapdiff_rms_rel(d)
                                                                                    : hc_tapdiff_max_rel(d);
}

double hc_tapdiff_stor(const hc_tapdiff *d, int stat)
{
    if (stat == HC_TAPSTAT_MEAN)
        return d->sum_ref > 0 ? d->stor_sum_abs / d->sum_ref : 0.0;
    if (stat == HC_TAPSTAT_RMS)
        return d->sum_sq_ref > 0 ? sqrt(d->stor_sum_sq / d->sum_sq_ref) : 0.0;
    return hc_tapdiff_stor_rel(d);
}

double hc_tap_fmt_floor(int fmt)
{
    return fmt == HC_TAPFMT_F16 ? ldexp(1, -11) : fmt == HC_TAPFMT_BF16 ? ldexp(1, -8) : ldexp(1, -16);
}

/* The floor u bounds one value's relative error; spread evenly over [-u|a|, u|a|] (a rounding
 * or an accumulation's error, positive and negative alike) its mean is u/2 and its RMS u/sqrt(3).
 * Rounding a layer to the format gives less on average (measured on the shared nets' layers in
 * f16: mean_rel about 0.36u, rms_rel about 0.43u), so the floors hold a correct layer's own
 * arithmetic, while an error spread over every value (a bias, a scale) stands out in the averages
 * long before it reaches the maximum's allowance, which a layer's largest values set. */
double hc_tap_fmt_floor_stat(int fmt, int stat)
{
    double u = hc_tap_fmt_floor(fmt);
    /* f32's floor is no rounding of each value but a summation order's error, which scales with
     * the sums' terms, not with each output: small outputs get as much of it as large ones, so
     * relative to mean|a| it may exceed what it is relative to max|a|. The averages keep the
     * maximum's floor there (a bias or a scale in f32 is far beyond it either way). */
    if (fmt != HC_TAPFMT_F16 && fmt != HC_TAPFMT_BF16)
        return u;
    return stat == HC_TAPSTAT_MEAN ? u / 2 : stat == HC_TAPSTAT_RMS ? u / sqrt(3.0) : u;
}

static int compared(const hc_tapdiff *d) { return !d->missing && !d->mismatch && d->n > 0; }

double hc_tapcmp_allowed(const hc_tapcmp *c, int i, int stat, double factor)
{
    /* Carried: the statistic's largest value over the layers before i. Every input of layer i
     * comes before it in A's forward order, so this bounds what its inputs bring (a residual
     * trunk carries an early error to every later layer). Each statistic is carried on its own:
     * an input's thin error spread over every value explains a thin error here, not a large one
     * at one value, and the reverse. */
    double carried = 0;
    for (int j = 0; j < i; j++) {
        const hc_tapdiff *d = &c->d[j];
        if (!compared(d) || d->nonfinite)
            continue;
        double r = hc_tapdiff_rel(d, stat);
        carried = r > carried ? r : carried;
    }
    const hc_tapdiff *d = &c->d[i];
    double own = hc_tapdiff_stor(d, stat), fl = hc_tap_fmt_floor_stat(d->fmt, stat);
    double e = carried > own ? carried : own;
    double f = stat == HC_TAPSTAT_MAX ? factor : HC_TAPS_AVG_FACTOR(factor);
    return f * (e > fl ? e : fl);
}

double hc_tapcmp_explained(const hc_tapcmp *c, int i, double factor)
{
    return hc_tapcmp_allowed(c, i, HC_TAPSTAT_MAX, factor);
}

int hc_tapcmp_diverges(const hc_tapcmp *c, int i, double factor, int *stat)
{
    const hc_tapdiff *d = &c->d[i];
    int which = -1;
    if (compared(d)) {
        if (d->nonfinite)
            which = HC_TAPSTAT_MAX;
        /* !(x <= allowed): a NaN statistic diverges too */
        for (int s = 0; s < HC_TAPSTAT_COUNT && which < 0; s++)
            if (!(hc_tapdiff_rel(d, s) <= hc_tapcmp_allowed(c, i, s, factor)))
                which = s;
    }
    if (stat)
        *stat = which;
    return which >= 0;
}

int hc_tapcmp_first_unexplained_by(const hc_tapcmp *c, double factor, int *stat)
{
    for (int i = 0; i < c->n; i++)
        if (hc_tapcmp_diverges(c, i, factor, stat))
            return i;
    if (stat)
        *stat = -1;
    return -1;
}

int hc_tapcmp_first_unexplained(const hc_tapcmp *c, double factor)
{
    return hc_tapcmp_first_unexplained_by(c, factor, NULL);
}

void hc_tapcmp_coverage(const hc_tapcmp *c, hc_tapcov *cov)
{
    memset(cov, 0, sizeof *cov);
    cov->layers = c->n;
    cov->extra = c->n_extra;
    for (int i = 0; i < c->n; i++) {
        const hc_tapdiff *d = &c->d[i];
        cov->compared += compared(d);
        cov->absent += d->missing;
        cov->mismatched += d->mismatch;
    }
}

void hc_tapcov_str(const hc_tapcov *cov, char *buf, size_t size)
{
    int k = snprintf(buf, size, "%d of %d layers compared", cov->compared, cov->layers);
    if (cov->absent > 0 && k >= 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, "; %d absent in B", cov->absent);
    if (cov->mismatched > 0 && k >= 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, "; %d of another shape in B", cov->mismatched);
    int empty = cov->layers - cov->compared - cov->absent - cov->mismatched;
    if (empty > 0 && k >= 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, "; %d with no value on the board", empty);
    if (cov->extra > 0 && k >= 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, "; %d name%s in B matched nothing", cov->extra, cov->extra == 1 ? "" : "s");
}

int hc_tapcmp_check_coverage(const hc_tapcmp *c, hc_err *err)
{
    hc_tapcov cov;
    hc_tapcmp_coverage(c, &cov);
    if (cov.compared > 0)
        return 0;
    char names[400] = "";
    size_t k = 0;
    for (int i = 0; i < c->n_extra && k + 1 < sizeof names; i++) {
        int w = snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", c->extra[i]);
        k += w > 0 ? (size_t)w : 0;
    }
    if (k >= sizeof names - 1)
        snprintf(names + sizeof names - 5, 5, "...");
    char what[200];
    hc_tapcov_str(&cov, what, sizeof what);
    if (cov.layers == 0)
        return hc_err_set(err, HC_EFORMAT, "taps: nothing compared: the reference handed back no taps");
    if (cov.mismatched > 0)
        return hc_err_set(err, HC_EFORMAT, "taps: nothing compared (%s): every layer B has under A's names has another "
                          "shape", what);
    if (cov.extra > 0)
        return hc_err_set(err, HC_EFORMAT, "taps: nothing compared (%s): none of B's tap names is one of A's layers "
                          "(B's names: %s; `halfcheck taps --layers` lists A's; a name map that misses shows here)",
                          what, names);
    return hc_err_set(err, HC_EFORMAT, "taps: nothing compared (%s): B handed back no taps", what);
}

/* ---- the driver: a pair of tapped backends behind one tensor-backend face, so that the
 * evaluation pipeline featurizes the positions exactly as it does for a run ---- */

typedef struct pair {
    hc_tapped *a, *b;
    hc_raw_heads *out_b;
    hc_tapcmp *cmp;
    int nc;
} pair;

static int pair_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                     hc_raw_heads *out, hc_err *err)
{
    pair *p = inst;
    if (hc_tapped_eval(p->a, batch, spatial, global, meta, out, err) ||
        hc_tapped_eval(p->b, batch, spatial, global, meta, p->out_b, err))
        return -1;
    return hc_tapcmp_add(p->cmp, hc_tapped_rec(p->a), hc_tapped_rec(p->b), spatial, p->nc, err);
}

static const hc_backend_ops pair_ops = {.eval = pair_eval};
/* Composed here of two backends opened through the registry; never registered, never opened by spec. */
static const hc_backend_kind pair_kind = {
    .name = "taps-pair",
    .summary = "two tapped backends compared layer by layer",
    .caps = {.shape = HC_BACKEND_TENSOR},
    .ops = &pair_ops,
};

hc_tapcmp *hc_taps_compare(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                           const char *spec_a, const char *spec_b, int batch, hc_err *err)
{
    pair p = {0};
    p.nc = net->num_input_c;
    hc_nnoutput *outs = NULL;
    hc_tapcmp *res = NULL;
    if (n == 0) {
        hc_err_set(err, HC_EUSAGE, "taps: no positions");
        return NULL;
    }
    if (!(p.a = hc_tapped_open(spec_a, net, s->nn_x, s->nn_y, batch, err)) ||
        !(p.b = hc_tapped_open(spec_b, net, s->nn_x, s->nn_y, batch, err)) ||
        !(p.out_b = hc_raw_heads_new(batch, s->nn_x, s->nn_y, net->num_policy_c, net->num_score_value_c, err)) ||
        !(p.cmp = hc_tapcmp_new(err)) || !(outs = hc_calloc(n, sizeof *outs, err, "outputs")))
        goto done;
    /* The pair is composed of two backends opened through the registry (hc_tapped_open). */
    hc_backend b = {&pair_kind, &p};
    hc_evaluator_opts eo = {.net = net, .settings = *s, .batch = batch, .backend = &b};
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    if (ev && hc_evaluator_run(ev, &req, err) == 0 && hc_tapcmp_check_coverage(p.cmp, err) == 0) {
        res = p.cmp;
        p.cmp = NULL;
    }
    hc_evaluator_close(ev);
done:
    if (outs)
        hc_nnoutputs_free(outs, n);
    hc_tapcmp_free(p.cmp);
    hc_raw_heads_free(p.out_b);
    hc_tapped_free(p.a);
    hc_tapped_free(p.b);
    return res;
}

/* ---- precision sensitivity ---- */

/* eo's backend over ps[0..n) into outs. */
static int eval_into(const hc_evaluator_opts *eo, const hc_position *ps, size_t n, hc_nnoutput *outs, hc_err *err)
{
    hc_evaluator *ev = hc_evaluator_open(eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    int rc = ev ? hc_evaluator_run(ev, &req, err) : -1;
    hc_evaluator_close(ev);
    return rc;
}

static int subset_errors(const hc_net *net, const hc_position *ps, size_t n, const hc_prec_opts *o,
                         const unsigned char *active, int n_active, const hc_nnoutput *ref, hc_prec_row *row,
                         hc_err *err)
{
    char spec[1100];
    if (snprintf(spec, sizeof spec, "%semulate:%s", o->cuda ? "cuda:" : "", o->profile) >= (int)sizeof spec)
        return hc_err_set(err, HC_EUSAGE, "precision: profile name too long: %.64s...", o->profile);
    hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = *o->settings, .batch = o->batch,
                            .threads = o->threads, .active = active, .n_active = n_active};
    hc_nnoutput *outs = hc_calloc(n, sizeof *outs, err, "outputs");
    hc_stats st;
    int rc = -1;
    if (outs && eval_into(&eo, ps, n, outs, err) == 0 && hc_stats_compute(ref, outs, n, &st, err) == 0) {
        row->winrate_avg = st.m[HC_M_WINRATE].v[HC_P_AVG];
        row->winrate_p99 = st.m[HC_M_WINRATE].v[HC_P_99];
        row->lead_avg = st.m[HC_M_LEAD].v[HC_P_AVG];
        row->policy_kl_avg = st.m[HC_M_POLICY_KL].v[HC_P_AVG];
        rc = 0;
    }
    if (outs)
        hc_nnoutputs_free(outs, n);
    return rc;
}

int hc_taps_precision(const hc_net *net, const hc_position *ps, size_t n, const hc_prec_opts *o, hc_prec_row **rows,
                      int *n_rows, hc_prec_row *full, hc_err *err)
{
    *rows = NULL;
    *n_rows = 0;
    if (n == 0)
        return hc_err_set(err, HC_EUSAGE, "precision: no positions");
    hc_layer_ref *ls = NULL;
    int nl = 0, rc = -1;
    hc_nnoutput *ref = NULL;
    hc_prec_row *out = NULL;
    unsigned char *active = NULL;
    hc_profile *prof = hc_profile_load(o->profile, err);
    hc_evaluator_opts ro = {.spec = o->cuda ? "cuda:ref32" : "ref32", .net = net, .settings = *o->settings,
                            .batch = o->batch, .threads = o->threads};
    /* hc_net_layers hands out mutable pointers; only names and kinds are read here */
    if (!prof || hc_net_layers((hc_net *)net, &ls, &nl, err))
        goto done;
    out = hc_calloc((size_t)nl + 1, sizeof *out, err, "precision rows");
    active = hc_calloc((size_t)nl + 1, 1, err, "layer flags");
    ref = hc_calloc(n, sizeof *ref, err, "outputs");
    if (!out || !active || !ref || eval_into(&ro, ps, n, ref, err))
        goto done;
    for (int i = 0; i <= nl; i++) {
        hc_prec_row *r = &out[i];
        const char *name = i < nl ? ls[i].name : "input";
        unsigned kinds = i < nl ? ls[i].kinds : HC_LK_INPUT;
        snprintf(r->name, sizeof r->name, "%s", name ? name : "?");
        r->kinds = kinds;
        hc_prof_choice ch = hc_profile_resolve(prof, net, name, kinds);
        r->storage = ch.storage;
        r->weights = ch.weights;
        if (ch.storage == HC_FMT_FP32 && ch.weights == HC_FMT_FP32)
            continue; /* the profile leaves it fp32: its error is zero by construction */
        memset(active, 0, (size_t)nl + 1);
        active[i] = 1;
        if (subset_errors(net, ps, n, o, active, nl + 1, ref, r, err)) {
            hc_err_prefix(err, "layer %s: ", r->name);
            goto done;
        }
    }
    memset(full, 0, sizeof *full);
    snprintf(full->name, sizeof full->name, "(all layers)");
    if (subset_errors(net, ps, n, o, NULL, 0, ref, full, err))
        goto done;
    *rows = out;
    *n_rows = nl + 1;
    out = NULL;
    rc = 0;
done:
    if (ref)
        hc_nnoutputs_free(ref, n);
    free(out);
    free(active);
    free(ls);
    hc_profile_free(prof);
    return rc;
}
