/* emulate:PROFILE: see emulate.h. */
#include "backends/emulate.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/base/files.h"
#include "refs/round.h"

typedef struct lay {
    const char *name; /* the clone's pointer, as tap->layer carries it */
    int storage, accum, tiles;
    int wino2; /* 3x3 convs by F(2x2,3x3) (the profile's winograd: f2x2, where the profile applies) */
    int mode; /* refs/engine.h HC_LM_* bits for the engine's layer_mode */
} lay;

struct hc_emulate {
    hc_profile *prof;
    hc_net *net;
    hc_engine *eng;
    lay *lays;
    int n_lays;
    int in_fmt;
    int max_batch, nx, ny;
    float *spatial, *global, *meta; /* rounded copies of the input rows */
    char weight_note[256]; /* weights that overflowed when rounded, for error messages */
    int *overflow; /* [max_batch]: index of the first layer that overflowed in the row, or -1 */
    const char **overflow_sum; /* [max_batch]: the reduction that overflowed there, or NULL (a stored value) */
    hc_engine_hook_fn next;
    void *next_user;
    int borrowed; /* prof, net and lays belong to the instance this one shares (a lane) */
};

static void round_array(int fmt, float *x, size_t n)
{
    if (fmt == HC_FMT_FP16)
        hc_round_fp16_array(x, n);
    else if (fmt == HC_FMT_BF16)
        hc_round_bf16_array(x, n);
}

/* A private copy of net: written to a private temporary directory and read back, then every
 * weight array copied over bit for bit (the file stores raw batch-norm parameters; the merged
 * ones a reduced net computes with would not come back identical from them). */
static hc_net *clone_net(const hc_net *src, hc_err *err)
{
    char dir[4096], path[4200];
    if (hc_scratch_dir(dir, sizeof dir, "emulate", NULL, err)) {
        hc_err_prefix(err, "emulate: ");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/net.bin", dir);
    hc_net *net = NULL;
    if (hc_net_write(src, path, 1, err) == 0)
        net = hc_net_load(path, err);
    unlink(path);
    rmdir(dir);
    if (!net)
        return NULL;
    hc_layer_ref *a = NULL, *b = NULL;
    int na = 0, nb = 0;
    /* hc_net_layers only reads through the pointers it returns; src stays unmodified. */
    if (hc_net_layers((hc_net *)src, &a, &na, err) || hc_net_layers(net, &b, &nb, err)) {
        free(a);
        hc_net_free(net);
        return NULL;
    }
    int ok = na == nb;
    for (int i = 0; ok && i < na; i++) {
        ok = a[i].n_arrays == b[i].n_arrays;
        for (int j = 0; ok && j < a[i].n_arrays; j++) {
            ok = a[i].lens[j] == b[i].lens[j];
            if (ok)
                memcpy(b[i].arrays[j], a[i].arrays[j], a[i].lens[j] * sizeof(float));
        }
    }
    /* The output scale multiplier is not stored in a file. */
    net->post = src->post;
    free(a);
    free(b);
    if (!ok) {
        hc_err_set(err, HC_EINTERNAL, "emulate: the cloned net's layers differ from the original's");
        hc_net_free(net);
        return NULL;
    }
    return net;
}

/* Whether x[0..n) holds an inf or NaN where mask (NULL: everywhere) is nonzero; one pass of
 * integer tests that the compiler vectorizes, since this runs over every layer's output. */
static int nonfinite_on_board(const float *x, const float *mask, size_t n)
{
    uint32_t any = 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t u, m = 1;
        memcpy(&u, &x[p], sizeof u);
        if (mask)
            m = mask[p] != 0.0f;
        any |= ((u & 0x7f800000u) == 0x7f800000u) & m;
    }
    return any != 0;
}

/* Rounds a tap in place and notes, per row, the first layer holding a non-finite on-board
 * value (the row's thread is the only writer of its entry). */
