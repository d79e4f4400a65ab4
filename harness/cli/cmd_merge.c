/* halfcheck merge DIR... --out OUT: a sweep's per-job results folded into one set of reports. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "merge.h"
#include "stream.h"

static const cli_opt opts[] = {
    {"out", 1, 0, "directory for junit.xml, results.json, report.md, report.csv, report.html (required)"},
    {"quiet", 0, 0, "do not print the markdown table"},
    {"help", 0, 0, "this help"},
    {NULL, 0, 0, NULL},
};

int cmd_merge(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    if (cli_parse("merge", argc, argv, opts, &a, &err))
        return cli_fail("merge", &err);
    if (cli_has(&a, "help") || a.n_pos < 1) {
        FILE *f = cli_has(&a, "help") ? stdout : stderr;
        fprintf(f, "usage: halfcheck merge DIR|results.json... --out OUT\n"
                   "exit status: 0 all passed, 1 a tier failed, 3 an error result (crash, hang, load failure), "
                   "2 bad input\n");
        cli_print_options(f, opts);
        return cli_has(&a, "help") ? HC_EXIT_OK : HC_EXIT_USAGE;
    }
    const char *out = cli_require(&a, "out", &err);
    if (!out)
        return cli_fail("merge", &err);
    hc_merge *m = hc_merge_read(a.pos, (size_t)a.n_pos, &err);
    if (!m)
        return cli_fail("merge", &err);
    if (hc_merge_write_reports(m, out, &err)) {
        hc_merge_free(m);
        return cli_fail("merge", &err);
    }
    if (!cli_has(&a, "quiet")) {
        char path[1200];
        snprintf(path, sizeof path, "%s/report.md", out);
        char *md = hc_read_file(path, 64u << 20, NULL, &err);
        if (md) {
            fputs(md, stdout);
            free(md);
        }
    }
    int status = hc_merge_status(m);
    fprintf(stderr, "halfcheck merge: %zu results from %d inputs; reports in %s/\n", hc_merge_results(m)->n, a.n_pos,
            out);
    hc_merge_free(m);
    return status;
}
