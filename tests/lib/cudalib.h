/* How the GPU tests open the cuda backend with planted faults (backends/cuda.h: hc_cuda_faults),
 * which no spec can name: parse the params, set the faults, open. */
#ifndef HC_CUDALIB_H
#define HC_CUDALIB_H

#include <stddef.h>

#include "backends/cuda.h"

/* Opens cuda with params (what follows "cuda:") and faults (NULL: none) into b, as
 * hc_backend_open would open "cuda:PARAMS" (errors prefixed "backend cuda:PARAMS: "). In a build
 * without CUDA: -1, "cuda: not built into this halfcheck". */
int hc_test_cuda_open(hc_backend *b, const char *params, const hc_cuda_faults *faults, const hc_net *net, int nx,
                      int ny, int max_batch, hc_err *err);

/* The faults set, for messages: "split_k", "noround=LAYER", "plant=LAYER", "acc16_chunk8", "sums",
 * "tiles", joined by "+", or "none". Returns buf. */
const char *hc_test_cuda_faults_text(const hc_cuda_faults *f, char *buf, size_t len);

#endif
