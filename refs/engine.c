/* The fp32 reference forward pass over an hc_net: the graph runner, its workspaces and threads. */
#include "refs/engine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/gemm.h"
#include "refs/kernels.h"
#include "harness/model/layers.h"
#include "harness/base/thread.h"

#ifndef HC_ENGINE_DEFAULT_WINOGRAD
#define HC_ENGINE_DEFAULT_WINOGRAD 1
#endif

/* RoPE cos/sin tables of one attention block for this engine's buffer size. */
typedef struct rope_tab {
    const hc_attn_block *blk;
    float *cos_t, *sin_t;
} rope_tab;

/* Transformer weights concatenated along the output for one GEMM over inputs that several
 * projections read: an attention block's q|k|v ([c][q_out + k_out + v_out]) and an FFN's
 * linear1|gate ([c][2 * ffn_c]). Each output keeps its own FMA chain, so the bits are the
 * separate products'; the B panels are copied once instead of per projection. */
typedef struct tf_prep {
    const hc_block *blk;
    float *w;
    int p4; /* w in hc_gemm_p4's layout (else [c][o], read transposed) */
} tf_prep;

/* One thread's share of a batch, with its own bump-allocated scratch. A dry run walks the
 * forward pass without touching data to measure the arena (the same code path sizes and
 * uses it, so they cannot disagree). */
typedef struct worker {
    struct hc_engine *e;
    pthread_t th;
    float *arena;
    size_t top, peak;
    int dry;
    int r0, rows; /* this job's rows */
} worker;

/* A net convolution prepared for this engine (Winograd weights for 3x3). */
typedef struct conv_prep {
    const hc_conv *src;
    hc_kconv k;
} conv_prep;

struct hc_engine {
    const hc_net *net;
    conv_prep *convs;
    int n_convs;
    hc_engine_opts opts;
    hc_engine_hook_fn hook;
    void *hook_user;
    int inner_taps; /* the hook also sees tensors inside layers (hc_engine_set_inner_taps) */
    int max_batch, nx, ny, hw, threads, chunk;
    rope_tab *ropes;
    int n_ropes;
    tf_prep *tfs;
    int n_tfs;
    float *heads_w; /* the heads' 1x1 convolutions of the trunk stacked (prep_heads), or NULL */
    int heads_oc;
    int borrowed_prep; /* convs, ropes, tfs and heads_w belong to the engine this one shares (hc_engine_new_sharing) */
    worker *w;
    int started; /* worker threads running (threads - 1 when all started) */
    /* the current job */
    const float *spatial, *global, *meta;
    hc_raw_heads *out;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    int pending, quit;
};


/* ---- validation ----------------------------------------------------------------------- */

static int check_conv(const hc_conv *c, hc_err *err)
{
    if (!c->w || c->ky < 1 || c->kx < 1 || c->ky % 2 != 1 || c->kx % 2 != 1)
        return hc_err_set(err, HC_EBACKEND, "%s: conv %dx%d not supported (odd kernels only)",
                          c->name ? c->name : "conv", c->ky, c->kx);
    if (c->dil_y != 1 || c->dil_x != 1)
        return hc_err_set(err, HC_EBACKEND,
                          "%s: dilated convolution (%d,%d) not supported (nor by KataGo's Eigen backend)",
                          c->name ? c->name : "conv", c->dil_y, c->dil_x);
    return 0;
}

static int check_act(const hc_activation *a, hc_err *err)
{
    if (!hc_act_valid(a->kind))
        return hc_err_set(err, HC_EBACKEND, "%s: unknown activation %d",
                          a->name ? a->name : "activation", (int)a->kind);
    return 0;
}

static int check_stack(const hc_block *blocks, int n, hc_err *err);

static int check_block(const hc_block *b, hc_err *err)
{
    switch (b->kind) {
    case HC_BLOCK_ORDINARY:
        return check_act(&b->ordinary.pre_act, err) || check_act(&b->ordinary.mid_act, err) ||
                       check_conv(&b->ordinary.regular_conv, err) ||
                       check_conv(&b->ordinary.final_conv, err)
                   ? -1
                   : 0;
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *g = &b->gpool;
        return check_act(&g->pre_act, err) || check_act(&g->gpool_act, err) ||
                       check_act(&g->mid_act, err) || check_conv(&g->regular_conv, err) ||
                       check_conv(&g->gpool_conv, err) || check_conv(&g->final_conv, err)
                   ? -1
                   : 0;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *n = &b->nbt;
        return check_act(&n->pre_act, err) || check_act(&n->post_act, err) ||
                       check_conv(&n->pre_conv, err) || check_conv(&n->post_conv, err) ||
                       check_stack(n->blocks, n->num_blocks, err)
                   ? -1
                   : 0;
    }
    case HC_BLOCK_ATTENTION: {
        const hc_attn_block *a = &b->attn;
        if (a->num_kv_heads < 1 || a->num_heads % a->num_kv_heads != 0 ||
            (a->use_rope && a->q_head_dim % 2 != 0))
            return hc_err_set(err, HC_EBACKEND, "%s: unsupported attention heads %d/%d dim %d",
                              b->name ? b->name : "attention", a->num_heads, a->num_kv_heads,
                              a->q_head_dim);
        return 0;
    }
    case HC_BLOCK_FFN:
        if (!b->ffn.use_swiglu)
            return hc_err_set(err, HC_EBACKEND,
                              "%s: FFN without SwiGLU is not supported (nor by KataGo's Eigen backend)",
                              b->name ? b->name : "ffn");
        return 0;
    }
    return hc_err_set(err, HC_EBACKEND, "%s: unknown block kind %d", b->name ? b->name : "block",
                      (int)b->kind);
}

static int check_stack(const hc_block *blocks, int n, hc_err *err)
{
    for (int i = 0; i < n; i++)
        if (check_block(&blocks[i], err))
            return -1;
    return 0;
}

static int check_net(const hc_net *net, hc_err *err)
{
    const hc_trunk *t = &net->trunk;
    const hc_policy_head *p = &net->policy;
    const hc_value_head *v = &net->value;
    if (check_conv(&t->initial_conv, err) || check_stack(t->blocks, t->num_blocks, err) ||
        check_act(&t->tip_act, err))
        return -1;
    if (t->has_meta_encoder && (check_act(&t->meta.act1, err) || check_act(&t->meta.act2, err)))
        return -1;
    if (check_conv(&p->p1_conv, err) || check_conv(&p->g1_conv, err) ||
        check_conv(&p->p2_conv, err) || check_act(&p->g1_act, err) || check_act(&p->p1_act, err))
        return -1;
    if (p->has_pass_mlp && check_act(&p->pass_act, err))
        return -1;
    if (check_conv(&v->v1_conv, err) || check_conv(&v->ownership_conv, err) ||
        check_act(&v->v1_act, err) || check_act(&v->v2_act, err))
        return -1;
    if (net->num_value_c != 3 || v->v3_mul.out_c != 3 || v->ownership_conv.out_c != 1)
        return hc_err_set(err, HC_EBACKEND, "value head: %d value / %d ownership channels (want 3 / 1)",
                          v->v3_mul.out_c, v->ownership_conv.out_c);
    return 0;
}

/* ---- prepared convolutions ----------------------------------------------------------- */

