/* Taps: every layer's output tensor of two tensor backends on the same input rows, compared
 * layer by layer, to find where a reduced-precision backend first departs from the reference.
 *
 * Backends with taps are tensor backends that hand back an hc_tapset with their heads
 * (backends/backend.h: hc_backend_ops.taps): "ref32", "emulate:PROFILE" (tapped after its
 * rounding) and "pipe:" programs speaking protocol version 2 (docs/PROTOCOL.md).
 *
 * Errors per layer, over every position and every value on the board (spatial taps skip the
 * buffer's padding, whose values are meaningless):
 *   max_abs, mean_abs        |a - b|
 *   max_rel = max_abs / max|a|,  mean_rel = mean_abs / mean|a|,  rms_rel = rms(a - b) / rms(a)
 *   (relative to the layer's scale in backend A: elementwise relative error is meaningless near
 *   zero). The maximum sees one bad value; the mean and the RMS see an error spread thinly over
 *   every value (a bias, a scale), which the maximum can hide under a layer's largest values.
 * A non-finite value in B where A is finite counts as an infinite error. Layers are matched by
 * name in A's forward order (a name that occurs twice in one pass keeps its last tensor); a
 * layer of B with another shape or layout is reported, never compared. docs/TAPS.md says when
 * a layer diverges. */
#ifndef HC_TAPS_H
#define HC_TAPS_H

#include <stddef.h>

#include "refs/engine.h"
#include "harness/base/err.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"

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
    double sum_sq, sum_sq_ref;        /* sums of (a - b)^2 and a^2: the RMS statistic */
    int missing;        /* the layer is absent from B's taps */
    /* B's tap has another shape or layout than A's: never compared; both shapes kept. */
    int mismatch;
    int b_channels, b_hw, layout, b_layout;
    int fmt;                          /* B's element format (enum hc_tap_fmt) */
    double stor_max_abs, stor_sum_abs, stor_sum_sq; /* A's own tensor rounded to B's format: what storage explains */
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
double hc_tapdiff_rms_rel(const hc_tapdiff *d);
/* Storage's share: A's tensor rounded to B's format, max |a - round(a)| / max|a|. */
double hc_tapdiff_stor_rel(const hc_tapdiff *d);

/* The statistics the divergence criterion weighs (docs/TAPS.md, "The first divergent layer"). */
enum hc_tapstat { HC_TAPSTAT_MAX, HC_TAPSTAT_MEAN, HC_TAPSTAT_RMS, HC_TAPSTAT_COUNT };
/* "max_rel", "mean_rel", "rms_rel". */
const char *hc_tapstat_str(int stat);
/* The layer's relative error by that statistic (hc_tapdiff_max_rel, _mean_rel, _rms_rel). */
double hc_tapdiff_rel(const hc_tapdiff *d, int stat);
/* The same statistic of storage alone: A's tensor rounded to B's format against A. */
double hc_tapdiff_stor(const hc_tapdiff *d, int stat);
/* The relative error of a format's arithmetic that no tap reveals (docs/TAPS.md): for the
 * maximum f32 2^-16, f16 2^-11, bf16 2^-8 (u); for the mean u/2 and the RMS u/sqrt(3) in f16 and
 * bf16, those of an error spread evenly over [-u|a|, u|a|], and 2^-16 in f32 (a summation
 * order's error, not a rounding of each value). */
double hc_tap_fmt_floor(int fmt);
double hc_tap_fmt_floor_stat(int fmt, int stat);
/* Index of the first layer (forward order) whose max_rel exceeds threshold or that holds a
 * non-finite value, or -1. */
int hc_tapcmp_first_divergent(const hc_tapcmp *c, double threshold);
/* What layer i's error by statistic `stat` may be without diverging (docs/TAPS.md): a factor
 * times the largest of that statistic over every compared layer before it (its inputs' error,
 * carried), of its storage error (hc_tapdiff_stor) and of its format's floor
 * (hc_tap_fmt_floor_stat). The factor is `factor` for the maximum and HC_TAPS_AVG_FACTOR(factor)
 * for the mean and the RMS. */
double hc_tapcmp_allowed(const hc_tapcmp *c, int i, int stat, double factor);
/* hc_tapcmp_allowed for the maximum (what results.json calls "explained"). */
double hc_tapcmp_explained(const hc_tapcmp *c, int i, double factor);
/* Whether compared layer i diverges: a non-finite value in B, or any statistic over what is
 * allowed. Returns 0 or 1; *stat (may be NULL) gets the first statistic over its allowance
 * (HC_TAPSTAT_MAX for a non-finite value), or -1. */
int hc_tapcmp_diverges(const hc_tapcmp *c, int i, double factor, int *stat);
/* Index of the first compared layer that diverges (hc_tapcmp_diverges), or -1; *stat (may be
 * NULL) gets the statistic that named it. Layers absent from B or of another shape are skipped. */
int hc_tapcmp_first_unexplained(const hc_tapcmp *c, double factor);
int hc_tapcmp_first_unexplained_by(const hc_tapcmp *c, double factor, int *stat);

/* What a comparison covered: A's layers, those compared (present in B with A's shape and at
 * least one value on the board), absent in B, of another shape in B, and B's taps under names A
 * has none of. */
typedef struct hc_tapcov {
    int layers, compared, absent, mismatched, extra;
} hc_tapcov;
void hc_tapcmp_coverage(const hc_tapcmp *c, hc_tapcov *cov);
/* "41 of 54 layers compared; 13 absent in B; 2 names in B matched nothing" (only the parts
 * that are not zero after the first) into buf. */
void hc_tapcov_str(const hc_tapcov *cov, char *buf, size_t size);
/* 0 when at least one layer was compared; otherwise -1 with an HC_EFORMAT error saying why
 * (nothing of B under A's names, every match of another shape, no tap at all). */
int hc_tapcmp_check_coverage(const hc_tapcmp *c, hc_err *err);
void hc_tapcmp_free(hc_tapcmp *c);

/* The default factor of hc_tapcmp_first_unexplained. */
#define HC_TAPS_FACTOR 8.0
/* The mean's and the RMS's factor for a given factor: half of it, at least 1 (docs/TAPS.md: an
 * average does not pick the tail of a wider distribution, as a maximum does). */
#define HC_TAPS_AVG_FACTOR(f) ((f) / 2 > 1 ? (f) / 2 : 1.0)

/* Featurizes ps[0..n) as the evaluation pipeline does (each at its symmetry), runs backends
 * spec_a and spec_b on the same rows in batches of `batch`, and returns the comparison; NULL
 * with an HC_EFORMAT error when no layer could be compared (hc_tapcmp_check_coverage). */
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
