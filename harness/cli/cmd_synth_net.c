/* halfcheck synth-net: writes a random-weight KataGo model of any version and architecture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/model/synth.h"

static const cli_opt opts[] = {
    {"arch", 1, 0, "a preset name (see --list) or a block list, e.g. \"res,gpool,nbt(res,gpool)*2,(attn,ffn)*2\"", "ARCH"},
    {"version", 1, 0, "model version 3..17 (default 17, or the preset's)", "N"},
    {"seed", 1, 0, "random seed (default 1)", "N"},
    {"out", 1, 0, "model file to write: .bin.gz/.bin (binary floats) or .txt.gz/.txt (text floats)", "PATH"},
    {"name", 1, 0, "model name (letters, digits, '_', '-')", "NAME"},
    {"channels", 1, 0, "trunk channels", "N"},
    {"mid", 1, 0, "inner channels of trunk-level res/gpool blocks", "N"},
    {"bottleneck", 1, 0, "nested-bottleneck inner channels", "N"},
    {"gpool", 1, 0, "global-pooling branch channels", "N"},
    {"heads", 1, 0, "attention heads", "N"},
    {"kv-heads", 1, 0, "attention key/value heads (divides --heads)", "N"},
    {"qdim", 1, 0, "query/key head dim", "N"},
    {"vdim", 1, 0, "value head dim", "N"},
    {"rope", 1, 0, "none, fixed or learnable", "none|fixed|learnable"},
    {"rope-theta", 1, 0, "fixed RoPE base", "X"},
    {"ffn", 1, 0, "FFN hidden channels", "N"},
    {"act", 1, 0, "relu, mish, silu or identity (versions < 11: relu only)", "ACT"},
    {"pass-act", 1, 0, "activation of the v15+ pass MLP", "ACT"},
    {"tip", 1, 0, "trunk tip norm: bn or rmsnorm (v15+)", "bn|rmsnorm"},
    {"tip-spatial", 0, 0, "RMSNorm tip over board positions too", NULL},
    {"meta", 0, 0, "SGF metadata encoder (v15+)", NULL},
    {"meta-c", 1, 0, "metadata encoder hidden channels", "N"},
    {"policy-c", 1, 0, "policy channels (version 17: 2 or 4)", "N"},
    {"p1", 1, 0, "policy head p1 channels", "N"},
    {"g1", 1, 0, "policy head g1 channels", "N"},
    {"v1", 1, 0, "value head v1 channels", "N"},
    {"v2", 1, 0, "value head v2 channels", "N"},
    {"pass-c", 1, 0, "pass MLP hidden channels (v15+)", "N"},
    {"input-kernel", 1, 0, "initial conv kernel (odd, default 5)", "N"},
    {"kernel", 1, 0, "block conv kernel (odd, default 3)", "N"},
    {"plain-bn", 0, 0, "every batchnorm with scale and bias and the version's epsilon (default: varied)", NULL},
    {"symmetric", 0, 0, "conv kernels invariant under the 8 board symmetries", NULL},
    {"prefer-pass-alive", 0, 0, "set the v15+ preferPassAliveUnderSuicideRules header flag", NULL},
    {"list", 0, 0, "list the presets", NULL},
    {"help", 0, 0, "show this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

static int parse_act(const char *s, int *out, hc_err *err)
{
    static const char *const names[] = {"identity", "relu", "mish", "silu"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i; /* the hc_act numbers */
            return 0;
        }
    return hc_err_set(err, HC_EUSAGE, "unknown activation \"%s\" (relu, mish, silu, identity)", s);
}

