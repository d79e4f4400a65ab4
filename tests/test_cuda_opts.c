/* The cuda backend's spec parser (backends/cuda.h: hc_cuda_opts_parse), in every build (no GPU,
 * no nvcc needed): every user option accepted with its typed fields, the test faults' old spec
 * suffixes refused with a message naming them, "did you mean" for near misses, and the faults of
 * a parsed spec always zero. */
#include <stdio.h>
#include <string.h>

#include "backends/cuda.h"
#include "hc_test.h"

static int faults_zero(const hc_cuda_faults *f)
{
    static const hc_cuda_faults zero;
    return memcmp(f, &zero, sizeof zero) == 0;
}

typedef struct accepted {
    const char *params;
    int mode, pool32, mid32, probs32;
    const char *profile;
} accepted;

static const accepted good[] = {
    {"ref32", HC_CUDA_REF32, 0, 0, 0, ""},
    {"fp32", HC_CUDA_FP32, 0, 0, 0, ""},
    {"fp16", HC_CUDA_FP16, 0, 0, 0, ""},
    {"fp16,pool32", HC_CUDA_FP16, 1, 0, 0, ""},
    {"fp16,mid32", HC_CUDA_FP16, 0, 1, 0, ""},
    {"fp16,probs32", HC_CUDA_FP16, 0, 0, 1, ""},
    {"fp16,emulike", HC_CUDA_FP16, 1, 1, 1, ""},
    {"fp16,probs32,pool32", HC_CUDA_FP16, 1, 0, 1, ""},
    {"emulate:fp16", HC_CUDA_EMULATE, 0, 0, 0, "fp16"},
    {"emulate:ane-fp16", HC_CUDA_EMULATE, 0, 0, 0, "ane-fp16"},
    {"emulate:backends/profiles/fp16-acc16.yaml", HC_CUDA_EMULATE, 0, 0, 0, "backends/profiles/fp16-acc16.yaml"},
};
enum { N_GOOD = sizeof good / sizeof good[0] };

typedef struct refused {
    const char *params;
    const char *needles[2]; /* each must be in the message */
} refused;

/* The planted faults' old spellings (now hc_cuda_faults fields that only the GPU tests set), then
 * mistakes: each a config error naming what is wrong. */
static const refused bad[] = {
    {"ref32,split-k", {"unknown option \"split-k\"", "ref32 takes no options"}},
    {"emulate:fp16,split-k", {"unknown option \"split-k\"", "emulate takes no options"}},
    {"emulate:fp16,noround=model.conv1", {"unknown option \"noround=model.conv1\"", NULL}},
    {"emulate:fp16,plant-acc16", {"unknown option \"plant-acc16\"", NULL}},
    {"emulate:fp16,plant-sums", {"unknown option \"plant-sums\"", NULL}},
    {"emulate:fp16,plant-tiles", {"unknown option \"plant-tiles\"", NULL}},
    {"fp16,plant=model.conv1", {"unknown option \"plant=model.conv1\"", "fp16 takes ,pool32 ,mid32 ,probs32 ,emulike"}},
    {"fp32,plant=model.conv1", {"unknown option \"plant=model.conv1\"", "fp32 takes no options"}},
    {"ref32,plant=model.conv1", {"unknown option \"plant=model.conv1\"", NULL}},
    {"fp16,pool33", {"unknown option \"pool33\" (did you mean \"pool32\"?)", NULL}},
    {"fp16,emulik", {"(did you mean \"emulike\"?)", NULL}},
    {"fp33", {"unknown mode \"fp33\" (did you mean \"fp32\"?)", "emulate:PROFILE|PATH.yaml"}},
    {"ref3", {"unknown mode \"ref3\" (did you mean \"ref32\"?)", NULL}},
    {"emulat:fp16", {"unknown mode \"emulat:fp16\"", NULL}},
    {"fp32,pool32", {"unknown option \"pool32\"", "pool32 is fp16's"}},
    {"fp16,", {"empty option", NULL}},
    {"", {"a mode is needed", NULL}},
    {"emulate", {"emulate needs a profile", NULL}},
    {"emulate:", {"emulate needs a profile", NULL}},
    {"emulate:nosuchprofile", {"nosuchprofile", NULL}},
};
enum { N_BAD = sizeof bad / sizeof bad[0] };

int main(void)
{
    hc_plan(N_GOOD + N_BAD + 2);
    /* cuda_opts-1.N: accepted, the fields as the spec says, no fault */
    for (int i = 0; i < N_GOOD; i++) {
        const accepted *a = &good[i];
        hc_cuda_opts o;
        memset(&o, 0x5a, sizeof o);
        hc_err err = {0};
        int rc = hc_cuda_opts_parse(a->params, &o, &err);
        char id[32];
        snprintf(id, sizeof id, "cuda_opts-1.%d", i + 1);
        hc_check(id,
                 rc == 0 && o.mode == a->mode && o.pool32 == a->pool32 && o.mid32 == a->mid32 &&
                     o.probs32 == a->probs32 && strcmp(o.profile, a->profile) == 0 && faults_zero(&o.faults),
                 "cuda:%s: rc %d (%s), mode %d pool32 %d mid32 %d probs32 %d profile \"%s\" faults %s", a->params, rc,
                 err.msg, o.mode, o.pool32, o.mid32, o.probs32, o.profile, faults_zero(&o.faults) ? "zero" : "set");
    }
    /* cuda_opts-2.N: refused as a config error, the message naming the option */
    for (int i = 0; i < N_BAD; i++) {
        const refused *b = &bad[i];
        hc_cuda_opts o;
        hc_err err = {0};
        int rc = hc_cuda_opts_parse(b->params, &o, &err);
        int named = 1;
        for (int k = 0; k < 2; k++)
            named = named && (!b->needles[k] || strstr(err.msg, b->needles[k]) != NULL);
        char id[32];
        snprintf(id, sizeof id, "cuda_opts-2.%d", i + 1);
        hc_check(id, rc == -1 && err.code == HC_ECONFIG && named && strncmp(err.msg, "cuda: ", 6) == 0,
                 "cuda:%s: rc %d code %d: \"%s\" (wanted \"%s\"%s%s%s)", b->params, rc, err.code, err.msg,
                 b->needles[0], b->needles[1] ? " and \"" : "", b->needles[1] ? b->needles[1] : "",
                 b->needles[1] ? "\"" : "");
    }
    /* cuda_opts-3.1: NULL params are the empty spec ("cuda" alone) */
    hc_cuda_opts o;
    hc_err err = {0};
    int rc = hc_cuda_opts_parse(NULL, &o, &err);
    hc_check("cuda_opts-3.1", rc == -1 && err.code == HC_ECONFIG && strstr(err.msg, "a mode is needed"),
             "NULL: rc %d: %s", rc, err.msg);
    /* cuda_opts-3.2: a profile longer than the options hold is refused, not cut */
    char longp[1200];
    memset(longp, 'a', sizeof longp - 1);
    memcpy(longp, "emulate:", 8);
    longp[sizeof longp - 1] = '\0';
    hc_err_clear(&err);
    rc = hc_cuda_opts_parse(longp, &o, &err);
    hc_check("cuda_opts-3.2", rc == -1 && err.code == HC_ECONFIG && strstr(err.msg, "longer than"),
             "rc %d: %s", rc, err.msg);
    return hc_test_exit();
}
