/* Headroom (headroom.h): every layer's largest stored value and the intermediate sums a reduced-precision
 * kernel would hold, recomputed from ref32's taps, the layer's inputs and its weights. */
#include "harness/run/headroom.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "harness/base/hcmath.h"
#include "refs/kernels.h"
#include "harness/run/taps.h"

/* ---- the plan: which tensor each layer reads, walked once over the net ---- */

/* Where a layer's input comes from: a tap of ref32, an input row, or the trunk after the initial
 * convolution and the global (and metadata) biases, which no tap holds whole (SRC_TRUNK0). */
enum { SRC_NONE = 0, SRC_TAP, SRC_SPATIAL, SRC_GLOBAL, SRC_META, SRC_TRUNK0 };
typedef struct src {
    int kind;
    const char *tap;
} src;

enum { OP_CONV, OP_MM_BC, OP_MM_CS, OP_RMS, OP_ATTN };
enum { POOL_NONE, POOL_GPOOL, POOL_VALUE };

typedef struct step {
    int op;
    const char *layer; /* the figures' layer (a tap name) */
    src in, res;       /* res: the trunk a residual convolution accumulates onto */
    int pool;          /* OP_MM_BC: reads the pooling (POOL_*) of in */
    int pool_figs;     /* list the pooling's figures here (the first layer reading it) */
    int emit_sum;      /* list "sum": the stored output is not the reduction's own result */
    hc_kconv kc, ka;   /* OP_CONV: w and |w| */
    int kc_ok, ka_ok;
    const float *w;    /* OP_MM_*: [in_c][out_c] */
    float *wabs;       /* |w| (owned) */
    int in_c, out_c;
    int c, spatial;    /* OP_RMS */
    const hc_attn_block *a; /* OP_ATTN, with in = q, res = k, v below */
    const char *v;
    char *owned;       /* a layer name built here (inner taps) */
    int f[12];         /* figure indices (F_*), -1 none */
} step;

enum { F_POOL_BOUND, F_POOL_SUM, F_POOLED, F_BOUND, F_SUM, F_SQ, F_QK_BOUND, F_QK, F_LOGIT, F_SMAX, F_PV, F_N };
static const char *const fig_what[F_N] = {"pooling sum bound", "pooling sum", "pooled", "sum bound", "sum",
                                          "sum of squares", "q.k bound", "q.k sum", "logit", "softmax sum",
                                          "p.v bound"};
static const int fig_bound[F_N] = {1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1};

struct hc_headroom {
    hc_headroom_fig *figs;
    int n, cap;
    /* measuring */
    const hc_net *net;
    int nx, ny, hw;
    step *steps;
    int n_steps, cap_steps;
    int *stored; /* per tapset entry: its "stored" figure */
    int n_stored;
    int in_figs[3]; /* input/spatial, input/global, input/meta */
    int planned;    /* figures laid out (after the first batch) */
    size_t cursor;  /* position index of the batch's first row */
    size_t maxc;    /* the widest tensor, channels */
    float *buf[5];  /* scratch [maxc][hw] each */
    float *ws;      /* convolution workspace */
    size_t ws_len;
    double *row;    /* attention: one query's logits, [hw] */
};

int hc_headroom_count(const hc_headroom *h) { return h->n; }
const hc_headroom_fig *hc_headroom_at(const hc_headroom *h, int i) { return &h->figs[i]; }

double hc_headroom_limit(int fmt)
{
    /* fp16: (2 - 2^-10) * 2^15; bf16: (2 - 2^-7) * 2^127 */
    return fmt == HC_TAPFMT_F16 ? 65504.0 : fmt == HC_TAPFMT_BF16 ? ldexp(2.0 - ldexp(1, -7), 127) : FLT_MAX;
}

double hc_headroom_margin(double value, double limit)
{
    if (!isfinite(value))
        return -INFINITY;
    if (value <= 0)
        return INFINITY;
    return hc_log(limit / value) / hc_log(2.0);
}

int hc_headroom_first_over(const hc_headroom *h, double limit, int bound)
{
    for (int i = 0; i < h->n; i++)
        if (h->figs[i].bound == bound && h->figs[i].position >= 0 && !(h->figs[i].value <= limit))
            return i;
    return -1;
}

int hc_headroom_smallest(const hc_headroom *h, int bound)
{
    int best = -1; /* values are never NaN (put): a non-finite one is +inf, the largest */
    for (int i = 0; i < h->n; i++) {
        const hc_headroom_fig *f = &h->figs[i];
        if (f->bound == bound && f->position >= 0 && (best < 0 || f->value > h->figs[best].value))
            best = i;
    }
    return best;
}