static int opt_int(const cli_args *a, const char *name, int *field, hc_err *err)
{
    if (!cli_has(a, name))
        return 0;
    return cli_get_int(a, name, *field, field, err);
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

int cmd_synth_net(int argc, char **argv)
{
    hc_err err = {0};
    cli_args a;
    static const cli_cmd usage = {"synth-net", opts,
        "usage: halfcheck synth-net [--arch PRESET|BLOCKS] [--version N] [--seed S] --out FILE.bin.gz|FILE.txt.gz\n\n"
        "Writes a random-weight KataGo model (seeded, deterministic) that halfcheck and KataGo can load.\n"
        "Block list: res, gpool, nbt(LIST) (plain nbt = nbt(res,res)), attn, ffn; ITEM*N repeats,\n"
        "(LIST)*N repeats a group. Options override the preset's values.\n\noptions:\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    if (cli_has(&a, "list")) {
        const char *desc;
        for (int i = 0; hc_synth_preset_name(i, &desc); i++)
            printf("  %-18s %s\n", hc_synth_preset_name(i, NULL), desc);
        return HC_EXIT_OK;
    }
    if (a.n_pos > 0) {
        hc_err_set(&err, HC_EUSAGE, "unexpected argument \"%s\"", a.pos[0]);
        return cli_fail("synth-net", &err);
    }
    const char *out = cli_require(&a, "out", &err);
    if (!out)
        return cli_fail("synth-net", &err);
    hc_synth_spec s;
    hc_synth_spec_default(&s);
    const char *arch = cli_get(&a, "arch", NULL);
    if (arch) {
        int is_preset = 0;
        for (int i = 0; hc_synth_preset_name(i, NULL); i++)
            if (strcmp(hc_synth_preset_name(i, NULL), arch) == 0)
                is_preset = 1;
        if (is_preset) {
            if (hc_synth_preset(arch, &s, &err) != 0)
                return cli_fail("synth-net", &err);
        } else if (strlen(arch) >= sizeof s.blocks) {
            hc_err_set(&err, HC_EUSAGE, "--arch: block list too long");
            return cli_fail("synth-net", &err);
        } else {
            snprintf(s.blocks, sizeof s.blocks, "%s", arch);
        }
    }
    const char *v;
    if ((v = cli_get(&a, "seed", NULL))) {
        char *end;
        unsigned long long seed = strtoull(v, &end, 0);
        if (end == v || *end) {
            hc_err_set(&err, HC_EUSAGE, "--seed: \"%s\" is not an integer", v);
            return cli_fail("synth-net", &err);
        }
        s.seed = seed;
    }
    if ((v = cli_get(&a, "name", NULL))) {
        if (strlen(v) > HC_SYNTH_NAME_MAX) {
            hc_err_set(&err, HC_EUSAGE, "--name: longer than %d characters", HC_SYNTH_NAME_MAX);
            return cli_fail("synth-net", &err);
        }
        snprintf(s.name, sizeof s.name, "%s", v);
    }
    if (opt_int(&a, "version", &s.version, &err) || opt_int(&a, "channels", &s.trunk_c, &err) ||
        opt_int(&a, "mid", &s.mid_c, &err) || opt_int(&a, "bottleneck", &s.bottleneck_c, &err) ||
        opt_int(&a, "gpool", &s.gpool_c, &err) || opt_int(&a, "heads", &s.num_heads, &err) ||
        opt_int(&a, "kv-heads", &s.num_kv_heads, &err) || opt_int(&a, "qdim", &s.q_head_dim, &err) ||
        opt_int(&a, "vdim", &s.v_head_dim, &err) || opt_int(&a, "ffn", &s.ffn_c, &err) ||
        opt_int(&a, "meta-c", &s.meta_c, &err) || opt_int(&a, "policy-c", &s.policy_c, &err) ||
        opt_int(&a, "p1", &s.p1_c, &err) || opt_int(&a, "g1", &s.g1_c, &err) || opt_int(&a, "v1", &s.v1_c, &err) ||
        opt_int(&a, "v2", &s.v2_c, &err) || opt_int(&a, "pass-c", &s.pass_c, &err) ||
        opt_int(&a, "input-kernel", &s.input_kernel, &err) || opt_int(&a, "kernel", &s.kernel, &err))
        return cli_fail("synth-net", &err);
    if (cli_has(&a, "rope-theta")) {
        double t;
        if (cli_get_double(&a, "rope-theta", 0, &t, &err))
            return cli_fail("synth-net", &err);
        s.rope_theta = (float)t;
    }
    if ((v = cli_get(&a, "rope", NULL))) {
        if (!strcmp(v, "none"))
            s.rope = HC_SYNTH_ROPE_NONE;
        else if (!strcmp(v, "fixed"))
            s.rope = HC_SYNTH_ROPE_FIXED;
        else if (!strcmp(v, "learnable"))
            s.rope = HC_SYNTH_ROPE_LEARNABLE;
        else {
            hc_err_set(&err, HC_EUSAGE, "--rope: \"%s\" is not none, fixed or learnable", v);
            return cli_fail("synth-net", &err);
        }
    }
    if ((v = cli_get(&a, "act", NULL)) && parse_act(v, &s.act, &err))
        return cli_fail("synth-net", &err);
    if ((v = cli_get(&a, "pass-act", NULL)) && parse_act(v, &s.pass_act, &err))
        return cli_fail("synth-net", &err);
    if ((v = cli_get(&a, "tip", NULL))) {
        if (!strcmp(v, "bn"))
            s.tip = HC_TRUNK_NORM_BN;
        else if (!strcmp(v, "rmsnorm"))
            s.tip = HC_TRUNK_NORM_RMSNORM;
        else {
            hc_err_set(&err, HC_EUSAGE, "--tip: \"%s\" is not bn or rmsnorm", v);
            return cli_fail("synth-net", &err);
        }
    }
    if (cli_has(&a, "tip-spatial"))
        s.tip_rms_spatial = 1;
    if (cli_has(&a, "meta"))
        s.meta = 1;
    if (cli_has(&a, "plain-bn"))
        s.vary_bn = 0;
    if (cli_has(&a, "symmetric"))
        s.symmetric = 1;
    if (cli_has(&a, "prefer-pass-alive"))
        s.prefer_pass_alive = 1;
    int binary = !(ends_with(out, ".txt") || ends_with(out, ".txt.gz"));
    hc_net *net = hc_synth_net(&s, &err);
    if (!net)
        return cli_fail("synth-net", &err);
    int rc = hc_net_write(net, out, binary, &err);
    if (rc == 0)
        fprintf(stderr, "halfcheck synth-net: %s: model %s, version %d, %d trunk blocks, %d channels, %lld parameters (%s floats)\n",
                out, net->name, net->model_version, net->trunk.num_blocks, net->trunk.trunk_c,
                (long long)net->num_params, binary ? "binary" : "text");
    hc_net_free(net);
    return rc == 0 ? HC_EXIT_OK : cli_fail("synth-net", &err);
}
