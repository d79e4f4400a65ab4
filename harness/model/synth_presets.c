/* The named synthetic-net presets (`halfcheck synth-net`, `halfcheck demo --preset`): each a spec from one table row. */
#include "harness/model/synth.h"

#include <stdio.h>
#include <string.h>

/* ---- presets ---- */

typedef struct preset {
    const char *name;
    const char *desc;
    int version;
    int trunk_c, mid_c, bottleneck_c, gpool_c;
    const char *blocks;
    int act; /* -1: the version's default */
    int heads, kv_heads, qdim, vdim, rope, ffn_c;
    int tip, meta, meta_c;
    int p1_c, g1_c, v1_c, v2_c, pass_c, pass_act;
    int policy_c;
} preset;

#define NBT18 "(nbt,nbt,nbt(gpool,res))*6"

static const preset presets[] = {
    {"b6c96", "version 8 convnet like g170 b6c96: 6 blocks (2 gpool), 96 channels, relu", 8, 96, 96, 0, 32,
     "res,res,gpool,res,gpool,res", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 32, 32, 64, 0, -1, 0},
    {"b10c128", "version 10 convnet: 10 blocks (3 gpool), 128 channels, relu", 10, 128, 128, 0, 32,
     "res*3,gpool,res*2,gpool,res*2,gpool", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 32, 32, 64, 0, -1, 0},
    {"b18c384nbt", "version 14 nested-bottleneck convnet like kata1 b18c384nbt, mish", 14, 384, 384, 192, 64, NBT18,
     -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 32, 32, 64, 0, -1, 0},
    {"b28c512nbt", "version 15 nested-bottleneck convnet like kata1 b28c512nbt, mish, pass MLP", 15, 512, 512, 256, 64,
     "(nbt,nbt,nbt(gpool,res))*9,nbt", -1, 0, 0, 0, 0, 0, 0, 0, 0,
     0, 64, 64, 96, 128, 64, -1, 0},
    {"humanv0", "version 15 human-SL b18c384nbt with the SGF metadata encoder", 15, 384, 384, 192, 64, NBT18, -1, 0, 0,
     0, 0, 0, 0, 0, 1, 384, 64, 64, 96, 128, 64, -1, 0},
    {"b5c192nbt", "version 16 nested-bottleneck convnet, 4 policy channels", 16, 192, 192, 96, 32,
     "nbt,nbt(gpool,res),nbt,nbt(gpool,res),nbt", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 32, 32, 64, 0, -1, 0},
    {"b7c96h3tfrs", "version 17 transformer like b7c96h3tfrs: 7 x (attn, ffn), 3 heads, fixed RoPE, RMSNorm tip", 17,
     96, 96, 0, 32, "(attn,ffn)*7", HC_ACT_SILU, 3, 3, 32, 32,
     HC_SYNTH_ROPE_FIXED, 256, HC_TRUNK_NORM_RMSNORM, 0, 0, 32, 32, 32, 64, 32, -1, 4},
    {"b7c96h6kv3", "version 17 transformer: GQA 6/3 heads, qk 32, v 16, learnable RoPE, batchnorm tip", 17, 96, 96, 0,
     32, "(attn,ffn)*7", HC_ACT_SILU, 6, 3, 32, 16,
     HC_SYNTH_ROPE_LEARNABLE, 256, HC_TRUNK_NORM_BN, 0, 0, 32, 32, 32, 64, 32, -1, 4},
    {"b4c256h4nbttflrs", "version 17 nested bottlenecks of transformer blocks, 4 heads, learnable RoPE", 17, 256, 256,
     128, 32, "nbt(attn,ffn)*4", HC_ACT_SILU, 4, 4, 32, 32, HC_SYNTH_ROPE_LEARNABLE, 256, HC_TRUNK_NORM_RMSNORM, 0, 0,
     48, 32, 48, 96, 48, -1, 4},
    {"v3", "tiny version 3 convnet (V3 inputs, 1 score channel)", 3, 16, 0, 0, 0, "res,gpool,res", -1, 0, 0, 0, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0},
    {"v5", "tiny version 5 convnet (V4 inputs: 13 spatial, 12 global)", 5, 16, 0, 0, 0, "res,gpool,res", -1, 0, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0},
    {"v7", "tiny version 7 convnet (V6 inputs)", 7, 16, 0, 0, 0, "res,gpool,res", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
     0, 0, 0, -1, 0},
    {"v11nbt", "tiny version 11 nested bottleneck, mish", 11, 24, 0, 12, 0, "nbt(res,gpool),nbt", -1, 0, 0, 0, 0, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, -1, 0},
    {"v15meta", "tiny version 15 net with the metadata encoder", 15, 24, 0, 12, 0, "nbt(gpool,res),res", -1, 0, 0, 0, 0,
     0, 0, 0, 1, 16, 0, 0, 0, 0, 0, HC_ACT_IDENTITY, 0},
    {"v17tf", "tiny version 17 mixed net: nbt, attention with learnable RoPE, ffn, RMSNorm tip", 17, 24, 0, 12, 0,
     "res,nbt(attn,ffn),gpool,attn,ffn", HC_ACT_SILU, 4, 2, 6, 4, HC_SYNTH_ROPE_LEARNABLE, 32, HC_TRUNK_NORM_RMSNORM,
     0, 0, 0, 0, 0, 0, 0, -1, 4},
};

const char *hc_synth_preset_name(int i, const char **description)
{
    if (i < 0 || i >= (int)(sizeof presets / sizeof presets[0]))
        return NULL;
    if (description)
        *description = presets[i].desc;
    return presets[i].name;
}

int hc_synth_preset(const char *name, hc_synth_spec *s, hc_err *err)
{
    int n = (int)(sizeof presets / sizeof presets[0]);
    for (int i = 0; i < n; i++) {
        const preset *p = &presets[i];
        if (strcmp(p->name, name) != 0)
            continue;
        hc_synth_spec_default(s);
        s->version = p->version;
        s->trunk_c = p->trunk_c;
        s->mid_c = p->mid_c;
        s->bottleneck_c = p->bottleneck_c;
        s->gpool_c = p->gpool_c;
        snprintf(s->blocks, sizeof s->blocks, "%s", p->blocks);
        s->act = p->act;
        s->num_heads = p->heads;
        s->num_kv_heads = p->kv_heads;
        s->q_head_dim = p->qdim;
        s->v_head_dim = p->vdim;
        s->rope = p->rope;
        s->ffn_c = p->ffn_c;
        s->tip = p->tip;
        s->meta = p->meta;
        s->meta_c = p->meta_c;
        s->p1_c = p->p1_c;
        s->g1_c = p->g1_c;
        s->v1_c = p->v1_c;
        s->v2_c = p->v2_c;
        s->pass_c = p->pass_c;
        s->pass_act = p->pass_act;
        s->policy_c = p->policy_c;
        snprintf(s->name, sizeof s->name, "synth-%s", p->name);
        return 0;
    }
    char names[1024] = "";
    for (int i = 0; i < n; i++) {
        strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, presets[i].name, sizeof names - strlen(names) - 1);
    }
    return hc_err_set(err, HC_EUSAGE, "unknown preset \"%s\" (known: %s)", name, names);
}
