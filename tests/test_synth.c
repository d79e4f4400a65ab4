/* Synthetic nets: every version x block kind x activation x trunk tip round-trips through the
 * writer and the reader field by field; evaluated nets give finite outputs that do not depend
 * on the batch size or the buffer; symmetric nets are invariant under the 8 symmetries; the
 * outputs of default-scaled nets are not degenerate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/selfplay.h"
#include "harness/model/synth.h"

static char tmpdir[256];

/* ---- field-by-field comparison of two nets ---- */

static char why[512];

static int fail(const char *fmt, const char *a, const char *b)
{
    snprintf(why, sizeof why, fmt, a ? a : "(null)", b ? b : "(null)");
    return 0;
}

static int same_str(const char *a, const char *b, const char *what)
{
    (void)what;
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
        return fail("name %s differs from %s", a, b);
    return 1;
}

static int same_f(const float *a, const float *b, size_t n, const char *name)
{
    if (n == 0)
        return 1;
    if (!a || !b)
        return fail("%s: missing array %s", name, "");
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            snprintf(why, sizeof why, "%s: float %zu: %.9g vs %.9g", name, i, (double)a[i], (double)b[i]);
            return 0;
        }
    return 1;
}

static int same_conv(const hc_conv *a, const hc_conv *b)
{
    if (!same_str(a->name, b->name, "conv"))
        return 0;
    if (a->ky != b->ky || a->kx != b->kx || a->in_c != b->in_c || a->out_c != b->out_c || a->dil_y != b->dil_y ||
        a->dil_x != b->dil_x)
        return fail("%s: conv shape differs%s", a->name, "");
    return same_f(a->w, b->w, (size_t)a->ky * a->kx * a->in_c * a->out_c, a->name);
}

static int same_bn(const hc_bn *a, const hc_bn *b)
{
    if (!same_str(a->name, b->name, "bn"))
        return 0;
    if (a->c != b->c || a->eps != b->eps || a->has_scale != b->has_scale || a->has_bias != b->has_bias)
        return fail("%s: bn header differs%s", a->name, "");
    size_t n = (size_t)a->c;
    return same_f(a->mean, b->mean, n, a->name) && same_f(a->var, b->var, n, a->name) &&
           same_f(a->scale, b->scale, n, a->name) && same_f(a->bias, b->bias, n, a->name) &&
           same_f(a->merged_scale, b->merged_scale, n, a->name) && same_f(a->merged_bias, b->merged_bias, n, a->name);
}

static int same_act(const hc_activation *a, const hc_activation *b)
{
    if (!same_str(a->name, b->name, "act"))
        return 0;
    if (a->kind != b->kind)
        return fail("%s: activation kind differs%s", a->name, "");
    return 1;
}

static int same_mm(const hc_matmul *a, const hc_matmul *b)
{
    if (!same_str(a->name, b->name, "matmul"))
        return 0;
    if (a->in_c != b->in_c || a->out_c != b->out_c)
        return fail("%s: matmul shape differs%s", a->name, "");
    return same_f(a->w, b->w, (size_t)a->in_c * a->out_c, a->name);
}

static int same_mb(const hc_matbias *a, const hc_matbias *b)
{
    if (!same_str(a->name, b->name, "matbias"))
        return 0;
    if (a->c != b->c)
        return fail("%s: matbias channels differ%s", a->name, "");
    return same_f(a->w, b->w, (size_t)a->c, a->name);
}

static int same_tfn(const hc_tf_rmsnorm *a, const hc_tf_rmsnorm *b)
{
    if (!same_str(a->name, b->name, "tfn"))
        return 0;
    if (a->c != b->c || a->eps != b->eps)
        return fail("%s: rmsnorm header differs%s", a->name, "");
    return same_f(a->weight, b->weight, (size_t)a->c, a->name);
}

static int same_stack(const hc_block *a, const hc_block *b, int n);

