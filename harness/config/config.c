/* YAML configs (libyaml) read into plain structs: nets, board configs, tiers, suites. */
#include "harness/config/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "backends/backend.h"
#include "harness/base/suggest.h"
#include "harness/base/sizes.h"
#include "harness/base/stream.h"
#include "harness/base/yamlcfg.h"

#define MAX_CONFIG_BYTES (4u << 20)

/* ---- memory: every allocation of a config is recorded here and freed at once ---- */

typedef struct pool {
    void **p;
    size_t n, cap;
    int built; /* the suite's arrays grow by doubling (hc_suite_new): the adders may append */
} pool;

static void *pool_alloc(pool *pl, size_t size, hc_err *err)
{
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 64;
        void **np = realloc(pl->p, cap * sizeof *np);
        if (!np) {
            hc_err_set(err, HC_ENOMEM, "out of memory reading a config");
            return NULL;
        }
        pl->p = np;
        pl->cap = cap;
    }
    void *m = calloc(1, size ? size : 1);
    if (!m) {
        hc_err_set(err, HC_ENOMEM, "out of memory reading a config");
        return NULL;
    }
    pl->p[pl->n++] = m;
    return m;
}

static char *pool_strdup(pool *pl, const char *s, hc_err *err)
{
    size_t n = strlen(s);
    char *d = pool_alloc(pl, n + 1, err);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

/* Grows an allocation of the pool (the suite builder's arrays); the new bytes are zero. */
static void *pool_grow(pool *pl, void *old, size_t old_size, size_t size, hc_err *err)
{
    for (size_t i = pl->n; old && i-- > 0;)
        if (pl->p[i] == old) {
            char *m = realloc(old, size);
            if (!m) {
                hc_err_set(err, HC_ENOMEM, "out of memory building a suite");
                return NULL;
            }
            memset(m + old_size, 0, size - old_size);
            return pl->p[i] = m;
        }
    char *m = pool_alloc(pl, size, err);
    if (m && old_size)
        memcpy(m, old, old_size);
    return m;
}

static void pool_free(pool *pl)
{
    if (!pl)
        return;
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    free(pl->p);
    free(pl);
}

/* ---- documents (harness/base/yamlcfg) and config-owned strings ---- */

typedef hc_ydoc doc;

static int get_str(doc *d, yaml_node_t *v, const char *key, const char *ctx, pool *pl, const char **out, hc_err *err)
{
    if (hc_ydoc_expect(d, v, YAML_SCALAR_NODE, key, ctx, err))
        return -1;
    if (!*hc_ynode_str(v))
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: empty value", key);
    *out = pool_strdup(pl, hc_ynode_str(v), err);
    return *out ? 0 : -1;
}

static int get_path(doc *d, yaml_node_t *v, const char *key, const char *ctx, pool *pl, const char **out, hc_err *err)
{
    const char *s;
    if (get_str(d, v, key, ctx, pl, &s, err))
        return -1;
    if (s[0] == '/' || !*d->dir) {
        *out = s;
        return 0;
    }
    size_t n = strlen(d->dir) + strlen(s) + 1;
    char *p = pool_alloc(pl, n, err);
    if (!p)
        return -1;
    snprintf(p, n, "%s%s", d->dir, s);
    *out = p;
    return 0;
}

int hc_config_parse_size(const char *s, int *w, int *h)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -1;
    long x = strtol(s, &end, 10), y;
    if (*end == 0) {
        y = x;
    } else if (*end == 'x') {
        const char *t = end + 1;
        if (!isdigit((unsigned char)*t))
            return -1;
        y = strtol(t, &end, 10);
        if (*end)
            return -1;
    } else {
        return -1;
    }
    /* the range is hc_check_board_size's; only keep values that fit an int */
    *w = x > INT_MAX ? INT_MAX : (int)x;
    *h = y > INT_MAX ? INT_MAX : (int)y;
    return 0;
}

static char *where_of(doc *d, yaml_node_t *n, pool *pl, hc_err *err)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s:%zu:%zu", d->file, n->start_mark.line + 1, n->start_mark.column + 1);
    return pool_strdup(pl, buf, err);
}

/* An item that is either a mapping or a scalar path to a file holding one: loads the file
 * into *sub (freed by the caller) and returns the mapping to parse, and its context. */
static yaml_node_t *resolve_item(doc *d, yaml_node_t *n, doc *sub, pool *pl, const char **ctx, hc_err *err)
{
    memset(sub, 0, sizeof *sub);
    if (n->type != YAML_SCALAR_NODE)
        return n;
    const char *path;
    if (get_path(d, n, "file", *ctx, pl, &path, err))
        return NULL;
    if (hc_ydoc_load_file(sub, path, MAX_CONFIG_BYTES, "document", err)) {
        /* Say where the suite names the file: the reader's message alone may not name the
         * suite (a directory, an unreadable or oversized file). */
        if (err && (err->code == HC_EIO || err->code == HC_EFORMAT || err->code == HC_ELIMIT)) {
            char why[700];
            snprintf(why, sizeof why, "%s", err->msg);
            int code = err->code == HC_ELIMIT ? HC_ELIMIT : HC_ECONFIG;
            hc_ydoc_err(d, &n->start_mark, *ctx, err, "cannot read \"%s\": %s", path, why);
            err->code = code;
        } else if (err) {
            hc_err_prefix(err, "%s:%zu:%zu: included here: ", d->file, n->start_mark.line + 1,
                          n->start_mark.column + 1);
        }
        return NULL;
    }
    *ctx = "";
    return hc_ydoc_root(sub);
}

/* ---- nets ---- */

static const char *const net_keys[] = {"name", "model", "sha256", "modelVersion", "notes", NULL};

