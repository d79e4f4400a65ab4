/* Taps of a failing case: a suite backend with `taps: on-failure` is run again on a few of the
 * case's positions beside ref32, layer by layer (harness/run/taps.h), so that results.json and
 * the JUnit failure message name the first divergent layer (docs/TAPS.md). */
#ifndef HC_CASETAPS_H
#define HC_CASETAPS_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "reports/results.h"

typedef struct hc_casetaps_opts {
    const char *spec; /* the case's backend, expanded */
    const hc_net *net;
    const hc_position *ps; /* the case's positions */
    size_t n;
    const hc_eval_settings *settings;
    int max_positions; /* at most this many positions (the worst of each failing metric first) */
    double timeout_s;  /* the child is killed after this long */
} hc_casetaps_opts;

/* Whether r is a failure that taps can explain: checked, with a failing tier or a non-finite
 * figure. */
int hc_casetaps_wanted(const hc_result *r);

/* For such an r: compares the backend with ref32 in a child process (a crash or a hang of the
 * backend costs only the taps), sets *taps (owned by the caller, also set as r->taps; its error
 * says why when no layer could be compared) and puts "first divergent layer: NAME (STAT VALUE,
 * allowed LIMIT; taps of N positions against ref32; K of L layers compared)" in front of *message
 * (the caller's, reallocated; r->message follows). -1 with err only when out of memory. */
int hc_casetaps_attach(hc_result *r, char **message, hc_result_taps **taps, const hc_casetaps_opts *o, hc_err *err);

#endif
