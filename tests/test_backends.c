/* The file:, mutate: and fault: backends.
 *  - registry: the three kinds are found by prefix and their params passed on, fault: only
 *    through the test registry (tests/lib/testkinds.h); every kind has its help;
 *  - file: KataGo's golden outputs of g170 on the 10x14 set (golden format) and the same
 *    outputs rewritten in KataGo's reference-file format pass the fp32 gates against ref32 in a
 *    suite; records are picked by the position's index (a reversed subset); errors name the
 *    file (missing, too few records, buffer size, malformed);
 *  - mutate: and fault: at the raw-heads level on synthetic rows: what each one changes and
 *    what it leaves alone, against the same inner backend; parameter errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/config/config.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "reports/results.h"
#include "harness/run/runner.h"
#include "tests/lib/testkinds.h"

static const char *const net_rel = "nets/g170-b6c96-s175395328-d26788732.bin.gz";
static const char *const golden_rel = "golden/outputs/g170_size10x14.jsonl.gz";
static const char *const positions_rel = "positions/size10x14.jsonl.gz";

static int contains(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

static void test_registry(void)
{
    hc_err err = {0};
    const char *params = NULL;
    const hc_backend_registry *treg = hc_test_registry();
    const hc_backend_kind *k = hc_backend_find(NULL, "file:/x/y.jsonl", &params, &err);
    hc_check("backends-1.1", k && strcmp(k->name, "file") == 0 && k->caps.shape == HC_BACKEND_POSITION &&
                                 k->ops->eval_positions && !k->ops->eval && strcmp(params, "/x/y.jsonl") == 0,
             "file: not found or wrong shape (params \"%s\")", params ? params : "");
    k = hc_backend_find(NULL, "mutate:stale-row:ref32", &params, &err);
    hc_check("backends-1.2", k && strcmp(k->name, "mutate") == 0 && k->caps.shape == HC_BACKEND_TENSOR &&
                                 strcmp(params, "stale-row:ref32") == 0,
             "mutate: not found (params \"%s\")", params ? params : "");
    const hc_backend_kind *user_fault = hc_backend_find(NULL, "fault:segv@5", NULL, &err);
    k = hc_backend_find(treg, "fault:segv@5", &params, &err);
    hc_check("backends-1.3", !user_fault && k && strcmp(k->name, "fault") == 0 && k->caps.shape == HC_BACKEND_TENSOR &&
                                 strcmp(params, "segv@5") == 0,
             "fault: in the user registry %d, not in the test one (params \"%s\")", user_fault != NULL,
             params ? params : "");
    k = hc_backend_find(treg, "nosuch:1", &params, &err);
    hc_check("backends-1.4", !k && contains(err.msg, "file") && contains(err.msg, "mutate") && contains(err.msg, "fault"),
             "unknown kind message does not list the new kinds: %s", err.msg);
    int i = 0;
    for (const hc_backend_registry *r = treg; r; r = r->next)
        for (const hc_backend_kind *const *kk = r->kinds; *kk; kk++) {
            char name[48];
            snprintf(name, sizeof name, "backends-1.5.%d", ++i);
            hc_check(name, (*kk)->syntax && strncmp((*kk)->syntax, (*kk)->name, strlen((*kk)->name)) == 0 &&
                               (*kk)->summary && strlen((*kk)->summary) > 10 && (*kk)->parse && (*kk)->open &&
                               (*kk)->ops && (*kk)->ops->close,
                     "%s: no syntax, summary, parse, open or close", (*kk)->name);
        }
}

/* --- file: ------------------------------------------------------------------------------ */

