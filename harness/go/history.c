/* KataGo's BoardHistory in C (game/boardhistory.cpp), one update at a time in the same order. */
#include "harness/go/history.h"

#include <stdlib.h>
#include <string.h>

static const hc_hash128 RULE_KO_HASH[4] = {
    {0x3cc7e0bf846820f6ULL, 0x1fb7fbde5fc6ba4eULL},
    {0xcc18f5d47188554aULL, 0x3a63152c23e4128dULL},
    {0x3bc55e42b23b35bfULL, 0xc75fa1e615621dcdULL},
    {0x5b2096e48241d21bULL, 0x23cc18d4e85cd67fULL},
};
static const hc_hash128 RULE_SCORING_HASH[2] = {
    {0x8b3ed7598f901494ULL ^ 0x72eeccc72c82a5e7ULL, 0x1dfd47ac77bce5f8ULL ^ 0x0d1265e413623e2bULL},
    {0x381345dc357ec982ULL ^ 0x125bfe48a41042d5ULL, 0x03ba55c026026b56ULL ^ 0x061866b5f2b98a79ULL},
};
static const hc_hash128 RULE_TAX_HASH[3] = {
    {0x72eeccc72c82a5e7ULL, 0x0d1265e413623e2bULL},
    {0x125bfe48a41042d5ULL, 0x061866b5f2b98a79ULL},
    {0xa384ece9d8ee713cULL, 0xfdc9f3b5d1f3732bULL},
};
static const hc_hash128 RULE_MULTI_STONE_SUICIDE_HASH = {0xf9b475b3bbf35e37ULL, 0xefa19d8b1e5b3e5aULL};
static const hc_hash128 RULE_BUTTON_HASH = {0xb8b914c9234ece84ULL, 0x3d759cddebe29c14ULL};
static const hc_hash128 RULE_FRIENDLY_PASS_OK_HASH = {0x0113655998ef0a25ULL, 0x99c9d04ecd964874ULL};
static const hc_hash128 RULE_PASS_ALIVE_UNDER_SUICIDE_HASH = {0x3094018861134017ULL, 0x706330a293e266aaULL};

typedef struct hash_vec {
    hc_hash128 *v;
    size_t n, cap;
} hash_vec;

typedef struct encore_ko_capture {
    hc_hash128 pos_hash_before;
    hc_loc loc;
    int pla;
} encore_ko_capture;

struct hc_history {
    hc_rules rules;
    hc_loc *move_locs;
    int8_t *move_plas;
    size_t n_moves, cap_moves;
    hash_vec ko_hashes;
    size_t first_turn_idx_with_ko_history;
    hc_board initial_board;
    int initial_pla;
    int initial_encore_phase;
    int64_t initial_turn_number;
    bool assume_handicap;
    bool white_has_moved;
    int override_num_handicap;
    bool always_pass_alive;
    hc_board recent[HC_HISTORY_RECENT_BOARDS];
    int cur_recent;
    int presumed_next_pla;
    bool was_ever_occupied[HC_BOARD_ARR];
    bool super_ko_banned[HC_BOARD_ARR];
    int consecutive_ending_passes;
    hash_vec before_black_pass, before_white_pass;
    int encore_phase;
    int num_turns_this_phase;
    int num_approx_valid_turns_this_phase;
    int num_consec_valid_turns_this_game;
    bool ko_recap_blocked[HC_BOARD_ARR];
    hc_hash128 ko_recap_block_hash;
    encore_ko_capture *ekc;
    size_t n_ekc, cap_ekc;
    int8_t second_encore_start[HC_BOARD_ARR];
    float white_bonus_score;
    float white_handicap_bonus_score;
    bool has_button;
    bool is_past_normal_phase_end;
    bool is_game_finished;
    int winner;
    float final_white_minus_black;
    bool is_scored, is_no_result, is_resignation;
    hc_board board; /* the current board (KataGo keeps it outside the history) */
};

/* realloc for the history's growing arrays; on failure the old array stays (and is freed with h). */
static void *grow(void *p, size_t bytes, hc_err *err)
{
    void *q = realloc(p, bytes);
    if (!q)
        hc_err_set(err, HC_ENOMEM, "out of memory growing a board history");
    return q;
}

