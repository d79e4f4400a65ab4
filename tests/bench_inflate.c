/* gzip decompression speed on a large net: zlib's gzread against halfcheck's reader
 * (harness/base/inflate.h), each on the calling thread, the reader with its parallel decoder on
 * every core (harness/base/pinflate.h), and hc_istream (both, and its read-ahead thread) as a net
 * load sees it; all in one run, so the ratios hold on a loaded machine. The file: $HC_BENCH_NET, or a synthetic b18c384nbt net (random float weights, 111 MB,
 * which compress as little as a trained net's) written to build/tmp first. Best of three runs
 * each, MB/s of decompressed bytes. Never fails on speed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/base/inflate.h"
#include "harness/base/stream.h"
#include "harness/base/thread.h"
#include "harness/model/synth.h"

enum { CHUNK = 256 << 10 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Decompresses path whole with one of the readers; the byte count, or -1. */
static long long run_zlib(const char *path, unsigned char *buf)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return -1;
    gzbuffer(g, 1 << 16); /* what hc_istream gave zlib */
    long long total = 0;
    int n;
    while ((n = gzread(g, buf, CHUNK)) > 0)
        total += n;
    gzclose(g);
    return n < 0 ? -1 : total;
}

static long long run_reader(const char *path, unsigned char *buf, int threads)
{
    int fd = open(path, O_RDONLY);
    hc_err err = {0};
    hc_inflate *z = fd >= 0 ? hc_inflate_open(fd, path, 0, &err) : NULL;
    if (z && threads > 1)
        hc_inflate_parallel(z, threads, 0);
    long long total = 0;
    long n = -1;
    while (z && (n = hc_inflate_read(z, buf, CHUNK, &err)) > 0)
        total += n;
    hc_inflate_close(z);
    if (fd >= 0)
        close(fd);
    return n < 0 ? -1 : total;
}

static long long run_inflate(const char *path, unsigned char *buf) { return run_reader(path, buf, 1); }

static long long run_parallel(const char *path, unsigned char *buf)
{
    return run_reader(path, buf, hc_processors());
}

static long long run_stream(const char *path, unsigned char *buf)
{
    hc_err err = {0};
    hc_istream *s = hc_istream_open(path, &err);
    long long total = 0;
    long n = -1;
    while (s && (n = hc_istream_read_some(s, buf, CHUNK, &err)) > 0)
        total += n;
    hc_istream_close(s);
    return n < 0 ? -1 : total;
}

int main(void)
{
    const char *path = getenv("HC_BENCH_NET");
    char made[600] = "";
    if (!path || !*path) {
        const char *dir = hc_tmpdir("bench_inflate");
        hc_synth_spec spec;
        hc_err err = {0};
        hc_synth_spec_default(&spec);
        snprintf(made, sizeof made, "%s/b18c384nbt.bin.gz", dir ? dir : ".");
        if (hc_synth_preset("b18c384nbt", &spec, &err) || hc_synth_write(&spec, made, 1, &err)) {
            printf("bench_inflate: cannot write %s: %s\n", made, err.msg);
            return 0;
        }
        path = made;
    }
    unsigned char *buf = malloc(CHUNK);
    static const struct {
        const char *name;
        long long (*fn)(const char *, unsigned char *);
    } readers[] = {{"zlib gzread", run_zlib},
                   {"hc_inflate", run_inflate},
                   {"hc_inflate, parallel", run_parallel},
                   {"hc_istream (read ahead)", run_stream}};
    enum { NR = sizeof readers / sizeof readers[0] };
    double best[NR] = {0};
    long long bytes[NR] = {0};
    for (int rep = 0; rep < 3; rep++)
        for (int k = 0; k < NR; k++) {
            double t0 = now_s();
            bytes[k] = readers[k].fn(path, buf);
            double t = now_s() - t0;
            if (best[k] == 0 || t < best[k])
                best[k] = t;
        }
    printf("gzip decompression of %s (%.1f MB decompressed), best of 3; parallel: %d threads\n", path,
           bytes[0] / 1e6, hc_processors());
    for (int k = 0; k < NR; k++)
        if (bytes[k] != bytes[0] || bytes[k] < 0)
            printf("  %-24s failed (%lld bytes)\n", readers[k].name, bytes[k]);
        else
            printf("  %-24s %7.3f s %8.1f MB/s %6.2fx zlib\n", readers[k].name, best[k], bytes[k] / 1e6 / best[k],
                   best[0] / best[k]);
    free(buf);
    if (made[0])
        unlink(made);
    return 0;
}