/* Every convolution of a stack of blocks, in the engine's order; fn's nonzero stops the walk. */
static int walk_stack_convs(const hc_block *blocks, int n, int (*fn)(const hc_conv *, void *), void *user)
{
    for (int i = 0; i < n; i++) {
        const hc_block *b = &blocks[i];
        int rc = 0;
        switch (b->kind) {
        case HC_BLOCK_ORDINARY:
            rc = fn(&b->ordinary.regular_conv, user) || fn(&b->ordinary.final_conv, user);
            break;
        case HC_BLOCK_GPOOL:
            rc = fn(&b->gpool.regular_conv, user) || fn(&b->gpool.gpool_conv, user) || fn(&b->gpool.final_conv, user);
            break;
        case HC_BLOCK_NESTED_BOTTLENECK:
            rc = fn(&b->nbt.pre_conv, user) || walk_stack_convs(b->nbt.blocks, b->nbt.num_blocks, fn, user) ||
                 fn(&b->nbt.post_conv, user);
            break;
        default:
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}

int hc_engine_each_conv(const hc_net *n, int (*fn)(const hc_conv *c, void *user), void *user)
{
    int rc = fn(&n->trunk.initial_conv, user);
    if (!rc)
        rc = walk_stack_convs(n->trunk.blocks, n->trunk.num_blocks, fn, user);
    const hc_conv *heads[5] = {&n->policy.p1_conv, &n->policy.g1_conv, &n->policy.p2_conv, &n->value.v1_conv,
                               &n->value.ownership_conv};
    for (int i = 0; i < 5 && !rc; i++)
        rc = fn(heads[i], user);
    return rc;
}

int hc_engine_conv_prepare(hc_kconv *k, const hc_conv *c, int winograd, int mode, hc_err *err)
{
    if (hc_kconv_init(k, c->w, c->out_c, c->in_c, c->ky, c->kx, err))
        return -1;
    if ((winograd && hc_kconv_use_winograd(k, err)) ||
        ((mode & HC_CONV_WINO_F2) && hc_kconv_use_winograd2(k, err))) {
        hc_kconv_free(k);
        return -1;
    }
    hc_kconv_set_modes(k, mode & HC_CONV_ACC_FP16, mode & HC_CONV_TILES_FP16);
    return 0;
}

/* hc_engine_convs_prepare's work, shared by its threads: the next convolution to take. */
typedef struct prep_work {
    hc_kconv *const *ks;
    const hc_conv *const *cs;
    const int *modes;
    int n, winograd, next, failed_at;
    hc_err err;
    pthread_mutex_t mu;
} prep_work;

static void *prep_worker(void *arg)
{
    prep_work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int i = w->next < w->n && w->failed_at < 0 ? w->next++ : -1;
        pthread_mutex_unlock(&w->mu);
        if (i < 0)
            return NULL;
        hc_err e = {0};
        if (hc_engine_conv_prepare(w->ks[i], w->cs[i], w->winograd, w->modes ? w->modes[i] : 0, &e)) {
            pthread_mutex_lock(&w->mu);
            if (w->failed_at < 0 || i < w->failed_at) {
                w->failed_at = i;
                w->err = e;
            }
            pthread_mutex_unlock(&w->mu);
        }
    }
}

int hc_engine_convs_prepare(hc_kconv *const *ks, const hc_conv *const *cs, const int *modes, int n, int winograd,
                            int threads, hc_err *err)
{
    for (int i = 0; i < n; i++)
        memset(ks[i], 0, sizeof *ks[i]);
    prep_work w = {.ks = ks, .cs = cs, .modes = modes, .n = n, .winograd = winograd, .failed_at = -1};
    pthread_mutex_init(&w.mu, NULL);
    /* A large net's Winograd weights take a second on one core: spread over the host. A small
     * net's take milliseconds, and prepared on other threads they would sit in those threads'
     * malloc arenas, which a process that opens several engines one after another (a run: the
     * reference's, then a case's) does not reuse: +4 MB for g170. */
    size_t floats = 0;
    for (int i = 0; i < n; i++)
        floats += (size_t)cs[i]->in_c * (size_t)cs[i]->out_c * (size_t)cs[i]->ky * (size_t)cs[i]->kx;
    int nt = threads > 0 ? threads : floats >= ((size_t)4 << 20) ? hc_processors() : 1;
    if (nt > n)
        nt = n;
    if (nt > 16)
        nt = 16;
    pthread_t th[16];
    int started = 0;
    for (int t = 1; t < nt && hc_thread_start(&th[started], prep_worker, &w) == 0; t++)
        started++;
    prep_worker(&w);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&w.mu);
    if (w.failed_at >= 0) {
        for (int i = 0; i < n; i++)
            hc_kconv_free(ks[i]);
        *err = w.err;
        return -1;
    }
    return 0;
}

/* prepare_convs' walk: the engine's table of convolutions, filled in before they are prepared. */
static int add_conv(const hc_conv *c, void *user)
{
    hc_engine *e = user;
    conv_prep *grown = realloc(e->convs, (size_t)(e->n_convs + 1) * sizeof *grown);
    if (!grown)
        return -1;
    e->convs = grown;
    memset(&e->convs[e->n_convs], 0, sizeof *grown);
    e->convs[e->n_convs++].src = c;
    return 0;
}

static int prepare_convs(hc_engine *e, hc_err *err)
{
    if (hc_engine_each_conv(e->net, add_conv, e))
        return hc_err_set(err, HC_ENOMEM, "engine conv table");
    int n = e->n_convs;
    hc_kconv **ks = hc_calloc((size_t)n + 1, sizeof *ks, err, "engine conv table");
    const hc_conv **cs = hc_calloc((size_t)n + 1, sizeof *cs, err, "engine conv table");
    int *modes = hc_calloc((size_t)n + 1, sizeof *modes, err, "engine conv table");
    int rc = ks && cs && modes ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        ks[i] = &e->convs[i].k;
        cs[i] = e->convs[i].src;
        /* asked here, one at a time: the emulation's callback need not be thread-safe */
        modes[i] = e->opts.conv_mode ? e->opts.conv_mode(e->opts.conv_mode_user, cs[i]) : 0;
    }
    if (rc == 0)
        rc = hc_engine_convs_prepare(ks, cs, modes, n, e->opts.winograd, 0, err);
    for (int i = 0; rc == 0 && i < n; i++) /* the engine's own tile GEMMs' layout */
        hc_kconv_pack(ks[i]);
    if (rc)
        e->n_convs = 0; /* nothing prepared is left to free */
    free(ks);
    free(cs);
    free(modes);
    return rc;
}

static const hc_kconv *find_conv(const hc_engine *e, const hc_conv *c)
{
    for (int i = 0; i < e->n_convs; i++)
        if (e->convs[i].src == c)
            return &e->convs[i].k;
    return NULL;
}

/* The policy head's p1 and g1 and the value head's v1 are 1x1 convolutions of the same trunk:
 * with their weights stacked they run as one GEMM of 12-row blocks that reads the trunk once
 * instead of three GEMMs of 32 rows (about 1% of g170's time). Each output is still one
 * hc_gemm chain over the trunk's channels, so the bits are the separate convolutions'. Not
 * where an emulated accumulation applies to them. */
static int prep_heads(hc_engine *e, hc_err *err)
{
    const hc_conv *src[3] = {&e->net->policy.p1_conv, &e->net->policy.g1_conv, &e->net->value.v1_conv};
    const hc_kconv *k[3];
    int oc = 0;
    for (int i = 0; i < 3; i++) {
        k[i] = find_conv(e, src[i]);
        if (!k[i] || k[i]->kh != 1 || k[i]->kw != 1 || k[i]->ic != e->net->trunk.trunk_c || k[i]->acc_fp16)
            return 0;
        oc += k[i]->oc;
    }
    e->heads_w = hc_malloc((size_t)oc * k[0]->ic * sizeof(float), err, "heads' stacked weights");
    if (!e->heads_w)
        return -1;
    for (int i = 0, row = 0; i < 3; row += k[i]->oc, i++)
        memcpy(e->heads_w + (size_t)row * k[0]->ic, k[i]->w, (size_t)k[i]->oc * k[0]->ic * sizeof(float));
    e->heads_oc = oc;
    return 0;
}

/* ---- RoPE tables ---------------------------------------------------------------------- */

