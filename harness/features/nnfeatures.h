/* (Named nnfeatures.h, not features.h: -Iharness would shadow glibc's <features.h>.) */
/* KataGo's neural-net input features (neuralnet/nninputs.cpp): NNInputs::fillRowV3..V7 behind
 * hc_features_fill (input version 3: model versions 3-4, 4: 5, 5: 6, 6: 7, 7: 8-17). Output is the
 * NCHW layout before any symmetry: spatial [C][nn_y][nn_x] (x fastest) with the board in the
 * top-left corner of the buffer, then the global features. */
#ifndef HC_NNFEATURES_H
#define HC_NNFEATURES_H

#include <stdbool.h>

#include "harness/base/err.h"
#include "harness/go/history.h"

/* KataGo's MiscNNInputParams, the fields that affect features (and hashing). */
typedef struct hc_nninput_params {
    double draw_equivalent_wins_for_white; /* 0.5 */
    bool conservative_pass_and_is_root;    /* false */
    bool enable_passing_hacks;             /* false */
    double playout_doubling_advantage;     /* 0 */
    float nn_policy_temperature;           /* 1 (not a feature) */
    double policy_optimism;                /* 0 (not a feature) */
    int max_history;                       /* 1000 */
    /* -1: follow the history's flag; 0/1: override it. testgpuerror sets it from the model
     * (modelPreferPassAliveUnderSuicideRules ? 1 : 0). */
    int pass_alive_suicide_rules_override;
} hc_nninput_params;

hc_nninput_params hc_nninput_params_default(void);

enum { HC_FEATURES_V7_SPATIAL = 22, HC_FEATURES_V7_GLOBAL = 19 };

/* Channel counts for an input version (KataGo's NNInputs::NUM_FEATURES_*), 0 if unsupported. */
int hc_features_num_spatial(int input_version);
int hc_features_num_global(int input_version);

/* Fills spatial[num_spatial * nn_y * nn_x] and global[num_global] for the current board of h with
 * next_pla to move. nn_x/nn_y must be at least the board size and at most 19. Returns -1 with err
 * for an unsupported version, a bad buffer size, or an allocation failure in the ladder search. */
int hc_features_fill(int input_version, const hc_history *h, int next_pla, const hc_nninput_params *params,
                     int nn_x, int nn_y, float *spatial, float *global, hc_err *err);
int hc_features_fill_v7(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err);

#endif
