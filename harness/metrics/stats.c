/* KataGo's backend error metrics (testgpuerror's GpuErrorStats) over pairs of outputs. */
#include "harness/metrics/stats.h"
#include "harness/base/hcmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const hc_metric_info hc_metric_infos[HC_M_COUNT] = {
    [HC_M_WINRATE] = {"winrateError", "winrate", 100.0, "%"},
    [HC_M_LEAD] = {"leadError", "lead", 1.0, ""},
    [HC_M_SCORE_MEAN] = {"scoreMeanError", "scoreMean", 1.0, ""},
    [HC_M_SCORE_STDEV] = {"scoreStdevError", "scoreStdev", 1.0, ""},
    [HC_M_TOP_POLICY] = {"topPolicyDelta", "topPolicy", 100.0, "%"},
    [HC_M_POLICY_KL] = {"policyKLDiv", "policyKL", 1.0, ""},
    [HC_M_ST_WINLOSS] = {"stWLErrorError", "stWinloss", 100.0, "c"},
    [HC_M_ST_SCORE] = {"stScErrorError", "stScore", 1.0, ""},
    [HC_M_OWNERSHIP] = {"ownershipError", "ownership", 100.0, "c"},
};

const char *const hc_pct_names[HC_P_COUNT] = {"avg", "p90", "p99", "max"};

int hc_metric_by_key(const char *key)
{
    if (!key)
        return -1;
    for (int m = 0; m < HC_M_COUNT; m++)
        if (strcmp(hc_metric_infos[m].key, key) == 0)
            return m;
    return -1;
}

int hc_metric_by_name(const char *name)
{
    if (!name) /* a missing JSON string, e.g. */
        return -1;
    for (int m = 0; m < HC_M_COUNT; m++)
        if (strcmp(hc_metric_infos[m].name, name) == 0)
            return m;
    return -1;
}

int hc_pct_by_name(const char *name)
{
    if (!name)
        return -1;
    for (int p = 0; p < HC_P_COUNT; p++)
        if (strcmp(hc_pct_names[p], name) == 0)
            return p;
    return -1;
}

size_t hc_stats_pct_index(size_t n, unsigned num, unsigned den)
{
    /* KataGo computes (size()-1)*9/10 in size_t; the product cannot overflow for any
     * realistic n, and we keep the same truncating integer arithmetic. */
    return (n - 1) * num / den;
}

double hc_stats_score_stdev(const hc_nnoutput *o)
{
    /* The square of the mean is a float product; the subtraction is in double. */
    float m2 = o->white_score_mean * o->white_score_mean;
    double var = (double)o->white_score_mean_sq - (double)m2;
    /* std::max(0.0, x) returns its first argument unless 0.0 < x: NaN becomes 0. */
    var = (0.0 < var) ? var : 0.0;
    return sqrt(var);
}

void hc_stats_position(const hc_nnoutput *ref, const hc_nnoutput *test, double out[HC_M_COUNT])
{
    /* Each float difference is rounded to float before widening, as C++ evaluates
     * std::abs(float - float); 0.5*(float) is a double product. */
    float ref_wl = ref->white_win_prob - ref->white_loss_prob;
    float test_wl = test->white_win_prob - test->white_loss_prob;
    float d_nr = fabsf(ref->white_no_result_prob - test->white_no_result_prob);
    out[HC_M_WINRATE] = fabs(0.5 * ref_wl - 0.5 * test_wl) + (double)d_nr;
    out[HC_M_LEAD] = (double)fabsf(ref->white_lead - test->white_lead);
    out[HC_M_SCORE_MEAN] = (double)fabsf(ref->white_score_mean - test->white_score_mean);

    out[HC_M_SCORE_STDEV] = fabs(hc_stats_score_stdev(ref) - hc_stats_score_stdev(test));

    int policy_size = ref->nn_x_len * ref->nn_y_len + 1;
    int top = 0;
    double top_prob = -1;
    for (int i = 0; i < policy_size; i++) {
        if ((double)ref->policy_probs[i] > top_prob) {
            top = i;
            top_prob = ref->policy_probs[i];
        }
    }
    out[HC_M_TOP_POLICY] = fabs(top_prob - (double)test->policy_probs[top]);

    double kl = 0;
    for (int i = 0; i < policy_size; i++) {
        double p = ref->policy_probs[i], q = test->policy_probs[i];
        /* A move the reference gives a probability that the test outputs mark illegal (-1)
         * makes the divergence infinite, as a probability of 0 does: KataGo's log(-1) would
         * make it NaN, which reads as a broken backend rather than outputs that disagree. */
        if (p > 1e-30)
            kl += q < 0 ? INFINITY : p * (hc_log(p) - hc_log(q));
    }
    out[HC_M_POLICY_KL] = kl;

    out[HC_M_ST_WINLOSS] = (double)fabsf(ref->shortterm_winloss_error - test->shortterm_winloss_error);
    out[HC_M_ST_SCORE] = (double)fabsf(ref->shortterm_score_error - test->shortterm_score_error);
    out[HC_M_OWNERSHIP] = 0;
}

