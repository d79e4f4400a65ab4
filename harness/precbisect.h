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
 *     evaluated over the same positions: the verification.
 * Every evaluation runs emulate over the same positions, so the verdicts are deterministic. */
#ifndef HC_PRECBISECT_H
#define HC_PRECBISECT_H

#include <stddef.h>

#include "err.h"
#include "evaluate.h"
#include "model.h"
#include "positions.h"
#include "stats.h"
#include "tiers.h"

typedef struct hc_pbisect_layer {
    char name[256];
    unsigned kinds;   /* harness/profile.h HC_LK_* */
    int reduced;      /* the profile gives it some format other than fp32 */
    double score;     /* the tier's worst ratio with only this layer reduced (0 when not reduced) */
    double share;     /* score / sum of scores, in [0, 1] */
    int escalated;    /* in the result set */
} hc_pbisect_layer;

enum hc_pbisect_outcome {
    HC_PB_FOUND = 0,      /* a set found and the written profile verified */
    HC_PB_PASSES = 1,     /* the profile passes the tier already: empty set */
    HC_PB_IMPOSSIBLE = 2, /* even every layer in fp32 fails (a broken setup) */
    HC_PB_UNVERIFIED = 3  /* a set passed in the search but the written profile did not */
};

typedef struct hc_pbisect {
    int outcome;
    int n_layers;              /* layers + 1 (the input rows, last) */
    hc_pbisect_layer *layers;  /* forward order */
    int n_escalated;
    hc_stats full_stats;       /* the whole profile */
    hc_tier_check full_check;
    hc_stats result_stats;     /* the result profile, re-evaluated from its text */
    hc_tier_check result_check;
    int n_evals;               /* emulated evaluations over the positions */
    char *yaml;                /* the result profile as YAML (malloc'd) */
    size_t yaml_len;
} hc_pbisect;

/* Runs the search for profile (a built-in name or a .yaml path) and tier over ps[0..n) at
 * settings s, batch rows per evaluation, threads engine threads. *out is the caller's
 * (hc_pbisect_free). Returns -1 with err only on errors (bad profile, net, positions, I/O);
 * every outcome above is a 0 return. */
int hc_pbisect_run(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                   const char *profile, const hc_tier *tier, int batch, int threads, hc_pbisect **out,
                   hc_err *err);
void hc_pbisect_free(hc_pbisect *r);

#endif
