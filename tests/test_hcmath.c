/* harness/base/hcmath: accuracy against libm's double functions, C's special values, and the
 * vector exp of refs/ giving hc_expf's bits. Prints a digest of every sampled result (INFO) so
 * that two builds (compilers, instruction sets, platforms) can be compared by hand. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/hcmath.h"
#include "refs/kernels.h"

/* Every STRIDE-th float bit pattern: all exponents, about 4.2 million values per sweep. */
enum { STRIDE = 1021 };

static uint64_t digest = 1469598103934665603ULL; /* FNV-1a over every sampled result's bits */

static void mix(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        digest ^= b[i];
        digest *= 1099511628211ULL;
    }
}

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t d_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* |got - exact| in units of the last place of a float at exact (2^-149 in the subnormals). */
static double ulp_err_f(float got, double exact)
{
    if (isnan(exact))
        return isnan(got) ? 0.0 : INFINITY;
    if (fabs(exact) >= 0x1.ffffffp127) /* rounds to inf in float */
        return isinf(got) && (got > 0) == (exact > 0) ? 0.0 : INFINITY;
    if (isinf(got))
        return INFINITY;
    int e;
    frexp(exact, &e);
    double ulp = ldexp(1.0, (e - 24) < -149 ? -149 : e - 24);
    return fabs((double)got - exact) / ulp;
}

/* The same in units of the last place of a double. */
static double ulp_err_d(double got, double exact)
{
    if (isnan(exact))
        return isnan(got) ? 0.0 : INFINITY;
    if (isinf(exact) || isinf(got))
        return got == exact ? 0.0 : INFINITY;
    if (exact == 0.0)
        return got == 0.0 ? 0.0 : INFINITY;
    int e;
    frexp(exact, &e);
    double ulp = ldexp(1.0, (e - 53) < -1074 ? -1074 : e - 53);
    return fabs(got - exact) / ulp;
}

typedef float (*ff)(float);
typedef double (*dd)(double);

/* Max ulp error of f against ref over the sampled floats in [lo, hi]; the worst input in *at. */
static double sweep_f(ff f, dd ref, float lo, float hi, float *at, long *count)
{
    double worst = 0.0;
    long n = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += STRIDE) {
        float x = bits_f((uint32_t)u);
        if (!(x >= lo && x <= hi))
            continue;
        float y = f(x);
        mix(&y, sizeof y);
        double e = ulp_err_f(y, ref((double)x));
        if (!(e <= worst)) {
            worst = e;
            *at = x;
        }
        n++;
    }
    *count = n;
    return worst;
}

/* Max ulp error of f against ref over n pseudo-random doubles in [lo, hi]. */
static double sweep_d(dd f, dd ref, double lo, double hi, int n, double *at)
{
    uint64_t s = 88172645463325252ULL;
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double x = lo + (hi - lo) * ((double)(s >> 11) * 0x1.0p-53);
        double y = f(x);
        mix(&y, sizeof y);
        double e = ulp_err_d(y, ref(x));
        if (!(e <= worst)) {
            worst = e;
            *at = x;
        }
    }
    return worst;
}

static double ref_tanh(double x) { return tanh(x); }
static double ref_exp(double x) { return exp(x); }
static double ref_log(double x) { return log(x); }
static double ref_log1p(double x) { return log1p(x); }
static double ref_sin(double x) { return sin(x); }
static double ref_cos(double x) { return cos(x); }
static double ref_expm1(double x) { return expm1(x); }
static double ref_atan(double x) { return atan(x); }
static float my_expf(float x) { return hc_expf(x); }

static int same_f(float a, float b)
{
    return f_bits(a) == f_bits(b) || (isnan(a) && isnan(b));
}

static int same_d(double a, double b)
{
    return d_bits(a) == d_bits(b) || (isnan(a) && isnan(b));
}

