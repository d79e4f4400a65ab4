/* The cuda backend kind and its spec parser (backends/cuda.h: hc_cuda_opts_parse): plain C, built with or
 * without the CUDA toolkit, so that a suite naming cuda is checked before any work anywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda.h"
#include "backends/profile.h"
#include "harness/base/suggest.h"

static const char *const modes[] = {"ref32", "emulate", "fp32", "fp16"};
static const char *const knobs[] = {"pool32", "mid32", "probs32", "emulike"};
enum { N_MODES = sizeof modes / sizeof *modes, N_KNOBS = sizeof knobs / sizeof *knobs };
#define CUDA_SYNTAX "ref32, emulate:PROFILE|PATH.yaml, fp32 or fp16[,pool32][,mid32][,probs32][,emulike]"

/* One option after the mode: tok[0..len), a knob of fp16 or an error naming it. */
static int parse_option(hc_cuda_opts *o, const char *mode, const char *tok, size_t len, hc_err *err)
{
    int k = -1;
    for (int i = 0; i < N_KNOBS; i++)
        if (strlen(knobs[i]) == len && strncmp(knobs[i], tok, len) == 0)
            k = i;
    if (len == 0)
        return hc_err_set(err, HC_ECONFIG, "cuda: empty option after \",\" (%s)", CUDA_SYNTAX);
    if (o->mode != HC_CUDA_FP16) {
        if (k >= 0)
            return hc_err_set(err, HC_ECONFIG, "cuda: unknown option \"%.*s\": %s takes no options (%.*s is fp16's)",
                              (int)len, tok, mode, (int)len, tok);
        return hc_err_set(err, HC_ECONFIG, "cuda: unknown option \"%.*s\": %s takes no options", (int)len, tok, mode);
    }
    if (k < 0) {
        char hint[96];
        hc_suggest_text(hint, sizeof hint, tok, len, knobs, N_KNOBS);
        return hc_err_set(err, HC_ECONFIG, "cuda: unknown option \"%.*s\"%s: fp16 takes ,pool32 ,mid32 ,probs32 ,emulike",
                          (int)len, tok, hint);
    }
    o->pool32 |= k == 0 || k == 3;
    o->mid32 |= k == 1 || k == 3;
    o->probs32 |= k == 2 || k == 3;
    return 0;
}

int hc_cuda_opts_parse(const char *params, hc_cuda_opts *o, hc_err *err)
{
    memset(o, 0, sizeof *o);
    if (!params)
        params = "";
    const char *comma = strchr(params, ',');
    size_t mlen = comma ? (size_t)(comma - params) : strlen(params);
    char mode[16] = "emulate";
    if (mlen > 8 && strncmp(params, "emulate:", 8) == 0) {
        /* the profile runs to the first comma: emulate takes no options, and a comma after the
         * profile is an option (refused below, named) */
        if (mlen - 8 >= sizeof o->profile)
            return hc_err_set(err, HC_ECONFIG, "cuda: emulate: profile path longer than %zu bytes",
                              sizeof o->profile - 1);
        memcpy(o->profile, params + 8, mlen - 8);
        o->profile[mlen - 8] = '\0';
        o->mode = HC_CUDA_EMULATE;
    } else if ((mlen == 7 || mlen == 8) && strncmp(params, "emulate:", mlen) == 0) {
        return hc_err_set(err, HC_ECONFIG, "cuda: emulate needs a profile: cuda:emulate:NAME or cuda:emulate:PATH.yaml");
    } else if (mlen == 0) {
        return hc_err_set(err, HC_ECONFIG, "cuda: a mode is needed: cuda:MODE, MODE %s", CUDA_SYNTAX);
    } else {
        for (int i = 0; i < N_MODES; i++)
            if (i != 1 && strlen(modes[i]) == mlen && strncmp(modes[i], params, mlen) == 0)
                o->mode = i == 0 ? HC_CUDA_REF32 : i == 2 ? HC_CUDA_FP32 : HC_CUDA_FP16;
        if (!o->mode) {
            char hint[96];
            hc_suggest_text(hint, sizeof hint, params, mlen, modes, N_MODES);
            return hc_err_set(err, HC_ECONFIG, "cuda: unknown mode \"%.*s\"%s: cuda takes %s", (int)mlen, params, hint,
                              CUDA_SYNTAX);
        }
        snprintf(mode, sizeof mode, "%.*s", (int)mlen, params);
    }
    for (const char *p = comma; p; p = strchr(p + 1, ',')) {
        const char *next = strchr(p + 1, ',');
        size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);
        if (parse_option(o, mode, p + 1, len, err))
            return -1;
    }
    if (o->mode == HC_CUDA_EMULATE) {
        /* the profile loads (a name or a file): whether the GPU follows it on a net's layers
         * is told at open */
        hc_profile *prof = hc_profile_load(o->profile, err);
        if (!prof)
            return hc_err_prefix(err, "cuda: emulate: ");
        hc_profile_free(prof);
    }
    return 0;
}

