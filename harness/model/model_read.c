/* Reader for KataGo model files (desc.cpp of KataGo v1.17.2 is the specification).
 *
 * The file is a sequence of whitespace-separated tokens; each weight array is either text
 * floats or "@BIN@" followed by raw little-endian float32. Which one is decided at the first
 * weight array and then required everywhere. Every channel count is checked against what the
 * previous layers imply as soon as it is read, before anything is allocated, so errors point
 * at the offending field. */
#include "harness/model/model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RD_BUF = 1 << 16, RD_CHUNK = 4096 };

typedef struct rd {
    hc_istream *in;
    const char *fname;
    hc_err *err;
    unsigned char buf[RD_BUF];
    size_t pos, len;
    uint64_t base;           /* stream offset of buf[0] */
    int eof;
    int binary;              /* -1 until the first weight array */
    int version;
    const char *layer;       /* name of the layer being read, for messages */
    uint64_t tok_off;        /* offset where the last token started */
    char tok[HC_MODEL_MAX_NAME + 2];
    int64_t nfloats, nparams;
    int depth;
    float *scratch; /* a conv's weights in the file's order, before conv_permute */
    size_t scratch_cap;
} rd;

static uint64_t rd_off(const rd *r) { return r->base + r->pos; }

static int rd_fail(rd *r, int code, uint64_t off, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int rd_fail(rd *r, int code, uint64_t off, const char *field, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hc_err_set(r->err, code, "%s: %s %llu: layer %s: %s: %s", r->fname, hc_istream_offset_word(r->in),
                      (unsigned long long)off,
                      r->layer ? r->layer : "(model header)", field, msg);
}

/* Next byte, -1 at EOF, -2 on a read error (err set). */
static int rd_getc(rd *r)
{
    if (r->pos == r->len) {
        if (r->eof)
            return -1;
        r->base += r->len;
        r->pos = r->len = 0;
        long n = hc_istream_read_some(r->in, r->buf, sizeof r->buf, r->err);
        if (n < 0)
            return -2;
        if (n == 0) {
            r->eof = 1;
            return -1;
        }
        r->len = (size_t)n;
    }
    return r->buf[r->pos++];
}

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Skips whitespace; returns the next byte without consuming it (-1 EOF, -2 error). */
static int rd_peek_nonspace(rd *r)
{
    for (;;) {
        int c = rd_getc(r);
        if (c < 0)
            return c;
        if (!is_space(c)) {
            r->pos--; /* rd_getc just returned buf[pos-1], so this is always in the buffer */
            return c;
        }
    }
}

/* Reads one token into r->tok. */
static int rd_token(rd *r, const char *field)
{
    int c = rd_peek_nonspace(r);
    if (c == -2)
        return -1;
    r->tok_off = rd_off(r);
    if (c == -1)
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "unexpected end of file");
    size_t n = 0;
    for (;;) {
        c = rd_getc(r);
        if (c == -2)
            return -1;
        if (c == -1)
            break;
        if (is_space(c)) {
            r->pos--;
            break;
        }
        if (n >= HC_MODEL_MAX_NAME)
            return rd_fail(r, HC_ELIMIT, r->tok_off, field, "token longer than the limit of %d bytes (HC_MODEL_MAX_NAME)",
                           HC_MODEL_MAX_NAME);
        r->tok[n++] = (char)c;
    }
    r->tok[n] = '\0';
    return 0;
}

static int rd_name(rd *r, char **out, const char *field)
{
    if (rd_token(r, field) < 0)
        return -1;
    if (r->tok[0] == '@')
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "expected a name, found a binary float block");
    *out = strdup(r->tok);
    if (!*out)
        return hc_err_set(r->err, HC_ENOMEM, "%s: out of memory", r->fname);
    return 0;
}

static int rd_int(rd *r, const char *field, long lo, long hi, int code_hi, const char *limit_name, int *out)
{
    if (rd_token(r, field) < 0)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(r->tok, &end, 10);
    if (end == r->tok || *end != '\0' || errno == ERANGE)
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "expected an integer, found \"%.40s\"", r->tok);
    if (v < lo)
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "%ld is below the minimum %ld", v, lo);
    if (v > hi) {
        if (code_hi == HC_ELIMIT)
            return rd_fail(r, HC_ELIMIT, r->tok_off, field, "%ld exceeds the limit %s = %ld", v, limit_name, hi);
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "%ld is above the maximum %ld", v, hi);
    }
    *out = (int)v;
    return 0;
}

/* A count limited by a sanity limit. */
static int rd_count(rd *r, const char *field, long lo, long limit, const char *limit_name, int *out)
{
    return rd_int(r, field, lo, limit, HC_ELIMIT, limit_name, out);
}

static int rd_channels(rd *r, const char *field, int *out)
{
    return rd_count(r, field, 1, HC_MODEL_MAX_CHANNELS, "HC_MODEL_MAX_CHANNELS", out);
}

static int rd_flag(rd *r, const char *field, int *out)
{
    return rd_int(r, field, 0, 1, HC_EFORMAT, NULL, out);
}

static int rd_zero(rd *r, const char *field)
{
    int v;
    if (rd_int(r, field, -2147483647L, 2147483647L, HC_EFORMAT, NULL, &v) < 0)
        return -1;
    if (v != 0)
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "unknown/unsupported option value %d (must be 0)", v);
    return 0;
}

/* One finite number token: a float (strtof, rounded once) into *f when f is given, else a double. */
static int rd_number(rd *r, const char *field, double *d, float *f)
{
    if (rd_token(r, field) < 0)
        return -1;
    char *end;
    double v = f ? (double)strtof(r->tok, &end) : strtod(r->tok, &end);
    if (end == r->tok || *end != '\0')
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "expected a number, found \"%.40s\"", r->tok);
    if (!isfinite(v))
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "value %.40s is not finite", r->tok);
    if (f)
        *f = (float)v;
    else
        *d = v;
    return 0;
}

