/* The suite writer beside its reader (config.c): an hc_suite as YAML that hc_suite_load reads back
 * as the same suite. Every string goes through one quoting function (yq). */
#include "harness/config/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/base/strbuf.h"
#include "harness/base/stream.h"

typedef struct wctx {
    hc_strbuf b;
    const hc_suite *s;
    char dir[4096];   /* the written file's directory, "" or ending in '/', as the reader anchors paths */
    char cwd[4096];   /* "" until needed */
    hc_err *err;
    int bad;          /* err set */
} wctx;

static int fail(wctx *w, int code, const char *fmt, const char *what, const char *value)
{
    if (!w->bad)
        hc_err_set(w->err, code, fmt, w->s->path, what, value);
    w->bad = 1;
    return -1;
}

/* Whether s is UTF-8 (libyaml reads nothing else). */
static int utf8_ok(const unsigned char *s)
{
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2 : (*s & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0 || (n == 1 && *s < 0xc2))
            return 0;
        s++;
        for (int i = 0; i < n; i++, s++)
            if ((*s & 0xc0) != 0x80)
                return 0;
    }
    return 1;
}

/* The one quoting of a string: a YAML double-quoted scalar, its quote, backslash and control
 * characters escaped. what names the field in the error of a string that is not UTF-8. */
static void yq(wctx *w, const char *what, const char *s)
{
    if (!utf8_ok((const unsigned char *)s)) {
        fail(w, HC_ECONFIG, "%s: %s: \"%s\" is not UTF-8, which a YAML file cannot hold", what, s);
        return;
    }
    hc_strbuf_printf(&w->b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            hc_strbuf_printf(&w->b, "\\%c", *p);
        else if (*p == '\n')
            hc_strbuf_printf(&w->b, "\\n");
        else if (*p == '\t')
            hc_strbuf_printf(&w->b, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            hc_strbuf_printf(&w->b, "\\x%02X", *p);
        else
            hc_strbuf_printf(&w->b, "%c", *p);
    }
    hc_strbuf_printf(&w->b, "\"");
}

/* A double as the shortest %g that reads back as the same bits. */
static void num(wctx *w, double x)
{
    char t[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x)
            break;
    }
    hc_strbuf_printf(&w->b, "%s", t);
}

/* A path of the suite (resolved by the reader against its file's directory) written so that the
 * reader, anchoring it at the written file's directory, resolves it to the same string where it
 * can (under that directory, or no directory), else absolute. */
static void path(wctx *w, const char *what, const char *p)
{
    size_t dl = strlen(w->dir);
    if (p[0] == '/' || !dl) {
        yq(w, what, p);
        return;
    }
    if (strncmp(p, w->dir, dl) == 0 && p[dl]) {
        yq(w, what, p + dl);
        return;
    }
    if (!w->cwd[0] && !getcwd(w->cwd, sizeof w->cwd)) {
        fail(w, HC_EIO, "%s: %s: %s: cannot make the path absolute (the working directory is unknown)", what, p);
        return;
    }
    char abs[8192];
    snprintf(abs, sizeof abs, "%s/%s", w->cwd, p[0] == '.' && p[1] == '/' ? p + 2 : p);
    yq(w, what, abs);
}

static int is_builtin_tier(const char *name)
{
    for (const char *const *b = hc_tier_builtin_names; *b; b++)
        if (!strcmp(*b, name))
            return 1;
    return 0;
}

/* One limit: "x%" where the tier compares 100*value (as the reader takes "x%"), else the number. */
static void limit(wctx *w, const hc_tier *t, double scale, double x)
{
    if (scale != 1 && scale != 100) {
        fail(w, HC_ECONFIG, "%s: tier %s: a limit %s, which the suite format cannot say", t->name,
             "of a scale other than 1 or 100");
        return;
    }
    num(w, x);
    if (scale == 100)
        hc_strbuf_printf(&w->b, "%%");
}

