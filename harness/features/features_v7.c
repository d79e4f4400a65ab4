/* KataGo's NNInputs::fillRowV7 (neuralnet/nninputs.cpp), NCHW, from the shared pieces in planes.c. */
#include "nnfeatures.h"
#include "planes.h"

#include <math.h>
#include <string.h>

#include "sizes.h"

int hc_features_fill_v7(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    hc_feat_ctx c;
    if (hc_feat_begin(h, next_pla, nn_x, nn_y, HC_FEATURES_V7_SPATIAL, HC_FEATURES_V7_GLOBAL, spatial, global, &c, err))
        return -1;
    const hc_board *board = hc_history_board(h);
    const hc_rules *rules = hc_history_rules(h);
    int x_size = board->x_size, y_size = board->y_size;
    int pla = next_pla, opp = hc_opp(pla);
    int encore = hc_history_encore_phase(h);

    hc_feat_stone_planes(&c, board, pla, true);
    hc_feat_ko_planes(&c, h, 6);
    bool final_not_win = hc_feat_area_planes_v6(&c, h, pla, params);

    bool suppress_pass_ends_phase;
    int max_turns = hc_feat_max_history_turns_v6(h, pla, params, final_not_win, &suppress_pass_ends_phase);

    int n_included = 0;
    if (max_turns > 0) {
        int approx = hc_history_num_approx_valid_turns_this_phase(h);
        n_included = hc_feat_history_planes(&c, h, pla, max_turns < approx ? max_turns : approx, 9, global);
    }
    if (hc_feat_ladder_planes(&c, h, n_included, opp, err))
        return -1;
    hc_feat_second_encore_planes(&c, h, pla, 20);

    float self_komi = hc_feat_clipped_self_komi(h, next_pla, params, 20.0f);
    global[5] = self_komi / 20.0f;
    hc_feat_rules_globals(global, rules, true);
    if (encore > 0)
        global[12] = 1.0f;
    if (encore > 1)
        global[13] = 1.0f;
    bool pass_ends_phase = suppress_pass_ends_phase ? false : hc_history_pass_would_end_phase(h, next_pla);
    global[14] = pass_ends_phase ? 1.0f : 0.0f;
    if (params->playout_doubling_advantage != 0) {
        global[15] = 1.0f;
        global[16] = (float)(0.5 * params->playout_doubling_advantage);
    }
    if (hc_history_has_button(h))
        global[17] = 1.0f;

    if (rules->scoring_rule == HC_SCORING_AREA || encore >= 2)
        global[18] = hc_feat_komi_wave(self_komi, x_size, y_size);
    return 0;
}
