/* Bumped whenever a change can alter computed outputs: the reference cache keys on it. */
#ifndef HC_VERSION_H
#define HC_VERSION_H
#define HC_VERSION "0.1.0"
#define HC_ENGINE_VERSION 3 /* 2: products on refs/gemm.c instead of OpenBLAS (other rounding); 3: exp, tanh, log, sin, cos from harness/base/hcmath (own, the same bits everywhere) instead of libm */
#endif
