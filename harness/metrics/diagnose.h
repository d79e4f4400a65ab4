/* What a failing case's outputs are, when they are not their position's: each position whose
 * test outputs are far from its own reference is matched against the reference of the other
 * positions evaluated with it (those of its batch first, then the whole case). A match much
 * closer than the own reference names the bug: rows swapped in a batch, a stale row repeated,
 * outputs shifted from another position; with no match, a policy whose legal moves are not the
 * position's says the same without naming the owner. Cheap: scalar figures first, the policy
 * and ownership only for candidates, and only for positions that are far from their own.
 * Reports format the findings (hc_diag_text); nothing here prints. */
#ifndef HC_DIAGNOSE_H
#define HC_DIAGNOSE_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/data/nnoutput.h"

enum hc_diag_kind {
    HC_DIAG_SWAPPED = 0, /* pos holds other's outputs and other holds pos's */
    HC_DIAG_STALE,       /* pos repeats the outputs of other, evaluated before it */
    HC_DIAG_FOREIGN,     /* pos holds the outputs of other, evaluated after it */
    HC_DIAG_LEGAL,       /* no owner found, but the policy's legal moves are not pos's */
    HC_DIAG_COUNT
};
extern const char *const hc_diag_kind_names[HC_DIAG_COUNT]; /* "swapped", "stale", "foreign", "legal" */

typedef struct hc_diag_finding {
    int kind;            /* enum hc_diag_kind */
    size_t pos;          /* the position whose outputs are wrong (its index in the case) */
    size_t other;        /* whose outputs they are; == pos for HC_DIAG_LEGAL */
    int same_batch;      /* other was in pos's batch (chunk of the evaluation order) */
    int legal_missing;   /* moves legal in pos's reference that the outputs mark illegal */
    int legal_extra;     /* moves illegal in pos's reference that the outputs give a probability */
    double own_dist;     /* distance of the outputs to pos's reference ... */
    double other_dist;   /* ... and to other's (hc_diag_distance) */
} hc_diag_finding;

typedef struct hc_diag_opts {
    const unsigned char *skip; /* positions left out (NULL: none) */
    const size_t *order;       /* the evaluation order: ps[order[0]] first (NULL: index order) */
    size_t batch;              /* positions per batch along the order (0 or 1: one each) */
    size_t max_findings;       /* keep at most this many (0: 64) */
} hc_diag_opts;

/* A distance between two outputs of the same NN buffer, in [0, 4]: the winrate and no-result
 * difference, the lead difference over 10 (at most 1), the total variation of the policies
 * over the moves legal in both, each renormalised there, and half the mean ownership
 * difference. Another position's outputs are matched at the closest symmetry of the buffer
 * (a tensor backend's stale row comes back post-processed at its new row's symmetry). */
double hc_diag_distance(const hc_nnoutput *a, const hc_nnoutput *b);

/* Findings for ref[i] against test[i], i < n, in position order, swaps once per pair; *out
 * malloc'd (NULL when none), *n_out their count. Positions of another NN buffer than pos's are
 * never matched. Fails only when out of memory. */
int hc_diagnose(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const hc_diag_opts *o,
                hc_diag_finding **out, size_t *n_out, hc_err *err);

/* One finding as a sentence, e.g. "position 17's outputs are position 18's (rows swapped in a
 * batch)"; buf returned. */
const char *hc_diag_finding_text(const hc_diag_finding *f, char *buf, size_t len);

/* The findings as one line: "outputs of other positions: F1; F2; F3; and 5 more", at most
 * `shown` of them spelled out; malloc'd, NULL when n is 0 or out of memory. */
char *hc_diag_text(const hc_diag_finding *f, size_t n, size_t shown);

#endif
