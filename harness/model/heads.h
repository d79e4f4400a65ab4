/* What every engine and backend produces: raw heads (logits, no softmax or scaling; refs/engine.h
 * describes the layouts) and the per-layer taps a hook sees (refs/engine.h describes when it runs). */
#ifndef HC_HEADS_H
#define HC_HEADS_H

#include "err.h"

typedef struct hc_raw_heads {
    int batch, nx, ny, policy_channels, score_channels;
    float *policy;      /* [batch][policy_channels][ny*nx] */
    float *policy_pass; /* [batch][policy_channels] */
    float *value;       /* [batch][3] */
    float *score;       /* [batch][score_channels] */
    float *ownership;   /* [batch][ny*nx] */
    int max_batch;      /* rows allocated; batch is the number of rows filled by the last eval */
} hc_raw_heads;

/* Allocates room for max_batch rows (batch starts at max_batch). NULL and err on failure. */
hc_raw_heads *hc_raw_heads_new(int max_batch, int nx, int ny, int policy_channels,
                               int score_channels, hc_err *err);
void hc_raw_heads_free(hc_raw_heads *h);

enum hc_tap_layout {
    HC_TAP_CBP = 0, /* data[(c * rows + r) * hw + p] */
    HC_TAP_BC = 1   /* data[r * channels + c], hw == 1 */
};

typedef struct hc_tap {
    const char *layer; /* the net's name for the layer (borrowed from the net) */
    int layout;        /* enum hc_tap_layout */
    int channels, rows, hw;
    int row0;          /* batch index of the first row */
    float *data;       /* mutable, valid during the call */
} hc_tap;

typedef void (*hc_engine_hook_fn)(void *user, const hc_tap *tap);

#endif
