/* Bias apart from noise: the signed errors of the scalar outputs (test minus reference) with
 * their mean, its standard error and percentiles, a flag where the mean is systematic, and the
 * rate at which the test policy's top move is the reference's. KataGo's statistics (stats.h)
 * are absolute errors, so a kernel that shifts every winrate by +0.3% and one that adds ±0.3%
 * of noise give the same figures there; the first is a bug, the second may be fp16 rounding.
 * These figures tell them apart (llama.cpp's KL-divergence statistics report the same kinds:
 * signed differences with percentiles, and the "same top token" rate). hc_stats_compute_ex
 * fills them into hc_stats; a tier may limit a systematic bias (tiers.h, maxBias). */
#ifndef HC_BIAS_H
#define HC_BIAS_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/data/nnoutput.h"

enum hc_bias_pct { HC_BP_1 = 0, HC_BP_5, HC_BP_50, HC_BP_95, HC_BP_99, HC_BP_COUNT };
extern const char *const hc_bias_pct_names[HC_BP_COUNT]; /* "p1", "p5", "p50", "p95", "p99" */

/* A mean is systematic when it lies more than this many standard errors from zero (and above
 * the outputs' resolution, and over at least HC_BIAS_MIN_SAMPLES samples). Why 4: for
 * zero-mean noise the mean of n independent errors is about normal with that standard error,
 * and |z| > 4 happens with probability 6e-5; a suite checks some 7 signed figures per case over
 * tens to hundreds of cases, so unbiased noise raises a false flag about once in a few hundred
 * suite runs, while a real shift of the size of the noise over 100 positions sits 10 standard
 * errors out. 3 would flag noise every few runs; 5 would miss shifts of 0.4x the noise at 100
 * positions. The minimum sample count keeps the estimate of the standard error itself sane
 * (Student's t with 9 degrees of freedom exceeds 4 with probability 0.003). */
#define HC_BIAS_SIGMAS 4.0
#define HC_BIAS_MIN_SAMPLES 10

typedef struct hc_bias_stats {
    size_t n;              /* finite signed samples (positions); 0: the metric has no signed form */
    double mean;           /* mean signed error, raw units (test - reference) */
    double se;             /* its standard error: sample standard deviation / sqrt(n) */
    double p[HC_BP_COUNT]; /* signed percentiles, KataGo's index (n-1)*k/100 into the sorted samples */
    int systematic;        /* |mean| > HC_BIAS_SIGMAS*se and |mean| > resolution, n >= HC_BIAS_MIN_SAMPLES */
} hc_bias_stats;

/* The policy's top-move agreement: positions where the test policy's highest legal move is the
 * reference's (the first index of the largest probability in each, as KataGo picks the top). */
typedef struct hc_top_agree {
    size_t n;     /* positions compared */
    size_t agree; /* of them, with the same top move */
} hc_top_agree;

/* Index (enum hc_metric of stats.h) -> whether the metric has a signed form: winrate
 * (d 0.5*(win-loss), white's view; noResult left out), lead, scoreMean, scoreStdev, topPolicy
 * (the test probability of the reference's top move minus the reference's), stWinloss, stScore.
 * The policy KL has no sign; ownership's cells of one position are not independent samples. */
int hc_bias_metric_has(int metric);

/* The signed errors of one position (test - reference), index enum hc_metric; NAN where the
 * metric has no signed form. Computed as hc_stats_position computes the absolute ones, without
 * the absolute value. */
void hc_bias_position(const hc_nnoutput *ref, const hc_nnoutput *test, double out[]);

/* The index of the largest policy probability (the first on ties). */
int hc_policy_top(const hc_nnoutput *o);

/* The figures of one metric from its n signed samples (non-finite ones are left out and not
 * counted: the absolute statistics report them); vals is sorted in place. res is the metric's
 * resolution (hc_stats.res), below which no bias is flagged. */
void hc_bias_finish(double *vals, size_t n, double res, hc_bias_stats *out);

/* The signed figures of every metric with a signed form (bias[m].n 0 for the others) and the
 * top-move agreement over the positions i < n with !skip[i] (skip NULL: all). res[m] (per
 * metric, hc_stats.res) is the outputs' resolution. -1 (HC_ENOMEM) only when out of memory. */
int hc_bias_compute(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const unsigned char *skip,
                    const double res[], hc_bias_stats bias[], hc_top_agree *top, hc_err *err);

/* The share of positions with the same top move; NAN when none were compared. */
double hc_top_agree_rate(const hc_top_agree *t);

#endif
