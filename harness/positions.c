#include "positions.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

/* A line longer than this is refused before it is buffered whole. */
enum { HC_POSITION_LINE_MAX = 16 << 20, HC_POSITION_MAX_BOARD = 64, HC_POSITION_MAX_MOVES = 100000 };

void hc_position_free(hc_position *p)
{
    if (!p)
        return;
    free(p->initial_black);
    free(p->initial_white);
    free(p->moves);
    memset(p, 0, sizeof *p);
}

int hc_position_copy(hc_position *dst, const hc_position *src, hc_err *err)
{
    *dst = *src;
    dst->initial_black = NULL;
    dst->initial_white = NULL;
    dst->moves = NULL;
    dst->initial_black = hc_malloc(sizeof(hc_xy) * (size_t)src->n_initial_black, err, "setup stones");
    dst->initial_white = hc_malloc(sizeof(hc_xy) * (size_t)src->n_initial_white, err, "setup stones");
    dst->moves = hc_malloc(sizeof(hc_move) * (size_t)src->n_moves, err, "moves");
    if (!dst->initial_black || !dst->initial_white || !dst->moves) {
        hc_position_free(dst);
        return -1;
    }
    /* memcpy from a NULL source is undefined even for 0 bytes */
    if (src->n_initial_black)
        memcpy(dst->initial_black, src->initial_black, sizeof(hc_xy) * (size_t)src->n_initial_black);
    if (src->n_initial_white)
        memcpy(dst->initial_white, src->initial_white, sizeof(hc_xy) * (size_t)src->n_initial_white);
    if (src->n_moves)
        memcpy(dst->moves, src->moves, sizeof(hc_move) * (size_t)src->n_moves);
    return 0;
}

static int get_field(json_t *obj, const char *key, const char *where, json_t **out, hc_err *err)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return hc_err_set(err, HC_EFORMAT, "%s: missing field \"%s\"", where, key);
    return 0;
}

static int get_int(json_t *obj, const char *key, const char *where, long lo, long hi, long *out, hc_err *err)
{
    json_t *v;
    if (get_field(obj, key, where, &v, err))
        return -1;
    if (!json_is_integer(v))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" is not an integer", where, key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" = %lld out of range [%ld, %ld]", where, key,
                          (long long)x, lo, hi);
    *out = (long)x;
    return 0;
}

static int get_num(json_t *obj, const char *key, const char *where, float *out, hc_err *err)
{
    json_t *v;
    if (get_field(obj, key, where, &v, err))
        return -1;
    if (!json_is_number(v))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" is not a number", where, key);
    double x = json_number_value(v);
    if (!isfinite(x) || fabs(x) > 1e6)
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" = %g is not a plausible value", where, key, x);
    *out = (float)x;
    return 0;
}

static int parse_color(json_t *obj, const char *key, const char *where, int *out, hc_err *err)
{
    json_t *v;
    if (get_field(obj, key, where, &v, err))
        return -1;
    const char *s = json_string_value(v);
    if (s && strcmp(s, "B") == 0)
        *out = HC_BLACK;
    else if (s && strcmp(s, "W") == 0)
        *out = HC_WHITE;
    else
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" must be \"B\" or \"W\"", where, key);
    return 0;
}

/* "x,y" with 0 <= x < xs, 0 <= y < ys. */
static int parse_xy(const char *s, int xs, int ys, int *x, int *y)
{
    int n = 0;
    if (!s || sscanf(s, "%d,%d%n", x, y, &n) != 2 || s[n] != '\0')
        return -1;
    if (*x < 0 || *x >= xs || *y < 0 || *y >= ys)
        return -1;
    return 0;
}

static int parse_stones(json_t *obj, const char *key, const char *where, int xs, int ys, hc_xy **out, int *n,
                        hc_err *err)
{
    json_t *arr;
    if (get_field(obj, key, where, &arr, err))
        return -1;
    if (!json_is_array(arr))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" is not an array", where, key);
    size_t len = json_array_size(arr);
    if (len > (size_t)xs * (size_t)ys)
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" has %zu stones, more than the board's %d points", where,
                          key, len, xs * ys);
    *out = hc_malloc(sizeof(hc_xy) * len, err, "setup stones");
    if (!*out)
        return -1;
    *n = (int)len;
    for (size_t i = 0; i < len; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (parse_xy(s, xs, ys, &(*out)[i].x, &(*out)[i].y))
            return hc_err_set(err, HC_EFORMAT, "%s: %s[%zu] = \"%s\" is not an on-board \"x,y\"", where, key, i,
                              s ? s : "(not a string)");
    }
    return 0;
}

