/* Tiers: KataGo's fp32/fp16 limits and derived scalings, behaviour exactly at a limit
 * (KataGo compares with <=), one ulp above, NaN and inf, closest margin, user tiers. */
#include <math.h>
#include <string.h>

#include "hc_test.h"
#include "harness/metrics/tiers.h"

static void zero_stats(hc_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n_positions = 100;
    for (int m = 0; m < HC_M_COUNT; m++)
        s->m[m].n = 100;
}

/* KataGo's numbers, written out from runBackendErrorTest by hand. */
static void test_builtin_limits(void)
{
    hc_tier t;
    hc_err err = {0};
    hc_check("tiers-1.1", hc_tier_builtin("fp32", &t, &err) == 0, "%s", err.msg);
    hc_check("tiers-1.2", t.limit[HC_M_WINRATE][HC_P_99] == 0.45 && t.scale[HC_M_WINRATE][HC_P_99] == 100 &&
             t.limit[HC_M_LEAD][HC_P_99] == 0.34 && t.limit[HC_M_SCORE_MEAN][HC_P_99] == 0.34 &&
             t.limit[HC_M_SCORE_STDEV][HC_P_99] == 0.34 * 0.6 && t.limit[HC_M_TOP_POLICY][HC_P_99] == 0.45 &&
             t.limit[HC_M_POLICY_KL][HC_P_99] == 0.0006 && t.limit[HC_M_ST_WINLOSS][HC_P_99] == 0.45 * 1.8 &&
             t.limit[HC_M_ST_SCORE][HC_P_99] == 0.34 * 0.75 && t.limit[HC_M_OWNERSHIP][HC_P_99] == 0.45 * 1.75,
             "fp32 99%% limits");
    hc_check("tiers-1.3", t.limit[HC_M_WINRATE][HC_P_MAX] == 1.35 && t.limit[HC_M_LEAD][HC_P_MAX] == 0.9 &&
             t.limit[HC_M_TOP_POLICY][HC_P_MAX] == 1.35 && t.limit[HC_M_POLICY_KL][HC_P_MAX] == 0.0012 &&
             t.limit[HC_M_OWNERSHIP][HC_P_MAX] == 1.35 * 4.0 && t.limit[HC_M_SCORE_STDEV][HC_P_MAX] == 0.9 * 0.6,
             "fp32 max limits");
    hc_check("tiers-1.4", !t.set[HC_M_WINRATE][HC_P_AVG] && !t.set[HC_M_WINRATE][HC_P_90], "fp32 sets avg or 90%%");
    hc_check("tiers-1.5", hc_tier_builtin("fp16", &t, &err) == 0 && t.limit[HC_M_WINRATE][HC_P_99] == 2.0 &&
             t.limit[HC_M_LEAD][HC_P_99] == 1.0 && t.limit[HC_M_TOP_POLICY][HC_P_99] == 2.5 &&
             t.limit[HC_M_POLICY_KL][HC_P_99] == 0.002 && t.limit[HC_M_WINRATE][HC_P_MAX] == 5.0 &&
             t.limit[HC_M_LEAD][HC_P_MAX] == 3.0 && t.limit[HC_M_TOP_POLICY][HC_P_MAX] == 6.0 &&
             t.limit[HC_M_POLICY_KL][HC_P_MAX] == 0.004 && t.limit[HC_M_OWNERSHIP][HC_P_MAX] == 20.0 &&
             t.limit[HC_M_OWNERSHIP][HC_P_99] == 3.5 && t.limit[HC_M_ST_SCORE][HC_P_MAX] == 2.25,
             "fp16 limits");
    hc_check("tiers-1.6", hc_tier_builtin("fp32-strict", &t, &err) == 0 && t.limit[HC_M_WINRATE][HC_P_MAX] == 1e-4 &&
             t.scale[HC_M_WINRATE][HC_P_MAX] == 1 && t.limit[HC_M_OWNERSHIP][HC_P_MAX] == 1e-3 &&
             t.limit[HC_M_LEAD][HC_P_MAX] == 1e-2 && !t.set[HC_M_WINRATE][HC_P_99], "fp32-strict limits");
    hc_check("tiers-1.7", hc_tier_builtin("fp8", &t, &err) == -1 && err.code == HC_ECONFIG && strstr(err.msg, "fp8"),
             "unknown tier: %s", err.msg);
}

