/* Precision profiles: parsing and lookup of the per-layer reduced formats an emulated backend uses. */
#include "profile.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "stream.h"

#define MAX_PROFILE_BYTES (1u << 20)

/* The YAML files of backends/profiles/, embedded by the Makefile (profiles_gen.c). */
typedef struct hc_profile_src {
    const char *name;
    const char *text;
    unsigned long len; /* the generated file's type */
} hc_profile_src;
extern const hc_profile_src hc_profile_builtin_srcs[];
extern const char *const hc_profile_builtin_name_list[];

const char *const *hc_profile_builtin_names(void) { return hc_profile_builtin_name_list; }

static const char *const fmt_names[] = {"fp32", "fp16", "bf16"};

const char *hc_fmt_str(int fmt) { return fmt >= 0 && fmt <= 2 ? fmt_names[fmt] : "?"; }

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

/* ---- parsing ---- */

typedef struct pctx {
    const char *file;
    yaml_document_t d;
    hc_err *err;
} pctx;

static int err_at(pctx *c, const yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err_at(pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hc_err_set(c->err, HC_ECONFIG, "%s:%zu:%zu: %s", c->file, n->start_mark.line + 1,
                      n->start_mark.column + 1, msg);
}

static yaml_node_t *nd(pctx *c, int id) { return yaml_document_get_node(&c->d, id); }
static const char *sc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int want_scalar(pctx *c, yaml_node_t *v, const char *key)
{
    if (v->type != YAML_SCALAR_NODE)
        return err_at(c, v, "%s: expected a scalar", key);
    return 0;
}

static int get_fmt(pctx *c, yaml_node_t *v, const char *key, int allow_bf16, int *out)
{
    if (want_scalar(c, v, key))
        return -1;
    for (int f = 0; f < 3; f++)
        if (strcmp(sc(v), fmt_names[f]) == 0 && (allow_bf16 || f != HC_FMT_BF16)) {
            *out = f;
            return 0;
        }
    return err_at(c, v, "%s: unknown format \"%s\" (expected %s)", key, sc(v),
                  allow_bf16 ? "fp32, fp16 or bf16" : "fp32 or fp16");
}

static int get_int(pctx *c, yaml_node_t *v, const char *key, int lo, int hi, int *out)
{
    if (want_scalar(c, v, key))
        return -1;
    char *end;
    errno = 0;
    long x = strtol(sc(v), &end, 10);
    if (end == sc(v) || *end || errno || x < lo || x > hi)
        return err_at(c, v, "%s: expected an integer in [%d, %d], got \"%s\"", key, lo, hi, sc(v));
    *out = (int)x;
    return 0;
}

static int get_bool(pctx *c, yaml_node_t *v, const char *key, int *out)
{
    if (want_scalar(c, v, key))
        return -1;
    if (!strcmp(sc(v), "true") || !strcmp(sc(v), "yes"))
        *out = 1;
    else if (!strcmp(sc(v), "false") || !strcmp(sc(v), "no"))
        *out = 0;
    else
        return err_at(c, v, "%s: expected true or false, got \"%s\"", key, sc(v));
    return 0;
}

/* fnmatch accepts any string; refuse what it would silently treat oddly. */
static const char *pattern_problem(const char *p)
{
    if (!*p)
        return "empty pattern";
    for (const char *s = p; *s; s++) {
        if (*s == '\\') {
            if (!s[1])
                return "pattern ends in a backslash";
            s++;
        } else if (*s == '[') {
            const char *e = s + 1;
            if (*e == '!' || *e == '^')
                e++;
            if (*e == ']')
                e++;
            while (*e && *e != ']')
                e++;
            if (!*e)
                return "unclosed [ in pattern";
            s = e;
        } else if (*s == ']') {
            return "unmatched ] in pattern";
        }
    }
    return NULL;
}

/* Checks a mapping's keys against allowed (NULL-terminated); each value goes to cb. */
static int check_keys(pctx *c, yaml_node_t *m, const char *what, const char *const *allowed)
{
    if (m->type != YAML_MAPPING_NODE)
        return err_at(c, m, "%s: expected a mapping", what);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = nd(c, p->key);
        if (k->type != YAML_SCALAR_NODE)
            return err_at(c, k, "%s: a key must be a scalar", what);
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            ok |= strcmp(*a, sc(k)) == 0;
        if (!ok)
            return err_at(c, k, "unknown key \"%s\" (in %s)", sc(k), what);
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++)
            if (strcmp(sc(nd(c, q->key)), sc(k)) == 0)
                return err_at(c, k, "duplicate key \"%s\" (in %s)", sc(k), what);
    }
    return 0;
}