static int parse_net(doc *d, yaml_node_t *m, const char *ctx, pool *pl, hc_net_cfg *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    out->model_version = -1;
    if (hc_ydoc_check_keys(d, m, "net", ctx, net_keys, err))
        return -1;
    yaml_node_t *v;
    if (!(v = hc_ydoc_require(d, m, "name", ctx, err)) || get_str(d, v, "name", ctx, pl, &out->name, err))
        return -1;
    if (!(v = hc_ydoc_require(d, m, "model", ctx, err)) || get_path(d, v, "model", ctx, pl, &out->model, err))
        return -1;
    if ((v = hc_ydoc_get(d, m, "sha256"))) {
        if (get_str(d, v, "sha256", ctx, pl, &out->sha256, err))
            return -1;
        size_t n = strlen(out->sha256);
        for (size_t i = 0; i < n; i++)
            if (!isxdigit((unsigned char)out->sha256[i]))
                n = 0;
        if (n != 64)
            return hc_ydoc_err(d, &v->start_mark, ctx, err, "sha256: expected 64 hex digits, got \"%s\"", out->sha256);
        for (char *c = (char *)out->sha256; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    if ((v = hc_ydoc_get(d, m, "modelVersion")) &&
        hc_ydoc_int(d, v, "modelVersion", ctx, 1, 1000, &out->model_version, err))
        return -1;
    if ((v = hc_ydoc_get(d, m, "notes")) && get_str(d, v, "notes", ctx, pl, &out->notes, err))
        return -1;
    out->where = where_of(d, m, pl, err);
    return out->where ? 0 : -1;
}

/* ---- boards ---- */

static const char *const board_keys[] = {"name", "positions", "sgf", "nnBuffer", "policyOptimism",
                                         "playoutDoublingAdvantage", "policyTemperature", "maxBatchSize",
                                         "requireExactNNLen", NULL};
static const char *const override_keys[] = {"policyOptimism", "playoutDoublingAdvantage", "policyTemperature",
                                            "maxBatchSize", "requireExactNNLen", NULL};

static void board_defaults(hc_board_cfg *b)
{
    memset(b, 0, sizeof *b);
    b->policy_optimism = 0.0;
    b->pda = 0.0;
    b->policy_temperature = 1.0;
    b->max_batch_size = 16;
}

/* The settings a matrix entry may override too. */
static int board_settings(doc *d, yaml_node_t *m, const char *ctx, hc_board_cfg *b, hc_err *err)
{
    yaml_node_t *v;
    if ((v = hc_ydoc_get(d, m, "policyOptimism")) &&
        hc_ydoc_double(d, v, "policyOptimism", ctx, 0.0, 1.0, &b->policy_optimism, err))
        return -1;
    if ((v = hc_ydoc_get(d, m, "playoutDoublingAdvantage")) &&
        hc_ydoc_double(d, v, "playoutDoublingAdvantage", ctx, -3.0, 3.0, &b->pda, err))
        return -1;
    if ((v = hc_ydoc_get(d, m, "policyTemperature"))) {
        if (hc_ydoc_double(d, v, "policyTemperature", ctx, 0.0, 100.0, &b->policy_temperature, err))
            return -1;
        if (b->policy_temperature <= 0)
            return hc_ydoc_err(d, &v->start_mark, ctx, err, "policyTemperature: must be > 0");
    }
    if ((v = hc_ydoc_get(d, m, "maxBatchSize")) &&
        hc_ydoc_int(d, v, "maxBatchSize", ctx, 1, 65536, &b->max_batch_size, err))
        return -1;
    if ((v = hc_ydoc_get(d, m, "requireExactNNLen")) &&
        hc_ydoc_bool(d, v, "requireExactNNLen", ctx, &b->require_exact_nn_len, err))
        return -1;
    return 0;
}

static int parse_board(doc *d, yaml_node_t *m, const char *ctx, pool *pl, hc_board_cfg *b, hc_err *err)
{
    board_defaults(b);
    if (hc_ydoc_check_keys(d, m, "board", ctx, board_keys, err))
        return -1;
    yaml_node_t *v, *pos = hc_ydoc_get(d, m, "positions"), *sgf = hc_ydoc_get(d, m, "sgf");
    if (!(v = hc_ydoc_require(d, m, "name", ctx, err)) || get_str(d, v, "name", ctx, pl, &b->name, err))
        return -1;
    if (pos && sgf)
        return hc_ydoc_err(d, &sgf->start_mark, ctx, err, "give either positions or sgf, not both");
    if (!pos && !sgf)
        return hc_ydoc_err(d, &m->start_mark, ctx, err, "missing key \"positions\" (or \"sgf\")");
    if (pos && get_path(d, pos, "positions", ctx, pl, &b->positions, err))
        return -1;
    if (sgf && get_path(d, sgf, "sgf", ctx, pl, &b->sgf, err))
        return -1;
    if (!(v = hc_ydoc_require(d, m, "nnBuffer", ctx, err)) ||
        hc_ydoc_expect(d, v, YAML_SCALAR_NODE, "nnBuffer", ctx, err))
        return -1;
    if (hc_config_parse_size(hc_ynode_str(v), &b->nn_x_len, &b->nn_y_len))
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "nnBuffer: expected WxH with W and H from %d to %d, got \"%s\"",
                      HC_MIN_BOARD_LEN, HC_MAX_BOARD_LEN, hc_ynode_str(v));
    hc_err range;
    if (hc_check_board_size(b->nn_x_len, b->nn_y_len, "NN buffer", &range))
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "nnBuffer: %s", range.msg);
    if (board_settings(d, m, ctx, b, err))
        return -1;
    b->where = where_of(d, m, pl, err);
    return b->where ? 0 : -1;
}

/* ---- tiers ---- */

static const char *const tier_keys[] = {"name", "base", "limits", "maxBias", NULL};

/* A limit's value: "x%" (scale 100, as KataGo states percent limits) or a bare number (scale 1),
 * >= 0; "none" is the caller's. label names the key in the message. */
static int parse_limit_value(doc *d, yaml_node_t *val, const char *ctx, const char *label, double *scale, double *x,
                             hc_err *err)
{
    const char *s = hc_ynode_str(val);
    char num[64];
    size_t n = strlen(s);
    *scale = 1;
    if (n > 0 && n < sizeof num && s[n - 1] == '%') {
        memcpy(num, s, n - 1);
        num[n - 1] = 0;
        *scale = 100;
    } else {
        snprintf(num, sizeof num, "%s", s);
    }
    if (n >= sizeof num || hc_yparse_double(num, x) || *x < 0)
        return hc_ydoc_err(d, &val->start_mark, ctx, err, "%s: expected a limit >= 0 (a number, \"x%%\" or none), got \"%s\"",
                           label, s);
    return 0;
}

/* maxBias: {winrate: 0.2%, lead: 0.05, ...}: limits on a systematic bias (tiers.h). */
static int parse_max_bias(doc *d, yaml_node_t *mb, const char *ctx, hc_tier *t, hc_err *err)
{
    char bctx[300];
    snprintf(bctx, sizeof bctx, "%s%smaxBias", ctx, *ctx ? "." : "");
    if (hc_ydoc_expect(d, mb, YAML_MAPPING_NODE, "maxBias", ctx, err))
        return -1;
    const char *keys[HC_M_COUNT + 1];
    int nk = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        if (hc_bias_metric_has(m))
            keys[nk++] = hc_metric_infos[m].key;
    keys[nk] = NULL;
    if (hc_ydoc_check_keys(d, mb, "maxBias", bctx, keys, err))
        return -1;
    for (yaml_node_pair_t *p = mb->data.mapping.pairs.start; p < mb->data.mapping.pairs.top; p++) {
        const char *mk = hc_ynode_str(hc_ydoc_node(d, p->key));
        int metric = hc_metric_by_key(mk);
        yaml_node_t *val = hc_ydoc_node(d, p->value);
        double scale, x;
        if (hc_ydoc_expect(d, val, YAML_SCALAR_NODE, mk, bctx, err))
            return -1;
        if (!strcmp(hc_ynode_str(val), "none")) {
            t->bias_set[metric] = 0;
            continue;
        }
        if (parse_limit_value(d, val, bctx, mk, &scale, &x, err) || hc_tier_set_bias(t, metric, scale, x, err))
            return -1;
    }
    return 0;
}

