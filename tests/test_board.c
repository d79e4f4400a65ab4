/* Board and history: captures, suicide by rule, simple ko, positional/situational superko,
 * incremental hashes against hashes built from scratch, undo, legality, ladders, pass-alive area,
 * game end, and clear errors from hc_history_from_position on impossible records. Boards are
 * drawn as rows of 'X' (black), 'O' (white) and '.'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/go/board.h"
#include "hc_test.h"
#include "harness/go/history.h"
#include "harness/data/positions.h"
#include "harness/go/rules.h"

static hc_board draw(int w, int h, const char *rows)
{
    hc_board b;
    hc_err err = {0};
    hc_board_init(&b, w, h, &err);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            char c = rows[y * w + x];
            if (c == 'X' || c == 'O')
                hc_board_set_stone_fail_if_no_libs(&b, hc_loc_of(x, y, w), c == 'X' ? HC_C_BLACK : HC_C_WHITE);
        }
    return b;
}

static bool same_stones(const hc_board *a, const hc_board *b)
{
    return memcmp(a->colors, b->colors, sizeof a->colors) == 0 && hc_hash_eq(a->pos_hash, b->pos_hash);
}

/* A move list played on a board: "B3,4 W5,5 Bpass". */
typedef struct play_case {
    const char *name;
    int w, h;
    const char *start;
    int x, y, pla;      /* the move under test */
    bool multi_ok;      /* rules' multi-stone suicide */
    bool legal;         /* expected legality */
    const char *after;  /* expected stones after playing (NULL if illegal) */
    int ko_x, ko_y;     /* expected ko point after, -1 if none */
} play_case;

static const play_case play_cases[] = {
    {"capture-one", 3, 3, ".X.XO..X.", 2, 1, HC_C_BLACK, false, true, ".X.X.X.X.", -1, -1},
    {"capture-two", 3, 3, "OO.XX....", 2, 0, HC_C_BLACK, false, true, "..XXX....", -1, -1},
    {"corner-capture", 3, 3, "OX.......", 0, 1, HC_C_BLACK, false, true, ".X.X.....", -1, -1},
    {"single-suicide", 3, 3, ".X.X.....", 0, 0, HC_C_WHITE, true, false, NULL, -1, -1},
    {"multi-suicide-banned", 3, 3, "O.XOX.X..", 1, 0, HC_C_WHITE, false, false, NULL, -1, -1},
    {"multi-suicide-allowed", 3, 3, "O.XOX.X..", 1, 0, HC_C_WHITE, true, true, "..X.X.X..", -1, -1},
    {"suicide-that-captures", 3, 3, ".XOXOO...", 0, 0, HC_C_WHITE, false, true, "O.OXOO...", 1, 0},
    {"ko-capture", 4, 3, ".XO.XO.O.XO.", 2, 1, HC_C_BLACK, false, true, ".XO.X.XO.XO.", 1, 1},
    {"occupied", 3, 3, "X........", 0, 0, HC_C_WHITE, true, false, NULL, -1, -1},
};

static void run_play_cases(void)
{
    char name[96];
    for (size_t i = 0; i < sizeof play_cases / sizeof play_cases[0]; i++) {
        const play_case *c = &play_cases[i];
        hc_board b = draw(c->w, c->h, c->start);
        hc_loc loc = hc_loc_of(c->x, c->y, c->w);
        bool legal = hc_board_is_legal(&b, loc, c->pla, c->multi_ok);
        snprintf(name, sizeof name, "board-1.%zu", i);
        hc_check(name, legal == c->legal, "%s: legal %d, want %d", c->name, legal, c->legal);
        if (!c->legal || !legal)
            continue;
        hc_board before = b;
        hc_move_record rec = hc_board_play_recorded(&b, loc, c->pla);
        hc_board want = draw(c->w, c->h, c->after);
        snprintf(name, sizeof name, "board-2.%zu", i);
        hc_check(name, same_stones(&b, &want), "%s: stones or hash differ from the expected board", c->name);
        hc_loc want_ko = c->ko_x < 0 ? HC_NULL_LOC : hc_loc_of(c->ko_x, c->ko_y, c->w);
        snprintf(name, sizeof name, "board-3.%zu", i);
        hc_check(name, b.ko_loc == want_ko, "%s: ko point %d, want %d", c->name, b.ko_loc, want_ko);
        hc_board_undo(&b, rec);
        snprintf(name, sizeof name, "board-4.%zu", i);
        hc_check(name, same_stones(&b, &before) && b.ko_loc == before.ko_loc, "%s: undo did not restore the board", c->name);
    }
}

