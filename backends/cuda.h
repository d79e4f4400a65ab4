/* The cuda backend's public C interface: its typed options (parsed in plain C, backends/cuda_opts.c,
 * in every build, so that a suite naming cuda is checked on a machine without nvcc), the test-only
 * faults, and the entry points of an instance (backends/cuda.cu, built only with HC_HAVE_CUDA).
 * Lifetimes: an instance borrows hc_backend_open_opts.net (it outlives the instance); the options
 * and the open options are read at open only. */
#ifndef HC_CUDA_H
#define HC_CUDA_H

#include "backends/backend.h"

/* What the GPU computes: cuda:fp32, cuda:fp16 (cuBLAS and own kernels), cuda:ref32 (ref32's bits:
 * backends/cuda_ref.cu's kernels), cuda:emulate:PROFILE (emulate:PROFILE's bits). 0: not parsed. */
typedef enum hc_cuda_mode { HC_CUDA_FP32 = 1, HC_CUDA_FP16, HC_CUDA_REF32, HC_CUDA_EMULATE } hc_cuda_mode;

/* Planted faults: kernel bugs the GPU tests must catch. No spec reaches them (the parser refuses
 * their old spellings like any unknown option); a test sets them after hc_cuda_opts_parse and
 * opens with hc_cuda_open_with. All zero: none (what every user's instance runs). */
typedef struct hc_cuda_faults {
    int split_k;       /* ref32, emulate: every GEMM sums k in two halves added at the end */
    char plant[128];   /* the layer whose output is multiplied by 1.0625 ("" none): a stand-in bug for the taps */
    char noround[128]; /* emulate: the layer whose storage rounding is left out ("" none) */
    int acc16_chunk8;  /* emulate: fp16 accumulation in chunks of 8 products instead of HC_ACC16_CHUNK */
    int sums;          /* emulate: the emulated pooling / RMSNorm sums rounded after every second add only */
    int tiles;         /* emulate: the fp16 Winograd tile products left unrounded */
} hc_cuda_faults;

typedef struct hc_cuda_opts {
    int mode; /* hc_cuda_mode */
    /* emulate: a built-in profile's name or a YAML path; "" when hc_backend_open_opts.profile
     * carries a parsed profile (taps, bisect-precision: spec "cuda:emulate") */
    char profile[1024];
    /* fp16 only, calibration knobs (",pool32", ",mid32", ",probs32"; ",emulike" sets all three):
     * keep fp32 what emulate:fp16 keeps fp32 (docs/CALIBRATION.md) */
    int pool32, mid32, probs32;
    hc_cuda_faults faults;
} hc_cuda_opts;

/* Parses the params of a cuda spec (what follows "cuda:"):
 *   ref32 | emulate:PROFILE|PATH.yaml | fp32 | fp16[,pool32][,mid32][,probs32][,emulike]
 * and loads an emulate profile to check it (no net, no GPU; the profile runs to the first comma,
 * and emulate takes no options). Faults stay zero. 0, or -1 with err (HC_ECONFIG) naming the
 * option, with a "did you mean" where one is close. */
int hc_cuda_opts_parse(const char *params, hc_cuda_opts *o, hc_err *err);

/* The kind (backends/cuda_opts.c, every build: without HC_HAVE_CUDA it is registered as missing,
 * so a spec naming it is parsed and then refused as "not built"). */
extern const hc_backend_kind hc_backend_cuda;

/* Defined only in a CUDA build (backends/cuda.cu; HC_HAVE_CUDA for the C files): */

/* Opens an instance on device 0 for oo's net, board and max_batch (oo->spec and oo->threads are
 * not read; oo->profile and oo->active only in emulate mode). Faults are refused in a mode that
 * has no such fault. NULL with err on failure (no device: HC_EBACKEND "cuda: no CUDA device"). */
void *hc_cuda_open_with(const hc_cuda_opts *o, const hc_backend_open_opts *oo, hc_err *err);
/* The instance's ops: eval, taps (always 1: every layer it computes) and close. */
/* Creates the device's context ahead of the first open (hc_backend_kind.warm). */
void hc_cuda_warm(void);
/* A lane beside base (hc_backend_ops.open_sharing): its own rows, arena, staging and cuBLAS
 * handle, base's weights on the device and prepared tables (uploaded once); base outlives it. */
void *hc_cuda_open_sharing(void *base, int max_batch, int threads, hc_err *err);
int hc_cuda_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                 hc_raw_heads *out, hc_err *err);
int hc_cuda_taps(void *inst);
void hc_cuda_close(void *inst);

#endif