static int hash_vec_reserve(hash_vec *v, size_t extra, hc_err *err)
{
    if (v->n + extra <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap * 2 : 64;
    while (cap < v->n + extra)
        cap *= 2;
    hc_hash128 *nv = grow(v->v, cap * sizeof *nv, err);
    if (!nv)
        return -1;
    v->v = nv;
    v->cap = cap;
    return 0;
}

static int reserve_for_move(hc_history *h, hc_err *err)
{
    if (h->n_moves + 1 > h->cap_moves) {
        size_t cap = h->cap_moves ? h->cap_moves * 2 : 256;
        hc_loc *l = grow(h->move_locs, cap * sizeof *l, err);
        if (!l)
            return -1;
        h->move_locs = l;
        int8_t *p = grow(h->move_plas, cap, err);
        if (!p)
            return -1;
        h->move_plas = p;
        h->cap_moves = cap;
    }
    if (h->n_ekc + 1 > h->cap_ekc) {
        size_t cap = h->cap_ekc ? h->cap_ekc * 2 : 16;
        encore_ko_capture *e = grow(h->ekc, cap * sizeof *e, err);
        if (!e)
            return -1;
        h->ekc = e;
        h->cap_ekc = cap;
    }
    if (hash_vec_reserve(&h->ko_hashes, 2, err) || hash_vec_reserve(&h->before_black_pass, 1, err) ||
        hash_vec_reserve(&h->before_white_pass, 1, err))
        return -1;
    return 0;
}

static hc_hash128 ko_hash(const hc_rules *r, const hc_board *b, int pla, int encore, hc_hash128 recap)
{
    hc_hash128 h = hc_hash_xor(b->pos_hash, recap);
    if (r->ko_rule == HC_KO_SITUATIONAL || r->ko_rule == HC_KO_SIMPLE || encore > 0)
        h = hc_hash_xor(h, hc_zobrist_get()->player[pla]);
    return h;
}

static hc_hash128 ko_hash_after_move_non_encore(const hc_rules *r, hc_hash128 pos_after, int pla)
{
    if (r->ko_rule == HC_KO_SITUATIONAL || r->ko_rule == HC_KO_SIMPLE)
        return hc_hash_xor(pos_after, hc_zobrist_get()->player[pla]);
    return pos_after;
}

static int handicap_stones_helper(const hc_board *b, int black_turns)
{
    int nb = 0, nw = 0;
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            int c = b->colors[hc_loc_of(x, y, b->x_size)];
            if (c == HC_C_BLACK)
                nb++;
            else if (c == HC_C_WHITE)
                nw++;
        }
    if (nw != 0)
        return 0;
    int adv = nb + black_turns;
    return adv <= 1 ? 0 : adv;
}

static int compute_num_handicap(const hc_history *h)
{
    if (h->override_num_handicap >= 0)
        return h->override_num_handicap;
    int black_turns = 0;
    if (h->assume_handicap) {
        for (size_t i = 0; i < h->n_moves; i++) {
            hc_loc loc = h->move_locs[i];
            int pla = h->move_plas[i];
            if (pla != HC_C_BLACK) {
                if (i + 1 < h->n_moves && h->move_plas[i + 1] != HC_C_BLACK) {
                    black_turns = 0;
                    break;
                }
                if (loc == HC_PASS_LOC)
                    continue;
                break;
            }
            if (loc != HC_PASS_LOC && loc != HC_NULL_LOC)
                black_turns++;
        }
    }
    return handicap_stones_helper(&h->initial_board, black_turns);
}

static int compute_white_handicap_bonus(const hc_history *h)
{
    if (h->rules.white_handicap_bonus_rule == HC_WHB_ZERO)
        return 0;
    int n = compute_num_handicap(h);
    if (h->rules.white_handicap_bonus_rule == HC_WHB_N)
        return n;
    return n > 1 ? n - 1 : 0;
}

static int history_clear(hc_history *h, const hc_board *board, int pla, const hc_rules *rules, int encore, hc_err *err)
{
    if (pla != HC_C_BLACK && pla != HC_C_WHITE)
        return hc_err_set(err, HC_EFORMAT, "player to move must be black or white, got %d", pla);
    if (encore < 0 || encore > 2)
        return hc_err_set(err, HC_EFORMAT, "encore phase %d outside 0..2", encore);
    if (encore > 0 && rules->scoring_rule != HC_SCORING_TERRITORY)
        return hc_err_set(err, HC_EFORMAT, "encore phase %d needs territory scoring", encore);
    if (hash_vec_reserve(&h->ko_hashes, 1, err))
        return -1;
    h->rules = *rules;
    h->n_moves = 0;
    h->ko_hashes.n = 0;
    h->first_turn_idx_with_ko_history = 0;
    h->initial_board = *board;
    h->initial_pla = pla;
    h->initial_encore_phase = encore;
    h->initial_turn_number = 0;
    h->assume_handicap = false;
    h->white_has_moved = false;
    h->override_num_handicap = -1;
    for (int i = 0; i < HC_HISTORY_RECENT_BOARDS; i++)
        h->recent[i] = *board;
    h->cur_recent = 0;
    h->presumed_next_pla = pla;
    for (int y = 0; y < board->y_size; y++)
        for (int x = 0; x < board->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, board->x_size);
            h->was_ever_occupied[loc] = board->colors[loc] != HC_C_EMPTY;
        }
    memset(h->super_ko_banned, 0, sizeof h->super_ko_banned);
    h->consecutive_ending_passes = 0;
    h->before_black_pass.n = 0;
    h->before_white_pass.n = 0;
    h->num_turns_this_phase = 0;
    h->num_approx_valid_turns_this_phase = 0;
    h->num_consec_valid_turns_this_game = 0;
    memset(h->ko_recap_blocked, 0, sizeof h->ko_recap_blocked);
    h->ko_recap_block_hash = (hc_hash128){0, 0};
    h->n_ekc = 0;
    h->white_bonus_score = 0.0f;
    h->white_handicap_bonus_score = 0.0f;
    /* KataGo reads the encore phase here before assigning the new one */
    h->has_button = rules->has_button && h->encore_phase == 0;
    h->is_past_normal_phase_end = false;
    h->is_game_finished = false;
    h->winner = HC_C_EMPTY;
    h->final_white_minus_black = 0.0f;
    h->is_scored = h->is_no_result = h->is_resignation = false;
    h->encore_phase = encore;
    if (encore == 2)
        memcpy(h->second_encore_start, board->colors, sizeof h->second_encore_start);
    else
        memset(h->second_encore_start, HC_C_EMPTY, sizeof h->second_encore_start);
    h->ko_hashes.v[h->ko_hashes.n++] = ko_hash(&h->rules, board, pla, encore, h->ko_recap_block_hash);
    if (rules->scoring_rule == HC_SCORING_TERRITORY) {
        for (int y = 0; y < board->y_size; y++)
            for (int x = 0; x < board->x_size; x++) {
                int c = board->colors[hc_loc_of(x, y, board->x_size)];
                if (c == HC_C_BLACK)
                    h->white_bonus_score += 1.0f;
                else if (c == HC_C_WHITE)
                    h->white_bonus_score -= 1.0f;
            }
        int net_white_captures = board->num_white_captures - board->num_black_captures;
        h->white_bonus_score -= (float)net_white_captures;
    }
    h->white_handicap_bonus_score = (float)compute_white_handicap_bonus(h);
    h->board = *board;
    return 0;
}

