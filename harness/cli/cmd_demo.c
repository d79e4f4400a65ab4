/* halfcheck demo: the embedded default. Needs nothing outside the repository: it writes a
 * synthetic KataGo model (a real .bin.gz, read back by the model reader), records positions of
 * seeded random games on a 9x9 and a 13x13 board, and runs a suite of the fp32 reference and
 * the emulated fp16 backend, unbatched and batched, against KataGo's tiers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/cli/cli.h"
#include "harness/data/selfplay.h"
#include "harness/base/stream.h"
#include "harness/model/synth.h"

static const cli_opt opts[] = {
    {"out", 1, 0, "working directory for the net, positions, suite and reports (default build/demo)", "DIR"},
    {"preset", 1, 0, "synthetic net preset (default b6c96; halfcheck synth-net --list)", "NAME"},
    {"threads", 1, 0, "evaluation threads (default 2)", "N"},
    {"quiet", 0, 0, "no progress line and no table", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

static const char *const suite_yaml =
    "# Written by halfcheck demo: the embedded default suite.\n"
    "name: demo\n"
    "nets:\n"
    "  - {name: synth-%s, model: net.bin.gz, modelVersion: %d,\n"
    "     notes: \"random weights written by halfcheck synth-net; only the arithmetic is meaningful\"}\n"
    "boards:\n"
    "  - {name: selfplay9, positions: selfplay9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 8}\n"
    "  - {name: selfplay13-in-19, positions: selfplay13.jsonl.gz, nnBuffer: 19x19, maxBatchSize: 8}\n"
    "backends:\n"
    "  - {name: ref32-batch-invariance, backend: ref32, tiers: [exact]}\n"
    "  - {name: emulate-fp16, backend: \"emulate:fp16\", tiers: [fp16, fp32]}\n"
    "modes: [unbatched, batched]\n";

int cmd_demo(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"demo", opts,
        "usage: halfcheck demo [options]\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *dir = cli_get(&a, "out", "build/demo");
    int threads;
    if (cli_get_int(&a, "threads", 2, &threads, &err))
        return cli_fail("demo", &err);
    int quiet = cli_has(&a, "quiet");
    char cmd[1200], path[1200], reports[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (strchr(dir, '\'') || system(cmd) != 0) {
        hc_err_set(&err, HC_EIO, "%s: cannot create the demo directory", dir);
        return cli_fail("demo", &err);
    }

    /* 1. A synthetic net, written and (by the runner) read back like any model file. */
    hc_synth_spec spec;
    const char *preset = cli_get(&a, "preset", "b6c96");
    if (hc_synth_preset(preset, &spec, &err))
        return cli_fail("demo", &err);
    snprintf(path, sizeof path, "%s/net.bin.gz", dir);
    if (hc_synth_write(&spec, path, 1, &err))
        return cli_fail("demo", &err);
    fprintf(stderr, "halfcheck demo: wrote %s (synthetic %s, model version %d)\n", path, preset, spec.version);

    /* 2. Positions from seeded random games. */
    const struct {
        int size, games;
        const char *file;
    } sets[] = {{9, 8, "selfplay9.jsonl.gz"}, {13, 4, "selfplay13.jsonl.gz"}};
    for (int i = 0; i < 2; i++) {
        hc_selfplay_opts so;
        hc_selfplay_opts_default(&so);
        so.x_size = so.y_size = sets[i].size;
        so.games = sets[i].games;
        so.seed = 20261122u + (unsigned)i;
        so.stride = 2;
        so.max_positions = 160;
        so.handicap_prob = 0.25;
        snprintf(path, sizeof path, "%s/%s", dir, sets[i].file);
        long n;
        if (hc_selfplay_write(&so, path, &n, &err))
            return cli_fail("demo", &err);
        fprintf(stderr, "halfcheck demo: wrote %s (%ld positions of %d random %dx%d games)\n", path, n, so.games,
                so.x_size, so.y_size);
    }

    /* 3. The suite, then the run. */
    snprintf(path, sizeof path, "%s/demo.yaml", dir);
    hc_ostream *o = hc_ostream_open(path, &err);
    if (!o || hc_ostream_printf(o, &err, suite_yaml, preset, spec.version) || hc_ostream_commit(o, &err)) {
        if (o && err.code != HC_OK)
            return cli_fail("demo", &err);
        return cli_fail("demo", &err);
    }
    /* The same runner, reports, exit status, signals and progress as `halfcheck run`, through its
     * own command line (no cache: the net is new every time). */
    char threads_text[16];
    snprintf(threads_text, sizeof threads_text, "%d", threads);
    snprintf(reports, sizeof reports, "%s/reports", dir);
    char *rargv[] = {"run", path, "--out", reports, "--no-cache", "--threads", threads_text, "--timeout", "300",
                     quiet ? "--quiet" : NULL, NULL};
    return cmd_run(quiet ? 10 : 9, rargv, NULL);
}