static int rd_double(rd *r, const char *field, double *out) { return rd_number(r, field, out, NULL); }
static int rd_float(rd *r, const char *field, float *out) { return rd_number(r, field, NULL, out); }

static int rd_expect(rd *r, uint64_t off, const char *field, int got, long want, const char *what)
{
    if (got != want)
        return rd_fail(r, HC_EFORMAT, off, field, "%d != %s (%ld)", got, what, want);
    return 0;
}

/* The prologue of the layers that are a name and a channel count: "<what> name", then
 * "<what> channels" checked against want_c (want_c <= 0: nothing implied). */
static int rd_layer_head(rd *r, char **name, const char *what, int *c, int want_c, const char *want_what)
{
    char field[64];
    snprintf(field, sizeof field, "%s name", what);
    if (rd_name(r, name, field) < 0)
        return -1;
    r->layer = *name;
    snprintf(field, sizeof field, "%s channels", what);
    if (rd_channels(r, field, c) < 0)
        return -1;
    if (want_c > 0 && rd_expect(r, r->tok_off, field, *c, want_c, want_what) < 0)
        return -1;
    return 0;
}

/* An RMSNorm epsilon: KataGo's writers only produce values in (0, 1]. */
static int rd_norm_eps(rd *r, const char *field, float *eps)
{
    if (rd_float(r, field, eps) < 0)
        return -1;
    if (!(*eps > 0) || *eps > 1.0f)
        return rd_fail(r, HC_EFORMAT, r->tok_off, field, "%g is not in (0, 1]", (double)*eps);
    return 0;
}

/* Conv layout: file index (y, x, ic, oc), oc fastest -> memory (oc, ic, y, x), x fastest. */
typedef struct conv_map {
    int ky, kx, in_c, out_c;
} conv_map;

/* A conv's weights from the file's order (y, x, ic, oc) to memory's (oc, ic, y, x): read in
 * order, written with a stride (blocking it in cache-sized tiles measured slower). */
static void conv_permute(float *w, const float *s, const conv_map *m)
{
    size_t kk = (size_t)m->ky * m->kx, ic_n = (size_t)m->in_c, oc_n = (size_t)m->out_c;
    for (size_t yx = 0; yx < kk; yx++)
        for (size_t ic = 0; ic < ic_n; ic++) {
            float *d = w + ic * kk + yx;
            for (size_t oc = 0; oc < oc_n; oc++, s++)
                d[oc * ic_n * kk] = *s;
        }
}

static inline uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* k little-endian floats from p into dst; the index of the first that is not finite, or k. The
 * copy and the check run in wide registers where the compiler can. */
static size_t bin_copy(float *dst, const unsigned char *p, size_t k)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst, p, 4 * k);
#else
    for (size_t j = 0; j < k; j++) {
        uint32_t u = le32(p + 4 * j);
        memcpy(dst + j, &u, 4);
    }
#endif
    uint32_t bad = 0; /* bit 31 set by an all-ones exponent (infinite or NaN), by no other */
    for (size_t j = 0; j < k; j++) {
        uint32_t u;
        memcpy(&u, dst + j, 4);
        bad |= (u & 0x7f800000u) + 0x00800000u;
    }
    if (!(bad & 0x80000000u))
        return k;
    for (size_t j = 0; j < k; j++)
        if (!isfinite(dst[j]))
            return j;
    return k;
}

