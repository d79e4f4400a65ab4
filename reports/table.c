/* Markdown tables of a run: a summary per net and the detail rows. */
#include "reports/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

/* Markdown cells: a '|' would end the cell. */
static int md_text(hc_ostream *o, const char *s, hc_err *err)
{
    for (; s && *s; s++) {
        if (*s == '|' && hc_ostream_write(o, "\\", 1, err))
            return -1;
        char c = *s == '\n' ? ' ' : *s;
        if (hc_ostream_write(o, &c, 1, err))
            return -1;
    }
    return 0;
}

/* The reference checking itself (ref32 batched and unbatched against its own reference),
 * reported in a section of its own, apart from the backends under test. */
static int is_self_check(const hc_result *r)
{
    return r->self_check;
}

static int md_margin(hc_ostream *o, const hc_result *r, size_t t, hc_err *err)
{
    const hc_tier_check *c = &r->checks[t];
    int first = 1;
    for (int p = 0; p < HC_P_COUNT; p++) {
        int m = c->worst_metric[p];
        if (m < 0)
            continue;
        char val[64], lim[64], ratio[64];
        if (hc_ostream_printf(o, err, "%s%s %s %s of limit %s (%sx)", first ? ", closest to its limit: " : ", ",
                              hc_metric_infos[m].name, hc_pct_names[p],
                              hc_metric_format(m, r->stats->m[m].v[p], val, sizeof val),
                              hc_limit_format(&r->tiers[t], m, p, lim, sizeof lim),
                              hc_num_format(ratio, sizeof ratio, "%.3g", c->worst_ratio[p])))
            return -1;
        first = 0;
    }
    return 0;
}

/* "- engine: ..." what an external engine cost (hc_engine_stats); unknown figures left out. */
static int md_engine(hc_ostream *o, const hc_result *r, hc_err *err)
{
    char line[512];
    int n = hc_engine_text(r, line, sizeof line);
    return n > 0 ? hc_ostream_printf(o, err, "- engine: %s\n", line) : 0;
}

/* The signed errors (test minus reference; bias.h) beside the absolute ones, and the top-move
 * agreement: a constant shift and noise of the same size have the same absolute errors. */
static int md_bias(hc_ostream *o, const hc_stats *s, hc_err *err)
{
    int any = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any |= s->bias[m].n > 0;
    if (any && hc_ostream_printf(o, err, "\n| signed error (test - ref) | mean | std. error | 1%% | 5%% | 50%% | 95%% | 99%% "
                                         "| systematic |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n"))
        return -1;
    for (int m = 0; m < HC_M_COUNT && any; m++) {
        const hc_bias_stats *b = &s->bias[m];
        if (!b->n)
            continue;
        char mean[64], se[64], v[HC_BP_COUNT][64];
        for (int p = 0; p < HC_BP_COUNT; p++)
            hc_metric_format_signed(m, b->p[p], v[p], sizeof v[p]);
        if (hc_ostream_printf(o, err, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", hc_metric_infos[m].name,
                              hc_metric_format_signed(m, b->mean, mean, sizeof mean), hc_metric_format(m, b->se, se, sizeof se),
                              v[0], v[1], v[2], v[3], v[4], b->systematic ? "**yes**" : "no"))
            return -1;
    }
    if (s->top_agree.n &&
        hc_ostream_printf(o, err, "\ntop move agrees with the reference's: %.2f%% (%zu of %zu positions)\n",
                          100.0 * hc_top_agree_rate(&s->top_agree), s->top_agree.agree, s->top_agree.n))
        return -1;
    return 0;
}

