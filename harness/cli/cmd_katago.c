/* halfcheck katago: check a KataGo build on its nets in one command, as `katago testgpuerror` plus
 * rungpuerrortest.sh do, with halfcheck's reference and reports. It builds a suite in memory
 * (harness/config/katago), writes it into the output directory for reruns (hc_suite_write) and
 * runs it through run's core (cli_run_suite), as `halfcheck run` would: every net given (--model, repeatable, or a
 * directory, whose nets are told from its other files by their header) with the boards and
 * settings rungpuerrortest.sh gives a net of its family (suites/katago/families.yaml, chosen by
 * model version), the build as an analysis: backend
 * (KataGo's JSON analysis engine: unbatched and batched, docs/ANALYSIS.md) and/or a gtp:
 * backend (kata-raw-nn, docs/GTP.md). The engine runs in OUT/katago-engine, so that KataGo's
 * relative logDir lands there and not in the user's working directory. The reports include
 * summary.md, the per-net table, which it also prints. Every mistake of the command line that can
 * be known before the run (an option's value, a config for the other engine, a file that is no
 * model, an --only that names no case) is refused before --out is created. */
/* realpath is XSI: POSIX.1-2008 with the X/Open extension (every Unix halfcheck runs on). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include "harness/cli/cli.h"
#include "harness/base/files.h"
#include "harness/config/config.h"
#include "harness/config/katago.h"
#include "harness/model/model.h"
#include "harness/run/runner.h"
#include "harness/base/stream.h"
#include "harness/base/suggest.h"
#include "harness/metrics/tiers.h"

static const cli_opt opts[] = {
    {"katago", 1, 0, "the katago binary to check (a path, or a name found on PATH)", "PATH"},
    {"config", 1, 0, "its config for the backend under test: for --path analysis its analysis_example.cfg (or one like it), for gtp and both its gtp_example.cfg", "PATH"},
    {"override", 1, 0, "extra KataGo config overrides for every engine, KEY=VALUE,... (e.g. numEigenThreadsPerModel=1), passed as one more -override-config", "KEY=VALUE,..."},
    {"analysis-config", 1, 0, "the analysis engine's config with --path both (default --config)", "PATH"},
    {"model", 1, 1, "a model file (.bin.gz, .txt.gz) KataGo and the reference evaluate, or a directory such as KataGo's "
                    "cpp/tests/models: every file in it whose start is a KataGo model's header (by content, whatever its "
                    "name), a net there as both .bin.gz and .txt.gz checked once (from the .bin.gz); the other files are "
                    "listed as skipped, subdirectories are not searched", "PATH"},
    {"path", 1, 0, "which of KataGo's paths: analysis (its JSON analysis engine, unbatched and batched; default), gtp (kata-raw-nn, one position at a time) or both", "analysis|gtp|both"},
    {"tier", 1, 1, "tier to check (repeatable): fp16 (default, KataGo's tier for an fp16 backend), fp32 (a build that "
               "runs fp32), fp32-strict (a path that claims fp32), exact (bit for bit)", "TIER"},
    {"out", 1, 0, "directory for the reports, the suite written for the run and KataGo's working directory (default halfcheck-out)", "DIR"},
    {"data", 1, 0, "the repository's suites/ directory (boards/, data/); default: found beside this halfcheck binary", "DIR"},
    {"cache", 1, 0, "reference cache directory (default .halfcheck-cache)", "DIR"},
    {"no-cache", 0, 0, "always recompute the fp32 reference", NULL},
    {"threads", 1, 0, "evaluation threads of the reference (default 2)", "N"},
    {"ref", 1, 0, "where the fp32 reference is computed: ref32 (the CPU, default) or cuda:ref32 (an NVIDIA GPU, the same bits)", "SPEC"},
    {"timeout", 1, 0, "seconds without progress before the engine counts as hung (default 600)", "SECONDS"},
    {"only", 1, 1, "run only the cases matching net=NAME,board=NAME,backend=katago-analysis|katago-gtp (boards: "
                   "suites/katago/families.yaml); given several times, a case runs when it matches any", "FILTER"},
    {"repeat", 1, 0, "evaluate every case's positions N times (2..100), each time in a fresh engine process, in other "
                     "batch compositions and orders, and name the positions whose outputs differ (docs/CI.md, "
                     "\"Nondeterminism\")", "N"},
    {"repeat-limit", 1, 0, "with --repeat: differences up to X pass as \"differs within X\" (default 0)", "X"},
    {"quiet", 0, 0, "no progress line and no table on stdout", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

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

/* name without its model extension (.bin.gz, .txt.gz, .gz, .bin, .txt), into out. */
static void stem(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s", name);
    static const char *const exts[] = {".bin.gz", ".txt.gz", ".gz", ".bin", ".txt"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t n = strlen(out), e = strlen(exts[i]);
        if (n > e && strcmp(out + n - e, exts[i]) == 0) {
            out[n - e] = '\0';
            return;
        }
    }
}

