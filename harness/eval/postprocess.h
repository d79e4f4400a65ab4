/* Raw network heads → KataGo's outputs, exactly as KataGo's backends' getOutput and
 * NNEvaluator::evaluate do it (cpp/neuralnet/eigenbackend.cpp, nneval.cpp). Shared by every
 * tensor backend, so that backends differ only in arithmetic. */
#ifndef HC_POSTPROCESS_H
#define HC_POSTPROCESS_H

#include "harness/base/err.h"
#include "harness/data/nnoutput.h"

/* What post-processing needs to know of the model (filled from hc_net). */
typedef struct hc_pp_model {
    int model_version;
    int policy_channels; /* 1, 2 (optimism, v12+) or 4 (v16+) */
    int score_channels;  /* 1 (v3), 2 (v4-7), 4 (v8), 6 (v9+) */
    int has_meta;        /* SGF-metadata input: policy optimism is forced to 0 */
    double score_mean_multiplier, score_stdev_multiplier, lead_multiplier, variance_time_multiplier;
    double shortterm_value_error_multiplier, shortterm_score_error_multiplier;
    float output_scale_multiplier;
} hc_pp_model;

/* Evaluation settings (KataGo's MiscNNInputParams that act after the net). */
typedef struct hc_pp_settings {
    double policy_optimism;
    float policy_temperature; /* nnPolicyTemperature, 1 by default */
    int enable_passing_hacks;
} hc_pp_settings;

/* Facts of the position. */
typedef struct hc_pp_position {
    int x_size, y_size;  /* the board, in the buffer's top-left corner */
    int next_pla_white;  /* the player to move is white */
    int suppress_no_result; /* KataGo's (ko rule != simple && scoring != territory) */
    int symmetry;        /* the symmetry the inputs were evaluated at */
    const unsigned char *legal; /* [nn_x*nn_y+1], borrowed: KataGo's history.isLegal per policy index, pass last */
} hc_pp_position;

/* One batch row of raw heads, in the evaluated (symmetrized) orientation. All borrowed. */
typedef struct hc_raw_row {
    const float *policy;      /* [policy_channels][nn_y*nn_x] */
    const float *policy_pass; /* [policy_channels] */
    const float *value;       /* [3]: win, loss, no-result logits for the player to move */
    const float *score;       /* [score_channels] */
    const float *ownership;   /* [nn_y*nn_x], or NULL */
} hc_raw_row;

/* Fills out (already initialised for nn_x x nn_y by hc_nnoutput_init; ownership written when
 * both raw->ownership and out->white_owner_map are set). A non-finite value, or no legal move,
 * is an HC_EBACKEND error naming the field; scratch needs nn_x*nn_y+1 floats. */
int hc_postprocess_row(const hc_pp_model *m, const hc_pp_settings *s, const hc_pp_position *pos, int nn_x, int nn_y,
                   const hc_raw_row *raw, float *scratch, hc_nnoutput *out, hc_err *err);

#endif
