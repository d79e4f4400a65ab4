/* Pieces shared by the feature fillers of every input version (planes.c; used by features_v7.c and
 * features_v3_v6.c). Internal to the features folder, not a public API. */
#ifndef HC_PLANES_H
#define HC_PLANES_H

#include <stdbool.h>

#include "harness/go/board.h"
#include "harness/base/err.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"

/* Where planes go: spatial [C][nn_y][nn_x], board in the top-left corner. */
typedef struct hc_feat_ctx {
    float *spatial;
    int plane; /* nn_x * nn_y */
    int nn_x;
    int x_size;
} hc_feat_ctx;

static inline void hc_feat_set(const hc_feat_ctx *c, int pos, int feature)
{
    c->spatial[feature * c->plane + pos] = 1.0f;
}

static inline int hc_feat_pos(const hc_feat_ctx *c, hc_loc loc)
{
    return hc_loc_y(loc, c->x_size) * c->nn_x + hc_loc_x(loc, c->x_size);
}

/* Checks the buffer and player, zeroes n_spatial planes and n_global globals, sets up c. */
int hc_feat_begin(const hc_history *h, int next_pla, int nn_x, int nn_y, int n_spatial, int n_global, float *spatial,
                  float *global, hc_feat_ctx *c, hc_err *err);

/* Planes 0 (on board), 1/2 (pla/opp stones) and, when liberties, 3/4/5 (chains with 1/2/3 liberties). */
void hc_feat_stone_planes(const hc_feat_ctx *c, const hc_board *board, int pla, bool liberties);

/* Ko planes: before the encore, the simple-ko point and superko bans in feature; in the encore,
 * superko bans in feature and ko-recapture blocks in feature + 1. */
void hc_feat_ko_planes(const hc_feat_ctx *c, const hc_history *h, int feature);

/* The last moves, newest first, while they alternate opp, pla, ... and at most min(use, 5) of them:
 * a pass sets global[k-1], a move sets plane feature + k - 1. Returns how many were included. */
int hc_feat_history_planes(const hc_feat_ctx *c, const hc_history *h, int pla, int use, int feature, float *global);

/* In the second encore, the stones at its start: pla's in feature, opp's in feature + 1. */
void hc_feat_second_encore_planes(const hc_feat_ctx *c, const hc_history *h, int pla, int feature);

/* currentSelfKomi for pla clipped to +-(board area + radius). */
float hc_feat_clipped_self_komi(const hc_history *h, int pla, const hc_nninput_params *params, float radius);

/* Globals 6/7 (ko rule), 8 (multi-stone suicide), 9 (territory scoring), with tax 10/11 (tax rule). */
void hc_feat_rules_globals(float *global, const hc_rules *rules, bool tax);

/* MiscNNInputParams::getSuicideLegalForPassAlive */
bool hc_feat_suicide_legal_for_pass_alive(const hc_history *h, const hc_nninput_params *p);

/* Ladder planes 14 (current board, with the attacker's working moves against opp in 17), 15 and 16
 * (the boards 1 and 2 turns ago while that many history turns are included, else the newer one). */
int hc_feat_ladder_planes(const hc_feat_ctx *c, const hc_history *h, int n_included, int opp, hc_err *err);

/* Planes 18/19 of input versions 6 and 7 (area or independent-life area by scoring and tax rule,
 * territory scoring only from the second encore). Returns whether the game, scored now, would not
 * be a win for pla (the passing hack's condition). */
bool hc_feat_area_planes_v6(const hc_feat_ctx *c, const hc_history *h, int pla, const hc_nninput_params *p);

/* How many turns of history fillRowV6/V7 may show (5; 0 when a pass would end the game and the
 * root's conservative pass, a friendly pass or the passing hack on a losing final score suppresses
 * that, then also *suppress_pass_ends_phase; 1 once the game or phase is over), capped by maxHistory. */
int hc_feat_max_history_turns_v6(const hc_history *h, int pla, const hc_nninput_params *params, bool final_not_win,
                                 bool *suppress_pass_ends_phase);

/* The komi parity triangle wave of input versions 3, 4, 6 and 7, for an already clipped self komi. */
float hc_feat_komi_wave(float self_komi, int x_size, int y_size);

/* The wave into *g where those versions show it: under area scoring, or from the second encore. */
void hc_feat_komi_wave_global(float *g, const hc_history *h, float self_komi);

/* Globals first (the encore has begun) and first + 1 (the second encore has), of every version. */
void hc_feat_encore_globals(float *global, int encore, int first);

/* The spatial planes of input versions 6 and 7 in their order: stones and liberties, ko, area,
 * history (capped as hc_feat_max_history_turns_v6 says and by the valid turns of this phase, and
 * with cap_by_game_turns, V6's, also by those of this game), ladders, second encore. */
int hc_feat_planes_v6_v7(const hc_feat_ctx *c, const hc_history *h, int pla, const hc_nninput_params *params,
                         bool cap_by_game_turns, bool *suppress_pass_ends_phase, float *global, hc_err *err);

#endif
