/* Precision profiles: the parser (errors located at file:line:col, table-driven), rule
 * resolution (later rules override, kinds, globs, `when` conditions), the built-ins, and the
 * layer walk of the shared nets against the engine's own taps. */
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/engine.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "backends/profile.h"

typedef struct bad_case {
    const char *id, *yaml, *where, *needle;
} bad_case;

static const bad_case bad[] = {
    {"1", "storage: fp16\nweigths: fp16\n", "p.yaml:2:1:", "unknown key \"weigths\""},
    {"2", "storage: fp8\n", "p.yaml:1:10:", "unknown format \"fp8\""},
    {"3", "accum: bf16\n", "p.yaml:1:8:", "unknown format \"bf16\""},
    {"4", "rules:\n  - kind: convv\n    storage: fp32\n", "p.yaml:2:11:", "unknown layer kind \"convv\""},
    {"5", "rules:\n  - layer: \"rconv[12\"\n    storage: fp32\n", "p.yaml:2:12:", "unclosed ["},
    {"6", "rules:\n  - layer: \"a\\\\\"\n    storage: fp32\n", "p.yaml:2:12:", "backslash"},
    {"7", "rules:\n  - kind: conv\n    storag: fp32\n", "p.yaml:3:5:", "unknown key \"storag\""},
    {"8", "rules:\n  - storage: fp32\n", "p.yaml:2:5:", "needs a kind or a layer"},
    {"9", "rules:\n  - kind: conv\n", "p.yaml:2:5:", "must set storage"},
    {"10", "rules:\n  - kind: conv\n    storage: fp32\n    when: {transformer: maybe}\n", "p.yaml:4:25:",
     "expected true or false"},
    {"11", "rules:\n  - kind: conv\n    storage: fp32\n    when: {minChannels: 3}\n", "p.yaml:4:12:",
     "unknown key \"minChannels\""},
    {"12", "rules: {kind: conv}\n", "p.yaml:1:8:", "expected a sequence"},
    {"13", "storage: [fp16]\n", "p.yaml:1:10:", "expected a scalar"},
    {"14", "storage: fp16\nstorage: fp32\n", "p.yaml:2:1:", "duplicate key"},
    {"15", "rules:\n  - kind: conv\n    storage: fp32\n    when: {minTrunkChannels: 300, maxTrunkChannels: 200}\n",
     "p.yaml:4:11:", "minTrunkChannels 300 > maxTrunkChannels 200"},
    {"16", "storage: fp16\n  weights: : :\n", "p.yaml:", "p.yaml"},
    {"17", "rules:\n  - layer: \"x]\"\n    storage: fp32\n", "p.yaml:2:12:", "unmatched ]"},
    {"18", "poolSum: fp8\n", "p.yaml:1:10:", "poolSum: unknown format \"fp8\" (expected fp32, fp16 or bf16)"},
    {"19", "storage: fp16\nnormSum: [fp16]\n", "p.yaml:2:10:", "normSum: expected a scalar"},
    {"20", "rules:\n  - kind: rmsnorm\n    normSum: half\n", "p.yaml:3:14:", "normSum: unknown format \"half\""},
    {"21", "rules:\n  - kind: gpool\n    poolSum: fp16\n    poolSum: fp32\n", "p.yaml:4:5:",
     "duplicate key \"poolSum\""},
    {"22", "poolsum: fp16\n", "p.yaml:1:1:", "unknown key \"poolsum\""},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hc_err err = {0};
        char name[64];
        snprintf(name, sizeof name, "profile-1.%s", bad[i].id);
        hc_profile *p = hc_profile_parse(bad[i].yaml, strlen(bad[i].yaml), "p.yaml", &err);
        hc_check(name, !p && err.code == HC_ECONFIG && strncmp(err.msg, bad[i].where, strlen(bad[i].where)) == 0 &&
                           strstr(err.msg, bad[i].needle),
                 "got %s (code %d), want %s ... %s", p ? "a profile" : err.msg, err.code, bad[i].where, bad[i].needle);
        hc_profile_free(p);
    }
}

