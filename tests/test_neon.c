/* The SIMD form hc_gemm was built with (NEON on aarch64, AVX2/AVX-512 on x86-64) is the one the
 * target promises, and gives the scalar fmaf chain's bits on the shapes its edge tiles take; the
 * Winograd transforms, softmax strips and vector exp are built in their target's form too. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs/gemm.h"
#include "refs/kernels.h"
#include "hc_test.h"

static hc_rng rng = {0x9E3779B97F4A7C15ull};

/* What this build's compiler targets, from the same macros the library was compiled with. */
static const char *expected_isa(void)
{
#if defined(__AVX512F__)
    return "avx512";
#elif defined(__FMA__) && defined(__AVX2__)
    return "avx2";
#elif defined(__aarch64__)
    return "neon";
#else
    return "scalar";
#endif
}

/* Equal bits, or both NaN (which NaN an FMA returns with two NaN operands depends on the
 * instruction's operand order, not on the chain's order). */
static int same(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* hc_gemm against hc_gemm_ref on one shape; C has 3 padding columns per row and one row after
 * the last, which must stay untouched. `special`: 1 in 7 inputs is a subnormal, -0, inf, NaN or
 * a value near FLT_MAX (flush-to-zero or a split multiply-add would change such outputs). */
static int differs(int M, int N, int K, int trans, int accumulate, int special)
{
    size_t rsa = trans ? 1 : (size_t)K + 1, csa = trans ? (size_t)M + 1 : 1;
    size_t alen = trans ? csa * (size_t)(K ? K : 1) : rsa * (size_t)M;
    size_t ldb = (size_t)N + (size_t)(K % 3), ldc = (size_t)N + 3;
    size_t blen = ldb * (size_t)(K ? K : 1), clen = ldc * (size_t)(M + 1);
    float *A = malloc(alen * sizeof(float)), *B = malloc(blen * sizeof(float));
    float *C = malloc(clen * sizeof(float)), *R = malloc(clen * sizeof(float));
    static const float odd[] = {1e-40f, -3e-39f, -0.0f, INFINITY, -INFINITY, NAN, 3e38f};
    float *arrs[] = {A, B, C};
    size_t lens[] = {alen, blen, clen};
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < lens[a]; i++) {
            float x = (float)hc_urand(&rng);
            if (special && ((uint32_t)(rng.s >> 33) % 7) == 0)
                x = odd[(rng.s >> 40) % 7];
            else if (special && a < 2)
                x *= 1e-20f; /* products of two such values are subnormal */
            arrs[a][i] = x;
        }
    memcpy(R, C, clen * sizeof(float));
    hc_gemm(M, N, K, A, rsa, csa, B, ldb, C, ldc, accumulate);
    hc_gemm_ref(M, N, K, A, rsa, csa, B, ldb, R, ldc, accumulate);
    int bad = 0;
    for (size_t i = 0; i < clen; i++)
        bad |= !same(C[i], R[i]);
    free(A), free(B), free(C), free(R);
    return bad;
}

int main(void)
{
    hc_plan(5);
    const char *isa = hc_gemm_isa();
    hc_check("neon-1.1", strcmp(isa, expected_isa()) == 0, "hc_gemm built as %s, the target has %s", isa,
             expected_isa());

    /* The other families' forms: what the target promises (their bits are checked against the
     * scalar forms in test_kernels: Winograd 12.x and 11.x, the vector lanes 13.x, the softmax
     * strips tf-4.x; and in test_hcmath 4.x). */
#if defined(__aarch64__) && !defined(HC_NO_NEON)
    const char *want_wino = "neon", *want_sm = "neon", *want_exp = "neon";
#elif defined(__aarch64__)
    const char *want_wino = "vector", *want_sm = "vector", *want_exp = "vector";
#elif defined(__AVX2__)
    const char *want_wino = "avx2", *want_exp = "vector";
#else
    const char *want_wino = "vector", *want_exp = "vector";
#endif
#if !defined(__aarch64__) && defined(__AVX512F__)
    const char *want_sm = "avx512";
#elif !defined(__aarch64__)
    const char *want_sm = "vector";
#endif
    hc_check("neon-2.1",
             !strcmp(hc_wino_isa(), want_wino) && !strcmp(hc_softmax_isa(), want_sm) && !strcmp(hc_vexp_isa(), want_exp),
             "winograd %s (want %s), softmax %s (want %s), exp %s (want %s)", hc_wino_isa(), want_wino,
             hc_softmax_isa(), want_sm, hc_vexp_isa(), want_exp);

    /* Every column remainder of 4-, 8- and 16-lane vectors and of the 16/24/32-column panels,
     * every row-block split up to 3 blocks of 12, K from none to past the packing buffer. */
    static const int Ks[] = {0, 1, 2, 5, 17, 64, 300, 513};
    int bad = 0, cases = 0;
    for (int M = 1; M <= 37; M += (M < 14 ? 1 : 4))
        for (int N = 1; N <= 50; N += (N < 36 ? 1 : 7))
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
                int K = Ks[k];
                if (K > 64 && (M + N) % 5 != 0)
                    continue; /* the long chains on a fifth of the shapes: qemu is slow */
                bad += differs(M, N, K, (M + N) % 2, (M + N + (int)k) % 3 == 0, 0);
                cases++;
            }
    hc_check("neon-1.2", bad == 0 && cases > 2000, "%d of %d shapes differ from the scalar fmaf chain", bad,
             cases);

    int sbad = 0, scases = 0;
    for (int M = 1; M <= 13; M += 3)
        for (int N = 1; N <= 35; N += 2)
            for (int K = 1; K <= 9; K += 4, scases++)
                sbad += differs(M, N, K, (M + K) % 2, (N + K) % 2, 1);
    hc_check("neon-1.3", sbad == 0, "%d of %d shapes with subnormal, -0, inf and NaN inputs differ", sbad,
             scases);

    /* the comparison can see a wrong order: a chain summed from the other end differs somewhere */
    int K = 200, N = 24, seen = 0;
    float *A = malloc(K * sizeof(float)), *B = malloc((size_t)K * N * sizeof(float)), C[24];
    for (int i = 0; i < K; i++)
        A[i] = (float)hc_urand(&rng);
    for (int i = 0; i < K * N; i++)
        B[i] = (float)hc_urand(&rng);
    hc_gemm(1, N, K, A, (size_t)K, 1, B, (size_t)N, C, (size_t)N, 0);
    for (int j = 0; j < N && !seen; j++) {
        float s = 0.0f;
        for (int k = K - 1; k >= 0; k--)
            s = fmaf(A[k], B[(size_t)k * N + j], s);
        seen = !same(s, C[j]);
    }
    hc_check("neon-1.4", seen, "the reversed chain gave hc_gemm's bits on every column");
    free(A), free(B);
    return hc_test_exit();
}
