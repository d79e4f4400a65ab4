/* The record of a run that every report formats: verdicts, counts, exit status, figures as text. */
#include "reports/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/strbuf.h"

int hc_result_is_error(const hc_result *r)
{
    if (r->outcome == HC_OUT_ERROR)
        return 1;
    return r->outcome == HC_OUT_CHECKED && r->stats && hc_stats_any_nonfinite(r->stats);
}

int hc_result_passed(const hc_result *r)
{
    if (r->outcome != HC_OUT_CHECKED || hc_result_is_error(r) || !r->checks)
        return 0;
    for (size_t t = 0; t < r->n_tiers; t++)
        if (!r->checks[t].pass)
            return 0;
    return 1;
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

char *hc_results_interrupted_text(const hc_results *rs, const char *quote, const char *unquote)
{
    if (!rs->interrupted)
        return NULL;
    hc_strbuf b = HC_STRBUF_INIT;
    hc_strbuf_printf(&b, "the run was stopped (SIGINT or SIGTERM) before every case ran; ");
    if (!rs->n)
        hc_strbuf_printf(&b, "no case finished, so these reports hold no result.");
    else
        hc_strbuf_printf(&b, "only the %zu case%s that finished %s reported: ", rs->n, rs->n == 1 ? "" : "s",
                         rs->n == 1 ? "is" : "are");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        hc_strbuf_printf(&b, "%s%s%s %s %s %s%s", i ? ", " : "", quote, r->net ? r->net : "?", r->board ? r->board : "?",
                         r->backend ? r->backend : "?", r->mode ? r->mode : "?", unquote);
    }
    if (rs->n)
        hc_strbuf_printf(&b, ".");
    return hc_strbuf_take(&b, NULL);
}

const char *hc_num_format(char *buf, size_t len, const char *fmt, double v)
{
    if (!len)
        return buf;
    snprintf(buf, len, fmt, v);
    /* The number's text: from its sign to the end of its digits, point and exponent. */
    char *minus = strchr(buf, '-');
    if (!minus || !isfinite(v) || v > 0)
        return buf;
    char *q = minus + 1;
    int nonzero = 0;
    while ((*q >= '0' && *q <= '9') || *q == '.') {
        nonzero |= *q >= '1' && *q <= '9';
        q++;
    }
    if (q > minus + 1 && !nonzero) /* "-0", "-0.000", "-0e+00": drop the sign */
        memmove(minus, minus + 1, strlen(minus + 1) + 1);
    return buf;
}

const char *hc_metric_format(int metric, double raw, char *buf, size_t len)
{
    const hc_metric_info *mi = &hc_metric_infos[metric];
    double v = raw * mi->display_scale;
    char fmt[32];
    if (!isfinite(v))
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    else {
        /* The unit may hold a '%' ("0.45%"): it goes after the number, not into the format. */
        snprintf(fmt, sizeof fmt, "%s", metric == HC_M_POLICY_KL ? "%.6f" : "%.5f");
        hc_num_format(buf, len, fmt, v);
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s", mi->unit);
    }
    return buf;
}

const char *hc_limit_format(const hc_tier *t, int metric, int pct, char *buf, size_t len)
{
    if (!t->set[metric][pct]) {
        snprintf(buf, len, "-");
        return buf;
    }
    const hc_metric_info *mi = &hc_metric_infos[metric];
    hc_num_format(buf, len, "%.6g", t->limit[metric][pct] / t->scale[metric][pct] * mi->display_scale);
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s", mi->unit);
    return buf;
}