/* A net-less resolution test needs a net for `when`: a zeroed convnet and a transformer. */
static void test_resolve(const hc_net *conv_net, const hc_net *tf_net)
{
    const char *y = "name: t\nstorage: fp16\nweights: bf16\n"
                    "rules:\n"
                    "  - kind: conv\n    storage: fp32\n"
                    "  - layer: \"rconv2/*\"\n    storage: bf16\n"
                    "  - kind: conv\n    layer: \"*/w2\"\n    weights: fp32\n"
                    "  - when: {transformer: true, minTrunkChannels: 64, maxTrunkChannels: 127}\n"
                    "    kind: all\n    storage: fp32\n";
    hc_err err = {0};
    hc_profile *p = hc_profile_parse(y, strlen(y), "t.yaml", &err);
    if (!hc_check("profile-2.1", p != NULL, "%s", err.msg))
        return;
    hc_check("profile-2.2", p->n_rules == 4 && strcmp(p->name, "t") == 0, "%d rules, name %s", p->n_rules, p->name);
    hc_prof_choice c = hc_profile_resolve(p, conv_net, "rconv1/w1", HC_LK_CONV | HC_LK_TRUNK);
    hc_check("profile-2.3", c.storage == HC_FMT_FP32 && c.weights == HC_FMT_BF16 && c.rule == 0, "%d %d %d",
             c.storage, c.weights, c.rule);
    c = hc_profile_resolve(p, conv_net, "rconv2/w1", HC_LK_CONV | HC_LK_TRUNK);
    hc_check("profile-2.4", c.storage == HC_FMT_BF16 && c.rule == 1, "later rule overrides: %d %d", c.storage, c.rule);
    c = hc_profile_resolve(p, conv_net, "rconv2/w2", HC_LK_CONV);
    hc_check("profile-2.5", c.storage == HC_FMT_BF16 && c.weights == HC_FMT_FP32 && c.rule == 2,
             "a rule sets only its fields: %d %d %d", c.storage, c.weights, c.rule);
    c = hc_profile_resolve(p, conv_net, "rconv2/norm2", HC_LK_BATCHNORM);
    hc_check("profile-2.6", c.storage == HC_FMT_BF16 && c.weights == HC_FMT_BF16, "glob on a batchnorm: %d %d",
             c.storage, c.weights);
    c = hc_profile_resolve(p, conv_net, "p1/norm", HC_LK_BATCHNORM | HC_LK_POLICY_HEAD);
    hc_check("profile-2.7", c.storage == HC_FMT_FP16 && c.rule == -1, "defaults: %d %d", c.storage, c.rule);
    /* the `when` rule: only the transformer of 96 channels */
    c = hc_profile_resolve(p, tf_net, "x", HC_LK_MATMUL);
    hc_check("profile-2.8", c.storage == HC_FMT_FP32 && c.rule == 3, "transformer: %d %d", c.storage, c.rule);
    c = hc_profile_resolve(p, conv_net, "x", HC_LK_MATMUL);
    hc_check("profile-2.9", c.storage == HC_FMT_FP16, "convnet untouched: %d", c.storage);
    hc_profile_free(p);
}

