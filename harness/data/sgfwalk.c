/* Positions of SGF games in KataGo's testgpuerror order (dataio/sgf.cpp, iterAllUniquePositions
 * and the helpers it calls, with the flags testgpuerror passes). See sgfwalk.h. */
#include "harness/data/sgfwalk.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/go/board.h"
#include "harness/go/rules.h"

/* ---------------------------------------------------------------- a set of 128-bit hashes */

typedef struct hashset {
    hc_hash128 *v;
    bool *used;
    size_t cap, n;
} hashset;

static void hashset_free(hashset *s)
{
    free(s->v);
    free(s->used);
    memset(s, 0, sizeof *s);
}

static size_t hashset_slot(const hashset *s, hc_hash128 h)
{
    size_t i = (size_t)(h.hash0 ^ (h.hash1 >> 7)) & (s->cap - 1);
    while (s->used[i] && !hc_hash_eq(s->v[i], h))
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* Returns 1 when h was new (and is now in), 0 when present, -1 out of memory. */
static int hashset_insert(hashset *s, hc_hash128 h)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        hashset ns = {calloc(cap, sizeof *ns.v), calloc(cap, sizeof *ns.used), cap, 0};
        if (!ns.v || !ns.used) {
            hashset_free(&ns);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) {
                size_t j = hashset_slot(&ns, s->v[i]);
                ns.used[j] = true;
                ns.v[j] = s->v[i];
                ns.n++;
            }
        hashset_free(s);
        *s = ns;
    }
    size_t i = hashset_slot(s, h);
    if (s->used[i])
        return 0;
    s->used[i] = true;
    s->v[i] = h;
    s->n++;
    return 1;
}

/* ---------------------------------------------------------------- the walk */

typedef struct walk {
    const hc_sgf_collection *c;
    const hc_sgf_game *g;
    int xs, ys;
    hc_rules rules;
    hashset seen;
    hc_sgf_moves buf;
    hc_placement *plc;
    size_t plc_cap;
    hc_position pos; /* arrays sized for the board / grown for moves, reused */
    int moves_cap;
    long *index;
    hc_record_fn fn;
    void *user;
    hc_err *err;
} walk;

/* Prefixes the game (and node) to err. */
static int walk_fail(walk *w, const hc_sgf_node *n)
{
    if (w->err && w->err->code == HC_OK)
        w->err->code = HC_EFORMAT;
    if (n)
        hc_err_prefix(w->err, "node at offset %llu: ", (unsigned long long)n->offset);
    return hc_sgf_game_err(w->err, w->c, w->g);
}

static void coord_str(int x, int y, char buf[24])
{
    if (x < 0)
        snprintf(buf, 24, "pass");
    else
        snprintf(buf, 24, "%d,%d [%c%c]", x, y, x < 26 ? 'a' + x : 'A' + x - 26, y < 26 ? 'a' + y : 'A' + y - 26);
}

int hc_record_fill_position(const hc_history *h, hc_position *p, int *moves_cap, hc_err *err)
{
    const hc_board *ib = hc_history_initial_board(h);
    int xs = hc_history_x_size(h), ys = hc_history_y_size(h);
    p->x_size = xs;
    p->y_size = ys;
    const hc_rules *r = hc_history_rules(h);
    if (hc_rules_format(r, p->rules, sizeof p->rules) < 0)
        return hc_err_set(err, HC_EINTERNAL, "rules string too long");
    p->komi = r->komi;
    p->n_initial_black = p->n_initial_white = 0;
    for (int y = 0; y < ys; y++)
        for (int x = 0; x < xs; x++) {
            int col = ib->colors[hc_loc_of(x, y, xs)];
            if (col == HC_BLACK)
                p->initial_black[p->n_initial_black++] = (hc_xy){x, y};
            else if (col == HC_WHITE)
                p->initial_white[p->n_initial_white++] = (hc_xy){x, y};
        }
    p->initial_pla = hc_history_initial_pla(h);
    p->initial_encore_phase = hc_history_initial_encore_phase(h);
    int64_t itn = hc_history_initial_turn_number(h);
    if (itn > INT32_MAX)
        return hc_err_set(err, HC_ELIMIT, "initial turn number %lld too large", (long long)itn);
    p->initial_turn_number = (int)itn;
    p->assume_multiple_starting_black_moves_are_handicap = hc_history_assume_handicap(h);
    int nm = hc_history_num_moves(h);
    if (nm > *moves_cap || !p->moves) {
        int cap = *moves_cap > 0 ? *moves_cap : 64;
        while (cap < nm)
            cap *= 2;
        hc_move *nv = realloc(p->moves, (size_t)cap * sizeof *nv);
        if (!nv)
            return hc_err_set(err, HC_ENOMEM, "out of memory for moves");
        p->moves = nv;
        *moves_cap = cap;
    }
    for (int i = 0; i < nm; i++)
        p->moves[i] = hc_history_move(h, i);
    p->n_moves = nm;
    p->next_pla = hc_history_next_pla(h);
    p->white_handicap_bonus_score = hc_history_white_handicap_bonus_score(h);
    p->encore_phase = hc_history_encore_phase(h);
    p->symmetry = (int)(hc_history_situation_hash(h, p->next_pla, 0.5).hash0 & 7);
    return 0;
}