void hc_headroom_free(hc_headroom *h)
{
    if (!h)
        return;
    for (int i = 0; i < h->n_steps; i++) {
        step *s = &h->steps[i];
        if (s->kc_ok)
            hc_kconv_free(&s->kc);
        if (s->ka_ok)
            hc_kconv_free(&s->ka);
        free(s->wabs);
        free(s->owned);
    }
    free(h->steps);
    free(h->stored);
    for (int i = 0; i < 5; i++)
        free(h->buf[i]);
    free(h->ws);
    free(h->row);
    free(h->figs);
    free(h);
}

static step *add_step(hc_headroom *h, int op, const char *layer, hc_err *err)
{
    if (h->n_steps == h->cap_steps) {
        int cap = h->cap_steps ? 2 * h->cap_steps : 64;
        step *ns = realloc(h->steps, (size_t)cap * sizeof *ns);
        if (!ns) {
            hc_err_set(err, HC_ENOMEM, "out of memory planning headroom");
            return NULL;
        }
        h->steps = ns;
        h->cap_steps = cap;
    }
    step *s = &h->steps[h->n_steps++];
    memset(s, 0, sizeof *s);
    s->op = op;
    s->layer = layer ? layer : "?";
    for (int i = 0; i < F_N; i++)
        s->f[i] = -1;
    return s;
}

static src tap_src(const char *name) { return (src){SRC_TAP, name ? name : "?"}; }
static const src no_src = {SRC_NONE, NULL};

static void widest(hc_headroom *h, int c)
{
    if ((size_t)c > h->maxc)
        h->maxc = (size_t)c;
}

static float *abs_copy(const float *w, size_t n, hc_err *err)
{
    float *a = hc_calloc(n ? n : 1, sizeof *a, err, "headroom weights");
    for (size_t i = 0; a && i < n; i++)
        a[i] = fabsf(w[i]);
    return a;
}

static int plan_conv(hc_headroom *h, const hc_conv *c, src in, src res, hc_err *err)
{
    step *s = add_step(h, OP_CONV, c->name, err);
    if (!s)
        return -1;
    s->in = in;
    s->res = res;
    s->emit_sum = res.kind != SRC_NONE;
    s->in_c = c->in_c;
    s->out_c = c->out_c;
    size_t nw = (size_t)c->out_c * c->in_c * c->ky * c->kx;
    if (!(s->wabs = abs_copy(c->w, nw, err)) ||
        hc_kconv_init(&s->kc, c->w, c->out_c, c->in_c, c->ky, c->kx, err))
        return -1;
    s->kc_ok = 1;
    if (hc_kconv_init(&s->ka, s->wabs, c->out_c, c->in_c, c->ky, c->kx, err))
        return -1;
    s->ka_ok = 1;
    size_t ws = hc_kconv_workspace(&s->kc, 1, h->nx, h->ny);
    if (ws > h->ws_len)
        h->ws_len = ws;
    widest(h, c->in_c);
    widest(h, c->out_c);
    return 0;
}

static int plan_mm(hc_headroom *h, int op, const hc_matmul *m, const char *layer, src in, int pool, int pool_figs,
                   int emit_sum, hc_err *err)
{
    step *s = add_step(h, op, layer ? layer : m->name, err);
    if (!s)
        return -1;
    s->in = in;
    s->pool = pool;
    s->pool_figs = pool_figs;
    s->emit_sum = emit_sum;
    s->w = m->w;
    s->in_c = m->in_c;
    s->out_c = m->out_c;
    widest(h, m->in_c);
    widest(h, m->out_c);
    return (s->wabs = abs_copy(m->w, (size_t)m->in_c * m->out_c, err)) ? 0 : -1;
}

static int plan_rms(hc_headroom *h, const char *layer, src in, int c, int spatial, hc_err *err)
{
    step *s = add_step(h, OP_RMS, layer, err);
    if (!s)
        return -1;
    s->in = in;
    s->c = c;
    s->spatial = spatial;
    return 0;
}

/* "BLOCK.suffix", the engine's inner tap names (refs/engine.h hc_engine_set_inner_taps). */
static char *inner_name(const char *block, const char *suffix, hc_err *err)
{
    size_t len = strlen(block ? block : "?") + strlen(suffix) + 2;
    char *s = hc_calloc(len, 1, err, "headroom layer name");
    if (s)
        snprintf(s, len, "%s.%s", block ? block : "?", suffix);
    return s;
}

