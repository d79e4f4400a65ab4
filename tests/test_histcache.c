/* hc_history_cache: the history it continues from the previous record must be the one
 * hc_history_from_position builds from scratch, for every record, whatever order the records
 * come in (a game's positions in order, with gaps, interleaved games, shuffled, the same record
 * twice), and errors must read the same. Compared through what the evaluation uses: the input
 * features of versions 3-7, the legal map, the next player. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/positions.h"
#include "harness/data/selfplay.h"

typedef struct pos_list {
    hc_position *v;
    size_t n, cap;
} pos_list;

static int collect(const hc_position *p, void *user, hc_err *err)
{
    pos_list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        hc_position *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return hc_err_set(err, HC_ENOMEM, "out of memory");
        l->v = v, l->cap = cap;
    }
    if (hc_position_copy(&l->v[l->n], p, err))
        return -1;
    l->n++;
    return 0;
}

static void list_free(pos_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        hc_position_free(&l->v[i]);
    free(l->v);
}

/* What a history gives the evaluation, as bytes: features of every input version, the legal
 * map, the next player. */
static size_t describe(const hc_history *h, int nn, unsigned char *out, size_t cap)
{
    size_t n = 0;
    hc_nninput_params params = hc_nninput_params_default();
    hc_err err = {0};
    int pla = hc_history_next_pla(h);
    for (int v = 3; v <= 7; v++) {
        size_t ns = (size_t)hc_features_num_spatial(v) * nn * nn, ng = (size_t)hc_features_num_global(v);
        if (n + (ns + ng) * sizeof(float) > cap)
            return 0;
        float *sp = (float *)(void *)(out + n);
        if (hc_features_fill(v, h, pla, &params, nn, nn, sp, sp + ns, &err))
            return 0;
        n += (ns + ng) * sizeof(float);
    }
    if (n + (size_t)(nn * nn + 1) + 1 > cap)
        return 0;
    hc_history_legal_map(h, nn, nn, out + n);
    n += (size_t)(nn * nn + 1);
    out[n++] = (unsigned char)pla;
    return n;
}

enum { DESC_CAP = 400000 };

/* Every record of `order` through one cache and from scratch: the number of records whose
 * description differs (or that failed on one side only). */
static int compare_run(const hc_position *ps, const size_t *order, size_t n, int nn, size_t *continued)
{
    static unsigned char a[DESC_CAP], b[DESC_CAP];
    hc_err err = {0};
    hc_history_cache *c = hc_history_cache_new(&err);
    int bad = 0;
    const hc_history *prev = NULL;
    *continued = 0; /* records whose history continued the previous one's (the same object) */
    for (size_t k = 0; k < n && c; k++) {
        const hc_position *p = &ps[order[k]];
        hc_history *fresh = hc_history_from_position(p, &err);
        const hc_history *cached = hc_history_cache_get(c, p, &err);
        if (!fresh || !cached) {
            bad += !fresh != !cached;
        } else {
            size_t na = describe(fresh, nn, a, sizeof a), nb = describe(cached, nn, b, sizeof b);
            bad += na == 0 || na != nb || memcmp(a, b, na) != 0;
        }
        if (k > 0 && cached && cached == prev)
            (*continued)++;
        prev = cached;
        hc_history_free(fresh);
    }
    hc_history_cache_free(c);
    return bad;
}

static void shuffle(size_t *v, size_t n, unsigned seed)
{
    for (size_t i = n; i > 1; i--) {
        seed = seed * 1103515245u + 12345u;
        size_t j = (seed >> 8) % i;
        size_t t = v[i - 1];
        v[i - 1] = v[j], v[j] = t;
    }
}

static void orders(const char *base, const hc_position *ps, size_t n, int nn)
{
    char tag[32];
    size_t *order = malloc((n ? n : 1) * sizeof *order), cont = 0;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    int bad = compare_run(ps, order, n, nn, &cont);
    snprintf(tag, sizeof tag, "%s.2", base);
    hc_check(tag, bad == 0 && n > 0 && cont > n / 2,
             "in order: %d of %zu records differ from a replay from scratch; %zu continued the previous", bad, n, cont);
    /* two halves interleaved: consecutive records from different games */
    size_t h = n / 2, cont2;
    for (size_t i = 0, k = 0; k < n; i++) {
        if (i < h)
            order[k++] = i;
        if (h + i < n && k < n)
            order[k++] = h + i;
    }
    bad = compare_run(ps, order, n, nn, &cont2);
    snprintf(tag, sizeof tag, "%s.3", base);
    hc_check(tag, bad == 0, "interleaved: %d records differ", bad);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    shuffle(order, n, 7u);
    bad = compare_run(ps, order, n, nn, &cont2);
    snprintf(tag, sizeof tag, "%s.4", base);
    hc_check(tag, bad == 0, "shuffled: %d records differ", bad);
    for (size_t i = 0; i < n; i++) /* each record twice in a row */
        order[i] = i / 2;
    bad = compare_run(ps, order, n, nn, &cont2);
    snprintf(tag, sizeof tag, "%s.5", base);
    hc_check(tag, bad == 0, "repeated: %d records differ", bad);
    free(order);
}

