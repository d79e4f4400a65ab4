/* results.json read back (hc_results_read_json), the writer's mirror (results_write.c). */
#include "reports/results.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

typedef struct doc_item {
    char *net, *board, *backend, *mode, *message, *skip_message;
    hc_shown_pos *shown;
    hc_result_taps *taps;
    hc_diag_finding *diag;
    hc_stats *stats;
    hc_tier *tiers;
    hc_tier_check *checks;
} doc_item;

struct hc_results_doc {
    hc_results rs;
    hc_result *items;
    doc_item *own;
    size_t n;
    char *suite, *timestamp, *version;
    json_t *prov_json;      /* the "provenance" array, kept: the strings below point into it */
    hc_provenance *prov;
    hc_prov_net *prov_nets;
    hc_prov_backend *prov_backends;
    json_t *headroom_json;  /* the "headroom" array, kept: the strings below point into it */
    hc_result_headroom *headroom;
};

typedef struct rd {
    const char *name; /* the file, for messages */
    hc_err *err;
    char where[160];  /* "results[3].stats" */
} rd;

static int rd_fail(rd *r, const char *field, const char *what)
{
    return hc_err_set(r->err, HC_EFORMAT, "%s: %s%s%s: %s", r->name, r->where, *r->where && field ? "." : "",
                      field ? field : "", what);
}

/* A jnum: a JSON number, or the strings "nan", "inf", "-inf". */
static int rd_num(rd *r, json_t *o, const char *field, double *out)
{
    json_t *v = json_object_get(o, field);
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    const char *s = json_string_value(v);
    if (s && strcmp(s, "nan") == 0)
        *out = NAN;
    else if (s && strcmp(s, "inf") == 0)
        *out = INFINITY;
    else if (s && strcmp(s, "-inf") == 0)
        *out = -INFINITY;
    else
        return rd_fail(r, field, v ? "not a number" : "missing");
    return 0;
}

static int rd_int(rd *r, json_t *o, const char *field, long long lo, long long *out)
{
    json_t *v = json_object_get(o, field);
    if (!json_is_integer(v) || json_integer_value(v) < lo)
        return rd_fail(r, field, v ? "not an integer in range" : "missing");
    *out = json_integer_value(v);
    return 0;
}

/* A string or null (NULL); a copy in *out. */
static int rd_str(rd *r, json_t *o, const char *field, int required, char **out)
{
    json_t *v = json_object_get(o, field);
    *out = NULL;
    if (json_is_string(v)) {
        *out = strdup(json_string_value(v));
        return *out ? 0 : hc_err_set(r->err, HC_ENOMEM, "out of memory");
    }
    if ((!v || json_is_null(v)) && !required)
        return 0;
    return rd_fail(r, field, v ? "not a string" : "missing");
}

/* An optional boolean: absent reads as 0. */
static int rd_flag(rd *r, json_t *o, const char *field, int *out)
{
    json_t *v = json_object_get(o, field);
    *out = v && json_is_true(v);
    return !v || json_is_boolean(v) ? 0 : rd_fail(r, field, "not a boolean");
}

static int rd_nonfinite(rd *r, json_t *o, const char *field, hc_nonfinite *nf)
{
    json_t *v = json_object_get(o, field);
    memset(nf, 0, sizeof *nf);
    nf->index = -1;
    if (!v || json_is_null(v))
        return 0;
    long long cnt, pos, idx;
    double val;
    const char *f = json_string_value(json_object_get(v, "field"));
    if (!json_is_object(v) || rd_int(r, v, "positions", 1, &cnt) || rd_int(r, v, "firstPosition", 0, &pos) ||
        rd_int(r, v, "index", -1, &idx) || rd_num(r, v, "value", &val) || !f || strlen(f) >= sizeof nf->field)
        return r->err->code ? -1 : rd_fail(r, field, "malformed");
    nf->count = (size_t)cnt;
    nf->pos = (size_t)pos;
    nf->index = (int)idx;
    nf->value = (float)val;
    strcpy(nf->field, f);
    return 0;
}

/* A metric's "bias" (absent in results.json files written before the figures existed). */
static int rd_bias(rd *r, json_t *o, int m, hc_bias_stats *b)
{
    long long n;
    json_t *sys = json_object_get(o, "systematic");
    if (!json_is_object(o) || !hc_bias_metric_has(m))
        return rd_fail(r, "bias", "not an object, or for a metric without a signed error");
    if (rd_int(r, o, "samples", 1, &n) || rd_num(r, o, "mean", &b->mean) || rd_num(r, o, "stdErr", &b->se))
        return -1;
    if (!json_is_boolean(sys))
        return rd_fail(r, "bias.systematic", "missing or not a boolean");
    for (int p = 0; p < HC_BP_COUNT; p++)
        if (rd_num(r, o, hc_bias_pct_names[p], &b->p[p]))
            return -1;
    b->n = (size_t)n;
    b->systematic = json_is_true(sys);
    return 0;
}

