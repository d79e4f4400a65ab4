/* halfcheck katago: check a KataGo build on a net in one command, as `katago testgpuerror` plus
 * rungpuerrortest.sh do, with halfcheck's reference and reports. It writes a suite (the shipped
 * testgpuerror boards, one net, the build as a gtp: backend with the overrides that make its
 * evaluation comparable) into the output directory and runs it with `halfcheck run`. The engine
 * runs in OUT/katago-engine, so that KataGo's relative logDir (gtp_logs/) lands there and not
 * in the user's working directory. */
/* realpath is XSI: POSIX.1-2008 with the X/Open extension (every Unix halfcheck runs on). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "stream.h"

static const cli_opt opts[] = {
    {"katago", 1, 0, "the katago binary to check (a path, or a name found on PATH)", "PATH"},
    {"config", 1, 0, "its GTP config for the backend under test (e.g. its gtp_example.cfg)", "PATH"},
    {"model", 1, 0, "the model file (.bin.gz) KataGo and the reference evaluate", "PATH"},
    {"tier", 1, 1, "tier to check (repeatable): fp16 (default, KataGo's tier for an fp16 backend), fp32 (a build that "
               "runs fp32), fp32-strict (a path that claims fp32), exact (bit for bit)", "TIER"},
    {"out", 1, 0, "directory for the reports, the suite written for the run and KataGo's working directory (default halfcheck-out)", "DIR"},
    {"data", 1, 0, "the repository's suites/ directory (boards/, data/); default: found beside this halfcheck binary", "DIR"},
    {"cache", 1, 0, "reference cache directory (default .halfcheck-cache)", "DIR"},
    {"no-cache", 0, 0, "always recompute the fp32 reference", NULL},
    {"threads", 1, 0, "evaluation threads of the reference (default 2)", "N"},
    {"ref", 1, 0, "where the fp32 reference is computed: ref32 (the CPU, default) or cuda:ref32 (an NVIDIA GPU, the same bits)", "SPEC"},
    {"timeout", 1, 0, "seconds without progress before the engine counts as hung (default 600)", "SECONDS"},
    {"only", 1, 0, "run only the cases matching board=NAME (size9, size13, size19, size10x14, rect, size13-rectbuffer)", "FILTER"},
    {"quiet", 0, 0, "no progress line and no table on stdout", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

/* The shipped testgpuerror boards (suites/boards/), all six board configs of rungpuerrortest.sh. */
static const char *const boards[] = {"size9", "size13", "size19", "size10x14", "rect", "size13-rectbuffer"};

/* Appends s to a YAML double-quoted scalar's body. */
static int yaml_quote(char *out, size_t len, const char *s)
{
    size_t o = strlen(out);
    for (; *s; s++) {
        if (o + 3 >= len)
            return -1;
        if (*s == '"' || *s == '\\')
            out[o++] = '\\';
        out[o++] = *s;
    }
    out[o] = '\0';
    return 0;
}

/* Appends s as one word for the gtp: backend's splitter, which splits as a shell does
 * (hc_shell_word: quoted unless plain, so no $ expansion). -1 when it does not fit. */
static int word_quote(char *out, size_t len, const char *s)
{
    size_t o = strlen(out);
    if (o + 2 >= len)
        return -1;
    out[o++] = ' ';
    size_t w = hc_shell_word(out + o, len - o, s);
    return o + w + 1 >= len ? -1 : 0; /* a word that filled the buffer may have been cut */
}


static int exists(const char *dir, const char *rel)
{
    char p[PATH_MAX];
    struct stat st;
    return snprintf(p, sizeof p, "%s/%s", dir, rel) < (int)sizeof p && stat(p, &st) == 0;
}

/* The repository's suites/ directory: --data, else beside the binary (build/halfcheck or
 * build/rel/halfcheck), else ./suites. prog is the path the program was started by. */
static int find_data(const char *given, const char *prog, char *out, hc_err *err)
{
    const char *probe = "boards/size9.yaml";
    if (given) {
        if (!realpath(given, out) || !exists(out, probe))
            return hc_err_set(err, HC_EUSAGE, "--data %s: not the repository's suites/ directory (no %s there)", given,
                              probe);
        return 0;
    }
    char exe[PATH_MAX] = "";
    if (prog && strchr(prog, '/')) {
        snprintf(exe, sizeof exe, "%s", prog);
    } else if (prog) {
        const char *path = getenv("PATH");
        for (const char *p = path; p && *p && !exe[0];) {
            const char *end = strchr(p, ':');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char cand[PATH_MAX];
            if (snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", prog) < (int)sizeof cand &&
                access(cand, X_OK) == 0)
                snprintf(exe, sizeof exe, "%s", cand);
            p = end ? end + 1 : NULL;
        }
    }
    char real[PATH_MAX];
    if (exe[0] && realpath(exe, real)) {
        char *slash = strrchr(real, '/');
        if (slash)
            *slash = '\0';
        static const char *const ups[] = {"/../suites", "/../../suites"};
        for (size_t i = 0; i < 2; i++) {
            char cand[PATH_MAX];
            if (snprintf(cand, sizeof cand, "%s%s", real, ups[i]) < (int)sizeof cand && exists(cand, probe) &&
                realpath(cand, out))
                return 0;
        }
    }
    if (exists("suites", probe) && realpath("suites", out))
        return 0;
    return hc_err_set(err, HC_EUSAGE,
                      "cannot find the shipped boards (suites/boards, suites/data) beside this halfcheck; pass --data "
                      "DIR, the repository's suites/ directory");
}