static void tier(wctx *w, const hc_tier *t)
{
    hc_strbuf_printf(&w->b, "  - name: ");
    yq(w, "tier name", t->name);
    hc_strbuf_printf(&w->b, "\n    limits:");
    int any = 0;
    for (int m = 0; m < HC_M_COUNT; m++) {
        int n = 0;
        for (int p = 0; p < HC_P_COUNT; p++) {
            if (!t->set[m][p])
                continue;
            if (!n++)
                hc_strbuf_printf(&w->b, "\n      %s: {", hc_metric_infos[m].key);
            hc_strbuf_printf(&w->b, "%s%s: ", n > 1 ? ", " : "", hc_pct_names[p]);
            limit(w, t, t->scale[m][p], t->limit[m][p]);
        }
        if (n)
            hc_strbuf_printf(&w->b, "}");
        any += n;
    }
    hc_strbuf_printf(&w->b, "%s\n", any ? "" : " {}");
    int n = 0;
    for (int m = 0; m < HC_M_COUNT; m++) {
        if (!t->bias_set[m])
            continue;
        hc_strbuf_printf(&w->b, "%s%s: ", n++ ? ", " : "    maxBias: {", hc_metric_infos[m].key);
        limit(w, t, t->bias_scale[m], t->bias_limit[m]);
    }
    if (n)
        hc_strbuf_printf(&w->b, "}\n");
}

/* The board keys a case may override, as " key: value" pairs, those of b that differ from base
 * (all of them when base is NULL). */
