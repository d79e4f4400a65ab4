/* Random legal games recorded as positions (see selfplay.h). The position filler is this
 * module's own: sgfwalk.c keeps its filler private to the SGF walk. */
#include "harness/data/selfplay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/go/board.h"
#include "harness/go/history.h"
#include "harness/data/sgfwalk.h"
#include "harness/go/rules.h"
#include "harness/base/sizes.h"

/* splitmix64: small, seedable, no global state. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double next_unif(uint64_t *s) { return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

/* Uniform in [0, n). */
static int next_below(uint64_t *s, int n) { return (int)(((next_u64(s) >> 32) * (uint64_t)n) >> 32); }

void hc_selfplay_opts_default(hc_selfplay_opts *o)
{
    memset(o, 0, sizeof *o);
    o->x_size = o->y_size = 9;
    o->games = 1;
    o->seed = 1;
    o->max_moves = 200;
    o->pass_prob = 0.02;
    o->stride = 1;
    snprintf(o->rules, sizeof o->rules, "koSITUATIONALscoreAREAtaxNONEsui1komi7.5");
}

typedef struct sp {
    const hc_selfplay_opts *o;
    hc_rules rules;
    hc_position pos;
    int moves_cap;
    long index;
    hc_selfplay_fn fn;
    void *user;
    hc_err *err;
} sp;

static int emit(sp *w, const hc_history *h, int game)
{
    hc_position *p = &w->pos;
    p->index = w->index++;
    p->sgf_line = game;
    if (hc_record_fill_position(h, p, &w->moves_cap, w->err))
        return -1;
    return w->fn(p, w->user, w->err);
}

static int play_game(sp *w, int game, uint64_t *rs, int *legal_x, int *legal_y)
{
    const hc_selfplay_opts *o = w->o;
    int xs = o->x_size, ys = o->y_size;
    hc_board b;
    if (hc_board_init(&b, xs, ys, w->err) < 0)
        return -1;
    int pla = HC_BLACK;
    if (o->handicap_prob > 0 && next_unif(rs) < o->handicap_prob && xs * ys >= 8) {
        int n = 2 + next_below(rs, 3);
        for (int k = 0; k < n;) {
            hc_loc loc = hc_loc_of(next_below(rs, xs), next_below(rs, ys), xs);
            if (b.colors[loc] != HC_EMPTY)
                continue;
            if (!hc_board_set_stone_fail_if_no_libs(&b, loc, HC_BLACK))
                return hc_err_set(w->err, HC_EINTERNAL, "game %d: cannot place a handicap stone", game);
            k++;
        }
        pla = HC_WHITE;
    }
    hc_history *h = hc_history_new(&b, pla, &w->rules, 0, false, w->err);
    if (!h)
        return -1;
    int stride = o->stride > 0 ? o->stride : 1;
    int phase = next_below(rs, stride);
    int rc = 0;
    for (int i = 0; i <= o->max_moves; i++) {
        if (hc_history_is_game_finished(h))
            break;
        if (i % stride == phase) {
            if (o->max_positions > 0 && w->index >= o->max_positions)
                break;
            if ((rc = emit(w, h, game)) < 0)
                break;
        }
        if (i == o->max_moves)
            break;
        int next = hc_history_next_pla(h);
        int n = 0;
        for (int y = 0; y < ys; y++)
            for (int x = 0; x < xs; x++)
                if (hc_history_is_legal(h, x, y, next)) {
                    legal_x[n] = x;
                    legal_y[n] = y;
                    n++;
                }
        int mx = -1, my = -1;
        /* Always draw both numbers so that the stream does not depend on the branch taken. */
        double u = next_unif(rs);
        int k = n > 0 ? next_below(rs, n) : 0;
        if (n > 0 && u >= o->pass_prob) {
            mx = legal_x[k];
            my = legal_y[k];
        }
        if ((rc = hc_history_play(h, mx, my, next, w->err)) < 0) {
            hc_err_prefix(w->err, "game %d, move %d: ", game, i);
            break;
        }
    }
    hc_history_free(h);
    return rc;
}

int hc_selfplay_run(const hc_selfplay_opts *o, hc_selfplay_fn fn, void *user, hc_err *err)
{
    if (hc_check_board_size(o->x_size, o->y_size, "selfplay board", err))
        return -1;
    if (o->games < 0 || o->max_moves < 0 || o->stride < 0 || !(o->pass_prob >= 0 && o->pass_prob <= 1) ||
        !(o->handicap_prob >= 0 && o->handicap_prob <= 1))
        return hc_err_set(err, HC_EUSAGE, "selfplay: negative count or probability outside [0, 1]");
    sp w = {0};
    w.o = o;
    w.fn = fn;
    w.user = user;
    w.err = err;
    if (hc_rules_parse(o->rules, &w.rules, err) < 0)
        return -1;
    int area = o->x_size * o->y_size;
    w.pos.initial_black = malloc((size_t)area * sizeof(hc_xy));
    w.pos.initial_white = malloc((size_t)area * sizeof(hc_xy));
    /* Never NULL, even for a position without moves: callers may memcpy from the arrays. */
    w.moves_cap = 64;
    w.pos.moves = malloc((size_t)w.moves_cap * sizeof(hc_move));
    int *lx = malloc((size_t)area * sizeof *lx), *ly = malloc((size_t)area * sizeof *ly);
    int rc = 0;
    if (!w.pos.initial_black || !w.pos.initial_white || !w.pos.moves || !lx || !ly)
        rc = hc_err_set(err, HC_ENOMEM, "selfplay: out of memory");
    for (int g = 0; rc == 0 && g < o->games; g++) {
        if (o->max_positions > 0 && w.index >= o->max_positions)
            break;
        /* Each game has its own stream: game g is the same whatever the other options. */
        uint64_t rs = o->seed ^ (0x5851f42d4c957f2dULL * (uint64_t)(g + 1));
        next_u64(&rs);
        rc = play_game(&w, g, &rs, lx, ly);
    }
    free(lx);
    free(ly);
    hc_position_free(&w.pos);
    return rc;
}

typedef struct write_ctx {
    hc_poswriter *w;
    long n;
} write_ctx;

static int write_one(const hc_position *p, void *user, hc_err *err)
{
    write_ctx *c = user;
    c->n++;
    return hc_poswriter_write(c->w, p, err);
}

int hc_selfplay_write(const hc_selfplay_opts *o, const char *path, long *n_out, hc_err *err)
{
    write_ctx c = {hc_poswriter_open(path, err), 0};
    if (!c.w)
        return -1;
    if (hc_selfplay_run(o, write_one, &c, err) < 0) {
        hc_poswriter_abort(c.w);
        return -1;
    }
    if (hc_poswriter_commit(c.w, err) < 0)
        return -1;
    if (n_out)
        *n_out = c.n;
    return 0;
}
