/* halfcheck merge DIR... --out OUT: a sweep's per-job results folded into one set of reports. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "harness/cli/cli.h"
#include "harness/run/merge.h"

static const cli_opt opts[] = {
    {"out", 1, 0, "directory for junit.xml, results.json, report.md, summary.md, report.csv, report.html (required)", "DIR"},
    {"allow-skips", 0, 0, "results that check nothing, or skip a backend in every case, pass (else exit 4)", NULL},
    {"quiet", 0, 0, "do not print the markdown table", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_merge(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"merge", opts,
        "usage: halfcheck merge DIR|results.json... --out OUT\n"
        "exit status: 0 all passed, 1 a tier failed, 3 an error result (crash, hang, load failure), "
        "2 bad input, 4 nothing checked or a backend skipped in every case, 130 an input was interrupted\n",
        1, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *out = cli_require(&a, "out", &err);
    if (!out)
        return cli_fail("merge", &err);
    hc_merge *m = hc_merge_read(a.pos, (size_t)a.n_pos, &err);
    if (!m)
        return cli_fail("merge", &err);
    if (cli_has(&a, "allow-skips"))
        hc_merge_allow_skips(m);
    if (hc_merge_write_reports(m, out, &err)) {
        hc_merge_free(m);
        return cli_fail("merge", &err);
    }
    if (!cli_has(&a, "quiet"))
        cli_show_report(out);
    int status = hc_merge_status(m);
    const hc_results *rs = hc_merge_results(m);
    hc_check_counts c;
    hc_results_count(rs, &c);
    static const char *const verdicts[] = {"all checks passed", "a tier check failed", "bad input",
                                           "a backend crashed, hung or failed", "nothing was checked"};
    char why[600];
    snprintf(why, sizeof why, "%s", verdicts[status]);
    if (status == 4)
        snprintf(why, sizeof why, "%s (--allow-skips lets that pass)",
                 c.nothing_checked ? "nothing was checked" : "a backend was skipped in every case");
    if (status == 4 && !c.nothing_checked && c.skipped_backend)
        snprintf(why, sizeof why, "backend %s was skipped in every case (--allow-skips lets that pass)", c.skipped_backend);
    if (rs->interrupted)
        snprintf(why, sizeof why, "an input is of an interrupted run: the results are incomplete");
    fprintf(stderr, "halfcheck merge: %zu results from %d inputs: %zu checks: %zu passed, %zu failed, %zu errored, "
                    "%zu skipped: %s; reports in %s%s\n",
            rs->n, a.n_pos, c.checks, c.passed, c.failed, c.errored, c.skipped, why, out,
            *out && out[strlen(out) - 1] == '/' ? "" : "/");
    int interrupted = rs->interrupted;
    hc_merge_free(m);
    return interrupted ? HC_EXIT_INTERRUPTED : status;
}
