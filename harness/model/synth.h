/* Synthetic KataGo models: random-weight nets of any model version (3-17) and any architecture
 * the format can describe, built in memory as an hc_net (model.h) from a small description,
 * deterministically from a seed. They exist to test arithmetic and format coverage where no
 * trained net is available (nested bottlenecks, transformers, metadata encoders, old versions).
 *
 * Weights are scaled so that a forward pass stays in a useful range: fan-in initialisation,
 * batchnorm statistics that follow an estimate of the running variance of the residual
 * stream, residual branches scaled down, and head gains chosen so that the policy is neither
 * uniform nor one-hot and the value is not saturated (tests/test_synth.c measures this).
 *
 * The net is built directly; it is written through hc_net_write and read back through
 * hc_net_load, which stay the only writer and reader of the format. */
#ifndef HC_SYNTH_H
#define HC_SYNTH_H

#include <stdint.h>

#include "harness/base/err.h"
#include "harness/model/model.h"

enum { HC_SYNTH_ROPE_NONE = 0, HC_SYNTH_ROPE_FIXED = 1, HC_SYNTH_ROPE_LEARNABLE = 2 };

enum { HC_SYNTH_BLOCKS_MAX = 1024, HC_SYNTH_NAME_MAX = 96 };

/* An architecture. Integer widths of 0 mean "the default derived from trunk_c"; see
 * hc_synth_spec_default for the rest.
 *
 * blocks: a comma-separated list of block kinds, each optionally repeated with "*N":
 *   res (or ordinary)   ordinary residual block (two kernel x kernel convs)
 *   gpool               residual block with a global-pooling branch
 *   nbt(LIST)           nested bottleneck: 1x1 conv down to bottleneck_c, LIST, 1x1 conv up;
 *                       plain "nbt" means nbt(res,res)
 *   attn                transformer attention block (pre-RMSNorm, GQA heads, optional RoPE)
 *   ffn                 transformer SwiGLU feed-forward block
 * e.g. "res,gpool,nbt(res,gpool)*2,attn,ffn". */
typedef struct hc_synth_spec {
    char name[HC_SYNTH_NAME_MAX + 1]; /* model name; "" derives "synth-vN-SPEC-sSEED" */
    int version;                      /* model version 3..17 */
    uint64_t seed;
    int trunk_c;                      /* trunk channels */
    char blocks[HC_SYNTH_BLOCKS_MAX]; /* block list, above */
    int mid_c;                        /* inner conv channels of trunk-level res/gpool blocks (0: trunk_c) */
    int bottleneck_c;                 /* nbt inner channels (0: trunk_c / 2) */
    int gpool_c;                      /* gpool branch channels (0: trunk_c / 4, at least 2) */
    int num_heads, num_kv_heads;      /* attention heads (0: 2 and num_heads) */
    int q_head_dim, v_head_dim;       /* (0: trunk_c / num_heads rounded down to even, and q_head_dim) */
    int rope;                         /* HC_SYNTH_ROPE_* */
    float rope_theta;                 /* fixed RoPE base (0: 100) */
    int ffn_c;                        /* FFN hidden channels (0: 2 * trunk_c) */
    int act;                          /* hc_act of every activation layer; -1: relu below version 11, else mish */
    int pass_act;                     /* v15+ pass MLP activation; -1: as act */
    int tip;                          /* HC_TRUNK_NORM_BN or HC_TRUNK_NORM_RMSNORM (version >= 15) */
    int tip_rms_spatial;              /* RMSNorm tip over board positions too */
    int meta;                         /* SGF metadata encoder (version >= 15) */
    int meta_c;                       /* metadata encoder hidden channels (0: trunk_c) */
    int policy_c;                     /* version 17 only: 2 or 4 (0: 4); fixed by the version otherwise */
    int p1_c, g1_c, v1_c, v2_c;       /* head widths (0: derived from trunk_c) */
    int pass_c;                       /* v15+ pass MLP hidden channels (0: p1_c) */
    int input_kernel;                 /* initial conv kernel (0: 5) */
    int kernel;                       /* block conv kernel (0: 3) */
    int vary_bn;                      /* random has_scale/has_bias/eps per batchnorm (as older nets have) */
    int symmetric;                    /* every conv kernel invariant under the 8 board symmetries */
    int prefer_pass_alive;            /* v15+ header flag (0 or 1) */
} hc_synth_spec;

/* Fills s with a small default net (version 17, trunk 16, "res,gpool", seed 1). */
void hc_synth_spec_default(hc_synth_spec *s);

/* Named presets ("b6c96", "b18c384nbt", "b7c96h3tfrs", "humanv0", "v5", ...): fills s (after
 * hc_synth_spec_default) or fails with HC_EUSAGE listing the names. */
int hc_synth_preset(const char *name, hc_synth_spec *s, hc_err *err);
/* The i-th preset name and a one-line description, or NULL past the end. */
const char *hc_synth_preset_name(int i, const char **description);

/* Checks the spec against what the version's format can hold (activations before v11,
 * metadata encoder and RMSNorm tip before v15, policy channels, head dims) without building. */
int hc_synth_check(const hc_synth_spec *s, hc_err *err);

/* Builds the net. The result owns everything (free with hc_net_free) and has every field a
 * loaded net has (merged batchnorm arrays, derived counts, post-process constants, float and
 * parameter totals); binary_floats is 1. NULL with err (HC_EUSAGE for a bad spec, HC_ENOMEM). */
hc_net *hc_synth_net(const hc_synth_spec *s, hc_err *err);

/* hc_synth_net, then hc_net_write to path (binary floats when binary != 0). */
int hc_synth_write(const hc_synth_spec *s, const char *path, int binary, hc_err *err);

/* Replaces every conv kernel of net by its average over the 8 dihedral transforms (square
 * kernels only; the merged batchnorm arrays are unaffected). A net without position-dependent
 * layers (RoPE) is then equivariant under the board symmetries. */
void hc_synth_symmetrize(hc_net *net);

#endif
