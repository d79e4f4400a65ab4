/* halfcheck run SUITE.yaml: the main job. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/cli/cli.h"
#include "harness/config/config.h"
#include "harness/run/runner.h"

static const cli_opt opts[] = {
    {"out", 1, 0, "directory for junit.xml, results.json, report.md, summary.md, report.csv, report.html (default halfcheck-out)", "DIR"},
    {"cache", 1, 0, "reference cache directory (default .halfcheck-cache)", "DIR"},
    {"no-cache", 0, 0, "always recompute the fp32 reference", NULL},
    {"ref", 1, 0, "where the fp32 reference is computed: ref32 (the CPU) or cuda:ref32 (an NVIDIA GPU, the same bits, "
                  "checked on a few positions by the CPU); default: the suite's reference:, else ref32", "SPEC"},
    {"threads", 1, 0, "evaluation threads (default 2)", "N"},
    {"timeout", 1, 0, "seconds without progress before a backend counts as hung (default 600)", "SECONDS"},
    {"seed", 1, 0, "seed of the shuffled batch order (default: the suite's seed:, else 1)", "N"},
    {"only", 1, 1, "run only the cases matching net=NAME,board=NAME,backend=NAME (any subset; see halfcheck cases); "
                   "given several times, a case runs when it matches any", "FILTER"},
    {"allow-skips", 0, 0, "a run that checks nothing, or skips a backend in every case, passes (else exit 4)", NULL},
    {"quiet", 0, 0, "no progress, no per-case lines and no table: only warnings, errors and the final line", NULL},
    {"net", 1, 1, "your model file for the suite's nets: PATH (every net), NAME=PATH (one net) or DIR (matched by file name); drops their sha256 pins (README, \"The main job\")", "PATH|NAME=PATH|DIR"},
    {"repeat", 1, 0, "evaluate every case's positions N times (2..100) in other batch compositions and orders and "
                     "compare the evaluations bit for bit: one more result per case, an error naming the positions "
                     "that differ (docs/CI.md, \"Nondeterminism\"); overrides the suite's repeat:", "N"},
    {"repeat-limit", 1, 0, "with --repeat: differences up to X in every output value pass as \"differs within X\" "
                           "(default 0: any bit fails)", "X"},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

/* Set by SIGINT/SIGTERM; the runner polls it through hc_run_options.stop. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    stop_flag = sig;
}

/* The progress of the case under way: on a terminal one line rewritten in place, elsewhere (a
 * CI log) a line when a case starts and ends and a heartbeat at most every 30 s. */
typedef struct progress_state {
    int tty;
    double start, last_line;
    size_t done;
    char what[512];
} progress_state;

enum { HEARTBEAT_S = 30 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ", 12.3 pos/s" once a rate means something (a second and some positions behind it). */
static const char *rate_text(char *buf, size_t len, size_t done, double elapsed)
{
    buf[0] = '\0';
    if (elapsed >= 1.0 && done > 0)
        snprintf(buf, len, ", %.1f pos/s", (double)done / elapsed);
    return buf;
}

static void progress(void *user, const char *what, size_t done, size_t total)
{
    progress_state *ps = user;
    double t = now_s();
    if (done == 0 || strcmp(ps->what, what) != 0) {
        /* The case starts now: its rate counts from here, not from its first report. */
        snprintf(ps->what, sizeof ps->what, "%s", what);
        ps->start = ps->last_line = t;
        if (!ps->tty)
            fprintf(stderr, "halfcheck run: %s: started, %zu positions\n", what, total);
    }
    ps->done = done;
    double el = t - ps->start;
    char rate[64];
    if (ps->tty) {
        double r = el >= 1.0 && done > 0 ? (double)done / el : 0;
        fprintf(stderr, "\r\033[K%s: %zu/%zu%s", what, done, total, rate_text(rate, sizeof rate, done, el));
        if (r > 0)
            fprintf(stderr, ", ETA %.0fs", (double)(total - done) / r);
    } else if (t - ps->last_line >= HEARTBEAT_S) {
        ps->last_line = t;
        fprintf(stderr, "halfcheck run: %s: %zu/%zu positions after %.0f s%s\n", what, done, total, el,
                rate_text(rate, sizeof rate, done, el));
    }
}

/* A warning of the run (an unusable reference cache), printed even under --quiet: it explains
 * a run slower than it should be. */
static void warn_line(void *user, const char *message)
{
    progress_state *ps = user;
    if (ps && ps->tty)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "halfcheck run: warning: %s\n", message);
}