static void hook(void *user, const hc_tap *t)
{
    hc_emulate *em = user;
    int fmt = HC_FMT_FP32, li = -1;
    for (int i = 0; i < em->n_lays && li < 0; i++)
        if (em->lays[i].name == t->layer)
            li = i;
    for (int i = 0; i < em->n_lays && li < 0; i++)
        if (em->lays[i].name && strcmp(em->lays[i].name, t->layer) == 0)
            li = i;
    if (li >= 0)
        fmt = em->lays[li].storage;
    {
        size_t hw = (size_t)t->hw, cin = (size_t)em->net->num_input_c;
        for (int r = 0; r < t->rows; r++) {
            int row = t->row0 + r, over = 0;
            if (t->layout == HC_TAP_CBP) {
                const float *mask = em->spatial + (size_t)row * cin * hw; /* input channel 0: on board */
                for (int c = 0; c < t->channels; c++) {
                    float *x = t->data + ((size_t)c * t->rows + r) * hw;
                    round_array(fmt, x, hw);
                    over |= nonfinite_on_board(x, mask, hw);
                }
            } else {
                float *x = t->data + (size_t)r * t->channels;
                round_array(fmt, x, (size_t)t->channels);
                over |= nonfinite_on_board(x, NULL, (size_t)t->channels);
            }
            if (over && li >= 0 && (em->overflow[row] < 0 || em->overflow[row] > li)) {
                em->overflow[row] = li;
                em->overflow_sum[row] = NULL;
            }
        }
    }
    if (em->next)
        em->next(em->next_user, t);
}

/* The engine asks, per convolution, for fp16 accumulation (the layer's rule) and fp16
 * Winograd tiles (the profile's winogradTiles; only 3x3 convolutions run by Winograd). */
static int conv_mode(void *user, const hc_conv *c)
{
    return hc_emulate_conv_mode(user, c);
}

/* Pooled values and pooling sums, attention scores/probabilities, matmul accumulation and
 * RMSNorm reductions of a layer. */
static int layer_mode(void *user, const char *name)
{
    const hc_emulate *em = user;
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name == name)
            return em->lays[i].mode;
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name && strcmp(em->lays[i].name, name) == 0)
            return em->lays[i].mode;
    return 0;
}

/* A reduction emulated in a reduced format overflowed in row `row` (the engine tells; the row's
 * thread is the only writer of its entries). */
static void sum_overflow(void *user, const char *name, const char *what, int row)
{
    hc_emulate *em = user;
    int li = -1;
    for (int i = 0; i < em->n_lays && li < 0; i++)
        if (em->lays[i].name == name || (em->lays[i].name && strcmp(em->lays[i].name, name) == 0))
            li = i;
    if (li >= 0 && (em->overflow[row] < 0 || em->overflow[row] > li)) {
        em->overflow[row] = li;
        em->overflow_sum[row] = what;
    }
}

void hc_emulate_close(hc_emulate *em)
{
    if (!em)
        return;
    hc_engine_free(em->eng);
    if (!em->borrowed) {
        hc_net_free(em->net);
        hc_profile_free(em->prof);
        free(em->lays);
    }
    free(em->spatial);
    free(em->global);
    free(em->meta);
    free(em->overflow);
    free(em->overflow_sum);
    free(em);
}

hc_emulate *hc_emulate_open(const char *params, const hc_net *net, int nx, int ny, int max_batch, int threads,
                            hc_err *err)
{
    return hc_emulate_open_subset(params, net, nx, ny, max_batch, threads, NULL, 0, err);
}

static hc_emulate *open_with(hc_profile *prof, const hc_net *net, int nx, int ny, int max_batch, int threads,
                             const unsigned char *active, int n_active, hc_err *err);