/* The engine and the error a block visit (hc_blocks_walk) reports to. */
typedef struct prep_ctx {
    hc_engine *e;
    hc_err *err;
} prep_ctx;

static int rope_visit(const hc_block *b, void *ctx)
{
    hc_engine *e = ((prep_ctx *)ctx)->e;
    hc_err *err = ((prep_ctx *)ctx)->err;
    if (b->kind != HC_BLOCK_ATTENTION || !b->attn.use_rope)
        return 0;
    const hc_attn_block *a = &b->attn;
    rope_tab *grown = realloc(e->ropes, (size_t)(e->n_ropes + 1) * sizeof *grown);
    if (!grown)
        return hc_err_set(err, HC_ENOMEM, "rope tables");
    e->ropes = grown;
    rope_tab *r = &e->ropes[e->n_ropes++];
    memset(r, 0, sizeof *r);
    r->blk = a;
    int pairs = a->q_head_dim / 2;
    size_t n_t = (size_t)(a->learnable_rope ? a->num_kv_heads : 1) * pairs * e->hw;
    r->cos_t = hc_malloc(n_t * sizeof(float) + 1, err, "rope cos");
    r->sin_t = hc_malloc(n_t * sizeof(float) + 1, err, "rope sin");
    if (!r->cos_t || !r->sin_t)
        return -1;
    hc_rope_tables(e->nx, e->ny, pairs, a->num_kv_heads, a->learnable_rope ? a->rope_freqs : NULL, a->rope_theta,
                   r->cos_t, r->sin_t);
    return 0;
}

static int collect_ropes(hc_engine *e, const hc_block *blocks, int n, hc_err *err)
{
    prep_ctx c = {e, err};
    return hc_blocks_walk(blocks, n, rope_visit, &c) ? -1 : 0;
}

/* Concatenates w0 [c][o0], w1 [c][o1], w2 [c][o2] (o2 may be 0) into [c][o0 + o1 + o2]. */
static float *concat_w(int c, const float *w0, int o0, const float *w1, int o1, const float *w2, int o2,
                       hc_err *err)
{
    int o = o0 + o1 + o2;
    float *w = hc_malloc((size_t)c * o * sizeof(float) + 1, err, "concatenated weights");
    if (!w)
        return NULL;
    for (int i = 0; i < c; i++) {
        memcpy(w + (size_t)i * o, w0 + (size_t)i * o0, (size_t)o0 * sizeof(float));
        memcpy(w + (size_t)i * o + o0, w1 + (size_t)i * o1, (size_t)o1 * sizeof(float));
        if (o2)
            memcpy(w + (size_t)i * o + o0 + o1, w2 + (size_t)i * o2, (size_t)o2 * sizeof(float));
    }
    return w;
}

static int tf_visit(const hc_block *b, void *ctx)
{
    hc_engine *e = ((prep_ctx *)ctx)->e;
    hc_err *err = ((prep_ctx *)ctx)->err;
    if (b->kind != HC_BLOCK_ATTENTION && b->kind != HC_BLOCK_FFN)
        return 0;
    tf_prep *grown = realloc(e->tfs, (size_t)(e->n_tfs + 1) * sizeof *grown);
    if (!grown)
        return hc_err_set(err, HC_ENOMEM, "transformer weights");
    e->tfs = grown;
    tf_prep *t = &e->tfs[e->n_tfs++];
    t->blk = b, t->p4 = 0;
    int c, o;
    if (b->kind == HC_BLOCK_ATTENTION) {
        const hc_attn_block *a = &b->attn;
        c = a->q_proj.in_c, o = a->q_proj.out_c + a->k_proj.out_c + a->v_proj.out_c;
        t->w = concat_w(c, a->q_proj.w, a->q_proj.out_c, a->k_proj.w, a->k_proj.out_c, a->v_proj.w, a->v_proj.out_c,
                        err);
    } else {
        const hc_ffn_block *ff = &b->ffn;
        c = ff->linear1.in_c, o = ff->linear1.out_c + ff->linear_gate.out_c;
        t->w = concat_w(c, ff->linear1.w, ff->linear1.out_c, ff->linear_gate.w, ff->linear_gate.out_c, NULL, 0, err);
    }
    if (!t->w)
        return -1;
    /* the fast path's GEMMs stream a packed copy in order (a transposed A is read 4 floats a
     * line); the same chains, the same bits */
    if (hc_gemm_p4_fast() && o % 4 == 0) {
        float *p = hc_malloc((size_t)c * o * sizeof(float) + 1, err, "packed transformer weights");
        if (!p)
            return -1;
        hc_gemm_p4_pack(o, c, t->w, 1, (size_t)o, p);
        free(t->w);
        t->w = p;
        t->p4 = 1;
    }
    return 0;
}

static int collect_tfs(hc_engine *e, const hc_block *blocks, int n, hc_err *err)
{
    prep_ctx c = {e, err};
    return hc_blocks_walk(blocks, n, tf_visit, &c) ? -1 : 0;
}

static const tf_prep *find_tf(const hc_engine *e, const hc_block *b)
{
    for (int i = 0; i < e->n_tfs; i++)
        if (e->tfs[i].blk == b)
            return &e->tfs[i];
    return NULL;
}

/* C [m][n] (ldc) = the fast path's concatenated weights (m outputs, k inputs) times B [k][n] (ldb). */
static void tf_gemm(const tf_prep *t, int m, int n, int k, const float *B, size_t ldb, float *C, size_t ldc)
{
    if (t->p4)
        hc_gemm_p4(m, n, k, t->w, B, ldb, C, ldc);
    else
        hc_gemm(m, n, k, t->w, 1, (size_t)m, B, ldb, C, ldc, 0);
}

static const rope_tab *find_rope(const hc_engine *e, const hc_attn_block *a)
{
    for (int i = 0; i < e->n_ropes; i++)
        if (e->ropes[i].blk == a)
            return &e->ropes[i];
    return NULL;
}

/* ---- the forward pass ----------------------------------------------------------------- */

typedef struct fwd {
    worker *w;
    const hc_engine *e;
    int r0, B, nx, ny, hw;
    size_t bp; /* B * hw: one channel's floats */
    const float *mask, *msum;
    unsigned char *sum_bad; /* [B]: rows whose emulated reduction overflowed (sum_overflow) */
} fwd;

/* A 16-float aligned piece of the arena (NULL in a dry run). */
static float *ar_get(fwd *f, size_t n)
{
    worker *w = f->w;
    n = (n + 15) & ~(size_t)15;
    float *p = w->dry ? NULL : w->arena + w->top;
    w->top += n;
    if (w->top > w->peak)
        w->peak = w->top;
    return p;
}

#define LIVE(f) (!(f)->w->dry)

static void tap(fwd *f, const char *name, int layout, int channels, float *data)
{
    const hc_engine *e = f->e;
    if (!e->hook || !LIVE(f))
        return;
    hc_tap t = {name ? name : "?", layout, channels, f->B, layout == HC_TAP_CBP ? f->hw : 1, f->r0,
                data};
    e->hook(e->hook_user, &t);
}

/* A tensor inside a layer (docs/TAPS.md's inner names: BLOCK.SUFFIX), seen only when asked for
 * (hc_engine_set_inner_taps): other hooks (profiles, bisect-precision) see model layers only. */
static void tap_inner(fwd *f, const char *block, const char *suffix, int channels, float *data)
{
    if (!f->e->hook || !f->e->inner_taps || !LIVE(f))
        return;
    char name[320];
    snprintf(name, sizeof name, "%s.%s", block ? block : "?", suffix);
    tap(f, name, HC_TAP_CBP, channels, data);
}