hc_history *hc_history_new(const hc_board *board, int pla, const hc_rules *rules, int encore_phase,
                           bool always_pass_alive_under_suicide, hc_err *err)
{
    hc_history *h = hc_calloc(1, sizeof *h, err, "board history");
    if (!h)
        return NULL;
    h->always_pass_alive = always_pass_alive_under_suicide;
    h->winner = HC_C_EMPTY;
    if (history_clear(h, board, pla, rules, encore_phase, err)) {
        hc_history_free(h);
        return NULL;
    }
    return h;
}

void hc_history_free(hc_history *h)
{
    if (!h)
        return;
    free(h->move_locs);
    free(h->move_plas);
    free(h->ko_hashes.v);
    free(h->before_black_pass.v);
    free(h->before_white_pass.v);
    free(h->ekc);
    free(h);
}

static int copy_hash_vec(hash_vec *dst, const hash_vec *src, hc_err *err)
{
    dst->v = NULL;
    dst->n = dst->cap = 0;
    if (hash_vec_reserve(dst, src->n ? src->n : 1, err))
        return -1;
    if (src->n) /* memcpy from a NULL source is undefined even for 0 bytes */
        memcpy(dst->v, src->v, src->n * sizeof *src->v);
    dst->n = src->n;
    return 0;
}

hc_history *hc_history_copy(const hc_history *h, hc_err *err)
{
    hc_history *c = hc_malloc(sizeof *c, err, "board history");
    if (!c)
        return NULL;
    *c = *h;
    c->move_locs = NULL;
    c->move_plas = NULL;
    c->ekc = NULL;
    c->ko_hashes.v = c->before_black_pass.v = c->before_white_pass.v = NULL;
    c->cap_moves = c->cap_ekc = 0;
    size_t cm = h->n_moves ? h->n_moves : 1;
    c->move_locs = malloc(cm * sizeof *c->move_locs);
    c->move_plas = malloc(cm);
    c->ekc = malloc((h->n_ekc ? h->n_ekc : 1) * sizeof *c->ekc);
    if (!c->move_locs || !c->move_plas || !c->ekc || copy_hash_vec(&c->ko_hashes, &h->ko_hashes, err) ||
        copy_hash_vec(&c->before_black_pass, &h->before_black_pass, err) ||
        copy_hash_vec(&c->before_white_pass, &h->before_white_pass, err)) {
        hc_history_free(c);
        hc_err_set(err, HC_ENOMEM, "out of memory copying a board history");
        return NULL;
    }
    c->cap_moves = cm;
    c->cap_ekc = h->n_ekc ? h->n_ekc : 1;
    if (h->n_moves) {
        memcpy(c->move_locs, h->move_locs, h->n_moves * sizeof *c->move_locs);
        memcpy(c->move_plas, h->move_plas, h->n_moves);
    }
    if (h->n_ekc)
        memcpy(c->ekc, h->ekc, h->n_ekc * sizeof *c->ekc);
    return c;
}

int hc_history_reset(hc_history *h, const hc_board *board, int pla, int encore_phase, hc_err *err)
{
    hc_rules r = h->rules;
    return history_clear(h, board, pla, &r, encore_phase, err);
}

void hc_history_set_initial_turn_number(hc_history *h, int64_t n) { h->initial_turn_number = n; }

void hc_history_set_assume_multiple_starting_black_moves_are_handicap(hc_history *h, bool b)
{
    h->assume_handicap = b;
    h->white_handicap_bonus_score = (float)compute_white_handicap_bonus(h);
}

/* ---- accessors -------------------------------------------------------------------------------- */

