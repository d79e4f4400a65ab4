/* The layers of a net as the engine taps them: their kinds, names and forward order, and the walk
 * over a block stack that the engine, the CUDA backend and the layer list share. */
#include "harness/model/layers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned bits;
} kind_names[] = {
    {"all", HC_LK_ALL},
    {"input", HC_LK_INPUT},
    {"conv", HC_LK_CONV},
    {"batchnorm", HC_LK_BATCHNORM},
    {"residual", HC_LK_RESIDUAL},
    {"gpool", HC_LK_GPOOL},
    {"matmul", HC_LK_MATMUL},
    {"rmsnorm", HC_LK_RMSNORM},
    {"attn_q", HC_LK_ATTN_Q},
    {"attn_k", HC_LK_ATTN_K},
    {"attn_v", HC_LK_ATTN_V},
    {"attn_out", HC_LK_ATTN_OUT},
    {"ffn", HC_LK_FFN},
    {"trunk_tip", HC_LK_TRUNK_TIP},
    {"trunk", HC_LK_TRUNK},
    {"policy_head", HC_LK_POLICY_HEAD},
    {"value_head", HC_LK_VALUE_HEAD},
    {"meta_encoder", HC_LK_META_ENCODER},
    {"transformer", HC_LK_TRANSFORMER},
};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

const char *hc_layer_kind_name_at(size_t i) { return i < N_KINDS ? kind_names[i].name : NULL; }

const char *hc_layer_kind_name(unsigned bits)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (kind_names[i].bits == bits)
            return kind_names[i].name;
    return NULL;
}

unsigned hc_layer_kind_by_name(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kind_names[i].name, name) == 0)
            return kind_names[i].bits;
    return 0;
}

const char *hc_layer_kinds_str(unsigned kinds, char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = 0;
    for (size_t i = 1; i < N_KINDS && size; i++) /* skip "all" */
        if (kinds & kind_names[i].bits) {
            int n = snprintf(buf + len, size - len, "%s%s", len ? " " : "", kind_names[i].name);
            if (n < 0 || (size_t)n >= size - len)
                break;
            len += (size_t)n;
        }
    return buf;
}

/* ---- the layers of a net ---- */

typedef struct lwalk {
    hc_layer_ref *v;
    int n, cap;
    hc_err *err;
    int failed;
} lwalk;

static hc_layer_ref *add(lwalk *w, const char *name, unsigned kinds)
{
    if (w->failed)
        return NULL;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        hc_layer_ref *nv = realloc(w->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            hc_err_set(w->err, HC_ENOMEM, "out of memory listing layers");
            w->failed = 1;
            return NULL;
        }
        w->v = nv;
        w->cap = cap;
    }
    hc_layer_ref *l = &w->v[w->n++];
    memset(l, 0, sizeof *l);
    l->name = name;
    l->kinds = kinds;
    return l;
}

static void arr(hc_layer_ref *l, float *a, size_t n)
{
    if (l && a && n && l->n_arrays < HC_LAYER_MAX_ARRAYS) {
        l->arrays[l->n_arrays] = a;
        l->lens[l->n_arrays++] = n;
    }
}

static void conv_l(lwalk *w, hc_conv *c, unsigned where)
{
    arr(add(w, c->name, HC_LK_CONV | where), c->w, (size_t)c->out_c * c->in_c * c->ky * c->kx);
}

static void bn_l(lwalk *w, hc_bn *b, unsigned kinds)
{
    hc_layer_ref *l = add(w, b->name, kinds);
    arr(l, b->merged_scale, (size_t)b->c);
    arr(l, b->merged_bias, (size_t)b->c);
}

static void mm_l(hc_layer_ref *l, hc_matmul *m) { arr(l, m->w, (size_t)m->in_c * m->out_c); }
static void mb_l(hc_layer_ref *l, hc_matbias *b) { arr(l, b->w, (size_t)b->c); }

static void stack_l(lwalk *w, hc_block *b, int n, unsigned where);

static void block_l(lwalk *w, hc_block *bl, unsigned where)
{
    unsigned bn_k = HC_LK_BATCHNORM | where;
    switch (bl->kind) {
    case HC_BLOCK_ORDINARY: {
        hc_res_block *r = &bl->ordinary;
        bn_l(w, &r->pre_bn, bn_k);
        conv_l(w, &r->regular_conv, where);
        bn_l(w, &r->mid_bn, bn_k);
        conv_l(w, &r->final_conv, where);
        break;
    }
    case HC_BLOCK_GPOOL: {
        hc_gpool_block *g = &bl->gpool;
        bn_l(w, &g->pre_bn, bn_k);
        conv_l(w, &g->regular_conv, where);
        conv_l(w, &g->gpool_conv, where);
        bn_l(w, &g->gpool_bn, bn_k);
        mm_l(add(w, g->gpool_to_bias_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | where), &g->gpool_to_bias_mul);
        bn_l(w, &g->mid_bn, bn_k);
        conv_l(w, &g->final_conv, where);
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        hc_nbt_block *nb = &bl->nbt;
        bn_l(w, &nb->pre_bn, bn_k);
        conv_l(w, &nb->pre_conv, where);
        stack_l(w, nb->blocks, nb->num_blocks, where);
        bn_l(w, &nb->post_bn, bn_k);
        conv_l(w, &nb->post_conv, where);
        break;
    }
    case HC_BLOCK_ATTENTION: {
        hc_attn_block *a = &bl->attn;
        unsigned t = where | HC_LK_TRANSFORMER;
        arr(add(w, a->pre_ln.name, HC_LK_RMSNORM | t), a->pre_ln.weight, (size_t)a->pre_ln.c);
        mm_l(add(w, a->q_proj.name, HC_LK_ATTN_Q | HC_LK_MATMUL | t), &a->q_proj);
        mm_l(add(w, a->k_proj.name, HC_LK_ATTN_K | HC_LK_MATMUL | t), &a->k_proj);
        mm_l(add(w, a->v_proj.name, HC_LK_ATTN_V | HC_LK_MATMUL | t), &a->v_proj);
        mm_l(add(w, a->out_proj.name, HC_LK_ATTN_OUT | HC_LK_MATMUL | t), &a->out_proj);
        break;
    }
    case HC_BLOCK_FFN: {
        hc_ffn_block *f = &bl->ffn;
        unsigned t = where | HC_LK_TRANSFORMER;
        arr(add(w, f->pre_ln.name, HC_LK_RMSNORM | t), f->pre_ln.weight, (size_t)f->pre_ln.c);
        hc_layer_ref *l1 = add(w, f->linear1.name, HC_LK_FFN | HC_LK_MATMUL | t);
        mm_l(l1, &f->linear1);
        if (f->use_swiglu)
            mm_l(l1, &f->linear_gate);
        mm_l(add(w, f->linear2.name, HC_LK_FFN | HC_LK_MATMUL | t), &f->linear2);
        break;
    }
    }
    add(w, bl->name,
        HC_LK_RESIDUAL | where |
            (bl->kind == HC_BLOCK_ATTENTION || bl->kind == HC_BLOCK_FFN ? HC_LK_TRANSFORMER : 0u));
}

