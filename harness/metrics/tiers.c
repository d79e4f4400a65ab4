/* Tiers: per-metric, per-percentile limits, and checking an hc_stats against them. */
#include "harness/metrics/tiers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const hc_tier_builtin_names[] = {"fp32", "fp16", "fp32-strict", "exact", NULL};
const char *const hc_verdict_names[] = {"unset", "pass", "fail", "nonfinite"};

void hc_tier_init(hc_tier *t, const char *name)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
}

int hc_tier_set(hc_tier *t, int metric, int pct, double scale, double limit, hc_err *err)
{
    if (metric < 0 || metric >= HC_M_COUNT || pct < 0 || pct >= HC_P_COUNT)
        return hc_err_set(err, HC_EINTERNAL, "tier %s: metric %d or percentile %d out of range", t->name, metric, pct);
    if (!isfinite(limit) || limit < 0)
        return hc_err_set(err, HC_ECONFIG, "tier %s: %s %s limit must be a finite number >= 0", t->name,
                          hc_metric_infos[metric].key, hc_pct_names[pct]);
    if (!isfinite(scale) || scale <= 0)
        return hc_err_set(err, HC_ECONFIG, "tier %s: %s %s scale must be > 0", t->name, hc_metric_infos[metric].key,
                          hc_pct_names[pct]);
    t->set[metric][pct] = 1;
    t->scale[metric][pct] = scale;
    t->limit[metric][pct] = limit;
    return 0;
}

int hc_tier_set_bias(hc_tier *t, int metric, double scale, double limit, hc_err *err)
{
    if (metric < 0 || metric >= HC_M_COUNT || !hc_bias_metric_has(metric))
        return hc_err_set(err, HC_ECONFIG, "tier %s: maxBias: %s has no signed error", t->name,
                          metric >= 0 && metric < HC_M_COUNT ? hc_metric_infos[metric].key : "?");
    if (!isfinite(limit) || limit < 0)
        return hc_err_set(err, HC_ECONFIG, "tier %s: maxBias %s must be a finite number >= 0", t->name,
                          hc_metric_infos[metric].key);
    if (!isfinite(scale) || scale <= 0)
        return hc_err_set(err, HC_ECONFIG, "tier %s: maxBias %s scale must be > 0", t->name, hc_metric_infos[metric].key);
    t->bias_set[metric] = 1;
    t->bias_scale[metric] = scale;
    t->bias_limit[metric] = limit;
    return 0;
}

static void put(hc_tier *t, int m, int p, double scale, double limit)
{
    t->set[m][p] = 1;
    t->scale[m][p] = scale;
    t->limit[m][p] = limit;
}

/* The derived limits are computed in double exactly as KataGo writes them (score*0.6 etc.),
 * so a figure sitting at a derived limit gets KataGo's verdict. */
static void katago_pct(hc_tier *t, int p, double wr, double score, double tpd, double pkld, double own_mult)
{
    put(t, HC_M_WINRATE, p, 100, wr);
    put(t, HC_M_LEAD, p, 1, score);
    put(t, HC_M_SCORE_MEAN, p, 1, score);
    put(t, HC_M_SCORE_STDEV, p, 1, score * 0.6);
    put(t, HC_M_TOP_POLICY, p, 100, tpd);
    put(t, HC_M_POLICY_KL, p, 1, pkld);
    put(t, HC_M_ST_WINLOSS, p, 100, wr * 1.8);
    put(t, HC_M_ST_SCORE, p, 1, score * 0.75);
    put(t, HC_M_OWNERSHIP, p, 100, wr * own_mult);
}

void hc_tier_katago(hc_tier *t, const char *name, double wr99, double score99, double tpd99, double pkld99,
                    double wr_max, double score_max, double tpd_max, double pkld_max)
{
    hc_tier_init(t, name);
    katago_pct(t, HC_P_99, wr99, score99, tpd99, pkld99, 1.75);
    katago_pct(t, HC_P_MAX, wr_max, score_max, tpd_max, pkld_max, 4.0);
}

int hc_tier_is_exact(const hc_tier *t)
{
    int any = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        for (int p = 0; p < HC_P_COUNT; p++)
            if (t->set[m][p]) {
                if (t->limit[m][p] != 0)
                    return 0;
                any = 1;
            }
    return any;
}