static char *xstrdup(const char *s, hc_err *err)
{
    char *d = hc_malloc(strlen(s) + 1, err, "profile");
    if (d)
        strcpy(d, s);
    return d;
}

static int parse_rule(pctx *c, yaml_node_t *m, int idx, hc_prof_rule *r)
{
    static const char *const keys[] = {"kind",    "layer",   "when",    "storage", "weights", "accum", "winogradTiles",
                                       "pool",    "attnScores", "softmax", "poolSum", "normSum", NULL};
    char what[32];
    snprintf(what, sizeof what, "rules[%d]", idx);
    memset(r, 0, sizeof *r);
    r->storage = r->weights = r->accum = -1;
    r->tiles = r->pool = r->scores = r->probs = -1;
    r->pool_sum = r->norm_sum = -1;
    r->transformer = -1;
    r->min_trunk_c = 0;
    r->max_trunk_c = INT_MAX;
    snprintf(r->where, sizeof r->where, "%s:%zu:%zu", c->file, m->start_mark.line + 1, m->start_mark.column + 1);
    if (check_keys(c, m, what, keys))
        return -1;
    int has_target = 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = sc(nd(c, p->key));
        yaml_node_t *v = nd(c, p->value);
        if (!strcmp(k, "kind")) {
            if (want_scalar(c, v, k))
                return -1;
            r->kinds = hc_layer_kind_by_name(sc(v));
            if (!r->kinds) {
                char all[400] = "";
                for (size_t i = 0; i < N_KINDS; i++)
                    snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", kind_names[i].name);
                return err_at(c, v, "unknown layer kind \"%s\" (known: %s)", sc(v), all);
            }
            has_target = 1;
        } else if (!strcmp(k, "layer")) {
            if (want_scalar(c, v, k))
                return -1;
            const char *prob = pattern_problem(sc(v));
            if (prob)
                return err_at(c, v, "bad layer pattern \"%s\": %s", sc(v), prob);
            r->pattern = xstrdup(sc(v), c->err);
            if (!r->pattern)
                return -1;
            has_target = 1;
        } else if (!strcmp(k, "when")) {
            static const char *const wkeys[] = {"transformer", "minTrunkChannels", "maxTrunkChannels", NULL};
            if (check_keys(c, v, "when", wkeys))
                return -1;
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                const char *wk = sc(nd(c, q->key));
                yaml_node_t *wv = nd(c, q->value);
                if (!strcmp(wk, "transformer") ? get_bool(c, wv, wk, &r->transformer)
                    : !strcmp(wk, "minTrunkChannels") ? get_int(c, wv, wk, 0, HC_MODEL_MAX_CHANNELS, &r->min_trunk_c)
                                                       : get_int(c, wv, wk, 0, HC_MODEL_MAX_CHANNELS, &r->max_trunk_c))
                    return -1;
            }
            if (r->min_trunk_c > r->max_trunk_c)
                return err_at(c, v, "when: minTrunkChannels %d > maxTrunkChannels %d", r->min_trunk_c,
                              r->max_trunk_c);
        } else if (!strcmp(k, "storage")) {
            if (get_fmt(c, v, k, 1, &r->storage))
                return -1;
        } else if (!strcmp(k, "weights")) {
            if (get_fmt(c, v, k, 1, &r->weights))
                return -1;
        } else if (!strcmp(k, "winogradTiles")) {
            if (get_fmt(c, v, k, 0, &r->tiles))
                return -1;
        } else if (!strcmp(k, "pool") || !strcmp(k, "attnScores") || !strcmp(k, "softmax")) {
            if (get_fmt(c, v, k, 1, !strcmp(k, "pool") ? &r->pool : !strcmp(k, "attnScores") ? &r->scores : &r->probs))
                return -1;
        } else if (!strcmp(k, "poolSum") || !strcmp(k, "normSum")) {
            if (get_fmt(c, v, k, 1, !strcmp(k, "poolSum") ? &r->pool_sum : &r->norm_sum))
                return -1;
        } else if (get_fmt(c, v, k, 0, &r->accum)) {
            return -1;
        }
    }
    if (!has_target)
        return err_at(c, m, "%s: a rule needs a kind or a layer pattern", what);
    if (r->storage < 0 && r->weights < 0 && r->accum < 0 && r->tiles < 0 && r->pool < 0 && r->scores < 0 &&
        r->probs < 0 && r->pool_sum < 0 && r->norm_sum < 0)
        return err_at(c, m,
                      "%s: a rule must set storage, weights, accum, winogradTiles, pool, attnScores, softmax, poolSum "
                      "or normSum",
                      what);
    return 0;
}

