/* KataGo's Board (game/board.cpp) in C: stones on a board of at most 19x19, chains as circular
 * linked lists with liberty counts, captures, suicide, simple ko, Zobrist position hashes, and the
 * tactical and area computations the input features use (ladders, Benson pass-alive area,
 * independent-life area). The data layout and every update mirror KataGo's so that order-dependent
 * results (ladder search under its node budget) come out the same.
 *
 * hc_board is a plain value: copy it with '=' or memcpy. Its fields are public for the history and
 * feature modules; other code should treat them as read-only and use the functions. */
#ifndef HC_BOARD_H
#define HC_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/base/err.h"
#include "harness/base/sizes.h"

enum {
    HC_BOARD_MAX_LEN = HC_MAX_BOARD_LEN, /* the supported range: sizes.h */
    HC_BOARD_MAX_PLAY = HC_BOARD_MAX_LEN * HC_BOARD_MAX_LEN,
    HC_BOARD_ARR = (HC_BOARD_MAX_LEN + 1) * (HC_BOARD_MAX_LEN + 2) + 1 /* KataGo's MAX_ARR_SIZE */
};

/* Colors and players as KataGo numbers them (HC_BLACK/HC_WHITE also in positions.h). */
enum { HC_C_EMPTY = 0, HC_C_BLACK = 1, HC_C_WHITE = 2, HC_C_WALL = 3 };

/* A location: (x+1) + (y+1)*(x_size+1); 0 is "no location", 1 is pass. */
typedef int16_t hc_loc;
enum { HC_NULL_LOC = 0, HC_PASS_LOC = 1 };

typedef struct hc_hash128 {
    uint64_t hash0, hash1;
} hc_hash128;

static inline hc_hash128 hc_hash_xor(hc_hash128 a, hc_hash128 b)
{
    hc_hash128 r = {a.hash0 ^ b.hash0, a.hash1 ^ b.hash1};
    return r;
}
static inline bool hc_hash_eq(hc_hash128 a, hc_hash128 b)
{
    return a.hash0 == b.hash0 && a.hash1 == b.hash1;
}

/* KataGo's Zobrist tables, generated once (thread-safe) from KataGo's seeded generator. */
typedef struct hc_zobrist {
    hc_hash128 size_x[HC_BOARD_MAX_LEN + 1];
    hc_hash128 size_y[HC_BOARD_MAX_LEN + 1];
    hc_hash128 board[HC_BOARD_ARR][4];
    hc_hash128 board2[HC_BOARD_ARR][4];
    hc_hash128 player[4];
    hc_hash128 ko_loc[HC_BOARD_ARR];
    hc_hash128 ko_mark[HC_BOARD_ARR][4];
    hc_hash128 encore[3];
    hc_hash128 second_encore_start[HC_BOARD_ARR][4];
} hc_zobrist;
const hc_zobrist *hc_zobrist_get(void);
extern const hc_hash128 HC_ZOBRIST_PASS_ENDS_PHASE;
extern const hc_hash128 HC_ZOBRIST_GAME_IS_OVER;

typedef struct hc_chain_data {
    int8_t owner;
    int16_t num_locs;
    int16_t num_liberties;
} hc_chain_data;

typedef struct hc_board {
    int x_size, y_size;
    int8_t colors[HC_BOARD_ARR];
    hc_chain_data chain_data[HC_BOARD_ARR]; /* valid at chain heads */
    hc_loc chain_head[HC_BOARD_ARR];
    hc_loc next_in_chain[HC_BOARD_ARR];
    hc_loc ko_loc; /* simple-ko-banned point, HC_NULL_LOC if none */
    hc_hash128 pos_hash;
    int num_black_captures, num_white_captures;
    int16_t adj[8]; /* 0-3 orthogonal (-y,-x,+x,+y), 4-7 diagonal */
} hc_board;

/* Undo record of hc_board_play_recorded. */
typedef struct hc_move_record {
    int8_t pla;
    hc_loc loc;
    hc_loc ko_loc;
    uint8_t cap_dirs;
} hc_move_record;

/* An empty board; 0 < x_size, y_size <= 19, else -1 with err. */
int hc_board_init(hc_board *b, int x_size, int y_size, hc_err *err);

