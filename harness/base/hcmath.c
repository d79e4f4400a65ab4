/* halfcheck's own transcendental functions (hcmath.h): range reduction and polynomials in IEEE arithmetic. */
#include "hcmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ln 2 in two parts, the first with 32 trailing zero bits so k * LN2_HI is exact for |k| < 2^20. */
static const double LN2_HI = 6.93147180369123816490e-01;
static const double LN2_LO = 1.90821492927058770002e-10;
static const double INV_LN2 = 1.44269504088896338700e+00;
/* pi/2 in three parts of 33 bits each: k * PIO2_1 and k * PIO2_2 are exact for |k| < 2^20. */
static const double PIO2_1 = 1.57079632673412561417e+00;
static const double PIO2_2 = 6.07710050630396597660e-11;
static const double PIO2_3 = 2.02226624871116645580e-21;
static const double INV_PIO2 = 6.36619772367581382433e-01;
static const double PIO2 = 1.57079632679489655800e+00;

/* e^r - 1 for |r| <= 0.35 by Taylor's series to r^15 (the next term is below 2^-60 relative). */
static double expm1_small(double r)
{
    double p = 1.0 / 1307674368000.0; /* 1/15! */
    p = p * r + 1.0 / 87178291200.0;
    p = p * r + 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    return r + (r * r) * p;
}

/* y * 2^k: exact (one rounding where the result is subnormal, as ldexp); 2^k from the exponent
 * bits where it is a normal double, the common case, without a call. */
static double scale2(double y, double k)
{
    if (k >= -1022.0 && k <= 1023.0) {
        uint64_t b = (uint64_t)((int64_t)k + 1023) << 52;
        double s;
        memcpy(&s, &b, sizeof s);
        return y * s;
    }
    return ldexp(y, (int)k);
}

/* x = k ln 2 + r with |r| <= ln 2 / 2 (|x| < 2^20 ln 2). */
static double reduce_ln2(double x, double *k)
{
    double kk = floor(x * INV_LN2 + 0.5);
    *k = kk;
    return (x - kk * LN2_HI) - kk * LN2_LO;
}

double hc_exp(double x)
{
    if (x != x)
        return x + x;
    if (x > 710.0)
        return INFINITY;
    if (x < -746.0)
        return 0.0;
    double k;
    double r = reduce_ln2(x, &k);
    return scale2(1.0 + expm1_small(r), k);
}

double hc_expm1(double x)
{
    if (x != x)
        return x + x;
    if (x > 710.0)
        return INFINITY;
    if (x < -40.0) /* e^x below half an ulp of 1 */
        return -1.0;
    if (x == 0.0)
        return x; /* -0 kept */
    if (fabs(x) <= 0.34)
        return expm1_small(x);
    double k;
    double r = reduce_ln2(x, &k);
    double em = expm1_small(r);
    if (k > 56.0)
        return scale2(1.0 + em, k);
    /* 2^k (e^r - 1) + (2^k - 1): the second term is exact for -53 <= k <= 56 */
    return scale2(em, k) + (scale2(1.0, k) - 1.0);
}

double hc_log(double x)
{
    if (x != x)
        return x + x;
    if (x < 0.0)
        return NAN;
    if (x == 0.0)
        return -INFINITY;
    if (x == INFINITY)
        return x;
    int e;
    double m = frexp(x, &e); /* exact, subnormals included: m in [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e--;
    }
    /* log(1 + f) = 2 atanh(s), s = f / (2 + f), |s| <= 0.1716; written as f - f^2/2 + s (f^2/2 + R)
     * (fdlibm's arrangement) so the large terms are exact. */
    double f = m - 1.0; /* exact: m in [0.707, 1.415) */
    double s = f / (2.0 + f);
    double z = s * s;
    double R = 2.0 / 23.0;
    R = R * z + 2.0 / 21.0;
    R = R * z + 2.0 / 19.0;
    R = R * z + 2.0 / 17.0;
    R = R * z + 2.0 / 15.0;
    R = R * z + 2.0 / 13.0;
    R = R * z + 2.0 / 11.0;
    R = R * z + 2.0 / 9.0;
    R = R * z + 2.0 / 7.0;
    R = R * z + 2.0 / 5.0;
    R = R * z + 2.0 / 3.0;
    R = R * z;
    double hfsq = 0.5 * f * f;
    double dk = (double)e;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
}

double hc_log1p(double x)
{
    if (x != x)
        return x + x;
    if (x < -1.0)
        return NAN;
    if (x == -1.0)
        return -INFINITY;
    if (x > 1e300)
        return hc_log(x);
    double u = 1.0 + x;
    if (u == 1.0)
        return x; /* -0 and tiny x included */
    /* Goldberg's correction: log(u) * x / (u - 1) cancels the rounding of 1 + x. */
    return hc_log(u) * (x / (u - 1.0));
}

