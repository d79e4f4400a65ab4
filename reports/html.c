/* The self-contained HTML report of a run (report.html). */
#include "reports/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"
#include "harness/base/strbuf.h"

/* The page is built in memory (an hc_strbuf), then written in one go. */

/* Text and attribute values escaped. */
static void sb_esc(hc_strbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': hc_strbuf_printf(b, "&lt;"); break;
        case '>': hc_strbuf_printf(b, "&gt;"); break;
        case '&': hc_strbuf_printf(b, "&amp;"); break;
        case '"': hc_strbuf_printf(b, "&quot;"); break;
        default: hc_strbuf_printf(b, "%c", *s);
        }
    }
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
enum { N_PALETTE = 8 };

static const char *verdict_class(const hc_result *r)
{
    if (r->outcome == HC_OUT_SKIPPED)
        return "skip";
    if (hc_result_is_error(r))
        return "err";
    return hc_result_passed(r) ? "pass" : "fail";
}

static void fig(hc_strbuf *b, int metric, double v)
{
    char buf[64];
    hc_strbuf_printf(b, "<td class=num>%s</td>", hc_metric_format(metric, v, buf, sizeof buf));
}

static void tiers_cell(hc_strbuf *b, const hc_result *r)
{
    hc_strbuf_printf(b, "<td>");
    for (size_t t = 0; t < r->n_tiers; t++) {
        const char *cls = r->outcome == HC_OUT_CHECKED && r->checks ? (r->checks[t].pass ? "pass" : "fail") : "skip";
        hc_strbuf_printf(b, "<span class=%s>", cls);
        sb_esc(b, r->tiers[t].name);
        hc_strbuf_printf(b, " %s</span> ", r->outcome == HC_OUT_CHECKED && r->checks ? (r->checks[t].pass ? "pass" : "FAIL") : "-");
    }
    hc_strbuf_printf(b, "</td>");
}

static void closest_cell(hc_strbuf *b, const hc_result *r)
{
    const hc_tier_check *best = NULL;
    size_t bt = 0;
    for (size_t t = 0; r->outcome == HC_OUT_CHECKED && r->checks && t < r->n_tiers; t++)
        if (r->checks[t].worst_all_metric >= 0 && (!best || r->checks[t].worst_all_ratio > best->worst_all_ratio)) {
            best = &r->checks[t];
            bt = t;
        }
    if (!best) {
        hc_strbuf_printf(b, "<td>-</td>");
        return;
    }
    if (hc_tier_is_exact(&r->tiers[bt])) {
        /* Every limit 0: the figures are the reference's bits or not; a ratio says nothing. */
        hc_strbuf_printf(b, "<td>%s (", best->pass ? "bit-identical" : "differs");
        sb_esc(b, r->tiers[bt].name);
        hc_strbuf_printf(b, ")</td>");
        return;
    }
    int m = best->worst_all_metric, p = best->worst_all_pct;
    char val[64], lim[64], ratio[64];
    hc_strbuf_printf(b, "<td>%s %s: %s of ", hc_metric_infos[m].name, hc_pct_names[p],
              hc_metric_format(m, r->stats->m[m].v[p], val, sizeof val));
    sb_esc(b, hc_limit_format(&r->tiers[bt], m, p, lim, sizeof lim));
    hc_strbuf_printf(b, " = %s&#215; (", hc_num_format(ratio, sizeof ratio, "%.3g", best->worst_all_ratio));
    sb_esc(b, r->tiers[bt].name);
    hc_strbuf_printf(b, ")</td>");
}

static const int headline[] = {HC_M_WINRATE, HC_M_TOP_POLICY, HC_M_POLICY_KL, HC_M_OWNERSHIP};
enum { N_HEADLINE = 4 };

static void result_label(hc_strbuf *b, const hc_result *r)
{
    sb_esc(b, r->board);
    hc_strbuf_printf(b, " / ");
    sb_esc(b, r->backend);
    hc_strbuf_printf(b, " / ");
    sb_esc(b, r->mode);
}

/* ---- CDF plot on a log x axis ---- */

enum { PW = 440, PH = 230, ML = 46, MR = 10, MT = 22, MB = 34 };
/* The least distance between two vertical limit labels: a 9px font's line height. */
#define HC_LIM_GAP 11.0

static double clamp_lo(double v, double lo) { return v > lo ? v : lo; }

