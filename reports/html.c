/* The self-contained HTML report of a run (report.html). */
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

/* The page is built in memory, then written in one go. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

/* Text and attribute values escaped. */
static void sb_esc(sbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '&': sb_printf(b, "&amp;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default: sb_printf(b, "%c", *s);
        }
    }
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
enum { N_PALETTE = 8 };

static int result_pass(const hc_result *r)
{
    if (r->outcome != HC_OUT_CHECKED || hc_result_is_error(r) || !r->checks)
        return 0;
    for (size_t t = 0; t < r->n_tiers; t++)
        if (!r->checks[t].pass)
            return 0;
    return 1;
}

static const char *verdict_class(const hc_result *r)
{
    if (r->outcome == HC_OUT_SKIPPED)
        return "skip";
    if (hc_result_is_error(r))
        return "err";
    return result_pass(r) ? "pass" : "fail";
}

static void fig(sbuf *b, int metric, double v)
{
    char buf[64];
    sb_printf(b, "<td class=num>%s</td>", hc_metric_format(metric, v, buf, sizeof buf));
}

static void tiers_cell(sbuf *b, const hc_result *r)
{
    sb_printf(b, "<td>");
    for (size_t t = 0; t < r->n_tiers; t++) {
        const char *cls = r->outcome == HC_OUT_CHECKED && r->checks ? (r->checks[t].pass ? "pass" : "fail") : "skip";
        sb_printf(b, "<span class=%s>", cls);
        sb_esc(b, r->tiers[t].name);
        sb_printf(b, " %s</span> ", r->outcome == HC_OUT_CHECKED && r->checks ? (r->checks[t].pass ? "pass" : "FAIL") : "-");
    }
    sb_printf(b, "</td>");
}

static void closest_cell(sbuf *b, const hc_result *r)
{
    const hc_tier_check *best = NULL;
    size_t bt = 0;
    for (size_t t = 0; r->outcome == HC_OUT_CHECKED && r->checks && t < r->n_tiers; t++)
        if (r->checks[t].worst_all_metric >= 0 && (!best || r->checks[t].worst_all_ratio > best->worst_all_ratio)) {
            best = &r->checks[t];
            bt = t;
        }
    if (!best) {
        sb_printf(b, "<td>-</td>");
        return;
    }
    sb_printf(b, "<td>%.3g &#215; ", best->worst_all_ratio);
    sb_esc(b, r->tiers[bt].name);
    sb_printf(b, " %s %s limit</td>", hc_metric_infos[best->worst_all_metric].name, hc_pct_names[best->worst_all_pct]);
}

static const int headline[] = {HC_M_WINRATE, HC_M_TOP_POLICY, HC_M_POLICY_KL, HC_M_OWNERSHIP};
enum { N_HEADLINE = 4 };

static void result_label(sbuf *b, const hc_result *r)
{
    sb_esc(b, r->board);
    sb_printf(b, " / ");
    sb_esc(b, r->backend);
    sb_printf(b, " / ");
    sb_esc(b, r->mode);
}

/* ---- CDF plot on a log x axis ---- */

enum { PW = 440, PH = 230, ML = 46, MR = 10, MT = 22, MB = 34 };

static double clamp_lo(double v, double lo) { return v > lo ? v : lo; }

static void cdf_plot(sbuf *b, const hc_results *rs, const char *net, int metric)
{
    /* The x range: every positive quantile of this net's results and every limit. */
    double lo = INFINITY, hi = 0;
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats || !r->stats->m[metric].n)
            continue;
        any = 1;
        for (int k = 0; k < HC_STATS_NQ; k++) {
            double q = r->stats->m[metric].q[k];
            if (isfinite(q) && q > 0) {
                lo = q < lo ? q : lo;
                hi = q > hi ? q : hi;
            }
        }
        for (size_t t = 0; t < r->n_tiers; t++)
            for (int p = HC_P_99; p <= HC_P_MAX; p++)
                if (r->tiers[t].set[metric][p]) {
                    double l = r->tiers[t].limit[metric][p] / r->tiers[t].scale[metric][p];
                    if (l > 0) {
                        lo = l < lo ? l : lo;
                        hi = l > hi ? l : hi;
                    }
                }
    }
    if (!any)
        return;
    if (!(hi > 0)) {
        lo = 1e-9;
        hi = 1e-6;
    }
    if (!isfinite(lo) || lo >= hi)
        lo = hi / 1000;
    double l0 = floor(log10(lo)) - 1, l1 = ceil(log10(hi));
    if (l1 - l0 < 2)
        l0 = l1 - 2;
    double axis_lo = pow(10, l0);
    double w = PW - ML - MR, h = PH - MT - MB;
