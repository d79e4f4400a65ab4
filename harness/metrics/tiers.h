/* Tiers: per-metric, per-percentile limits and the check of an hc_stats against them.
 * A limit reads `scale*value <= limit`, the comparison KataGo's checkStats99/checkStatsMax
 * make (at the limit passes; NaN never does), with scale 100 where KataGo states its limit in
 * percent, so that the built-in tiers reproduce KataGo's verdicts bit for bit.
 *
 * Built-ins: "fp32" and "fp16" are KataGo's two tiers of runBackendErrorTest, with its derived
 * limits (from wr, score, tpd, pkld: winrate wr, lead and scoreMean score, scoreStdev
 * score*0.6, topPolicy tpd, policyKL pkld, stWinloss wr*1.8, stScore score*0.75, ownership
 * wr*1.75 at 99% and wr*4.0 at max). "fp32-strict" is halfcheck's own max-only tier for an
 * fp32 backend against the fp32 reference: winrate 1e-4, topPolicy 1e-4, ownership 1e-3,
 * lead 1e-2 and scoreMean 1e-2, all in raw units (1e-4 winrate = 0.01%). */
#ifndef HC_TIERS_H
#define HC_TIERS_H

#include "harness/base/err.h"
#include "harness/metrics/stats.h"

typedef struct hc_tier {
    char name[64];
    unsigned char set[HC_M_COUNT][HC_P_COUNT];
    double scale[HC_M_COUNT][HC_P_COUNT];
    double limit[HC_M_COUNT][HC_P_COUNT];
    /* maxBias: limits on a systematic bias, per metric with a signed form (bias.h). A check fails
     * when the mean signed error is flagged systematic and bias_scale*|mean| > bias_limit (plus
     * the resolution, as for the other limits). None in the built-in tiers. */
    unsigned char bias_set[HC_M_COUNT];
    double bias_scale[HC_M_COUNT];
    double bias_limit[HC_M_COUNT];
} hc_tier;

extern const char *const hc_tier_builtin_names[]; /* NULL-terminated */

void hc_tier_init(hc_tier *t, const char *name);
/* Sets one limit: scale*value <= limit. limit must be finite and >= 0, scale > 0. */
int hc_tier_set(hc_tier *t, int metric, int pct, double scale, double limit, hc_err *err);
/* Sets one bias limit (maxBias): scale*|mean| <= limit unless the bias is systematic. The metric
 * must have a signed form (hc_bias_metric_has); limit finite and >= 0, scale > 0. */
int hc_tier_set_bias(hc_tier *t, int metric, double scale, double limit, hc_err *err);
/* A tier with KataGo's limits and scalings from its eight numbers (as percent for wr, tpd). */
void hc_tier_katago(hc_tier *t, const char *name, double wr99, double score99, double tpd99, double pkld99,
                    double wr_max, double score_max, double tpd_max, double pkld_max);
/* Fills *t with a built-in tier; -1 (HC_ECONFIG) when name is none of them. */
int hc_tier_builtin(const char *name, hc_tier *t, hc_err *err);
/* Whether every limit the tier sets is 0 (the built-in `exact`): a check of reproduction, whose
 * ratios mean nothing (reports say bit-identical or not). */
int hc_tier_is_exact(const hc_tier *t);

enum hc_verdict { HC_V_UNSET = 0, HC_V_PASS, HC_V_FAIL, HC_V_NONFINITE };
extern const char *const hc_verdict_names[]; /* "unset", "pass", "fail", "nonfinite" */

typedef struct hc_tier_check {
    int pass;                               /* every set limit passed and every output is finite */
    int nonfinite;                          /* a NaN/inf in an output or among the checked figures */
    int n_checked, n_failed;                /* limits checked; failed (including non-finite) */
    int verdict[HC_M_COUNT][HC_P_COUNT];
    double ratio[HC_M_COUNT][HC_P_COUNT];   /* scale*value/limit; >1 fails; NaN for non-finite; +inf
                                             * for an infinite figure of finite outputs (a fail) */
    /* Closest margin as KataGo reports it: the largest finite ratio (first in metric order on
     * ties), per percentile and overall; metric -1 when no limit is set there. */
    int worst_metric[HC_P_COUNT];
    double worst_ratio[HC_P_COUNT];
    int worst_all_metric, worst_all_pct;
    double worst_all_ratio;
    /* The first failing limit, percentiles in order avg, 90, 99, max and metrics in KataGo's
     * order within each; -1 when none. */
    int first_fail_metric, first_fail_pct;
    /* The bias limits (counted in n_checked and n_failed, and in pass): the verdict per metric
     * (HC_V_UNSET where the tier sets none; a systematic bias of a non-finite mean is
     * HC_V_NONFINITE), and the ratio bias_scale*|mean|/(limit + bias_scale*res), NaN where unset.
     * A systematic bias within its limit passes; a bias not systematic passes whatever its
     * size. first_bias_fail: the first failing metric, -1 when none. Not part of the closest
     * margin (worst_*), which stays KataGo's. */
    int bias_verdict[HC_M_COUNT];
    double bias_ratio[HC_M_COUNT];
    int first_bias_fail;
} hc_tier_check;

/* Checks s against t. For outputs with a declared resolution (s->res[m] > 0) a limit reads
 * `scale*value <= limit + scale*res[m]`: the limit is on the true outputs' error, which the
 * rounding can raise by at most res[m]; ratio is then scale*value/(limit + scale*res[m]). With
 * res all 0 (exact floats) this is KataGo's comparison, bit for bit. Bias limits: see hc_tier_check. */
void hc_tier_check_stats(const hc_tier *t, const hc_stats *s, hc_tier_check *out);

#endif