static int parse_tier(doc *d, yaml_node_t *m, const char *ctx, pool *pl, hc_tier *t, hc_err *err)
{
    if (hc_ydoc_check_keys(d, m, "tier", ctx, tier_keys, err))
        return -1;
    yaml_node_t *v;
    const char *name;
    if (!(v = hc_ydoc_require(d, m, "name", ctx, err)) || get_str(d, v, "name", ctx, pl, &name, err))
        return -1;
    for (const char *const *b = hc_tier_builtin_names; *b; b++)
        if (!strcmp(*b, name))
            return hc_ydoc_err(d, &v->start_mark, ctx, err, "tier name \"%s\" is a built-in tier's", name);
    if (strlen(name) >= sizeof t->name)
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "tier name longer than %zu characters", sizeof t->name - 1);
    yaml_node_t *base = hc_ydoc_get(d, m, "base");
    if (base) {
        if (hc_ydoc_expect(d, base, YAML_SCALAR_NODE, "base", ctx, err))
            return -1;
        if (hc_tier_builtin(hc_ynode_str(base), t, NULL))
            return hc_ydoc_err(d, &base->start_mark, ctx, err, "base: unknown built-in tier \"%s\"",
                               hc_ynode_str(base));
        snprintf(t->name, sizeof t->name, "%s", name);
    } else {
        hc_tier_init(t, name);
    }
    yaml_node_t *lim = hc_ydoc_get(d, m, "limits"), *mb = hc_ydoc_get(d, m, "maxBias");
    if (!lim && !base && !mb)
        return hc_ydoc_err(d, &m->start_mark, ctx, err, "missing key \"limits\"");
    if (mb && parse_max_bias(d, mb, ctx, t, err))
        return -1;
    if (!lim)
        return 0;
    char mctx[300], pctx[400];
    snprintf(mctx, sizeof mctx, "%s%slimits", ctx, *ctx ? "." : "");
    if (hc_ydoc_expect(d, lim, YAML_MAPPING_NODE, "limits", ctx, err))
        return -1;
    const char *metric_keys[HC_M_COUNT + 1], *pct_keys[HC_P_COUNT + 1];
    for (int i = 0; i < HC_M_COUNT; i++)
        metric_keys[i] = hc_metric_infos[i].key;
    metric_keys[HC_M_COUNT] = NULL;
    for (int i = 0; i < HC_P_COUNT; i++)
        pct_keys[i] = hc_pct_names[i];
    pct_keys[HC_P_COUNT] = NULL;
    if (hc_ydoc_check_keys(d, lim, "limits", mctx, metric_keys, err))
        return -1;
    for (yaml_node_pair_t *p = lim->data.mapping.pairs.start; p < lim->data.mapping.pairs.top; p++) {
        const char *mk = hc_ynode_str(hc_ydoc_node(d, p->key));
        int metric = hc_metric_by_key(mk);
        yaml_node_t *pm = hc_ydoc_node(d, p->value);
        snprintf(pctx, sizeof pctx, "%s.%s", mctx, mk);
        if (hc_ydoc_check_keys(d, pm, mk, pctx, pct_keys, err))
            return -1;
        for (yaml_node_pair_t *q = pm->data.mapping.pairs.start; q < pm->data.mapping.pairs.top; q++) {
            int pct = hc_pct_by_name(hc_ynode_str(hc_ydoc_node(d, q->key)));
            yaml_node_t *val = hc_ydoc_node(d, q->value);
            if (hc_ydoc_expect(d, val, YAML_SCALAR_NODE, hc_ynode_str(hc_ydoc_node(d, q->key)), pctx, err))
                return -1;
            const char *s = hc_ynode_str(val);
            if (!strcmp(s, "none")) {
                t->set[metric][pct] = 0;
                continue;
            }
            double scale, x;
            if (parse_limit_value(d, val, pctx, hc_pct_names[pct], &scale, &x, err) ||
                hc_tier_set(t, metric, pct, scale, x, err))
                return -1;
        }
    }
    return 0;
}

/* ---- suites ---- */

static const char *const suite_keys[] = {"name", "nets", "boards", "backends", "defaultTiers", "tiers", "modes",
                                         "matrix", "notes", "seed", "allow_skips", "reference", "headroom",
                                         "headroom_positions", NULL};
static const char *const backend_keys[] = {"name", "backend", "tiers", "taps", "taps_positions", "repeat",
                                           "repeat_limit", NULL};
static const char *const matrix_keys[] = {"nets", "boards", "backends", "tiers", "overrides", NULL};

typedef struct sctx {
    hc_suite *s;
    pool *pl;
    doc *d;
    size_t tier_cap;
} sctx;

int hc_suite_find_tier(const hc_suite *s, const char *name)
{
    for (size_t i = 0; i < s->n_tiers; i++)
        if (!strcmp(s->tiers[i].name, name))
            return (int)i;
    return -1;
}

/* " (did you mean ...?)" for an unknown tier: among the suite's own tiers and the built-in ones. */
static void tier_hint(const hc_suite *s, const char *w, char *hint, size_t len)
{
    const char *names[64];
    int nn = 0;
    for (size_t k = 0; k < s->n_tiers && nn < 48; k++)
        names[nn++] = s->tiers[k].name;
    for (const char *const *b = hc_tier_builtin_names; *b && nn < 64; b++)
        names[nn++] = *b;
    hc_suggest_text(hint, len, w, strlen(w), names, nn);
}

/* A tier by name: user tiers were loaded first; a built-in is added on first use. */
static int tier_ref(sctx *c, yaml_node_t *v, const char *ctx, hc_err *err)
{
    if (hc_ydoc_expect(c->d, v, YAML_SCALAR_NODE, "tier", ctx, err))
        return -1;
    int i = hc_suite_find_tier(c->s, hc_ynode_str(v));
    if (i >= 0)
        return i;
    hc_tier t;
    if (hc_tier_builtin(hc_ynode_str(v), &t, NULL) || c->s->n_tiers >= c->tier_cap) {
        const char *w = hc_ynode_str(v);
        char hint[96];
        tier_hint(c->s, w, hint, sizeof hint);
        return hc_ydoc_err(c->d, &v->start_mark, ctx, err, "unknown tier \"%s\"%s", w, hint);
    }
    c->s->tiers[c->s->n_tiers] = t;
    return (int)c->s->n_tiers++;
}