const hc_board *hc_history_board(const hc_history *h) { return &h->board; }
const hc_board *hc_history_recent_board(const hc_history *h, int ago)
{
    if (ago < 0)
        ago = 0;
    if (ago >= HC_HISTORY_RECENT_BOARDS)
        ago = HC_HISTORY_RECENT_BOARDS - 1;
    return &h->recent[(h->cur_recent - ago + HC_HISTORY_RECENT_BOARDS) % HC_HISTORY_RECENT_BOARDS];
}
const hc_board *hc_history_initial_board(const hc_history *h) { return &h->initial_board; }
const hc_rules *hc_history_rules(const hc_history *h) { return &h->rules; }
int hc_history_x_size(const hc_history *h) { return h->board.x_size; }
int hc_history_y_size(const hc_history *h) { return h->board.y_size; }
int hc_history_next_pla(const hc_history *h) { return h->presumed_next_pla; }
int hc_history_initial_pla(const hc_history *h) { return h->initial_pla; }
int hc_history_initial_encore_phase(const hc_history *h) { return h->initial_encore_phase; }
int64_t hc_history_initial_turn_number(const hc_history *h) { return h->initial_turn_number; }
bool hc_history_assume_handicap(const hc_history *h) { return h->assume_handicap; }
int hc_history_encore_phase(const hc_history *h) { return h->encore_phase; }
float hc_history_white_handicap_bonus_score(const hc_history *h) { return h->white_handicap_bonus_score; }
float hc_history_white_bonus_score(const hc_history *h) { return h->white_bonus_score; }
bool hc_history_has_button(const hc_history *h) { return h->has_button; }
bool hc_history_is_game_finished(const hc_history *h) { return h->is_game_finished; }
bool hc_history_is_past_normal_phase_end(const hc_history *h) { return h->is_past_normal_phase_end; }
float hc_history_final_white_minus_black(const hc_history *h) { return h->final_white_minus_black; }
int hc_history_winner(const hc_history *h) { return h->winner; }
bool hc_history_is_no_result(const hc_history *h) { return h->is_no_result; }
int hc_history_num_moves(const hc_history *h) { return (int)h->n_moves; }
int hc_history_num_approx_valid_turns_this_phase(const hc_history *h) { return h->num_approx_valid_turns_this_phase; }
int hc_history_num_consec_valid_turns_this_game(const hc_history *h) { return h->num_consec_valid_turns_this_game; }
bool hc_history_always_pass_alive_under_suicide(const hc_history *h) { return h->always_pass_alive; }
const bool *hc_history_super_ko_banned_map(const hc_history *h) { return h->super_ko_banned; }
const bool *hc_history_ko_recap_blocked_map(const hc_history *h) { return h->ko_recap_blocked; }
const int8_t *hc_history_second_encore_start_map(const hc_history *h) { return h->second_encore_start; }

hc_move hc_history_move(const hc_history *h, int i)
{
    hc_move m = {0, -1, -1};
    if (i < 0 || (size_t)i >= h->n_moves)
        return m;
    m.pla = h->move_plas[i];
    hc_loc loc = h->move_locs[i];
    if (loc != HC_PASS_LOC && loc != HC_NULL_LOC) {
        m.x = hc_loc_x(loc, h->board.x_size);
        m.y = hc_loc_y(loc, h->board.x_size);
    }
    return m;
}

void hc_history_move_loc(const hc_history *h, int i, hc_loc *loc, int *pla)
{
    *loc = h->move_locs[i];
    *pla = h->move_plas[i];
}

static bool xy_ok(const hc_history *h, int x, int y)
{
    return x >= 0 && y >= 0 && x < h->board.x_size && y < h->board.y_size;
}

bool hc_history_super_ko_banned(const hc_history *h, int x, int y)
{
    return xy_ok(h, x, y) && h->super_ko_banned[hc_loc_of(x, y, h->board.x_size)];
}
bool hc_history_ko_recap_blocked(const hc_history *h, int x, int y)
{
    return xy_ok(h, x, y) && h->ko_recap_blocked[hc_loc_of(x, y, h->board.x_size)];
}
int hc_history_second_encore_start_color(const hc_history *h, int x, int y)
{
    return xy_ok(h, x, y) ? h->second_encore_start[hc_loc_of(x, y, h->board.x_size)] : HC_C_EMPTY;
}

/* (x, y) to a location: pass for (-1, -1), HC_NULL_LOC for anything off the board. */
static hc_loc to_loc(const hc_history *h, int x, int y)
{
    if (x == -1 && y == -1)
        return HC_PASS_LOC;
    if (!xy_ok(h, x, y))
        return HC_NULL_LOC;
    return hc_loc_of(x, y, h->board.x_size);
}

/* ---- rules ------------------------------------------------------------------------------------ */

static bool is_legal_loc(const hc_history *h, const hc_board *b, hc_loc loc, int pla)
{
    if (pla != h->presumed_next_pla)
        return false;
    if (h->encore_phase > 0) {
        if (loc >= 0 && loc < HC_BOARD_ARR && loc != HC_PASS_LOC) {
            if (b->colors[loc] == hc_opp(pla) && h->ko_recap_blocked[loc] && hc_board_chain_size(b, loc) == 1 &&
                hc_board_liberties(b, loc) == 1)
                return true;
            hc_loc kc = hc_board_ko_capture_loc(b, loc, pla);
            if (kc != HC_NULL_LOC && h->ko_recap_blocked[kc] && b->colors[kc] == hc_opp(pla))
                return true;
        }
    } else if (hc_board_is_ko_banned(b, loc)) {
        return false;
    }
    if (!hc_board_is_legal_ignoring_ko(b, loc, pla, h->rules.multi_stone_suicide_legal))
        return false;
    if (h->super_ko_banned[loc])
        return false;
    return true;
}

static bool is_pass_for_ko(const hc_history *h, const hc_board *b, hc_loc loc, int pla)
{
    if (h->encore_phase > 0 && loc >= 0 && loc < HC_BOARD_ARR && loc != HC_PASS_LOC) {
        if (b->colors[loc] == hc_opp(pla) && h->ko_recap_blocked[loc] && hc_board_chain_size(b, loc) == 1 &&
            hc_board_liberties(b, loc) == 1)
            return true;
        hc_loc kc = hc_board_ko_capture_loc(b, loc, pla);
        if (kc != HC_NULL_LOC && h->ko_recap_blocked[kc] && b->colors[kc] == hc_opp(pla))
            return true;
    }
    return false;
}

