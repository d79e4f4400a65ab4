/* Model files: the shared nets load with the architecture their README describes; nets of
 * every version 3-17 and every block kind, built here with random weights, survive
 * write -> load in both formats with every field and weight bit-identical; corrupted files
 * fail with the error that names the problem. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "hc_test.h"
#include "harness/model/model.h"

/* ------------------------------------------------------------------------------------------ */
/* Deep comparison: fills why with the first difference. */

static char why[512];

static int differ(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int differ(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return 1;
}

static int cmp_str(const char *a, const char *b, const char *what)
{
    if (!a && !b)
        return 0;
    if (!a || !b || strcmp(a, b) != 0)
        return differ("%s: name \"%s\" vs \"%s\"", what, a ? a : "(null)", b ? b : "(null)");
    return 0;
}

static int cmp_f(const float *a, const float *b, size_t n, const char *what, const char *field)
{
    if (!n)
        return 0;
    if (!a || !b)
        return differ("%s: %s missing", what, field);
    if (memcmp(a, b, n * sizeof *a) != 0) {
        for (size_t i = 0; i < n; i++)
            if (memcmp(&a[i], &b[i], sizeof *a) != 0)
                return differ("%s: %s[%zu] %.9g vs %.9g", what, field, i, (double)a[i], (double)b[i]);
    }
    return 0;
}

#define CMPI(a, b, what, field)                                                                      \
    do {                                                                                             \
        if ((a) != (b))                                                                              \
            return differ("%s: %s %lld vs %lld", what, field, (long long)(a), (long long)(b));       \
    } while (0)

static int with_merged = 1;

static int cmp_conv(const hc_conv *a, const hc_conv *b)
{
    if (cmp_str(a->name, b->name, "conv"))
        return 1;
    CMPI(a->ky, b->ky, a->name, "ky");
    CMPI(a->kx, b->kx, a->name, "kx");
    CMPI(a->in_c, b->in_c, a->name, "in_c");
    CMPI(a->out_c, b->out_c, a->name, "out_c");
    CMPI(a->dil_y, b->dil_y, a->name, "dil_y");
    CMPI(a->dil_x, b->dil_x, a->name, "dil_x");
    return cmp_f(a->w, b->w, (size_t)a->ky * a->kx * a->in_c * a->out_c, a->name, "w");
}

static int cmp_bn(const hc_bn *a, const hc_bn *b)
{
    if (cmp_str(a->name, b->name, "bn"))
        return 1;
    CMPI(a->c, b->c, a->name, "c");
    if (memcmp(&a->eps, &b->eps, sizeof a->eps))
        return differ("%s: eps %.9g vs %.9g", a->name, (double)a->eps, (double)b->eps);
    CMPI(a->has_scale, b->has_scale, a->name, "has_scale");
    CMPI(a->has_bias, b->has_bias, a->name, "has_bias");
    size_t n = (size_t)a->c;
    if (cmp_f(a->mean, b->mean, n, a->name, "mean") || cmp_f(a->var, b->var, n, a->name, "var") ||
        cmp_f(a->scale, b->scale, n, a->name, "scale") || cmp_f(a->bias, b->bias, n, a->name, "bias"))
        return 1;
    if (with_merged && (cmp_f(a->merged_scale, b->merged_scale, n, a->name, "merged_scale") ||
                        cmp_f(a->merged_bias, b->merged_bias, n, a->name, "merged_bias")))
        return 1;
    return 0;
}

static int cmp_act(const hc_activation *a, const hc_activation *b)
{
    if (cmp_str(a->name, b->name, "activation"))
        return 1;
    CMPI(a->kind, b->kind, a->name, "kind");
    return 0;
}

static int cmp_mm(const hc_matmul *a, const hc_matmul *b)
{
    if (cmp_str(a->name, b->name, "matmul"))
        return 1;
    CMPI(a->in_c, b->in_c, a->name, "in_c");
    CMPI(a->out_c, b->out_c, a->name, "out_c");
    return cmp_f(a->w, b->w, (size_t)a->in_c * a->out_c, a->name, "w");
}

static int cmp_mb(const hc_matbias *a, const hc_matbias *b)
{
    if (cmp_str(a->name, b->name, "matbias"))
        return 1;
    CMPI(a->c, b->c, a->name, "c");
    return cmp_f(a->w, b->w, (size_t)a->c, a->name, "w");
}

static int cmp_tfn(const hc_tf_rmsnorm *a, const hc_tf_rmsnorm *b)
{
    if (cmp_str(a->name, b->name, "tf rmsnorm"))
        return 1;
    CMPI(a->c, b->c, a->name, "c");
    if (memcmp(&a->eps, &b->eps, sizeof a->eps))
        return differ("%s: eps", a->name);
    return cmp_f(a->weight, b->weight, (size_t)a->c, a->name, "weight");
}

static int cmp_stack(const hc_block *a, const hc_block *b, int n);

static int cmp_block(const hc_block *a, const hc_block *b)
{
    if (cmp_str(a->name, b->name, "block"))
        return 1;
    CMPI(a->kind, b->kind, a->name, "kind");
    switch (a->kind) {
    case HC_BLOCK_ORDINARY: {
        const hc_res_block *x = &a->ordinary, *y = &b->ordinary;
        return cmp_bn(&x->pre_bn, &y->pre_bn) || cmp_act(&x->pre_act, &y->pre_act) ||
               cmp_conv(&x->regular_conv, &y->regular_conv) || cmp_bn(&x->mid_bn, &y->mid_bn) ||
               cmp_act(&x->mid_act, &y->mid_act) || cmp_conv(&x->final_conv, &y->final_conv);
    }
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *x = &a->gpool, *y = &b->gpool;
        return cmp_bn(&x->pre_bn, &y->pre_bn) || cmp_act(&x->pre_act, &y->pre_act) ||
               cmp_conv(&x->regular_conv, &y->regular_conv) || cmp_conv(&x->gpool_conv, &y->gpool_conv) ||
               cmp_bn(&x->gpool_bn, &y->gpool_bn) || cmp_act(&x->gpool_act, &y->gpool_act) ||
               cmp_mm(&x->gpool_to_bias_mul, &y->gpool_to_bias_mul) || cmp_bn(&x->mid_bn, &y->mid_bn) ||
               cmp_act(&x->mid_act, &y->mid_act) || cmp_conv(&x->final_conv, &y->final_conv);
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *x = &a->nbt, *y = &b->nbt;
        CMPI(x->num_blocks, y->num_blocks, a->name, "num_blocks");
        return cmp_bn(&x->pre_bn, &y->pre_bn) || cmp_act(&x->pre_act, &y->pre_act) ||
               cmp_conv(&x->pre_conv, &y->pre_conv) || cmp_stack(x->blocks, y->blocks, x->num_blocks) ||
               cmp_bn(&x->post_bn, &y->post_bn) || cmp_act(&x->post_act, &y->post_act) ||
               cmp_conv(&x->post_conv, &y->post_conv);
    }
    case HC_BLOCK_ATTENTION: {
        const hc_attn_block *x = &a->attn, *y = &b->attn;
        CMPI(x->num_heads, y->num_heads, a->name, "num_heads");
        CMPI(x->num_kv_heads, y->num_kv_heads, a->name, "num_kv_heads");
        CMPI(x->q_head_dim, y->q_head_dim, a->name, "q_head_dim");
        CMPI(x->v_head_dim, y->v_head_dim, a->name, "v_head_dim");
        CMPI(x->use_rope, y->use_rope, a->name, "use_rope");
        CMPI(x->learnable_rope, y->learnable_rope, a->name, "learnable_rope");
        CMPI(x->rope_num_kv_heads, y->rope_num_kv_heads, a->name, "rope_num_kv_heads");
        CMPI(x->rope_num_pairs, y->rope_num_pairs, a->name, "rope_num_pairs");
        if (memcmp(&x->rope_theta, &y->rope_theta, sizeof x->rope_theta))
            return differ("%s: rope_theta", a->name);
        return cmp_tfn(&x->pre_ln, &y->pre_ln) || cmp_mm(&x->q_proj, &y->q_proj) || cmp_mm(&x->k_proj, &y->k_proj) ||
               cmp_mm(&x->v_proj, &y->v_proj) || cmp_mm(&x->out_proj, &y->out_proj) ||
               cmp_str(x->rope_param_name, y->rope_param_name, "rope") ||
               cmp_f(x->rope_freqs, y->rope_freqs, (size_t)x->rope_num_kv_heads * x->rope_num_pairs * 2, a->name,
                     "rope_freqs");
    }
    case HC_BLOCK_FFN: {
        const hc_ffn_block *x = &a->ffn, *y = &b->ffn;
        CMPI(x->c, y->c, a->name, "c");
        CMPI(x->ffn_c, y->ffn_c, a->name, "ffn_c");
        CMPI(x->use_swiglu, y->use_swiglu, a->name, "use_swiglu");
        return cmp_tfn(&x->pre_ln, &y->pre_ln) || cmp_mm(&x->linear1, &y->linear1) ||
               cmp_mm(&x->linear_gate, &y->linear_gate) || cmp_mm(&x->linear2, &y->linear2);
    }
    }
    return differ("%s: unknown kind", a->name);
}