hc_emulate *hc_emulate_open_subset(const char *params, const hc_net *net, int nx, int ny, int max_batch,
                                   int threads, const unsigned char *active, int n_active, hc_err *err)
{
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "emulate needs a net");
        return NULL;
    }
    if (!params || !*params) {
        hc_err_set(err, HC_ECONFIG, "emulate needs a profile: emulate:NAME or emulate:PATH.yaml");
        return NULL;
    }
    hc_profile *prof = hc_profile_load(params, err);
    return prof ? open_with(prof, net, nx, ny, max_batch, threads, active, n_active, err) : NULL;
}

hc_emulate *hc_emulate_open_profile(const hc_profile *prof, const hc_net *net, int nx, int ny, int max_batch,
                                    int threads, const unsigned char *active, int n_active, hc_err *err)
{
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "emulate needs a net");
        return NULL;
    }
    hc_profile *p = hc_profile_clone(prof, err);
    return p ? open_with(p, net, nx, ny, max_batch, threads, active, n_active, err) : NULL;
}

/* Takes prof (freed on failure too). */
static hc_emulate *open_with(hc_profile *prof, const hc_net *net, int nx, int ny, int max_batch, int threads,
                             const unsigned char *active, int n_active, hc_err *err)
{
    hc_emulate *em = hc_calloc(1, sizeof *em, err, "emulate");
    if (!em) {
        hc_profile_free(prof);
        return NULL;
    }
    em->prof = prof;
    em->max_batch = max_batch;
    em->nx = nx;
    em->ny = ny;
    hc_layer_ref *ls = NULL;
    if (!(em->net = clone_net(net, err)) ||
        hc_net_layers(em->net, &ls, &em->n_lays, err))
        goto fail;
    em->lays = hc_calloc((size_t)em->n_lays + 1, sizeof *em->lays, err, "emulate layers");
    if (!em->lays)
        goto fail;
    if (active && n_active != em->n_lays + 1) {
        hc_err_set(err, HC_EINTERNAL, "emulate: %d layer flags for %d layers and the input", n_active, em->n_lays);
        goto fail;
    }
    for (int i = 0; i < em->n_lays; i++) {
        hc_prof_choice ch = hc_profile_resolve(em->prof, em->net, ls[i].name, ls[i].kinds);
        if (active && !active[i])
            ch.storage = ch.weights = ch.accum = ch.tiles = ch.pool = ch.scores = ch.probs = ch.pool_sum =
                ch.norm_sum = HC_FMT_FP32;
        if (ch.accum != HC_FMT_FP32 && !(ls[i].kinds & (HC_LK_CONV | HC_LK_MATMUL))) {
            hc_err_set(err, HC_EBACKEND,
                       "profile %s asks %s accumulation for layer %s (%s): the engine accumulates in fp16 only in "
                       "convolutions and matmuls, and running it in fp32 would not be what the profile claims",
                       em->prof->name, hc_fmt_str(ch.accum), ls[i].name ? ls[i].name : "?",
                       ch.rule >= 0 ? em->prof->rules[ch.rule].where : "the profile's default");
            goto fail;
        }
        em->lays[i].name = ls[i].name;
        em->lays[i].storage = ch.storage;
        em->lays[i].accum = ch.accum;
        em->lays[i].tiles = ch.tiles;
        em->lays[i].wino2 = em->prof->winograd == 2 && !(active && !active[i]);
        em->lays[i].mode = ch.pool << HC_LM_POOL_SHIFT | ch.scores << HC_LM_SCORES_SHIFT |
                           ch.probs << HC_LM_PROBS_SHIFT | ch.pool_sum << HC_LM_POOLSUM_SHIFT |
                           ch.norm_sum << HC_LM_NORMSUM_SHIFT |
                           (ch.accum == HC_FMT_FP16 && (ls[i].kinds & HC_LK_MATMUL) ? HC_LM_ACC_FP16 : 0);
        for (int j = 0; j < ls[i].n_arrays; j++) {
            round_array(ch.weights, ls[i].arrays[j], ls[i].lens[j]);
            size_t bad = 0;
            for (size_t k = 0; k < ls[i].lens[j]; k++)
                bad += !isfinite(ls[i].arrays[j][k]);
            if (bad && !em->weight_note[0])
                snprintf(em->weight_note, sizeof em->weight_note, "; %zu weights of layer %s are not finite in %s",
                         bad, ls[i].name ? ls[i].name : "?", hc_fmt_str(ch.weights));
        }
    }
    hc_prof_choice in = hc_profile_resolve(em->prof, em->net, "input", HC_LK_INPUT);
    if (active && !active[em->n_lays])
        in.storage = in.accum = HC_FMT_FP32;
    if (in.accum != HC_FMT_FP32) {
        hc_err_set(err, HC_EBACKEND, "profile %s asks %s accumulation for the input rows: not supported",
                   em->prof->name, hc_fmt_str(in.accum));
        goto fail;
    }
    em->in_fmt = in.storage;
    size_t hw = (size_t)nx * ny, B = max_batch > 0 ? (size_t)max_batch : 1;
    em->spatial = hc_malloc(B * (size_t)em->net->num_input_c * hw * sizeof(float), err, "emulate input");
    em->global = hc_malloc(B * (size_t)(em->net->num_input_global_c + 1) * sizeof(float), err, "emulate input");
    em->meta = hc_malloc(B * (size_t)(em->net->num_input_meta_c + 1) * sizeof(float), err, "emulate input");
    em->overflow = hc_malloc(B * sizeof(int), err, "emulate overflow flags");
    em->overflow_sum = hc_malloc(B * sizeof *em->overflow_sum, err, "emulate overflow flags");
    if (!em->spatial || !em->global || !em->meta || !em->overflow || !em->overflow_sum)
        goto fail;
    hc_engine_opts o = hc_engine_default_opts();
    o.conv_mode = conv_mode;
    o.conv_mode_user = em;
    o.layer_mode = layer_mode;
    o.layer_mode_user = em;
    o.sum_overflow = sum_overflow;
    if (!(em->eng = hc_engine_new_opts(em->net, max_batch, nx, ny, threads, &o, err)))
        goto fail;
    hc_engine_set_hook(em->eng, hook, em);
    free(ls);
    return em;
fail:
    free(ls);
    hc_emulate_close(em);
    return NULL;
}