static bool is_legal_tolerant_loc(const hc_history *h, hc_loc loc, int pla)
{
    if (pla != HC_C_BLACK && pla != HC_C_WHITE)
        return false;
    return is_pass_for_ko(h, &h->board, loc, pla) || hc_board_is_legal_ignoring_ko(&h->board, loc, pla, true);
}

bool hc_history_is_legal(const hc_history *h, int x, int y, int pla)
{
    return is_legal_loc(h, &h->board, to_loc(h, x, y), pla);
}

bool hc_history_is_legal_tolerant(const hc_history *h, int x, int y, int pla)
{
    return is_legal_tolerant_loc(h, to_loc(h, x, y), pla);
}

void hc_history_legal_map(const hc_history *h, int nn_x, int nn_y, unsigned char *legal)
{
    int pla = h->presumed_next_pla;
    for (int y = 0; y < nn_y; y++)
        for (int x = 0; x < nn_x; x++) {
            hc_loc loc = (x < h->board.x_size && y < h->board.y_size) ? hc_loc_of(x, y, h->board.x_size) : HC_NULL_LOC;
            legal[y * nn_x + x] = is_legal_loc(h, &h->board, loc, pla) ? 1 : 0;
        }
    legal[nn_x * nn_y] = is_legal_loc(h, &h->board, HC_PASS_LOC, pla) ? 1 : 0;
}

static int new_consecutive_ending_passes_after_pass(const hc_history *h)
{
    int n = h->consecutive_ending_passes;
    if (h->encore_phase > 0)
        return n + 1;
    if (h->rules.ko_rule == HC_KO_SPIGHT)
        return 0;
    return n + 1;
}

static bool phase_has_spightlike_ending(const hc_history *h)
{
    return h->encore_phase > 0 || h->rules.ko_rule == HC_KO_SIMPLE || h->rules.ko_rule == HC_KO_SPIGHT;
}

static bool hash_vec_contains(const hash_vec *v, hc_hash128 x)
{
    for (size_t i = 0; i < v->n; i++)
        if (hc_hash_eq(v->v[i], x))
            return true;
    return false;
}

static bool would_be_spightlike_ending_pass(const hc_history *h, int pla, hc_hash128 before)
{
    if (phase_has_spightlike_ending(h)) {
        if (pla == HC_C_BLACK && hash_vec_contains(&h->before_black_pass, before))
            return true;
        if (pla == HC_C_WHITE && hash_vec_contains(&h->before_white_pass, before))
            return true;
    }
    return false;
}

bool hc_history_pass_would_end_phase(const hc_history *h, int pla)
{
    hc_hash128 before = ko_hash(&h->rules, &h->board, pla, h->encore_phase, h->ko_recap_block_hash);
    return new_consecutive_ending_passes_after_pass(h) >= 2 || would_be_spightlike_ending_pass(h, pla, before);
}

bool hc_history_pass_would_end_game(const hc_history *h, int pla)
{
    return hc_history_pass_would_end_phase(h, pla) &&
           (h->rules.scoring_rule == HC_SCORING_AREA ||
            (h->rules.scoring_rule == HC_SCORING_TERRITORY && h->encore_phase >= 2));
}

bool hc_history_should_suppress_end_game_from_friendly_pass(const hc_history *h, int pla)
{
    return h->rules.friendly_pass_ok && h->rules.scoring_rule == HC_SCORING_AREA &&
           new_consecutive_ending_passes_after_pass(h) == 2 &&
           !would_be_spightlike_ending_pass(h, pla, ko_hash(&h->rules, &h->board, pla, h->encore_phase, h->ko_recap_block_hash));
}

static float white_komi_adjustment_for_draws(const hc_history *h, double draw_equiv)
{
    return hc_rules_result_is_integer(&h->rules) ? (float)(draw_equiv - 0.5) : 0.0f;
}

float hc_history_current_self_komi(const hc_history *h, int pla, double draw_equiv)
{
    float w = h->white_bonus_score + h->white_handicap_bonus_score + h->rules.komi + white_komi_adjustment_for_draws(h, draw_equiv);
    return pla == HC_C_WHITE ? w : -w;
}

bool hc_history_suicide_legal_for_pass_alive(const hc_history *h)
{
    return h->rules.multi_stone_suicide_legal || h->always_pass_alive;
}

/* ---- scoring ---------------------------------------------------------------------------------- */

static int count_area_score(const hc_history *h, const hc_board *b, int8_t *area)
{
    int score = 0;
    if (h->rules.tax_rule == HC_TAX_NONE) {
        hc_board_calculate_area(b, area, true, true, true, hc_history_suicide_legal_for_pass_alive(h));
    } else {
        int cnt = 0;
        hc_board_calculate_independent_life_area(b, area, &cnt, false, true, hc_history_suicide_legal_for_pass_alive(h));
        if (h->rules.tax_rule == HC_TAX_ALL)
            score -= 2 * cnt;
    }
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            int a = area[hc_loc_of(x, y, b->x_size)];
            if (a == HC_C_WHITE)
                score += 1;
            else if (a == HC_C_BLACK)
                score -= 1;
        }
    return score;
}

