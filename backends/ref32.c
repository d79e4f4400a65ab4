/* ref32: the fp32 reference engine (refs/engine.h) as a tensor backend. No params. */
#include "backends/backend.h"
#include "refs/engine.h"

static void *ref32_open(const char *params, const hc_net *net, int nx, int ny, int max_batch,
                        int threads, hc_err *err)
{
    if (params && *params) {
        hc_err_set(err, HC_ECONFIG, "ref32 takes no parameters (got \"%s\")", params);
        return NULL;
    }
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "ref32 needs a net");
        return NULL;
    }
    return hc_engine_new(net, max_batch, nx, ny, threads, err);
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

const hc_backend_vtbl hc_backend_ref32 = {
    .name = "ref32",
    .shape = HC_BACKEND_TENSOR,
    .help = "fp32 reference forward pass (KataGo's Eigen arithmetic, one FMA chain per GEMM output); no params",
    .open = ref32_open,
    .eval = ref32_eval,
    .eval_positions = NULL,
    .close = ref32_close,
    .set_taps = ref32_set_taps,
    .taps = ref32_taps,
    .lanes = HC_LANES_ALWAYS,
    .open_sharing = ref32_open_sharing,
};