/* The blocks of a stack whose trunk enters as x; *out gets the trunk after the last block. */
static int plan_stack(hc_headroom *h, const hc_block *blocks, int n, src x, src *out, hc_err *err)
{
    for (int i = 0; i < n; i++) {
        const hc_block *bl = &blocks[i];
        switch (bl->kind) {
        case HC_BLOCK_ORDINARY: {
            const hc_res_block *r = &bl->ordinary;
            if (plan_conv(h, &r->regular_conv, tap_src(r->pre_bn.name), no_src, err) ||
                plan_conv(h, &r->final_conv, tap_src(r->mid_bn.name), x, err))
                return -1;
            break;
        }
        case HC_BLOCK_GPOOL: {
            const hc_gpool_block *g = &bl->gpool;
            if (plan_conv(h, &g->regular_conv, tap_src(g->pre_bn.name), no_src, err) ||
                plan_conv(h, &g->gpool_conv, tap_src(g->pre_bn.name), no_src, err) ||
                plan_mm(h, OP_MM_BC, &g->gpool_to_bias_mul, NULL, tap_src(g->gpool_bn.name), POOL_GPOOL, 1, 0, err) ||
                plan_conv(h, &g->final_conv, tap_src(g->mid_bn.name), x, err))
                return -1;
            break;
        }
        case HC_BLOCK_NESTED_BOTTLENECK: {
            const hc_nbt_block *nb = &bl->nbt;
            src inner;
            if (plan_conv(h, &nb->pre_conv, tap_src(nb->pre_bn.name), no_src, err) ||
                plan_stack(h, nb->blocks, nb->num_blocks, tap_src(nb->pre_conv.name), &inner, err) ||
                plan_conv(h, &nb->post_conv, tap_src(nb->post_bn.name), x, err))
                return -1;
            break;
        }
        case HC_BLOCK_ATTENTION: {
            const hc_attn_block *a = &bl->attn;
            src ln = tap_src(a->pre_ln.name);
            if (plan_rms(h, a->pre_ln.name, x, a->pre_ln.c, 0, err) ||
                plan_mm(h, OP_MM_CS, &a->q_proj, NULL, ln, POOL_NONE, 0, a->use_rope, err) ||
                plan_mm(h, OP_MM_CS, &a->k_proj, NULL, ln, POOL_NONE, 0, a->use_rope, err) ||
                plan_mm(h, OP_MM_CS, &a->v_proj, NULL, ln, POOL_NONE, 0, 0, err))
                return -1;
            char *att = inner_name(bl->name, "attn.out_preproj", err);
            step *s = att ? add_step(h, OP_ATTN, att, err) : NULL;
            if (!s) {
                free(att);
                return -1;
            }
            s->owned = att;
            s->a = a;
            s->in = tap_src(a->q_proj.name);
            s->res = tap_src(a->k_proj.name);
            s->v = a->v_proj.name ? a->v_proj.name : "?";
            if (plan_mm(h, OP_MM_CS, &a->out_proj, NULL, tap_src(att), POOL_NONE, 0, 0, err))
                return -1;
            break;
        }
        case HC_BLOCK_FFN: {
            const hc_ffn_block *ff = &bl->ffn;
            src ln = tap_src(ff->pre_ln.name);
            if (plan_rms(h, ff->pre_ln.name, x, ff->pre_ln.c, 0, err))
                return -1;
            char *up = inner_name(bl->name, "ffn.up", err);
            if (!up || plan_mm(h, OP_MM_CS, &ff->linear1, up, ln, POOL_NONE, 0, 0, err)) {
                free(up);
                return -1;
            }
            h->steps[h->n_steps - 1].owned = up;
            if (ff->use_swiglu) {
                char *gate = inner_name(bl->name, "ffn.gate", err);
                if (!gate || plan_mm(h, OP_MM_CS, &ff->linear_gate, gate, ln, POOL_NONE, 0, 0, err)) {
                    free(gate);
                    return -1;
                }
                h->steps[h->n_steps - 1].owned = gate;
            }
            if (plan_mm(h, OP_MM_CS, &ff->linear2, NULL, tap_src(ff->linear1.name), POOL_NONE, 0, 0, err))
                return -1;
            break;
        }
        }
        x = tap_src(bl->name);
    }
    *out = x;
    return 0;
}