#define X(v) (ML + w * (log10(clamp_lo((v), axis_lo)) - l0) / (l1 - l0))
#define Y(f) (MT + h * (1 - (f)))
    sb_printf(b, "<figure><svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">", PW,
              PH, PW, PH);
    sb_printf(b, "<title>%s error CDF</title>", hc_metric_infos[metric].name);
    sb_printf(b, "<text x=\"%d\" y=\"14\" class=\"pt\">%s: fraction of samples with error &#8804; x</text>", ML,
              hc_metric_infos[metric].name);
    sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>", ML, MT, w, h);
    for (int d = (int)l0; d <= (int)l1; d++) {
        double x = ML + w * (d - l0) / (l1 - l0);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", x, MT, x, MT + h);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"middle\">1e%d</text>", x, MT + h + 13, d);
    }
    for (int k = 0; k <= 4; k++) {
        double y = Y(k / 4.0);
        sb_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%.2g</text>", ML - 3, y + 4, k / 4.0);
    }
    sb_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">raw error (log; 0 drawn at the left edge)</text>",
              ML + w / 2, PH - 4);
    /* Tier limits: 99% dashed, max solid, labelled once per tier and percentile. */
    char seen[32][80];
    int n_seen = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0)
            continue;
        for (size_t t = 0; t < r->n_tiers; t++)
            for (int p = HC_P_99; p <= HC_P_MAX; p++) {
                if (!r->tiers[t].set[metric][p])
                    continue;
                char key[80];
                snprintf(key, sizeof key, "%s %s", r->tiers[t].name, hc_pct_names[p]);
                int dup = 0;
                for (int s = 0; s < n_seen; s++)
                    dup |= strcmp(seen[s], key) == 0;
                if (dup || n_seen == 32)
                    continue;
                snprintf(seen[n_seen++], sizeof seen[0], "%s", key);
                double x = X(r->tiers[t].limit[metric][p] / r->tiers[t].scale[metric][p]);
                sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"%s/>", x, MT, x, MT + h,
                          p == HC_P_99 ? " stroke-dasharray=\"4 3\"" : "");
                sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"lim\" transform=\"rotate(-90 %.1f %.1f)\">", x - 2,
                          MT + h - 2 - 0.0, x - 2, MT + h - 2);
                sb_esc(b, key);
                sb_printf(b, "</text>");
            }
    }
    /* One staircase per result: at q[k] the fraction k/(NQ-1) of the samples is <= q[k]. */
    int color = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats || !r->stats->m[metric].n)
            continue;
        const hc_metric_stats *ms = &r->stats->m[metric];
        sb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", palette[color % N_PALETTE],
                  strcmp(r->mode, "batched") == 0 ? " stroke-dasharray=\"6 2\"" : "");
        double prev = 0;
        for (int k = 0; k < HC_STATS_NQ; k++) {
            double q = ms->q[k];
            if (!isfinite(q))
                break; /* non-finite samples sort last: the curve stops short of 1 */
            double f = (double)k / (HC_STATS_NQ - 1);
            sb_printf(b, "%.1f,%.1f %.1f,%.1f ", X(q), Y(prev), X(q), Y(f));
            prev = f;
        }
        sb_printf(b, "\"><title>");
        result_label(b, r);
        sb_printf(b, "</title></polyline>");
        color++;
    }
    sb_printf(b, "</svg></figure>\n");
#undef X
#undef Y
}

static void legend(sbuf *b, const hc_results *rs, const char *net)
{
    int color = 0;
    sb_printf(b, "<p class=legend>");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats)
            continue;
        sb_printf(b, "<span><svg width=\"26\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"26\" y2=\"5\" stroke=\"%s\" "
                     "stroke-width=\"2\"%s/></svg> ",
                  palette[color % N_PALETTE], strcmp(r->mode, "batched") == 0 ? " stroke-dasharray=\"6 2\"" : "");
        result_label(b, r);
        sb_printf(b, "</span> ");
        color++;
    }
    sb_printf(b, "<br>Vertical lines: tier limits (dashed: 99%%, solid: max). Curves from a 65-point quantile sketch.</p>\n");
}