/* Reads n floats of one weight array into a new array (a conv's permuted by map when given). */
static int rd_floats(rd *r, size_t n, const conv_map *map, const char *field, float **out)
{
    *out = NULL;
    if (n > HC_MODEL_MAX_LAYER_FLOATS)
        return rd_fail(r, HC_ELIMIT, rd_off(r), field, "%zu floats exceed the limit HC_MODEL_MAX_LAYER_FLOATS = %u", n,
                       (unsigned)HC_MODEL_MAX_LAYER_FLOATS);
    int c = rd_peek_nonspace(r);
    if (c == -2)
        return -1;
    uint64_t start = rd_off(r);
    if (c == -1)
        return rd_fail(r, HC_EFORMAT, start, field, "%zu weights expected, got end of file", n);
    int is_bin = (c == '@');
    if (r->binary < 0)
        r->binary = is_bin;
    else if (r->binary != is_bin)
        return rd_fail(r, HC_EFORMAT, start, field, r->binary ? "expected a @BIN@ float block, found \"%c\"" :
                       "found a binary float block in a file of text floats (first char '%c')", c);
    float *w = malloc(n ? n * sizeof *w : 1);
    if (!w)
        return hc_err_set(r->err, HC_ENOMEM, "%s: %s %llu: layer %s: %s: out of memory for %zu floats", r->fname,
                          hc_istream_offset_word(r->in),
                          (unsigned long long)start, r->layer, field, n);
    float *dst = w; /* the file's order: w itself, or the scratch a conv is permuted from */
    if (map) {
        if (n > r->scratch_cap) {
            free(r->scratch);
            r->scratch_cap = 0;
            if (!(r->scratch = malloc(n * sizeof *r->scratch))) {
                free(w);
                return hc_err_set(r->err, HC_ENOMEM, "%s: %s %llu: layer %s: %s: out of memory for %zu floats",
                                  r->fname, hc_istream_offset_word(r->in), (unsigned long long)start, r->layer, field, n);
            }
            r->scratch_cap = n;
        }
        dst = r->scratch;
    }
    if (is_bin) {
        const char magic[] = "@BIN@";
        for (int i = 0; i < 5; i++) {
            int b = rd_getc(r);
            if (b == -2)
                goto fail_quiet;
            if (b != magic[i]) {
                rd_fail(r, HC_EFORMAT, start, field, "malformed binary block header (expected \"@BIN@\")");
                goto fail_quiet;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        float v;
        uint64_t voff;
        if (is_bin && r->len - r->pos >= 8) {
            /* Fast path: every whole float already in the buffer. */
            size_t k = (r->len - r->pos) / 4;
            if (k > n - i)
                k = n - i;
            size_t j = bin_copy(dst + i, r->buf + r->pos, k);
            if (j < k) {
                rd_fail(r, HC_EFORMAT, r->base + r->pos + 4 * j, field, "weight %zu of %zu is %s", i + j, n,
                        isnan(dst[i + j]) ? "NaN" : "infinite");
                goto fail_quiet;
            }
            r->pos += 4 * k;
            i += k - 1;
            continue;
        }
        if (is_bin) {
            unsigned char b[4];
            voff = rd_off(r);
            if (r->len - r->pos >= 4) {
                memcpy(b, r->buf + r->pos, 4);
                r->pos += 4;
            } else {
                for (int k = 0; k < 4; k++) {
                    int ch = rd_getc(r);
                    if (ch == -2)
                        goto fail_quiet;
                    if (ch == -1) {
                        rd_fail(r, HC_EFORMAT, voff, field, "%zu weights expected, got end of file after %zu", n, i);
                        goto fail_quiet;
                    }
                    b[k] = (unsigned char)ch;
                }
            }
            uint32_t u = le32(b);
            memcpy(&v, &u, 4);
        } else {
            if (rd_peek_nonspace(r) == -1) {
                rd_fail(r, HC_EFORMAT, rd_off(r), field, "%zu weights expected, got end of file after %zu", n, i);
                goto fail_quiet;
            }
            if (rd_token(r, field) < 0)
                goto fail_quiet;
            voff = r->tok_off;
            char *end;
            v = strtof(r->tok, &end);
            if (end == r->tok || *end != '\0') {
                rd_fail(r, HC_EFORMAT, voff, field, "weight %zu of %zu: expected a number, found \"%.40s\"", i, n, r->tok);
                goto fail_quiet;
            }
        }
        if (!isfinite(v)) {
            rd_fail(r, HC_EFORMAT, voff, field, "weight %zu of %zu is %s", i, n, isnan(v) ? "NaN" : "infinite");
            goto fail_quiet;
        }
        dst[i] = v;
    }
    if (is_bin) {
        /* Writers end every block with a newline. Anything else means the declared shape
         * and the data disagree (the read ran into the next header or stopped short). */
        uint64_t end_off = rd_off(r);
        int next = rd_getc(r);
        if (next == -2)
            goto fail_quiet;
        if (next >= 0) {
            r->pos--;
            if (!is_space(next)) {
                rd_fail(r, HC_EFORMAT, end_off, field,
                        "the binary block of %zu floats starting at offset %llu is followed by byte 0x%02x, not a "
                        "newline: the declared shape does not match the data",
                        n, (unsigned long long)start, next);
                goto fail_quiet;
            }
        }
    }
    if (map)
        conv_permute(w, dst, map);
    r->nfloats += (int64_t)n;
    *out = w;
    return 0;
fail_quiet:
    free(w);
    return -1;
}

/* ---- layers ---- */

static int rd_conv(rd *r, hc_conv *c, int want_in, int want_out, const char *want_what)
{
    if (rd_name(r, &c->name, "conv name") < 0)
        return -1;
    r->layer = c->name;
    if (rd_count(r, "conv kernel y", 1, HC_MODEL_MAX_KERNEL, "HC_MODEL_MAX_KERNEL", &c->ky) < 0 ||
        rd_count(r, "conv kernel x", 1, HC_MODEL_MAX_KERNEL, "HC_MODEL_MAX_KERNEL", &c->kx) < 0)
        return -1;
    if (rd_channels(r, "conv in channels", &c->in_c) < 0)
        return -1;
    if (want_in > 0 && rd_expect(r, r->tok_off, "conv in channels", c->in_c, want_in, want_what) < 0)
        return -1;
    if (rd_channels(r, "conv out channels", &c->out_c) < 0)
        return -1;
    if (want_out > 0 && rd_expect(r, r->tok_off, "conv out channels", c->out_c, want_out, "the expected output channels") < 0)
        return -1;
    if (rd_count(r, "conv dilation y", 1, HC_MODEL_MAX_DILATION, "HC_MODEL_MAX_DILATION", &c->dil_y) < 0 ||
        rd_count(r, "conv dilation x", 1, HC_MODEL_MAX_DILATION, "HC_MODEL_MAX_DILATION", &c->dil_x) < 0)
        return -1;
    if (c->ky % 2 != 1 || c->kx % 2 != 1)
        return rd_fail(r, HC_EFORMAT, r->tok_off, "conv kernel", "kernel %dx%d: sizes must be odd", c->ky, c->kx);
    conv_map map = {c->ky, c->kx, c->in_c, c->out_c};
    size_t n = (size_t)c->ky * c->kx * c->in_c * c->out_c;
    if (rd_floats(r, n, &map, "conv weights", &c->w) < 0)
        return -1;
    r->nparams += (int64_t)n;
    return 0;
}

static int rd_bn(rd *r, hc_bn *b, int want_c, const char *want_what)
{
    if (rd_layer_head(r, &b->name, "batchnorm", &b->c, want_c, want_what) < 0)
        return -1;
    if (rd_float(r, "batchnorm epsilon", &b->eps) < 0)
        return -1;
    if (!(b->eps > 0))
        return rd_fail(r, HC_EFORMAT, r->tok_off, "batchnorm epsilon", "%g is not positive", (double)b->eps);
    if (rd_flag(r, "batchnorm has_scale", &b->has_scale) < 0 || rd_flag(r, "batchnorm has_bias", &b->has_bias) < 0)
        return -1;
    size_t n = (size_t)b->c;
    if (rd_floats(r, n, NULL, "batchnorm mean", &b->mean) < 0 || rd_floats(r, n, NULL, "batchnorm variance", &b->var) < 0)
        return -1;
    if (b->has_scale) {
        if (rd_floats(r, n, NULL, "batchnorm scale", &b->scale) < 0)
            return -1;
    }
    if (b->has_bias) {
        if (rd_floats(r, n, NULL, "batchnorm bias", &b->bias) < 0)
            return -1;
    }
    if (!b->scale && (b->scale = malloc(n * sizeof(float))) != NULL)
        for (size_t i = 0; i < n; i++)
            b->scale[i] = 1.0f;
    if (!b->bias)
        b->bias = calloc(n, sizeof(float));
    b->merged_scale = malloc(n * sizeof(float));
    b->merged_bias = malloc(n * sizeof(float));
    if (!b->scale || !b->bias || !b->merged_scale || !b->merged_bias)
        return hc_err_set(r->err, HC_ENOMEM, "%s: layer %s: out of memory", r->fname, b->name);
    for (size_t i = 0; i < n; i++) {
        b->merged_scale[i] = b->scale[i] / sqrtf(b->var[i] + b->eps);
        b->merged_bias[i] = b->bias[i] - b->merged_scale[i] * b->mean[i];
    }
    r->nparams += (int64_t)(b->has_scale ? n : 0) + (int64_t)(b->has_bias ? n : 0);
    return 0;
}

static int rd_act(rd *r, hc_activation *a)
{
    if (rd_name(r, &a->name, "activation name") < 0)
        return -1;
    r->layer = a->name;
    a->kind = HC_ACT_RELU;
    if (r->version >= 11) {
        if (rd_token(r, "activation kind") < 0)
            return -1;
        if (strcmp(r->tok, "ACTIVATION_IDENTITY") == 0)
            a->kind = HC_ACT_IDENTITY;
        else if (strcmp(r->tok, "ACTIVATION_RELU") == 0)
            a->kind = HC_ACT_RELU;
        else if (strcmp(r->tok, "ACTIVATION_MISH") == 0)
            a->kind = HC_ACT_MISH;
        else if (strcmp(r->tok, "ACTIVATION_SILU") == 0)
            a->kind = HC_ACT_SILU;
        else
            return rd_fail(r, HC_EFORMAT, r->tok_off, "activation kind", "unknown activation \"%.60s\"", r->tok);
    }
    return 0;
}

static int rd_matmul(rd *r, hc_matmul *m, int want_in, const char *want_in_what, int want_out, const char *want_out_what)
{
    if (rd_name(r, &m->name, "matmul name") < 0)
        return -1;
    r->layer = m->name;
    if (rd_channels(r, "matmul in channels", &m->in_c) < 0)
        return -1;
    if (want_in > 0 && rd_expect(r, r->tok_off, "matmul in channels", m->in_c, want_in, want_in_what) < 0)
        return -1;
    if (rd_channels(r, "matmul out channels", &m->out_c) < 0)
        return -1;
    if (want_out > 0 && rd_expect(r, r->tok_off, "matmul out channels", m->out_c, want_out, want_out_what) < 0)
        return -1;
    size_t n = (size_t)m->in_c * m->out_c;
    if (rd_floats(r, n, NULL, "matmul weights", &m->w) < 0)
        return -1;
    r->nparams += (int64_t)n;
    return 0;
}

static int rd_matbias(rd *r, hc_matbias *b, int want_c, const char *want_what)
{
    if (rd_layer_head(r, &b->name, "matbias", &b->c, want_c, want_what) < 0)
        return -1;
    if (rd_floats(r, (size_t)b->c, NULL, "matbias weights", &b->w) < 0)
        return -1;
    r->nparams += b->c;
    return 0;
}

static int rd_rmsnorm(rd *r, hc_rmsnorm *n, int want_c)
{
    if (rd_layer_head(r, &n->name, "rmsnorm", &n->c, want_c, "the trunk channels") < 0 ||
        rd_norm_eps(r, "rmsnorm epsilon", &n->eps) < 0)
        return -1;
    if (rd_int(r, "rmsnorm spatial", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &n->spatial) < 0)
        return -1;
    n->spatial = n->spatial != 0;
    if (rd_int(r, "rmsnorm cgroup size", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &n->cgroup_size) < 0)
        return -1;
    if (n->cgroup_size != 0)
        return rd_fail(r, HC_EFORMAT, r->tok_off, "rmsnorm cgroup size", "%d != 0: grouped RMSNorm is not supported",
                       n->cgroup_size);
    if (rd_floats(r, (size_t)n->c, NULL, "rmsnorm gamma", &n->gamma) < 0 ||
        rd_floats(r, (size_t)n->c, NULL, "rmsnorm beta", &n->beta) < 0)
        return -1;
    r->nparams += 2 * (int64_t)n->c;
    return 0;
}

static int rd_tf_rmsnorm(rd *r, hc_tf_rmsnorm *n, int want_c)
{
    if (rd_layer_head(r, &n->name, "transformer rmsnorm", &n->c, want_c, "the block's channels") < 0 ||
        rd_norm_eps(r, "transformer rmsnorm epsilon", &n->eps) < 0)
        return -1;
    if (rd_floats(r, (size_t)n->c, NULL, "transformer rmsnorm weight", &n->weight) < 0)
        return -1;
    r->nparams += n->c;
    return 0;
}

/* ---- blocks ---- */

static int rd_stack(rd *r, int num_blocks, int chans, hc_block **out);

static int rd_ordinary(rd *r, hc_res_block *b, int C)
{
    if (rd_bn(r, &b->pre_bn, C, "the stack's channels") < 0 || rd_act(r, &b->pre_act) < 0 ||
        rd_conv(r, &b->regular_conv, C, 0, "the stack's channels") < 0 ||
        rd_bn(r, &b->mid_bn, b->regular_conv.out_c, "regular_conv out channels") < 0 || rd_act(r, &b->mid_act) < 0 ||
        rd_conv(r, &b->final_conv, b->mid_bn.c, C, "mid_bn channels") < 0)
        return -1;
    return 0;
}

static int rd_gpool(rd *r, hc_gpool_block *b, int C)
{
    if (rd_bn(r, &b->pre_bn, C, "the stack's channels") < 0 || rd_act(r, &b->pre_act) < 0 ||
        rd_conv(r, &b->regular_conv, C, 0, "the stack's channels") < 0 ||
        rd_conv(r, &b->gpool_conv, C, 0, "the stack's channels") < 0 ||
        rd_bn(r, &b->gpool_bn, b->gpool_conv.out_c, "gpool_conv out channels") < 0 || rd_act(r, &b->gpool_act) < 0 ||
        rd_matmul(r, &b->gpool_to_bias_mul, 3 * b->gpool_bn.c, "3 * gpool_bn channels", b->regular_conv.out_c,
                  "regular_conv out channels") < 0 ||
        rd_bn(r, &b->mid_bn, b->regular_conv.out_c, "regular_conv out channels") < 0 || rd_act(r, &b->mid_act) < 0 ||
        rd_conv(r, &b->final_conv, b->mid_bn.c, C, "mid_bn channels") < 0)
        return -1;
    return 0;
}

static int rd_nbt(rd *r, hc_nbt_block *b, int C)
{
    if (rd_count(r, "nested block count", 1, HC_MODEL_MAX_BLOCKS, "HC_MODEL_MAX_BLOCKS", &b->num_blocks) < 0)
        return -1;
    if (r->depth >= HC_MODEL_MAX_NESTING)
        return rd_fail(r, HC_ELIMIT, r->tok_off, "nested block count", "nesting deeper than HC_MODEL_MAX_NESTING = %d",
                       HC_MODEL_MAX_NESTING);
    if (rd_bn(r, &b->pre_bn, C, "the stack's channels") < 0 || rd_act(r, &b->pre_act) < 0 ||
        rd_conv(r, &b->pre_conv, C, 0, "the stack's channels") < 0)
        return -1;
    r->depth++;
    int rc = rd_stack(r, b->num_blocks, b->pre_conv.out_c, &b->blocks);
    r->depth--;
    if (rc < 0)
        return -1;
    if (rd_bn(r, &b->post_bn, b->pre_conv.out_c, "pre_conv out channels") < 0 || rd_act(r, &b->post_act) < 0 ||
        rd_conv(r, &b->post_conv, b->post_bn.c, C, "post_bn channels") < 0)
        return -1;
    return 0;
}

static int rd_attn(rd *r, hc_attn_block *b, int C)
{
    if (rd_count(r, "attention num heads", 1, HC_MODEL_MAX_HEADS, "HC_MODEL_MAX_HEADS", &b->num_heads) < 0 ||
        rd_count(r, "attention num kv heads", 1, HC_MODEL_MAX_HEADS, "HC_MODEL_MAX_HEADS", &b->num_kv_heads) < 0)
        return -1;
    if (b->num_heads % b->num_kv_heads != 0)
        return rd_fail(r, HC_EFORMAT, r->tok_off, "attention num kv heads", "num heads %d is not divisible by %d",
                       b->num_heads, b->num_kv_heads);
    if (rd_channels(r, "attention q head dim", &b->q_head_dim) < 0 ||
        rd_channels(r, "attention v head dim", &b->v_head_dim) < 0)
        return -1;
    if (rd_int(r, "attention use rope", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &b->use_rope) < 0 ||
        rd_int(r, "attention learnable rope", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &b->learnable_rope) < 0)
        return -1;
    b->use_rope = b->use_rope != 0;
    b->learnable_rope = b->learnable_rope != 0;
    if (b->use_rope && b->q_head_dim % 2 != 0)
        return rd_fail(r, HC_EFORMAT, r->tok_off, "attention q head dim", "%d must be even with RoPE", b->q_head_dim);
    int64_t qc = (int64_t)b->num_heads * b->q_head_dim, kc = (int64_t)b->num_kv_heads * b->q_head_dim;
    int64_t vc = (int64_t)b->num_kv_heads * b->v_head_dim, oc = (int64_t)b->num_heads * b->v_head_dim;
    if (qc > HC_MODEL_MAX_CHANNELS || oc > HC_MODEL_MAX_CHANNELS)
        return rd_fail(r, HC_ELIMIT, r->tok_off, "attention heads", "heads x head dim exceeds HC_MODEL_MAX_CHANNELS = %d",
                       HC_MODEL_MAX_CHANNELS);
    if (rd_tf_rmsnorm(r, &b->pre_ln, C) < 0 ||
        rd_matmul(r, &b->q_proj, C, "the stack's channels", (int)qc, "num heads * q head dim") < 0 ||
        rd_matmul(r, &b->k_proj, C, "the stack's channels", (int)kc, "num kv heads * q head dim") < 0 ||
        rd_matmul(r, &b->v_proj, C, "the stack's channels", (int)vc, "num kv heads * v head dim") < 0 ||
        rd_matmul(r, &b->out_proj, (int)oc, "num heads * v head dim", C, "the stack's channels") < 0)
        return -1;
    if (b->use_rope) {
        if (rd_name(r, &b->rope_param_name, "rope parameter name") < 0)
            return -1;
        r->layer = b->rope_param_name;
        if (b->learnable_rope) {
            int d2;
            if (rd_count(r, "rope num kv heads", 1, HC_MODEL_MAX_HEADS, "HC_MODEL_MAX_HEADS", &b->rope_num_kv_heads) < 0 ||
                rd_expect(r, r->tok_off, "rope num kv heads", b->rope_num_kv_heads, b->num_kv_heads, "num kv heads") < 0 ||
                rd_channels(r, "rope num pairs", &b->rope_num_pairs) < 0 ||
                rd_expect(r, r->tok_off, "rope num pairs", b->rope_num_pairs, b->q_head_dim / 2, "q head dim / 2") < 0 ||
                rd_int(r, "rope dim2", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &d2) < 0)
                return -1;
            if (d2 != 2)
                return rd_fail(r, HC_EFORMAT, r->tok_off, "rope dim2", "%d != 2", d2);
            size_t n = (size_t)b->rope_num_kv_heads * b->rope_num_pairs * 2;
            if (rd_floats(r, n, NULL, "rope freqs", &b->rope_freqs) < 0)
                return -1;
            r->nparams += (int64_t)n;
        } else {
            if (rd_float(r, "rope theta", &b->rope_theta) < 0)
                return -1;
            if (!(b->rope_theta > 0))
                return rd_fail(r, HC_EFORMAT, r->tok_off, "rope theta", "%g is not positive", (double)b->rope_theta);
        }
    }
    return 0;
}

static int rd_ffn(rd *r, hc_ffn_block *b, int C)
{
    if (rd_channels(r, "ffn channels", &b->c) < 0 ||
        rd_expect(r, r->tok_off, "ffn channels", b->c, C, "the stack's channels") < 0 ||
        rd_channels(r, "ffn hidden channels", &b->ffn_c) < 0 ||
        rd_int(r, "ffn use swiglu", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &b->use_swiglu) < 0)
        return -1;
    b->use_swiglu = b->use_swiglu != 0;
    if (rd_tf_rmsnorm(r, &b->pre_ln, C) < 0 ||
        rd_matmul(r, &b->linear1, C, "ffn channels", b->ffn_c, "ffn hidden channels") < 0)
        return -1;
    if (b->use_swiglu && rd_matmul(r, &b->linear_gate, C, "ffn channels", b->ffn_c, "ffn hidden channels") < 0)
        return -1;
    if (rd_matmul(r, &b->linear2, b->ffn_c, "ffn hidden channels", C, "ffn channels") < 0)
        return -1;
    return 0;
}

static int rd_stack(rd *r, int num_blocks, int chans, hc_block **out)
{
    hc_block *blocks = calloc((size_t)num_blocks, sizeof *blocks);
    if (!blocks)
        return hc_err_set(r->err, HC_ENOMEM, "%s: out of memory for %d blocks", r->fname, num_blocks);
    *out = blocks; /* owned by the caller's struct from now on, even if reading fails */
    for (int i = 0; i < num_blocks; i++) {
        hc_block *b = &blocks[i];
        if (rd_token(r, "block kind") < 0)
            return -1;
        uint64_t kind_off = r->tok_off;
        if (strcmp(r->tok, "ordinary_block") == 0)
            b->kind = HC_BLOCK_ORDINARY;
        else if (strcmp(r->tok, "gpool_block") == 0)
            b->kind = HC_BLOCK_GPOOL;
        else if (strcmp(r->tok, "nested_bottleneck_block") == 0)
            b->kind = HC_BLOCK_NESTED_BOTTLENECK;
        else if (strcmp(r->tok, "transformer_attention_block") == 0)
            b->kind = HC_BLOCK_ATTENTION;
        else if (strcmp(r->tok, "transformer_ffn_block") == 0)
            b->kind = HC_BLOCK_FFN;
        else
            return rd_fail(r, HC_EFORMAT, kind_off, "block kind", "unknown block kind \"%.60s\" (block %d of %d)", r->tok,
                           i, num_blocks);
        if (rd_name(r, &b->name, "block name") < 0)
            return -1;
        r->layer = b->name;
        int rc = 0;
        switch (b->kind) {
        case HC_BLOCK_ORDINARY: rc = rd_ordinary(r, &b->ordinary, chans); break;
        case HC_BLOCK_GPOOL: rc = rd_gpool(r, &b->gpool, chans); break;
        case HC_BLOCK_NESTED_BOTTLENECK: rc = rd_nbt(r, &b->nbt, chans); break;
        case HC_BLOCK_ATTENTION: rc = rd_attn(r, &b->attn, chans); break;
        case HC_BLOCK_FFN: rc = rd_ffn(r, &b->ffn, chans); break;
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- trunk, heads, model ---- */

static int rd_meta(rd *r, hc_meta_encoder *m, int version, int trunk_c)
{
    if (rd_name(r, &m->name, "metadata encoder name") < 0)
        return -1;
    r->layer = m->name;
    m->version = version;
    if (rd_channels(r, "metadata encoder input channels", &m->num_input_c) < 0 ||
        rd_expect(r, r->tok_off, "metadata encoder input channels", m->num_input_c, 192,
                  "the input channels of metadata encoder version 1") < 0)
        return -1;
    if (rd_matmul(r, &m->mul1, m->num_input_c, "metadata input channels", 0, NULL) < 0 ||
        rd_matbias(r, &m->bias1, m->mul1.out_c, "mul1 out channels") < 0 || rd_act(r, &m->act1) < 0 ||
        rd_matmul(r, &m->mul2, m->mul1.out_c, "mul1 out channels", 0, NULL) < 0 ||
        rd_matbias(r, &m->bias2, m->mul2.out_c, "mul2 out channels") < 0 || rd_act(r, &m->act2) < 0 ||
        rd_matmul(r, &m->mul3, m->mul2.out_c, "mul2 out channels", trunk_c, "the trunk channels") < 0)
        return -1;
    return 0;
}

static int rd_trunk(rd *r, hc_net *net)
{
    hc_trunk *t = &net->trunk;
    r->layer = NULL;
    if (rd_name(r, &t->name, "trunk name") < 0)
        return -1;
    r->layer = t->name;
    if (rd_count(r, "trunk num blocks", 1, HC_MODEL_MAX_BLOCKS, "HC_MODEL_MAX_BLOCKS", &t->num_blocks) < 0 ||
        rd_channels(r, "trunk channels", &t->trunk_c) < 0 || rd_channels(r, "trunk mid channels", &t->mid_c) < 0 ||
        rd_channels(r, "trunk regular channels", &t->regular_c) < 0 ||
        rd_int(r, "trunk dilated channels", -2147483647L, 2147483647L, HC_EFORMAT, NULL, &t->dilated_c) < 0 ||
        rd_channels(r, "trunk gpool channels", &t->gpool_c) < 0)
        return -1;
    t->norm_kind = HC_TRUNK_NORM_BN;
    if (net->model_version >= 15) {
        if (rd_int(r, "trunk norm kind", 0, 1, HC_EFORMAT, NULL, &t->norm_kind) < 0 ||
            rd_zero(r, "trunk option B") < 0 || rd_zero(r, "trunk option C") < 0 || rd_zero(r, "trunk option D") < 0 ||
            rd_zero(r, "trunk option E") < 0 || rd_zero(r, "trunk option F") < 0)
            return -1;
    }
    if (rd_conv(r, &t->initial_conv, net->num_input_c, t->trunk_c, "the model's spatial input channels") < 0 ||
        rd_matmul(r, &t->initial_matmul, net->num_input_global_c, "the model's global input channels", t->trunk_c,
                  "the trunk channels") < 0)
        return -1;
    if (net->meta_encoder_version > 0) {
        t->has_meta_encoder = 1;
        if (rd_meta(r, &t->meta, net->meta_encoder_version, t->trunk_c) < 0)
            return -1;
    }
    if (rd_stack(r, t->num_blocks, t->trunk_c, &t->blocks) < 0)
        return -1;
    if (t->norm_kind == HC_TRUNK_NORM_BN) {
        if (rd_bn(r, &t->tip_bn, t->trunk_c, "the trunk channels") < 0)
            return -1;
    } else {
        if (rd_rmsnorm(r, &t->tip_rmsnorm, t->trunk_c) < 0)
            return -1;
    }
    return rd_act(r, &t->tip_act);
}

static int rd_policy(rd *r, hc_net *net)
{
    hc_policy_head *p = &net->policy;
    int v = net->model_version;
    int C = net->trunk.trunk_c;
    r->layer = NULL;
    if (rd_name(r, &p->name, "policy head name") < 0)
        return -1;
    r->layer = p->name;
    if (v >= 17) {
        if (rd_int(r, "policy out channels", 0, 2147483647L, HC_EFORMAT, NULL, &p->policy_out_c) < 0)
            return -1;
        if (p->policy_out_c != 2 && p->policy_out_c != 4)
            return rd_fail(r, HC_EFORMAT, r->tok_off, "policy out channels", "%d is neither 2 nor 4", p->policy_out_c);
        if (rd_zero(r, "policy option A") < 0 || rd_zero(r, "policy option B") < 0 || rd_zero(r, "policy option C") < 0)
            return -1;
    } else {
        p->policy_out_c = v == 16 ? 4 : v >= 12 ? 2 : 1;
    }
    if (rd_conv(r, &p->p1_conv, C, 0, "the trunk channels") < 0 || rd_conv(r, &p->g1_conv, C, 0, "the trunk channels") < 0 ||
        rd_bn(r, &p->g1_bn, p->g1_conv.out_c, "g1_conv out channels") < 0 || rd_act(r, &p->g1_act) < 0 ||
        rd_matmul(r, &p->gpool_to_bias_mul, 3 * p->g1_bn.c, "3 * g1_bn channels", p->p1_conv.out_c,
                  "p1_conv out channels") < 0 ||
        rd_bn(r, &p->p1_bn, p->p1_conv.out_c, "p1_conv out channels") < 0 || rd_act(r, &p->p1_act) < 0 ||
        rd_conv(r, &p->p2_conv, p->p1_bn.c, p->policy_out_c, "p1_bn channels") < 0)
        return -1;
    if (v >= 15) {
        p->has_pass_mlp = 1;
        if (rd_matmul(r, &p->gpool_to_pass_mul, 3 * p->g1_bn.c, "3 * g1_bn channels", p->p1_conv.out_c,
                      "p1_conv out channels") < 0 ||
            rd_matbias(r, &p->gpool_to_pass_bias, p->gpool_to_pass_mul.out_c, "gpool_to_pass_mul out channels") < 0 ||
            rd_act(r, &p->pass_act) < 0 ||
            rd_matmul(r, &p->gpool_to_pass_mul2, p->gpool_to_pass_mul.out_c, "gpool_to_pass_mul out channels",
                      p->policy_out_c, "the policy out channels") < 0)
            return -1;
    } else {
        if (rd_matmul(r, &p->gpool_to_pass_mul, 3 * p->g1_bn.c, "3 * g1_bn channels", p->policy_out_c,
                      "the policy out channels") < 0)
            return -1;
    }
    return 0;
}

static int rd_value(rd *r, hc_net *net)
{
    hc_value_head *h = &net->value;
    int v = net->model_version;
    r->layer = NULL;
    if (rd_name(r, &h->name, "value head name") < 0)
        return -1;
    r->layer = h->name;
    if (v >= 17) {
        if (rd_zero(r, "value option A") < 0 || rd_zero(r, "value option B") < 0 || rd_zero(r, "value option C") < 0)
            return -1;
    }
    int sv = v >= 9 ? 6 : v >= 8 ? 4 : v >= 4 ? 2 : 1;
    if (rd_conv(r, &h->v1_conv, net->trunk.trunk_c, 0, "the trunk channels") < 0 ||
        rd_bn(r, &h->v1_bn, h->v1_conv.out_c, "v1_conv out channels") < 0 || rd_act(r, &h->v1_act) < 0 ||
        rd_matmul(r, &h->v2_mul, 3 * h->v1_bn.c, "3 * v1_bn channels", 0, NULL) < 0 ||
        rd_matbias(r, &h->v2_bias, h->v2_mul.out_c, "v2_mul out channels") < 0 || rd_act(r, &h->v2_act) < 0 ||
        rd_matmul(r, &h->v3_mul, h->v2_mul.out_c, "v2_mul out channels", 3, "3 value channels") < 0 ||
        rd_matbias(r, &h->v3_bias, 3, "3 value channels") < 0 ||
        rd_matmul(r, &h->sv3_mul, h->v2_mul.out_c, "v2_mul out channels", sv, "this version's score value channels") < 0 ||
        rd_matbias(r, &h->sv3_bias, sv, "this version's score value channels") < 0 ||
        rd_conv(r, &h->ownership_conv, h->v1_conv.out_c, 1, "v1_conv out channels") < 0)
        return -1;
    return 0;
}

static int rd_model(rd *r, hc_net *net)
{
    if (rd_name(r, &net->name, "model name") < 0)
        return -1;
    uint64_t name_off = r->tok_off;
    size_t nl = strlen(net->name);
    if (nl > 96)
        return rd_fail(r, HC_EFORMAT, name_off, "model name", "%zu characters, KataGo allows at most 96", nl);
    for (size_t i = 0; i < nl; i++) {
        char c = net->name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return rd_fail(r, HC_EFORMAT, name_off, "model name",
                           "character 0x%02x at %zu is not alphanumeric, '_' or '-' (is this a model file?)",
                           (unsigned char)c, i);
    }
    if (rd_int(r, "model version", 0, 2147483647L, HC_EFORMAT, NULL, &net->model_version) < 0)
        return -1;
    r->version = net->model_version;
    if (net->model_version < HC_MODEL_VERSION_MIN || net->model_version > HC_MODEL_VERSION_MAX)
        return rd_fail(r, HC_EFORMAT, r->tok_off, "model version", "unsupported model version %d (supported: %d to %d)",
                       net->model_version, HC_MODEL_VERSION_MIN, HC_MODEL_VERSION_MAX);
    net->input_version = hc_model_input_version(net->model_version);
    /* KataGo's backends assert these match the version's feature set; check them here. */
    if (rd_channels(r, "spatial input channels", &net->num_input_c) < 0 ||
        rd_expect(r, r->tok_off, "spatial input channels", net->num_input_c,
                  hc_model_num_spatial_features(net->model_version), "the spatial features of this model version") < 0 ||
        rd_channels(r, "global input channels", &net->num_input_global_c) < 0 ||
        rd_expect(r, r->tok_off, "global input channels", net->num_input_global_c,
                  hc_model_num_global_features(net->model_version), "the global features of this model version") < 0)
        return -1;
    hc_postprocess *pp = &net->post;
    hc_postprocess_set_defaults(pp);
    if (net->model_version >= 13) {
        static const char *const names[7] = {"tdScoreMultiplier", "scoreMeanMultiplier", "scoreStdevMultiplier",
                                             "leadMultiplier", "varianceTimeMultiplier",
                                             "shorttermValueErrorMultiplier", "shorttermScoreErrorMultiplier"};
        double *dst[7] = {&pp->td_score_multiplier, &pp->score_mean_multiplier, &pp->score_stdev_multiplier,
                          &pp->lead_multiplier, &pp->variance_time_multiplier, &pp->shortterm_value_error_multiplier,
                          &pp->shortterm_score_error_multiplier};
        for (int i = 0; i < 7; i++) {
            if (rd_double(r, names[i], dst[i]) < 0)
                return -1;
            if (!(*dst[i] > 0))
                return rd_fail(r, HC_EFORMAT, r->tok_off, names[i], "%g must be positive", *dst[i]);
        }
    }
    if (net->model_version >= 15) {
        if (rd_int(r, "metaEncoderVersion", 0, 1, HC_EFORMAT, NULL, &net->meta_encoder_version) < 0 ||
            rd_flag(r, "preferPassAliveUnderSuicideRules", &net->prefer_pass_alive_under_suicide) < 0)
            return -1;
        net->num_input_meta_c = net->meta_encoder_version == 1 ? 192 : 0;
        static const char *const opts[6] = {"model option C", "model option D", "model option E",
                                            "model option F", "model option G", "model option H"};
        for (int i = 0; i < 6; i++)
            if (rd_zero(r, opts[i]) < 0)
                return -1;
    }
    if (rd_trunk(r, net) < 0 || rd_policy(r, net) < 0 || rd_value(r, net) < 0)
        return -1;
    hc_net_derive_head_counts(net);
    net->binary_floats = r->binary > 0;
    r->layer = "(end of file)";
    int c = rd_peek_nonspace(r);
    if (c == -2)
        return -1;
    if (c != -1)
        return rd_fail(r, HC_EFORMAT, rd_off(r), "trailing data", "unexpected data after the value head (byte 0x%02x)", c);
    net->num_floats = r->nfloats;
    net->num_params = r->nparams;
    return 0;
}

hc_net *hc_net_read(hc_istream *in, hc_err *err)
{
    rd *r = calloc(1, sizeof *r);
    hc_net *net = calloc(1, sizeof *net);
    if (!r || !net) {
        free(r);
        free(net);
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", hc_istream_name(in));
        return NULL;
    }
    r->in = in;
    r->fname = hc_istream_name(in);
    r->err = err;
    r->binary = -1;
    r->base = hc_istream_offset(in);
    int rc = rd_model(r, net);
    free(r->scratch);
    free(r);
    if (rc < 0) {
        hc_net_free(net);
        return NULL;
    }
    return net;
}

hc_net *hc_net_load(const char *path, hc_err *err)
{
    hc_istream *in = hc_istream_open(path, err);
    if (!in)
        return NULL;
    hc_net *net = hc_net_read(in, err);
    hc_istream_close(in);
    return net;
}