void hc_profile_free(hc_profile *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_rules; i++)
        free(p->rules[i].pattern);
    free(p->rules);
    free(p->name);
    free(p->description);
    free(p->source);
    free(p);
}

static char *default_name(const char *file, hc_err *err)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".yaml") == 0)
        n -= 5;
    char *s = hc_malloc(n + 1, err, "profile name");
    if (s) {
        memcpy(s, b, n);
        s[n] = 0;
    }
    return s;
}

hc_profile *hc_profile_parse(const char *yaml, size_t len, const char *file, hc_err *err)
{
    pctx c = {.file = file, .err = err};
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps)) {
        hc_err_set(err, HC_ENOMEM, "%s: cannot initialize the YAML parser", file);
        return NULL;
    }
    yaml_parser_set_input_string(&ps, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&ps, &c.d)) {
        hc_err_set(err, HC_ECONFIG, "%s:%zu:%zu: %s", file, ps.problem_mark.line + 1, ps.problem_mark.column + 1,
                   ps.problem ? ps.problem : "malformed YAML");
        yaml_parser_delete(&ps);
        return NULL;
    }
    yaml_parser_delete(&ps);
    hc_profile *p = hc_calloc(1, sizeof *p, err, "profile");
    yaml_node_t *root = yaml_document_get_root_node(&c.d);
    static const char *const keys[] = {"name", "description", "storage", "weights", "accum", "winogradTiles",
                                       "winograd", "pool", "attnScores", "softmax", "poolSum", "normSum", "rules",
                                       NULL};
    if (!p)
        goto fail;
    if (!root) {
        hc_err_set(err, HC_ECONFIG, "%s:1:1: empty profile", file);
        goto fail;
    }
    if (check_keys(&c, root, "profile", keys))
        goto fail;
    p->storage = p->weights = p->accum = HC_FMT_FP32;
    p->winograd = 4;
    for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < root->data.mapping.pairs.top; q++) {
        const char *k = sc(nd(&c, q->key));
        yaml_node_t *v = nd(&c, q->value);
        if (!strcmp(k, "name") || !strcmp(k, "description")) {
            if (want_scalar(&c, v, k))
                goto fail;
            char **dst = !strcmp(k, "name") ? &p->name : &p->description;
            if (!strcmp(k, "name") && !*sc(v)) {
                err_at(&c, v, "name: empty value");
                goto fail;
            }
            if (!(*dst = xstrdup(sc(v), err)))
                goto fail;
        } else if (!strcmp(k, "storage") || !strcmp(k, "weights")) {
            if (get_fmt(&c, v, k, 1, !strcmp(k, "storage") ? &p->storage : &p->weights))
                goto fail;
        } else if (!strcmp(k, "accum") || !strcmp(k, "winogradTiles")) {
            if (get_fmt(&c, v, k, 0, !strcmp(k, "accum") ? &p->accum : &p->winograd_tiles))
                goto fail;
        } else if (!strcmp(k, "pool") || !strcmp(k, "attnScores") || !strcmp(k, "softmax")) {
            if (get_fmt(&c, v, k, 1, !strcmp(k, "pool") ? &p->pool : !strcmp(k, "attnScores") ? &p->attn_scores
                                                                                               : &p->softmax))
                goto fail;
        } else if (!strcmp(k, "poolSum") || !strcmp(k, "normSum")) {
            if (get_fmt(&c, v, k, 1, !strcmp(k, "poolSum") ? &p->pool_sum : &p->norm_sum))
                goto fail;
        } else if (!strcmp(k, "winograd")) {
            if (want_scalar(&c, v, k))
                goto fail;
            if (!strcmp(sc(v), "f4x4") || !strcmp(sc(v), "f2x2")) {
                p->winograd = sc(v)[1] - '0';
            } else {
                err_at(&c, v, "winograd: expected f4x4 or f2x2, got \"%s\"", sc(v));
                goto fail;
            }
        } else { /* rules */
            if (v->type != YAML_SEQUENCE_NODE) {
                err_at(&c, v, "rules: expected a sequence");
                goto fail;
            }
            int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
            p->rules = hc_calloc(n ? (size_t)n : 1, sizeof *p->rules, err, "profile rules");
            if (!p->rules)
                goto fail;
            for (int i = 0; i < n; i++) {
                if (parse_rule(&c, nd(&c, v->data.sequence.items.start[i]), i, &p->rules[i])) {
                    free(p->rules[i].pattern);
                    goto fail;
                }
                p->n_rules = i + 1;
            }
        }
    }
    if (!p->name && !(p->name = default_name(file, err)))
        goto fail;
    if (!(p->source = xstrdup(file, err)))
        goto fail;
    yaml_document_delete(&c.d);
    return p;