static int same_block(const hc_block *a, const hc_block *b)
{
    if (a->kind != b->kind)
        return fail("%s: block kind differs%s", a->name, "");
    if (!same_str(a->name, b->name, "block"))
        return 0;
    switch (a->kind) {
    case HC_BLOCK_ORDINARY: {
        const hc_res_block *x = &a->ordinary, *y = &b->ordinary;
        return same_bn(&x->pre_bn, &y->pre_bn) && same_act(&x->pre_act, &y->pre_act) &&
               same_conv(&x->regular_conv, &y->regular_conv) && same_bn(&x->mid_bn, &y->mid_bn) &&
               same_act(&x->mid_act, &y->mid_act) && same_conv(&x->final_conv, &y->final_conv);
    }
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *x = &a->gpool, *y = &b->gpool;
        return same_bn(&x->pre_bn, &y->pre_bn) && same_act(&x->pre_act, &y->pre_act) &&
               same_conv(&x->regular_conv, &y->regular_conv) && same_conv(&x->gpool_conv, &y->gpool_conv) &&
               same_bn(&x->gpool_bn, &y->gpool_bn) && same_act(&x->gpool_act, &y->gpool_act) &&
               same_mm(&x->gpool_to_bias_mul, &y->gpool_to_bias_mul) && same_bn(&x->mid_bn, &y->mid_bn) &&
               same_act(&x->mid_act, &y->mid_act) && same_conv(&x->final_conv, &y->final_conv);
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *x = &a->nbt, *y = &b->nbt;
        if (x->num_blocks != y->num_blocks)
            return fail("%s: nested block count differs%s", a->name, "");
        return same_bn(&x->pre_bn, &y->pre_bn) && same_act(&x->pre_act, &y->pre_act) &&
               same_conv(&x->pre_conv, &y->pre_conv) && same_stack(x->blocks, y->blocks, x->num_blocks) &&
               same_bn(&x->post_bn, &y->post_bn) && same_act(&x->post_act, &y->post_act) &&
               same_conv(&x->post_conv, &y->post_conv);
    }
    case HC_BLOCK_ATTENTION: {
        const hc_attn_block *x = &a->attn, *y = &b->attn;
        if (x->num_heads != y->num_heads || x->num_kv_heads != y->num_kv_heads || x->q_head_dim != y->q_head_dim ||
            x->v_head_dim != y->v_head_dim || x->use_rope != y->use_rope || x->learnable_rope != y->learnable_rope ||
            x->rope_num_kv_heads != y->rope_num_kv_heads || x->rope_num_pairs != y->rope_num_pairs ||
            x->rope_theta != y->rope_theta)
            return fail("%s: attention header differs%s", a->name, "");
        return same_tfn(&x->pre_ln, &y->pre_ln) && same_mm(&x->q_proj, &y->q_proj) && same_mm(&x->k_proj, &y->k_proj) &&
               same_mm(&x->v_proj, &y->v_proj) && same_mm(&x->out_proj, &y->out_proj) &&
               same_str(x->rope_param_name, y->rope_param_name, "rope") &&
               same_f(x->rope_freqs, y->rope_freqs, (size_t)x->rope_num_kv_heads * x->rope_num_pairs * 2, a->name);
    }
    case HC_BLOCK_FFN: {
        const hc_ffn_block *x = &a->ffn, *y = &b->ffn;
        if (x->c != y->c || x->ffn_c != y->ffn_c || x->use_swiglu != y->use_swiglu)
            return fail("%s: ffn header differs%s", a->name, "");
        return same_tfn(&x->pre_ln, &y->pre_ln) && same_mm(&x->linear1, &y->linear1) &&
               same_mm(&x->linear_gate, &y->linear_gate) && same_mm(&x->linear2, &y->linear2);
    }
    }
    return fail("unknown block kind%s%s", "", "");
}

static int same_stack(const hc_block *a, const hc_block *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!same_block(&a[i], &b[i]))
            return 0;
    return 1;
}

