/* halfcheck's command line: a table of commands, each a thin call into the library, and the entry
 * main.c (and tests/helper_halfcheck, with the test registry) calls. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "harness/cli/cli.h"

/* fn, or for the commands that open backends by spec (run, eval), fn_reg, given the registry. */
typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
    int (*fn_reg)(int argc, char **argv, const struct hc_backend_registry *reg);
} command;

static const command commands[] = {
    {"demo", cmd_demo, "the embedded default: a synthetic net, random games, ref32 and emulated fp16 checked", NULL},
    {"run", NULL, "run a suite: reference, backends, KataGo's metrics, tiers, reports (the main job)", cmd_run},
    {"katago", cmd_katago, "check a KataGo build on its nets: KataGo's testgpuerror boards through its analysis engine (default) "
                             "or GTP, against the reference", NULL},
    {"eval", NULL, "evaluate positions with a backend, into an outputs file", cmd_eval},
    {"compare", cmd_compare, "KataGo's error statistics between two outputs files, checked against tiers", NULL},
    {"record", cmd_record, "write the positions KataGo's testgpuerror visits in an SGF collection", NULL},
    {"features", cmd_features, "write KataGo's input features (V3-V7) for a positions file", NULL},
    {"selfplay", cmd_selfplay, "write positions from seeded random legal games", NULL},
    {"synth-net", cmd_synth_net, "write a random-weight KataGo model of any version and architecture", NULL},
    {"bisect-precision", cmd_bisect_precision, "the layers a precision profile must run in fp32 to pass a tier, as a profile", NULL},
    {"taps", cmd_taps, "compare two tensor backends layer by layer: per-layer errors, the first divergent layer", NULL},
    {"headroom", cmd_headroom, "per layer, the fp32 reference's largest values and sums against fp16's (or bf16's) range", NULL},
    {"cases", cmd_cases, "list a suite's net x board x backend cases as run --only filters (for ci/sweep)", NULL},
    {"merge", cmd_merge, "fold the results.json of several runs (a sweep's jobs) into one set of reports", NULL},
    {"backends", cmd_backends, "list every backend kind with its spec syntax, and the built-in precision profiles", NULL},
    {"version", cmd_version, "print halfcheck's version (also --version, -V)", NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: halfcheck COMMAND [OPTIONS]   (halfcheck COMMAND --help for its options; halfcheck --version)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-18s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nexit status:\n"
               "  0  every check passed\n"
               "  1  a tier check failed (taps: a divergent layer; bisect-precision: see its --help)\n"
               "  2  bad usage, config or input\n"
               "  3  a backend crashed, hung, failed or produced non-finite output\n"
               "  4  nothing was checked, or a backend was skipped in every case (run, katago, merge; --allow-skips)\n"
               "  130  interrupted (run, katago: the reports hold the cases that finished; merge: an input was)\n");
}

int hc_cli_main(int argc, char **argv, const struct hc_backend_registry *reg)
{
    /* A write past a file-size limit (RLIMIT_FSIZE) must fail with EFBIG, reported with the
     * file's name, rather than kill the process with SIGXFSZ mid-report (backend children
     * inherit this). */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return HC_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return HC_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
        return cmd_version(1, argv + 1);
    enum { N_COMMANDS = sizeof commands / sizeof commands[0] };
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn ? commands[i].fn(argc - 1, argv + 1) : commands[i].fn_reg(argc - 1, argv + 1, reg);
        names[i] = commands[i].name;
    }
    const char *near = cli_suggest(argv[1], strlen(argv[1]), names, N_COMMANDS);
    if (near)
        fprintf(stderr, "halfcheck: unknown command \"%s\"; did you mean \"%s\"?\n\n", argv[1], near);
    else
        fprintf(stderr, "halfcheck: unknown command \"%s\"\n\n", argv[1]);
    usage(stderr);
    return HC_EXIT_USAGE;
}
