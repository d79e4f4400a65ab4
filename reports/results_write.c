/* results.json written (hc_results_write_json); results_read.c is its mirror. */
#include "reports/results.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

/* JSON has no NaN or infinity: those become the strings "nan", "inf", "-inf". */
static json_t *jnum(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x == 0 ? 0.0 : x); /* -0 as 0: no negative zero in a report */
}

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *nonfinite_json(const hc_nonfinite *nf)
{
    if (!nf->count)
        return json_null();
    return json_pack("{s:I, s:I, s:s, s:i, s:o}", "positions", (json_int_t)nf->count, "firstPosition",
                     (json_int_t)nf->pos, "field", nf->field, "index", nf->index, "value", jnum(nf->value));
}

static json_t *bias_json(const hc_bias_stats *b)
{
    json_t *o = json_pack("{s:I, s:o, s:o, s:b}", "samples", (json_int_t)b->n, "mean", jnum(b->mean), "stdErr",
                          jnum(b->se), "systematic", b->systematic);
    for (int p = 0; p < HC_BP_COUNT; p++)
        json_object_set_new(o, hc_bias_pct_names[p], jnum(b->p[p]));
    return o;
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
        if (ms->nonfinite)
            json_object_set_new(o, "firstNonfinitePosition", json_integer((json_int_t)ms->first_nonfinite_pos));
        if (ms->infinite) {
            json_object_set_new(o, "infinite", json_integer((json_int_t)ms->infinite));
            json_object_set_new(o, "firstInfinitePosition", json_integer((json_int_t)ms->first_infinite_pos));
        }
        if (s->res[m] > 0)
            json_object_set_new(o, "resolution", jnum(s->res[m]));
        if (s->bias[m].n)
            json_object_set_new(o, "bias", bias_json(&s->bias[m]));
        if (ms->n) {
            json_t *q = json_array();
            for (int k = 0; k < HC_STATS_NQ; k++)
                json_array_append_new(q, jnum(ms->q[k]));
            json_object_set_new(o, "quantiles", q);
        }
        json_object_set_new(metrics, hc_metric_infos[m].name, o);
    }
    json_t *o = json_pack("{s:I, s:o, s:o, s:o}", "positions", (json_int_t)s->n_positions, "metrics", metrics,
                          "testNonfinite", nonfinite_json(&s->test_nonfinite), "refNonfinite",
                          nonfinite_json(&s->ref_nonfinite));
    if (o && s->top_agree.n)
        json_object_set_new(o, "topMoveAgreement",
                            json_pack("{s:I, s:I, s:o}", "positions", (json_int_t)s->top_agree.n, "agree",
                                      (json_int_t)s->top_agree.agree, "rate", jnum(hc_top_agree_rate(&s->top_agree))));
    const hc_resolution *rr = &s->out_res;
    if (o && (rr->winrate > 0 || rr->score > 0 || rr->policy > 0 || rr->ownership > 0))
        json_object_set_new(o, "resolution",
                            json_pack("{s:o, s:o, s:o, s:o}", "winrate", jnum(rr->winrate), "score", jnum(rr->score),
                                      "policy", jnum(rr->policy), "ownership", jnum(rr->ownership)));
    if (o && s->cells_x > 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%dx%d", s->cells_x, s->cells_y);
        json_t *own = json_array(), *pol = json_array();
        for (int c = 0; c < s->cells_x * s->cells_y; c++) {
            json_array_append_new(own, jnum(s->own_cell[c]));
            json_array_append_new(pol, jnum(s->pol_cell[c]));
        }
        json_object_set_new(o, "points", json_pack("{s:s, s:o, s:o}", "buffer", buf, "ownershipMeanError", own,
                                                   "policyMeanError", pol));
    }
    return o;
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
    json_t *o = json_pack("{s:s, s:b, s:b, s:i, s:i, s:o, s:o}", "tier", t->name, "pass", c->pass, "nonfinite",
                          c->nonfinite, "checked", c->n_checked, "failed", c->n_failed, "closest", closest, "limits", limits);
    json_t *bl = NULL;
    for (int m = 0; m < HC_M_COUNT && o; m++) {
        if (!t->bias_set[m])
            continue;
        if (!bl)
            bl = json_array();
        json_array_append_new(bl, json_pack("{s:s, s:o, s:o, s:o, s:s}", "metric", hc_metric_infos[m].name, "limit",
                                            jnum(t->bias_limit[m]), "scale", jnum(t->bias_scale[m]), "ratio",
                                            jnum(c->bias_ratio[m]), "verdict", hc_verdict_names[c->bias_verdict[m]]));
    }
    if (bl)
        json_object_set_new(o, "biasLimits", bl);
    return o;
}

static const char *pla_str(int pla)
{
    return pla == 1 ? "B" : pla == 2 ? "W" : NULL;
}

static json_t *moves_json(const hc_shown_move *m, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:i, s:i, s:o}", "x", m[i].x, "y", m[i].y, "p", jnum(m[i].prob)));
    return a;
}