/* Emulation inside layers (hc_engine_opts.layer_mode); 0 for the reference. */
static int lmode(const fwd *f, const char *layer)
{
    const hc_engine *e = f->e;
    return e->opts.layer_mode && layer ? e->opts.layer_mode(e->opts.layer_mode_user, layer) : 0;
}

static void round_pooled(const fwd *f, const char *layer, float *pooled, size_t n)
{
    int m = lmode(f, layer);
    if (m)
        hc_round_fmt_array((m >> HC_LM_POOL_SHIFT) & HC_LM_FMT_MASK, pooled, n);
}

/* The rows flagged in f->sum_bad, told to the emulation (and the flags cleared). */
static void report_sums(const fwd *f, const char *layer, const char *what)
{
    const hc_engine *e = f->e;
    for (int b = 0; b < f->B; b++)
        if (f->sum_bad[b]) {
            f->sum_bad[b] = 0;
            if (e->opts.sum_overflow)
                e->opts.sum_overflow(e->opts.layer_mode_user, layer, what, f->r0 + b);
        }
}

/* Global pooling of `in` for the layer reading the pooled values (its HC_LM_POOLSUM format). */
static void pool_gpool(const fwd *f, const char *layer, int c, const float *in, float *pooled)
{
    int fmt = (lmode(f, layer) >> HC_LM_POOLSUM_SHIFT) & HC_LM_FMT_MASK;
    if (fmt) {
        hc_pool_gpool_fmt(fmt, c, f->B, f->hw, in, f->mask, f->msum, pooled, f->sum_bad);
        report_sums(f, layer, "pooling sum");
    } else {
        hc_pool_gpool(c, f->B, f->hw, in, f->mask, f->msum, pooled);
    }
}

static void pool_value(const fwd *f, const char *layer, int c, const float *in, float *pooled)
{
    int fmt = (lmode(f, layer) >> HC_LM_POOLSUM_SHIFT) & HC_LM_FMT_MASK;
    if (fmt) {
        hc_pool_value_fmt(fmt, c, f->B, f->hw, in, f->msum, pooled, f->sum_bad);
        report_sums(f, layer, "pooling sum");
    } else {
        hc_pool_value(c, f->B, f->hw, in, f->msum, pooled);
    }
}

/* A transformer pre-norm, its reductions in the norm layer's HC_LM_NORMSUM format. */
static void rmsnorm_pos(const fwd *f, const hc_tf_rmsnorm *n, int c, const float *in, float *out)
{
    int fmt = (lmode(f, n->name) >> HC_LM_NORMSUM_SHIFT) & HC_LM_FMT_MASK;
    if (fmt) {
        hc_rmsnorm_pos_fmt(fmt, c, f->B, f->hw, in, out, n->weight, n->eps, f->mask, f->sum_bad);
        report_sums(f, n->name, "RMSNorm sum of squares");
    } else {
        hc_rmsnorm_pos(c, f->B, f->hw, in, out, n->weight, n->eps, f->mask);
    }
}

static void mm_bc(const fwd *f, const char *layer, int in_c, int out_c, const float *in, const float *w,
                  float *out)
{
    if (lmode(f, layer) & HC_LM_ACC_FP16)
        hc_matmul_bc_acc16(f->B, in_c, out_c, in, w, out);
    else
        hc_matmul_bc(f->B, in_c, out_c, in, w, out);
}

/* gpoolToBiasMul (the gpool block's and the policy head's): x's global pooling (c channels, into
 * pooled) times mm, a bias of n channels per row. */
static void gpool_to_bias(fwd *f, const hc_matmul *mm, int c, int n, const float *x, float *pooled, float *bias)
{
    pool_gpool(f, mm->name, c, x, pooled);
    round_pooled(f, mm->name, pooled, (size_t)f->B * 3 * c);
    mm_bc(f, mm->name, 3 * c, n, pooled, mm->w, bias);
    tap(f, mm->name, HC_TAP_BC, n, bias);
}

static void mm_cs(const fwd *f, const char *layer, int in_c, int out_c, const float *in, const float *w,
                  float *out)
{
    if (lmode(f, layer) & HC_LM_ACC_FP16)
        hc_matmul_cs_acc16(f->B, f->hw, in_c, out_c, in, w, out);
    else
        hc_matmul_cs(f->B, f->hw, in_c, out_c, in, w, out);
}

static void conv(fwd *f, const hc_conv *c, const float *in, float *out, int accumulate)
{
    const hc_kconv *kc = find_conv(f->e, c);
    size_t top = f->w->top;
    float *ws = ar_get(f, hc_kconv_workspace(kc, f->B, f->nx, f->ny));
    if (LIVE(f))
        hc_kconv_run(kc, f->B, f->nx, f->ny, in, out, accumulate, ws);
    f->w->top = top;
    tap(f, c->name, HC_TAP_CBP, c->out_c, out);
}

static void bn(fwd *f, const hc_bn *b, const hc_activation *a, const float *in, float *out)
{
    if (LIVE(f))
        hc_bn_act(b->c, f->B, f->hw, in, out, b->merged_scale, b->merged_bias, a->kind, f->mask);
    tap(f, b->name, HC_TAP_CBP, b->c, out);
}

static void run_stack(fwd *f, const hc_block *blocks, int n, int c, float *x, float *s);
static void conv_bias_bn(fwd *f, const hc_conv *c, const float *in, float *out, const float *row_bias,
                         const hc_bn *b, const hc_activation *a);
/* conv then bn: fused into the convolution's output stage when no hook needs to see the
 * convolution's own output (the same bits either way). */
static void conv_bn(fwd *f, const hc_conv *c, const float *in, float *out, const hc_bn *b,
                    const hc_activation *a)
{
    conv_bias_bn(f, c, in, out, NULL, b, a);
}

/* conv, then a global-pooling block's bias row_bias ([B][out_c], NULL none) added, then bn, as
 * the separate passes would (conv_bn's fusion; the bias add is fused only in that case). */
static void conv_bias_bn(fwd *f, const hc_conv *c, const float *in, float *out, const float *row_bias,
                         const hc_bn *b, const hc_activation *a)
{
    if (f->e->hook) {
        conv(f, c, in, out, 0);
        if (row_bias && LIVE(f))
            hc_add_bias_bc(c->out_c, f->B, f->hw, out, row_bias);
        bn(f, b, a, out, out);
        return;
    }
    const hc_kconv *kc = find_conv(f->e, c);
    size_t top = f->w->top;
    float *ws = ar_get(f, hc_kconv_workspace(kc, f->B, f->nx, f->ny));
    if (LIVE(f)) {
        hc_kepi epi = {b->merged_scale, b->merged_bias, a->kind, f->mask, row_bias};
        hc_kconv_run_bn(kc, f->B, f->nx, f->ny, in, out, ws, &epi);
    }
    f->w->top = top;
}


/* Transformer blocks run over column chunks of TF_NC (the GEMM kernel's panel width, so
 * that each chunk's GEMMs read their B in place) with the projections grouped (tf_prep) when
 * nothing needs to see their whole outputs: no hook, no per-layer emulation. The same
 * operations per element as the layer-by-layer path, so the same bits. */
#if defined(__AVX512F__)
enum { TF_NC = 32 }; /* two 16-lane vectors: refs/gemm.c's AVX-512 panel */
#else
enum { TF_NC = 24 };
#endif

static int tf_fast(const fwd *f)
{
    return !f->e->hook && !f->e->opts.layer_mode;
}

/* Asks for columns [j0, j0 + TF_NC) of the trunk's c rows (rows bp floats apart, beyond what the
 * hardware prefetchers follow) ahead of the GEMM that hides their latency. */
static void tf_prefetch(const float *x, size_t bp, size_t j0, int c)
{
    if (j0 >= bp)
        return;
    size_t j1 = j0 + TF_NC - 1 < bp ? j0 + TF_NC - 1 : bp - 1;
    for (int ch = 0; ch < c; ch++) {
        __builtin_prefetch(x + (size_t)ch * bp + j0);
        __builtin_prefetch(x + (size_t)ch * bp + j1);
    }
}

