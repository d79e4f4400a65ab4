/* KataGo neural net model files (model versions 3-17, as KataGo v1.17.2's desc.cpp defines
 * them): a typed, read-only description of the graph with all its weights, a streaming reader
 * for the ".bin.gz" (text header + "@BIN@" little-endian float32 blocks) and ".txt.gz" (all
 * text) formats, gzip'd or plain, and a writer for both.
 *
 * Ownership: an hc_net owns every string and every float array reachable from it; hc_net_free
 * frees them all. The engine and the other modules only read a loaded net (a net is data: the
 * structs are public on purpose). Pointers into a net are valid until hc_net_free.
 *
 * Names: every layer keeps the full name token it has in the file (e.g.
 * "rconv3.conv1", "model.blocks.2.normactconvp.norm"); the layer kind is given by the
 * position in the struct, not by the name.
 *
 * Absent optional layers (e.g. the pass MLP of versions < 15, the SwiGLU gate when unused, the
 * trunk tip RMSNorm of a batchnorm trunk) are zeroed: name NULL, counts 0, arrays NULL.
 *
 * Raw vs folded: hc_net_load returns the values in the file. KataGo's loader then folds
 * batchnorm factors into neighbouring layers (hc_net_reduce_activations below); an engine
 * that wants KataGo's exact rounding calls it on its own loaded copy.
 *
 * Strictness: everything KataGo's parser refuses is refused (same checks, located). Also
 * refused, where KataGo would misread or fail later: input channel counts that differ from the
 * version's feature set (KataGo's backends assert on them), numbers with trailing junk
 * ("12abc"), a "@BIN@" block not followed by whitespace (the declared shape does not match
 * the data; KataGo's exporter always ends a block with a newline), non-whitespace after the
 * value head, and the sanity limits below. Accepted where KataGo would not: binary blocks in
 * a file named .txt.gz (the float encoding is detected, not taken from the name).
 */
#ifndef HC_MODEL_H
#define HC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"
#include "harness/base/stream.h"

#define HC_MODEL_VERSION_MIN 3
#define HC_MODEL_VERSION_MAX 17

/* Sanity limits, checked before anything is allocated (HC_ELIMIT names the limit). */
#define HC_MODEL_MAX_CHANNELS 8192     /* any channel count of any layer */
#define HC_MODEL_MAX_BLOCKS 1024       /* blocks in one stack (trunk or a nested bottleneck) */
#define HC_MODEL_MAX_NESTING 8         /* nested-bottleneck depth */
#define HC_MODEL_MAX_KERNEL 15         /* conv kernel height/width */
#define HC_MODEL_MAX_DILATION 64
#define HC_MODEL_MAX_HEADS 1024        /* attention heads, and head dims */
#define HC_MODEL_MAX_NAME 4096         /* bytes in one name token */
#define HC_MODEL_MAX_LAYER_FLOATS (64u * 1024 * 1024) /* floats in one layer (256 MiB; b28c512 needs 2.4M) */

/* Activation kinds; the numbers are KataGo's (activations.h). Files of version >= 11 name
 * them ACTIVATION_IDENTITY/RELU/MISH/SILU; older files imply RELU. MISH_SCALE8
 * (x*tanh(softplus(8x))) never appears in a file: it exists for scale-8 transforms. */
typedef enum hc_act {
    HC_ACT_IDENTITY = 0,
    HC_ACT_RELU = 1,
    HC_ACT_MISH = 2,
    HC_ACT_SILU = 3,
    HC_ACT_MISH_SCALE8 = 12
} hc_act;

/* "identity", "relu", "mish", "silu", "mish_scale8", or "?" */
const char *hc_act_str(int act);

typedef struct hc_conv {
    char *name;
    int ky, kx;          /* kernel height, width (odd, >= 1) */
    int in_c, out_c;
    int dil_y, dil_x;    /* dilation (>= 1) */
    /* [out_c][in_c][ky][kx], x fastest: KataGo's in-memory ConvLayerDesc layout. (The file
     * stores y, x, in, out with out fastest; the reader transposes.) */
    float *w;
} hc_conv;

