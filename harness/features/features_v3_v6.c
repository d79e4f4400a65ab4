/* KataGo's older input features (neuralnet/nninputs.cpp): NNInputs::fillRowV3 (model versions 3
 * and 4), fillRowV4 (5), fillRowV5 (6) and fillRowV6 (7), NCHW, built from the pieces they share
 * with fillRowV7 (planes.c). How they differ from V7:
 * - V3-V5 hide the whole history (and the pass-ends-phase flag) once the game or phase is over or
 *   when a pass would end the game and the root's conservative pass or a friendly pass suppresses
 *   that; otherwise the last 5 alternating moves are shown whatever the phase, rules violations or
 *   maxHistory. V6 caps the history as V7 does, and also by the turns since the last violation.
 * - V3/V4 area planes 18/19 ignore the tax rule and the encore: V3 is area (stones and territories)
 *   under area scoring and pass-alive territory only under territory scoring, V4 pass-alive
 *   territory only. V6's are V7's.
 * - V5 has no liberty, ladder or area planes: ko in 3/4, moves in 6-10, second encore in 11/12.
 * - Komi is clipped to +-(area + 1), divided by 15 (by 20 in V6); V3-V5 have no tax global. */
#include "harness/features/nnfeatures.h"
#include "harness/features/features_rows.h"
#include "harness/features/planes.h"

enum {
    V3_SPATIAL = 22, V3_GLOBAL = 14,
    V5_SPATIAL = 13, V5_GLOBAL = 12,
    V6_SPATIAL = 22, V6_GLOBAL = 16,
};

/* hideHistory of fillRowV3/V4/V5 */
static bool hide_history_v3(const hc_history *h, int pla, const hc_nninput_params *params)
{
    return hc_history_is_game_finished(h) || hc_history_is_past_normal_phase_end(h) ||
           (hc_history_pass_would_end_game(h, pla) &&
            (params->conservative_pass_and_is_root || hc_history_should_suppress_end_game_from_friendly_pass(h, pla)));
}

/* fillRowV3 and fillRowV4, which differ only in the area planes. */
static int fill_v3_v4(int version, const hc_history *h, int pla, const hc_nninput_params *params, int nn_x, int nn_y,
                      float *spatial, float *global, hc_err *err)
{
    hc_feat_ctx c;
    if (hc_feat_begin(h, pla, nn_x, nn_y, V3_SPATIAL, V3_GLOBAL, spatial, global, &c, err))
        return -1;
    const hc_board *board = hc_history_board(h);
    const hc_rules *rules = hc_history_rules(h);
    int opp = hc_opp(pla);

    hc_feat_stone_planes(&c, board, pla, true);
    hc_feat_ko_planes(&c, h, 6);
    bool hide = hide_history_v3(h, pla, params);
    int n_included = hide ? 0 : hc_feat_history_planes(&c, h, pla, 5, 9, global);
    if (hc_feat_ladder_planes(&c, h, n_included, opp, err))
        return -1;

    int8_t area[HC_BOARD_ARR];
    bool sui_pa = hc_feat_suicide_legal_for_pass_alive(h, params);
    if (version == 3 && rules->scoring_rule == HC_SCORING_AREA)
        hc_board_calculate_area(board, area, true, true, true, sui_pa);
    else
        hc_board_calculate_area(board, area, false, true, false, sui_pa);
    for (int y = 0; y < board->y_size; y++)
        for (int x = 0; x < board->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, board->x_size);
            if (area[loc] == pla)
                hc_feat_set(&c, y * nn_x + x, 18);
            else if (area[loc] == opp)
                hc_feat_set(&c, y * nn_x + x, 19);
        }
    hc_feat_second_encore_planes(&c, h, pla, 20);

    float self_komi = hc_feat_clipped_self_komi(h, pla, params, 1.0f);
    global[5] = self_komi / 15.0f;
    hc_feat_rules_globals(global, rules, false);
    hc_feat_encore_globals(global, hc_history_encore_phase(h), 10);
    global[12] = !hide && hc_history_pass_would_end_phase(h, pla) ? 1.0f : 0.0f;
    hc_feat_komi_wave_global(&global[13], h, self_komi);
    return 0;
}

int hc_features_fill_v3(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    return fill_v3_v4(3, h, next_pla, params, nn_x, nn_y, spatial, global, err);
}

int hc_features_fill_v4(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    return fill_v3_v4(4, h, next_pla, params, nn_x, nn_y, spatial, global, err);
}

int hc_features_fill_v5(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    hc_feat_ctx c;
    if (hc_feat_begin(h, next_pla, nn_x, nn_y, V5_SPATIAL, V5_GLOBAL, spatial, global, &c, err))
        return -1;
    int pla = next_pla;
    hc_feat_stone_planes(&c, hc_history_board(h), pla, false);
    hc_feat_ko_planes(&c, h, 3);
    if (!hide_history_v3(h, pla, params))
        hc_feat_history_planes(&c, h, pla, 5, 6, global);
    hc_feat_second_encore_planes(&c, h, pla, 11);

    global[5] = hc_feat_clipped_self_komi(h, pla, params, 1.0f) / 15.0f;
    hc_feat_rules_globals(global, hc_history_rules(h), false);
    hc_feat_encore_globals(global, hc_history_encore_phase(h), 10);
    return 0;
}

int hc_features_fill_v6(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    hc_feat_ctx c;
    if (hc_feat_begin(h, next_pla, nn_x, nn_y, V6_SPATIAL, V6_GLOBAL, spatial, global, &c, err))
        return -1;
    int pla = next_pla;
    bool suppress_pass_ends_phase;
    if (hc_feat_planes_v6_v7(&c, h, pla, params, true, &suppress_pass_ends_phase, global, err))
        return -1;

    float self_komi = hc_feat_clipped_self_komi(h, pla, params, 1.0f);
    global[5] = self_komi / 20.0f;
    hc_feat_rules_globals(global, hc_history_rules(h), true);
    hc_feat_encore_globals(global, hc_history_encore_phase(h), 12);
    global[14] = !suppress_pass_ends_phase && hc_history_pass_would_end_phase(h, pla) ? 1.0f : 0.0f;
    hc_feat_komi_wave_global(&global[15], h, self_komi);
    return 0;
}
