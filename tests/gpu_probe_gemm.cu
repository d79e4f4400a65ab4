/* Probe (calibration, docs/CALIBRATION.md): how the GPU's fp16 GEMM with fp32 accumulation
 * rounds, against the exact result (double) and against an IEEE fp32 sum in order. Shapes of a
 * 3x3 convolution of a b6c96 net at 19x19 (K = 864) and of a 1x1 / matmul (K = 96, 384).
 * Build and run by hand on a GPU machine:
 *   nvcc -O2 -o gpu_probe_gemm tests/gpu_probe_gemm.cu -lcublas && ./gpu_probe_gemm
 * Prints, per shape and path, the mean |error| and the mean signed error in units of the
 * fp32 ulp of the exact value, and the max relative error. */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                    \
    do {                                                                                         \
        if ((x) != 0) {                                                                          \
            fprintf(stderr, "%s failed\n", #x);                                                  \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static double ulp32(double v)
{
    float f = (float)fabs(v);
    if (f == 0)
        return 1e-45;
    return (double)nextafterf(f, INFINITY) - (double)f;
}

static void report(const char *what, int M, int N, int K, const float *c, const double *ex)
{
    double sabs = 0, ssig = 0, mrel = 0;
    for (long i = 0; i < (long)M * N; i++) {
        double u = ulp32(ex[i]), d = (double)c[i] - ex[i];
        sabs += fabs(d) / u;
        ssig += (ex[i] >= 0 ? d : -d) / u; /* > 0: away from zero, < 0: toward zero */
        double r = fabs(d) / (fabs(ex[i]) + 1e-30);
        if (r > mrel)
            mrel = r;
    }
    printf("| %dx%dx%d | %s | %.3f | %+.3f | %.2e |\n", M, N, K, what, sabs / ((double)M * N),
           ssig / ((double)M * N), mrel);
}

/* One shape's GEMMs: row-major C[M][N] = A[M][K] B[K][N], run as the column-major B^T A^T; c is
 * the host copy of the device's dC, ex the exact result. */
typedef struct gemm_case {
    cublasHandle_t h;
    int M, N, K;
    float *dC, *c;
    const double *ex;
} gemm_case;

/* cuBLAS's GEMM on operands of type t under the math mode and compute type, reported as what. */
static void run_gemm(const gemm_case *g, const char *what, cublasMath_t mode, const void *dA, const void *dB,
                     cudaDataType t, cublasComputeType_t ct)
{
    float one = 1, zero = 0;
    CK(cublasSetMathMode(g->h, mode));
    CK(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->N, g->M, g->K, &one, dB, t, g->N, dA, t, g->K, &zero, g->dC,
                    CUDA_R_32F, g->N, ct, CUBLAS_GEMM_DEFAULT));
    CK(cudaMemcpy(g->c, g->dC, sizeof(float) * g->M * g->N, cudaMemcpyDeviceToHost));
    report(what, g->M, g->N, g->K, g->c, g->ex);
}

int main(void)
{
    int shapes[][3] = {{96, 2166, 864}, {96, 2166, 96}, {384, 2166, 96}, {96, 2166, 2304}};
    cublasHandle_t h;
    CK(cublasCreate(&h));
    printf("| MxNxK | path | mean abs err (ulp) | mean signed err toward +|x| (ulp) | max rel err |\n");
    printf("|---|---|---|---|---|\n");
    unsigned seed = 1;
    for (int s = 0; s < 4; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        /* row-major C[M][N] = A[M][K] B[K][N]; half values of a trained net's magnitudes */
        __half *A = (__half *)malloc(sizeof(__half) * M * K), *B = (__half *)malloc(sizeof(__half) * K * N);
        float *Af = (float *)malloc(sizeof(float) * M * K), *Bf = (float *)malloc(sizeof(float) * K * N);
        for (long i = 0; i < (long)M * K; i++) {
            seed = seed * 1664525u + 1013904223u;
            Af[i] = __half2float(__float2half_rn(((seed >> 8) / 16777216.0f - 0.5f) * 0.2f));
            A[i] = __float2half_rn(Af[i]);
        }
        for (long i = 0; i < (long)K * N; i++) {
            seed = seed * 1664525u + 1013904223u;
            float v = (seed >> 8) / 16777216.0f;
            Bf[i] = __half2float(__float2half_rn(v < 0.4f ? 0.0f : (v - 0.4f) * 3.0f)); /* relu-like */
            B[i] = __float2half_rn(Bf[i]);
        }
        double *ex = (double *)calloc((size_t)M * N, sizeof(double));
        float *seq = (float *)calloc((size_t)M * N, sizeof(float));
        for (int m = 0; m < M; m++)
            for (int k = 0; k < K; k++) {
                double a = Af[(long)m * K + k];
                float af = Af[(long)m * K + k];
                for (int n = 0; n < N; n++) {
                    ex[(long)m * N + n] += a * Bf[(long)k * N + n];
                    seq[(long)m * N + n] = fmaf(af, Bf[(long)k * N + n], seq[(long)m * N + n]);
                }
            }
        __half *dA, *dB;
        float *dAf, *dBf, *dC;
        CK(cudaMalloc(&dA, sizeof(__half) * M * K));
        CK(cudaMalloc(&dB, sizeof(__half) * K * N));
        CK(cudaMalloc(&dAf, sizeof(float) * M * K));
        CK(cudaMalloc(&dBf, sizeof(float) * K * N));
        CK(cudaMalloc(&dC, sizeof(float) * M * N));
        CK(cudaMemcpy(dA, A, sizeof(__half) * M * K, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dB, B, sizeof(__half) * K * N, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dAf, Af, sizeof(float) * M * K, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dBf, Bf, sizeof(float) * K * N, cudaMemcpyHostToDevice));
        float *c = (float *)malloc(sizeof(float) * M * N);
        report("cpu fp32 fma in order", M, N, K, seq, ex);
        gemm_case g = {h, M, N, K, dC, c, ex};
        run_gemm(&g, "cuBLAS fp16 in, fp32 acc (tensor cores)", CUBLAS_DEFAULT_MATH, dA, dB, CUDA_R_16F,
                 CUBLAS_COMPUTE_32F);
        run_gemm(&g, "cuBLAS fp32 (SIMT FFMA, cuda:fp32)", CUBLAS_DEFAULT_MATH, dAf, dBf, CUDA_R_32F, CUBLAS_COMPUTE_32F);
        run_gemm(&g, "cuBLAS fp16 in, fp32 acc, pedantic", CUBLAS_PEDANTIC_MATH, dA, dB, CUDA_R_16F,
                 CUBLAS_COMPUTE_32F_PEDANTIC);
        cudaFree(dA), cudaFree(dB), cudaFree(dAf), cudaFree(dBf), cudaFree(dC);
        free(A), free(B), free(Af), free(Bf), free(ex), free(seq), free(c);
    }
    cublasDestroy(h);
    return 0;
}