/* Every step of the net, in the engine's order (refs/engine.c forward). */
static int plan_net(hc_headroom *h, const hc_net *net, hc_err *err)
{
    const hc_trunk *t = &net->trunk;
    const hc_policy_head *ph = &net->policy;
    const hc_value_head *vh = &net->value;
    widest(h, net->num_input_c);
    widest(h, t->trunk_c);
    if (plan_conv(h, &t->initial_conv, (src){SRC_SPATIAL, NULL}, no_src, err) ||
        plan_mm(h, OP_MM_BC, &t->initial_matmul, NULL, (src){SRC_GLOBAL, NULL}, POOL_NONE, 0, 0, err))
        return -1;
    if (t->has_meta_encoder) {
        const hc_meta_encoder *m = &t->meta;
        if (plan_mm(h, OP_MM_BC, &m->mul1, NULL, (src){SRC_META, NULL}, POOL_NONE, 0, 1, err) ||
            plan_mm(h, OP_MM_BC, &m->mul2, NULL, tap_src(m->mul1.name), POOL_NONE, 0, 1, err) ||
            plan_mm(h, OP_MM_BC, &m->mul3, NULL, tap_src(m->mul2.name), POOL_NONE, 0, 0, err))
            return -1;
    }
    src x;
    if (plan_stack(h, t->blocks, t->num_blocks, (src){SRC_TRUNK0, NULL}, &x, err))
        return -1;
    const char *tip = t->norm_kind == HC_TRUNK_NORM_RMSNORM ? t->tip_rmsnorm.name : t->tip_bn.name;
    if (t->norm_kind == HC_TRUNK_NORM_RMSNORM && plan_rms(h, tip, x, t->trunk_c, t->tip_rmsnorm.spatial, err))
        return -1;
    src trunk = tap_src(tip);
    /* the pooled g1 feeds gpool_to_bias_mul and the pass layers: its figures are listed once */
    if (plan_conv(h, &ph->p1_conv, trunk, no_src, err) || plan_conv(h, &ph->g1_conv, trunk, no_src, err) ||
        plan_mm(h, OP_MM_BC, &ph->gpool_to_bias_mul, NULL, tap_src(ph->g1_bn.name), POOL_GPOOL, 1, 0, err) ||
        plan_conv(h, &ph->p2_conv, tap_src(ph->p1_bn.name), no_src, err) ||
        plan_mm(h, OP_MM_BC, &ph->gpool_to_pass_mul, NULL, tap_src(ph->g1_bn.name), POOL_GPOOL, 0, ph->has_pass_mlp,
                err))
        return -1;
    if (ph->has_pass_mlp && plan_mm(h, OP_MM_BC, &ph->gpool_to_pass_mul2, NULL, tap_src(ph->gpool_to_pass_mul.name),
                                    POOL_NONE, 0, 0, err))
        return -1;
    if (plan_conv(h, &vh->v1_conv, trunk, no_src, err) ||
        plan_mm(h, OP_MM_BC, &vh->v2_mul, NULL, tap_src(vh->v1_bn.name), POOL_VALUE, 1, 1, err) ||
        plan_mm(h, OP_MM_BC, &vh->v3_mul, NULL, tap_src(vh->v2_mul.name), POOL_NONE, 0, 1, err) ||
        plan_mm(h, OP_MM_BC, &vh->sv3_mul, NULL, tap_src(vh->v2_mul.name), POOL_NONE, 0, 1, err) ||
        plan_conv(h, &vh->ownership_conv, tap_src(vh->v1_bn.name), no_src, err))
        return -1;
    widest(h, 3 * h->maxc); /* pooled rows */
    return 0;
}

/* ---- figures ---- */

static int add_fig(hc_headroom *h, const char *layer, const char *what, int bound, hc_err *err)
{
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 128;
        hc_headroom_fig *nf = realloc(h->figs, (size_t)cap * sizeof *nf);
        if (!nf)
            return hc_err_set(err, HC_ENOMEM, "out of memory measuring headroom");
        h->figs = nf;
        h->cap = cap;
    }
    hc_headroom_fig *f = &h->figs[h->n];
    memset(f, 0, sizeof *f);
    snprintf(f->layer, sizeof f->layer, "%s", layer);
    f->what = what;
    f->bound = bound;
    f->position = -1;
    return h->n++;
}

/* The figures each step lists, in the order a kernel forms them. */
static int step_figs(const step *s, int *which)
{
    int n = 0;
    switch (s->op) {
    case OP_CONV:
    case OP_MM_BC:
    case OP_MM_CS:
        if (s->pool && s->pool_figs) {
            which[n++] = F_POOL_BOUND;
            which[n++] = F_POOL_SUM;
            which[n++] = F_POOLED;
        }
        which[n++] = F_BOUND;
        if (s->emit_sum)
            which[n++] = F_SUM;
        break;
    case OP_RMS:
        which[n++] = F_SQ;
        break;
    case OP_ATTN:
        which[n++] = F_QK_BOUND;
        which[n++] = F_QK;
        which[n++] = F_LOGIT;
        which[n++] = F_SMAX;
        which[n++] = F_PV;
        break;
    }
    return n;
}