static int rd_stats(rd *r, json_t *o, hc_stats *s)
{
    memset(s, 0, sizeof *s);
    long long n;
    json_t *metrics = json_object_get(o, "metrics");
    if (rd_int(r, o, "positions", 1, &n))
        return -1;
    if (!json_is_object(metrics))
        return rd_fail(r, "metrics", "missing");
    s->n_positions = (size_t)n;
    size_t base = strlen(r->where);
    for (int m = 0; m < HC_M_COUNT; m++) {
        hc_metric_stats *ms = &s->m[m];
        json_t *mo = json_object_get(metrics, hc_metric_infos[m].name);
        snprintf(r->where + base, sizeof r->where - base, ".metrics.%s", hc_metric_infos[m].name);
        if (!json_is_object(mo))
            return rd_fail(r, NULL, "missing");
        long long samples, maxpos, nonfinite, cell = -1, first = 0, inf = 0, first_inf = 0;
        if (rd_int(r, mo, "samples", 1, &samples) || rd_int(r, mo, "maxPosition", 0, &maxpos) ||
            rd_int(r, mo, "nonfinite", 0, &nonfinite) ||
            (m == HC_M_OWNERSHIP && rd_int(r, mo, "maxCell", -1, &cell)) ||
            (nonfinite && rd_int(r, mo, "firstNonfinitePosition", 0, &first)) ||
            (json_object_get(mo, "infinite") &&
             (rd_int(r, mo, "infinite", 1, &inf) || rd_int(r, mo, "firstInfinitePosition", 0, &first_inf))))
            return -1;
        ms->infinite = (size_t)inf;
        ms->first_infinite_pos = (size_t)first_inf;
        for (int p = 0; p < HC_P_COUNT; p++)
            if (rd_num(r, mo, hc_pct_names[p], &ms->v[p]))
                return -1;
        ms->n = (size_t)samples;
        ms->max_pos = (size_t)maxpos;
        ms->max_cell = (int)cell;
        ms->nonfinite = (size_t)nonfinite;
        ms->first_nonfinite_pos = (size_t)first;
        if (json_object_get(mo, "resolution") && rd_num(r, mo, "resolution", &s->res[m]))
            return -1;
        json_t *bo = json_object_get(mo, "bias");
        if (bo && rd_bias(r, bo, m, &s->bias[m]))
            return -1;
        json_t *q = json_object_get(mo, "quantiles");
        if (!json_is_array(q) || json_array_size(q) != HC_STATS_NQ)
            return rd_fail(r, "quantiles", "missing or not 65 numbers");
        for (int k = 0; k < HC_STATS_NQ; k++) {
            json_t *wrap = json_pack("{s:O}", "q", json_array_get(q, (size_t)k));
            int rc = rd_num(r, wrap, "q", &ms->q[k]);
            json_decref(wrap);
            if (rc)
                return -1;
        }
    }
    r->where[base] = 0;
    json_t *ta = json_object_get(o, "topMoveAgreement");
    if (ta) {
        long long tn, tk;
        snprintf(r->where + base, sizeof r->where - base, ".topMoveAgreement");
        if (rd_int(r, ta, "positions", 1, &tn) || rd_int(r, ta, "agree", 0, &tk))
            return -1;
        if (tk > tn)
            return rd_fail(r, "agree", "more than the positions");
        s->top_agree.n = (size_t)tn;
        s->top_agree.agree = (size_t)tk;
        r->where[base] = 0;
    }
    json_t *rr = json_object_get(o, "resolution");
    if (rr) {
        snprintf(r->where + base, sizeof r->where - base, ".resolution");
        if (rd_num(r, rr, "winrate", &s->out_res.winrate) || rd_num(r, rr, "score", &s->out_res.score) ||
            rd_num(r, rr, "policy", &s->out_res.policy) || rd_num(r, rr, "ownership", &s->out_res.ownership))
            return -1;
        r->where[base] = 0;
    }
    json_t *pts = json_object_get(o, "points");
    if (pts) {
        const char *buf = json_string_value(json_object_get(pts, "buffer"));
        json_t *own = json_object_get(pts, "ownershipMeanError"), *pol = json_object_get(pts, "policyMeanError");
        int cx, cy;
        if (!buf || sscanf(buf, "%dx%d", &cx, &cy) != 2 || cx <= 0 || cy <= 0 || cx * cy > HC_STATS_MAX_CELLS ||
            json_array_size(own) != (size_t)(cx * cy) || json_array_size(pol) != (size_t)(cx * cy))
            return rd_fail(r, "points", "malformed per-point errors");
        s->cells_x = cx;
        s->cells_y = cy;
        for (int c = 0; c < cx * cy; c++) {
            double a, b;
            json_t *wrap = json_pack("{s:O, s:O}", "o", json_array_get(own, (size_t)c), "p", json_array_get(pol, (size_t)c));
            int rc = rd_num(r, wrap, "o", &a) || rd_num(r, wrap, "p", &b);
            json_decref(wrap);
            if (rc)
                return rd_fail(r, "points", "a per-point error is not a number");
            s->own_cell[c] = (float)a;
            s->pol_cell[c] = (float)b;
        }
    }
    return rd_nonfinite(r, o, "testNonfinite", &s->test_nonfinite) || rd_nonfinite(r, o, "refNonfinite", &s->ref_nonfinite)
               ? -1
               : 0;
}

