/* Streams: gzip and plain round trips, line limits, truncated gzip, atomic commit/abort. */
#include <stdio.h>
#include <string.h>
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

int main(void)
{
    hc_plan(4 + 4 + 1 + 2 + 1 + 1); /* two round trips; limits, truncation, abort, slurp */
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
    return hc_test_exit();
}