/* A value exactly at each limit passes; one ulp above fails. */
static void test_edges(void)
{
    hc_tier t;
    hc_err err = {0};
    hc_tier_builtin("fp16", &t, &err);
    hc_stats s;
    int id = 1;
    for (int p = HC_P_99; p <= HC_P_MAX; p++) {
        for (int m = 0; m < HC_M_COUNT; m++) {
            /* Find a raw value whose scaled product equals the limit exactly (or the largest
             * below it), as KataGo's 100*value <= limit would see it. */
            double lim = t.limit[m][p], sc = t.scale[m][p];
            double v = lim / sc;
            while (sc * v > lim)
                v = nextafter(v, 0);
            zero_stats(&s);
            s.m[m].v[p] = v;
            hc_tier_check c;
            hc_tier_check_stats(&t, &s, &c);
            char name[32];
            snprintf(name, sizeof name, "tiers-2.%d", id++);
            hc_check(name, c.pass && c.verdict[m][p] == HC_V_PASS, "%s %s at %.17g (limit %.17g) fails",
                     hc_metric_infos[m].key, hc_pct_names[p], v, lim);
            double up = v;
            while (sc * up <= lim)
                up = nextafter(up, INFINITY);
            s.m[m].v[p] = up;
            hc_tier_check_stats(&t, &s, &c);
            snprintf(name, sizeof name, "tiers-2.%d", id++);
            hc_check(name, !c.pass && c.verdict[m][p] == HC_V_FAIL && c.first_fail_metric == m && c.first_fail_pct == p &&
                     c.n_failed == 1, "%s %s just above passes", hc_metric_infos[m].key, hc_pct_names[p]);
        }
    }
    /* Exactly at the fp32 99% winrate limit in KataGo's terms: 100*0.0045 <= 0.45 is true in
     * double (the product rounds down), and so is the verdict. */
    hc_tier_builtin("fp32", &t, &err);
    zero_stats(&s);
    s.m[HC_M_WINRATE].v[HC_P_99] = 0.0045;
    hc_tier_check c;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-2.100", (100 * 0.0045 <= 0.45) == c.pass, "0.0045 verdict differs from KataGo's comparison");
    s.m[HC_M_OWNERSHIP].v[HC_P_MAX] = 0.054; /* 100*0.054 vs 1.35*4.0 = 5.4 */
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-2.101", (100 * 0.054 <= 1.35 * 4.0) == (c.verdict[HC_M_OWNERSHIP][HC_P_MAX] == HC_V_PASS),
             "ownership max verdict differs from KataGo's comparison");
}

static void test_nonfinite(void)
{
    hc_tier t;
    hc_err err = {0};
    hc_tier_builtin("fp32", &t, &err);
    hc_stats s;
    zero_stats(&s);
    s.m[HC_M_POLICY_KL].v[HC_P_MAX] = NAN;
    hc_tier_check c;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-3.1", !c.pass && c.nonfinite && c.verdict[HC_M_POLICY_KL][HC_P_MAX] == HC_V_NONFINITE &&
             c.first_fail_metric == HC_M_POLICY_KL, "NaN KL passes");
    zero_stats(&s);
    s.m[HC_M_LEAD].v[HC_P_99] = INFINITY;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-3.2", !c.pass && c.verdict[HC_M_LEAD][HC_P_99] == HC_V_NONFINITE, "inf lead passes");
    /* A NaN in an output field no metric reads (varTimeLeft) still fails the tier. */
    zero_stats(&s);
    s.test_nonfinite.count = 1;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-3.3", !c.pass && c.nonfinite && c.n_failed == 0, "non-finite output passes");
    /* An unset limit never fails, even on NaN. */
    hc_tier_builtin("fp32-strict", &t, &err);
    zero_stats(&s);
    s.m[HC_M_POLICY_KL].v[HC_P_MAX] = NAN;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-3.4", c.pass && c.verdict[HC_M_POLICY_KL][HC_P_MAX] == HC_V_UNSET, "unset limit checked");
}

