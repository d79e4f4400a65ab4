/* Positions files: reading and writing the one-JSON-object-per-line records (positions.h). */
#include "harness/data/positions.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/go/rules.h"
#include "harness/base/sizes.h"
#include "harness/base/stream.h"
#include "harness/base/thread.h"

/* A line longer than this is refused before it is buffered whole. */
enum { HC_POSITION_LINE_MAX = 16 << 20, HC_POSITION_MAX_MOVES = 100000 };

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

/* A decimal coordinate at *s as sscanf's %d reads it (leading white space, a sign, digits);
 * returns -1 past 0..limit-1 or when no digits follow. Written out because sscanf was a
 * fifth of loading a positions file (a 19x19 game's records repeat its moves: ~300,000 of them
 * in testgpuerror's 19x19 set). */
static int parse_coord(const char **s, int limit, int *out)
{
    const char *p = *s;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        p++;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    long v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > limit)
            v = limit; /* too large either way; keep consuming the digits */
    if (neg && v != 0)
        return -1;
    if (v >= limit)
        return -1;
    *out = (int)v;
    *s = p;
    return 0;
}

/* "x,y" with 0 <= x < xs, 0 <= y < ys. */
static int parse_xy(const char *s, int xs, int ys, int *x, int *y)
{
    if (!s || parse_coord(&s, xs, x) || *s++ != ',' || parse_coord(&s, ys, y))
        return -1;
    return *s == '\0' ? 0 : -1;
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
    /* Sizes, rules, komi and the encore phase are checked here, where the file and line are
     * known, rather than first when a history is built from the record. */
    if (get_int(obj, "xSize", where, INT_MIN, INT_MAX, &v, err))
        goto done;
    out->x_size = (int)v;
    if (get_int(obj, "ySize", where, INT_MIN, INT_MAX, &v, err))
        goto done;
    out->y_size = (int)v;
    if (hc_check_board_size(out->x_size, out->y_size, "board (xSize x ySize)", err)) {
        hc_err_prefix(err, "%s: ", where);
        if (err)
            err->code = HC_EFORMAT;
        goto done;
    }
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
    hc_rules parsed;
    if (hc_rules_parse(rs, &parsed, err)) {
        hc_err_prefix(err, "%s: field \"rules\": ", where);
        goto done;
    }
    if (get_num(obj, "komi", where, &out->komi, err))
        goto done;
    if (parsed.komi != out->komi) {
        hc_err_set(err, HC_EFORMAT, "%s: field \"komi\" = %g disagrees with the rules string \"%s\"", where,
                   (double)out->komi, rs);
        goto done;
    }
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
    if (out->initial_encore_phase > 0 && parsed.scoring_rule != HC_SCORING_TERRITORY) {
        hc_err_set(err, HC_EFORMAT, "%s: field \"initialEncorePhase\" = %d needs territory scoring", where,
                   out->initial_encore_phase);
        goto done;
    }
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

/* Blank lines separate nothing but are harmless: both readers skip them. */
static int blank_line(const char *line)
{
    return line[strspn(line, " \t")] == '\0';
}

/* One record, errors placed at name:lineno. */
static int parse_line_at(const char *line, const char *name, long lineno, hc_position *out, hc_err *err)
{
    char where[600];
    snprintf(where, sizeof where, "%s:%ld", name, lineno);
    if (hc_position_parse(line, where, out, err))
        return -1;
    out->file_line = lineno;
    return 0;
}

int hc_posreader_next(hc_posreader *r, hc_position *out, hc_err *err)
{
    for (;;) {
        char *line;
        hc_err_clear(err);
        long n = hc_istream_getline(r->in, &line, HC_POSITION_LINE_MAX, err);
        if (n < 0)
            return err && err->code != HC_OK ? -1 : 0;
        if (blank_line(line))
            continue;
        if (parse_line_at(line, hc_istream_name(r->in), hc_istream_lineno(r->in), out, err))
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

/* hc_positions_load parses the file's lines on several threads: jansson's allocations made
 * one thread parse testgpuerror's 19x19 set (2,247 records, 3.2 MB) in ~0.1 s, as long as
 * the model's loading that it runs beside. Lines are kept in one buffer, parsed into their own
 * slots, and only the first failure in file order is reported, as a serial read would. */
enum { POS_LOAD_THREADS = 4, POS_LOAD_PER_THREAD = 256 };

typedef struct pos_line {
    size_t start; /* offset in pos_lines.text */
    long lineno;
} pos_line;

typedef struct pos_lines {
    char *text;     /* the lines, each NUL-terminated */
    pos_line *line; /* where each starts, and its line number */
    size_t n, cap, used, text_cap;
} pos_lines;

typedef struct pos_range {
    const pos_lines *lines;
    const char *name;
    hc_position *ps;
    size_t lo, hi, done; /* parsed [lo, done); done < hi: line done failed with err */
    hc_err err;
} pos_range;

static void *parse_range(void *arg)
{
    pos_range *r = arg;
    for (r->done = r->lo; r->done < r->hi; r->done++) {
        const pos_line *l = &r->lines->line[r->done];
        if (parse_line_at(r->lines->text + l->start, r->name, l->lineno, &r->ps[r->done], &r->err))
            break;
    }
    return NULL;
}

static int keep_line(pos_lines *l, const char *line, long lineno, hc_err *err)
{
    size_t len = strlen(line) + 1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        pos_line *grown = realloc(l->line, cap * sizeof *grown);
        if (!grown)
            return hc_err_set(err, HC_ENOMEM, "out of memory after %zu positions", l->n);
        l->line = grown, l->cap = cap;
    }
    if (l->used + len > l->text_cap) {
        size_t cap = l->text_cap ? 2 * l->text_cap : 1 << 20;
        while (cap < l->used + len)
            cap *= 2;
        char *t = realloc(l->text, cap);
        if (!t)
            return hc_err_set(err, HC_ENOMEM, "out of memory after %zu positions", l->n);
        l->text = t, l->text_cap = cap;
    }
    memcpy(l->text + l->used, line, len);
    l->line[l->n++] = (pos_line){l->used, lineno};
    l->used += len;
    return 0;
}

int hc_positions_load(const char *path, hc_position **out, size_t *n, hc_err *err)
{
    *out = NULL;
    *n = 0;
    hc_istream *in = hc_istream_open(path, err);
    if (!in)
        return -1;
    pos_lines lines = {0};
    hc_err read_err = {0};
    int read_failed = 0;
    for (;;) {
        char *line;
        long got = hc_istream_getline(in, &line, HC_POSITION_LINE_MAX, &read_err);
        if (got < 0) {
            read_failed = read_err.code != HC_OK;
            break;
        }
        if (blank_line(line))
            continue;
        if (keep_line(&lines, line, hc_istream_lineno(in), &read_err)) {
            hc_err_prefix(&read_err, "%s: ", path);
            read_failed = 1;
            break;
        }
    }
    hc_position *ps = hc_calloc(lines.n ? lines.n : 1, sizeof *ps, err, "positions");
    int rc = ps ? 0 : -1;
    if (ps) {
        pos_range ranges[POS_LOAD_THREADS];
        pthread_t tids[POS_LOAD_THREADS];
        int nr = (int)(lines.n / POS_LOAD_PER_THREAD);
        nr = nr < 1 ? 1 : nr > POS_LOAD_THREADS ? POS_LOAD_THREADS : nr;
        int started[POS_LOAD_THREADS] = {0};
        for (int t = 0; t < nr; t++) {
            ranges[t] = (pos_range){&lines, hc_istream_name(in), ps, lines.n * t / nr, lines.n * (t + 1) / nr, 0, {0}};
            started[t] = t > 0 && hc_thread_start(&tids[t], parse_range, &ranges[t]) == 0;
        }
        for (int t = 0; t < nr; t++)
            if (!started[t])
                parse_range(&ranges[t]);
        for (int t = 0; t < nr; t++)
            if (started[t])
                pthread_join(tids[t], NULL);
        for (int t = 0; t < nr && rc == 0; t++)
            if (ranges[t].done < ranges[t].hi) {
                if (err)
                    *err = ranges[t].err;
                rc = -1;
            }
        if (rc == 0 && read_failed) {
            if (err)
                *err = read_err;
            rc = -1;
        }
        if (rc) {
            /* each range's slots up to its failure are parsed; the failed one was freed */
            for (int t = 0; t < nr; t++)
                for (size_t i = ranges[t].lo; i < ranges[t].done; i++)
                    hc_position_free(&ps[i]);
            free(ps);
            ps = NULL;
        }
    }
    hc_istream_close(in);
    free(lines.text), free(lines.line);
    if (rc)
        return -1;
    *out = ps;
    *n = lines.n;
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