static int tier_list(sctx *c, yaml_node_t *v, const char *key, const char *ctx, int **out, size_t *n, hc_err *err)
{
    if (hc_ydoc_expect(c->d, v, YAML_SEQUENCE_NODE, key, ctx, err))
        return -1;
    *n = hc_ynode_seq_len(v);
    if (*n == 0)
        return hc_ydoc_err(c->d, &v->start_mark, ctx, err, "%s: empty list", key);
    *out = pool_alloc(c->pl, *n * sizeof(int), err);
    if (!*out)
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (((*out)[i] = tier_ref(c, hc_ydoc_seq_at(c->d, v, i), ctx, err)) < 0)
            return -1;
    return 0;
}

/* Resolves a list of names against nets/boards/backends; NULL list means all. */
static int name_list(sctx *c, yaml_node_t *v, const char *key, const char *ctx, const char *const *names,
                     size_t n_names, size_t **out, size_t *n, hc_err *err)
{
    if (!v) {
        *n = n_names;
        *out = pool_alloc(c->pl, n_names * sizeof(size_t), err);
        if (!*out)
            return -1;
        for (size_t i = 0; i < n_names; i++)
            (*out)[i] = i;
        return 0;
    }
    if (v->type == YAML_SCALAR_NODE) { /* a single name */
        *n = 1;
    } else if (hc_ydoc_expect(c->d, v, YAML_SEQUENCE_NODE, key, ctx, err)) {
        return -1;
    } else {
        *n = hc_ynode_seq_len(v);
    }
    if (*n == 0)
        return hc_ydoc_err(c->d, &v->start_mark, ctx, err, "%s: empty list", key);
    *out = pool_alloc(c->pl, *n * sizeof(size_t), err);
    if (!*out)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        yaml_node_t *it = v->type == YAML_SCALAR_NODE ? v : hc_ydoc_seq_at(c->d, v, i);
        if (hc_ydoc_expect(c->d, it, YAML_SCALAR_NODE, key, ctx, err))
            return -1;
        size_t j;
        for (j = 0; j < n_names; j++)
            if (!strcmp(names[j], hc_ynode_str(it)))
                break;
        if (j == n_names)
            return hc_ydoc_err(c->d, &it->start_mark, ctx, err, "%s: no such name \"%s\"", key, hc_ynode_str(it));
        (*out)[i] = j;
    }
    return 0;
}

static int parse_items(sctx *c, yaml_node_t *seq, const char *key, int kind, hc_err *err)
{
    hc_suite *s = c->s;
    size_t n = hc_ynode_seq_len(seq);
    if (n == 0 && kind != 2)
        return hc_ydoc_err(c->d, &seq->start_mark, "", err, "%s: empty list", key);
    for (size_t i = 0; i < n; i++) {
        char ictx[64];
        snprintf(ictx, sizeof ictx, "%s[%zu]", key, i);
        const char *ctx = ictx;
        doc sub;
        yaml_node_t *m = resolve_item(c->d, hc_ydoc_seq_at(c->d, seq, i), &sub, c->pl, &ctx, err);
        if (!m)
            return -1;
        doc *dd = sub.loaded ? &sub : c->d;
        int rc;
        const char *name, *file = NULL;
        if (sub.loaded) {
            /* Kept for halfcheck cases --files (ci/sweep sends them to hosts that share no files). */
            const char **inc = pool_alloc(c->pl, (s->n_includes + 1) * sizeof *inc, err);
            const char *f = inc ? pool_strdup(c->pl, sub.file, err) : NULL;
            if (!f) {
                hc_ydoc_free(&sub);
                return -1;
            }
            if (s->n_includes)
                memcpy(inc, s->includes, s->n_includes * sizeof *inc);
            inc[s->n_includes++] = f;
            s->includes = inc;
            file = f;
        }
        if (kind == 0) {
            rc = parse_net(dd, m, ctx, c->pl, &s->nets[i], err);
            name = s->nets[i].name;
            s->nets[i].file = file;
        } else if (kind == 1) {
            rc = parse_board(dd, m, ctx, c->pl, &s->boards[i], err);
            name = s->boards[i].name;
            s->boards[i].file = file;
        } else {
            rc = parse_tier(dd, m, ctx, c->pl, &s->tiers[i], err);
            name = s->tiers[i].name;
            s->tier_files[i] = file;
        }
        yaml_node_t *nm = rc ? NULL : hc_ydoc_get(dd, m, "name");
        if (!rc) {
            for (size_t j = 0; j < i; j++) {
                const char *other = kind == 0 ? s->nets[j].name : kind == 1 ? s->boards[j].name : s->tiers[j].name;
                if (nm && !strcmp(other, name)) {
                    rc = hc_ydoc_err(dd, &nm->start_mark, ctx, err, "duplicate name \"%s\" (also %s[%zu])", name, key,
                                     j);
                    break;
                }
            }
        }
        hc_ydoc_free(&sub);
        if (rc)
            return -1;
    }
    if (kind == 0)
        s->n_nets = n;
    else if (kind == 1)
        s->n_boards = n;
    else
        s->n_tiers = n;
    return 0;
}

static int parse_backends(sctx *c, yaml_node_t *seq, int *default_tiers, size_t n_default, hc_err *err)
{
    hc_suite *s = c->s;
    size_t n = hc_ynode_seq_len(seq);
    if (n == 0)
        return hc_ydoc_err(c->d, &seq->start_mark, "", err, "backends: empty list");
    s->backends = pool_alloc(c->pl, n * sizeof *s->backends, err);
    if (!s->backends)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "backends[%zu]", i);
        yaml_node_t *it = hc_ydoc_seq_at(c->d, seq, i);
        hc_backend_cfg *b = &s->backends[i];
        yaml_node_t *nm = it, *spec_node = it;
        if (it->type == YAML_SCALAR_NODE) {
            if (get_str(c->d, it, "backend", ctx, c->pl, &b->spec, err))
                return -1;
            b->name = b->spec;
            b->taps_positions = 4;
        } else {
            if (hc_ydoc_check_keys(c->d, it, "backend", ctx, backend_keys, err))
                return -1;
            yaml_node_t *v;
            if (!(v = hc_ydoc_require(c->d, it, "backend", ctx, err)) ||
                get_str(c->d, v, "backend", ctx, c->pl, &b->spec, err))
                return -1;
            spec_node = v;
            b->name = b->spec;
            if ((nm = hc_ydoc_get(c->d, it, "name")) && get_str(c->d, nm, "name", ctx, c->pl, &b->name, err))
                return -1;
            if (!nm)
                nm = v;
            if ((v = hc_ydoc_get(c->d, it, "tiers")) && tier_list(c, v, "tiers", ctx, &b->tiers, &b->n_tiers, err))
                return -1;
            const char *taps = NULL;
            if ((v = hc_ydoc_get(c->d, it, "taps")) && get_str(c->d, v, "taps", ctx, c->pl, &taps, err))
                return -1;
            if (taps && strcmp(taps, "on-failure") != 0 && strcmp(taps, "off") != 0)
                return hc_ydoc_err(c->d, &v->start_mark, ctx, err, "taps: \"%s\" (on-failure or off)", taps);
            b->taps_on_failure = taps && !strcmp(taps, "on-failure");
            b->taps_positions = 4;
            if ((v = hc_ydoc_get(c->d, it, "taps_positions")) &&
                hc_ydoc_int(c->d, v, "taps_positions", ctx, 1, 64, &b->taps_positions, err))
                return -1;
            if ((v = hc_ydoc_get(c->d, it, "repeat")) && hc_ydoc_int(c->d, v, "repeat", ctx, 2, 100, &b->repeat, err))
                return -1;
            if ((v = hc_ydoc_get(c->d, it, "repeat_limit")) &&
                hc_ydoc_double(c->d, v, "repeat_limit", ctx, 0, 1e30, &b->repeat_limit, err))
                return -1;
        }
        if (!b->tiers) {
            if (!default_tiers)
                return hc_ydoc_err(c->d, &it->start_mark, ctx, err,
                              "backend \"%s\" names no tiers and the suite has no defaultTiers", b->name);
            b->tiers = default_tiers;
            b->n_tiers = n_default;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->backends[j].name, b->name))
                return hc_ydoc_err(c->d, &nm->start_mark, ctx, err,
                                   "duplicate backend name \"%s\" (also backends[%zu])", b->name, j);
        b->where = where_of(c->d, it, c->pl, err);
        b->spec_where = b->where ? where_of(c->d, spec_node, c->pl, err) : NULL;
        if (!b->where || !b->spec_where)
            return -1;
    }
    s->n_backends = n;
    return 0;
}

