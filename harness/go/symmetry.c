/* KataGo's copyWithSymmetry (NCHW) and its symmetry algebra. */
#include "harness/go/symmetry.h"

#include <string.h>

static void copy_sym(const float *src, float *dst, int c, int h, int w, int symmetry, int reverse)
{
    int transpose = (symmetry & 4) != 0 && h == w;
    int flip_x = (symmetry & 2) != 0;
    int flip_y = (symmetry & 1) != 0;
    if (transpose && !reverse) {
        int t = flip_x;
        flip_x = flip_y;
        flip_y = t;
    }
    int plane = h * w;
    int h_base = 0, h_stride = w, w_base = 0, w_stride = 1;
    if (flip_y) {
        h_base = (h - 1) * h_stride;
        h_stride = -h_stride;
    }
    if (flip_x) {
        w_base = (w - 1) * w_stride;
        w_stride = -w_stride;
    }
    if (transpose) {
        int t = h_stride;
        h_stride = w_stride;
        w_stride = t;
    }
    for (int ch = 0; ch < c; ch++) {
        const float *s = src + (size_t)ch * plane;
        float *d = dst + (size_t)ch * plane;
        for (int y = 0; y < h; y++) {
            int dst_row = h_base + y * h_stride;
            for (int x = 0; x < w; x++)
                d[dst_row + w_base + x * w_stride] = s[y * w + x];
        }
    }
}

void hc_sym_apply_planes(const float *src, float *dst, int c, int h, int w, int symmetry)
{
    copy_sym(src, dst, c, h, w, symmetry, 0);
}

void hc_sym_unapply_planes(const float *src, float *dst, int c, int h, int w, int symmetry)
{
    copy_sym(src, dst, c, h, w, symmetry, 1);
}

void hc_sym_unapply_policy(const float *src, float *dst, int h, int w, int symmetry)
{
    copy_sym(src, dst, 1, h, w, symmetry, 1);
    dst[h * w] = src[h * w];
}

int hc_sym_invert(int symmetry)
{
    if (symmetry == 5)
        return 6;
    if (symmetry == 6)
        return 5;
    return symmetry;
}

int hc_sym_compose(int first, int next)
{
    if (first & 4)
        next = (next & 4) | ((next & 2) >> 1) | ((next & 1) << 1);
    return first ^ next;
}