/* Fills w->pos from h and hands it to the callback. */
static int emit(walk *w, const hc_history *h)
{
    hc_position *p = &w->pos;
    p->index = (*w->index)++;
    p->sgf_line = w->g->line;
    if (hc_record_fill_position(h, p, &w->moves_cap, w->err))
        return -1;
    return w->fn(p, h, w->user, w->err);
}

/* KataGo's samplePositionHelper: skip finished games and double passes, then positions already
 * seen (stones, player to move, simple ko point). */
static int sample(walk *w, const hc_history *h, int next_pla)
{
    if (hc_history_is_game_finished(h))
        return 0;
    int nm = hc_history_num_moves(h);
    if (nm >= 2) {
        hc_move a = hc_history_move(h, nm - 1), b = hc_history_move(h, nm - 2);
        if (a.x < 0 && b.x < 0)
            return 0;
    }
    const hc_board *b = hc_history_board(h);
    const hc_zobrist *z = hc_zobrist_get();
    hc_hash128 hash = hc_hash_xor(b->pos_hash, z->player[next_pla]);
    if (hc_history_encore_phase(h) != 0)
        return hc_err_set(w->err, HC_EFORMAT, "unexpected encore phase %d", hc_history_encore_phase(h));
    if (b->ko_loc != HC_NULL_LOC)
        hash = hc_hash_xor(hash, z->ko_loc[b->ko_loc]);
    int r = hashset_insert(&w->seen, hash);
    if (r < 0)
        return hc_err_set(w->err, HC_ENOMEM, "out of memory for position hashes");
    if (r == 0)
        return 0;
    return emit(w, h);
}

/* Restarts the history from its current board as a setup node would (KataGo's
 * interruptHistoryLikeSetup). */
static int interrupt_history(walk *w, hc_history *h, int next_pla)
{
    hc_board b = *hc_history_board(h);
    hc_board_clear_ko_loc(&b);
    int64_t itn = hc_history_initial_turn_number(h) + hc_history_num_moves(h);
    if (hc_board_num_stones(&b) > itn)
        itn = hc_board_num_stones(&b);
    if (hc_history_reset(h, &b, next_pla, 0, w->err) != 0)
        return -1;
    hc_history_set_initial_turn_number(h, itn);
    return 0;
}

