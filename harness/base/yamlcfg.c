/* libyaml helpers with located errors, shared by the config and profile readers. */
#include "harness/base/yamlcfg.h"
#include "harness/base/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

int hc_ydoc_err(const hc_ydoc *d, const yaml_mark_t *mk, const char *ctx, hc_err *err, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx && *ctx)
        return hc_err_set(err, HC_ECONFIG, "%s:%zu:%zu: %s (in %s)", d->file, mk->line + 1, mk->column + 1, msg, ctx);
    return hc_err_set(err, HC_ECONFIG, "%s:%zu:%zu: %s", d->file, mk->line + 1, mk->column + 1, msg);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = 0;
    }
    return d;
}

void hc_ydoc_free(hc_ydoc *d)
{
    if (d->loaded)
        yaml_document_delete(&d->d);
    free(d->dir);
    d->dir = NULL;
    d->loaded = 0;
}

int hc_ydoc_load_mem(hc_ydoc *d, const char *text, size_t len, const char *file, const char *empty_what, hc_err *err)
{
    memset(d, 0, sizeof *d);
    d->file = file;
    d->dir = dir_of(file);
    if (!d->dir)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        hc_ydoc_free(d);
        return hc_err_set(err, HC_ENOMEM, "%s: cannot initialize the YAML parser", file);
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &d->d)) {
        const char *problem = p.problem ? p.problem : "malformed YAML";
        if (p.context)
            hc_err_set(err, HC_ECONFIG, "%s:%zu:%zu: %s (%s at line %zu)", file, p.problem_mark.line + 1,
                       p.problem_mark.column + 1, problem, p.context, p.context_mark.line + 1);
        else
            hc_err_set(err, HC_ECONFIG, "%s:%zu:%zu: %s", file, p.problem_mark.line + 1, p.problem_mark.column + 1,
                       problem);
        yaml_parser_delete(&p);
        hc_ydoc_free(d);
        return -1;
    }
    yaml_parser_delete(&p);
    d->loaded = 1;
    if (!yaml_document_get_root_node(&d->d)) {
        yaml_mark_t zero = {0, 0, 0};
        hc_ydoc_err(d, &zero, NULL, err, "empty %s", empty_what);
        hc_ydoc_free(d);
        return -1;
    }
    return 0;
}

int hc_ydoc_load_file(hc_ydoc *d, const char *path, size_t max_bytes, const char *empty_what, hc_err *err)
{
    memset(d, 0, sizeof *d);
    size_t len;
    char *text = hc_read_file(path, max_bytes, &len, err);
    if (!text)
        return -1;
    int rc = hc_ydoc_load_mem(d, text, len, path, empty_what, err);
    free(text);
    return rc;
}

yaml_node_t *hc_ydoc_root(hc_ydoc *d) { return yaml_document_get_root_node(&d->d); }
yaml_node_t *hc_ydoc_node(hc_ydoc *d, int id) { return yaml_document_get_node(&d->d, id); }

const char *hc_ynode_type_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a sequence";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

const char *hc_ynode_str(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

size_t hc_ynode_seq_len(const yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *hc_ydoc_seq_at(hc_ydoc *d, const yaml_node_t *n, size_t i)
{
    return hc_ydoc_node(d, n->data.sequence.items.start[i]);
}

int hc_ydoc_expect(const hc_ydoc *d, const yaml_node_t *n, yaml_node_type_t t, const char *what, const char *ctx,
                   hc_err *err)
{
    if (n->type == t)
        return 0;
    const char *want = t == YAML_MAPPING_NODE ? "a mapping" : t == YAML_SEQUENCE_NODE ? "a sequence" : "a scalar";
    return hc_ydoc_err(d, &n->start_mark, ctx, err, "%s: expected %s, got %s", what, want, hc_ynode_type_name(n));
}

int hc_ydoc_check_keys(hc_ydoc *d, yaml_node_t *m, const char *what, const char *ctx, const char *const *allowed,
                       hc_err *err)
{
    if (hc_ydoc_expect(d, m, YAML_MAPPING_NODE, what, ctx, err))
        return -1;
    /* Without an enclosing context (NULL, as in a profile), a key's place is its mapping ("rules[2]"). */
    const char *in = ctx ? ctx : what;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = hc_ydoc_node(d, p->key);
        if (k->type != YAML_SCALAR_NODE)
            return hc_ydoc_err(d, &k->start_mark, in, err, "a key must be a scalar, got %s", hc_ynode_type_name(k));
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, hc_ynode_str(k)) == 0;
        if (!known) {
            const char *kw = hc_ynode_str(k);
            int n_allowed = 0;
            while (allowed[n_allowed])
                n_allowed++;
            char hint[160];
            hc_suggest_text(hint, sizeof hint, kw, strlen(kw), allowed, n_allowed);
            return hc_ydoc_err(d, &k->start_mark, in, err, "unknown key \"%s\"%s", kw, hint);
        }
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++)
            if (strcmp(hc_ynode_str(hc_ydoc_node(d, q->key)), hc_ynode_str(k)) == 0)
                return hc_ydoc_err(d, &k->start_mark, in, err, "duplicate key \"%s\"", hc_ynode_str(k));
    }
    return 0;
}

yaml_node_t *hc_ydoc_get(hc_ydoc *d, yaml_node_t *m, const char *key)
{
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++)
        if (strcmp(hc_ynode_str(hc_ydoc_node(d, p->key)), key) == 0)
            return hc_ydoc_node(d, p->value);
    return NULL;
}

yaml_node_t *hc_ydoc_require(hc_ydoc *d, yaml_node_t *m, const char *key, const char *ctx, hc_err *err)
{
    yaml_node_t *v = hc_ydoc_get(d, m, key);
    if (!v)
        hc_ydoc_err(d, &m->start_mark, ctx, err, "missing key \"%s\"", key);
    return v;
}

int hc_yparse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(x))
        return -1;
    *out = x;
    return 0;
}

int hc_ydoc_double(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, double lo, double hi,
                   double *out, hc_err *err)
{
    if (hc_ydoc_expect(d, v, YAML_SCALAR_NODE, key, ctx, err))
        return -1;
    if (hc_yparse_double(hc_ynode_str(v), out))
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: expected a number, got \"%s\"", key, hc_ynode_str(v));
    if (*out < lo || *out > hi)
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: %s is out of range [%g, %g]", key, hc_ynode_str(v), lo,
                           hi);
    return 0;
}

int hc_ydoc_int(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, long lo, long hi, int *out,
                hc_err *err)
{
    if (hc_ydoc_expect(d, v, YAML_SCALAR_NODE, key, ctx, err))
        return -1;
    const char *s = hc_ynode_str(v);
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE)
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: expected an integer, got \"%s\"", key, s);
    if (x < lo || x > hi)
        return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: %ld is out of range [%ld, %ld]", key, x, lo, hi);
    *out = (int)x;
    return 0;
}

int hc_ydoc_bool(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, int *out, hc_err *err)
{
    if (hc_ydoc_expect(d, v, YAML_SCALAR_NODE, key, ctx, err))
        return -1;
    const char *s = hc_ynode_str(v);
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "no")) {
        *out = 0;
        return 0;
    }
    return hc_ydoc_err(d, &v->start_mark, ctx, err, "%s: expected true or false, got \"%s\"", key, s);
}