/* A result of a one-backend suite: both modes checked and passing every tier. 5 checks. */
enum { SUITE_CHECKS = 5, SUITE_MODES = 2 };
/* test_file's checks: 2.1-2.2, two suites, 4.1 and 4.3-4.5, 5.1-5.7 */
enum { FILE_CHECKS = 2 + 2 * SUITE_CHECKS + 4 + 7 };
static void run_file_suite(const char *id, const char *tmp, const char *net, const char *positions, const char *outputs)
{
    char yaml[4096], suite_path[2048];
    int len = snprintf(yaml, sizeof yaml,
                       "name: file-backend\n"
                       "nets:\n  - {name: g170, model: \"%s\"}\n"
                       "boards:\n  - {name: b10x14, positions: \"%s\", nnBuffer: 10x14}\n"
                       "backends:\n  - {name: recorded, backend: \"file:%s\", tiers: [fp32, fp32-strict]}\n",
                       net, positions, outputs);
    snprintf(suite_path, sizeof suite_path, "%s/%s.yaml", tmp, id);
    hc_err err = {0};
    hc_suite *suite = hc_suite_parse(yaml, (size_t)len, suite_path, &err);
    char name[64];
    snprintf(name, sizeof name, "%s.1", id);
    if (!hc_check(name, suite != NULL, "%s", err.msg)) {
        snprintf(name, sizeof name, "%s.2", id);
        hc_fail_n(name, SUITE_CHECKS - 1, "not run: the suite did not parse");
        return;
    }
    char cache[2100];
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    hc_run *run = hc_test_run_suite(suite, cache, tmp, &err);
    snprintf(name, sizeof name, "%s.2", id);
    if (hc_check(name, run != NULL, "%s", err.msg)) {
        const hc_results *rs = hc_run_results(run);
        snprintf(name, sizeof name, "%s.3", id);
        hc_check(name, hc_run_status(run) == 0 && rs->n == SUITE_MODES, "status %d, %zu results", hc_run_status(run),
                 rs->n);
        for (size_t i = 0; i < SUITE_MODES; i++) {
            snprintf(name, sizeof name, "%s.4.%zu", id, i + 1);
            if (i >= rs->n) {
                hc_check(name, 0, "no result %zu", i + 1);
                continue;
            }
            const hc_result *r = &rs->items[i];
            int ok = r->outcome == HC_OUT_CHECKED && !hc_result_is_error(r) && r->checks && r->n_tiers == 2 &&
                     r->checks[0].pass && r->checks[1].pass;
            hc_check(name, ok, "%s: %s", r->mode, r->message ? r->message : "a tier failed");
            if (r->stats)
                printf("# %s %s: KataGo's outputs vs ref32 on %zu positions: winrate max %.3g%%, topPolicy max %.3g%%, "
                       "ownership max %.3g, lead max %.3g\n",
                       id, r->mode, r->stats->n_positions, 100 * r->stats->m[HC_M_WINRATE].v[HC_P_MAX],
                       100 * r->stats->m[HC_M_TOP_POLICY].v[HC_P_MAX], r->stats->m[HC_M_OWNERSHIP].v[HC_P_MAX],
                       r->stats->m[HC_M_LEAD].v[HC_P_MAX]);
        }
        hc_run_free(run);
    } else {
        snprintf(name, sizeof name, "%s.3", id);
        hc_fail_n(name, SUITE_CHECKS - 2, "not run: the suite did not run");
    }
    hc_suite_free(suite);
}

static int same_output(const hc_nnoutput *a, const hc_nnoutput *b)
{
    if (a->nn_x_len != b->nn_x_len || a->nn_y_len != b->nn_y_len)
        return 0;
    size_t area = (size_t)a->nn_x_len * (size_t)a->nn_y_len;
    if (a->white_win_prob != b->white_win_prob || a->white_loss_prob != b->white_loss_prob ||
        a->white_no_result_prob != b->white_no_result_prob || a->white_score_mean != b->white_score_mean ||
        a->white_score_mean_sq != b->white_score_mean_sq || a->white_lead != b->white_lead ||
        a->var_time_left != b->var_time_left || a->shortterm_winloss_error != b->shortterm_winloss_error ||
        a->shortterm_score_error != b->shortterm_score_error || a->policy_optimism_used != b->policy_optimism_used)
        return 0;
    if (memcmp(a->policy_probs, b->policy_probs, sizeof(float) * (area + 1)) != 0)
        return 0;
    if (!a->white_owner_map || !b->white_owner_map)
        return !a->white_owner_map && !b->white_owner_map;
    return memcmp(a->white_owner_map, b->white_owner_map, sizeof(float) * area) == 0;
}

/* Evaluates ps through a file: spec; returns 0 or -1 with err. outs has n entries. */
static int eval_file(const char *spec, const hc_position *ps, size_t n, int nx, int ny, int batch, hc_nnoutput *outs,
                     hc_err *err)
{
    hc_backend b = {0};
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = NULL, .nx = nx, .ny = ny,
                                                         .max_batch = batch, .threads = 1}, err))
        return -1;
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    int rc = hc_eval_positions(&b, NULL, ps, n, NULL, batch, &s, outs, NULL, NULL, NULL, NULL, err);
    hc_backend_close(&b);
    return rc;
}

