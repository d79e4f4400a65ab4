/* The command line: one row per command in main.c's table, each a thin call into the library.
 * Only code under harness/cli/ and main.c prints or chooses exit statuses. */
#ifndef HC_CLI_H
#define HC_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "harness/base/err.h"

/* Exit statuses, documented in the README and `halfcheck --help`. */
enum {
    HC_EXIT_OK = 0,        /* every check passed */
    HC_EXIT_FAIL = 1,      /* a threshold failed */
    HC_EXIT_USAGE = 2,     /* bad usage, config or input */
    HC_EXIT_BACKEND = 3,   /* a backend crashed, hung or produced non-finite output */
    HC_EXIT_NOTHING = 4,   /* nothing checked, or a backend skipped in every case (runner.h) */
    HC_EXIT_INTERRUPTED = 130 /* SIGINT or SIGTERM: the reports hold the cases that finished */
};

/* An option a command accepts: "--name value" or "--name=value"; flags take no value. Every
 * command's table has a "help" flag: cli_parse maps -h to it, and a command given it prints its
 * usage and does nothing else. */
typedef struct cli_opt {
    const char *name;  /* without the leading dashes */
    int takes_value;
    int repeatable;
    const char *help;
    const char *meta;  /* what the value is in --help: PATH, N, WxH, SPEC... (NULL: the name upper-cased) */
} cli_opt;

enum { CLI_MAX_ARGS = 64 };

typedef struct cli_args {
    const char *cmd;
    int n;
    const char *key[CLI_MAX_ARGS];
    const char *val[CLI_MAX_ARGS]; /* NULL for flags */
    int n_pos;
    const char *pos[CLI_MAX_ARGS]; /* positional arguments */
} cli_args;

/* Parses argv (after the command name) against opts; an unknown or repeated option (with a
 * "did you mean" when one is close), or a missing value, is an error. -h or --help anywhere
 * (when opts has "help") yields only the help flag, whatever else is there, so that asking
 * for help never runs a command nor fails on the other arguments. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, cli_args *out, hc_err *err);
/* The last value of an option, or def. */
const char *cli_get(const cli_args *a, const char *name, const char *def);
int cli_has(const cli_args *a, const char *name);
/* All values of a repeatable option, in order; returns the count. */
int cli_get_all(const cli_args *a, const char *name, const char **vals, int max);
/* Every --only filter (run and katago; hc_suite_select) into vals, in order: the count, or -1
 * with err when there are more than CLI_MAX_ONLY. */
enum { CLI_MAX_ONLY = 32 };
int cli_get_only(const cli_args *a, const char **vals, hc_err *err);
/* Numeric accessors that fail with a clear message on garbage. */
int cli_get_int(const cli_args *a, const char *name, int def, int *out, hc_err *err);
int cli_get_double(const cli_args *a, const char *name, double def, double *out, hc_err *err);
/* Parses "WxH" (or "N" for N x N), each side within the supported range (sizes.h). */
int cli_parse_size(const char *s, int *w, int *h, hc_err *err);
/* A required option: fills err when absent. */
const char *cli_require(const cli_args *a, const char *name, hc_err *err);

void cli_print_options(FILE *f, const cli_opt *opts);

/* The candidate closest to word by edit distance, when close enough to be a likely typo
 * (at most a third of word's length, at least 1, at most 3); NULL otherwise. */
const char *cli_suggest(const char *word, size_t len, const char *const *cands, int n);

/* Maps an error code to an exit status and prints "halfcheck CMD: message". */
int cli_fail(const char *cmd, const hc_err *err);

/* A command's name, options and usage text, for cli_start. */
typedef struct cli_cmd {
    const char *name;
    const cli_opt *opts;
    const char *usage;    /* printed as is, before the options */
    int min_pos, max_pos; /* how many positional arguments it takes; max_pos < 0: no upper bound */
} cli_cmd;

/* The prologue every command shares: parses argv into *a (an error printed by cli_fail); on --help
 * prints the usage and options on stdout, on a positional count outside [min_pos, max_pos] on
 * stderr. Returns the exit status when the command is done, -1 when it goes on with *a. */
int cli_start(const cli_cmd *c, int argc, char **argv, cli_args *a);

/* Copies DIR/report.md, then DIR/summary.md (the per-net table), to stdout, as run and merge
 * show them after writing their reports; a report that cannot be read is left out silently, the
 * final line saying where the reports are. */
void cli_show_report(const char *dir);

/* --net (repeatable) of run and katago: replaces the suite's nets (hc_suite_replace_nets) and says
 * on stderr which file each net now uses. Then the --only filters (n_only of them, 0: every case)
 * are checked (hc_suite_select) and every net that a selected case needs must exist: a missing
 * one fails with a hint to pass --net, before anything runs. */
struct hc_suite;
int cli_apply_nets(const char *cmd, struct hc_suite *s, const cli_args *a, const char *const *only, size_t n_only,
                   hc_err *err);

/* The options of run's command line that a rerun of one case must repeat (hc_run_options.
 * rerun_args): each --net as given, --timeout, --ref and --allow-skips, shell-quoted; malloc'd,
 * NULL when out of memory. */
char *cli_rerun_args(const cli_args *a);
/* "halfcheck CMD ARG..." with each of argv[1..argc) shell-quoted (argv[0] is the command's
 * name), for the reports' provenance; malloc'd, NULL when out of memory. */
char *cli_command_line(const char *cmd, int argc, char **argv);

/* Commands (one file each under harness/cli/). argv[0] is the command name. */
int cmd_katago(int argc, char **argv);
/* The whole command line: argv[1] names the command. reg: where run and eval look backend specs
 * up (NULL: the user registry; tests/helper_halfcheck gives the test registry). */
struct hc_backend_registry;
int hc_cli_main(int argc, char **argv, const struct hc_backend_registry *reg);
int cmd_eval(int argc, char **argv, const struct hc_backend_registry *reg);
int cmd_run(int argc, char **argv, const struct hc_backend_registry *reg);
/* run's core, which katago shares (katago builds its suite in memory and runs it here): runs
 * suite, loaded or built with its nets in place, under o, which the caller fills from its own
 * options (threads, timeout_s, seed, only, cache_dir, ref_spec, repeat); this adds the rerun
 * options of a (cli_rerun_args), command (the command line, for the provenance), the progress,
 * warning and stop hooks (SIGINT, SIGTERM) and HC_NO_PDEATHSIG. Writes the reports into
 * out_dir, shows them unless a has --quiet, prints every failure and the final line as
 * "halfcheck run: ...", and returns the exit status. The suite stays the caller's. */
struct hc_run_options;
int cli_run_suite(struct hc_suite *suite, struct hc_run_options *o, const cli_args *a, const char *command,
                  const char *out_dir);
int cmd_demo(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_backends(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_synth_net(int argc, char **argv);
int cmd_selfplay(int argc, char **argv);
int cmd_taps(int argc, char **argv);
int cmd_bisect_precision(int argc, char **argv);
int cmd_headroom(int argc, char **argv);
int cmd_cases(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif
