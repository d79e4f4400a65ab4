/* Precision profiles: which reduced format an emulated backend stores each layer's weights and
 * output in, as data (YAML). The layers they name (kinds, forward order) are harness/model/layers.h.
 *
 * A profile file:
 *   name: fp16                       optional (default: the file name without .yaml)
 *   description: free text           optional
 *   storage: fp16                    default for every layer's output (and the input rows)
 *   weights: fp16                    default for every layer's weights
 *   accum: fp32                      default accumulation of GEMMs/convolutions
 *   winogradTiles: fp32              fp16: 3x3 convolutions by Winograd with the transformed
 *                                    weights, input tiles and products stored as fp16 (the
 *                                    transform arithmetic in fp32), as MLX does
 *   winograd: f4x4                   the Winograd tile of 3x3 convolutions: f4x4 (F(4x4,3x3),
 *                                    6x6 tiles, KataGo's Eigen) or f2x2 (F(2x2,3x3), 4x4 tiles,
 *                                    MLX)
 *   pool: fp32                       global pooling's pooled values (mean, scaled mean, max)
 *                                    stored in this format before the matmul that reads them;
 *                                    a layer fed by pooling (gpool kind) decides for its input
 *   attnScores: fp32                 attention scores (q.k / sqrt(d)) stored before the softmax;
 *                                    the attention block's out_proj layer decides
 *   softmax: fp32                    attention probabilities stored after the softmax (out_proj)
 *   poolSum: fp32                    the pooling sums themselves: each add of a global-pooling or
 *                                    value-head pooling sum rounded, then the mean and the
 *                                    (sqrt(area) - 14) scalings (refs/kernels.h
 *                                    hc_pool_gpool_fmt); the layer reading the pooled values
 *                                    decides, as for pool
 *   normSum: fp32                    RMSNorm reductions: the sum of squares, the mean, eps, the
 *                                    sqrt and reciprocal in this format (hc_rmsnorm_pos_fmt);
 *                                    the RMSNorm layer itself decides (a transformer block's
 *                                    pre_ln, the trunk tip's RMSNorm)
 *   rules:                           applied in order; a later rule overrides what it sets
 *     - kind: matmul                 a layer kind (below), and/or
 *       layer: "rconv*.conv1"        an fnmatch(3) glob on the layer's name (both must match)
 *       when: {transformer: true, minTrunkChannels: 256, maxTrunkChannels: 319}
 *       storage: fp32                any of storage / weights / accum / winogradTiles / pool /
 *                                    attnScores / softmax / poolSum / normSum
 * Formats: fp32, fp16 (IEEE binary16), bf16 (bfloat16); accum: fp32 or fp16. Every value is
 * rounded to nearest even with overflow to inf (refs/round.h), never clamped.
 * Errors (unknown key, unknown format or kind, bad pattern, a rule that sets nothing or
 * matches nothing by construction) name file:line:col.
 *
 * Layer kinds (a layer has several; a rule's kind matches any of them):
 *   all          every layer, the input rows included
 *   input        the input rows (spatial, global and metadata features)
 *   conv         convolutions (after a residual conv: the trunk after the add)
 *   batchnorm    batch norm + activation
 *   residual     a block's output (the trunk after the block)
 *   gpool        layers fed by global pooling: gpool bias matmuls, pass logits, value v2..sv3
 *                (the pooled values themselves are not a layer of the engine: fp32)
 *   matmul       every matrix multiply (gpool biases, initial/metadata matmuls, attention
 *                projections, FFN linears, head matmuls)
 *   rmsnorm      RMSNorm outputs (transformer pre-norms, trunk tip RMSNorm)
 *   attn_q attn_k attn_v attn_out   attention projections (q/k after RoPE)
 *   ffn          FFN linear1 (after SwiGLU) and linear2
 *   trunk_tip    the trunk's final norm + activation
 *   trunk policy_head value_head meta_encoder transformer   where the layer is
 *
 * Built-in profiles are the YAML files of backends/profiles/, embedded in the binary:
 * hc_profile_load("fp16") finds one by name; anything with a '/' or ending in .yaml is read
 * as a file. */
#ifndef HC_PROFILE_H
#define HC_PROFILE_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/model/layers.h"
#include "harness/model/model.h"

enum hc_fmt { HC_FMT_FP32 = 0, HC_FMT_FP16 = 1, HC_FMT_BF16 = 2 };
const char *hc_fmt_str(int fmt); /* "fp32", "fp16", "bf16" */

typedef struct hc_prof_rule {
    unsigned kinds;       /* 0: any kind */
    char *pattern;        /* NULL: any name */
    int storage, weights, accum; /* enum hc_fmt, -1 when the rule leaves it */
    int tiles, pool, scores, probs; /* winogradTiles, pool, attnScores, softmax; -1 likewise */
    int pool_sum, norm_sum; /* poolSum, normSum; -1 likewise */
    int transformer;      /* -1 any, 0 convnets only, 1 nets with a transformer block */
    int min_trunk_c, max_trunk_c;
    char where[160];      /* "file:line:col" of the rule */
} hc_prof_rule;

typedef struct hc_profile {
    char *name, *description, *source; /* source: file path or "built-in" */
    int storage, weights, accum;
    int winograd_tiles; /* enum hc_fmt: HC_FMT_FP32 or HC_FMT_FP16 */
    int winograd;       /* output tile of 3x3 Winograd: 4 (F(4x4,3x3), default) or 2 */
    int pool, attn_scores, softmax; /* enum hc_fmt defaults (fp32 unless set) */
    int pool_sum, norm_sum;         /* poolSum, normSum (fp32 unless set) */
    int n_rules;
    hc_prof_rule *rules;
} hc_profile;

/* Parses a profile document; file names it in errors (and gives the default name). */
hc_profile *hc_profile_parse(const char *yaml, size_t len, const char *file, hc_err *err);
/* A built-in by name, or a file (a spec with '/' or ending in ".yaml"). */
hc_profile *hc_profile_load(const char *spec, hc_err *err);
void hc_profile_free(hc_profile *p);
/* The profile as YAML that hc_profile_parse reads back to the same settings (rule locations
 * aside); header: comment lines put first (NULL: none). *out is malloc'd, NUL-terminated. */
int hc_profile_format(const hc_profile *p, const char *header, char **out, size_t *len, hc_err *err);
/* hc_profile_format into path, atomically. */
int hc_profile_write(const hc_profile *p, const char *header, const char *path, hc_err *err);
/* A deep copy. */
hc_profile *hc_profile_clone(const hc_profile *p, hc_err *err);
/* Appends a rule (a deep copy of r; its where is kept). */
int hc_profile_add_rule(hc_profile *p, const hc_prof_rule *r, hc_err *err);
/* A glob matching exactly name (fnmatch metacharacters escaped), malloc'd. */
char *hc_profile_glob_literal(const char *name, hc_err *err);
/* The built-in profile names, NULL-terminated. */
const char *const *hc_profile_builtin_names(void);

/* What a profile gives one layer. */
typedef struct hc_prof_choice {
    int storage, weights, accum;
    int tiles, pool, scores, probs; /* winogradTiles, pool, attnScores, softmax */
    int pool_sum, norm_sum;         /* poolSum, normSum */
    int rule; /* index of the last rule that set anything, -1 for the defaults */
} hc_prof_choice;

/* Resolves the formats of a layer (its name and kinds) in net (for `when`). */
hc_prof_choice hc_profile_resolve(const hc_profile *p, const hc_net *net, const char *name, unsigned kinds);

#endif
