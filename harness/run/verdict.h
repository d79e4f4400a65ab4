/* The verdict of one backend case: what its child brought back (hc_isolate_run's status,
 * message, outputs and side file) turned into the outcome the reports show: skipped (every
 * position refused, or the backend cannot take the case), an error (naming the backend), or
 * checked (KataGo's statistics against the reference, the positions report.html draws, and
 * whose outputs a failing case holds); a batched case whose engine did not batch is no
 * batched check (hc_engine_batched_check, reports/results.h). */
#ifndef HC_VERDICT_H
#define HC_VERDICT_H

#include <stddef.h>

#include "harness/data/nnoutput.h"
#include "harness/go/position.h"
#include "harness/metrics/diagnose.h"
#include "harness/metrics/stats.h"
#include "harness/run/isolate.h"
#include "harness/run/shown.h"
#include "reports/results.h"

/* The case and what it was checked against (all borrowed). */
typedef struct hc_verdict_case {
    int mode;                   /* HC_MODE_UNBATCHED or HC_MODE_BATCHED */
    const char *spec;           /* the backend spec as expanded for the case */
    const hc_position *ps;
    size_t n;
    const hc_nnoutput *ref;     /* the reference's outputs of ps */
    const size_t *order;        /* the evaluation order (NULL: index order) ... */
    int batch;                  /* ... in batches of this many positions */
    const hc_shown_case *shown; /* for the positions report.html draws */
} hc_verdict_case;

/* A verdict; every pointer malloc'd (or NULL) and owned by it until adopted. */
typedef struct hc_verdict_result {
    int outcome;                /* HC_OUT_* */
    char *message;              /* the error or skip reason; NULL when checked */
    hc_stats *stats;            /* checked, and a batched case that is an error */
    int backend_error;          /* the backend failed (the run's exit status 3) */
    int has_engine;             /* engine: what an external engine cost */
    hc_engine_stats engine;
    size_t n_skipped;           /* checked: positions the backend could not express, ... */
    char *skip_message;         /* ... and their description */
    size_t n_shown;             /* checked: the positions report.html draws */
    hc_shown_pos *shown;
    size_t n_diag;              /* checked: whose outputs these are, for when the case fails a tier */
    hc_diag_finding *diag;
} hc_verdict_result;

/* The verdict of case vc from hc_isolate_run's rc and message, its outputs and its side file
 * (all adopted: outs, message and side's buffers are freed or moved into v; the engine's
 * identity, side->engine, is freed: take it first). Never fails: what cannot be allocated is
 * left out. */
void hc_verdict_of(const hc_verdict_case *vc, int rc, char *message, hc_nnoutput *outs, hc_isolate_side *side,
                   hc_verdict_result *v);

#endif
