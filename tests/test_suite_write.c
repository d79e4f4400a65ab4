/* The suite writer beside its reader (harness/config: hc_suite_write): every shipped suite read,
 * written and read again is the same suite, field by field (paths compared as absolute paths:
 * one written elsewhere names them so), and a second writing gives the same bytes; so is a suite
 * using every key, tier, net and board files among them, a suite built in memory, and the suite
 * halfcheck katago builds for a real layout (harness/config/katago, suites/katago/families.yaml).
 * What the format cannot hold is refused, naming it. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/config/config.h"
#include "harness/config/katago.h"

static char cwd[4096];

/* p made absolute against the working directory, as the reader's relative paths are meant. */
static const char *absp(const char *p, char *buf, size_t len)
{
    if (!p)
        return "(null)";
    if (p[0] == '/')
        return p;
    snprintf(buf, len, "%s/%s", cwd, p[0] == '.' && p[1] == '/' ? p + 2 : p);
    return buf;
}

static int same_path(const char *a, const char *b)
{
    char x[8192], y[8192];
    return (!a && !b) || (a && b && !strcmp(absp(a, x, sizeof x), absp(b, y, sizeof y)));
}

static int same_opt(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_tier(const hc_tier *a, const hc_tier *b)
{
    if (strcmp(a->name, b->name))
        return 0;
    for (int m = 0; m < HC_M_COUNT; m++) {
        if (a->bias_set[m] != b->bias_set[m] ||
            (a->bias_set[m] && (a->bias_scale[m] != b->bias_scale[m] || a->bias_limit[m] != b->bias_limit[m])))
            return 0;
        for (int p = 0; p < HC_P_COUNT; p++)
            if (a->set[m][p] != b->set[m][p] ||
                (a->set[m][p] && (a->scale[m][p] != b->scale[m][p] || a->limit[m][p] != b->limit[m][p])))
                return 0;
    }
    return 1;
}

/* Tier lists by name and content (an index into the suite's tiers is the order of first use). */
static int same_tier_list(const hc_suite *a, const int *ta, size_t na, const hc_suite *b, const int *tb, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!same_tier(&a->tiers[ta[i]], &b->tiers[tb[i]]) ||
            !same_path(a->tier_files[ta[i]], b->tier_files[tb[i]]))
            return 0;
    return 1;
}

static int same_board(const hc_board_cfg *a, const hc_board_cfg *b)
{
    return !strcmp(a->name, b->name) && same_path(a->positions, b->positions) && same_path(a->sgf, b->sgf) &&
           a->nn_x_len == b->nn_x_len && a->nn_y_len == b->nn_y_len && a->policy_optimism == b->policy_optimism &&
           a->pda == b->pda && a->policy_temperature == b->policy_temperature &&
           a->max_batch_size == b->max_batch_size && a->require_exact_nn_len == b->require_exact_nn_len &&
           same_path(a->file, b->file);
}

/* Whether a and b are the same suite, every field but where, spec_where and path; why says the
 * first difference. */