/* One column chunk of an FFN block in the fast path: norm, linear1|gate, SwiGLU, linear2 and
 * the residual while the chunk is in cache (ag: the chunk's [2 * ffn_c][TF_NC]). */
static void ffn_chunk(const fwd *f, const hc_block *bl, int c, float *x, size_t j0, int n, float *cin, float *ag,
                      float *cout)
{
    const hc_ffn_block *ff = &bl->ffn;
    const tf_prep *w1g = find_tf(f->e, bl);
    int fc = ff->ffn_c, oc = ff->linear2.out_c;
    size_t bp = f->bp;
    hc_rmsnorm_cols(c, n, x + j0, bp, cin, TF_NC, ff->pre_ln.weight, ff->pre_ln.eps, f->mask + j0);
    tf_gemm(w1g, 2 * fc, n, c, cin, TF_NC, ag, TF_NC);
    if (n == TF_NC)
        hc_swiglu((size_t)fc * TF_NC, ag, ag + (size_t)fc * TF_NC);
    else
        for (int r = 0; r < fc; r++)
            hc_swiglu((size_t)n, ag + (size_t)r * TF_NC, ag + (size_t)(fc + r) * TF_NC);
    hc_gemm(oc, n, fc, ff->linear2.w, 1, (size_t)oc, ag, TF_NC, cout, TF_NC, 0);
    hc_residual_cols(c, n, x + j0, bp, cout, TF_NC, f->mask + j0);
}

/* Runs block bl; next is the block after it in its stack (NULL at the end). Returns the blocks
 * done: 2 when an attention block's fast path also ran the FFN block after it, chunk by chunk
 * (an FFN is per position: each chunk of its input is final once the attention's output
 * projection and residual have run on it). */
static int run_block(fwd *f, const hc_block *bl, const hc_block *next, int c, float *x, float *s)
{
    int done = 1;
    size_t top = f->w->top;
    int B = f->B, hw = f->hw;
    size_t bp = f->bp;
    switch (bl->kind) {
    case HC_BLOCK_ORDINARY: {
        const hc_res_block *r = &bl->ordinary;
        float *mid = ar_get(f, (size_t)r->regular_conv.out_c * bp);
        bn(f, &r->pre_bn, &r->pre_act, x, s);
        conv_bn(f, &r->regular_conv, s, mid, &r->mid_bn, &r->mid_act);
        conv(f, &r->final_conv, mid, x, 1);
        break;
    }
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *g = &bl->gpool;
        int rc = g->regular_conv.out_c, gc = g->gpool_conv.out_c;
        float *reg = ar_get(f, (size_t)rc * bp);
        float *gp = ar_get(f, (size_t)gc * bp);
        float *pooled = ar_get(f, (size_t)B * 3 * gc);
        float *bias = ar_get(f, (size_t)B * rc);
        bn(f, &g->pre_bn, &g->pre_act, x, s);
        /* Hooked, the layers run in the model's order, each output seen. Otherwise the pooled
         * branch runs first, so that its bias and the mid batch norm go into the regular
         * convolution's output stage (no passes over reg; the same operations per element). */
        if (f->e->hook)
            conv(f, &g->regular_conv, s, reg, 0);
        conv_bn(f, &g->gpool_conv, s, gp, &g->gpool_bn, &g->gpool_act);
        if (LIVE(f))
            gpool_to_bias(f, &g->gpool_to_bias_mul, gc, rc, gp, pooled, bias);
        if (f->e->hook) {
            if (LIVE(f))
                hc_add_bias_bc(rc, B, hw, reg, bias);
            bn(f, &g->mid_bn, &g->mid_act, reg, reg);
        } else {
            conv_bias_bn(f, &g->regular_conv, s, reg, bias, &g->mid_bn, &g->mid_act);
        }
        conv(f, &g->final_conv, reg, x, 1);
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *nb = &bl->nbt;
        int mc = nb->pre_conv.out_c;
        float *mid = ar_get(f, (size_t)mc * bp);
        float *mids = ar_get(f, (size_t)mc * bp);
        bn(f, &nb->pre_bn, &nb->pre_act, x, s);
        conv(f, &nb->pre_conv, s, mid, 0);
        run_stack(f, nb->blocks, nb->num_blocks, mc, mid, mids);
        bn(f, &nb->post_bn, &nb->post_act, mid, mid);
        conv(f, &nb->post_conv, mid, x, 1);
        break;
    }
    case HC_BLOCK_ATTENTION: {
        const hc_attn_block *a = &bl->attn;
        int nh = a->num_heads, nkv = a->num_kv_heads, qd = a->q_head_dim, vd = a->v_head_dim;
        int mq = nh * qd, mqkv = mq + nkv * qd + nkv * vd;
        float *q = ar_get(f, (size_t)mqkv * bp); /* q, k, v rows in a row: one GEMM's output */
        float *k = q + (size_t)mq * bp;
        float *v = k + (size_t)nkv * qd * bp;
        float *att = ar_get(f, (size_t)nh * vd * bp);
        float *scores = ar_get(f, (size_t)2 * hw * hw);
        float *cin = ar_get(f, (size_t)c * TF_NC), *cout = ar_get(f, (size_t)c * TF_NC);
        const hc_block *ffn = next && next->kind == HC_BLOCK_FFN ? next : NULL;
        float *ag = ffn ? ar_get(f, (size_t)2 * ffn->ffn.ffn_c * TF_NC) : NULL;
        if (!LIVE(f))
            break;
        int fast = tf_fast(f);
        const rope_tab *rt = a->use_rope ? find_rope(f->e, a) : NULL;
        if (fast) {
            /* column chunks: norm, q|k|v and RoPE while the chunk is in cache */
            const tf_prep *wqkv = find_tf(f->e, bl);
            for (size_t j0 = 0; j0 < bp; j0 += TF_NC) {
                int n = bp - j0 < TF_NC ? (int)(bp - j0) : TF_NC;
                hc_rmsnorm_cols(c, n, x + j0, bp, cin, TF_NC, a->pre_ln.weight, a->pre_ln.eps, f->mask + j0);
                tf_prefetch(x, bp, j0 + TF_NC, c);
                tf_gemm(wqkv, mqkv, n, c, cin, TF_NC, q + j0, bp);
                if (rt) {
                    hc_rope_cols(hw, j0, n, nh, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, q, bp);
                    hc_rope_cols(hw, j0, n, nkv, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, k, bp);
                }
            }
        } else {
            rmsnorm_pos(f, &a->pre_ln, c, x, s);
            tap(f, a->pre_ln.name, HC_TAP_CBP, c, s);
            mm_cs(f, a->q_proj.name, c, nh * qd, s, a->q_proj.w, q);
            mm_cs(f, a->k_proj.name, c, nkv * qd, s, a->k_proj.w, k);
            mm_cs(f, a->v_proj.name, c, nkv * vd, s, a->v_proj.w, v);
            if (rt) {
                hc_rope_apply(B, hw, nh, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, q);
                hc_rope_apply(B, hw, nkv, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, k);
            }
        }
        tap(f, a->q_proj.name, HC_TAP_CBP, nh * qd, q);
        tap(f, a->k_proj.name, HC_TAP_CBP, nkv * qd, k);
        tap(f, a->v_proj.name, HC_TAP_CBP, nkv * vd, v);
        int am = lmode(f, a->out_proj.name);
        if (am) {
            hc_attn_emul ae = {(am >> HC_LM_SCORES_SHIFT) & HC_LM_FMT_MASK, (am >> HC_LM_PROBS_SHIFT) & HC_LM_FMT_MASK,
                               (am & HC_LM_ACC_FP16) != 0};
            hc_attention_emul(B, hw, nh, nkv, qd, vd, q, k, v, f->mask, att, scores, &ae);
        } else {
            hc_attention(B, hw, nh, nkv, qd, vd, q, k, v, f->mask, att, scores);
        }
        tap_inner(f, bl->name, "attn.out_preproj", nh * vd, att);
        if (fast) {
            int oc = a->out_proj.out_c;
            for (size_t j0 = 0; j0 < bp; j0 += TF_NC) {
                int n = bp - j0 < TF_NC ? (int)(bp - j0) : TF_NC;
                tf_prefetch(x, bp, j0, c);
                hc_gemm(oc, n, nh * vd, a->out_proj.w, 1, (size_t)oc, att + j0, bp, cout, TF_NC, 0);
                hc_residual_cols(c, n, x + j0, bp, cout, TF_NC, f->mask + j0);
                if (ffn)
                    ffn_chunk(f, ffn, c, x, j0, n, cin, ag, cout);
            }
            if (ffn)
                done = 2;
            break;
        }
        mm_cs(f, a->out_proj.name, nh * vd, a->out_proj.out_c, att, a->out_proj.w, s);
        tap(f, a->out_proj.name, HC_TAP_CBP, c, s);
        hc_residual_masked(c, B, hw, x, s, f->mask);
        break;
    }
    case HC_BLOCK_FFN: {
        const hc_ffn_block *ff = &bl->ffn;
        int fc = ff->ffn_c;
        float *a1 = ar_get(f, (size_t)fc * bp);
        float *gate = ar_get(f, (size_t)fc * bp);
        float *ag = ar_get(f, (size_t)2 * fc * TF_NC); /* a chunk's linear1|gate */
        float *cin = ar_get(f, (size_t)c * TF_NC), *cout = ar_get(f, (size_t)c * TF_NC);
        if (!LIVE(f))
            break;
        if (tf_fast(f)) {
            for (size_t j0 = 0; j0 < bp; j0 += TF_NC)
                ffn_chunk(f, bl, c, x, j0, bp - j0 < TF_NC ? (int)(bp - j0) : TF_NC, cin, ag, cout);
            break;
        }
        rmsnorm_pos(f, &ff->pre_ln, c, x, s);
        tap(f, ff->pre_ln.name, HC_TAP_CBP, c, s);
        mm_cs(f, ff->linear1.name, c, fc, s, ff->linear1.w, a1);
        mm_cs(f, ff->linear1.name, c, fc, s, ff->linear_gate.w, gate);
        tap_inner(f, bl->name, "ffn.up", fc, a1);
        tap_inner(f, bl->name, "ffn.gate", fc, gate);
        hc_swiglu((size_t)fc * bp, a1, gate);
        tap(f, ff->linear1.name, HC_TAP_CBP, fc, a1);
        mm_cs(f, ff->linear2.name, fc, ff->linear2.out_c, a1, ff->linear2.w, s);
        tap(f, ff->linear2.name, HC_TAP_CBP, c, s);
        hc_residual_masked(c, B, hw, x, s, f->mask);
        break;
    }
    }
    f->w->top = top;
    tap(f, bl->name, HC_TAP_CBP, c, x);
    if (done == 2)
        tap(f, next->name, HC_TAP_CBP, c, x);
    return done;
}