static int parse_moves(json_t *obj, const char *where, int xs, int ys, hc_move **out, int *n, hc_err *err)
{
    json_t *arr;
    if (get_field(obj, "moves", where, &arr, err))
        return -1;
    if (!json_is_array(arr))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"moves\" is not an array", where);
    size_t len = json_array_size(arr);
    if (len > HC_POSITION_MAX_MOVES)
        return hc_err_set(err, HC_ELIMIT, "%s: %zu moves, over the limit of %d", where, len, HC_POSITION_MAX_MOVES);
    *out = hc_malloc(sizeof(hc_move) * len, err, "moves");
    if (!*out)
        return -1;
    *n = (int)len;
    for (size_t i = 0; i < len; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        hc_move *m = &(*out)[i];
        int ok = s && (s[0] == 'B' || s[0] == 'W') && s[1] == ':';
        if (ok) {
            m->pla = s[0] == 'B' ? HC_BLACK : HC_WHITE;
            if (strcmp(s + 2, "pass") == 0)
                m->x = m->y = -1;
            else
                ok = parse_xy(s + 2, xs, ys, &m->x, &m->y) == 0;
        }
        if (!ok)
            return hc_err_set(err, HC_EFORMAT, "%s: moves[%zu] = \"%s\" is not \"B:x,y\", \"W:x,y\" or \"B:pass\"",
                              where, i, s ? s : "(not a string)");
    }
    return 0;
}

int hc_position_parse(const char *text, const char *where, hc_position *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return hc_err_set(err, HC_EFORMAT, "%s: column %d: invalid JSON: %s", where, jerr.column, jerr.text);
    int rc = -1;
    long v;
    if (!json_is_object(obj)) {
        hc_err_set(err, HC_EFORMAT, "%s: not a JSON object", where);
        goto done;
    }
    if (get_int(obj, "index", where, 0, 1L << 40, &v, err))
        goto done;
    out->index = v;
    if (get_int(obj, "sgf", where, 0, 1L << 40, &v, err))
        goto done;
    out->sgf_line = v;
    if (get_int(obj, "xSize", where, 1, HC_POSITION_MAX_BOARD, &v, err))
        goto done;
    out->x_size = (int)v;
    if (get_int(obj, "ySize", where, 1, HC_POSITION_MAX_BOARD, &v, err))
        goto done;
    out->y_size = (int)v;
    json_t *rules;
    if (get_field(obj, "rules", where, &rules, err))
        goto done;
    const char *rs = json_string_value(rules);
    if (!rs || strlen(rs) >= HC_RULES_STR_MAX) {
        hc_err_set(err, HC_EFORMAT, "%s: field \"rules\" is not a string of at most %d characters", where,
                   HC_RULES_STR_MAX - 1);
        goto done;
    }
    strcpy(out->rules, rs);
    if (get_num(obj, "komi", where, &out->komi, err))
        goto done;
    if (parse_stones(obj, "initialBlack", where, out->x_size, out->y_size, &out->initial_black, &out->n_initial_black,
                     err))
        goto done;
    if (parse_stones(obj, "initialWhite", where, out->x_size, out->y_size, &out->initial_white, &out->n_initial_white,
                     err))
        goto done;
    if (parse_color(obj, "initialPla", where, &out->initial_pla, err))
        goto done;
    if (get_int(obj, "initialEncorePhase", where, 0, 2, &v, err))
        goto done;
    out->initial_encore_phase = (int)v;
    if (get_int(obj, "initialTurnNumber", where, 0, 1L << 30, &v, err))
        goto done;
    out->initial_turn_number = (int)v;
    json_t *b;
    if (get_field(obj, "assumeMultipleStartingBlackMovesAreHandicap", where, &b, err))
        goto done;
    if (!json_is_boolean(b)) {
        hc_err_set(err, HC_EFORMAT, "%s: field \"assumeMultipleStartingBlackMovesAreHandicap\" is not a boolean", where);
        goto done;
    }
    out->assume_multiple_starting_black_moves_are_handicap = json_is_true(b);
    if (parse_moves(obj, where, out->x_size, out->y_size, &out->moves, &out->n_moves, err))
        goto done;
    if (parse_color(obj, "nextPla", where, &out->next_pla, err))
        goto done;
    /* Derived fields: optional on input (a hand-written position need not carry them). */
    if (json_object_get(obj, "whiteHandicapBonusScore") &&
        get_num(obj, "whiteHandicapBonusScore", where, &out->white_handicap_bonus_score, err))
        goto done;
    if (json_object_get(obj, "encorePhase")) {
        if (get_int(obj, "encorePhase", where, 0, 2, &v, err))
            goto done;
        out->encore_phase = (int)v;
    }
    if (json_object_get(obj, "symmetry")) {
        if (get_int(obj, "symmetry", where, 0, 7, &v, err))
            goto done;
        out->symmetry = (int)v;
    }
    rc = 0;
done:
    json_decref(obj);
    if (rc)
        hc_position_free(out);
    return rc;
}

static json_t *stones_json(const hc_xy *s, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d,%d", s[i].x, s[i].y);
        json_array_append_new(arr, json_string(buf));
    }
    return arr;
}

