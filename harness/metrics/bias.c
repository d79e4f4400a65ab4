/* Signed errors of the scalar outputs, their mean and standard error, and top-move agreement. */
#include "harness/metrics/bias.h"
#include "harness/metrics/stats.h"

#include <math.h>
#include <stdlib.h>

const char *const hc_bias_pct_names[HC_BP_COUNT] = {"p1", "p5", "p50", "p95", "p99"};
static const unsigned bias_pct_num[HC_BP_COUNT] = {1, 5, 50, 95, 99};

int hc_bias_metric_has(int metric)
{
    switch (metric) {
    case HC_M_WINRATE: case HC_M_LEAD: case HC_M_SCORE_MEAN: case HC_M_SCORE_STDEV:
    case HC_M_TOP_POLICY: case HC_M_ST_WINLOSS: case HC_M_ST_SCORE:
        return 1;
    default:
        return 0;
    }
}

int hc_policy_top(const hc_nnoutput *o)
{
    int size = o->nn_x_len * o->nn_y_len + 1, top = 0;
    double best = -1;
    for (int i = 0; i < size; i++)
        if ((double)o->policy_probs[i] > best) {
            top = i;
            best = o->policy_probs[i];
        }
    return top;
}

void hc_bias_position(const hc_nnoutput *ref, const hc_nnoutput *test, double out[])
{
    for (int m = 0; m < HC_M_COUNT; m++)
        out[m] = NAN;
    /* The float differences as stats.c takes them (float, then widened), signed. */
    float ref_wl = ref->white_win_prob - ref->white_loss_prob;
    float test_wl = test->white_win_prob - test->white_loss_prob;
    out[HC_M_WINRATE] = 0.5 * test_wl - 0.5 * ref_wl;
    out[HC_M_LEAD] = (double)(test->white_lead - ref->white_lead);
    out[HC_M_SCORE_MEAN] = (double)(test->white_score_mean - ref->white_score_mean);
    out[HC_M_SCORE_STDEV] = hc_stats_score_stdev(test) - hc_stats_score_stdev(ref);
    int top = hc_policy_top(ref);
    out[HC_M_TOP_POLICY] = (double)test->policy_probs[top] - (double)ref->policy_probs[top];
    out[HC_M_ST_WINLOSS] = (double)(test->shortterm_winloss_error - ref->shortterm_winloss_error);
    out[HC_M_ST_SCORE] = (double)(test->shortterm_score_error - ref->shortterm_score_error);
}

static int cmp_signed(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hc_bias_finish(double *vals, size_t n, double res, hc_bias_stats *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(vals[i]))
            vals[k++] = vals[i];
    n = k;
    out->n = n;
    out->mean = out->se = 0;
    out->systematic = 0;
    for (int p = 0; p < HC_BP_COUNT; p++)
        out->p[p] = 0;
    if (n == 0)
        return;
    qsort(vals, n, sizeof *vals, cmp_signed);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += vals[i];
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (vals[i] - mean) * (vals[i] - mean);
    out->mean = mean;
    out->se = n > 1 ? sqrt(ss / (double)(n - 1)) / sqrt((double)n) : 0;
    for (int p = 0; p < HC_BP_COUNT; p++)
        out->p[p] = vals[hc_stats_pct_index(n, bias_pct_num[p], 100)];
    /* Identical errors everywhere (se 0) with a non-zero mean are as systematic as it gets. */
    out->systematic = n >= HC_BIAS_MIN_SAMPLES && fabs(mean) > HC_BIAS_SIGMAS * out->se && fabs(mean) > res;
}

int hc_bias_compute(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const unsigned char *skip,
                    const double res[], hc_bias_stats bias[], hc_top_agree *top, hc_err *err)
{
    top->n = top->agree = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        bias[m] = (hc_bias_stats){0};
    double *vals = hc_malloc((n ? n : 1) * HC_M_COUNT * sizeof *vals, err, "signed error samples");
    if (!vals)
        return -1;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        double e[HC_M_COUNT];
        hc_bias_position(&ref[i], &test[i], e);
        for (int m = 0; m < HC_M_COUNT; m++)
            vals[(size_t)m * n + used] = e[m];
        used++;
        top->n++;
        top->agree += hc_policy_top(&ref[i]) == hc_policy_top(&test[i]);
    }
    for (int m = 0; m < HC_M_COUNT; m++)
        if (hc_bias_metric_has(m))
            hc_bias_finish(vals + (size_t)m * n, used, res[m], &bias[m]);
    free(vals);
    return 0;
}

double hc_top_agree_rate(const hc_top_agree *t)
{
    return t->n ? (double)t->agree / (double)t->n : NAN;
}