/* Simple ko: the immediate recapture is banned, and allowed again after a move elsewhere. */
static void ko_cases(void)
{
    hc_board b = draw(4, 3, ".XO.XO.O.XO.");
    hc_board_play_assume_legal(&b, hc_loc_of(2, 1, 4), HC_C_BLACK); /* B captures at (2,1) */
    hc_loc recapture = hc_loc_of(1, 1, 4);
    hc_check("board-5.1", !hc_board_is_legal(&b, recapture, HC_C_WHITE, true), "immediate ko recapture allowed");
    hc_board_play_assume_legal(&b, HC_PASS_LOC, HC_C_WHITE);
    hc_check("board-5.2", b.ko_loc == HC_NULL_LOC && hc_board_is_legal(&b, recapture, HC_C_WHITE, true),
             "ko recapture still banned after a pass");
}

/* Hashes: the incremental hash equals the hash of the same stones set up from scratch, also after
 * captures and in another move order; the hash differs between sizes. */
static void hash_cases(void)
{
    hc_board a, b;
    hc_err err = {0};
    hc_board_init(&a, 9, 9, &err);
    hc_board_init(&b, 9, 9, &err);
    int seq[][3] = {{2, 2, 1}, {6, 6, 2}, {2, 6, 1}, {6, 2, 2}, {4, 4, 1}};
    for (int i = 0; i < 5; i++)
        hc_board_play_assume_legal(&a, hc_loc_of(seq[i][0], seq[i][1], 9), seq[i][2]);
    for (int i = 4; i >= 0; i--)
        hc_board_play_assume_legal(&b, hc_loc_of(seq[i][0], seq[i][1], 9), seq[i][2]);
    hc_check("board-6.1", hc_hash_eq(a.pos_hash, b.pos_hash), "transposed move orders give different hashes");
    hc_board c = draw(3, 3, ".X.XO..X.");
    hc_hash128 predicted = hc_board_pos_hash_after_move(&c, hc_loc_of(2, 1, 3), HC_C_BLACK);
    hc_board_play_assume_legal(&c, hc_loc_of(2, 1, 3), HC_C_BLACK);
    hc_board d = draw(3, 3, ".X.X.X.X.");
    hc_check("board-6.2", hc_hash_eq(c.pos_hash, d.pos_hash) && hc_hash_eq(predicted, c.pos_hash),
             "hash after a capture differs from the drawn board's or from getPosHashAfterMove");
    hc_board e, f;
    hc_board_init(&e, 9, 9, &err);
    hc_board_init(&f, 9, 10, &err);
    hc_check("board-6.3", !hc_hash_eq(e.pos_hash, f.pos_hash) && !hc_hash_eq(a.pos_hash, e.pos_hash),
             "board size or stones do not change the hash");
    hc_check("board-6.4", hc_zobrist_get() == hc_zobrist_get() && hc_zobrist_get()->board[5][1].hash0 != 0 &&
                              hc_zobrist_get()->board[5][0].hash0 == 0,
             "Zobrist tables: empty points hash to zero, stones do not");
    hc_check("board-6.5", hc_board_init(&e, 20, 5, &err) == -1 && hc_board_init(&e, 0, 5, &err) == -1, "bad sizes accepted");
}

/* Ladders: a working ladder on an open board, broken by a stone on its path; the search leaves the
 * board as it found it. */
