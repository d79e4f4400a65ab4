/* hc_max_nan and hc_min_nan (tests/hc_test.h) keep a NaN wherever it falls in a sequence, so the
 * tests' "fold the errors, then assert err <= bound" pattern fails on a NaN output. */
#include <math.h>

#include "hc_test.h"

enum { LEN = 5, CASES = 3 * LEN + 6 };

/* The errors as the tests fold them: from 0 (an error is never negative). */
static double fold_max(const double *v, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = hc_max_nan(m, v[i]);
    return m;
}

static double fold_min(const double *v, int n)
{
    double m = INFINITY;
    for (int i = 0; i < n; i++)
        m = hc_min_nan(m, v[i]);
    return m;
}

/* As test_backends' max_abs_diff folds float differences through a double. */
static float fold_max_f(const float *v, int n)
{
    float m = 0;
    for (int i = 0; i < n; i++)
        m = (float)hc_max_nan(m, v[i]);
    return m;
}

int main(void)
{
    hc_plan(CASES);
    const double base[LEN] = {1e-7, 3e-6, 2e-7, 5e-8, 1e-6};
    char name[64];
    /* A NaN at each position, the last finite values after it larger and smaller: the old
     * "if (!(d <= m)) m = d" loses it as soon as a finite value follows. */
    for (int at = 0; at < LEN; at++) {
        double v[LEN];
        float vf[LEN];
        for (int i = 0; i < LEN; i++)
            v[i] = base[i], vf[i] = (float)base[i];
        v[at] = NAN;
        vf[at] = NAN;
        double mx = fold_max(v, LEN), mn = fold_min(v, LEN);
        float mxf = fold_max_f(vf, LEN);
        snprintf(name, sizeof name, "nanmax-1.%d", at + 1);
        /* the pattern of the tests: the bound check itself must fail */
        int bound_holds = mx <= 1e-5;
        hc_check(name, isnan(mx) && !bound_holds, "NaN at %d of %d: max %g, err <= 1e-5 %s", at, LEN, mx,
                 bound_holds ? "holds" : "fails");
        snprintf(name, sizeof name, "nanmax-2.%d", at + 1);
        hc_check(name, isnan(mn) && !(mn >= 0), "NaN at %d of %d: min %g", at, LEN, mn);
        snprintf(name, sizeof name, "nanmax-3.%d", at + 1);
        hc_check(name, isnan(mxf) && !(mxf < 1e-5f), "NaN at %d of %d (float): max %g", at, LEN, (double)mxf);
    }
    /* Without a NaN they are the plain maximum and minimum, infinities and negatives included. */
    hc_check("nanmax-4.1", fold_max(base, LEN) == 3e-6, "max %g", fold_max(base, LEN));
    hc_check("nanmax-4.2", fold_min(base, LEN) == 5e-8, "min %g", fold_min(base, LEN));
    const double inf[3] = {1.0, INFINITY, 2.0};
    hc_check("nanmax-4.3", isinf(fold_max(inf, 3)) && fold_min(inf, 3) == 1.0, "max %g min %g", fold_max(inf, 3),
             fold_min(inf, 3));
    hc_check("nanmax-4.4", hc_max_nan(-3.0, -2.0) == -2.0 && hc_min_nan(-3.0, -2.0) == -3.0,
             "max(-3,-2) %g min %g", hc_max_nan(-3.0, -2.0), hc_min_nan(-3.0, -2.0));
    /* Argument order does not matter, NaN on either side. */
    hc_check("nanmax-4.5", isnan(hc_max_nan(NAN, 1.0)) && isnan(hc_max_nan(1.0, NAN)) && isnan(hc_min_nan(NAN, 1.0)) &&
                               isnan(hc_min_nan(1.0, NAN)),
             "a NaN argument was dropped");
    /* All NaN: stays NaN (a fold that starts from a NaN keeps it). */
    const double all[2] = {NAN, NAN};
    hc_check("nanmax-4.6", isnan(fold_max(all, 2)) && isnan(fold_min(all, 2)), "all-NaN sequence lost its NaN");
    return hc_test_exit();
}