static void float_accuracy(void)
{
    struct {
        const char *name, *what;
        ff f;
        dd ref;
        float lo, hi;
    } t[] = {
        {"hcmath-1.1", "expf", my_expf, ref_exp, -104.0f, 89.0f},
        {"hcmath-1.2", "tanhf", hc_tanhf, ref_tanh, -INFINITY, INFINITY},
        {"hcmath-1.3", "logf", hc_logf, ref_log, 0.0f, INFINITY},
        {"hcmath-1.4", "log1pf", hc_log1pf, ref_log1p, -1.0f, INFINITY},
        {"hcmath-1.5", "sinf", hc_sinf, ref_sin, -1000.0f, 1000.0f},
        {"hcmath-1.6", "cosf", hc_cosf, ref_cos, -1000.0f, 1000.0f},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        float at = 0.0f;
        long n = 0;
        double e = sweep_f(t[i].f, t[i].ref, t[i].lo, t[i].hi, &at, &n);
        printf("INFO %s: max %.3f ulp over %ld floats in [%g, %g] (worst at %a)\n", t[i].what, e, n,
               (double)t[i].lo, (double)t[i].hi, (double)at);
        /* hc_expf is a float polynomial (Cephes'); the rest are rounded once from double. */
        hc_check(t[i].name, e <= 1.0, "%s: %.3f ulp at %a over %ld floats", t[i].what, e, (double)at, n);
    }
    /* powf on RoPE's use (theta^(2i/d)) and around it. */
    double worst = 0.0;
    for (int th = 0; th < 4; th++)
        for (int i = 0; i <= 64; i++) {
            float x = (float[]){100.0f, 1000.0f, 10000.0f, 500000.0f}[th], y = (float)i / 64.0f;
            float p = hc_powf_pos(x, y);
            mix(&p, sizeof p);
            worst = hc_max_nan(worst, ulp_err_f(p, pow((double)x, (double)y)));
        }
    hc_check("hcmath-1.7", worst <= 1.0, "powf: %.3f ulp", worst);
}