typedef struct mentry {
    size_t *nets, *boards, *backends;
    size_t n_nets, n_boards, n_backends;
    int *tiers;
    size_t n_tiers;
    yaml_node_t *overrides;
    char ctx[64];
} mentry;

static int parse_matrix(sctx *c, yaml_node_t *seq, hc_err *err)
{
    hc_suite *s = c->s;
    const char **net_names = pool_alloc(c->pl, s->n_nets * sizeof(char *), err);
    const char **board_names = pool_alloc(c->pl, s->n_boards * sizeof(char *), err);
    const char **backend_names = pool_alloc(c->pl, s->n_backends * sizeof(char *), err);
    if (!net_names || !board_names || !backend_names)
        return -1;
    for (size_t i = 0; i < s->n_nets; i++)
        net_names[i] = s->nets[i].name;
    for (size_t i = 0; i < s->n_boards; i++)
        board_names[i] = s->boards[i].name;
    for (size_t i = 0; i < s->n_backends; i++)
        backend_names[i] = s->backends[i].name;

    size_t n_entries = seq ? hc_ynode_seq_len(seq) : 1;
    if (seq && n_entries == 0)
        return hc_ydoc_err(c->d, &seq->start_mark, "", err, "matrix: empty list");
    mentry *es = pool_alloc(c->pl, n_entries * sizeof *es, err);
    if (!es)
        return -1;
    size_t total = 0;
    for (size_t e = 0; e < n_entries; e++) {
        mentry *me = &es[e];
        yaml_node_t *m = NULL;
        if (seq) {
            snprintf(me->ctx, sizeof me->ctx, "matrix[%zu]", e);
            m = hc_ydoc_seq_at(c->d, seq, e);
            if (hc_ydoc_check_keys(c->d, m, "matrix entry", me->ctx, matrix_keys, err))
                return -1;
            if (!hc_ydoc_require(c->d, m, "nets", me->ctx, err))
                return -1;
        }
        if (name_list(c, m ? hc_ydoc_get(c->d, m, "nets") : NULL, "nets", me->ctx, net_names, s->n_nets, &me->nets,
                      &me->n_nets, err) ||
            name_list(c, m ? hc_ydoc_get(c->d, m, "boards") : NULL, "boards", me->ctx, board_names, s->n_boards,
                      &me->boards, &me->n_boards, err) ||
            name_list(c, m ? hc_ydoc_get(c->d, m, "backends") : NULL, "backends", me->ctx, backend_names,
                      s->n_backends, &me->backends, &me->n_backends, err))
            return -1;
        yaml_node_t *v;
        if (m && (v = hc_ydoc_get(c->d, m, "tiers")) &&
            tier_list(c, v, "tiers", me->ctx, &me->tiers, &me->n_tiers, err))
            return -1;
        if (m && (me->overrides = hc_ydoc_get(c->d, m, "overrides"))) {
            char octx[80];
            snprintf(octx, sizeof octx, "%s.overrides", me->ctx);
            if (hc_ydoc_check_keys(c->d, me->overrides, "overrides", octx, override_keys, err))
                return -1;
        }
        total += me->n_nets * me->n_boards * me->n_backends;
    }
    s->cases = pool_alloc(c->pl, total * sizeof *s->cases, err);
    if (!s->cases)
        return -1;
    for (size_t e = 0; e < n_entries; e++) {
        mentry *me = &es[e];
        char octx[80];
        snprintf(octx, sizeof octx, "%s.overrides", me->ctx);
        for (size_t a = 0; a < me->n_nets; a++)
            for (size_t b = 0; b < me->n_boards; b++)
                for (size_t k = 0; k < me->n_backends; k++) {
                    hc_case *cs = &s->cases[s->n_cases++];
                    cs->net = me->nets[a];
                    cs->board = me->boards[b];
                    cs->backend = me->backends[k];
                    cs->settings = s->boards[cs->board];
                    if (me->overrides && board_settings(c->d, me->overrides, octx, &cs->settings, err))
                        return -1;
                    cs->tiers = me->tiers ? me->tiers : s->backends[cs->backend].tiers;
                    cs->n_tiers = me->tiers ? me->n_tiers : s->backends[cs->backend].n_tiers;
                }
    }
    return 0;
}