static int settings(wctx *w, const hc_board_cfg *b, const hc_board_cfg *base)
{
    int n = 0;
#define KEY(field, name, fmt)                                                                                          \
    if (!base || b->field != base->field) {                                                                            \
        hc_strbuf_printf(&w->b, "%s" name ": ", n++ ? ", " : "");                                                      \
        fmt;                                                                                                           \
    }
    KEY(policy_optimism, "policyOptimism", num(w, b->policy_optimism))
    KEY(pda, "playoutDoublingAdvantage", num(w, b->pda))
    KEY(policy_temperature, "policyTemperature", num(w, b->policy_temperature))
    KEY(max_batch_size, "maxBatchSize", hc_strbuf_printf(&w->b, "%d", b->max_batch_size))
    KEY(require_exact_nn_len, "requireExactNNLen",
        hc_strbuf_printf(&w->b, "%s", b->require_exact_nn_len ? "true" : "false"))
#undef KEY
    return n;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether case c says only what a matrix entry can: its board's NN buffer and positions. */
static int case_expressible(wctx *w, size_t i)
{
    const hc_case *c = &w->s->cases[i];
    const hc_board_cfg *b = &w->s->boards[c->board];
    if (c->settings.nn_x_len == b->nn_x_len && c->settings.nn_y_len == b->nn_y_len &&
        same_str(c->settings.positions, b->positions) && same_str(c->settings.sgf, b->sgf))
        return 1;
    char what[64];
    snprintf(what, sizeof what, "case %zu", i);
    return fail(w, HC_ECONFIG, "%s: %s: its NN buffer or positions differ from board %s's, which no override says",
                what, b->name) + 1;
}

static int same_settings(const hc_board_cfg *a, const hc_board_cfg *b)
{
    return a->policy_optimism == b->policy_optimism && a->pda == b->pda &&
           a->policy_temperature == b->policy_temperature && a->max_batch_size == b->max_batch_size &&
           a->require_exact_nn_len == b->require_exact_nn_len;
}

static int same_tiers(const int *a, size_t na, const int *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Whether case i is what the reader makes of no matrix entry for it: its board's settings, its
 * backend's tiers. */
static int plain_case(const hc_suite *s, size_t i)
{
    const hc_case *c = &s->cases[i];
    const hc_backend_cfg *k = &s->backends[c->backend];
    return same_settings(&c->settings, &s->boards[c->board]) && same_tiers(c->tiers, c->n_tiers, k->tiers, k->n_tiers);
}

static void tier_names(wctx *w, const int *tiers, size_t n)
{
    hc_strbuf_printf(&w->b, "[");
    for (size_t t = 0; t < n; t++) {
        hc_strbuf_printf(&w->b, "%s", t ? ", " : "");
        yq(w, "tier name", w->s->tiers[tiers[t]].name);
    }
    hc_strbuf_printf(&w->b, "]");
}

/* The matrix: none when the cases are every net x board x backend in the reader's order, each
 * plain; else an entry per net x board whose cases are every backend in order with one set of
 * settings and tiers, and an entry per case for the rest. */
static void matrix(wctx *w)
{
    const hc_suite *s = w->s;
    int all = s->n_backends && s->n_boards && s->n_cases == s->n_nets * s->n_boards * s->n_backends;
    for (size_t i = 0; i < s->n_cases; i++) {
        if (!case_expressible(w, i))
            return;
        const hc_case *c = &s->cases[i];
        size_t want = all ? i / s->n_backends : 0;
        all = all && plain_case(s, i) && c->backend == i % s->n_backends && c->board == want % s->n_boards &&
              c->net == want / s->n_boards;
    }
    if (all)
        return;
    hc_strbuf_printf(&w->b, "matrix:\n");
    size_t nk = s->n_backends;
    for (size_t i = 0; i < s->n_cases;) {
        const hc_case *c = &s->cases[i];
        size_t run = 1;
        /* a run of every backend: the same net, board, settings, and tiers that are either each
         * backend's own or one list for all */
        int own = plain_case(s, i), one = 1;
        if (c->backend == 0 && i + nk <= s->n_cases) {
            for (run = 1; run < nk; run++) {
                const hc_case *d = &s->cases[i + run];
                if (d->backend != run || d->net != c->net || d->board != c->board ||
                    !same_settings(&d->settings, &c->settings))
                    break;
                own &= same_tiers(d->tiers, d->n_tiers, s->backends[d->backend].tiers, s->backends[d->backend].n_tiers);
                one &= same_tiers(d->tiers, d->n_tiers, c->tiers, c->n_tiers);
            }
            if (run < nk || (!own && !one))
                run = 1;
        }
        hc_strbuf_printf(&w->b, "  - {nets: [");
        yq(w, "net name", s->nets[c->net].name);
        hc_strbuf_printf(&w->b, "], boards: [");
        yq(w, "board name", s->boards[c->board].name);
        hc_strbuf_printf(&w->b, "]");
        if (run == 1 && nk > 1) {
            hc_strbuf_printf(&w->b, ", backends: [");
            yq(w, "backend name", s->backends[c->backend].name);
            hc_strbuf_printf(&w->b, "]");
        }
        const hc_backend_cfg *k = &s->backends[c->backend];
        if (!(run == 1 ? same_tiers(c->tiers, c->n_tiers, k->tiers, k->n_tiers) : own)) {
            hc_strbuf_printf(&w->b, ", tiers: ");
            tier_names(w, c->tiers, c->n_tiers);
        }
        if (!same_settings(&c->settings, &s->boards[c->board])) {
            hc_strbuf_printf(&w->b, ", overrides: {");
            settings(w, &c->settings, &s->boards[c->board]);
            hc_strbuf_printf(&w->b, "}");
        }
        hc_strbuf_printf(&w->b, "}\n");
        i += run;
    }
}

/* A list item naming the file an item was read from: written when file is set (returns 1). */
static int file_item(wctx *w, const char *what, const char *file)
{
    if (!file)
        return 0;
    hc_strbuf_printf(&w->b, "  - ");
    path(w, what, file);
    hc_strbuf_printf(&w->b, "\n");
    return 1;
}

/* lead, then key: "value" (a path re-anchored when is_path); nothing when value is NULL. */
static void field(wctx *w, const char *lead, const char *key, const char *value, int is_path)
{
    if (!value)
        return;
    hc_strbuf_printf(&w->b, "%s%s: ", lead, key);
    if (is_path)
        path(w, key, value);
    else
        yq(w, key, value);
}

static void suite(wctx *w, const char *comment)
{
    const hc_suite *s = w->s;
    for (const char *p = comment; p && *p;) {
        const char *end = strchr(p, '\n');
        int n = end ? (int)(end - p) : (int)strlen(p);
        hc_strbuf_printf(&w->b, "#%s%.*s\n", n ? " " : "", n, p);
        p = end ? end + 1 : NULL;
    }
    hc_strbuf_printf(&w->b, "name: ");
    yq(w, "name", s->name);
    hc_strbuf_printf(&w->b, "\n");
    size_t n_user = 0;
    for (size_t t = 0; t < s->n_tiers; t++)
        n_user += !is_builtin_tier(s->tiers[t].name);
    if (n_user)
        hc_strbuf_printf(&w->b, "tiers:\n");
    for (size_t t = 0; t < s->n_tiers; t++)
        if (!is_builtin_tier(s->tiers[t].name) && !file_item(w, "tier file", s->tier_files ? s->tier_files[t] : NULL))
            tier(w, &s->tiers[t]);
    hc_strbuf_printf(&w->b, "nets:\n");
    for (size_t i = 0; i < s->n_nets; i++) {
        const hc_net_cfg *n = &s->nets[i];
        if (file_item(w, "net file", n->file))
            continue;
        field(w, "  - {", "name", n->name, 0);
        field(w, ", ", "model", n->model, 1);
        field(w, ", ", "sha256", n->sha256, 0);
        if (n->model_version >= 0)
            hc_strbuf_printf(&w->b, ", modelVersion: %d", n->model_version);
        field(w, ", ", "notes", n->notes, 0);
        hc_strbuf_printf(&w->b, "}\n");
    }
    hc_strbuf_printf(&w->b, "boards:\n");
    for (size_t i = 0; i < s->n_boards; i++) {
        const hc_board_cfg *b = &s->boards[i];
        if (file_item(w, "board file", b->file))
            continue;
        field(w, "  - {", "name", b->name, 0);
        field(w, ", ", b->sgf ? "sgf" : "positions", b->sgf ? b->sgf : b->positions, 1);
        hc_strbuf_printf(&w->b, ", nnBuffer: %dx%d, ", b->nn_x_len, b->nn_y_len);
        settings(w, b, NULL);
        hc_strbuf_printf(&w->b, "}\n");
    }
    hc_strbuf_printf(&w->b, "backends:\n");
    for (size_t i = 0; i < s->n_backends; i++) {
        const hc_backend_cfg *k = &s->backends[i];
        hc_strbuf_printf(&w->b, "  - name: ");
        yq(w, "backend name", k->name);
        hc_strbuf_printf(&w->b, "\n    backend: ");
        yq(w, "backend", k->spec);
        hc_strbuf_printf(&w->b, "\n    tiers: ");
        tier_names(w, k->tiers, k->n_tiers);
        hc_strbuf_printf(&w->b, "\n");
        if (k->taps_on_failure)
            hc_strbuf_printf(&w->b, "    taps: on-failure\n");
        if (k->taps_positions != 4)
            hc_strbuf_printf(&w->b, "    taps_positions: %d\n", k->taps_positions);
        if (k->repeat)
            hc_strbuf_printf(&w->b, "    repeat: %d\n", k->repeat);
        if (k->repeat_limit != 0) {
            hc_strbuf_printf(&w->b, "    repeat_limit: ");
            num(w, k->repeat_limit);
            hc_strbuf_printf(&w->b, "\n");
        }
    }
    hc_strbuf_printf(&w->b, "modes: [%s%s%s]\n", s->modes & HC_MODE_UNBATCHED ? "unbatched" : "",
                     s->modes == (HC_MODE_UNBATCHED | HC_MODE_BATCHED) ? ", " : "",
                     s->modes & HC_MODE_BATCHED ? "batched" : "");
    if (s->has_seed)
        hc_strbuf_printf(&w->b, "seed: %d\n", s->seed);
    if (s->allow_skips)
        hc_strbuf_printf(&w->b, "allow_skips: true\n");
    if (s->reference) {
        hc_strbuf_printf(&w->b, "reference: ");
        yq(w, "reference", s->reference);
        hc_strbuf_printf(&w->b, "\n");
    }
    if (s->headroom)
        hc_strbuf_printf(&w->b, "headroom: %s\n", s->headroom == HC_SUITE_HEADROOM_BF16 ? "bf16" : "fp16");
    if (s->headroom_positions != 64)
        hc_strbuf_printf(&w->b, "headroom_positions: %d\n", s->headroom_positions);
    matrix(w);
}

char *hc_suite_format(const hc_suite *s, const char *path, const char *comment, size_t *len, hc_err *err)
{
    wctx *w = calloc(1, sizeof *w);
    if (!w) {
        hc_err_set(err, HC_ENOMEM, "out of memory writing a suite");
        return NULL;
    }
    w->s = s;
    w->err = err;
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    if (dl >= sizeof w->dir) {
        hc_err_set(err, HC_EUSAGE, "%s: path too long", path);
        free(w);
        return NULL;
    }
    memcpy(w->dir, path, dl);
    suite(w, comment);
    size_t n = 0;
    char *text = hc_strbuf_take(&w->b, &n);
    if (!w->bad && !text)
        hc_err_set(err, HC_ENOMEM, "out of memory writing a suite");
    if (w->bad) {
        free(text);
        text = NULL;
    }
    free(w);
    if (text && len)
        *len = n;
    return text;
}

int hc_suite_write(const hc_suite *s, const char *path, const char *comment, hc_err *err)
{
    size_t n;
    char *text = hc_suite_format(s, path, comment, &n, err);
    if (!text)
        return -1;
    hc_ostream *os = hc_ostream_open(path, err);
    int rc = os ? 0 : -1;
    if (os && hc_ostream_write(os, text, n, err)) {
        hc_ostream_abort(os);
        rc = -1;
    } else if (os)
        rc = hc_ostream_commit(os, err); /* frees os either way */
    free(text);
    return rc;
}