static int nonfinite_scalar(const char *field, float v, hc_nonfinite *nf)
{
    if (isfinite(v))
        return 0;
    snprintf(nf->field, sizeof nf->field, "%s", field);
    nf->index = -1;
    nf->value = v;
    return 1;
}

static int nonfinite_array(const char *field, const float *a, int n, hc_nonfinite *nf)
{
    for (int i = 0; a && i < n; i++) {
        if (!isfinite(a[i])) {
            snprintf(nf->field, sizeof nf->field, "%s", field);
            nf->index = i;
            nf->value = a[i];
            return 1;
        }
    }
    return 0;
}

int hc_nnoutput_find_nonfinite(const hc_nnoutput *o, hc_nonfinite *nf)
{
    int cells = o->nn_x_len * o->nn_y_len;
    return nonfinite_scalar("whiteWinProb", o->white_win_prob, nf) ||
           nonfinite_scalar("whiteLossProb", o->white_loss_prob, nf) ||
           nonfinite_scalar("whiteNoResultProb", o->white_no_result_prob, nf) ||
           nonfinite_scalar("whiteScoreMean", o->white_score_mean, nf) ||
           nonfinite_scalar("whiteScoreMeanSq", o->white_score_mean_sq, nf) ||
           nonfinite_scalar("whiteLead", o->white_lead, nf) ||
           nonfinite_scalar("varTimeLeft", o->var_time_left, nf) ||
           nonfinite_scalar("shorttermWinlossError", o->shortterm_winloss_error, nf) ||
           nonfinite_scalar("shorttermScoreError", o->shortterm_score_error, nf) ||
           nonfinite_scalar("policyOptimismUsed", o->policy_optimism_used, nf) ||
           nonfinite_array("policyProbs", o->policy_probs, cells + 1, nf) ||
           nonfinite_array("whiteOwnerMap", o->white_owner_map, cells, nf);
}

/* 1 when o holds a non-finite value (recorded in acc). */
static int scan_nonfinite(const hc_nnoutput *o, size_t pos, hc_nonfinite *acc)
{
    hc_nonfinite nf;
    if (!hc_nnoutput_find_nonfinite(o, &nf))
        return 0;
    if (acc->count == 0) {
        nf.count = 0;
        nf.pos = pos;
        *acc = nf;
    }
    acc->count++;
    return 1;
}

/* NaN sorts after +inf so that every non-finite error lands at the top, where the max and
 * the high percentiles see it. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    int xn = isnan(x), yn = isnan(y);
    if (xn || yn)
        return xn - yn;
    return (x > y) - (x < y);
}

/* Per-metric accumulation before sorting. */
typedef struct acc {
    double *vals;
    size_t n;
    double max;
    size_t max_pos;
    int max_cell;
    int have_max;
} acc;

/* finite_outputs: both outputs of the position are finite, so an infinite error is a
 * disagreement (counted in ms->infinite, a failure and the max), not a broken backend. */
static void acc_push(acc *a, hc_metric_stats *ms, double v, size_t pos, int cell, int finite_outputs)
{
    a->vals[a->n++] = v;
    if (finite_outputs && isinf(v) && v > 0) {
        if (ms->infinite == 0)
            ms->first_infinite_pos = pos;
        ms->infinite++;
    }
    if (!isfinite(v) && !(finite_outputs && v > 0)) {
        if (ms->nonfinite == 0)
            ms->first_nonfinite_pos = pos;
        ms->nonfinite++;
        return;
    }
    if (!a->have_max || v > a->max) {
        a->have_max = 1;
        a->max = v;
        a->max_pos = pos;
        a->max_cell = cell;
    }
}

