/* Internal to refs/winograd.c and winograd_neon.c: the chunk size, a chunk's tile geometry and the
 * transforms of the generic chunk runner, which have a vector-extension form (winograd.c) and a
 * NEON form (winograd_neon.c, aarch64). */
#ifndef HC_WINOGRAD_IMPL_H
#define HC_WINOGRAD_IMPL_H

#include <stddef.h>

#include "refs/kernels.h"

/* Winograd runs over chunks of WINO_NC (row, tile) pairs of the thread's rows: every tile GEMM
 * then has up to WINO_NC columns whatever the board size. */
#if defined(__AVX512F__)
enum { WINO_NC = 32 }; /* two full 16-lane vectors in refs/gemm.c's AVX-512 kernel; L2 is larger there too */
#elif defined(__AVX2__)
enum { WINO_NC = 24 }; /* one 24-column panel of refs/gemm.c's AVX2 4x3-vector kernel, read in place (A read once) */
#else
enum { WINO_NC = 24 };
#endif

/* What a chunk's transforms need to know of its tiles. */
typedef struct wino_chunk_geom {
    const hc_kconv *cv;
    int batch, five, osz, nx, ny, hw, txn, T;
    int g0, n, ld;
    int wp;                   /* the padded buffer's row stride */
    size_t lane_off[WINO_NC]; /* each pair's tile (0,0) input in the padded buffer */
} wino_chunk_geom;

/* Where output lane j goes (past n: the chunk's first pair, never stored): its first output in
 * the planes, its batch row, its rows and columns inside the board, and the epilogue's mask
 * value of each of its outputs (0 off the board). */
typedef struct wino_lane_out {
    size_t dst;
    int row, rmax, cmax;
    float mk[16];
} wino_lane_out;

/* Fills lo for output lane j of the chunk (epi: the fused epilogue's mask, or NULL). Here, inline,
 * so that winograd_neon.c, whose transforms winograd.c calls on aarch64, needs nothing of it. */
static inline void hc_wino_lane_out_at(const wino_chunk_geom *ch, int j, const hc_kepi *epi, wino_lane_out *lo)
{
    int g = ch->g0 + (j < ch->n ? j : 0), b = g / ch->T, t = g % ch->T, osz = ch->osz;
    int ty = t / ch->txn, tx = t % ch->txn;
    lo->dst = (size_t)b * ch->hw + (size_t)(ty * osz) * ch->nx + tx * osz;
    lo->row = b;
    lo->rmax = ch->ny - ty * osz < osz ? ch->ny - ty * osz : osz;
    lo->cmax = ch->nx - tx * osz < osz ? ch->nx - tx * osz : osz;
    for (int k = 0; k < osz * osz; k++) {
        int r = k / osz, c = k % osz;
        lo->mk[k] = epi && j < ch->n && r < lo->rmax && c < lo->cmax
                        ? epi->mask[lo->dst + (size_t)r * ch->nx + c]
                        : 0.0f;
    }
}

/* One output row piece of a tile: its first k values stored, or added to what is there (d + v). */
static inline void hc_wino_put_row(float *d, const float *v, int k, int accumulate)
{
    if (accumulate)
        for (int c = 0; c < k; c++)
            d[c] += v[c];
    else
        for (int c = 0; c < k; c++)
            d[c] = v[c];
}

/* One channel's input transform into Vi [36][ld] from the chunk's zero-bordered copy pad: B^T
 * along x, then along y, each lane one tile's scalar operations in order. */
void hc_wino_in_channel(const wino_chunk_geom *ch, const float *pad, float *Vi);

/* The output transform of the chunk from M [oc][36][ld] (A^T along x, then y, the fused
 * epilogue when epi), stored into (or, accumulate, added to) the output planes. */
void hc_wino_out_chunk(const wino_chunk_geom *ch, const float *M, float *out, int accumulate,
                       const hc_kepi *epi);

#endif
