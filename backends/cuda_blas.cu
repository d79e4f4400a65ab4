/* The cuda backend's cuBLAS loader (backends/cuda_blas.h): dlopen, the entry points, one handle. */
#include "backends/cuda_blas.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stddef.h>

#ifndef HC_CUDA_LIBDIR
#define HC_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

static int load(hc_cublas *a, hc_err *err)
{
    const char *names[] = {"libcublas.so.13", "libcublas.so", HC_CUDA_LIBDIR "/libcublas.so.13",
                           HC_CUDA_LIBDIR "/libcublas.so"};
    const char *why = "";
    for (size_t i = 0; i < sizeof names / sizeof *names && !a->lib; i++) {
        a->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!a->lib && i == 0) {
            const char *d = dlerror();
            why = d ? d : "";
        }
    }
    if (!a->lib)
        return hc_err_set(err, HC_EBACKEND, "cuda: cannot load cuBLAS (libcublas.so.13): %s", why);
#define BLAS_SYM(field, sym)                                                                    \
    do {                                                                                        \
        *(void **)&a->field = dlsym(a->lib, sym);                                               \
        if (!a->field)                                                                          \
            return hc_err_set(err, HC_EBACKEND, "cuda: cuBLAS lacks %s", sym);                  \
    } while (0)
    BLAS_SYM(create, "cublasCreate_v2");
    BLAS_SYM(destroy, "cublasDestroy_v2");
    BLAS_SYM(set_math_mode, "cublasSetMathMode");
    BLAS_SYM(set_stream, "cublasSetStream_v2");
    BLAS_SYM(gemm_ex, "cublasGemmEx");
    BLAS_SYM(gemm_sb_ex, "cublasGemmStridedBatchedEx");
    BLAS_SYM(status_string, "cublasGetStatusString");
#undef BLAS_SYM
    return 0;
}

int hc_cublas_open(hc_cublas *b, hc_err *err)
{
    if (load(b, err))
        return -1;
    cublasStatus_t st = b->create(&b->handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return hc_err_set(err, HC_EBACKEND, "cuda: open: cublasCreate failed: %s", b->status_string(st));
    b->handle_ok = 1;
    st = b->set_math_mode(b->handle, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS)
        return hc_err_set(err, HC_EBACKEND, "cuda: open: cublasSetMathMode failed: %s", b->status_string(st));
    st = b->set_stream(b->handle, cudaStreamPerThread);
    if (st != CUBLAS_STATUS_SUCCESS)
        return hc_err_set(err, HC_EBACKEND, "cuda: open: cublasSetStream failed: %s", b->status_string(st));
    return 0;
}

void hc_cublas_close(hc_cublas *b)
{
    if (b->handle_ok)
        b->destroy(b->handle);
    if (b->lib)
        dlclose(b->lib);
    b->handle_ok = 0;
    b->lib = NULL;
}
