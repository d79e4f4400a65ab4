/* hc_gemm: bit-exact against the scalar fmaf chain (odd shapes, strides, transposed A,
 * accumulate), a column's bits independent of N, M and the column's position, and hc_gemm_p4
 * (A packed in blocks of 4 rows) bit-exact against hc_gemm. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/gemm.h"
#include "hc_test.h"

static hc_rng rng = {0x243F6A8885A308D3ull};

/* One element recomputed from the definition, independently of hc_gemm_ref. */
static float chain(int K, const float *A, size_t rsa, size_t csa, const float *B, size_t ldb, int i,
                   int j)
{
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc = fmaf(A[i * rsa + k * csa], B[k * ldb + j], acc);
    return acc;
}

/* hc_gemm on one shape with random A, B and C against hc_gemm_ref: 1 when their C differ (the
 * padding between rows included), plus 1 when `spot` and a plain (not accumulating) element
 * differs from the fmaf chain itself. */
static int shape_differs(int M, int N, int K, size_t rsa, size_t csa, size_t a_len, size_t ldb, size_t ldc,
                         int accumulate, int spot)
{
    float *A = hc_rvec(&rng, a_len, 1.0), *B = hc_rvec(&rng, ldb * K, 1.0);
    float *C = hc_rvec(&rng, ldc * M, 1.0), *R = malloc(ldc * M * sizeof(float));
    memcpy(R, C, ldc * M * sizeof(float));
    hc_gemm(M, N, K, A, rsa, csa, B, ldb, C, ldc, accumulate);
    hc_gemm_ref(M, N, K, A, rsa, csa, B, ldb, R, ldc, accumulate);
    int bad = memcmp(C, R, ldc * M * sizeof(float)) != 0;
    if (spot && !accumulate) {
        int i = (M - 1) / 2, j = N - 1;
        bad += C[i * ldc + j] != chain(K, A, rsa, csa, B, ldb, i, j);
    }
    free(A), free(B), free(C), free(R);
    return bad;
}

static void test_exact(void)
{
    int bad = 0, cases = 0;
    for (int M = 1; M <= 70; M += (M < 14 ? 1 : 7))
        for (int N = 1; N <= 70; N += (N < 34 ? 1 : 9))
            for (int K = 1; K <= 70; K += (K < 4 ? 1 : 11)) {
                int trans = (M + N + K) % 2, accumulate = (M * N + K) % 3 == 0;
                size_t lda = (size_t)K + (size_t)(M % 3), ldb = (size_t)N + (size_t)(K % 5),
                       ldc = (size_t)N + 3;
                size_t rsa = trans ? 1 : lda, csa = trans ? (size_t)M + 2 : 1;
                bad += shape_differs(M, N, K, rsa, csa, trans ? csa * K : lda * M, ldb, ldc, accumulate, 1);
                cases++;
            }
    hc_check("gemm-1.1", bad == 0 && cases > 1000, "%d of %d shapes differ from the fmaf chain", bad, cases);
}

/* The panel choices test_exact's small K does not reach: K past the 24-column panels' limit
 * (16-column panels), past the packing buffer (B read in place), B already as narrow as a
 * panel (ldb 8, 16, 24: read in place), and row counts leaving every partial row block. */
static void test_wide(void)
{
    static const int Ms[] = {1, 5, 13, 97}, Ns[] = {7, 8, 16, 24, 40, 61}, Ks[] = {255, 257, 300, 513, 600};
    int bad = 0, cases = 0;
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
            for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++) {
                int M = Ms[a], N = Ns[b], K = Ks[c];
                int trans = (int)(a + b + c) % 2, accumulate = (int)(a + c) % 2;
                size_t ldb = (a + b) % 2 ? (size_t)N : (size_t)N + 5, ldc = (size_t)N + 1;
                size_t rsa = trans ? 1 : (size_t)K + 1, csa = trans ? (size_t)M + 3 : 1;
                bad += shape_differs(M, N, K, rsa, csa, trans ? csa * K : rsa * M, ldb, ldc, accumulate, 0);
                cases++;
            }
    hc_check("gemm-1.2", bad == 0 && cases == 120, "%d of %d large-K shapes differ from the fmaf chain",
             bad, cases);
}

/* Column j of C must have the same bits whether computed in a call of N columns or of one
 * column at offset 0, and row i whether M rows or one row. */
