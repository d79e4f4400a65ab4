/* Random-weight KataGo nets built in memory (see synth.h). The layer order and shapes follow
 * KataGo's desc.cpp, version by version, exactly as model_read.c accepts them; the names follow
 * KataGo's current exporter ("model.blocks.3.normactconvp.conv", ...). */
#include "harness/model/synth.h"
#include "harness/base/hcmath.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- seeded RNG: splitmix64 seeding a xoshiro256** state ---- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static double rng_unif(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

/* Standard normal (Box-Muller, one value per call: simple and reproducible). */
static double rng_normal(rng *r)
{
    double u1 = rng_unif(r), u2 = rng_unif(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * hc_log(u1)) * hc_cos(6.283185307179586 * u2);
}

/* ---- the block list ---- */

/* kind SB_GROUP is a parenthesised list repeated as a whole: "(attn,ffn)*7". */
enum { SB_GROUP = -1 };

typedef struct sblock {
    int kind;
    int rep;
    int n;               /* children of an nbt */
    struct sblock *kids;
} sblock;

static void sblocks_free(sblock *b, int n)
{
    if (!b)
        return;
    for (int i = 0; i < n; i++)
        sblocks_free(b[i].kids, b[i].n);
    free(b);
}

typedef struct parser {
    const char *s, *p;
    hc_err *err;
} parser;

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static int parse_fail(parser *ps, const char *what)
{
    return hc_err_set(ps->err, HC_EUSAGE, "block list \"%s\": at column %d: %s", ps->s, (int)(ps->p - ps->s) + 1, what);
}

static int parse_list(parser *ps, int depth, sblock **out, int *n_out);

/* Blocks in a stack once groups are expanded (saturates above the limit). */
static long stack_count(const sblock *b, int n)
{
    long t = 0;
    for (int i = 0; i < n && t <= HC_MODEL_MAX_BLOCKS; i++)
        t += (long)b[i].rep * (b[i].kind == SB_GROUP ? stack_count(b[i].kids, b[i].n) : 1);
    return t;
}

static int parse_item(parser *ps, int depth, sblock *b)
{
    skip_ws(ps);
    b->rep = 1;
    if (*ps->p == '(') {
        b->kind = SB_GROUP;
        ps->p++;
        if (parse_list(ps, depth, &b->kids, &b->n) < 0)
            return -1;
        skip_ws(ps);
        if (*ps->p != ')')
            return parse_fail(ps, "expected ')'");
        ps->p++;
        goto repeat;
    }
    char word[16];
    int n = 0;
    while (isalpha((unsigned char)*ps->p)) {
        if (n >= (int)sizeof word - 1)
            return parse_fail(ps, "block kind too long");
        word[n++] = *ps->p++;
    }
    word[n] = '\0';
    b->rep = 1;
    if (!strcmp(word, "res") || !strcmp(word, "ordinary"))
        b->kind = HC_BLOCK_ORDINARY;
    else if (!strcmp(word, "gpool"))
        b->kind = HC_BLOCK_GPOOL;
    else if (!strcmp(word, "nbt"))
        b->kind = HC_BLOCK_NESTED_BOTTLENECK;
    else if (!strcmp(word, "attn"))
        b->kind = HC_BLOCK_ATTENTION;
    else if (!strcmp(word, "ffn"))
        b->kind = HC_BLOCK_FFN;
    else
        return parse_fail(ps, "expected a block kind (res, gpool, nbt(...), attn, ffn)");
    skip_ws(ps);
    if (*ps->p == '(') {
        if (b->kind != HC_BLOCK_NESTED_BOTTLENECK)
            return parse_fail(ps, "only nbt takes a nested block list");
        if (depth + 1 >= HC_MODEL_MAX_NESTING)
            return parse_fail(ps, "nested deeper than HC_MODEL_MAX_NESTING");
        ps->p++;
        if (parse_list(ps, depth + 1, &b->kids, &b->n) < 0)
            return -1;
        skip_ws(ps);
        if (*ps->p != ')')
            return parse_fail(ps, "expected ')'");
        ps->p++;
    } else if (b->kind == HC_BLOCK_NESTED_BOTTLENECK) {
        b->kids = calloc(2, sizeof *b->kids);
        if (!b->kids)
            return hc_err_set(ps->err, HC_ENOMEM, "out of memory");
        b->n = 2;
        b->kids[0].kind = b->kids[1].kind = HC_BLOCK_ORDINARY;
        b->kids[0].rep = b->kids[1].rep = 1;
    }
repeat:
    skip_ws(ps);
    if (*ps->p == '*') {
        ps->p++;
        skip_ws(ps);
        char *end;
        long r = strtol(ps->p, &end, 10);
        if (end == ps->p || r < 1 || r > HC_MODEL_MAX_BLOCKS)
            return parse_fail(ps, "expected a repeat count 1..HC_MODEL_MAX_BLOCKS after '*'");
        ps->p = end;
        b->rep = (int)r;
    }
    return 0;
}