static void double_accuracy(void)
{
    struct {
        const char *name, *what;
        dd f, ref;
        double lo, hi, bound;
    } t[] = {
        {"hcmath-2.1", "exp", hc_exp, ref_exp, -745.0, 709.7, 2.0},
        {"hcmath-2.2", "expm1", hc_expm1, ref_expm1, -40.0, 40.0, 3.0},
        {"hcmath-2.3", "log", hc_log, ref_log, 1e-300, 1e300, 2.0},
        {"hcmath-2.4", "log near 1", hc_log, ref_log, 0.5, 2.0, 2.0},
        {"hcmath-2.5", "log1p", hc_log1p, ref_log1p, -0.999, 10.0, 3.0},
        {"hcmath-2.6", "sin", hc_sin, ref_sin, -100.0, 100.0, 2.0},
        {"hcmath-2.7", "cos", hc_cos, ref_cos, -100.0, 100.0, 2.0},
        {"hcmath-2.8", "atan", hc_atan, ref_atan, -50.0, 50.0, 6.0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double at = 0.0;
        double e = sweep_d(t[i].f, t[i].ref, t[i].lo, t[i].hi, 300000, &at);
        printf("INFO %s: max %.3f double ulp on [%g, %g] (worst at %a)\n", t[i].what, e, t[i].lo, t[i].hi, at);
        hc_check(t[i].name, e <= t[i].bound, "%s: %.3f ulp at %a (bound %g)", t[i].what, e, at, t[i].bound);
    }
    /* log1p of tiny arguments (the 1 + x rounding that Goldberg's form cancels) */
    double at = 0.0, e = sweep_d(hc_log1p, ref_log1p, -1e-6, 1e-6, 100000, &at);
    hc_check("hcmath-2.9", e <= 3.0, "log1p near 0: %.3f ulp at %a", e, at);
    double p = hc_pow_pos(80000.0, 1.0 / 31.0);
    hc_check("hcmath-2.10", ulp_err_d(p, pow(80000.0, 1.0 / 31.0)) <= 2.0, "pow(80000, 1/31) = %.17g", p);
}

static void special_values(void)
{
    const float inf = INFINITY, nan = NAN;
    /* {got, expected} in float */
    struct {
        const char *what;
        float got, want;
    } f[] = {
        {"expf(NaN)", hc_expf(nan), nan},
        {"expf(inf)", hc_expf(inf), inf},
        {"expf(-inf)", hc_expf(-inf), 0.0f},
        {"expf(0)", hc_expf(0.0f), 1.0f},
        {"expf(-0)", hc_expf(-0.0f), 1.0f},
        {"expf(88.72284) overflows", hc_expf(bits_f(0x42b17218u)), inf},
        {"expf(88.72283) finite", hc_expf(bits_f(0x42b17217u)), expf(bits_f(0x42b17217u))},
        {"expf(100)", hc_expf(100.0f), inf},
        {"expf(-103.98) underflows to 0", hc_expf(-103.98f), 0.0f},
        {"expf(-200)", hc_expf(-200.0f), 0.0f},
        {"tanhf(NaN)", hc_tanhf(nan), nan},
        {"tanhf(inf)", hc_tanhf(inf), 1.0f},
        {"tanhf(-inf)", hc_tanhf(-inf), -1.0f},
        {"tanhf(-0)", hc_tanhf(-0.0f), -0.0f},
        {"tanhf(0)", hc_tanhf(0.0f), 0.0f},
        {"tanhf(min subnormal)", hc_tanhf(bits_f(1u)), bits_f(1u)},
        {"tanhf(-9.5)", hc_tanhf(-9.5f), -1.0f},
        {"logf(0)", hc_logf(0.0f), -inf},
        {"logf(-0)", hc_logf(-0.0f), -inf},
        {"logf(-1)", hc_logf(-1.0f), nan},
        {"logf(inf)", hc_logf(inf), inf},
        {"logf(1)", hc_logf(1.0f), 0.0f},
        {"logf(min subnormal)", hc_logf(bits_f(1u)), logf(bits_f(1u))},
        {"log1pf(-1)", hc_log1pf(-1.0f), -inf},
        {"log1pf(-2)", hc_log1pf(-2.0f), nan},
        {"log1pf(-0)", hc_log1pf(-0.0f), -0.0f},
        {"log1pf(inf)", hc_log1pf(inf), inf},
        {"log1pf(FLT_MAX)", hc_log1pf(FLT_MAX), log1pf(FLT_MAX)},
        {"sinf(-0)", hc_sinf(-0.0f), -0.0f},
        {"sinf(inf)", hc_sinf(inf), nan},
        {"cosf(NaN)", hc_cosf(nan), nan},
        {"cosf(0)", hc_cosf(0.0f), 1.0f},
        {"powf_pos(-1, 2)", hc_powf_pos(-1.0f, 2.0f), nan},
        {"powf_pos(3, 0)", hc_powf_pos(3.0f, 0.0f), 1.0f},
    };
    int bad = 0;
    char msg[256] = "";
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!same_f(f[i].got, f[i].want)) {
            if (!bad++)
                snprintf(msg, sizeof msg, "%s = %a, want %a", f[i].what, (double)f[i].got, (double)f[i].want);
        }
    hc_check("hcmath-3.1", bad == 0, "%d float special values wrong, first: %s", bad, msg);

    struct {
        const char *what;
        double got, want;
    } d[] = {
        {"exp(NaN)", hc_exp(NAN), NAN},
        {"exp(inf)", hc_exp(INFINITY), INFINITY},
        {"exp(-inf)", hc_exp(-INFINITY), 0.0},
        {"exp(709.8)", hc_exp(709.8), INFINITY},
        {"exp(-745.2)", hc_exp(-745.2), 0.0},
        {"exp(-745)", hc_exp(-745.0), exp(-745.0)},
        {"expm1(-0)", hc_expm1(-0.0), -0.0},
        {"expm1(-inf)", hc_expm1(-INFINITY), -1.0},
        {"expm1(inf)", hc_expm1(INFINITY), INFINITY},
        {"log(0)", hc_log(0.0), -INFINITY},
        {"log(-1)", hc_log(-1.0), NAN},
        {"log(inf)", hc_log(INFINITY), INFINITY},
        {"log(1)", hc_log(1.0), 0.0},
        {"log(min subnormal)", hc_log(0x1p-1074), log(0x1p-1074)},
        {"log1p(-0)", hc_log1p(-0.0), -0.0},
        {"log1p(-1)", hc_log1p(-1.0), -INFINITY},
        {"log1p(1e308)", hc_log1p(1e308), log1p(1e308)},
        {"sin(-0)", hc_sin(-0.0), -0.0},
        {"cos(-inf)", hc_cos(-INFINITY), NAN},
        {"atan(-0)", hc_atan(-0.0), -0.0},
        {"atan(inf)", hc_atan(INFINITY), atan(INFINITY)},
        {"atan(-inf)", hc_atan(-INFINITY), atan(-INFINITY)},
        {"atan(NaN)", hc_atan(NAN), NAN},
    };
    bad = 0;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (!same_d(d[i].got, d[i].want) && !(ulp_err_d(d[i].got, d[i].want) <= 1.0 && d[i].want != 0.0)) {
            if (!bad++)
                snprintf(msg, sizeof msg, "%s = %a, want %a", d[i].what, d[i].got, d[i].want);
        }
    hc_check("hcmath-3.2", bad == 0, "%d double special values wrong, first: %s", bad, msg);
}