static void free_outs(hc_nnoutput *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hc_nnoutput_free(&o[i]);
}

static int write_outputs(const char *path, const hc_nnoutput *o, size_t n, int format, hc_err *err)
{
    hc_nnoutwriter *w = hc_nnoutwriter_open(path, format, err);
    if (!w)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (hc_nnoutwriter_write(w, &o[i], "0123456789abcdef0123456789abcdef", err)) {
            hc_nnoutwriter_abort(w);
            return -1;
        }
    return hc_nnoutwriter_commit(w, err);
}

static void test_file(const char *tmp)
{
    const unsigned long mark = hc_test_reported; /* FILE_CHECKS */
    const char *p = hc_shared(net_rel);
    char net[2048], golden[2048], positions[2048], katago[2300], path[2300];
    if (!p) {
        hc_skip_n("backends-2", hc_test_left(mark, FILE_CHECKS), "../shared/%s absent", net_rel);
        return;
    }
    hc_abspath(p, net, sizeof net);
    if (!(p = hc_shared(golden_rel))) {
        hc_skip_n("backends-2", hc_test_left(mark, FILE_CHECKS), "../shared/%s absent", golden_rel);
        return;
    }
    hc_abspath(p, golden, sizeof golden);
    if (!(p = hc_shared(positions_rel))) {
        hc_skip_n("backends-2", hc_test_left(mark, FILE_CHECKS), "../shared/%s absent", positions_rel);
        return;
    }
    hc_abspath(p, positions, sizeof positions);

    hc_err err = {0};
    hc_nnoutput *gold = NULL;
    size_t n_gold = 0;
    if (!hc_check("backends-2.1", hc_nnoutputs_load(golden, &gold, &n_gold, &err) == 0 && n_gold == 140, "%s (%zu)",
                  err.msg, n_gold)) {
        hc_fail_n("backends-2.rest", hc_test_left(mark, FILE_CHECKS), "not run: the golden outputs did not load");
        return;
    }
    hc_position *ps = NULL;
    size_t n_ps = 0;
    if (!hc_check("backends-2.2", hc_positions_load(positions, &ps, &n_ps, &err) == 0 && n_ps == n_gold, "%s (%zu)",
                  err.msg, n_ps)) {
        hc_nnoutputs_free(gold, n_gold);
        hc_fail_n("backends-2.rest", hc_test_left(mark, FILE_CHECKS), "not run: the positions did not load");
        return;
    }

    /* The golden file against ref32, through the runner: KataGo's fp32 Eigen outputs pass. */
    run_file_suite("backends-3", tmp, net, positions, golden);

    /* The same outputs in KataGo's own reference-file format (nnHash, policy padded to 362). */
    snprintf(katago, sizeof katago, "%s/g170_size10x14.katago.jsonl", tmp);
    hc_check("backends-4.1", write_outputs(katago, gold, n_gold, HC_NNOUT_KATAGO, &err) == 0, "%s", err.msg);
    run_file_suite("backends-4.2", tmp, net, positions, katago);

    /* Records are picked by index: the last 40 positions in reverse order, batches of 7. */
    size_t n_sub = 40;
    hc_position *sub = calloc(n_sub, sizeof *sub);
    hc_nnoutput *outs = calloc(n_sub, sizeof *outs);
    for (size_t i = 0; sub && i < n_sub; i++)
        hc_position_copy(&sub[i], &ps[n_ps - 1 - i], &err);
    char spec[2400];
    snprintf(spec, sizeof spec, "file:%s", katago);
    int rc = sub && outs ? eval_file(spec, sub, n_sub, 10, 14, 7, outs, &err) : -1;
    int same = rc == 0;
    for (size_t i = 0; same && i < n_sub; i++)
        same = same_output(&outs[i], &gold[sub[i].index]);
    hc_check("backends-4.3", same, "file: on a reversed subset: %s", rc ? err.msg : "outputs differ from the golden records");
    free_outs(outs, n_sub);

    /* A file without ownership maps hands back outputs without them (no zeros made up). */
    snprintf(path, sizeof path, "%s/no-ownership.jsonl", tmp);
    hc_nnoutput bare[3];
    for (int i = 0; i < 3; i++) {
        bare[i] = gold[i];
        bare[i].white_owner_map = NULL;
    }
    hc_check("backends-4.4", write_outputs(path, bare, 3, HC_NNOUT_GOLDEN, &err) == 0, "%s", err.msg);
    snprintf(spec, sizeof spec, "file:%s", path);
    hc_nnoutput own3[3];
    memset(own3, 0, sizeof own3);
    rc = eval_file(spec, ps, 3, 10, 14, 3, own3, &err);
    hc_check("backends-4.5", rc == 0 && !own3[0].white_owner_map && !own3[2].white_owner_map &&
                                 own3[1].white_lead == gold[1].white_lead,
             "no-ownership file: rc %d: %s", rc, err.msg);
    free_outs(own3, 3);

    /* Errors, each naming the file. */
    snprintf(spec, sizeof spec, "file:%s/no-such-file.jsonl", tmp);
    hc_backend b = {0};
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = NULL, .nx = 10, .ny = 14,
                                                          .max_batch = 1, .threads = 1}, &err);
    hc_check("backends-5.1", rc == -1 && contains(err.msg, "no-such-file.jsonl"), "missing file: %s", err.msg);

    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "file:", .net = NULL, .nx = 10, .ny = 14,
                                                          .max_batch = 1, .threads = 1}, &err);
    hc_check("backends-5.2", rc == -1 && contains(err.msg, "path"), "no path: %s", err.msg);

    snprintf(spec, sizeof spec, "file:%s", golden);
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = NULL, .nx = 19, .ny = 19,
                                                          .max_batch = 1, .threads = 1}, &err);
    hc_check("backends-5.3", rc == -1 && contains(err.msg, golden) && contains(err.msg, "10x14") && contains(err.msg, "19x19"),
             "buffer size mismatch: %s", err.msg);

    /* Too few records: the first 10 outputs for the last 40 positions. */
    snprintf(path, sizeof path, "%s/first10.jsonl", tmp);
    hc_check("backends-5.4", write_outputs(path, gold, 10, HC_NNOUT_GOLDEN, &err) == 0, "%s", err.msg);
    snprintf(spec, sizeof spec, "file:%s", path);
    hc_nnoutput *few = calloc(n_sub, sizeof *few);
    rc = few ? eval_file(spec, sub, n_sub, 10, 14, 4, few, &err) : -1;
    char want[64];
    snprintf(want, sizeof want, "index %ld", sub[0].index);
    hc_check("backends-5.5", rc == -1 && contains(err.msg, path) && contains(err.msg, "10 outputs") && contains(err.msg, want),
             "count mismatch: %s", err.msg);
    if (few)
        for (size_t i = 0; i < n_sub; i++)
            hc_nnoutput_free(&few[i]);
    free(few);

    /* Malformed: the error names the file and line. */
    snprintf(path, sizeof path, "%s/bad.jsonl", tmp);
    FILE *f = fopen(path, "w");
    if (f) {
        char *line = hc_nnoutput_format(&gold[0], HC_NNOUT_GOLDEN, NULL, &err);
        fprintf(f, "%s\n{\"whiteWinProb\": oops}\n", line ? line : "");
        free(line);
        fclose(f);
    }
    snprintf(spec, sizeof spec, "file:%s", path);
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = NULL, .nx = 10, .ny = 14,
                                                          .max_batch = 1, .threads = 1}, &err);
    char at[2400];
    snprintf(at, sizeof at, "%s:2", path);
    hc_check("backends-5.6", rc == -1 && contains(err.msg, at), "malformed line: %s", err.msg);

    /* An empty file is an error, not a backend that fails later. */
    snprintf(path, sizeof path, "%s/empty.jsonl", tmp);
    f = fopen(path, "w");
    if (f)
        fclose(f);
    snprintf(spec, sizeof spec, "file:%s", path);
    rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = NULL, .nx = 10, .ny = 14,
                                                          .max_batch = 1, .threads = 1}, &err);
    hc_check("backends-5.7", rc == -1 && contains(err.msg, path) && contains(err.msg, "no outputs"), "empty file: %s",
             err.msg);

    hc_positions_free(sub, n_sub);
    free(outs);
    hc_positions_free(ps, n_ps);
    hc_nnoutputs_free(gold, n_gold);
}