static int parse_list(parser *ps, int depth, sblock **out, int *n_out)
{
    int cap = 4, n = 0;
    sblock *v = calloc((size_t)cap, sizeof *v);
    if (!v)
        return hc_err_set(ps->err, HC_ENOMEM, "out of memory");
    *out = v;
    *n_out = 0;
    for (;;) {
        if (n == cap) {
            sblock *nv = realloc(v, (size_t)cap * 2 * sizeof *v);
            if (!nv)
                return hc_err_set(ps->err, HC_ENOMEM, "out of memory");
            memset(nv + cap, 0, (size_t)cap * sizeof *v);
            cap *= 2;
            *out = v = nv;
        }
        *n_out = n + 1;
        if (parse_item(ps, depth, &v[n]) < 0)
            return -1;
        n++;
        if (stack_count(v, n) > HC_MODEL_MAX_BLOCKS)
            return parse_fail(ps, "more than HC_MODEL_MAX_BLOCKS blocks in one stack");
        skip_ws(ps);
        if (*ps->p != ',')
            return 0;
        ps->p++;
    }
}


static int stack_has(const sblock *b, int n, int kind)
{
    for (int i = 0; i < n; i++)
        if (b[i].kind == kind || (b[i].kids && stack_has(b[i].kids, b[i].n, kind)))
            return 1;
    return 0;
}

static int parse_blocks(const char *s, sblock **out, int *n, hc_err *err)
{
    parser ps = {s, s, err};
    *out = NULL;
    *n = 0;
    if (parse_list(&ps, 0, out, n) < 0)
        return -1;
    skip_ws(&ps);
    if (*ps.p != '\0')
        return parse_fail(&ps, "unexpected character");
    return 0;
}

/* ---- spec ---- */

void hc_synth_spec_default(hc_synth_spec *s)
{
    memset(s, 0, sizeof *s);
    s->version = 17;
    s->seed = 1;
    s->trunk_c = 16;
    snprintf(s->blocks, sizeof s->blocks, "res,gpool");
    s->act = -1;
    s->pass_act = -1;
    s->tip = HC_TRUNK_NORM_BN;
    s->rope = HC_SYNTH_ROPE_NONE;
    s->vary_bn = 1;
}

/* The spec with every default resolved. */
typedef struct rspec {
    hc_synth_spec s;
    int act, pass_act;
    int policy_c, score_c;
} rspec;

static void resolve(const hc_synth_spec *in, rspec *r)
{
    r->s = *in;
    hc_synth_spec *s = &r->s;
    int C = s->trunk_c;
    if (!s->mid_c)
        s->mid_c = C;
    if (!s->bottleneck_c)
        s->bottleneck_c = C / 2 > 0 ? C / 2 : 1;
    if (!s->gpool_c)
        s->gpool_c = C / 4 > 2 ? C / 4 : 2;
    if (!s->num_heads)
        s->num_heads = 2;
    if (!s->num_kv_heads)
        s->num_kv_heads = s->num_heads;
    if (!s->q_head_dim) {
        int d = C / s->num_heads;
        d -= d % 2;
        s->q_head_dim = d >= 2 ? d : 2;
    }
    if (!s->v_head_dim)
        s->v_head_dim = s->q_head_dim;
    if (!(s->rope_theta > 0))
        s->rope_theta = 100.0f;
    if (!s->ffn_c)
        s->ffn_c = 2 * C;
    if (!s->meta_c)
        s->meta_c = C;
    int third = C / 3 > 2 ? C / 3 : 2;
    if (!s->p1_c)
        s->p1_c = third;
    if (!s->g1_c)
        s->g1_c = third;
    if (!s->v1_c)
        s->v1_c = third;
    if (!s->v2_c)
        s->v2_c = 2 * s->v1_c;
    if (!s->pass_c)
        s->pass_c = s->p1_c;
    if (!s->input_kernel)
        s->input_kernel = 5;
    if (!s->kernel)
        s->kernel = 3;
    r->act = s->act >= 0 ? s->act : (s->version >= 11 ? HC_ACT_MISH : HC_ACT_RELU);
    r->pass_act = s->pass_act >= 0 ? s->pass_act : r->act;
    int v = s->version;
    r->policy_c = v >= 17 ? (s->policy_c ? s->policy_c : 4) : v == 16 ? 4 : v >= 12 ? 2 : 1;
    r->score_c = v >= 9 ? 6 : v >= 8 ? 4 : v >= 4 ? 2 : 1;
}

static int act_ok(int a) { return a == HC_ACT_IDENTITY || a == HC_ACT_RELU || a == HC_ACT_MISH || a == HC_ACT_SILU; }