/* One tiers[] entry: the name, and for a checked result the limits and the stored verdicts,
 * which must agree with the check recomputed from the stats. */
static int rd_tier(rd *r, json_t *o, const hc_stats *stats, hc_tier *t, hc_tier_check *c, int *has_check)
{
    const char *name = json_string_value(json_object_get(o, "tier"));
    if (!name || strlen(name) >= sizeof t->name)
        return rd_fail(r, "tier", "missing or too long");
    hc_tier_init(t, name);
    json_t *limits = json_object_get(o, "limits");
    *has_check = json_object_get(o, "pass") != NULL;
    if (!*has_check)
        return 0;
    if (!stats)
        return rd_fail(r, "pass", "a tier check without stats");
    if (!json_is_array(limits))
        return rd_fail(r, "limits", "missing");
    int stored[HC_M_COUNT][HC_P_COUNT] = {{0}};
    size_t i;
    json_t *l;
    json_array_foreach(limits, i, l) {
        int m = hc_metric_by_name(json_string_value(json_object_get(l, "metric")));
        int p = hc_pct_by_name(json_string_value(json_object_get(l, "percentile")));
        const char *v = json_string_value(json_object_get(l, "verdict"));
        double limit, scale;
        if (m < 0 || p < 0 || !v || rd_num(r, l, "limit", &limit) || rd_num(r, l, "scale", &scale) ||
            hc_tier_set(t, m, p, scale, limit, r->err)) {
            char why[sizeof r->err->msg];
            snprintf(why, sizeof why, "%s", r->err->code ? r->err->msg : "malformed limit");
            return rd_fail(r, "limits", why);
        }
        for (int k = 0; k < 4; k++)
            if (strcmp(v, hc_verdict_names[k]) == 0)
                stored[m][p] = k;
    }
    int stored_bias[HC_M_COUNT] = {0};
    json_t *bl = json_object_get(o, "biasLimits");
    if (bl && !json_is_array(bl))
        return rd_fail(r, "biasLimits", "not an array");
    json_array_foreach(bl, i, l) {
        int m = hc_metric_by_name(json_string_value(json_object_get(l, "metric")));
        const char *v = json_string_value(json_object_get(l, "verdict"));
        double limit, scale;
        if (m < 0 || !v || rd_num(r, l, "limit", &limit) || rd_num(r, l, "scale", &scale) ||
            hc_tier_set_bias(t, m, scale, limit, r->err)) {
            char why[sizeof r->err->msg];
            snprintf(why, sizeof why, "%s", r->err->code ? r->err->msg : "malformed limit");
            return rd_fail(r, "biasLimits", why);
        }
        for (int k = 0; k < 4; k++)
            if (strcmp(v, hc_verdict_names[k]) == 0)
                stored_bias[m] = k;
    }
    hc_tier_check_stats(t, stats, c);
    for (int m = 0; m < HC_M_COUNT; m++)
        if (t->bias_set[m] && stored_bias[m] != c->bias_verdict[m])
            return rd_fail(r, "biasLimits", "a stored verdict disagrees with the stats");
    int pass = json_is_true(json_object_get(o, "pass"));
    for (int m = 0; m < HC_M_COUNT; m++)
        for (int p = 0; p < HC_P_COUNT; p++)
            if (t->set[m][p] && stored[m][p] != c->verdict[m][p])
                return rd_fail(r, "limits", "a stored verdict disagrees with the stats");
    if (pass != c->pass)
        return rd_fail(r, "pass", "disagrees with the stats");
    return 0;
}