/* --- mutate: and fault: on synthetic rows ---------------------------------------------- */

enum { NX = 9, NY = 9, AREA = NX * NY, BATCH = 4 };

typedef struct rows {
    float *spatial, *global;
    int c, g;
} rows;

/* Row r: a board of (9-r)x9 in the top-left corner of the buffer (mask channel 0), a few
 * stones from a fixed pattern, zero globals but for a komi-like value. */
static int rows_make(rows *rw, const hc_net *net, int smaller_boards)
{
    rw->c = net->num_input_c;
    rw->g = net->num_input_global_c;
    rw->spatial = calloc((size_t)BATCH * (size_t)rw->c * AREA, sizeof(float));
    rw->global = calloc((size_t)BATCH * (size_t)(rw->g ? rw->g : 1), sizeof(float));
    if (!rw->spatial || !rw->global)
        return -1;
    for (int r = 0; r < BATCH; r++) {
        float *s = rw->spatial + (size_t)r * (size_t)rw->c * AREA;
        int xs = smaller_boards ? NX - r : NX;
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < xs; x++) {
                int i = y * NX + x;
                s[i] = 1.0f;
                int h = (x * 7 + y * 13 + r * 5) % 11;
                if (h == 0)
                    s[AREA + i] = 1.0f;
                else if (h == 1)
                    s[2 * AREA + i] = 1.0f;
            }
        if (rw->g > 5)
            rw->global[(size_t)r * (size_t)rw->g + 5] = -0.5f + 0.1f * (float)r;
    }
    return 0;
}

