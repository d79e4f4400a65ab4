/* halfcheck merge: several runs' results.json (a sweep's jobs, one case each) folded into one
 * set of results, from which every report is written as if one process had run them all.
 * Results keep the order of the inputs, then their order within each file; the same
 * net x board x backend x mode in two inputs is an error (a stale job directory), as are
 * inputs of different suites or halfcheck versions. */
#ifndef HC_MERGE_H
#define HC_MERGE_H

#include <stddef.h>

#include "harness/base/err.h"
#include "reports/results.h"

typedef struct hc_merge hc_merge;

/* Reads each path: a results.json, or a directory holding one. */
hc_merge *hc_merge_read(const char *const *paths, size_t n, hc_err *err);
/* The merged results (owned by the merge); timestamp: the earliest input's. */
const hc_results *hc_merge_results(const hc_merge *m);
/* 3 if a result is an error (crash, hang, load failure, non-finite), else 1 if a tier
 * failed, else 4 if nothing was checked or a backend was skipped in every result (unless every
 * input allowed skips, or hc_merge_allow_skips), else 0: hc_run_status's order, except that a
 * load failure (2 for a run) reads as 3 here, since results.json does not say which inputs
 * failed to load. The merged results are marked interrupted when an input is. */
int hc_merge_status(const hc_merge *m);
/* Lets skips pass (halfcheck merge --allow-skips); the merged results.json says so. */
void hc_merge_allow_skips(hc_merge *m);
/* junit.xml, results.json, report.md, report.csv and report.html into dir (created if absent),
 * each atomically. */
int hc_merge_write_reports(const hc_merge *m, const char *dir, hc_err *err);
void hc_merge_free(hc_merge *m);

#endif
