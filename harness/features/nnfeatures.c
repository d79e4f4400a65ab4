/* The input features' entry points: default params, plane counts and the fill by input version
 * (features_v7.c, features_v3_v6.c). */
#include "harness/features/nnfeatures.h"
#include "harness/features/features_rows.h"

#include <math.h>
#include <string.h>

#include "harness/base/sizes.h"

hc_nninput_params hc_nninput_params_default(void)
{
    hc_nninput_params p;
    p.draw_equivalent_wins_for_white = 0.5;
    p.conservative_pass_and_is_root = false;
    p.enable_passing_hacks = false;
    p.playout_doubling_advantage = 0.0;
    p.nn_policy_temperature = 1.0f;
    p.policy_optimism = 0.0;
    p.max_history = 1000;
    p.pass_alive_suicide_rules_override = -1;
    return p;
}

int hc_features_num_spatial(int v) { return v >= 3 && v <= 7 ? (v == 5 ? 13 : 22) : 0; }
int hc_features_num_global(int v) { return v == 3 || v == 4 ? 14 : v == 5 ? 12 : v == 6 ? 16 : v == 7 ? 19 : 0; }

int hc_features_fill(int v, const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                     float *spatial, float *global, hc_err *err)
{
    switch (v) {
    case 3: return hc_features_fill_v3(h, next_pla, params, nn_x, nn_y, spatial, global, err);
    case 4: return hc_features_fill_v4(h, next_pla, params, nn_x, nn_y, spatial, global, err);
    case 5: return hc_features_fill_v5(h, next_pla, params, nn_x, nn_y, spatial, global, err);
    case 6: return hc_features_fill_v6(h, next_pla, params, nn_x, nn_y, spatial, global, err);
    case 7: return hc_features_fill_v7(h, next_pla, params, nn_x, nn_y, spatial, global, err);
    }
    return hc_err_set(err, HC_EFORMAT, "input features version %d not supported (only 3 to 7)", v);
}
