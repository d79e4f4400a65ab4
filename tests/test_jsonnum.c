/* hc_json_real writes the bytes jansson writes with JSON_REAL_PRECISION(17), on every kind of
 * value the outputs files hold (floats of every exponent, ties, powers of ten and two) and on
 * the doubles that take the printf path. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/jsonnum.h"

/* jansson's text for v, into want. */
static void jansson_text(double v, char *want, size_t cap)
{
    json_t *j = json_real(v);
    char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    snprintf(want, cap, "%s", s ? s : "(null)");
    free(s);
    json_decref(j);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Counts mismatches over the given values; the first one is kept for the message. */
typedef struct tally {
    long checked, bad;
    double first_bad;
    char got[64], want[64];
} tally;

static void check_one(tally *t, double v)
{
    if (!isfinite(v))
        return;
    char got[HC_JSON_REAL_MAX + 8], want[64];
    memset(got, 'x', sizeof got);
    int len = hc_json_real(got, v);
    jansson_text(v, want, sizeof want);
    t->checked++;
    if (strcmp(got, want) != 0 || len != (int)strlen(want) || len >= HC_JSON_REAL_MAX) {
        if (t->bad++ == 0) {
            t->first_bad = v;
            snprintf(t->got, sizeof t->got, "%s", got);
            snprintf(t->want, sizeof t->want, "%s", want);
        }
    }
}

static double from_float_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return (double)f;
}

int main(void)
{
    hc_plan(5);
    tally t = {0};
    /* Special and boundary values. */
    const double fixed[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 10.0, 100.0, 1e16, 9.99999e16, 1e17, 1e-4, 1e-5,
                            9.99999974737875e-05, 1e-28, 1e-29, 1e-38, 1e-45, 123456789.0, 0.1f, 0.2f, 1.0f / 3,
                            16777216.0, 16777217.0f, 3.4028234663852886e38, -3.14159274f, 1e30, 0.3,
                            1.0 / 3.0, 2.0 / 3.0, 1e300, 5e-324, 0.1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_one(&t, fixed[i]);
    hc_check("jsonnum-1.1", t.bad == 0, "%ld of %ld special values differ; first %.17g: got %s, jansson %s", t.bad,
             t.checked, t.first_bad, t.got, t.want);

    /* Every float exponent, with mantissas at the binade's ends and random ones. */
    tally u = {0};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t ex = 0; ex < 255; ex++)
        for (int k = 0; k < 64; k++) {
            uint32_t mant = k == 0 ? 0 : k == 1 ? 0x7fffff : k == 2 ? 1 : (uint32_t)rng_next(&seed) & 0x7fffff;
            uint32_t sign = (k & 1) ? 0x80000000u : 0;
            check_one(&u, from_float_bits(sign | ex << 23 | mant));
        }
    hc_check("jsonnum-1.2", u.bad == 0, "%ld of %ld floats across exponents differ; first %.17g: got %s, jansson %s",
             u.bad, u.checked, u.first_bad, u.got, u.want);

    /* The values outputs hold, in bulk: random floats in (0, 1) and (-1, 1) of every
     * magnitude down to 1e-30, and scores of tens to hundreds. */
    tally w = {0};
    for (int i = 0; i < 300000; i++) {
        uint64_t r = rng_next(&seed);
        float f;
        switch (i % 3) {
        case 0: /* policy-like: any exponent from 2^-100 to 2^0 */
            f = ldexpf((float)(r & 0xffffff) / 16777216.0f, -(int)((r >> 24) % 100));
            break;
        case 1: /* ownership-like */
            f = (float)((int64_t)(r & 0xffffff) - 0x800000) / 8388608.0f;
            break;
        default: /* scores */
            f = (float)((int64_t)(r & 0xffffffff) - 0x80000000ll) / 1.0e7f;
            break;
        }
        check_one(&w, (double)f);
    }
    hc_check("jsonnum-1.3", w.bad == 0, "%ld of %ld random output values differ; first %.17g: got %s, jansson %s",
             w.bad, w.checked, w.first_bad, w.got, w.want);

    /* Decimal ties at the 17th digit: small integers times powers of two have short exact
     * expansions, so round-half-even decides them. */
    tally x = {0};
    for (int m = 1; m < 4096; m += 7)
        for (int e = -60; e <= 40; e++)
            check_one(&x, ldexp((double)m, e));
    for (long k = 1; k < 200000; k += 997) /* integers near 10^16..10^17 held exactly by floats */
        check_one(&x, (double)(float)(1e16 + (double)k * 1e11));
    hc_check("jsonnum-1.4", x.bad == 0, "%ld of %ld tie-prone values differ; first %.17g: got %s, jansson %s", x.bad,
             x.checked, x.first_bad, x.got, x.want);

    /* Doubles that are not floats take printf's path and still match. */
    tally y = {0};
    for (int i = 0; i < 20000; i++) {
        uint64_t r = rng_next(&seed);
        double d;
        memcpy(&d, &r, sizeof d);
        check_one(&y, d);
        check_one(&y, (double)(r >> 11) * 0x1p-53);
    }
    hc_check("jsonnum-1.5", y.bad == 0, "%ld of %ld doubles differ; first %.17g: got %s, jansson %s", y.bad,
             y.checked, y.first_bad, y.got, y.want);
    return hc_test_exit();
}