static void test_builtins(const hc_net *conv_net, const hc_net *tf_net)
{
    const char *const *names = hc_profile_builtin_names();
    int n = 0, has_fp16 = 0, has_bf16 = 0, has_coreml = 0;
    for (; names[n]; n++) {
        hc_err err = {0};
        hc_profile *p = hc_profile_load(names[n], &err);
        char id[64];
        snprintf(id, sizeof id, "profile-3.1.%s", names[n]);
        hc_check(id, p && strcmp(p->name, names[n]) == 0 && p->description, "%s", p ? p->name : err.msg);
        has_fp16 |= strcmp(names[n], "fp16") == 0;
        has_bf16 |= strcmp(names[n], "bf16") == 0;
        has_coreml |= strcmp(names[n], "coreml-tiers") == 0;
        hc_profile_free(p);
    }
    hc_check("profile-3.2", has_fp16 && has_bf16 && has_coreml, "built-ins: %d", n);
    hc_err err = {0};
    /* fp16-acc16 accumulates every conv and matmul (heads, transformer linears, attention) in
     * fp16; the in-layer keys of fp16 and coreml-tiers */
    {
        hc_profile *a = hc_profile_load("fp16-acc16", &err), *h = hc_profile_load("fp16", &err),
                   *c = hc_profile_load("coreml-tiers", &err), *w = hc_profile_load("fp16-winograd2", &err);
        const unsigned mm = HC_LK_MATMUL | HC_LK_GPOOL | HC_LK_VALUE_HEAD;
        const unsigned ao = HC_LK_MATMUL | HC_LK_ATTN_OUT | HC_LK_TRANSFORMER | HC_LK_TRUNK;
        int ok = a && h && c && w;
        if (ok) {
            hc_prof_choice v3 = hc_profile_resolve(a, conv_net, "v3/w", mm);
            hc_prof_choice op = hc_profile_resolve(a, tf_net, "model.blocks.0.out_proj", ao);
            hc_prof_choice cv = hc_profile_resolve(a, conv_net, "rconv1/w1", HC_LK_CONV | HC_LK_TRUNK);
            hc_prof_choice bn = hc_profile_resolve(a, conv_net, "rconv1/norm1", HC_LK_BATCHNORM | HC_LK_TRUNK);
            hc_check("profile-3.5", v3.accum == HC_FMT_FP16 && op.accum == HC_FMT_FP16 && cv.accum == HC_FMT_FP16 &&
                                        bn.accum == HC_FMT_FP32 && op.scores == HC_FMT_FP16,
                     "fp16-acc16 accum: matmul %d, attention out %d, conv %d, batchnorm %d", v3.accum, op.accum,
                     cv.accum, bn.accum);
            hc_prof_choice hp = hc_profile_resolve(h, conv_net, "v2/w", mm);
            hc_prof_choice co = hc_profile_resolve(c, conv_net, "v2/w", mm);
            hc_prof_choice ct = hc_profile_resolve(c, tf_net, "model.blocks.0.out_proj", ao);
            hc_check("profile-3.6",
                     hp.pool == HC_FMT_FP16 && hp.scores == HC_FMT_FP16 && hp.probs == HC_FMT_FP16 &&
                         hp.accum == HC_FMT_FP32 && co.pool == HC_FMT_FP16 && ct.pool == HC_FMT_FP32 &&
                         ct.scores == HC_FMT_FP32 && w->winograd == 2 && w->winograd_tiles == HC_FMT_FP16 &&
                         h->winograd == 4,
                     "in-layer keys of fp16 / coreml-tiers / fp16-winograd2");
        }
        hc_check("profile-3.7", ok, "%s", err.msg);
        /* the sums: fp16-winograd2 (MLX) pools in fp16, ane-fp16 also normalizes in fp16 (not
         * the trunk tip), coreml-tiers and fp16 keep both fp32 */
        hc_profile *ane = hc_profile_load("ane-fp16", &err);
        if (ok && ane) {
            const unsigned pre = HC_LK_RMSNORM | HC_LK_TRANSFORMER | HC_LK_TRUNK;
            const unsigned tip = HC_LK_RMSNORM | HC_LK_TRUNK_TIP | HC_LK_TRUNK;
            hc_prof_choice wv = hc_profile_resolve(w, conv_net, "v2/w", mm);
            hc_prof_choice wn = hc_profile_resolve(w, tf_net, "model.blocks.0.norm1", pre);
            hc_prof_choice an = hc_profile_resolve(ane, tf_net, "model.blocks.0.norm1", pre);
            hc_prof_choice at = hc_profile_resolve(ane, tf_net, "model.norm_trunkfinal", tip);
            hc_prof_choice av = hc_profile_resolve(ane, conv_net, "v2/w", mm);
            hc_prof_choice aq = hc_profile_resolve(ane, tf_net, "model.blocks.0.q_proj",
                                                   HC_LK_MATMUL | HC_LK_ATTN_Q | HC_LK_TRANSFORMER | HC_LK_TRUNK);
            hc_prof_choice cn = hc_profile_resolve(c, tf_net, "model.blocks.0.norm1", pre);
            hc_prof_choice cv2 = hc_profile_resolve(c, conv_net, "v2/w", mm);
            hc_prof_choice hv = hc_profile_resolve(h, conv_net, "v2/w", mm);
            hc_check("profile-3.8",
                     wv.pool_sum == HC_FMT_FP16 && wn.norm_sum == HC_FMT_FP32 && an.norm_sum == HC_FMT_FP16 &&
                         at.norm_sum == HC_FMT_FP32 && av.pool_sum == HC_FMT_FP16 && av.accum == HC_FMT_FP32 &&
                         aq.accum == HC_FMT_FP16 && cn.norm_sum == HC_FMT_FP32 && cv2.pool_sum == HC_FMT_FP32 &&
                         hv.pool_sum == HC_FMT_FP32 && hv.norm_sum == HC_FMT_FP32,
                     "sums: winograd2 pool %d norm %d; ane norm %d tip %d pool %d accum %d/%d; coreml norm %d pool %d; "
                     "fp16 pool %d norm %d",
                     wv.pool_sum, wn.norm_sum, an.norm_sum, at.norm_sum, av.pool_sum, av.accum, aq.accum, cn.norm_sum,
                     cv2.pool_sum, hv.pool_sum, hv.norm_sum);
        } else {
            hc_check("profile-3.8", 0, "ane-fp16: %s", err.msg);
        }
        hc_profile_free(ane);
        hc_profile_free(a);
        hc_profile_free(h);
        hc_profile_free(c);
        hc_profile_free(w);
    }
    hc_profile *p = hc_profile_load("fp17", &err);
    hc_check("profile-3.3", !p && strstr(err.msg, "unknown precision profile \"fp17\"") && strstr(err.msg, "fp16"),
             "%s", err.msg);
    hc_profile_free(p);
    p = hc_profile_load("no/such/profile.yaml", &err);
    hc_check("profile-3.4", !p && err.code == HC_EIO, "%d %s", err.code, err.msg);
    hc_profile_free(p);
    /* a file profile, and its default name */
    const char *dir = hc_tmpdir("test_profile");
    char path[600];
    snprintf(path, sizeof path, "%s/my-prof.yaml", dir ? dir : ".");
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("storage: bf16\n", f);
        fclose(f);
    }
    p = hc_profile_load(path, &err);
    hc_check("profile-6.1", p && strcmp(p->name, "my-prof") == 0 && p->storage == HC_FMT_BF16, "%s",
             p ? p->name : err.msg);
    hc_profile_free(p);

    /* coreml-tiers: the convnet is pure fp16; the 96-channel transformer entirely fp32 */
    p = hc_profile_load("coreml-tiers", &err);
    if (!hc_check("profile-6.2", p != NULL, "%s", err.msg))
        return;
    hc_prof_choice c1 = hc_profile_resolve(p, conv_net, "rconv1/w1", HC_LK_CONV | HC_LK_TRUNK);
    hc_prof_choice c2 = hc_profile_resolve(p, conv_net, "matmulg2w", HC_LK_MATMUL | HC_LK_GPOOL);
    hc_prof_choice c3 = hc_profile_resolve(p, tf_net, "q", HC_LK_MATMUL | HC_LK_ATTN_Q | HC_LK_TRANSFORMER);
    hc_prof_choice c4 = hc_profile_resolve(p, tf_net, "input", HC_LK_INPUT);
    hc_check("profile-6.3",
             c1.storage == HC_FMT_FP16 && c1.weights == HC_FMT_FP16 && c2.storage == HC_FMT_FP16 &&
                 c3.storage == HC_FMT_FP32 && c3.weights == HC_FMT_FP32 && c4.storage == HC_FMT_FP32,
             "%d %d %d %d %d %d", c1.storage, c1.weights, c2.storage, c3.storage, c3.weights, c4.storage);
    /* a wide transformer (fake the width): matmuls fp32, out_proj fp16, convs fp16 below 320 */
    hc_net wide = *tf_net;
    wide.trunk.trunk_c = 256;
    hc_prof_choice w1 = hc_profile_resolve(p, &wide, "q", HC_LK_MATMUL | HC_LK_ATTN_Q | HC_LK_TRANSFORMER);
    hc_prof_choice w2 = hc_profile_resolve(p, &wide, "o", HC_LK_MATMUL | HC_LK_ATTN_OUT | HC_LK_TRANSFORMER);
    hc_prof_choice w3 = hc_profile_resolve(p, &wide, "c", HC_LK_CONV | HC_LK_TRUNK);
    hc_prof_choice w4 = hc_profile_resolve(p, &wide, "n", HC_LK_RMSNORM | HC_LK_TRANSFORMER);
    wide.trunk.trunk_c = 320;
    hc_prof_choice w5 = hc_profile_resolve(p, &wide, "c", HC_LK_CONV | HC_LK_TRUNK);
    hc_check("profile-6.4",
             w1.storage == HC_FMT_FP32 && w2.storage == HC_FMT_FP16 && w3.storage == HC_FMT_FP16 &&
                 w4.storage == HC_FMT_FP16 && w5.storage == HC_FMT_FP32,
             "%d %d %d %d %d", w1.storage, w2.storage, w3.storage, w4.storage, w5.storage);
    hc_profile_free(p);
}

