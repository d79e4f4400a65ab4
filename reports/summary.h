/* The per-net summary of a run: one row per net and backend, the table a backend pull request
 * pastes (testgpuerror's headline figures per net and mode, the verdict, the engine's memory
 * and speed). Written as summary.md beside the other reports; `halfcheck katago` prints it. */
#ifndef HC_SUMMARY_H
#define HC_SUMMARY_H

#include "harness/base/err.h"
#include "reports/results.h"

/* The summary as Markdown (malloc'd, NUL-terminated), or NULL with err. Per net and backend:
 * model version; winrateError 99% and max, the largest over its boards, unbatched and batched;
 * the verdict (PASS, FAIL, ERROR, skipped; with the count of cases that were not checked); the
 * largest engine peak RSS; positions/s per mode (all its positions over all its evaluation
 * time); the engine's rows per batch in the batched mode, "of" the largest batch it will form,
 * and after the table a note for each row whose batches averaged under half of that
 * (hc_engine_batch_note). Figures that no result has are "-".
 * An interrupted run's table is led by the sentence saying so and naming the cases that
 * finished (hc_results_interrupted_text). A rows-per-batch figure of an engine that formed its
 * own batches (hc_engine_batches_note) is marked †, and a footnote says a rerun may differ. */
char *hc_summary_markdown(const hc_results *rs, hc_err *err);

/* hc_summary_markdown into path (atomically, as every report). */
int hc_summary_write(const hc_results *rs, const char *path, hc_err *err);

#endif