char *hc_position_format(const hc_position *p, hc_err *err)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(p->index));
    json_object_set_new(o, "sgf", json_integer(p->sgf_line));
    json_object_set_new(o, "xSize", json_integer(p->x_size));
    json_object_set_new(o, "ySize", json_integer(p->y_size));
    json_object_set_new(o, "rules", json_string(p->rules));
    json_object_set_new(o, "komi", json_real(p->komi));
    json_object_set_new(o, "initialBlack", stones_json(p->initial_black, p->n_initial_black));
    json_object_set_new(o, "initialWhite", stones_json(p->initial_white, p->n_initial_white));
    json_object_set_new(o, "initialPla", json_string(p->initial_pla == HC_WHITE ? "W" : "B"));
    json_object_set_new(o, "initialEncorePhase", json_integer(p->initial_encore_phase));
    json_object_set_new(o, "initialTurnNumber", json_integer(p->initial_turn_number));
    json_object_set_new(o, "assumeMultipleStartingBlackMovesAreHandicap",
                        json_boolean(p->assume_multiple_starting_black_moves_are_handicap));
    json_object_set_new(o, "whiteHandicapBonusScore", json_real(p->white_handicap_bonus_score));
    json_object_set_new(o, "encorePhase", json_integer(p->encore_phase));
    json_t *moves = json_array();
    for (int i = 0; i < p->n_moves; i++) {
        char buf[48];
        const hc_move *m = &p->moves[i];
        if (m->x < 0)
            snprintf(buf, sizeof buf, "%c:pass", m->pla == HC_WHITE ? 'W' : 'B');
        else
            snprintf(buf, sizeof buf, "%c:%d,%d", m->pla == HC_WHITE ? 'W' : 'B', m->x, m->y);
        json_array_append_new(moves, json_string(buf));
    }
    json_object_set_new(o, "moves", moves);
    json_object_set_new(o, "nextPla", json_string(p->next_pla == HC_WHITE ? "W" : "B"));
    json_object_set_new(o, "symmetry", json_integer(p->symmetry));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        hc_err_set(err, HC_ENOMEM, "out of memory formatting position %ld", p->index);
    return s;
}

struct hc_posreader {
    hc_istream *in;
};

hc_posreader *hc_posreader_open(const char *path, hc_err *err)
{
    hc_posreader *r = hc_calloc(1, sizeof *r, err, "positions reader");
    if (!r)
        return NULL;
    r->in = hc_istream_open(path, err);
    if (!r->in) {
        free(r);
        return NULL;
    }
    return r;
}

int hc_posreader_next(hc_posreader *r, hc_position *out, hc_err *err)
{
    for (;;) {
        char *line;
        hc_err_clear(err);
        long n = hc_istream_getline(r->in, &line, HC_POSITION_LINE_MAX, err);
        if (n < 0)
            return err && err->code != HC_OK ? -1 : 0;
        size_t skip = strspn(line, " \t");
        if (line[skip] == '\0')
            continue; /* blank lines separate nothing but are harmless */
        char where[600];
        snprintf(where, sizeof where, "%s:%ld", hc_istream_name(r->in), hc_istream_lineno(r->in));
        if (hc_position_parse(line, where, out, err))
            return -1;
        return 1;
    }
}

void hc_posreader_close(hc_posreader *r)
{
    if (!r)
        return;
    hc_istream_close(r->in);
    free(r);
}

int hc_positions_load(const char *path, hc_position **out, size_t *n, hc_err *err)
{
    *out = NULL;
    *n = 0;
    hc_posreader *r = hc_posreader_open(path, err);
    if (!r)
        return -1;
    size_t cap = 0, len = 0;
    hc_position *ps = NULL;
    int rc;
    hc_position p;
    while ((rc = hc_posreader_next(r, &p, err)) == 1) {
        if (len == cap) {
            cap = cap ? cap * 2 : 256;
            hc_position *np = realloc(ps, cap * sizeof *ps);
            if (!np) {
                hc_position_free(&p);
                rc = hc_err_set(err, HC_ENOMEM, "%s: out of memory after %zu positions", path, len);
                break;
            }
            ps = np;
        }
        ps[len++] = p;
    }
    hc_posreader_close(r);
    if (rc < 0) {
        hc_positions_free(ps, len);
        return -1;
    }
    *out = ps;
    *n = len;
    return 0;
}

void hc_positions_free(hc_position *ps, size_t n)
{
    if (!ps)
        return;
    for (size_t i = 0; i < n; i++)
        hc_position_free(&ps[i]);
    free(ps);
}

struct hc_poswriter {
    hc_ostream *out;
};

hc_poswriter *hc_poswriter_open(const char *path, hc_err *err)
{
    hc_poswriter *w = hc_calloc(1, sizeof *w, err, "positions writer");
    if (!w)
        return NULL;
    w->out = hc_ostream_open(path, err);
    if (!w->out) {
        free(w);
        return NULL;
    }
    return w;
}

int hc_poswriter_write(hc_poswriter *w, const hc_position *p, hc_err *err)
{
    char *s = hc_position_format(p, err);
    if (!s)
        return -1;
    int rc = hc_ostream_write_line(w->out, s, err);
    free(s);
    return rc;
}

int hc_poswriter_commit(hc_poswriter *w, hc_err *err)
{
    int rc = hc_ostream_commit(w->out, err);
    free(w);
    return rc;
}

void hc_poswriter_abort(hc_poswriter *w)
{
    if (!w)
        return;
    hc_ostream_abort(w->out);
    free(w);
}