static void ladder_cases(void)
{
    const char *open = ".........."
                       ".........."
                       "...O......"
                       "..OX......"
                       "....O....."
                       ".........."
                       ".........."
                       ".........."
                       ".........."
                       "..........";
    hc_board b = draw(10, 10, open);
    hc_board before = b;
    hc_locbuf buf = {NULL, 0, false};
    hc_loc working[2];
    int nw = 0;
    bool cap = hc_board_ladder_captured_attacker_first_2libs(&b, hc_loc_of(3, 3, 10), &buf, working, &nw);
    hc_check("board-7.1", cap && nw >= 1, "open-board ladder not found");
    hc_check("board-7.2", same_stones(&b, &before), "ladder search changed the board");
    char broken[101];
    memcpy(broken, open, 101);
    /* W can chase up-right (atari from below) or down-left (atari from the right): block both */
    broken[1 * 10 + 6] = 'X';
    broken[2 * 10 + 6] = 'X';
    broken[6 * 10 + 1] = 'X';
    broken[6 * 10 + 2] = 'X';
    hc_board c = draw(10, 10, broken);
    cap = hc_board_ladder_captured_attacker_first_2libs(&c, hc_loc_of(3, 3, 10), &buf, working, &nw);
    hc_check("board-7.3", !cap, "ladder with a breaker on its path reported as working");
    const char *atari = "......"
                        "..O..."
                        ".OX..."
                        "......"
                        "......"
                        "......";
    hc_board d = draw(6, 6, atari);
    hc_check("board-7.4", !hc_board_ladder_captured(&d, hc_loc_of(2, 2, 6), true, &buf), "a stone with 2 liberties is not in atari");
    hc_locbuf_free(&buf);
}

/* Benson: a two-eyed black group and its eyes are pass-alive; a lone white stone is not. */
static void area_cases(void)
{
    const char *rows = ".X.X.."
                       "XXXX.."
                       "......"
                       "....O."
                       "......";
    hc_board b = draw(6, 5, rows);
    int8_t area[HC_BOARD_ARR];
    hc_board_calculate_area(&b, area, false, false, false, true);
    bool ok = area[hc_loc_of(0, 0, 6)] == HC_C_BLACK && area[hc_loc_of(2, 0, 6)] == HC_C_BLACK &&
              area[hc_loc_of(1, 1, 6)] == HC_C_BLACK && area[hc_loc_of(4, 3, 6)] == HC_C_EMPTY &&
              area[hc_loc_of(5, 4, 6)] == HC_C_EMPTY;
    hc_check("board-8.1", ok, "pass-alive area wrong");
    hc_board_calculate_area(&b, area, true, true, true, true);
    hc_check("board-8.2", area[hc_loc_of(4, 3, 6)] == HC_C_WHITE, "non-pass-alive stones not marked with nonPassAliveStones");
}

static hc_history *hist_on(const hc_board *b, int pla, const char *rules_str)
{
    hc_rules r;
    hc_err err = {0};
    if (hc_rules_parse(rules_str, &r, &err))
        return NULL;
    return hc_history_new(b, pla, &r, 0, false, &err);
}

/* Superko: after B takes a ko and both pass, W's retake would repeat the starting position:
 * banned under positional and situational superko, allowed under simple ko. */
static void superko_cases(void)
{
    const char *start = ".XO.XO.O.XO.";
    struct {
        const char *rules;
        bool banned;
    } t[] = {{"koPOSITIONALscoreAREAsui1komi7.5", true}, {"koSITUATIONALscoreAREAsui1komi7.5", true}, {"koSIMPLEscoreAREAsui1komi7.5", false}};
    char name[64];
    for (int i = 0; i < 3; i++) {
        hc_board b = draw(4, 3, start);
        hc_history *h = hist_on(&b, HC_C_BLACK, t[i].rules);
        hc_err err = {0};
        int rc = hc_history_play(h, 2, 1, HC_C_BLACK, &err);                 /* B captures at (2,1) */
        rc |= hc_history_play(h, -1, -1, HC_C_WHITE, &err);                   /* W passes */
        rc |= hc_history_play(h, -1, -1, HC_C_BLACK, &err);                   /* B passes */
        snprintf(name, sizeof name, "history-1.%d", i);
        hc_check(name, rc == 0, "%s: %s", t[i].rules, err.msg);
        bool legal = hc_history_is_legal(h, 1, 1, HC_C_WHITE);
        snprintf(name, sizeof name, "history-2.%d", i);
        hc_check(name, legal == !t[i].banned && hc_history_super_ko_banned(h, 1, 1) == t[i].banned,
                 "%s: retake legal %d, superko banned %d", t[i].rules, legal, hc_history_super_ko_banned(h, 1, 1));
        snprintf(name, sizeof name, "history-3.%d", i);
        hc_check(name, hc_history_is_game_finished(h) && hc_history_winner(h) == HC_C_WHITE,
                 "%s: two passes end an area-scored game (finished %d, winner %d)", t[i].rules, hc_history_is_game_finished(h),
                 hc_history_winner(h));
        hc_history_free(h);
    }
}