static void acc_finish(acc *a, hc_metric_stats *ms, int is_cells)
{
    qsort(a->vals, a->n, sizeof(double), cmp_double);
    double sum = 0;
    for (size_t i = 0; i < a->n; i++)
        sum += a->vals[i];
    ms->n = a->n;
    ms->v[HC_P_AVG] = sum / (double)a->n;
    ms->v[HC_P_90] = a->vals[hc_stats_pct_index(a->n, 9, 10)];
    ms->v[HC_P_99] = a->vals[hc_stats_pct_index(a->n, 99, 100)];
    ms->v[HC_P_MAX] = a->vals[a->n - 1];
    for (size_t k = 0; k < HC_STATS_NQ; k++)
        ms->q[k] = a->vals[(a->n - 1) * k / (HC_STATS_NQ - 1)];
    if (ms->nonfinite) {
        ms->max_pos = ms->first_nonfinite_pos;
        ms->max_cell = -1;
    } else {
        ms->max_pos = a->max_pos;
        ms->max_cell = is_cells ? a->max_cell : -1;
    }
}

/* The rounding allowance of one value read with resolution r: r, plus half a float ulp for its
 * conversion to float. */
static double round_err(double r, float v)
{
    if (!(r > 0))
        return 0;
    float a = fabsf(v);
    if (!isfinite(a))
        return r;
    return r + 0.5 * ((double)nextafterf(a, INFINITY) - (double)a);
}

void hc_stats_position_resolution(const hc_nnoutput *ref, const hc_nnoutput *test, const hc_resolution *r,
                                  double out[HC_M_COUNT])
{
    for (int m = 0; m < HC_M_COUNT; m++)
        out[m] = 0;
    if (!r || (r->winrate <= 0 && r->score <= 0 && r->policy <= 0 && r->ownership <= 0))
        return;
    out[HC_M_WINRATE] = 0.5 * (round_err(r->winrate, test->white_win_prob) + round_err(r->winrate, test->white_loss_prob)) +
                        round_err(r->winrate, test->white_no_result_prob);
    out[HC_M_LEAD] = round_err(r->score, test->white_lead);
    out[HC_M_SCORE_MEAN] = round_err(r->score, test->white_score_mean);
    double em = round_err(r->score, test->white_score_mean);
    double dv = round_err(r->score, test->white_score_mean_sq) + (2.0 * fabs((double)test->white_score_mean) + em) * em;
    double var = (double)test->white_score_mean_sq - (double)test->white_score_mean * (double)test->white_score_mean;
    double bound = sqrt(dv);
    if (var > 0 && dv / sqrt(var) < bound)
        bound = dv / sqrt(var);
    out[HC_M_SCORE_STDEV] = bound;
    int policy_size = ref->nn_x_len * ref->nn_y_len + 1;
    int top = 0;
    double top_prob = -1;
    for (int i = 0; i < policy_size; i++)
        if ((double)ref->policy_probs[i] > top_prob) {
            top = i;
            top_prob = ref->policy_probs[i];
        }
    out[HC_M_TOP_POLICY] = round_err(r->policy, test->policy_probs[top]);
    double kl = 0;
    for (int i = 0; i < policy_size; i++) {
        double p = ref->policy_probs[i], q = test->policy_probs[i];
        if (p > 1e-30 && q > 0 && isfinite(q))
            kl += p * hc_log1p(round_err(r->policy, (float)q) / q);
    }
    out[HC_M_POLICY_KL] = kl;
    out[HC_M_ST_WINLOSS] = round_err(r->score, test->shortterm_winloss_error);
    out[HC_M_ST_SCORE] = round_err(r->score, test->shortterm_score_error);
    double own = 0;
    if (test->white_owner_map)
        for (int c = 0; c < ref->nn_x_len * ref->nn_y_len; c++) {
            double e = round_err(r->ownership, test->white_owner_map[c]);
            own = e > own ? e : own;
        }
    out[HC_M_OWNERSHIP] = own;
}

int hc_stats_compute(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, hc_stats *out, hc_err *err)
{
    return hc_stats_compute_ex(ref, test, n, NULL, NULL, out, err);
}