typedef struct hc_bn {
    char *name;
    int c;
    float eps;
    int has_scale, has_bias;
    /* Raw parameters as in the file; scale is all 1 when !has_scale, bias all 0 when !has_bias
     * (KataGo fills them the same way). */
    float *mean, *var, *scale, *bias;
    /* What the forward pass uses, y = x * merged_scale + merged_bias, computed in float as
     * KataGo's computeMerged does: merged_scale = scale / sqrtf(var + eps),
     * merged_bias = bias - merged_scale * mean. */
    float *merged_scale, *merged_bias;
} hc_bn;

typedef struct hc_activation {
    char *name;          /* NULL when the layer is absent from the file */
    hc_act kind;
} hc_activation;

typedef struct hc_matmul {
    char *name;
    int in_c, out_c;
    float *w;            /* [in_c][out_c], out fastest (file order, KataGo's layout) */
} hc_matmul;

typedef struct hc_matbias {
    char *name;
    int c;
    float *w;            /* [c] */
} hc_matbias;

/* Trunk tip RMSNorm (trunk norm kind 1): y = x / sqrt(mean(x^2) + eps) * gamma + beta, over
 * channels per position (spatial == 0) or over channels and board positions (spatial != 0).
 * cgroup_size is always 0 (KataGo refuses grouped RMSNorm). */
typedef struct hc_rmsnorm {
    char *name;
    int c;
    float eps;
    int spatial;
    int cgroup_size;
    float *gamma, *beta; /* [c] */
} hc_rmsnorm;

/* RMSNorm inside transformer blocks: weight only, per position. */
typedef struct hc_tf_rmsnorm {
    char *name;
    int c;
    float eps;
    float *weight;       /* [c] */
} hc_tf_rmsnorm;

/* Block kinds; the numbers are KataGo's (desc.h). File tokens: ordinary_block, gpool_block,
 * nested_bottleneck_block, transformer_attention_block, transformer_ffn_block. */
typedef enum hc_block_kind {
    HC_BLOCK_ORDINARY = 0,
    HC_BLOCK_GPOOL = 2,
    HC_BLOCK_NESTED_BOTTLENECK = 3,
    HC_BLOCK_ATTENTION = 4,
    HC_BLOCK_FFN = 5
} hc_block_kind;

const char *hc_block_kind_str(int kind); /* the file token, or "?" */

typedef struct hc_block hc_block;

/* x + final_conv(mid_act(mid_bn(regular_conv(pre_act(pre_bn(x)))))) */
typedef struct hc_res_block {
    hc_bn pre_bn;
    hc_activation pre_act;
    hc_conv regular_conv;
    hc_bn mid_bn;
    hc_activation mid_act;
    hc_conv final_conv;
} hc_res_block;

/* Like ordinary, plus a gpool branch: gpool_conv -> gpool_bn -> gpool_act -> pooled
 * (3*gpool channels) -> gpool_to_bias_mul, added per channel to regular_conv's output. */
typedef struct hc_gpool_block {
    hc_bn pre_bn;
    hc_activation pre_act;
    hc_conv regular_conv;
    hc_conv gpool_conv;
    hc_bn gpool_bn;
    hc_activation gpool_act;
    hc_matmul gpool_to_bias_mul;
    hc_bn mid_bn;
    hc_activation mid_act;
    hc_conv final_conv;
} hc_gpool_block;

/* x + post_conv(post_act(post_bn(STACK(pre_conv(pre_act(pre_bn(x))))))), where STACK runs
 * blocks[0..num_blocks) (any kind, recursively) at pre_conv.out_c channels. */
