/* What every engine and backend produces: raw heads (logits, no softmax or scaling; refs/engine.h
 * describes the layouts) and the per-layer taps a hook sees (refs/engine.h describes when it runs). */
#ifndef HC_HEADS_H
#define HC_HEADS_H

#include "harness/base/err.h"

struct hc_tapset;

typedef struct hc_raw_heads {
    int batch, nx, ny, policy_channels, score_channels;
    /* Optional, set by the caller (NULL by hc_raw_heads_new): where a backend that taps puts
     * the batch's intermediate tensors (see hc_tapset below). Borrowed: the caller frees it. */
    struct hc_tapset *taps;
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

/* A tapset: the named intermediate tensors a tensor backend hands back with a batch's heads
 * (docs/TAPS.md), in the order the backend produced them (its forward order). Each tensor is
 * kept as float data[row][channels][hw] whatever the backend's own layout was; fmt says the
 * element format the backend stored it in (its values are exactly representable in it), so a
 * comparison can tell the error that storage alone explains. A caller asks a backend for taps
 * by setting hc_raw_heads.taps before eval (NULL: none wanted, no cost); a backend that taps
 * (hc_backend_ops.taps) resets it and fills it; any other leaves it alone. */
enum hc_tap_fmt { HC_TAPFMT_F32 = 0, HC_TAPFMT_F16 = 1, HC_TAPFMT_BF16 = 2 };

typedef struct hc_tapset_entry {
    char *name;
    int layout;             /* enum hc_tap_layout: HC_TAP_BC for per-row vectors (hw == 1) */
    int fmt;                /* enum hc_tap_fmt */
    int channels, hw, rows; /* rows filled by the last eval */
    float *data;            /* [max_batch][channels][hw] */
    char *origin;           /* optional: where the backend took it from (a file's tensor and its shape), for
                             * messages; NULL when not set (hc_tapset_entry_set_origin) */
} hc_tapset_entry;

typedef struct hc_tapset hc_tapset;

hc_tapset *hc_tapset_new(int max_batch, hc_err *err);
void hc_tapset_free(hc_tapset *s);
/* Before each eval: forgets the rows of the last one (keeps entries and memory). */
void hc_tapset_reset(hc_tapset *s);
int hc_tapset_count(const hc_tapset *s);
int hc_tapset_max_batch(const hc_tapset *s);
const hc_tapset_entry *hc_tapset_at(const hc_tapset *s, int i);
const hc_tapset_entry *hc_tapset_find(const hc_tapset *s, const char *name);
/* The entry `name`, created with this shape on first use (a later call with another shape
 * fails: one name, one shape). NULL with err when out of memory or on a shape clash. Not
 * thread-safe: for backends filling a tapset from one thread (pipe). */
hc_tapset_entry *hc_tapset_entry_get(hc_tapset *s, const char *name, int layout, int fmt, int channels, int hw,
                                     hc_err *err);
/* Sets e's origin (copied; replaces an earlier one). 0, or -1 with err when out of memory. */
int hc_tapset_entry_set_origin(hc_tapset_entry *e, const char *origin, hc_err *err);
/* An hc_engine_hook_fn (thread-safe) recording every layer's tensor as f32 entries: how ref32
 * and emulate fill a tapset from their engine's hook. */
void hc_tapset_hook(void *set, const hc_tap *t);
/* 0, or -1 with err when the hook failed to allocate. */
int hc_tapset_status(const hc_tapset *s, hc_err *err);
const char *hc_tap_fmt_str(int fmt); /* "f32", "f16", "bf16" */
int hc_tap_fmt_parse(const char *s);  /* enum hc_tap_fmt or -1 */

#endif