static void rows_free(rows *rw)
{
    free(rw->spatial);
    free(rw->global);
}

static hc_raw_heads *heads_new(const hc_net *net)
{
    return hc_raw_heads_new(BATCH, NX, NY, net->num_policy_c, net->num_score_value_c, NULL);
}

static int eval_spec(const char *spec, const hc_net *net, const rows *rw, int batch, int times, hc_raw_heads *out,
                     hc_err *err)
{
    hc_backend b = {0};
    hc_backend_open_opts o = {.spec = spec, .net = net, .nx = NX, .ny = NY, .max_batch = BATCH, .threads = 1,
                              .registry = hc_test_registry()};
    if (hc_backend_open_with(&b, &o, err))
        return -1;
    int rc = 0;
    for (int t = 0; t < times && rc == 0; t++) {
        const float *sp = rw->spatial + (size_t)(t % 2) * (size_t)rw->c * AREA; /* shifts rows on odd evals */
        const float *gl = rw->global + (size_t)(t % 2) * (size_t)rw->g;
        int k = t % 2 ? (batch > BATCH - 1 ? BATCH - 1 : batch) : batch;
        rc = hc_backend_eval(&b, k, sp, gl, NULL, out, err);
    }
    hc_backend_close(&b);
    return rc;
}

static float max_abs_diff(const float *a, const float *b, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        m = (float)hc_max_nan(m, d);
    }
    return m;
}

static int row_equal(const hc_raw_heads *a, int ra, const hc_raw_heads *b, int rb)
{
    size_t pc = (size_t)a->policy_channels, sc = (size_t)a->score_channels;
    return memcmp(a->policy + (size_t)ra * pc * AREA, b->policy + (size_t)rb * pc * AREA, sizeof(float) * pc * AREA) == 0 &&
           memcmp(a->policy_pass + (size_t)ra * pc, b->policy_pass + (size_t)rb * pc, sizeof(float) * pc) == 0 &&
           memcmp(a->value + (size_t)ra * 3, b->value + (size_t)rb * 3, sizeof(float) * 3) == 0 &&
           memcmp(a->score + (size_t)ra * sc, b->score + (size_t)rb * sc, sizeof(float) * sc) == 0 &&
           memcmp(a->ownership + (size_t)ra * AREA, b->ownership + (size_t)rb * AREA, sizeof(float) * AREA) == 0;
}

static int any_nan(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i]))
            return 1;
    return 0;
}