static json_t *shown_json(const hc_shown_pos *sp)
{
    json_t *rows = json_array();
    for (int y = 0; y < sp->y_size; y++)
        json_array_append_new(rows, json_stringn(sp->stones + y * sp->x_size, (size_t)sp->x_size));
    json_t *own = json_null();
    if (sp->has_own) {
        own = json_array();
        for (int i = 0; i < sp->x_size * sp->y_size; i++)
            json_array_append_new(own, jnum(sp->own_diff[i]));
    }
    json_t *last = json_null();
    if (sp->last_pla)
        last = json_pack("{s:s, s:i, s:i}", "pla", pla_str(sp->last_pla), "x", sp->last_x, "y", sp->last_y);
    char size[32];
    snprintf(size, sizeof size, "%dx%d", sp->x_size, sp->y_size);
    return json_pack("{s:s, s:s, s:o, s:i, s:I, s:I, s:s, s:o, s:o, s:o, s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o}",
                     "metric", hc_metric_infos[sp->metric].name, "stat", hc_pct_names[sp->pct], "error",
                     jnum(sp->error), "cell", sp->cell, "position", (json_int_t)sp->index, "fileLine",
                     (json_int_t)sp->file_line, "size", size, "stones", rows, "lastMove", last, "nextPla",
                     jstr_or_null(pla_str(sp->next_pla)), "rules", sp->rules, "komi", jnum(sp->komi), "symmetry",
                     sp->symmetry, "refTop", moves_json(sp->ref_top, sp->n_top), "testTop",
                     moves_json(sp->test_top, sp->n_top), "ownershipDiff", own, "rerunCase",
                     json_string(sp->rerun_case), "rerunPosition", json_string(sp->rerun_position));
}

static json_t *taps_json(const hc_result_taps *t)
{
    json_t *pos = json_array(), *layers = json_array();
    for (size_t i = 0; i < t->n_positions; i++)
        json_array_append_new(pos, json_integer((json_int_t)t->positions[i]));
    for (size_t i = 0; i < t->n_layers; i++) {
        const hc_result_taplayer *l = &t->layers[i];
        json_array_append_new(layers, json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "layer", l->name,
                                                "format", l->fmt, "compared", l->compared, "maxAbs",
                                                jnum(l->max_abs), "meanAbs", jnum(l->mean_abs), "maxRel",
                                                jnum(l->max_rel), "meanRel", jnum(l->mean_rel), "storageRel",
                                                jnum(l->stor_rel), "explained", jnum(l->explained)));
    }
    return json_pack("{s:s, s:o, s:o, s:o, s:o}", "reference", "ref32", "firstDivergent", jstr_or_null(t->first),
                     "error", jstr_or_null(t->error), "positions", pos, "layers", layers);
}


/* An external engine's cost; unknown figures are null. */
static json_t *engine_json(const hc_result *r)
{
    const hc_engine_stats *e = &r->engine;
    json_t *o = json_object();
    json_object_set_new(o, "positions", e->positions >= 0 ? json_integer(e->positions) : json_null());
    json_object_set_new(o, "evalSeconds", e->eval_seconds >= 0 ? jnum(e->eval_seconds) : json_null());
    double pps = e->positions > 0 && e->eval_seconds > 0 ? (double)e->positions / e->eval_seconds : -1;
    json_object_set_new(o, "positionsPerSecond", pps >= 0 ? jnum(pps) : json_null());
    json_object_set_new(o, "peakRssKiB", e->peak_rss_kib >= 0 ? jnum(e->peak_rss_kib) : json_null());
    json_object_set_new(o, "processes", json_integer(e->engines));
    json_object_set_new(o, "batching", json_boolean(e->batching));
    json_object_set_new(o, "nnRows", e->nn_rows >= 0 ? json_integer(e->nn_rows) : json_null());
    json_object_set_new(o, "nnBatches", e->nn_batches >= 0 ? json_integer(e->nn_batches) : json_null());
    json_object_set_new(o, "avgBatchSize", e->avg_batch >= 0 ? jnum(e->avg_batch) : json_null());
    json_object_set_new(o, "maxBatchSize", e->max_batch > 0 ? json_integer(e->max_batch) : json_null());
    char note[300];
    if (hc_engine_batch_note(e->batching, e->nn_rows, e->nn_batches, e->max_batch, note, sizeof note) > 0)
        json_object_set_new(o, "batchFillNote", json_string(note));
    /* Beside the batch counts: whether a rerun can reproduce the batched figures. */
    if (hc_engine_batches_note(r, note, sizeof note)) {
        json_object_set_new(o, "batchesFormedByEngine", json_true());
        json_object_set_new(o, "batchesNote", json_string(note));
    }
    json_object_set_new(o, "version", e->version[0] ? json_string(e->version) : json_null());
    return o;
}