static int cmp_stack(const hc_block *a, const hc_block *b, int n)
{
    for (int i = 0; i < n; i++)
        if (cmp_block(&a[i], &b[i]))
            return 1;
    return 0;
}

static int cmp_net(const hc_net *a, const hc_net *b)
{
    if (cmp_str(a->name, b->name, "model"))
        return 1;
    CMPI(a->model_version, b->model_version, "model", "version");
    CMPI(a->input_version, b->input_version, "model", "input_version");
    CMPI(a->num_input_c, b->num_input_c, "model", "num_input_c");
    CMPI(a->num_input_global_c, b->num_input_global_c, "model", "num_input_global_c");
    CMPI(a->num_input_meta_c, b->num_input_meta_c, "model", "num_input_meta_c");
    CMPI(a->meta_encoder_version, b->meta_encoder_version, "model", "meta_encoder_version");
    CMPI(a->prefer_pass_alive_under_suicide, b->prefer_pass_alive_under_suicide, "model", "prefer_pass_alive");
    CMPI(a->num_policy_c, b->num_policy_c, "model", "num_policy_c");
    CMPI(a->num_value_c, b->num_value_c, "model", "num_value_c");
    CMPI(a->num_score_value_c, b->num_score_value_c, "model", "num_score_value_c");
    CMPI(a->num_ownership_c, b->num_ownership_c, "model", "num_ownership_c");
    CMPI(a->num_floats, b->num_floats, "model", "num_floats");
    CMPI(a->num_params, b->num_params, "model", "num_params");
    if (memcmp(&a->post, &b->post, sizeof a->post))
        return differ("model: post-process params differ (td %.17g vs %.17g)", a->post.td_score_multiplier,
                      b->post.td_score_multiplier);
    const hc_trunk *s = &a->trunk, *t = &b->trunk;
    if (cmp_str(s->name, t->name, "trunk"))
        return 1;
    CMPI(s->num_blocks, t->num_blocks, "trunk", "num_blocks");
    CMPI(s->trunk_c, t->trunk_c, "trunk", "trunk_c");
    CMPI(s->mid_c, t->mid_c, "trunk", "mid_c");
    CMPI(s->regular_c, t->regular_c, "trunk", "regular_c");
    CMPI(s->dilated_c, t->dilated_c, "trunk", "dilated_c");
    CMPI(s->gpool_c, t->gpool_c, "trunk", "gpool_c");
    CMPI(s->norm_kind, t->norm_kind, "trunk", "norm_kind");
    CMPI(s->has_meta_encoder, t->has_meta_encoder, "trunk", "has_meta_encoder");
    if (cmp_conv(&s->initial_conv, &t->initial_conv) || cmp_mm(&s->initial_matmul, &t->initial_matmul))
        return 1;
    if (s->has_meta_encoder) {
        const hc_meta_encoder *x = &s->meta, *y = &t->meta;
        if (cmp_str(x->name, y->name, "meta"))
            return 1;
        CMPI(x->version, y->version, "meta", "version");
        CMPI(x->num_input_c, y->num_input_c, "meta", "num_input_c");
        if (cmp_mm(&x->mul1, &y->mul1) || cmp_mb(&x->bias1, &y->bias1) || cmp_act(&x->act1, &y->act1) ||
            cmp_mm(&x->mul2, &y->mul2) || cmp_mb(&x->bias2, &y->bias2) || cmp_act(&x->act2, &y->act2) ||
            cmp_mm(&x->mul3, &y->mul3))
            return 1;
    }
    if (cmp_stack(s->blocks, t->blocks, s->num_blocks) || cmp_bn(&s->tip_bn, &t->tip_bn) ||
        cmp_act(&s->tip_act, &t->tip_act))
        return 1;
    const hc_rmsnorm *rx = &s->tip_rmsnorm, *ry = &t->tip_rmsnorm;
    if (cmp_str(rx->name, ry->name, "tip rmsnorm"))
        return 1;
    CMPI(rx->c, ry->c, "tip rmsnorm", "c");
    CMPI(rx->spatial, ry->spatial, "tip rmsnorm", "spatial");
    CMPI(rx->cgroup_size, ry->cgroup_size, "tip rmsnorm", "cgroup_size");
    if (memcmp(&rx->eps, &ry->eps, sizeof rx->eps) || cmp_f(rx->gamma, ry->gamma, (size_t)rx->c, "tip", "gamma") ||
        cmp_f(rx->beta, ry->beta, (size_t)rx->c, "tip", "beta"))
        return differ("tip rmsnorm differs");
    const hc_policy_head *p = &a->policy, *q = &b->policy;
    if (cmp_str(p->name, q->name, "policy"))
        return 1;
    CMPI(p->policy_out_c, q->policy_out_c, "policy", "policy_out_c");
    CMPI(p->has_pass_mlp, q->has_pass_mlp, "policy", "has_pass_mlp");
    if (cmp_conv(&p->p1_conv, &q->p1_conv) || cmp_conv(&p->g1_conv, &q->g1_conv) || cmp_bn(&p->g1_bn, &q->g1_bn) ||
        cmp_act(&p->g1_act, &q->g1_act) || cmp_mm(&p->gpool_to_bias_mul, &q->gpool_to_bias_mul) ||
        cmp_bn(&p->p1_bn, &q->p1_bn) || cmp_act(&p->p1_act, &q->p1_act) || cmp_conv(&p->p2_conv, &q->p2_conv) ||
        cmp_mm(&p->gpool_to_pass_mul, &q->gpool_to_pass_mul) || cmp_mb(&p->gpool_to_pass_bias, &q->gpool_to_pass_bias) ||
        cmp_act(&p->pass_act, &q->pass_act) || cmp_mm(&p->gpool_to_pass_mul2, &q->gpool_to_pass_mul2))
        return 1;
    const hc_value_head *v = &a->value, *w = &b->value;
    if (cmp_str(v->name, w->name, "value"))
        return 1;
    return cmp_conv(&v->v1_conv, &w->v1_conv) || cmp_bn(&v->v1_bn, &w->v1_bn) || cmp_act(&v->v1_act, &w->v1_act) ||
           cmp_mm(&v->v2_mul, &w->v2_mul) || cmp_mb(&v->v2_bias, &w->v2_bias) || cmp_act(&v->v2_act, &w->v2_act) ||
           cmp_mm(&v->v3_mul, &w->v3_mul) || cmp_mb(&v->v3_bias, &w->v3_bias) || cmp_mm(&v->sv3_mul, &w->sv3_mul) ||
           cmp_mb(&v->sv3_bias, &w->sv3_bias) || cmp_conv(&v->ownership_conv, &w->ownership_conv);
}

/* ------------------------------------------------------------------------------------------ */
/* Random-weight nets of any version and block kind, built in memory. */

static hc_rng rng = {0x9e3779b97f4a7c15ull};
static float rnd(void)
{
    return (float)((hc_rng_next(&rng) >> 40) & 0xffffff) / (float)(1 << 24) * 2.0f - 1.0f;
}

static char *nm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *nm(const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    return strdup(b);
}

static float *arr(size_t n)
{
    float *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = rnd();
    return a;
}

static int64_t g_floats, g_params;

static void mk_conv(hc_conv *c, char *name, int k, int in, int out)
{
    c->name = name;
    c->ky = c->kx = k;
    c->in_c = in;
    c->out_c = out;
    c->dil_y = c->dil_x = 1;
    size_t n = (size_t)k * k * in * out;
    c->w = arr(n);
    g_floats += (int64_t)n;
    g_params += (int64_t)n;
}

static void mk_bn(hc_bn *b, char *name, int c, int has_scale, int has_bias)
{
    b->name = name;
    b->c = c;
    b->eps = 1e-3f;
    b->has_scale = has_scale;
    b->has_bias = has_bias;
    b->mean = arr((size_t)c);
    b->var = arr((size_t)c);
    for (int i = 0; i < c; i++)
        b->var[i] = b->var[i] * 0.5f + 1.0f;
    b->scale = arr((size_t)c);
    b->bias = arr((size_t)c);
    b->merged_scale = malloc((size_t)c * sizeof(float));
    b->merged_bias = malloc((size_t)c * sizeof(float));
    for (int i = 0; i < c; i++) {
        if (!has_scale)
            b->scale[i] = 1.0f;
        if (!has_bias)
            b->bias[i] = 0.0f;
        b->merged_scale[i] = b->scale[i] / sqrtf(b->var[i] + b->eps);
        b->merged_bias[i] = b->bias[i] - b->merged_scale[i] * b->mean[i];
    }
    g_floats += (int64_t)c * (2 + has_scale + has_bias);
    g_params += (int64_t)c * (has_scale + has_bias);
}