/* Lays the figures out in the order of the tapset (the engine's forward order): the input rows, then per
 * tap the intermediates of the steps listed under it, then its stored value. A step whose layer is no
 * tap would be a plan that no longer follows the engine: refused. */
static int layout_figs(hc_headroom *h, const hc_tapset *ts, hc_err *err)
{
    const char *in_names[3] = {"input/spatial", "input/global", "input/meta"};
    for (int i = 0; i < 3; i++)
        h->in_figs[i] = i == 2 && !h->net->num_input_meta_c ? -1 : add_fig(h, in_names[i], "stored", 0, err);
    if (h->in_figs[0] < 0 || h->in_figs[1] < 0)
        return -1;
    int nt = hc_tapset_count(ts);
    if (!(h->stored = hc_calloc((size_t)nt + 1, sizeof *h->stored, err, "headroom figures")))
        return -1;
    h->n_stored = nt;
    for (int i = 0; i < nt; i++) {
        const hc_tapset_entry *e = hc_tapset_at(ts, i);
        for (int k = 0; k < h->n_steps; k++) {
            step *s = &h->steps[k];
            if (strcmp(s->layer, e->name) != 0)
                continue;
            int which[F_N], nf = step_figs(s, which);
            for (int j = 0; j < nf; j++)
                if ((s->f[which[j]] = add_fig(h, e->name, fig_what[which[j]], fig_bound[which[j]], err)) < 0)
                    return -1;
        }
        if ((h->stored[i] = add_fig(h, e->name, "stored", 0, err)) < 0)
            return -1;
    }
    for (int k = 0; k < h->n_steps; k++)
        if (!hc_tapset_find(ts, h->steps[k].layer))
            return hc_err_set(err, HC_EINTERNAL, "headroom: layer %s has no tap in ref32", h->steps[k].layer);
    h->planned = 1;
    return 0;
}

static void put(hc_headroom *h, int fig, double v, size_t pos)
{
    if (fig < 0)
        return;
    hc_headroom_fig *f = &h->figs[fig];
    if (v != v || isinf(v))
        v = INFINITY;
    if (f->position < 0 || v > f->value) {
        f->value = v;
        f->position = (long)pos;
    }
}

/* max |x| over c channels of [c][hw] at on-board points (mask NULL: every point). */
static double max_abs(const float *x, size_t c, size_t hw, const float *mask)
{
    double m = 0;
    for (size_t ch = 0; ch < c; ch++)
        for (size_t p = 0; p < hw; p++) {
            if (mask && mask[p] == 0.0f)
                continue;
            double a = fabs((double)x[ch * hw + p]);
            if (!(a <= m))
                m = a != a ? INFINITY : a;
        }
    return m;
}

/* ---- one row ---- */

typedef struct rowctx {
    const hc_tapset *ts;
    int r;                /* row in the batch */
    size_t pos;           /* its position index */
    const float *spatial; /* [nc][hw] */
    const float *global, *meta;
    const float *mask;
    float msum;
    float *trunk0;        /* [trunk_c][hw], or NULL until built */
} rowctx;

static const float *tap_row(const rowctx *rc, const char *name, int *channels, hc_err *err)
{
    const hc_tapset_entry *e = hc_tapset_find(rc->ts, name);
    if (!e || e->rows <= rc->r) {
        hc_err_set(err, HC_EINTERNAL, "headroom: ref32 handed back no tap %s", name);
        return NULL;
    }
    if (channels)
        *channels = e->channels;
    return e->data + (size_t)rc->r * e->channels * e->hw;
}

/* The trunk after the initial convolution, plus the global input's bias (and the metadata encoder's),
 * added as the engine adds them (refs/engine.c forward). */
static const float *trunk0(hc_headroom *h, rowctx *rc, hc_err *err)
{
    if (rc->trunk0)
        return rc->trunk0;
    const hc_trunk *t = &h->net->trunk;
    const float *x = tap_row(rc, t->initial_conv.name, NULL, err);
    const float *g = x ? tap_row(rc, t->initial_matmul.name, NULL, err) : NULL;
    const float *m = g && t->has_meta_encoder ? tap_row(rc, t->meta.mul3.name, NULL, err) : NULL;
    if (!g || (t->has_meta_encoder && !m))
        return NULL;
    float *o = h->buf[4];
    size_t hw = (size_t)h->hw;
    for (int c = 0; c < t->trunk_c; c++)
        for (size_t p = 0; p < hw; p++) {
            float v = x[c * hw + p] + g[c];
            o[c * hw + p] = m ? v + m[c] : v;
        }
    return rc->trunk0 = o;
}

