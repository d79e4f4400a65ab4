/* Model loading: time and peak memory for each shared net. Each load runs in a forked child
 * so its peak RSS (VmHWM) is its own; the table compares the growth of the peak during the
 * load with the fp32 bytes the file stores. Never fails on speed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/model/model.h"

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = atol(line + kl + 1);
            break;
        }
    fclose(f);
    return v;
}

typedef struct result {
    int ok, version;
    long long floats;
    double ms;
    long base_kb, peak_kb;
    char msg[200];
} result;

static void measure(const char *path, result *r)
{
    memset(r, 0, sizeof *r);
    r->base_kb = status_kb("VmRSS");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hc_err e = {0};
    hc_net *n = hc_net_load(path, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->peak_kb = status_kb("VmHWM");
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (!n) {
        snprintf(r->msg, sizeof r->msg, "%s", e.msg);
        return;
    }
    r->ok = 1;
    r->version = n->model_version;
    r->floats = (long long)n->num_floats;
    hc_net_free(n);
}

/* A large v8 convnet (trunk C, nblocks ordinary 3x3 blocks, random weights) written straight
 * in the file format, so the table also shows a production-sized load. */
static uint64_t rs = 88172645463325252ull;
static float rndf(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (float)(rs >> 40) / (float)(1 << 24) - 0.5f;
}

static void blk(gzFile g, size_t n, int positive)
{
    gzputs(g, "@BIN@");
    float buf[1024];
    for (size_t i = 0; i < n;) {
        size_t k = n - i < 1024 ? n - i : 1024;
        for (size_t j = 0; j < k; j++)
            buf[j] = positive ? 1.0f + rndf() : rndf();
        gzwrite(g, buf, (unsigned)(k * sizeof(float)));
        i += k;
    }
    gzputs(g, "\n");
}

static void conv(gzFile g, const char *name, int k, int in, int out)
{
    gzprintf(g, "%s\n%d\n%d\n%d\n%d\n1\n1\n", name, k, k, in, out);
    blk(g, (size_t)k * k * in * out, 0);
}

static void bn(gzFile g, const char *name, int c)
{
    gzprintf(g, "%s\n%d\n1e-5\n1\n1\n", name, c);
    blk(g, (size_t)c, 0);
    blk(g, (size_t)c, 1);
    blk(g, (size_t)c, 1);
    blk(g, (size_t)c, 0);
}

static void mm(gzFile g, const char *name, int in, int out)
{
    gzprintf(g, "%s\n%d\n%d\n", name, in, out);
    blk(g, (size_t)in * out, 0);
}

static void bias(gzFile g, const char *name, int c)
{
    gzprintf(g, "%s\n%d\n", name, c);
    blk(g, (size_t)c, 0);
}

static int write_big(const char *path, int C, int nblocks)
{
    gzFile g = gzopen(path, "wb1");
    if (!g)
        return -1;
    gzprintf(g, "bench-b%dc%d\n8\n22\n19\ntrunk\n%d\n%d\n%d\n%d\n0\n%d\n", nblocks, C, nblocks, C, C, C, C / 4);
    conv(g, "conv1", 5, 22, C);
    mm(g, "ip1", 19, C);
    char nm[64];
    for (int b = 0; b < nblocks; b++) {
        gzprintf(g, "ordinary_block\nrconv%d\n", b);
        snprintf(nm, sizeof nm, "rconv%d.norm1", b);
        bn(g, nm, C);
        gzprintf(g, "rconv%d.act1\n", b);
        snprintf(nm, sizeof nm, "rconv%d.conv1", b);
        conv(g, nm, 3, C, C);
        snprintf(nm, sizeof nm, "rconv%d.norm2", b);
        bn(g, nm, C);
        gzprintf(g, "rconv%d.act2\n", b);
        snprintf(nm, sizeof nm, "rconv%d.conv2", b);
        conv(g, nm, 3, C, C);
    }
    bn(g, "trunk/norm", C);
    gzputs(g, "trunk/act\npolicyhead\n");
    conv(g, "p1", 1, C, 32);
    conv(g, "g1", 1, C, 32);
    bn(g, "g1norm", 32);
    gzputs(g, "g1act\n");
    mm(g, "gpool2bias", 96, 32);
    bn(g, "p1norm", 32);
    gzputs(g, "p1act\n");
    conv(g, "p2", 1, 32, 1);
    mm(g, "gpool2pass", 96, 1);
    gzputs(g, "valuehead\n");
    conv(g, "v1", 1, C, 32);
    bn(g, "v1norm", 32);
    gzputs(g, "v1act\n");
    mm(g, "v2", 96, 64);
    bias(g, "v2b", 64);
    gzputs(g, "v2act\n");
    mm(g, "v3", 64, 3);
    bias(g, "v3b", 3);
    mm(g, "sv3", 64, 4);
    bias(g, "sv3b", 4);
    conv(g, "vown", 1, 32, 1);
    return gzclose(g) == Z_OK ? 0 : -1;
}

int main(void)
{
    static const char *const rels[] = {
        "nets/g170-b6c96-s175395328-d26788732.bin.gz", "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
        "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", "nets/synth/pub_v5.bin.gz", "nets/synth/pub_v7.bin.gz",
        "nets/synth/pub_v11nbt.bin.gz", "nets/synth/pub_v15meta.bin.gz", "nets/synth/pub_v16.bin.gz",
        "nets/synth/pub_v17nbttf.bin.gz"};
    printf("%-42s %3s %10s %11s %9s %12s %12s\n", "net", "ver", "floats", "fp32 MB", "load ms", "peak+ MB",
           "over fp32 MB");
    const char *tmp = hc_tmpdir("bench_model");
    char big[600] = "";
    if (tmp) {
        snprintf(big, sizeof big, "%s/bench-b10c384.bin.gz", tmp);
        if (write_big(big, 384, 10) != 0)
            big[0] = '\0';
    }
    size_t nrels = sizeof rels / sizeof rels[0];
    for (size_t i = 0; i < nrels + 1; i++) {
        const char *p = i < nrels ? hc_shared(rels[i]) : big[0] ? big : NULL;
        if (i == nrels && !p)
            break;
        if (!p) {
            printf("%-42s (absent)\n", rels[i]);
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s", p);
        int fd[2];
        if (pipe(fd) != 0)
            return 1;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            result r;
            measure(path, &r);
            ssize_t w = write(fd[1], &r, sizeof r);
            _exit(w == (ssize_t)sizeof r ? 0 : 1);
        }
        close(fd[1]);
        result r;
        ssize_t got = read(fd[0], &r, sizeof r);
        close(fd[0]);
        int st;
        waitpid(pid, &st, 0);
        const char *base = strrchr(i < nrels ? rels[i] : big, '/') + 1;
        if (got != (ssize_t)sizeof r || !r.ok) {
            printf("%-42s failed: %s\n", base, got == (ssize_t)sizeof r ? r.msg : "child died");
            continue;
        }
        double fp32 = (double)r.floats * 4 / 1048576.0, peak = (double)(r.peak_kb - r.base_kb) / 1024.0;
        printf("%-42s %3d %10lld %11.2f %9.1f %12.2f %12.2f\n", base, r.version, r.floats, fp32, r.ms, peak,
               peak - fp32);
    }
    if (big[0])
        remove(big);
    return 0;
}