static void mk_act(hc_activation *a, char *name, hc_act k)
{
    a->name = name;
    a->kind = k;
}

static void mk_mm(hc_matmul *m, char *name, int in, int out)
{
    m->name = name;
    m->in_c = in;
    m->out_c = out;
    m->w = arr((size_t)in * out);
    g_floats += (int64_t)in * out;
    g_params += (int64_t)in * out;
}

static void mk_mb(hc_matbias *b, char *name, int c)
{
    b->name = name;
    b->c = c;
    b->w = arr((size_t)c);
    g_floats += c;
    g_params += c;
}

static void mk_tfn(hc_tf_rmsnorm *n, char *name, int c)
{
    n->name = name;
    n->c = c;
    n->eps = 1e-6f;
    n->weight = arr((size_t)c);
    g_floats += c;
    g_params += c;
}

typedef struct spec {
    int version;
    int nbt;        /* trunk of nested bottlenecks (with a doubly nested one) */
    int tf;         /* transformer blocks (attention/FFN variants) */
    int meta;       /* metadata encoder */
    int rmsnorm;    /* RMSNorm trunk tip (v15+) */
    int policy_c;   /* v17 only: 2 or 4 */
} spec;

static hc_act act_for(int v, int i)
{
    static const hc_act kinds[4] = {HC_ACT_RELU, HC_ACT_MISH, HC_ACT_SILU, HC_ACT_IDENTITY};
    return v >= 11 ? kinds[i % 4] : HC_ACT_RELU;
}

static int act_i;

static void mk_ordinary(hc_block *b, const char *pre, int v, int C)
{
    b->kind = HC_BLOCK_ORDINARY;
    b->name = nm("%s", pre);
    hc_res_block *o = &b->ordinary;
    mk_bn(&o->pre_bn, nm("%s.norm1", pre), C, 1, 1);
    mk_act(&o->pre_act, nm("%s.act1", pre), act_for(v, act_i++));
    mk_conv(&o->regular_conv, nm("%s.conv1", pre), 3, C, C + 2);
    mk_bn(&o->mid_bn, nm("%s.norm2", pre), C + 2, 0, 1);
    mk_act(&o->mid_act, nm("%s.act2", pre), act_for(v, act_i++));
    mk_conv(&o->final_conv, nm("%s.conv2", pre), 3, C + 2, C);
}

static void mk_gpool(hc_block *b, const char *pre, int v, int C)
{
    b->kind = HC_BLOCK_GPOOL;
    b->name = nm("%s", pre);
    hc_gpool_block *g = &b->gpool;
    mk_bn(&g->pre_bn, nm("%s.norm1", pre), C, 1, 0);
    mk_act(&g->pre_act, nm("%s.act1", pre), act_for(v, act_i++));
    mk_conv(&g->regular_conv, nm("%s.conv1r", pre), 3, C, C - 2);
    mk_conv(&g->gpool_conv, nm("%s.conv1g", pre), 1, C, 5);
    mk_bn(&g->gpool_bn, nm("%s.normg", pre), 5, 0, 0);
    mk_act(&g->gpool_act, nm("%s.actg", pre), act_for(v, act_i++));
    mk_mm(&g->gpool_to_bias_mul, nm("%s.linear_g", pre), 15, C - 2);
    mk_bn(&g->mid_bn, nm("%s.norm2", pre), C - 2, 1, 1);
    mk_act(&g->mid_act, nm("%s.act2", pre), act_for(v, act_i++));
    mk_conv(&g->final_conv, nm("%s.conv2", pre), 3, C - 2, C);
}

static void mk_attn(hc_block *b, const char *pre, int C, int heads, int kv, int qd, int vd, int rope, int learn)
{
    b->kind = HC_BLOCK_ATTENTION;
    b->name = nm("%s", pre);
    hc_attn_block *a = &b->attn;
    a->num_heads = heads;
    a->num_kv_heads = kv;
    a->q_head_dim = qd;
    a->v_head_dim = vd;
    a->use_rope = rope;
    a->learnable_rope = learn;
    mk_tfn(&a->pre_ln, nm("%s.norm", pre), C);
    mk_mm(&a->q_proj, nm("%s.q", pre), C, heads * qd);
    mk_mm(&a->k_proj, nm("%s.k", pre), C, kv * qd);
    mk_mm(&a->v_proj, nm("%s.v", pre), C, kv * vd);
    mk_mm(&a->out_proj, nm("%s.out", pre), heads * vd, C);
    if (rope) {
        a->rope_param_name = nm("%s.rope", pre);
        if (learn) {
            a->rope_num_kv_heads = kv;
            a->rope_num_pairs = qd / 2;
            size_t n = (size_t)kv * (qd / 2) * 2;
            a->rope_freqs = arr(n);
            g_floats += (int64_t)n;
            g_params += (int64_t)n;
        } else {
            a->rope_theta = 100.0f;
        }
    }
}

static void mk_ffn(hc_block *b, const char *pre, int C, int ffn, int swiglu)
{
    b->kind = HC_BLOCK_FFN;
    b->name = nm("%s", pre);
    hc_ffn_block *f = &b->ffn;
    f->c = C;
    f->ffn_c = ffn;
    f->use_swiglu = swiglu;
    mk_tfn(&f->pre_ln, nm("%s.norm", pre), C);
    mk_mm(&f->linear1, nm("%s.l1", pre), C, ffn);
    if (swiglu)
        mk_mm(&f->linear_gate, nm("%s.gate", pre), C, ffn);
    mk_mm(&f->linear2, nm("%s.l2", pre), ffn, C);
}

static void mk_nbt(hc_block *b, const char *pre, int v, int C, int inner, int depth, int tf)
{
    b->kind = HC_BLOCK_NESTED_BOTTLENECK;
    b->name = nm("%s", pre);
    hc_nbt_block *t = &b->nbt;
    int D = C / 2;
    t->num_blocks = 2;
    mk_bn(&t->pre_bn, nm("%s.norm1", pre), C, 1, 1);
    mk_act(&t->pre_act, nm("%s.act1", pre), act_for(v, act_i++));
    mk_conv(&t->pre_conv, nm("%s.conv1", pre), 1, C, D);
    t->blocks = calloc(2, sizeof(hc_block));
    char sub[200];
    snprintf(sub, sizeof sub, "%s.blockstack.0", pre);
    if (tf)
        mk_attn(&t->blocks[0], sub, D, 4, 2, 4, 6, 1, 0); /* GQA, fixed RoPE */
    else if (depth > 0)
        mk_nbt(&t->blocks[0], sub, v, D, inner, depth - 1, 0);
    else
        mk_ordinary(&t->blocks[0], sub, v, D);
    snprintf(sub, sizeof sub, "%s.blockstack.1", pre);
    if (tf)
        mk_ffn(&t->blocks[1], sub, D, 12, 0); /* plain FFN */
    else
        mk_gpool(&t->blocks[1], sub, v, D);
    (void)inner;
    mk_bn(&t->post_bn, nm("%s.norm2", pre), D, 0, 1);
    mk_act(&t->post_act, nm("%s.act2", pre), act_for(v, act_i++));
    mk_conv(&t->post_conv, nm("%s.conv2", pre), 1, D, C);
}