static int same_suite(const hc_suite *a, const hc_suite *b, char *why, size_t len)
{
#define DIFF(...) return snprintf(why, len, __VA_ARGS__), 0
    if (strcmp(a->name, b->name))
        DIFF("name %s vs %s", a->name, b->name);
    if (a->n_nets != b->n_nets || a->n_boards != b->n_boards || a->n_backends != b->n_backends ||
        a->n_tiers != b->n_tiers || a->n_cases != b->n_cases || a->n_includes != b->n_includes)
        DIFF("counts: nets %zu/%zu boards %zu/%zu backends %zu/%zu tiers %zu/%zu cases %zu/%zu includes %zu/%zu",
             a->n_nets, b->n_nets, a->n_boards, b->n_boards, a->n_backends, b->n_backends, a->n_tiers, b->n_tiers,
             a->n_cases, b->n_cases, a->n_includes, b->n_includes);
    for (size_t i = 0; i < a->n_nets; i++) {
        const hc_net_cfg *x = &a->nets[i], *y = &b->nets[i];
        if (strcmp(x->name, y->name) || !same_path(x->model, y->model) || !same_opt(x->sha256, y->sha256) ||
            x->model_version != y->model_version || !same_opt(x->notes, y->notes) || !same_path(x->file, y->file))
            DIFF("nets[%zu]: %s %s vs %s %s", i, x->name, x->model, y->name, y->model);
    }
    for (size_t i = 0; i < a->n_boards; i++)
        if (!same_board(&a->boards[i], &b->boards[i]))
            DIFF("boards[%zu] (%s)", i, a->boards[i].name);
    for (size_t i = 0; i < a->n_backends; i++) {
        const hc_backend_cfg *x = &a->backends[i], *y = &b->backends[i];
        if (strcmp(x->name, y->name) || strcmp(x->spec, y->spec) ||
            !same_tier_list(a, x->tiers, x->n_tiers, b, y->tiers, y->n_tiers) ||
            x->taps_on_failure != y->taps_on_failure || x->taps_positions != y->taps_positions ||
            x->repeat != y->repeat || x->repeat_limit != y->repeat_limit)
            DIFF("backends[%zu] (%s): %s vs %s", i, x->name, x->spec, y->spec);
    }
    for (size_t i = 0; i < a->n_tiers; i++) {
        int j = hc_suite_find_tier(b, a->tiers[i].name);
        if (j < 0 || !same_tier(&a->tiers[i], &b->tiers[j]) || !same_path(a->tier_files[i], b->tier_files[j]))
            DIFF("tier %s", a->tiers[i].name);
    }
    if (a->modes != b->modes || a->has_seed != b->has_seed || (a->has_seed && a->seed != b->seed) ||
        a->allow_skips != b->allow_skips || !same_opt(a->reference, b->reference) || a->headroom != b->headroom ||
        a->headroom_positions != b->headroom_positions)
        DIFF("suite keys: modes %d/%d seed %d:%d/%d:%d allow_skips %d/%d headroom %d:%d/%d:%d", a->modes, b->modes,
             a->has_seed, a->seed, b->has_seed, b->seed, a->allow_skips, b->allow_skips, a->headroom,
             a->headroom_positions, b->headroom, b->headroom_positions);
    for (size_t i = 0; i < a->n_includes; i++)
        if (!same_path(a->includes[i], b->includes[i]))
            DIFF("includes[%zu]: %s vs %s", i, a->includes[i], b->includes[i]);
    for (size_t i = 0; i < a->n_cases; i++) {
        const hc_case *x = &a->cases[i], *y = &b->cases[i];
        if (x->net != y->net || x->board != y->board || x->backend != y->backend ||
            !same_board(&x->settings, &y->settings) || !same_tier_list(a, x->tiers, x->n_tiers, b, y->tiers, y->n_tiers))
            DIFF("cases[%zu]: net %zu board %zu backend %zu vs net %zu board %zu backend %zu, or settings or tiers", i,
                 x->net, x->board, x->backend, y->net, y->board, y->backend);
    }
#undef DIFF
    return 1;
}

/* s written as if at its own path, read back (equal), written again (the same bytes), and
 * written to other (another directory), loaded (equal). name: the checks' prefix. */
static void round_trip(const char *name, const hc_suite *s, const char *other)
{
    char n[96], why[600] = "";
    hc_err err = {0};
    size_t l1 = 0, l2 = 0;
    char *t1 = hc_suite_format(s, s->path, NULL, &l1, &err);
    hc_suite *r = t1 ? hc_suite_parse(t1, l1, s->path, &err) : NULL;
    snprintf(n, sizeof n, "%s.1", name);
    hc_check(n, r && same_suite(s, r, why, sizeof why), "%s read back: %s%s\n%s", s->path, why, err.msg,
             t1 ? t1 : "");
    char *t2 = r ? hc_suite_format(r, s->path, NULL, &l2, &err) : NULL;
    snprintf(n, sizeof n, "%s.2", name);
    hc_check(n, t2 && l1 == l2 && !memcmp(t1, t2, l1), "%s written twice: the texts differ: %s\n---\n%s\n---\n%s",
             s->path, err.msg, t1 ? t1 : "", t2 ? t2 : "");
    hc_suite_free(r);
    free(t1);
    free(t2);
    why[0] = '\0';
    err.msg[0] = '\0';
    r = hc_suite_write(s, other, "a comment\n\nof two paragraphs", &err) ? NULL : hc_suite_load(other, &err);
    snprintf(n, sizeof n, "%s.3", name);
    hc_check(n, r && same_suite(s, r, why, sizeof why), "%s written to %s: %s%s", s->path, other, why, err.msg);
    hc_suite_free(r);
}

static int is_suite_file(const char *path)
{
    const char *t = hc_text(path);
    return !strncmp(t, "nets:", 5) || strstr(t, "\nnets:");
}

