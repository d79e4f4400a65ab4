/* SGF collections, parsed to the letter of KataGo's dataio/sgf.cpp (see sgf.h for the quirks
 * kept). The parser walks variations with an explicit stack, as KataGo does, so nesting depth
 * costs heap rather than C stack; HC_SGF_MAX_DEPTH bounds it anyway because every consumer of
 * the tree (freeing, visiting positions) recurses on variations. */
#include "harness/data/sgf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

/* ---------------------------------------------------------------- freeing */

static void node_free(hc_sgf_node *n)
{
    for (int i = 0; i < n->n_props; i++) {
        for (int j = 0; j < n->props[i].n_vals; j++)
            free(n->props[i].vals[j]);
        free(n->props[i].vals);
        free(n->props[i].key);
    }
    free(n->props);
    n->props = NULL;
    n->n_props = 0;
}

static void tree_free(hc_sgf_tree *t)
{
    for (int i = 0; i < t->n_nodes; i++)
        node_free(&t->nodes[i]);
    free(t->nodes);
    for (int i = 0; i < t->n_children; i++)
        tree_free(&t->children[i]);
    free(t->children);
    memset(t, 0, sizeof *t);
}

void hc_sgf_free(hc_sgf_collection *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_games; i++)
        tree_free(&c->games[i].tree);
    free(c->games);
    free(c->name);
    free(c);
}

/* ---------------------------------------------------------------- parser state */

typedef struct parser {
    const char *s;
    size_t len;
    size_t pos;
    const char *name;
    long game_index;  /* the game being parsed */
    long game_line;   /* its line, -1 between games */
    size_t line_pos;  /* line counting is incremental: line_no is the line of line_pos */
    long line_no;
    hc_err *err;
} parser;

static long line_of(parser *p, size_t pos)
{
    if (pos < p->line_pos) {
        p->line_pos = 0;
        p->line_no = 0;
    }
    for (; p->line_pos < pos && p->line_pos < p->len; p->line_pos++)
        if (p->s[p->line_pos] == '\n')
            p->line_no++;
    return p->line_no;
}