static void stack_l(lwalk *w, hc_block *b, int n, unsigned where)
{
    for (int i = 0; i < n; i++)
        block_l(w, &b[i], where);
}

int hc_net_layers(hc_net *net, hc_layer_ref **out, int *n, hc_err *err)
{
    lwalk w = {.err = err};
    hc_trunk *t = &net->trunk;
    const unsigned T = HC_LK_TRUNK, P = HC_LK_POLICY_HEAD, V = HC_LK_VALUE_HEAD;
    conv_l(&w, &t->initial_conv, T);
    mm_l(add(&w, t->initial_matmul.name, HC_LK_MATMUL | T), &t->initial_matmul);
    if (t->has_meta_encoder) {
        hc_meta_encoder *m = &t->meta;
        const unsigned M = HC_LK_MATMUL | HC_LK_META_ENCODER;
        hc_layer_ref *l = add(&w, m->mul1.name, M);
        mm_l(l, &m->mul1);
        mb_l(l, &m->bias1);
        l = add(&w, m->mul2.name, M);
        mm_l(l, &m->mul2);
        mb_l(l, &m->bias2);
        mm_l(add(&w, m->mul3.name, M), &m->mul3);
    }
    stack_l(&w, t->blocks, t->num_blocks, T);
    if (t->norm_kind == HC_TRUNK_NORM_RMSNORM) {
        hc_layer_ref *l = add(&w, t->tip_rmsnorm.name, HC_LK_TRUNK_TIP | HC_LK_RMSNORM | T);
        arr(l, t->tip_rmsnorm.gamma, (size_t)t->tip_rmsnorm.c);
        arr(l, t->tip_rmsnorm.beta, (size_t)t->tip_rmsnorm.c);
    } else {
        bn_l(&w, &t->tip_bn, HC_LK_TRUNK_TIP | HC_LK_BATCHNORM | T);
    }
    hc_policy_head *ph = &net->policy;
    conv_l(&w, &ph->p1_conv, P);
    conv_l(&w, &ph->g1_conv, P);
    bn_l(&w, &ph->g1_bn, HC_LK_BATCHNORM | P);
    mm_l(add(&w, ph->gpool_to_bias_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | P), &ph->gpool_to_bias_mul);
    bn_l(&w, &ph->p1_bn, HC_LK_BATCHNORM | P);
    conv_l(&w, &ph->p2_conv, P);
    hc_layer_ref *l = add(&w, ph->gpool_to_pass_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | P);
    mm_l(l, &ph->gpool_to_pass_mul);
    if (ph->has_pass_mlp) {
        mb_l(l, &ph->gpool_to_pass_bias);
        mm_l(add(&w, ph->gpool_to_pass_mul2.name, HC_LK_GPOOL | HC_LK_MATMUL | P), &ph->gpool_to_pass_mul2);
    }
    hc_value_head *vh = &net->value;
    conv_l(&w, &vh->v1_conv, V);
    bn_l(&w, &vh->v1_bn, HC_LK_BATCHNORM | V);
    l = add(&w, vh->v2_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | V);
    mm_l(l, &vh->v2_mul);
    mb_l(l, &vh->v2_bias);
    l = add(&w, vh->v3_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | V);
    mm_l(l, &vh->v3_mul);
    mb_l(l, &vh->v3_bias);
    l = add(&w, vh->sv3_mul.name, HC_LK_GPOOL | HC_LK_MATMUL | V);
    mm_l(l, &vh->sv3_mul);
    mb_l(l, &vh->sv3_bias);
    conv_l(&w, &vh->ownership_conv, V);
    if (w.failed) {
        free(w.v);
        return -1;
    }
    *out = w.v;
    *n = w.n;
    return 0;
}

int hc_blocks_walk(const hc_block *blocks, int n, int (*visit)(const hc_block *b, void *ctx), void *ctx)
{
    for (int i = 0; i < n; i++) {
        const hc_block *b = &blocks[i];
        int rc = b->kind == HC_BLOCK_NESTED_BOTTLENECK ? hc_blocks_walk(b->nbt.blocks, b->nbt.num_blocks, visit, ctx)
                                                       : visit(b, ctx);
        if (rc)
            return rc;
    }
    return 0;
}
