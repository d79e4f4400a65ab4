/* hc_net lifetime, version facts and KataGo's load-time weight transform. */
#include "harness/model/model.h"

#include <math.h>
#include <stdlib.h>

const char *hc_act_str(int act)
{
    switch (act) {
    case HC_ACT_IDENTITY: return "identity";
    case HC_ACT_RELU: return "relu";
    case HC_ACT_MISH: return "mish";
    case HC_ACT_SILU: return "silu";
    case HC_ACT_MISH_SCALE8: return "mish_scale8";
    }
    return "?";
}

const char *hc_block_kind_str(int kind)
{
    switch (kind) {
    case HC_BLOCK_ORDINARY: return "ordinary_block";
    case HC_BLOCK_GPOOL: return "gpool_block";
    case HC_BLOCK_NESTED_BOTTLENECK: return "nested_bottleneck_block";
    case HC_BLOCK_ATTENTION: return "transformer_attention_block";
    case HC_BLOCK_FFN: return "transformer_ffn_block";
    }
    return "?";
}

void hc_postprocess_set_defaults(hc_postprocess *pp)
{
    pp->td_score_multiplier = 20.0;
    pp->score_mean_multiplier = 20.0;
    pp->score_stdev_multiplier = 20.0;
    pp->lead_multiplier = 20.0;
    pp->variance_time_multiplier = 40.0;
    pp->shortterm_value_error_multiplier = 0.25;
    pp->shortterm_score_error_multiplier = 30.0;
    pp->output_scale_multiplier = 1.0f;
}

void hc_net_derive_head_counts(hc_net *net)
{
    net->num_policy_c = net->policy.policy_out_c;
    net->num_value_c = net->value.v3_mul.out_c;
    net->num_score_value_c = net->value.sv3_mul.out_c;
    net->num_ownership_c = net->value.ownership_conv.out_c;
}

int hc_model_input_version(int v)
{
    if (v >= 8 && v <= 17)
        return 7;
    if (v == 7)
        return 6;
    if (v == 6)
        return 5;
    if (v == 5)
        return 4;
    if (v == 3 || v == 4)
        return 3;
    return -1;
}

int hc_model_num_spatial_features(int v)
{
    switch (hc_model_input_version(v)) {
    case 3: case 4: case 6: case 7: return 22;
    case 5: return 13;
    }
    return -1;
}

int hc_model_num_global_features(int v)
{
    switch (hc_model_input_version(v)) {
    case 3: case 4: return 14;
    case 5: return 12;
    case 6: return 16;
    case 7: return 19;
    }
    return -1;
}

int hc_net_supports_policy_optimism(const hc_net *net)
{
    return net->num_policy_c >= 2 && net->num_input_meta_c == 0;
}

static int stack_has_transformer(const hc_block *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (b[i].kind == HC_BLOCK_ATTENTION || b[i].kind == HC_BLOCK_FFN)
            return 1;
        if (b[i].kind == HC_BLOCK_NESTED_BOTTLENECK && stack_has_transformer(b[i].nbt.blocks, b[i].nbt.num_blocks))
            return 1;
    }
    return 0;
}

int hc_net_has_transformer(const hc_net *net)
{
    return stack_has_transformer(net->trunk.blocks, net->trunk.num_blocks);
}

/* ---- freeing ---- */

static void free_conv(hc_conv *c) { free(c->name); free(c->w); }
static void free_matmul(hc_matmul *m) { free(m->name); free(m->w); }
static void free_matbias(hc_matbias *m) { free(m->name); free(m->w); }
static void free_act(hc_activation *a) { free(a->name); }
static void free_bn(hc_bn *b)
{
    free(b->name);
    free(b->mean);
    free(b->var);
    free(b->scale);
    free(b->bias);
    free(b->merged_scale);
    free(b->merged_bias);
}
static void free_tfn(hc_tf_rmsnorm *n) { free(n->name); free(n->weight); }

static void free_stack(hc_block *blocks, int n);

