/* halfcheck katago: check a KataGo build on its nets in one command, as `katago testgpuerror` plus
 * rungpuerrortest.sh do, with halfcheck's reference and reports. It writes a suite into the
 * output directory and runs it with `halfcheck run`: every net given (--model, repeatable, or a
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
#include "harness/model/model.h"
#include "harness/run/runner.h"
#include "harness/base/stream.h"
#include "harness/base/strbuf.h"
#include "harness/base/suggest.h"
#include "harness/metrics/tiers.h"
#include "harness/base/yamlcfg.h"

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

/* The start of an engine's command: started in workdir through sh (the backends run no shell
 * themselves), KATAGO SUBCOMMAND -model MODEL -config CONFIG. */
static int spec_start(char *spec, size_t len, const char *kind, const char *workdir, const char *katago,
                      const char *sub, const char *model, const char *config)
{
    snprintf(spec, len, "%s:@timeout=300 @startup-timeout=900 sh -c 'cd \"$0\" && exec \"$@\"'", kind);
    if (word_quote(spec, len, workdir) || word_quote(spec, len, katago))
        return -1;
    size_t o = strlen(spec);
    /* model is "{model}": the suite's net file, so that `halfcheck run katago-suite.yaml --net
     * OTHER` has KataGo evaluate the file the reference evaluates; quoted (single quotes: the
     * splitter expands no $ inside them; a net path holding a single quote is refused). */
    if (snprintf(spec + o, len - o, " %s -model", sub) >= (int)(len - o) || word_quote(spec, len, model))
        return -1;
    o = strlen(spec);
    if (snprintf(spec + o, len - o, " -config") >= (int)(len - o) || word_quote(spec, len, config))
        return -1;
    return 0;
}

/* The gtp: backend: kata-raw-nn only, one thread, batch 1, no log on stderr, and the board
 * config's NN buffer (KataGo's GTP engine otherwise sizes it to each board, and outputs depend
 * on it: docs/GTP.md). */
/* The user's own overrides (--override), as one more -override-config (KataGo takes several). */
static int add_extra(char *spec, size_t len, const char *extra)
{
    if (!extra)
        return 0;
    size_t o = strlen(spec);
    return snprintf(spec + o, len - o, " -override-config") >= (int)(len - o) || word_quote(spec, len, extra) ? -1 : 0;
}

static int build_gtp_spec(char *spec, size_t len, const char *workdir, const char *katago, const char *config,
                          const char *extra)
{
    if (spec_start(spec, len, "gtp", workdir, katago, "gtp", "{model}", config))
        return -1;
    size_t o = strlen(spec);
    int n = snprintf(spec + o, len - o,
                     " -override-config numSearchThreads=1,nnMaxBatchSize=1,logToStderr=false,"
                     "logAllGTPCommunication=false,ponderingEnabled=false,gtpForceMaxNNSize=true,"
                     "maxBoardXSizeForNNBuffer={nnX},maxBoardYSizeForNNBuffer={nnY},requireMaxBoardSize=false");
    return n < (int)(len - o) ? add_extra(spec, len, extra) : -1;
}

/* The analysis: backend (docs/ANALYSIS.md): one engine per symmetry (nnForcedSymmetry, no
 * randomizing), the mode's batch as nnMaxBatchSize and the analysis threads the backend asks for
 * ({threads}: several per row batched, so that a batch's worth is always queued), one search
 * thread each, no NN cache (so no evaluation is ever a cache hit: the batched pass evaluates
 * again), the board config's NN buffer, and its log on stderr, where it says its rows and
 * batches at exit. */
static int build_analysis_spec(char *spec, size_t len, const char *workdir, const char *katago, const char *config,
                               const char *extra)
{
    if (spec_start(spec, len, "analysis", workdir, katago, "analysis", "{model}", config))
        return -1;
    size_t o = strlen(spec);
    int n = snprintf(spec + o, len - o,
                     " -override-config nnForcedSymmetry={symmetry},nnRandomize=false,nnMaxBatchSize={batch},"
                     "numAnalysisThreads={threads},numSearchThreadsPerAnalysisThread=1,nnCacheSizePowerOfTwo=-1,"
                     "maxBoardXSizeForNNBuffer={nnX},maxBoardYSizeForNNBuffer={nnY},requireMaxBoardSize=false,"
                     "logToStderr=true,logAllRequests=false,logAllResponses=false,logSearchInfo=false");
    return n < (int)(len - o) ? add_extra(spec, len, extra) : -1;
}