typedef struct hc_nbt_block {
    int num_blocks;
    hc_bn pre_bn;
    hc_activation pre_act;
    hc_conv pre_conv;
    hc_block *blocks;    /* [num_blocks] */
    hc_bn post_bn;
    hc_activation post_act;
    hc_conv post_conv;
} hc_nbt_block;

/* Pre-norm attention block, residual added by the caller's stack:
 * x + out_proj(attention(rope(q_proj(h)), rope(k_proj(h)), v_proj(h))), h = pre_ln(x).
 * Heads: num_heads query heads, num_kv_heads key/value heads (GQA: num_heads % num_kv_heads
 * == 0), q/k head dim q_head_dim, v head dim v_head_dim. RoPE rotates interleaved channel
 * pairs (2p, 2p+1) of q and k. Learnable RoPE: rope_freqs[(h*rope_num_pairs+p)*2 + {0:x,1:y}]
 * per kv head h; fixed RoPE: rope_theta, first half of the pairs rotate by y, the rest by x
 * (see desc.cpp computeRopeCosSin). */
typedef struct hc_attn_block {
    int num_heads, num_kv_heads;
    int q_head_dim, v_head_dim;
    int use_rope, learnable_rope;
    hc_tf_rmsnorm pre_ln;
    hc_matmul q_proj, k_proj, v_proj, out_proj;
    char *rope_param_name;   /* name token before the RoPE parameters (NULL without RoPE) */
    int rope_num_kv_heads, rope_num_pairs;  /* learnable only */
    float *rope_freqs;       /* learnable only: [rope_num_kv_heads][rope_num_pairs][2] */
    float rope_theta;        /* fixed only */
} hc_attn_block;

/* Pre-norm FFN block: x + linear2(silu(linear1(h)) * linear_gate(h)), h = pre_ln(x) (SwiGLU).
 * The file format allows use_swiglu == 0 (no gate), which KataGo's eigen backend refuses;
 * the reader accepts it, the engine may refuse it. */
typedef struct hc_ffn_block {
    int c, ffn_c;
    int use_swiglu;
    hc_tf_rmsnorm pre_ln;
    hc_matmul linear1;
    hc_matmul linear_gate;   /* zeroed when !use_swiglu */
    hc_matmul linear2;
} hc_ffn_block;

struct hc_block {
    hc_block_kind kind;
    char *name;
    union {
        hc_res_block ordinary;     /* HC_BLOCK_ORDINARY */
        hc_gpool_block gpool;      /* HC_BLOCK_GPOOL */
        hc_nbt_block nbt;          /* HC_BLOCK_NESTED_BOTTLENECK */
        hc_attn_block attn;        /* HC_BLOCK_ATTENTION */
        hc_ffn_block ffn;          /* HC_BLOCK_FFN */
    };
};

/* SGF metadata encoder (version >= 15 with meta_encoder_version 1): meta input row
 * (num_input_c = 192) -> mul1 + bias1 -> act1 -> mul2 + bias2 -> act2 -> mul3 (trunk
 * channels), added to the trunk after the initial conv and matmul. */
typedef struct hc_meta_encoder {
    char *name;
    int version;
    int num_input_c;
    hc_matmul mul1;
    hc_matbias bias1;
    hc_activation act1;
    hc_matmul mul2;
    hc_matbias bias2;
    hc_activation act2;
    hc_matmul mul3;
} hc_meta_encoder;

enum { HC_TRUNK_NORM_BN = 0, HC_TRUNK_NORM_RMSNORM = 1 };

typedef struct hc_trunk {
    char *name;
    int num_blocks;
    int trunk_c;
    /* Header fields KataGo reads but no longer relies on (kept for round trips). */
    int mid_c, regular_c, dilated_c, gpool_c;
    int norm_kind;           /* HC_TRUNK_NORM_*; always BN before version 15 */
    hc_conv initial_conv;    /* spatial inputs -> trunk_c */
    hc_matmul initial_matmul;/* global inputs -> trunk_c, added per channel */
    int has_meta_encoder;
    hc_meta_encoder meta;    /* zeroed unless has_meta_encoder */
    hc_block *blocks;        /* [num_blocks] */
    hc_bn tip_bn;            /* norm_kind == BN */
    hc_rmsnorm tip_rmsnorm;  /* norm_kind == RMSNORM */
    hc_activation tip_act;
} hc_trunk;

