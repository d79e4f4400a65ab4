/* A self-contained HTML page of a run (report.html): no script, no stylesheet or font from
 * the network, plots as inline SVG. It shows
 *   - a cross-net summary: per net x backend, the worst (over boards and modes) winrate error
 *     at 99% and max, and whether every tier passed;
 *   - per net: a table per board x backend x mode (buffer and settings, tiers passed/failed,
 *     closest margin, avg/90%/99%/max of winrate, topPolicy, policyKL and ownership), with the
 *     full nine-metric table of each result in a <details> block;
 *   - per net and metric: the error distribution of every board x backend x mode as a CDF on
 *     a log axis in the tables' units (from the stats' quantile sketch, hc_metric_stats.q),
 *     with the tiers' 99% and max limits drawn as vertical lines, labels kept apart; a note
 *     instead of a plot when every error is 0 (e.g. no short-term heads);
 *   - per net and board: heat maps of the mean ownership and policy error per board point
 *     (hc_stats.own_cell, pol_cell), one per backend x mode, each on its own linear colour
 *     scale stated under it;
 *   - per result: its shown positions (hc_result.shown) as Go boards with both top moves, the
 *     ownership difference, rules, komi, symmetry and the commands that rerun them.
 * Reads the results only; written atomically. */
#ifndef HC_HTML_H
#define HC_HTML_H

#include "reports/results.h"

int hc_html_write(const hc_results *rs, const char *path, hc_err *err);

#endif