static json_t *result_json(const hc_result *r)
{
    static const char *const outcomes[] = {"checked", "error", "skipped"};
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:o}", "net", jstr_or_null(r->net), "board",
                          jstr_or_null(r->board), "backend", jstr_or_null(r->backend), "mode", jstr_or_null(r->mode),
                          "outcome", outcomes[r->outcome], "message", jstr_or_null(r->message), "seconds",
                          jnum(r->seconds));
    if (r->model_version > 0)
        json_object_set_new(o, "modelVersion", json_integer(r->model_version));
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
    if (r->n_skipped > 0)
        json_object_set_new(o, "skippedPositions", json_pack("{s:I, s:o}", "count", (json_int_t)r->n_skipped,
                                                             "message", jstr_or_null(r->skip_message)));
    if (r->stats)
        json_object_set_new(o, "stats", stats_json(r->stats));
    if (r->n_shown > 0) {
        json_t *a = json_array();
        for (size_t i = 0; i < r->n_shown; i++)
            json_array_append_new(a, shown_json(&r->shown[i]));
        json_object_set_new(o, "shownPositions", a);
    }
    if (r->taps)
        json_object_set_new(o, "taps", taps_json(r->taps));
    if (r->has_engine)
        json_object_set_new(o, "engine", engine_json(r));
    if (r->n_diag > 0) {
        json_t *a = json_array();
        for (size_t i = 0; i < r->n_diag; i++) {
            const hc_diag_finding *f = &r->diag[i];
            char text[400];
            json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:b, s:i, s:i, s:o, s:o, s:s}", "kind",
                                               hc_diag_kind_names[f->kind], "position", (json_int_t)f->pos, "other",
                                               (json_int_t)f->other, "sameBatch", f->same_batch, "legalMissing",
                                               f->legal_missing, "legalExtra", f->legal_extra, "ownDistance",
                                               jnum(f->own_dist), "otherDistance", jnum(f->other_dist), "text",
                                               hc_diag_finding_text(f, text, sizeof text)));
        }
        json_object_set_new(o, "diagnosis", a);
    }
    if (r->self_check)
        json_object_set_new(o, "selfCheck", json_true());
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

static json_t *provenance_json(const hc_results *rs)
{
    json_t *a = json_array();
    for (size_t k = 0; k < rs->n_prov; k++) {
        const hc_provenance *p = &rs->prov[k];
        json_t *nets = json_array(), *backends = json_array();
        for (size_t i = 0; i < p->n_nets; i++)
            json_array_append_new(nets, json_pack("{s:o, s:o, s:o, s:i}", "name", jstr_or_null(p->nets[i].name), "file",
                                                  jstr_or_null(p->nets[i].file), "sha256",
                                                  jstr_or_null(p->nets[i].sha256), "modelVersion",
                                                  p->nets[i].model_version));
        for (size_t i = 0; i < p->n_backends; i++)
            json_array_append_new(backends, json_pack("{s:o, s:o}", "name", jstr_or_null(p->backends[i].name), "engine",
                                                      jstr_or_null(p->backends[i].engine)));
        /* "job" (a merge's) first, so that the rest of an entry reads the same in a run's file and a merge's. */
        json_t *o = json_object();
        if (p->job)
            json_object_set_new(o, "job", json_string(p->job));
        if (p->host)
            json_object_set_new(o, "host", json_string(p->host));
        if (p->device)
            json_object_set_new(o, "device", json_string(p->device));
        json_object_update_new(o, json_pack("{s:o, s:i, s:o, s:b, s:o, s:o, s:o}", "halfcheck", jstr_or_null(p->halfcheck),
                                            "engineVersion", p->engine_version, "kernels", jstr_or_null(p->kernels),
                                            "cuda", p->cuda, "command", jstr_or_null(p->command), "nets", nets,
                                            "backends", backends));
        json_array_append_new(a, o);
    }
    return a;
}

/* "headroom": the suite's headroom rows (only when there are some). */
static json_t *headroom_json(const hc_results *rs)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rs->n_headroom; i++) {
        const hc_result_headroom *h = &rs->headroom[i];
        json_array_append_new(a, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o}", "net", jstr_or_null(h->net),
                                           "board", jstr_or_null(h->board), "format", jstr_or_null(h->format),
                                           "layer", jstr_or_null(h->layer), "what", jstr_or_null(h->what), "value",
                                           jnum(h->value), "position", (json_int_t)h->position, "margin",
                                           jnum(h->margin)));
    }
    return a;
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
    if (rs->n_prov > 0)
        json_object_set_new(root, "provenance", provenance_json(rs));
    /* Only when set, so that the files of complete runs keep their bytes. */
    if (rs->interrupted)
        json_object_set_new(root, "interrupted", json_true());
    if (rs->allow_skips)
        json_object_set_new(root, "allowSkips", json_true());
    if (rs->n_headroom > 0)
        json_object_set_new(root, "headroom", headroom_json(rs));
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