fail:
    yaml_document_delete(&c.d);
    hc_profile_free(p);
    return NULL;
}

hc_profile *hc_profile_load(const char *spec, hc_err *err)
{
    size_t n = spec ? strlen(spec) : 0;
    if (!n) {
        hc_err_set(err, HC_ECONFIG, "no precision profile named");
        return NULL;
    }
    if (strchr(spec, '/') || (n > 5 && strcmp(spec + n - 5, ".yaml") == 0)) {
        size_t len;
        char *text = hc_read_file(spec, MAX_PROFILE_BYTES, &len, err);
        if (!text)
            return NULL;
        hc_profile *p = hc_profile_parse(text, len, spec, err);
        free(text);
        return p;
    }
    for (const hc_profile_src *s = hc_profile_builtin_srcs; s->name; s++)
        if (strcmp(s->name, spec) == 0) {
            char file[128];
            snprintf(file, sizeof file, "built-in:%s.yaml", s->name);
            return hc_profile_parse(s->text, s->len, file, err);
        }
    char known[512] = "";
    for (const hc_profile_src *s = hc_profile_builtin_srcs; s->name; s++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "", s->name);
    hc_err_set(err, HC_ECONFIG, "unknown precision profile \"%s\" (built-in: %s; or a path to a .yaml file)", spec,
               known);
    return NULL;
}

hc_prof_choice hc_profile_resolve(const hc_profile *p, const hc_net *net, const char *name, unsigned kinds)
{
    hc_prof_choice ch = {.storage = p->storage, .weights = p->weights, .accum = p->accum, .tiles = p->winograd_tiles,
                         .pool = p->pool, .scores = p->attn_scores, .probs = p->softmax, .pool_sum = p->pool_sum,
                         .norm_sum = p->norm_sum, .rule = -1};
    int transformer = hc_net_has_transformer(net), tc = net->trunk.trunk_c;
    for (int i = 0; i < p->n_rules; i++) {
        const hc_prof_rule *r = &p->rules[i];
        if (r->transformer >= 0 && r->transformer != transformer)
            continue;
        if (tc < r->min_trunk_c || tc > r->max_trunk_c)
            continue;
        if (r->kinds && !(r->kinds & kinds))
            continue;
        if (r->pattern && fnmatch(r->pattern, name ? name : "", 0) != 0)
            continue;
        if (r->storage >= 0)
            ch.storage = r->storage;
        if (r->weights >= 0)
            ch.weights = r->weights;
        if (r->accum >= 0)
            ch.accum = r->accum;
        if (r->tiles >= 0)
            ch.tiles = r->tiles;
        if (r->pool >= 0)
            ch.pool = r->pool;
        if (r->scores >= 0)
            ch.scores = r->scores;
        if (r->probs >= 0)
            ch.probs = r->probs;
        if (r->pool_sum >= 0)
            ch.pool_sum = r->pool_sum;
        if (r->norm_sum >= 0)
            ch.norm_sum = r->norm_sum;
        ch.rule = i;
    }
    return ch;
}