typedef struct hc_policy_head {
    char *name;
    int policy_out_c;        /* 1 (v<12), 2 (v12-15, v17), 4 (v16, v17) */
    hc_conv p1_conv;
    hc_conv g1_conv;
    hc_bn g1_bn;
    hc_activation g1_act;
    hc_matmul gpool_to_bias_mul;
    hc_bn p1_bn;
    hc_activation p1_act;
    hc_conv p2_conv;
    /* Pass logits: before v15, gpool_to_pass_mul maps pooled g1 (3*g1 channels) straight to
     * policy_out_c; from v15, gpool_to_pass_mul -> gpool_to_pass_bias -> pass_act ->
     * gpool_to_pass_mul2 -> policy_out_c (has_pass_mlp). */
    hc_matmul gpool_to_pass_mul;
    int has_pass_mlp;
    hc_matbias gpool_to_pass_bias;
    hc_activation pass_act;
    hc_matmul gpool_to_pass_mul2;
} hc_policy_head;

typedef struct hc_value_head {
    char *name;
    hc_conv v1_conv;
    hc_bn v1_bn;
    hc_activation v1_act;
    hc_matmul v2_mul;
    hc_matbias v2_bias;
    hc_activation v2_act;
    hc_matmul v3_mul;        /* -> 3 (win, loss, no result logits) */
    hc_matbias v3_bias;
    hc_matmul sv3_mul;       /* -> num_score_value_c: 1 (v3), 2 (v4-7), 4 (v8), 6 (v9+) */
    hc_matbias sv3_bias;
    hc_conv ownership_conv;  /* -> 1 */
} hc_value_head;

/* Output post-processing constants (ModelPostProcessParams). Read from the file for
 * version >= 13; KataGo's defaults otherwise (20, 20, 20, 20, 40, 0.25, 30, 1). */
typedef struct hc_postprocess {
    double td_score_multiplier;
    double score_mean_multiplier;
    double score_stdev_multiplier;
    double lead_multiplier;
    double variance_time_multiplier;
    double shortterm_value_error_multiplier;
    double shortterm_score_error_multiplier;
    float output_scale_multiplier; /* never in the file; 1 unless a scale-8 transform ran */
} hc_postprocess;

/* KataGo's defaults, for files that do not store the constants (versions below 13). Sets the
 * fields one by one, so the padding of a zeroed struct stays zero (tests compare with memcmp). */
void hc_postprocess_set_defaults(hc_postprocess *pp);

typedef struct hc_net {
    char *name;                  /* the model name token */
    int model_version;           /* 3..17 */
    int input_version;           /* NNInputs V3..V7 this version consumes */
    int num_input_c;             /* spatial input channels (header; checked against the version) */
    int num_input_global_c;
    int num_input_meta_c;        /* 0, or 192 with a metadata encoder */
    int meta_encoder_version;    /* 0 or 1 */
    int prefer_pass_alive_under_suicide; /* v15+ header flag, else 0 */
    int binary_floats;           /* 1: file used @BIN@ blocks, 0: text floats */

    /* Derived from the heads, as KataGo's ModelDesc does. */
    int num_policy_c;            /* policy.policy_out_c */
    int num_value_c;             /* 3 */
    int num_score_value_c;       /* value.sv3_mul.out_c */
    int num_ownership_c;         /* 1 */

    hc_postprocess post;
    hc_trunk trunk;
    hc_policy_head policy;
    hc_value_head value;

    /* Totals over every float array the file stores (merged BN arrays excluded). */
    int64_t num_floats;
    int64_t num_params;          /* KataGo's getNumParameters: BN counts scale/bias only */
} hc_net;

