/* halfcheck run SUITE.yaml: the main job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "runner.h"
#include "stream.h"

static const cli_opt opts[] = {
    {"out", 1, 0, "directory for junit.xml, results.json, report.md, report.csv (default halfcheck-out)"},
    {"cache", 1, 0, "reference cache directory (default .halfcheck-cache)"},
    {"no-cache", 0, 0, "always recompute the fp32 reference"},
    {"threads", 1, 0, "evaluation threads (default 2)"},
    {"timeout", 1, 0, "seconds without progress before a backend counts as hung (default 600)"},
    {"seed", 1, 0, "seed of the shuffled batch order (default 1)"},
    {"only", 1, 0, "run only the cases matching net=NAME,board=NAME,backend=NAME (any subset; see halfcheck cases)"},
    {"quiet", 0, 0, "no progress line and no table on stdout"},
    {"net", 1, 1, "your model file for the suite's nets: PATH (every net), NAME=PATH (one net) or DIR (matched by file name); drops their sha256 pins (README, \"Your nets\")"},
    {"help", 0, 0, "this help"},
    {NULL, 0, 0, NULL},
};

typedef struct progress_state {
    double start;
    char what[256];
} progress_state;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(void *user, const char *what, size_t done, size_t total)
{
    progress_state *ps = user;
    if (strcmp(ps->what, what) != 0) {
        snprintf(ps->what, sizeof ps->what, "%s", what);
        ps->start = now_s();
    }
    double el = now_s() - ps->start;
    double rate = el > 0 ? (double)done / el : 0;
    fprintf(stderr, "\r\033[K%s: %zu/%zu, %.0f pos/s, ETA %.0fs", what, done, total, rate,
            rate > 0 ? (double)(total - done) / rate : 0.0);
    if (done == total)
        fprintf(stderr, "\n");
}

int cmd_run(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    if (cli_parse("run", argc, argv, opts, &a, &err))
        return cli_fail("run", &err);
    if (cli_has(&a, "help") || a.n_pos != 1) {
        FILE *f = cli_has(&a, "help") ? stdout : stderr;
        fprintf(f, "usage: halfcheck run SUITE.yaml [options]\n");
        cli_print_options(f, opts);
        return cli_has(&a, "help") ? HC_EXIT_OK : HC_EXIT_USAGE;
    }
    hc_run_options o = hc_run_options_default();
    int threads, seed;
    double timeout;
    if (cli_get_int(&a, "threads", 2, &threads, &err) || cli_get_double(&a, "timeout", 600, &timeout, &err) ||
        cli_get_int(&a, "seed", 1, &seed, &err))
        return cli_fail("run", &err);
    if (threads < 1 || threads > 256 || timeout <= 0) {
        hc_err_set(&err, HC_EUSAGE, "--threads must be 1..256 and --timeout positive");
        return cli_fail("run", &err);
    }
    o.threads = threads;
    o.timeout_s = timeout;
    o.seed = (unsigned)seed;
    o.only = cli_get(&a, "only", NULL);
    o.cache_dir = cli_has(&a, "no-cache") ? NULL : cli_get(&a, "cache", ".halfcheck-cache");
    int quiet = cli_has(&a, "quiet");
    progress_state ps = {0};
    if (!quiet && isatty(2)) {
        o.progress = progress;
        o.progress_user = &ps;
    }
    const char *out_dir = cli_get(&a, "out", "halfcheck-out");

    hc_suite *suite = hc_suite_load(a.pos[0], &err);
    if (!suite)
        return cli_fail("run", &err);
    if (cli_apply_nets("run", suite, &a, o.only, &err)) {
        hc_suite_free(suite);
        return cli_fail("run", &err);
    }
    hc_run *run = hc_run_suite(suite, &o, &err);
    if (!run) {
        hc_suite_free(suite);
        return cli_fail("run", &err);
    }
    int status = hc_run_status(run);
    if (hc_run_write_reports(run, out_dir, &err)) {
        hc_run_free(run);
        hc_suite_free(suite);
        return cli_fail("run", &err);
    }
    if (!quiet) {
        char path[1024];
        snprintf(path, sizeof path, "%s/report.md", out_dir);
        char *md = hc_read_file(path, 64u << 20, NULL, &err);
        if (md) {
            fputs(md, stdout);
            free(md);
        }
    }
    const hc_results *rs = hc_run_results(run);
    size_t errors = 0, skipped = 0;
    for (size_t i = 0; i < rs->n; i++) {
        errors += rs->items[i].outcome == HC_OUT_ERROR || hc_result_is_error(&rs->items[i]);
        skipped += rs->items[i].outcome == HC_OUT_SKIPPED;
    }
    for (size_t i = 0; i < rs->n; i++)
        if (rs->items[i].outcome == HC_OUT_ERROR)
            fprintf(stderr, "halfcheck run: %s %s %s %s: %s\n", rs->items[i].net, rs->items[i].board,
                    rs->items[i].backend, rs->items[i].mode, rs->items[i].message ? rs->items[i].message : "error");
    static const char *const verdicts[] = {"all checks passed", "a tier check failed", "an input failed to load",
                                           "a backend crashed, hung or failed"};
    fprintf(stderr, "halfcheck run: %zu results (%zu errors, %zu skipped): %s; reports in %s/\n", rs->n, errors, skipped,
            verdicts[status], out_dir);
    hc_run_free(run);
    hc_suite_free(suite);
    return status;
}