static inline hc_loc hc_loc_of(int x, int y, int x_size)
{
    return (hc_loc)((x + 1) + (y + 1) * (x_size + 1));
}
static inline int hc_loc_x(hc_loc loc, int x_size) { return (loc % (x_size + 1)) - 1; }
static inline int hc_loc_y(hc_loc loc, int x_size) { return (loc / (x_size + 1)) - 1; }
static inline int hc_opp(int pla) { return pla ^ 3; }
/* Whether loc is among the n at v: the board code's short lists of chains or points already seen. */
static inline bool hc_locs_have(const hc_loc *v, int n, hc_loc loc)
{
    for (int i = 0; i < n; i++)
        if (v[i] == loc)
            return true;
    return false;
}

bool hc_board_on_board(const hc_board *b, hc_loc loc);
int hc_board_chain_size(const hc_board *b, hc_loc loc);
int hc_board_liberties(const hc_board *b, hc_loc loc);
int hc_board_immediate_liberties(const hc_board *b, hc_loc loc);
bool hc_board_is_suicide(const hc_board *b, hc_loc loc, int pla);
bool hc_board_is_illegal_suicide(const hc_board *b, hc_loc loc, int pla, bool multi_stone_suicide_legal);
bool hc_board_is_ko_banned(const hc_board *b, hc_loc loc);
bool hc_board_is_legal(const hc_board *b, hc_loc loc, int pla, bool multi_stone_suicide_legal);
bool hc_board_is_legal_ignoring_ko(const hc_board *b, hc_loc loc, int pla, bool multi_stone_suicide_legal);
hc_loc hc_board_ko_capture_loc(const hc_board *b, hc_loc loc, int pla);
bool hc_board_would_be_ko_capture(const hc_board *b, hc_loc loc, int pla);
int hc_board_num_stones(const hc_board *b);
bool hc_board_is_empty(const hc_board *b);

/* Plays a move KataGo-style without any legality check (captures, suicide, ko point). */
void hc_board_play_assume_legal(hc_board *b, hc_loc loc, int pla);
/* Checks hc_board_is_legal first; returns false (board untouched) if illegal. */
bool hc_board_play(hc_board *b, hc_loc loc, int pla, bool multi_stone_suicide_legal);
hc_move_record hc_board_play_recorded(hc_board *b, hc_loc loc, int pla);
void hc_board_undo(hc_board *b, hc_move_record rec);
/* Position hash after playing loc (empty point) with captures/suicide resolved. */
hc_hash128 hc_board_pos_hash_after_move(const hc_board *b, hc_loc loc, int pla);

/* Board::setStoneFailIfNoLibs / setStonesFailIfNoLibs: set-up stones that must not capture or
 * leave a group without liberties. color may be HC_C_EMPTY to clear. Returns false on failure. */
bool hc_board_set_stone_fail_if_no_libs(hc_board *b, hc_loc loc, int color);
typedef struct hc_placement {
    hc_loc loc;
    int color;
} hc_placement;
bool hc_board_set_stones_fail_if_no_libs(hc_board *b, const hc_placement *p, int n);
void hc_board_clear_ko_loc(hc_board *b);

/* Ladder search (mutates chain bookkeeping but restores the position). buf is a growable scratch
 * list; on allocation failure the search gives up and reports "not captured" and sets *oom. */
typedef struct hc_locbuf {
    hc_loc *v;
    int cap;
    bool oom;
} hc_locbuf;
void hc_locbuf_free(hc_locbuf *lb);
bool hc_board_ladder_captured(hc_board *b, hc_loc loc, bool defender_first, hc_locbuf *buf);
/* working receives the attacker's working moves (at most 2). */
bool hc_board_ladder_captured_attacker_first_2libs(hc_board *b, hc_loc loc, hc_locbuf *buf, hc_loc working[2], int *n_working);

/* Board::calculateArea and calculateIndependentLifeArea; result has HC_BOARD_ARR entries. */
void hc_board_calculate_area(const hc_board *b, int8_t *result, bool non_pass_alive_stones, bool safe_big_territories,
                             bool unsafe_big_territories, bool multi_stone_suicide_legal);
void hc_board_calculate_independent_life_area(const hc_board *b, int8_t *result, int *white_minus_black_region_count,
                                              bool keep_territories, bool keep_stones, bool multi_stone_suicide_legal);

#endif