static int parse_suite(sctx *c, hc_err *err)
{
    hc_suite *s = c->s;
    doc *d = c->d;
    yaml_node_t *r = hc_ydoc_root(d);
    if (hc_ydoc_check_keys(d, r, "suite", "", suite_keys, err))
        return -1;
    yaml_node_t *v;
    if ((v = hc_ydoc_get(d, r, "name"))) {
        if (get_str(d, v, "name", "", c->pl, &s->name, err))
            return -1;
    } else {
        const char *base = strrchr(s->path, '/');
        if (!(s->name = pool_strdup(c->pl, base ? base + 1 : s->path, err)))
            return -1;
    }
    if ((v = hc_ydoc_get(d, r, "notes")) && hc_ydoc_expect(d, v, YAML_SCALAR_NODE, "notes", "", err))
        return -1;

    yaml_node_t *tiers = hc_ydoc_get(d, r, "tiers");
    size_t n_user = 0;
    if (tiers) {
        if (hc_ydoc_expect(d, tiers, YAML_SEQUENCE_NODE, "tiers", "", err))
            return -1;
        n_user = hc_ynode_seq_len(tiers);
    }
    c->tier_cap = n_user + 8;
    if (!(s->tiers = pool_alloc(c->pl, c->tier_cap * sizeof *s->tiers, err)) ||
        !(s->tier_files = pool_alloc(c->pl, c->tier_cap * sizeof *s->tier_files, err)))
        return -1;
    if (tiers && parse_items(c, tiers, "tiers", 2, err))
        return -1;

    yaml_node_t *nets, *boards, *backends;
    if (!(nets = hc_ydoc_require(d, r, "nets", "", err)) ||
        hc_ydoc_expect(d, nets, YAML_SEQUENCE_NODE, "nets", "", err))
        return -1;
    if (!(s->nets = pool_alloc(c->pl, hc_ynode_seq_len(nets) * sizeof *s->nets, err)) ||
        parse_items(c, nets, "nets", 0, err))
        return -1;
    if (!(boards = hc_ydoc_require(d, r, "boards", "", err)) ||
        hc_ydoc_expect(d, boards, YAML_SEQUENCE_NODE, "boards", "", err))
        return -1;
    if (!(s->boards = pool_alloc(c->pl, hc_ynode_seq_len(boards) * sizeof *s->boards, err)) ||
        parse_items(c, boards, "boards", 1, err))
        return -1;

    int *def = NULL;
    size_t n_def = 0;
    if ((v = hc_ydoc_get(d, r, "defaultTiers")) && tier_list(c, v, "defaultTiers", "", &def, &n_def, err))
        return -1;
    if (!(backends = hc_ydoc_require(d, r, "backends", "", err)) ||
        hc_ydoc_expect(d, backends, YAML_SEQUENCE_NODE, "backends", "", err) ||
        parse_backends(c, backends, def, n_def, err))
        return -1;

    s->modes = HC_MODE_UNBATCHED | HC_MODE_BATCHED;
    if ((v = hc_ydoc_get(d, r, "modes"))) {
        if (hc_ydoc_expect(d, v, YAML_SEQUENCE_NODE, "modes", "", err))
            return -1;
        s->modes = 0;
        for (size_t i = 0; i < hc_ynode_seq_len(v); i++) {
            yaml_node_t *it = hc_ydoc_seq_at(d, v, i);
            if (hc_ydoc_expect(d, it, YAML_SCALAR_NODE, "modes", "", err))
                return -1;
            if (!strcmp(hc_ynode_str(it), "unbatched"))
                s->modes |= HC_MODE_UNBATCHED;
            else if (!strcmp(hc_ynode_str(it), "batched"))
                s->modes |= HC_MODE_BATCHED;
            else
                return hc_ydoc_err(d, &it->start_mark, "modes", err, "unknown mode \"%s\" (unbatched or batched)",
                              hc_ynode_str(it));
        }
        if (!s->modes)
            return hc_ydoc_err(d, &v->start_mark, "", err, "modes: empty list");
    }
    if ((v = hc_ydoc_get(d, r, "seed"))) {
        if (hc_ydoc_int(d, v, "seed", "", 0, 2147483647L, &s->seed, err))
            return -1;
        s->has_seed = 1;
    }
    if ((v = hc_ydoc_get(d, r, "allow_skips")) && hc_ydoc_bool(d, v, "allow_skips", "", &s->allow_skips, err))
        return -1;
    if ((v = hc_ydoc_get(d, r, "reference"))) {
        const char *ref = v->type == YAML_SCALAR_NODE ? hc_ynode_str(v) : NULL;
        /* the reference must be the fp32 reference's bits: the CPU's or the GPU's, nothing else */
        if (!ref || (strcmp(ref, "ref32") != 0 && strcmp(ref, "cuda:ref32") != 0))
            return hc_ydoc_err(d, &v->start_mark, "reference", err, "must be ref32 or cuda:ref32 (got \"%s\")",
                               ref ? ref : "?");
        if (!(s->reference = pool_strdup(c->pl, ref, err)))
            return -1;
    }
    if ((v = hc_ydoc_get(d, r, "headroom"))) {
        /* the formats whose largest finite value a figure is measured against (hc_headroom_limit) */
        static const char *const fmts[] = {"fp16", "bf16"};
        const char *f = v->type == YAML_SCALAR_NODE ? hc_ynode_str(v) : "?";
        if (!strcmp(f, "fp16"))
            s->headroom = HC_SUITE_HEADROOM_FP16;
        else if (!strcmp(f, "bf16"))
            s->headroom = HC_SUITE_HEADROOM_BF16;
        else {
            char hint[96];
            hc_suggest_text(hint, sizeof hint, f, strlen(f), fmts, 2);
            return hc_ydoc_err(d, &v->start_mark, "headroom", err, "unknown format \"%s\"%s (fp16 or bf16)", f,
                               hint);
        }
    }
    s->headroom_positions = 64;
    if ((v = hc_ydoc_get(d, r, "headroom_positions")) &&
        hc_ydoc_int(d, v, "headroom_positions", "", 1, 1000000L, &s->headroom_positions, err))
        return -1;
    yaml_node_t *matrix = hc_ydoc_get(d, r, "matrix");
    if (matrix && hc_ydoc_expect(d, matrix, YAML_SEQUENCE_NODE, "matrix", "", err))
        return -1;
    return parse_matrix(c, matrix, err);
}

hc_suite *hc_suite_parse(const char *yaml, size_t len, const char *path, hc_err *err)
{
    pool *pl = calloc(1, sizeof *pl);
    if (!pl) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return NULL;
    }
    hc_suite *s = pool_alloc(pl, sizeof *s, err);
    if (!s) {
        pool_free(pl);
        return NULL;
    }
    s->mem_ = pl;
    doc d;
    if (!(s->path = pool_strdup(pl, path, err)) || hc_ydoc_load_mem(&d, yaml, len, s->path, "document", err)) {
        pool_free(pl);
        return NULL;
    }
    sctx c = {s, pl, &d, 0};
    int rc = parse_suite(&c, err);
    hc_ydoc_free(&d);
    if (rc) {
        pool_free(pl);
        return NULL;
    }
    return s;
}

hc_suite *hc_suite_load(const char *path, hc_err *err)
{
    size_t len;
    char *text = hc_read_file(path, MAX_CONFIG_BYTES, &len, err);
    if (!text)
        return NULL;
    hc_suite *s = hc_suite_parse(text, len, path, err);
    free(text);
    return s;
}

int hc_suite_check_backends(const hc_suite *s, const struct hc_backend_registry *reg, hc_err *err)
{
    for (size_t i = 0; i < s->n_backends; i++) {
        const char *params;
        hc_err e = {0};
        if (!hc_backend_find(reg, s->backends[i].spec, &params, &e))
            return hc_err_set(err, HC_ECONFIG, "%s: %s (in backends[%zu])", s->backends[i].where, e.msg, i);
    }
    return 0;
}

