/* KataGo's BoardHistory (game/boardhistory.cpp) in C: the current board plus what the rules need
 * beyond it: recent boards and moves, superko bans (positional/situational), the encore phases of
 * territory scoring, the button, komi bonuses (territory chilling, white handicap bonus), game end
 * and scoring, and KataGo's situation hash.
 *
 * Coordinates in this API are (x, y) from the top-left, (-1, -1) for a pass; players are HC_BLACK
 * or HC_WHITE (positions.h). An hc_history owns its board; pointers it returns stay valid until the
 * next call that changes it or hc_history_free. */
#ifndef HC_HISTORY_H
#define HC_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/go/board.h"
#include "harness/base/err.h"
#include "harness/go/position.h"
#include "harness/go/rules.h"

typedef struct hc_history hc_history;

enum { HC_HISTORY_RECENT_BOARDS = 6 };

/* BoardHistory(board, pla, rules, encorePhase, alwaysComputePassAliveUnderSuicideRules).
 * encore_phase > 0 requires territory scoring. */
hc_history *hc_history_new(const hc_board *board, int pla, const hc_rules *rules, int encore_phase,
                           bool always_pass_alive_under_suicide, hc_err *err);
void hc_history_free(hc_history *h);
hc_history *hc_history_copy(const hc_history *h, hc_err *err);

/* Builds the history a positions record describes, as KataGo's SGF loader does: setup stones on an
 * empty board (black then white, none may be left without liberties), the initial player, encore
 * phase, turn number and handicap flag, then each move in order, played tolerantly (KataGo's
 * makeBoardMoveTolerant: ko and superko violations are tolerated, a move on an occupied or
 * off-board point or a single-stone suicide is an error naming the position index and move).
 * The rules string's komi must equal p->komi, and nextPla must be the history's next player.
 * alwaysComputePassAliveUnderSuicideRules is false, as in testgpuerror (the model's preference
 * enters through hc_nninput_params). Capture counts of the initial board are zero (records do not
 * carry them), which matters only for territory scoring of positions set up mid-game. */
hc_history *hc_history_from_position(const hc_position *p, hc_err *err);

/* The histories of a run of records, built incrementally: a record that repeats the previous
 * one's setup and moves and adds moves (the next position of the same game, as positions files
 * list them) continues that history instead of replaying the game from its start. The history
 * returned equals hc_history_from_position's for the record, errors included (the same
 * messages); it is owned by the cache and valid until the next call or hc_history_cache_free.
 * After a failure nothing is cached. */
typedef struct hc_history_cache hc_history_cache;
hc_history_cache *hc_history_cache_new(hc_err *err);
void hc_history_cache_free(hc_history_cache *c);
const hc_history *hc_history_cache_get(hc_history_cache *c, const hc_position *p, hc_err *err);

/* BoardHistory::clear: restarts from board with the same rules (alwaysComputePassAlive... kept). */
int hc_history_reset(hc_history *h, const hc_board *board, int pla, int encore_phase, hc_err *err);
void hc_history_set_initial_turn_number(hc_history *h, int64_t n);
void hc_history_set_assume_multiple_starting_black_moves_are_handicap(hc_history *h, bool b);