static double sin_poly(double r)
{
    double z = r * r;
    double p = -1.0 / 355687428096000.0; /* -1/17! */
    p = p * z + 1.0 / 1307674368000.0;
    p = p * z - 1.0 / 6227020800.0;
    p = p * z + 1.0 / 39916800.0;
    p = p * z - 1.0 / 362880.0;
    p = p * z + 1.0 / 5040.0;
    p = p * z - 1.0 / 120.0;
    p = p * z + 1.0 / 6.0;
    return r - (r * z) * p;
}

static double cos_poly(double r)
{
    double z = r * r;
    double p = 1.0 / 6402373705728000.0; /* 1/18! */
    p = p * z - 1.0 / 20922789888000.0;
    p = p * z + 1.0 / 87178291200.0;
    p = p * z - 1.0 / 479001600.0;
    p = p * z + 1.0 / 3628800.0;
    p = p * z - 1.0 / 40320.0;
    p = p * z + 1.0 / 720.0;
    p = p * z - 1.0 / 24.0;
    return 1.0 - (0.5 * z - (z * z) * (-p));
}

/* x = k pi/2 + r, |r| <= pi/4 (about); the quadrant k mod 4. */
static double reduce_pio2(double x, int *quadrant)
{
    double k = floor(x * INV_PIO2 + 0.5);
    double kq = k - 4.0 * floor(k * 0.25);
    *quadrant = (int)kq;
    return ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
}

double hc_sin(double x)
{
    if (x != x || x == INFINITY || x == -INFINITY)
        return x - x;
    if (fabs(x) < 7.450580596923828125e-9) /* 2^-27: sin x rounds to x, -0 kept */
        return x;
    int q;
    double r = reduce_pio2(x, &q);
    switch (q) {
    case 0: return sin_poly(r);
    case 1: return cos_poly(r);
    case 2: return -sin_poly(r);
    default: return -cos_poly(r);
    }
}

double hc_cos(double x)
{
    if (x != x || x == INFINITY || x == -INFINITY)
        return x - x;
    if (fabs(x) < 7.450580596923828125e-9)
        return 1.0;
    int q;
    double r = reduce_pio2(x, &q);
    switch (q) {
    case 0: return cos_poly(r);
    case 1: return -sin_poly(r);
    case 2: return -cos_poly(r);
    default: return sin_poly(r);
    }
}

double hc_atan(double x)
{
    if (x != x)
        return x + x;
    double a = fabs(x);
    if (a < 7.450580596923828125e-9)
        return x;
    int inv = a > 1.0;
    if (inv)
        a = 1.0 / a; /* inf gives 0, so pi/2 */
    /* atan(a) = 2 atan(a / (1 + sqrt(1 + a^2))), twice: |a| <= tan(pi/16) < 0.2 */
    a = a / (1.0 + sqrt(1.0 + a * a));
    a = a / (1.0 + sqrt(1.0 + a * a));
    double z = a * a;
    double p = 1.0 / 25.0;
    p = p * z - 1.0 / 23.0;
    p = p * z + 1.0 / 21.0;
    p = p * z - 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z - 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z - 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z - 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z - 1.0 / 3.0;
    double t = 4.0 * (a + (a * z) * p);
    if (inv)
        t = PIO2 - t;
    return copysign(t, x);
}

double hc_pow_pos(double x, double y)
{
    if (x != x || y != y || x <= 0.0)
        return NAN;
    if (y == 0.0)
        return 1.0;
    return hc_exp(y * hc_log(x));
}

float hc_tanhf(float x)
{
    if (x != x)
        return x + x;
    double a = fabs((double)x);
    if (a > 10.0) /* tanh rounds to 1 in float from about 9.01 */
        return copysignf(1.0f, x);
    /* tanh a = expm1(2a) / (expm1(2a) + 2): no cancellation near 0 */
    double t = hc_expm1(2.0 * a);
    return copysignf((float)(t / (t + 2.0)), x);
}

float hc_logf(float x)
{
    return (float)hc_log((double)x);
}

float hc_log1pf(float x)
{
    return (float)hc_log1p((double)x);
}

float hc_sinf(float x)
{
    return (float)hc_sin((double)x);
}

float hc_cosf(float x)
{
    return (float)hc_cos((double)x);
}

float hc_powf_pos(float x, float y)
{
    return (float)hc_pow_pos((double)x, (double)y);
}
