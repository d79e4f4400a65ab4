/* KataGo's backend error metrics (testgpuerror, tests/testnnevalcanary.cpp GpuErrorStats):
 * nine per-position errors between a reference and a test set of post-processed outputs,
 * aggregated as average, 90%, 99% and max with KataGo's percentile index. One hc_stats feeds
 * the tier check and every report: nothing downstream recomputes a figure.
 *
 * Arithmetic follows KataGo's C++ on Linux exactly: float differences are taken in float,
 * widened to double afterwards; the KL sum uses double log; the average is summed over the
 * sorted errors, as KataGo sorts before it averages. Non-finite values are never compared:
 * a NaN or inf in any output field, or a non-finite error, is recorded with its position and
 * field so that a tier check can fail it by name. An error that is +inf between finite outputs
 * (a policy KL against a move the test gives 0 or marks illegal) is counted apart (infinite):
 * outputs that disagree, a tier failure, not a broken backend. */
#ifndef HC_STATS_H
#define HC_STATS_H

#include <stddef.h>

#include "harness/metrics/bias.h"
#include "harness/base/err.h"
#include "harness/data/nnoutput.h"

enum hc_metric {
    HC_M_WINRATE = 0,    /* |d(0.5*(win-loss))| + |d noResult| */
    HC_M_LEAD,           /* |d lead| */
    HC_M_SCORE_MEAN,     /* |d scoreMean| */
    HC_M_SCORE_STDEV,    /* |d sqrt(max(0, scoreMeanSq - scoreMean^2))| */
    HC_M_TOP_POLICY,     /* |ref top move's prob - test prob of that move| */
    HC_M_POLICY_KL,      /* sum over ref prob > 1e-30 of p_ref*(log p_ref - log p_test); +inf where p_test <= 0 */
    HC_M_ST_WINLOSS,     /* |d shorttermWinlossError| */
    HC_M_ST_SCORE,       /* |d shorttermScoreError| */
    HC_M_OWNERSHIP,      /* |d ownership|, one sample per cell of the NN buffer */
    HC_M_COUNT
};

enum hc_pct { HC_P_AVG = 0, HC_P_90, HC_P_99, HC_P_MAX, HC_P_COUNT };

#define HC_STATS_NQ 65 /* quantiles kept per metric: min, every 1/64, max */

typedef struct hc_metric_info {
    const char *name;      /* KataGo's report label, e.g. "winrateError" */
    const char *key;       /* config key, e.g. "winrate" */
    double display_scale;  /* testgpuerror prints value*display_scale ... */
    const char *unit;      /* ... followed by this suffix ("%", "c" or "") */
} hc_metric_info;

extern const hc_metric_info hc_metric_infos[HC_M_COUNT];
extern const char *const hc_pct_names[HC_P_COUNT]; /* "avg", "p90", "p99", "max" */

/* Index into `metric` or `pct` name tables; -1 when unknown (or NULL). */
int hc_metric_by_key(const char *key);
int hc_metric_by_name(const char *name);
int hc_pct_by_name(const char *name);

/* KataGo's percentile index into n ascending samples: (n-1)*num/den in integer arithmetic
 * ((n-1)*9/10 for 90%, (n-1)*99/100 for 99%). n must be >= 1. */
size_t hc_stats_pct_index(size_t n, unsigned num, unsigned den);

typedef struct hc_metric_stats {
    size_t n;               /* samples: positions, or cells over all positions for ownership */
    double v[HC_P_COUNT];   /* avg, 90%, 99%, max of the raw (unscaled) error */
    size_t max_pos;         /* first position whose error equals the max */
    int max_cell;           /* ownership: cell (y*nn_x_len+x) within max_pos; else -1 */
    size_t nonfinite;       /* samples whose error is NaN or inf (sorted last, as +inf) */
    size_t first_nonfinite_pos;
    /* Samples whose error is +inf although both outputs are finite (a policy KL against a move
     * the test outputs give probability 0 or mark illegal): outputs that disagree, a failure of
     * any limit and the max, not counted in nonfinite (which makes a case an error). */
    size_t infinite;
    size_t first_infinite_pos;
    /* A quantile sketch for plots (the error distribution, reports/html.c): q[k] is the sorted
     * sample at KataGo-style index (n-1)*k/(HC_STATS_NQ-1), so q[0] is the min and q[last] the
     * max. Never used by a tier check. */
    double q[HC_STATS_NQ];
} hc_metric_stats;

/* The first non-finite value seen in a set of outputs. */
typedef struct hc_nonfinite {
    size_t count;           /* positions holding at least one non-finite field */
    size_t pos;             /* first such position */
    char field[32];         /* e.g. "whiteLead", "policyProbs", "whiteOwnerMap" */
    int index;              /* element within an array field; -1 for a scalar */
    float value;
} hc_nonfinite;