static void cdf_plot(hc_strbuf *b, const hc_results *rs, const char *net, int metric)
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
    const hc_metric_info *mi = &hc_metric_infos[metric];
    double qmax = 0;
    int mv = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats || !r->stats->m[metric].n)
            continue;
        double q = r->stats->m[metric].q[HC_STATS_NQ - 1];
        qmax = !isfinite(q) || q > qmax ? (isfinite(q) ? q : INFINITY) : qmax;
        mv = r->model_version > 0 ? r->model_version : mv;
    }
    if (qmax == 0) {
        /* Nothing to draw: say why instead of an empty frame. */
        hc_strbuf_printf(b, "<figure class=\"empty\"><p class=\"pt\">%s</p><p>", mi->name);
        if ((metric == HC_M_ST_WINLOSS || metric == HC_M_ST_SCORE) && mv > 0 && mv < 9)
            hc_strbuf_printf(b, "No plot: this net (model version %d) has no short-term error heads (they start at version 9), "
                         "so both outputs report -1 and every error is 0.", mv);
        else
            hc_strbuf_printf(b, "No plot: every error is 0 in every result (the outputs agree exactly).");
        hc_strbuf_printf(b, "</p></figure>\n");
        return;
    }
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
    hc_strbuf_printf(b, "<figure class=\"cdf\"><svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">", PW,
              PH, PW, PH);
    hc_strbuf_printf(b, "<title>%s error CDF</title>", hc_metric_infos[metric].name);
    hc_strbuf_printf(b, "<text x=\"%d\" y=\"14\" class=\"pt\">%s: fraction of samples with error &#8804; x</text>", ML,
              hc_metric_infos[metric].name);
    hc_strbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>", ML, MT, w, h);
    for (int d = (int)l0; d <= (int)l1; d++) {
        double x = ML + w * (d - l0) / (l1 - l0);
        hc_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", x, MT, x, MT + h);
        /* ticks in the tables' units: 1e-3 of a winrate is 0.1% */
        hc_strbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"middle\">%g%s</text>", x, MT + h + 13,
                  pow(10, d) * mi->display_scale, mi->unit);
    }
    for (int k = 0; k <= 4; k++) {
        double y = Y(k / 4.0);
        hc_strbuf_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%.2g</text>", ML - 3, y + 4, k / 4.0);
    }
    hc_strbuf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">error%s%s%s (log; 0 drawn at the left edge)</text>",
              ML + w / 2, PH - 4, *mi->unit ? " in " : "", mi->unit, strcmp(mi->unit, "c") == 0 ? " (hundredths)" : "");
    /* Tier limits: 99% dashed, max solid, labelled once per tier and percentile. Labels are
     * vertical text beside their line; lines closer than a label's height apart push the later
     * labels right so that none overlaps another. */
    typedef struct lim_label {
        double x;
        int p;
        char key[80];
    } lim_label;
    lim_label lims[32];
    int n_lims = 0;
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
                for (int s2 = 0; s2 < n_lims; s2++)
                    dup |= strcmp(lims[s2].key, key) == 0;
                if (dup || n_lims == 32)
                    continue;
                lims[n_lims].x = X(r->tiers[t].limit[metric][p] / r->tiers[t].scale[metric][p]);
                lims[n_lims].p = p;
                snprintf(lims[n_lims].key, sizeof lims[0].key, "%s", key);
                n_lims++;
            }
    }
    for (int i = 1; i < n_lims; i++) /* by x, for the spacing */
        for (int j = i; j > 0 && lims[j].x < lims[j - 1].x; j--) {
            lim_label t = lims[j];
            lims[j] = lims[j - 1];
            lims[j - 1] = t;
        }
    double last_lx = -1e9;
    for (int i = 0; i < n_lims; i++) {
        double x = lims[i].x;
        hc_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"%s/>", x, MT, x, MT + h,
                  lims[i].p == HC_P_99 ? " stroke-dasharray=\"4 3\"" : "");
        double lx = x - 2 > last_lx + HC_LIM_GAP ? x - 2 : last_lx + HC_LIM_GAP;
        last_lx = lx;
        hc_strbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"lim\" transform=\"rotate(-90 %.1f %.1f)\">", lx, MT + h - 2.0,
                  lx, MT + h - 2.0);
        sb_esc(b, lims[i].key);
        hc_strbuf_printf(b, "</text>");
    }
    /* One staircase per result: at q[k] the fraction k/(NQ-1) of the samples is <= q[k]. */
    int color = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats || !r->stats->m[metric].n)
            continue;
        const hc_metric_stats *ms = &r->stats->m[metric];
        hc_strbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", palette[color % N_PALETTE],
                  strcmp(r->mode, "batched") == 0 ? " stroke-dasharray=\"6 2\"" : "");
        double prev = 0;
        for (int k = 0; k < HC_STATS_NQ; k++) {
            double q = ms->q[k];
            if (!isfinite(q))
                break; /* non-finite samples sort last: the curve stops short of 1 */
            double f = (double)k / (HC_STATS_NQ - 1);
            hc_strbuf_printf(b, "%.1f,%.1f %.1f,%.1f ", X(q), Y(prev), X(q), Y(f));
            prev = f;
        }
        hc_strbuf_printf(b, "\"><title>");
        result_label(b, r);
        hc_strbuf_printf(b, "</title></polyline>");
        color++;
    }
    hc_strbuf_printf(b, "</svg></figure>\n");
#undef X
#undef Y
}

static void legend(hc_strbuf *b, const hc_results *rs, const char *net)
{
    int color = 0;
    hc_strbuf_printf(b, "<p class=legend>");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || !r->stats)
            continue;
        hc_strbuf_printf(b, "<span><svg width=\"26\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"26\" y2=\"5\" stroke=\"%s\" "
                     "stroke-width=\"2\"%s/></svg> ",
                  palette[color % N_PALETTE], strcmp(r->mode, "batched") == 0 ? " stroke-dasharray=\"6 2\"" : "");
        result_label(b, r);
        hc_strbuf_printf(b, "</span> ");
        color++;
    }
    hc_strbuf_printf(b, "<br>Vertical lines: tier limits (dashed: 99%%, solid: max). Curves from a 65-point quantile sketch.</p>\n");
}

/* The signed errors (test minus reference; bias.h) and the top-move agreement: a constant shift
 * and noise of the same size have the same absolute errors. */
static void bias_table(hc_strbuf *b, const hc_stats *s)
{
    int any = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any |= s->bias[m].n > 0;
    if (any)
        hc_strbuf_printf(b, "<div class=bias><table><tr><th>signed error (test - ref)</th><th>mean</th><th>std. error</th>"
                            "<th>1%%</th><th>5%%</th><th>50%%</th><th>95%%</th><th>99%%</th><th title=\"mean more than %g "
                            "standard errors from 0 and above the outputs' resolution\">systematic</th></tr>",
                         HC_BIAS_SIGMAS);
    for (int m = 0; m < HC_M_COUNT && any; m++) {
        const hc_bias_stats *bs = &s->bias[m];
        char v[64];
        if (!bs->n)
            continue;
        hc_strbuf_printf(b, "<tr%s><td>%s</td><td class=num>%s</td>", bs->systematic ? " class=systematic" : "",
                         hc_metric_infos[m].name, hc_metric_format_signed(m, bs->mean, v, sizeof v));
        fig(b, m, bs->se);
        for (int p = 0; p < HC_BP_COUNT; p++)
            hc_strbuf_printf(b, "<td class=num>%s</td>", hc_metric_format_signed(m, bs->p[p], v, sizeof v));
        hc_strbuf_printf(b, "<td>%s</td></tr>", bs->systematic ? "yes" : "no");
    }
    if (any)
        hc_strbuf_printf(b, "</table></div>");
    if (s->top_agree.n)
        hc_strbuf_printf(b, "<p>Top move agrees with the reference's: %.2f%% (%zu of %zu positions)</p>",
                         100.0 * hc_top_agree_rate(&s->top_agree), s->top_agree.agree, s->top_agree.n);
}

