/* Precision profiles: parsing and lookup of the per-layer reduced formats an emulated backend uses. */
#include "backends/profile.h"
#include "harness/base/suggest.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "harness/base/files.h"
#include "harness/base/stream.h"
#include "harness/base/yamlcfg.h"

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

/* ---- parsing ---- */

typedef struct pctx {
    hc_ydoc y;
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
    return hc_ydoc_err(&c->y, &n->start_mark, NULL, c->err, "%s", msg);
}

static yaml_node_t *nd(pctx *c, int id) { return hc_ydoc_node(&c->y, id); }
static const char *sc(const yaml_node_t *n) { return hc_ynode_str(n); }

static int want_scalar(pctx *c, yaml_node_t *v, const char *key)
{
    return hc_ydoc_expect(&c->y, v, YAML_SCALAR_NODE, key, NULL, c->err);
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
    snprintf(r->where, sizeof r->where, "%s:%zu:%zu", c->y.file, m->start_mark.line + 1, m->start_mark.column + 1);
    if (hc_ydoc_check_keys(&c->y, m, what, NULL, keys, c->err))
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
                for (size_t i = 0; hc_layer_kind_name_at(i); i++)
                    snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "",
                             hc_layer_kind_name_at(i));
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
            if (hc_ydoc_check_keys(&c->y, v, "when", NULL, wkeys, c->err))
                return -1;
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                const char *wk = sc(nd(c, q->key));
                yaml_node_t *wv = nd(c, q->value);
                if (!strcmp(wk, "transformer") ? hc_ydoc_bool(&c->y, wv, wk, NULL, &r->transformer, c->err)
                    : !strcmp(wk, "minTrunkChannels")
                        ? hc_ydoc_int(&c->y, wv, wk, NULL, 0, HC_MODEL_MAX_CHANNELS, &r->min_trunk_c, c->err)
                        : hc_ydoc_int(&c->y, wv, wk, NULL, 0, HC_MODEL_MAX_CHANNELS, &r->max_trunk_c, c->err))
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
    pctx c = {.err = err};
    if (hc_ydoc_load_mem(&c.y, yaml, len, file, "profile", err))
        return NULL;
    hc_profile *p = hc_calloc(1, sizeof *p, err, "profile");
    yaml_node_t *root = hc_ydoc_root(&c.y);
    static const char *const keys[] = {"name", "description", "storage", "weights", "accum", "winogradTiles",
                                       "winograd", "pool", "attnScores", "softmax", "poolSum", "normSum", "rules",
                                       NULL};
    if (!p)
        goto fail;
    if (hc_ydoc_check_keys(&c.y, root, "profile", NULL, keys, err))
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
            if (hc_ydoc_expect(&c.y, v, YAML_SEQUENCE_NODE, "rules", NULL, err))
                goto fail;
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
    hc_ydoc_free(&c.y);
    return p;
fail:
    hc_ydoc_free(&c.y);
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
    const char *names[64];
    int nn = 0;
    for (const hc_profile_src *s = hc_profile_builtin_srcs; s->name; s++) {
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "", s->name);
        if (nn < 64)
            names[nn++] = s->name;
    }
    char hint[96];
    hc_suggest_text(hint, sizeof hint, spec, n, names, nn);
    hc_err_set(err, HC_ECONFIG, "unknown precision profile \"%s\"%s (built-in: %s; or a path to a .yaml file)", spec,
               hint, known);
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
            const char *kn = hc_layer_kind_name(r->kinds);
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
    char dir[4096], path[4200];
    *out = NULL;
    if (hc_scratch_dir(dir, sizeof dir, "profile", NULL, err))
        return hc_err_prefix(err, "profile: ");
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