/* The kind: its options are parsed in every build; an instance needs HC_HAVE_CUDA. */
static void *cuda_parse(const char *params, hc_err *err)
{
    hc_cuda_opts *o = hc_calloc(1, sizeof *o, err, "cuda options");
    if (o && hc_cuda_opts_parse(params, o, err)) {
        free(o);
        return NULL;
    }
    return o;
}

#ifdef HC_HAVE_CUDA
/* opts NULL: a profile held in memory (hc_backend_open_opts.profile: taps, bisect-precision)
 * stands for "emulate:PROFILE". */
static void *cuda_open(const void *opts, const hc_backend_open_opts *oo, hc_err *err)
{
    hc_cuda_opts em = {.mode = HC_CUDA_EMULATE};
    return hc_cuda_open_with(opts ? opts : &em, oo, err);
}

static const hc_backend_ops cuda_ops = {.eval = hc_cuda_eval, .taps = hc_cuda_taps, .open_sharing = hc_cuda_open_sharing,
                                        .close = hc_cuda_close};
#else
static void *cuda_open(const void *opts, const hc_backend_open_opts *oo, hc_err *err)
{
    (void)opts;
    (void)oo;
    hc_err_set(err, HC_ECONFIG, "backend kind \"cuda\" is not built into this halfcheck (built where nvcc is found)");
    return NULL;
}

static void cuda_none_close(void *inst) { (void)inst; }

static const hc_backend_ops cuda_ops = {.close = cuda_none_close};
#endif

const hc_backend_kind hc_backend_cuda = {
    .name = "cuda",
    .syntax = "cuda:ref32|emulate:PROFILE|PATH.yaml|fp32|fp16[,pool32][,mid32][,probs32][,emulike]",
    .summary = "KataGo nets on an NVIDIA GPU: ref32 (the reference, bit for bit: own kernels in its operation "
               "order), emulate:PROFILE (emulate:PROFILE's bits), fp32 (no TF32) and fp16 (cuBLAS GEMMs, halfcheck's "
               "own kernels; ,pool32 ,mid32 ,probs32 ,emulike keep those values fp32); taps every layer; with threads, "
               "instances side by side on their own streams, each taking whole batches; built where nvcc is found",
#ifndef HC_HAVE_CUDA
    .missing = "built where nvcc is found",
#endif
    /* with threads: several passes at once (each lane on its own thread's stream), each still of
     * the evaluation's whole batch */
    .caps = {.shape = HC_BACKEND_TENSOR, .lanes = HC_LANES_WHOLE_BATCH, .taps = HC_TAPS_RETURNED, .profile = 1},
    .parse = cuda_parse,
    .free_opts = free,
    .open = cuda_open,
    .ops = &cuda_ops,
#ifdef HC_HAVE_CUDA
    .warm = hc_cuda_warm,
#endif
};
