/* Parser of the @NAME=VALUE options that lead a backend spec. */
#include "backends/specopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The "(known: @a=X @b=Y)" tail of a message, built from the table so it cannot go stale. */
static void known_list(const hc_specopt *opts, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++) {
        int w = snprintf(out + len, cap - len, "%s@%s=%s", i ? " " : "", opts[i].name, opts[i].hint);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static int parse_number(const char *s, size_t len, double *out)
{
    char buf[512];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return end != buf && *end == '\0';
}

/* Stores one value; 0 when it does not fit the option's kind. */
static int store(const hc_specopt *o, const char *v, size_t vlen, hc_err *err)
{
    double x;
    switch (o->kind) {
    case HC_SPECOPT_POSITIVE:
        if (!parse_number(v, vlen, &x) || !(x > 0))
            return 0;
        *o->num = x;
        return 1;
    case HC_SPECOPT_01:
        if (!parse_number(v, vlen, &x) || !(x == 0 || x == 1))
            return 0;
        *o->flag = (int)x;
        return 1;
    case HC_SPECOPT_STRING: {
        char *s = malloc(vlen + 1);
        if (!s) {
            hc_err_set(err, HC_ENOMEM, "out of memory");
            return -1;
        }
        memcpy(s, v, vlen);
        s[vlen] = '\0';
        free(*o->str);
        *o->str = s;
        return 1;
    }
    }
    return 0;
}

const char *hc_specopts_parse(const char *backend, const char *spec, const hc_specopt *opts, size_t n, hc_err *err)
{
    const char *p = spec ? spec : "";
    char known[512];
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '@')
            return p;
        const char *tok = p + 1, *e = tok;
        while (*e && *e != ' ' && *e != '\t')
            e++;
        int tlen = (int)(e - tok);
        const char *eq = memchr(tok, '=', (size_t)tlen);
        if (!eq) {
            known_list(opts, n, known, sizeof known);
            hc_err_set(err, HC_ECONFIG, "%s: option \"%.*s\" should be @NAME=VALUE (known: %s)", backend, tlen, tok,
                       known);
            return NULL;
        }
        size_t nlen = (size_t)(eq - tok);
        const hc_specopt *o = NULL;
        for (size_t i = 0; i < n && !o; i++)
            if (strlen(opts[i].name) == nlen && strncmp(opts[i].name, tok, nlen) == 0)
                o = &opts[i];
        int ok = o ? store(o, eq + 1, (size_t)(e - eq - 1), err) : 0;
        if (ok < 0)
            return NULL;
        if (!ok) {
            known_list(opts, n, known, sizeof known);
            hc_err_set(err, HC_ECONFIG, "%s: unknown option or bad value @%.*s (known: %s)", backend, tlen, tok, known);
            return NULL;
        }
        p = e;
    }
}

char *hc_specopts_command(const char *backend, const char *spec, const hc_specopt *opts, size_t n, hc_err *err)
{
    const char *p = hc_specopts_parse(backend, spec, opts, n, err);
    char *cmd = NULL;
    if (p && !*p)
        hc_err_set(err, HC_ECONFIG, "%s: needs a command (%s:[@OPTION=V ...] PROGRAM ARGS...)", backend, backend);
    else if (p && !(cmd = strdup(p)))
        hc_err_set(err, HC_ENOMEM, "out of memory");
    return cmd;
}