static void test_margin(void)
{
    hc_tier t;
    hc_err err = {0};
    hc_tier_builtin("fp16", &t, &err);
    hc_stats s;
    zero_stats(&s);
    s.m[HC_M_WINRATE].v[HC_P_99] = 0.01;   /* 1.0 of 2.0: ratio 0.5 */
    s.m[HC_M_LEAD].v[HC_P_99] = 0.8;       /* 0.8 */
    s.m[HC_M_OWNERSHIP].v[HC_P_MAX] = 0.1; /* 10 of 20: 0.5 */
    s.m[HC_M_ST_SCORE].v[HC_P_MAX] = 1.8;  /* 1.8 of 2.25: 0.8 */
    s.m[HC_M_SCORE_MEAN].v[HC_P_MAX] = 3.3;/* 3.3 of 3: 1.1, fails */
    hc_tier_check c;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-4.1", c.worst_metric[HC_P_99] == HC_M_LEAD && fabs(c.worst_ratio[HC_P_99] - 0.8) < 1e-12,
             "99%% closest %d %g", c.worst_metric[HC_P_99], c.worst_ratio[HC_P_99]);
    hc_check("tiers-4.2", c.worst_all_metric == HC_M_SCORE_MEAN && c.worst_all_pct == HC_P_MAX &&
             fabs(c.worst_all_ratio - 1.1) < 1e-12 && !c.pass && c.n_failed == 1, "overall closest %d %d %g",
             c.worst_all_metric, c.worst_all_pct, c.worst_all_ratio);
    hc_check("tiers-4.3", c.worst_metric[HC_P_AVG] == -1 && c.n_checked == 18, "avg margin %d, checked %d",
             c.worst_metric[HC_P_AVG], c.n_checked);
}

static void test_user(void)
{
    hc_tier t;
    hc_err err = {0};
    hc_tier_init(&t, "mine");
    hc_check("tiers-5.1", hc_tier_set(&t, HC_M_WINRATE, HC_P_AVG, 1, 1e-3, &err) == 0 &&
             hc_tier_set(&t, HC_M_OWNERSHIP, HC_P_90, 100, 0.5, &err) == 0, "%s", err.msg);
    hc_check("tiers-5.2", hc_tier_set(&t, HC_M_LEAD, HC_P_MAX, 1, NAN, &err) == -1 &&
             hc_tier_set(&t, HC_M_LEAD, HC_P_MAX, 1, -1, &err) == -1, "bad limit accepted");
    hc_stats s;
    zero_stats(&s);
    s.m[HC_M_WINRATE].v[HC_P_AVG] = 1e-3;
    s.m[HC_M_OWNERSHIP].v[HC_P_90] = 0.006;
    s.m[HC_M_LEAD].v[HC_P_MAX] = 1e9; /* not limited by this tier */
    hc_tier_check c;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-5.3", !c.pass && c.verdict[HC_M_WINRATE][HC_P_AVG] == HC_V_PASS &&
             c.verdict[HC_M_OWNERSHIP][HC_P_90] == HC_V_FAIL && c.n_checked == 2, "user tier verdicts");
    /* A zero limit demands exact agreement. */
    hc_tier_init(&t, "exact");
    hc_tier_set(&t, HC_M_LEAD, HC_P_MAX, 1, 0, &err);
    zero_stats(&s);
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-5.4", c.pass && c.ratio[HC_M_LEAD][HC_P_MAX] == 0, "zero limit, zero error");
    s.m[HC_M_LEAD].v[HC_P_MAX] = 1e-30;
    hc_tier_check_stats(&t, &s, &c);
    hc_check("tiers-5.5", !c.pass && isinf(c.ratio[HC_M_LEAD][HC_P_MAX]), "zero limit, tiny error");
}

int main(void)
{
    hc_plan(7 + 38 + 4 + 3 + 5);
    test_builtin_limits();
    test_edges();
    test_nonfinite();
    test_margin();
    test_user();
    return hc_test_exit();
}