/* Appends a line to a growing malloc'd text; 0, or -1 when out of memory (the text kept). */
static int text_append(char **out, size_t *cap, size_t *used, const char *line)
{
    size_t n = strlen(line);
    if (*used + n + 1 > *cap) {
        char *np = realloc(*out, *cap * 2 + n);
        if (!np)
            return -1;
        *out = np;
        *cap = *cap * 2 + n;
    }
    memcpy(*out + *used, line, n + 1);
    *used += n;
    return 0;
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
            char val[64], lim[64], line[600], cell[32] = "";
            const hc_metric_stats *ms = &r->stats->m[m];
            if (m == HC_M_OWNERSHIP && ms->max_cell >= 0)
                snprintf(cell, sizeof cell, ", cell %d", ms->max_cell);
            char resb[96] = "", rv[64];
            if (r->stats->res[m] > 0)
                snprintf(resb, sizeof resb, " + resolution %s", hc_metric_format(m, r->stats->res[m], rv, sizeof rv));
            char why[200] = "";
            if (ms->infinite && isinf(ms->v[p]))
                snprintf(why, sizeof why, "; infinite at %zu position%s, first %zu: the outputs give probability 0 "
                         "or mark illegal a move the reference gives a probability", ms->infinite,
                         ms->infinite == 1 ? "" : "s", ms->first_infinite_pos);
            snprintf(line, sizeof line, "%s %s: %s %s limit %s%s (worst position %zu%s%s)\n", hc_metric_infos[m].name,
                     hc_pct_names[p], hc_metric_format(m, ms->v[p], val, sizeof val),
                     v == HC_V_NONFINITE ? "is non-finite, against" : ">", hc_limit_format(t, m, p, lim, sizeof lim),
                     resb, ms->max_pos, cell, why);
            if (text_append(&out, &cap, &used, line))
                return out;
        }
    }
    for (int m = 0; m < HC_M_COUNT; m++) {
        int v = c->bias_verdict[m];
        if (v != HC_V_FAIL && v != HC_V_NONFINITE)
            continue;
        char line[512];
        hc_bias_limit_text(r, tier, m, line, sizeof line - 1);
        strcat(line, "\n");
        if (text_append(&out, &cap, &used, line))
            return out;
    }
    return out;
}

const char *hc_metric_format_signed(int metric, double raw, char *buf, size_t len)
{
    hc_metric_format(metric, raw, buf, len);
    if (isfinite(raw) && !signbit(raw) && strlen(buf) + 1 < len) {
        memmove(buf + 1, buf, strlen(buf) + 1);
        buf[0] = '+';
    }
    return buf;
}

static const char *bias_limit_format(const hc_tier *t, int m, char *buf, size_t len)
{
    const hc_metric_info *mi = &hc_metric_infos[m];
    snprintf(buf, len, "%.6g%s", t->bias_limit[m] / t->bias_scale[m] * mi->display_scale, mi->unit);
    return buf;
}

const char *hc_bias_limit_text(const hc_result *r, size_t tier, int metric, char *buf, size_t len)
{
    const hc_bias_stats *b = &r->stats->bias[metric];
    const hc_tier_check *c = &r->checks[tier];
    char mean[64], lim[64], resb[96] = "", rv[64], why[64];
    if (r->stats->res[metric] > 0)
        snprintf(resb, sizeof resb, " + resolution %s", hc_metric_format(metric, r->stats->res[metric], rv, sizeof rv));
    if (b->se > 0)
        snprintf(why, sizeof why, "%.1f standard errors", fabs(b->mean) / b->se);
    else
        snprintf(why, sizeof why, "the same error at every position");
    snprintf(buf, len, "%s bias: mean %s %s limit %s%s (%s: %s)", hc_metric_infos[metric].name,
             hc_metric_format_signed(metric, b->mean, mean, sizeof mean),
             c->bias_verdict[metric] == HC_V_PASS ? "<=" : c->bias_verdict[metric] == HC_V_NONFINITE ? "is non-finite, against" : ">",
             bias_limit_format(&r->tiers[tier], metric, lim, sizeof lim), resb,
             b->systematic ? "systematic" : "not systematic", why);
    return buf;
}