static void selfplay_cases(void)
{
    struct {
        const char *tag;
        int size, games, stride;
        double handicap, pass;
        const char *rules;
    } cases[] = {
        {"histcache-1", 9, 4, 1, 0.5, 0.05, "koSITUATIONALscoreAREAtaxNONEsui1komi7.5"},
        {"histcache-2", 13, 3, 3, 0.5, 0.02, "koSIMPLEscoreTERRITORYtaxSEKIsui0komi6.5"},
        {"histcache-3", 7, 6, 1, 0.0, 0.2, "koPOSITIONALscoreAREAtaxALLsui1komi7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hc_selfplay_opts o;
        hc_selfplay_opts_default(&o);
        o.x_size = o.y_size = cases[i].size;
        o.games = cases[i].games;
        o.seed = 11 + i;
        o.stride = cases[i].stride;
        o.handicap_prob = cases[i].handicap;
        o.pass_prob = cases[i].pass;
        snprintf(o.rules, sizeof o.rules, "%s", cases[i].rules);
        pos_list l = {0};
        hc_err err = {0};
        int rc = hc_selfplay_run(&o, collect, &l, &err);
        char tag[32];
        snprintf(tag, sizeof tag, "%s.1", cases[i].tag);
        hc_check(tag, rc == 0 && l.n > 20, "self-play: %s (%zu positions)", err.msg, l.n);
        if (rc == 0)
            orders(cases[i].tag, l.v, l.n, cases[i].size);
        list_free(&l);
    }
}

/* A record that extends the cached one with an impossible move fails with the message a replay
 * from scratch gives; nothing stays cached, so the next record is built afresh and right. A record
 * with the same moves but other rules is not continued. */
static void error_cases(void)
{
    hc_move moves[] = {{HC_BLACK, 2, 2}, {HC_WHITE, 3, 3}, {HC_BLACK, 4, 4}, {HC_WHITE, 2, 2}, {HC_WHITE, 5, 5}};
    hc_position p = hc_test_position9(moves, 3);
    p.index = 7;
    hc_err err = {0}, err2 = {0};
    hc_history_cache *c = hc_history_cache_new(&err);
    const hc_history *h = hc_history_cache_get(c, &p, &err);
    hc_check("histcache-4.1", h && hc_history_num_moves(h) == 3, "first record: %s", err.msg);
    const hc_history *first = h;
    p.n_moves = 3;
    p.index = 9; /* the same record again (another symmetry, say): the same history */
    h = hc_history_cache_get(c, &p, &err);
    hc_check("histcache-4.2", h == first && hc_history_num_moves(h) == 3, "the same record twice: continued");
    p.index = 8;
    p.n_moves = 4; /* white on black's stone */
    p.next_pla = HC_BLACK;
    h = hc_history_cache_get(c, &p, &err);
    hc_history *fresh = hc_history_from_position(&p, &err2);
    hc_check("histcache-4.3", !h && !fresh && strcmp(err.msg, err2.msg) == 0 && strstr(err.msg, "move 4"),
             "an impossible move: cached '%s', from scratch '%s'", err.msg, err2.msg);
    hc_move next[] = {{HC_BLACK, 2, 2}, {HC_WHITE, 3, 3}, {HC_BLACK, 4, 4}, {HC_WHITE, 5, 5}};
    p.moves = next;
    p.n_moves = 4;
    h = hc_history_cache_get(c, &p, &err);
    hc_check("histcache-4.4", h && hc_history_num_moves(h) == 4 && hc_history_next_pla(h) == HC_BLACK,
             "after a failure: %s", err.msg);
    p.next_pla = HC_WHITE; /* a wrong nextPla after the cached prefix */
    h = hc_history_cache_get(c, &p, &err);
    fresh = hc_history_from_position(&p, &err2);
    hc_check("histcache-4.5", !h && !fresh && strcmp(err.msg, err2.msg) == 0, "nextPla: cached '%s', from scratch '%s'",
             err.msg, err2.msg);
    p.next_pla = HC_BLACK;
    h = hc_history_cache_get(c, &p, &err);
    snprintf(p.rules, sizeof p.rules, "koSITUATIONALscoreAREAtaxNONEsui1komi0.5");
    p.komi = 0.5f;
    const hc_history *other = hc_history_cache_get(c, &p, &err);
    hc_check("histcache-4.6", h && other && hc_history_rules(other)->komi == 0.5f,
             "same moves, other komi: a new history (komi %g)", other ? (double)hc_history_rules(other)->komi : -1.0);
    hc_history_cache_free(c);
}

static void shared_cases(void)
{
    const char *files[] = {"positions/size19.jsonl.gz", "positions/sizerect.jsonl.gz"};
    const char *tags[] = {"histcache-5.1", "histcache-5.2"};
    for (int f = 0; f < 2; f++) {
        const char *path = hc_shared(files[f]);
        if (!path) {
            hc_skip(tags[f], "../shared/%s is absent", files[f]);
            continue;
        }
        hc_err err = {0};
        hc_posreader *r = hc_posreader_open(path, &err);
        pos_list l = {0};
        hc_position p;
        int got;
        while (r && (got = hc_posreader_next(r, &p, &err)) > 0) {
            collect(&p, &l, &err);
            hc_position_free(&p);
        }
        hc_posreader_close(r);
        size_t cont = 0, *order = malloc((l.n ? l.n : 1) * sizeof *order);
        for (size_t i = 0; i < l.n; i++)
            order[i] = i;
        int bad = compare_run(l.v, order, l.n, 19, &cont);
        hc_check(tags[f], r && l.n > 100 && bad == 0 && cont > l.n / 2,
                 "%s: %d of %zu records differ; %zu continued a game (%s)", files[f], bad, l.n, cont, err.msg);
        free(order);
        list_free(&l);
    }
}

int main(void)
{
    hc_plan(23);
    selfplay_cases();
    error_cases();
    shared_cases();
    return hc_test_exit();
}