hc_emulate *hc_emulate_open_sharing(const hc_emulate *base, int max_batch, int threads, hc_err *err)
{
    hc_emulate *em = hc_calloc(1, sizeof *em, err, "emulate");
    if (!em)
        return NULL;
    /* The profile, the rounded net and the layer table are read-only once opened. */
    em->prof = base->prof;
    em->net = base->net;
    em->lays = base->lays;
    em->n_lays = base->n_lays;
    em->borrowed = 1;
    em->in_fmt = base->in_fmt;
    em->max_batch = max_batch;
    em->nx = base->nx;
    em->ny = base->ny;
    memcpy(em->weight_note, base->weight_note, sizeof em->weight_note);
    size_t hw = (size_t)em->nx * em->ny, B = max_batch > 0 ? (size_t)max_batch : 1;
    em->spatial = hc_malloc(B * (size_t)em->net->num_input_c * hw * sizeof(float), err, "emulate input");
    em->global = hc_malloc(B * (size_t)(em->net->num_input_global_c + 1) * sizeof(float), err, "emulate input");
    em->meta = hc_malloc(B * (size_t)(em->net->num_input_meta_c + 1) * sizeof(float), err, "emulate input");
    em->overflow = hc_malloc(B * sizeof(int), err, "emulate overflow flags");
    em->overflow_sum = hc_malloc(B * sizeof *em->overflow_sum, err, "emulate overflow flags");
    /* The engine's callbacks must reach this lane's overflow flags, not base's. */
    hc_engine_opts o = hc_engine_default_opts();
    o.conv_mode_user = em;
    o.layer_mode_user = em;
    if (!em->spatial || !em->global || !em->meta || !em->overflow || !em->overflow_sum ||
        !(em->eng = hc_engine_new_sharing(base->eng, max_batch, threads, &o, err))) {
        hc_emulate_close(em);
        return NULL;
    }
    hc_engine_set_hook(em->eng, hook, em);
    return em;
}

