/* A small fp32 GEMM whose every output is ONE fused-multiply-add chain.
 *
 * C[i][j] (=, or += when accumulate) acc(i, j) with acc = 0, then for k = 0..K-1 in order
 * acc = fma(A[i][k], B[k][j], acc), rounded once per step; with accumulate, C + acc is one
 * more rounded add. The result of an element depends only on row i of A and column j of B:
 * not on M, N, the tiling, the instruction set (AVX-512, AVX2+FMA, NEON on aarch64, or scalar
 * fmaf otherwise) or the thread. So a batch row's bits never depend on which other rows
 * share the call, which lets the engine batch GEMMs across rows.
 *
 * This is also the per-output order of a blocked sgemm kernel (Eigen's gebp, OpenBLAS's) for
 * K within its depth block, so fidelity to KataGo's Eigen backend is unchanged or better.
 *
 * A is addressed with a row stride and a column stride (A[i][k] = A[i * rsa + k * csa]) so that
 * transposed weights need no copy; B and C are row-major with leading dimensions ldb, ldc
 * (columns contiguous). No allocation; pointers are borrowed for the call. */
#ifndef HC_GEMM_H
#define HC_GEMM_H

#include <stddef.h>

void hc_gemm(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
             size_t ldb, float *C, size_t ldc, int accumulate);

/* hc_gemm (C = A B, no accumulate) with A packed in blocks of 4 rows: row i's element k at
 * A[(i / 4) * 4 * K + 4 * k + i % 4], M a multiple of 4. The same bits as hc_gemm on the same
 * values (every output one FMA chain over k in order). The AVX2 form streams A in order; the
 * other forms run hc_gemm_p4_ref (nothing packs for them). */
void hc_gemm_p4(int M, int N, int K, const float *A, const float *B, size_t ldb, float *C, size_t ldc);
void hc_gemm_p4_ref(int M, int N, int K, const float *A, const float *B, size_t ldb, float *C, size_t ldc);
/* 1 where hc_gemm_p4 has kernels of its own (AVX2 with FMA, not AVX-512): callers pack A only
 * there. */
int hc_gemm_p4_fast(void);
/* P = A (M x K, A[i][k] at A[i * rsa + k * csa], M a multiple of 4) in hc_gemm_p4's layout: a
 * copy, no arithmetic; P and A must not overlap. */
void hc_gemm_p4_pack(int M, int K, const float *A, size_t rsa, size_t csa, float *P);
/* Its inverse: A[i * rsa + k * csa] = P's row i, element k (a copy; no overlap). */
void hc_gemm_p4_unpack(int M, int K, const float *P, float *A, size_t rsa, size_t csa);

/* The plain scalar definition above (fmaf loop), for tests. */
void hc_gemm_ref(int M, int N, int K, const float *A, size_t rsa, size_t csa, const float *B,
                 size_t ldb, float *C, size_t ldc, int accumulate);

/* Which form hc_gemm was compiled to: "avx512", "avx2", "neon" or "scalar" (tests assert that
 * an aarch64 build takes the NEON path; every form has the same bits). */
const char *hc_gemm_isa(void);

#endif
