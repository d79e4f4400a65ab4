/* CRC-32 by folding (crc32.h): the x86 form folds four 16-byte lanes by 64 bytes with PCLMULQDQ,
 * then reduces to 32 bits by Barrett reduction, as Intel's "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ" describes for bit-reflected polynomials; the fold constants are
 * powers of x modulo gzip's polynomial, bit-reflected. The ARMv8 form runs the CRC32X
 * instruction (the same polynomial) 8 bytes at a time. Short inputs and the tails go to zlib. */
#include "harness/base/crc32.h"

#include <string.h>
#include <zlib.h>

#if defined(__PCLMUL__) && defined(__SSE4_1__)
#include <immintrin.h>
#define HC_CRC_PCLMUL 1
#elif defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define HC_CRC_ARM 1
#endif

#ifdef HC_CRC_PCLMUL
/* x^(4*128+32), x^(4*128-32) (the 64-byte fold), x^(128+32), x^(128-32) (the 16-byte fold),
 * x^64 (the last 64-bit fold) modulo P, and P and floor(x^64 / P) for the Barrett reduction:
 * each bit-reflected and shifted left by one (33-bit values). */
static const uint64_t K1 = 0x154442bd4ull, K2 = 0x1c6e41596ull, K3 = 0x1751997d0ull, K4 = 0x0ccaa009eull,
                      K5 = 0x163cd6124ull, POLY = 0x1db710641ull, MU = 0x1f7011641ull;

/* x (128 bits) times x^k modulo P, added to the next 16 bytes: one fold (lo by kl, hi by kh). */
static inline __m128i fold16(__m128i x, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00), hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/* The raw (uninverted) CRC state c over n bytes, n >= 64 and a multiple of 16. */
static uint32_t crc_fold(uint32_t c, const unsigned char *p, size_t n)
{
    __m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)c));
    p += 64, n -= 64;
    __m128i k = _mm_set_epi64x((long long)K2, (long long)K1);
    for (; n >= 64; p += 64, n -= 64) {
        x0 = fold16(x0, k, _mm_loadu_si128((const __m128i *)p));
        x1 = fold16(x1, k, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = fold16(x2, k, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = fold16(x3, k, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    k = _mm_set_epi64x((long long)K4, (long long)K3);
    x0 = fold16(x0, k, x1);
    x0 = fold16(x0, k, x2);
    x0 = fold16(x0, k, x3);
    for (; n >= 16; p += 16, n -= 16)
        x0 = fold16(x0, k, _mm_loadu_si128((const __m128i *)p));
    /* 128 -> 64 bits: the low half times x^64 added to the high half */
    __m128i t = _mm_clmulepi64_si128(x0, k, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    /* 64 -> 32 bits (with 32 zero bits appended) */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), _mm_set_epi64x(0, (long long)K5), 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    /* Barrett: the remainder modulo P */
    __m128i pm = _mm_set_epi64x((long long)MU, (long long)POLY);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), pm, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), pm, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}
#endif

uint32_t hc_crc32(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
#ifdef HC_CRC_PCLMUL
    if (n >= 64) {
        size_t bulk = n & ~(size_t)15;
        crc = ~crc_fold(~crc, p, bulk);
        p += bulk, n -= bulk;
    }
#elif defined(HC_CRC_ARM)
    uint32_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __crc32d(c, w);
    }
    crc = ~c;
#endif
    while (n > 0) { /* zlib takes at most UINT_MAX bytes a call */
        unsigned m = n > 1u << 30 ? 1u << 30 : (unsigned)n;
        crc = (uint32_t)crc32(crc, p, m);
        p += m, n -= m;
    }
    return crc;
}

const char *hc_crc32_isa(void)
{
#ifdef HC_CRC_PCLMUL
    return "pclmul";
#elif defined(HC_CRC_ARM)
    return "armv8-crc";
#else
    return "zlib";
#endif
}