/* Every layer hc_net_layers lists is tapped by the engine, in the same order, and every tap
 * is a listed layer. */
typedef struct seen {
    const char *names[512];
    int n;
} seen;

static void record(void *user, const hc_tap *t)
{
    seen *s = user;
    if (s->n < 512)
        s->names[s->n++] = t->layer;
}

static void test_layers(const char *id, hc_net *net)
{
    hc_layer_ref *ls = NULL;
    int n = 0;
    hc_err err = {0};
    if (!hc_check(id, hc_net_layers(net, &ls, &n, &err) == 0 && n > 10, "%s", err.msg))
        return;
    hc_engine *e = hc_engine_new(net, 1, 9, 9, 1, &err);
    hc_raw_heads *h = hc_raw_heads_new(1, 9, 9, net->num_policy_c, net->num_score_value_c, &err);
    float *sp = calloc((size_t)net->num_input_c * 81, sizeof(float));
    float *gl = calloc((size_t)net->num_input_global_c + 1, sizeof(float));
    float *me = calloc((size_t)net->num_input_meta_c + 1, sizeof(float));
    seen s = {.n = 0};
    if (e && h && sp && gl && me) {
        for (int i = 0; i < 81; i++)
            sp[i] = 1.0f;
        hc_engine_set_hook(e, record, &s);
        hc_engine_eval(e, 1, sp, gl, net->num_input_meta_c ? me : NULL, h, &err);
    }
    int same = s.n == n;
    for (int i = 0; same && i < n; i++)
        same = s.names[i] == ls[i].name;
    char id2[64];
    snprintf(id2, sizeof id2, "%s.taps", id);
    hc_check(id2, same, "%d taps vs %d layers (first difference: %s vs %s)", s.n, n, s.n ? s.names[0] : "-",
             n ? ls[0].name : "-");
    size_t weights = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ls[i].n_arrays; j++)
            weights += ls[i].lens[j];
    snprintf(id2, sizeof id2, "%s.weights", id);
    hc_check(id2, weights > 0 && (int64_t)weights <= net->num_floats + 4 * 8192 * 64, "%zu weights of %lld floats",
             weights, (long long)net->num_floats);
    free(sp);
    free(gl);
    free(me);
    hc_raw_heads_free(h);
    hc_engine_free(e);
    free(ls);
}

