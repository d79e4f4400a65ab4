/* Writer for KataGo model files. Deliberately shares no code with model_read.c (only the
 * structs of model.h), so a round trip checks one against the other. Layout: one header
 * token per line; a weight array is either "@BIN@" + little-endian float32 + "\n", or text
 * floats ("%.9g", which reads back bit-exactly) on one line. */
#include "harness/model/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WR_BUF = 1 << 16 };

typedef struct wr {
    hc_ostream *out;
    hc_err *err;
    const char *path;
    int binary;
    int version;
    int failed;
    size_t len;
    char buf[WR_BUF];
} wr;

static void wr_flush(wr *w)
{
    if (!w->failed && w->len && hc_ostream_write(w->out, w->buf, w->len, w->err) < 0)
        w->failed = 1;
    w->len = 0;
}

static void wr_bytes(wr *w, const void *p, size_t n)
{
    const char *s = p;
    while (n && !w->failed) {
        if (w->len == WR_BUF)
            wr_flush(w);
        size_t take = WR_BUF - w->len < n ? WR_BUF - w->len : n;
        memcpy(w->buf + w->len, s, take);
        w->len += take;
        s += take;
        n -= take;
    }
}

static void wr_bad(wr *w, const char *what, const char *name)
{
    if (!w->failed)
        hc_err_set(w->err, HC_EINTERNAL, "%s: cannot write net: %s (layer %s)", w->path, what, name ? name : "(unnamed)");
    w->failed = 1;
}

static void wr_line(wr *w, const char *s)
{
    wr_bytes(w, s, strlen(s));
    wr_bytes(w, "\n", 1);
}

static void wr_name(wr *w, const char *name)
{
    if (!name || !*name) {
        wr_bad(w, "missing name", name);
        return;
    }
    for (const char *p = name; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f') {
            wr_bad(w, "name contains whitespace", name);
            return;
        }
    wr_line(w, name);
}