static void run_stack(fwd *f, const hc_block *blocks, int n, int c, float *x, float *s)
{
    for (int i = 0; i < n;)
        i += run_block(f, &blocks[i], i + 1 < n ? &blocks[i + 1] : NULL, c, x, s);
}

/* Evaluates rows [r0, r0+B) of the current job into e->out. */
static void forward(worker *w, int r0, int B)
{
    const hc_engine *e = w->e;
    const hc_net *net = e->net;
    const hc_trunk *t = &net->trunk;
    const hc_policy_head *ph = &net->policy;
    const hc_value_head *vh = &net->value;
    hc_raw_heads *out = e->out;
    int hw = e->hw, tc = t->trunk_c, cin = net->num_input_c, cg = net->num_input_global_c;
    fwd F = {w, e, r0, B, e->nx, e->ny, hw, (size_t)B * hw, NULL, NULL, NULL};
    fwd *f = &F;
    w->top = 0;

    float *mask = ar_get(f, (size_t)B * hw);
    float *msum = ar_get(f, (size_t)B);
    float *in = ar_get(f, (size_t)cin * f->bp);
    float *x = ar_get(f, (size_t)tc * f->bp);
    float *s = ar_get(f, (size_t)tc * f->bp);
    float *gbias = ar_get(f, (size_t)B * tc);
    F.sum_bad = (unsigned char *)ar_get(f, (size_t)B); /* B bytes in B floats: room to spare */
    F.mask = mask;
    F.msum = msum;
    if (LIVE(f)) {
        memset(F.sum_bad, 0, (size_t)B);
        const float *sp = e->spatial + (size_t)r0 * cin * hw;
        hc_mask_from_input(B, hw, cin, sp, mask, msum);
        for (int c = 0; c < cin; c++)
            for (int b = 0; b < B; b++)
                memcpy(in + ((size_t)c * B + b) * hw, sp + ((size_t)b * cin + c) * hw,
                       (size_t)hw * sizeof(float));
    }

    /* trunk */
    conv(f, &t->initial_conv, in, x, 0);
    if (LIVE(f)) {
        mm_bc(f, t->initial_matmul.name, cg, tc, e->global + (size_t)r0 * cg, t->initial_matmul.w, gbias);
        tap(f, t->initial_matmul.name, HC_TAP_BC, tc, gbias);
        hc_add_bias_bc(tc, B, hw, x, gbias);
    }
    if (t->has_meta_encoder) {
        const hc_meta_encoder *m = &t->meta;
        size_t top = w->top;
        float *h1 = ar_get(f, (size_t)B * m->mul1.out_c);
        float *h2 = ar_get(f, (size_t)B * m->mul2.out_c);
        if (LIVE(f)) {
            mm_bc(f, m->mul1.name, m->mul1.in_c, m->mul1.out_c, e->meta + (size_t)r0 * net->num_input_meta_c,
                  m->mul1.w, h1);
            hc_bias_act_bc(B, m->mul1.out_c, h1, m->bias1.w, m->act1.kind);
            tap(f, m->mul1.name, HC_TAP_BC, m->mul1.out_c, h1);
            mm_bc(f, m->mul2.name, m->mul2.in_c, m->mul2.out_c, h1, m->mul2.w, h2);
            hc_bias_act_bc(B, m->mul2.out_c, h2, m->bias2.w, m->act2.kind);
            tap(f, m->mul2.name, HC_TAP_BC, m->mul2.out_c, h2);
            mm_bc(f, m->mul3.name, m->mul3.in_c, tc, h2, m->mul3.w, gbias);
            tap(f, m->mul3.name, HC_TAP_BC, tc, gbias);
            hc_add_bias_bc(tc, B, hw, x, gbias);
        }
        w->top = top;
    }
    run_stack(f, t->blocks, t->num_blocks, tc, x, s);
    if (LIVE(f)) {
        /* the tip RMSNorm's reductions in its own HC_LM_NORMSUM format (0 for a batch norm) */
        const hc_rmsnorm *tn = &t->tip_rmsnorm;
        int nfmt = t->norm_kind == HC_TRUNK_NORM_RMSNORM ? (lmode(f, tn->name) >> HC_LM_NORMSUM_SHIFT) & HC_LM_FMT_MASK : 0;
        if (nfmt) {
            hc_rmsnorm_tip_fmt(nfmt, tc, B, hw, x, s, tn->gamma, tn->beta, tn->eps, tn->spatial, t->tip_act.kind, mask,
                               f->sum_bad);
            report_sums(f, tn->name, "RMSNorm sum of squares");
        } else if (t->norm_kind == HC_TRUNK_NORM_RMSNORM)
            hc_rmsnorm_tip(tc, B, hw, x, s, t->tip_rmsnorm.gamma, t->tip_rmsnorm.beta,
                           t->tip_rmsnorm.eps, t->tip_rmsnorm.spatial, t->tip_act.kind, mask);
        else
            hc_bn_act(tc, B, hw, x, s, t->tip_bn.merged_scale, t->tip_bn.merged_bias,
                      t->tip_act.kind, mask);
    }
    tap(f, t->norm_kind == HC_TRUNK_NORM_RMSNORM ? t->tip_rmsnorm.name : t->tip_bn.name, HC_TAP_CBP,
        tc, s);
    const float *trunk = s;
    /* Unhooked, p1, g1 and v1 come from one GEMM (prep_heads) into consecutive channels of hv,
     * and p1's bias add joins its batch norm's pass; hooked, each layer runs and is seen. */
    int grouped = e->heads_w && !e->hook;
    float *hv = grouped ? ar_get(f, (size_t)e->heads_oc * f->bp) : NULL;
    if (grouped && LIVE(f))
        hc_gemm(e->heads_oc, B * hw, tc, e->heads_w, (size_t)tc, 1, trunk, f->bp, hv, f->bp, 0);

    /* policy head */
    {
        size_t top = w->top;
        int p1c = ph->p1_conv.out_c, g1c = ph->g1_conv.out_c, pc = ph->p2_conv.out_c;
        float *p1 = grouped ? hv : ar_get(f, (size_t)p1c * f->bp);
        float *g1 = grouped ? hv + (size_t)p1c * f->bp : ar_get(f, (size_t)g1c * f->bp);
        float *pooled = ar_get(f, (size_t)B * 3 * g1c);
        float *bias = ar_get(f, (size_t)B * p1c);
        float *pol = ar_get(f, (size_t)pc * f->bp);
        float *passh = ar_get(f, (size_t)B * ph->gpool_to_pass_mul.out_c);
        if (grouped) {
            bn(f, &ph->g1_bn, &ph->g1_act, g1, g1);
        } else {
            conv(f, &ph->p1_conv, trunk, p1, 0);
            conv_bn(f, &ph->g1_conv, trunk, g1, &ph->g1_bn, &ph->g1_act);
        }
        if (LIVE(f)) {
            gpool_to_bias(f, &ph->gpool_to_bias_mul, g1c, p1c, g1, pooled, bias);
            if (e->hook)
                hc_add_bias_bc(p1c, B, hw, p1, bias);
            else
                hc_bias_bn_act(p1c, B, hw, p1, p1, bias, ph->p1_bn.merged_scale, ph->p1_bn.merged_bias,
                               ph->p1_act.kind, mask);
        }
        if (e->hook)
            bn(f, &ph->p1_bn, &ph->p1_act, p1, p1);
        conv(f, &ph->p2_conv, p1, pol, 0);
        if (LIVE(f)) {
            for (int b = 0; b < B; b++)
                for (int c = 0; c < pc; c++)
                    memcpy(out->policy + (((size_t)(r0 + b) * pc) + c) * hw,
                           pol + ((size_t)c * B + b) * hw, (size_t)hw * sizeof(float));
            float *pass = out->policy_pass + (size_t)r0 * pc;
            if (ph->has_pass_mlp) {
                int hc = ph->gpool_to_pass_mul.out_c;
                mm_bc(f, ph->gpool_to_pass_mul.name, 3 * g1c, hc, pooled, ph->gpool_to_pass_mul.w, passh);
                hc_bias_act_bc(B, hc, passh, ph->gpool_to_pass_bias.w, ph->pass_act.kind);
                tap(f, ph->gpool_to_pass_mul.name, HC_TAP_BC, hc, passh);
                mm_bc(f, ph->gpool_to_pass_mul2.name, hc, pc, passh, ph->gpool_to_pass_mul2.w, pass);
                tap(f, ph->gpool_to_pass_mul2.name, HC_TAP_BC, pc, pass);
            } else {
                mm_bc(f, ph->gpool_to_pass_mul.name, 3 * g1c, pc, pooled, ph->gpool_to_pass_mul.w, pass);
                tap(f, ph->gpool_to_pass_mul.name, HC_TAP_BC, pc, pass);
            }
        }
        w->top = top;
    }

    /* value head */
    {
        int v1c = vh->v1_conv.out_c, v2c = vh->v2_mul.out_c, sc = vh->sv3_mul.out_c;
        float *v1 = grouped ? hv + (size_t)(ph->p1_conv.out_c + ph->g1_conv.out_c) * f->bp
                            : ar_get(f, (size_t)v1c * f->bp);
        float *pooled = ar_get(f, (size_t)B * 3 * v1c);
        float *v2 = ar_get(f, (size_t)B * v2c);
        if (grouped)
            bn(f, &vh->v1_bn, &vh->v1_act, v1, v1);
        else
            conv_bn(f, &vh->v1_conv, trunk, v1, &vh->v1_bn, &vh->v1_act);
        if (LIVE(f)) {
            pool_value(f, vh->v2_mul.name, v1c, v1, pooled);
            round_pooled(f, vh->v2_mul.name, pooled, (size_t)B * 3 * v1c);
            mm_bc(f, vh->v2_mul.name, 3 * v1c, v2c, pooled, vh->v2_mul.w, v2);
            hc_bias_act_bc(B, v2c, v2, vh->v2_bias.w, vh->v2_act.kind);
            tap(f, vh->v2_mul.name, HC_TAP_BC, v2c, v2);
            float *val = out->value + (size_t)r0 * 3;
            mm_bc(f, vh->v3_mul.name, v2c, 3, v2, vh->v3_mul.w, val);
            hc_bias_act_bc(B, 3, val, vh->v3_bias.w, HC_ACT_IDENTITY);
            tap(f, vh->v3_mul.name, HC_TAP_BC, 3, val);
            float *score = out->score + (size_t)r0 * sc;
            mm_bc(f, vh->sv3_mul.name, v2c, sc, v2, vh->sv3_mul.w, score);
            hc_bias_act_bc(B, sc, score, vh->sv3_bias.w, HC_ACT_IDENTITY);
            tap(f, vh->sv3_mul.name, HC_TAP_BC, sc, score);
        }
        /* one ownership channel: its CBP layout is [B][hw], the output's own */
        conv(f, &vh->ownership_conv, v1, LIVE(f) ? out->ownership + (size_t)r0 * hw : NULL, 0);
    }
}