static void full_table(hc_strbuf *b, const hc_result *r)
{
    hc_strbuf_printf(b, "<details><summary>");
    result_label(b, r);
    int any_res = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any_res |= r->stats->res[m] > 0;
    hc_strbuf_printf(b, ": all metrics</summary><table><tr><th>metric</th><th>avg</th><th>90%%</th><th>99%%</th><th>max</th>"
                 "<th>worst position</th>%s</tr>",
              any_res ? "<th title=\"what reading the backend's rounded outputs can add to the error; "
                        "tier limits allow it\">resolution</th>" : "");
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *ms = &r->stats->m[m];
        hc_strbuf_printf(b, "<tr><td>%s</td>", hc_metric_infos[m].name);
        for (int p = 0; p < HC_P_COUNT; p++)
            fig(b, m, ms->v[p]);
        if (ms->max_cell >= 0)
            hc_strbuf_printf(b, "<td class=num>%zu (cell %d)</td>", ms->max_pos, ms->max_cell);
        else
            hc_strbuf_printf(b, "<td class=num>%zu</td>", ms->max_pos);
        if (any_res && r->stats->res[m] > 0)
            fig(b, m, r->stats->res[m]);
        else if (any_res)
            hc_strbuf_printf(b, "<td></td>");
        hc_strbuf_printf(b, "</tr>");
    }
    hc_strbuf_printf(b, "</table>");
    bias_table(b, r->stats);
    if (r->n_skipped > 0) {
        hc_strbuf_printf(b, "<p>Skipped positions: ");
        sb_esc(b, r->skip_message ? r->skip_message : "");
        hc_strbuf_printf(b, "</p>");
    }
    hc_strbuf_printf(b, "</details>\n");
}


/* ---- per-point heat maps ---- */

/* White (0) to dark red (hi), linear: each map has its own hi (its largest value), so that a
 * map whose errors all sit within one decade (fp16) still shows where they are. */
static void heat_color(double v, double hi, char *buf, size_t len)
{
    double t = !(v > 0) || !(hi > 0) ? 0 : v >= hi ? 1 : v / hi;
    if (!isfinite(v))
        t = 1;
    int r = (int)(255 - 115 * t), g = (int)(255 - 255 * t), b = (int)(255 - 255 * t);
    snprintf(buf, len, "#%02x%02x%02x", r, g < 0 ? 0 : g, b < 0 ? 0 : b);
}

static const float *cells_of(const hc_stats *s, int which) { return which ? s->pol_cell : s->own_cell; }

/* The metric whose display units a map's values take: policy probabilities as topPolicy (%),
 * ownership as ownership (c). */
static int cells_metric(int which) { return which ? HC_M_TOP_POLICY : HC_M_OWNERSHIP; }

static double map_max(const hc_stats *s, int which)
{
    double hi = 0;
    for (int c = 0; c < s->cells_x * s->cells_y; c++)
        if (isfinite(cells_of(s, which)[c]) && cells_of(s, which)[c] > hi)
            hi = cells_of(s, which)[c];
    return hi;
}

static void heat_map(hc_strbuf *b, const hc_stats *s, int which, double hi)
{
    int cs = s->cells_x > 13 ? 9 : 13;
    hc_strbuf_printf(b, "<svg class=\"heat\" width=\"%d\" height=\"%d\"><title>mean %s error per point</title>",
              cs * s->cells_x, cs * s->cells_y, which ? "policy" : "ownership");
    const float *v = cells_of(s, which);
    for (int y = 0; y < s->cells_y; y++)
        for (int x = 0; x < s->cells_x; x++) {
            char col[16];
            heat_color(v[y * s->cells_x + x], hi, col, sizeof col);
            hc_strbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", x * cs, y * cs, cs, cs, col);
        }
    hc_strbuf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/></svg>", cs * s->cells_x,
              cs * s->cells_y);
}

/* The map's own scale, in the tables' units: "linear, 0 to 0.012c". */
static void heat_scale(hc_strbuf *b, int which, double hi)
{
    char buf[64];
    hc_metric_format(cells_metric(which), hi, buf, sizeof buf);
    hc_strbuf_printf(b, "<svg class=\"scale\" width=\"150\" height=\"26\"><title>linear colour scale from 0 to %s</title>", buf);
    for (int k = 0; k < 13; k++) {
        char col[16];
        heat_color(hi * (k + 0.5) / 13.0, hi, col, sizeof col);
        hc_strbuf_printf(b, "<rect x=\"%d\" y=\"0\" width=\"10\" height=\"12\" fill=\"%s\"/>", 5 + k * 10, col);
    }
    hc_strbuf_printf(b, "<text x=\"5\" y=\"24\" class=\"ax\">0</text><text x=\"135\" y=\"24\" class=\"ax\" "
                 "text-anchor=\"end\">%s</text></svg>",
              hi > 0 ? buf : "0 (all zero)");
}