static void full_table(sbuf *b, const hc_result *r)
{
    sb_printf(b, "<details><summary>");
    result_label(b, r);
    int any_res = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any_res |= r->stats->res[m] > 0;
    sb_printf(b, ": all metrics</summary><table><tr><th>metric</th><th>avg</th><th>90%%</th><th>99%%</th><th>max</th>"
                 "<th>worst position</th>%s</tr>",
              any_res ? "<th title=\"what reading the backend's rounded outputs can add to the error; "
                        "tier limits allow it\">resolution</th>" : "");
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *ms = &r->stats->m[m];
        sb_printf(b, "<tr><td>%s</td>", hc_metric_infos[m].name);
        for (int p = 0; p < HC_P_COUNT; p++)
            fig(b, m, ms->v[p]);
        if (ms->max_cell >= 0)
            sb_printf(b, "<td class=num>%zu (cell %d)</td>", ms->max_pos, ms->max_cell);
        else
            sb_printf(b, "<td class=num>%zu</td>", ms->max_pos);
        if (any_res && r->stats->res[m] > 0)
            fig(b, m, r->stats->res[m]);
        else if (any_res)
            sb_printf(b, "<td></td>");
        sb_printf(b, "</tr>");
    }
    sb_printf(b, "</table>");
    if (r->n_skipped > 0) {
        sb_printf(b, "<p>Skipped positions: ");
        sb_esc(b, r->skip_message ? r->skip_message : "");
        sb_printf(b, "</p>");
    }
    sb_printf(b, "</details>\n");
}


/* ---- per-point heat maps ---- */

/* White (0 or below lo) to dark red (hi), on a log scale over [lo, hi]. */
static void heat_color(double v, double lo, double hi, char *buf, size_t len)
{
    double t = !(v > lo) ? 0 : v >= hi ? 1 : log10(v / lo) / log10(hi / lo);
    if (!isfinite(v))
        t = 1;
    int r = (int)(255 - 115 * t), g = (int)(255 - 255 * t), b = (int)(255 - 255 * t);
    snprintf(buf, len, "#%02x%02x%02x", r, g < 0 ? 0 : g, b < 0 ? 0 : b);
}

static const float *cells_of(const hc_stats *s, int which) { return which ? s->pol_cell : s->own_cell; }

static void heat_map(sbuf *b, const hc_stats *s, int which, double lo, double hi)
{
    int cs = s->cells_x > 13 ? 9 : 13;
    sb_printf(b, "<svg class=\"heat\" width=\"%d\" height=\"%d\"><title>mean %s error per point</title>",
              cs * s->cells_x, cs * s->cells_y, which ? "policy" : "ownership");
    const float *v = cells_of(s, which);
    for (int y = 0; y < s->cells_y; y++)
        for (int x = 0; x < s->cells_x; x++) {
            char col[16];
            heat_color(v[y * s->cells_x + x], lo, hi, col, sizeof col);
            sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", x * cs, y * cs, cs, cs, col);
        }
    sb_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/></svg>", cs * s->cells_x,
              cs * s->cells_y);
}

static void heat_scale(sbuf *b, double lo, double hi)
{
    sb_printf(b, "<svg class=\"scale\" width=\"220\" height=\"26\">");
    for (int k = 0; k < 20; k++) {
        char col[16];
        heat_color(lo * pow(hi / lo, (k + 0.5) / 20.0), lo, hi, col, sizeof col);
        sb_printf(b, "<rect x=\"%d\" y=\"0\" width=\"10\" height=\"12\" fill=\"%s\"/>", 10 + k * 10, col);
    }
    sb_printf(b, "<text x=\"10\" y=\"24\" class=\"ax\">&#8804;%.2g</text><text x=\"210\" y=\"24\" class=\"ax\" "
                 "text-anchor=\"end\">%.2g</text></svg>",
              lo, hi);
}