/* Every field but binary_floats (which records the file's encoding). */
static int same_net(const hc_net *a, const hc_net *b)
{
    if (!same_str(a->name, b->name, "name"))
        return 0;
    if (a->model_version != b->model_version || a->input_version != b->input_version ||
        a->num_input_c != b->num_input_c || a->num_input_global_c != b->num_input_global_c ||
        a->num_input_meta_c != b->num_input_meta_c || a->meta_encoder_version != b->meta_encoder_version ||
        a->prefer_pass_alive_under_suicide != b->prefer_pass_alive_under_suicide ||
        a->num_policy_c != b->num_policy_c || a->num_value_c != b->num_value_c ||
        a->num_score_value_c != b->num_score_value_c || a->num_ownership_c != b->num_ownership_c)
        return fail("model header or derived counts differ%s%s", "", "");
    if (a->num_floats != b->num_floats || a->num_params != b->num_params) {
        snprintf(why, sizeof why, "float/param totals differ: %lld/%lld vs %lld/%lld", (long long)a->num_floats,
                 (long long)a->num_params, (long long)b->num_floats, (long long)b->num_params);
        return 0;
    }
    if (memcmp(&a->post, &b->post, sizeof a->post) != 0)
        return fail("post-process constants differ%s%s", "", "");
    const hc_trunk *t = &a->trunk, *u = &b->trunk;
    if (!same_str(t->name, u->name, "trunk"))
        return 0;
    if (t->num_blocks != u->num_blocks || t->trunk_c != u->trunk_c || t->mid_c != u->mid_c ||
        t->regular_c != u->regular_c || t->dilated_c != u->dilated_c || t->gpool_c != u->gpool_c ||
        t->norm_kind != u->norm_kind || t->has_meta_encoder != u->has_meta_encoder)
        return fail("trunk header differs%s%s", "", "");
    if (!same_conv(&t->initial_conv, &u->initial_conv) || !same_mm(&t->initial_matmul, &u->initial_matmul))
        return 0;
    if (t->has_meta_encoder) {
        const hc_meta_encoder *m = &t->meta, *n = &u->meta;
        if (!same_str(m->name, n->name, "meta") || m->version != n->version || m->num_input_c != n->num_input_c ||
            !same_mm(&m->mul1, &n->mul1) || !same_mb(&m->bias1, &n->bias1) || !same_act(&m->act1, &n->act1) ||
            !same_mm(&m->mul2, &n->mul2) || !same_mb(&m->bias2, &n->bias2) || !same_act(&m->act2, &n->act2) ||
            !same_mm(&m->mul3, &n->mul3))
            return why[0] ? 0 : fail("metadata encoder differs%s%s", "", "");
    }
    if (!same_stack(t->blocks, u->blocks, t->num_blocks))
        return 0;
    if (t->norm_kind == HC_TRUNK_NORM_BN) {
        if (!same_bn(&t->tip_bn, &u->tip_bn))
            return 0;
    } else {
        const hc_rmsnorm *x = &t->tip_rmsnorm, *y = &u->tip_rmsnorm;
        if (!same_str(x->name, y->name, "tip") || x->c != y->c || x->eps != y->eps || x->spatial != y->spatial ||
            x->cgroup_size != y->cgroup_size || !same_f(x->gamma, y->gamma, (size_t)x->c, x->name) ||
            !same_f(x->beta, y->beta, (size_t)x->c, x->name))
            return why[0] ? 0 : fail("trunk tip rmsnorm differs%s%s", "", "");
    }
    if (!same_act(&t->tip_act, &u->tip_act))
        return 0;
    const hc_policy_head *p = &a->policy, *q = &b->policy;
    if (!same_str(p->name, q->name, "policy") || p->policy_out_c != q->policy_out_c ||
        p->has_pass_mlp != q->has_pass_mlp || !same_conv(&p->p1_conv, &q->p1_conv) ||
        !same_conv(&p->g1_conv, &q->g1_conv) || !same_bn(&p->g1_bn, &q->g1_bn) || !same_act(&p->g1_act, &q->g1_act) ||
        !same_mm(&p->gpool_to_bias_mul, &q->gpool_to_bias_mul) || !same_bn(&p->p1_bn, &q->p1_bn) ||
        !same_act(&p->p1_act, &q->p1_act) || !same_conv(&p->p2_conv, &q->p2_conv) ||
        !same_mm(&p->gpool_to_pass_mul, &q->gpool_to_pass_mul) || !same_mb(&p->gpool_to_pass_bias, &q->gpool_to_pass_bias) ||
        !same_act(&p->pass_act, &q->pass_act) || !same_mm(&p->gpool_to_pass_mul2, &q->gpool_to_pass_mul2))
        return why[0] ? 0 : fail("policy head differs%s%s", "", "");
    const hc_value_head *v = &a->value, *w = &b->value;
    if (!same_str(v->name, w->name, "value") || !same_conv(&v->v1_conv, &w->v1_conv) || !same_bn(&v->v1_bn, &w->v1_bn) ||
        !same_act(&v->v1_act, &w->v1_act) || !same_mm(&v->v2_mul, &w->v2_mul) || !same_mb(&v->v2_bias, &w->v2_bias) ||
        !same_act(&v->v2_act, &w->v2_act) || !same_mm(&v->v3_mul, &w->v3_mul) || !same_mb(&v->v3_bias, &w->v3_bias) ||
        !same_mm(&v->sv3_mul, &w->sv3_mul) || !same_mb(&v->sv3_bias, &w->sv3_bias) ||
        !same_conv(&v->ownership_conv, &w->ownership_conv))
        return why[0] ? 0 : fail("value head differs%s%s", "", "");
    return 1;
}

static int check_same(const hc_net *a, const hc_net *b)
{
    why[0] = '\0';
    return same_net(a, b);
}

/* ---- positions ---- */

typedef struct posvec {
    hc_position *v;
    size_t n, cap;
} posvec;

static int collect(const hc_position *p, void *user, hc_err *err)
{
    posvec *pv = user;
    if (pv->n == pv->cap) {
        pv->cap = pv->cap ? 2 * pv->cap : 16;
        pv->v = realloc(pv->v, pv->cap * sizeof *pv->v);
    }
    return hc_position_copy(&pv->v[pv->n++], p, err);
}

static posvec play(int xs, int ys, int games, uint64_t seed, int stride, long max_pos)
{
    hc_selfplay_opts o;
    hc_selfplay_opts_default(&o);
    o.x_size = xs;
    o.y_size = ys;
    o.games = games;
    o.seed = seed;
    o.stride = stride;
    o.max_positions = max_pos;
    o.max_moves = 2 * xs * ys;
    posvec pv = {0};
    hc_err err = {0};
    if (hc_selfplay_run(&o, collect, &pv, &err) != 0)
        printf("selfplay failed: %s\n", err.msg);
    return pv;
}

/* ---- evaluation ---- */

static int eval(const hc_net *net, const hc_position *ps, size_t n, int nx, int ny, int batch, hc_nnoutput *outs,
                hc_err *err)
{
    hc_backend b = {0};
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = nx, .ny = ny,
                                                              .max_batch = batch, .threads = 1}, err);
    if (rc == 0)
        rc = hc_eval_positions(&b, net, ps, n, NULL, batch, &s, outs, NULL, NULL, NULL, NULL, err);
    hc_backend_close(&b);
    return rc;
}

static int out_finite(const hc_nnoutput *o)
{
    float sc[] = {o->white_win_prob, o->white_loss_prob, o->white_no_result_prob, o->white_score_mean,
                  o->white_score_mean_sq, o->white_lead, o->var_time_left, o->shortterm_winloss_error,
                  o->shortterm_score_error};
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++)
        if (!isfinite(sc[i]))
            return 0;
    int area = o->nn_x_len * o->nn_y_len;
    for (int i = 0; i <= area; i++)
        if (!isfinite(o->policy_probs[i]))
            return 0;
    if (o->white_owner_map)
        for (int i = 0; i < area; i++)
            if (!isfinite(o->white_owner_map[i]))
                return 0;
    return 1;
}