static int same_rule(const hc_prof_rule *a, const hc_prof_rule *b)
{
    return a->kinds == b->kinds && !a->pattern == !b->pattern && (!a->pattern || !strcmp(a->pattern, b->pattern)) &&
           a->storage == b->storage && a->weights == b->weights && a->accum == b->accum && a->tiles == b->tiles &&
           a->pool == b->pool && a->scores == b->scores && a->probs == b->probs && a->transformer == b->transformer &&
           a->min_trunk_c == b->min_trunk_c && a->max_trunk_c == b->max_trunk_c && a->pool_sum == b->pool_sum &&
           a->norm_sum == b->norm_sum;
}

static int same_profile(const hc_profile *a, const hc_profile *b)
{
    int same = !strcmp(a->name, b->name) && !a->description == !b->description &&
               (!a->description || !strcmp(a->description, b->description)) && a->storage == b->storage &&
               a->weights == b->weights && a->accum == b->accum && a->winograd_tiles == b->winograd_tiles &&
               a->winograd == b->winograd && a->pool == b->pool && a->attn_scores == b->attn_scores &&
               a->softmax == b->softmax && a->pool_sum == b->pool_sum && a->norm_sum == b->norm_sum &&
               a->n_rules == b->n_rules;
    for (int i = 0; same && i < a->n_rules; i++)
        same = same_rule(&a->rules[i], &b->rules[i]);
    return same;
}