static void heat_maps(sbuf *b, const hc_results *rs, const char *net)
{
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r0 = &rs->items[i];
        int first = strcmp(r0->net, net) == 0;
        for (size_t j = 0; first && j < i; j++)
            first = !(strcmp(rs->items[j].net, net) == 0 && strcmp(rs->items[j].board, r0->board) == 0);
        if (!first)
            continue;
        /* The results of this board with per-point errors, on one scale per kind. */
        double hi[2] = {0, 0};
        int n = 0;
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            if (strcmp(r->net, net) || strcmp(r->board, r0->board) || !r->stats || !r->stats->cells_x)
                continue;
            n++;
            for (int w = 0; w < 2; w++)
                for (int c = 0; c < r->stats->cells_x * r->stats->cells_y; c++)
                    if (isfinite(cells_of(r->stats, w)[c]) && cells_of(r->stats, w)[c] > hi[w])
                        hi[w] = cells_of(r->stats, w)[c];
        }
        if (!n)
            continue;
        sb_printf(b, "<h4>Board ");
        sb_esc(b, r0->board);
        sb_printf(b, ": mean error per point (log colour scale, shared by the row)</h4>\n<table class=heat><tr><th></th>");
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            if (strcmp(r->net, net) || strcmp(r->board, r0->board) || !r->stats || !r->stats->cells_x)
                continue;
            sb_printf(b, "<th>");
            sb_esc(b, r->backend);
            sb_printf(b, "<br>");
            sb_esc(b, r->mode);
            sb_printf(b, "</th>");
        }
        sb_printf(b, "<th>scale</th></tr>\n");
        for (int w = 0; w < 2; w++) {
            double h = hi[w] > 0 ? hi[w] : 1e-9, lo = h / 1e4;
            sb_printf(b, "<tr><td>%s</td>", w ? "policy prob |d|" : "ownership |d|");
            for (size_t j = i; j < rs->n; j++) {
                const hc_result *r = &rs->items[j];
                if (strcmp(r->net, net) || strcmp(r->board, r0->board) || !r->stats || !r->stats->cells_x)
                    continue;
                sb_printf(b, "<td>");
                heat_map(b, r->stats, w, lo, h);
                sb_printf(b, "</td>");
            }
            sb_printf(b, "<td>");
            heat_scale(b, lo, h);
            sb_printf(b, "</td></tr>\n");
        }
        sb_printf(b, "</table>\n");
    }
}

static void net_section(sbuf *b, const hc_results *rs, const char *net)
{
    sb_printf(b, "<h2 id=\"net-");
    sb_esc(b, net);
    sb_printf(b, "\">Net ");
    sb_esc(b, net);
    int mv = 0;
    for (size_t i = 0; i < rs->n && !mv; i++)
        if (strcmp(rs->items[i].net, net) == 0)
            mv = rs->items[i].model_version;
    if (mv > 0)
        sb_printf(b, " (model version %d)", mv);
    sb_printf(b, "</h2>\n<table><tr><th>board</th><th>NN buffer / settings</th><th>backend</th><th>mode</th><th>positions</th>"
                 "<th>tiers</th><th>closest margin (ratio to limit)</th>");
    for (int h = 0; h < N_HEADLINE; h++)
        sb_printf(b, "<th>%s avg</th><th>90%%</th><th>99%%</th><th>max</th>", hc_metric_infos[headline[h]].name);
    sb_printf(b, "</tr>\n");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0)
            continue;
        sb_printf(b, "<tr class=%s><td>", verdict_class(r));
        sb_esc(b, r->board);
        if (r->nn_x_len > 0)
            sb_printf(b, "</td><td>%dx%d, batch %d, optimism %g, pda %g, temp %g</td><td>", r->nn_x_len, r->nn_y_len,
                      r->max_batch_size, r->policy_optimism, r->pda, r->policy_temperature);
        else
            sb_printf(b, "</td><td>-</td><td>");
        sb_esc(b, r->backend);
        sb_printf(b, "</td><td>");
        sb_esc(b, r->mode);
        sb_printf(b, "</td>");
        if (r->stats && r->n_skipped > 0)
            sb_printf(b, "<td class=num>%zu (%zu skipped)</td>", r->stats->n_positions, r->n_skipped);
        else if (r->stats)
            sb_printf(b, "<td class=num>%zu</td>", r->stats->n_positions);
        else
            sb_printf(b, "<td>-</td>");
        tiers_cell(b, r);
        if (r->outcome != HC_OUT_CHECKED || hc_result_is_error(r)) {
            char buf[300];
            sb_printf(b, "<td colspan=%d>%s: ", 1 + 4 * N_HEADLINE, r->outcome == HC_OUT_SKIPPED ? "skipped" : "error");
            sb_esc(b, r->message ? r->message : hc_result_nonfinite_text(r, buf, sizeof buf));
            sb_printf(b, "</td></tr>\n");
            continue;
        }
        closest_cell(b, r);
        for (int h = 0; h < N_HEADLINE; h++)
            for (int p = 0; p < HC_P_COUNT; p++)
                fig(b, headline[h], r->stats->m[headline[h]].v[p]);
        sb_printf(b, "</tr>\n");
    }
    sb_printf(b, "</table>\n");
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->items[i].net, net) == 0 && rs->items[i].stats)
            full_table(b, &rs->items[i]);
    sb_printf(b, "<h3>Error distributions</h3>\n");
    legend(b, rs, net);
    sb_printf(b, "<div class=plots>\n");
    for (int m = 0; m < HC_M_COUNT; m++)
        cdf_plot(b, rs, net, m);
    sb_printf(b, "</div>\n<h3>Errors per board point</h3>\n");
    heat_maps(b, rs, net);
}