static hc_net *build_net(const spec *s)
{
    int v = s->version;
    int C = 16;
    g_floats = g_params = 0;
    act_i = v;
    hc_net *n = calloc(1, sizeof *n);
    n->name = nm("synth-v%d-%s%s%s", v, s->nbt ? "nbt" : "res", s->tf ? "-tf" : "", s->meta ? "-meta" : "");
    n->model_version = v;
    n->input_version = hc_model_input_version(v);
    n->num_input_c = hc_model_num_spatial_features(v);
    n->num_input_global_c = hc_model_num_global_features(v);
    n->post.td_score_multiplier = v >= 13 ? 21.25 : 20.0;
    n->post.score_mean_multiplier = v >= 13 ? 19.5 : 20.0;
    n->post.score_stdev_multiplier = v >= 13 ? 18.0 : 20.0;
    n->post.lead_multiplier = v >= 13 ? 17.125 : 20.0;
    n->post.variance_time_multiplier = v >= 13 ? 41.0 : 40.0;
    n->post.shortterm_value_error_multiplier = v >= 13 ? 0.1 : 0.25;
    n->post.shortterm_score_error_multiplier = v >= 13 ? 31.0 / 3.0 : 30.0;
    n->post.output_scale_multiplier = 1.0f;
    if (v >= 15) {
        n->meta_encoder_version = s->meta ? 1 : 0;
        n->num_input_meta_c = s->meta ? 192 : 0;
        n->prefer_pass_alive_under_suicide = v == 17;
    }
    hc_trunk *t = &n->trunk;
    t->name = nm("trunk");
    t->trunk_c = C;
    t->mid_c = C;
    t->regular_c = C;
    t->dilated_c = 0;
    t->gpool_c = 5;
    t->norm_kind = s->rmsnorm ? HC_TRUNK_NORM_RMSNORM : HC_TRUNK_NORM_BN;
    mk_conv(&t->initial_conv, nm("conv_spatial"), 5, n->num_input_c, C);
    mk_mm(&t->initial_matmul, nm("linear_global"), n->num_input_global_c, C);
    if (s->meta) {
        t->has_meta_encoder = 1;
        hc_meta_encoder *m = &t->meta;
        m->name = nm("sgf_metadata_encoder");
        m->version = 1;
        m->num_input_c = 192;
        mk_mm(&m->mul1, nm("meta.mul1"), 192, 12);
        mk_mb(&m->bias1, nm("meta.bias1"), 12);
        mk_act(&m->act1, nm("meta.act1"), HC_ACT_MISH);
        mk_mm(&m->mul2, nm("meta.mul2"), 12, 10);
        mk_mb(&m->bias2, nm("meta.bias2"), 10);
        mk_act(&m->act2, nm("meta.act2"), HC_ACT_SILU);
        mk_mm(&m->mul3, nm("meta.mul3"), 10, C);
    }
    t->num_blocks = s->tf ? 4 : 3;
    t->blocks = calloc((size_t)t->num_blocks, sizeof(hc_block));
    if (s->tf) {
        mk_attn(&t->blocks[0], "blocks.0", C, 2, 2, 8, 4, 1, 1); /* learnable RoPE */
        mk_ffn(&t->blocks[1], "blocks.1", C, 24, 1);             /* SwiGLU */
        mk_nbt(&t->blocks[2], "blocks.2", v, C, 2, 0, 1);        /* transformer inside a bottleneck */
        mk_attn(&t->blocks[3], "blocks.3", C, 3, 1, 5, 3, 0, 0); /* no RoPE, odd head dim */
    } else if (s->nbt) {
        mk_nbt(&t->blocks[0], "blocks.0", v, C, 2, 1, 0); /* doubly nested */
        mk_nbt(&t->blocks[1], "blocks.1", v, C, 2, 0, 0);
        mk_ordinary(&t->blocks[2], "blocks.2", v, C);
    } else {
        mk_ordinary(&t->blocks[0], "blocks.0", v, C);
        mk_gpool(&t->blocks[1], "blocks.1", v, C);
        mk_ordinary(&t->blocks[2], "blocks.2", v, C);
    }
    if (s->rmsnorm) {
        hc_rmsnorm *r = &t->tip_rmsnorm;
        r->name = nm("norm_trunkfinal");
        r->c = C;
        r->eps = 1e-5f;
        r->spatial = 1;
        r->gamma = arr((size_t)C);
        r->beta = arr((size_t)C);
        g_floats += 2 * C;
        g_params += 2 * C;
    } else {
        mk_bn(&t->tip_bn, nm("norm_trunkfinal"), C, 1, 1);
    }
    mk_act(&t->tip_act, nm("act_trunkfinal"), act_for(v, 1));

    hc_policy_head *p = &n->policy;
    p->name = nm("policy_head");
    p->policy_out_c = v >= 17 ? s->policy_c : v == 16 ? 4 : v >= 12 ? 2 : 1;
    mk_conv(&p->p1_conv, nm("policy.conv1p"), 1, C, 6);
    mk_conv(&p->g1_conv, nm("policy.conv1g"), 1, C, 4);
    mk_bn(&p->g1_bn, nm("policy.norm1g"), 4, 1, 1);
    mk_act(&p->g1_act, nm("policy.act1g"), act_for(v, 0));
    mk_mm(&p->gpool_to_bias_mul, nm("policy.linear_g"), 12, 6);
    mk_bn(&p->p1_bn, nm("policy.norm1p"), 6, 0, 1);
    mk_act(&p->p1_act, nm("policy.act1p"), act_for(v, 1));
    mk_conv(&p->p2_conv, nm("policy.conv2p"), 1, 6, p->policy_out_c);
    if (v >= 15) {
        p->has_pass_mlp = 1;
        mk_mm(&p->gpool_to_pass_mul, nm("policy.linear_pass"), 12, 6);
        mk_mb(&p->gpool_to_pass_bias, nm("policy.linear_pass_bias"), 6);
        mk_act(&p->pass_act, nm("policy.act_pass"), act_for(v, 2));
        mk_mm(&p->gpool_to_pass_mul2, nm("policy.linear_pass2"), 6, p->policy_out_c);
    } else {
        mk_mm(&p->gpool_to_pass_mul, nm("policy.linear_pass"), 12, p->policy_out_c);
    }
    hc_value_head *h = &n->value;
    int sv = v >= 9 ? 6 : v >= 8 ? 4 : v >= 4 ? 2 : 1;
    h->name = nm("value_head");
    mk_conv(&h->v1_conv, nm("value.conv1"), 1, C, 4);
    mk_bn(&h->v1_bn, nm("value.norm1"), 4, 1, 1);
    mk_act(&h->v1_act, nm("value.act1"), act_for(v, 1));
    mk_mm(&h->v2_mul, nm("value.linear2"), 12, 8);
    mk_mb(&h->v2_bias, nm("value.bias2"), 8);
    mk_act(&h->v2_act, nm("value.act2"), act_for(v, 2));
    mk_mm(&h->v3_mul, nm("value.linear_valuehead"), 8, 3);
    mk_mb(&h->v3_bias, nm("value.bias_valuehead"), 3);
    mk_mm(&h->sv3_mul, nm("value.linear_miscvaluehead"), 8, sv);
    mk_mb(&h->sv3_bias, nm("value.bias_miscvaluehead"), sv);
    mk_conv(&h->ownership_conv, nm("value.conv_ownership"), 1, 4, 1);
    n->num_policy_c = p->policy_out_c;
    n->num_value_c = 3;
    n->num_score_value_c = sv;
    n->num_ownership_c = 1;
    n->num_floats = g_floats;
    n->num_params = g_params;
    return n;
}

/* ------------------------------------------------------------------------------------------ */

static const char *tmp;

static hc_net *roundtrip(const hc_net *src, const char *fname, int binary, hc_err *e)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, fname);
    if (hc_net_write(src, path, binary, e) < 0)
        return NULL;
    return hc_net_load(path, e);
}

static int count_kind(const hc_block *b, int n, int kind, int recurse)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        c += (int)b[i].kind == kind;
        if (recurse && b[i].kind == HC_BLOCK_NESTED_BOTTLENECK)
            c += count_kind(b[i].nbt.blocks, b[i].nbt.num_blocks, kind, 1);
    }
    return c;
}

static void check_roundtrip(const char *tag, const hc_net *net, int gz)
{
    char name[64], fname[128];
    for (int binary = 1; binary >= 0; binary--) {
        hc_err e = {0};
        snprintf(fname, sizeof fname, "%s.%s%s", tag, binary ? "bin" : "txt", gz ? ".gz" : "");
        hc_net *back = roundtrip(net, fname, binary, &e);
        snprintf(name, sizeof name, "model-rt.%s.%s", tag, binary ? "bin" : "txt");
        if (!hc_check(name, back != NULL, "%s", e.msg))
            continue;
        why[0] = '\0';
        snprintf(name, sizeof name, "model-rt.%s.%s.same", tag, binary ? "bin" : "txt");
        hc_check(name, !cmp_net(net, back) && back->binary_floats == binary, "%s (binary_floats %d)", why,
                 back->binary_floats);
        hc_net_free(back);
    }
}

/* ---- the shared nets ---- */

