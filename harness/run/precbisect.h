/* Precision bisect: the small set of layers a reduced-precision profile must run in fp32 for
 * a tier to pass against ref32, and the profile that says so.
 *
 * The search, over the layers the profile reduces (hc_net_layers order, the input rows last):
 *  1. ref32's outputs; the whole profile's (if the tier passes already: done, nothing to
 *     escalate); the profile with every layer escalated (must pass: it is ref32's arithmetic).
 *  2. Sensitivity: the profile applied to one layer alone (every other layer fp32); the layer's
 *     score is the tier's worst ratio (scale*value/limit over the tier's limits, infinite for
 *     a non-finite output), its share that score over the sum of all layers' scores.
 *  3. Greedy escalation in order of share: the shortest prefix of that order whose escalation
 *     passes, found by bisection over the prefix length (which assumes passing is monotone in
 *     it; the prefix found is evaluated and passes whether or not it is).
 *  4. Pruning: each escalated layer, smallest share first, is put back to the profile's
 *     precision when the tier still passes without it; sweeps repeat until one drops nothing,
 *     so that the set is 1-minimal (putting back any single escalated layer fails the tier).
 *  5. The result profile: the input profile plus one rule per escalated layer (`layer:` its
 *     name as an exact glob, or `kind: input`) setting storage, weights, accum, winogradTiles,
 *     pool, attnScores and softmax to fp32; formatted as YAML, parsed back from that text and
 *     evaluated over the verification positions, which the search never saw: a set fitted to
 *     the search's positions that does not carry over to others fails there (HC_PB_UNVERIFIED).
 * Every search evaluation runs emulate over the same search positions, so the verdicts are
 * deterministic. */
#ifndef HC_PRECBISECT_H
#define HC_PRECBISECT_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

typedef struct hc_pbisect_layer {
    char name[256];
    unsigned kinds;   /* backends/profile.h HC_LK_* */
    int reduced;      /* the profile gives it some format other than fp32 */
    double score;     /* the tier's worst ratio with only this layer reduced (0 when not reduced) */
    double share;     /* score / sum of scores, in [0, 1] */
    int escalated;    /* in the result set */
} hc_pbisect_layer;

enum hc_pbisect_outcome {
    HC_PB_FOUND = 0,      /* a set found and the written profile verified */
    HC_PB_PASSES = 1,     /* the profile passes the tier already: empty set */
    HC_PB_IMPOSSIBLE = 2, /* even every layer in fp32 fails (a broken setup) */
    HC_PB_UNVERIFIED = 3  /* a set (possibly empty) passed in the search, but the written profile
                           * fails the tier on the verification positions */
};

typedef struct hc_pbisect {
    int outcome;
    int n_layers;              /* layers + 1 (the input rows, last) */
    hc_pbisect_layer *layers;  /* forward order */
    int n_escalated;
    size_t n_search, n_verify; /* positions searched on; held out for the verification */
    hc_stats full_stats;       /* the whole profile, on the search positions */
    hc_tier_check full_check;
    hc_stats result_stats;     /* the result profile, re-evaluated from its text on the */
    hc_tier_check result_check; /* verification positions (unset for HC_PB_IMPOSSIBLE) */
    int n_evals;               /* emulated evaluations (search and verification) */
    char *yaml;                /* the result profile as YAML (malloc'd) */
    size_t yaml_len;
} hc_pbisect;

typedef struct hc_pbisect_opts {
    const hc_position *search; /* the positions the search evaluates */
    size_t n_search;
    const hc_position *verify; /* the positions the result is verified on: none of the search's */
    size_t n_verify;
    const hc_eval_settings *settings;
    const char *profile;       /* a built-in name or a .yaml path */
    const hc_tier *tier;
    int batch, threads;        /* rows per evaluation, engine threads */
    int cuda;                  /* 1: the emulation and the reference on the GPU (cuda:emulate,
                                  cuda:ref32: the same bits, docs/EMULATION.md) */
} hc_pbisect_opts;

/* Runs the search. *out is the caller's (hc_pbisect_free). Returns -1 with err only on errors
 * (no search or no verification positions, bad profile, net, positions, I/O); every outcome
 * above is a 0 return. */
int hc_pbisect_run(const hc_net *net, const hc_pbisect_opts *o, hc_pbisect **out, hc_err *err);
void hc_pbisect_free(hc_pbisect *r);

/* The split of one positions set when no separate verification set is given: every
 * HC_PBISECT_HOLDOUT_EVERY-th position (indices 3, 7, 11, ...: a quarter, spread over the
 * file rather than its tail, whose positions are often of one game) is held out for the
 * verification, the rest searched on; at least HC_PBISECT_MIN_VERIFY held out. */
enum { HC_PBISECT_HOLDOUT_EVERY = 4, HC_PBISECT_MIN_VERIFY = 2 };

typedef struct hc_pbisect_split {
    hc_position *search, *verify; /* shallow copies: they share the arrays of the positions */
    size_t n_search, n_verify;
} hc_pbisect_split;

/* Fills *out from ps[0..n); -1 (HC_EUSAGE, naming the minimum) when n is too small to hold
 * HC_PBISECT_MIN_VERIFY positions out. Free with hc_pbisect_split_free before the positions. */
int hc_pbisect_split_positions(const hc_position *ps, size_t n, hc_pbisect_split *out, hc_err *err);
/* Frees the two arrays (never the positions' own arrays, which ps keeps). */
void hc_pbisect_split_free(hc_pbisect_split *sp);

#endif
