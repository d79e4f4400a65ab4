/* Stats: KataGo's nine errors on small handmade outputs (values worked out by hand), the
 * percentile index, aggregation (sorted-order average, max position and cell), non-finite
 * outputs and errors, and a golden check against a perturbed copy of a shared output file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/data/nnoutput.h"
#include "harness/metrics/stats.h"

static const float mk_pol[5] = {0.25f, 0.25f, 0.25f, -1.0f, 0.25f};

static void mk(hc_nnoutput *o)
{
    hc_test_out2x2(o, mk_pol);
}

static void unmk(hc_nnoutput *o, size_t n)
{
    hc_test_outs_free(o, n);
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void test_formulas(void)
{
    hc_nnoutput r, t;
    mk(&r);
    mk(&t);
    r.white_win_prob = 0.625f; r.white_loss_prob = 0.25f; r.white_no_result_prob = 0.125f;
    t.white_win_prob = 0.5f; t.white_loss_prob = 0.25f; t.white_no_result_prob = 0.25f;
    r.white_lead = 3.5f; t.white_lead = 2.25f;
    r.white_score_mean = 1.0f; r.white_score_mean_sq = 5.0f;   /* stdev 2 */
    t.white_score_mean = 2.0f; t.white_score_mean_sq = 13.0f;  /* stdev 3 */
    r.shortterm_winloss_error = 0.5f; t.shortterm_winloss_error = 0.75f;
    r.shortterm_score_error = 4.0f; t.shortterm_score_error = 1.5f;
    float rp[5] = {0.1f, 0.4f, 0.4f, -1.0f, 0.1f};
    float tp[5] = {0.2f, 0.3f, 0.45f, -1.0f, 0.05f};
    memcpy(r.policy_probs, rp, sizeof rp);
    memcpy(t.policy_probs, tp, sizeof tp);
    float ro[4] = {1.0f, -1.0f, 0.5f, 0.0f}, to[4] = {0.75f, -1.0f, 0.5f, 0.125f};
    memcpy(r.white_owner_map, ro, sizeof ro);
    memcpy(t.white_owner_map, to, sizeof to);

    double e[HC_M_COUNT];
    hc_stats_position(&r, &t, e);
    /* 0.5*(0.375) - 0.5*(0.25) = 0.0625; |0.125-0.25| = 0.125 (all exact in binary). */
    hc_check("stats-1.1", e[HC_M_WINRATE] == 0.1875, "winrate %.17g", e[HC_M_WINRATE]);
    hc_check("stats-1.2", e[HC_M_LEAD] == 1.25, "lead %.17g", e[HC_M_LEAD]);
    hc_check("stats-1.3", e[HC_M_SCORE_MEAN] == 1.0, "scoreMean %.17g", e[HC_M_SCORE_MEAN]);
    hc_check("stats-1.4", e[HC_M_SCORE_STDEV] == 1.0, "scoreStdev %.17g", e[HC_M_SCORE_STDEV]);
    /* Top move of the reference is index 1 (first of the 0.4 tie), where the test has 0.3. */
    hc_check("stats-1.5", near(e[HC_M_TOP_POLICY], 0.1, 1e-7), "topPolicy %.17g", e[HC_M_TOP_POLICY]);
    double kl = 0.1 * log(0.1 / 0.2) + 0.4 * log(0.4 / 0.3) + 0.4 * log(0.4 / 0.45) + 0.1 * log(0.1 / 0.05);
    hc_check("stats-1.6", near(e[HC_M_POLICY_KL], kl, 1e-6), "KL %.17g want %.17g", e[HC_M_POLICY_KL], kl);
    hc_check("stats-1.7", e[HC_M_ST_WINLOSS] == 0.25, "stWL %.17g", e[HC_M_ST_WINLOSS]);
    hc_check("stats-1.8", e[HC_M_ST_SCORE] == 2.5, "stScore %.17g", e[HC_M_ST_SCORE]);

    /* Negative variance is clamped to 0: stdev 0 against stdev 2. */
    t.white_score_mean = 3.0f; t.white_score_mean_sq = 1.0f;
    hc_stats_position(&r, &t, e);
    hc_check("stats-1.9", e[HC_M_SCORE_STDEV] == 2.0, "clamped stdev %.17g", e[HC_M_SCORE_STDEV]);

    /* KataGo squares the mean in float: 4097^2 = 16785409 rounds to 16785408 (ties to even),
     * so with meanSq 16785412 the variance is 4 (stdev 2), not 3 as exact arithmetic gives. */
    r.white_score_mean = 4097.0f; r.white_score_mean_sq = 16785412.0f;
    t.white_score_mean = 0.0f; t.white_score_mean_sq = 0.0f;
    hc_stats_position(&r, &t, e);
    hc_check("stats-1.10", e[HC_M_SCORE_STDEV] == 2.0, "float mean^2: stdev error %.17g (sqrt(3) means double)",
             e[HC_M_SCORE_STDEV]);

    /* KataGo subtracts win - loss in float before halving in double: 0.7f - 1e-8f rounds back
     * to 0.7f, so this pair has no winrate error (double arithmetic would give 5e-9). */
    r.white_win_prob = 0.7f; r.white_loss_prob = 1e-8f; r.white_no_result_prob = 0;
    t.white_win_prob = 0.7f; t.white_loss_prob = 0.0f; t.white_no_result_prob = 0;
    hc_stats_position(&r, &t, e);
    hc_check("stats-1.15", e[HC_M_WINRATE] == 0.0, "float win-loss: winrate error %.17g", e[HC_M_WINRATE]);

    /* A move legal in the reference but marked illegal (-1) in the test: the KL is +inf, as for
     * a probability of 0 (KataGo's log(-1) would make it NaN), never small. */
    float tp2[5] = {0.2f, -1.0f, 0.45f, -1.0f, 0.05f};
    memcpy(t.policy_probs, tp2, sizeof tp2);
    hc_stats_position(&r, &t, e);
    hc_check("stats-1.16", isinf(e[HC_M_POLICY_KL]) && e[HC_M_POLICY_KL] > 0, "KL with an illegal test move %.17g",
             e[HC_M_POLICY_KL]);
    memcpy(t.policy_probs, tp, sizeof tp);

    /* Ownership samples are per cell: errors 0.25, 0, 0, 0.125. */
    hc_nnoutput rs[1] = {r}, ts[1] = {t};
    hc_stats s;
    hc_err err = {0};
    int rc = hc_stats_compute(rs, ts, 1, &s, &err);
    hc_check("stats-1.11", rc == 0 && s.m[HC_M_OWNERSHIP].n == 4, "rc %d n %zu: %s", rc, s.m[HC_M_OWNERSHIP].n, err.msg);
    hc_check("stats-1.12", s.m[HC_M_OWNERSHIP].v[HC_P_MAX] == 0.25 && s.m[HC_M_OWNERSHIP].max_cell == 0 &&
             s.m[HC_M_OWNERSHIP].v[HC_P_AVG] == 0.375 / 4, "own max %g cell %d avg %g",
             s.m[HC_M_OWNERSHIP].v[HC_P_MAX], s.m[HC_M_OWNERSHIP].max_cell, s.m[HC_M_OWNERSHIP].v[HC_P_AVG]);
    /* Ownership p90 over 4 samples: index (3*9)/10 = 2 of {0,0,0.125,0.25}. */
    hc_check("stats-1.13", s.m[HC_M_OWNERSHIP].v[HC_P_90] == 0.125, "own p90 %g", s.m[HC_M_OWNERSHIP].v[HC_P_90]);
    hc_check("stats-1.14", s.test_nonfinite.count == 0 && !hc_stats_any_nonfinite(&s), "spurious non-finite");
    unmk(&r, 1);
    unmk(&t, 1);
}