static void check_shared(void)
{
    static const struct {
        const char *rel;
        int version, trunk_c, nblocks, ordinary, gpool, nbt, attn, ffn, policy_c, score_c, in_g, rms;
        int heads, kv, qd, vd, learn;
        hc_act tip_act;
    } nets[] = {
        {"nets/g170-b6c96-s175395328-d26788732.bin.gz", 8, 96, 6, 4, 2, 0, 0, 0, 1, 4, 19, 0, 0, 0, 0, 0, 0, HC_ACT_RELU},
        {"nets/b7c96h3tfrs-test5-cnorm.bin.gz", 17, 96, 14, 0, 0, 0, 7, 7, -1, 6, 19, 1, 3, 3, 32, 32, 0, -1},
        {"nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", 17, 96, 14, 0, 0, 0, 7, 7, -1, 6, 19, 0, 6, 3, 32, 16, 1, -1},
        {"nets/synth/pub_v5.bin.gz", 5, 32, 3, 2, 1, 0, 0, 0, 1, 2, 14, 0, 0, 0, 0, 0, 0, HC_ACT_RELU},
        {"nets/synth/pub_v7.bin.gz", 7, 32, 3, 2, 1, 0, 0, 0, 1, 2, 16, 0, 0, 0, 0, 0, 0, HC_ACT_RELU},
        {"nets/synth/pub_v11nbt.bin.gz", 11, 48, 3, 5, 1, 3, 0, 0, 1, 6, 19, 0, 0, 0, 0, 0, 0, HC_ACT_MISH},
        {"nets/synth/pub_v15meta.bin.gz", 15, 40, 2, -1, -1, 2, 0, 0, 2, 6, 19, 0, 0, 0, 0, 0, 0, HC_ACT_MISH},
        {"nets/synth/pub_v16.bin.gz", 16, 40, 2, -1, -1, 2, 0, 0, 4, 6, 19, 0, 0, 0, 0, 0, 0, HC_ACT_MISH},
        {"nets/synth/pub_v17nbttf.bin.gz", 17, 48, 3, 0, 0, 3, 4, 4, 4, 6, 19, 1, 4, 4, 8, 8, 1, HC_ACT_SILU},
    };
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "model-1.%zu", i);
        const char *path = hc_shared(nets[i].rel);
        /* load, layout, kinds, facts and the 4 round-trip checks; heads on transformer nets */
        const unsigned per_net = 8 + (strstr(nets[i].rel, "tf") != NULL);
        if (!path) {
            hc_skip_n(name, per_net, "shared net %s absent", nets[i].rel);
            continue;
        }
        hc_err e = {0};
        hc_net *n = hc_net_load(path, &e);
        char load_name[80];
        snprintf(load_name, sizeof load_name, "%s.load", name);
        if (!hc_check(load_name, n != NULL, "%s", e.msg)) {
            hc_fail_n(name, per_net - 1, "not run: the net does not load");
            continue;
        }
        const hc_trunk *t = &n->trunk;
        int ok = n->model_version == nets[i].version && t->trunk_c == nets[i].trunk_c &&
                 t->num_blocks == nets[i].nblocks && n->num_input_c == 22 && n->num_input_global_c == nets[i].in_g &&
                 n->num_score_value_c == nets[i].score_c && n->num_value_c == 3 && n->num_ownership_c == 1 &&
                 (nets[i].policy_c < 0 || n->num_policy_c == nets[i].policy_c) && n->binary_floats == 1 &&
                 t->norm_kind == (nets[i].rms ? HC_TRUNK_NORM_RMSNORM : HC_TRUNK_NORM_BN) &&
                 ((int)nets[i].tip_act < 0 || t->tip_act.kind == nets[i].tip_act);
        hc_check(name, ok, "%s: version %d trunk %d blocks %d in %d/%d policy %d score %d norm %d act %s", nets[i].rel,
                 n->model_version, t->trunk_c, t->num_blocks, n->num_input_c, n->num_input_global_c, n->num_policy_c,
                 n->num_score_value_c, t->norm_kind, hc_act_str(t->tip_act.kind));
        snprintf(name, sizeof name, "model-1.%zu.kinds", i);
        int c_ord = count_kind(t->blocks, t->num_blocks, HC_BLOCK_ORDINARY, 1);
        int c_gp = count_kind(t->blocks, t->num_blocks, HC_BLOCK_GPOOL, 1);
        int c_nbt = count_kind(t->blocks, t->num_blocks, HC_BLOCK_NESTED_BOTTLENECK, 0);
        int c_at = count_kind(t->blocks, t->num_blocks, HC_BLOCK_ATTENTION, 1);
        int c_ff = count_kind(t->blocks, t->num_blocks, HC_BLOCK_FFN, 1);
        hc_check(name,
                 (nets[i].ordinary < 0 || c_ord == nets[i].ordinary) && (nets[i].gpool < 0 || c_gp == nets[i].gpool) &&
                     c_nbt == nets[i].nbt && c_at == nets[i].attn && c_ff == nets[i].ffn,
                 "ordinary %d gpool %d nbt %d attention %d ffn %d", c_ord, c_gp, c_nbt, c_at, c_ff);
        /* Head layout of the attention blocks, wherever they are. */
        if (nets[i].attn) {
            const hc_block *a = NULL;
            for (int k = 0; k < t->num_blocks && !a; k++) {
                if (t->blocks[k].kind == HC_BLOCK_ATTENTION)
                    a = &t->blocks[k];
                else if (t->blocks[k].kind == HC_BLOCK_NESTED_BOTTLENECK && t->blocks[k].nbt.blocks[0].kind == HC_BLOCK_ATTENTION)
                    a = &t->blocks[k].nbt.blocks[0];
            }
            snprintf(name, sizeof name, "model-1.%zu.heads", i);
            hc_check(name,
                     a && a->attn.num_heads == nets[i].heads && a->attn.num_kv_heads == nets[i].kv &&
                         a->attn.q_head_dim == nets[i].qd && a->attn.v_head_dim == nets[i].vd && a->attn.use_rope &&
                         a->attn.learnable_rope == nets[i].learn && (nets[i].learn || a->attn.rope_theta > 0),
                     "attention layout differs from the README");
        }
        snprintf(name, sizeof name, "model-1.%zu.facts", i);
        hc_check(name,
                 n->input_version == hc_model_input_version(n->model_version) && n->num_floats > n->num_params &&
                     n->num_params > 10000 && hc_net_has_transformer(n) == (nets[i].attn > 0),
                 "input_version %d floats %lld params %lld", n->input_version, (long long)n->num_floats,
                 (long long)n->num_params);
        check_roundtrip(strrchr(nets[i].rel, '/') + 1, n, 0); /* plain: gzip is covered below, and slow */
        hc_net_free(n);
    }

    /* Details the synth configs spell out. */
    const char *p = hc_shared("nets/synth/pub_v15meta.bin.gz");
    if (p) {
        hc_err e = {0};
        hc_net *n = hc_net_load(p, &e);
        const hc_meta_encoder *m = n ? &n->trunk.meta : NULL;
        hc_check("model-1.20", n && n->trunk.has_meta_encoder && n->num_input_meta_c == 192 && m->mul1.in_c == 192 &&
                                   m->mul1.out_c == 32 && m->mul2.out_c == 32 && m->mul3.out_c == 40 &&
                                   m->act1.kind == HC_ACT_MISH && n->policy.has_pass_mlp &&
                                   n->policy.pass_act.kind == HC_ACT_IDENTITY && !hc_net_supports_policy_optimism(n),
                 "v15 metadata encoder layout: %s", n ? "differs" : e.msg);
        hc_net_free(n);
    } else {
        hc_skip("model-1.20", "shared net nets/synth/pub_v15meta.bin.gz absent");
    }
    p = hc_shared("nets/synth/pub_v7.bin.gz");
    if (p) {
        hc_err e = {0};
        hc_net *n = hc_net_load(p, &e);
        /* "batchnorms with/without scale and bias": both kinds must be present. */
        int with = 0, without = 0;
        if (n) {
            const hc_bn *bns[] = {&n->trunk.tip_bn, &n->policy.g1_bn, &n->policy.p1_bn, &n->value.v1_bn,
                                  &n->trunk.blocks[0].ordinary.pre_bn, &n->trunk.blocks[0].ordinary.mid_bn,
                                  &n->trunk.blocks[1].gpool.gpool_bn, &n->trunk.blocks[2].ordinary.mid_bn};
            for (size_t k = 0; k < sizeof bns / sizeof bns[0]; k++) {
                with += bns[k]->has_scale + bns[k]->has_bias;
                without += !bns[k]->has_scale + !bns[k]->has_bias;
            }
        }
        hc_check("model-1.21", n && with > 0 && without > 0 && n->trunk.initial_conv.ky == 5,
                 "v7: bn with %d without %d", with, without);
        hc_net_free(n);
    } else {
        hc_skip("model-1.21", "shared net nets/synth/pub_v7.bin.gz absent");
    }
    p = hc_shared("nets/synth/pub_v11nbt.bin.gz");
    if (p) {
        hc_err e = {0};
        hc_net *n = hc_net_load(p, &e);
        hc_check("model-1.22", n && n->trunk.blocks[0].nbt.pre_conv.out_c == 24 && n->trunk.blocks[0].nbt.num_blocks == 2,
                 "v11 bottleneck width");
        hc_net_free(n);
    } else {
        hc_skip("model-1.22", "shared net nets/synth/pub_v11nbt.bin.gz absent");
    }
}

/* ---- layouts, checked against the raw file bytes (not through the writer) ---- */