static const char *verdict_of(const hc_result *r)
{
    if (!r)
        return "done";
    if (r->outcome == HC_OUT_SKIPPED)
        return "skipped";
    if (hc_result_is_error(r))
        return "ERROR";
    for (size_t t = 0; t < r->n_tiers; t++)
        if (r->checks && !r->checks[t].pass)
            return "FAILED";
    return "passed";
}

static void case_end(void *user, const char *what, size_t total, double seconds, const hc_result *r)
{
    progress_state *ps = user;
    char rate[64];
    size_t n = r && r->stats ? r->stats->n_positions : r ? ps->done : total;
    if (ps->tty)
        fprintf(stderr, "\r\033[K");
    if (seconds == HC_RUN_FROM_CACHE) {
        fprintf(stderr, "halfcheck run: %s: %zu positions from the reference cache\n", what, n);
        ps->what[0] = '\0';
        return;
    }
    /* The rate of a whole case means something however short it was. */
    if (n > 0 && seconds > 0)
        snprintf(rate, sizeof rate, ", %.1f pos/s", (double)n / seconds);
    else
        rate[0] = '\0';
    fprintf(stderr, "halfcheck run: %s: %zu positions in %.1f s%s: %s\n", what, n, seconds, rate, verdict_of(r));
    ps->what[0] = '\0';
}

int cmd_run(int argc, char **argv, const struct hc_backend_registry *reg)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"run", opts,
        "usage: halfcheck run SUITE.yaml [options]\n"
        "exit status: 0 every check passed, 1 a tier failed, 2 bad usage, config or input, 3 a backend "
        "crashed, hung, failed or produced non-finite output, 4 nothing checked or a backend skipped in every "
        "case, 130 interrupted\n",
        1, 1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    hc_run_options o = hc_run_options_default();
    o.registry = reg;
    int threads, seed;
    double timeout;
    if (cli_get_int(&a, "threads", 2, &threads, &err) || cli_get_double(&a, "timeout", 600, &timeout, &err) ||
        cli_get_int(&a, "seed", 1, &seed, &err))
        return cli_fail("run", &err);
    if (threads < 1 || threads > 256 || timeout <= 0 || seed < 0) {
        hc_err_set(&err, HC_EUSAGE, "--threads must be 1..256, --timeout positive and --seed not negative");
        return cli_fail("run", &err);
    }
    int repeat;
    double repeat_limit;
    if (cli_get_int(&a, "repeat", 0, &repeat, &err) || cli_get_double(&a, "repeat-limit", 0, &repeat_limit, &err))
        return cli_fail("run", &err);
    if ((cli_has(&a, "repeat") && (repeat < 2 || repeat > 100)) || !(repeat_limit >= 0) ||
        (cli_has(&a, "repeat-limit") && !cli_has(&a, "repeat"))) {
        hc_err_set(&err, HC_EUSAGE, "--repeat must be 2..100, --repeat-limit not negative and given with --repeat");
        return cli_fail("run", &err);
    }
    o.repeat = repeat;
    o.repeat_limit = repeat_limit;
    o.threads = threads;
    o.timeout_s = timeout;
    o.seed = (unsigned)seed;
    o.seed_given = cli_has(&a, "seed");
    o.allow_skips = cli_has(&a, "allow-skips");
    const char *only[CLI_MAX_ONLY];
    int n_only = cli_get_only(&a, only, &err);
    if (n_only < 0)
        return cli_fail("run", &err);
    o.only = only;
    o.n_only = (size_t)n_only;
    o.cache_dir = cli_has(&a, "no-cache") ? NULL : cli_get(&a, "cache", ".halfcheck-cache");
    o.ref_spec = cli_get(&a, "ref", NULL);
    if (o.ref_spec && !hc_run_ref_spec_ok(o.ref_spec)) {
        hc_err_set(&err, HC_EUSAGE, "--ref %s: the reference is ref32 or cuda:ref32 (the same bits on a GPU)", o.ref_spec);
        return cli_fail("run", &err);
    }
    const char *out_dir = cli_get(&a, "out", "halfcheck-out");

    hc_suite *suite = hc_suite_load(a.pos[0], &err);
    if (!suite)
        return cli_fail("run", &err);
    if (cli_apply_nets("run", suite, &a, o.only, o.n_only, &err)) {
        hc_suite_free(suite);
        return cli_fail("run", &err);
    }
    char *command = cli_command_line("run", argc, argv);
    int status = cli_run_suite(suite, &o, &a, command, out_dir);
    free(command);
    hc_suite_free(suite);
    return status;
}