static void free_block(hc_block *b)
{
    free(b->name);
    switch (b->kind) {
    case HC_BLOCK_ORDINARY: {
        hc_res_block *o = &b->ordinary;
        free_bn(&o->pre_bn); free_act(&o->pre_act); free_conv(&o->regular_conv);
        free_bn(&o->mid_bn); free_act(&o->mid_act); free_conv(&o->final_conv);
        break;
    }
    case HC_BLOCK_GPOOL: {
        hc_gpool_block *g = &b->gpool;
        free_bn(&g->pre_bn); free_act(&g->pre_act); free_conv(&g->regular_conv); free_conv(&g->gpool_conv);
        free_bn(&g->gpool_bn); free_act(&g->gpool_act); free_matmul(&g->gpool_to_bias_mul);
        free_bn(&g->mid_bn); free_act(&g->mid_act); free_conv(&g->final_conv);
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        hc_nbt_block *t = &b->nbt;
        free_bn(&t->pre_bn); free_act(&t->pre_act); free_conv(&t->pre_conv);
        free_stack(t->blocks, t->num_blocks);
        free_bn(&t->post_bn); free_act(&t->post_act); free_conv(&t->post_conv);
        break;
    }
    case HC_BLOCK_ATTENTION: {
        hc_attn_block *a = &b->attn;
        free_tfn(&a->pre_ln);
        free_matmul(&a->q_proj); free_matmul(&a->k_proj); free_matmul(&a->v_proj); free_matmul(&a->out_proj);
        free(a->rope_param_name);
        free(a->rope_freqs);
        break;
    }
    case HC_BLOCK_FFN: {
        hc_ffn_block *f = &b->ffn;
        free_tfn(&f->pre_ln);
        free_matmul(&f->linear1); free_matmul(&f->linear_gate); free_matmul(&f->linear2);
        break;
    }
    }
}

/* blocks may be partly filled (a failed load): every unfilled block is all zeros. */
static void free_stack(hc_block *blocks, int n)
{
    if (!blocks)
        return;
    for (int i = 0; i < n; i++)
        free_block(&blocks[i]);
    free(blocks);
}

void hc_net_free(hc_net *net)
{
    if (!net)
        return;
    free(net->name);
    hc_trunk *t = &net->trunk;
    free(t->name);
    free_conv(&t->initial_conv);
    free_matmul(&t->initial_matmul);
    hc_meta_encoder *m = &t->meta;
    free(m->name);
    free_matmul(&m->mul1); free_matbias(&m->bias1); free_act(&m->act1);
    free_matmul(&m->mul2); free_matbias(&m->bias2); free_act(&m->act2);
    free_matmul(&m->mul3);
    free_stack(t->blocks, t->num_blocks);
    free_bn(&t->tip_bn);
    free(t->tip_rmsnorm.name); free(t->tip_rmsnorm.gamma); free(t->tip_rmsnorm.beta);
    free_act(&t->tip_act);
    hc_policy_head *p = &net->policy;
    free(p->name);
    free_conv(&p->p1_conv); free_conv(&p->g1_conv); free_bn(&p->g1_bn); free_act(&p->g1_act);
    free_matmul(&p->gpool_to_bias_mul); free_bn(&p->p1_bn); free_act(&p->p1_act); free_conv(&p->p2_conv);
    free_matmul(&p->gpool_to_pass_mul); free_matbias(&p->gpool_to_pass_bias); free_act(&p->pass_act);
    free_matmul(&p->gpool_to_pass_mul2);
    hc_value_head *v = &net->value;
    free(v->name);
    free_conv(&v->v1_conv); free_bn(&v->v1_bn); free_act(&v->v1_act);
    free_matmul(&v->v2_mul); free_matbias(&v->v2_bias); free_act(&v->v2_act);
    free_matmul(&v->v3_mul); free_matbias(&v->v3_bias); free_matmul(&v->sv3_mul); free_matbias(&v->sv3_bias);
    free_conv(&v->ownership_conv);
    free(net);
}

/* ---- KataGo's transformToReduceActivations ---- */

/* After a fold the batchnorm is stored as the identity statistics KataGo writes back. */
static void bn_reset_raw(hc_bn *b, int i)
{
    b->mean[i] = 0.0f;
    b->var[i] = 1.0f - b->eps;
    b->scale[i] = b->merged_scale[i];
    b->bias[i] = b->merged_bias[i];
}

/* Moves factors |s| < 1 of merged_scale out into f (KataGo's extractChannelFactorsAbsLtOne). */
static void bn_extract(hc_bn *b, float *f)
{
    b->eps = 1e-20f;
    for (int i = 0; i < b->c; i++) {
        if (fabsf(b->merged_scale[i]) < 1.0f) {
            f[i] = b->merged_scale[i];
            b->merged_scale[i] = 1.0f;
        } else {
            f[i] = 1.0f;
        }
        bn_reset_raw(b, i);
    }
}

static void bn_extract_inv(hc_bn *b, float *f, float *inv)
{
    b->eps = 1e-20f;
    for (int i = 0; i < b->c; i++) {
        float s = b->merged_scale[i];
        if (fabsf(s) < 0.5f) {
            f[i] = 0.5f;
            inv[i] = 2.0f;
            b->merged_scale[i] = s * 2.0f;
        } else if (fabsf(s) < 1.0f) {
            f[i] = s;
            inv[i] = 1.0f / s;
            b->merged_scale[i] = 1.0f;
        } else {
            f[i] = 1.0f;
            inv[i] = 1.0f;
        }
        bn_reset_raw(b, i);
    }
}

