/* Streams: gzip and plain round trips, line limits, truncated gzip, atomic commit/abort. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/base/stream.h"

static void roundtrip(const char *dir, const char *name, const char *id)
{
    char path[512], chk[64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hc_err err = {0};
    unlink(path);
    hc_ostream *o = hc_ostream_open(path, &err);
    snprintf(chk, sizeof chk, "%s.1", id);
    if (!hc_check(chk, o != NULL, "open: %s", err.msg))
        return;
    snprintf(chk, sizeof chk, "%s.2", id);
    hc_check(chk, access(path, F_OK) != 0, "file visible before commit");
    for (int i = 0; i < 1000; i++)
        hc_ostream_printf(o, &err, "line %d\r\n", i);
    hc_ostream_printf(o, &err, "last-no-newline");
    snprintf(chk, sizeof chk, "%s.3", id);
    hc_check(chk, hc_ostream_commit(o, &err) == 0, "commit: %s", err.msg);
    hc_istream *s = hc_istream_open(path, &err);
    char *line;
    long n;
    int ok = 1, count = 0;
    while ((n = hc_istream_getline(s, &line, 100, &err)) >= 0) {
        char want[64];
        if (count < 1000)
            snprintf(want, sizeof want, "line %d", count);
        else
            snprintf(want, sizeof want, "last-no-newline");
        if (strcmp(line, want) != 0 || (long)strlen(want) != n)
            ok = 0;
        count++;
    }
    snprintf(chk, sizeof chk, "%s.4", id);
    hc_check(chk, ok && count == 1001 && err.code == HC_OK, "read back %d lines ok=%d err=%s", count, ok, err.msg);
    hc_istream_close(s);
}

/* Files of 1 MiB and more are read ahead on a thread of their own: the same bytes, and the same
 * errors at the same offsets, as a small file read on the calling thread. */
static void read_ahead(const char *dir)
{
    char gz[512], plain[512], cut[512], bad[512];
    snprintf(gz, sizeof gz, "%s/ahead.txt.gz", dir);
    snprintf(plain, sizeof plain, "%s/ahead.txt", dir);
    snprintf(cut, sizeof cut, "%s/ahead-cut.gz", dir);
    snprintf(bad, sizeof bad, "%s/ahead-bad.gz", dir);
    hc_err err = {0};
    const int lines = 400000; /* ~9 MB of text; the gzip'd copy is over 1 MiB too */
    for (int k = 0; k < 2; k++) {
        hc_ostream *o = hc_ostream_open(k ? plain : gz, &err);
        for (int i = 0; o && i < lines; i++)
            hc_ostream_printf(o, &err, "%d %u %d\n", i, (unsigned)i * 2654435761u, i % 977);
        if (o)
            hc_ostream_commit(o, &err);
    }
    struct stat st;
    int big = stat(gz, &st) == 0 && st.st_size >= (1 << 20);
    hc_check("stream-7.1", big, "the gzip'd file is %lld bytes, under the read-ahead size", (long long)st.st_size);
    for (int k = 0; k < 2; k++) {
        hc_istream *s = hc_istream_open(k ? plain : gz, &err);
        char *line;
        long n;
        int count = 0, ok = s != NULL;
        while (s && (n = hc_istream_getline(s, &line, 100, &err)) >= 0) {
            char want[64];
            snprintf(want, sizeof want, "%d %u %d", count, (unsigned)count * 2654435761u, count % 977);
            if (strcmp(line, want) != 0)
                ok = 0;
            count++;
        }
        const char *word = s ? hc_istream_offset_word(s) : "";
        hc_check(k ? "stream-7.3" : "stream-7.2",
                 ok && count == lines && err.code == HC_OK && strcmp(word, k ? "offset" : "uncompressed offset") == 0,
                 "%s: %d lines ok=%d, %s, offset word \"%s\"", k ? "plain" : "gzip", count, ok, err.msg, word);
        hc_istream_close(s);
    }
    /* truncated and corrupted: an error naming the file and the offset, after the good data */
    static unsigned char whole[4 << 20];
    FILE *f = fopen(gz, "rb");
    size_t len = f ? fread(whole, 1, sizeof whole, f) : 0;
    if (f)
        fclose(f);
    f = fopen(cut, "wb");
    fwrite(whole, 1, len * 3 / 4, f);
    fclose(f);
    whole[len / 2] ^= 0x5a;
    whole[len / 2 + 1] ^= 0xa5;
    f = fopen(bad, "wb");
    fwrite(whole, 1, len, f);
    fclose(f);
    for (int k = 0; k < 2; k++) {
        hc_err_clear(&err);
        hc_istream *s = hc_istream_open(k ? bad : cut, &err);
        char *line;
        int count = 0;
        static char chunk[4096];
        if (k) /* corrupted bytes may inflate to anything before zlib sees the damage: chunks, no lines */
            while (s && hc_istream_read_some(s, chunk, sizeof chunk, &err) > 0)
                count++;
        while (!k && s && hc_istream_getline(s, &line, 100, &err) >= 0)
            count++;
        hc_check(k ? "stream-7.5" : "stream-7.4",
                 err.code == HC_EFORMAT && strstr(err.msg, k ? "ahead-bad.gz" : "ahead-cut.gz") &&
                     strstr(err.msg, "uncompressed offset") && count > 1000,
                 "%d lines, then: %s", count, err.msg);
        hc_istream_close(s);
    }
    /* closed after a few lines, the rest unread: the reader thread stops (no hang, SAN clean) */
    hc_err_clear(&err);
    hc_istream *s = hc_istream_open(gz, &err);
    char *line;
    int count = 0;
    while (s && count < 10 && hc_istream_getline(s, &line, 100, &err) >= 0)
        count++;
    hc_istream_close(s);
    hc_check("stream-7.6", count == 10, "read %d lines before closing: %s", count, err.msg);
}

