/* The cuda backend where it can be checked without a GPU (make test; the GPU checks are
 * tests/gpu_test_cuda.c, make test-gpu): registered only in a CUDA build; bad params are a
 * config error naming what is wrong; without a device (or driver) open fails cleanly with a backend error. */
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "harness/model/model.h"

int main(void)
{
    hc_plan(7);
    hc_err err = {0};
    const char *params = NULL;
    const hc_backend_kind *vt = hc_backend_find(NULL, "cuda:fp16", &params, &err);
#ifndef HC_HAVE_CUDA
    hc_check("cuda-1.1", vt == NULL && err.code == HC_ECONFIG && strstr(err.msg, "not built"),
             "cuda opens in a build without CUDA: %s", err.msg);
    hc_skip_rest("cuda-1.2", "built without CUDA (no nvcc, CUDA=0 or SAN=1)");
    return hc_test_exit();
#else
    hc_check("cuda-1.1", vt != NULL && strcmp(params, "fp16") == 0, "cuda not registered: %s", err.msg);
    const char *p = hc_shared("nets/synth/pub_v5.bin.gz");
    if (!p) {
        hc_skip_rest("cuda-1.2", "../shared/nets/synth/pub_v5.bin.gz absent");
        return hc_test_exit();
    }
    hc_net *net = hc_net_load(p, &err);
    if (!hc_check("cuda-1.2", net != NULL, "%s", err.msg))
        return hc_fail_rest("cuda-1.2.rest", "not run: %s failed", "cuda-1.2"), hc_test_exit();
    /* refused by the parser before any device is asked (tests/test_cuda_opts: every message) */
    static const char *const bad[] = {"cuda", "cuda:fp64", "cuda:fp32,pool32", "cuda:fp16,x"};
    static const char *const why[] = {"a mode is needed", "unknown mode \"fp64\"", "unknown option \"pool32\"",
                                      "unknown option \"x\""};
    for (int i = 0; i < 4; i++) {
        hc_backend b = {0};
        hc_err_clear(&err);
        int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = bad[i], .net = net, .nx = 10, .ny = 14,
                                                                  .max_batch = 4, .threads = 1}, &err);
        char id[32];
        snprintf(id, sizeof id, "cuda-2.%d", i + 1);
        hc_check(id, rc != 0 && err.code == HC_ECONFIG && strstr(err.msg, why[i]),
                 "%s: rc %d code %d: %s", bad[i], rc, err.code, err.msg);
        hc_backend_close(&b);
    }
    hc_backend b = {0};
    hc_err_clear(&err);
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "cuda:fp32", .net = net, .nx = 10, .ny = 14,
                                                         .max_batch = 4, .threads = 1}, &err) == 0) {
        hc_skip("cuda-3.1", "a CUDA device is present: see make test-gpu");
        hc_backend_close(&b);
    } else if (strstr(err.msg, "no CUDA device")) {
        hc_check("cuda-3.1", err.code == HC_EBACKEND && strstr(err.msg, "backend cuda:fp32: cuda: "),
                 "code %d: %s", err.code, err.msg);
    } else {
        hc_check("cuda-3.1", 0, "open failed for another reason: %s", err.msg);
    }
    hc_net_free(net);
    return hc_test_exit();
#endif
}