static int check_resolved(const rspec *r, const sblock *blocks, int nb, hc_err *err)
{
    const hc_synth_spec *s = &r->s;
    int v = s->version;
    if (v < HC_MODEL_VERSION_MIN || v > HC_MODEL_VERSION_MAX)
        return hc_err_set(err, HC_EUSAGE, "model version %d is not in %d..%d", v, HC_MODEL_VERSION_MIN, HC_MODEL_VERSION_MAX);
    for (const char *c = s->name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
            return hc_err_set(err, HC_EUSAGE, "model name \"%s\": only letters, digits, '_' and '-' are allowed", s->name);
    const int chans[] = {s->trunk_c, s->mid_c, s->bottleneck_c, s->gpool_c, s->ffn_c, s->meta_c, s->p1_c,
                         s->g1_c, s->v1_c, s->v2_c, s->pass_c};
    for (size_t i = 0; i < sizeof chans / sizeof chans[0]; i++)
        if (chans[i] < 1 || chans[i] > HC_MODEL_MAX_CHANNELS)
            return hc_err_set(err, HC_EUSAGE, "channel count %d is not in 1..HC_MODEL_MAX_CHANNELS", chans[i]);
    if (3 * s->gpool_c > HC_MODEL_MAX_CHANNELS || 3 * s->g1_c > HC_MODEL_MAX_CHANNELS ||
        3 * s->v1_c > HC_MODEL_MAX_CHANNELS)
        return hc_err_set(err, HC_EUSAGE, "3 x pooled channels exceed HC_MODEL_MAX_CHANNELS");
    if (s->input_kernel < 1 || s->input_kernel % 2 == 0 || s->input_kernel > HC_MODEL_MAX_KERNEL || s->kernel < 1 ||
        s->kernel % 2 == 0 || s->kernel > HC_MODEL_MAX_KERNEL)
        return hc_err_set(err, HC_EUSAGE, "conv kernels must be odd and at most %d (input %d, blocks %d)",
                          HC_MODEL_MAX_KERNEL, s->input_kernel, s->kernel);
    if (!act_ok(r->act) || !act_ok(r->pass_act))
        return hc_err_set(err, HC_EUSAGE, "unknown activation %d", !act_ok(r->act) ? r->act : r->pass_act);
    if (v < 11 && (r->act != HC_ACT_RELU))
        return hc_err_set(err, HC_EUSAGE, "model version %d stores no activation kinds: only relu (got %s)", v,
                          hc_act_str(r->act));
    if (v < 15 && s->meta)
        return hc_err_set(err, HC_EUSAGE, "the metadata encoder needs model version 15 or later (got %d)", v);
    if (s->tip != HC_TRUNK_NORM_BN && s->tip != HC_TRUNK_NORM_RMSNORM)
        return hc_err_set(err, HC_EUSAGE, "unknown trunk tip %d", s->tip);
    if (v < 15 && s->tip != HC_TRUNK_NORM_BN)
        return hc_err_set(err, HC_EUSAGE, "an RMSNorm trunk tip needs model version 15 or later (got %d)", v);
    if (r->policy_c != 2 && r->policy_c != 4 && v >= 17)
        return hc_err_set(err, HC_EUSAGE, "version 17 policy channels must be 2 or 4 (got %d)", r->policy_c);
    if (v < 17 && s->policy_c && s->policy_c != r->policy_c)
        return hc_err_set(err, HC_EUSAGE, "model version %d has %d policy channels (asked for %d)", v, r->policy_c,
                          s->policy_c);
    if (s->rope < HC_SYNTH_ROPE_NONE || s->rope > HC_SYNTH_ROPE_LEARNABLE)
        return hc_err_set(err, HC_EUSAGE, "unknown RoPE kind %d", s->rope);
    if (blocks && stack_has(blocks, nb, HC_BLOCK_ATTENTION)) {
        if (s->num_heads < 1 || s->num_kv_heads < 1 || s->num_heads > HC_MODEL_MAX_HEADS ||
            s->num_heads % s->num_kv_heads != 0)
            return hc_err_set(err, HC_EUSAGE, "attention heads %d must be a positive multiple of kv heads %d",
                              s->num_heads, s->num_kv_heads);
        if (s->q_head_dim < 1 || s->v_head_dim < 1 || (s->rope && s->q_head_dim % 2 != 0))
            return hc_err_set(err, HC_EUSAGE, "attention head dims q %d v %d (q must be even with RoPE)", s->q_head_dim,
                              s->v_head_dim);
        if ((long)s->num_heads * s->q_head_dim > HC_MODEL_MAX_CHANNELS ||
            (long)s->num_heads * s->v_head_dim > HC_MODEL_MAX_CHANNELS)
            return hc_err_set(err, HC_EUSAGE, "heads x head dim exceed HC_MODEL_MAX_CHANNELS");
    }
    return 0;
}

int hc_synth_check(const hc_synth_spec *s, hc_err *err)
{
    rspec r;
    resolve(s, &r);
    sblock *blocks;
    int nb;
    int rc = parse_blocks(s->blocks, &blocks, &nb, err);
    if (rc == 0)
        rc = check_resolved(&r, blocks, nb, err);
    sblocks_free(blocks, nb);
    return rc;
}

/* ---- building ---- */

typedef struct gen {
    rng r;
    const rspec *rs;
    int failed;
    int64_t nfloats, nparams;
} gen;

static char *gname(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *gname(gen *g, const char *fmt, ...)
{
    char buf[HC_MODEL_MAX_NAME];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = strdup(buf);
    if (!s)
        g->failed = 1;
    return s;
}

static float *garr(gen *g, size_t n)
{
    float *a = malloc(n ? n * sizeof *a : 1);
    if (!a)
        g->failed = 1;
    return a;
}

/* Second moment of an activation applied to a standard normal: what a following fan-in layer
 * divides by to keep unit variance. */
static double act_m2(int act)
{
    switch (act) {
    case HC_ACT_RELU: return 0.5;
    case HC_ACT_MISH: return 0.55;
    case HC_ACT_SILU: return 0.36;
    }
    return 1.0;
}

/* Weights N(0, gain^2 / fan_in). */
static void fill_normal(gen *g, float *w, size_t n, double stdev)
{
    if (!w)
        return;
    for (size_t i = 0; i < n; i++)
        w[i] = (float)(stdev * rng_normal(&g->r));
}

static void mk_conv(gen *g, hc_conv *c, char *name, int k, int in_c, int out_c, double gain)
{
    c->name = name;
    c->ky = c->kx = k;
    c->in_c = in_c;
    c->out_c = out_c;
    c->dil_y = c->dil_x = 1;
    size_t n = (size_t)k * k * in_c * out_c;
    c->w = garr(g, n);
    fill_normal(g, c->w, n, gain / sqrt((double)k * k * in_c));
    g->nfloats += (int64_t)n;
    g->nparams += (int64_t)n;
}

static void mk_matmul(gen *g, hc_matmul *m, char *name, int in_c, int out_c, double gain)
{
    m->name = name;
    m->in_c = in_c;
    m->out_c = out_c;
    size_t n = (size_t)in_c * out_c;
    m->w = garr(g, n);
    fill_normal(g, m->w, n, gain / sqrt((double)in_c));
    g->nfloats += (int64_t)n;
    g->nparams += (int64_t)n;
}

static void mk_matbias(gen *g, hc_matbias *b, char *name, int c, double stdev)
{
    b->name = name;
    b->c = c;
    b->w = garr(g, (size_t)c);
    fill_normal(g, b->w, (size_t)c, stdev);
    g->nfloats += c;
    g->nparams += c;
}

static void mk_act(gen *g, hc_activation *a, char *name, int kind)
{
    (void)g;
    a->name = name;
    a->kind = (hc_act)kind;
}

/* A batchnorm whose statistics describe an input of variance about var_in, so that its output
 * is roughly standardised, with a mildly random scale and bias. */
static void mk_bn(gen *g, hc_bn *b, char *name, int c, double var_in)
{
    const hc_synth_spec *s = &g->rs->s;
    b->name = name;
    b->c = c;
    b->eps = s->version >= 11 ? 1e-5f : 1e-3f;
    b->has_scale = b->has_bias = 1;
    if (s->vary_bn) {
        static const float eps[3] = {1e-3f, 1e-4f, 1e-5f};
        uint64_t u = rng_next(&g->r);
        b->eps = eps[u % 3];
        b->has_scale = (u >> 8) % 4 != 0;
        b->has_bias = (u >> 16) % 4 != 0;
    }
    size_t n = (size_t)c;
    b->mean = garr(g, n);
    b->var = garr(g, n);
    b->scale = garr(g, n);
    b->bias = garr(g, n);
    b->merged_scale = garr(g, n);
    b->merged_bias = garr(g, n);
    if (g->failed)
        return;
    double sd = sqrt(var_in);
    for (size_t i = 0; i < n; i++) {
        b->mean[i] = (float)(0.2 * sd * rng_normal(&g->r));
        b->var[i] = (float)(var_in * (0.6 + 0.8 * rng_unif(&g->r)));
        b->scale[i] = b->has_scale ? (float)(0.8 + 0.4 * rng_unif(&g->r)) : 1.0f;
        b->bias[i] = b->has_bias ? (float)(0.2 * rng_normal(&g->r)) : 0.0f;
    }
    /* As the reader computes them (float arithmetic, same order). */
    for (size_t i = 0; i < n; i++) {
        b->merged_scale[i] = b->scale[i] / sqrtf(b->var[i] + b->eps);
        b->merged_bias[i] = b->bias[i] - b->merged_scale[i] * b->mean[i];
    }
    g->nfloats += (int64_t)n * (2 + (b->has_scale ? 1 : 0) + (b->has_bias ? 1 : 0));
    g->nparams += (int64_t)n * ((b->has_scale ? 1 : 0) + (b->has_bias ? 1 : 0));
}

static void mk_tfn(gen *g, hc_tf_rmsnorm *nm, char *name, int c)
{
    nm->name = name;
    nm->c = c;
    nm->eps = 1e-6f;
    nm->weight = garr(g, (size_t)c);
    if (nm->weight)
        for (int i = 0; i < c; i++)
            nm->weight[i] = (float)(0.9 + 0.2 * rng_unif(&g->r));
    g->nfloats += c;
    g->nparams += c;
}

/* Residual branch output gain: each block adds about RES_GAIN^2 to the stream's variance. */
#define RES_GAIN 0.6

static void mk_stack(gen *g, hc_block **out, int *n_out, const sblock *sb, int n_sb, int C, int mid_c, double *var,
                     const char *prefix);

static void mk_block(gen *g, hc_block *b, const sblock *sb, int C, int mid_c, double *var, const char *bname)
{
    const rspec *rs = g->rs;
    const hc_synth_spec *s = &rs->s;
    int act = rs->act;
    double ag = 1.0 / sqrt(act_m2(act));
    b->kind = (hc_block_kind)sb->kind;
    b->name = gname(g, "%s", bname);
    switch (sb->kind) {
    case HC_BLOCK_ORDINARY: {
        hc_res_block *o = &b->ordinary;
        mk_bn(g, &o->pre_bn, gname(g, "%s.norm1", bname), C, *var);
        mk_act(g, &o->pre_act, gname(g, "%s.act1", bname), act);
        mk_conv(g, &o->regular_conv, gname(g, "%s.w1", bname), s->kernel, C, mid_c, ag);
        mk_bn(g, &o->mid_bn, gname(g, "%s.norm2", bname), mid_c, 1.0);
        mk_act(g, &o->mid_act, gname(g, "%s.act2", bname), act);
        mk_conv(g, &o->final_conv, gname(g, "%s.w2", bname), s->kernel, mid_c, C, ag * RES_GAIN);
        *var += RES_GAIN * RES_GAIN;
        break;
    }
    case HC_BLOCK_GPOOL: {
        hc_gpool_block *o = &b->gpool;
        int G = s->gpool_c;
        mk_bn(g, &o->pre_bn, gname(g, "%s.norm1", bname), C, *var);
        mk_act(g, &o->pre_act, gname(g, "%s.act1", bname), act);
        mk_conv(g, &o->regular_conv, gname(g, "%s.w1a", bname), s->kernel, C, mid_c, ag);
        mk_conv(g, &o->gpool_conv, gname(g, "%s.w1b", bname), s->kernel, C, G, ag);
        mk_bn(g, &o->gpool_bn, gname(g, "%s.norm1b", bname), G, 1.0);
        mk_act(g, &o->gpool_act, gname(g, "%s.act1b", bname), act);
        /* Pooled features (mean, scaled mean, max) are O(1); their bias adds about 1 to the variance. */
        mk_matmul(g, &o->gpool_to_bias_mul, gname(g, "%s.w1r", bname), 3 * G, mid_c, 1.0);
        mk_bn(g, &o->mid_bn, gname(g, "%s.norm2", bname), mid_c, 2.0);
        mk_act(g, &o->mid_act, gname(g, "%s.act2", bname), act);
        mk_conv(g, &o->final_conv, gname(g, "%s.w2", bname), s->kernel, mid_c, C, ag * RES_GAIN);
        *var += RES_GAIN * RES_GAIN;
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        hc_nbt_block *o = &b->nbt;
        int B = s->bottleneck_c;
        mk_bn(g, &o->pre_bn, gname(g, "%s.normactconvp.norm", bname), C, *var);
        mk_act(g, &o->pre_act, gname(g, "%s.normactconvp.act", bname), act);
        mk_conv(g, &o->pre_conv, gname(g, "%s.normactconvp.conv", bname), 1, C, B, ag);
        double inner = 1.0;
        char pre[HC_MODEL_MAX_NAME];
        snprintf(pre, sizeof pre, "%s.blockstack", bname);
        mk_stack(g, &o->blocks, &o->num_blocks, sb->kids, sb->n, B, B, &inner, pre);
        mk_bn(g, &o->post_bn, gname(g, "%s.normactconvq.norm", bname), B, inner);
        mk_act(g, &o->post_act, gname(g, "%s.normactconvq.act", bname), act);
        mk_conv(g, &o->post_conv, gname(g, "%s.normactconvq.conv", bname), 1, B, C, ag * RES_GAIN);
        *var += RES_GAIN * RES_GAIN;
        break;
    }
    case HC_BLOCK_ATTENTION: {
        hc_attn_block *o = &b->attn;
        o->num_heads = s->num_heads;
        o->num_kv_heads = s->num_kv_heads;
        o->q_head_dim = s->q_head_dim;
        o->v_head_dim = s->v_head_dim;
        o->use_rope = s->rope != HC_SYNTH_ROPE_NONE;
        o->learnable_rope = s->rope == HC_SYNTH_ROPE_LEARNABLE;
        mk_tfn(g, &o->pre_ln, gname(g, "%s.norm1", bname), C);
        /* Query gain > 1 so that attention is not almost uniform over the board. */
        mk_matmul(g, &o->q_proj, gname(g, "%s.q_proj", bname), C, o->num_heads * o->q_head_dim, 2.0);
        mk_matmul(g, &o->k_proj, gname(g, "%s.k_proj", bname), C, o->num_kv_heads * o->q_head_dim, 1.0);
        mk_matmul(g, &o->v_proj, gname(g, "%s.v_proj", bname), C, o->num_kv_heads * o->v_head_dim, 1.0);
        mk_matmul(g, &o->out_proj, gname(g, "%s.out_proj", bname), o->num_heads * o->v_head_dim, C, RES_GAIN);
        if (o->learnable_rope) {
            o->rope_param_name = gname(g, "%s.rope_freqs", bname);
            o->rope_num_kv_heads = o->num_kv_heads;
            o->rope_num_pairs = o->q_head_dim / 2;
            size_t n = (size_t)o->rope_num_kv_heads * o->rope_num_pairs * 2;
            o->rope_freqs = garr(g, n);
            if (o->rope_freqs)
                for (size_t i = 0; i < n; i++)
                    o->rope_freqs[i] = (float)(3.0 * rng_unif(&g->r) - 1.5);
            g->nfloats += (int64_t)n;
            g->nparams += (int64_t)n;
        } else if (o->use_rope) {
            o->rope_param_name = gname(g, "%s.rope_theta", bname);
            o->rope_theta = s->rope_theta;
        }
        *var += RES_GAIN * RES_GAIN;
        break;
    }
    case HC_BLOCK_FFN: {
        hc_ffn_block *o = &b->ffn;
        o->c = C;
        o->ffn_c = s->ffn_c;
        o->use_swiglu = 1;
        mk_tfn(g, &o->pre_ln, gname(g, "%s.norm", bname), C);
        mk_matmul(g, &o->linear1, gname(g, "%s.ffn_linear1", bname), C, o->ffn_c, 1.0);
        mk_matmul(g, &o->linear_gate, gname(g, "%s.ffn_linear_gate", bname), C, o->ffn_c, 1.0);
        /* silu(a) * b of unit normals has second moment about 0.36. */
        mk_matmul(g, &o->linear2, gname(g, "%s.ffn_linear2", bname), o->ffn_c, C, RES_GAIN / 0.6);
        *var += RES_GAIN * RES_GAIN;
        break;
    }
    }
}

static void mk_blocks(gen *g, hc_block *out, int *k, const sblock *sb, int n_sb, int C, int mid_c, double *var,
                      const char *prefix)
{
    for (int i = 0; i < n_sb; i++)
        for (int r = 0; r < sb[i].rep; r++) {
            if (sb[i].kind == SB_GROUP) {
                mk_blocks(g, out, k, sb[i].kids, sb[i].n, C, mid_c, var, prefix);
                continue;
            }
            char bname[HC_MODEL_MAX_NAME];
            snprintf(bname, sizeof bname, "%s.%d", prefix, *k);
            mk_block(g, &out[*k], &sb[i], C, mid_c, var, bname);
            (*k)++;
        }
}

static void mk_stack(gen *g, hc_block **out, int *n_out, const sblock *sb, int n_sb, int C, int mid_c, double *var,
                     const char *prefix)
{
    int n = (int)stack_count(sb, n_sb);
    *out = calloc((size_t)n, sizeof **out);
    if (!*out) {
        g->failed = 1;
        return;
    }
    *n_out = n;
    int k = 0;
    mk_blocks(g, *out, &k, sb, n_sb, C, mid_c, var, prefix);
}

static void mk_trunk(gen *g, hc_net *net, const sblock *sb, int n_sb)
{
    const rspec *rs = g->rs;
    const hc_synth_spec *s = &rs->s;
    hc_trunk *t = &net->trunk;
    int C = s->trunk_c;
    t->name = gname(g, "trunk");
    t->trunk_c = C;
    t->mid_c = s->mid_c;
    t->regular_c = s->mid_c;
    t->dilated_c = 0;
    t->gpool_c = s->gpool_c;
    t->norm_kind = s->tip;
    /* Binary input planes have a mean square of roughly 0.2: a gain of 2 gives about unit variance. */
    mk_conv(g, &t->initial_conv, gname(g, "model.conv_spatial"), s->input_kernel, net->num_input_c, C, 2.0);
    mk_matmul(g, &t->initial_matmul, gname(g, "model.linear_global"), net->num_input_global_c, C, 1.5);
    double var = 1.0;
    if (net->meta_encoder_version > 0) {
        hc_meta_encoder *m = &t->meta;
        t->has_meta_encoder = 1;
        m->name = gname(g, "model.sgf_metadata_encoder");
        m->version = net->meta_encoder_version;
        m->num_input_c = net->num_input_meta_c;
        double ag = 1.0 / sqrt(act_m2(rs->act));
        /* The metadata row is sparse (mostly zeros and a few ones). */
        mk_matmul(g, &m->mul1, gname(g, "model.sgf_metadata_encoder.mul1"), m->num_input_c, s->meta_c, 3.0);
        mk_matbias(g, &m->bias1, gname(g, "model.sgf_metadata_encoder.bias1"), s->meta_c, 0.2);
        mk_act(g, &m->act1, gname(g, "model.sgf_metadata_encoder.act1"), rs->act);
        mk_matmul(g, &m->mul2, gname(g, "model.sgf_metadata_encoder.mul2"), s->meta_c, s->meta_c, ag);
        mk_matbias(g, &m->bias2, gname(g, "model.sgf_metadata_encoder.bias2"), s->meta_c, 0.2);
        mk_act(g, &m->act2, gname(g, "model.sgf_metadata_encoder.act2"), rs->act);
        mk_matmul(g, &m->mul3, gname(g, "model.sgf_metadata_encoder.mul3"), s->meta_c, C, ag * RES_GAIN);
        var += RES_GAIN * RES_GAIN;
    }
    mk_stack(g, &t->blocks, &t->num_blocks, sb, n_sb, C, s->mid_c, &var, "model.blocks");
    if (t->norm_kind == HC_TRUNK_NORM_BN) {
        mk_bn(g, &t->tip_bn, gname(g, "model.norm_trunkfinal"), C, var);
    } else {
        hc_rmsnorm *r = &t->tip_rmsnorm;
        r->name = gname(g, "model.norm_trunkfinal");
        r->c = C;
        r->eps = 1e-6f;
        r->spatial = s->tip_rms_spatial != 0;
        r->cgroup_size = 0;
        r->gamma = garr(g, (size_t)C);
        r->beta = garr(g, (size_t)C);
        if (r->gamma && r->beta)
            for (int i = 0; i < C; i++) {
                r->gamma[i] = (float)(0.8 + 0.4 * rng_unif(&g->r));
                r->beta[i] = (float)(0.2 * rng_normal(&g->r));
            }
        g->nfloats += 2 * (int64_t)C;
        g->nparams += 2 * (int64_t)C;
    }
    mk_act(g, &t->tip_act, gname(g, "model.act_trunkfinal"), rs->act);
}

static void mk_policy(gen *g, hc_net *net)
{
    const rspec *rs = g->rs;
    const hc_synth_spec *s = &rs->s;
    hc_policy_head *p = &net->policy;
    int C = s->trunk_c, P1 = s->p1_c, G1 = s->g1_c, PC = rs->policy_c;
    double ag = 1.0 / sqrt(act_m2(rs->act));
    p->name = gname(g, "model.policy_head");
    p->policy_out_c = PC;
    mk_conv(g, &p->p1_conv, gname(g, "model.policy_head.conv1p"), 1, C, P1, ag);
    mk_conv(g, &p->g1_conv, gname(g, "model.policy_head.conv1g"), 1, C, G1, ag);
    mk_bn(g, &p->g1_bn, gname(g, "model.policy_head.biasg"), G1, 1.0);
    mk_act(g, &p->g1_act, gname(g, "model.policy_head.actg"), rs->act);
    mk_matmul(g, &p->gpool_to_bias_mul, gname(g, "model.policy_head.linear_g"), 3 * G1, P1, 1.0);
    mk_bn(g, &p->p1_bn, gname(g, "model.policy_head.bias2"), P1, 2.0);
    mk_act(g, &p->p1_act, gname(g, "model.policy_head.act2"), rs->act);
    /* Logits with a spread of about 2 nats over the board: a peaked but far from one-hot policy. */
    mk_conv(g, &p->p2_conv, gname(g, "model.policy_head.conv2p"), 1, P1, PC, 4.5 * ag);
    /* Activations share a positive mean that weights of random sign turn into a board-wide
     * logit offset against the pass logit (easily -10 nats in deep or transformer trunks, where
     * the features vary little across the board): centring each output channel's weights over
     * the input channels removes the shared part. */
    if (p->p2_conv.w)
        for (int oc = 0; oc < PC; oc++) {
            float *w = p->p2_conv.w + (size_t)oc * P1;
            double mean = 0;
            for (int ic = 0; ic < P1; ic++)
                mean += w[ic];
            mean /= P1;
            for (int ic = 0; ic < P1; ic++)
                w[ic] = (float)(w[ic] - mean);
        }
    if (s->version >= 15) {
        p->has_pass_mlp = 1;
        /* Pooled maxima can be large: keep the pass logit from dominating the board's. */
        mk_matmul(g, &p->gpool_to_pass_mul, gname(g, "model.policy_head.linear_pass"), 3 * G1, s->pass_c, 0.5);
        mk_matbias(g, &p->gpool_to_pass_bias, gname(g, "model.policy_head.linear_pass_bias"), s->pass_c, 0.2);
        mk_act(g, &p->pass_act, gname(g, "model.policy_head.act_pass"), rs->pass_act);
        mk_matmul(g, &p->gpool_to_pass_mul2, gname(g, "model.policy_head.linear_pass2"), s->pass_c, PC,
                  0.5 / sqrt(act_m2(rs->pass_act)));
    } else {
        mk_matmul(g, &p->gpool_to_pass_mul, gname(g, "model.policy_head.linear_pass"), 3 * G1, PC, 0.5);
    }
}

static void mk_value(gen *g, hc_net *net)
{
    const rspec *rs = g->rs;
    const hc_synth_spec *s = &rs->s;
    hc_value_head *h = &net->value;
    int C = s->trunk_c, V1 = s->v1_c, V2 = s->v2_c;
    double ag = 1.0 / sqrt(act_m2(rs->act));
    h->name = gname(g, "model.value_head");
    mk_conv(g, &h->v1_conv, gname(g, "model.value_head.conv1"), 1, C, V1, ag);
    mk_bn(g, &h->v1_bn, gname(g, "model.value_head.bias1"), V1, 1.0);
    mk_act(g, &h->v1_act, gname(g, "model.value_head.act1"), rs->act);
    /* The pooled value features are board means, which vary little between positions: a large
     * gain spreads them. */
    mk_matmul(g, &h->v2_mul, gname(g, "model.value_head.linear2"), 3 * V1, V2, 2.0);
    mk_matbias(g, &h->v2_bias, gname(g, "model.value_head.bias2"), V2, 0.2);
    mk_act(g, &h->v2_act, gname(g, "model.value_head.act2"), rs->act);
    mk_matmul(g, &h->v3_mul, gname(g, "model.value_head.linear_valuehead"), V2, 3, ag);
    mk_matbias(g, &h->v3_bias, gname(g, "model.value_head.bias_valuehead"), 3, 0.3);
    mk_matmul(g, &h->sv3_mul, gname(g, "model.value_head.linear_miscvaluehead"), V2, rs->score_c, 0.5 * ag);
    mk_matbias(g, &h->sv3_bias, gname(g, "model.value_head.bias_miscvaluehead"), rs->score_c, 0.2);
    mk_conv(g, &h->ownership_conv, gname(g, "model.value_head.conv_ownership"), 1, V1, 1, ag);
}

static void default_name(const rspec *rs, int nblocks, char *out, size_t n)
{
    const hc_synth_spec *s = &rs->s;
    if (s->name[0]) {
        snprintf(out, n, "%s", s->name);
        return;
    }
    snprintf(out, n, "synth-v%d-b%dc%d-s%llu", s->version, nblocks, s->trunk_c, (unsigned long long)s->seed);
}

hc_net *hc_synth_net(const hc_synth_spec *spec, hc_err *err)
{
    rspec rs;
    resolve(spec, &rs);
    sblock *sb = NULL;
    int nsb = 0;
    if (parse_blocks(rs.s.blocks, &sb, &nsb, err) < 0 || check_resolved(&rs, sb, nsb, err) < 0) {
        sblocks_free(sb, nsb);
        return NULL;
    }
    hc_net *net = calloc(1, sizeof *net);
    if (!net) {
        sblocks_free(sb, nsb);
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return NULL;
    }
    gen g = {0};
    g.rs = &rs;
    /* Independent of the spec's other fields: the same seed gives the same stream start. */
    rng_seed(&g.r, rs.s.seed);
    const hc_synth_spec *s = &rs.s;
    int v = s->version;
    char name[HC_SYNTH_NAME_MAX + 1];
    default_name(&rs, stack_count(sb, nsb), name, sizeof name);
    net->name = gname(&g, "%s", name);
    net->model_version = v;
    net->input_version = hc_model_input_version(v);
    net->num_input_c = hc_model_num_spatial_features(v);
    net->num_input_global_c = hc_model_num_global_features(v);
    net->meta_encoder_version = v >= 15 && s->meta ? 1 : 0;
    net->num_input_meta_c = net->meta_encoder_version ? 192 : 0;
    net->prefer_pass_alive_under_suicide = v >= 15 && s->prefer_pass_alive ? 1 : 0;
    net->binary_floats = 1;
    hc_postprocess_set_defaults(&net->post);
    if (v >= 13)
        net->post.shortterm_score_error_multiplier = 150.0;
    mk_trunk(&g, net, sb, nsb);
    mk_policy(&g, net);
    mk_value(&g, net);
    sblocks_free(sb, nsb);
    if (g.failed) {
        hc_net_free(net);
        hc_err_set(err, HC_ENOMEM, "out of memory building a synthetic net");
        return NULL;
    }
    hc_net_derive_head_counts(net);
    net->num_floats = g.nfloats;
    net->num_params = g.nparams;
    if (s->symmetric)
        hc_synth_symmetrize(net);
    return net;
}

int hc_synth_write(const hc_synth_spec *s, const char *path, int binary, hc_err *err)
{
    hc_net *net = hc_synth_net(s, err);
    if (!net)
        return -1;
    int rc = hc_net_write(net, path, binary, err);
    hc_net_free(net);
    return rc;
}

/* ---- symmetric kernels ---- */

static void sym_conv(hc_conv *c)
{
    if (!c->w || c->ky != c->kx || c->ky == 1)
        return;
    int k = c->ky;
    float tmp[HC_MODEL_MAX_KERNEL * HC_MODEL_MAX_KERNEL];
    for (size_t f = 0; f < (size_t)c->in_c * c->out_c; f++) {
        float *w = c->w + f * (size_t)k * k;
        for (int y = 0; y < k; y++)
            for (int x = 0; x < k; x++) {
                double acc = 0;
                for (int sym = 0; sym < 8; sym++) {
                    int yy = y, xx = x;
                    if (sym & 1)
                        yy = k - 1 - yy;
                    if (sym & 2)
                        xx = k - 1 - xx;
                    if (sym & 4) {
                        int t = yy;
                        yy = xx;
                        xx = t;
                    }
                    acc += w[yy * k + xx];
                }
                tmp[y * k + x] = (float)(acc / 8.0);
            }
        memcpy(w, tmp, (size_t)k * k * sizeof *w);
    }
}

static void sym_stack(hc_block *b, int n)
{
    if (!b)
        return;
    for (int i = 0; i < n; i++) {
        switch (b[i].kind) {
        case HC_BLOCK_ORDINARY:
            sym_conv(&b[i].ordinary.regular_conv);
            sym_conv(&b[i].ordinary.final_conv);
            break;
        case HC_BLOCK_GPOOL:
            sym_conv(&b[i].gpool.regular_conv);
            sym_conv(&b[i].gpool.gpool_conv);
            sym_conv(&b[i].gpool.final_conv);
            break;
        case HC_BLOCK_NESTED_BOTTLENECK:
            sym_conv(&b[i].nbt.pre_conv);
            sym_stack(b[i].nbt.blocks, b[i].nbt.num_blocks);
            sym_conv(&b[i].nbt.post_conv);
            break;
        default:
            break;
        }
    }
}

void hc_synth_symmetrize(hc_net *net)
{
    sym_conv(&net->trunk.initial_conv);
    sym_stack(net->trunk.blocks, net->trunk.num_blocks);
    sym_conv(&net->policy.p1_conv);
    sym_conv(&net->policy.g1_conv);
    sym_conv(&net->policy.p2_conv);
    sym_conv(&net->value.v1_conv);
    sym_conv(&net->value.ownership_conv);
}
