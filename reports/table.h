/* Tables of a run: markdown, one section per net: a summary table (a row per board x backend x
 * mode: verdicts, closest margin, the headline figures), then in a <details> block the report
 * shaped like testgpuerror's (per board, backend and mode: a verdict line per tier with the closest margin, then the nine metrics as
 * rows with avg / 90% / 99% / max in KataGo's units), ready to paste into a pull request; and
 * CSV, one row per result x tier x metric in raw units (limits divided back to raw units).
 * Both written atomically. */
#ifndef HC_TABLE_H
#define HC_TABLE_H

#include "reports/results.h"

int hc_table_write_markdown(const hc_results *rs, const char *path, hc_err *err);
int hc_table_write_csv(const hc_results *rs, const char *path, hc_err *err);

#endif
