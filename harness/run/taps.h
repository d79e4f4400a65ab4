/* Taps: every layer's output tensor of two tensor backends on the same input rows, compared
 * layer by layer, to find where a reduced-precision backend first departs from the reference.
 *
 * Backends with taps are tensor backends that hand back an hc_tapset with their heads
 * (backends/backend.h: hc_backend_vtbl.taps): "ref32", "emulate:PROFILE" (tapped after its
 * rounding) and "pipe:" programs speaking protocol version 2 (docs/PROTOCOL.md).
 *
 * Errors per layer, over every position and every value on the board (spatial taps skip the
 * buffer's padding, whose values are meaningless):
 *   max_abs, mean_abs        |a - b|
 *   max_rel = max_abs / max|a|,  mean_rel = mean_abs / mean|a|   (relative to the layer's
 *   scale in backend A: elementwise relative error is meaningless near zero)
 * A non-finite value in B where A is finite counts as an infinite error. Layers are matched by
 * name in A's forward order (a name that occurs twice in one pass keeps its last tensor); a
 * layer of B with another shape or layout is reported, never compared. docs/TAPS.md says when
 * a layer diverges. */
#ifndef HC_TAPS_H
#define HC_TAPS_H

#include <stddef.h>

#include "engine.h"
#include "err.h"
#include "evaluate.h"
#include "model.h"
#include "positions.h"

/* The older names of a tapset (harness/model/heads.h) used as an engine-hook recorder. */
typedef hc_tapset hc_taprec;
typedef hc_tapset_entry hc_taprec_layer;
hc_taprec *hc_taprec_new(int max_batch, hc_err *err);
void hc_taprec_hook(void *rec, const hc_tap *t);
void hc_taprec_reset(hc_taprec *r);
int hc_taprec_count(const hc_taprec *r);
const hc_taprec_layer *hc_taprec_layer_at(const hc_taprec *r, int i);
const hc_taprec_layer *hc_taprec_find(const hc_taprec *r, const char *name);
int hc_taprec_status(const hc_taprec *r, hc_err *err);
void hc_taprec_free(hc_taprec *r);

/* A tensor backend that hands back taps (hc_backend_taps), run on one thread with a tapset. */
typedef struct hc_tapped hc_tapped;
hc_tapped *hc_tapped_open(const char *spec, const hc_net *net, int nx, int ny, int max_batch, hc_err *err);
int hc_tapped_eval(hc_tapped *t, int batch, const float *spatial, const float *global, const float *meta,
                   hc_raw_heads *out, hc_err *err);
const hc_tapset *hc_tapped_rec(const hc_tapped *t);
void hc_tapped_free(hc_tapped *t);

/* The comparison of two tapsets, accumulated over batches (docs/TAPS.md). */
typedef struct hc_tapdiff {
    char name[256];
    int channels, hw;
    size_t n;           /* values compared */
    size_t nonfinite;   /* values non-finite in B (or A) */
    double max_abs, sum_abs, max_ref, sum_ref;
    int missing;        /* the layer is absent from B's taps */
    /* B's tap has another shape or layout than A's: never compared; both shapes kept. */
    int mismatch;
    int b_channels, b_hw, layout, b_layout;
    int fmt;                          /* B's element format (enum hc_tap_fmt) */
    double stor_max_abs, stor_sum_abs; /* A's own tensor rounded to B's format: what storage explains */
    char b_origin[512]; /* where B took the tap from, when it says (hc_tapset_entry.origin; tensors:), or "" */
} hc_tapdiff;

typedef struct hc_tapcmp hc_tapcmp;
hc_tapcmp *hc_tapcmp_new(hc_err *err);
/* Adds the last eval of a and b (A's layers, in A's order); spatial: the batch's input rows
 * (channel 0 is the board mask), nc spatial channels. */
int hc_tapcmp_add(hc_tapcmp *c, const hc_tapset *a, const hc_tapset *b, const float *spatial, int nc,
                  hc_err *err);
int hc_tapcmp_count(const hc_tapcmp *c);
/* The taps B handed back under names A has no tap of (never compared), in B's order: a name map
 * that misses shows here. */