static void heat_maps(hc_strbuf *b, const hc_results *rs, const char *net)
{
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r0 = &rs->items[i];
        int first = strcmp(r0->net, net) == 0;
        for (size_t j = 0; first && j < i; j++)
            first = !(strcmp(rs->items[j].net, net) == 0 && strcmp(rs->items[j].board, r0->board) == 0);
        if (!first)
            continue;
        int n = 0;
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            n += !strcmp(r->net, net) && !strcmp(r->board, r0->board) && r->stats && r->stats->cells_x;
        }
        if (!n)
            continue;
        hc_strbuf_printf(b, "<h4>Board ");
        sb_esc(b, r0->board);
        hc_strbuf_printf(b, ": mean error per point (each map on its own linear colour scale, from 0 to its largest value, "
                     "stated under it: compare shapes across maps, values by their scales)</h4>\n"
                     "<div class=wide><table class=heat><tr><th></th>");
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            if (strcmp(r->net, net) || strcmp(r->board, r0->board) || !r->stats || !r->stats->cells_x)
                continue;
            hc_strbuf_printf(b, "<th>");
            sb_esc(b, r->backend);
            hc_strbuf_printf(b, "<br>");
            sb_esc(b, r->mode);
            hc_strbuf_printf(b, "</th>");
        }
        hc_strbuf_printf(b, "</tr>\n");
        for (int w = 0; w < 2; w++) {
            hc_strbuf_printf(b, "<tr><td>%s</td>", w ? "policy prob |d| (%)" : "ownership |d| (c)");
            for (size_t j = i; j < rs->n; j++) {
                const hc_result *r = &rs->items[j];
                if (strcmp(r->net, net) || strcmp(r->board, r0->board) || !r->stats || !r->stats->cells_x)
                    continue;
                double hi = map_max(r->stats, w);
                hc_strbuf_printf(b, "<td>");
                heat_map(b, r->stats, w, hi);
                hc_strbuf_printf(b, "<br>");
                heat_scale(b, w, hi);
                hc_strbuf_printf(b, "</td>");
            }
            hc_strbuf_printf(b, "</tr>\n");
        }
        hc_strbuf_printf(b, "</table></div>\n");
    }
}

/* ---- the positions a result shows, as Go boards ---- */

/* A point in Go notation: columns A-T without I, rows counted from the bottom. */
static void point_name(int x, int y, int ys, char *buf, size_t len)
{
    if (x < 0) {
        snprintf(buf, len, "pass");
        return;
    }
    snprintf(buf, len, "%c%d", "ABCDEFGHJKLMNOPQRST"[x < 19 ? x : 18], ys - y);
}

/* Blue (the backend gives White more) to red (less), linear over +-hi. */
static void diff_color(double v, double hi, char *buf, size_t len)
{
    double t = hi > 0 && isfinite(v) ? v / hi : 0;
    t = t > 1 ? 1 : t < -1 ? -1 : t;
    int c = (int)(255 - 200 * fabs(t));
    if (t >= 0)
        snprintf(buf, len, "#%02x%02xff", c, c);
    else
        snprintf(buf, len, "#ff%02x%02x", c, c);
}

enum { BC = 24, BM = 20 }; /* board cell size and margin (coordinates) */

static void board_svg(hc_strbuf *b, const hc_shown_pos *sp)
{
    int xs = sp->x_size, ys = sp->y_size;
    int W = 2 * BM + BC * xs, H = 2 * BM + BC * ys;
    double hi = 0;
    for (int i = 0; sp->has_own && i < xs * ys; i++)
        hi = isfinite(sp->own_diff[i]) && fabs(sp->own_diff[i]) > hi ? fabs(sp->own_diff[i]) : hi;
    hc_strbuf_printf(b, "<svg class=\"board\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><title>position %ld</title>", W, H,
              W, H, sp->index);
    hc_strbuf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#e3c16f\"/>", W, H);
#define PX(x) (BM + BC * (x) + BC / 2)
    /* the ownership difference under the grid, one square per point */
    for (int y = 0; sp->has_own && hi > 0 && y < ys; y++)
        for (int x = 0; x < xs; x++) {
            char col[16];
            diff_color(sp->own_diff[y * xs + x], hi, col, sizeof col);
            hc_strbuf_printf(b, "<rect class=\"own\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" opacity=\"0.8\"/>",
                      BM + BC * x, BM + BC * y, BC, BC, col);
        }
    for (int x = 0; x < xs; x++) {
        char nm[8];
        point_name(x, 0, ys, nm, sizeof nm);
        nm[1] = '\0';
        hc_strbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\" stroke-width=\"0.7\"/>", PX(x), PX(0),
                  PX(x), PX(ys - 1));
        hc_strbuf_printf(b, "<text class=\"coord\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>", PX(x), BM - 6, nm);
    }
    for (int y = 0; y < ys; y++) {
        hc_strbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\" stroke-width=\"0.7\"/>", PX(0), PX(y),
                  PX(xs - 1), PX(y));
        hc_strbuf_printf(b, "<text class=\"coord\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>", BM / 2, PX(y) + 3,
                  ys - y);
    }
    for (int y = 0; y < ys; y++)
        for (int x = 0; x < xs; x++) {
            char c = sp->stones[y * xs + x];
            if (c == 'X' || c == 'O')
                hc_strbuf_printf(b, "<circle class=\"stone %s\" cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\" stroke=\"#000\" "
                             "stroke-width=\"0.8\"/>",
                          c == 'X' ? "black" : "white", PX(x), PX(y), BC / 2 - 1, c == 'X' ? "#111" : "#fafafa");
        }
    if (sp->last_pla && sp->last_x >= 0)
        hc_strbuf_printf(b, "<circle class=\"last\" cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>",
                  PX(sp->last_x), PX(sp->last_y), BC / 4, sp->last_pla == 1 ? "#fff" : "#000");
    if (sp->cell >= 0)
        hc_strbuf_printf(b, "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#d62728\" "
                     "stroke-width=\"2\"/>",
                  BM + BC * (sp->cell % xs), BM + BC * (sp->cell / xs), BC, BC);
    /* top moves: the reference's as blue numbers on the upper left, the backend's orange on
     * the lower right of the point */
    for (int k = 0; k < sp->n_top; k++) {
        const hc_shown_move *m[2] = {&sp->ref_top[k], &sp->test_top[k]};
        for (int w = 0; w < 2; w++) {
            if (m[w]->x < 0)
                continue;
            hc_strbuf_printf(b, "<text class=\"top %s\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\" "
                         "font-weight=\"bold\">%d</text>",
                      w ? "test" : "ref", PX(m[w]->x) + (w ? 5 : -5), PX(m[w]->y) + (w ? 9 : -2),
                      w ? "#e8590c" : "#1864ab", k + 1);
        }
    }
