/* The positions report.html draws for a checked result: the worst position of the metric that
 * failed first (or the closest to its limit), and for a failing percentile the position holding
 * that sample, each replayed to its board with both outputs' top moves, the ownership
 * difference and the commands that rerun it. */
#ifndef HC_SHOWN_H
#define HC_SHOWN_H

#include <stddef.h>

#include "harness/config/config.h"
#include "harness/data/nnoutput.h"
#include "harness/go/position.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"

/* The case a capture is for (all borrowed). */
typedef struct hc_shown_case {
    const hc_suite *suite;
    const hc_case *c;
    const char *spec;       /* the backend spec as expanded for the case */
    const char *rerun_case; /* the command that reruns the case ("halfcheck run ... --only ...") */
} hc_shown_case;

/* The shown positions of a checked result over ps[0..n) with reference and test outputs (skip:
 * positions the backend left out, or NULL) and its statistics. Malloc'd array in *out (NULL
 * when none); returns its length. 0 entries on any trouble, which only leaves the report
 * without a board. */
size_t hc_shown_capture(const hc_shown_case *sc, const hc_position *ps, size_t n, const hc_nnoutput *ref,
                        const hc_nnoutput *outs, const unsigned char *skip, const hc_stats *st, hc_shown_pos **out);

#endif