int hc_tier_builtin(const char *name, hc_tier *t, hc_err *err)
{
    if (strcmp(name, "fp32") == 0) {
        hc_tier_katago(t, name, 0.45, 0.34, 0.45, 0.0006, 1.35, 0.900, 1.35, 0.0012);
        return 0;
    }
    if (strcmp(name, "fp16") == 0) {
        hc_tier_katago(t, name, 2.0, 1.00, 2.50, 0.0020, 5.0, 3.00, 6.00, 0.0040);
        return 0;
    }
    if (strcmp(name, "fp32-strict") == 0) {
        hc_tier_init(t, name);
        put(t, HC_M_WINRATE, HC_P_MAX, 1, 1e-4);
        put(t, HC_M_TOP_POLICY, HC_P_MAX, 1, 1e-4);
        put(t, HC_M_OWNERSHIP, HC_P_MAX, 1, 1e-3);
        put(t, HC_M_LEAD, HC_P_MAX, 1, 1e-2);
        put(t, HC_M_SCORE_MEAN, HC_P_MAX, 1, 1e-2);
        return 0;
    }
    if (strcmp(name, "exact") == 0) {
        /* Bit-identical outputs: every limit of every metric 0, for a backend that must give the
         * reference's outputs exactly (ref32 itself, batched or unbatched: batch invariance). */
        hc_tier_init(t, name);
        for (int m = 0; m < HC_M_COUNT; m++)
            for (int p = 0; p < HC_P_COUNT; p++)
                put(t, m, p, 1, 0.0);
        return 0;
    }
    return hc_err_set(err, HC_ECONFIG, "unknown tier \"%s\" (built-in tiers: fp32, fp16, fp32-strict, exact)", name);
}

/* The maxBias limits: a bias fails only where stats flagged it systematic (bias.h) and it
 * exceeds its limit, which, like every limit, allows the resolution on top. */
static void check_bias(const hc_tier *t, const hc_stats *s, hc_tier_check *out)
{
    out->first_bias_fail = -1;
    for (int m = 0; m < HC_M_COUNT; m++) {
        out->bias_verdict[m] = HC_V_UNSET;
        out->bias_ratio[m] = NAN;
        if (!t->bias_set[m])
            continue;
        out->n_checked++;
        const hc_bias_stats *b = &s->bias[m];
        double v = t->bias_scale[m] * fabs(b->mean);
        double lim = t->bias_limit[m] + t->bias_scale[m] * s->res[m];
        int verdict;
        if (!isfinite(v)) {
            verdict = HC_V_NONFINITE;
            out->nonfinite = 1;
        } else {
            out->bias_ratio[m] = lim > 0 ? v / lim : (v > 0 ? INFINITY : 0.0);
            verdict = b->systematic && v > lim ? HC_V_FAIL : HC_V_PASS;
        }
        out->bias_verdict[m] = verdict;
        if (verdict != HC_V_PASS) {
            out->n_failed++;
            if (out->first_bias_fail < 0)
                out->first_bias_fail = m;
        }
    }
}

void hc_tier_check_stats(const hc_tier *t, const hc_stats *s, hc_tier_check *out)
{
    memset(out, 0, sizeof *out);
    out->worst_all_metric = out->worst_all_pct = -1;
    out->worst_all_ratio = -1;
    out->first_fail_metric = out->first_fail_pct = -1;
    out->nonfinite = s->ref_nonfinite.count > 0 || s->test_nonfinite.count > 0;
    for (int p = 0; p < HC_P_COUNT; p++) {
        out->worst_metric[p] = -1;
        out->worst_ratio[p] = -1;
        for (int m = 0; m < HC_M_COUNT; m++) {
            out->ratio[m][p] = NAN;
            if (!t->set[m][p])
                continue;
            out->n_checked++;
            double v = t->scale[m][p] * s->m[m].v[p];
            /* The limit holds for the true outputs: rounding may add up to the metric's resolution. */
            double lim = t->limit[m][p] + t->scale[m][p] * s->res[m];
            int verdict;
            if (isinf(v) && v > 0 && s->m[m].infinite && !s->m[m].nonfinite) {
                /* Finite outputs that disagree without bound (stats.h, infinite): a failure. */
                verdict = HC_V_FAIL;
                out->ratio[m][p] = INFINITY;
            } else if (!isfinite(v)) {
                verdict = HC_V_NONFINITE;
                out->nonfinite = 1;
            } else {
                verdict = v <= lim ? HC_V_PASS : HC_V_FAIL;
                out->ratio[m][p] = lim > 0 ? v / lim : (v > 0 ? INFINITY : 0.0);
                if (out->ratio[m][p] > out->worst_ratio[p]) {
                    out->worst_ratio[p] = out->ratio[m][p];
                    out->worst_metric[p] = m;
                }
            }
            out->verdict[m][p] = verdict;
            if (verdict != HC_V_PASS) {
                out->n_failed++;
                if (out->first_fail_metric < 0) {
                    out->first_fail_metric = m;
                    out->first_fail_pct = p;
                }
            }
        }
        if (out->worst_metric[p] >= 0 && out->worst_ratio[p] > out->worst_all_ratio) {
            out->worst_all_ratio = out->worst_ratio[p];
            out->worst_all_metric = out->worst_metric[p];
            out->worst_all_pct = p;
        }
    }
    check_bias(t, s, out);
    out->pass = out->n_failed == 0 && !out->nonfinite;
}
