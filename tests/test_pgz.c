/* The parallel gzip writer: one valid gzip member that zlib reads back to the bytes written,
 * the same bytes whatever the thread count, across block boundaries, empty and tiny files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/base/pgz.h"

/* Data with some structure (numbers as text) and some noise, n bytes. */
static unsigned char *make_data(size_t n, unsigned seed)
{
    unsigned char *d = malloc(n ? n : 1);
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n;) {
        char num[32];
        x = x * 1103515245u + 12345u;
        int len = snprintf(num, sizeof num, "%.9f,", (double)(x >> 8) / 16777216.0);
        for (int k = 0; k < len && i < n; k++)
            d[i++] = (unsigned char)num[k];
    }
    return d;
}

/* Writes data through pgz in pieces of `piece` bytes into path; 0 or -1. */
static int write_pgz(const char *path, const unsigned char *d, size_t n, size_t piece, int threads, hc_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return hc_err_set(err, HC_EIO, "cannot create %s", path);
    hc_pgz *z = hc_pgz_open(fd, path, threads, err);
    int rc = z ? 0 : -1;
    for (size_t at = 0; rc == 0 && at < n; at += piece)
        rc = hc_pgz_write(z, d + at, n - at < piece ? n - at : piece, err);
    if (z)
        rc = rc ? (hc_pgz_abort(z), -1) : hc_pgz_finish(z, err);
    close(fd);
    return rc;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t got;
    while ((got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            b = realloc(b, cap *= 2);
    }
    fclose(f);
    *len = n;
    return b;
}

/* Inflates a whole gzip file (one member, nothing after it); returns the data or NULL. */
static unsigned char *gunzip(const unsigned char *gz, size_t gz_len, size_t *out_len, int *members_ok)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + 15) != Z_OK)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    unsigned char *out = malloc(cap);
    zs.next_in = (unsigned char *)gz;
    zs.avail_in = (uInt)gz_len;
    int zr;
    do {
        if (n == cap)
            out = realloc(out, cap *= 2);
        zs.next_out = out + n;
        zs.avail_out = (uInt)(cap - n);
        zr = inflate(&zs, Z_NO_FLUSH);
        n = cap - zs.avail_out;
    } while (zr == Z_OK);
    *members_ok = zr == Z_STREAM_END && zs.avail_in == 0; /* one member, CRC and length checked */
    inflateEnd(&zs);
    *out_len = n;
    return out;
}

int main(void)
{
    hc_plan(6 * 3 + 2);
    const char *dir = hc_tmpdir("test_pgz");
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.gz", dir);
    snprintf(b, sizeof b, "%s/b.gz", dir);
    /* sizes: empty, tiny, one byte short of a block, exactly two blocks, several blocks and a bit */
    const size_t sizes[6] = {0, 17, HC_PGZ_BLOCK - 1, 2 * HC_PGZ_BLOCK, 7 * HC_PGZ_BLOCK + 12345, 3 * HC_PGZ_BLOCK + 1};
    const size_t pieces[6] = {1, 5, 4096, 1000, 65536 + 3, HC_PGZ_BLOCK * 4};
    for (int t = 0; t < 6; t++) {
        size_t n = sizes[t];
        unsigned char *d = make_data(n, (unsigned)t + 1);
        hc_err err = {0};
        char id[32];
        /* on 4 threads, written in small pieces */
        int rc = write_pgz(a, d, n, pieces[t], 4, &err);
        size_t gz_len = 0, back_len = 0;
        unsigned char *gz = rc == 0 ? slurp(a, &gz_len) : NULL;
        int one_member = 0;
        unsigned char *back = gz ? gunzip(gz, gz_len, &back_len, &one_member) : NULL;
        snprintf(id, sizeof id, "pgz-%d.1", t + 1);
        hc_check(id, back && one_member && back_len == n && (n == 0 || memcmp(back, d, n) == 0),
                 "%zu bytes: write %s, read back %zu bytes, one valid member %d", n, rc ? err.msg : "ok", back_len,
                 one_member);
        /* on one thread, in one piece: the same bytes */
        rc = write_pgz(b, d, n, n ? n : 1, 1, &err);
        size_t gz2_len = 0;
        unsigned char *gz2 = rc == 0 ? slurp(b, &gz2_len) : NULL;
        snprintf(id, sizeof id, "pgz-%d.2", t + 1);
        hc_check(id, gz && gz2 && gz_len == gz2_len && memcmp(gz, gz2, gz_len) == 0,
                 "%zu bytes: 4 threads gave %zu bytes, 1 thread %zu (or differ)", n, gz_len, gz2_len);
        /* compressed: the blocks see the data before them (numbers as text shrink by half or more) */
        snprintf(id, sizeof id, "pgz-%d.3", t + 1);
        hc_check(id, n < 4096 || (gz && gz_len < n * 6 / 10), "%zu bytes became %zu", n, gz_len);
        free(d);
        free(gz);
        free(gz2);
        free(back);
    }
    /* a write that fails (a closed descriptor) is an error naming the file, not a crash */
    hc_err err = {0};
    int fd = open(a, O_RDONLY);
    hc_pgz *z = fd >= 0 ? hc_pgz_open(fd, "named.gz", 2, &err) : NULL;
    hc_check("pgz-7.1", z == NULL && strstr(err.msg, "named.gz") && strstr(err.msg, "write failed"),
             "opening on a read-only descriptor: %s", z ? "succeeded" : err.msg);
    hc_pgz_abort(z);
    if (fd >= 0)
        close(fd);
    /* many blocks on many threads, aborted midway: no hang, no leak (SAN) */
    fd = open(b, O_WRONLY | O_TRUNC);
    z = hc_pgz_open(fd, b, 4, &err);
    unsigned char *d = make_data(9 * HC_PGZ_BLOCK, 9);
    int rc = z ? hc_pgz_write(z, d, 9 * HC_PGZ_BLOCK, &err) : -1;
    hc_pgz_abort(z);
    close(fd);
    free(d);
    hc_check("pgz-7.2", rc == 0, "writing before the abort: %s", err.msg);
    return hc_test_exit();
}