int main(void)
{
    hc_plan(4 + 4 + 1 + 2 + 1 + 1 + 6); /* two round trips; limits, truncation, abort, slurp; read-ahead */
    const char *dir = hc_tmpdir("test_stream");
    roundtrip(dir, "plain.txt", "stream-1");
    roundtrip(dir, "packed.txt.gz", "stream-2");

    /* A line over the limit is an HC_ELIMIT error naming the line. */
    hc_err err = {0};
    const char *text = "short\nthis line is too long\n";
    hc_istream *s = hc_istream_mem(text, strlen(text), "mem", &err);
    char *line;
    hc_istream_getline(s, &line, 10, &err);
    long n = hc_istream_getline(s, &line, 10, &err);
    hc_check("stream-3.1", n == -1 && err.code == HC_ELIMIT && strstr(err.msg, "line 2"), "got %ld, %s", n, err.msg);
    hc_istream_close(s);

    /* Truncated gzip data is an error, not a silent EOF. */
    char path[512], cut[512];
    snprintf(path, sizeof path, "%s/big.gz", dir);
    snprintf(cut, sizeof cut, "%s/cut.gz", dir);
    hc_err_clear(&err);
    hc_ostream *o = hc_ostream_open(path, &err);
    for (int i = 0; i < 20000; i++)
        hc_ostream_printf(o, &err, "%d %d %d\n", i, i * 7919, i * 104729);
    hc_ostream_commit(o, &err);
    static char whole[1 << 20];
    FILE *f = fopen(path, "rb");
    size_t len = fread(whole, 1, sizeof whole, f);
    fclose(f);
    hc_check("stream-4.1", len > 100 && len < sizeof whole, "compressed size %zu", len);
    f = fopen(cut, "wb");
    fwrite(whole, 1, len / 2, f);
    fclose(f);
    hc_err_clear(&err);
    s = hc_istream_open(cut, &err);
    while (hc_istream_getline(s, &line, 100, &err) >= 0)
        ;
    hc_check("stream-4.2", err.code == HC_EFORMAT && strstr(err.msg, "cut.gz"), "got code %d: %s", err.code, err.msg);
    hc_istream_close(s);

    /* Abort leaves nothing behind. */
    snprintf(path, sizeof path, "%s/aborted.txt", dir);
    unlink(path);
    o = hc_ostream_open(path, &err);
    hc_ostream_printf(o, &err, "partial");
    hc_ostream_abort(o);
    hc_check("stream-5.1", access(path, F_OK) != 0, "aborted file exists");

    /* read_file refuses files over the limit. */
    hc_err_clear(&err);
    snprintf(path, sizeof path, "%s/plain.txt", dir);
    char *b = hc_read_file(path, 100, NULL, &err);
    hc_check("stream-6.1", b == NULL && err.code == HC_ELIMIT, "code %d", err.code);
    free(b);
    read_ahead(dir);
    return hc_test_exit();
}
