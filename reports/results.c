#include "results.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

int hc_result_is_error(const hc_result *r)
{
    if (r->outcome == HC_OUT_ERROR)
        return 1;
    return r->outcome == HC_OUT_CHECKED && r->stats && hc_stats_any_nonfinite(r->stats);
}

const char *hc_result_nonfinite_text(const hc_result *r, char *buf, size_t len)
{
    const hc_stats *s = r->stats;
    buf[0] = 0;
    if (!s)
        return buf;
    const hc_nonfinite *nf = s->test_nonfinite.count ? &s->test_nonfinite : s->ref_nonfinite.count ? &s->ref_nonfinite : NULL;
    if (nf) {
        char idx[32] = "";
        if (nf->index >= 0)
            snprintf(idx, sizeof idx, "[%d]", nf->index);
        snprintf(buf, len, "non-finite %s%s = %g at position %zu (%s outputs; %zu position%s affected)", nf->field, idx,
                 (double)nf->value, nf->pos, nf == &s->test_nonfinite ? "test" : "reference", nf->count,
                 nf->count == 1 ? "" : "s");
        return buf;
    }
    for (int m = 0; m < HC_M_COUNT; m++) {
        if (s->m[m].nonfinite) {
            snprintf(buf, len, "non-finite %s at position %zu (%zu sample%s)", hc_metric_infos[m].name,
                     s->m[m].first_nonfinite_pos, s->m[m].nonfinite, s->m[m].nonfinite == 1 ? "" : "s");
            return buf;
        }
    }
    return buf;
}

const char *hc_metric_format(int metric, double raw, char *buf, size_t len)
{
    const hc_metric_info *mi = &hc_metric_infos[metric];
    double v = raw * mi->display_scale;
    if (!isfinite(v))
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, len, metric == HC_M_POLICY_KL ? "%.6f%s" : "%.5f%s", v, mi->unit);
    return buf;
}

const char *hc_limit_format(const hc_tier *t, int metric, int pct, char *buf, size_t len)
{
    if (!t->set[metric][pct]) {
        snprintf(buf, len, "-");
        return buf;
    }
    const hc_metric_info *mi = &hc_metric_infos[metric];
    snprintf(buf, len, "%.6g%s", t->limit[metric][pct] / t->scale[metric][pct] * mi->display_scale, mi->unit);
    return buf;
}

char *hc_result_failure_text(const hc_result *r, size_t tier)
{
    size_t cap = 4096, used = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = 0;
    if (!r->checks || !r->stats || tier >= r->n_tiers)
        return out;
    const hc_tier *t = &r->tiers[tier];
    const hc_tier_check *c = &r->checks[tier];
    for (int p = 0; p < HC_P_COUNT; p++) {
        for (int m = 0; m < HC_M_COUNT; m++) {
            int v = c->verdict[m][p];
            if (v != HC_V_FAIL && v != HC_V_NONFINITE)
                continue;
            char val[64], lim[64], line[400], cell[32] = "";
            const hc_metric_stats *ms = &r->stats->m[m];
            if (m == HC_M_OWNERSHIP && ms->max_cell >= 0)
                snprintf(cell, sizeof cell, ", cell %d", ms->max_cell);
            snprintf(line, sizeof line, "%s %s: %s %s limit %s (worst position %zu%s)\n", hc_metric_infos[m].name,
                     hc_pct_names[p], hc_metric_format(m, ms->v[p], val, sizeof val),
                     v == HC_V_NONFINITE ? "is non-finite, against" : ">", hc_limit_format(t, m, p, lim, sizeof lim),
                     ms->max_pos, cell);
            size_t n = strlen(line);
            if (used + n + 1 > cap) {
                char *np = realloc(out, cap * 2 + n);
                if (!np)
                    return out;
                out = np;
                cap = cap * 2 + n;
            }
            memcpy(out + used, line, n + 1);
            used += n;
        }
    }
    return out;
}

/* JSON has no NaN or infinity: those become the strings "nan", "inf", "-inf". */
static json_t *jnum(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x);
}

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *nonfinite_json(const hc_nonfinite *nf)
{
    if (!nf->count)
        return json_null();
    return json_pack("{s:I, s:I, s:s, s:i, s:o}", "positions", (json_int_t)nf->count, "firstPosition",
                     (json_int_t)nf->pos, "field", nf->field, "index", nf->index, "value", jnum(nf->value));
}

static json_t *stats_json(const hc_stats *s)
{
    json_t *metrics = json_object();
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *ms = &s->m[m];
        json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:I}", "samples", (json_int_t)ms->n, "avg",
                              jnum(ms->v[HC_P_AVG]), "p90", jnum(ms->v[HC_P_90]), "p99", jnum(ms->v[HC_P_99]), "max",
                              jnum(ms->v[HC_P_MAX]), "maxPosition", (json_int_t)ms->max_pos, "nonfinite",
                              (json_int_t)ms->nonfinite);
        if (m == HC_M_OWNERSHIP)
            json_object_set_new(o, "maxCell", json_integer(ms->max_cell));
        json_object_set_new(metrics, hc_metric_infos[m].name, o);
    }
    return json_pack("{s:I, s:o, s:o, s:o}", "positions", (json_int_t)s->n_positions, "metrics", metrics,
                     "testNonfinite", nonfinite_json(&s->test_nonfinite), "refNonfinite",
                     nonfinite_json(&s->ref_nonfinite));
}