static int finish(const hc_emulate *em, int batch, const int *overflow, const char *const *overflow_sum,
                  hc_raw_heads *out, hc_err *err);

int hc_emulate_eval(hc_emulate *em, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err)
{
    if (batch < 1 || batch > em->max_batch)
        return hc_err_set(err, HC_EINTERNAL, "emulate: batch %d outside 1..%d", batch, em->max_batch);
    const hc_net *n = em->net;
    size_t ns = (size_t)batch * n->num_input_c * em->nx * em->ny, ng = (size_t)batch * n->num_input_global_c,
           nm = (size_t)batch * n->num_input_meta_c;
    memcpy(em->spatial, spatial, ns * sizeof(float));
    round_array(em->in_fmt, em->spatial, ns);
    if (ng) {
        memcpy(em->global, global, ng * sizeof(float));
        round_array(em->in_fmt, em->global, ng);
    }
    if (nm && meta) {
        memcpy(em->meta, meta, nm * sizeof(float));
        round_array(em->in_fmt, em->meta, nm);
    }
    for (int r = 0; r < batch; r++) {
        em->overflow[r] = -1;
        em->overflow_sum[r] = NULL;
    }
    if (hc_engine_eval(em->eng, batch, em->spatial, em->global, meta ? em->meta : NULL, out, err))
        return -1;
    return finish(em, batch, em->overflow, em->overflow_sum, out, err);
}

/* The rows that overflowed (em->overflow) get NaN outputs and the eval fails naming the layer. */
static int finish(const hc_emulate *em, int batch, const int *overflow, const char *const *overflow_sum,
                  hc_raw_heads *out, hc_err *err)
{
    /* Overflow is inf in the stored tensor. Later layers may hide it (a ReLU computed as
     * fmax(NaN, 0) gives 0), so the rows it hit get NaN outputs and the eval fails, naming it. */
    int first = -1;
    for (int r = 0; r < batch; r++) {
        if (overflow[r] < 0)
            continue;
        if (first < 0)
            first = r;
        size_t hw = (size_t)em->nx * em->ny, pc = (size_t)out->policy_channels, sc = (size_t)out->score_channels;
        for (size_t i = 0; i < pc * hw; i++)
            out->policy[(size_t)r * pc * hw + i] = NAN;
        for (size_t i = 0; i < pc; i++)
            out->policy_pass[(size_t)r * pc + i] = NAN;
        for (size_t i = 0; i < 3; i++)
            out->value[(size_t)r * 3 + i] = NAN;
        for (size_t i = 0; i < sc; i++)
            out->score[(size_t)r * sc + i] = NAN;
        for (size_t i = 0; i < hw; i++)
            out->ownership[(size_t)r * hw + i] = NAN;
    }
    if (first >= 0 && overflow_sum[first]) {
        const lay *l = &em->lays[overflow[first]];
        int fmt = (l->mode >> (strstr(overflow_sum[first], "RMSNorm") ? HC_LM_NORMSUM_SHIFT : HC_LM_POOLSUM_SHIFT)) &
                  HC_LM_FMT_MASK;
        return hc_err_set(err, HC_EBACKEND,
                          "non-finite output: first non-finite value in layer %s: its %s overflowed in %s (row %d of "
                          "the batch): a sum past the format's range becomes inf%s",
                          l->name, overflow_sum[first], hc_fmt_str(fmt), first, em->weight_note);
    }
    if (first >= 0)
        return hc_err_set(err, HC_EBACKEND,
                          "non-finite output: first non-finite value in layer %s (stored as %s; row %d of the "
                          "batch): a value past the format's range becomes inf%s",
                          em->lays[overflow[first]].name, hc_fmt_str(em->lays[overflow[first]].storage),
                          first, em->weight_note);
    return 0;
}

