/* The reference engine end to end: KataGo's own outputs (golden, Eigen fp32) on positions
 * evaluated at symmetry 0, through the shared post-processing; batch-size invariance and
 * thread-count determinism (same bits); finite outputs on every shared and synth net; the
 * backend registry. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/eval/postprocess.h"

#include "backends/backend.h"
#include "refs/engine.h"
#include "refs/kernels.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "harness/data/sgfmeta.h"
#include "harness/base/stream.h"

enum { NSPATIAL = 22, NGLOBAL = 19 };
static int MAX_GOLDEN = 48;
static hc_engine_opts golden_opts;

typedef struct golden_cfg {
    const char *id, *net, *positions, *features, *outputs;
    int nx, ny;
    const char *meta_profile; /* SGF-metadata profile for nets with a metadata encoder */
} golden_cfg;

static const golden_cfg goldens[] = {
    {"g170-19", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size19.jsonl.gz",
     "golden/features/size19_19x19.f32.gz", "golden/outputs/g170_size19.jsonl.gz", 19, 19, NULL},
    {"g170-13in18x19", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size13.jsonl.gz",
     "golden/features/size13_18x19.f32.gz", "golden/outputs/g170_size13_rectbuffer.jsonl.gz", 18, 19, NULL},
    {"g170-10x14", "nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size10x14.jsonl.gz",
     "golden/features/size10x14_10x14.f32.gz", "golden/outputs/g170_size10x14.jsonl.gz", 10, 14, NULL},
    {"tfrs-19", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", "positions/size19.jsonl.gz",
     "golden/features/size19_19x19.f32.gz", "golden/outputs/tfrs_size19.jsonl.gz", 19, 19, NULL},
    {"tfrs-rect", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", "positions/sizerect.jsonl.gz",
     "golden/features/sizerect_19x19.f32.gz", "golden/outputs/tfrs_sizerect.jsonl.gz", 19, 19, NULL},
    /* synth nets of versions 11-17 take the same V7 rows as g170 */
    {"v11nbt", "nets/synth/pub_v11nbt.bin.gz", "positions/size10x14.jsonl.gz", "golden/features/size10x14_10x14.f32.gz",
     "golden/outputs/synth_pub_v11nbt_size10x14.jsonl.gz", 10, 14, NULL},
    {"v15meta", "nets/synth/pub_v15meta.bin.gz", "positions/size10x14.jsonl.gz", "golden/features/size10x14_10x14.f32.gz",
     "golden/outputs/synth_pub_v15meta_size10x14.jsonl.gz", 10, 14, "preaz_5k"},
    {"v16", "nets/synth/pub_v16.bin.gz", "positions/size10x14.jsonl.gz", "golden/features/size10x14_10x14.f32.gz",
     "golden/outputs/synth_pub_v16_size10x14.jsonl.gz", 10, 14, NULL},
    {"v17nbttf", "nets/synth/pub_v17nbttf.bin.gz", "positions/size10x14.jsonl.gz", "golden/features/size10x14_10x14.f32.gz",
     "golden/outputs/synth_pub_v17nbttf_size10x14.jsonl.gz", 10, 14, NULL},
};

static char *shared_dup(const char *rel)
{
    const char *p = hc_shared(rel);
    return p ? strdup(p) : NULL;
}

static hc_pp_model pp_model_of(const hc_net *net)
{
    hc_pp_model m = {0};
    m.model_version = net->model_version;
    m.policy_channels = net->num_policy_c;
    m.score_channels = net->num_score_value_c;
    m.has_meta = net->trunk.has_meta_encoder;
    m.score_mean_multiplier = net->post.score_mean_multiplier;
    m.score_stdev_multiplier = net->post.score_stdev_multiplier;
    m.lead_multiplier = net->post.lead_multiplier;
    m.variance_time_multiplier = net->post.variance_time_multiplier;
    m.shortterm_value_error_multiplier = net->post.shortterm_value_error_multiplier;
    m.shortterm_score_error_multiplier = net->post.shortterm_score_error_multiplier;
    m.output_scale_multiplier = net->post.output_scale_multiplier;
    return m;
}

/* KataGo suppresses the no-result value unless the ko rule is simple or scoring territory.
 * (A stopgap reading of the rules string until the rules module is merged.) */
static int suppress_no_result(const char *rules)
{
    return !(strstr(rules, "koSIMPLE") || strstr(rules, "scoreTERRITORY"));
}

static const char *gname(const golden_cfg *g, const char *suffix)
{
    static char buf[96];
    snprintf(buf, sizeof buf, "engine-golden-%s.%s", g->id, suffix);
    return buf;
}

/* The checks of one golden set, one determinism net, one hook net, api_checks. */
enum { GOLDEN_CHECKS = 9, DET_CHECKS = 7, HOOK_CHECKS = 6, API_CHECKS = 11, PREP_CHECKS = 3 };