/* --- state ---------------------------------------------------------------------------------- */
const hc_board *hc_history_board(const hc_history *h);            /* the current board */
const hc_board *hc_history_recent_board(const hc_history *h, int moves_ago); /* 0..5 */
const hc_board *hc_history_initial_board(const hc_history *h);
const hc_rules *hc_history_rules(const hc_history *h);
int hc_history_x_size(const hc_history *h);
int hc_history_y_size(const hc_history *h);
int hc_history_next_pla(const hc_history *h); /* presumedNextMovePla */
int hc_history_initial_pla(const hc_history *h);
int hc_history_initial_encore_phase(const hc_history *h);
int64_t hc_history_initial_turn_number(const hc_history *h);
bool hc_history_assume_handicap(const hc_history *h);
int hc_history_encore_phase(const hc_history *h);
float hc_history_white_handicap_bonus_score(const hc_history *h);
float hc_history_white_bonus_score(const hc_history *h);
bool hc_history_has_button(const hc_history *h);
bool hc_history_is_game_finished(const hc_history *h);
bool hc_history_is_past_normal_phase_end(const hc_history *h);
/* Final score (white minus black) and winner (HC_EMPTY for a draw or no result) once finished. */
float hc_history_final_white_minus_black(const hc_history *h);
int hc_history_winner(const hc_history *h);
bool hc_history_is_no_result(const hc_history *h);
int hc_history_num_moves(const hc_history *h);
hc_move hc_history_move(const hc_history *h, int i); /* i-th move since the initial board */
int hc_history_num_approx_valid_turns_this_phase(const hc_history *h);
/* numConsecValidTurnsThisGame: like the above, but reset by a rules violation, not a phase change. */
int hc_history_num_consec_valid_turns_this_game(const hc_history *h);
bool hc_history_super_ko_banned(const hc_history *h, int x, int y);
bool hc_history_ko_recap_blocked(const hc_history *h, int x, int y);
int hc_history_second_encore_start_color(const hc_history *h, int x, int y);
bool hc_history_always_pass_alive_under_suicide(const hc_history *h);

/* --- moves ---------------------------------------------------------------------------------- */
/* BoardHistory::isLegal (turn order, ko, superko, suicide by the rules, encore pass-for-ko). */
bool hc_history_is_legal(const hc_history *h, int x, int y, int pla);
/* BoardHistory::isLegalTolerant (any player, suicide tolerated, ko ignored, not occupied). */
bool hc_history_is_legal_tolerant(const hc_history *h, int x, int y, int pla);
/* Plays a move that hc_history_is_legal accepts; -1 with err (board untouched) otherwise. */
int hc_history_play(hc_history *h, int x, int y, int pla, hc_err *err);
/* BoardHistory::makeBoardMoveTolerant; -1 with err if not even tolerantly legal. */
int hc_history_play_tolerant(hc_history *h, int x, int y, int pla, hc_err *err);

/* KataGo's legality mask for the policy (nneval.cpp: history.isLegal at every policy index, for
 * the next player): legal[y*nn_x+x], pass at nn_x*nn_y; off-board points are 0. */
void hc_history_legal_map(const hc_history *h, int nn_x, int nn_y, unsigned char *legal);

/* --- rules state used by features ----------------------------------------------------------- */
bool hc_history_pass_would_end_phase(const hc_history *h, int pla);
bool hc_history_pass_would_end_game(const hc_history *h, int pla);
bool hc_history_should_suppress_end_game_from_friendly_pass(const hc_history *h, int pla);
/* currentSelfKomi: komi plus bonuses (plus draw adjustment) from pla's point of view. */
float hc_history_current_self_komi(const hc_history *h, int pla, double draw_equivalent_wins_for_white);
/* suicide legality for pass-alive computations (rules or alwaysComputePassAliveUnderSuicideRules) */
bool hc_history_suicide_legal_for_pass_alive(const hc_history *h);

/* BoardHistory::getSituationRulesAndKoHash (with hist's own pass-alive flag, or an explicit one).
 * KataGo's testgpuerror symmetry is hash0 & 7 of it with draw_equivalent_wins_for_white = 0.5. */
hc_hash128 hc_history_situation_hash(const hc_history *h, int next_pla, double draw_equivalent_wins_for_white);
hc_hash128 hc_history_situation_hash_ex(const hc_history *h, int next_pla, double draw_equivalent_wins_for_white,
                                        bool always_pass_alive_under_suicide);

/* Per-location views (HC_BOARD_ARR entries, indexed by hc_loc) for the feature code. */
const bool *hc_history_super_ko_banned_map(const hc_history *h);
const bool *hc_history_ko_recap_blocked_map(const hc_history *h);
const int8_t *hc_history_second_encore_start_map(const hc_history *h);
/* The i-th move as a location (HC_PASS_LOC for a pass) and player. */
void hc_history_move_loc(const hc_history *h, int i, hc_loc *loc, int *pla);

#endif
