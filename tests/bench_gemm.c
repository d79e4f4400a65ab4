/* hc_gemm throughput on the shapes the reference calls it with, beside OpenBLAS's sgemm on the
 * same operands (one thread; the reference does not link OpenBLAS, only this benchmark does): GFLOP/s (2*M*N*K per GEMM) of
 * thread CPU time, best of several repeats (the figure least disturbed by other processes on a
 * shared machine). Operands are laid out as the callers lay them: the Winograd tile GEMMs read
 * B and write C with row stride 36 * chunk (refs/winograd.c wino_gemms), the transformer
 * projections read transposed weights in place (hc_matmul_cs), the attention GEMMs read
 * per-head slices of the whole batch's q/k/v planes. Never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "refs/gemm.h"

typedef struct shape {
    const char *name;
    int M, N, K;
    int transA;  /* A[i][k] = A[i + k * lda] (weights stored [in][out]) instead of A[i * lda + k] */
    size_t lda;  /* A's stride between rows (or columns when transA) */
    size_t ldb, ldc;
    int calls;   /* GEMMs per repeat, on consecutive slices (the 36 Winograd tile positions) */
    size_t a_step, b_step, c_step; /* per call offsets */
} shape;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *fill(size_t n)
{
    float *v = malloc(n * sizeof(float));
    unsigned s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (float)((s >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return v;
}

static void run(const shape *sh, int reps)
{
    size_t asz = sh->a_step * (size_t)(sh->calls - 1) +
                 (sh->transA ? sh->lda * (size_t)sh->K : sh->lda * (size_t)sh->M) + 64;
    size_t bsz = sh->b_step * (size_t)(sh->calls - 1) + sh->ldb * (size_t)sh->K + 64;
    size_t csz = sh->c_step * (size_t)(sh->calls - 1) + sh->ldc * (size_t)sh->M + 64;
    float *A = fill(asz), *B = fill(bsz), *C = fill(csz);
    size_t rsa = sh->transA ? 1 : sh->lda, csa = sh->transA ? sh->lda : 1;
    double flops = 2.0 * sh->M * sh->N * sh->K * sh->calls;
    /* enough GEMMs per timing for ~5 ms */
    int inner = (int)(5e-3 * 40e9 / flops) + 1;
    double best = 1e30, best_blas = 1e30;
    for (int r = 0; r < reps; r++) { /* interleaved, so that both see the same machine */
        double t0 = cpu_s();
        for (int it = 0; it < inner; it++)
            for (int c = 0; c < sh->calls; c++)
                hc_gemm(sh->M, sh->N, sh->K, A + sh->a_step * c, rsa, csa, B + sh->b_step * c,
                        sh->ldb, C + sh->c_step * c, sh->ldc, 0);
        double t = (cpu_s() - t0) / inner;
        if (t < best)
            best = t;
        t0 = cpu_s();
        for (int it = 0; it < inner; it++)
            for (int c = 0; c < sh->calls; c++)
                cblas_sgemm(CblasRowMajor, sh->transA ? CblasTrans : CblasNoTrans, CblasNoTrans, sh->M,
                            sh->N, sh->K, 1.0f, A + sh->a_step * c, (int)sh->lda, B + sh->b_step * c,
                            (int)sh->ldb, 0.0f, C + sh->c_step * c, (int)sh->ldc);
        t = (cpu_s() - t0) / inner;
        if (t < best_blas)
            best_blas = t;
    }
    printf("%-34s %5d %5d %5d %6s %6zu  %8.1f us  %6.1f GFLOP/s  %6.1f GFLOP/s\n", sh->name, sh->M,
           sh->N, sh->K, sh->transA ? "T" : "N", sh->ldb, best * 1e6, flops / best * 1e-9,
           flops / best_blas * 1e-9);
    free(A), free(B), free(C);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    openblas_set_num_threads(1);
    const char *only = argc > 2 ? argv[2] : NULL;
    enum { S = 16 * 361, NC = 24, LD = 36 * NC, NC5 = 32 };
    const shape shapes[] = {
        /* 36 Winograd F(4x4,3x3) tile GEMMs of one chunk of 24 (row, tile) pairs, c96 */
        {"wino3x3 c96 x36 (ldb 36*24)", 96, NC, 96, 0, 96, LD, LD, 36, 96 * 96, NC, NC},
        /* the same with the transformed tiles laid out [36][channel][chunk]: B and C
         * contiguous per tile position (ldb = ldc = 24: B read in place, no copy) */
        {"wino3x3 x36 ([36][c][24] layout)", 96, NC, 96, 0, 96, NC, NC, 36, 96 * 96, 96 * NC, 96 * NC},
        /* chunks of 32 (the AVX-512 build's: two 16-lane vectors) */
        {"wino3x3 x36 ([36][c][32] layout)", 96, NC5, 96, 0, 96, NC5, NC5, 36, 96 * 96, 96 * NC5, 96 * NC5},
        {"wino3x3 same A (A in cache)", 96, NC, 96, 0, 96, LD, LD, 36, 0, NC, NC},
        {"wino c96 partial chunk 13", 96, 13, 96, 0, 96, LD, LD, 36, 96 * 96, NC, NC},
        {"wino 5x5 input x36 (K 22)", 96, NC, 22, 0, 22, LD, LD, 36, 96 * 22, NC, NC},
        /* hc_matmul_cs, batch 16 x 361: out_c x (batch*hw) x in_c, weights [in][out] (the
         * transformer nets' projections and FFN) */
        {"proj 96<-96 (matmul_cs)", 96, S, 96, 1, 96, S, S, 1, 0, 0, 0},
        {"proj 256<-96 (matmul_cs)", 256, S, 96, 1, 256, S, S, 1, 0, 0, 0},
        {"proj 96<-256 (matmul_cs)", 96, S, 256, 1, 96, S, S, 1, 0, 0, 0},
        {"proj 192<-96 (matmul_cs)", 192, S, 96, 1, 192, S, S, 1, 0, 0, 0},
        {"proj 96<-384 (matmul_cs)", 96, S, 384, 1, 96, S, S, 1, 0, 0, 0},
        /* hc_matmul_cs at batch 1 */
        {"proj 96<-96 batch 1", 96, 361, 96, 1, 96, 361, 361, 1, 0, 0, 0},
        /* attention strips (ATT_NQ 64) of 16 x 361 queries: scores k^T q, then values v p,
         * head dims 32 and 16 */
        {"att scores 361x64 K32 (A^T ld S)", 361, 64, 32, 1, S, S, 64, 90, 0, 64, 0},
        {"att values 32x64 K361", 32, 64, 361, 0, S, 64, S, 6, 0, 0, 64},
        {"att values 16x64 K361", 16, 64, 361, 0, S, 64, S, 6, 0, 0, 64},
        /* hc_matmul_bc: batch x out_c x in_c */
        {"matmul_bc 16x96 K96", 16, 96, 96, 0, 96, 96, 96, 1, 0, 0, 0},
    };
    printf("%-34s %5s %5s %5s %6s %6s  %11s  %14s  %14s\n", "shape", "M", "N", "K", "A", "ldb", "time",
           "hc_gemm", "OpenBLAS");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!only || strstr(shapes[i].name, only))
            run(&shapes[i], reps);
    return 0;
}