/* A string field copied into a fixed buffer. */
static int rd_strbuf(rd *r, json_t *o, const char *field, char *buf, size_t len)
{
    const char *v = json_string_value(json_object_get(o, field));
    if (!v || strlen(v) >= len)
        return rd_fail(r, field, v ? "too long" : "missing or not a string");
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

static int rd_pla(rd *r, json_t *o, const char *field, int *out)
{
    const char *v = json_string_value(json_object_get(o, field));
    if (!v || (strcmp(v, "B") && strcmp(v, "W")))
        return rd_fail(r, field, "not \"B\" or \"W\"");
    *out = v[0] == 'B' ? 1 : 2;
    return 0;
}

static int rd_moves(rd *r, json_t *o, const char *field, const hc_shown_pos *sp, hc_shown_move *m, int *n)
{
    json_t *a = json_object_get(o, field);
    if (!json_is_array(a) || json_array_size(a) > HC_SHOW_TOP)
        return rd_fail(r, field, "not an array of at most 4 moves");
    *n = (int)json_array_size(a);
    for (int i = 0; i < *n; i++) {
        json_t *e = json_array_get(a, (size_t)i);
        long long x, y;
        if (rd_int(r, e, "x", -1, &x) || rd_int(r, e, "y", -1, &y) || rd_num(r, e, "p", &m[i].prob))
            return -1;
        if (x >= sp->x_size || y >= sp->y_size || (x < 0) != (y < 0))
            return rd_fail(r, field, "a move off the board");
        m[i].x = (int)x;
        m[i].y = (int)y;
    }
    return 0;
}

static int rd_shown(rd *r, json_t *o, hc_shown_pos *sp)
{
    memset(sp, 0, sizeof *sp);
    const char *metric = json_string_value(json_object_get(o, "metric"));
    const char *stat = json_string_value(json_object_get(o, "stat"));
    sp->metric = hc_metric_by_name(metric);
    sp->pct = hc_pct_by_name(stat);
    if (sp->metric < 0 || sp->pct < 0)
        return rd_fail(r, "metric", "unknown metric or stat");
    long long cell, pos, line, sym;
    const char *size = json_string_value(json_object_get(o, "size"));
    if (!size || sscanf(size, "%dx%d", &sp->x_size, &sp->y_size) != 2 || sp->x_size < 1 || sp->y_size < 1 ||
        sp->x_size * sp->y_size > HC_SHOW_CELLS)
        return rd_fail(r, "size", "not WxH within 19x19");
    if (rd_num(r, o, "error", &sp->error) || rd_int(r, o, "cell", -1, &cell) || rd_int(r, o, "position", 0, &pos) ||
        rd_int(r, o, "fileLine", 0, &line) || rd_int(r, o, "symmetry", 0, &sym) || rd_num(r, o, "komi", &sp->komi) ||
        rd_strbuf(r, o, "rules", sp->rules, sizeof sp->rules) ||
        rd_strbuf(r, o, "rerunCase", sp->rerun_case, sizeof sp->rerun_case) ||
        rd_strbuf(r, o, "rerunPosition", sp->rerun_position, sizeof sp->rerun_position) ||
        rd_pla(r, o, "nextPla", &sp->next_pla))
        return -1;
    if (cell >= sp->x_size * sp->y_size || sym > 7)
        return rd_fail(r, "cell", "cell or symmetry out of range");
    sp->cell = (int)cell;
    sp->index = (long)pos;
    sp->file_line = (long)line;
    sp->symmetry = (int)sym;
    json_t *rows = json_object_get(o, "stones");
    if (!json_is_array(rows) || json_array_size(rows) != (size_t)sp->y_size)
        return rd_fail(r, "stones", "not one string per row");
    for (int y = 0; y < sp->y_size; y++) {
        const char *row = json_string_value(json_array_get(rows, (size_t)y));
        if (!row || strlen(row) != (size_t)sp->x_size || strspn(row, ".XO") != (size_t)sp->x_size)
            return rd_fail(r, "stones", "a row that is not x_size of '.', 'X', 'O'");
        memcpy(sp->stones + y * sp->x_size, row, (size_t)sp->x_size);
    }
    json_t *last = json_object_get(o, "lastMove");
    if (last && !json_is_null(last)) {
        long long x, y;
        if (rd_pla(r, last, "pla", &sp->last_pla) || rd_int(r, last, "x", -1, &x) || rd_int(r, last, "y", -1, &y))
            return -1;
        if (x >= sp->x_size || y >= sp->y_size)
            return rd_fail(r, "lastMove", "off the board");
        sp->last_x = (int)x;
        sp->last_y = (int)y;
    } else {
        sp->last_x = sp->last_y = -1;
    }
    int na, nb;
    if (rd_moves(r, o, "refTop", sp, sp->ref_top, &na) || rd_moves(r, o, "testTop", sp, sp->test_top, &nb))
        return -1;
    if (na != nb)
        return rd_fail(r, "testTop", "not as many moves as refTop");
    sp->n_top = na;
    json_t *own = json_object_get(o, "ownershipDiff");
    if (own && !json_is_null(own)) {
        if (!json_is_array(own) || json_array_size(own) != (size_t)(sp->x_size * sp->y_size))
            return rd_fail(r, "ownershipDiff", "not one number per point");
        for (int i = 0; i < sp->x_size * sp->y_size; i++) {
            double d;
            json_t *wrap = json_pack("{s:O}", "v", json_array_get(own, (size_t)i));
            int bad = !wrap || rd_num(r, wrap, "v", &d);
            json_decref(wrap);
            if (bad)
                return bad && !wrap ? hc_err_set(r->err, HC_ENOMEM, "out of memory") : -1;
            sp->own_diff[i] = (float)d;
        }
        sp->has_own = 1;
    }
    return 0;
}

static int rd_taps(rd *r, json_t *o, hc_result_taps *t)
{
    json_t *pos = json_object_get(o, "positions"), *layers = json_object_get(o, "layers");
    if (!json_is_array(pos) || !json_is_array(layers))
        return rd_fail(r, json_is_array(pos) ? "layers" : "positions", "missing");
    const char *ref = json_string_value(json_object_get(o, "reference"));
    if (!ref || strcmp(ref, "ref32") != 0)
        return rd_fail(r, "reference", "not \"ref32\"");
    if (rd_str(r, o, "firstDivergent", 0, &t->first) || rd_str(r, o, "error", 0, &t->error))
        return -1;
    t->positions = calloc(json_array_size(pos) + 1, sizeof *t->positions);
    t->layers = calloc(json_array_size(layers) + 1, sizeof *t->layers);
    if (!t->positions || !t->layers)
        return hc_err_set(r->err, HC_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(pos); i++) {
        json_t *v = json_array_get(pos, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return rd_fail(r, "positions", "not an array of positions");
        t->positions[t->n_positions++] = (size_t)json_integer_value(v);
    }
    size_t base = strlen(r->where);
    for (size_t i = 0; i < json_array_size(layers); i++) {
        json_t *l = json_array_get(layers, i);
        hc_result_taplayer *x = &t->layers[i];
        snprintf(r->where + base, sizeof r->where - base, ".layers[%zu]", i);
        char *fmt = NULL;
        int rc = rd_str(r, l, "layer", 1, &x->name) || rd_str(r, l, "format", 1, &fmt);
        t->n_layers = i + 1;
        if (!rc && strlen(fmt) >= sizeof x->fmt)
            rc = rd_fail(r, "format", "not a tap format");
        if (!rc)
            snprintf(x->fmt, sizeof x->fmt, "%s", fmt);
        free(fmt);
        json_t *cmp = json_object_get(l, "compared");
        if (!rc && !json_is_boolean(cmp))
            rc = rd_fail(r, "compared", cmp ? "not a boolean" : "missing");
        if (rc || rd_num(r, l, "maxAbs", &x->max_abs) || rd_num(r, l, "meanAbs", &x->mean_abs) ||
            rd_num(r, l, "maxRel", &x->max_rel) || rd_num(r, l, "meanRel", &x->mean_rel) ||
            rd_num(r, l, "storageRel", &x->stor_rel) || rd_num(r, l, "explained", &x->explained))
            return -1;
        x->compared = json_is_true(cmp);
    }
    r->where[base] = 0;
    return 0;
}

/* An optional figure of "engine": null (or absent) is unknown (-1). */
static int rd_opt_num(rd *r, json_t *o, const char *field, double *out)
{
    json_t *v = json_object_get(o, field);
    if (!v || json_is_null(v)) {
        *out = -1;
        return 0;
    }
    return rd_num(r, o, field, out);
}

static int rd_engine(rd *r, json_t *o, hc_engine_stats *e)
{
    size_t base = strlen(r->where);
    snprintf(r->where + base, sizeof r->where - base, ".engine");
    if (!json_is_object(o))
        return rd_fail(r, NULL, "not an object");
    *e = hc_engine_stats_unknown();
    double pos, rows, batches, procs, maxb = -1;
    json_t *pr = json_object_get(o, "processes");
    if (rd_opt_num(r, o, "positions", &pos) || rd_opt_num(r, o, "evalSeconds", &e->eval_seconds) ||
        rd_opt_num(r, o, "peakRssKiB", &e->peak_rss_kib) || rd_opt_num(r, o, "nnRows", &rows) ||
        rd_opt_num(r, o, "nnBatches", &batches) || rd_opt_num(r, o, "avgBatchSize", &e->avg_batch) ||
        rd_opt_num(r, o, "processes", &procs) || rd_opt_num(r, o, "maxBatchSize", &maxb) ||
        rd_flag(r, o, "batching", &e->batching) || rd_flag(r, o, "batchesFormedByEngine", &e->engine_batches))
        return -1;
    if (!pr)
        procs = 0;
    e->positions = (long)pos;
    e->nn_rows = (long)rows;
    e->nn_batches = (long)batches;
    e->max_batch = maxb > 0 ? (long)maxb : -1;
    e->engines = procs > 0 ? (int)procs : 0;
    const char *v = json_string_value(json_object_get(o, "version"));
    snprintf(e->version, sizeof e->version, "%s", v ? v : "");
    r->where[base] = 0;
    return 0;
}

static int rd_result(rd *r, json_t *o, hc_result *res, doc_item *own)
{
    static const char *const outcomes[] = {"checked", "error", "skipped"};
    memset(res, 0, sizeof *res);
    if (!json_is_object(o))
        return rd_fail(r, NULL, "not an object");
    if (rd_str(r, o, "net", 1, &own->net) || rd_str(r, o, "board", 1, &own->board) ||
        rd_str(r, o, "backend", 1, &own->backend) || rd_str(r, o, "mode", 1, &own->mode) ||
        rd_str(r, o, "message", 0, &own->message) || rd_num(r, o, "seconds", &res->seconds))
        return -1;
    res->net = own->net;
    res->board = own->board;
    res->backend = own->backend;
    res->mode = own->mode;
    res->message = own->message;
    const char *oc = json_string_value(json_object_get(o, "outcome"));
    res->outcome = -1;
    for (int k = 0; oc && k < 3; k++)
        if (strcmp(oc, outcomes[k]) == 0)
            res->outcome = k;
    if (res->outcome < 0)
        return rd_fail(r, "outcome", "not checked, error or skipped");
    if (json_object_get(o, "modelVersion")) {
        long long mv;
        if (rd_int(r, o, "modelVersion", 1, &mv))
            return -1;
        res->model_version = (int)mv;
    }
    json_t *set = json_object_get(o, "settings");
    if (set) {
        const char *buf = json_string_value(json_object_get(set, "nnBuffer"));
        long long mbs;
        size_t base = strlen(r->where);
        snprintf(r->where + base, sizeof r->where - base, ".settings");
        if (!buf || sscanf(buf, "%dx%d", &res->nn_x_len, &res->nn_y_len) != 2 || res->nn_x_len <= 0)
            return rd_fail(r, "nnBuffer", "not WxH");
        if (rd_int(r, set, "maxBatchSize", 1, &mbs) || rd_num(r, set, "policyOptimism", &res->policy_optimism) ||
            rd_num(r, set, "playoutDoublingAdvantage", &res->pda) ||
            rd_num(r, set, "policyTemperature", &res->policy_temperature))
            return -1;
        res->max_batch_size = (int)mbs;
        r->where[base] = 0;
    }
    json_t *sk = json_object_get(o, "skippedPositions");
    if (sk) {
        long long cnt;
        size_t base = strlen(r->where);
        snprintf(r->where + base, sizeof r->where - base, ".skippedPositions");
        if (rd_int(r, sk, "count", 1, &cnt) || rd_str(r, sk, "message", 0, &own->skip_message))
            return -1;
        res->n_skipped = (size_t)cnt;
        res->skip_message = own->skip_message;
        r->where[base] = 0;
    }
    json_t *shown = json_object_get(o, "shownPositions");
    if (shown) {
        size_t ns = json_array_size(shown);
        if (!json_is_array(shown) || ns == 0 || ns > HC_SHOW_MAX)
            return rd_fail(r, "shownPositions", "not an array of 1 to 3 positions");
        own->shown = calloc(ns, sizeof *own->shown);
        if (!own->shown)
            return hc_err_set(r->err, HC_ENOMEM, "out of memory");
        size_t base = strlen(r->where);
        for (size_t i = 0; i < ns; i++) {
            snprintf(r->where + base, sizeof r->where - base, ".shownPositions[%zu]", i);
            if (rd_shown(r, json_array_get(shown, i), &own->shown[i]))
                return -1;
        }
        r->where[base] = 0;
        res->n_shown = ns;
        res->shown = own->shown;
    }
    json_t *eng = json_object_get(o, "engine");
    if (eng && rd_engine(r, eng, &res->engine))
        return -1;
    res->has_engine = eng != NULL;
    json_t *tp = json_object_get(o, "taps");
    if (tp) {
        size_t base = strlen(r->where);
        snprintf(r->where + base, sizeof r->where - base, ".taps");
        own->taps = calloc(1, sizeof *own->taps);
        if (!own->taps)
            return hc_err_set(r->err, HC_ENOMEM, "out of memory");
        if (rd_taps(r, tp, own->taps))
            return -1;
        r->where[base] = 0;
        res->taps = own->taps;
    }
    json_t *dg = json_object_get(o, "diagnosis");
    if (dg) {
        size_t nd = json_array_size(dg);
        if (!json_is_array(dg) || nd == 0)
            return rd_fail(r, "diagnosis", "not a non-empty array");
        own->diag = calloc(nd, sizeof *own->diag);
        if (!own->diag)
            return hc_err_set(r->err, HC_ENOMEM, "out of memory");
        size_t base = strlen(r->where);
        for (size_t i = 0; i < nd; i++) {
            json_t *e = json_array_get(dg, i);
            hc_diag_finding *f = &own->diag[i];
            snprintf(r->where + base, sizeof r->where - base, ".diagnosis[%zu]", i);
            const char *kind = json_string_value(json_object_get(e, "kind"));
            long long pos, other, miss, extra;
            f->kind = -1;
            for (int k = 0; kind && k < HC_DIAG_COUNT; k++)
                if (strcmp(kind, hc_diag_kind_names[k]) == 0)
                    f->kind = k;
            if (f->kind < 0)
                return rd_fail(r, "kind", "not swapped, stale, foreign or legal");
            if (rd_int(r, e, "position", 0, &pos) || rd_int(r, e, "other", 0, &other) ||
                rd_int(r, e, "legalMissing", 0, &miss) || rd_int(r, e, "legalExtra", 0, &extra) ||
                rd_num(r, e, "ownDistance", &f->own_dist) || rd_num(r, e, "otherDistance", &f->other_dist) ||
                rd_flag(r, e, "sameBatch", &f->same_batch))
                return -1;
            f->pos = (size_t)pos;
            f->other = (size_t)other;
            f->legal_missing = (int)miss;
            f->legal_extra = (int)extra;
        }
        r->where[base] = 0;
        res->n_diag = nd;
        res->diag = own->diag;
    }
    if (rd_flag(r, o, "selfCheck", &res->self_check))
        return -1;
    json_t *st = json_object_get(o, "stats");
    if (st) {
        size_t base = strlen(r->where);
        snprintf(r->where + base, sizeof r->where - base, ".stats");
        own->stats = malloc(sizeof *own->stats);
        if (!own->stats)
            return hc_err_set(r->err, HC_ENOMEM, "out of memory");
        if (rd_stats(r, st, own->stats))
            return -1;
        r->where[base] = 0;
        res->stats = own->stats;
    } else if (res->outcome == HC_OUT_CHECKED) {
        return rd_fail(r, "stats", "missing for a checked result");
    }
    json_t *tiers = json_object_get(o, "tiers");
    if (!json_is_array(tiers))
        return rd_fail(r, "tiers", "missing");
    size_t nt = json_array_size(tiers);
    own->tiers = calloc(nt ? nt : 1, sizeof *own->tiers);
    own->checks = calloc(nt ? nt : 1, sizeof *own->checks);
    if (!own->tiers || !own->checks)
        return hc_err_set(r->err, HC_ENOMEM, "out of memory");
    int n_checked = 0;
    size_t base = strlen(r->where);
    for (size_t i = 0; i < nt; i++) {
        int has = 0;
        snprintf(r->where + base, sizeof r->where - base, ".tiers[%zu]", i);
        if (rd_tier(r, json_array_get(tiers, i), res->stats, &own->tiers[i], &own->checks[i], &has))
            return -1;
        n_checked += has;
    }
    r->where[base] = 0;
    if (res->outcome == HC_OUT_CHECKED && n_checked != (int)nt)
        return rd_fail(r, "tiers", "a checked result with an unchecked tier");
    res->n_tiers = nt;
    res->tiers = own->tiers;
    res->checks = res->outcome == HC_OUT_CHECKED ? own->checks : NULL;
    return 0;
}

void hc_results_doc_free(hc_results_doc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        doc_item *o = &d->own[i];
        free(o->net);
        free(o->board);
        free(o->backend);
        free(o->mode);
        free(o->message);
        free(o->skip_message);
        free(o->shown);
        hc_result_taps_free(o->taps);
        free(o->diag);
        free(o->stats);
        free(o->tiers);
        free(o->checks);
    }
    free(d->items);
    free(d->own);
    free(d->suite);
    free(d->timestamp);
    free(d->version);
    free(d->prov);
    free(d->prov_nets);
    free(d->prov_backends);
    if (d->prov_json)
        json_decref(d->prov_json);
    free(d->headroom);
    if (d->headroom_json)
        json_decref(d->headroom_json);
    free(d);
}

/* A string field of o or NULL (absent or null); -1 when present and not a string. */
static int rd_pstr(rd *r, json_t *o, const char *field, const char **out)
{
    json_t *v = json_object_get(o, field);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return rd_fail(r, field, "not a string");
    *out = json_string_value(v);
    return 0;
}

/* "provenance": what produced the figures (absent in older files). */
static int rd_provenance(rd *r, json_t *root, hc_results_doc *d)
{
    json_t *a = json_object_get(root, "provenance");
    if (!a)
        return 0;
    if (!json_is_array(a))
        return rd_fail(r, "provenance", "not an array");
    size_t n = json_array_size(a), nn = 0, nb = 0;
    for (size_t k = 0; k < n; k++) {
        json_t *o = json_array_get(a, k);
        if (!json_is_object(o) || !json_is_array(json_object_get(o, "nets")) ||
            !json_is_array(json_object_get(o, "backends")))
            return rd_fail(r, "provenance", "an entry without nets and backends");
        nn += json_array_size(json_object_get(o, "nets"));
        nb += json_array_size(json_object_get(o, "backends"));
    }
    d->prov_json = json_incref(a);
    d->prov = calloc(n ? n : 1, sizeof *d->prov);
    d->prov_nets = calloc(nn ? nn : 1, sizeof *d->prov_nets);
    d->prov_backends = calloc(nb ? nb : 1, sizeof *d->prov_backends);
    if (!d->prov || !d->prov_nets || !d->prov_backends)
        return hc_err_set(r->err, HC_ENOMEM, "out of memory");
    size_t in = 0, ib = 0;
    for (size_t k = 0; k < n; k++) {
        json_t *o = json_array_get(a, k), *nets = json_object_get(o, "nets"), *bks = json_object_get(o, "backends");
        hc_provenance *p = &d->prov[k];
        long long ev = 0, mv = 0;
        snprintf(r->where, sizeof r->where, "provenance[%zu]", k);
        if (rd_pstr(r, o, "job", &p->job) || rd_pstr(r, o, "host", &p->host) || rd_pstr(r, o, "device", &p->device) ||
            rd_pstr(r, o, "halfcheck", &p->halfcheck) ||
            rd_int(r, o, "engineVersion", 0, &ev) || rd_pstr(r, o, "kernels", &p->kernels) ||
            rd_flag(r, o, "cuda", &p->cuda) || rd_pstr(r, o, "command", &p->command))
            return -1;
        p->engine_version = (int)ev;
        p->nets = &d->prov_nets[in];
        p->n_nets = json_array_size(nets);
        for (size_t i = 0; i < p->n_nets; i++, in++) {
            json_t *x = json_array_get(nets, i);
            snprintf(r->where, sizeof r->where, "provenance[%zu].nets[%zu]", k, i);
            if (!json_is_object(x) || rd_pstr(r, x, "name", &d->prov_nets[in].name) ||
                rd_pstr(r, x, "file", &d->prov_nets[in].file) || rd_pstr(r, x, "sha256", &d->prov_nets[in].sha256) ||
                rd_int(r, x, "modelVersion", 0, &mv))
                return json_is_object(x) ? -1 : rd_fail(r, NULL, "not an object");
            d->prov_nets[in].model_version = (int)mv;
        }
        p->backends = &d->prov_backends[ib];
        p->n_backends = json_array_size(bks);
        for (size_t i = 0; i < p->n_backends; i++, ib++) {
            json_t *x = json_array_get(bks, i);
            snprintf(r->where, sizeof r->where, "provenance[%zu].backends[%zu]", k, i);
            if (!json_is_object(x) || rd_pstr(r, x, "name", &d->prov_backends[ib].name) ||
                rd_pstr(r, x, "engine", &d->prov_backends[ib].engine))
                return json_is_object(x) ? -1 : rd_fail(r, NULL, "not an object");
        }
    }
    r->where[0] = '\0';
    d->rs.prov = d->prov;
    d->rs.n_prov = n;
    return 0;
}

/* "headroom": the suite's headroom rows (absent when the suite measured none). */
static int rd_headroom(rd *r, json_t *root, hc_results_doc *d)
{
    json_t *a = json_object_get(root, "headroom");
    if (!a)
        return 0;
    if (!json_is_array(a))
        return rd_fail(r, "headroom", "not an array");
    size_t n = json_array_size(a);
    d->headroom_json = json_incref(a);
    if (!(d->headroom = calloc(n ? n : 1, sizeof *d->headroom)))
        return hc_err_set(r->err, HC_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) {
        json_t *o = json_array_get(a, k);
        hc_result_headroom *h = &d->headroom[k];
        long long pos = 0;
        snprintf(r->where, sizeof r->where, "headroom[%zu]", k);
        if (!json_is_object(o))
            return rd_fail(r, NULL, "not an object");
        if (rd_pstr(r, o, "net", &h->net) || rd_pstr(r, o, "board", &h->board) || rd_pstr(r, o, "format", &h->format) ||
            rd_pstr(r, o, "layer", &h->layer) || rd_pstr(r, o, "what", &h->what) || rd_num(r, o, "value", &h->value) ||
            rd_int(r, o, "position", -1, &pos) || rd_num(r, o, "margin", &h->margin))
            return -1;
        if (!h->net || !h->board || !h->format || !h->layer || !h->what)
            return rd_fail(r, NULL, "net, board, format, layer and what are required");
        h->position = (long)pos;
    }
    r->where[0] = '\0';
    d->rs.headroom = d->headroom;
    d->rs.n_headroom = n;
    return 0;
}

hc_results_doc *hc_results_parse_json(const char *text, size_t len, const char *name, hc_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        hc_err_set(err, HC_EFORMAT, "%s:%d:%d: %s", name, je.line, je.column, je.text);
        return NULL;
    }
    hc_results_doc *d = calloc(1, sizeof *d);
    rd r = {name, err, ""};
    json_t *items = json_object_get(root, "results");
    int ok = d != NULL;
    if (!d)
        hc_err_set(err, HC_ENOMEM, "out of memory");
    if (ok && (!json_is_object(root) || !json_is_integer(json_object_get(root, "format")) ||
               json_integer_value(json_object_get(root, "format")) != 1)) {
        rd_fail(&r, "format", "not a results.json of format 1");
        ok = 0;
    }
    if (ok && !json_is_array(items)) {
        rd_fail(&r, "results", "missing");
        ok = 0;
    }
    if (ok && (rd_str(&r, root, "suite", 0, &d->suite) || rd_str(&r, root, "timestamp", 0, &d->timestamp) ||
               rd_str(&r, root, "version", 0, &d->version)))
        ok = 0;
    if (ok && (rd_flag(&r, root, "interrupted", &d->rs.interrupted) || rd_flag(&r, root, "allowSkips", &d->rs.allow_skips)))
        ok = 0;
    if (ok && rd_provenance(&r, root, d))
        ok = 0;
    if (ok && rd_headroom(&r, root, d))
        ok = 0;
    if (ok) {
        size_t n = json_array_size(items);
        d->items = calloc(n ? n : 1, sizeof *d->items);
        d->own = calloc(n ? n : 1, sizeof *d->own);
        if (!d->items || !d->own) {
            hc_err_set(err, HC_ENOMEM, "out of memory");
            ok = 0;
        }
        for (size_t i = 0; ok && i < n; i++) {
            snprintf(r.where, sizeof r.where, "results[%zu]", i);
            d->n = i + 1;
            ok = rd_result(&r, json_array_get(items, i), &d->items[i], &d->own[i]) == 0;
        }
    }
    json_decref(root);
    if (!ok) {
        hc_results_doc_free(d);
        return NULL;
    }
    d->rs.suite = d->suite;
    d->rs.timestamp = d->timestamp;
    d->rs.version = d->version;
    d->rs.items = d->items;
    d->rs.n = d->n;
    return d;
}

hc_results_doc *hc_results_read_json(const char *path, hc_err *err)
{
    size_t len;
    char *text = hc_read_file(path, (size_t)1 << 30, &len, err);
    if (!text)
        return NULL;
    hc_results_doc *d = hc_results_parse_json(text, len, path, err);
    free(text);
    return d;
}

const hc_results *hc_results_doc_results(const hc_results_doc *d)
{
    return &d->rs;
}