static size_t tok_off(const unsigned char *buf, size_t len, const char *name, int k);

static unsigned char *gunzip_all(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    unsigned char *b = malloc(cap);
    int got;
    while ((got = gzread(g, b + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap)
            b = realloc(b, cap *= 2);
    }
    gzclose(g);
    *len = n;
    return b;
}

/* Pointer to the raw little-endian floats of the first block after the layer header line
 * `name`, or NULL. */
static const unsigned char *raw_block(const unsigned char *buf, size_t len, const char *name)
{
    size_t off = tok_off(buf, len, name, 0);
    if (off == (size_t)-1)
        return NULL;
    const unsigned char *at = memchr(buf + off, '@', len - off);
    return at && (size_t)(at - buf) + 5 < len && memcmp(at, "@BIN@", 5) == 0 ? at + 5 : NULL;
}

static float raw_f(const unsigned char *p, size_t i)
{
    uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                 (uint32_t)p[4 * i + 3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void check_layouts(void)
{
    static const char *const rels[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz", "nets/synth/pub_v5.bin.gz"};
    for (size_t k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "model-2.%zu", k);
        const char *path = hc_shared(rels[k]);
        if (!path) {
            hc_skip_n(name, 4, "shared net %s absent", rels[k]);
            continue;
        }
        hc_err e = {0};
        hc_net *n = hc_net_load(path, &e);
        size_t len = 0;
        unsigned char *raw = gunzip_all(path, &len);
        char load_name[80];
        snprintf(load_name, sizeof load_name, "%s.load", name);
        if (!hc_check(load_name, n && raw, "%s", e.msg)) {
            hc_net_free(n);
            free(raw);
            continue;
        }
        /* Conv: file (y, x, ic, oc) -> memory (oc, ic, y, x). */
        const hc_conv *c = &n->trunk.initial_conv;
        const unsigned char *p = raw_block(raw, len, c->name);
        int bad = !p || c->ky < 3;
        for (int y = 0; p && y < c->ky; y++)
            for (int x = 0; x < c->kx; x++)
                for (int ic = 0; ic < c->in_c; ic += 5)
                    for (int oc = 0; oc < c->out_c; oc += 7) {
                        float want = raw_f(p, (((size_t)y * c->kx + x) * c->in_c + ic) * c->out_c + oc);
                        float got = c->w[(((size_t)oc * c->in_c + ic) * c->ky + y) * c->kx + x];
                        bad += memcmp(&want, &got, 4) != 0;
                    }
        hc_check(name, !bad, "%s: conv weights not in (oc, ic, y, x) order (%d mismatches)", c->name, bad);
        /* Matmul: file (ic, oc) kept as is. */
        const hc_matmul *m = &n->trunk.initial_matmul;
        p = raw_block(raw, len, m->name);
        bad = !p;
        for (size_t i = 0; p && i < (size_t)m->in_c * m->out_c; i++) {
            float want = raw_f(p, i);
            bad += memcmp(&want, &m->w[i], 4) != 0;
        }
        snprintf(name, sizeof name, "model-2.%zu.matmul", k);
        hc_check(name, !bad, "%s: matmul weights not in file (ic, oc) order", m->name);
        /* Batchnorm merge as KataGo computes it, in float. */
        const hc_bn *b = &n->trunk.tip_bn;
        bad = 0;
        for (int i = 0; i < b->c; i++) {
            float ms = b->scale[i] / sqrtf(b->var[i] + b->eps);
            float mb = b->bias[i] - ms * b->mean[i];
            bad += ms != b->merged_scale[i] || mb != b->merged_bias[i];
        }
        snprintf(name, sizeof name, "model-2.%zu.bn", k);
        hc_check(name, !bad && b->c == n->trunk.trunk_c, "%s: merged scale/bias differ from KataGo's formula", b->name);
        hc_net_free(n);
        free(raw);
    }
}

/* ---- every version, every block kind ---- */

static void check_versions(void)
{
    for (int v = HC_MODEL_VERSION_MIN; v <= HC_MODEL_VERSION_MAX; v++) {
        spec s = {v, v >= 11, 0, 0, 0, 2};
        hc_net *n = build_net(&s);
        char tag[32];
        snprintf(tag, sizeof tag, "v%d", v);
        check_roundtrip(tag, n, v % 2);
        hc_net_free(n);
    }
    static const spec extra[] = {
        {15, 1, 0, 1, 0, 0},  /* metadata encoder */
        {15, 1, 0, 0, 1, 0},  /* RMSNorm tip on v15 */
        {17, 0, 1, 0, 1, 4},  /* transformers: learnable/fixed/no RoPE, GQA, SwiGLU and plain FFN, nested */
        {17, 0, 1, 1, 0, 2},  /* transformers with metadata and a batchnorm tip */
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        hc_net *n = build_net(&extra[i]);
        char tag[32];
        snprintf(tag, sizeof tag, "extra%zu", i);
        check_roundtrip(tag, n, 1);
        hc_net_free(n);
    }
}

/* ---- corruptions ---- */

static unsigned char *base_bin, *base_txt;
static size_t base_bin_len, base_txt_len;

static hc_net *load_mem(const void *buf, size_t len, hc_err *e)
{
    hc_istream *in = hc_istream_mem(buf, len, "corrupt.bin", e);
    if (!in)
        return NULL;
    hc_net *n = hc_net_read(in, e);
    hc_istream_close(in);
    return n;
}

/* Offset of the k-th token after the token `name` (k = 0: the name itself). Header only. */
static size_t tok_off(const unsigned char *buf, size_t len, const char *name, int k)
{
    size_t nl = strlen(name);
    size_t i;
    for (i = 0; i + nl + 1 < len; i++)
        if ((i == 0 || buf[i - 1] == '\n') && memcmp(buf + i, name, nl) == 0 && buf[i + nl] == '\n')
            break;
    if (i + nl + 1 >= len)
        return (size_t)-1;
    for (int t = 0; t < k; t++) {
        while (i < len && buf[i] != '\n' && buf[i] != ' ')
            i++;
        while (i < len && (buf[i] == '\n' || buf[i] == ' '))
            i++;
    }
    return i;
}

static size_t tok_len(const unsigned char *buf, size_t len, size_t off)
{
    size_t e = off;
    while (e < len && buf[e] != '\n' && buf[e] != ' ')
        e++;
    return e - off;
}

/* A copy of buf with the token at off replaced by rep. */
static unsigned char *patched(const unsigned char *buf, size_t len, size_t off, const char *rep, size_t *out_len)
{
    size_t old = tok_len(buf, len, off), rl = strlen(rep);
    unsigned char *b = malloc(len - old + rl + 1);
    memcpy(b, buf, off);
    memcpy(b + off, rep, rl);
    memcpy(b + off + rl, buf + off + old, len - off - old);
    *out_len = len - old + rl;
    return b;
}

/* Loads buf with the k-th token after `name` replaced; checks code and message fragments. */
static void expect_patch(const char *check, int binary, const char *name, int k, const char *rep, int code,
                         const char *frag1, const char *frag2)
{
    const unsigned char *buf = binary ? base_bin : base_txt;
    size_t len = binary ? base_bin_len : base_txt_len;
    size_t off = tok_off(buf, len, name, k);
    if (off == (size_t)-1) {
        hc_check(check, 0, "test setup: token %s not found", name);
        return;
    }
    size_t nlen;
    unsigned char *b = patched(buf, len, off, rep, &nlen);
    hc_err e = {0};
    hc_net *n = load_mem(b, nlen, &e);
    char offs[64];
    snprintf(offs, sizeof offs, "offset %zu:", off);
    hc_check(check,
             !n && e.code == code && strstr(e.msg, frag1) && (!frag2 || strstr(e.msg, frag2)) &&
                 (code == HC_EIO || strstr(e.msg, "offset ")),
             "got code %s: %s (wanted %s with \"%s\" \"%s\" near %s)", hc_code_str(e.code), n ? "(loaded)" : e.msg,
             hc_code_str(code), frag1, frag2 ? frag2 : "", offs);
    hc_net_free(n);
    free(b);
}

static void check_corruptions(void)
{
    spec s = {11, 1, 0, 0, 0, 0};
    hc_net *n = build_net(&s);
    char path[600];
    hc_err e = {0};
    snprintf(path, sizeof path, "%s/base.bin", tmp);
    int ok = hc_net_write(n, path, 1, &e) == 0 && (base_bin = (unsigned char *)hc_read_file(path, 1 << 26, &base_bin_len, &e));
    snprintf(path, sizeof path, "%s/base.txt", tmp);
    ok = ok && hc_net_write(n, path, 0, &e) == 0 && (base_txt = (unsigned char *)hc_read_file(path, 1 << 26, &base_txt_len, &e));
    if (!hc_check("model-3.0", ok, "setup: %s", e.msg)) {
        hc_net_free(n);
        return;
    }
    hc_net *m = load_mem(base_bin, base_bin_len, &e);
    hc_check("model-3.1", m && !cmp_net(n, m), "uncorrupted base must load: %s %s", e.msg, why);
    hc_net_free(m);

    /* Truncation at ~600 points of each format: always an error (never a crash, leak or
     * silently shorter net). Text stops before the last float, whose prefix is a number. */
    for (int binary = 1; binary >= 0; binary--) {
        const unsigned char *buf = binary ? base_bin : base_txt;
        size_t len = binary ? base_bin_len : base_txt_len;
        size_t last = len - 1; /* binary: only the final newline may go */
        if (!binary) {
            last = len;
            while (last > 0 && (buf[last - 1] == ' ' || buf[last - 1] == '\n'))
                last--;
            while (last > 0 && buf[last - 1] != ' ' && buf[last - 1] != '\n')
                last--;
        }
        size_t step = last / 600 + 1, bad = 0, tried = 0;
        char first_bad[300] = "";
        for (size_t cut = 0; cut < last; cut += step) {
            hc_err ce = {0};
            hc_net *t = load_mem(buf, cut, &ce);
            tried++;
            int good = !t && ce.code == HC_EFORMAT && strstr(ce.msg, "offset ");
            if (!good && !bad++)
                snprintf(first_bad, sizeof first_bad, "cut at %zu: %s", cut, t ? "loaded" : ce.msg);
            hc_net_free(t);
        }
        hc_check(binary ? "model-3.2" : "model-3.3", bad == 0 && tried > 100, "%zu of %zu truncations misbehaved; first %s",
                 bad, tried, first_bad);
    }
    {
        hc_err ce = {0};
        hc_net *t = load_mem(base_bin, base_bin_len - 1, &ce);
        hc_check("model-3.4", t != NULL, "dropping only the final newline must still load: %s", ce.msg);
        hc_net_free(t);
        /* The error for a cut inside a weight array names the layer and the count. */
        size_t off = tok_off(base_bin, base_bin_len, "blocks.2.conv2", 7);
        t = load_mem(base_bin, off + 5 + 4 * 10 + 2, &ce);
        char want[80];
        snprintf(want, sizeof want, "offset %zu:", off + 5 + 40);
        hc_check("model-3.5", !t && strstr(ce.msg, want) && strstr(ce.msg, "layer blocks.2.conv2") &&
                                  strstr(ce.msg, "conv weights") && strstr(ce.msg, "got end of file after 10"),
                 "%s", ce.msg);
        hc_net_free(t);
    }

    /* Header numbers. */
    expect_patch("model-3.10", 1, n->name, 1, "99", HC_EFORMAT, "model version", "unsupported model version 99");
    expect_patch("model-3.11", 1, n->name, 1, "2", HC_EFORMAT, "model version", "unsupported model version 2");
    expect_patch("model-3.12", 1, n->name, 2, "23", HC_EFORMAT, "spatial input channels", "23 != the spatial features");
    expect_patch("model-3.13", 1, "conv_spatial", 3, "21", HC_EFORMAT, "layer conv_spatial: conv in channels",
                 "21 != the model's spatial input channels (22)");
    /* A changed count that no neighbour constrains: the binary block no longer ends where the
     * data does (caught at once); in text the inner stack disagrees with it. */
    expect_patch("model-3.14", 1, "blocks.1.conv1", 4, "9", HC_EFORMAT, "layer blocks.1.conv1: conv weights",
                 "not a newline: the declared shape does not match the data");
    expect_patch("model-3.14b", 1, "blocks.1.conv1", 4, "7", HC_EFORMAT, "layer blocks.1.conv1: conv weights",
                 "not a newline");
    expect_patch("model-3.14c", 0, "blocks.1.conv1", 4, "9", HC_EFORMAT, "layer blocks.1.conv1: conv weights",
                 "expected a number, found \"ordinary_block\"");
    expect_patch("model-3.14d", 0, "blocks.1.conv1", 4, "7", HC_EFORMAT, "block kind", "unknown block kind");
    expect_patch("model-3.15", 1, "blocks.2.norm2", 1, "17", HC_EFORMAT, "layer blocks.2.norm2: batchnorm channels",
                 "17 != regular_conv out channels (18)");
    expect_patch("model-3.16", 1, "blocks.2.conv2", 4, "15", HC_EFORMAT, "layer blocks.2.conv2: conv out channels",
                 "15 != the expected output channels (16)");
    expect_patch("model-3.17", 1, "value.linear_valuehead", 2, "4", HC_EFORMAT, "matmul out channels",
                 "4 != 3 value channels");
    expect_patch("model-3.18", 1, "value.linear_miscvaluehead", 2, "4", HC_EFORMAT, "matmul out channels",
                 "this version's score value channels (6)");
    expect_patch("model-3.19", 1, "conv_spatial", 1, "4", HC_EFORMAT, "conv kernel", "must be odd");
    expect_patch("model-3.20", 1, "conv_spatial", 3, "2x", HC_EFORMAT, "conv in channels", "expected an integer");
    expect_patch("model-3.21", 1, "blocks.1.norm1", 2, "-0.5", HC_EFORMAT, "batchnorm epsilon", "not positive");
    expect_patch("model-3.22", 1, "blocks.1.norm1", 3, "2", HC_EFORMAT, "batchnorm has_scale", "above the maximum 1");
    expect_patch("model-3.23", 1, "ordinary_block", 0, "ordinary_blocc", HC_EFORMAT, "block kind",
                 "unknown block kind \"ordinary_blocc\"");
    expect_patch("model-3.24", 1, "blocks.0.act1", 1, "ACTIVATION_MASH", HC_EFORMAT, "layer blocks.0.act1: activation kind",
                 "unknown activation");
    expect_patch("model-3.25", 1, "trunk", 1, "0", HC_EFORMAT, "trunk num blocks", "below the minimum 1");
    expect_patch("model-3.26", 1, n->name, 0, "bad/name", HC_EFORMAT, "model name", "not alphanumeric");
    /* Hostile sizes: refused by a named limit before any allocation. */
    expect_patch("model-3.30", 1, "trunk", 2, "100000", HC_ELIMIT, "trunk channels", "HC_MODEL_MAX_CHANNELS");
    expect_patch("model-3.31", 1, "trunk", 1, "5000", HC_ELIMIT, "trunk num blocks", "HC_MODEL_MAX_BLOCKS");
    expect_patch("model-3.32", 1, "conv_spatial", 1, "17", HC_ELIMIT, "conv kernel y", "HC_MODEL_MAX_KERNEL");
    expect_patch("model-3.33", 1, "blocks.0", 1, "100000", HC_ELIMIT, "nested block count", "HC_MODEL_MAX_BLOCKS");
    expect_patch("model-3.34", 1, "blocks.0.conv1", 5, "99", HC_ELIMIT, "conv dilation y", "HC_MODEL_MAX_DILATION");
    expect_patch("model-3.35", 1, "blocks.0.conv1", 0, "x\nx", HC_EFORMAT, "layer x: conv kernel y", "expected an integer");
    {
        /* A hostile header whose every field is within its limit: trunk 8192 (backed by a
         * 1x1 initial conv's data), then a 15x15 8192 -> 8192 conv header. The layer limit
         * refuses its 15 G floats before allocating. */
        size_t len = 0;
        char *t = hc_hostile_model_text(15, &len);
        hc_err ce = {0};
        hc_net *h = load_mem(t, len, &ce);
        hc_check("model-3.36", !h && ce.code == HC_ELIMIT && strstr(ce.msg, "HC_MODEL_MAX_LAYER_FLOATS") &&
                                   strstr(ce.msg, "layer rc: conv weights"),
                 "%s", ce.msg);
        hc_net_free(h);
        free(t);
    }

    /* Weights: NaN and Inf, binary and text; the offset is the weight's own. */
    {
        size_t off = tok_off(base_bin, base_bin_len, "blocks.1.conv2", 7) + 5 + 4 * 3;
        unsigned char *b = malloc(base_bin_len);
        memcpy(b, base_bin, base_bin_len);
        static const unsigned char qnan[4] = {0x00, 0x00, 0xc0, 0x7f}, inf[4] = {0x00, 0x00, 0x80, 0xff};
        memcpy(b + off, qnan, 4);
        hc_err ce = {0};
        hc_net *t = load_mem(b, base_bin_len, &ce);
        char want[64];
        snprintf(want, sizeof want, "offset %zu: layer blocks.1.conv2: conv weights: weight 3 of", off);
        hc_check("model-3.40", !t && ce.code == HC_EFORMAT && strstr(ce.msg, want) && strstr(ce.msg, "NaN"), "%s", ce.msg);
        hc_net_free(t);
        memcpy(b + off, inf, 4);
        t = load_mem(b, base_bin_len, &ce);
        hc_check("model-3.41", !t && strstr(ce.msg, want) && strstr(ce.msg, "infinite"), "%s", ce.msg);
        hc_net_free(t);
        free(b);
    }
    expect_patch("model-3.42", 0, "blocks.1.norm1", 5, "nan", HC_EFORMAT, "layer blocks.1.norm1: batchnorm mean",
                 "weight 0 of 16 is NaN");
    expect_patch("model-3.43", 0, "blocks.1.norm1", 6, "1e99", HC_EFORMAT, "batchnorm mean", "weight 1 of 16 is infinite");
    expect_patch("model-3.44", 0, "blocks.1.norm1", 6, "0.5junk", HC_EFORMAT, "batchnorm mean", "expected a number");
    expect_patch("model-3.45", 0, "blocks.1.norm1", 5, "@BIN@", HC_EFORMAT, "batchnorm mean",
                 "binary float block in a file of text floats");
    /* Trailing data, empty input, not a model, missing file. */
    {
        unsigned char *b = malloc(base_bin_len + 8);
        memcpy(b, base_bin, base_bin_len);
        memcpy(b + base_bin_len, "extra\n", 6);
        hc_err ce = {0};
        hc_net *t = load_mem(b, base_bin_len + 6, &ce);
        hc_check("model-3.50", !t && ce.code == HC_EFORMAT && strstr(ce.msg, "trailing data"), "%s", ce.msg);
        hc_net_free(t);
        free(b);
        t = load_mem("", 0, &ce);
        hc_check("model-3.51", !t && ce.code == HC_EFORMAT && strstr(ce.msg, "offset 0:") && strstr(ce.msg, "end of file"),
                 "%s", ce.msg);
        hc_net_free(t);
        const char *json = "{\"not\": \"a model\"}\n";
        t = load_mem(json, strlen(json), &ce);
        hc_check("model-3.52", !t && ce.code == HC_EFORMAT && strstr(ce.msg, "model name"), "%s", ce.msg);
        hc_net_free(t);
        t = hc_net_load("build/tmp/does/not/exist.bin.gz", &ce);
        hc_check("model-3.53", !t && ce.code == HC_EIO, "%s", ce.msg);
        hc_net_free(t);
    }
    /* Random single-byte damage anywhere: a clean load or a located error, never a crash. */
    for (int binary = 1; binary >= 0; binary--) {
        const unsigned char *buf = binary ? base_bin : base_txt;
        size_t len = binary ? base_bin_len : base_txt_len;
        unsigned char *b = malloc(len);
        int bad = 0, errors = 0;
        char first[300] = "";
        for (int k = 0; k < 300; k++) {
            memcpy(b, buf, len);
            size_t at = (size_t)(hc_rng_next(&rng) >> 33) % len;
            b[at] ^= (unsigned char)(1u << (k % 8));
            hc_err ce = {0};
            hc_net *t = load_mem(b, len, &ce);
            if (!t) {
                errors++;
                if ((ce.code != HC_EFORMAT && ce.code != HC_ELIMIT) || !strstr(ce.msg, "offset "))
                    if (!bad++)
                        snprintf(first, sizeof first, "byte %zu: %s", at, ce.msg);
            }
            hc_net_free(t);
        }
        hc_check(binary ? "model-3.60" : "model-3.61", bad == 0 && errors > 0, "%d of 300 flips misreported: %s", bad,
                 first);
        free(b);
    }
    /* A truncated gzip file: the stream's error surfaces, no crash or leak. */
    {
        snprintf(path, sizeof path, "%s/base.bin.gz", tmp);
        size_t glen = 0;
        char *gz = NULL;
        if (hc_net_write(n, path, 1, &e) == 0)
            gz = hc_read_file(path, 1 << 26, &glen, &e);
        int bad = 0, tried = 0;
        char first[300] = "";
        for (size_t cut = 0; gz && cut + 8 < glen; cut += glen / 40 + 1) {
            char cp[600];
            snprintf(cp, sizeof cp, "%s/cut.bin.gz", tmp);
            FILE *f = fopen(cp, "wb");
            fwrite(gz, 1, cut, f);
            fclose(f);
            hc_err ce = {0};
            hc_net *t = hc_net_load(cp, &ce);
            tried++;
            if ((t || ce.code != HC_EFORMAT) && !bad++)
                snprintf(first, sizeof first, "cut %zu: %s", cut, t ? "loaded" : ce.msg);
            hc_net_free(t);
        }
        hc_check("model-3.54", gz && tried > 20 && bad == 0, "%d of %d gzip truncations misbehaved: %s", bad, tried, first);
        free(gz);
    }
    hc_net_free(n);
    free(base_bin);
    free(base_txt);
}

/* ---- KataGo's load-time transform ---- */

static void check_reduce(void)
{
    spec s = {11, 1, 0, 0, 0, 0};
    hc_net *n = build_net(&s);
    /* Shrink some batchnorm scales below 1 and 0.5 so every branch of the fold runs. */
    hc_bn *mid = &n->trunk.blocks[2].ordinary.mid_bn;
    hc_conv *reg = &n->trunk.blocks[2].ordinary.regular_conv;
    mid->merged_scale[0] = 0.25f;
    mid->merged_scale[1] = -0.75f;
    mid->merged_scale[2] = 3.0f;
    float w0 = reg->w[0], w1 = reg->w[(size_t)reg->in_c * 9], w2 = reg->w[(size_t)2 * reg->in_c * 9];
    hc_bn *tip = &n->trunk.tip_bn;
    tip->merged_scale[0] = 0.25f;
    tip->merged_scale[1] = 0.75f;
    float c0 = n->trunk.initial_conv.w[0];
    hc_net_reduce_activations(n);
    hc_check("model-4.1",
             mid->merged_scale[0] == 1.0f && mid->merged_scale[1] == 1.0f && mid->merged_scale[2] == 3.0f &&
                 reg->w[0] == w0 * 0.25f && reg->w[(size_t)reg->in_c * 9] == w1 * -0.75f &&
                 reg->w[(size_t)2 * reg->in_c * 9] == w2 && mid->mean[0] == 0.0f && mid->var[0] == 1.0f &&
                 mid->scale[0] == 1.0f && mid->eps == 1e-20f,
             "ordinary block fold: scale %g %g %g", (double)mid->merged_scale[0], (double)mid->merged_scale[1],
             (double)mid->merged_scale[2]);
    hc_check("model-4.2", tip->merged_scale[0] == 0.5f && tip->merged_scale[1] == 1.0f &&
                              n->trunk.initial_conv.w[0] == c0 * 0.5f,
             "trunk tip fold with inverses: %g %g", (double)tip->merged_scale[0], (double)tip->merged_scale[1]);
    hc_net_free(n);
}

/* ---- peak memory while loading (not under ASan, whose shadow memory would dominate) ---- */

#if defined(__SANITIZE_ADDRESS__)
#define HC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HC_UNDER_ASAN 1
#endif
#endif

#ifndef HC_UNDER_ASAN
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = atol(line + kl + 1);
            break;
        }
    if (f)
        fclose(f);
    return v;
}
#endif

static void check_memory(void)
{
#ifdef HC_UNDER_ASAN
    hc_skip("model-5.1", "peak memory is not measured under AddressSanitizer");
#else
    const char *p = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!p) {
        hc_skip("model-5.1", "shared net absent");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    int fd[2];
    if (pipe(fd) != 0)
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        long r[3];
        r[0] = status_kb("VmRSS");
        hc_err e = {0};
        hc_net *n = hc_net_load(path, &e);
        r[1] = status_kb("VmHWM");
        r[2] = n ? (long)(n->num_floats * 4 / 1024) : -1;
        hc_net_free(n);
        _exit(write(fd[1], r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    long r[3] = {0, 0, -1};
    ssize_t got = read(fd[0], r, sizeof r);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof r && (r[0] < 0 || r[1] < 0)) { /* macOS and the BSDs: no VmRSS/VmHWM */
        hc_skip("model-5.1", "no /proc/self/status here: the peak RSS of loading is not measured");
        return;
    }
    long grow = r[1] - r[0];
    hc_check("model-5.1", got == (ssize_t)sizeof r && r[2] > 0 && grow <= r[2] + 16 * 1024,
             "peak RSS grew by %ld KiB while loading %ld KiB of weights (limit: weights + 16 MiB)", grow, r[2]);
#endif
}

int main(void)
{
    hc_plan(211);
    tmp = hc_tmpdir("test_model");
    if (!tmp) {
        hc_check("model-0", 0, "cannot create a scratch directory");
        return hc_test_exit();
    }
    check_shared();
    check_layouts();
    check_versions();
    check_corruptions();
    check_reduce();
    check_memory();
    return hc_test_exit();
}
