/* halfcheck version (and --version, -V): the version, the engine's numeric version and the kernels' SIMD forms. */
#include <stdio.h>

#include "harness/cli/cli.h"
#include "refs/gemm.h"
#include "refs/kernels.h"
#include "harness/base/version.h"

static const cli_opt opts[] = {
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_version(int argc, char **argv)
{
    cli_args a;
    static const cli_cmd usage = {"version", opts,
        "usage: halfcheck version   (or halfcheck --version, halfcheck -V)\n",
        0, 0};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    printf("halfcheck %s (engine %d)\n", HC_VERSION, HC_ENGINE_VERSION);
    /* which SIMD form this build's reference runs (the same bits in every form) */
    printf("kernels: gemm %s, winograd %s, softmax %s, exp %s\n", hc_gemm_isa(), hc_wino_isa(),
           hc_softmax_isa(), hc_vexp_isa());
#ifdef HC_HAVE_CUDA
    printf("cuda backend: built in\n");
#else
    printf("cuda backend: not built in (no nvcc at build time, CUDA=0 or SAN=1)\n");
#endif
    return HC_EXIT_OK;
}