static const float *src_row(hc_headroom *h, rowctx *rc, src s, hc_err *err)
{
    switch (s.kind) {
    case SRC_TAP:
        return tap_row(rc, s.tap, NULL, err);
    case SRC_SPATIAL:
        return rc->spatial;
    case SRC_GLOBAL:
        return rc->global;
    case SRC_META:
        return rc->meta;
    case SRC_TRUNK0:
        return trunk0(h, rc, err);
    }
    hc_err_set(err, HC_EINTERNAL, "headroom: a layer without input");
    return NULL;
}

static void abs_into(float *dst, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = fabsf(x[i]);
}

static int do_conv(hc_headroom *h, const step *s, rowctx *rc, hc_err *err)
{
    const float *in = src_row(h, rc, s->in, err);
    const float *res = in && s->res.kind != SRC_NONE ? src_row(h, rc, s->res, err) : NULL;
    if (!in || (s->res.kind != SRC_NONE && !res))
        return -1;
    size_t hw = (size_t)h->hw, oc = (size_t)s->out_c;
    float *ain = h->buf[0], *out = h->buf[1];
    abs_into(ain, in, (size_t)s->in_c * hw);
    hc_kconv_run(&s->ka, 1, h->nx, h->ny, ain, out, 0, h->ws);
    if (res)
        for (size_t i = 0; i < oc * hw; i++)
            out[i] += fabsf(res[i]);
    put(h, s->f[F_BOUND], max_abs(out, oc, hw, rc->mask), rc->pos);
    if (s->emit_sum) {
        hc_kconv_run(&s->kc, 1, h->nx, h->ny, in, out, 0, h->ws);
        put(h, s->f[F_SUM], max_abs(out, oc, hw, rc->mask), rc->pos);
    }
    return 0;
}

/* The pooling the layer reads (KataGo's: hc_pool_gpool / hc_pool_value) into pooled, and its sums. */
static void do_pool(hc_headroom *h, const step *s, rowctx *rc, const float *x, int c, float *pooled)
{
    size_t hw = (size_t)h->hw;
    double sum_max = 0, bound_max = 0;
    for (int ch = 0; ch < c; ch++) {
        double sum = 0, bound = 0;
        for (size_t p = 0; p < hw; p++) {
            if (rc->mask[p] == 0.0f)
                continue;
            sum += x[ch * hw + p];
            bound += fabs((double)x[ch * hw + p]);
        }
        sum = fabs(sum);
        sum_max = sum > sum_max || sum != sum ? sum : sum_max;
        bound_max = bound > bound_max || bound != bound ? bound : bound_max;
    }
    if (s->pool == POOL_GPOOL)
        hc_pool_gpool(c, 1, h->hw, x, rc->mask, &rc->msum, pooled);
    else
        hc_pool_value(c, 1, h->hw, x, &rc->msum, pooled);
    if (s->pool_figs) {
        put(h, s->f[F_POOL_SUM], sum_max, rc->pos);
        put(h, s->f[F_POOL_BOUND], bound_max, rc->pos);
        put(h, s->f[F_POOLED], max_abs(pooled, (size_t)3 * c, 1, NULL), rc->pos);
    }
}

static int do_mm(hc_headroom *h, const step *s, rowctx *rc, hc_err *err)
{
    const float *in;
    float *ain = h->buf[0], *out = h->buf[1], *pooled = h->buf[2];
    if (s->pool) {
        int c = 0;
        const float *x = tap_row(rc, s->in.tap, &c, err);
        if (!x)
            return -1;
        do_pool(h, s, rc, x, c, pooled);
        in = pooled;
    } else if (!(in = src_row(h, rc, s->in, err))) {
        return -1;
    }
    int cs = s->op == OP_MM_CS;
    size_t hw = cs ? (size_t)h->hw : 1;
    const float *mask = cs ? rc->mask : NULL;
    abs_into(ain, in, (size_t)s->in_c * hw);
    if (cs)
        hc_matmul_cs(1, h->hw, s->in_c, s->out_c, ain, s->wabs, out);
    else
        hc_matmul_bc(1, s->in_c, s->out_c, ain, s->wabs, out);
    put(h, s->f[F_BOUND], max_abs(out, (size_t)s->out_c, hw, mask), rc->pos);
    if (s->emit_sum) {
        if (cs)
            hc_matmul_cs(1, h->hw, s->in_c, s->out_c, in, s->w, out);
        else
            hc_matmul_bc(1, s->in_c, s->out_c, in, s->w, out);
        put(h, s->f[F_SUM], max_abs(out, (size_t)s->out_c, hw, mask), rc->pos);
    }
    return 0;
}