/* Loads a model file: ".bin.gz", ".txt.gz", ".bin", ".txt" or ".gz"; gzip is detected from the
 * content, and binary vs text floats from the first weight block. Streams the file: peak
 * memory is the weights plus a bounded buffer. Returns NULL and fills err (HC_EIO, HC_EFORMAT
 * with file, byte offset, layer and field; HC_ELIMIT; HC_ENOMEM). */
hc_net *hc_net_load(const char *path, hc_err *err);
/* The same from a stream the caller owns (closed by the caller). */
hc_net *hc_net_read(hc_istream *in, hc_err *err);
void hc_net_free(hc_net *net);

/* What the start of a file says about it, without reading the weights: KataGo's loader (the
 * specification) reads a model name token, then the model version, then the spatial and global
 * input channel counts; a file whose first four tokens are not that, for a supported version
 * (HC_MODEL_VERSION_MIN..MAX) and its feature counts, is no model halfcheck or KataGo v1.17.2
 * loads. A sniff that says "model" is no promise that the rest loads (hc_net_load says). */
enum { HC_MODEL_SNIFF_BYTES = 4096 }; /* the header's tokens fit well within this */
typedef struct hc_model_sniff {
    int is_model;      /* 1: starts as a model of a supported version does */
    int version;       /* the model version (also one out of range, then !is_model), else 0 */
    char name[97];     /* the model name token when version is set, else "" */
    char why[240];     /* when !is_model: why not, e.g. "not a model: it starts with \"These are\"" */
} hc_model_sniff;
/* Sniffs the first HC_MODEL_SNIFF_BYTES (decompressed when gzip'd) of path. A file that
 * cannot be opened is -1 with err; anything that can be opened is 0, with out saying what it
 * is: a gzip stream that breaks off or does not decompress is "not a model" (its why saying
 * so) unless a model's whole header came before the break (then a model hc_net_load refuses). */
int hc_model_sniff_file(const char *path, hc_model_sniff *out, hc_err *err);
/* The same on the first len bytes of a file's (decompressed) content; len below
 * HC_MODEL_SNIFF_BYTES is the whole file. */
void hc_model_sniff_mem(const void *data, size_t len, hc_model_sniff *out);

/* Writes net to path atomically, with "@BIN@" float blocks when binary, else text floats
 * (printed with enough digits to read back bit-exactly), gzip'd when path ends in ".gz".
 * Only fields stored in a file are written (merged BN arrays are recomputed on load). */
int hc_net_write(const hc_net *net, const char *path, int binary, hc_err *err);

/* Sets the counts "derived from the heads" (num_policy_c ... num_ownership_c) from the heads. */
void hc_net_derive_head_counts(hc_net *net);

/* KataGo's feature-set facts for a model version (-1 for unsupported versions). */
int hc_model_input_version(int model_version);
int hc_model_num_spatial_features(int model_version);
int hc_model_num_global_features(int model_version);

/* True if KataGo would honour a nonzero policy optimism with this net: it needs a second
 * (optimistic) policy channel, and KataGo forces optimism to 0 for nets with metadata input. */
int hc_net_supports_policy_optimism(const hc_net *net);
int hc_net_has_transformer(const hc_net *net); /* any attention/FFN block, at any depth */

/* Applies KataGo's transformToReduceActivations (what ModelDesc::loadFromFileMaybeGZipped does
 * after parsing, so what KataGo's eigen backend computes with): folds batchnorm factors with
 * |merged_scale| < 1 into the preceding conv/matmul output channels. Mathematically a no-op,
 * it changes the float rounding; apply it to match KataGo bit-for-bit as closely as possible.
 * Modifies merged_scale/merged_bias, mean, var, scale, bias, eps and conv/matmul weights.
 * Requires every channel count <= HC_MODEL_MAX_CHANNELS (true of any net hc_net_load returns). */
void hc_net_reduce_activations(hc_net *net);

#endif
