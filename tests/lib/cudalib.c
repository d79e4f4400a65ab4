/* The GPU tests' opening of the cuda backend with planted faults (tests/lib/cudalib.h). */
#include "cudalib.h"

#include <stdio.h>

int hc_test_cuda_open(hc_backend *b, const char *params, const hc_cuda_faults *faults, const hc_net *net, int nx,
                      int ny, int max_batch, hc_err *err)
{
    b->kind = NULL;
    b->inst = NULL;
    hc_cuda_opts *o = hc_backend_cuda.parse(params, err);
    if (!o)
        return hc_err_prefix(err, "backend cuda:%s: ", params ? params : "");
    if (faults)
        o->faults = *faults;
    char spec[1200];
    snprintf(spec, sizeof spec, "cuda:%s", params ? params : "");
    hc_backend_open_opts oo = {.spec = spec, .net = net, .nx = nx, .ny = ny, .max_batch = max_batch, .threads = 1};
    int rc = hc_backend_open_parsed(b, &hc_backend_cuda, o, &oo, err);
    hc_backend_cuda.free_opts(o);
    return rc;
}

const char *hc_test_cuda_faults_text(const hc_cuda_faults *f, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
#define ADD(cond, ...)                                                                                  \
    do {                                                                                               \
        if ((cond) && o < len) {                                                                       \
            o += (size_t)snprintf(buf + o, len - o, "%s", o ? "+" : "");                               \
            if (o < len)                                                                               \
                o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);                                  \
        }                                                                                              \
    } while (0)
    ADD(f->split_k, "split_k");
    ADD(f->plant[0], "plant=%s", f->plant);
    ADD(f->noround[0], "noround=%s", f->noround);
    ADD(f->acc16_chunk8, "acc16_chunk8");
    ADD(f->sums, "sums");
    ADD(f->tiles, "tiles");
#undef ADD
    if (!buf[0])
        snprintf(buf, len, "none");
    return buf;
}