static int md_result(hc_ostream *o, const hc_result *r, hc_err *err)
{
    if (hc_ostream_printf(o, err, "#### ") || md_text(o, r->board, err) ||
        hc_ostream_printf(o, err, " · ") || md_text(o, r->backend, err) ||
        hc_ostream_printf(o, err, " · %s\n\n", r->mode ? r->mode : ""))
        return -1;
    if (r->outcome == HC_OUT_SKIPPED)
        return hc_ostream_printf(o, err, "- skipped: ") || md_text(o, r->message, err) ||
               hc_ostream_printf(o, err, "\n\n");
    if (r->outcome == HC_OUT_ERROR)
        return hc_ostream_printf(o, err, "- **ERROR**: ") || md_text(o, r->message ? r->message : "backend error", err) ||
               hc_ostream_printf(o, err, "\n") || (r->has_engine && md_engine(o, r, err)) ||
               hc_ostream_printf(o, err, "\n");
    if (hc_result_is_error(r)) {
        char buf[400];
        if (hc_ostream_printf(o, err, "- **ERROR**: ") || md_text(o, hc_result_nonfinite_text(r, buf, sizeof buf), err) ||
            (r->message && (hc_ostream_printf(o, err, "; ") || md_text(o, r->message, err))) ||
            hc_ostream_printf(o, err, "\n"))
            return -1;
    }
    for (size_t t = 0; t < r->n_tiers && r->checks; t++) {
        const hc_tier_check *c = &r->checks[t];
        if (hc_ostream_printf(o, err, "- tier %s: **%s**", r->tiers[t].name, c->pass ? "PASS" : "FAIL") ||
            (!hc_tier_is_exact(&r->tiers[t]) && md_margin(o, r, t, err)))
            return -1;
        if (!c->pass && c->first_fail_metric >= 0) {
            int m = c->first_fail_metric, p = c->first_fail_pct;
            char val[64], lim[64], resb[96] = "", rv[64];
            if (r->stats->res[m] > 0)
                snprintf(resb, sizeof resb, " + resolution %s", hc_metric_format(m, r->stats->res[m], rv, sizeof rv));
            if (hc_ostream_printf(o, err, "; %d of %d limits exceeded, first %s %s %s > %s%s", c->n_failed, c->n_checked,
                                  hc_metric_infos[m].name, hc_pct_names[p],
                                  hc_metric_format(m, r->stats->m[m].v[p], val, sizeof val),
                                  hc_limit_format(&r->tiers[t], m, p, lim, sizeof lim), resb) ||
                (r->message && (hc_ostream_printf(o, err, "; ") || md_text(o, r->message, err))))
                return -1;
        } else if (!c->pass && c->first_bias_fail >= 0) {
            char line[512];
            if (hc_ostream_printf(o, err, "; %d of %d limits exceeded, first %s", c->n_failed, c->n_checked,
                                  hc_bias_limit_text(r, t, c->first_bias_fail, line, sizeof line)) ||
                (r->message && (hc_ostream_printf(o, err, "; ") || md_text(o, r->message, err))))
                return -1;
        }
        if (hc_ostream_printf(o, err, "\n"))
            return -1;
    }
    if (r->has_engine && md_engine(o, r, err))
        return -1;
    if (r->n_skipped > 0 && (hc_ostream_printf(o, err, "- skipped positions: ") ||
                             md_text(o, r->skip_message ? r->skip_message : "", err) || hc_ostream_printf(o, err, "\n")))
        return -1;
    if (!r->stats)
        return hc_ostream_printf(o, err, "\n");
    /* A resolution column only for outputs that declare one: what reading rounded values can add. */
    int any_res = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any_res |= r->stats->res[m] > 0;
    if (hc_ostream_printf(o, err, "\n%zu positions%s\n\n| metric | avg | 90%% | 99%% | max | worst position |%s\n"
                                  "|---|---:|---:|---:|---:|---:|%s\n",
                          r->stats->n_positions, any_res ? " (outputs read at a declared resolution)" : "",
                          any_res ? " resolution |" : "", any_res ? "---:|" : ""))
        return -1;
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *ms = &r->stats->m[m];
        char v[HC_P_COUNT][64], cell[32] = "", res[80] = "";
        for (int p = 0; p < HC_P_COUNT; p++)
            hc_metric_format(m, ms->v[p], v[p], sizeof v[p]);
        if (m == HC_M_OWNERSHIP && ms->max_cell >= 0)
            snprintf(cell, sizeof cell, " (cell %d)", ms->max_cell);
        if (any_res) {
            char rv[64];
            snprintf(res, sizeof res, " %s |", r->stats->res[m] > 0 ? hc_metric_format(m, r->stats->res[m], rv, sizeof rv) : "");
        }
        if (hc_ostream_printf(o, err, "| %s | %s | %s | %s | %s | %zu%s |%s\n", hc_metric_infos[m].name, v[0], v[1], v[2],
                              v[3], ms->max_pos, cell, res))
            return -1;
    }
    if (md_bias(o, r->stats, err))
        return -1;
    return hc_ostream_printf(o, err, "\n");
}