/* --- the nets and their families ------------------------------------------------------------- */

enum { MAX_NETS = 64, MAX_FAMILIES = 16, MAX_FBOARDS = 32 };

typedef struct family {
    char name[64];
    int lo, hi;
    int n_boards;
    char boards[MAX_FBOARDS][64];
    int exact[MAX_FBOARDS]; /* requireExactNNLen: -1 unset, 0, 1 */
} family;

typedef struct knet {
    char path[PATH_MAX];
    char name[256];
    int version;      /* from the file's header (hc_model_sniff_file) */
    const family *fam;
} knet;

/* suites/katago/families.yaml: which boards each model family gets. */
static int load_families(const char *data, family *fams, int *n_fams, hc_err *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/katago/families.yaml", data);
    hc_ydoc d;
    if (hc_ydoc_load_file(&d, path, 1 << 20, "document", err))
        return -1;
    int rc = -1;
    yaml_node_t *root = hc_ydoc_root(&d), *list;
    static const char *const top_keys[] = {"families", NULL};
    static const char *const fam_keys[] = {"name", "notes", "modelVersions", "boards", NULL};
    static const char *const board_keys[] = {"board", "requireExactNNLen", NULL};
    if (hc_ydoc_expect(&d, root, YAML_MAPPING_NODE, "families file", "", err) ||
        hc_ydoc_check_keys(&d, root, "families file", "", top_keys, err) ||
        !(list = hc_ydoc_require(&d, root, "families", "", err)) ||
        hc_ydoc_expect(&d, list, YAML_SEQUENCE_NODE, "families", "", err))
        goto out;
    *n_fams = 0;
    for (size_t i = 0; i < hc_ynode_seq_len(list); i++) {
        yaml_node_t *f = hc_ydoc_seq_at(&d, list, i), *nm, *mv, *bl;
        if (*n_fams >= MAX_FAMILIES) {
            hc_ydoc_err(&d, &f->start_mark, "", err, "more than %d families", MAX_FAMILIES);
            goto out;
        }
        family *fa = &fams[(*n_fams)++];
        memset(fa, 0, sizeof *fa);
        if (hc_ydoc_expect(&d, f, YAML_MAPPING_NODE, "family", "", err) ||
            hc_ydoc_check_keys(&d, f, "family", "", fam_keys, err) || !(nm = hc_ydoc_require(&d, f, "name", "", err)) ||
            hc_ydoc_expect(&d, nm, YAML_SCALAR_NODE, "name", "", err) ||
            !(mv = hc_ydoc_require(&d, f, "modelVersions", "", err)) ||
            hc_ydoc_expect(&d, mv, YAML_SEQUENCE_NODE, "modelVersions", "", err) ||
            !(bl = hc_ydoc_require(&d, f, "boards", "", err)) ||
            hc_ydoc_expect(&d, bl, YAML_SEQUENCE_NODE, "boards", "", err))
            goto out;
        snprintf(fa->name, sizeof fa->name, "%s", hc_ynode_str(nm));
        if (hc_ynode_seq_len(mv) != 2 ||
            hc_ydoc_int(&d, hc_ydoc_seq_at(&d, mv, 0), "modelVersions", fa->name, 0, 1000, &fa->lo, err) ||
            hc_ydoc_int(&d, hc_ydoc_seq_at(&d, mv, 1), "modelVersions", fa->name, fa->lo, 1000, &fa->hi, err)) {
            if (!err->msg[0])
                hc_ydoc_err(&d, &mv->start_mark, fa->name, err, "modelVersions: expected [LOWEST, HIGHEST]");
            goto out;
        }
        for (size_t k = 0; k < hc_ynode_seq_len(bl); k++) {
            yaml_node_t *b = hc_ydoc_seq_at(&d, bl, k), *bn, *ex;
            if (fa->n_boards >= MAX_FBOARDS) {
                hc_ydoc_err(&d, &b->start_mark, fa->name, err, "more than %d boards", MAX_FBOARDS);
                goto out;
            }
            if (hc_ydoc_expect(&d, b, YAML_MAPPING_NODE, "board", fa->name, err) ||
                hc_ydoc_check_keys(&d, b, "board", fa->name, board_keys, err) ||
                !(bn = hc_ydoc_require(&d, b, "board", fa->name, err)) ||
                hc_ydoc_expect(&d, bn, YAML_SCALAR_NODE, "board", fa->name, err))
                goto out;
            snprintf(fa->boards[fa->n_boards], sizeof fa->boards[0], "%s", hc_ynode_str(bn));
            fa->exact[fa->n_boards] = -1;
            if ((ex = hc_ydoc_get(&d, b, "requireExactNNLen")) != NULL &&
                hc_ydoc_bool(&d, ex, "requireExactNNLen", fa->name, &fa->exact[fa->n_boards], err))
                goto out;
            char bp[PATH_MAX];
            snprintf(bp, sizeof bp, "%s/boards/%s.yaml", data, fa->boards[fa->n_boards]);
            if (access(bp, R_OK) != 0) {
                hc_ydoc_err(&d, &bn->start_mark, fa->name, err, "board %s: no %s", fa->boards[fa->n_boards], bp);
                goto out;
            }
            fa->n_boards++;
        }
    }
    rc = 0;
out:
    hc_ydoc_free(&d);
    return rc;
}

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