static int first_of(const hc_results *rs, size_t i, int by_backend)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(rs->items[j].net, rs->items[i].net) == 0 &&
            (!by_backend || strcmp(rs->items[j].backend, rs->items[i].backend) == 0))
            return 0;
    return 1;
}

/* The distinct reasons of the skipped results of item i's net and backend: ": reason; other". */
static void skip_reasons(sbuf *b, const hc_results *rs, size_t i)
{
    const hc_result *r0 = &rs->items[i];
    const char *sep = ": ";
    for (size_t j = i; j < rs->n; j++) {
        const hc_result *r = &rs->items[j];
        if (strcmp(r->net, r0->net) != 0 || strcmp(r->backend, r0->backend) != 0 || r->outcome != HC_OUT_SKIPPED)
            continue;
        const char *why = r->message ? r->message : "no reason given";
        int seen = 0;
        for (size_t k = i; k < j && !seen; k++) {
            const hc_result *q = &rs->items[k];
            seen = strcmp(q->net, r0->net) == 0 && strcmp(q->backend, r0->backend) == 0 &&
                   q->outcome == HC_OUT_SKIPPED && strcmp(q->message ? q->message : "no reason given", why) == 0;
        }
        if (seen)
            continue;
        sb_printf(b, "%s", sep);
        sb_esc(b, why);
        sep = "; ";
    }
}

static void summary(sbuf *b, const hc_results *rs)
{
    sb_printf(b, "<h2>Summary across nets</h2>\n<table><tr><th>net</th><th>model version</th><th>backend</th><th>results</th><th>verdict</th>"
                 "<th>winrateError 99%% (worst board/mode)</th><th>winrateError max (worst)</th></tr>\n");
    for (size_t i = 0; i < rs->n; i++) {
        if (!first_of(rs, i, 1))
            continue;
        const hc_result *r0 = &rs->items[i];
        double p99 = -1, mx = -1;
        int n = 0, pass = 0, err = 0, skip = 0, nan99 = 0, nanmx = 0;
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            if (strcmp(r->net, r0->net) != 0 || strcmp(r->backend, r0->backend) != 0)
                continue;
            n++;
            if (r->outcome == HC_OUT_SKIPPED) {
                skip++; /* neither passes nor fails: counted apart, never as a failing tier */
                continue;
            }
            pass += result_pass(r);
            err += hc_result_is_error(r) || r->outcome == HC_OUT_ERROR;
            if (r->stats) {
                double a = r->stats->m[HC_M_WINRATE].v[HC_P_99], c = r->stats->m[HC_M_WINRATE].v[HC_P_MAX];
                nan99 |= !isfinite(a);
                nanmx |= !isfinite(c);
                p99 = isfinite(a) && a > p99 ? a : p99;
                mx = isfinite(c) && c > mx ? c : mx;
            }
        }
        int ran = n - skip;
        const char *cls = err ? "err" : ran == 0 ? "skip" : pass == ran ? "pass" : "fail";
        sb_printf(b, "<tr class=%s><td><a href=\"#net-", cls);
        sb_esc(b, r0->net);
        sb_printf(b, "\">");
        sb_esc(b, r0->net);
        sb_printf(b, "</a></td>");
        if (r0->model_version > 0)
            sb_printf(b, "<td class=num>%d</td><td>", r0->model_version);
        else
            sb_printf(b, "<td>-</td><td>");
        sb_esc(b, r0->backend);
        sb_printf(b, "</td><td class=num>%d</td><td>%s", n,
                  err ? "error" : ran == 0 ? "skipped" : pass == ran ? "all tiers pass" : "a tier fails");
        if (ran == 0)
            skip_reasons(b, rs, i);
        else if (skip > 0)
            sb_printf(b, "; %d of %d skipped", skip, n);
        sb_printf(b, "</td>");
        char buf[64];
        sb_printf(b, "<td class=num>%s</td>", nan99 ? "non-finite" : p99 < 0 ? "-" : hc_metric_format(HC_M_WINRATE, p99, buf, sizeof buf));
        sb_printf(b, "<td class=num>%s</td></tr>\n", nanmx ? "non-finite" : mx < 0 ? "-" : hc_metric_format(HC_M_WINRATE, mx, buf, sizeof buf));
    }
    sb_printf(b, "</table>\n");
}