/* Fails what is left of a group of n checks begun at mark: the checks a failed precondition
 * (reported FAIL just before) leaves unrun. */
static void fail_left(const char *name, unsigned long mark, unsigned n)
{
    if (hc_test_left(mark, n))
        hc_fail_n(name, hc_test_left(mark, n), "not run: a precondition failed (see the FAIL above)");
}

static void golden_check(const golden_cfg *g)
{
    const unsigned long mark = hc_test_reported; /* GOLDEN_CHECKS */
    char name[96];
    char *netp = shared_dup(g->net), *posp = shared_dup(g->positions);
    char *featp = shared_dup(g->features), *outp = shared_dup(g->outputs);
    snprintf(name, sizeof name, "engine-golden-%s.0", g->id);
    if (!netp || !posp || !featp || !outp) {
        hc_skip_n(name, hc_test_left(mark, GOLDEN_CHECKS), "shared data for %s absent", g->id);
        goto done0;
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(netp, &err);
    if (!hc_check(gname(g, "0.1"), net != NULL, "load %s: %s", netp, err.msg))
        goto done0;
    hc_net_reduce_activations(net); /* as KataGo does on load */
    hc_position *pos = NULL;
    size_t npos = 0, nout = 0;
    hc_nnoutput *gold = NULL;
    hc_istream *fs = NULL;
    hc_engine *e = NULL;
    hc_raw_heads *heads = NULL;
    int hw = g->nx * g->ny;
    size_t rec = (size_t)NSPATIAL * hw + NGLOBAL;
    float *rows = malloc(rec * MAX_GOLDEN * sizeof(float));
    float *spatial = malloc((size_t)NSPATIAL * hw * MAX_GOLDEN * sizeof(float));
    float *global = malloc((size_t)NGLOBAL * MAX_GOLDEN * sizeof(float));
    size_t *which = malloc(MAX_GOLDEN * sizeof(size_t));
    float *meta = g->meta_profile ? malloc((size_t)HC_SGFMETA_CHANNELS * MAX_GOLDEN * sizeof(float)) : NULL;
    if (hc_positions_load(posp, &pos, &npos, &err) || hc_nnoutputs_load(outp, &gold, &nout, &err)) {
        hc_check(gname(g, "0.2"), 0, "%s", err.msg);
        goto done;
    }
    if (!hc_check(gname(g, "0.3"), npos == nout && npos > 0, "%zu positions, %zu outputs", npos, nout))
        goto done;
    fs = hc_istream_open(featp, &err);
    if (!hc_check(gname(g, "0.4"), fs != NULL, "%s", err.msg))
        goto done;
    int n = 0;
    for (size_t i = 0; i < npos && n < MAX_GOLDEN; i++) {
        if (hc_istream_read(fs, rows + (size_t)n * rec, rec * sizeof(float), &err)) {
            hc_check(gname(g, "0.5"), 0, "features record %zu: %s", i, err.msg);
            goto done;
        }
        if (pos[i].symmetry != 0)
            continue;
        memcpy(spatial + (size_t)n * NSPATIAL * hw, rows + (size_t)n * rec, (size_t)NSPATIAL * hw * sizeof(float));
        memcpy(global + (size_t)n * NGLOBAL, rows + (size_t)n * rec + (size_t)NSPATIAL * hw, NGLOBAL * sizeof(float));
        if (meta) {
            hc_sgfmeta sm;
            if (hc_sgfmeta_profile(g->meta_profile, &sm, &err) ||
                hc_sgfmeta_fill_row(&sm, pos[i].next_pla == HC_WHITE, pos[i].x_size * pos[i].y_size,
                                    meta + (size_t)n * HC_SGFMETA_CHANNELS, &err)) {
                hc_check(gname(g, "0.9"), 0, "metadata row: %s", err.msg);
                goto done;
            }
        }
        which[n++] = i;
    }
    hc_check(gname(g, "0.6"), n >= 8, "only %d positions at symmetry 0", n);
    e = hc_engine_new_opts(net, 16, g->nx, g->ny, 2, &golden_opts, &err);
    heads = e ? hc_raw_heads_new(MAX_GOLDEN, g->nx, g->ny, net->num_policy_c, net->num_score_value_c, &err) : NULL;
    if (!hc_check(gname(g, "0.7"), e && heads, "engine: %s", err.msg))
        goto done;
    for (int r0 = 0; r0 < n; r0 += 16) {
        int b = n - r0 < 16 ? n - r0 : 16;
        hc_raw_heads view = *heads;
        view.policy += (size_t)r0 * net->num_policy_c * hw;
        view.policy_pass += (size_t)r0 * net->num_policy_c;
        view.value += (size_t)r0 * 3;
        view.score += (size_t)r0 * net->num_score_value_c;
        view.ownership += (size_t)r0 * hw;
        view.max_batch -= r0;
        if (hc_engine_eval(e, b, spatial + (size_t)r0 * NSPATIAL * hw, global + (size_t)r0 * NGLOBAL,
                           meta ? meta + (size_t)r0 * HC_SGFMETA_CHANNELS : NULL, &view, &err)) {
            hc_check(gname(g, "0.8"), 0, "eval: %s", err.msg);
            goto done;
        }
    }
    hc_pp_model m = pp_model_of(net);
    hc_pp_settings st = {0.0, 1.0f, 0};
    double e_wr = 0, e_pol = 0, e_own = 0, e_lead = 0, e_mean = 0;
    int fail = 0;
    unsigned char *legal = malloc((size_t)hw + 1);
    float *scratch = malloc(((size_t)hw + 1) * sizeof(float));
    for (int r = 0; r < n; r++) {
        const hc_position *p = &pos[which[r]];
        const hc_nnoutput *go = &gold[which[r]];
        for (int i = 0; i <= hw; i++)
            legal[i] = go->policy_probs[i] >= 0.0f;
        hc_pp_position pp = {p->x_size, p->y_size, p->next_pla == HC_WHITE, suppress_no_result(p->rules), 0, legal};
        hc_raw_row raw = {heads->policy + (size_t)r * net->num_policy_c * hw, heads->policy_pass + (size_t)r * net->num_policy_c,
                          heads->value + (size_t)r * 3, heads->score + (size_t)r * net->num_score_value_c,
                          heads->ownership + (size_t)r * hw};
        hc_nnoutput o;
        if (hc_nnoutput_init(&o, g->nx, g->ny, 1, &err) ||
            hc_postprocess_row(&m, &st, &pp, g->nx, g->ny, &raw, scratch, &o, &err)) {
            hc_check(name, 0, "position %zu: %s", which[r], err.msg);
            fail = 1;
            hc_nnoutput_free(&o);
            break;
        }
        double wr = fabs(0.5 * (o.white_win_prob - o.white_loss_prob) - 0.5 * (go->white_win_prob - go->white_loss_prob)) +
                    fabs(o.white_no_result_prob - go->white_no_result_prob);
        e_wr = hc_max_nan(e_wr, wr);
        for (int i = 0; i <= hw; i++) {
            double d = fabs(o.policy_probs[i] - go->policy_probs[i]);
            e_pol = hc_max_nan(e_pol, d);
        }
        for (int y = 0; y < p->y_size; y++)
            for (int x = 0; x < p->x_size; x++) {
                double d = fabs(o.white_owner_map[y * g->nx + x] - go->white_owner_map[y * g->nx + x]);
                e_own = hc_max_nan(e_own, d);
            }
        double dl = fabs(o.white_lead - go->white_lead), dm = fabs(o.white_score_mean - go->white_score_mean);
        e_lead = hc_max_nan(e_lead, dl);
        e_mean = hc_max_nan(e_mean, dm);
        hc_nnoutput_free(&o);
    }
    free(legal);
    free(scratch);
    if (!fail) {
        snprintf(name, sizeof name, "engine-golden-%s.1", g->id);
        hc_check(name, e_wr <= 1e-5, "winrate max err %g over %d positions (bound 1e-5)", e_wr, n);
        snprintf(name, sizeof name, "engine-golden-%s.2", g->id);
        hc_check(name, e_pol <= 2e-5, "policy max err %g (bound 2e-5)", e_pol);
        snprintf(name, sizeof name, "engine-golden-%s.3", g->id);
        hc_check(name, e_own <= 1e-4, "ownership max err %g (bound 1e-4)", e_own);
        snprintf(name, sizeof name, "engine-golden-%s.4", g->id);
        hc_check(name, e_lead <= 1e-3 && e_mean <= 1e-3, "lead max err %g, score mean %g (bound 1e-3)", e_lead, e_mean);
        printf("INFO %s: %d positions: max err winrate %.3g policy %.3g ownership %.3g lead %.3g scoremean %.3g\n", g->id,
               n, e_wr, e_pol, e_own, e_lead, e_mean);
    }
done:
    free(rows), free(spatial), free(global), free(which), free(meta);
    hc_raw_heads_free(heads);
    hc_engine_free(e);
    if (fs)
        hc_istream_close(fs);
    if (gold)
        hc_nnoutputs_free(gold, nout);
    if (pos)
        hc_positions_free(pos, npos);
    hc_net_free(net);
done0:
    fail_left(gname(g, "rest"), mark, GOLDEN_CHECKS);
    free(netp), free(posp), free(featp), free(outp);
}

/* Random but well-formed inputs: channel 0 a board of bx x by in the corner (per row). */
static void random_inputs(const hc_net *net, int batch, int nx, int ny, float *spatial, float *global, float *meta)
{
    unsigned s = 12345;
    int hw = nx * ny;
    for (int b = 0; b < batch; b++) {
        int bx = nx - (b % 3), by = ny - (b % 2);
        for (int c = 0; c < net->num_input_c; c++)
            for (int p = 0; p < hw; p++) {
                int on = p % nx < bx && p / nx < by;
                s = s * 1103515245u + 12345u;
                float v = c == 0 ? (float)on : (on && (s >> 16) % 4 == 0 ? 1.0f : 0.0f);
                spatial[((size_t)b * net->num_input_c + c) * hw + p] = v;
            }
        for (int c = 0; c < net->num_input_global_c; c++) {
            s = s * 1103515245u + 12345u;
            global[(size_t)b * net->num_input_global_c + c] = (float)((s >> 16) % 100) / 100.0f - 0.5f;
        }
        for (int c = 0; meta && c < net->num_input_meta_c; c++) {
            s = s * 1103515245u + 12345u;
            meta[(size_t)b * net->num_input_meta_c + c] = (s >> 16) % 5 == 0 ? 1.0f : 0.0f;
        }
    }
}

static size_t heads_floats(const hc_raw_heads *h, int rows)
{
    return (size_t)rows * ((size_t)h->policy_channels * h->nx * h->ny + h->policy_channels + 3 + h->score_channels +
                           (size_t)h->nx * h->ny);
}

/* Copies rows [r0, r0+n) of every head into dst (for bitwise comparisons). */
static void heads_rows(const hc_raw_heads *h, int r0, int n, float *dst)
{
    size_t hw = (size_t)h->nx * h->ny;
    size_t k = 0;
#define CP(ptr, per)                                                                                                   \
    memcpy(dst + k, (ptr) + (size_t)r0 * (per), (size_t)n * (per) * sizeof(float));                                    \
    k += (size_t)n * (per)
    CP(h->policy, h->policy_channels * hw);
    CP(h->policy_pass, (size_t)h->policy_channels);
    CP(h->value, (size_t)3);
    CP(h->score, (size_t)h->score_channels);
    CP(h->ownership, hw);
#undef CP
}

static int all_finite_taps(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static int all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* Same bits for every batch size and thread count; finite outputs. */
static void determinism(const char *id, const char *rel, int nx, int ny)
{
    const unsigned long mark = hc_test_reported; /* DET_CHECKS */
    char name[96];
    snprintf(name, sizeof name, "engine-det-%s.0", id);
    const char *p = hc_shared(rel);
    if (!p) {
        hc_skip_n(name, hc_test_left(mark, DET_CHECKS), "%s absent", rel);
        return;
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(p, &err);
    if (!hc_check(name, net != NULL, "load %s: %s", rel, err.msg)) {
        snprintf(name, sizeof name, "engine-det-%s.rest", id);
        fail_left(name, mark, DET_CHECKS);
        return;
    }
    const int N = 7;
    int hw = nx * ny;
    float *spatial = malloc((size_t)N * net->num_input_c * hw * sizeof(float));
    float *global = malloc((size_t)N * net->num_input_global_c * sizeof(float));
    float *meta = net->num_input_meta_c ? malloc((size_t)N * net->num_input_meta_c * sizeof(float)) : NULL;
    random_inputs(net, N, nx, ny, spatial, global, meta);
    hc_raw_heads *h = hc_raw_heads_new(N, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
    size_t per = heads_floats(h, 1);
    float *ref = malloc(per * N * sizeof(float)), *got = malloc(per * N * sizeof(float));
    int ok_eval = 1;
    /* reference: the whole batch, one thread */
    hc_engine *e1 = hc_engine_new(net, N, nx, ny, 1, &err);
    snprintf(name, sizeof name, "engine-det-%s.7", id);
    if (!hc_check(name, e1 != NULL, "engine: %s", err.msg))
        goto out;
    ok_eval &= hc_engine_eval(e1, N, spatial, global, meta, h, &err) == 0;
    heads_rows(h, 0, N, ref);
    snprintf(name, sizeof name, "engine-det-%s.1", id);
    hc_check(name, ok_eval && all_finite(ref, per * N), "eval %s / non-finite outputs", err.msg);
    /* batch 1, row by row */
    int same = 1;
    for (int r = 0; r < N; r++) {
        hc_raw_heads v1 = *h;
        ok_eval &= hc_engine_eval(e1, 1, spatial + (size_t)r * net->num_input_c * hw, global + (size_t)r * net->num_input_global_c,
                                  meta ? meta + (size_t)r * net->num_input_meta_c : NULL, &v1, &err) == 0;
        float *row = malloc(per * sizeof(float));
        heads_rows(h, 0, 1, row);
        /* compare against row r of the reference, head by head */
        float *refrow = malloc(per * sizeof(float));
        size_t k = 0, off = 0;
        size_t sizes[5] = {(size_t)h->policy_channels * hw, (size_t)h->policy_channels, 3, (size_t)h->score_channels, (size_t)hw};
        for (int s = 0; s < 5; s++) {
            memcpy(refrow + k, ref + off + (size_t)r * sizes[s], sizes[s] * sizeof(float));
            k += sizes[s];
            off += (size_t)N * sizes[s];
        }
        if (memcmp(row, refrow, per * sizeof(float)) != 0)
            same = 0;
        free(row), free(refrow);
    }
    snprintf(name, sizeof name, "engine-det-%s.2", id);
    hc_check(name, ok_eval && same, "batch 1 rows differ from the batch-%d rows (bitwise)", N);
    /* two and three threads, whole batch */
    for (int th = 2; th <= 3; th++) {
        hc_engine *e2 = hc_engine_new(net, N, nx, ny, th, &err);
        int ok = e2 && hc_engine_eval(e2, N, spatial, global, meta, h, &err) == 0;
        if (ok)
            heads_rows(h, 0, N, got);
        snprintf(name, sizeof name, "engine-det-%s.%d", id, th + 1);
        hc_check(name, ok && memcmp(got, ref, per * N * sizeof(float)) == 0,
                 "%d threads: %s", th, ok ? "outputs differ bitwise from 1 thread" : err.msg);
        hc_engine_free(e2);
    }
    /* repeat: same bits */
    ok_eval &= hc_engine_eval(e1, N, spatial, global, meta, h, &err) == 0;
    heads_rows(h, 0, N, got);
    snprintf(name, sizeof name, "engine-det-%s.5", id);
    hc_check(name, ok_eval && memcmp(got, ref, per * N * sizeof(float)) == 0, "second run differs");
out:
    snprintf(name, sizeof name, "engine-det-%s.rest", id);
    fail_left(name, mark, DET_CHECKS);
    hc_engine_free(e1);
    hc_raw_heads_free(h);
    free(spatial), free(global), free(meta), free(ref), free(got);
    hc_net_free(net);
}

typedef struct hook_log {
    pthread_mutex_t mu;
    int calls, bad, saw_tip, saw_block, saw_attn;
    const char *tip, *block, *attn; /* names to look for */
    const char *zero_layer;         /* a layer to zero, or NULL */
} hook_log;

static void test_hook(void *user, const hc_tap *t)
{
    hook_log *h = user;
    size_t n = (size_t)t->channels * t->rows * t->hw;
    int finite = all_finite_taps(t->data, n);
    pthread_mutex_lock(&h->mu);
    h->calls++;
    if (!finite || t->rows < 1 || (t->layout == HC_TAP_BC && t->hw != 1) || !t->layer)
        h->bad++;
    if (strcmp(t->layer, h->tip) == 0)
        h->saw_tip++;
    if (strcmp(t->layer, h->block) == 0)
        h->saw_block++;
    if (h->attn && strcmp(t->layer, h->attn) == 0)
        h->saw_attn++;
    pthread_mutex_unlock(&h->mu);
    if (h->zero_layer && strcmp(t->layer, h->zero_layer) == 0)
        memset(t->data, 0, n * sizeof(float));
}

/* A read-only hook sees every layer and changes no bit: the hooked forward pass runs layer by
 * layer in the model's order, the unhooked one fuses (transformer column chunks; a global
 * pooling block's bias and mid batch norm in its regular convolution's output stage). */
static void hook_checks(const char *id, const char *rel)
{
    const unsigned long mark = hc_test_reported; /* HOOK_CHECKS */
    char nm[8][48];
    for (int i = 0; i < 8; i++)
        snprintf(nm[i], sizeof nm[i], "engine-hook%s.%d", id, i + 1);
    const char *p = hc_shared(rel);
    if (!p) {
        hc_skip_n(nm[0], hc_test_left(mark, HOOK_CHECKS), "%s absent", rel);
        return;
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(p, &err);
    if (!hc_check(nm[0], net != NULL, "%s", err.msg)) {
        fail_left(nm[1], mark, HOOK_CHECKS);
        return;
    }
    const int N = 3, nx = 9, ny = 9, hw = nx * ny;
    float *sp = malloc((size_t)N * net->num_input_c * hw * sizeof(float));
    float *gl = malloc((size_t)N * net->num_input_global_c * sizeof(float));
    random_inputs(net, N, nx, ny, sp, gl, NULL);
    hc_raw_heads *h = hc_raw_heads_new(N, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
    size_t per = heads_floats(h, N);
    float *ref = malloc(per * sizeof(float)), *got = malloc(per * sizeof(float));
    hc_engine *e = hc_engine_new(net, N, nx, ny, 2, &err);
    if (!hc_check(nm[1], e && h && hc_engine_eval(e, N, sp, gl, NULL, h, &err) == 0, "%s", err.msg))
        goto out;
    heads_rows(h, 0, N, ref);
    const char *attn = NULL;
    for (int i = 0; i < net->trunk.num_blocks; i++)
        if (net->trunk.blocks[i].kind == HC_BLOCK_ATTENTION)
            attn = net->trunk.blocks[i].attn.q_proj.name;
    hook_log log = {.tip = net->trunk.norm_kind == HC_TRUNK_NORM_RMSNORM ? net->trunk.tip_rmsnorm.name : net->trunk.tip_bn.name,
                    .block = net->trunk.blocks[0].name, .attn = attn};
    pthread_mutex_init(&log.mu, NULL);
    hc_engine_set_hook(e, test_hook, &log);
    hc_engine_eval(e, N, sp, gl, NULL, h, &err);
    heads_rows(h, 0, N, got);
    hc_check(nm[2], memcmp(got, ref, per * sizeof(float)) == 0, "a read-only hook changed the outputs");
    hc_check(nm[3], log.calls > 20 && log.bad == 0, "%d calls, %d malformed taps", log.calls, log.bad);
    /* 2 threads split 3 rows 1 + 2: each named layer is seen once per thread share */
    hc_check(nm[4], log.saw_tip == 2 && log.saw_block == 2 && (!attn || log.saw_attn == 2),
             "tip %d, first block %d, attention q %d calls (want 2 each)", log.saw_tip, log.saw_block, log.saw_attn);
    log.zero_layer = log.tip;
    hc_engine_eval(e, N, sp, gl, NULL, h, &err);
    heads_rows(h, 0, N, got);
    hc_check(nm[5], memcmp(got, ref, per * sizeof(float)) != 0, "zeroing the trunk tip through the hook changed nothing");
    pthread_mutex_destroy(&log.mu);
out:
    fail_left(nm[2], mark, HOOK_CHECKS);
    hc_engine_free(e);
    hc_raw_heads_free(h);
    free(sp), free(gl), free(ref), free(got);
    hc_net_free(net);
}

/* Transformer blocks run in column chunks with grouped projections unless a hook watches the
 * layers; then layer by layer. Both must give the same bits (GQA, v dim 16, learnable RoPE, and
 * boards smaller than the buffer). */
static const char *const tf_nets[] = {"nets/b7c96h3tfrs-test5-cnorm.bin.gz", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
enum { N_TF_NETS = sizeof tf_nets / sizeof tf_nets[0] };

static void tf_path_checks(void)
{
    const char *const *nets = tf_nets;
    for (int ni = 0; ni < N_TF_NETS; ni++) {
        char name[64], name2[64];
        snprintf(name, sizeof name, "engine-tfpath.%d.1", ni + 1);
        snprintf(name2, sizeof name2, "engine-tfpath.%d.2", ni + 1);
        const char *p = hc_shared(nets[ni]);
        if (!p) {
            hc_skip(name, "%s absent", nets[ni]);
            hc_skip(name2, "%s absent", nets[ni]);
            continue;
        }
        hc_err err = {0};
        hc_net *net = hc_net_load(p, &err);
        if (!hc_check(name, net != NULL, "%s", err.msg)) {
            hc_check(name2, 0, "not run: %s did not load", nets[ni]);
            continue;
        }
        const int N = 3, nx = 7, ny = 6, hw = nx * ny;
        float *sp = malloc((size_t)N * net->num_input_c * hw * sizeof(float));
        float *gl = malloc((size_t)N * net->num_input_global_c * sizeof(float));
        random_inputs(net, N, nx, ny, sp, gl, NULL);
        hc_raw_heads *h = hc_raw_heads_new(N, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
        size_t per = h ? heads_floats(h, N) : 0;
        float *ref = malloc(per * sizeof(float) + 1), *got = malloc(per * sizeof(float) + 1);
        hc_engine *e = h ? hc_engine_new(net, N, nx, ny, 1, &err) : NULL;
        int ok = e && hc_engine_eval(e, N, sp, gl, NULL, h, &err) == 0;
        if (ok)
            heads_rows(h, 0, N, ref);
        hook_log log = {.tip = "", .block = "", .attn = NULL};
        pthread_mutex_init(&log.mu, NULL);
        if (ok) {
            hc_engine_set_hook(e, test_hook, &log);
            ok = hc_engine_eval(e, N, sp, gl, NULL, h, &err) == 0;
            heads_rows(h, 0, N, got);
        }
        hc_check(name2, ok && memcmp(got, ref, per * sizeof(float)) == 0 && log.calls > 0,
                 "%s: %s", nets[ni], ok ? "chunked and layer-by-layer transformer paths differ bitwise" : err.msg);
        pthread_mutex_destroy(&log.mu);
        hc_engine_free(e);
        hc_raw_heads_free(h);
        free(sp), free(gl), free(ref), free(got);
        hc_net_free(net);
    }
}

static void api_checks(void)
{
    const unsigned long mark = hc_test_reported; /* API_CHECKS */
    hc_err err = {0};
    const char *params = NULL;
    const hc_backend_kind *vt = hc_backend_find(NULL, "ref32", &params, &err);
    hc_check("engine-api.1", vt && strcmp(vt->name, "ref32") == 0 && params && *params == '\0', "find ref32");
    vt = hc_backend_find(NULL, "nosuch:x", &params, &err);
    hc_check("engine-api.2", !vt && err.code == HC_ECONFIG && strstr(err.msg, "ref32"), "unknown kind: %s", err.msg);
    hc_backend b;
    hc_err_clear(&err);
    hc_check("engine-api.3", hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "ref32:bogus", .net = NULL,
                                                                              .nx = 19, .ny = 19, .max_batch = 1,
                                                                              .threads = 1}, &err) != 0 && err.code == HC_ECONFIG,
             "ref32 with params must fail: %s", err.msg);
    const char *p = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!p) {
        hc_skip_n("engine-api.4", hc_test_left(mark, API_CHECKS), "g170 net absent");
        return;
    }
    hc_net *net = hc_net_load(p, &err);
    if (!hc_check("engine-api.4", net != NULL, "%s", err.msg)) {
        fail_left("engine-api.rest", mark, API_CHECKS);
        return;
    }
    int ok = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = 9, .ny = 9,
                                                              .max_batch = 2, .threads = 1}, &err) == 0;
    hc_check("engine-api.5", ok, "open ref32: %s", err.msg);
    if (ok) {
        hc_check("engine-api.6", hc_backend_set_taps(&b, NULL, NULL, &err) == 0, "ref32 taps: %s", err.msg);
        const hc_backend_kind *fv = hc_backend_find(NULL, "file:x", NULL, &err);
        hc_check("engine-api.6c", fv && !fv->ops->set_taps && !(fv->caps.taps & HC_TAPS_HOOK),
                 "a position backend has no layer hooks");
        hc_backend none = {0};
        hc_check("engine-api.6b", hc_backend_set_taps(&none, NULL, NULL, &err) < 0 && strstr(err.msg, "not supported"),
                 "taps on a backend without them must say not supported");
        hc_raw_heads *h = hc_raw_heads_new(2, 9, 9, net->num_policy_c, net->num_score_value_c, &err);
        float *sp = calloc((size_t)3 * 22 * 81, sizeof(float)), gl[3 * 19] = {0};
        hc_check("engine-api.7", hc_backend_eval(&b, 3, sp, gl, NULL, h, &err) != 0, "batch above max must fail");
        hc_check("engine-api.8", hc_backend_eval(&b, 1, sp, gl, gl, h, &err) != 0, "meta for a net without encoder must fail");
        hc_raw_heads *wrong = hc_raw_heads_new(2, 9, 8, net->num_policy_c, net->num_score_value_c, &err);
        hc_check("engine-api.9", hc_backend_eval(&b, 1, sp, gl, NULL, wrong, &err) != 0, "mismatched output must fail");
        hc_raw_heads_free(wrong);
        hc_raw_heads_free(h);
        free(sp);
        hc_backend_close(&b);
    } else {
        hc_fail_n("engine-api.6", 6, "not run: ref32 did not open"); /* 6, 6b, 6c, 7-9 */
    }
    hc_net_free(net);
}

static const struct {
    const char *id, *rel;
} hook_nets[] = {{"", "nets/b7c96h3tfrs-test5-cnorm.bin.gz"}, {"-g170", "nets/g170-b6c96-s175395328-d26788732.bin.gz"}};
static const struct {
    const char *id, *rel;
    int nx, ny;
} dets[] = {
    {"g170", "nets/g170-b6c96-s175395328-d26788732.bin.gz", 19, 19},
    {"g170-rect", "nets/g170-b6c96-s175395328-d26788732.bin.gz", 11, 7},
    {"tfrs", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", 9, 9},
    {"gqa", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", 13, 11},
    {"synth-v5", "nets/synth/pub_v5.bin.gz", 10, 14},
    {"synth-v7", "nets/synth/pub_v7.bin.gz", 10, 14},
    {"synth-v11nbt", "nets/synth/pub_v11nbt.bin.gz", 10, 14},
    {"synth-v15meta", "nets/synth/pub_v15meta.bin.gz", 10, 14},
    {"synth-v16", "nets/synth/pub_v16.bin.gz", 10, 14},
    {"synth-v17nbttf", "nets/synth/pub_v17nbttf.bin.gz", 10, 14},
};
enum { N_HOOK_NETS = sizeof hook_nets / sizeof hook_nets[0], N_DETS = sizeof dets / sizeof dets[0],
       N_GOLDENS = sizeof goldens / sizeof goldens[0] };

/* hc_engine_convs_prepare's list of a net's convolutions */
typedef struct conv_list {
    const hc_conv *c[256];
    int n;
} conv_list;

static int list_conv(const hc_conv *c, void *user)
{
    conv_list *l = user;
    if (l->n == 256)
        return -1;
    l->c[l->n++] = c;
    return 0;
}

static int same_kconv(const hc_kconv *a, const hc_kconv *b)
{
    size_t n = (size_t)a->oc * (size_t)a->ic;
    if (a->oc != b->oc || a->ic != b->ic || a->kh != b->kh || a->kw != b->kw || !a->wino != !b->wino)
        return 0;
    return !a->wino || memcmp(a->wino, b->wino, 36 * n * sizeof(float)) == 0;
}

/* A net's convolutions prepared side by side on threads give the bits of one by one; a failing
 * one fails the call with its message and leaves nothing allocated (SAN). */
static void prep_checks(void)
{
    const char *path = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    hc_err err = {0};
    hc_net *net = path ? hc_net_load(path, &err) : NULL;
    if (!net) {
        hc_skip_n("engine-prep", PREP_CHECKS, "g170 net absent");
        return;
    }
    conv_list L = {.n = 0};
    hc_engine_each_conv(net, list_conv, &L);
    static hc_kconv one[256], par[256], dflt[256];
    hc_kconv *pp[256], *pd[256];
    int ok = 1;
    for (int i = 0; i < L.n; i++) {
        ok &= hc_engine_conv_prepare(&one[i], L.c[i], 1, 0, &err) == 0;
        pp[i] = &par[i];
        pd[i] = &dflt[i];
    }
    int rc = hc_engine_convs_prepare(pp, L.c, NULL, L.n, 1, 4, &err);
    int same = ok && rc == 0 && L.n >= 10;
    for (int i = 0; same && i < L.n; i++)
        same = same_kconv(&one[i], &par[i]);
    hc_check("engine-prep.1", same, "%d convolutions on 4 threads: rc %d, same bits as one by one %d (%s)", L.n, rc,
             same, err.msg);
    rc = hc_engine_convs_prepare(pd, L.c, NULL, L.n, 1, 0, &err);
    same = rc == 0;
    for (int i = 0; same && i < L.n; i++)
        same = same_kconv(&one[i], &dflt[i]);
    hc_check("engine-prep.2", same, "the default thread count: rc %d (%s)", rc, err.msg);
    for (int i = 0; i < L.n; i++) {
        hc_kconv_free(&one[i]);
        hc_kconv_free(&par[i]);
        hc_kconv_free(&dflt[i]);
    }
    /* an even kernel in the middle of the list: refused, with the others' work freed */
    hc_conv bad = *L.c[L.n / 2];
    bad.ky = bad.kx = 2;
    const hc_conv *with_bad[256];
    memcpy(with_bad, L.c, sizeof(L.c[0]) * (size_t)L.n);
    with_bad[L.n / 2] = &bad;
    hc_err_clear(&err);
    rc = hc_engine_convs_prepare(pp, with_bad, NULL, L.n, 1, 4, &err);
    int cleared = 1;
    for (int i = 0; i < L.n; i++)
        cleared &= par[i].wino == NULL && par[i].wino2 == NULL;
    hc_check("engine-prep.3", rc == -1 && strstr(err.msg, "2x2") && cleared, "rc %d, cleared %d: %s", rc, cleared,
             err.msg);
    hc_net_free(net);
}

int main(void)
{
    hc_plan(API_CHECKS + N_HOOK_NETS * HOOK_CHECKS + N_TF_NETS * 2 + N_GOLDENS * GOLDEN_CHECKS + N_DETS * DET_CHECKS +
            PREP_CHECKS);
    prep_checks();
    golden_opts = hc_engine_default_opts();
    if (getenv("HC_TEST_GOLDEN_MAX")) /* a longer golden run by hand */
        MAX_GOLDEN = atoi(getenv("HC_TEST_GOLDEN_MAX"));
    if (getenv("HC_TEST_WINOGRAD"))
        golden_opts.winograd = atoi(getenv("HC_TEST_WINOGRAD"));
    api_checks();
    for (int i = 0; i < N_HOOK_NETS; i++)
        hook_checks(hook_nets[i].id, hook_nets[i].rel);
    tf_path_checks();
    for (int i = 0; i < N_GOLDENS; i++)
        golden_check(&goldens[i]);
    for (int i = 0; i < N_DETS; i++)
        determinism(dets[i].id, dets[i].rel, dets[i].nx, dets[i].ny);
    return hc_test_exit();
}