static const char *const rich_suite =
    "# every key the reader takes\n"
    "name: \"rich \\\"one\\\"\"\n"
    "notes: dropped by the reader\n"
    "tiers:\n"
    "  - tiers/mine.yaml\n"
    "  - {name: tight, base: fp16, limits: {winrate: {avg: 0.01, p99: 1.25%, max: none}, ownership: {max: 0.1}},\n"
    "     maxBias: {winrate: 0.2%, lead: 0.05}}\n"
    "  - {name: biasonly, maxBias: {scoreMean: 0.3}}\n"
    "nets:\n"
    "  - nets/n1.yaml\n"
    "  - {name: n2, model: \"../elsewhere/a b\\\\c.bin.gz\", sha256: "
    "E0C11D1D2532AF0B89792605E4D9EDCCA15BF6A0589BF28B967E6358277941B8, modelVersion: 17,\n"
    "     notes: \"tab\\there, quote \\\" and caf\\u00e9\"}\n"
    "  - {name: n3, model: /abs/n3.bin.gz}\n"
    "boards:\n"
    "  - boards/b1.yaml\n"
    "  - {name: b2, sgf: games.sgf, nnBuffer: 13x11, policyOptimism: 0.1, playoutDoublingAdvantage: -0.5,\n"
    "     policyTemperature: 1.3, maxBatchSize: 7, requireExactNNLen: true}\n"
    "defaultTiers: [fp32]\n"
    "backends:\n"
    "  - ref32\n"
    "  - {name: em, backend: \"emulate:fp16\", tiers: [tight, fp16], taps: on-failure, taps_positions: 2, repeat: 3,\n"
    "     repeat_limit: 1e-6}\n"
    "  - {name: f, backend: \"file:{suite_dir}/out/{net_name}_{board_name}.jsonl.gz\", tiers: [mine]}\n"
    "modes: [batched]\n"
    "seed: 12\n"
    "allow_skips: true\n"
    "reference: cuda:ref32\n"
    "headroom: bf16\n"
    "headroom_positions: 9\n"
    "matrix:\n"
    "  - {nets: [n1, n2], boards: [b1]}\n"
    "  - {nets: n3, boards: [b2, b1], backends: [f, em], tiers: [biasonly, exact], overrides: {maxBatchSize: 3}}\n"
    "  - {nets: [n1], boards: [b2], overrides: {policyOptimism: 0.7, requireExactNNLen: false}}\n"
    "  - {nets: [n2], backends: [em], overrides: {policyTemperature: 0.9, playoutDoublingAdvantage: 0.25}}\n";

