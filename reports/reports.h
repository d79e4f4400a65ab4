/* The report set of a run or a merge, written in one place: junit.xml, results.json,
 * report.md, summary.md (per net, reports/summary.h), report.csv and report.html in one directory. */
#ifndef HC_REPORTS_H
#define HC_REPORTS_H

#include "harness/base/err.h"
#include "reports/results.h"

/* Creates dir (and its parents) and writes the five reports of rs into it, each atomically.
 * Returns 0, or -1 with err naming the file that could not be written. */
int hc_reports_write_dir(const hc_results *rs, const char *dir, hc_err *err);

#endif