static void test_pct_index(void)
{
    struct { size_t n; size_t p90, p99; } cases[] = {
        {1, 0, 0}, {2, 0, 0}, {10, 8, 8}, {11, 9, 9}, {100, 89, 98}, {101, 90, 99}, {140, 125, 137},
        {693, 622, 685}, {2247, 2021, 2223},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "stats-2.%zu", i + 1);
        size_t a = hc_stats_pct_index(cases[i].n, 9, 10), b = hc_stats_pct_index(cases[i].n, 99, 100);
        hc_check(name, a == cases[i].p90 && b == cases[i].p99, "n=%zu: got %zu %zu want %zu %zu", cases[i].n, a, b,
                 cases[i].p90, cases[i].p99);
    }
}

static void test_aggregate(void)
{
    enum { N = 10 };
    hc_nnoutput r[N], t[N];
    int order[N] = {3, 7, 1, 10, 5, 2, 9, 4, 8, 6}; /* lead errors, position 3 holds the max */
    for (int i = 0; i < N; i++) {
        mk(&r[i]);
        mk(&t[i]);
        t[i].white_lead = (float)order[i];
        t[i].white_owner_map[2] = i == 6 ? 0.5f : 0.01f * (float)i;
    }
    hc_stats s;
    hc_err err = {0};
    int rc = hc_stats_compute(r, t, N, &s, &err);
    hc_metric_stats *l = &s.m[HC_M_LEAD];
    hc_check("stats-3.1", rc == 0 && l->n == N, "rc %d: %s", rc, err.msg);
    hc_check("stats-3.2", l->v[HC_P_AVG] == 5.5 && l->v[HC_P_90] == 9 && l->v[HC_P_99] == 9 && l->v[HC_P_MAX] == 10,
             "lead %g %g %g %g", l->v[0], l->v[1], l->v[2], l->v[3]);
    hc_check("stats-3.3", l->max_pos == 3 && l->max_cell == -1, "lead max at %zu cell %d", l->max_pos, l->max_cell);
    hc_metric_stats *o = &s.m[HC_M_OWNERSHIP];
    hc_check("stats-3.4", o->n == 4 * N && o->max_pos == 6 && o->max_cell == 2 && o->v[HC_P_MAX] == 0.5,
             "own n %zu max %g at %zu/%d", o->n, o->v[HC_P_MAX], o->max_pos, o->max_cell);
    /* 40 samples: 90% is sorted index 35 (31 zeros, then 0.01..0.09 without 0.06, then 0.5). */
    hc_check("stats-3.5", o->v[HC_P_90] == (double)(0.01f * 5.0f) && o->v[HC_P_99] == (double)(0.01f * 9.0f),
             "own p90 %.9g p99 %.9g", o->v[HC_P_90], o->v[HC_P_99]);
    hc_check("stats-3.6", s.m[HC_M_WINRATE].v[HC_P_MAX] == 0 && s.m[HC_M_POLICY_KL].v[HC_P_MAX] == 0,
             "identical fields give nonzero error");

    /* KataGo averages the sorted errors: 1e16 + four 1s keeps the 4 only when the small ones
     * are added first. */
    for (int i = 0; i < 5; i++)
        t[i].white_lead = i == 0 ? 1e16f : 1.0f;
    rc = hc_stats_compute(r, t, 5, &s, &err);
    double want = ((double)1e16f + 4.0) / 5.0;
    hc_check("stats-3.7", rc == 0 && s.m[HC_M_LEAD].v[HC_P_AVG] == want, "avg %.17g want %.17g",
             s.m[HC_M_LEAD].v[HC_P_AVG], want);

    /* Errors name the position. */
    t[4].nn_x_len = 3;
    rc = hc_stats_compute(r, t, 5, &s, &err);
    hc_check("stats-3.8", rc == -1 && strstr(err.msg, "position 4"), "size mismatch: %s", err.msg);
    t[4].nn_x_len = 2;
    float *own = t[2].white_owner_map;
    t[2].white_owner_map = NULL;
    rc = hc_stats_compute(r, t, 5, &s, &err);
    hc_check("stats-3.9", rc == -1 && strstr(err.msg, "position 2") && strstr(err.msg, "ownership"), "no owner: %s", err.msg);
    t[2].white_owner_map = own;
    rc = hc_stats_compute(r, t, 0, &s, &err);
    hc_check("stats-3.10", rc == -1, "n=0 accepted");
    unmk(r, N);
    unmk(t, N);
}