static json_t *check_json(const hc_tier *t, const hc_tier_check *c)
{
    json_t *limits = json_array();
    for (int p = 0; p < HC_P_COUNT; p++) {
        for (int m = 0; m < HC_M_COUNT; m++) {
            if (!t->set[m][p])
                continue;
            json_array_append_new(limits,
                                  json_pack("{s:s, s:s, s:o, s:o, s:o, s:s}", "metric", hc_metric_infos[m].name,
                                            "percentile", hc_pct_names[p], "limit", jnum(t->limit[m][p]), "scale",
                                            jnum(t->scale[m][p]), "ratio", jnum(c->ratio[m][p]), "verdict",
                                            hc_verdict_names[c->verdict[m][p]]));
        }
    }
    json_t *closest = json_null();
    if (c->worst_all_metric >= 0)
        closest = json_pack("{s:s, s:s, s:o}", "metric", hc_metric_infos[c->worst_all_metric].name, "percentile",
                            hc_pct_names[c->worst_all_pct], "ratio", jnum(c->worst_all_ratio));
    return json_pack("{s:s, s:b, s:b, s:i, s:i, s:o, s:o}", "tier", t->name, "pass", c->pass, "nonfinite", c->nonfinite,
                     "checked", c->n_checked, "failed", c->n_failed, "closest", closest, "limits", limits);
}

static json_t *result_json(const hc_result *r)
{
    static const char *const outcomes[] = {"checked", "error", "skipped"};
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:o}", "net", jstr_or_null(r->net), "board",
                          jstr_or_null(r->board), "backend", jstr_or_null(r->backend), "mode", jstr_or_null(r->mode),
                          "outcome", outcomes[r->outcome], "message", jstr_or_null(r->message), "seconds",
                          jnum(r->seconds));
    if (r->nn_x_len > 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%dx%d", r->nn_x_len, r->nn_y_len);
        json_object_set_new(o, "settings",
                            json_pack("{s:s, s:i, s:o, s:o, s:o}", "nnBuffer", buf, "maxBatchSize", r->max_batch_size,
                                      "policyOptimism", jnum(r->policy_optimism), "playoutDoublingAdvantage",
                                      jnum(r->pda), "policyTemperature", jnum(r->policy_temperature)));
    }
    if (hc_result_is_error(r) && r->outcome == HC_OUT_CHECKED) {
        char buf[300];
        json_object_set_new(o, "error", json_string(hc_result_nonfinite_text(r, buf, sizeof buf)));
    }
    if (r->stats)
        json_object_set_new(o, "stats", stats_json(r->stats));
    json_t *tiers = json_array();
    for (size_t i = 0; i < r->n_tiers; i++) {
        if (r->outcome == HC_OUT_CHECKED && r->checks)
            json_array_append_new(tiers, check_json(&r->tiers[i], &r->checks[i]));
        else
            json_array_append_new(tiers, json_pack("{s:s}", "tier", r->tiers[i].name));
    }
    json_object_set_new(o, "tiers", tiers);
    return o;
}

int hc_results_write_json(const hc_results *rs, const char *path, hc_err *err)
{
    size_t pass = 0, fail = 0, errors = 0, skipped = 0;
    json_t *items = json_array();
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        json_array_append_new(items, result_json(r));
        if (r->outcome == HC_OUT_SKIPPED)
            skipped++;
        else if (hc_result_is_error(r))
            errors++;
        else {
            int ok = 1;
            for (size_t t = 0; t < r->n_tiers; t++)
                ok = ok && r->checks && r->checks[t].pass;
            ok ? pass++ : fail++;
        }
    }
    json_t *root = json_pack("{s:i, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I}, s:o}", "format", 1, "suite",
                             jstr_or_null(rs->suite), "timestamp", jstr_or_null(rs->timestamp), "version",
                             jstr_or_null(rs->version), "summary", "passed", (json_int_t)pass, "failed",
                             (json_int_t)fail, "errors", (json_int_t)errors, "skipped", (json_int_t)skipped, "results",
                             items);
    if (!root)
        return hc_err_set(err, HC_EINTERNAL, "%s: could not build the JSON document", path);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (!text)
        return hc_err_set(err, HC_ENOMEM, "%s: could not format the JSON document", path);
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o) {
        free(text);
        return -1;
    }
    int rc = hc_ostream_write(o, text, strlen(text), err);
    if (!rc)
        rc = hc_ostream_write(o, "\n", 1, err);
    free(text);
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