/* Largest difference between two outputs: absolute for probabilities and ownership, relative
 * to max(1, |value|) for the score-like scalars (scores are tens of points). */
static double out_diff(const hc_nnoutput *a, const hc_nnoutput *b)
{
    double m = 0;
#define D(x) m = hc_max_nan(m, fabs((double)(a->x) - (double)(b->x)) / fmax(1.0, fabs((double)(a->x))))
    D(white_win_prob);
    D(white_loss_prob);
    D(white_no_result_prob);
    D(white_score_mean);
    D(white_score_mean_sq);
    D(white_lead);
    D(var_time_left);
    D(shortterm_winloss_error);
    D(shortterm_score_error);
#undef D
    int area = a->nn_x_len * a->nn_y_len;
    for (int i = 0; i <= area; i++)
        m = hc_max_nan(m, fabs((double)a->policy_probs[i] - b->policy_probs[i]));
    if (a->white_owner_map && b->white_owner_map)
        for (int i = 0; i < area; i++)
            m = hc_max_nan(m, fabs((double)a->white_owner_map[i] - b->white_owner_map[i]));
    return m;
}

static void free_outs(hc_nnoutput *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hc_nnoutput_free(&o[i]);
    free(o);
}

/* ---- the grid ---- */

static const char *const grid_blocks[] = {"res,gpool", "nbt(res,gpool)", "attn,ffn", "gpool,nbt(attn,ffn),res"};
static const int grid_acts[] = {HC_ACT_RELU, HC_ACT_MISH, HC_ACT_SILU, HC_ACT_IDENTITY};

static double worst_batch_diff, worst_buffer_diff;

/* The checks one grid cell reports: build, write-read, same-bin, same-txt; then, where the
 * version is featurized, eval, finite, batch (and buffer on square-board cells), else one
 * skipped eval on the first cell of the version. */
static unsigned grid_cell_checks(int v, int bi)
{
    if (hc_features_num_spatial(hc_model_input_version(v)) > 0)
        return 4 + 3 + !(bi % 2);
    return 4 + (bi == 0);
}

