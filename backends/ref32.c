/* ref32: the fp32 reference engine (refs/engine.h) as a tensor backend. No params. */
#include "backends/backend.h"
#include "refs/engine.h"

static void *ref32_parse(const char *params, hc_err *err)
{
    if (params && *params) {
        hc_err_set(err, HC_ECONFIG, "ref32 takes no parameters (got \"%s\")", params);
        return NULL;
    }
    return hc_backend_no_opts();
}

static void *ref32_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    (void)opts;
    if (!o->net) {
        hc_err_set(err, HC_ECONFIG, "ref32 needs a net");
        return NULL;
    }
    return hc_engine_new(o->net, o->max_batch, o->nx, o->ny, o->threads, err);
}

static int ref32_eval(void *inst, int batch, const float *spatial, const float *global,
                      const float *meta, hc_raw_heads *out, hc_err *err)
{
    if (!out->taps)
        return hc_engine_eval(inst, batch, spatial, global, meta, out, err);
    /* Taps come from the engine's layer hook, installed for this eval only. */
    hc_tapset_reset(out->taps);
    hc_engine_set_hook(inst, hc_tapset_hook, out->taps);
    hc_engine_set_inner_taps(inst, 1);
    int rc = hc_engine_eval(inst, batch, spatial, global, meta, out, err);
    hc_engine_set_inner_taps(inst, 0);
    hc_engine_set_hook(inst, NULL, NULL);
    return rc ? rc : hc_tapset_status(out->taps, err);
}

static int ref32_taps(void *inst)
{
    (void)inst;
    return 1;
}

static int ref32_set_taps(void *inst, hc_engine_hook_fn fn, void *user, hc_err *err)
{
    (void)err;
    hc_engine_set_hook(inst, fn, user);
    return 0;
}

static void *ref32_open_sharing(void *base, int max_batch, int threads, hc_err *err)
{
    return hc_engine_new_sharing(base, max_batch, threads, NULL, err);
}

static void ref32_close(void *inst)
{
    hc_engine_free(inst);
}

static const hc_backend_ops ref32_ops = {
    .eval = ref32_eval,
    .set_taps = ref32_set_taps,
    .taps = ref32_taps,
    .open_sharing = ref32_open_sharing,
    .close = ref32_close,
};

const hc_backend_kind hc_backend_ref32 = {
    .name = "ref32",
    .syntax = "ref32",
    .summary = "the fp32 reference forward pass (KataGo's Eigen arithmetic, one FMA chain per GEMM output)",
    .caps = {.shape = HC_BACKEND_TENSOR, .lanes = HC_LANES_ALWAYS, .taps = HC_TAPS_HOOK | HC_TAPS_RETURNED},
    .parse = ref32_parse,
    .open = ref32_open,
    .ops = &ref32_ops,
};