const char *hc_bias_text(const hc_stats *s, int metric, char *buf, size_t len)
{
    const hc_bias_stats *b = &s->bias[metric];
    buf[0] = 0;
    if (!b->n)
        return buf;
    char v[HC_BP_COUNT][64], mean[64], se[64];
    for (int p = 0; p < HC_BP_COUNT; p++)
        hc_metric_format_signed(metric, b->p[p], v[p], sizeof v[p]);
    snprintf(buf, len, "mean %s ± %s (s.e.), p1 %s, p5 %s, p50 %s, p95 %s, p99 %s%s",
             hc_metric_format_signed(metric, b->mean, mean, sizeof mean), hc_metric_format(metric, b->se, se, sizeof se),
             v[0], v[1], v[2], v[3], v[4], b->systematic ? "; systematic" : "");
    return buf;
}

void hc_result_taps_free(hc_result_taps *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_layers; i++)
        free(t->layers[i].name);
    free(t->layers);
    free(t->positions);
    free(t->first);
    free(t->error);
    free(t);
}

double hc_result_engine_pos_per_s(const hc_result *r)
{
    if (!r->has_engine || r->engine.positions <= 0 || !(r->engine.eval_seconds > 0))
        return -1;
    return (double)r->engine.positions / r->engine.eval_seconds;
}

int hc_engine_batches_note(const hc_result *r, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!len || !r->has_engine || !r->engine.engine_batches)
        return 0;
    char count[64] = "";
    if (r->engine.nn_batches > 0)
        snprintf(count, sizeof count, "%ld batches", r->engine.nn_batches);
    else
        snprintf(count, sizeof count, "batches");
    /* At most: the largest batch the engine will form where it said (an Eigen build's 2), else
     * the board's maxBatchSize. */
    long most = r->engine.max_batch > 0 ? r->engine.max_batch : r->max_batch_size;
    int n = most > 0
                ? snprintf(buf, len, "batched figures depend on how the engine formed its batches (%s of at most %ld rows "
                                     "this run); a rerun may differ slightly", count, most)
                : snprintf(buf, len, "batched figures depend on how the engine formed its batches (%s this run); a rerun "
                                     "may differ slightly", count);
    return n < 0 ? 0 : n < (int)len ? n : (int)len - 1;
}

int hc_engine_text(const hc_result *r, char *buf, size_t len)
{
    if (!r->has_engine || len == 0)
        return 0;
    const hc_engine_stats *e = &r->engine;
    size_t o = 0;
    buf[0] = '\0';
#define ADD(...) do { if (o < len) o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__); } while (0)
    if (e->peak_rss_kib >= 0)
        ADD("peak RSS %.1f MiB", e->peak_rss_kib / 1024.0);
    double pps = hc_result_engine_pos_per_s(r);
    if (pps >= 0)
        ADD("%s%.1f positions/s (%ld in %.1f s)", o ? ", " : "", pps, e->positions, e->eval_seconds);
    if (e->avg_batch >= 0 && e->max_batch > 0 && e->batching)
        ADD("%s%.2f of %ld rows per batch (%ld rows in %ld batches)", o ? ", " : "", e->avg_batch, e->max_batch,
            e->nn_rows, e->nn_batches);
    else if (e->avg_batch >= 0)
        ADD("%s%.2f rows per batch (%ld rows in %ld batches)", o ? ", " : "", e->avg_batch, e->nn_rows, e->nn_batches);
    else if (e->batching)
        ADD("%srows per batch unknown", o ? ", " : "");
    if (e->engines > 0)
        ADD("%s%d engine process%s", o ? ", " : "", e->engines, e->engines == 1 ? "" : "es");
    if (e->version[0])
        ADD("%sversion %s", o ? ", " : "", e->version);
    char note[300];
    if (hc_engine_batch_note(e->batching, e->nn_rows, e->nn_batches, e->max_batch, note, sizeof note) > 0)
        ADD("%s%s", o ? "; " : "", note);
    if (hc_engine_batches_note(r, note, sizeof note))
        ADD("%s%s", o ? "; " : "", note);
#undef ADD
    return (int)(o < len ? o : len - 1);
}