static int do_rms(hc_headroom *h, const step *s, rowctx *rc, hc_err *err)
{
    const float *x = src_row(h, rc, s->in, err);
    if (!x)
        return -1;
    size_t hw = (size_t)h->hw;
    double best = 0, total = 0;
    for (size_t p = 0; p < hw; p++) {
        if (rc->mask[p] == 0.0f)
            continue;
        double ss = 0;
        for (int c = 0; c < s->c; c++)
            ss += (double)x[c * hw + p] * x[c * hw + p];
        total += ss;
        best = ss > best || ss != ss ? ss : best;
    }
    put(h, s->f[F_SQ], s->spatial ? total : best, rc->pos);
    return 0;
}

/* Scaled dot-product attention as the reference computes it (hc_attention: head h reads kv head
 * h / (heads / kv_heads), off-board keys and queries masked), in double, for its intermediates. */
static int do_attn(hc_headroom *h, const step *s, rowctx *rc, hc_err *err)
{
    const hc_attn_block *a = s->a;
    const float *q = src_row(h, rc, s->in, err);
    const float *k = q ? src_row(h, rc, s->res, err) : NULL;
    const float *v = k ? tap_row(rc, s->v, NULL, err) : NULL;
    if (!v)
        return -1;
    size_t hw = (size_t)h->hw;
    int nh = a->num_heads, nkv = a->num_kv_heads, qd = a->q_head_dim, vd = a->v_head_dim;
    double scale = 1.0 / sqrt((double)qd);
    double qk_bound = 0, qk = 0, smax = 0, pv = 0;
    double *l = h->row;
    for (int hd = 0; hd < nh; hd++) {
        int kv = hd / (nh / nkv);
        const float *qh = q + (size_t)hd * qd * hw, *kh = k + (size_t)kv * qd * hw, *vh = v + (size_t)kv * vd * hw;
        for (size_t i = 0; i < hw; i++) {
            if (rc->mask[i] == 0.0f)
                continue;
            double mx = -INFINITY;
            for (size_t j = 0; j < hw; j++) {
                if (rc->mask[j] == 0.0f)
                    continue;
                double d = 0, b = 0;
                for (int e = 0; e < qd; e++) {
                    double t = (double)qh[e * hw + i] * kh[e * hw + j];
                    d += t;
                    b += fabs(t);
                }
                l[j] = d * scale;
                qk = fabs(d) > qk || d != d ? fabs(d) : qk;
                qk_bound = b > qk_bound || b != b ? b : qk_bound;
                mx = l[j] > mx ? l[j] : mx;
            }
            double den = 0;
            for (size_t j = 0; j < hw; j++)
                if (rc->mask[j] != 0.0f)
                    den += (l[j] = hc_exp(l[j] - mx));
            smax = den > smax || den != den ? den : smax;
            for (size_t j = 0; j < hw; j++)
                l[j] /= den; /* the probabilities */
            for (int e = 0; e < vd; e++) {
                double acc = 0;
                for (size_t j = 0; j < hw; j++)
                    if (rc->mask[j] != 0.0f)
                        acc += l[j] * fabs((double)vh[e * hw + j]);
                pv = acc > pv || acc != acc ? acc : pv;
            }
        }
    }
    put(h, s->f[F_QK_BOUND], qk_bound, rc->pos);
    put(h, s->f[F_QK], qk, rc->pos);
    put(h, s->f[F_LOGIT], qk * scale, rc->pos);
    put(h, s->f[F_SMAX], smax, rc->pos);
    put(h, s->f[F_PV], pv, rc->pos);
    return 0;
}

static int measure_row(hc_headroom *h, rowctx *rc, hc_err *err)
{
    size_t hw = (size_t)h->hw;
    const hc_net *net = h->net;
    put(h, h->in_figs[0], max_abs(rc->spatial, (size_t)net->num_input_c, hw, rc->mask), rc->pos);
    put(h, h->in_figs[1], max_abs(rc->global, (size_t)net->num_input_global_c, 1, NULL), rc->pos);
    if (rc->meta)
        put(h, h->in_figs[2], max_abs(rc->meta, (size_t)net->num_input_meta_c, 1, NULL), rc->pos);
    for (int i = 0; i < h->n_stored; i++) {
        const hc_tapset_entry *e = hc_tapset_at(rc->ts, i);
        const float *x = e->data + (size_t)rc->r * e->channels * e->hw;
        put(h, h->stored[i], max_abs(x, (size_t)e->channels, (size_t)e->hw, e->hw > 1 ? rc->mask : NULL), rc->pos);
    }
    for (int k = 0; k < h->n_steps; k++) {
        const step *s = &h->steps[k];
        int rc_ = s->op == OP_CONV ? do_conv(h, s, rc, err)
                : s->op == OP_RMS  ? do_rms(h, s, rc, err)
                : s->op == OP_ATTN ? do_attn(h, s, rc, err)
                                   : do_mm(h, s, rc, err);
        if (rc_)
            return hc_err_prefix(err, "layer %s: ", s->layer);
    }
    return 0;
}

