/* The name map's patterns (tapnames.h): globs with index captures, and tap names computed from them. */
#include "backends/tapnames.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STARS = 64, MAX_VARS = 16, MAX_DIGITS = 9 };

/* An index expression {K*NAME+C} (K 1 and C 0 where not written). */
typedef struct expr {
    long long k, c;
    const char *name;
    size_t name_len;
} expr;

static int is_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* A decimal integer of 1..MAX_DIGITS digits at *p, advancing it; -1 when there is none. */
static long long number(const char **p, const char *end)
{
    const char *s = *p;
    long long v = 0;
    while (*p < end && isdigit((unsigned char)**p) && *p - s < MAX_DIGITS)
        v = v * 10 + (*(*p)++ - '0');
    return *p > s && !(*p < end && isdigit((unsigned char)**p)) ? v : -1;
}

/* Parses the text between '{' and '}' of a tap name. 0, or -1 when it is no expression. */
static int parse_expr(const char *s, const char *end, expr *e)
{
    e->k = 1;
    e->c = 0;
    const char *p = s;
    if (p < end && isdigit((unsigned char)*p)) {
        if ((e->k = number(&p, end)) < 0 || p >= end || *p != '*')
            return -1;
        p++;
    }
    const char *n = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
        p++;
    if (!is_name(n, (size_t)(p - n)))
        return -1;
    e->name = n;
    e->name_len = (size_t)(p - n);
    if (p == end)
        return 0;
    int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
    if (!sign)
        return -1;
    p++;
    long long c = number(&p, end);
    if (c < 0 || p != end)
        return -1;
    e->c = sign * c;
    return 0;
}

int hc_tapname_is_pattern(const char *tool) { return strchr(tool, '*') || strchr(tool, '{'); }

int hc_tapname_check(const char *tool, const char *tap, char *why, size_t len)
{
    const char *vars[MAX_VARS];
    size_t vlen[MAX_VARS];
    int nv = 0, stars = 0;
    for (const char *p = tool; *p; p++) {
        if (*p == '*') {
            if (++stars > MAX_STARS) {
                snprintf(why, len, "more than %d '*' in the pattern", MAX_STARS);
                return -1;
            }
        } else if (*p == '}') {
            snprintf(why, len, "'}' without '{' in the pattern");
            return -1;
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            if (!e) {
                snprintf(why, len, "'{' without '}' in the pattern");
                return -1;
            }
            size_t n = (size_t)(e - p - 1);
            if (!is_name(p + 1, n)) {
                snprintf(why, len, "{%.*s} in the pattern: an index name (letters, digits and '_') expected", (int)n,
                         p + 1);
                return -1;
            }
            for (int i = 0; i < nv; i++)
                if (vlen[i] == n && !memcmp(vars[i], p + 1, n)) {
                    snprintf(why, len, "{%.*s} appears twice in the pattern", (int)n, p + 1);
                    return -1;
                }
            if (nv == MAX_VARS) {
                snprintf(why, len, "more than %d indices in the pattern", MAX_VARS);
                return -1;
            }
            vars[nv] = p + 1;
            vlen[nv++] = n;
            p = e;
        }
    }
    if (!*tap) {
        snprintf(why, len, "the tap name is empty");
        return -1;
    }
    int tstars = 0;
    for (const char *p = tap; *p; p++) {
        if (*p == '*')
            tstars++;
        else if (*p == '}') {
            snprintf(why, len, "'}' without '{' in the tap name \"%s\"", tap);
            return -1;
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            expr x;
            if (!e) {
                snprintf(why, len, "'{' without '}' in the tap name \"%s\"", tap);
                return -1;
            }
            if (parse_expr(p + 1, e, &x)) {
                snprintf(why, len, "{%.*s} in the tap name: an index expression NAME, NAME+K, NAME-K, K*NAME or "
                                   "K*NAME+K expected", (int)(e - p - 1), p + 1);
                return -1;
            }
            int found = 0;
            for (int i = 0; i < nv && !found; i++)
                found = vlen[i] == x.name_len && !memcmp(vars[i], x.name, x.name_len);
            if (!found) {
                snprintf(why, len, "{%.*s} in the tap name: the pattern captures no {%.*s}", (int)(e - p - 1), p + 1,
                         (int)x.name_len, x.name);
                return -1;
            }
            p = e;
        }
    }
    if (tstars > stars) {
        snprintf(why, len, "the tap name \"%s\" has more '*' than the pattern", tap);
        return -1;
    }
    return 0;
}

typedef struct caps {
    const char *star[MAX_STARS];
    size_t star_len[MAX_STARS];
    const char *var[MAX_VARS];
    size_t var_len[MAX_VARS];
    long long val[MAX_VARS];
} caps;

/* Shortest-first match of s against pat from the ns-th '*' and the nv-th index on. */
static int match(const char *pat, const char *s, caps *c, int ns, int nv)
{
    if (!*pat)
        return !*s;
    if (*pat == '*') {
        for (size_t n = 1; n <= strlen(s); n++) {
            c->star[ns] = s;
            c->star_len[ns] = n;
            if (match(pat + 1, s + n, c, ns + 1, nv))
                return 1;
        }
        return 0;
    }
    if (*pat == '{') {
        const char *e = strchr(pat, '}');
        c->var[nv] = pat + 1;
        c->var_len[nv] = (size_t)(e - pat - 1);
        long long v = 0;
        for (size_t n = 1; n <= MAX_DIGITS && isdigit((unsigned char)s[n - 1]); n++) {
            v = v * 10 + (s[n - 1] - '0');
            c->val[nv] = v;
            if (match(e + 1, s + n, c, ns, nv + 1))
                return 1;
        }
        return 0;
    }
    return *pat == *s && match(pat + 1, s + 1, c, ns, nv);
}

int hc_tapname_apply(const char *tool, const char *tap, const char *name, char **out, hc_err *err)
{
    *out = NULL;
    caps c;
    if (!match(tool, name, &c, 0, 0))
        return 0;
    int nv = 0;
    for (const char *p = tool; *p; p++)
        nv += *p == '{';
    /* the longest result: the name's text for every '*', 20 digits for every index */
    size_t cap = strlen(tap) + strlen(name) + 21 * (size_t)nv + 21 * strlen(tap) + 1;
    char *o = malloc(cap);
    if (!o) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return -1;
    }
    size_t k = 0;
    int si = 0;
    for (const char *p = tap; *p; p++) {
        if (*p == '*') {
            memcpy(o + k, c.star[si], c.star_len[si]);
            k += c.star_len[si++];
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            expr x;
            long long v = -1, r;
            parse_expr(p + 1, e, &x); /* checked by hc_tapname_check */
            for (int i = 0; i < nv; i++)
                if (c.var_len[i] == x.name_len && !memcmp(c.var[i], x.name, x.name_len))
                    v = c.val[i];
            r = x.k * v + x.c;
            if (v < 0 || r < 0) {
                hc_err_set(err, HC_EFORMAT, "{%.*s} is %lld for %.*s = %lld: an index below 0", (int)(e - p - 1), p + 1,
                           r, (int)x.name_len, x.name, v);
                free(o);
                return -1;
            }
            k += (size_t)snprintf(o + k, cap - k, "%lld", r);
            p = e;
        } else {
            o[k++] = *p;
        }
    }
    o[k] = '\0';
    *out = o;
    return 1;
}