int cli_run_suite(hc_suite *suite, hc_run_options *o, const cli_args *a, const char *command, const char *out_dir)
{
    hc_err err = {0};
    int quiet = cli_has(a, "quiet");
    /* HC_NO_PDEATHSIG=1: the case children without Linux's parent-death signal, so that a test
     * proves the portable lifeline alone ends them (README, "macOS"). */
    const char *npd = getenv("HC_NO_PDEATHSIG");
    o->no_pdeathsig = npd && strcmp(npd, "0") != 0 && *npd;
    progress_state ps = {0};
    ps.tty = isatty(2);
    o->warn = warn_line;
    o->progress_user = &ps;
    if (!quiet) {
        o->progress = progress;
        o->case_end = case_end;
    }
    /* No SA_RESTART: the signal interrupts the runner's poll at once. A SIGINT ignored on entry
     * (a background job of a script) stays ignored, as the shell meant. */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    o->stop = &stop_flag;
    char *rerun_args = cli_rerun_args(a);
    o->rerun_args = rerun_args;
    o->command = command;
    hc_run *run = hc_run_suite(suite, o, &err);
    free(rerun_args);
    o->rerun_args = NULL;
    if (!run)
        return cli_fail("run", &err);
    int interrupted = hc_run_interrupted(run);
    int status = hc_run_status(run);
    if (hc_run_write_reports(run, out_dir, &err)) {
        hc_run_free(run);
        return cli_fail("run", &err);
    }
    if (!quiet && !interrupted)
        cli_show_report(out_dir);
    const hc_results *rs = hc_run_results(run);
    /* Every error and failure with its message, which ends with the command that reruns it. */
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        const char *v = verdict_of(r);
        if (r->outcome == HC_OUT_SKIPPED || !strcmp(v, "passed"))
            continue;
        char buf[400] = "";
        if (r->outcome != HC_OUT_ERROR && hc_result_is_error(r)) {
            hc_result_nonfinite_text(r, buf, sizeof buf);
        } else if (r->outcome != HC_OUT_ERROR) {
            size_t o = 0;
            for (size_t t = 0; t < r->n_tiers && o < sizeof buf; t++)
                if (r->checks && !r->checks[t].pass)
                    o += (size_t)snprintf(buf + o, sizeof buf - o, "%stier %s failed (%d of %d limits)", o ? ", " : "",
                                          r->tiers[t].name, r->checks[t].n_failed, r->checks[t].n_checked);
        }
        const char *what = buf;
        fprintf(stderr, "halfcheck run: %s %s %s %s: %s%s%s\n", r->net, r->board, r->backend, r->mode, what,
                *what && r->message ? "; " : "", r->message ? r->message : *what ? "" : "error");
    }
    hc_check_counts c;
    hc_results_count(rs, &c);
    static const char *const verdicts[] = {"all checks passed", "a tier check failed", "an input failed to load",
                                           "a backend crashed, hung or failed", "nothing was checked"};
    char why[600];
    snprintf(why, sizeof why, "%s", verdicts[status]);
    if (status == 4 && !c.nothing_checked)
        snprintf(why, sizeof why, "backend %s was skipped in every case (--allow-skips lets that pass)",
                 c.skipped_backend ? c.skipped_backend : "?");
    else if (status == 4)
        snprintf(why, sizeof why, "nothing was checked (--allow-skips lets that pass)");
    if (interrupted)
        snprintf(why, sizeof why, "interrupted by %s; reports of the cases that finished",
                 stop_flag == SIGTERM ? "SIGTERM" : "SIGINT");
    size_t ol = strlen(out_dir);
    fprintf(stderr, "halfcheck run: %zu checks: %zu passed, %zu failed, %zu errored, %zu skipped: %s; reports in %s%s\n",
            c.checks, c.passed, c.failed, c.errored, c.skipped, why, out_dir, ol && out_dir[ol - 1] == '/' ? "" : "/");
    hc_run_free(run);
    return interrupted ? HC_EXIT_INTERRUPTED : status;
}