/* A net name from the model's file name: the part before ".bin.gz" / ".txt.gz" / ".gz". */
static void net_name(const char *model, char *out, size_t len)
{
    const char *base = strrchr(model, '/');
    stem(base ? base + 1 : model, out, len);
    for (char *p = out; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_' || *p == '.'))
            *p = '_';
    if (!out[0])
        snprintf(out, len, "model");
}

/* --- the nets and their families ------------------------------------------------------------- */

enum { MAX_NETS = 64 };

typedef struct knet {
    char path[PATH_MAX];
    char name[256];
    int version;      /* from the file's header (hc_model_sniff_file) */
} knet;

/* A model file name's rank among the encodings of one net: binary floats before text (smaller and
 * faster to read), gzip'd before plain; other names last. */
static int ext_rank(const char *name)
{
    static const char *const exts[] = {".bin.gz", ".bin", ".txt.gz", ".txt"};
    size_t n = strlen(name);
    for (int i = 0; i < 4; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return i;
    }
    return 4;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the net at path (absolute); its name from its file name, made unique. */
static int add_net(knet *nets, int *n, const char *path, int version, hc_err *err)
{
    if (*n >= MAX_NETS)
        return hc_err_set(err, HC_EUSAGE, "more than %d nets", MAX_NETS);
    knet *k = &nets[*n];
    memset(k, 0, sizeof *k);
    if (!realpath(path, k->path))
        return hc_err_set(err, HC_EUSAGE, "--model %s: %s", path, strerror(errno));
    if (strchr(k->path, '\''))
        return hc_err_set(err, HC_EUSAGE, "--model %s: a path holding a single quote (the engine's command line "
                          "quotes the net's path with single quotes)", path);
    for (int i = 0; i < *n; i++)
        if (strcmp(nets[i].path, k->path) == 0)
            return 0; /* given twice */
    k->version = version;
    net_name(k->path, k->name, sizeof k->name);
    for (int dup = 2, clash = 1; clash; dup++) {
        clash = 0;
        for (int i = 0; i < *n; i++)
            clash |= strcmp(nets[i].name, k->name) == 0;
        if (clash) {
            char base[240];
            net_name(k->path, base, sizeof base);
            snprintf(k->name, sizeof k->name, "%s-%d", base, dup);
        }
    }
    (*n)++;
    return 0;
}

/* One entry of a --model directory. */
typedef struct dentry {
    char *name;
    hc_model_sniff sn;
    int is_dir;
    char why[300];    /* why it is skipped ("" : it is a net to check) */
} dentry;

/* --model PATH: a model file, or a directory in which every regular file is sniffed
 * (hc_model_sniff_file): those that start as a model does are nets, in name order; a net found
 * in several encodings (X.bin.gz and X.txt.gz with the same name and version in their header) is
 * checked once, from the file ext_rank prefers; every other entry but dot files is said on stderr
 * with why it is skipped. A directory with no net is an error listing what it holds. */
static int add_model_arg(knet *nets, int *n, const char *arg, hc_err *err)
{
    struct stat st;
    if (stat(arg, &st) != 0)
        return hc_err_set(err, HC_EUSAGE, "--model %s: %s", arg, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        hc_model_sniff sn;
        if (hc_model_sniff_file(arg, &sn, err))
            return hc_err_prefix(err, "--model: ");
        if (!sn.is_model)
            return hc_err_set(err, HC_EUSAGE, "--model %s: %s", arg, sn.why);
        return add_net(nets, n, arg, sn.version, err);
    }
    DIR *dir = opendir(arg);
    if (!dir)
        return hc_err_set(err, HC_EUSAGE, "--model %s: %s", arg, strerror(errno));
    enum { MAX_ENTRIES = 4096 };
    char **names = malloc(MAX_ENTRIES * sizeof *names);
    dentry *es = NULL;
    int k = 0, rc = 0;
    struct dirent *de;
    while (names && (de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ., .., and dot files (.DS_Store and the like): never nets, not listed */
        if (k == MAX_ENTRIES) {
            rc = hc_err_set(err, HC_EUSAGE, "--model %s: more than %d entries", arg, MAX_ENTRIES);
            break;
        }
        if (!(names[k] = strdup(de->d_name))) {
            rc = hc_err_set(err, HC_ENOMEM, "out of memory");
            break;
        }
        k++;
    }
    closedir(dir);
    if (!names || (rc == 0 && !(es = calloc(k ? (size_t)k : 1, sizeof *es))))
        rc = hc_err_set(err, HC_ENOMEM, "out of memory");
    if (rc == 0)
        qsort(names, (size_t)k, sizeof names[0], cmp_str);
    const char *sep = arg[0] && arg[strlen(arg) - 1] == '/' ? "" : "/";
    int n_models = 0;
    for (int i = 0; i < k && rc == 0; i++) {
        dentry *e = &es[i];
        e->name = names[i];
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s%s%s", arg, sep, e->name) >= (int)sizeof p) {
            snprintf(e->why, sizeof e->why, "a path too long");
            continue;
        }
        hc_err serr = {0};
        if (stat(p, &st) != 0)
            snprintf(e->why, sizeof e->why, "cannot be read: %s", strerror(errno));
        else if (S_ISDIR(st.st_mode))
            e->is_dir = 1, snprintf(e->why, sizeof e->why, "a directory (not searched)");
        else if (!S_ISREG(st.st_mode))
            snprintf(e->why, sizeof e->why, "not a regular file");
        else if (hc_model_sniff_file(p, &e->sn, &serr))
            snprintf(e->why, sizeof e->why, "cannot be read: %s", serr.msg);
        else if (!e->sn.is_model)
            snprintf(e->why, sizeof e->why, "%s", e->sn.why);
        else
            n_models++;
    }
    /* One net in several encodings: the same stem and the same header name and version. */
    for (int i = 0; i < k && rc == 0; i++) {
        if (es[i].why[0])
            continue;
        char si[1024];
        stem(es[i].name, si, sizeof si);
        for (int j = 0; j < k; j++) {
            char sj[1024];
            if (j == i || es[j].why[0])
                continue;
            stem(es[j].name, sj, sizeof sj);
            if (strcmp(si, sj) || strcmp(es[i].sn.name, es[j].sn.name) || es[i].sn.version != es[j].sn.version)
                continue;
            int ri = ext_rank(es[i].name), rj = ext_rank(es[j].name);
            if (rj < ri || (rj == ri && j < i)) {
                snprintf(es[i].why, sizeof es[i].why, "the same net as %s (model %s, version %d in both headers): "
                         "checked once, from %s", es[j].name, es[j].sn.name, es[j].sn.version, es[j].name);
                n_models--;
                break;
            }
        }
    }
    for (int i = 0; i < k && rc == 0; i++)
        if (es[i].why[0])
            fprintf(stderr, "halfcheck katago: --model %s: skipped %s%s: %s\n", arg, es[i].name, es[i].is_dir ? "/" : "",
                    es[i].why);
    if (rc == 0 && n_models == 0) {
        char list[1500] = "";
        size_t o = 0;
        for (int i = 0; i < k && o < sizeof list; i++) {
            const char *w = es[i].why;
            const char *colon = strchr(w, ':');
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s%s (%.*s)", i ? ", " : "", es[i].name,
                                  es[i].is_dir ? "/" : "", colon ? (int)(colon - w) : (int)strlen(w), w);
        }
        rc = k ? hc_err_set(err, HC_EUSAGE, "--model %s: no KataGo model in this directory; it holds %s", arg, list)
               : hc_err_set(err, HC_EUSAGE, "--model %s: an empty directory, no KataGo model in it", arg);
    }
    for (int i = 0; i < k && rc == 0; i++) {
        char p[PATH_MAX];
        if (es[i].why[0])
            continue;
        snprintf(p, sizeof p, "%s%s%s", arg, sep, es[i].name);
        rc = add_net(nets, n, p, es[i].sn.version, err);
    }
    for (int i = 0; i < k; i++)
        free(names[i]);
    free(names);
    free(es);
    return rc;
}

/* --- KataGo's config ------------------------------------------------------------------------- */

/* Whether KataGo's config at path sets key: its "key = value" lines, '#' starting a comment
 * (KataGo's ConfigParser); "@include" lines and their files are not followed. */
static int cfg_sets(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *hash = memchr(p, '#', n);
        if (hash)
            n = (size_t)(hash - p);
        while (n && (*p == ' ' || *p == '\t'))
            p++, n--;
        if (n > kl && strncmp(p, key, kl) == 0) {
            const char *q = p + kl;
            while (q < p + n && (*q == ' ' || *q == '\t'))
                q++;
            if (q < p + n && *q == '=')
                return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Refuses a config that the engine it is given to cannot run under halfcheck's overrides, in
 * halfcheck's words, before any engine starts: KataGo's analysis engine takes numSearchThreads
 * as numSearchThreadsPerAnalysisThread, which halfcheck sets, and dies when both are given (a GTP
 * config such as gtp_example.cfg); a config with the analysis engine's keys (numAnalysisThreads,
 * numSearchThreadsPerAnalysisThread) is no GTP config. file is read; path, as given, and opt (the
 * option it came from) name it. */
static int check_cfg(const char *file, const char *path, const char *opt, int for_analysis, const char *path_kind,
                     hc_err *err)
{
    size_t len;
    char *text = hc_read_file(file, 1 << 22, &len, err);
    if (!text)
        return hc_err_prefix(err, "%s: ", opt);
    const char *akey = cfg_sets(text, "numAnalysisThreads")                  ? "numAnalysisThreads"
                       : cfg_sets(text, "numSearchThreadsPerAnalysisThread") ? "numSearchThreadsPerAnalysisThread"
                                                                             : NULL;
    int gtp = cfg_sets(text, "numSearchThreads");
    free(text);
    int both = !strcmp(path_kind, "both");
    if (for_analysis && gtp && !akey)
        return hc_err_set(err, HC_EUSAGE, "%s %s: a GTP config (it sets numSearchThreads), but %s needs an analysis "
                          "config such as analysis_example.cfg (%s)", opt, path,
                          both ? "the analysis engine of --path both" : "--path analysis",
                          both ? "pass it with --analysis-config" : "or pass --path gtp");
    if (for_analysis && gtp)
        return hc_err_set(err, HC_EUSAGE, "%s %s: sets numSearchThreads beside %s; KataGo's analysis engine reads it as "
                          "numSearchThreadsPerAnalysisThread, which halfcheck sets, and refuses both: remove "
                          "numSearchThreads", opt, path, akey);
    if (!for_analysis && akey && !gtp)
        return hc_err_set(err, HC_EUSAGE, "%s %s: an analysis config (it sets %s), but %s needs a GTP config such as "
                          "gtp_example.cfg (%s)", opt, path, akey, both ? "the GTP engine of --path both" : "--path gtp",
                          both ? "and the analysis config with --analysis-config" : "or pass --path analysis");
    return 0;
}

/* --tier: the built-in tiers only (the written suite defines none). */
static int check_tiers(const char *const *tiers, int n, hc_err *err)
{
    int nb = 0;
    while (hc_tier_builtin_names[nb])
        nb++;
    for (int i = 0; i < n; i++) {
        hc_tier t;
        if (hc_tier_builtin(tiers[i], &t, NULL) == 0)
            continue;
        char hint[128], list[200] = "";
        hc_suggest_text(hint, sizeof hint, tiers[i], strlen(tiers[i]), hc_tier_builtin_names, nb);
        for (int k = 0, o = 0; k < nb && o < (int)sizeof list; k++)
            o += snprintf(list + o, sizeof list - (size_t)o, "%s%s", k ? ", " : "", hc_tier_builtin_names[k]);
        return hc_err_set(err, HC_EUSAGE, "--tier: unknown tier \"%s\"%s; the tiers: %s", tiers[i], hint, list);
    }
    return 0;
}

/* --- the suite ------------------------------------------------------------------------------- */

/* " --only F ... --timeout T --ref R" (shell-quoted): what a rerun of the whole suite repeats
 * beyond the suite, into out; -1 when it does not fit. */
static int rerun_tail(const cli_args *a, char *out, size_t len)
{
    static const char *const keys[] = {"only", "timeout", "ref", "repeat", "repeat-limit"};
    size_t o = 0;
    out[0] = '\0';
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (int i = 0; i < a->n; i++) {
            if (strcmp(a->key[i], keys[k]) != 0)
                continue;
            int w = snprintf(out + o, len - o, " --%s ", keys[k]);
            if (w < 0 || (size_t)w >= len - o)
                return -1;
            o += (size_t)w;
            o += hc_shell_word(out + o, len - o, a->val[i]);
            if (o + 1 >= len)
                return -1;
        }
    return 0;
}

int cmd_katago(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"katago", opts,
        "usage: halfcheck katago --katago PATH --config CFG --model NET|DIR [--model ...] [--path analysis|gtp|both] "
        "[--out DIR] [--tier fp16|fp32] [--only FILTER ...] [options]\n\nChecks a KataGo build on its nets over KataGo's "
        "testgpuerror boards, as rungpuerrortest.sh gives them to a net of each family: the engine's outputs against "
        "halfcheck's fp32 reference, unbatched and batched (analysis path), reports and the per-net summary.md in "
        "--out. Every mistake of the command line (an option's value, a config for the other path, a file that is no "
        "model, an --only naming no case) stops it with exit status 2 before anything is written or started.\n\n",
        0, 0};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *katago = cli_require(&a, "katago", &err), *config = katago ? cli_require(&a, "config", &err) : NULL,
               *model = config ? cli_require(&a, "model", &err) : NULL;
    if (!model)
        return cli_fail("katago", &err);
    const char *out = cli_get(&a, "out", "halfcheck-out");
    const char *path_kind = cli_get(&a, "path", "analysis");
    int use_analysis = !strcmp(path_kind, "analysis") || !strcmp(path_kind, "both");
    int use_gtp = !strcmp(path_kind, "gtp") || !strcmp(path_kind, "both");
    if (!use_analysis && !use_gtp) {
        static const char *const kinds[] = {"analysis", "gtp", "both"};
        char hint[96];
        hc_suggest_text(hint, sizeof hint, path_kind, strlen(path_kind), kinds, 3);
        hc_err_set(&err, HC_EUSAGE, "--path %s: expected analysis, gtp or both%s", path_kind, hint);
        return cli_fail("katago", &err);
    }
    const char *tiers[9];
    int n_tiers = cli_get_all(&a, "tier", tiers, 9);
    if (n_tiers > 8) {
        hc_err_set(&err, HC_EUSAGE, "at most 8 --tier options");
        return cli_fail("katago", &err);
    }
    if (n_tiers == 0) {
        tiers[0] = "fp16";
        n_tiers = 1;
    }
    const char *only[CLI_MAX_ONLY];
    int n_only = cli_get_only(&a, only, &err);
    if (n_only < 0)
        return cli_fail("katago", &err);
    int threads;
    double timeout;
    const char *ref = cli_get(&a, "ref", NULL);
    if (check_tiers(tiers, n_tiers, &err) || cli_get_int(&a, "threads", 2, &threads, &err) ||
        cli_get_double(&a, "timeout", 600, &timeout, &err))
        return cli_fail("katago", &err);
    int repeat;
    double repeat_limit;
    if (cli_get_int(&a, "repeat", 0, &repeat, &err) || cli_get_double(&a, "repeat-limit", 0, &repeat_limit, &err))
        return cli_fail("katago", &err);
    if ((cli_has(&a, "repeat") && (repeat < 2 || repeat > 100)) || !(repeat_limit >= 0) ||
        (cli_has(&a, "repeat-limit") && !cli_has(&a, "repeat"))) {
        hc_err_set(&err, HC_EUSAGE, "%s", cli_has(&a, "repeat") && (repeat < 2 || repeat > 100)
                                              ? "--repeat: must be 2..100"
                                              : "--repeat-limit: must not be negative, and goes with --repeat");
        return cli_fail("katago", &err);
    }
    if (threads < 1 || threads > 256 || !(timeout > 0)) {
        hc_err_set(&err, HC_EUSAGE, "%s", threads < 1 || threads > 256 ? "--threads: must be 1..256" : "--timeout: must be positive");
        return cli_fail("katago", &err);
    }
    if (ref && !hc_run_ref_spec_ok(ref)) {
        hc_err_set(&err, HC_EUSAGE, "--ref %s: the reference is ref32 or cuda:ref32 (the same bits on a GPU)", ref);
        return cli_fail("katago", &err);
    }

    /* Absolute paths: the engine runs in another directory. A bare name stays one (PATH). */
    char k_abs[PATH_MAX], c_abs[PATH_MAX], data[PATH_MAX];
    if (strchr(katago, '/')) {
        errno = 0;
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
    char ac_abs[PATH_MAX];
    const char *aconf = cli_get(&a, "analysis-config", config);
    const char *aopt = cli_has(&a, "analysis-config") ? "--analysis-config" : "--config";
    if (!realpath(aconf, ac_abs)) {
        hc_err_set(&err, HC_EUSAGE, "%s %s: %s", aopt, aconf, strerror(errno));
        return cli_fail("katago", &err);
    }
    if ((use_analysis && check_cfg(ac_abs, aconf, aopt, 1, path_kind, &err)) ||
        (use_gtp && check_cfg(c_abs, config, "--config", 0, path_kind, &err)))
        return cli_fail("katago", &err);
    /* main passes argv + 1: argv[-1] is the path this program was started by. */
    if (find_data(cli_get(&a, "data", NULL), argv[-1], data, &err))
        return cli_fail("katago", &err);
    static knet nets[MAX_NETS];
    static hc_katago_family fams[HC_KATAGO_MAX_FAMILIES];
    int n_nets = 0, n_fams = 0;
    const char *models[MAX_NETS + 1];
    int n_models = cli_get_all(&a, "model", models, MAX_NETS + 1);
    if (n_models > MAX_NETS) {
        hc_err_set(&err, HC_EUSAGE, "at most %d --model options", MAX_NETS);
        return cli_fail("katago", &err);
    }
    for (int i = 0; i < n_models; i++)
        if (add_model_arg(nets, &n_nets, models[i], &err))
            return cli_fail("katago", &err);
    if (hc_katago_families_load(data, fams, &n_fams, &err))
        return cli_fail("katago", &err);

    /* The suite, built under --out's path (not yet created), so that --only is checked against its
     * cases before anything is written or started. */
    char tail[8192], o_abs[PATH_MAX + 1], workdir[PATH_MAX + 32], suite_path[PATH_MAX + 32];
    if (rerun_tail(&a, tail, sizeof tail)) {
        hc_err_set(&err, HC_EUSAGE, "--only: the filters are too long");
        return cli_fail("katago", &err);
    }
    hc_katago_net knets[MAX_NETS];
    for (int i = 0; i < n_nets; i++)
        knets[i] = (hc_katago_net){nets[i].name, nets[i].path, nets[i].version};
    hc_katago_plan pl = {.suite = suite_path, .workdir = workdir, .data = data, .fams = fams, .n_fams = n_fams,
                         .nets = knets, .n_nets = (size_t)n_nets, .katago = k_abs,
                         .analysis_config = use_analysis ? ac_abs : NULL, .gtp_config = use_gtp ? c_abs : NULL,
                         .extra = cli_get(&a, "override", NULL), .tiers = tiers, .n_tiers = (size_t)n_tiers};
    char cwd[PATH_MAX];
    if (!realpath(out, o_abs)) {
        if (out[0] == '/' || !getcwd(cwd, sizeof cwd))
            snprintf(o_abs, sizeof o_abs, "%s", out);
        else if (snprintf(o_abs, sizeof o_abs, "%s/%s", cwd, out) >= (int)sizeof o_abs) {
            hc_err_set(&err, HC_EUSAGE, "--out %s: path too long", out);
            return cli_fail("katago", &err);
        }
    }
    snprintf(workdir, sizeof workdir, "%s/katago-engine", o_abs);
    snprintf(suite_path, sizeof suite_path, "%s/katago-suite.yaml", o_abs);
    hc_suite *suite = hc_katago_suite(&pl, &err);
    unsigned char *sel = suite ? calloc(suite->n_cases ? suite->n_cases : 1, 1) : NULL;
    if (suite && !sel)
        hc_err_set(&err, HC_ENOMEM, "out of memory");
    int bad = !sel || hc_suite_select(suite, only, (size_t)n_only, sel, &err);
    /* Each net a selected case needs loads (KataGo's loader refuses what halfcheck's does). */
    for (int i = 0; i < n_nets && !bad; i++) {
        int used = 0;
        for (size_t c = 0; c < suite->n_cases && !used; c++)
            used = sel[c] && suite->cases[c].net == (size_t)i;
        hc_net *net = used ? hc_net_load(nets[i].path, &err) : NULL;
        if (used && !net) {
            hc_err_prefix(&err, "--model: ");
            bad = 1;
        }
        hc_net_free(net);
    }
    free(sel);
    if (bad) {
        hc_suite_free(suite);
        return cli_fail("katago", &err);
    }

    /* --out now exists: its real path may differ (a symbolic link), so the suite is built again
     * under it. */
    if (hc_mkdir_p(out, &err) || !realpath(out, o_abs)) {
        if (!err.msg[0])
            hc_err_set(&err, HC_EIO, "--out %s: %s", out, strerror(errno));
        hc_suite_free(suite);
        return cli_fail("katago", &err);
    }
    snprintf(workdir, sizeof workdir, "%s/katago-engine", o_abs);
    snprintf(suite_path, sizeof suite_path, "%s/katago-suite.yaml", o_abs);
    hc_suite_free(suite);
    char qsuite[PATH_MAX * 4 + 8], comment[PATH_MAX * 4 + 8500];
    hc_shell_word(qsuite, sizeof qsuite, suite_path);
    snprintf(comment, sizeof comment, "Written by halfcheck katago: KataGo's testgpuerror boards, as rungpuerrortest.sh "
             "gives them to a\nnet of each family (suites/katago/families.yaml), evaluated by a KataGo build against\n"
             "halfcheck's fp32 reference. Rerun: halfcheck run %s%s", qsuite, tail);
    if (!(suite = hc_katago_suite(&pl, &err)) || hc_mkdir_p(workdir, &err) ||
        hc_suite_write(suite, suite_path, comment, &err)) {
        hc_suite_free(suite);
        return cli_fail("katago", &err);
    }
    fprintf(stderr, "halfcheck katago: %d net%s; suite %s (rerun: halfcheck run %s%s); KataGo runs in %s/\n", n_nets,
            n_nets == 1 ? "" : "s", suite_path, qsuite, tail, workdir);
    for (int i = 0; i < n_nets; i++) {
        const hc_katago_family *f = hc_katago_family_of(fams, n_fams, nets[i].version);
        fprintf(stderr, "halfcheck katago: %s: %s, model version %d, family %s (%d boards)\n", nets[i].name,
                nets[i].path, nets[i].version, f->name, f->n_boards);
    }

    /* The same runner and reports as `halfcheck run`, on the suite as built. */
    hc_run_options o = hc_run_options_default();
    o.threads = threads;
    o.timeout_s = timeout;
    o.repeat = repeat;
    o.repeat_limit = repeat_limit;
    o.only = only;
    o.n_only = (size_t)n_only;
    o.seed = 1;
    o.cache_dir = cli_has(&a, "no-cache") ? NULL : cli_get(&a, "cache", ".halfcheck-cache");
    o.ref_spec = ref;
    char *command = cli_command_line("katago", argc, argv);
    int status = cli_run_suite(suite, &o, &a, command, o_abs);
    free(command);
    hc_suite_free(suite);
    /* run printed the reports' tables, the per-net summary.md last, before its final line. */
    return status;
}
