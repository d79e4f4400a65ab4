/* The GPU tests' opening of the cuda backend with planted faults (tests/lib/cudalib.h). */
#include "cudalib.h"

#include <stdio.h>
#include <string.h>

int hc_test_cuda_open(hc_backend *b, const char *params, const hc_cuda_faults *faults, const hc_net *net, int nx,
                      int ny, int max_batch, hc_err *err)
{
    b->vt = NULL;
    b->inst = NULL;
#ifdef HC_HAVE_CUDA
    hc_cuda_opts o;
    if (hc_cuda_opts_parse(params, &o, err) == 0) {
        if (faults)
            o.faults = *faults;
        hc_backend_open_opts oo = {.net = net, .nx = nx, .ny = ny, .max_batch = max_batch, .threads = 1};
        b->inst = hc_cuda_open_with(&o, &oo, err);
    }
    if (b->inst) {
        b->vt = &hc_backend_cuda;
        return 0;
    }
#else
    (void)faults;
    (void)net;
    (void)nx;
    (void)ny;
    (void)max_batch;
    hc_err_set(err, HC_EBACKEND, "cuda: not built into this halfcheck (built where nvcc is found)");
#endif
    return hc_err_prefix(err, "backend cuda:%s: ", params ? params : "");
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
