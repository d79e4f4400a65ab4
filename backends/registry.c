/* The table of backends by name (ref32, file, mutate, fault, emulate, gtp, pipe, cuda) and lookup in it. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

extern const hc_backend_vtbl hc_backend_ref32;
extern const hc_backend_vtbl hc_backend_file;
extern const hc_backend_vtbl hc_backend_mutate;
extern const hc_backend_vtbl hc_backend_fault;
extern const hc_backend_vtbl hc_backend_emulate;
extern const hc_backend_vtbl hc_backend_gtp;
extern const hc_backend_vtbl hc_backend_pipe;
#ifdef HC_HAVE_CUDA
extern const hc_backend_vtbl hc_backend_cuda;
#endif

/* One line per backend kind; guard optional ones with their HC_HAVE_* macro. */
const hc_backend_vtbl *const hc_backends[] = {
    &hc_backend_ref32,
    &hc_backend_file,
    &hc_backend_mutate,
    &hc_backend_fault,
    &hc_backend_emulate,
    &hc_backend_gtp,
    &hc_backend_pipe,
#ifdef HC_HAVE_CUDA
    &hc_backend_cuda,
#endif
    NULL,
};

const hc_backend_vtbl *hc_backend_find(const char *spec, const char **params, hc_err *err)
{
    if (!spec)
        spec = "";
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; hc_backends[i]; i++)
        if (strlen(hc_backends[i]->name) == n && strncmp(hc_backends[i]->name, spec, n) == 0) {
            if (params)
                *params = colon ? colon + 1 : spec + n;
            return hc_backends[i];
        }
    char known[512] = "";
    for (int i = 0; hc_backends[i]; i++) {
        size_t len = strlen(known);
        snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", hc_backends[i]->name);
    }
    hc_err_set(err, HC_ECONFIG, "unknown backend kind \"%.*s\" (known: %s)", (int)n, spec, known);
    return NULL;
}

int hc_backend_open(hc_backend *b, const char *spec, const hc_net *net, int nx, int ny,
                    int max_batch, int threads, hc_err *err)
{
    const char *params;
    b->vt = hc_backend_find(spec, &params, err);
    b->inst = NULL;
    if (!b->vt)
        return -1;
    b->inst = b->vt->open(params, net, nx, ny, max_batch, threads, err);
    if (!b->inst) {
        b->vt = NULL;
        return hc_err_prefix(err, "backend %s: ", spec);
    }
    return 0;
}

int hc_backend_lanes_for(const char *spec, int batch, int threads)
{
    hc_err err = {0};
    const char *params;
    const hc_backend_vtbl *vt = hc_backend_find(spec, &params, &err);
    return vt && vt->lanes && vt->shape == HC_BACKEND_TENSOR && batch >= 1 && threads > 1 ? threads : 0;
}

int hc_backend_lane_batch(int batch, int n_lanes)
{
    return n_lanes > 0 && batch > 0 ? (batch + n_lanes - 1) / n_lanes : 1;
}

hc_backend *hc_backend_open_lanes(const char *spec, const hc_net *net, int nx, int ny, int n_lanes, int lane_batch,
                                  hc_err *err)
{
    hc_backend *lanes = calloc((size_t)(n_lanes > 0 ? n_lanes : 1), sizeof *lanes);
    if (!lanes) {
        hc_err_set(err, HC_ENOMEM, "out of memory for %d backend lanes", n_lanes);
        return NULL;
    }
    for (int l = 0; l < n_lanes; l++) {
        int rc;
        if (l > 0 && lanes[0].vt->open_sharing) {
            lanes[l].vt = lanes[0].vt;
            lanes[l].inst = lanes[0].vt->open_sharing(lanes[0].inst, lane_batch, 1, err);
            rc = lanes[l].inst ? 0 : hc_err_prefix(err, "backend %s, lane %d: ", spec, l);
            if (rc)
                lanes[l].vt = NULL;
        } else
            rc = hc_backend_open(&lanes[l], spec, net, nx, ny, lane_batch, 1, err);
        if (rc) {
            hc_backend_close_lanes(lanes, l);
            return NULL;
        }
    }
    return lanes;
}

void hc_backend_close_lanes(hc_backend *lanes, int n_lanes)
{
    /* The first lane last: the others may borrow from it. */
    for (int l = n_lanes - 1; lanes && l >= 0; l--)
        hc_backend_close(&lanes[l]);
    free(lanes);
}

void hc_backend_close(hc_backend *b)
{
    if (b && b->vt && b->inst)
        b->vt->close(b->inst);
    if (b) {
        b->vt = NULL;
        b->inst = NULL;
    }
}

long hc_backend_taps(hc_backend *b, const char *layer, float *buf, long capacity, hc_err *err)
{
    if (!b->vt || !b->vt->taps)
        return hc_err_set(err, HC_EBACKEND, "backend %s: taps not supported",
                          b->vt ? b->vt->name : "(closed)");
    return b->vt->taps(b->inst, layer, buf, capacity, err);
}

int hc_backend_set_taps(hc_backend *b, hc_engine_hook_fn fn, void *user, hc_err *err)
{
    if (!b->vt || !b->vt->set_taps)
        return hc_err_set(err, HC_EBACKEND, "backend %s: taps not supported",
                          b->vt ? b->vt->name : "(closed)");
    return b->vt->set_taps(b->inst, fn, user, err);
}