/* refs' vector exp (hc_vexpf: 8-lane vexp8, AVX2/AVX-512 or generic code by build) against
 * hc_expf over every sampled float of its range, bit for bit; the array lengths also cover the
 * vector tail. */
static void vector_vs_scalar(void)
{
    enum { N = 4099 };
    static float in[N], out[N];
    long n = 0, diff = 0;
    float first = 0.0f;
    int k = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += STRIDE / 4) {
        float x = bits_f((uint32_t)u);
        if (!(x >= -87.0f && x <= 88.0f))
            continue;
        in[k++] = x;
        if (k == N) {
            memcpy(out, in, sizeof in);
            hc_vexpf((size_t)k - (size_t)(n / N % 8), out); /* lengths N - 0..7: every tail */
            for (int i = 0; i < k - (int)(n / N % 8); i++)
                if (f_bits(out[i]) != f_bits(hc_expf(in[i])) && !diff++)
                    first = in[i];
            n += k;
            k = 0;
        }
    }
    printf("INFO vector exp vs hc_expf: %ld inputs in [-87, 88]\n", n);
    hc_check("hcmath-4.1", n > 1000000 && diff == 0, "%ld of %ld differ (first at %a)", diff, n, (double)first);
    /* Outside its range the vector exp clamps: finite at the ends, where hc_expf is exact libm semantics. */
    float ends[2] = {-1000.0f, 1000.0f};
    hc_vexpf(2, ends);
    hc_check("hcmath-4.2", ends[0] == hc_expf(-87.0f) && ends[1] == hc_expf(88.0f),
             "clamped ends %a %a", (double)ends[0], (double)ends[1]);
}

/* The activations' scalar forms (refs/norm_pool.c) go through hcmath: Mish and SiLU near libm's. */
static void activations(void)
{
    double worst = 0.0;
    for (float x = -30.0f; x <= 30.0f; x += 0.0137f) {
        float m = hc_act_apply(HC_ACT_MISH, x), s = hc_act_apply(HC_ACT_SILU, x);
        float lm = x * tanhf(log1pf(expf(x < 20.0f ? x : 20.0f)) + ((x > 20.0f ? x : 20.0f) - 20.0f));
        float ls = x / (expf(-x) + 1.0f);
        mix(&m, sizeof m);
        mix(&s, sizeof s);
        double sc = fabs((double)x) > 1e-3 ? fabs((double)x) : 1e-3;
        worst = hc_max_nan(worst, fabs((double)m - lm) / sc);
        worst = hc_max_nan(worst, fabs((double)s - ls) / sc);
    }
    hc_check("hcmath-5.1", worst < 1e-6, "activation relative difference %.3g", worst);
}

int main(void)
{
    hc_plan(7 + 10 + 2 + 2 + 1);
    float_accuracy();
    double_accuracy();
    special_values();
    vector_vs_scalar();
    activations();
    printf("INFO digest of every sampled result: %016llx (equal across builds and platforms)\n",
           (unsigned long long)digest);
    return hc_test_failed_count ? 1 : 0;
}
