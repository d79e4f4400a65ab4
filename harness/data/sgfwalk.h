/* Recording positions from SGF games exactly as KataGo's testgpuerror visits them:
 * Sgf::iterAllUniquePositions with hashComments, hashParent, flipIfPassOrWFirst and allowGameOver
 * all false, illegal moves not tolerated, and a fresh set of unique hashes per game.
 *
 * As KataGo does there, the SGF's RU, KM and HA are NOT used: every game is played under
 * Tromp-Taylor rules with situational superko and komi 7.5 ("koSITUATIONALscoreAREAtaxNONEsui1
 * komi7.5"), from the root's PL (black by default), on the SZ board. Setup nodes (AB/AW/AE, or a
 * PL that changes the player) restart the history from the current board; a move out of turn or
 * against superko restarts it just before the move; positions after two consecutive passes are
 * skipped, and so is any position (stones, player, simple ko point) already seen in the game.
 * An illegal placement or move (occupied, single-stone suicide, simple ko, off-board) fails the
 * whole game with HC_EFORMAT, as KataGo's run fails. */
#ifndef HC_SGFWALK_H
#define HC_SGFWALK_H

#include "harness/base/err.h"
#include "harness/go/history.h"
#include "harness/data/positions.h"
#include "harness/data/sgf.h"

/* Called once per position in visiting order. p is borrowed for the call (its arrays are reused
 * afterwards); h is the history KataGo hands its callback (current board = h's board). Return 0
 * to go on, -1 with err set to stop. */
typedef int (*hc_record_fn)(const hc_position *p, const hc_history *h, void *user, hc_err *err);

/* Fills every field of p but index and sgf_line from a history, as testgpuerror sees the
 * position: the initial board's stones as setup, the initial player, encore phase, turn number
 * and handicap flag, the moves since, and the derived fields (white handicap bonus, encore
 * phase, symmetry = situation hash (draw-equivalent wins 0.5) hash0 & 7). p's setup arrays must
 * hold x_size*y_size points; p->moves grows as needed, *moves_cap tracking its capacity. */
int hc_record_fill_position(const hc_history *h, hc_position *p, int *moves_cap, hc_err *err);

/* Visits one game. *index numbers the positions (p->index) and is advanced for each. Errors name
 * the collection, the game and the node. */
int hc_record_game(const hc_sgf_collection *c, const hc_sgf_game *g, long *index, hc_record_fn fn, void *user,
                   hc_err *err);
/* Visits every game of a collection in order, indices from 0. */
int hc_record_collection(const hc_sgf_collection *c, hc_record_fn fn, void *user, hc_err *err);

/* Loads sgf_path and writes its positions to out_path with the positions writer (atomically).
 * *n_out (may be NULL) receives the number of positions. */
int hc_record_file(const char *sgf_path, const char *out_path, long *n_out, hc_err *err);

#endif