/* A net name from the model's file name: the part before ".bin.gz" / ".txt.gz" / ".gz". */
static void net_name(const char *model, char *out, size_t len)
{
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    snprintf(out, len, "%s", base);
    static const char *const exts[] = {".bin.gz", ".txt.gz", ".gz", ".bin", ".txt"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t n = strlen(out), e = strlen(exts[i]);
        if (n > e && strcmp(out + n - e, exts[i]) == 0) {
            out[n - e] = '\0';
            break;
        }
    }
    for (char *p = out; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_' || *p == '.'))
            *p = '_';
    if (!out[0])
        snprintf(out, len, "model");
}

/* The backend spec: the engine started in workdir through sh (the gtp: backend runs no shell
 * itself), with kata-raw-nn only, one thread, batch 1, no log on stderr, and the board config's
 * NN buffer (KataGo's GTP engine otherwise sizes it to each board, and outputs depend on it:
 * docs/GTP.md). */
static int build_spec(char *spec, size_t len, const char *workdir, const char *katago, const char *config)
{
    snprintf(spec, len, "gtp:@timeout=120 @startup-timeout=900 sh -c 'cd \"$0\" && exec \"$@\"'");
    if (word_quote(spec, len, workdir) || word_quote(spec, len, katago))
        return -1;
    size_t o = strlen(spec);
    /* {model}: the suite's net file, so that `halfcheck run katago-suite.yaml --net OTHER` has
     * KataGo evaluate the file the reference evaluates. Single quotes: the splitter expands no
     * $ inside them (a path holding a single quote is refused by the caller). */
    if (snprintf(spec + o, len - o, " gtp -model '{model}'") >= (int)(len - o))
        return -1;
    o = strlen(spec);
    if (snprintf(spec + o, len - o, " -config") >= (int)(len - o) || word_quote(spec, len, config))
        return -1;
    o = strlen(spec);
    int n = snprintf(spec + o, len - o,
                     " -override-config numSearchThreads=1,nnMaxBatchSize=1,logToStderr=false,"
                     "logAllGTPCommunication=false,ponderingEnabled=false,gtpForceMaxNNSize=true,"
                     "maxBoardXSizeForNNBuffer={nnX},maxBoardYSizeForNNBuffer={nnY},requireMaxBoardSize=false");
    return n < (int)(len - o) ? 0 : -1;
}

static int write_suite(const char *path, const char *data, const char *name, const char *model, const char *spec,
                       const char *const *tiers, int n_tiers, hc_err *err)
{
    char buf[8192] = "";
    size_t o;
#define ADD(...) (o = strlen(buf), snprintf(buf + o, sizeof buf - o, __VA_ARGS__) >= (int)(sizeof buf - o))
    int bad = ADD("# Written by halfcheck katago: KataGo's testgpuerror boards evaluated by a KataGo build over GTP\n"
                  "# (kata-raw-nn) against halfcheck's fp32 reference. Rerun: halfcheck run %s\n"
                  "name: katago\nnets:\n  - {name: \"", path);
    bad = bad || yaml_quote(buf, sizeof buf, name) || ADD("\", model: \"") || yaml_quote(buf, sizeof buf, model) ||
          ADD("\"}\nboards:\n");
    for (size_t i = 0; !bad && i < sizeof boards / sizeof boards[0]; i++)
        bad = ADD("  - \"") || yaml_quote(buf, sizeof buf, data) || ADD("/boards/%s.yaml\"\n", boards[i]);
    bad = bad || ADD("backends:\n  - name: katago\n    backend: \"") || yaml_quote(buf, sizeof buf, spec) ||
          ADD("\"\n    tiers: [");
    for (int i = 0; !bad && i < n_tiers; i++)
        bad = ADD("%s\"", i ? ", " : "") || yaml_quote(buf, sizeof buf, tiers[i]) || ADD("\"");
    bad = bad || ADD("]\nmodes: [unbatched]\n");
#undef ADD
    if (bad)
        return hc_err_set(err, HC_EUSAGE, "%s: the suite is too long (paths too long?)", path);
    hc_ostream *os = hc_ostream_open(path, err);
    if (!os)
        return -1;
    if (hc_ostream_write(os, buf, strlen(buf), err) || hc_ostream_commit(os, err)) {
        hc_ostream_abort(os);
        return -1;
    }
    return 0;
}

int cmd_katago(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"katago", opts,
        "usage: halfcheck katago --katago PATH --config CFG --model NET [--out DIR] [--tier fp16|fp32] "
        "[options]\n\nChecks a KataGo build on a net over KataGo's testgpuerror boards (all positions, "
        "unbatched): kata-raw-nn's outputs against halfcheck's fp32 reference, reports in --out.\n\n",
        0, 0};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *katago = cli_require(&a, "katago", &err), *config = katago ? cli_require(&a, "config", &err) : NULL,
               *model = config ? cli_require(&a, "model", &err) : NULL;
    if (!model)
        return cli_fail("katago", &err);
    const char *out = cli_get(&a, "out", "halfcheck-out");

    /* Absolute paths: the engine runs in another directory. A bare name stays one (PATH). */
    char k_abs[PATH_MAX], c_abs[PATH_MAX], m_abs[PATH_MAX], o_abs[PATH_MAX], data[PATH_MAX];
    if (strchr(katago, '/')) {
        if (!realpath(katago, k_abs) || access(k_abs, X_OK) != 0) {
            hc_err_set(&err, HC_EUSAGE, "--katago %s: %s", katago, errno ? strerror(errno) : "not executable");
            return cli_fail("katago", &err);
        }
    } else
        snprintf(k_abs, sizeof k_abs, "%s", katago);
    if (!realpath(config, c_abs)) {
        hc_err_set(&err, HC_EUSAGE, "--config %s: %s", config, strerror(errno));
        return cli_fail("katago", &err);
    }
    if (!realpath(model, m_abs)) {
        hc_err_set(&err, HC_EUSAGE, "--model %s: %s", model, strerror(errno));
        return cli_fail("katago", &err);
    }
    /* main passes argv + 1: argv[-1] is the path this program was started by. */
    if (find_data(cli_get(&a, "data", NULL), argv[-1], data, &err))
        return cli_fail("katago", &err);
    char workdir[PATH_MAX + 32], suite[PATH_MAX + 32];
    if (hc_mkdir_p(out, &err) || !realpath(out, o_abs)) {
        if (!err.msg[0])
            hc_err_set(&err, HC_EIO, "--out %s: %s", out, strerror(errno));
        return cli_fail("katago", &err);
    }
    snprintf(workdir, sizeof workdir, "%s/katago-engine", o_abs);
    snprintf(suite, sizeof suite, "%s/katago-suite.yaml", o_abs);
    if (hc_mkdir_p(workdir, &err))
        return cli_fail("katago", &err);

    const char *tiers[8];
    int n_tiers = cli_get_all(&a, "tier", tiers, 8);
    if (n_tiers > 8) {
        hc_err_set(&err, HC_EUSAGE, "at most 8 --tier options");
        return cli_fail("katago", &err);
    }
    if (n_tiers == 0) {
        tiers[0] = "fp16";
        n_tiers = 1;
    }
    char name[256], spec[8192];
    net_name(m_abs, name, sizeof name);
    if (strchr(m_abs, '\'') || build_spec(spec, sizeof spec, workdir, k_abs, c_abs)) {
        hc_err_set(&err, HC_EUSAGE, "the engine's command line is too long (paths too long?), or the model's path holds a single quote");
        return cli_fail("katago", &err);
    }
    if (write_suite(suite, data, name, m_abs, spec, tiers, n_tiers, &err))
        return cli_fail("katago", &err);
    fprintf(stderr, "halfcheck katago: suite %s (rerun: halfcheck run %s); KataGo runs in %s/\n", suite, suite,
            workdir);

    /* The same runner and reports as `halfcheck run`, through its own command line. */
    static const char *const fwd[][2] = {{"cache", "--cache"}, {"threads", "--threads"}, {"timeout", "--timeout"},
                                         {"only", "--only"}, {"ref", "--ref"}};
    char *rargv[32];
    int rn = 0;
    rargv[rn++] = "run";
    rargv[rn++] = suite;
    rargv[rn++] = "--out";
    rargv[rn++] = o_abs;
    for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
        const char *v = cli_get(&a, fwd[i][0], NULL);
        if (v) {
            rargv[rn++] = (char *)fwd[i][1];
            rargv[rn++] = (char *)v;
        }
    }
    if (cli_has(&a, "no-cache"))
        rargv[rn++] = "--no-cache";
    if (cli_has(&a, "quiet"))
        rargv[rn++] = "--quiet";
    rargv[rn] = NULL;
    char *command = cli_command_line("katago", argc, argv);
    int rc = cmd_run_as(rn, rargv, command);
    free(command);
    return rc;
}