/* ---- threads -------------------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    worker *w = arg;
    hc_engine *e = w->e;
    unsigned long seen = 0;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (e->gen == seen && !e->quit)
            pthread_cond_wait(&e->go, &e->mu);
        if (e->quit)
            break;
        seen = e->gen;
        pthread_mutex_unlock(&e->mu);
        if (w->rows > 0)
            forward(w, w->r0, w->rows);
        pthread_mutex_lock(&e->mu);
        if (--e->pending == 0)
            pthread_cond_signal(&e->done);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

hc_engine_opts hc_engine_default_opts(void)
{
    hc_engine_opts o = {.winograd = HC_ENGINE_DEFAULT_WINOGRAD};
    return o;
}

hc_engine *hc_engine_new(const hc_net *net, int max_batch, int nx, int ny, int threads,
                         hc_err *err)
{
    return hc_engine_new_opts(net, max_batch, nx, ny, threads, NULL, err);
}

static hc_engine *engine_create(const hc_net *net, int max_batch, int nx, int ny, int threads,
                                const hc_engine_opts *opts, const hc_engine *base, hc_err *err);

hc_engine *hc_engine_new_opts(const hc_net *net, int max_batch, int nx, int ny, int threads,
                              const hc_engine_opts *opts, hc_err *err)
{
    return engine_create(net, max_batch, nx, ny, threads, opts, NULL, err);
}

int hc_engine_check(const hc_net *net, hc_err *err)
{
    if (!net)
        return hc_err_set(err, HC_EBACKEND, "engine: no net");
    if (check_net(net, err)) {
        hc_err_prefix(err, "%s: ", net->name ? net->name : "net");
        return -1;
    }
    return 0;
}

hc_engine *hc_engine_new_sharing(const hc_engine *base, int max_batch, int threads, const hc_engine_opts *opts,
                                 hc_err *err)
{
    if (!base) {
        hc_err_set(err, HC_EBACKEND, "engine: nothing to share");
        return NULL;
    }
    /* The arithmetic choices must be base's (its weights were prepared for them); only the
     * callbacks' user pointers may differ. */
    hc_engine_opts o = base->opts;
    if (opts) {
        o.conv_mode_user = opts->conv_mode_user;
        o.layer_mode_user = opts->layer_mode_user;
    }
    return engine_create(base->net, max_batch, base->nx, base->ny, threads, &o, base, err);
}