int hc_engine_batch_note(int batching, long rows, long batches, long max_batch, char *buf, size_t len)
{
    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (!batching || rows < 0 || batches <= 0 || max_batch < 2)
        return 0;
    double avg = (double)rows / (double)batches;
    if (!(avg < 0.5 * (double)max_batch))
        return 0;
    long first = max_batch / 2 + 1;
    int n = first < max_batch
                ? snprintf(buf, len, "batches averaged %.2f of %ld rows: rows %ld-%ld rarely exercised", avg, max_batch,
                           first, max_batch)
                : snprintf(buf, len, "batches averaged %.2f of %ld rows: row %ld rarely exercised", avg, max_batch,
                           max_batch);
    return n < 0 ? 0 : (int)((size_t)n < len ? (size_t)n : len - 1);
}

int hc_engine_batched_check(const hc_engine_stats *e, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!e || !(e->batching || e->avg_batch >= 0) || e->avg_batch > 1.05)
        return HC_BATCHED_CHECKED;
    /* The engine evaluated (nearly) one row at a time: whatever its figures, this case did
     * not check the batched path, so it must not pass as if it had. An engine meant to
     * batch that did not is an error; one that never batches (GTP's kata-raw-nn) is
     * skipped: its unbatched case is its check. */
    if (!e->batching)
        snprintf(buf, len, "not a batched check: this backend evaluates one position at a time (%ld rows in "
                 "%ld batches); its unbatched case checks it, the analysis: backend checks a build's batches",
                 e->nn_rows, e->nn_batches);
    else if (e->avg_batch >= 0)
        snprintf(buf, len, "not a batched check: the engine averaged %.3f rows per batch (%ld rows in %ld "
                 "batches), not above 1.05; give it more concurrent queries (numAnalysisThreads and "
                 "nnMaxBatchSize = the board's maxBatchSize)", e->avg_batch, e->nn_rows,
                 e->nn_batches);
    else
        snprintf(buf, len, "not a batched check: the engine's rows and batches are unknown (its log did "
                 "not end with \"NN rows\" and \"NN batches\" on stderr: keep logToStderr=true; or it was "
                 "restarted after a failure)");
    return e->batching ? HC_BATCHED_ERROR : HC_BATCHED_SKIP;
}

void hc_results_count(const hc_results *rs, hc_check_counts *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        size_t k = r->n_tiers ? r->n_tiers : 1;
        c->checks += k;
        if (r->outcome == HC_OUT_SKIPPED) {
            c->skipped += k;
        } else if (hc_result_is_error(r)) {
            c->errored += k;
        } else {
            for (size_t t = 0; t < r->n_tiers; t++) {
                if (r->checks && r->checks[t].pass)
                    c->passed++;
                else
                    c->failed++;
            }
            if (r->n_tiers == 0)
                c->passed++;
        }
    }
    c->nothing_checked = c->passed + c->failed == 0;
    /* A backend skipped wherever it appears: its whole column of the matrix says nothing. */
    for (size_t i = 0; i < rs->n && !c->backend_all_skipped; i++) {
        const char *b = rs->items[i].backend ? rs->items[i].backend : "";
        int all = 1;
        for (size_t j = 0; j < rs->n && all; j++)
            if (!strcmp(b, rs->items[j].backend ? rs->items[j].backend : ""))
                all = rs->items[j].outcome == HC_OUT_SKIPPED;
        if (all) {
            c->backend_all_skipped = 1;
            c->skipped_backend = rs->items[i].backend;
        }
    }
}

int hc_results_status(const hc_results *rs)
{
    hc_check_counts c;
    hc_results_count(rs, &c);
    if (c.errored)
        return 3;
    if (c.failed)
        return 1;
    if (!rs->allow_skips && (c.nothing_checked || c.backend_all_skipped))
        return 4;
    return 0;
}