static int do_placements(walk *w, const hc_sgf_node *n, hc_history *h, int *next_pla, int pl)
{
    w->buf.n = 0;
    if (hc_sgf_node_placements(n, w->xs, w->ys, &w->buf, w->err) != 0)
        return -1;
    hc_board b = *hc_history_board(h);
    int net = 0;
    if (w->buf.n > 0) {
        if (w->buf.n > w->plc_cap) {
            hc_placement *np = realloc(w->plc, w->buf.n * sizeof *np);
            if (!np)
                return hc_err_set(w->err, HC_ENOMEM, "out of memory for placements");
            w->plc = np;
            w->plc_cap = w->buf.n;
        }
        for (size_t j = 0; j < w->buf.n; j++) {
            const hc_move *m = &w->buf.v[j];
            hc_loc loc = hc_loc_of(m->x, m->y, w->xs);
            /* Counted against the board before any of them is placed, repeats included. */
            if (b.colors[loc] != HC_EMPTY && m->pla == HC_EMPTY)
                net--;
            if (b.colors[loc] == HC_EMPTY && m->pla != HC_EMPTY)
                net++;
            w->plc[j].loc = loc;
            w->plc[j].color = m->pla;
        }
        if (!hc_board_set_stones_fail_if_no_libs(&b, w->plc, (int)w->buf.n))
            return hc_err_set(w->err, HC_EFORMAT, "illegal placements (a point listed twice, or a group left without liberties)");
    }
    bool pl_changes = pl != HC_EMPTY && pl != *next_pla;
    if (w->buf.n > 0 || pl_changes) {
        hc_board_clear_ko_loc(&b);
        int64_t itn = hc_history_initial_turn_number(h) + hc_history_num_moves(h);
        /* Each net added stone counts as half a turn, and the board's stones bound it below. */
        if (net > 0)
            itn += (net + 1) / 2;
        if (hc_board_num_stones(&b) > itn)
            itn = hc_board_num_stones(&b);
        if (pl_changes)
            *next_pla = pl;
        if (hc_history_reset(h, &b, *next_pla, 0, w->err) != 0)
            return -1;
        hc_history_set_initial_turn_number(h, itn);
    }
    return sample(w, h, *next_pla);
}

static int do_moves(walk *w, const hc_sgf_node *n, hc_history *h, int *next_pla)
{
    w->buf.n = 0;
    if (hc_sgf_node_moves(n, w->xs, w->ys, &w->buf, w->err) != 0)
        return -1;
    for (size_t j = 0; j < w->buf.n; j++) {
        hc_move m = w->buf.v[j];
        const hc_board *b = hc_history_board(h);
        bool pass = m.x < 0;
        hc_loc loc = pass ? HC_PASS_LOC : hc_loc_of(m.x, m.y, w->xs);
        bool tolerant_legal = hc_history_is_legal_tolerant(h, m.x, m.y, m.pla);
        bool simple_ko = hc_board_is_ko_banned(b, loc);
        bool superko = !pass && hc_history_super_ko_banned(h, m.x, m.y);
        bool suicide_illegal = !pass && hc_board_is_illegal_suicide(b, loc, m.pla, w->rules.multi_stone_suicide_legal);
        bool interrupt_before = simple_ko || superko || m.pla != hc_history_next_pla(h);
        if (!tolerant_legal || simple_ko) {
            char cs[24];
            coord_str(m.x, m.y, cs);
            return hc_err_set(w->err, HC_EFORMAT, "illegal move %s %s at effective turn %lld%s", m.pla == HC_BLACK ? "B" : "W",
                              cs, (long long)(hc_history_initial_turn_number(h) + hc_history_num_moves(h)),
                              simple_ko ? " (retakes a ko)" : "");
        }
        /* A superko violation or a move out of turn is played on a fresh history. */
        if (interrupt_before && interrupt_history(w, h, *next_pla) != 0)
            return -1;
        if (hc_history_play_tolerant(h, m.x, m.y, m.pla, w->err) != 0)
            return -1;
        *next_pla = hc_opp(m.pla);
        /* Unreachable with multi-stone suicide legal, kept as KataGo keeps it. */
        if (suicide_illegal && interrupt_history(w, h, *next_pla) != 0)
            return -1;
        if (sample(w, h, *next_pla) != 0)
            return -1;
    }
    return 0;
}

/* KataGo's iterAllPositionsHelper over one tree and its variations. h is consumed: the last
 * variation continues on it (the parent's state is not needed after it), the others on copies. */
static int walk_tree(walk *w, const hc_sgf_tree *t, hc_history *h, int next_pla, bool is_root)
{
    for (;;) {
        for (int i = 0; i < t->n_nodes; i++) {
            const hc_sgf_node *n = &t->nodes[i];
            const char *comment;
            if (hc_sgf_node_single(n, "C", &comment, w->err) < 0)
                return walk_fail(w, n);
            bool placements = hc_sgf_node_has_placements(n);
            if (is_root && i == 0 && !placements && sample(w, h, next_pla) != 0)
                return walk_fail(w, n);
            int pl;
            if (hc_sgf_pl(n, &pl, w->err) != 0)
                return walk_fail(w, n);
            if ((placements || (pl != HC_EMPTY && pl != next_pla)) && do_placements(w, n, h, &next_pla, pl) != 0)
                return walk_fail(w, n);
            if (do_moves(w, n, h, &next_pla) != 0)
                return walk_fail(w, n);
        }
        if (t->n_children == 0)
            return 0;
        for (int c = 0; c + 1 < t->n_children; c++) {
            hc_history *copy = hc_history_copy(h, w->err);
            if (!copy)
                return walk_fail(w, NULL);
            int r = walk_tree(w, &t->children[c], copy, next_pla, false);
            hc_history_free(copy);
            if (r != 0)
                return -1;
        }
        t = &t->children[t->n_children - 1];
        is_root = false;
    }
}