/* One header token on its own line. */
static void wr_fmt(wr *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wr_fmt(wr *w, const char *fmt, ...)
{
    char s[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    wr_line(w, s);
}

static void wr_int(wr *w, long v) { wr_fmt(w, "%ld", v); }
/* %.9g and %.17g read back bit-exactly as float and double. */
static void wr_float1(wr *w, float v) { wr_fmt(w, "%.9g", (double)v); }
static void wr_double1(wr *w, double v) { wr_fmt(w, "%.17g", v); }

static void wr_value(wr *w, float v)
{
    if (w->binary) {
        uint32_t u;
        memcpy(&u, &v, 4);
        unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                              (unsigned char)(u >> 24)};
        wr_bytes(w, b, 4);
    } else {
        char s[48];
        int n = snprintf(s, sizeof s, "%.9g ", (double)v);
        wr_bytes(w, s, (size_t)n);
    }
}

static void wr_begin_block(wr *w)
{
    if (w->binary)
        wr_bytes(w, "@BIN@", 5);
}

static void wr_end_block(wr *w) { wr_bytes(w, "\n", 1); }

static void wr_array(wr *w, const float *a, size_t n, const char *name)
{
    if (!a && n) {
        wr_bad(w, "missing weights", name);
        return;
    }
    wr_begin_block(w);
    for (size_t i = 0; i < n; i++)
        wr_value(w, a[i]);
    wr_end_block(w);
}

static void wr_conv(wr *w, const hc_conv *c)
{
    wr_name(w, c->name);
    wr_int(w, c->ky);
    wr_int(w, c->kx);
    wr_int(w, c->in_c);
    wr_int(w, c->out_c);
    wr_int(w, c->dil_y);
    wr_int(w, c->dil_x);
    if (!c->w) {
        wr_bad(w, "missing conv weights", c->name);
        return;
    }
    /* Back from (oc, ic, y, x) to the file's (y, x, ic, oc). */
    wr_begin_block(w);
    for (int y = 0; y < c->ky; y++)
        for (int x = 0; x < c->kx; x++)
            for (int ic = 0; ic < c->in_c; ic++)
                for (int oc = 0; oc < c->out_c; oc++)
                    wr_value(w, c->w[(((size_t)oc * c->in_c + ic) * c->ky + y) * c->kx + x]);
    wr_end_block(w);
}

static void wr_bn(wr *w, const hc_bn *b)
{
    wr_name(w, b->name);
    wr_int(w, b->c);
    wr_float1(w, b->eps);
    wr_int(w, b->has_scale ? 1 : 0);
    wr_int(w, b->has_bias ? 1 : 0);
    wr_array(w, b->mean, (size_t)b->c, b->name);
    wr_array(w, b->var, (size_t)b->c, b->name);
    if (b->has_scale)
        wr_array(w, b->scale, (size_t)b->c, b->name);
    if (b->has_bias)
        wr_array(w, b->bias, (size_t)b->c, b->name);
}

static void wr_act(wr *w, const hc_activation *a)
{
    wr_name(w, a->name);
    if (w->version >= 11) {
        switch (a->kind) {
        case HC_ACT_IDENTITY: wr_line(w, "ACTIVATION_IDENTITY"); break;
        case HC_ACT_RELU: wr_line(w, "ACTIVATION_RELU"); break;
        case HC_ACT_MISH: wr_line(w, "ACTIVATION_MISH"); break;
        case HC_ACT_SILU: wr_line(w, "ACTIVATION_SILU"); break;
        default: wr_bad(w, "activation kind has no file token", a->name);
        }
    } else if (a->kind != HC_ACT_RELU) {
        wr_bad(w, "model versions below 11 can only store ReLU activations", a->name);
    }
}

static void wr_matmul(wr *w, const hc_matmul *m)
{
    wr_name(w, m->name);
    wr_int(w, m->in_c);
    wr_int(w, m->out_c);
    wr_array(w, m->w, (size_t)m->in_c * m->out_c, m->name);
}

static void wr_matbias(wr *w, const hc_matbias *b)
{
    wr_name(w, b->name);
    wr_int(w, b->c);
    wr_array(w, b->w, (size_t)b->c, b->name);
}

static void wr_tfn(wr *w, const hc_tf_rmsnorm *n)
{
    wr_name(w, n->name);
    wr_int(w, n->c);
    wr_float1(w, n->eps);
    wr_array(w, n->weight, (size_t)n->c, n->name);
}

static void wr_blocks(wr *w, const hc_block *b, int n);

static void wr_block(wr *w, const hc_block *b)
{
    wr_line(w, hc_block_kind_str(b->kind));
    wr_name(w, b->name);
    switch (b->kind) {
    case HC_BLOCK_ORDINARY: {
        const hc_res_block *o = &b->ordinary;
        wr_bn(w, &o->pre_bn); wr_act(w, &o->pre_act); wr_conv(w, &o->regular_conv);
        wr_bn(w, &o->mid_bn); wr_act(w, &o->mid_act); wr_conv(w, &o->final_conv);
        break;
    }
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *g = &b->gpool;
        wr_bn(w, &g->pre_bn); wr_act(w, &g->pre_act); wr_conv(w, &g->regular_conv); wr_conv(w, &g->gpool_conv);
        wr_bn(w, &g->gpool_bn); wr_act(w, &g->gpool_act); wr_matmul(w, &g->gpool_to_bias_mul);
        wr_bn(w, &g->mid_bn); wr_act(w, &g->mid_act); wr_conv(w, &g->final_conv);
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *t = &b->nbt;
        wr_int(w, t->num_blocks);
        wr_bn(w, &t->pre_bn); wr_act(w, &t->pre_act); wr_conv(w, &t->pre_conv);
        wr_blocks(w, t->blocks, t->num_blocks);
        wr_bn(w, &t->post_bn); wr_act(w, &t->post_act); wr_conv(w, &t->post_conv);
        break;
    }
    case HC_BLOCK_ATTENTION: {
        const hc_attn_block *a = &b->attn;
        wr_int(w, a->num_heads);
        wr_int(w, a->num_kv_heads);
        wr_int(w, a->q_head_dim);
        wr_int(w, a->v_head_dim);
        wr_int(w, a->use_rope ? 1 : 0);
        wr_int(w, a->learnable_rope ? 1 : 0);
        wr_tfn(w, &a->pre_ln);
        wr_matmul(w, &a->q_proj); wr_matmul(w, &a->k_proj); wr_matmul(w, &a->v_proj); wr_matmul(w, &a->out_proj);
        if (a->use_rope) {
            wr_name(w, a->rope_param_name);
            if (a->learnable_rope) {
                wr_int(w, a->rope_num_kv_heads);
                wr_int(w, a->rope_num_pairs);
                wr_int(w, 2);
                wr_array(w, a->rope_freqs, (size_t)a->rope_num_kv_heads * a->rope_num_pairs * 2, a->rope_param_name);
            } else {
                wr_float1(w, a->rope_theta);
            }
        }
        break;
    }
    case HC_BLOCK_FFN: {
        const hc_ffn_block *f = &b->ffn;
        wr_int(w, f->c);
        wr_int(w, f->ffn_c);
        wr_int(w, f->use_swiglu ? 1 : 0);
        wr_tfn(w, &f->pre_ln);
        wr_matmul(w, &f->linear1);
        if (f->use_swiglu)
            wr_matmul(w, &f->linear_gate);
        wr_matmul(w, &f->linear2);
        break;
    }
    default:
        wr_bad(w, "unknown block kind", b->name);
    }
}

static void wr_blocks(wr *w, const hc_block *b, int n)
{
    if (!b && n) {
        wr_bad(w, "missing block array", NULL);
        return;
    }
    for (int i = 0; i < n && !w->failed; i++)
        wr_block(w, &b[i]);
}