void hc_suite_free(hc_suite *s)
{
    if (s)
        pool_free(s->mem_);
}

/* ---- suites built in memory (hc_suite_new and the adders) ---- */

hc_suite *hc_suite_new(const char *path, const char *name, hc_err *err)
{
    pool *pl = calloc(1, sizeof *pl);
    hc_suite *s = pl ? pool_alloc(pl, sizeof *s, err) : NULL;
    if (!s) {
        if (!pl)
            hc_err_set(err, HC_ENOMEM, "out of memory");
        pool_free(pl);
        return NULL;
    }
    s->mem_ = pl;
    pl->built = 1;
    s->modes = HC_MODE_UNBATCHED | HC_MODE_BATCHED;
    s->headroom_positions = 64;
    if (!(s->path = pool_strdup(pl, path, err)) || !(s->name = pool_strdup(pl, name, err))) {
        pool_free(pl);
        return NULL;
    }
    return s;
}

/* arr (n items of size bytes) with room for one more (capacity: the next power of two): arr
 * itself, or where it moved; NULL with err. */
static void *room(hc_suite *s, void *arr, size_t n, size_t size, hc_err *err)
{
    if (!((pool *)s->mem_)->built) {
        hc_err_set(err, HC_EINTERNAL, "%s: a suite read from a file takes no more items", s->path);
        return NULL;
    }
    if (n != 0 && (n & (n - 1)) != 0)
        return arr;
    return pool_grow(s->mem_, arr, n * size, (n ? 2 * n : 1) * size, err);
}

/* "PATH: key[i]", the place of a built item in the suite as written. */
static const char *built_where(hc_suite *s, const char *key, size_t i, hc_err *err)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s: %s[%zu]", s->path, key, i);
    return pool_strdup(s->mem_, buf, err);
}

static const char *dup_or_null(hc_suite *s, const char *str, hc_err *err, int *bad)
{
    const char *d = str ? pool_strdup(s->mem_, str, err) : NULL;
    *bad |= str && !d;
    return d;
}

int hc_suite_add_net(hc_suite *s, const hc_net_cfg *net, hc_err *err)
{
    for (size_t j = 0; j < s->n_nets; j++)
        if (!strcmp(s->nets[j].name, net->name))
            return hc_err_set(err, HC_ECONFIG, "%s: nets[%zu]: duplicate name \"%s\" (also nets[%zu])", s->path,
                              s->n_nets, net->name, j);
    hc_net_cfg *nets = room(s, s->nets, s->n_nets, sizeof *s->nets, err);
    if (!nets)
        return -1;
    s->nets = nets;
    hc_net_cfg *n = &s->nets[s->n_nets];
    int bad = 0;
    *n = *net;
    n->name = dup_or_null(s, net->name, err, &bad);
    n->model = dup_or_null(s, net->model, err, &bad);
    n->sha256 = dup_or_null(s, net->sha256, err, &bad);
    n->notes = dup_or_null(s, net->notes, err, &bad);
    n->file = dup_or_null(s, net->file, err, &bad);
    if (bad || !(n->where = built_where(s, "nets", s->n_nets, err)))
        return -1;
    return (int)s->n_nets++;
}

int hc_suite_add_board_file(hc_suite *s, const char *path, hc_err *err)
{
    pool *pl = s->mem_;
    hc_board_cfg *boards = room(s, s->boards, s->n_boards, sizeof *s->boards, err);
    if (boards)
        s->boards = boards;
    const char **inc = boards ? room(s, s->includes, s->n_includes, sizeof *s->includes, err) : NULL;
    if (!inc)
        return -1;
    s->includes = inc;
    hc_board_cfg *b = &s->boards[s->n_boards];
    doc d;
    const char *file = pool_strdup(pl, path, err);
    if (!file || hc_ydoc_load_file(&d, file, MAX_CONFIG_BYTES, "document", err))
        return -1;
    int rc = parse_board(&d, hc_ydoc_root(&d), "", pl, b, err);
    hc_ydoc_free(&d);
    if (rc)
        return -1;
    for (size_t j = 0; j < s->n_boards; j++)
        if (!strcmp(s->boards[j].name, b->name))
            return hc_err_set(err, HC_ECONFIG, "%s: boards[%zu]: duplicate name \"%s\" (also boards[%zu], %s)",
                              s->path, s->n_boards, b->name, j, s->boards[j].where);
    b->file = file;
    s->includes[s->n_includes++] = file;
    return (int)s->n_boards++;
}

int hc_suite_add_backend(hc_suite *s, const char *name, const char *spec, const char *const *tiers, size_t n_tiers,
                         hc_err *err)
{
    size_t i = s->n_backends;
    for (size_t j = 0; j < i; j++)
        if (!strcmp(s->backends[j].name, name))
            return hc_err_set(err, HC_ECONFIG, "%s: backends[%zu]: duplicate backend name \"%s\" (also backends[%zu])",
                              s->path, i, name, j);
    if (n_tiers == 0)
        return hc_err_set(err, HC_ECONFIG, "%s: backends[%zu]: backend \"%s\" names no tiers", s->path, i, name);
    int *idx = pool_alloc(s->mem_, n_tiers * sizeof *idx, err);
    if (!idx)
        return -1;
    for (size_t t = 0; t < n_tiers; t++) {
        int k = hc_suite_find_tier(s, tiers[t]);
        hc_tier tier;
        if (k < 0 && hc_tier_builtin(tiers[t], &tier, NULL) == 0) {
            hc_tier *ts = room(s, s->tiers, s->n_tiers, sizeof *s->tiers, err);
            if (ts)
                s->tiers = ts;
            const char **tf = ts ? room(s, s->tier_files, s->n_tiers, sizeof *s->tier_files, err) : NULL;
            if (!tf)
                return -1;
            s->tier_files = tf;
            s->tiers[s->n_tiers] = tier;
            k = (int)s->n_tiers++;
        }
        if (k < 0) {
            char hint[96];
            tier_hint(s, tiers[t], hint, sizeof hint);
            return hc_err_set(err, HC_ECONFIG, "%s: backends[%zu]: unknown tier \"%s\"%s", s->path, i, tiers[t], hint);
        }
        idx[t] = k;
    }
    hc_backend_cfg *bs = room(s, s->backends, i, sizeof *s->backends, err);
    if (!bs)
        return -1;
    s->backends = bs;
    hc_backend_cfg *b = &s->backends[i];
    int bad = 0;
    b->name = dup_or_null(s, name, err, &bad);
    b->spec = dup_or_null(s, spec, err, &bad);
    b->tiers = idx;
    b->n_tiers = n_tiers;
    b->taps_positions = 4;
    if (bad || !(b->where = b->spec_where = built_where(s, "backends", i, err)))
        return -1;
    return (int)s->n_backends++;
}