#undef PX
    hc_strbuf_printf(b, "</svg>");
}

static void top_list(hc_strbuf *b, const hc_shown_move *m, int n, int ys)
{
    for (int k = 0; k < n; k++) {
        char nm[16];
        point_name(m[k].x, m[k].y, ys, nm, sizeof nm);
        hc_strbuf_printf(b, "%s%d. %s %.1f%%", k ? ", " : "", k + 1, nm, 100 * m[k].prob);
    }
}

static void shown_position(hc_strbuf *b, const hc_result *r, const hc_shown_pos *sp)
{
    char buf[64], nm[16];
    hc_strbuf_printf(b, "<figure class=\"pos\">");
    board_svg(b, sp);
    hc_strbuf_printf(b, "<figcaption><b>");
    if (sp->pct == HC_P_MAX)
        hc_strbuf_printf(b, "Worst position for %s", hc_metric_infos[sp->metric].name);
    else
        hc_strbuf_printf(b, "Position at the failing %s of %s", hc_pct_names[sp->pct], hc_metric_infos[sp->metric].name);
    hc_strbuf_printf(b, "</b>: position %ld", sp->index);
    if (sp->file_line > 0)
        hc_strbuf_printf(b, " (line %ld of the positions file)", sp->file_line);
    hc_strbuf_printf(b, ", error %s", hc_metric_format(sp->metric, sp->error, buf, sizeof buf));
    if (sp->cell >= 0) {
        point_name(sp->cell % sp->x_size, sp->cell / sp->x_size, sp->y_size, nm, sizeof nm);
        hc_strbuf_printf(b, " at %s (red square)", nm);
    }
    hc_strbuf_printf(b, ".<br>%dx%d, rules <code>", sp->x_size, sp->y_size);
    sb_esc(b, sp->rules);
    hc_strbuf_printf(b, "</code>, komi %g, symmetry %d, %s to play", sp->komi, sp->symmetry, sp->next_pla == 1 ? "Black" : "White");
    if (sp->last_pla) {
        point_name(sp->last_x, sp->last_y, sp->y_size, nm, sizeof nm);
        hc_strbuf_printf(b, ", last move %s %s (ringed)", sp->last_pla == 1 ? "Black" : "White", nm);
    }
    hc_strbuf_printf(b, ".<br><span class=\"ref\">Reference top moves</span>: ");
    top_list(b, sp->ref_top, sp->n_top, sp->y_size);
    hc_strbuf_printf(b, "<br><span class=\"test\">Backend ");
    sb_esc(b, r->backend);
    hc_strbuf_printf(b, " top moves</span>: ");
    top_list(b, sp->test_top, sp->n_top, sp->y_size);
    if (sp->has_own) {
        double hi = 0;
        for (int i = 0; i < sp->x_size * sp->y_size; i++)
            hi = isfinite(sp->own_diff[i]) && fabs(sp->own_diff[i]) > hi ? fabs(sp->own_diff[i]) : hi;
        hc_strbuf_printf(b, "<br>Ownership difference (backend minus reference, White's ownership), linear colour scale: "
                     "blue +%s, white 0, red -%s",
                  hc_metric_format(HC_M_OWNERSHIP, hi, buf, sizeof buf), buf);
    }
    hc_strbuf_printf(b, ".<br>Rerun the case: <code class=\"rerun-case\">");
    sb_esc(b, sp->rerun_case);
    hc_strbuf_printf(b, "</code>");
    if (sp->rerun_position[0]) {
        hc_strbuf_printf(b, "<br>Evaluate this position alone: <code class=\"rerun-pos\">");
        sb_esc(b, sp->rerun_position);
        hc_strbuf_printf(b, "</code> (<code>--backend ref32</code> for the reference)");
    }
    hc_strbuf_printf(b, "</figcaption></figure>\n");
}

static void shown_positions(hc_strbuf *b, const hc_results *rs, const char *net)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++)
        any |= strcmp(rs->items[i].net, net) == 0 && rs->items[i].n_shown > 0;
    if (!any)
        return;
    hc_strbuf_printf(b, "<h3>Positions</h3>\n<p>Each result's worst position (for the metric that failed first, or else the "
                 "closest to its limit) and, for a failing 90%% or 99%%, the position holding that sample. Numbers on "
                 "the board: the reference's top moves (blue, upper left) and the backend's (orange, lower right).</p>\n");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0 || r->n_shown == 0)
            continue;
        hc_strbuf_printf(b, "<h4>");
        result_label(b, r);
        hc_strbuf_printf(b, "</h4>\n<div class=boards>\n");
        for (size_t k = 0; k < r->n_shown; k++)
            shown_position(b, r, &r->shown[k]);
        hc_strbuf_printf(b, "</div>\n");
    }
}

/* A failing case's taps (a suite backend's `taps: on-failure`): each layer's max relative error
 * against ref32 (log scale, in the model's forward order) beside what its inputs, storage and
 * format explain, so the growth through the net and the first layer that departs are visible. */