static void grid_one(int v, int bi, const posvec *p9, const posvec *prect, int *evaluated)
{
    const unsigned long mark = hc_test_reported;
    const unsigned want = grid_cell_checks(v, bi);
    char id[64], path_b[512], path_t[512];
    hc_synth_spec s;
    hc_synth_spec_default(&s);
    s.version = v;
    s.seed = (uint64_t)(100 * v + bi);
    s.trunk_c = 8 + 2 * (bi % 3);
    snprintf(s.blocks, sizeof s.blocks, "%s", grid_blocks[bi]);
    s.act = v >= 11 ? grid_acts[(v + bi) % 4] : HC_ACT_RELU;
    s.pass_act = v >= 11 ? grid_acts[(v + bi + 1) % 4] : -1;
    s.tip = v >= 15 && (bi % 2) ? HC_TRUNK_NORM_RMSNORM : HC_TRUNK_NORM_BN;
    s.tip_rms_spatial = bi == 3;
    s.meta = v >= 15 && bi >= 2;
    s.rope = (v + bi) % 3;
    s.num_heads = 2 + (bi % 2) * 2;
    s.num_kv_heads = bi % 2 ? 2 : 0;
    s.q_head_dim = 4;
    s.v_head_dim = 2 + 2 * (v % 2);
    s.policy_c = v == 17 ? 2 + 2 * (bi % 2) : 0;
    s.input_kernel = bi % 2 ? 3 : 5;
    s.prefer_pass_alive = v >= 15 && bi == 1;
    snprintf(id, sizeof id, "synth-grid.v%d.%d", v, bi);
    hc_err err = {0};
    hc_net *net = hc_synth_net(&s, &err);
    char sub[96];
    snprintf(sub, sizeof sub, "%s.build", id);
    if (!hc_check(sub, net != NULL, "v%d %s: %s", v, s.blocks, err.msg)) {
        snprintf(sub, sizeof sub, "%s.rest", id);
        hc_fail_n(sub, want - 1, "not run: no net");
        return;
    }
    snprintf(path_b, sizeof path_b, "%s/g%d_%d.bin.gz", tmpdir, v, bi);
    snprintf(path_t, sizeof path_t, "%s/g%d_%d.txt.gz", tmpdir, v, bi);
    hc_net *rb = NULL, *rt = NULL;
    int ok = hc_net_write(net, path_b, 1, &err) == 0 && (rb = hc_net_load(path_b, &err)) != NULL &&
             hc_net_write(net, path_t, 0, &err) == 0 && (rt = hc_net_load(path_t, &err)) != NULL;
    snprintf(sub, sizeof sub, "%s.write-read", id);
    if (hc_check(sub, ok, "v%d %s: %s", v, s.blocks, err.msg)) {
        snprintf(sub, sizeof sub, "%s.same-bin", id);
        hc_check(sub, check_same(net, rb) && rb->binary_floats == 1, "v%d %s (binary): %s", v, s.blocks, why);
        snprintf(sub, sizeof sub, "%s.same-txt", id);
        hc_check(sub, check_same(net, rt) && rt->binary_floats == 0, "v%d %s (text): %s", v, s.blocks, why);
    }
    /* Evaluation: the reloaded binary net, 7 positions, batch 1 against batch 7, in a buffer
     * larger than the board (9x9 in 11x10) or a rectangular board in its own buffer. */
    if (rb && hc_features_num_spatial(rb->input_version) > 0) {
        const posvec *pv = bi % 2 ? prect : p9;
        int nx = bi % 2 ? pv->v[0].x_size : 11, ny = bi % 2 ? pv->v[0].y_size : 10;
        size_t n = pv->n < 7 ? pv->n : 7;
        hc_nnoutput *o1 = calloc(n, sizeof *o1), *o7 = calloc(n, sizeof *o7);
        int rc = eval(rb, pv->v, n, nx, ny, 1, o1, &err) || eval(rb, pv->v, n, nx, ny, 7, o7, &err);
        snprintf(sub, sizeof sub, "%s.eval", id);
        if (hc_check(sub, rc == 0, "v%d %s: %s", v, s.blocks, err.msg)) {
            int fin = 1;
            double d = 0;
            for (size_t i = 0; i < n; i++) {
                fin &= out_finite(&o1[i]) && out_finite(&o7[i]);
                d = hc_max_nan(d, out_diff(&o1[i], &o7[i]));
            }
            worst_batch_diff = hc_max_nan(worst_batch_diff, d);
            if (!(bi % 2)) {
                /* The same boards in a buffer of their own size: on-board outputs agree, once
                 * the transposing symmetries (which only a square buffer applies) are left out. */
                hc_nnoutput *oe = calloc(n, sizeof *oe), *of = calloc(n, sizeof *of);
                hc_position *flip = calloc(n, sizeof *flip);
                for (size_t i = 0; i < n; i++) {
                    hc_position_copy(&flip[i], &pv->v[i], &err);
                    flip[i].symmetry &= 3;
                }
                int xs = pv->v[0].x_size, ys = pv->v[0].y_size;
                if (eval(rb, flip, n, xs, ys, 7, oe, &err) == 0 && eval(rb, flip, n, nx, ny, 7, of, &err) == 0) {
                    double db = 0;
                    for (size_t i = 0; i < n; i++) {
                        hc_nnoutput *x = &of[i], *y = &oe[i];
                        db = hc_max_nan(db, fabs((double)x->white_win_prob - y->white_win_prob));
                        db = hc_max_nan(db, fabs((double)x->white_lead - y->white_lead) / fmax(1.0, fabs(x->white_lead)));
                        for (int yy = 0; yy < ys; yy++)
                            for (int xx = 0; xx < xs; xx++) {
                                db = hc_max_nan(db, fabs((double)x->policy_probs[yy * nx + xx] -
                                                         y->policy_probs[yy * xs + xx]));
                                db = hc_max_nan(db, fabs((double)x->white_owner_map[yy * nx + xx] -
                                                         y->white_owner_map[yy * xs + xx]));
                            }
                        db = hc_max_nan(db, fabs((double)x->policy_probs[nx * ny] - y->policy_probs[xs * ys]));
                    }
                    worst_buffer_diff = hc_max_nan(worst_buffer_diff, db);
                    snprintf(sub, sizeof sub, "%s.buffer", id);
                    hc_check(sub, db <= 1e-4, "v%d %s: %dx%d board in %dx%d vs own buffer differ by %.3g", v, s.blocks,
                             xs, ys, nx, ny, db);
                } else {
                    snprintf(sub, sizeof sub, "%s.buffer", id);
                    hc_check(sub, 0, "%s", err.msg);
                }
                free_outs(oe, n);
                free_outs(of, n);
                hc_positions_free(flip, n);
            }
            snprintf(sub, sizeof sub, "%s.finite", id);
            hc_check(sub, fin, "v%d %s: non-finite output", v, s.blocks);
            snprintf(sub, sizeof sub, "%s.batch", id);
            hc_check(sub, d <= 1e-5, "v%d %s: batch 1 vs 7 differ by %.3g", v, s.blocks, d);
            (*evaluated)++;
        }
        free_outs(o1, n);
        free_outs(o7, n);
    } else if (rb && bi == 0) {
        snprintf(sub, sizeof sub, "%s.eval", id);
        hc_skip(sub, "input version %d (model version %d) is not featurized yet", rb->input_version, v);
    }
    if (hc_test_reported - mark < want) { /* a failed write-read or eval left these unrun */
        snprintf(sub, sizeof sub, "%s.rest", id);
        hc_fail_n(sub, want - (unsigned)(hc_test_reported - mark), "not run: an earlier step failed");
    }
    hc_net_free(rb);
    hc_net_free(rt);
    hc_net_free(net);
    unlink(path_b);
    unlink(path_t);
}