static int same(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* The columns of the per-net summary: the figures a reviewer looks at first. */
static const struct { int metric, pct; } summary_cols[] = {
    {HC_M_WINRATE, HC_P_99}, {HC_M_WINRATE, HC_P_MAX}, {HC_M_LEAD, HC_P_99}, {HC_M_LEAD, HC_P_MAX},
    {HC_M_TOP_POLICY, HC_P_99}, {HC_M_POLICY_KL, HC_P_99}, {HC_M_OWNERSHIP, HC_P_99},
};
enum { N_SUMMARY = sizeof summary_cols / sizeof summary_cols[0] };

static int md_summary_header(hc_ostream *o, hc_err *err)
{
    if (hc_ostream_printf(o, err, "| board | backend | mode | verdict | closest to its limit |"))
        return -1;
    for (size_t i = 0; i < N_SUMMARY; i++)
        if (hc_ostream_printf(o, err, " %s %s |", hc_metric_infos[summary_cols[i].metric].name,
                              summary_cols[i].pct == HC_P_MAX ? "max" : "99%"))
            return -1;
    if (hc_ostream_printf(o, err, "\n|---|---|---|---|---|"))
        return -1;
    for (size_t i = 0; i < N_SUMMARY; i++)
        if (hc_ostream_printf(o, err, "---:|"))
            return -1;
    return hc_ostream_printf(o, err, "\n");
}

static int md_summary_row(hc_ostream *o, const hc_result *r, hc_err *err)
{
    if (hc_ostream_printf(o, err, "| ") || md_text(o, r->board, err) || hc_ostream_printf(o, err, " | ") ||
        md_text(o, r->backend, err) || hc_ostream_printf(o, err, " | %s | ", r->mode ? r->mode : ""))
        return -1;
    if (r->outcome == HC_OUT_SKIPPED) {
        if (hc_ostream_printf(o, err, "skipped"))
            return -1;
    } else if (hc_result_is_error(r)) {
        if (hc_ostream_printf(o, err, "**ERROR**"))
            return -1;
    } else {
        for (size_t t = 0; t < r->n_tiers && r->checks; t++)
            if (hc_ostream_printf(o, err, "%s%s %s", t ? ", " : "", r->tiers[t].name,
                                  r->checks[t].pass ? "pass" : "**FAIL**"))
                return -1;
        if (r->n_skipped > 0 && hc_ostream_printf(o, err, " (%zu positions skipped)", r->n_skipped))
            return -1;
    }
    if (hc_ostream_printf(o, err, " | "))
        return -1;
    /* The closest margin over all tiers: the largest ratio. */
    int best_t = -1;
    for (size_t t = 0; t < r->n_tiers && r->checks && r->outcome == HC_OUT_CHECKED; t++)
        if (r->checks[t].worst_all_metric >= 0 &&
            (best_t < 0 || r->checks[t].worst_all_ratio > r->checks[best_t].worst_all_ratio))
            best_t = (int)t;
    if (best_t >= 0 && hc_tier_is_exact(&r->tiers[best_t])) {
        /* Every limit 0: a ratio means nothing; the figures are either the reference's or not. */
        if (hc_ostream_printf(o, err, "%s (%s)", r->checks[best_t].pass ? "bit-identical" : "differs",
                              r->tiers[best_t].name))
            return -1;
    } else if (best_t >= 0) {
        const hc_tier_check *c = &r->checks[best_t];
        int m = c->worst_all_metric, p = c->worst_all_pct;
        char val[64], lim[64], ratio[64];
        if (hc_ostream_printf(o, err, "%s %s: %s of %s = %sx (%s)", hc_metric_infos[m].name, hc_pct_names[p],
                              hc_metric_format(m, r->stats->m[m].v[p], val, sizeof val),
                              hc_limit_format(&r->tiers[best_t], m, p, lim, sizeof lim),
                              hc_num_format(ratio, sizeof ratio, "%.3g", c->worst_all_ratio), r->tiers[best_t].name))
            return -1;
    }
    if (hc_ostream_printf(o, err, " |"))
        return -1;
    for (size_t i = 0; i < N_SUMMARY; i++) {
        char v[64] = "";
        if (r->stats)
            hc_metric_format(summary_cols[i].metric, r->stats->m[summary_cols[i].metric].v[summary_cols[i].pct], v,
                             sizeof v);
        if (hc_ostream_printf(o, err, " %s |", v))
            return -1;
    }
    return hc_ostream_printf(o, err, "\n");
}

/* What produced the figures: halfcheck, its reference, the command, each net's file as
 * evaluated and each external engine as it reported itself (one block per job of a merge). */
static int md_provenance(hc_ostream *o, const hc_results *rs, hc_err *err)
{
    if (hc_ostream_printf(o, err, "### Provenance\n\n"))
        return -1;
    for (size_t k = 0; k < rs->n_prov; k++) {
        const hc_provenance *p = &rs->prov[k];
        if ((p->job && (hc_ostream_printf(o, err, "- job `") || md_text(o, p->job, err) ||
                        hc_ostream_printf(o, err, "`:\n"))) ||
            (p->host && (hc_ostream_printf(o, err, "%s- host `", p->job ? "  " : "") || md_text(o, p->host, err) ||
                         hc_ostream_printf(o, err, "`, device `") || md_text(o, p->device ? p->device : "?", err) ||
                         hc_ostream_printf(o, err, "`\n"))) ||
            hc_ostream_printf(o, err, "%s- halfcheck %s (engine %d; kernels: %s; cuda backend %s)\n", p->job ? "  " : "",
                              p->halfcheck ? p->halfcheck : "?", p->engine_version, p->kernels ? p->kernels : "?",
                              p->cuda ? "built in" : "not built in") ||
            (p->command && (hc_ostream_printf(o, err, "%s- command: `", p->job ? "  " : "") || md_text(o, p->command, err) ||
                            hc_ostream_printf(o, err, "`\n"))))
            return -1;
        for (size_t i = 0; i < p->n_nets; i++) {
            const hc_prov_net *n = &p->nets[i];
            if (hc_ostream_printf(o, err, "%s- net ", p->job ? "  " : "") || md_text(o, n->name, err) ||
                hc_ostream_printf(o, err, ": `") || md_text(o, n->file, err) ||
                hc_ostream_printf(o, err, "`, model version %d, sha256 `%s`\n", n->model_version,
                                  n->sha256 ? n->sha256 : "?"))
                return -1;
        }
        for (size_t i = 0; i < p->n_backends; i++) {
            const hc_prov_backend *b = &p->backends[i];
            if (!b->engine)
                continue;
            if (hc_ostream_printf(o, err, "%s- backend ", p->job ? "  " : "") || md_text(o, b->name, err) ||
                hc_ostream_printf(o, err, ": engine ") || md_text(o, b->engine, err) || hc_ostream_printf(o, err, "\n"))
                return -1;
        }
    }
    return hc_ostream_printf(o, err, "\n");
}

/* The suite's headroom (informational): one section per format, one row per figure, its margin
 * in powers of two below the format's largest finite value. */
static int md_headroom(hc_ostream *o, const hc_results *rs, hc_err *err)
{
    for (size_t k = 0; k < rs->n_headroom; k++) {
        const char *fmt = rs->headroom[k].format;
        int seen = 0;
        for (size_t j = 0; j < k && !seen; j++)
            seen = same(rs->headroom[j].format, fmt);
        if (seen)
            continue;
        if (hc_ostream_printf(o, err, "## Headroom (") || md_text(o, fmt, err) ||
            hc_ostream_printf(o, err, ")\n\nPer net and board, the layers whose values (as the fp32 reference forms "
                                      "them) come closest to the format's largest finite value: the margin is "
                                      "log2(limit / value), the powers of two left (negative: the format overflows). "
                                      "Informational: no verdict depends on it.\n\n"
                                      "| net | board | layer | what | value | margin (2^) | position | |\n"
                                      "|---|---|---|---|---:|---:|---:|---|\n"))
            return -1;
        for (size_t i = k; i < rs->n_headroom; i++) {
            const hc_result_headroom *h = &rs->headroom[i];
            if (!same(h->format, fmt))
                continue;
            char v[64], m[64];
            hc_num_format(v, sizeof v, "%.6g", h->value);
            hc_num_format(m, sizeof m, "%.2f", h->margin);
            if (hc_ostream_printf(o, err, "| ") || md_text(o, h->net, err) || hc_ostream_printf(o, err, " | ") ||
                md_text(o, h->board, err) || hc_ostream_printf(o, err, " | `") || md_text(o, h->layer, err) ||
                hc_ostream_printf(o, err, "` | ") || md_text(o, h->what, err) ||
                hc_ostream_printf(o, err, " | %s | %s | %ld | %s |\n", v, m, h->position,
                                  h->margin < 0 ? "OVERFLOW" : ""))
                return -1;
        }
        if (hc_ostream_printf(o, err, "\n"))
            return -1;
    }
    return 0;
}

int hc_table_write_markdown(const hc_results *rs, const char *path, hc_err *err)
{
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o)
        return -1;
    char *done = calloc(rs->n ? rs->n : 1, 1);
    int rc = done ? 0 : hc_err_set(err, HC_ENOMEM, "out of memory writing %s", path);
    if (!rc)
        rc = hc_ostream_printf(o, err, "## halfcheck: %s\n\n", rs->suite ? rs->suite : "results");
    if (!rc && rs->interrupted) {
        char *it = hc_results_interrupted_text(rs, "`", "`");
        rc = it ? hc_ostream_printf(o, err, "**Interrupted**: %s\n\n", it)
                : hc_err_set(err, HC_ENOMEM, "out of memory writing %s", path);
        free(it);
    }
    if (!rc)
        rc = hc_ostream_printf(o, err, "Errors of the backend's outputs against halfcheck's fp32 reference, as KataGo's "
                                       "testgpuerror measures them, over the positions of each board: `%%` percentage "
                                       "points (winrate, top policy), lead and scores in points, `c` centi-ownership "
                                       "(0.01 of ownership's -1..1 range; short-term winloss likewise); `Nx` a figure "
                                       "as a multiple of its tier's limit.\n\n");
    /* The reference's self-checks (every limit 0: ref32 reproducing its own reference bit for
     * bit, batched and unbatched) in one short list, apart from the backends under test. */
    int any_self = 0;
    for (size_t i = 0; i < rs->n; i++)
        any_self |= is_self_check(&rs->items[i]);
    if (!rc && any_self) {
        rc = hc_ostream_printf(o, err, "### Reference self-checks\n\n");
        for (size_t i = 0; !rc && i < rs->n; i++) {
            const hc_result *r = &rs->items[i];
            if (!is_self_check(r))
                continue;
            /* Against an every-limit-0 tier the outputs are the reference's bits or not. */
            char v[300];
            if (r->outcome == HC_OUT_SKIPPED || hc_result_is_error(r) || !r->checks)
                snprintf(v, sizeof v, "%s", r->outcome == HC_OUT_SKIPPED ? "skipped" : "**ERROR**");
            else {
                size_t vo = 0;
                v[0] = '\0';
                for (size_t t = 0; t < r->n_tiers && vo < sizeof v; t++) {
                    int exact = hc_tier_is_exact(&r->tiers[t]), pass = r->checks[t].pass;
                    vo += (size_t)snprintf(v + vo, sizeof v - vo, "%s%s (%s)", t ? ", " : "",
                                           exact ? (pass ? "bit-identical" : "**differs**") : (pass ? "pass" : "**FAIL**"),
                                           r->tiers[t].name);
                }
            }
            rc = hc_ostream_printf(o, err, "- ") || md_text(o, r->net, err) || hc_ostream_printf(o, err, " · ") ||
                 md_text(o, r->board, err) || hc_ostream_printf(o, err, " · ") || md_text(o, r->backend, err) ||
                 hc_ostream_printf(o, err, " · %s: %s", r->mode ? r->mode : "", v) ||
                 (r->message && (hc_ostream_printf(o, err, "; ") || md_text(o, r->message, err))) ||
                 hc_ostream_printf(o, err, "\n");
            done[i] = 1;
        }
        rc = rc || hc_ostream_printf(o, err, "\n");
    }
    for (size_t i = 0; !rc && i < rs->n; i++) {
        if (done[i])
            continue;
        rc = hc_ostream_printf(o, err, "### ") || md_text(o, rs->items[i].net, err) ||
             hc_ostream_printf(o, err, "\n\n") || md_summary_header(o, err);
        for (size_t j = i; !rc && j < rs->n; j++)
            if (!done[j] && same(rs->items[i].net, rs->items[j].net))
                rc = md_summary_row(o, &rs->items[j], err);
        rc = rc || hc_ostream_printf(o, err, "\n<details><summary>every figure</summary>\n\n");
        for (size_t j = i; !rc && j < rs->n; j++) {
            if (done[j] || !same(rs->items[i].net, rs->items[j].net))
                continue;
            done[j] = 1;
            rc = md_result(o, &rs->items[j], err);
        }
        rc = rc || hc_ostream_printf(o, err, "</details>\n\n");
    }
    if (!rc && rs->n_headroom > 0)
        rc = md_headroom(o, rs, err);
    if (!rc && rs->n_prov > 0)
        rc = md_provenance(o, rs, err);
    free(done);
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}