/* ---- for the same emulation on another device (cuda:emulate:PROFILE) ---- */

int hc_emulate_layer_find(const hc_emulate *em, const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name == name)
            return i;
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name && strcmp(em->lays[i].name, name) == 0)
            return i;
    return -1;
}

int hc_emulate_layer_fmt(const hc_emulate *em, int li)
{
    return li >= 0 && li < em->n_lays ? em->lays[li].storage : HC_FMT_FP32;
}

int hc_emulate_layer_mode(const hc_emulate *em, const char *name)
{
    int li = hc_emulate_layer_find(em, name);
    return li >= 0 ? em->lays[li].mode : 0;
}

int hc_emulate_input_fmt(const hc_emulate *em) { return em->in_fmt; }

/* The engine's conv_mode answer (conv_mode above), for another device to ask the same way. */
int hc_emulate_conv_mode(const hc_emulate *em, const hc_conv *c)
{
    int m = 0;
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name == c->name) {
            m |= em->lays[i].accum == HC_FMT_FP16 ? HC_CONV_ACC_FP16 : 0;
            m |= em->lays[i].tiles == HC_FMT_FP16 ? HC_CONV_TILES_FP16 : 0;
            m |= em->lays[i].wino2 ? HC_CONV_WINO_F2 : 0;
        }
    return m;
}

int hc_emulate_sum_code(const hc_emulate *em, const char *name, int what)
{
    int li = hc_emulate_layer_find(em, name);
    return li >= 0 ? 2 * li + (what == HC_EMULATE_SUM_NORM) : -1;
}

int hc_emulate_finish(const hc_emulate *em, int batch, const int *overflow, hc_raw_heads *out, hc_err *err)
{
    return hc_emulate_finish_sums(em, batch, overflow, NULL, out, err);
}

int hc_emulate_finish_sums(const hc_emulate *em, int batch, const int *overflow, const int *sum_overflow,
                           hc_raw_heads *out, hc_err *err)
{
    for (int r = 0; r < batch; r++)
        if (overflow[r] >= em->n_lays || (sum_overflow && sum_overflow[r] >= 2 * em->n_lays))
            return hc_err_set(err, HC_EINTERNAL, "emulate: layer index %d (sum code %d) of row %d out of range",
                              overflow[r], sum_overflow ? sum_overflow[r] : -1, r);
    size_t nb = batch > 0 ? (size_t)batch : 1;
    int *first = malloc(nb * sizeof *first);
    const char **what = calloc(nb, sizeof *what);
    if (!first || !what) {
        free(first);
        free(what);
        return hc_err_set(err, HC_ENOMEM, "emulate: overflow report");
    }
    /* sum_overflow's strings, as refs/engine.c's report_sums names them */
    for (int r = 0; r < batch; r++) {
        first[r] = overflow[r];
        int sc = sum_overflow ? sum_overflow[r] : -1;
        if (sc >= 0 && (overflow[r] < 0 || sc / 2 <= overflow[r])) {
            first[r] = sc / 2;
            what[r] = sc % 2 == HC_EMULATE_SUM_NORM ? "RMSNorm sum of squares" : "pooling sum";
        }
    }
    int rc = finish(em, batch, first, what, out, err);
    free(first);
    free(what);
    return rc;
}

void hc_emulate_set_hook(hc_emulate *em, hc_engine_hook_fn fn, void *user)
{
    em->next = fn;
    em->next_user = user;
}

const hc_profile *hc_emulate_profile(const hc_emulate *em) { return em->prof; }
const hc_net *hc_emulate_net(const hc_emulate *em) { return em->net; }