/* Parameter errors (backends-9.N): the spec, and what its message must say. */
static const struct {
    const char *spec, *want;
} bad_specs[] = {
    {"mutate:pass-dropped", "KIND:BACKEND"},
    {"mutate:no-such-bug:ref32", "no-such-bug"},
    {"mutate:pass-dropped:nosuch", "nosuch"},
    {"fault:boom", "boom"},
    {"fault:segv@x", "@N"},
    {"fault:segv@-1", "@N"},
    {"fault:segv@3:", "empty backend"},
    {"fault:hang:nosuch", "nosuch"},
    {"fault:error@open", "injected failure at open"},
    {"fault:nan-value@open", "@open does not apply"},
    {"fault:segv@opener", "@N"},
};
enum { N_BAD = sizeof bad_specs / sizeof bad_specs[0] };
/* test_wrappers' checks: 6.1-6.3, 7.1-7.11, 8.1-8.5, a parameter error each, 9.19 and 9.20 */
enum { WRAP_CHECKS = 3 + 11 + 5 + N_BAD + 2 };

static void test_wrappers(void)
{
    const unsigned long mark = hc_test_reported; /* WRAP_CHECKS */
    const char *p = hc_shared(net_rel);
    if (!p) {
        hc_skip_n("backends-6", hc_test_left(mark, WRAP_CHECKS), "../shared/%s absent", net_rel);
        return;
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(p, &err);
    if (!hc_check("backends-6.1", net != NULL, "%s", err.msg)) {
        hc_fail_n("backends-6.rest", hc_test_left(mark, WRAP_CHECKS), "not run: the net did not load");
        return;
    }
    hc_net_reduce_activations(net);
    rows full = {0}, small = {0};
    hc_raw_heads *ref = heads_new(net), *got = heads_new(net), *ref1 = heads_new(net);
    if (!hc_check("backends-6.2", rows_make(&full, net, 0) == 0 && rows_make(&small, net, 1) == 0 && ref && got && ref1,
                  "out of memory"))
        goto done;
    const size_t pc = (size_t)net->num_policy_c, sc = (size_t)net->num_score_value_c;

    /* Plain ref32 as the baseline, on boards of different sizes in one batch. */
    hc_check("backends-6.3", eval_spec("ref32", net, &small, BATCH, 1, ref, &err) == 0, "%s", err.msg);

    /* pass-dropped: pass logits 0, everything else untouched. */
    int rc = eval_spec("mutate:pass-dropped:ref32", net, &small, BATCH, 1, got, &err);
    int pass_zero = 1, pass_was_nonzero = 0;
    for (size_t i = 0; i < BATCH * pc; i++) {
        pass_zero &= got->policy_pass[i] == 0.0f;
        pass_was_nonzero |= ref->policy_pass[i] != 0.0f;
    }
    hc_check("backends-7.1",
             rc == 0 && pass_zero && pass_was_nonzero &&
                 memcmp(got->policy, ref->policy, sizeof(float) * BATCH * pc * AREA) == 0 &&
                 memcmp(got->value, ref->value, sizeof(float) * BATCH * 3) == 0,
             "pass-dropped: rc %d, pass zero %d, ref pass nonzero %d: %s", rc, pass_zero, pass_was_nonzero, err.msg);

    /* policy-transposed on a square buffer: an exact transpose of every policy plane. */
    rc = eval_spec("mutate:policy-transposed:ref32", net, &small, BATCH, 1, got, &err);
    int transposed = rc == 0, changed = 0;
    for (size_t pl = 0; transposed && pl < BATCH * pc; pl++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                float a = got->policy[pl * AREA + (size_t)(y * NX + x)], b = ref->policy[pl * AREA + (size_t)(x * NX + y)];
                transposed &= a == b;
                changed |= a != ref->policy[pl * AREA + (size_t)(y * NX + x)];
            }
    hc_check("backends-7.2", transposed && changed, "policy-transposed: rc %d, transposed %d, changed %d: %s", rc,
             transposed, changed, err.msg);

    /* symmetry-not-inverted: policy and ownership rotated by 180 degrees, values untouched. */
    rc = eval_spec("mutate:symmetry-not-inverted:ref32", net, &small, BATCH, 1, got, &err);
    int rotated = rc == 0;
    for (int r = 0; rotated && r < BATCH; r++)
        for (int i = 0; i < AREA; i++) {
            size_t j = (size_t)(AREA - 1 - i);
            rotated &= got->ownership[(size_t)r * AREA + (size_t)i] == ref->ownership[(size_t)r * AREA + j];
            rotated &= got->policy[(size_t)r * pc * AREA + (size_t)i] == ref->policy[(size_t)r * pc * AREA + j];
        }
    hc_check("backends-7.3", rotated && memcmp(got->value, ref->value, sizeof(float) * BATCH * 3) == 0,
             "symmetry-not-inverted: rc %d: %s", rc, err.msg);

    /* fp16-overflow: NaN in every head of rows whose board is smaller than the buffer (rows
     * 1..3 here), row 0 (full board) untouched. */
    rc = eval_spec("mutate:fp16-overflow:ref32", net, &small, BATCH, 1, got, &err);
    int nan_ok = rc == 0 && row_equal(got, 0, ref, 0);
    for (int r = 1; nan_ok && r < BATCH; r++)
        nan_ok = any_nan(got->value + r * 3, 3) && any_nan(got->policy + (size_t)r * pc * AREA, pc * AREA) &&
                 any_nan(got->ownership + (size_t)r * AREA, AREA);
    hc_check("backends-7.4", nan_ok, "fp16-overflow: rc %d: %s", rc, err.msg);
    rc = eval_spec("mutate:fp16-overflow:ref32", net, &full, BATCH, 1, got, &err);
    hc_check("backends-7.5", rc == 0 && !any_nan(got->value, BATCH * 3) && !any_nan(got->ownership, BATCH * AREA),
             "fp16-overflow on full boards: rc %d: %s", rc, err.msg);

    /* mask-stride: row 0 right, the other rows (smaller boards) wrong; a batch of one right;
     * full boards (one mask for all) right. */
    rc = eval_spec("mutate:mask-stride:ref32", net, &small, BATCH, 1, got, &err);
    int ms = rc == 0 && row_equal(got, 0, ref, 0);
    for (int r = 1; ms && r < BATCH; r++)
        ms = max_abs_diff(got->value + r * 3, ref->value + r * 3, 3) > 1e-3f;
    hc_check("backends-7.6", ms, "mask-stride batched: rc %d: %s", rc, err.msg);
    rc = eval_spec("mutate:mask-stride:ref32", net, &small, 1, 1, got, &err);
    hc_check("backends-7.7", rc == 0 && row_equal(got, 0, ref, 0), "mask-stride unbatched: rc %d: %s", rc, err.msg);
    hc_check("backends-7.8", eval_spec("ref32", net, &full, BATCH, 1, ref1, &err) == 0, "%s", err.msg);
    rc = eval_spec("mutate:mask-stride:ref32", net, &full, BATCH, 1, got, &err);
    int same_full = rc == 0;
    for (int r = 0; same_full && r < BATCH; r++)
        same_full = row_equal(got, r, ref1, r);
    hc_check("backends-7.9", same_full, "mask-stride on full boards changed the output: rc %d: %s", rc, err.msg);

    /* stale-row: eval 1 rows 0..3, eval 2 rows 1..3 of the set: row 1 of the second batch is
     * row 1 of the first batch. ref1 = ref32 on the second batch. */
    rc = eval_spec("mutate:stale-row:ref32", net, &small, BATCH, 2, got, &err);
    hc_check("backends-7.10", eval_spec("ref32", net, &small, BATCH, 2, ref1, &err) == 0, "%s", err.msg);
    hc_check("backends-7.11",
             rc == 0 && got->batch == BATCH - 1 && row_equal(got, 1, ref, 1) && !row_equal(got, 1, ref1, 1) &&
                 row_equal(got, 0, ref1, 0) && row_equal(got, 2, ref1, 2),
             "stale-row: rc %d: %s", rc, err.msg);

    /* fault: NaN in the chosen head of the chosen row only; error at its row; the rest real. */
    rc = eval_spec("fault:nan-score@2", net, &small, BATCH, 1, got, &err);
    hc_check("backends-8.1",
             rc == 0 && any_nan(got->score + 2 * sc, sc) && row_equal(got, 1, ref, 1) && row_equal(got, 3, ref, 3) &&
                 memcmp(got->value, ref->value, sizeof(float) * BATCH * 3) == 0,
             "fault:nan-score@2: rc %d: %s", rc, err.msg);
    rc = eval_spec("fault:nan-pass@0", net, &small, BATCH, 1, got, &err);
    hc_check("backends-8.2", rc == 0 && any_nan(got->policy_pass, pc) && !any_nan(got->policy_pass + pc, pc * (BATCH - 1)),
             "fault:nan-pass@0: rc %d: %s", rc, err.msg);
    /* Row 5 is in the second eval (rows 4..6). */
    rc = eval_spec("fault:error@5", net, &small, BATCH, 1, got, &err);
    hc_check("backends-8.3", rc == 0, "fault:error@5 fired in the first batch: %s", err.msg);
    rc = eval_spec("fault:error@5", net, &small, BATCH, 2, got, &err);
    hc_check("backends-8.4", rc == -1 && err.code == HC_EBACKEND && contains(err.msg, "injected"),
             "fault:error@5 in the second batch: rc %d: %s", rc, err.msg);
    rc = eval_spec("fault:nan-value:ref32", net, &small, BATCH, 1, got, &err);
    hc_check("backends-8.5", rc == 0 && any_nan(got->value, 3) && !any_nan(got->value + 3, 3 * (BATCH - 1)),
             "fault:nan-value:ref32: rc %d: %s", rc, err.msg);

    /* Parameter errors. */
    hc_backend b = {0};
    for (size_t i = 0; i < N_BAD; i++) {
        char name[48];
        snprintf(name, sizeof name, "backends-9.%zu", i + 1);
        hc_backend_open_opts o = {.spec = bad_specs[i].spec, .net = net, .nx = NX, .ny = NY, .max_batch = BATCH,
                                  .threads = 1, .registry = hc_test_registry()};
        rc = hc_backend_open_with(&b, &o, &err);
        hc_check(name, rc == -1 && contains(err.msg, bad_specs[i].want) && contains(err.msg, bad_specs[i].spec),
                 "%s: rc %d: %s", bad_specs[i].spec, rc, err.msg);
        if (rc == 0)
            hc_backend_close(&b);
    }
    /* A wrapper has no layer hooks of its own: "not supported", naming it. */
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "mutate:stale-row:ref32", .net = net, .nx = NX,
                                                         .ny = NY, .max_batch = BATCH, .threads = 1}, &err) == 0) {
        int t = hc_backend_set_taps(&b, NULL, NULL, &err);
        hc_check("backends-9.19", t == -1 && contains(err.msg, "mutate") && contains(err.msg, "not supported"), "taps: %d: %s",
                 t, err.msg);
        hc_backend_close(&b);
    } else {
        hc_check("backends-9.19", 0, "mutate:stale-row:ref32 did not open: %s", err.msg);
    }
    /* A position backend cannot be mutated: mutations act on raw heads. */
    const char *gp = hc_shared(golden_rel);
    if (gp) {
        char spec[2300];
        snprintf(spec, sizeof spec, "mutate:pass-dropped:file:%s", gp);
        rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = 10, .ny = 14,
                                                              .max_batch = BATCH, .threads = 1}, &err);
        hc_check("backends-9.20", rc == -1 && contains(err.msg, "not a tensor backend"), "rc %d: %s", rc, err.msg);
        if (rc == 0)
            hc_backend_close(&b);
    } else {
        hc_skip("backends-9.20", "../shared/%s absent", golden_rel);
    }

done:
    if (hc_test_left(mark, WRAP_CHECKS))
        hc_fail_n("backends-6.rest", hc_test_left(mark, WRAP_CHECKS), "not run: out of memory");
    rows_free(&full);
    rows_free(&small);
    hc_raw_heads_free(ref);
    hc_raw_heads_free(got);
    hc_raw_heads_free(ref1);
    hc_net_free(net);
}

int main(void)
{
    unsigned n_kinds = 0;
    for (const hc_backend_registry *r = hc_test_registry(); r; r = r->next)
        for (const hc_backend_kind *const *kk = r->kinds; *kk; kk++)
            n_kinds++;
    /* the registry (4, and one per backend kind); 2-5 against KataGo golden outputs; 6-9 on the
     * g170 net */
    hc_plan(4 + n_kinds + FILE_CHECKS + WRAP_CHECKS);
    const char *tmp = hc_tmpdir("test_backends");
    test_registry();
    if (!tmp) {
        hc_skip_rest("backends-2", "no scratch directory");
        return hc_test_exit();
    }
    char tmpbuf[1024];
    hc_abspath(tmp, tmpbuf, sizeof tmpbuf);
    test_file(tmpbuf);
    test_wrappers();
    return hc_test_exit();
}