static void taps_plot(hc_strbuf *b, const hc_result *r)
{
    const hc_result_taps *t = r->taps;
    hc_strbuf_printf(b, "<figure class=taps><figcaption><b>");
    result_label(b, r);
    hc_strbuf_printf(b, "</b>: ");
    if (t->error) {
        hc_strbuf_printf(b, "no layers compared: ");
        sb_esc(b, t->error);
        hc_strbuf_printf(b, "</figcaption></figure>\n");
        return;
    }
    hc_strbuf_printf(b, "per-layer error against ref32 over %zu position%s; ", t->n_positions, t->n_positions == 1 ? "" : "s");
    if (t->first) {
        hc_strbuf_printf(b, "first divergent layer <b class=tapfirst>");
        sb_esc(b, t->first);
        hc_strbuf_printf(b, "</b>");
    } else {
        hc_strbuf_printf(b, "no divergent layer");
    }
    hc_strbuf_printf(b, " (docs/TAPS.md)</figcaption>\n");
    size_t n = t->n_layers;
    if (n == 0) {
        hc_strbuf_printf(b, "</figure>\n");
        return;
    }
    /* log10 of the relative error, from 1e-8 (and 0) up to the largest value seen */
    double lo = -8, hi = -1;
    for (size_t i = 0; i < n; i++) {
        const hc_result_taplayer *l = &t->layers[i];
        double m = l->max_rel > l->explained ? l->max_rel : l->explained;
        if (l->compared && m > 0 && log10(m) > hi)
            hi = ceil(log10(m));
    }
    const int W = 1000, H = 260, L = 60, R = 10, T = 10, B = 80;
    double dx = n > 1 ? (double)(W - L - R) / (double)(n - 1) : 0;
    hc_strbuf_printf(b, "<svg width=%d height=%d viewBox=\"0 0 %d %d\" role=img>", W, H, W, H);
    for (double e = lo; e <= hi + 1e-9; e += 1) {
        double y = T + (hi - e) / (hi - lo) * (H - T - B);
        hc_strbuf_printf(b, "<line x1=%d x2=%d y1=%.1f y2=%.1f stroke=\"#ddd\"/><text x=%d y=%.1f font-size=10 "
                     "text-anchor=end>1e%d</text>", L, W - R, y, y, L - 4, y + 3, (int)e);
    }
    for (int series = 0; series < 2; series++) {
        hc_strbuf_printf(b, "<polyline fill=none stroke=\"%s\" stroke-width=1.5%s points=\"", series ? "#999" : "#d62728",
                  series ? " stroke-dasharray=\"4 3\"" : "");
        for (size_t i = 0; i < n; i++) {
            const hc_result_taplayer *l = &t->layers[i];
            if (!l->compared)
                continue;
            double v = series ? l->explained : l->max_rel;
            double e = v > 0 ? log10(v) : lo;
            e = e < lo ? lo : e > hi ? hi : e;
            hc_strbuf_printf(b, "%.1f,%.1f ", L + dx * (double)i, T + (hi - e) / (hi - lo) * (H - T - B));
        }
        hc_strbuf_printf(b, "\"/>");
    }
    for (size_t i = 0; i < n; i++) {
        const hc_result_taplayer *l = &t->layers[i];
        int first = t->first && strcmp(l->name, t->first) == 0;
        if (!first && !(n <= 30 || i % (n / 30 + 1) == 0))
            continue;
        hc_strbuf_printf(b, "<text x=%.1f y=%d font-size=9 transform=\"rotate(35 %.1f %d)\"%s>", L + dx * (double)i, H - B + 12,
                  L + dx * (double)i, H - B + 12, first ? " fill=\"#d62728\" font-weight=bold" : "");
        sb_esc(b, l->name);
        hc_strbuf_printf(b, "</text>");
    }
    hc_strbuf_printf(b, "</svg>\n<div class=note>Solid red: each layer's max relative error (max|a-b| / max|a|, log "
                 "scale); dashed grey: what its inputs' error, its storage and its format explain. Layers absent in "
                 "the backend or of another shape are left out.</div></figure>\n");
}

static void taps_section(hc_strbuf *b, const hc_results *rs, const char *net)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++)
        any |= strcmp(rs->items[i].net, net) == 0 && rs->items[i].taps != NULL;
    if (!any)
        return;
    hc_strbuf_printf(b, "<h3>Per-layer errors of the failing cases</h3>\n");
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->items[i].net, net) == 0 && rs->items[i].taps)
            taps_plot(b, &rs->items[i]);
}

/* What each external engine cost (peak RSS, positions/s, rows per batch), one line per case. */
static void engine_costs(hc_strbuf *b, const hc_results *rs, const char *net)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        char line[512];
        if (strcmp(r->net, net) != 0 || hc_engine_text(r, line, sizeof line) <= 0)
            continue;
        if (!any++)
            hc_strbuf_printf(b, "<h3>Engine cost</h3>\n<ul>\n");
        hc_strbuf_printf(b, "<li>");
        sb_esc(b, r->board);
        hc_strbuf_printf(b, " · ");
        sb_esc(b, r->backend);
        hc_strbuf_printf(b, " · ");
        sb_esc(b, r->mode);
        hc_strbuf_printf(b, ": ");
        sb_esc(b, line);
        hc_strbuf_printf(b, "</li>\n");
    }
    if (any)
        hc_strbuf_printf(b, "</ul>\n");
}