/* ---- CSV ---- */

static int csv_field(hc_ostream *o, const char *s, int last, hc_err *err)
{
    s = s ? s : "";
    int quote = strpbrk(s, ",\"\r\n") != NULL;
    if (quote && hc_ostream_write(o, "\"", 1, err))
        return -1;
    for (; *s; s++) {
        if (*s == '"' && hc_ostream_write(o, "\"", 1, err))
            return -1;
        if (hc_ostream_write(o, s, 1, err))
            return -1;
    }
    if (quote && hc_ostream_write(o, "\"", 1, err))
        return -1;
    return hc_ostream_write(o, last ? "\n" : ",", 1, err);
}

static const char *num(double x, char *buf, size_t len)
{
    if (isnan(x))
        snprintf(buf, len, "nan");
    else if (isinf(x))
        snprintf(buf, len, x > 0 ? "inf" : "-inf");
    else
        hc_num_format(buf, len, "%.17g", x);
    return buf;
}

static int csv_row(hc_ostream *o, const hc_result *r, size_t tier, int metric, hc_err *err)
{
    static const char *const outcomes[] = {"checked", "error", "skipped"};
    char buf[16][64];
    const char *f[24];
    int k = 0;
    f[k++] = r->net;
    f[k++] = r->board;
    f[k++] = r->backend;
    f[k++] = r->mode;
    f[k++] = hc_result_is_error(r) ? "error" : outcomes[r->outcome];
    f[k++] = tier < r->n_tiers ? r->tiers[tier].name : "";
    f[k++] = metric >= 0 ? hc_metric_infos[metric].name : "";
    for (int i = 0; i < 13; i++)
        buf[i][0] = 0;
    const char *verdict = "";
    if (metric >= 0 && r->stats) {
        const hc_metric_stats *ms = &r->stats->m[metric];
        snprintf(buf[0], 64, "%zu", ms->n);
        for (int p = 0; p < HC_P_COUNT; p++)
            num(ms->v[p], buf[1 + p], 64);
        snprintf(buf[5], 64, "%zu", ms->max_pos);
        if (ms->max_cell >= 0)
            snprintf(buf[6], 64, "%d", ms->max_cell);
        if (tier < r->n_tiers) {
            const hc_tier *t = &r->tiers[tier];
            int worst = HC_V_UNSET;
            for (int p = 0; p < HC_P_COUNT; p++) {
                if (t->set[metric][p])
                    num(t->limit[metric][p] / t->scale[metric][p], buf[7 + p], 64);
                if (r->checks) {
                    /* The enum is ordered unset < pass < fail < nonfinite: keep the worst. */
                    int v = r->checks[tier].verdict[metric][p];
                    if (v > worst)
                        worst = v;
                }
            }
            verdict = r->checks ? hc_verdict_names[worst] : "";
        }
    }
    for (int i = 0; i < 11; i++)
        f[k++] = buf[i];
    f[k++] = verdict;
    /* The metric's resolution (declared by the backend; empty when exact), and the positions the
     * backend could not express. */
    if (metric >= 0 && r->stats && r->stats->res[metric] > 0)
        num(r->stats->res[metric], buf[11], 64);
    f[k++] = buf[11];
    if (r->n_skipped > 0)
        snprintf(buf[12], 64, "%zu", r->n_skipped);
    f[k++] = buf[12];
    char nf[4600] = "";
    const char *msg = r->message;
    if (r->outcome == HC_OUT_CHECKED && hc_result_is_error(r)) {
        hc_result_nonfinite_text(r, nf, sizeof nf);
        if (r->message) /* the command that reruns the case */
            snprintf(nf + strlen(nf), sizeof nf - strlen(nf), "; %s", r->message);
        msg = nf;
    }
    f[k++] = msg;
    for (int i = 0; i < k; i++)
        if (csv_field(o, f[i], i == k - 1, err))
            return -1;
    return 0;
}

int hc_table_write_csv(const hc_results *rs, const char *path, hc_err *err)
{
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o)
        return -1;
    int rc = hc_ostream_printf(o, err, "net,board,backend,mode,outcome,tier,metric,samples,avg,p90,p99,max,"
                                       "max_position,max_cell,limit_avg,limit_p90,limit_p99,limit_max,verdict,resolution,"
                                       "skipped_positions,message\n");
    for (size_t i = 0; !rc && i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        size_t nt = r->n_tiers ? r->n_tiers : 1;
        for (size_t t = 0; !rc && t < nt; t++) {
            if (!r->stats) {
                rc = csv_row(o, r, t, -1, err);
                continue;
            }
            for (int m = 0; !rc && m < HC_M_COUNT; m++)
                rc = csv_row(o, r, t, m, err);
        }
    }
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
