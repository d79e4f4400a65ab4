/* hc_history from a positions record, and the cache that continues one record's history into the next. */
#include "harness/go/history.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- positions records ------------------------------------------------------------------------ */

/* The record's setup: board, rules, initial player, encore phase, turn number, handicap flag. */
static hc_history *history_start(const hc_position *p, hc_err *err)
{
    hc_board b;
    if (hc_board_init(&b, p->x_size, p->y_size, err)) {
        hc_err_prefix(err, "position %ld: ", p->index);
        return NULL;
    }
    hc_rules rules;
    if (hc_rules_parse(p->rules, &rules, err)) {
        hc_err_prefix(err, "position %ld: ", p->index);
        return NULL;
    }
    if (rules.komi != p->komi) {
        hc_err_set(err, HC_EFORMAT, "position %ld: komi %g disagrees with the rules string \"%s\"", p->index, (double)p->komi, p->rules);
        return NULL;
    }
    int n_setup = p->n_initial_black + p->n_initial_white;
    hc_placement *pl = hc_malloc((size_t)(n_setup ? n_setup : 1) * sizeof *pl, err, "setup stones");
    if (!pl)
        return NULL;
    for (int i = 0; i < n_setup; i++) {
        const hc_xy *xy = i < p->n_initial_black ? &p->initial_black[i] : &p->initial_white[i - p->n_initial_black];
        if (xy->x < 0 || xy->y < 0 || xy->x >= p->x_size || xy->y >= p->y_size) {
            hc_err_set(err, HC_EFORMAT, "position %ld: setup stone (%d,%d) is off the %dx%d board", p->index, xy->x, xy->y,
                       p->x_size, p->y_size);
            free(pl);
            return NULL;
        }
        pl[i].loc = hc_loc_of(xy->x, xy->y, p->x_size);
        pl[i].color = i < p->n_initial_black ? HC_C_BLACK : HC_C_WHITE;
    }
    bool ok = hc_board_set_stones_fail_if_no_libs(&b, pl, n_setup);
    free(pl);
    if (!ok) {
        hc_err_set(err, HC_EFORMAT, "position %ld: setup stones repeat a point or leave a group without liberties", p->index);
        return NULL;
    }
    hc_board_clear_ko_loc(&b);
    hc_history *h = hc_history_new(&b, p->initial_pla, &rules, p->initial_encore_phase, false, err);
    if (!h) {
        hc_err_prefix(err, "position %ld: ", p->index);
        return NULL;
    }
    hc_history_set_initial_turn_number(h, p->initial_turn_number);
    hc_history_set_assume_multiple_starting_black_moves_are_handicap(h, p->assume_multiple_starting_black_moves_are_handicap);
    return h;
}

/* The record's moves from `first` on, then its nextPla against the history's. */
static int history_finish(hc_history *h, const hc_position *p, int first, hc_err *err)
{
    for (int i = first; i < p->n_moves; i++) {
        const hc_move *m = &p->moves[i];
        if (hc_history_play_tolerant(h, m->x, m->y, m->pla, err)) {
            hc_err_prefix(err, "position %ld: move %d: ", p->index, i + 1);
            return -1;
        }
    }
    if (p->next_pla != hc_history_next_pla(h))
        return hc_err_set(err, HC_EFORMAT, "position %ld: nextPla %s disagrees with the history's %s", p->index,
                          p->next_pla == HC_C_BLACK ? "B" : "W", hc_history_next_pla(h) == HC_C_BLACK ? "B" : "W");
    return 0;
}

hc_history *hc_history_from_position(const hc_position *p, hc_err *err)
{
    hc_history *h = history_start(p, err);
    if (h && history_finish(h, p, 0, err)) {
        hc_history_free(h);
        return NULL;
    }
    return h;
}

struct hc_history_cache {
    hc_position last; /* the record whose history h is (moves included) */
    hc_history *h;    /* NULL: nothing cached */
};

hc_history_cache *hc_history_cache_new(hc_err *err)
{
    return hc_calloc(1, sizeof(hc_history_cache), err, "history cache");
}

static void cache_drop(hc_history_cache *c)
{
    hc_history_free(c->h);
    c->h = NULL;
    hc_position_free(&c->last);
}

void hc_history_cache_free(hc_history_cache *c)
{
    if (!c)
        return;
    cache_drop(c);
    free(c);
}

static bool same_stones(const hc_xy *a, const hc_xy *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].x != b[i].x || a[i].y != b[i].y)
            return false;
    return true;
}

/* p is `last` with more moves (or the same ones): the same setup, and last's moves as its first. */
static bool continues(const hc_position *last, const hc_position *p)
{
    if (p->x_size != last->x_size || p->y_size != last->y_size || strcmp(p->rules, last->rules) != 0 ||
        p->komi != last->komi || p->n_initial_black != last->n_initial_black ||
        p->n_initial_white != last->n_initial_white || p->initial_pla != last->initial_pla ||
        p->initial_encore_phase != last->initial_encore_phase || p->initial_turn_number != last->initial_turn_number ||
        p->assume_multiple_starting_black_moves_are_handicap != last->assume_multiple_starting_black_moves_are_handicap ||
        p->n_moves < last->n_moves)
        return false;
    if (!same_stones(p->initial_black, last->initial_black, p->n_initial_black) ||
        !same_stones(p->initial_white, last->initial_white, p->n_initial_white))
        return false;
    for (int i = 0; i < last->n_moves; i++)
        if (p->moves[i].pla != last->moves[i].pla || p->moves[i].x != last->moves[i].x || p->moves[i].y != last->moves[i].y)
            return false;
    return true;
}

const hc_history *hc_history_cache_get(hc_history_cache *c, const hc_position *p, hc_err *err)
{
    int first = 0;
    if (c->h && continues(&c->last, p)) {
        first = c->last.n_moves;
    } else {
        cache_drop(c);
        if (!(c->h = history_start(p, err)))
            return NULL;
    }
    /* The cached record is replaced before the moves are played: a failure leaves nothing cached. */
    hc_position_free(&c->last);
    if (history_finish(c->h, p, first, err) || hc_position_copy(&c->last, p, err)) {
        cache_drop(c);
        return NULL;
    }
    return c->h;
}
