/* What the cuda backend's instance (backends/cuda.cu: open, eval, close) and its forward pass
 * (backends/cuda_graph.cu) share: the instance's state, one pass's state, the error helpers.
 * C++ only (nvcc); internal to those two files. */
#ifndef HC_CUDA_IMPL_H
#define HC_CUDA_IMPL_H

extern "C" {
#include "backends/cuda.h"
#include "backends/emulate.h"
#include "refs/engine.h"
#include "refs/kernels.h"
}
#include "backends/cuda_blas.h"

#include <cuda_runtime.h>
#include <stddef.h>

namespace hccuda {

/* a weight array's device copy (half: 1 half values, 2 floats rounded to half, 0 floats, W_WINO a
 * convolution's 6x6-tile Winograd weights computed on the device from the host's raw ones) */
enum { W_WINO = 3 };
struct wentry {
    const void *host;
    int half;
    void *dev;
};

/* an attention block's RoPE tables on the device */
struct rope_dev {
    const hc_attn_block *blk;
    float *cos_t, *sin_t;
};

/* emulate mode: a Winograd convolution's weights prepared on the host (refs/winograd.c's), for a
 * convolution its profile runs in a non-zero mode (ref32's are computed on the device: wino_dev). */
struct wprep {
    const hc_conv *src;
    hc_kconv k;
};

struct inst {
    const hc_net *net;
    int fp16, nx, ny, hw, max_batch, sync_layers;
    int ref; /* ref32's kernels (cuda_ref.cu): ref32 and emulate modes */
    /* the planted faults (tests only; zero otherwise), and the products per fp16-accumulation
     * chunk they give: HC_ACC16_CHUNK, 8 with faults.acc16_chunk8 */
    hc_cuda_faults faults;
    int acc16_chunk;
    /* emulate:PROFILE mode (ref32's kernels plus backends/emulate.c's roundings): the CPU
     * emulation opened for its rounded net, layer table and error reports; d_over [max_batch]:
     * per row the first layer whose stored output overflowed (INT_MAX none); in_host: rounded
     * copies of the input rows. */
    hc_emulate *emu;
    int *d_over, *h_over;
    /* d_sum_over [max_batch]: per row the smallest hc_emulate_sum_code of an emulated reduction
     * that overflowed (INT_MAX none) */
    int *d_sum_over, *h_sum_over;
    float *in_host;
    size_t in_host_n;
    wprep *wp;
    int n_wp;
    /* fp16 calibration knobs (hc_cuda_opts): leave fp32 what emulate:fp16 leaves fp32, to find
     * which rounding explains a difference. pool32: pooled values (and the matmuls reading them
     * run as fp32 GEMMs on half-rounded weights); mid32: bias additions and the SwiGLU inputs;
     * probs32: attention probabilities and the attention output (fp32 GEMMs on half-rounded
     * values). */
    int pool32, mid32, probs32;
    /* Taps (hc_raw_heads.taps): the eval's tapset, or NULL when none is wanted; a host staging
     * buffer for the copies. */
    hc_tapset *taps;
    float *tap_host;
    size_t tap_host_n;
    hc_cublas blas; /* fp32 and fp16 modes */
    wentry *w;
    int n_w, cap_w;
    rope_dev *ropes;
    int n_ropes;
    float *arena;
    size_t arena_floats;
    float *d_spatial, *d_global, *d_meta;
    float *d_policy, *d_pass, *d_value, *d_score, *d_own;
    float *h_stage; /* pinned: the outputs (and the emulation's overflow rows) copied back at once */
    /* the first error of the current open or eval */
    int bad;
    hc_err *err;
    /* a lane (hc_cuda_open_sharing): w, wp, ropes and emu are its base's, uploaded and prepared
     * once, read-only after the base's open; freed with the base, which outlives it */
    int borrowed;
};

/* One forward pass (or its dry run at open). */
struct fwd {
    inst *I;
    int dry;
    size_t top, peak;
    int B, nx, ny, hw;
    size_t S;
    float *mask, *msum;
    int noemu; /* emulate mode: this tap is not where the CPU engine's hook sees the layer */
};

/* Keeps the first failure of a CUDA call (the call and the layer named) in I->err; -1. */
int fail_cuda(inst *I, cudaError_t e, const char *call, const char *layer);

#define CK(I, call, layer)                                                                       \
    do {                                                                                         \
        cudaError_t ck_e_ = (call);                                                              \
        if (ck_e_ != cudaSuccess)                                                                \
            fail_cuda((I), ck_e_, #call, (layer));                                               \
    } while (0)

/* The forward pass over f->B rows already on the device (I->d_spatial ...), outputs into the
 * device head buffers. f->dry: sizes the arena (f->peak) and uploads the weights (at open). */
void forward(fwd *f);
/* At open: the RoPE tables of every attention block, on the device. 0, or -1 with I->err. */
int collect_ropes(inst *I, const hc_block *blocks, int n);

} // namespace hccuda

#endif