int hc_record_game(const hc_sgf_collection *c, const hc_sgf_game *g, long *index, hc_record_fn fn, void *user,
                   hc_err *err)
{
    walk w = {.c = c, .g = g, .index = index, .fn = fn, .user = user, .err = err};
    const hc_sgf_node *root = &g->tree.nodes[0];
    if (hc_sgf_size(root, HC_MAX_BOARD_LEN, &w.xs, &w.ys, err) != 0)
        return walk_fail(&w, root);
    int next_pla;
    if (hc_sgf_pl(root, &next_pla, err) != 0)
        return walk_fail(&w, root);
    if (next_pla == HC_EMPTY)
        next_pla = HC_BLACK;
    /* Tromp-Taylor with situational superko, whatever the SGF says: KataGo's choice here. */
    w.rules.ko_rule = HC_KO_SITUATIONAL;
    w.rules.scoring_rule = HC_SCORING_AREA;
    w.rules.tax_rule = HC_TAX_NONE;
    w.rules.multi_stone_suicide_legal = true;
    w.rules.has_button = false;
    w.rules.white_handicap_bonus_rule = HC_WHB_ZERO;
    w.rules.friendly_pass_ok = false;
    w.rules.komi = 7.5f;

    int rc = -1;
    hc_history *h = NULL;
    hc_board b;
    size_t area = (size_t)w.xs * (size_t)w.ys;
    w.pos.initial_black = malloc(area * sizeof(hc_xy));
    w.pos.initial_white = malloc(area * sizeof(hc_xy));
    /* Never NULL, even with no moves: callers may memcpy from it. */
    w.moves_cap = 64;
    w.pos.moves = malloc((size_t)w.moves_cap * sizeof(hc_move));
    if (!w.pos.initial_black || !w.pos.initial_white || !w.pos.moves) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        goto done;
    }
    if (hc_board_init(&b, w.xs, w.ys, err) != 0) {
        walk_fail(&w, root);
        goto done;
    }
    h = hc_history_new(&b, next_pla, &w.rules, 0, false, err);
    if (!h) {
        walk_fail(&w, root);
        goto done;
    }
    rc = walk_tree(&w, &g->tree, h, next_pla, true);
done:
    hc_history_free(h);
    hashset_free(&w.seen);
    hc_sgf_moves_free(&w.buf);
    free(w.plc);
    hc_position_free(&w.pos);
    return rc;
}

int hc_record_collection(const hc_sgf_collection *c, hc_record_fn fn, void *user, hc_err *err)
{
    long index = 0;
    for (size_t i = 0; i < c->n_games; i++)
        if (hc_record_game(c, &c->games[i], &index, fn, user, err) != 0)
            return -1;
    return 0;
}

static int write_one(const hc_position *p, const hc_history *h, void *user, hc_err *err)
{
    (void)h;
    return hc_poswriter_write((hc_poswriter *)user, p, err);
}

int hc_record_file(const char *sgf_path, const char *out_path, long *n_out, hc_err *err)
{
    hc_sgf_collection *c = hc_sgf_load(sgf_path, err);
    if (!c)
        return -1;
    hc_poswriter *w = hc_poswriter_open(out_path, err);
    if (!w) {
        hc_sgf_free(c);
        return -1;
    }
    long index = 0;
    for (size_t i = 0; i < c->n_games; i++)
        if (hc_record_game(c, &c->games[i], &index, write_one, w, err) != 0) {
            hc_poswriter_abort(w);
            hc_sgf_free(c);
            return -1;
        }
    hc_sgf_free(c);
    if (hc_poswriter_commit(w, err) != 0)
        return -1;
    if (n_out)
        *n_out = index;
    return 0;
}
