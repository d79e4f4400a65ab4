/* The fillers of the older input versions, for the dispatch in nnfeatures.c. Internal to the features folder. */
#ifndef HC_FEATURES_ROWS_H
#define HC_FEATURES_ROWS_H

#include "harness/base/err.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"

/* The V3-V6 fillers (features_v3_v6.c); V7's is public (nnfeatures.h). */
int hc_features_fill_v3(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err);
int hc_features_fill_v4(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err);
int hc_features_fill_v5(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err);
int hc_features_fill_v6(const hc_history *h, int next_pla, const hc_nninput_params *params, int nn_x, int nn_y,
                        float *spatial, float *global, hc_err *err);

#endif