static void test_grid(void)
{
    posvec p9 = play(9, 9, 2, 7, 9, 7);
    posvec prect = play(7, 12, 2, 8, 11, 7);
    unsigned cells = 0;
    for (int v = HC_MODEL_VERSION_MIN; v <= HC_MODEL_VERSION_MAX; v++)
        for (int bi = 0; bi < 4; bi++)
            cells += grid_cell_checks(v, bi);
    hc_plan(1 + cells);
    if (!hc_check("synth-grid.positions", p9.n >= 7 && prect.n >= 7, "selfplay gave %zu and %zu positions", p9.n,
                  prect.n)) {
        hc_fail_n("synth-grid.cells", cells, "not run: no positions");
        return;
    }
    int evaluated = 0;
    for (int v = HC_MODEL_VERSION_MIN; v <= HC_MODEL_VERSION_MAX; v++)
        for (int bi = 0; bi < 4; bi++)
            grid_one(v, bi, &p9, &prect, &evaluated);
    printf("INFO synth-grid: %d nets evaluated, worst batch-1 vs batch-7 difference %.3g, worst 9x9 board in 11x10 vs "
           "9x9 buffer difference %.3g\n",
           evaluated, worst_batch_diff, worst_buffer_diff);
    hc_positions_free(p9.v, p9.n);
    hc_positions_free(prect.v, prect.n);
}

/* ---- spec checks, determinism, presets ---- */

static void test_spec(void)
{
    hc_err err = {0};
    hc_synth_spec s;
    hc_synth_spec_default(&s);
    s.version = 10;
    s.act = HC_ACT_MISH;
    hc_check("synth-spec.1", hc_synth_check(&s, &err) != 0 && err.code == HC_EUSAGE && strstr(err.msg, "relu"),
             "mish at version 10 accepted: %s", err.msg);
    hc_synth_spec_default(&s);
    s.version = 14;
    s.meta = 1;
    hc_check("synth-spec.2", hc_synth_check(&s, &err) != 0 && strstr(err.msg, "metadata"), "meta at v14: %s", err.msg);
    hc_synth_spec_default(&s);
    s.version = 14;
    s.tip = HC_TRUNK_NORM_RMSNORM;
    hc_check("synth-spec.3", hc_synth_check(&s, &err) != 0, "rmsnorm tip at v14 accepted");
    hc_synth_spec_default(&s);
    snprintf(s.blocks, sizeof s.blocks, "res,nbt(res,,gpool)");
    hc_check("synth-spec.4", hc_synth_check(&s, &err) != 0 && strstr(err.msg, "column 13"), "bad list: %s", err.msg);
    snprintf(s.blocks, sizeof s.blocks, "res(gpool)");
    hc_check("synth-spec.5", hc_synth_check(&s, &err) != 0, "res with children accepted");
    snprintf(s.blocks, sizeof s.blocks, "attn");
    s.num_heads = 3;
    s.num_kv_heads = 2;
    hc_check("synth-spec.6", hc_synth_check(&s, &err) != 0, "3 heads over 2 kv heads accepted");
    hc_synth_spec_default(&s);
    s.version = 16;
    s.policy_c = 2;
    hc_check("synth-spec.7", hc_synth_check(&s, &err) != 0, "2 policy channels at v16 accepted");
    hc_synth_spec_default(&s);
    snprintf(s.name, sizeof s.name, "bad name");
    hc_check("synth-spec.8", hc_synth_check(&s, &err) != 0, "a model name with a space accepted");

    /* Block counts with groups and repeats. */
    hc_synth_spec_default(&s);
    s.trunk_c = 8;
    snprintf(s.blocks, sizeof s.blocks, "(res,gpool)*3, nbt*2 ,nbt((attn,ffn)*2)");
    hc_net *net = hc_synth_net(&s, &err);
    int ok = net && net->trunk.num_blocks == 9 && net->trunk.blocks[1].kind == HC_BLOCK_GPOOL &&
             net->trunk.blocks[6].kind == HC_BLOCK_NESTED_BOTTLENECK && net->trunk.blocks[6].nbt.num_blocks == 2 &&
             net->trunk.blocks[8].nbt.num_blocks == 4 && net->trunk.blocks[8].nbt.blocks[3].kind == HC_BLOCK_FFN;
    hc_check("synth-spec.9", ok, "group expansion: %s", net ? "wrong structure" : err.msg);
    hc_net_free(net);

    /* Determinism: same seed, same net; another seed, other weights. */
    hc_synth_spec_default(&s);
    s.version = 15;
    s.meta = 1;
    snprintf(s.name, sizeof s.name, "seeded");
    snprintf(s.blocks, sizeof s.blocks, "nbt(gpool,res),attn,ffn");
    hc_net *a = hc_synth_net(&s, &err), *b = hc_synth_net(&s, &err);
    s.seed = 2;
    hc_net *c = hc_synth_net(&s, &err);
    hc_check("synth-seed.1", a && b && check_same(a, b), "same seed differs: %s", why);
    hc_check("synth-seed.2", a && c && !check_same(a, c) && strstr(why, "float"),
             "another seed gives the same weights (%s)", why);
    hc_net_free(a);
    hc_net_free(b);
    hc_net_free(c);

    /* Every preset builds (the big ones too) and satisfies the version's layout. */
    const char *name;
    for (int i = 0; (name = hc_synth_preset_name(i, NULL)); i++) {
        char id[64];
        snprintf(id, sizeof id, "synth-preset.%s", name);
        hc_synth_spec_default(&s);
        int rc = hc_synth_preset(name, &s, &err);
        hc_net *p = rc == 0 ? hc_synth_net(&s, &err) : NULL;
        hc_check(id, p && p->model_version == s.version && p->num_input_c == hc_model_num_spatial_features(s.version),
                 "%s: %s", name, err.msg);
        hc_net_free(p);
    }
    hc_check("synth-preset.unknown", hc_synth_preset("b99", &s, &err) != 0 && strstr(err.msg, "b6c96"),
             "unknown preset: %s", err.msg);
}