int main(void)
{
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    glob_t g;
    memset(&g, 0, sizeof g);
    int gr = glob("suites/*.yaml", 0, NULL, &g);
    if (gr == 0 || gr == GLOB_NOMATCH)
        gr = glob("suites/*/*.yaml", GLOB_APPEND, NULL, &g);
    size_t n_suites = 0;
    for (size_t i = 0; i < g.gl_pathc; i++)
        n_suites += is_suite_file(g.gl_pathv[i]) != 0;
    hc_plan((unsigned)(1 + 3 * n_suites + 4 + 6 + 3 + 5));
    const char *tmp = hc_tmpdir("test_suite_write");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tmp ? tmp : "build/tmp/test_suite_write");
    hc_shf("rm -rf %s/* && mkdir -p %s/w %s/rich/tiers %s/rich/nets %s/rich/boards", dir, dir, dir, dir, dir);

    /* 1. Every shipped suite (the suites/ directory and its folders; board and family files are
     *    no suites). */
    hc_check("suite-write-1.0", n_suites >= 7, "%zu suites under suites/ (glob %d), expected the 7 shipped or more",
             n_suites, gr);
    for (size_t i = 0, k = 0; i < g.gl_pathc; i++) {
        const char *p = g.gl_pathv[i];
        if (!is_suite_file(p))
            continue;
        char name[64], other[1200];
        snprintf(name, sizeof name, "suite-write-1.%zu", ++k);
        snprintf(other, sizeof other, "%s/w/%zu.yaml", dir, k);
        hc_err err = {0};
        hc_suite *s = hc_suite_load(p, &err);
        if (!s) {
            hc_fail_n(name, 3, "%s does not load: %s", p, err.msg);
            continue;
        }
        round_trip(name, s, other);
        hc_suite_free(s);
    }
    globfree(&g);

    /* 2. Every key, files among the items, quoting, a path outside the suite's directory. */
    FILE *f = fopen(hc_path(dir, "rich/tiers/mine.yaml"), "w");
    if (f) {
        fputs("name: mine\nlimits: {lead: {p90: 0.5, max: 2}}\n", f);
        fclose(f);
    }
    f = fopen(hc_path(dir, "rich/nets/n1.yaml"), "w");
    if (f) {
        fputs("name: n1\nmodel: ../../nets/one.bin.gz\nmodelVersion: 8\n", f);
        fclose(f);
    }
    f = fopen(hc_path(dir, "rich/boards/b1.yaml"), "w");
    if (f) {
        fputs("name: b1\npositions: p.jsonl.gz\nnnBuffer: 9\nmaxBatchSize: 5\n", f);
        fclose(f);
    }
    char rich[1200];
    snprintf(rich, sizeof rich, "%s/rich/suite.yaml", dir);
    hc_err err = {0};
    hc_suite *s = hc_suite_parse(rich_suite, strlen(rich_suite), rich, &err);
    if (hc_check("suite-write-2.1", s && s->n_cases == 2 * 1 * 3 + 2 * 2 + 3 + 2 && s->n_includes == 3 &&
                                        s->tier_files[0] && s->nets[0].file && s->boards[0].file,
                 "the rich suite: %s (%zu cases, %zu includes)", err.msg, s ? s->n_cases : 0,
                 s ? s->n_includes : 0)) {
        round_trip("suite-write-2.2", s, hc_path(dir, "w/rich.yaml"));
    } else
        hc_fail_n("suite-write-2.2", 3, "not run: the rich suite did not load");
    hc_suite_free(s);

    /* 3. A suite built in memory: where says its place; written and read back equal; the adders'
     *    errors. */
    s = hc_suite_new(hc_path(dir, "built.yaml"), "built", &err);
    hc_net_cfg n = {.name = "g", .model = "/nets/g.bin.gz", .model_version = 8, .notes = "new\nline"};
    const char *tiers[] = {"fp16", "fp32-strict"};
    int ok = s && hc_suite_add_net(s, &n, &err) == 0 && hc_suite_add_board_file(s, "suites/boards/size9.yaml", &err) == 0 &&
             hc_suite_add_board_file(s, "suites/boards/rect.yaml", &err) == 1 &&
             hc_suite_add_backend(s, "r", "ref32", tiers, 2, &err) == 0 &&
             hc_suite_add_backend(s, "e", "emulate:bf16", tiers, 1, &err) == 1;
    for (size_t b = 0; ok && b < 2; b++)
        for (size_t k = 0; ok && k < 2; k++) {
            long c = hc_suite_add_case(s, 0, 1 - b, k, &err);
            ok = c == (long)(2 * b + k);
            if (ok && b == 1)
                s->cases[c].settings.max_batch_size = 2;
        }
    char want[1200];
    snprintf(want, sizeof want, "%s: backends[1]", s ? s->path : "");
    hc_check("suite-write-3.1", ok && s->n_cases == 4 && s->n_tiers == 2 && !strcmp(s->backends[1].where, want) &&
                                    s->cases[2].settings.max_batch_size == 2 && s->boards[0].max_batch_size == 6,
             "the built suite: %s (where \"%s\")", err.msg, ok ? s->backends[1].where : "");
    if (ok)
        round_trip("suite-write-3.2", s, hc_path(dir, "w/built.yaml"));
    else
        hc_fail_n("suite-write-3.2", 3, "not run: the suite was not built");
    int dup = s && hc_suite_add_net(s, &n, &err) < 0 && strstr(err.msg, "duplicate name \"g\"");
    const char *bad_tier[] = {"fp61"};
    hc_check("suite-write-3.3", dup && hc_suite_add_backend(s, "x", "ref32", bad_tier, 1, &err) < 0 &&
                                    strstr(err.msg, "unknown tier \"fp61\"") && strstr(err.msg, "backends[2]"),
             "a duplicate net or an unknown tier: %s", err.msg);
    hc_suite_free(s);
    s = hc_suite_load("suites/testgpuerror.yaml", &err);
    hc_check("suite-write-3.4", s && hc_suite_add_net(s, &n, &err) < 0 && err.code == HC_EINTERNAL,
             "an adder on a suite read from a file: %s", err.msg);
    hc_suite_free(s);

    /* 4. What the format cannot hold: a string not UTF-8, a case whose NN buffer is not its board's. */
    s = hc_suite_new(hc_path(dir, "bad.yaml"), "bad", &err);
    hc_net_cfg bad = {.name = "b", .model = "/nets/\xff.bin.gz", .model_version = -1};
    const char *fp32[] = {"fp32"};
    int built = s && hc_suite_add_net(s, &bad, &err) == 0 && hc_suite_add_board_file(s, "suites/boards/size9.yaml", &err) == 0 &&
                hc_suite_add_backend(s, "r", "ref32", fp32, 1, &err) == 0 && hc_suite_add_case(s, 0, 0, 0, &err) == 0;
    char *text = built ? hc_suite_format(s, s->path, NULL, NULL, &err) : NULL;
    hc_check("suite-write-4.1", built && !text && err.code == HC_ECONFIG && strstr(err.msg, "model") &&
                                    strstr(err.msg, "not UTF-8"),
             "a model path that is no UTF-8: %s", text ? text : err.msg);
    free(text);
    if (built) {
        s->nets[0].model = "/nets/ok.bin.gz";
        s->cases[0].settings.nn_x_len = 7;
    }
    text = built ? hc_suite_format(s, s->path, NULL, NULL, &err) : NULL;
    hc_check("suite-write-4.2", built && !text && strstr(err.msg, "case 0") && strstr(err.msg, "NN buffer"),
             "a case of another NN buffer than its board's: %s", text ? text : err.msg);
    free(text);
    hc_check("suite-write-4.3", built && hc_suite_write(s, hc_path(dir, "w/bad.yaml"), NULL, &err) == -1 &&
                                    access(hc_path(dir, "w/bad.yaml"), F_OK) != 0,
             "a suite that cannot be written leaves no file");
    hc_suite_free(s);

    /* 5. halfcheck katago's suite for a real layout: the shipped families and boards, a net of
     *    each family, both engines; written and read back, the same suite. */
    static hc_katago_family fams[HC_KATAGO_MAX_FAMILIES];
    int n_fams = 0;
    char data[4200], out[1200], work[1300];
    snprintf(data, sizeof data, "%s/suites", cwd);
    snprintf(out, sizeof out, "%s/%s/katago-suite.yaml", cwd, dir);
    snprintf(work, sizeof work, "%s/%s/katago-engine", cwd, dir);
    const hc_katago_net nets[] = {{"conv", "/models/g170.bin.gz", 8}, {"nbt", "/models/b18 nbt.bin.gz", 14},
                                  {"tf", "/models/it's.txt.gz", 17}};
    const char *kt[] = {"fp16", "fp32"};
    hc_katago_plan plan = {.suite = out, .workdir = work, .data = data, .fams = fams, .nets = nets, .n_nets = 3,
                           .katago = "/opt/katago dir/katago", .analysis_config = "/cfg/analysis.cfg",
                           .gtp_config = "/cfg/gtp \"x\".cfg", .extra = "numEigenThreadsPerModel=1", .tiers = kt,
                           .n_tiers = 2};
    s = hc_katago_families_load(data, fams, &n_fams, &err) ? NULL : (plan.n_fams = n_fams, hc_katago_suite(&plan, &err));
    size_t want_cases = 0;
    for (size_t i = 0; s && i < 3; i++)
        want_cases += 2 * (size_t)hc_katago_family_of(fams, n_fams, nets[i].version)->n_boards;
    hc_check("suite-write-5.1", s && s->n_cases == want_cases && s->n_backends == 2 &&
                                    s->modes == (HC_MODE_UNBATCHED | HC_MODE_BATCHED) && s->n_includes == s->n_boards &&
                                    strstr(s->backends[0].spec, "-model '{model}'") &&
                                    strstr(s->backends[0].spec, "nnForcedSymmetry={symmetry}") &&
                                    strstr(s->backends[1].spec, "gtpForceMaxNNSize=true"),
             "the katago suite: %s (%zu cases, want %zu)", err.msg, s ? s->n_cases : 0, want_cases);
    if (s) {
        round_trip("suite-write-5.2", s, hc_path(dir, "w/katago.yaml"));
    } else
        hc_fail_n("suite-write-5.2", 3, "not run: no katago suite");
    /* A net of a model version in no family is refused, naming the file. */
    hc_katago_net odd = {"odd", "/models/odd.bin.gz", 2};
    plan.nets = &odd;
    plan.n_nets = 1;
    hc_suite *none = s ? hc_katago_suite(&plan, &err) : NULL;
    hc_check("suite-write-5.3", s && !none && strstr(err.msg, "/models/odd.bin.gz: model version 2 is in no family"),
             "a net in no family: %s", err.msg);
    hc_suite_free(none);
    hc_suite_free(s);
    return hc_test_exit();
}