int hc_stats_compute_ex(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const unsigned char *skip,
                        const hc_resolution *res, hc_stats *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        used += !(skip && skip[i]);
    if (used == 0)
        return hc_err_set(err, HC_EFORMAT, "no positions to compare");
    if (res)
        out->out_res = *res;
    size_t cells_total = 0;
    size_t first = 0;
    while (skip && skip[first])
        first++;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        if (ref[i].nn_x_len != test[i].nn_x_len || ref[i].nn_y_len != test[i].nn_y_len)
            return hc_err_set(err, HC_EFORMAT, "position %zu: NN buffer %dx%d in the reference, %dx%d in the test outputs",
                              i, ref[i].nn_x_len, ref[i].nn_y_len, test[i].nn_x_len, test[i].nn_y_len);
        if (ref[i].nn_x_len <= 0 || ref[i].nn_y_len <= 0 || !ref[i].policy_probs || !test[i].policy_probs)
            return hc_err_set(err, HC_EFORMAT, "position %zu: empty NN buffer or missing policy", i);
        if (!ref[i].white_owner_map || !test[i].white_owner_map)
            return hc_err_set(err, HC_EFORMAT, "position %zu: ownership missing from the %s outputs", i,
                              ref[i].white_owner_map ? "test" : "reference");
        cells_total += (size_t)ref[i].nn_x_len * (size_t)ref[i].nn_y_len;
    }

    acc a[HC_M_COUNT];
    memset(a, 0, sizeof a);
    int rc = -1;
    /* Per-point sums (in double) when the buffer is uniform. */
    int cx = ref[first].nn_x_len, cy = ref[first].nn_y_len;
    for (size_t i = first + 1; i < n; i++)
        if (!(skip && skip[i]) && (ref[i].nn_x_len != cx || ref[i].nn_y_len != cy))
            cx = cy = 0;
    if (cx * cy > HC_STATS_MAX_CELLS)
        cx = cy = 0;
    double own_sum[HC_STATS_MAX_CELLS] = {0}, pol_sum[HC_STATS_MAX_CELLS] = {0};
    size_t pol_n[HC_STATS_MAX_CELLS] = {0};
    for (int m = 0; m < HC_M_COUNT; m++) {
        size_t cap = m == HC_M_OWNERSHIP ? cells_total : used;
        a[m].vals = hc_malloc(cap * sizeof(double), err, "error samples");
        if (!a[m].vals)
            goto done;
    }

    out->n_positions = used;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        if (res) {
            double pr[HC_M_COUNT];
            hc_stats_position_resolution(&ref[i], &test[i], res, pr);
            for (int m = 0; m < HC_M_COUNT; m++)
                out->res[m] = pr[m] > out->res[m] ? pr[m] : out->res[m];
        }
        int bad_ref = scan_nonfinite(&ref[i], i, &out->ref_nonfinite);
        int bad_test = scan_nonfinite(&test[i], i, &out->test_nonfinite);
        double e[HC_M_COUNT];
        hc_stats_position(&ref[i], &test[i], e);
        for (int m = 0; m < HC_M_COUNT; m++)
            if (m != HC_M_OWNERSHIP)
                acc_push(&a[m], &out->m[m], e[m], i, -1, !bad_ref && !bad_test);
        int cells = ref[i].nn_x_len * ref[i].nn_y_len;
        for (int c = 0; c < cells; c++) {
            float d = fabsf(ref[i].white_owner_map[c] - test[i].white_owner_map[c]);
            acc_push(&a[HC_M_OWNERSHIP], &out->m[HC_M_OWNERSHIP], (double)d, i, c, 0);
            if (cx) {
                own_sum[c] += (double)d;
                float pr = ref[i].policy_probs[c], pt = test[i].policy_probs[c];
                if (pr >= 0 && pt >= 0) {
                    pol_sum[c] += (double)fabsf(pr - pt);
                    pol_n[c]++;
                }
            }
        }
    }
    out->cells_x = cx;
    out->cells_y = cy;
    for (int c = 0; c < cx * cy; c++) {
        out->own_cell[c] = (float)(own_sum[c] / (double)used);
        out->pol_cell[c] = pol_n[c] ? (float)(pol_sum[c] / (double)pol_n[c]) : 0.0f;
    }
    for (int m = 0; m < HC_M_COUNT; m++)
        acc_finish(&a[m], &out->m[m], m == HC_M_OWNERSHIP);
    if (hc_bias_compute(ref, test, n, skip, out->res, out->bias, &out->top_agree, err))
        goto done;
    rc = 0;
done:
    for (int m = 0; m < HC_M_COUNT; m++)
        free(a[m].vals);
    return rc;
}

int hc_stats_any_nonfinite(const hc_stats *s)
{
    if (s->ref_nonfinite.count || s->test_nonfinite.count)
        return 1;
    for (int m = 0; m < HC_M_COUNT; m++)
        if (s->m[m].nonfinite)
            return 1;
    return 0;
}