/* ---- outputs are not degenerate ---- */

static void test_outputs(void)
{
    hc_position *ps = NULL;
    size_t n = 0;
    int nx = 10, ny = 14;
    hc_err err = {0};
    const char *pp = hc_shared("positions/size10x14.jsonl.gz");
    posvec own = {0};
    if (!pp || access(pp, R_OK) != 0 || hc_positions_load(pp, &ps, &n, &err) != 0) {
        own = play(10, 14, 10, 3, 9, 140);
        ps = own.v;
        n = own.n;
        printf("INFO synth-out: shared 10x14 positions absent, using %zu self-play positions\n", n);
    }
    static const char *const presets[] = {"v3", "v5", "v7", "v11nbt", "v15meta", "v17tf", "b6c96", "b7c96h6kv3"};
    for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
        char id[64];
        snprintf(id, sizeof id, "synth-out.%s", presets[k]);
        hc_synth_spec s;
        hc_synth_preset(presets[k], &s, &err);
        if (!strcmp(presets[k], "b6c96") || !strcmp(presets[k], "b7c96h6kv3")) {
            s.trunk_c = 32; /* keep the test quick: the layout at a third of the width */
            s.mid_c = 32;
            s.gpool_c = 8;
            s.ffn_c = 64;
            s.q_head_dim = 8;
            s.v_head_dim = 4;
            s.p1_c = s.g1_c = s.v1_c = s.pass_c = 12;
            s.v2_c = 24;
        }
        if (hc_features_num_spatial(hc_model_input_version(s.version)) == 0) {
            hc_skip_n(id, 4, "input version %d (model version %d) is not featurized yet",
                      hc_model_input_version(s.version), s.version);
            continue;
        }
        hc_net *net = hc_synth_net(&s, &err);
        hc_nnoutput *o = calloc(n, sizeof *o);
        if (!hc_check(id, net && eval(net, ps, n, nx, ny, 16, o, &err) == 0, "%s: %s", presets[k], err.msg)) {
            char rest[96];
            snprintf(rest, sizeof rest, "%s.rest", id);
            hc_fail_n(rest, 3, "not run: no outputs");
            hc_net_free(net);
            free_outs(o, n);
            continue;
        }
        double sum_max = 0, wmin = 1, wmax = 0, wsum = 0, wsq = 0;
        int fin = 1, saturated = 0;
        for (size_t i = 0; i < n; i++) {
            fin &= out_finite(&o[i]);
            double m = 0;
            for (int j = 0; j <= nx * ny; j++)
                m = hc_max_nan(m, o[i].policy_probs[j]);
            sum_max += m;
            double w = o[i].white_win_prob;
            wmin = hc_min_nan(wmin, w);
            wmax = hc_max_nan(wmax, w);
            wsum += w;
            wsq += w * w;
            saturated += w < 1e-3 || w > 1 - 1e-3;
        }
        double mean_max = sum_max / (double)n, wmean = wsum / (double)n;
        double wsd = sqrt(fmax(0, wsq / (double)n - wmean * wmean));
        printf("INFO synth-out %s: %zu positions: mean max policy %.3f, white win %.3f +- %.3f (min %.3f max %.3f), "
               "%d saturated\n",
               presets[k], n, mean_max, wmean, wsd, wmin, wmax, saturated);
        char sub[96];
        snprintf(sub, sizeof sub, "%s.finite", id);
        hc_check(sub, fin, "%s: non-finite outputs", presets[k]);
        snprintf(sub, sizeof sub, "%s.policy", id);
        hc_check(sub, mean_max > 0.02 && mean_max < 0.98, "%s: mean max policy %.4f", presets[k], mean_max);
        snprintf(sub, sizeof sub, "%s.value", id);
        hc_check(sub, saturated < (int)n && wmax - wmin > 1e-2, "%s: win probs %d/%zu saturated, range %.4f",
                 presets[k], saturated, n, wmax - wmin);
        hc_net_free(net);
        free_outs(o, n);
    }
    if (own.v)
        hc_positions_free(own.v, own.n);
    else
        hc_positions_free(ps, n);
}

/* ---- symmetry plumbing ---- */