static void test_nonfinite(void)
{
    enum { N = 4 };
    hc_nnoutput r[N], t[N];
    for (int i = 0; i < N; i++) {
        mk(&r[i]);
        mk(&t[i]);
    }
    t[2].white_lead = NAN;
    t[3].white_owner_map[1] = INFINITY;
    hc_stats s;
    hc_err err = {0};
    int rc = hc_stats_compute(r, t, N, &s, &err);
    hc_check("stats-4.1", rc == 0 && s.test_nonfinite.count == 2 && s.test_nonfinite.pos == 2 &&
             strcmp(s.test_nonfinite.field, "whiteLead") == 0 && s.test_nonfinite.index == -1,
             "count %zu pos %zu field %s", s.test_nonfinite.count, s.test_nonfinite.pos, s.test_nonfinite.field);
    hc_check("stats-4.2", isnan(s.m[HC_M_LEAD].v[HC_P_MAX]) && s.m[HC_M_LEAD].nonfinite == 1 &&
             s.m[HC_M_LEAD].max_pos == 2, "lead max %g nonfinite %zu pos %zu", s.m[HC_M_LEAD].v[HC_P_MAX],
             s.m[HC_M_LEAD].nonfinite, s.m[HC_M_LEAD].max_pos);
    /* NaN sorts last: the 90% of 4 samples (index 2) stays finite. */
    hc_check("stats-4.3", s.m[HC_M_LEAD].v[HC_P_90] == 0 && isnan(s.m[HC_M_LEAD].v[HC_P_AVG]),
             "lead p90 %g avg %g", s.m[HC_M_LEAD].v[HC_P_90], s.m[HC_M_LEAD].v[HC_P_AVG]);
    hc_check("stats-4.4", isinf(s.m[HC_M_OWNERSHIP].v[HC_P_MAX]) && s.m[HC_M_OWNERSHIP].max_pos == 3 &&
             s.ref_nonfinite.count == 0 && hc_stats_any_nonfinite(&s), "ownership inf not recorded");

    /* A finite test policy of 0 where the reference is positive: the KL is +inf, outputs that
     * disagree (counted as infinite, the max at that position), not a non-finite output. */
    t[2].white_lead = 0;
    t[3].white_owner_map[1] = 0;
    t[1].policy_probs[0] = 0.0f;
    rc = hc_stats_compute(r, t, N, &s, &err);
    hc_check("stats-4.5", rc == 0 && s.test_nonfinite.count == 0 && isinf(s.m[HC_M_POLICY_KL].v[HC_P_MAX]) &&
             s.m[HC_M_POLICY_KL].infinite == 1 && s.m[HC_M_POLICY_KL].first_infinite_pos == 1 &&
             s.m[HC_M_POLICY_KL].max_pos == 1 && s.m[HC_M_POLICY_KL].nonfinite == 0 && !hc_stats_any_nonfinite(&s),
             "KL max %g infinite %zu first %zu nonfinite %zu", s.m[HC_M_POLICY_KL].v[HC_P_MAX],
             s.m[HC_M_POLICY_KL].infinite, s.m[HC_M_POLICY_KL].first_infinite_pos, s.m[HC_M_POLICY_KL].nonfinite);
    /* Policy index reported for a NaN in the policy array. */
    t[1].policy_probs[4] = NAN;
    rc = hc_stats_compute(r, t, N, &s, &err);
    hc_check("stats-4.6", strcmp(s.test_nonfinite.field, "policyProbs") == 0 && s.test_nonfinite.index == 4,
             "field %s index %d", s.test_nonfinite.field, s.test_nonfinite.index);
    unmk(r, N);
    unmk(t, N);
}

