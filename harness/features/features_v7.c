/* KataGo's NNInputs::fillRowV7 (neuralnet/nninputs.cpp), NCHW, from the shared pieces in planes.c. */
#include "harness/features/nnfeatures.h"
#include "harness/features/planes.h"

#include <math.h>
#include <string.h>

#include "harness/base/sizes.h"

int hc_features_fill_v7(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err)
{
    hc_feat_ctx c;
    if (hc_feat_begin(h, next_pla, nn_x, nn_y, HC_FEATURES_V7_SPATIAL, HC_FEATURES_V7_GLOBAL, spatial, global, &c, err))
        return -1;
    bool suppress_pass_ends_phase;
    if (hc_feat_planes_v6_v7(&c, h, next_pla, params, false, &suppress_pass_ends_phase, global, err))
        return -1;

    float self_komi = hc_feat_clipped_self_komi(h, next_pla, params, 20.0f);
    global[5] = self_komi / 20.0f;
    hc_feat_rules_globals(global, hc_history_rules(h), true);
    hc_feat_encore_globals(global, hc_history_encore_phase(h), 12);
    bool pass_ends_phase = suppress_pass_ends_phase ? false : hc_history_pass_would_end_phase(h, next_pla);
    global[14] = pass_ends_phase ? 1.0f : 0.0f;
    if (params->playout_doubling_advantage != 0) {
        global[15] = 1.0f;
        global[16] = (float)(0.5 * params->playout_doubling_advantage);
    }
    if (hc_history_has_button(h))
        global[17] = 1.0f;

    hc_feat_komi_wave_global(&global[18], h, self_komi);
    return 0;
}