static void wr_net(wr *w, const hc_net *net)
{
    int v = net->model_version;
    w->version = v;
    if (v < HC_MODEL_VERSION_MIN || v > HC_MODEL_VERSION_MAX) {
        wr_bad(w, "unsupported model version", net->name);
        return;
    }
    wr_name(w, net->name);
    wr_int(w, v);
    wr_int(w, net->num_input_c);
    wr_int(w, net->num_input_global_c);
    if (v >= 13) {
        const hc_postprocess *p = &net->post;
        const double in_file_order[7] = {p->td_score_multiplier, p->score_mean_multiplier, p->score_stdev_multiplier,
                                         p->lead_multiplier, p->variance_time_multiplier,
                                         p->shortterm_value_error_multiplier, p->shortterm_score_error_multiplier};
        for (int i = 0; i < 7; i++)
            wr_double1(w, in_file_order[i]);
    }
    if (v >= 15) {
        wr_int(w, net->meta_encoder_version);
        wr_int(w, net->prefer_pass_alive_under_suicide ? 1 : 0);
        for (int i = 0; i < 6; i++)
            wr_int(w, 0);
    }
    const hc_trunk *t = &net->trunk;
    wr_name(w, t->name);
    wr_int(w, t->num_blocks);
    wr_int(w, t->trunk_c);
    wr_int(w, t->mid_c);
    wr_int(w, t->regular_c);
    wr_int(w, t->dilated_c);
    wr_int(w, t->gpool_c);
    if (v >= 15) {
        wr_int(w, t->norm_kind);
        for (int i = 0; i < 5; i++)
            wr_int(w, 0);
    }
    wr_conv(w, &t->initial_conv);
    wr_matmul(w, &t->initial_matmul);
    if (net->meta_encoder_version > 0) {
        const hc_meta_encoder *m = &t->meta;
        wr_name(w, m->name);
        wr_int(w, m->num_input_c);
        wr_matmul(w, &m->mul1); wr_matbias(w, &m->bias1); wr_act(w, &m->act1);
        wr_matmul(w, &m->mul2); wr_matbias(w, &m->bias2); wr_act(w, &m->act2);
        wr_matmul(w, &m->mul3);
    }
    wr_blocks(w, t->blocks, t->num_blocks);
    if (t->norm_kind == HC_TRUNK_NORM_BN) {
        wr_bn(w, &t->tip_bn);
    } else {
        const hc_rmsnorm *n = &t->tip_rmsnorm;
        wr_name(w, n->name);
        wr_int(w, n->c);
        wr_float1(w, n->eps);
        wr_int(w, n->spatial ? 1 : 0);
        wr_int(w, n->cgroup_size);
        wr_array(w, n->gamma, (size_t)n->c, n->name);
        wr_array(w, n->beta, (size_t)n->c, n->name);
    }
    wr_act(w, &t->tip_act);

    const hc_policy_head *p = &net->policy;
    wr_name(w, p->name);
    if (v >= 17) {
        wr_int(w, p->policy_out_c);
        for (int i = 0; i < 3; i++)
            wr_int(w, 0);
    }
    wr_conv(w, &p->p1_conv);
    wr_conv(w, &p->g1_conv);
    wr_bn(w, &p->g1_bn);
    wr_act(w, &p->g1_act);
    wr_matmul(w, &p->gpool_to_bias_mul);
    wr_bn(w, &p->p1_bn);
    wr_act(w, &p->p1_act);
    wr_conv(w, &p->p2_conv);
    wr_matmul(w, &p->gpool_to_pass_mul);
    if (v >= 15) {
        wr_matbias(w, &p->gpool_to_pass_bias);
        wr_act(w, &p->pass_act);
        wr_matmul(w, &p->gpool_to_pass_mul2);
    }

    const hc_value_head *h = &net->value;
    wr_name(w, h->name);
    if (v >= 17)
        for (int i = 0; i < 3; i++)
            wr_int(w, 0);
    wr_conv(w, &h->v1_conv);
    wr_bn(w, &h->v1_bn);
    wr_act(w, &h->v1_act);
    wr_matmul(w, &h->v2_mul);
    wr_matbias(w, &h->v2_bias);
    wr_act(w, &h->v2_act);
    wr_matmul(w, &h->v3_mul);
    wr_matbias(w, &h->v3_bias);
    wr_matmul(w, &h->sv3_mul);
    wr_matbias(w, &h->sv3_bias);
    wr_conv(w, &h->ownership_conv);
}

int hc_net_write(const hc_net *net, const char *path, int binary, hc_err *err)
{
    wr *w = calloc(1, sizeof *w);
    if (!w)
        return hc_err_set(err, HC_ENOMEM, "%s: out of memory", path);
    w->err = err;
    w->path = path;
    w->binary = binary != 0;
    w->out = hc_ostream_open(path, err);
    if (!w->out) {
        free(w);
        return -1;
    }
    wr_net(w, net);
    wr_flush(w);
    int rc;
    if (w->failed) {
        hc_ostream_abort(w->out);
        rc = -1;
    } else {
        rc = hc_ostream_commit(w->out, err);
    }
    free(w);
    return rc;
}