static int count_territory_score(const hc_history *h, const hc_board *b, int8_t *area)
{
    int score = 0;
    bool keep_territories = h->rules.tax_rule == HC_TAX_NONE;
    int cnt = 0;
    hc_board_calculate_independent_life_area(b, area, &cnt, keep_territories, false, hc_history_suicide_legal_for_pass_alive(h));
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, b->x_size);
            if (area[loc] == HC_C_WHITE)
                score += 1;
            else if (area[loc] == HC_C_BLACK)
                score -= 1;
            else {
                if (b->colors[loc] == HC_C_WHITE && (h->encore_phase < 2 || h->second_encore_start[loc] == HC_C_WHITE)) {
                    score += 1;
                    area[loc] = HC_C_WHITE;
                }
                if (b->colors[loc] == HC_C_BLACK && (h->encore_phase < 2 || h->second_encore_start[loc] == HC_C_BLACK)) {
                    score -= 1;
                    area[loc] = HC_C_BLACK;
                }
            }
        }
    if (h->rules.tax_rule == HC_TAX_ALL)
        score -= 2 * cnt;
    return score;
}

static void set_final_score(hc_history *h, float score)
{
    h->final_white_minus_black = score;
    h->winner = score > 0.0f ? HC_C_WHITE : score < 0.0f ? HC_C_BLACK : HC_C_EMPTY;
}

static void end_and_score_game_now(hc_history *h, const hc_board *b)
{
    int8_t area[HC_BOARD_ARR];
    int board_score = h->rules.scoring_rule == HC_SCORING_AREA ? count_area_score(h, b, area) : count_territory_score(h, b, area);
    if (h->has_button) {
        h->has_button = false;
        h->white_bonus_score += (h->presumed_next_pla == HC_C_WHITE ? 0.5f : -0.5f);
    }
    set_final_score(h, board_score + h->white_bonus_score + h->white_handicap_bonus_score + h->rules.komi);
    h->is_scored = true;
    h->is_no_result = false;
    h->is_resignation = false;
    h->is_game_finished = true;
    h->is_past_normal_phase_end = false;
}

static void set_ko_recap_blocked(hc_history *h, hc_loc loc, bool v)
{
    if (h->ko_recap_blocked[loc] != v) {
        const hc_zobrist *z = hc_zobrist_get();
        h->ko_recap_blocked[loc] = v;
        h->ko_recap_block_hash =
            hc_hash_xor(h->ko_recap_block_hash, hc_hash_xor(z->ko_mark[loc][HC_C_BLACK], z->ko_mark[loc][HC_C_WHITE]));
    }
}

static int count_ko_hash_occurrences(const hc_history *h, hc_hash128 x)
{
    int n = 0;
    for (size_t i = 0; i < h->ko_hashes.n; i++)
        if (hc_hash_eq(h->ko_hashes.v[i], x))
            n++;
    return n;
}

/* A point with an empty neighbour is never suicide: the cheap test in front of isSuicide. */
static inline bool has_empty_neighbor(const hc_board *b, hc_loc l)
{
    const int8_t *c = b->colors;
    return c[l + b->adj[0]] == HC_C_EMPTY || c[l + b->adj[1]] == HC_C_EMPTY || c[l + b->adj[2]] == HC_C_EMPTY ||
           c[l + b->adj[3]] == HC_C_EMPTY;
}

