/* cuBLAS for the cuda backend's fp32 and fp16 modes (backends/cuda_blas.cu), opened at run time
 * (dlopen) rather than linked: loading it costs every process ~0.2 s of relocations, which every
 * test program and CLI call would pay; a program that never opens cuda:fp32 or cuda:fp16 never
 * loads it. C++ only (nvcc). */
#ifndef HC_CUDA_BLAS_H
#define HC_CUDA_BLAS_H

extern "C" {
#include "harness/base/err.h"
}

#include <cublas_v2.h>

/* The library, the entry points this backend calls, and one handle. Zeroed: nothing open. */
struct hc_cublas {
    void *lib;
    cublasHandle_t handle;
    int handle_ok;
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasSetStream_v2) set_stream;
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                              const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                              cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*gemm_sb_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                 const void *, cudaDataType, int, long long, const void *, cudaDataType, int,
                                 long long, const void *, void *, cudaDataType, int, long long, int,
                                 cublasComputeType_t, cublasGemmAlgo_t);
    decltype(&cublasGetStatusString) status_string;
};

/* Loads cuBLAS (libcublas.so.13, else libcublas.so, from the loader's path or HC_CUDA_LIBDIR) and
 * creates a handle in the default math mode (fp32 stays fp32: no TF32) on the calling thread's
 * stream (cudaStreamPerThread, as every kernel of the backend). 0, or -1 with err (HC_EBACKEND);
 * b is then safe to close. */
int hc_cublas_open(hc_cublas *b, hc_err *err);
/* Destroys the handle and unloads the library (either may be absent). */
void hc_cublas_close(hc_cublas *b);

#endif