static void test_invariance(void)
{
    int K = 96, M = 13, N = 61;
    float *A = hc_rvec(&rng, (size_t)M * K, 1.0), *B = hc_rvec(&rng, (size_t)K * N, 1.0);
    float *C = malloc((size_t)M * N * sizeof(float));
    hc_gemm(M, N, K, A, K, 1, B, N, C, N, 0);
    int bad = 0;
    for (int j = 0; j < N; j++)
        for (int n = 1; n <= 20 && j + n <= N; n += 3) {
            float one[13 * 20];
            hc_gemm(M, n, K, A, K, 1, B + j, N, one, n, 0);
            for (int i = 0; i < M; i++)
                if (memcmp(&one[i * n], &C[i * N + j], sizeof(float)) != 0)
                    bad++;
        }
    for (int i = 0; i < M; i++) {
        float row[61];
        hc_gemm(1, N, K, A + (size_t)i * K, K, 1, B, N, row, N, 0);
        if (memcmp(row, C + (size_t)i * N, sizeof row) != 0)
            bad++;
    }
    hc_check("gemm-2.1", bad == 0, "%d columns or rows change bits with the call's shape", bad);
    /* the chain differs from a pairwise or reordered sum somewhere: the test can see order */
    int differs = 0;
    for (int j = 0; j < N && !differs; j++) {
        float s = 0.0f;
        for (int k = K - 1; k >= 0; k--)
            s = fmaf(A[k], B[(size_t)k * N + j], s);
        differs = s != C[j];
    }
    hc_check("gemm-2.2", differs, "reversed order gave the same bits on every column");
    free(A), free(B), free(C);
}

/* hc_gemm_p4 (A in blocks of 4 rows) against hc_gemm on the same A row-major: the same bits
 * on every shape its kernels split differently (24, 16 and 8 or fewer columns a panel, 12, 8
 * and 4 rows a block of the narrow panels, ragged last panels, B wider than N), and against
 * hc_gemm_p4_ref; a packed A read as row-major must differ (the test sees the layout). */
static void test_packed(void)
{
    static const int Ms[] = {4, 8, 12, 16, 20, 32, 96}, Ns[] = {1, 5, 8, 9, 16, 17, 23, 24, 25, 48, 61};
    static const int Ks[] = {1, 3, 22, 96, 200};
    int bad = 0, cases = 0, seen = 0;
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
            for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++) {
                int M = Ms[a], N = Ns[b], K = Ks[c];
                size_t ldb = (size_t)N + (size_t)(c % 2) * 3, ldc = (size_t)N + (size_t)(a % 2);
                float *A = hc_rvec(&rng, (size_t)M * K, 1.0), *P = malloc((size_t)M * K * sizeof(float));
                float *B = hc_rvec(&rng, ldb * K, 1.0);
                float *C = calloc((size_t)M * ldc, sizeof(float)), *R = calloc((size_t)M * ldc, sizeof(float));
                float *Q = calloc((size_t)M * ldc, sizeof(float));
                for (int i = 0; i < M; i++)
                    for (int k = 0; k < K; k++)
                        P[(size_t)(i / 4) * 4 * K + (size_t)k * 4 + i % 4] = A[(size_t)i * K + k];
                hc_gemm_p4(M, N, K, P, B, ldb, C, ldc);
                hc_gemm(M, N, K, A, (size_t)K, 1, B, ldb, R, ldc, 0);
                hc_gemm_p4_ref(M, N, K, P, B, ldb, Q, ldc);
                bad += memcmp(C, R, (size_t)M * ldc * sizeof(float)) != 0 ||
                       memcmp(Q, R, (size_t)M * ldc * sizeof(float)) != 0;
                if (K > 1 && M > 4) { /* the packed floats as a row-major A give other outputs */
                    hc_gemm(M, N, K, P, (size_t)K, 1, B, ldb, Q, ldc, 0);
                    seen += memcmp(Q, R, (size_t)M * ldc * sizeof(float)) != 0;
                }
                cases++;
                free(A), free(P), free(B), free(C), free(R), free(Q);
            }
    hc_check("gemm-3.1", bad == 0 && cases == 385, "%d of %d packed shapes differ from hc_gemm", bad, cases);
    hc_check("gemm-3.2", seen > 200, "the packed layout read as row-major matched hc_gemm on %d shapes only", seen);
}

int main(void)
{
    hc_plan(2 + 2 + 2); /* 1.x exact and wide shapes, 2.x shape invariance, 3.x packed A */
    test_exact();
    test_wide();
    test_invariance();
    test_packed();
    return hc_test_exit();
}