static int fail_at(parser *p, int code, size_t pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(parser *p, int code, size_t pos, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    long line = line_of(p, pos);
    if (p->game_line >= 0)
        return hc_err_set(p->err, code, "%s: game %ld (line %ld): offset %zu (line %ld): %s", p->name,
                          p->game_index, p->game_line + 1, pos, line + 1, msg);
    return hc_err_set(p->err, code, "%s: offset %zu (line %ld): %s", p->name, pos, line + 1, msg);
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static bool is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static const char *char_desc(int c, char buf[16])
{
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", (unsigned)c & 0xffu);
    return buf;
}

/* The next non-whitespace character at or after p->pos; *at is its offset. -1 at the end. */
static int peek(parser *p, size_t *at)
{
    size_t i = p->pos;
    while (i < p->len && is_ws(p->s[i]))
        i++;
    *at = i;
    return i < p->len ? (unsigned char)p->s[i] : -1;
}

/* ---------------------------------------------------------------- growable buffers */

typedef struct strbuf {
    char *v;
    size_t n, cap;
} strbuf;

static int sb_push(strbuf *b, char c)
{
    if (b->n + 1 >= b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        char *nv = realloc(b->v, cap);
        if (!nv)
            return -1;
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = c;
    b->v[b->n] = '\0';
    return 0;
}

static int grow(void **v, int *cap, int need, size_t elt)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 4;
    while (nc < need)
        nc *= 2;
    void *nv = realloc(*v, (size_t)nc * elt);
    if (!nv)
        return -1;
    memset((char *)nv + (size_t)*cap * elt, 0, (size_t)(nc - *cap) * elt);
    *v = nv;
    *cap = nc;
    return 0;
}

/* ---------------------------------------------------------------- values and properties */

/* Reads a value after its '[' up to (not past) the closing ']', unescaping as KataGo does:
 * a backslash takes the next character literally, a run of CR/LF becomes one '\n' (nothing when
 * escaped), and tab, VT and FF become spaces. */
static int parse_value(parser *p, strbuf *out)
{
    out->n = 0;
    if (sb_push(out, 'x') != 0)
        return hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
    out->n = 0;
    out->v[0] = '\0';
    bool escaping = false;
    size_t start = p->pos;
    for (;;) {
        if (p->pos >= p->len)
            return fail_at(p, HC_EFORMAT, p->pos, "unexpected end of input inside the value opened at offset %zu",
                           start ? start - 1 : 0);
        char c = p->s[p->pos];
        if (!escaping && c == ']')
            return 0;
        p->pos++;
        if (!escaping && c == '\\') {
            escaping = true;
            continue;
        }
        int r = 0;
        if (c == '\n' || c == '\r') {
            for (;;) {
                if (p->pos >= p->len)
                    return fail_at(p, HC_EFORMAT, p->pos,
                                   "unexpected end of input inside the value opened at offset %zu",
                                   start ? start - 1 : 0);
                if (p->s[p->pos] == '\n' || p->s[p->pos] == '\r')
                    p->pos++;
                else
                    break;
            }
            if (!escaping)
                r = sb_push(out, '\n');
        } else if (c == '\0') {
            /* Values are C strings here; KataGo would keep the byte, so refuse rather than cut. */
            return fail_at(p, HC_EFORMAT, p->pos - 1, "NUL byte in a property value");
        } else if (c == '\t' || c == '\v' || c == '\f') {
            r = sb_push(out, ' ');
        } else {
            r = sb_push(out, c);
        }
        escaping = false;
        if (r != 0)
            return hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
    }
}

static int sgf_coord(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 26;
    return -1;
}

static int node_add_value(hc_sgf_node *n, const char *key, const char *val, size_t val_len)
{
    hc_sgf_prop *pr = NULL;
    for (int i = 0; i < n->n_props; i++)
        if (strcmp(n->props[i].key, key) == 0)
            pr = &n->props[i];
    if (!pr) {
        hc_sgf_prop *np = realloc(n->props, (size_t)(n->n_props + 1) * sizeof *np);
        if (!np)
            return -1;
        n->props = np;
        pr = &n->props[n->n_props];
        memset(pr, 0, sizeof *pr);
        pr->key = strdup(key);
        if (!pr->key)
            return -1;
        n->n_props++;
    }
    char **nv = realloc(pr->vals, (size_t)(pr->n_vals + 1) * sizeof *nv);
    if (!nv)
        return -1;
    pr->vals = nv;
    char *v = malloc(val_len + 1);
    if (!v)
        return -1;
    memcpy(v, val, val_len);
    v[val_len] = '\0';
    pr->vals[pr->n_vals++] = v;
    return 0;
}

/* One property (name and values). Returns 1 when parsed, 0 when no name starts here. */
static int parse_property(parser *p, hc_sgf_node *node, strbuf *key, strbuf *val)
{
    key->n = 0;
    size_t key_at = 0;
    for (;;) {
        size_t at;
        int c = peek(p, &at);
        if (c < 0 || !is_alpha((char)c))
            break;
        if (key->n == 0)
            key_at = at;
        if (key->n >= 64)
            return fail_at(p, HC_EFORMAT, at, "property name longer than 64 letters");
        if (sb_push(key, (char)c) != 0)
            return hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
        p->pos = at + 1;
    }
    if (key->n == 0)
        return 0;
    bool any = false;
    for (;;) {
        size_t at;
        int c = peek(p, &at);
        if (c != '[')
            break;
        p->pos = at + 1;
        size_t val_at = p->pos;
        if (parse_value(p, val) != 0)
            return -1;
        p->pos++; /* the ']' */
        bool is_b = strcmp(key->v, "B") == 0, is_w = strcmp(key->v, "W") == 0;
        if (node->move_pla == HC_EMPTY && (is_b || is_w)) {
            /* KataGo keeps the node's first move apart, checked for shape only. */
            if (val->n == 0) {
                node->move_x = node->move_y = HC_SGF_PASS_COORD;
            } else {
                int x = val->n == 2 ? sgf_coord(val->v[0]) : -1;
                int y = val->n == 2 ? sgf_coord(val->v[1]) : -1;
                if (x < 0 || y < 0)
                    return fail_at(p, HC_EFORMAT, val_at, "invalid move location \"%.40s\" in %s[]", val->v, key->v);
                node->move_x = x;
                node->move_y = y;
            }
            node->move_pla = is_b ? HC_BLACK : HC_WHITE;
        } else if (node_add_value(node, key->v, val->v ? val->v : "", val->n) != 0) {
            return hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
        }
        any = true;
    }
    if (!any) {
        size_t at;
        peek(p, &at);
        return fail_at(p, HC_EFORMAT, at, "property %s (offset %zu) has no value", key->v, key_at);
    }
    return 1;
}

static int parse_nodes(parser *p, hc_sgf_tree *t, int *cap, strbuf *key, strbuf *val)
{
    for (;;) {
        size_t at;
        int c = peek(p, &at);
        if (c != ';')
            return 0;
        p->pos = at + 1;
        if (grow((void **)&t->nodes, cap, t->n_nodes + 1, sizeof *t->nodes) != 0)
            return hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
        hc_sgf_node *n = &t->nodes[t->n_nodes++];
        memset(n, 0, sizeof *n);
        n->move_pla = HC_EMPTY;
        n->offset = at;
        for (;;) {
            int r = parse_property(p, n, key, val);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
    }
}

/* ---------------------------------------------------------------- game trees */

typedef struct frame {
    hc_sgf_tree t;
    int node_cap, child_cap;
    size_t open_at; /* offset of its '(' */
} frame;

/* Parses one game tree whose '(' is at p->pos. */
static int parse_tree(parser *p, hc_sgf_tree *out)
{
    frame *st = NULL;
    int depth = 0, st_cap = 0;
    strbuf key = {0}, val = {0};
    int rc = -1;

    if (grow((void **)&st, &st_cap, 1, sizeof *st) != 0)
        goto oom;
    st[0].open_at = p->pos;
    p->pos++;
    depth = 1;
    if (parse_nodes(p, &st[0].t, &st[0].node_cap, &key, &val) != 0)
        goto done;
    for (;;) {
        size_t at;
        int c = peek(p, &at);
        if (c == '(') {
            if (depth >= HC_SGF_MAX_DEPTH) {
                fail_at(p, HC_ELIMIT, at, "variations nested deeper than %d", HC_SGF_MAX_DEPTH);
                goto done;
            }
            if (grow((void **)&st, &st_cap, depth + 1, sizeof *st) != 0)
                goto oom;
            frame *f = &st[depth++];
            memset(f, 0, sizeof *f);
            f->open_at = at;
            p->pos = at + 1;
            if (parse_nodes(p, &f->t, &f->node_cap, &key, &val) != 0)
                goto done;
        } else if (c == ')') {
            p->pos = at + 1;
            if (depth == 1)
                break;
            frame *child = &st[depth - 1], *parent = &st[depth - 2];
            if (grow((void **)&parent->t.children, &parent->child_cap, parent->t.n_children + 1,
                     sizeof *parent->t.children) != 0)
                goto oom;
            parent->t.children[parent->t.n_children++] = child->t;
            memset(&child->t, 0, sizeof child->t);
            depth--;
        } else if (c < 0) {
            fail_at(p, HC_EFORMAT, at, "unexpected end of input: variation opened at offset %zu is not closed",
                    st[depth - 1].open_at);
            goto done;
        } else {
            char d[16];
            fail_at(p, HC_EFORMAT, at, "expected '(', ')' or ';' (or a property name after ';'), found %s, in the variation opened at offset %zu",
                    char_desc(c, d), st[depth - 1].open_at);
            goto done;
        }
    }
    if (st[0].t.n_nodes == 0) {
        fail_at(p, HC_EFORMAT, st[0].open_at, "game has no root node (expected ';' after '(')");
        goto done;
    }
    *out = st[0].t;
    memset(&st[0].t, 0, sizeof st[0].t);
    rc = 0;
    goto done;
oom:
    hc_err_set(p->err, HC_ENOMEM, "%s: out of memory", p->name);
done:
    for (int i = 0; i < depth; i++)
        tree_free(&st[i].t);
    free(st);
    free(key.v);
    free(val.v);
    return rc;
}

/* ---------------------------------------------------------------- property readers */

const hc_sgf_prop *hc_sgf_node_prop(const hc_sgf_node *n, const char *key)
{
    for (int i = 0; i < n->n_props; i++)
        if (strcmp(n->props[i].key, key) == 0)
            return &n->props[i];
    return NULL;
}

int hc_sgf_node_single(const hc_sgf_node *n, const char *key, const char **val, hc_err *err)
{
    const hc_sgf_prop *pr = hc_sgf_node_prop(n, key);
    if (!pr)
        return 0;
    if (pr->n_vals != 1)
        return hc_err_set(err, HC_EFORMAT, "property %s has %d values where one is expected", key, pr->n_vals);
    *val = pr->vals[0];
    return 1;
}

int hc_sgf_node_has_placements(const hc_sgf_node *n)
{
    return hc_sgf_node_prop(n, "AB") || hc_sgf_node_prop(n, "AW") || hc_sgf_node_prop(n, "AE");
}

static void trim_span(const char *s, const char **b, const char **e)
{
    const char *end = s + strlen(s);
    while (*s && is_ws(*s))
        s++;
    while (end > s && is_ws(end[-1]))
        end--;
    *b = s;
    *e = end;
}

static int parse_int_span(const char *b, const char *e, int *out)
{
    const char *q = b;
    if (q < e && (*q == '+' || *q == '-'))
        q++;
    if (q == e)
        return -1;
    for (const char *r = q; r < e; r++)
        if (*r < '0' || *r > '9')
            return -1;
    long long v = 0;
    for (const char *r = q; r < e; r++) {
        v = v * 10 + (*r - '0');
        if (v > 2147483648LL)
            return -1;
    }
    if (*b == '-')
        v = -v;
    if (v > 2147483647LL || v < -2147483648LL)
        return -1;
    *out = (int)v;
    return 0;
}

int hc_sgf_parse_int(const char *s, int *out)
{
    const char *b, *e;
    trim_span(s, &b, &e);
    return parse_int_span(b, e, out);
}

int hc_sgf_parse_float(const char *s, float *out)
{
    const char *b, *e;
    trim_span(s, &b, &e);
    /* The grammar an istream accepts for a float: sign, digits with an optional point (at least
     * one digit), an optional exponent with at least one digit; no inf, nan or hex. */
    const char *q = b;
    if (q < e && (*q == '+' || *q == '-'))
        q++;
    int digits = 0;
    while (q < e && *q >= '0' && *q <= '9')
        q++, digits++;
    if (q < e && *q == '.') {
        q++;
        while (q < e && *q >= '0' && *q <= '9')
            q++, digits++;
    }
    if (digits == 0)
        return -1;
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        int ed = 0;
        while (q < e && *q >= '0' && *q <= '9')
            q++, ed++;
        if (ed == 0)
            return -1;
    }
    if (q != e)
        return -1;
    size_t n = (size_t)(e - b);
    char buf[128];
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, b, n);
    buf[n] = '\0';
    float v = strtof(buf, NULL);
    if (isinf(v))
        return -1;
    *out = v;
    return 0;
}

static bool komi_is_int_or_half(float k)
{
    float k2 = k * 2.0f;
    if (!isfinite(k) || !(fabsf(k2) < 2147483648.0f))
        return false;
    return k2 == (float)(int)k2;
}

static bool str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void lower_copy(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

static bool prop_contains(const hc_sgf_prop *pr, const char *v)
{
    if (pr)
        for (int i = 0; i < pr->n_vals; i++)
            if (strcmp(pr->vals[i], v) == 0)
                return true;
    return false;
}

int hc_sgf_size(const hc_sgf_node *root, int max_len, int *x_size, int *y_size, hc_err *err)
{
    const char *s;
    int r = hc_sgf_node_single(root, "SZ", &s, err);
    if (r < 0)
        return -1;
    if (r == 0) {
        *x_size = *y_size = 19;
        return 0;
    }
    int x = 0, y = 0;
    const char *colon = strchr(s, ':');
    if (colon) {
        /* Pieces as std::getline splits them: a final empty piece does not count. */
        const char *rest = colon + 1;
        const char *colon2 = strchr(rest, ':');
        size_t rest_len = colon2 ? (size_t)(colon2 - rest) : strlen(rest);
        bool ok = !colon2 || colon2[1] == '\0';
        char a[64], b[64];
        size_t alen = (size_t)(colon - s);
        ok = ok && alen < sizeof a && rest_len < sizeof b;
        if (ok) {
            memcpy(a, s, alen);
            a[alen] = '\0';
            memcpy(b, rest, rest_len);
            b[rest_len] = '\0';
            ok = hc_sgf_parse_int(a, &x) == 0 && hc_sgf_parse_int(b, &y) == 0;
        }
        if (!ok)
            return hc_err_set(err, HC_EFORMAT, "could not parse board size SZ[%.40s]", s);
    } else {
        if (hc_sgf_parse_int(s, &x) != 0)
            return hc_err_set(err, HC_EFORMAT, "could not parse board size SZ[%.40s]", s);
        y = x;
    }
    if (x <= 1 || y <= 1)
        return hc_err_set(err, HC_EFORMAT, "board size SZ[%.40s] is below 2", s);
    if (x > max_len || y > max_len)
        return hc_err_set(err, HC_EFORMAT, "board size SZ[%.40s] is larger than the maximum %d", s, max_len);
    *x_size = x;
    *y_size = y;
    return 0;
}

int hc_sgf_komi(const hc_sgf_node *root, float def, float *komi, hc_err *err)
{
    const char *s;
    int r = hc_sgf_node_single(root, "KM", &s, err);
    if (r < 0)
        return -1;
    if (r == 0) {
        *komi = def;
        return 0;
    }
    float k;
    if (hc_sgf_parse_float(s, &k) != 0)
        return hc_err_set(err, HC_EFORMAT, "could not parse komi KM[%.40s]", s);
    if (!komi_is_int_or_half(k)) {
        /* GoGoD's Chinese games give half the komi. */
        const char *us, *ru;
        bool gogod = false;
        if (komi_is_int_or_half(k * 2.0f) && hc_sgf_node_prop(root, "US") && hc_sgf_node_prop(root, "RU")) {
            if (hc_sgf_node_single(root, "US", &us, err) < 0)
                return -1;
            if (str_has_prefix(us, "GoGoD")) {
                if (hc_sgf_node_single(root, "RU", &ru, err) < 0)
                    return -1;
                char low[64];
                lower_copy(low, sizeof low, ru);
                gogod = strlen(ru) < sizeof low && (strcmp(low, "chinese") == 0 || strcmp(low, "chinese, pair go") == 0);
            }
        }
        if (!gogod)
            return hc_err_set(err, HC_EFORMAT, "komi KM[%.40s] is not an integer or half-integer", s);
        k *= 2.0f;
    }
    const hc_sgf_prop *ap = hc_sgf_node_prop(root, "AP");
    if (prop_contains(ap, "foxwq") || prop_contains(ap, "SGFC:2.0")) {
        /* Fox writes komi in its own units. */
        if (k == 550 || k == 275)
            k = 5.5f;
        else if (k == 325 || k == 650)
            k = 6.5f;
        else if (k == 375 || k == 750)
            k = 7.5f;
        else if (k == 350 || k == 700)
            k = 7.0f;
        else if (k == 0)
            k = 0.0f;
        else if (k == 6.5f || k == 7.5f || k == 7.0f) {
        } else
            return hc_err_set(err, HC_EFORMAT, "no known conversion for Fox/SGFC komi KM[%.40s]", s);
    }
    *komi = k;
    return 0;
}

int hc_sgf_rules(const hc_sgf_node *root, hc_rules *out, hc_err *err)
{
    const char *ru;
    int r = hc_sgf_node_single(root, "RU", &ru, err);
    if (r < 0)
        return -1;
    if (r == 0)
        return hc_err_set(err, HC_EFORMAT, "the game does not specify rules (RU)");
    hc_rules rules;
    if (hc_rules_parse(ru, &rules, err) != 0)
        return hc_err_prefix(err, "could not parse rules RU[%.60s]: ", ru);
    if (!hc_sgf_node_prop(root, "KM"))
        return hc_err_set(err, HC_EFORMAT, "the game does not specify komi (KM)");
    if (hc_sgf_komi(root, 0.0f, &rules.komi, err) != 0)
        return -1;
    *out = rules;
    return 0;
}

int hc_sgf_handicap(const hc_sgf_node *root, int *handicap, hc_err *err)
{
    const char *s;
    int r = hc_sgf_node_single(root, "HA", &s, err);
    if (r < 0)
        return -1;
    if (r == 0) {
        *handicap = 0;
        return 0;
    }
    if (hc_sgf_parse_int(s, handicap) != 0)
        return hc_err_set(err, HC_EFORMAT, "could not parse handicap HA[%.40s]", s);
    return 0;
}

int hc_sgf_pl(const hc_sgf_node *n, int *color, hc_err *err)
{
    const char *s;
    int r = hc_sgf_node_single(n, "PL", &s, err);
    if (r < 0)
        return -1;
    *color = HC_EMPTY;
    if (r == 0)
        return 0;
    char low[8];
    if (strlen(s) >= sizeof low)
        return 0;
    lower_copy(low, sizeof low, s);
    if (strcmp(low, "b") == 0 || strcmp(low, "black") == 0)
        *color = HC_BLACK;
    else if (strcmp(low, "w") == 0 || strcmp(low, "white") == 0)
        *color = HC_WHITE;
    return 0;
}

/* ---------------------------------------------------------------- stones and moves */

void hc_sgf_moves_free(hc_sgf_moves *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

static int moves_push(hc_sgf_moves *m, int pla, int x, int y, hc_err *err)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        hc_move *nv = realloc(m->v, cap * sizeof *nv);
        if (!nv)
            return hc_err_set(err, HC_ENOMEM, "out of memory for SGF moves");
        m->v = nv;
        m->cap = cap;
    }
    m->v[m->n].pla = pla;
    m->v[m->n].x = x;
    m->v[m->n].y = y;
    m->n++;
    return 0;
}

static int add_rects(const hc_sgf_prop *pr, int color, int xs, int ys, hc_sgf_moves *out, hc_err *err)
{
    if (!pr)
        return 0;
    for (int i = 0; i < pr->n_vals; i++) {
        const char *s = pr->vals[i];
        size_t n = strlen(s);
        int x1, y1, x2, y2;
        if (strchr(s, ':')) {
            if (n != 5 || s[2] != ':')
                return hc_err_set(err, HC_EFORMAT, "invalid point rectangle %s[%.40s]", pr->key, s);
            x1 = sgf_coord(s[0]);
            y1 = sgf_coord(s[1]);
            x2 = sgf_coord(s[3]);
            y2 = sgf_coord(s[4]);
        } else {
            if (n != 2)
                return hc_err_set(err, HC_EFORMAT, "invalid point %s[%.40s]", pr->key, s);
            x1 = x2 = sgf_coord(s[0]);
            y1 = y2 = sgf_coord(s[1]);
        }
        if (x1 < 0 || x1 >= xs || y1 < 0 || y1 >= ys || x2 < 0 || x2 >= xs || y2 < 0 || y2 >= ys || x1 > x2 || y1 > y2)
            return hc_err_set(err, HC_EFORMAT, "point or rectangle %s[%s] is off the %dx%d board or inverted", pr->key, s,
                              xs, ys);
        for (int x = x1; x <= x2; x++)
            for (int y = y1; y <= y2; y++)
                if (moves_push(out, color, x, y, err) != 0)
                    return -1;
    }
    return 0;
}

int hc_sgf_node_placements(const hc_sgf_node *n, int x_size, int y_size, hc_sgf_moves *out, hc_err *err)
{
    if (add_rects(hc_sgf_node_prop(n, "AB"), HC_BLACK, x_size, y_size, out, err) != 0 ||
        add_rects(hc_sgf_node_prop(n, "AW"), HC_WHITE, x_size, y_size, out, err) != 0 ||
        add_rects(hc_sgf_node_prop(n, "AE"), HC_EMPTY, x_size, y_size, out, err) != 0)
        return -1;
    return 0;
}

static int add_node_move(const hc_sgf_node *n, int xs, int ys, hc_sgf_moves *out, hc_err *err)
{
    int x = n->move_x, y = n->move_y;
    if ((x == HC_SGF_PASS_COORD && y == HC_SGF_PASS_COORD) || (x == 19 && y == 19 && (xs <= 19 || ys <= 19)))
        return moves_push(out, n->move_pla, -1, -1, err);
    if (x >= xs || y >= ys)
        return hc_err_set(err, HC_EFORMAT, "move %s[%c%c] is off the %dx%d board", n->move_pla == HC_BLACK ? "B" : "W",
                          x < 26 ? 'a' + x : 'A' + x - 26, y < 26 ? 'a' + y : 'A' + y - 26, xs, ys);
    return moves_push(out, n->move_pla, x, y, err);
}

static int add_prop_moves(const hc_sgf_prop *pr, int pla, int xs, int ys, hc_sgf_moves *out, hc_err *err)
{
    if (!pr)
        return 0;
    for (int i = 0; i < pr->n_vals; i++) {
        const char *s = pr->vals[i];
        if (s[0] == '\0' || (strcmp(s, "tt") == 0 && (xs <= 19 || ys <= 19))) {
            if (moves_push(out, pla, -1, -1, err) != 0)
                return -1;
            continue;
        }
        int x = strlen(s) == 2 ? sgf_coord(s[0]) : -1;
        int y = strlen(s) == 2 ? sgf_coord(s[1]) : -1;
        if (x < 0 || x >= xs || y < 0 || y >= ys)
            return hc_err_set(err, HC_EFORMAT, "invalid move %s[%.40s] on the %dx%d board", pr->key, s, xs, ys);
        if (moves_push(out, pla, x, y, err) != 0)
            return -1;
    }
    return 0;
}

int hc_sgf_node_moves(const hc_sgf_node *n, int x_size, int y_size, hc_sgf_moves *out, hc_err *err)
{
    if (n->move_pla == HC_BLACK && add_node_move(n, x_size, y_size, out, err) != 0)
        return -1;
    if (add_prop_moves(hc_sgf_node_prop(n, "B"), HC_BLACK, x_size, y_size, out, err) != 0)
        return -1;
    if (n->move_pla == HC_WHITE && add_node_move(n, x_size, y_size, out, err) != 0)
        return -1;
    if (add_prop_moves(hc_sgf_node_prop(n, "W"), HC_WHITE, x_size, y_size, out, err) != 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- Fox handicap fix-up */

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* KataGo's SimpleDate: "YYYY-MM-DD", a valid calendar date. */
static bool parse_date(const char *s, int *y, int *m, int *d)
{
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return false;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
            return false;
    *y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    *m = (s[5] - '0') * 10 + (s[6] - '0');
    *d = (s[8] - '0') * 10 + (s[9] - '0');
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (*m < 1 || *m > 12)
        return false;
    int md = mdays[*m - 1] + (*m == 2 && leap(*y) ? 1 : 0);
    return *d >= 1 && *d <= md;
}

/* Fox omits the stones of fixed handicaps: KataGo adds them to the root as AB. */
static int fox_handicap_fixup(hc_sgf_tree *t, hc_err *err)
{
    if (t->n_nodes <= 1)
        return 0;
    hc_sgf_node *root = &t->nodes[0];
    const hc_sgf_prop *ap = hc_sgf_node_prop(root, "AP");
    if (!ap)
        return 0;
    bool fox = prop_contains(ap, "foxwq");
    if (!fox && prop_contains(ap, "GNU Go:3.8")) {
        const char *gn;
        int r = hc_sgf_node_single(root, "GN", &gn, err);
        if (r < 0)
            return -1;
        fox = r == 1 && gn[0] == '\0';
    }
    if (!fox)
        return 0;
    const char *sz, *ha;
    int r = hc_sgf_node_single(root, "SZ", &sz, err);
    if (r < 0)
        return -1;
    if (r == 0 || strcmp(sz, "19") != 0)
        return 0;
    if (hc_sgf_node_has_placements(root) || root->move_pla != HC_EMPTY || t->nodes[1].move_pla != HC_WHITE)
        return 0;
    r = hc_sgf_node_single(root, "HA", &ha, err);
    if (r < 0)
        return -1;
    int handicap;
    if (r == 0 || hc_sgf_parse_int(ha, &handicap) != 0 || handicap < 2 || handicap > 9)
        return 0;
    /* KataGo's fixed handicap points on 19x19: corners at 3 and 15, sides at 9. */
    static const int c[3] = {3, 15, 9};
    static const int order[9][2] = {{0, 1}, {1, 0}, {0, 0}, {1, 1}, {2, 2}, {0, 2}, {1, 2}, {2, 0}, {2, 1}};
    static const int sets[8][9] = {
        {0, 1}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 5, 6},
        {0, 1, 2, 3, 5, 6, 4}, {0, 1, 2, 3, 5, 6, 7, 8}, {0, 1, 2, 3, 5, 6, 7, 8, 4},
    };
    bool black[19][19] = {{false}};
    bool transpose = false;
    if (handicap == 6 || handicap == 7) {
        /* Older Fox games put the side stones north and south. */
        const char *dt;
        const hc_sgf_prop *dtp = hc_sgf_node_prop(root, "DT");
        int y, m, d;
        if (dtp && dtp->n_vals == 1 && parse_date((dt = dtp->vals[0]), &y, &m, &d))
            transpose = y < 2018;
    }
    for (int i = 0; i < handicap; i++) {
        const int *o = order[sets[handicap - 2][i]];
        int x = c[o[0]], y = c[o[1]];
        if (transpose)
            black[x][y] = true;
        else
            black[y][x] = true;
    }
    for (int y = 0; y < 19; y++)
        for (int x = 0; x < 19; x++)
            if (black[y][x]) {
                char v[2] = {(char)('a' + x), (char)('a' + y)};
                if (node_add_value(root, "AB", v, 2) != 0)
                    return hc_err_set(err, HC_ENOMEM, "out of memory");
            }
    return 0;
}

/* ---------------------------------------------------------------- collections */

hc_sgf_collection *hc_sgf_parse(const char *data, size_t len, const char *name, hc_err *err)
{
    hc_sgf_collection *c = calloc(1, sizeof *c);
    if (!c) {
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    c->name = strdup(name);
    if (!c->name) {
        free(c);
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    parser p = {.s = data, .len = len, .name = name, .game_line = -1, .err = err};
    if (len >= 3 && (unsigned char)data[0] == 0xEF && (unsigned char)data[1] == 0xBB && (unsigned char)data[2] == 0xBF)
        p.pos = 3;
    size_t cap = 0;
    for (;;) {
        size_t at;
        int ch = peek(&p, &at);
        if (ch < 0)
            break;
        p.game_index = (long)c->n_games;
        p.game_line = -1;
        if (ch != '(') {
            char d[16];
            fail_at(&p, HC_EFORMAT, at, "expected '(' to start game %ld, found %s", p.game_index, char_desc(ch, d));
            goto fail;
        }
        p.game_line = line_of(&p, at);
        p.pos = at;
        if (c->n_games == cap) {
            size_t nc = cap ? cap * 2 : 16;
            hc_sgf_game *ng = realloc(c->games, nc * sizeof *ng);
            if (!ng) {
                hc_err_set(err, HC_ENOMEM, "%s: out of memory", name);
                goto fail;
            }
            c->games = ng;
            cap = nc;
        }
        hc_sgf_game *g = &c->games[c->n_games];
        memset(g, 0, sizeof *g);
        g->index = p.game_index;
        g->line = p.game_line;
        g->offset = at;
        if (parse_tree(&p, &g->tree) != 0)
            goto fail;
        c->n_games++;
        if (fox_handicap_fixup(&g->tree, err) != 0) {
            hc_sgf_game_err(err, c, g);
            goto fail;
        }
    }
    if (c->n_games == 0) {
        hc_err_set(err, HC_EFORMAT, "%s: no SGF game in the file", name);
        goto fail;
    }
    return c;
fail:
    hc_sgf_free(c);
    return NULL;
}

hc_sgf_collection *hc_sgf_load(const char *path, hc_err *err)
{
    size_t len = 0;
    char *data = hc_read_file(path, HC_SGF_MAX_FILE, &len, err);
    if (!data)
        return NULL;
    hc_sgf_collection *c = hc_sgf_parse(data, len, path, err);
    free(data);
    return c;
}

int hc_sgf_game_err(hc_err *err, const hc_sgf_collection *c, const hc_sgf_game *g)
{
    return hc_err_prefix(err, "%s: game %ld (line %ld): ", c->name, g->index, g->line + 1);
}