/* The writer: every built-in, and a profile using every key (odd names quoted, globs escaped),
 * formatted and parsed back to the same settings. */
static void test_writer(void)
{
    hc_err err = {0};
    const char *const *names = hc_profile_builtin_names();
    int i = 0;
    for (; names[i]; i++) {
        char id[64];
        snprintf(id, sizeof id, "profile-5.%d", i + 1);
        hc_profile *p = hc_profile_load(names[i], &err), *q = NULL;
        char *text = NULL;
        size_t len = 0;
        if (p && hc_profile_format(p, "a header\nof two lines", &text, &len, &err) == 0)
            q = hc_profile_parse(text, len, "back.yaml", &err);
        hc_check(id, p && q && same_profile(p, q) && text && !strncmp(text, "# a header\n# of two lines\n", 26),
                 "%s: %s", names[i], q ? "differs after a round trip" : err.msg);
        free(text);
        hc_profile_free(p);
        hc_profile_free(q);
    }
    const char *y = "name: 'odd \"name\" \\ x'\ndescription: two\nstorage: bf16\nweights: fp16\naccum: fp16\n"
                    "winogradTiles: fp16\nwinograd: f2x2\npool: bf16\nattnScores: fp16\nsoftmax: bf16\npoolSum: fp16\n"
                    "normSum: bf16\nrules:\n"
                    "  - kind: conv\n    layer: \"a*b\"\n    when: {transformer: false, minTrunkChannels: 3}\n"
                    "    storage: fp32\n    pool: fp16\n"
                    "  - layer: \"x\"\n    when: {maxTrunkChannels: 9}\n    winogradTiles: fp32\n    attnScores: bf16\n"
                    "    softmax: fp32\n    accum: fp32\n    weights: bf16\n    normSum: fp32\n"
                    "  - kind: gpool\n    poolSum: bf16\n";
    hc_profile *p = hc_profile_parse(y, strlen(y), "all.yaml", &err), *q = NULL;
    char *text = NULL;
    size_t len = 0;
    if (p && hc_profile_format(p, NULL, &text, &len, &err) == 0)
        q = hc_profile_parse(text, len, "back.yaml", &err);
    hc_check("profile-5.90", p && q && same_profile(p, q) && p->winograd == 2 && !strcmp(q->name, "odd \"name\" \\ x") &&
                                 p->pool_sum == HC_FMT_FP16 && p->norm_sum == HC_FMT_BF16 && p->n_rules == 3 &&
                                 p->rules[1].norm_sum == HC_FMT_FP32 && p->rules[1].pool_sum == -1 &&
                                 p->rules[2].pool_sum == HC_FMT_BF16 && p->rules[2].norm_sum == -1 &&
                                 text && strstr(text, "\npoolSum: fp16\n") && strstr(text, "\n    poolSum: bf16\n"),
             "%s", q ? "differs" : err.msg);
    free(text);
    text = NULL;
    hc_profile_free(q);
    /* clone + an exact-name rule: the glob matches the literal name only */
    q = p ? hc_profile_clone(p, &err) : NULL;
    char *g = hc_profile_glob_literal("rconv[1]*?\\x", &err);
    hc_prof_rule r;
    memset(&r, 0, sizeof r);
    r.storage = HC_FMT_FP32;
    r.weights = r.accum = r.tiles = r.pool = r.scores = r.probs = r.pool_sum = r.norm_sum = -1;
    r.transformer = -1;
    r.max_trunk_c = INT_MAX;
    r.pattern = g;
    hc_check("profile-5.92", g && fnmatch(g, "rconv[1]*?\\x", 0) == 0 && fnmatch(g, "rconv1ab\\x", 0) != 0,
             "literal glob %s", g ? g : err.msg);
    int ok = q && g && hc_profile_add_rule(q, &r, &err) == 0 && q->n_rules == 4 && same_rule(&q->rules[3], &r);
    hc_profile *back = NULL;
    if (ok && hc_profile_format(q, NULL, &text, &len, &err) == 0)
        back = hc_profile_parse(text, len, "back.yaml", &err);
    hc_check("profile-5.91", ok && back && same_profile(q, back), "clone and add: %s", err.msg);
    free(text);
    hc_profile_free(back);
    hc_profile_free(q);
    hc_profile_free(p);
    free(g);
}