/* Legality through the history and the legal map: turn order, occupied, off-board, pass. */
static void legality_cases(void)
{
    hc_board b = draw(3, 3, "X........");
    hc_history *h = hist_on(&b, HC_C_WHITE, "tromp-taylor");
    hc_check("history-4.1", !hc_history_is_legal(h, 1, 1, HC_C_BLACK), "out-of-turn move legal");
    hc_check("history-4.2", !hc_history_is_legal(h, 0, 0, HC_C_WHITE), "occupied point legal");
    hc_check("history-4.3", !hc_history_is_legal(h, 3, 0, HC_C_WHITE) && !hc_history_is_legal(h, -2, 0, HC_C_WHITE), "off-board legal");
    hc_check("history-4.4", hc_history_is_legal(h, -1, -1, HC_C_WHITE), "pass illegal");
    unsigned char legal[4 * 5 + 1];
    hc_history_legal_map(h, 4, 5, legal);
    int n = 0;
    for (int i = 0; i < 21; i++)
        n += legal[i];
    hc_check("history-4.5", n == 9 && legal[0] == 0 && legal[3] == 0 && legal[20] == 1 && legal[1] == 1,
             "legal map in a 4x5 buffer: %d legal entries", n);
    hc_err err = {0};
    hc_check("history-4.6", hc_history_play(h, 0, 0, HC_C_WHITE, &err) == -1 && err.code == HC_EFORMAT, "illegal play accepted");
    hc_history_free(h);
}

static hc_position base_position(hc_move *moves, int n)
{
    hc_position p = hc_test_position9(moves, n);
    p.index = 42;
    return p;
}

/* Impossible records give errors naming the position and the move. */
static void record_cases(void)
{
    hc_err err = {0};
    hc_move occ[] = {{HC_BLACK, 2, 2}, {HC_WHITE, 2, 2}};
    hc_position p = base_position(occ, 2);
    hc_history *h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.1", !h && strstr(err.msg, "position 42") && strstr(err.msg, "move 2") && strstr(err.msg, "occupied"),
             "occupied point: %s", err.msg);
    hc_history_free(h);
    hc_move off[] = {{HC_BLACK, 9, 0}};
    p = base_position(off, 1);
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.2", !h && strstr(err.msg, "position 42") && strstr(err.msg, "move 1") && strstr(err.msg, "off"),
             "off-board: %s", err.msg);
    hc_history_free(h);
    hc_move ok[] = {{HC_BLACK, 2, 2}, {HC_WHITE, -1, -1}, {HC_BLACK, 3, 3}};
    p = base_position(ok, 3);
    p.next_pla = HC_BLACK;
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.3", !h && strstr(err.msg, "nextPla"), "wrong next player: %s", err.msg);
    hc_history_free(h);
    p.next_pla = HC_WHITE;
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.4", h && hc_history_num_moves(h) == 3 && hc_history_board(h)->colors[hc_loc_of(3, 3, 9)] == HC_C_BLACK,
             "valid record: %s", err.msg);
    hc_history_free(h);
    p = base_position(NULL, 0);
    snprintf(p.rules, sizeof p.rules, "koBOGUS");
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.5", !h && strstr(err.msg, "position 42") && strstr(err.msg, "koBOGUS"), "bad rules: %s", err.msg);
    p = base_position(NULL, 0);
    p.x_size = 25;
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.6", !h && strstr(err.msg, "position 42"), "bad size: %s", err.msg);
    hc_xy setup[] = {{0, 0}, {0, 0}};
    p = base_position(NULL, 0);
    p.initial_black = setup;
    p.n_initial_black = 2;
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.7", !h && strstr(err.msg, "setup"), "repeated setup stone: %s", err.msg);
    /* handicap: with the flag, consecutive black moves count as handicap stones under whbN */
    hc_move hcap[] = {{HC_BLACK, 2, 2}, {HC_WHITE, -1, -1}, {HC_BLACK, 6, 6}, {HC_WHITE, 4, 4}};
    p = base_position(hcap, 4);
    snprintf(p.rules, sizeof p.rules, "chinese");
    p.assume_multiple_starting_black_moves_are_handicap = true;
    h = hc_history_from_position(&p, &err);
    hc_check("board-record-1.8", h && hc_history_white_handicap_bonus_score(h) == 2.0f, "handicap bonus %g: %s",
             h ? (double)hc_history_white_handicap_bonus_score(h) : -1.0, err.msg);
    hc_history_free(h);
}

