/* The suite halfcheck katago runs (katago.h): families.yaml, the engines' command lines, the suite. */
#include "harness/config/katago.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/base/files.h"
#include "harness/base/yamlcfg.h"

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

/* The user's own overrides (--override), as one more -override-config (KataGo takes several). */
static int add_extra(char *spec, size_t len, const char *extra)
{
    if (!extra)
        return 0;
    size_t o = strlen(spec);
    return snprintf(spec + o, len - o, " -override-config") >= (int)(len - o) || word_quote(spec, len, extra) ? -1 : 0;
}

/* The gtp: backend: kata-raw-nn only, one thread, batch 1, no log on stderr, and the board
 * config's NN buffer (KataGo's GTP engine otherwise sizes it to each board, and outputs depend
 * on it: docs/GTP.md). */
static const char gtp_overrides[] =
    "numSearchThreads=1,nnMaxBatchSize=1,logToStderr=false,logAllGTPCommunication=false,ponderingEnabled=false,"
    "gtpForceMaxNNSize=true,maxBoardXSizeForNNBuffer={nnX},maxBoardYSizeForNNBuffer={nnY},requireMaxBoardSize=false";

/* The analysis: backend (docs/ANALYSIS.md): one engine per symmetry (nnForcedSymmetry, no
 * randomizing), the mode's batch as nnMaxBatchSize and the analysis threads the backend asks for
 * ({threads}: several per row batched, so that a batch's worth is always queued), one search
 * thread each, no NN cache (so no evaluation is ever a cache hit: the batched pass evaluates
 * again), the board config's NN buffer, and its log on stderr, where it says its rows and
 * batches at exit. */
static const char analysis_overrides[] =
    "nnForcedSymmetry={symmetry},nnRandomize=false,nnMaxBatchSize={batch},numAnalysisThreads={threads},"
    "numSearchThreadsPerAnalysisThread=1,nnCacheSizePowerOfTwo=-1,maxBoardXSizeForNNBuffer={nnX},"
    "maxBoardYSizeForNNBuffer={nnY},requireMaxBoardSize=false,logToStderr=true,logAllRequests=false,"
    "logAllResponses=false,logSearchInfo=false";

/* The backend spec of KataGo's subcommand kind (gtp, analysis): started in the workdir through sh
 * (the backends run no shell themselves), KATAGO KIND -model {model} -config CONFIG, the kind's
 * overrides, then the user's. {model} is the suite's net file, so that `halfcheck run
 * katago-suite.yaml --net OTHER` has KataGo evaluate the file the reference evaluates; quoted
 * (single quotes: the splitter expands no $ inside them). -1 when it does not fit. */
static int build_spec(char *spec, size_t len, const char *kind, const char *overrides, const char *config,
                      const hc_katago_plan *p)
{
    snprintf(spec, len, "%s:@timeout=300 @startup-timeout=900 sh -c 'cd \"$0\" && exec \"$@\"'", kind);
    if (word_quote(spec, len, p->workdir) || word_quote(spec, len, p->katago))
        return -1;
    size_t o = strlen(spec);
    if (snprintf(spec + o, len - o, " %s -model", kind) >= (int)(len - o) || word_quote(spec, len, "{model}"))
        return -1;
    o = strlen(spec);
    if (snprintf(spec + o, len - o, " -config") >= (int)(len - o) || word_quote(spec, len, config))
        return -1;
    o = strlen(spec);
    int n = snprintf(spec + o, len - o, " -override-config %s", overrides);
    return n < (int)(len - o) ? add_extra(spec, len, p->extra) : -1;
}