/* Every net's family, by the model version its header gave. */
static int classify(knet *nets, int n, const family *fams, int n_fams, hc_err *err)
{
    for (int i = 0; i < n; i++) {
        for (int f = 0; f < n_fams && !nets[i].fam; f++)
            if (nets[i].version >= fams[f].lo && nets[i].version <= fams[f].hi)
                nets[i].fam = &fams[f];
        if (!nets[i].fam)
            return hc_err_set(err, HC_EUSAGE, "%s: model version %d is in no family of suites/katago/families.yaml",
                              nets[i].path, nets[i].version);
    }
    return 0;
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

/* The suite is built in an hc_strbuf, then written in one go. */

/* A YAML double-quoted scalar. */
static void g_quoted(hc_strbuf *b, const char *s)
{
    hc_strbuf_printf(b, "\"");
    for (; *s; s++)
        hc_strbuf_printf(b, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    hc_strbuf_printf(b, "\"");
}

/* The suite's text into *b (empty on entry); -1 (err set) when out of memory. rerun: the
 * command that reruns it. */
static int build_suite(hc_strbuf *sb, const char *rerun, const char *data, const knet *nets, int n_nets,
                       const char *specs[2], const char *const *tiers, int n_tiers, int batched, hc_err *err)
{
    static const char *const bnames[2] = {"katago-analysis", "katago-gtp"};
#define b (*sb)
    hc_strbuf_printf(&b, "# Written by halfcheck katago: KataGo's testgpuerror boards, as rungpuerrortest.sh gives them to a\n"
              "# net of each family (suites/katago/families.yaml), evaluated by a KataGo build against\n"
              "# halfcheck's fp32 reference. Rerun: %s\nname: katago\nnets:\n", rerun);
    for (int i = 0; i < n_nets; i++) {
        hc_strbuf_printf(&b, "  - {name: ");
        g_quoted(&b, nets[i].name);
        hc_strbuf_printf(&b, ", model: ");
        g_quoted(&b, nets[i].path);
        hc_strbuf_printf(&b, ", modelVersion: %d}\n", nets[i].version);
    }
    /* Every board any net's family uses, once. */
    hc_strbuf_printf(&b, "boards:\n");
    const family *seen[MAX_NETS];
    int n_seen = 0;
    char listed[MAX_FAMILIES * MAX_FBOARDS][64];
    int n_listed = 0;
    for (int i = 0; i < n_nets; i++) {
        int dup = 0;
        for (int k = 0; k < n_seen; k++)
            dup |= seen[k] == nets[i].fam;
        if (dup)
            continue;
        seen[n_seen++] = nets[i].fam;
        for (int j = 0; j < nets[i].fam->n_boards; j++) {
            int have = 0;
            for (int k = 0; k < n_listed; k++)
                have |= strcmp(listed[k], nets[i].fam->boards[j]) == 0;
            if (have)
                continue;
            snprintf(listed[n_listed++], sizeof listed[0], "%s", nets[i].fam->boards[j]);
            char bp[PATH_MAX + 80];
            snprintf(bp, sizeof bp, "%s/boards/%s.yaml", data, nets[i].fam->boards[j]);
            hc_strbuf_printf(&b, "  - ");
            g_quoted(&b, bp);
            hc_strbuf_printf(&b, "\n");
        }
    }
    hc_strbuf_printf(&b, "backends:\n");
    for (int k = 0; k < 2; k++) {
        if (!specs[k])
            continue;
        hc_strbuf_printf(&b, "  - name: %s\n    backend: ", bnames[k]);
        g_quoted(&b, specs[k]);
        hc_strbuf_printf(&b, "\n    tiers: [");
        for (int t = 0; t < n_tiers; t++) {
            hc_strbuf_printf(&b, "%s", t ? ", " : "");
            g_quoted(&b, tiers[t]);
        }
        hc_strbuf_printf(&b, "]\n");
    }
    hc_strbuf_printf(&b, "modes: [unbatched%s]\nmatrix:\n", batched ? ", batched" : "");
    for (int i = 0; i < n_nets; i++)
        for (int j = 0; j < nets[i].fam->n_boards; j++) {
            hc_strbuf_printf(&b, "  - {nets: [");
            g_quoted(&b, nets[i].name);
            hc_strbuf_printf(&b, "], boards: [");
            g_quoted(&b, nets[i].fam->boards[j]);
            hc_strbuf_printf(&b, "]");
            if (nets[i].fam->exact[j] >= 0)
                hc_strbuf_printf(&b, ", overrides: {requireExactNNLen: %s}", nets[i].fam->exact[j] ? "true" : "false");
            hc_strbuf_printf(&b, "}\n");
        }
#undef b
    return hc_strbuf_failed(sb) ? hc_err_set(err, HC_ENOMEM, "out of memory writing the suite") : 0;
}

static int write_text(const char *path, const hc_strbuf *b, hc_err *err)
{
    hc_ostream *os = hc_ostream_open(path, err);
    if (!os)
        return -1;
    if (hc_ostream_write(os, hc_strbuf_str(b), hc_strbuf_len(b), err)) {
        hc_ostream_abort(os);
        return -1;
    }
    return hc_ostream_commit(os, err); /* frees os either way */
}

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

/* Builds the suite for out (an absolute path), its engine specs and rerun line; -1 with err. */
typedef struct plan {
    const char *data, *katago, *config, *aconfig, *extra;
    int use_analysis, use_gtp;
    const knet *nets;
    int n_nets;
    const char *const *tiers;
    int n_tiers;
    const char *tail; /* rerun_tail */
} plan;

static int make_suite(const plan *p, const char *out, hc_strbuf *b, char *suite, size_t suite_len, char *workdir,
                      size_t workdir_len, hc_err *err)
{
    static char aspec[8192], gspec[8192];
    const char *specs[2] = {NULL, NULL};
    snprintf(workdir, workdir_len, "%s/katago-engine", out);
    snprintf(suite, suite_len, "%s/katago-suite.yaml", out);
    if ((p->use_analysis && build_analysis_spec(aspec, sizeof aspec, workdir, p->katago, p->aconfig, p->extra)) ||
        (p->use_gtp && build_gtp_spec(gspec, sizeof gspec, workdir, p->katago, p->config, p->extra)))
        return hc_err_set(err, HC_EUSAGE, "the engine's command line is too long (paths too long?)");
    specs[0] = p->use_analysis ? aspec : NULL;
    specs[1] = p->use_gtp ? gspec : NULL;
    char rerun[PATH_MAX * 2 + 4096];
    size_t o = (size_t)snprintf(rerun, sizeof rerun, "halfcheck run ");
    o += hc_shell_word(rerun + o, sizeof rerun - o, suite);
    snprintf(rerun + o, sizeof rerun - o, "%s", p->tail);
    /* GTP's kata-raw-nn never batches: a GTP-only check runs unbatched (with both paths, the
     * GTP batched cases are skipped as "not a batched check"). */
    return build_suite(b, rerun, p->data, p->nets, p->n_nets, specs, p->tiers, p->n_tiers, p->use_analysis, err);
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
    static family fams[MAX_FAMILIES];
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
    if (load_families(data, fams, &n_fams, &err) || classify(nets, n_nets, fams, n_fams, &err))
        return cli_fail("katago", &err);

    /* The suite as it will be written, parsed here (under --out's path, not yet created), so that
     * --only is checked against its cases before anything is written or started. */
    char tail[8192], o_abs[PATH_MAX + 1], workdir[PATH_MAX + 32], suite[PATH_MAX + 32];
    if (rerun_tail(&a, tail, sizeof tail)) {
        hc_err_set(&err, HC_EUSAGE, "--only: the filters are too long");
        return cli_fail("katago", &err);
    }
    plan pl = {data, k_abs, c_abs, ac_abs, cli_get(&a, "override", NULL), use_analysis, use_gtp, nets, n_nets,
               tiers, n_tiers, tail};
    char cwd[PATH_MAX];
    if (!realpath(out, o_abs)) {
        if (out[0] == '/' || !getcwd(cwd, sizeof cwd))
            snprintf(o_abs, sizeof o_abs, "%s", out);
        else if (snprintf(o_abs, sizeof o_abs, "%s/%s", cwd, out) >= (int)sizeof o_abs) {
            hc_err_set(&err, HC_EUSAGE, "--out %s: path too long", out);
            return cli_fail("katago", &err);
        }
    }
    hc_strbuf b = HC_STRBUF_INIT;
    if (make_suite(&pl, o_abs, &b, suite, sizeof suite, workdir, sizeof workdir, &err)) {
        hc_strbuf_free(&b);
        return cli_fail("katago", &err);
    }
    hc_suite *parsed = hc_suite_parse(hc_strbuf_str(&b), hc_strbuf_len(&b), suite, &err);
    hc_strbuf_free(&b);
    unsigned char *sel = parsed ? calloc(parsed->n_cases ? parsed->n_cases : 1, 1) : NULL;
    if (parsed && !sel)
        hc_err_set(&err, HC_ENOMEM, "out of memory");
    int bad = !sel || hc_suite_select(parsed, only, (size_t)n_only, sel, &err);
    /* Each net a selected case needs loads (KataGo's loader refuses what halfcheck's does). */
    for (int i = 0; i < n_nets && !bad; i++) {
        int used = 0;
        for (size_t c = 0; c < parsed->n_cases && !used; c++)
            used = sel[c] && !strcmp(parsed->nets[parsed->cases[c].net].name, nets[i].name);
        hc_net *net = used ? hc_net_load(nets[i].path, &err) : NULL;
        if (used && !net) {
            hc_err_prefix(&err, "--model: ");
            bad = 1;
        }
        hc_net_free(net);
    }
    free(sel);
    hc_suite_free(parsed);
    if (bad)
        return cli_fail("katago", &err);

    if (hc_mkdir_p(out, &err) || !realpath(out, o_abs)) {
        if (!err.msg[0])
            hc_err_set(&err, HC_EIO, "--out %s: %s", out, strerror(errno));
        return cli_fail("katago", &err);
    }
    b = (hc_strbuf)HC_STRBUF_INIT;
    if (make_suite(&pl, o_abs, &b, suite, sizeof suite, workdir, sizeof workdir, &err) || hc_mkdir_p(workdir, &err) ||
        write_text(suite, &b, &err)) {
        hc_strbuf_free(&b);
        return cli_fail("katago", &err);
    }
    hc_strbuf_free(&b);
    char qsuite[PATH_MAX * 4 + 8];
    hc_shell_word(qsuite, sizeof qsuite, suite);
    fprintf(stderr, "halfcheck katago: %d net%s; suite %s (rerun: halfcheck run %s%s); KataGo runs in %s/\n", n_nets,
            n_nets == 1 ? "" : "s", suite, qsuite, tail, workdir);
    for (int i = 0; i < n_nets; i++)
        fprintf(stderr, "halfcheck katago: %s: %s, model version %d, family %s (%d boards)\n", nets[i].name,
                nets[i].path, nets[i].version, nets[i].fam->name, nets[i].fam->n_boards);

    /* The same runner and reports as `halfcheck run`, through its own command line. */
    static const char *const fwd[][2] = {{"cache", "--cache"}, {"threads", "--threads"}, {"timeout", "--timeout"},
                                         {"ref", "--ref"}, {"repeat", "--repeat"}, {"repeat-limit", "--repeat-limit"}};
    char *rargv[32 + 2 * CLI_MAX_ONLY];
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
    for (int i = 0; i < n_only; i++) {
        rargv[rn++] = "--only";
        rargv[rn++] = (char *)only[i];
    }
    if (cli_has(&a, "no-cache"))
        rargv[rn++] = "--no-cache";
    if (cli_has(&a, "quiet"))
        rargv[rn++] = "--quiet";
    rargv[rn] = NULL;
    char *command = cli_command_line("katago", argc, argv);
    int status = cmd_run_as(rn, rargv, command);
    free(command);
    /* run printed the reports' tables, the per-net summary.md last, before its final line. */
    return status;
}