/* A shared golden output file against a copy with known perturbations: the errors must be
 * exactly the perturbations (and zero elsewhere). */
static void test_golden(void)
{
    const char *path = hc_shared("golden/outputs/g170_size9.jsonl.gz");
    if (!path) {
        hc_skip_n("stats-5", 4, "shared golden outputs absent");
        return;
    }
    hc_nnoutput *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    hc_err err = {0};
    if (!hc_check("stats-5.1", hc_nnoutputs_load(path, &a, &na, &err) == 0 &&
                  hc_nnoutputs_load(path, &b, &nb, &err) == 0 && na == nb && na == 2179, "load: %s", err.msg))
        return;
    b[100].white_lead += 0.5f;
    b[1234].white_owner_map[40] = a[1234].white_owner_map[40] + 0.25f;
    hc_stats s;
    int rc = hc_stats_compute(a, b, na, &s, &err);
    double dl = fabsf(a[100].white_lead - b[100].white_lead);
    double dow = fabsf(a[1234].white_owner_map[40] - b[1234].white_owner_map[40]);
    hc_check("stats-5.2", rc == 0 && s.m[HC_M_LEAD].v[HC_P_MAX] == dl && s.m[HC_M_LEAD].max_pos == 100 &&
             s.m[HC_M_LEAD].v[HC_P_99] == 0, "lead max %g at %zu", s.m[HC_M_LEAD].v[HC_P_MAX], s.m[HC_M_LEAD].max_pos);
    hc_check("stats-5.3", s.m[HC_M_OWNERSHIP].v[HC_P_MAX] == dow && s.m[HC_M_OWNERSHIP].max_pos == 1234 &&
             s.m[HC_M_OWNERSHIP].max_cell == 40 && s.m[HC_M_OWNERSHIP].n == na * 81,
             "own max %g at %zu/%d", s.m[HC_M_OWNERSHIP].v[HC_P_MAX], s.m[HC_M_OWNERSHIP].max_pos,
             s.m[HC_M_OWNERSHIP].max_cell);
    hc_check("stats-5.4", s.m[HC_M_WINRATE].v[HC_P_MAX] == 0 && s.m[HC_M_POLICY_KL].v[HC_P_MAX] == 0 &&
             !hc_stats_any_nonfinite(&s), "unperturbed metrics nonzero");
    hc_nnoutputs_free(a, na);
    hc_nnoutputs_free(b, nb);
}

int main(void)
{
    hc_plan(16 + 9 + 10 + 6 + 4);
    test_formulas();
    test_pct_index();
    test_aggregate();
    test_nonfinite();
    test_golden();
    return hc_test_exit();
}