/* ---- the writer ---- */

/* A YAML double-quoted scalar. */
static int put_quoted(hc_ostream *o, const char *s, hc_err *err)
{
    if (hc_ostream_write(o, "\"", 1, err))
        return -1;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int rc = ch == '"' || ch == '\\' ? hc_ostream_printf(o, err, "\\%c", ch)
                 : ch < 0x20 || ch == 0x7f ? hc_ostream_printf(o, err, "\\x%02x", ch)
                                           : hc_ostream_write(o, s, 1, err);
        if (rc)
            return -1;
    }
    return hc_ostream_write(o, "\"", 1, err);
}

static int put_fmt(hc_ostream *o, const char *indent, const char *key, int fmt, hc_err *err)
{
    return fmt < 0 ? 0 : hc_ostream_printf(o, err, "%s%s: %s\n", indent, key, hc_fmt_str(fmt));
}

static const char *kind_name(unsigned bits)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (kind_names[i].bits == bits)
            return kind_names[i].name;
    return NULL;
}

static int emit(const hc_profile *p, const char *header, hc_ostream *o, hc_err *err)
{
    if (header) {
        for (const char *l = header; *l;) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            if (hc_ostream_printf(o, err, "# %.*s\n", (int)n, l))
                return -1;
            l += n + (e != NULL);
        }
    }
    if (hc_ostream_printf(o, err, "name: ") || put_quoted(o, p->name, err) || hc_ostream_printf(o, err, "\n"))
        return -1;
    if (p->description &&
        (hc_ostream_printf(o, err, "description: ") || put_quoted(o, p->description, err) ||
         hc_ostream_printf(o, err, "\n")))
        return -1;
    if (put_fmt(o, "", "storage", p->storage, err) || put_fmt(o, "", "weights", p->weights, err) ||
        put_fmt(o, "", "accum", p->accum, err) || put_fmt(o, "", "winogradTiles", p->winograd_tiles, err) ||
        hc_ostream_printf(o, err, "winograd: f%dx%d\n", p->winograd, p->winograd) ||
        put_fmt(o, "", "pool", p->pool, err) || put_fmt(o, "", "attnScores", p->attn_scores, err) ||
        put_fmt(o, "", "softmax", p->softmax, err) || put_fmt(o, "", "poolSum", p->pool_sum, err) ||
        put_fmt(o, "", "normSum", p->norm_sum, err))
        return -1;
    if (p->n_rules && hc_ostream_printf(o, err, "rules:\n"))
        return -1;
    for (int i = 0; i < p->n_rules; i++) {
        const hc_prof_rule *r = &p->rules[i];
        const char *lead = "  - ";
        if (r->kinds) {
            const char *kn = kind_name(r->kinds);
            if (!kn)
                return hc_err_set(err, HC_EINTERNAL, "profile %s: rule %d holds several kinds (0x%x)", p->name, i,
                                  r->kinds);
            if (hc_ostream_printf(o, err, "%skind: %s\n", lead, kn))
                return -1;
            lead = "    ";
        }
        if (r->pattern) {
            if (hc_ostream_printf(o, err, "%slayer: ", lead) || put_quoted(o, r->pattern, err) ||
                hc_ostream_printf(o, err, "\n"))
                return -1;
            lead = "    ";
        }
        if (r->transformer >= 0 || r->min_trunk_c > 0 || r->max_trunk_c < INT_MAX) {
            const char *sep = "";
            if (hc_ostream_printf(o, err, "%swhen: {", lead))
                return -1;
            if (r->transformer >= 0 && hc_ostream_printf(o, err, "transformer: %s", r->transformer ? "true" : "false"))
                return -1;
            sep = r->transformer >= 0 ? ", " : "";
            if (r->min_trunk_c > 0 && hc_ostream_printf(o, err, "%sminTrunkChannels: %d", sep, r->min_trunk_c))
                return -1;
            sep = r->transformer >= 0 || r->min_trunk_c > 0 ? ", " : "";
            if (r->max_trunk_c < INT_MAX && hc_ostream_printf(o, err, "%smaxTrunkChannels: %d", sep, r->max_trunk_c))
                return -1;
            if (hc_ostream_printf(o, err, "}\n"))
                return -1;
        }
        if (put_fmt(o, "    ", "storage", r->storage, err) || put_fmt(o, "    ", "weights", r->weights, err) ||
            put_fmt(o, "    ", "accum", r->accum, err) || put_fmt(o, "    ", "winogradTiles", r->tiles, err) ||
            put_fmt(o, "    ", "pool", r->pool, err) || put_fmt(o, "    ", "attnScores", r->scores, err) ||
            put_fmt(o, "    ", "softmax", r->probs, err) || put_fmt(o, "    ", "poolSum", r->pool_sum, err) ||
            put_fmt(o, "    ", "normSum", r->norm_sum, err))
            return -1;
    }
    return 0;
}

