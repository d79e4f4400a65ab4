/* Symmetries: apply then unapply is the identity for all 8 on square and non-square buffers (the
 * transpose bit ignored when not square, as KataGo does); each symmetry moves a marked point where
 * KataGo's getSymLoc says; the 8 are distinct on square buffers; invert/compose agree with the maps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/go/symmetry.h"

/* KataGo's SymmetryHelpers::getSymLoc on (x, y): flips, then transpose. */
static void sym_xy(int x, int y, int w, int h, int s, int *ox, int *oy)
{
    if (s & 2)
        x = w - x - 1;
    if (s & 1)
        y = h - y - 1;
    if ((s & 4) && w == h) {
        int t = x;
        x = y;
        y = t;
    }
    *ox = x;
    *oy = y;
}

int main(void)
{
    hc_plan(6 + 6 + 6 + 3);
    const int sizes[][2] = {{19, 19}, {9, 9}, {18, 19}, {10, 14}, {1, 5}, {7, 3}};
    char name[64];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int w = sizes[si][0], h = sizes[si][1], c = 3;
        size_t n = (size_t)c * w * h;
        float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
        float *pa = malloc((size_t)(w * h + 1) * sizeof(float)), *pb = malloc((size_t)(w * h + 1) * sizeof(float));
        for (size_t i = 0; i < n; i++)
            a[i] = (float)i + 0.5f;
        int rt_ok = 1, loc_ok = 1, pol_ok = 1;
        for (int s = 0; s < 8; s++) {
            hc_sym_apply_planes(a, b, c, h, w, s);
            hc_sym_unapply_planes(b, r, c, h, w, s);
            if (memcmp(a, r, n * sizeof(float)) != 0)
                rt_ok = 0;
            /* the value at (x, y) of the board lands at getSymLoc(x, y) in the net's frame */
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int sx, sy;
                    sym_xy(x, y, w, h, s, &sx, &sy);
                    if (b[(size_t)w * h + sy * w + sx] != a[(size_t)w * h + y * w + x])
                        loc_ok = 0;
                }
            /* a policy computed in the net's frame maps back, pass untouched */
            for (int i = 0; i < w * h; i++)
                pa[i] = b[i];
            pa[w * h] = -7.0f;
            hc_sym_unapply_policy(pa, pb, h, w, s);
            if (memcmp(pb, a, (size_t)w * h * sizeof(float)) != 0 || pb[w * h] != -7.0f)
                pol_ok = 0;
        }
        snprintf(name, sizeof name, "symmetry-1.%zu", si);
        hc_check(name, rt_ok, "%dx%d: unapply(apply(x)) != x", w, h);
        snprintf(name, sizeof name, "symmetry-2.%zu", si);
        hc_check(name, loc_ok, "%dx%d: a point does not land where getSymLoc puts it", w, h);
        snprintf(name, sizeof name, "symmetry-3.%zu", si);
        hc_check(name, pol_ok, "%dx%d: policy round trip failed", w, h);
        free(a);
        free(b);
        free(r);
        free(pa);
        free(pb);
    }

    /* on a square board the 8 images of an asymmetric plane are distinct; invert and compose agree */
    int w = 5, h = 5;
    float a[25], imgs[8][25], t[25], u[25];
    for (int i = 0; i < 25; i++)
        a[i] = (float)(i * i % 17);
    for (int s = 0; s < 8; s++)
        hc_sym_apply_planes(a, imgs[s], 1, h, w, s);
    int distinct = 1;
    for (int s = 0; s < 8; s++)
        for (int q = 0; q < s; q++)
            if (memcmp(imgs[s], imgs[q], sizeof a) == 0)
                distinct = 0;
    hc_check("symmetry-4.1", distinct, "two symmetries give the same image");
    int inv_ok = 1, comp_ok = 1;
    for (int s = 0; s < 8; s++) {
        hc_sym_apply_planes(imgs[s], t, 1, h, w, hc_sym_invert(s));
        if (memcmp(t, a, sizeof a) != 0)
            inv_ok = 0;
        for (int q = 0; q < 8; q++) {
            hc_sym_apply_planes(a, t, 1, h, w, s);
            hc_sym_apply_planes(t, u, 1, h, w, q);
            if (memcmp(u, imgs[hc_sym_compose(s, q)], sizeof a) != 0)
                comp_ok = 0;
        }
    }
    hc_check("symmetry-4.2", inv_ok, "apply(invert(s)) does not undo apply(s)");
    hc_check("symmetry-4.3", comp_ok, "compose(s, q) is not apply s then q");
    return hc_test_exit();
}