/* DATA/katago/families.yaml: which boards each model family gets. */
int hc_katago_families_load(const char *data, hc_katago_family *fams, int *n_fams, hc_err *err)
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
        if (*n_fams >= HC_KATAGO_MAX_FAMILIES) {
            hc_ydoc_err(&d, &f->start_mark, "", err, "more than %d families", HC_KATAGO_MAX_FAMILIES);
            goto out;
        }
        hc_katago_family *fa = &fams[(*n_fams)++];
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
            if (fa->n_boards >= HC_KATAGO_MAX_BOARDS) {
                hc_ydoc_err(&d, &b->start_mark, fa->name, err, "more than %d boards", HC_KATAGO_MAX_BOARDS);
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

const hc_katago_family *hc_katago_family_of(const hc_katago_family *fams, int n_fams, int version)
{
    for (int f = 0; f < n_fams; f++)
        if (version >= fams[f].lo && version <= fams[f].hi)
            return &fams[f];
    return NULL;
}

/* The board of s named name, or -1. */
static int board_index(const hc_suite *s, const char *name)
{
    for (size_t i = 0; i < s->n_boards; i++)
        if (!strcmp(s->boards[i].name, name))
            return (int)i;
    return -1;
}

static int build(hc_suite *s, const hc_katago_plan *p, const hc_katago_family **fam, hc_err *err)
{
    static const char *const bnames[2] = {"katago-analysis", "katago-gtp"};
    char aspec[8192], gspec[8192];
    const char *specs[2] = {p->analysis_config ? aspec : NULL, p->gtp_config ? gspec : NULL};
    if ((p->analysis_config &&
         build_spec(aspec, sizeof aspec, "analysis", analysis_overrides, p->analysis_config, p)) ||
        (p->gtp_config && build_spec(gspec, sizeof gspec, "gtp", gtp_overrides, p->gtp_config, p)))
        return hc_err_set(err, HC_EUSAGE, "the engine's command line is too long (paths too long?)");
    for (size_t i = 0; i < p->n_nets; i++) {
        hc_net_cfg n = {.name = p->nets[i].name, .model = p->nets[i].model, .model_version = p->nets[i].version};
        if (hc_suite_add_net(s, &n, err) < 0)
            return -1;
    }
    /* Every board any net's family uses, once, in the order the families first name them. */
    for (size_t i = 0; i < p->n_nets; i++)
        for (int j = 0; j < fam[i]->n_boards; j++) {
            const char *name = fam[i]->boards[j];
            if (board_index(s, name) >= 0)
                continue;
            char bp[8192];
            snprintf(bp, sizeof bp, "%s/boards/%s.yaml", p->data, name);
            if (hc_suite_add_board_file(s, bp, err) < 0)
                return -1;
            if (strcmp(s->boards[s->n_boards - 1].name, name) != 0)
                return hc_err_set(err, HC_ECONFIG, "%s: names its board \"%s\", not \"%s\" as its file name and "
                                  "families.yaml say", bp, s->boards[s->n_boards - 1].name, name);
        }
    for (int k = 0; k < 2; k++)
        if (specs[k] && hc_suite_add_backend(s, bnames[k], specs[k], p->tiers, p->n_tiers, err) < 0)
            return -1;
    /* GTP's kata-raw-nn never batches: a GTP-only check runs unbatched (with both paths, the
     * GTP batched cases are skipped as "not a batched check"). */
    s->modes = HC_MODE_UNBATCHED | (p->analysis_config ? HC_MODE_BATCHED : 0);
    for (size_t i = 0; i < p->n_nets; i++)
        for (int j = 0; j < fam[i]->n_boards; j++)
            for (size_t k = 0; k < s->n_backends; k++) {
                long c = hc_suite_add_case(s, i, (size_t)board_index(s, fam[i]->boards[j]), k, err);
                if (c < 0)
                    return -1;
                if (fam[i]->exact[j] >= 0)
                    s->cases[c].settings.require_exact_nn_len = fam[i]->exact[j];
            }
    return 0;
}

hc_suite *hc_katago_suite(const hc_katago_plan *p, hc_err *err)
{
    const hc_katago_family **fam = calloc(p->n_nets ? p->n_nets : 1, sizeof *fam);
    if (!fam) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < p->n_nets; i++)
        if (!(fam[i] = hc_katago_family_of(p->fams, p->n_fams, p->nets[i].version))) {
            hc_err_set(err, HC_EUSAGE, "%s: model version %d is in no family of suites/katago/families.yaml",
                       p->nets[i].model, p->nets[i].version);
            free(fam);
            return NULL;
        }
    hc_suite *s = hc_suite_new(p->suite, "katago", err);
    if (s && build(s, p, fam, err)) {
        hc_suite_free(s);
        s = NULL;
    }
    free(fam);
    return s;
}