#define HC_STATS_MAX_CELLS 841 /* 29x29: outputs files of KataGo builds with a larger MAX_BOARD_LEN (compare); halfcheck's own buffers stop at 19x19 (sizes.h) */

typedef struct hc_stats {
    size_t n_positions;
    hc_metric_stats m[HC_M_COUNT];
    /* Per board point, for heat maps (reports/html.c), when every position has the same NN
     * buffer (cells_x*cells_y <= HC_STATS_MAX_CELLS; else cells_x = cells_y = 0): the mean
     * |d ownership| over the positions, and the mean |d policy prob| over the positions where
     * the point is legal in both outputs (0 where it never is). Never used by a tier check. */
    int cells_x, cells_y;
    float own_cell[HC_STATS_MAX_CELLS];
    float pol_cell[HC_STATS_MAX_CELLS];
    hc_nonfinite ref_nonfinite;   /* count 0 when the reference is all finite */
    hc_nonfinite test_nonfinite;  /* count 0 when the test outputs are all finite */
    /* The declared resolution of the test outputs (all 0: exact floats), and what it makes of
     * each metric: res[m] is the most that reading rounded values can add to metric m's error
     * at any compared position (hc_stats_position_resolution), so also to its average and to
     * every percentile. 0 everywhere for exact outputs. A tier check allows it on top of each
     * limit; reports show it next to the errors. */
    hc_resolution out_res;
    double res[HC_M_COUNT];
    /* Bias apart from noise (bias.h): the signed errors of the metrics with a signed form
     * (bias[m].n 0 for the others) and the policy's top-move agreement. */
    hc_bias_stats bias[HC_M_COUNT];
    hc_top_agree top_agree;
} hc_stats;

/* The score stdev KataGo derives from an output: sqrt(max(0, scoreMeanSq - scoreMean^2)), the
 * square of the mean a float product, the difference in double, NaN read as 0. */
double hc_stats_score_stdev(const hc_nnoutput *o);

/* The scalar errors of one position (every metric but ownership), exactly as KataGo computes
 * them. Policies must have the same buffer size. */
void hc_stats_position(const hc_nnoutput *ref, const hc_nnoutput *test, double out[HC_M_COUNT]);

/* The most that rounding the test outputs by r can add to each metric's error at this position
 * (the true test values lie within r, plus half a float ulp for the conversion to float, of
 * the ones read). Derivation (docs/GTP.md, "Output resolution"), with e(v) = r + ulp(v)/2 per
 * field: winrate 0.5*(e(win)+e(loss)) + e(noResult); lead, scoreMean, stWinloss, stScore
 * e(field); scoreStdev min(sqrt(dv), dv/sqrt(var)) with dv = e(sq) + (2|mean| + e(mean))*e(mean),
 * as |sqrt a - sqrt b| <= |a-b|/(sqrt a + sqrt b) and <= sqrt|a-b|; topPolicy e(test[top]);
 * policyKL sum over ref p > 1e-30 of p*log1p(e(q)/q), q the test probability, since the
 * measured KL exceeds the true one by sum p*(log t - log q) with t <= q + e(q) (a one-sided
 * bound: the direction that could fail a check); ownership max over cells of e(cell). All 0
 * when r is NULL or all zero. */
void hc_stats_position_resolution(const hc_nnoutput *ref, const hc_nnoutput *test, const hc_resolution *r,
                                  double out[HC_M_COUNT]);

/* hc_stats_compute over the positions i < n with !skip[i] (skip NULL: all), with positions
 * still named by their index i; res (NULL: exact) is the test outputs' declared resolution,
 * kept in out->out_res and turned into out->res. Fails (HC_EFORMAT) when no position is left. */
int hc_stats_compute_ex(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const unsigned char *skip,
                        const hc_resolution *res, hc_stats *out, hc_err *err);

/* Per-position errors between ref[i] and test[i] for i < n, then the aggregates. Fails
 * (HC_EFORMAT) on n == 0, on differing buffer sizes, or on a missing ownership map, naming
 * the position. Non-finite values are recorded, not an error. */
int hc_stats_compute(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, hc_stats *out, hc_err *err);

/* Any non-finite value in the outputs or among the aggregated errors. */
int hc_stats_any_nonfinite(const hc_stats *s);

/* Scans one output for NaN/inf; returns 1 and fills nf (field, index, value) on the first. */
int hc_nnoutput_find_nonfinite(const hc_nnoutput *o, hc_nonfinite *nf);

#endif