static void net_section(hc_strbuf *b, const hc_results *rs, const char *net)
{
    hc_strbuf_printf(b, "<h2 id=\"net-");
    sb_esc(b, net);
    hc_strbuf_printf(b, "\">Net ");
    sb_esc(b, net);
    int mv = 0;
    for (size_t i = 0; i < rs->n && !mv; i++)
        if (strcmp(rs->items[i].net, net) == 0)
            mv = rs->items[i].model_version;
    if (mv > 0)
        hc_strbuf_printf(b, " (model version %d)", mv);
    hc_strbuf_printf(b, "</h2>\n<div class=wide><table><tr><th>board</th><th>NN buffer / settings</th><th>backend</th><th>mode</th><th>positions</th>"
                 "<th>tiers</th><th>closest to its limit</th>");
    for (int h = 0; h < N_HEADLINE; h++)
        hc_strbuf_printf(b, "<th>%s avg</th><th>90%%</th><th>99%%</th><th>max</th>", hc_metric_infos[headline[h]].name);
    hc_strbuf_printf(b, "</tr>\n");
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (strcmp(r->net, net) != 0)
            continue;
        hc_strbuf_printf(b, "<tr class=%s><td>", verdict_class(r));
        sb_esc(b, r->board);
        if (r->nn_x_len > 0)
            hc_strbuf_printf(b, "</td><td>%dx%d, batch %d, optimism %g, pda %g, temp %g</td><td>", r->nn_x_len, r->nn_y_len,
                      r->max_batch_size, r->policy_optimism, r->pda, r->policy_temperature);
        else
            hc_strbuf_printf(b, "</td><td>-</td><td>");
        sb_esc(b, r->backend);
        hc_strbuf_printf(b, "</td><td>");
        sb_esc(b, r->mode);
        hc_strbuf_printf(b, "</td>");
        if (r->stats && r->n_skipped > 0)
            hc_strbuf_printf(b, "<td class=num>%zu (%zu skipped)</td>", r->stats->n_positions, r->n_skipped);
        else if (r->stats)
            hc_strbuf_printf(b, "<td class=num>%zu</td>", r->stats->n_positions);
        else
            hc_strbuf_printf(b, "<td>-</td>");
        tiers_cell(b, r);
        if (r->outcome != HC_OUT_CHECKED || hc_result_is_error(r)) {
            char buf[300];
            hc_strbuf_printf(b, "<td colspan=%d>%s: ", 1 + 4 * N_HEADLINE, r->outcome == HC_OUT_SKIPPED ? "skipped" : "error");
            sb_esc(b, r->message ? r->message : hc_result_nonfinite_text(r, buf, sizeof buf));
            hc_strbuf_printf(b, "</td></tr>\n");
            continue;
        }
        closest_cell(b, r);
        for (int h = 0; h < N_HEADLINE; h++)
            for (int p = 0; p < HC_P_COUNT; p++)
                fig(b, headline[h], r->stats->m[headline[h]].v[p]);
        hc_strbuf_printf(b, "</tr>\n");
        if (r->n_diag > 0) { /* whose outputs a failing case's are (metrics/diagnose.h) */
            char *text = hc_diag_text(r->diag, r->n_diag, 8);
            hc_strbuf_printf(b, "<tr class=%s><td colspan=%d class=diagnosis>", verdict_class(r), 7 + 4 * N_HEADLINE);
            sb_esc(b, text ? text : "");
            hc_strbuf_printf(b, "</td></tr>\n");
            free(text);
        }
    }
    hc_strbuf_printf(b, "</table></div>\n");
    engine_costs(b, rs, net);
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->items[i].net, net) == 0 && rs->items[i].stats)
            full_table(b, &rs->items[i]);
    hc_strbuf_printf(b, "<h3>Error distributions</h3>\n");
    legend(b, rs, net);
    hc_strbuf_printf(b, "<div class=plots>\n");
    for (int m = 0; m < HC_M_COUNT; m++)
        cdf_plot(b, rs, net, m);
    hc_strbuf_printf(b, "</div>\n<h3>Errors per board point</h3>\n");
    heat_maps(b, rs, net);
    shown_positions(b, rs, net);
    taps_section(b, rs, net);
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
static void skip_reasons(hc_strbuf *b, const hc_results *rs, size_t i)
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
        hc_strbuf_printf(b, "%s", sep);
        sb_esc(b, why);
        sep = "; ";
    }
}

static void summary(hc_strbuf *b, const hc_results *rs)
{
    hc_strbuf_printf(b, "<h2>Summary across nets</h2>\n<table><tr><th>net</th><th>model version</th><th>backend</th><th>results</th><th>verdict</th>"
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
            pass += hc_result_passed(r);
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
        hc_strbuf_printf(b, "<tr class=%s><td><a href=\"#net-", cls);
        sb_esc(b, r0->net);
        hc_strbuf_printf(b, "\">");
        sb_esc(b, r0->net);
        hc_strbuf_printf(b, "</a></td>");
        if (r0->model_version > 0)
            hc_strbuf_printf(b, "<td class=num>%d</td><td>", r0->model_version);
        else
            hc_strbuf_printf(b, "<td>-</td><td>");
        sb_esc(b, r0->backend);
        hc_strbuf_printf(b, "</td><td class=num>%d</td><td>%s", n,
                  err ? "error" : ran == 0 ? "skipped" : pass == ran ? "all tiers pass" : "a tier fails");
        if (ran == 0)
            skip_reasons(b, rs, i);
        else if (skip > 0)
            hc_strbuf_printf(b, "; %d of %d skipped", skip, n);
        hc_strbuf_printf(b, "</td>");
        char buf[64];
        hc_strbuf_printf(b, "<td class=num>%s</td>", nan99 ? "non-finite" : p99 < 0 ? "-" : hc_metric_format(HC_M_WINRATE, p99, buf, sizeof buf));
        hc_strbuf_printf(b, "<td class=num>%s</td></tr>\n", nanmx ? "non-finite" : mx < 0 ? "-" : hc_metric_format(HC_M_WINRATE, mx, buf, sizeof buf));
    }
    hc_strbuf_printf(b, "</table>\n");
}