/* makeBoardMoveAssumeLegal (no root ko table; preventEncore false). Space is reserved beforehand. */
static void make_move_assume_legal(hc_history *h, hc_loc loc, int pla)
{
    hc_board *b = &h->board;
    const hc_zobrist *z = hc_zobrist_get();
    hc_hash128 pos_before = b->pos_hash;
    if (h->is_game_finished || h->is_past_normal_phase_end) {
        if (h->num_approx_valid_turns_this_phase > 1)
            h->num_approx_valid_turns_this_phase = 1;
        if (h->num_consec_valid_turns_this_game > 1)
            h->num_consec_valid_turns_this_game = 1;
    }
    bool illegal = !is_legal_loc(h, b, loc, pla);
    h->is_game_finished = false;
    h->is_past_normal_phase_end = false;
    h->winner = HC_C_EMPTY;
    h->final_white_minus_black = 0.0f;
    h->is_scored = h->is_no_result = h->is_resignation = false;

    bool spight_end = false;
    if (loc != HC_PASS_LOC)
        h->consecutive_ending_passes = 0;
    else if (h->has_button) {
        h->has_button = false;
        h->white_bonus_score += (pla == HC_C_WHITE ? 0.5f : -0.5f);
        h->consecutive_ending_passes = 0;
        h->before_black_pass.n = 0;
        h->before_white_pass.n = 0;
        h->ko_hashes.n = 0;
        h->first_turn_idx_with_ko_history = h->n_moves + 1;
    } else {
        if (phase_has_spightlike_ending(h)) {
            h->ko_hashes.n = 0;
            h->first_turn_idx_with_ko_history = h->n_moves + 1;
        }
        hc_hash128 before = ko_hash(&h->rules, b, pla, h->encore_phase, h->ko_recap_block_hash);
        h->consecutive_ending_passes = new_consecutive_ending_passes_after_pass(h);
        spight_end = would_be_spightlike_ending_pass(h, pla, before);
        if (pla == HC_C_BLACK)
            h->before_black_pass.v[h->before_black_pass.n++] = before;
        else
            h->before_white_pass.v[h->before_white_pass.n++] = before;
    }

    bool was_pass_for_ko = false;
    if (h->encore_phase > 0 && loc != HC_PASS_LOC) {
        if (b->colors[loc] == hc_opp(pla) && h->ko_recap_blocked[loc]) {
            set_ko_recap_blocked(h, loc, false);
            was_pass_for_ko = true;
            hc_board_clear_ko_loc(b);
        } else {
            hc_loc kc = hc_board_ko_capture_loc(b, loc, pla);
            if (kc != HC_NULL_LOC && h->ko_recap_blocked[kc] && b->colors[kc] == hc_opp(pla)) {
                set_ko_recap_blocked(h, kc, false);
                was_pass_for_ko = true;
                hc_board_clear_ko_loc(b);
            }
        }
    }
    if (!was_pass_for_ko) {
        hc_board_play_assume_legal(b, loc, pla);
        if (h->encore_phase > 0) {
            if (b->ko_loc != HC_NULL_LOC) {
                set_ko_recap_blocked(h, loc, true);
                h->ekc[h->n_ekc].pos_hash_before = pos_before;
                h->ekc[h->n_ekc].loc = loc;
                h->ekc[h->n_ekc].pla = pla;
                h->n_ekc++;
                hc_board_clear_ko_loc(b);
            }
            for (int y = 0; y < b->y_size; y++)
                for (int x = 0; x < b->x_size; x++) {
                    hc_loc l = hc_loc_of(x, y, b->x_size);
                    if (b->colors[l] == HC_C_EMPTY && h->ko_recap_blocked[l])
                        set_ko_recap_blocked(h, l, false);
                }
        }
    }

    h->cur_recent = (h->cur_recent + 1) % HC_HISTORY_RECENT_BOARDS;
    h->recent[h->cur_recent] = *b;
    h->ko_hashes.v[h->ko_hashes.n++] = ko_hash(&h->rules, b, hc_opp(pla), h->encore_phase, h->ko_recap_block_hash);
    h->move_locs[h->n_moves] = loc;
    h->move_plas[h->n_moves] = (int8_t)pla;
    h->n_moves++;
    h->num_turns_this_phase++;
    h->num_approx_valid_turns_this_phase++;
    h->num_consec_valid_turns_this_game++;
    h->presumed_next_pla = hc_opp(pla);
    if (illegal)
        h->num_consec_valid_turns_this_game = 0;
    if (loc != HC_PASS_LOC)
        h->was_ever_occupied[loc] = true;

    int next = hc_opp(pla);
    if (h->encore_phase <= 0 && h->rules.ko_rule != HC_KO_SIMPLE) {
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc l = hc_loc_of(x, y, b->x_size);
                if (b->colors[l] != HC_C_EMPTY)
                    h->super_ko_banned[l] = false;
                else if (!h->was_ever_occupied[l] && (has_empty_neighbor(b, l) || !hc_board_is_suicide(b, l, next)))
                    h->super_ko_banned[l] = false;
                else if (hc_board_is_illegal_suicide(b, l, next, h->rules.multi_stone_suicide_legal) || l == b->ko_loc)
                    h->super_ko_banned[l] = false;
                else {
                    hc_hash128 after = hc_board_pos_hash_after_move(b, l, next);
                    hc_hash128 kh = ko_hash_after_move_non_encore(&h->rules, after, hc_opp(next));
                    h->super_ko_banned[l] = count_ko_hash_occurrences(h, kh) > 0;
                }
            }
    } else if (h->encore_phase > 0) {
        memset(h->super_ko_banned, 0, sizeof h->super_ko_banned);
        for (size_t i = 0; i < h->n_ekc; i++)
            if (hc_hash_eq(h->ekc[i].pos_hash_before, b->pos_hash) && h->ekc[i].pla == next)
                h->super_ko_banned[h->ekc[i].loc] = true;
    }

    if (h->rules.scoring_rule == HC_SCORING_TERRITORY && h->encore_phase <= 1 && loc != HC_PASS_LOC && !was_pass_for_ko)
        h->white_bonus_score += (pla == HC_C_BLACK ? 1.0f : -1.0f);

    if (pla == HC_C_WHITE && loc != HC_PASS_LOC)
        h->white_has_moved = true;
    if (h->assume_handicap && !h->white_has_moved && pla == HC_C_BLACK && h->rules.white_handicap_bonus_rule != HC_WHB_ZERO)
        h->white_handicap_bonus_score = (float)compute_white_handicap_bonus(h);

    if (h->consecutive_ending_passes >= 2 || spight_end) {
        if (h->rules.scoring_rule == HC_SCORING_AREA) {
            end_and_score_game_now(h, b);
        } else if (h->encore_phase >= 2) {
            end_and_score_game_now(h, b);
        } else {
            h->encore_phase += 1;
            h->num_turns_this_phase = 0;
            h->num_approx_valid_turns_this_phase = 0;
            if (h->encore_phase == 2)
                memcpy(h->second_encore_start, b->colors, sizeof h->second_encore_start);
            memset(h->super_ko_banned, 0, sizeof h->super_ko_banned);
            h->consecutive_ending_passes = 0;
            h->before_black_pass.n = 0;
            h->before_white_pass.n = 0;
            memset(h->ko_recap_blocked, 0, sizeof h->ko_recap_blocked);
            h->ko_recap_block_hash = (hc_hash128){0, 0};
            h->n_ekc = 0;
            h->ko_hashes.n = 0;
            h->ko_hashes.v[h->ko_hashes.n++] = ko_hash(&h->rules, b, hc_opp(pla), h->encore_phase, h->ko_recap_block_hash);
            h->first_turn_idx_with_ko_history = h->n_moves;
        }
    }

    if (loc != HC_PASS_LOC && (h->encore_phase > 0 || h->rules.ko_rule == HC_KO_SIMPLE)) {
        if (count_ko_hash_occurrences(h, h->ko_hashes.v[h->ko_hashes.n - 1]) >= 3) {
            h->is_no_result = true;
            h->is_game_finished = true;
        }
    }
    (void)z;
}