int hc_emulate_layer_storage(const hc_emulate *em, const char *layer)
{
    for (int i = 0; i < em->n_lays; i++)
        if (em->lays[i].name && layer && strcmp(em->lays[i].name, layer) == 0)
            return em->lays[i].storage;
    return -1;
}

/* ---- the backend ---- */

/* PROFILE|PATH.yaml: the profile, loaded (and so checked) here. */
static void *emu_parse(const char *params, hc_err *err)
{
    if (!params || !*params) {
        hc_err_set(err, HC_ECONFIG, "emulate needs a profile: emulate:NAME or emulate:PATH.yaml");
        return NULL;
    }
    return hc_profile_load(params, err);
}

static void emu_free_opts(void *opts) { hc_profile_free(opts); }

/* The parsed profile, or (taps and bisect-precision) a profile they built, and a subset of layers. */
static void *emu_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const hc_profile *prof = o->profile ? o->profile : opts;
    return hc_emulate_open_profile(prof, o->net, o->nx, o->ny, o->max_batch, o->threads, o->active, o->n_active, err);
}

static int emu_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err)
{
    if (!out->taps)
        return hc_emulate_eval(inst, batch, spatial, global, meta, out, err);
    /* Taps come from the hook after each layer's rounding, installed for this eval only;
     * each tap then carries the format its layer is stored in. */
    hc_emulate *em = inst;
    hc_tapset *ts = out->taps;
    hc_engine_hook_fn fn = em->next;
    void *user = em->next_user;
    hc_tapset_reset(ts);
    hc_emulate_set_hook(em, hc_tapset_hook, ts);
    int rc = hc_emulate_eval(em, batch, spatial, global, meta, out, err);
    hc_emulate_set_hook(em, fn, user);
    if (rc || hc_tapset_status(ts, err))
        return -1;
    for (int i = 0; i < hc_tapset_count(ts); i++) {
        const hc_tapset_entry *c = hc_tapset_at(ts, i);
        int st = hc_emulate_layer_storage(em, c->name);
        hc_tapset_entry *x = hc_tapset_entry_get(ts, c->name, c->layout, c->fmt, c->channels, c->hw, err);
        if (!x)
            return -1;
        x->fmt = st == HC_FMT_FP16 ? HC_TAPFMT_F16 : st == HC_FMT_BF16 ? HC_TAPFMT_BF16 : HC_TAPFMT_F32;
    }
    return 0;
}

static int emu_taps(void *inst)
{
    (void)inst;
    return 1;
}

static void *emu_open_sharing(void *base, int max_batch, int threads, hc_err *err)
{
    return hc_emulate_open_sharing(base, max_batch, threads, err);
}

static void emu_close(void *inst) { hc_emulate_close(inst); }

static int emu_set_taps(void *inst, hc_engine_hook_fn fn, void *user, hc_err *err)
{
    (void)err;
    hc_emulate_set_hook(inst, fn, user);
    return 0;
}

static const hc_backend_ops emu_ops = {
    .eval = emu_eval,
    .set_taps = emu_set_taps, /* the hook sees each layer after its rounding */
    .taps = emu_taps,
    .open_sharing = emu_open_sharing,
    .close = emu_close,
};

const hc_backend_kind hc_backend_emulate = {
    .name = "emulate",
    .syntax = "emulate:PROFILE|PATH.yaml",
    .summary = "reduced precision emulated on the fp32 engine, as a precision profile says (built-in profiles below)",
    .caps = {.shape = HC_BACKEND_TENSOR, .lanes = HC_LANES_ALWAYS, .taps = HC_TAPS_HOOK | HC_TAPS_RETURNED,
             .profile = 1},
    .parse = emu_parse,
    .free_opts = emu_free_opts,
    .open = emu_open,
    .ops = &emu_ops,
};