int hc_profile_write(const hc_profile *p, const char *header, const char *path, hc_err *err)
{
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o)
        return -1;
    if (emit(p, header, o, err)) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}

int hc_profile_format(const hc_profile *p, const char *header, char **out, size_t *len, hc_err *err)
{
    /* through a temporary file, so that the text and the file writer are one code path */
    const char *tmp = getenv("TMPDIR");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/halfcheck-profile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    *out = NULL;
    if (!mkdtemp(dir))
        return hc_err_set(err, HC_EIO, "profile: cannot create a temporary directory under %s",
                          tmp && *tmp ? tmp : "/tmp");
    snprintf(path, sizeof path, "%s/profile.yaml", dir);
    int rc = hc_profile_write(p, header, path, err);
    if (rc == 0 && !(*out = hc_read_file(path, MAX_PROFILE_BYTES, len, err)))
        rc = -1;
    remove(path);
    rmdir(dir);
    return rc;
}

static char *dup_or_null(const char *s, int *bad, hc_err *err)
{
    if (!s)
        return NULL;
    char *d = xstrdup(s, err);
    if (!d)
        *bad = 1;
    return d;
}

int hc_profile_add_rule(hc_profile *p, const hc_prof_rule *r, hc_err *err)
{
    hc_prof_rule *nr = realloc(p->rules, (size_t)(p->n_rules + 1) * sizeof *nr);
    if (!nr)
        return hc_err_set(err, HC_ENOMEM, "out of memory adding a profile rule");
    p->rules = nr;
    int bad = 0;
    nr[p->n_rules] = *r;
    nr[p->n_rules].pattern = dup_or_null(r->pattern, &bad, err);
    if (bad)
        return -1;
    p->n_rules++;
    return 0;
}

hc_profile *hc_profile_clone(const hc_profile *p, hc_err *err)
{
    hc_profile *c = hc_calloc(1, sizeof *c, err, "profile");
    if (!c)
        return NULL;
    *c = *p;
    c->rules = NULL;
    c->n_rules = 0;
    int bad = 0;
    c->name = dup_or_null(p->name, &bad, err);
    c->description = dup_or_null(p->description, &bad, err);
    c->source = dup_or_null(p->source, &bad, err);
    for (int i = 0; !bad && i < p->n_rules; i++)
        bad = hc_profile_add_rule(c, &p->rules[i], err) != 0;
    if (bad) {
        hc_profile_free(c);
        return NULL;
    }
    return c;
}

char *hc_profile_glob_literal(const char *name, hc_err *err)
{
    size_t n = strlen(name);
    char *g = hc_malloc(2 * n + 1, err, "layer pattern");
    if (!g)
        return NULL;
    char *d = g;
    for (const char *s = name; *s; s++) {
        if (strchr("*?[]\\", *s))
            *d++ = '\\';
        *d++ = *s;
    }
    *d = 0;
    return g;
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