int main(void)
{
    hc_plan(79);
    test_errors();
    test_writer();
    const char *pc = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char *conv_path = pc ? strdup(pc) : NULL;
    const char *pt = hc_shared("nets/b7c96h3tfrs-test5-cnorm.bin.gz");
    char *tf_path = pt ? strdup(pt) : NULL;
    hc_err err = {0};
    hc_net *conv_net = conv_path ? hc_net_load(conv_path, &err) : NULL;
    hc_net *tf_net = tf_path ? hc_net_load(tf_path, &err) : NULL;
    if (!conv_net || !tf_net) {
        hc_skip_n("profile-2", 46, "shared nets absent");
    } else {
        test_resolve(conv_net, tf_net);
        test_builtins(conv_net, tf_net);
        test_layers("profile-4.1", conv_net);
        test_layers("profile-4.2", tf_net);
        const char *p3 = hc_shared("nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz");
        hc_net *n3 = p3 ? hc_net_load(p3, &err) : NULL;
        if (n3)
            test_layers("profile-4.3", n3);
        hc_net_free(n3);
        const char *synth[] = {"nets/synth/pub_v11nbt.bin.gz", "nets/synth/pub_v15meta.bin.gz",
                               "nets/synth/pub_v17nbttf.bin.gz"};
        for (int i = 0; i < 3; i++) {
            const char *sp = hc_shared(synth[i]);
            hc_net *sn = sp ? hc_net_load(sp, &err) : NULL;
            char id[32];
            snprintf(id, sizeof id, "profile-4.%d", 4 + i);
            if (sn)
                test_layers(id, sn);
            else
                hc_skip_n(id, 2, "%s absent", synth[i]);
            hc_net_free(sn);
        }
    }
    hc_net_free(conv_net);
    hc_net_free(tf_net);
    free(conv_path);
    free(tf_path);
    return hc_test_exit();
}
