/* halfcheck's own transcendental functions (hcmath.h): range reduction and polynomials in IEEE arithmetic. */
#include "harness/base/hcmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define HCM(name) hc_##name
#define HCM_STATIC static
#define HCM_PUBLIC
#include "harness/base/hcmath_core.inc"

/* pi/2 in three parts of 33 bits each: k * PIO2_1 and k * PIO2_2 are exact for |k| < 2^20. */
static const double PIO2_1 = 1.57079632673412561417e+00;
static const double PIO2_2 = 6.07710050630396597660e-11;
static const double PIO2_3 = 2.02226624871116645580e-21;
static const double INV_PIO2 = 6.36619772367581382433e-01;
static const double PIO2 = 1.57079632679489655800e+00;

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