static hc_engine *engine_create(const hc_net *net, int max_batch, int nx, int ny, int threads,
                                const hc_engine_opts *opts, const hc_engine *base, hc_err *err)
{
    if (!net || max_batch < 1 || nx < 1 || ny < 1 || threads < 1 || threads > 256 ||
        (size_t)nx * ny > 100000) {
        hc_err_set(err, HC_EBACKEND, "engine: bad arguments (batch %d, %dx%d, %d threads)",
                   max_batch, nx, ny, threads);
        return NULL;
    }
    if (hc_engine_check(net, err))
        return NULL;
    hc_engine *e = hc_calloc(1, sizeof *e, err, "engine");
    if (!e)
        return NULL;
    e->net = net;
    e->opts = opts ? *opts : hc_engine_default_opts();
    e->max_batch = max_batch;
    e->nx = nx;
    e->ny = ny;
    e->hw = nx * ny;
    e->threads = threads;
    e->chunk = (max_batch + threads - 1) / threads;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->go, NULL);
    pthread_cond_init(&e->done, NULL);
    if (base) {
        /* Read-only after preparation: the weights in their prepared forms and the RoPE tables. */
        e->convs = base->convs;
        e->n_convs = base->n_convs;
        e->ropes = base->ropes;
        e->n_ropes = base->n_ropes;
        e->tfs = base->tfs;
        e->n_tfs = base->n_tfs;
        e->heads_w = base->heads_w;
        e->heads_oc = base->heads_oc;
        e->borrowed_prep = 1;
    } else if (collect_ropes(e, net->trunk.blocks, net->trunk.num_blocks, err) ||
               collect_tfs(e, net->trunk.blocks, net->trunk.num_blocks, err) || prepare_convs(e, err) ||
               prep_heads(e, err))
        goto fail;
    e->w = hc_calloc((size_t)threads, sizeof *e->w, err, "engine workers");
    if (!e->w)
        goto fail;
    /* size the arena with a dry run at the largest share */
    worker probe = {.e = e, .dry = 1};
    forward(&probe, 0, e->chunk);
    for (int i = 0; i < threads; i++) {
        e->w[i].e = e;
        e->w[i].arena = hc_malloc(probe.peak * sizeof(float) + 64, err, "engine scratch");
        if (!e->w[i].arena)
            goto fail;
    }
    for (int i = 1; i < threads; i++) {
        if (hc_thread_start(&e->w[i].th, worker_main, &e->w[i]) != 0) {
            hc_err_set(err, HC_EBACKEND, "engine: cannot start worker thread %d", i);
            goto fail;
        }
        e->started++;
    }
    return e;
fail:
    hc_engine_free(e);
    return NULL;
}

int hc_engine_eval(hc_engine *e, int batch, const float *spatial, const float *global,
                   const float *meta, hc_raw_heads *out, hc_err *err)
{
    const hc_net *net = e->net;
    if (batch < 1 || batch > e->max_batch)
        return hc_err_set(err, HC_EBACKEND, "engine: batch %d outside 1..%d", batch,
                          e->max_batch);
    if (!spatial || !global || !out)
        return hc_err_set(err, HC_EBACKEND, "engine: missing input or output");
    if (net->trunk.has_meta_encoder && !meta)
        return hc_err_set(err, HC_EBACKEND, "engine: %s needs metadata input rows",
                          net->name ? net->name : "net");
    if (!net->trunk.has_meta_encoder && meta)
        return hc_err_set(err, HC_EBACKEND, "engine: %s has no metadata encoder, meta must be NULL",
                          net->name ? net->name : "net");
    if (out->nx != e->nx || out->ny != e->ny || out->policy_channels != net->num_policy_c ||
        out->score_channels != net->num_score_value_c || out->max_batch < batch)
        return hc_err_set(err, HC_EBACKEND,
                          "engine: output buffer is %dx%d, %d policy / %d score channels, %d rows; "
                          "want %dx%d, %d / %d, >= %d",
                          out->nx, out->ny, out->policy_channels, out->score_channels,
                          out->max_batch, e->nx, e->ny, net->num_policy_c, net->num_score_value_c,
                          batch);
    e->spatial = spatial;
    e->global = global;
    e->meta = meta;
    e->out = out;
    out->batch = batch;
    for (int i = 0; i < e->threads; i++) {
        e->w[i].r0 = (int)((long)i * batch / e->threads);
        e->w[i].rows = (int)((long)(i + 1) * batch / e->threads) - e->w[i].r0;
    }
    if (e->threads > 1) {
        pthread_mutex_lock(&e->mu);
        e->pending = e->threads - 1;
        e->gen++;
        pthread_cond_broadcast(&e->go);
        pthread_mutex_unlock(&e->mu);
    }
    if (e->w[0].rows > 0)
        forward(&e->w[0], e->w[0].r0, e->w[0].rows);
    if (e->threads > 1) {
        pthread_mutex_lock(&e->mu);
        while (e->pending > 0)
            pthread_cond_wait(&e->done, &e->mu);
        pthread_mutex_unlock(&e->mu);
    }
    e->spatial = e->global = e->meta = NULL;
    e->out = NULL;
    return 0;
}

void hc_engine_free(hc_engine *e)
{
    if (!e)
        return;
    if (e->started > 0) {
        pthread_mutex_lock(&e->mu);
        e->quit = 1;
        pthread_cond_broadcast(&e->go);
        pthread_mutex_unlock(&e->mu);
        for (int i = 1; i <= e->started; i++)
            pthread_join(e->w[i].th, NULL);
    }
    if (e->w)
        for (int i = 0; i < e->threads; i++)
            free(e->w[i].arena);
    free(e->w);
    if (!e->borrowed_prep) {
        for (int i = 0; i < e->n_ropes; i++) {
            free(e->ropes[i].cos_t);
            free(e->ropes[i].sin_t);
        }
        free(e->ropes);
        for (int i = 0; i < e->n_tfs; i++)
            free(e->tfs[i].w);
        free(e->tfs);
        for (int i = 0; i < e->n_convs; i++)
            hc_kconv_free(&e->convs[i].k);
        free(e->convs);
        free(e->heads_w);
    }
    pthread_cond_destroy(&e->go);
    pthread_cond_destroy(&e->done);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

void hc_engine_set_hook(hc_engine *e, hc_engine_hook_fn fn, void *user)
{
    e->hook = fn;
    e->hook_user = user;
}

void hc_engine_set_inner_taps(hc_engine *e, int on)
{
    e->inner_taps = on;
}

const hc_net *hc_engine_net(const hc_engine *e)
{
    return e->net;
}

int hc_engine_max_batch(const hc_engine *e)
{
    return e->max_batch;
}