/* Territory scoring: two passes start the encore, two more the second encore (recording the
 * stones then on the board), two more end the game; stones played chill one point each. */
static void encore_cases(void)
{
    hc_board b;
    hc_err err = {0};
    hc_board_init(&b, 5, 5, &err);
    hc_history *h = hist_on(&b, HC_C_BLACK, "japanese");
    int rc = hc_history_play(h, 1, 1, HC_C_BLACK, &err);
    rc |= hc_history_play(h, 3, 3, HC_C_WHITE, &err);
    rc |= hc_history_play(h, 2, 2, HC_C_BLACK, &err);
    hc_check("history-5.1", rc == 0 && hc_history_white_bonus_score(h) == 1.0f, "territory chilling: %g (%s)",
             (double)hc_history_white_bonus_score(h), err.msg);
    int phases[6];
    for (int i = 0; i < 6; i++) {
        rc |= hc_history_play(h, -1, -1, hc_history_next_pla(h), &err);
        phases[i] = hc_history_encore_phase(h);
    }
    hc_check("history-5.2", rc == 0 && phases[0] == 0 && phases[1] == 1 && phases[2] == 1 && phases[3] == 2 && phases[5] == 2,
             "encore phases %d %d %d %d %d %d", phases[0], phases[1], phases[2], phases[3], phases[4], phases[5]);
    hc_check("history-5.3", hc_history_second_encore_start_color(h, 3, 3) == HC_C_WHITE &&
                                hc_history_second_encore_start_color(h, 2, 2) == HC_C_BLACK,
             "second-encore start colors not recorded");
    hc_check("history-5.4", hc_history_is_game_finished(h), "six passes do not end a territory game");
    hc_history_free(h);
    hc_board_init(&b, 5, 5, &err);
    hc_rules r;
    hc_rules_parse("japanese", &r, &err);
    hc_check("history-5.5", hc_history_new(&b, HC_C_BLACK, &r, 3, false, &err) == NULL, "encore phase 3 accepted");
    hc_rules_parse("chinese", &r, &err);
    hc_check("history-5.6", hc_history_new(&b, HC_C_BLACK, &r, 1, false, &err) == NULL, "encore under area scoring accepted");
}

int main(void)
{
    hc_plan(6 + 27 + 2 + 5 + 4 + 2 + 9 + 6 + 8); /* history-5 encore; board-1..4 play cases; board-5 ko; 6 hashes; 7 ladders; 8 area; history-1..3 superko; history-4 legality; board-record-1 */
    encore_cases();
    run_play_cases();
    ko_cases();
    hash_cases();
    ladder_cases();
    area_cases();
    superko_cases();
    legality_cases();
    record_cases();
    return hc_test_exit();
}