static void test_symmetry(void)
{
    static const struct {
        const char *blocks;
        int board, nn;
    } cases[] = {
        {"res,gpool,nbt(res,gpool)", 9, 9},
        {"res,gpool,nbt(res,gpool)", 9, 11},
        {"gpool,attn,ffn,res", 7, 7}, /* attention without RoPE is permutation-equivariant */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char id[64];
        snprintf(id, sizeof id, "synth-sym.%zu", c);
        hc_err err = {0};
        hc_synth_spec s;
        hc_synth_spec_default(&s);
        s.version = 14 + (int)c;
        s.trunk_c = 12;
        s.seed = 50 + c;
        snprintf(s.blocks, sizeof s.blocks, "%s", cases[c].blocks);
        s.symmetric = 1;
        s.rope = HC_SYNTH_ROPE_NONE;
        hc_net *net = hc_synth_net(&s, &err);
        posvec pv = play(cases[c].board, cases[c].board, 3, 11 + c, 13, 3);
        size_t n = pv.n * 8;
        hc_position *ps = calloc(n, sizeof *ps);
        for (size_t i = 0; i < pv.n; i++)
            for (int k = 0; k < 8; k++) {
                hc_position_copy(&ps[8 * i + k], &pv.v[i], &err);
                ps[8 * i + k].symmetry = k;
            }
        hc_nnoutput *o = calloc(n, sizeof *o);
        int nn = cases[c].nn;
        if (hc_check(id, net && pv.n == 3 && eval(net, ps, n, nn, nn, 8, o, &err) == 0, "%s", err.msg)) {
            double d = 0, spread = 0;
            for (size_t i = 0; i < pv.n; i++)
                for (int k = 1; k < 8; k++)
                    d = hc_max_nan(d, out_diff(&o[8 * i], &o[8 * i + k]));
            /* The same comparison between different positions is far from 0: the test can fail. */
            spread = out_diff(&o[0], &o[8]);
            printf("INFO synth-sym %s board %d buffer %d: max difference over the 8 symmetries %.3g (between positions "
                   "%.3g)\n",
                   cases[c].blocks, cases[c].board, nn, d, spread);
            char sub[96];
            snprintf(sub, sizeof sub, "%s.invariant", id);
            hc_check(sub, d <= 1e-5 && spread > 1e-3, "max difference %.3g over symmetries (%.3g between positions)", d,
                     spread);
        } else {
            char sub[96];
            snprintf(sub, sizeof sub, "%s.invariant", id);
            hc_fail_n(sub, 1, "not run: no outputs");
        }
        /* Without symmetrized kernels the outputs do depend on the symmetry. */
        if (!net && c == 0)
            hc_fail_n("synth-sym.control", 1, "not run: no net");
        if (net && c == 0) {
            s.symmetric = 0;
            hc_net *raw = hc_synth_net(&s, &err);
            hc_nnoutput *o2 = calloc(8, sizeof *o2);
            if (raw && eval(raw, ps, 8, nn, nn, 8, o2, &err) == 0) {
                double d = 0;
                for (int k = 1; k < 8; k++)
                    d = hc_max_nan(d, out_diff(&o2[0], &o2[k]));
                hc_check("synth-sym.control", d > 1e-3, "unsymmetrized net is invariant too (%.3g)", d);
            } else {
                hc_check("synth-sym.control", 0, "%s", err.msg);
            }
            free_outs(o2, 8);
            hc_net_free(raw);
        }
        free_outs(o, n);
        hc_positions_free(ps, n);
        hc_positions_free(pv.v, pv.n);
        hc_net_free(net);
    }
}

/* The command writes what the library builds. */
static void test_cli(void)
{
    const char *hc = getenv("HALFCHECK");
    if (!hc || access(hc, X_OK) != 0) {
        hc_skip_n("synth-cli.1", 2, "HALFCHECK not set (run through make test)");
        return;
    }
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/cli.txt.gz", tmpdir);
    snprintf(cmd, sizeof cmd,
             "%s synth-net --arch v17tf --seed 3 --channels 20 --rope fixed --act mish --policy-c 2 --out %s 2>/dev/null",
             hc, path);
    int rc = system(cmd);
    hc_err err = {0};
    hc_synth_spec s;
    hc_synth_preset("v17tf", &s, &err);
    s.seed = 3;
    s.trunk_c = 20;
    s.rope = HC_SYNTH_ROPE_FIXED;
    s.act = HC_ACT_MISH;
    s.policy_c = 2;
    hc_net *a = hc_synth_net(&s, &err), *b = rc == 0 ? hc_net_load(path, &err) : NULL;
    hc_check("synth-cli.1", a && b && check_same(a, b) && b->binary_floats == 0 && b->num_policy_c == 2,
             "rc %d: %s %s", rc, err.msg, why);
    hc_net_free(a);
    hc_net_free(b);
    unlink(path);
    snprintf(cmd, sizeof cmd, "%s synth-net --version 9 --act mish --out %s/x.bin.gz 2>/dev/null", hc, tmpdir);
    rc = system(cmd);
    hc_check("synth-cli.2", rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "mish at version 9: exit %d", rc);
}

int main(void)
{
    unsigned presets = 0;
    while (hc_synth_preset_name((int)presets, NULL))
        presets++;
    /* spec, seed, one per preset and the unknown one, outputs (8 presets x 4), symmetry (3 x 2
     * and the control), cli; the grid adds its own once it has positions */
    hc_plan(9 + 2 + presets + 1 + 8 * 4 + 3 * 2 + 1 + 2);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hc_test_synth_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        hc_fail_rest("synth-tmp", "mkdtemp failed");
        return hc_test_exit();
    }
    test_spec();
    test_grid();
    test_outputs();
    test_symmetry();
    test_cli();
    rmdir(tmpdir);
    return hc_test_exit();
}