long hc_suite_add_case(hc_suite *s, size_t net, size_t board, size_t backend, hc_err *err)
{
    if (net >= s->n_nets || board >= s->n_boards || backend >= s->n_backends)
        return hc_err_set(err, HC_EINTERNAL, "%s: a case of net %zu, board %zu, backend %zu: no such index", s->path,
                          net, board, backend);
    hc_case *cs = room(s, s->cases, s->n_cases, sizeof *s->cases, err);
    if (!cs)
        return -1;
    s->cases = cs;
    hc_case *c = &s->cases[s->n_cases];
    c->net = net;
    c->board = board;
    c->backend = backend;
    c->settings = s->boards[board];
    c->tiers = s->backends[backend].tiers;
    c->n_tiers = s->backends[backend].n_tiers;
    return (long)s->n_cases++;
}

/* ---- standalone files ---- */

/* yaml == NULL: read path. */
static int load_one(const char *yaml, size_t len, const char *path, int kind, void *out, hc_config_holder *holder,
                    hc_err *err)
{
    pool *pl = holder ? holder->mem_ : NULL;
    if (!pl) {
        pl = calloc(1, sizeof *pl);
        if (!pl)
            return hc_err_set(err, HC_ENOMEM, "out of memory");
    }
    doc d;
    int rc = yaml ? hc_ydoc_load_mem(&d, yaml, len, path, "document", err)
                  : hc_ydoc_load_file(&d, path, MAX_CONFIG_BYTES, "document", err);
    if (!rc) {
        if (kind == 0)
            rc = parse_net(&d, hc_ydoc_root(&d), "", pl, out, err);
        else if (kind == 1)
            rc = parse_board(&d, hc_ydoc_root(&d), "", pl, out, err);
        else
            rc = parse_tier(&d, hc_ydoc_root(&d), "", pl, out, err);
        hc_ydoc_free(&d);
    }
    if (holder)
        holder->mem_ = pl;
    else
        pool_free(pl);
    return rc;
}

int hc_net_cfg_load(const char *path, hc_net_cfg *out, hc_config_holder *holder, hc_err *err)
{
    return load_one(NULL, 0, path, 0, out, holder, err);
}

int hc_board_cfg_load(const char *path, hc_board_cfg *out, hc_config_holder *holder, hc_err *err)
{
    return load_one(NULL, 0, path, 1, out, holder, err);
}

int hc_tier_cfg_load(const char *path, hc_tier *out, hc_err *err)
{
    return load_one(NULL, 0, path, 2, out, NULL, err);
}

int hc_net_cfg_parse(const char *yaml, size_t len, const char *path, hc_net_cfg *out, hc_config_holder *holder,
                     hc_err *err)
{
    return load_one(yaml, len, path, 0, out, holder, err);
}

int hc_board_cfg_parse(const char *yaml, size_t len, const char *path, hc_board_cfg *out, hc_config_holder *holder,
                       hc_err *err)
{
    return load_one(yaml, len, path, 1, out, holder, err);
}

int hc_tier_cfg_parse(const char *yaml, size_t len, const char *path, hc_tier *out, hc_err *err)
{
    return load_one(yaml, len, path, 2, out, NULL, err);
}

void hc_config_holder_free(hc_config_holder *h)
{
    if (h) {
        pool_free(h->mem_);
        h->mem_ = NULL;
    }
}

/* ---- nets replaced from the command line (hc_suite_replace_nets) ---- */

static int net_index(const hc_suite *s, const char *name, size_t len)
{
    for (size_t i = 0; i < s->n_nets; i++)
        if (strlen(s->nets[i].name) == len && strncmp(s->nets[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

static int replace_net(hc_suite *s, size_t i, const char *path, int keep_version, hc_err *err)
{
    const char *p = pool_strdup(s->mem_, path, err);
    if (!p)
        return -1;
    s->nets[i].model = p;
    s->nets[i].file = NULL; /* the net file names the model replaced */
    s->nets[i].sha256 = NULL;
    if (!keep_version)
        s->nets[i].model_version = -1;
    return 0;
}

int hc_suite_replace_nets(hc_suite *s, const char *const *specs, size_t n, hc_err *err)
{
    unsigned char *named = calloc(s->n_nets ? s->n_nets : 1, 1);
    if (!named)
        return hc_err_set(err, HC_ENOMEM, "out of memory replacing nets");
    const char *all = NULL; /* the one PATH or DIR spec */
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const char *sp = specs[k], *eq = strchr(sp, '=');
        struct stat st;
        int ni = eq ? net_index(s, sp, (size_t)(eq - sp)) : -1;
        if (ni >= 0) {
            if (stat(eq + 1, &st) != 0)
                rc = hc_err_set(err, HC_EUSAGE, "--net %s: %s: %s", sp, eq + 1, strerror(errno));
            else if (!S_ISREG(st.st_mode))
                rc = hc_err_set(err, HC_EUSAGE, "--net %s: %s: not a file", sp, eq + 1);
            else if (named[ni])
                rc = hc_err_set(err, HC_EUSAGE, "--net %s: net %s is given twice", sp, s->nets[ni].name);
            else {
                named[ni] = 1;
                rc = replace_net(s, (size_t)ni, eq + 1, 0, err);
            }
        } else if (stat(sp, &st) != 0) {
            if (eq) {
                char names[512] = "";
                for (size_t i = 0; i < s->n_nets; i++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                             s->nets[i].name);
                rc = hc_err_set(err, HC_EUSAGE, "--net %s: the suite has no net named \"%.*s\" (its nets: %s)", sp,
                                (int)(eq - sp), sp, names);
            } else
                rc = hc_err_set(err, HC_EUSAGE, "--net %s: %s", sp, strerror(errno));
        } else if (all) {
            rc = hc_err_set(err, HC_EUSAGE, "--net %s: only one --net PATH or DIR (already %s); name the others "
                            "NAME=PATH", sp, all);
        } else
            all = sp;
    }
    struct stat st;
    if (rc == 0 && all && stat(all, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t matched = 0;
        for (size_t i = 0; rc == 0 && i < s->n_nets; i++) {
            if (named[i])
                continue;
            const char *base = strrchr(s->nets[i].model, '/');
            base = base ? base + 1 : s->nets[i].model;
            size_t need = strlen(all) + strlen(base) + 2;
            char *cand = malloc(need);
            if (!cand) {
                rc = hc_err_set(err, HC_ENOMEM, "out of memory replacing nets");
                break;
            }
            snprintf(cand, need, "%s/%s", all, base);
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
                matched++;
                rc = replace_net(s, i, cand, 1, err);
            }
            free(cand);
        }
        if (rc == 0 && matched == 0)
            rc = hc_err_set(err, HC_EUSAGE, "--net %s: the directory holds none of the suite's net files (by file "
                            "name)", all);
    } else if (rc == 0 && all) {
        for (size_t i = 0; rc == 0 && i < s->n_nets; i++)
            if (!named[i])
                rc = replace_net(s, i, all, 0, err);
    }
    free(named);
    return rc;
}