/* What produced the figures (results.h: hc_provenance), one list per job of a merge. */
static void provenance_section(hc_strbuf *b, const hc_results *rs)
{
    if (rs->n_prov == 0)
        return;
    hc_strbuf_printf(b, "<h2 id=\"provenance\">Provenance</h2>\n");
    for (size_t k = 0; k < rs->n_prov; k++) {
        const hc_provenance *p = &rs->prov[k];
        if (p->job) {
            hc_strbuf_printf(b, "<h3>job <code>");
            sb_esc(b, p->job);
            hc_strbuf_printf(b, "</code></h3>\n");
        }
        hc_strbuf_printf(b, "<ul class=\"provenance\">\n");
        if (p->host) {
            hc_strbuf_printf(b, "<li>host <code>");
            sb_esc(b, p->host);
            hc_strbuf_printf(b, "</code>, device <code>");
            sb_esc(b, p->device ? p->device : "?");
            hc_strbuf_printf(b, "</code></li>\n");
        }
        hc_strbuf_printf(b, "<li>halfcheck ");
        sb_esc(b, p->halfcheck ? p->halfcheck : "?");
        hc_strbuf_printf(b, " (engine %d; kernels: ", p->engine_version);
        sb_esc(b, p->kernels ? p->kernels : "?");
        hc_strbuf_printf(b, "; cuda backend %s)</li>\n", p->cuda ? "built in" : "not built in");
        if (p->command) {
            hc_strbuf_printf(b, "<li>command: <code>");
            sb_esc(b, p->command);
            hc_strbuf_printf(b, "</code></li>\n");
        }
        for (size_t i = 0; i < p->n_nets; i++) {
            hc_strbuf_printf(b, "<li>net ");
            sb_esc(b, p->nets[i].name ? p->nets[i].name : "");
            hc_strbuf_printf(b, ": <code>");
            sb_esc(b, p->nets[i].file ? p->nets[i].file : "");
            hc_strbuf_printf(b, "</code>, model version %d, sha256 <code>", p->nets[i].model_version);
            sb_esc(b, p->nets[i].sha256 ? p->nets[i].sha256 : "?");
            hc_strbuf_printf(b, "</code></li>\n");
        }
        for (size_t i = 0; i < p->n_backends; i++) {
            if (!p->backends[i].engine)
                continue;
            hc_strbuf_printf(b, "<li>backend ");
            sb_esc(b, p->backends[i].name ? p->backends[i].name : "");
            hc_strbuf_printf(b, ": engine ");
            sb_esc(b, p->backends[i].engine);
            hc_strbuf_printf(b, "</li>\n");
        }
        hc_strbuf_printf(b, "</ul>\n");
    }
}

int hc_html_write(const hc_results *rs, const char *path, hc_err *err)
{
    hc_strbuf b = HC_STRBUF_INIT;
    size_t pass = 0, fail = 0, errors = 0, skipped = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (r->outcome == HC_OUT_SKIPPED)
            skipped++;
        else if (hc_result_is_error(r))
            errors++;
        else
            hc_result_passed(r) ? pass++ : fail++;
    }
    hc_strbuf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>halfcheck: ");
    sb_esc(&b, rs->suite ? rs->suite : "run");
    hc_strbuf_printf(&b, "</title>\n<style>\n"
                  "body{font:13px/1.4 sans-serif;margin:1.5em;color:#222}\n"
                  "table{border-collapse:collapse;margin:.5em 0}\n"
                  "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}\n"
                  "th{background:#f3f3f3}\n"
                  "td.num{text-align:right;font-family:monospace}\n"
                  "tr.pass td:first-child{border-left:4px solid #2ca02c}\n"
                  "tr.fail td:first-child{border-left:4px solid #d62728}\n"
                  "tr.systematic td{color:#d62728;font-weight:bold}\n"
                  "tr.err td:first-child{border-left:4px solid #000}\n"
                  "tr.skip td:first-child{border-left:4px solid #bbb} tr.skip td{color:#666}\n"
                  "span.pass{color:#2ca02c} span.fail{color:#d62728;font-weight:bold} span.skip{color:#888}\n"
                  ".plots{display:flex;flex-wrap:wrap;gap:8px} figure{margin:0}\n"
                  "svg text{font:10px sans-serif} svg text.pt{font:bold 11px sans-serif} svg text.lim{fill:#555;font-size:9px}\n"
                  ".legend span{margin-right:1em;white-space:nowrap}\n"
                  "table.heat td{vertical-align:middle}\n"
                  "body{max-width:1200px}\n"
                  "div.wide{max-width:100%%;overflow-x:auto}\n"
                  ".boards{display:flex;flex-wrap:wrap;gap:16px} figure.pos{max-width:560px}\n"
                  "figure.pos code{word-break:break-all;font-size:11px} figure.empty{width:420px;border:1px dashed #ccc;padding:6px}\n"
                  "span.ref{color:#1864ab;font-weight:bold} span.test{color:#e8590c;font-weight:bold}\n"
                  "svg text.coord{font-size:9px;fill:#333} svg text.top{font-size:11px}\n"
                  "</style></head>\n<body>\n<h1>halfcheck: ");
    sb_esc(&b, rs->suite ? rs->suite : "run");
    hc_strbuf_printf(&b, "</h1>\n<p>");
    if (rs->timestamp) {
        hc_strbuf_printf(&b, "Run at ");
        sb_esc(&b, rs->timestamp);
        hc_strbuf_printf(&b, ", ");
    }
    if (rs->version) {
        hc_strbuf_printf(&b, "halfcheck ");
        sb_esc(&b, rs->version);
        hc_strbuf_printf(&b, ". ");
    }
    hc_strbuf_printf(&b, "%zu results: %zu passed, %zu failed, %zu errors, %zu skipped.</p>\n", rs->n, pass, fail, errors, skipped);
    if (rs->interrupted) {
        char *it = hc_results_interrupted_text(rs, "", "");
        hc_strbuf_printf(&b, "<p class=interrupted><b>Interrupted</b>: ");
        sb_esc(&b, it ? it : "the run was stopped before every case ran.");
        hc_strbuf_printf(&b, "</p>\n");
        free(it);
    }
    summary(&b, rs);
    for (size_t i = 0; i < rs->n; i++)
        if (first_of(rs, i, 0))
            net_section(&b, rs, rs->items[i].net);
    provenance_section(&b, rs);
    hc_strbuf_printf(&b, "</body></html>\n");
    if (hc_strbuf_failed(&b)) {
        hc_strbuf_free(&b);
        return hc_err_set(err, HC_ENOMEM, "%s: out of memory building the page", path);
    }
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o) {
        hc_strbuf_free(&b);
        return -1;
    }
    int rc = hc_ostream_write(o, hc_strbuf_str(&b), hc_strbuf_len(&b), err);
    hc_strbuf_free(&b);
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