static int check_xy(const hc_history *h, int x, int y, int pla, hc_loc *loc, hc_err *err)
{
    if (pla != HC_C_BLACK && pla != HC_C_WHITE)
        return hc_err_set(err, HC_EFORMAT, "move player must be black or white, got %d", pla);
    *loc = to_loc(h, x, y);
    if (*loc == HC_NULL_LOC)
        return hc_err_set(err, HC_EFORMAT, "move (%d,%d) is off the %dx%d board", x, y, h->board.x_size, h->board.y_size);
    return 0;
}

int hc_history_play(hc_history *h, int x, int y, int pla, hc_err *err)
{
    hc_loc loc;
    if (check_xy(h, x, y, pla, &loc, err))
        return -1;
    if (!is_legal_loc(h, &h->board, loc, pla))
        return hc_err_set(err, HC_EFORMAT, "illegal move %s at (%d,%d)", pla == HC_C_BLACK ? "B" : "W", x, y);
    if (reserve_for_move(h, err))
        return -1;
    make_move_assume_legal(h, loc, pla);
    return 0;
}

int hc_history_play_tolerant(hc_history *h, int x, int y, int pla, hc_err *err)
{
    hc_loc loc;
    if (check_xy(h, x, y, pla, &loc, err))
        return -1;
    if (!is_legal_tolerant_loc(h, loc, pla)) {
        if (h->board.colors[loc] != HC_C_EMPTY)
            return hc_err_set(err, HC_EFORMAT, "move %s at (%d,%d) is on an occupied point", pla == HC_C_BLACK ? "B" : "W", x, y);
        return hc_err_set(err, HC_EFORMAT, "move %s at (%d,%d) is a single-stone suicide", pla == HC_C_BLACK ? "B" : "W", x, y);
    }
    if (reserve_for_move(h, err))
        return -1;
    make_move_assume_legal(h, loc, pla);
    return 0;
}

/* ---- hashes ----------------------------------------------------------------------------------- */

hc_hash128 hc_history_situation_hash_ex(const hc_history *h, int next_pla, double draw_equiv, bool always_pass_alive)
{
    const hc_zobrist *z = hc_zobrist_get();
    const hc_board *b = &h->board;
    hc_hash128 hash = hc_hash_xor(b->pos_hash, z->player[next_pla]);
    hash = hc_hash_xor(hash, z->encore[h->encore_phase]);
    if (h->encore_phase == 0) {
        if (b->ko_loc != HC_NULL_LOC)
            hash = hc_hash_xor(hash, z->ko_loc[b->ko_loc]);
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc l = hc_loc_of(x, y, b->x_size);
                if (h->super_ko_banned[l] && l != b->ko_loc)
                    hash = hc_hash_xor(hash, z->ko_loc[l]);
            }
    } else {
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc l = hc_loc_of(x, y, b->x_size);
                if (h->super_ko_banned[l])
                    hash = hc_hash_xor(hash, z->ko_loc[l]);
                if (h->ko_recap_blocked[l])
                    hash = hc_hash_xor(hash, hc_hash_xor(z->ko_mark[l][HC_C_BLACK], z->ko_mark[l][HC_C_WHITE]));
            }
        if (h->encore_phase == 2)
            for (int y = 0; y < b->y_size; y++)
                for (int x = 0; x < b->x_size; x++) {
                    hc_loc l = hc_loc_of(x, y, b->x_size);
                    int c = h->second_encore_start[l];
                    if (c != HC_C_EMPTY)
                        hash = hc_hash_xor(hash, z->second_encore_start[l][c]);
                }
    }
    float self_komi = hc_history_current_self_komi(h, next_pla, draw_equiv);
    int64_t komi_disc = (int64_t)(self_komi * 256.0f);
    uint64_t kx = (uint64_t)komi_disc;
    kx ^= kx >> 33;
    kx *= 0xff51afd7ed558ccdULL;
    kx ^= kx >> 33;
    kx *= 0xc4ceb9fe1a85ec53ULL;
    kx ^= kx >> 33;
    hash.hash0 ^= kx;
    hash.hash1 ^= 2862933555777941757ULL * kx + 3037000493ULL;
    hash = hc_hash_xor(hash, RULE_KO_HASH[h->rules.ko_rule]);
    hash = hc_hash_xor(hash, RULE_SCORING_HASH[h->rules.scoring_rule]);
    hash = hc_hash_xor(hash, RULE_TAX_HASH[h->rules.tax_rule]);
    if (h->rules.multi_stone_suicide_legal)
        hash = hc_hash_xor(hash, RULE_MULTI_STONE_SUICIDE_HASH);
    if (h->has_button)
        hash = hc_hash_xor(hash, RULE_BUTTON_HASH);
    if (h->rules.friendly_pass_ok)
        hash = hc_hash_xor(hash, RULE_FRIENDLY_PASS_OK_HASH);
    if (always_pass_alive && !h->rules.multi_stone_suicide_legal)
        hash = hc_hash_xor(hash, RULE_PASS_ALIVE_UNDER_SUICIDE_HASH);
    return hash;
}

hc_hash128 hc_history_situation_hash(const hc_history *h, int next_pla, double draw_equiv)
{
    return hc_history_situation_hash_ex(h, next_pla, draw_equiv, h->always_pass_alive);
}