/* ---- the driver: ref32 with taps behind a tensor-backend face, so that the evaluator featurizes the
 * positions exactly as for a run; rows arrive in position order (one instance, no order) ---- */

typedef struct meas {
    hc_headroom *h;
    hc_tapped *t;
    size_t n;
} meas;

static int meas_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                     hc_raw_heads *out, hc_err *err)
{
    meas *m = inst;
    hc_headroom *h = m->h;
    const hc_net *net = h->net;
    if (h->cursor + (size_t)batch > m->n)
        return hc_err_set(err, HC_EINTERNAL, "headroom: more rows than positions");
    if (hc_tapped_eval(m->t, batch, spatial, global, meta, out, err))
        return -1;
    const hc_tapset *ts = hc_tapped_rec(m->t);
    if (!h->planned && layout_figs(h, ts, err))
        return -1;
    if (hc_tapset_count(ts) != h->n_stored)
        return hc_err_set(err, HC_EINTERNAL, "headroom: ref32 handed back %d taps, earlier %d", hc_tapset_count(ts),
                          h->n_stored);
    size_t hw = (size_t)h->hw, nc = (size_t)net->num_input_c;
    for (int r = 0; r < batch; r++) {
        rowctx rc = {ts, r, h->cursor + (size_t)r, spatial + (size_t)r * nc * hw,
                     global + (size_t)r * net->num_input_global_c,
                     meta ? meta + (size_t)r * net->num_input_meta_c : NULL, NULL, 0, NULL};
        float *mask = h->buf[3];
        hc_mask_from_input(1, h->hw, (int)nc, rc.spatial, mask, &rc.msum);
        rc.mask = mask;
        if (measure_row(h, &rc, err))
            return -1;
    }
    h->cursor += (size_t)batch;
    return 0;
}

static const hc_backend_ops meas_ops = {.eval = meas_eval};
/* Composed here around a backend opened through the registry; never registered. */
static const hc_backend_kind meas_kind = {
    .name = "headroom",
    .summary = "ref32 with taps, measured for headroom",
    .caps = {.shape = HC_BACKEND_TENSOR},
    .ops = &meas_ops,
};

hc_headroom *hc_headroom_measure(const hc_net *net, const hc_position *ps, size_t n, const hc_headroom_opts *o,
                                 hc_err *err)
{
    if (n == 0) {
        hc_err_set(err, HC_EUSAGE, "headroom: no positions");
        return NULL;
    }
    const hc_eval_settings *s = o->settings;
    int batch = o->batch > 0 ? o->batch : 1;
    hc_headroom *h = hc_calloc(1, sizeof *h, err, "headroom");
    if (!h)
        return NULL;
    h->net = net;
    h->nx = s->nn_x;
    h->ny = s->nn_y;
    h->hw = s->nn_x * s->nn_y;
    meas m = {h, NULL, n};
    hc_nnoutput *outs = NULL;
    int ok = 0;
    if (plan_net(h, net, err))
        goto done;
    for (int i = 0; i < 5; i++)
        if (!(h->buf[i] = hc_calloc(h->maxc * (size_t)h->hw, sizeof(float), err, "headroom scratch")))
            goto done;
    if (!(h->ws = hc_calloc(h->ws_len + 1, sizeof(float), err, "headroom scratch")) ||
        !(h->row = hc_calloc((size_t)h->hw, sizeof(double), err, "headroom scratch")) ||
        !(m.t = hc_tapped_open("ref32", net, h->nx, h->ny, batch, err)) ||
        !(outs = hc_calloc(n, sizeof *outs, err, "outputs")))
        goto done;
    hc_backend b = {&meas_kind, &m};
    hc_evaluator_opts eo = {.net = net, .settings = *s, .batch = batch, .backend = &b};
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    ok = ev && hc_evaluator_run(ev, &req, err) == 0;
    hc_evaluator_close(ev);
    if (ok && h->cursor != n) {
        hc_err_set(err, HC_EINTERNAL, "headroom: %zu of %zu positions measured", h->cursor, n);
        ok = 0;
    }
done:
    if (outs)
        hc_nnoutputs_free(outs, n);
    hc_tapped_free(m.t);
    if (!ok) {
        hc_headroom_free(h);
        return NULL;
    }
    return h;
}