int hc_tapcmp_extra_count(const hc_tapcmp *c);
const char *hc_tapcmp_extra_at(const hc_tapcmp *c, int i);
const hc_tapdiff *hc_tapcmp_at(const hc_tapcmp *c, int i);
double hc_tapdiff_max_rel(const hc_tapdiff *d);
double hc_tapdiff_mean_abs(const hc_tapdiff *d);
double hc_tapdiff_mean_rel(const hc_tapdiff *d);
/* Storage's share: A's tensor rounded to B's format, max |a - round(a)| / max|a|. */
double hc_tapdiff_stor_rel(const hc_tapdiff *d);
/* The relative error of a format's arithmetic that no tap reveals (docs/TAPS.md): f32 2^-16,
 * f16 2^-11, bf16 2^-8. */
double hc_tap_fmt_floor(int fmt);
/* Index of the first layer (forward order) whose max_rel exceeds threshold or that holds a
 * non-finite value, or -1. */
int hc_tapcmp_first_divergent(const hc_tapcmp *c, double threshold);
/* What layer i's error may be without diverging (docs/TAPS.md): factor times the largest of
 * the max_rel of every compared layer before it (its inputs' error, carried), its storage
 * error (hc_tapdiff_stor_rel) and its format's floor (hc_tap_fmt_floor). */
double hc_tapcmp_explained(const hc_tapcmp *c, int i, double factor);
/* Index of the first compared layer whose max_rel exceeds hc_tapcmp_explained (or that holds a
 * non-finite value), or -1. Layers absent from B or of another shape are skipped. */
int hc_tapcmp_first_unexplained(const hc_tapcmp *c, double factor);
void hc_tapcmp_free(hc_tapcmp *c);

/* The default factor of hc_tapcmp_first_unexplained. */
#define HC_TAPS_FACTOR 8.0

/* Featurizes ps[0..n) as the evaluation pipeline does (each at its symmetry), runs backends
 * spec_a and spec_b on the same rows in batches of `batch`, and returns the comparison. */
hc_tapcmp *hc_taps_compare(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                           const char *spec_a, const char *spec_b, int batch, hc_err *err);

/* Golden layers (docs/TAPS.md, "Golden layers"): runs the tapping backend spec over ps[0..n) as
 * hc_taps_compare does and writes into dir what it saw, per position (row i is ps[i]): the input
 * rows (input/spatial [n, C, nnY, nnX], input/global [n, G], input/meta where the net has them),
 * every tap ([n, C, nnY, nnX] or [n, C], in the element type the backend stored it in) and the
 * raw heads (heads/policy, heads/policy_pass, heads/value, heads/score, heads/ownership), as one
 * taps.safetensors and/or npy/NAME.npy files (NAME with '%' and '/' written %25 and %2F), and
 * index.json last: every tensor's name, shape, layout, element type and file, each row's
 * position and symmetry, the net's file and sha256, halfcheck's version and engine version. */
enum { HC_TAPS_SAVE_NPY = 1, HC_TAPS_SAVE_SAFETENSORS = 2 };
typedef struct hc_taps_save_opts {
    const char *dir;
    int formats;                /* HC_TAPS_SAVE_* bits */
    const char *net_path;       /* recorded in the index, with the file's sha256 */
    const char *positions_path; /* recorded in the index */
} hc_taps_save_opts;
/* 0, or -1 with err; *n_tensors (may be NULL) gets the number of tensors written. */
int hc_taps_save(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s, const char *spec,
                 int batch, const hc_taps_save_opts *o, int *n_tensors, hc_err *err);

/* Which layers' precision matters: for each layer of the net (hc_net_layers order) and the
 * input rows, emulate:PROFILE applied to that layer alone (every other layer fp32), its
 * outputs' errors against ref32 over ps (KataGo's metrics, harness/metrics/stats.h). *full gets the
 * whole profile's errors. *rows is malloc'd (n_layers + 1 entries, the input last). */
typedef struct hc_prec_row {
    char name[256];
    unsigned kinds;        /* backends/profile.h HC_LK_* */
    int storage, weights;  /* what the profile gives the layer (enum hc_fmt) */
    double winrate_avg, winrate_p99, lead_avg, policy_kl_avg;
} hc_prec_row;

/* How hc_taps_precision runs: the evaluation settings, the profile (a built-in name or a YAML
 * path), positions per batch, threads, and the device: cuda 1 runs the subsets with cuda:emulate
 * and the reference with cuda:ref32 (the same bits as on the CPU, docs/EMULATION.md). */
typedef struct hc_prec_opts {
    const hc_eval_settings *settings;
    const char *profile;
    int batch, threads;
    int cuda;
} hc_prec_opts;

int hc_taps_precision(const hc_net *net, const hc_position *ps, size_t n, const hc_prec_opts *o, hc_prec_row **rows,
                      int *n_rows, hc_prec_row *full, hc_err *err);

#endif