static void bn_scale_in(hc_bn *b, const float *s)
{
    b->eps = 1e-20f;
    for (int i = 0; i < b->c; i++) {
        b->merged_scale[i] *= s[i];
        bn_reset_raw(b, i);
    }
}

static void conv_scale_out(hc_conv *c, const float *s)
{
    size_t per = (size_t)c->in_c * c->ky * c->kx;
    for (int oc = 0; oc < c->out_c; oc++)
        for (size_t k = 0; k < per; k++)
            c->w[oc * per + k] *= s[oc];
}

static void matmul_scale_out(hc_matmul *m, const float *s)
{
    for (int ic = 0; ic < m->in_c; ic++)
        for (int oc = 0; oc < m->out_c; oc++)
            m->w[(size_t)ic * m->out_c + oc] *= s[oc];
}

static int immediate_transformer(const hc_block *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i].kind == HC_BLOCK_ATTENTION || b[i].kind == HC_BLOCK_FFN)
            return 1;
    return 0;
}

/* Children of a stack whose input is scaled by f: their input norms take inv, their output
 * convs f. */
static void stack_scale_children(hc_block *b, int n, const float *f, const float *inv)
{
    for (int i = 0; i < n; i++) {
        switch (b[i].kind) {
        case HC_BLOCK_ORDINARY:
            bn_scale_in(&b[i].ordinary.pre_bn, inv);
            conv_scale_out(&b[i].ordinary.final_conv, f);
            break;
        case HC_BLOCK_GPOOL:
            bn_scale_in(&b[i].gpool.pre_bn, inv);
            conv_scale_out(&b[i].gpool.final_conv, f);
            break;
        case HC_BLOCK_NESTED_BOTTLENECK:
            bn_scale_in(&b[i].nbt.pre_bn, inv);
            conv_scale_out(&b[i].nbt.post_conv, f);
            break;
        default:
            break;
        }
    }
}

static void reduce_stack(hc_block *b, int n, float *f, float *g);

static void reduce_block(hc_block *b, float *f, float *g)
{
    switch (b->kind) {
    case HC_BLOCK_ORDINARY:
        bn_extract(&b->ordinary.mid_bn, f);
        conv_scale_out(&b->ordinary.regular_conv, f);
        break;
    case HC_BLOCK_GPOOL:
        bn_extract(&b->gpool.mid_bn, f);
        conv_scale_out(&b->gpool.regular_conv, f);
        matmul_scale_out(&b->gpool.gpool_to_bias_mul, f);
        bn_extract(&b->gpool.gpool_bn, f);
        conv_scale_out(&b->gpool.gpool_conv, f);
        break;
    case HC_BLOCK_NESTED_BOTTLENECK: {
        hc_nbt_block *t = &b->nbt;
        if (!immediate_transformer(t->blocks, t->num_blocks)) {
            bn_extract_inv(&t->post_bn, f, g);
            conv_scale_out(&t->pre_conv, f);
            stack_scale_children(t->blocks, t->num_blocks, f, g);
        }
        reduce_stack(t->blocks, t->num_blocks, f, g);
        break;
    }
    default:
        break;
    }
}

static void reduce_stack(hc_block *b, int n, float *f, float *g)
{
    for (int i = 0; i < n; i++)
        reduce_block(&b[i], f, g);
}

void hc_net_reduce_activations(hc_net *net)
{
    /* Scratch as wide as any channel count a loaded net can have (64 KiB of stack). */
    float f[HC_MODEL_MAX_CHANNELS], g[HC_MODEL_MAX_CHANNELS];
    hc_trunk *t = &net->trunk;
    if (t->norm_kind == HC_TRUNK_NORM_BN && !immediate_transformer(t->blocks, t->num_blocks)) {
        bn_extract_inv(&t->tip_bn, f, g);
        conv_scale_out(&t->initial_conv, f);
        matmul_scale_out(&t->initial_matmul, f);
        if (t->has_meta_encoder)
            matmul_scale_out(&t->meta.mul3, f);
        stack_scale_children(t->blocks, t->num_blocks, f, g);
    }
    reduce_stack(t->blocks, t->num_blocks, f, g);
    hc_policy_head *p = &net->policy;
    bn_extract(&p->p1_bn, f);
    conv_scale_out(&p->p1_conv, f);
    matmul_scale_out(&p->gpool_to_bias_mul, f);
    bn_extract(&p->g1_bn, f);
    conv_scale_out(&p->g1_conv, f);
    bn_extract(&net->value.v1_bn, f);
    conv_scale_out(&net->value.v1_conv, f);
}
