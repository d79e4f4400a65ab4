/* JSON numbers written fast and exactly as jansson writes them (jsonnum.h). */
#include "harness/base/jsonnum.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 hc_u128;

/* 5^0 .. 5^27, the powers of five that fit 64 bits. */
static const uint64_t pow5[28] = {
    1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull,
    9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
    152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
    476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
    298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull};

static const uint64_t TEN16 = 10000000000000000ull, TEN17 = 100000000000000000ull;

/* jansson's touch-ups of printf's text: ".0" on an integral value, no '+' or leading zeros in
 * the exponent. */
static int jansson_fixup(char *buf, int len)
{
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        memcpy(buf + len, ".0", 3);
        return len + 2;
    }
    char *e = strchr(buf, 'e');
    if (e) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, (size_t)(buf + len - end) + 1);
            len -= (int)(end - start);
        }
    }
    return len;
}

static int slow_path(char *buf, double v)
{
    int len = snprintf(buf, HC_JSON_REAL_MAX - 2, "%.17g", v);
    return jansson_fixup(buf, len);
}

/* round(m * 2^e * 10^s) to an integer, ties to even, for 0 <= s <= 44 and a float's m, e. */
static uint64_t scaled(uint32_t m, int e, int s)
{
    hc_u128 p = (hc_u128)m * pow5[s < 27 ? s : 27];
    if (s > 27)
        p *= pow5[s - 27];
    int sh = e + s;
    if (sh >= 0)
        return (uint64_t)(p << sh); /* the caller's bounds keep this below 10^18 */
    int k = -sh;
    if (k >= 127)
        return 0;
    hc_u128 q = p >> k, r = p - (q << k), half = (hc_u128)1 << (k - 1);
    if (r > half || (r == half && (q & 1)))
        q++;
    return (uint64_t)q;
}

int hc_json_real(char *buf, double v)
{
    if (v == 0.0) {
        strcpy(buf, signbit(v) ? "-0.0" : "0.0");
        return signbit(v) ? 4 : 3;
    }
    float f = (float)v;
    double a = fabs(v);
    if ((double)f != v || !(a >= 1e-28 && a < 1e17))
        return slow_path(buf, v);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    int bexp = (int)((bits >> 23) & 0xff);
    uint32_t m = (bits & 0x7fffff) | (bexp ? 0x800000u : 0);
    int e = (bexp ? bexp : 1) - 150;
    int E = (int)floor(log10(a));
    uint64_t q = 0;
    for (int tries = 0; tries < 4; tries++) {
        if (16 - E < 0 || 16 - E > 44)
            return slow_path(buf, v);
        q = scaled(m, e, 16 - E);
        if (q >= TEN17)
            E++;
        else if (q < TEN16)
            E--;
        else
            break;
    }
    if (q < TEN16 || q >= TEN17)
        return slow_path(buf, v);
    char d[17];
    for (int i = 16; i >= 0; i--, q /= 10)
        d[i] = (char)('0' + q % 10);
    int nd = 17;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    char *o = buf;
    if (v < 0)
        *o++ = '-';
    if (E < -4 || E >= 17) {
        *o++ = d[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        *o++ = 'e';
        int x = E;
        if (x < 0) {
            *o++ = '-';
            x = -x;
        }
        char t[4];
        int nt = 0;
        do
            t[nt++] = (char)('0' + x % 10);
        while ((x /= 10) > 0);
        while (nt > 0)
            *o++ = t[--nt];
    } else if (E >= 0) {
        memcpy(o, d, (size_t)E + 1);
        o += E + 1;
        *o++ = '.';
        if (nd > E + 1) {
            memcpy(o, d + E + 1, (size_t)(nd - E - 1));
            o += nd - E - 1;
        } else {
            *o++ = '0'; /* printf's "123" and jansson's ".0" */
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int z = 0; z < -E - 1; z++)
            *o++ = '0';
        memcpy(o, d, (size_t)nd);
        o += nd;
    }
    *o = '\0';
    return (int)(o - buf);
}