int hc_html_write(const hc_results *rs, const char *path, hc_err *err)
{
    sbuf b = {0};
    size_t pass = 0, fail = 0, errors = 0, skipped = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (r->outcome == HC_OUT_SKIPPED)
            skipped++;
        else if (hc_result_is_error(r))
            errors++;
        else
            result_pass(r) ? pass++ : fail++;
    }
    sb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>halfcheck: ");
    sb_esc(&b, rs->suite ? rs->suite : "run");
    sb_printf(&b, "</title>\n<style>\n"
                  "body{font:13px/1.4 sans-serif;margin:1.5em;color:#222}\n"
                  "table{border-collapse:collapse;margin:.5em 0}\n"
                  "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}\n"
                  "th{background:#f3f3f3}\n"
                  "td.num{text-align:right;font-family:monospace}\n"
                  "tr.pass td:first-child{border-left:4px solid #2ca02c}\n"
                  "tr.fail td:first-child{border-left:4px solid #d62728}\n"
                  "tr.err td:first-child{border-left:4px solid #000}\n"
                  "tr.skip td:first-child{border-left:4px solid #bbb} tr.skip td{color:#666}\n"
                  "span.pass{color:#2ca02c} span.fail{color:#d62728;font-weight:bold} span.skip{color:#888}\n"
                  ".plots{display:flex;flex-wrap:wrap;gap:8px} figure{margin:0}\n"
                  "svg text{font:10px sans-serif} svg text.pt{font:bold 11px sans-serif} svg text.lim{fill:#555;font-size:9px}\n"
                  ".legend span{margin-right:1em;white-space:nowrap}\n"
                  "table.heat td{vertical-align:middle}\n"
                  "</style></head>\n<body>\n<h1>halfcheck: ");
    sb_esc(&b, rs->suite ? rs->suite : "run");
    sb_printf(&b, "</h1>\n<p>");
    if (rs->timestamp) {
        sb_printf(&b, "Run at ");
        sb_esc(&b, rs->timestamp);
        sb_printf(&b, ", ");
    }
    if (rs->version) {
        sb_printf(&b, "halfcheck ");
        sb_esc(&b, rs->version);
        sb_printf(&b, ". ");
    }
    sb_printf(&b, "%zu results: %zu passed, %zu failed, %zu errors, %zu skipped.</p>\n", rs->n, pass, fail, errors, skipped);
    summary(&b, rs);
    for (size_t i = 0; i < rs->n; i++)
        if (first_of(rs, i, 0))
            net_section(&b, rs, rs->items[i].net);
    sb_printf(&b, "</body></html>\n");
    if (b.oom) {
        free(b.p);
        return hc_err_set(err, HC_ENOMEM, "%s: out of memory building the page", path);
    }
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o) {
        free(b.p);
        return -1;
    }
    int rc = hc_ostream_write(o, b.p, b.n, err);
    free(b.p);
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
