/* Resource bounds against hostile inputs: model headers declaring a billion channels, a huge
 * block count or numbers past int, and a layer at the float limit with no data behind it, are
 * refused with the limit named and without memory growing; a positions or outputs file whose
 * line is far over the line limit (streamed through a FIFO, or a small gzip of a huge line: no
 * large file is ever written) is refused at the limit, memory bounded by it. */
#define _GNU_SOURCE /* mkfifo */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"

static hc_net *load_text(const char *text, hc_err *err)
{
    hc_istream *in = hc_istream_mem(text, strlen(text), "hostile.txt", err);
    if (!in)
        return NULL;
    hc_net *n = hc_net_read(in, err);
    hc_istream_close(in);
    return n;
}

/* A version-8 header up to the trunk's fields, then `rest`. */
static void expect_model(const char *name, const char *trunk_fields, const char *rest, int code, const char *frag1,
                         const char *frag2)
{
    char text[4096];
    snprintf(text, sizeof text, "hostile\n8\n22\n19\ntrunk\n%s\n%s", trunk_fields, rest);
    hc_err err = {0};
    hc_net *n = load_text(text, &err);
    hc_check(name, !n && err.code == code && strstr(err.msg, "hostile.txt") && strstr(err.msg, frag1) &&
             (!frag2 || strstr(err.msg, frag2)), "code %d: %s", err.code, err.msg);
    hc_net_free(n);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void test_model(void)
{
    /* trunk: num blocks, trunk channels, mid, regular, dilated(0), gpool */
    expect_model("bounds-1.1", "1\n1000000000\n96\n96\n0\n32", "", HC_ELIMIT, "trunk channels", "HC_MODEL_MAX_CHANNELS");
    expect_model("bounds-1.2", "2000000000\n96\n96\n96\n0\n32", "", HC_ELIMIT, "trunk num blocks", "HC_MODEL_MAX_BLOCKS");
    expect_model("bounds-1.3", "1\n99999999999999999999\n96\n96\n0\n32", "", HC_EFORMAT, "trunk channels", NULL);
    expect_model("bounds-1.4", "1\n-5\n96\n96\n0\n32", "", HC_EFORMAT, "trunk channels", NULL);
    /* A conv at the float limit exactly (8192 x 8192 x 1 x 1 = 64 M floats = 256 MiB) with no
     * weights behind it, after the layers that make its shape valid: an error at the end of the
     * file, memory not grown by the declaration (pages are only touched as data arrives).
     * Measured in a child process. */
    size_t len;
    char *t = hc_hostile_model_text(1, &len);
    if (!t) {
        hc_check("bounds-1.5", 0, "out of memory");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        long before = max_rss_kb();
        (void)len;
        hc_err err = {0};
        hc_net *n = load_text(t, &err);
        long grew = max_rss_kb() - before;
        int ok = !n && (err.code == HC_EFORMAT || err.code == HC_ELIMIT) && strstr(err.msg, "hostile.txt");
        printf("  a 256 MiB layer declared without its data: %s (peak memory grew by %ld KiB)\n", err.msg, grew);
        fflush(stdout);
        _exit(ok && grew < 100 * 1024 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    free(t);
    hc_check("bounds-1.5", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d (see the line above)", st);
}

/* Writes "{" and `total` bytes of spaces to path (a FIFO) from a child; returns its pid. */
static pid_t feed_fifo(const char *path, size_t total)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        FILE *f = fopen(path, "w");
        if (!f)
            _exit(1);
        static char chunk[1 << 16];
        memset(chunk, ' ', sizeof chunk);
        fputc('{', f);
        for (size_t done = 0; done < total; done += sizeof chunk)
            if (fwrite(chunk, 1, sizeof chunk, f) != sizeof chunk)
                _exit(0); /* the reader gave up: expected */
        fclose(f);
        _exit(0);
    }
    return pid;
}

/* A gzip file of one line: "{" and `total` spaces (a few hundred KB on disk). */
static int write_gz_line(const char *path, size_t total)
{
    gzFile g = gzopen(path, "wb9");
    if (!g)
        return -1;
    static char chunk[1 << 16];
    memset(chunk, ' ', sizeof chunk);
    gzputc(g, '{');
    for (size_t done = 0; done < total; done += sizeof chunk)
        if (gzwrite(g, chunk, sizeof chunk) != (int)sizeof chunk) {
            gzclose(g);
            return -1;
        }
    gzputc(g, '\n');
    return gzclose(g) == Z_OK ? 0 : -1;
}

static void test_lines(const char *dir)
{
    char fifo[1024], gz[1024];
    snprintf(fifo, sizeof fifo, "%s/line.fifo", dir);
    snprintf(gz, sizeof gz, "%s/line.jsonl.gz", dir);
    unlink(fifo);
    if (mkfifo(fifo, 0600) != 0) {
        hc_skip_n("bounds-2", 3, "mkfifo: %s", strerror(errno));
        return;
    }
    /* 1 GiB through a FIFO: refused at the 16 MiB line limit, long before the writer ends. */
    pid_t w = feed_fifo(fifo, (size_t)1 << 30);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    long before = max_rss_kb();
    int rc = hc_positions_load(fifo, &ps, &n, &err);
    long grew = max_rss_kb() - before;
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
    hc_check("bounds-2.1", rc == -1 && err.code == HC_ELIMIT && strstr(err.msg, "line.fifo") && strstr(err.msg, "line 1") &&
             strstr(err.msg, "limit of 16777216 bytes") && grew < 200 * 1024,
             "rc %d code %d (memory +%ld KiB): %s", rc, err.code, grew, err.msg);
    if (rc == 0)
        hc_positions_free(ps, n);
    /* A gzip'd 256 MiB line (a few hundred KB on disk). */
    if (write_gz_line(gz, (size_t)256 << 20) != 0) {
        hc_fail_n("bounds-2.2", 2, "cannot write %s", gz);
    } else {
        hc_err_clear(&err);
        rc = hc_positions_load(gz, &ps, &n, &err);
        hc_check("bounds-2.2", rc == -1 && err.code == HC_ELIMIT && strstr(err.msg, "line.jsonl.gz") &&
                 strstr(err.msg, "limit of"), "rc %d code %d: %s", rc, err.code, err.msg);
        if (rc == 0)
            hc_positions_free(ps, n);
        /* The outputs reader has its own (larger) limit. */
        hc_nnoutput *os = NULL;
        hc_err_clear(&err);
        rc = hc_nnoutputs_load(gz, &os, &n, &err);
        hc_check("bounds-2.3", rc == -1 && err.code == HC_ELIMIT && strstr(err.msg, "line.jsonl.gz") &&
                 strstr(err.msg, "limit of"), "rc %d code %d: %s", rc, err.code, err.msg);
        if (rc == 0)
            hc_nnoutputs_free(os, n);
    }
    unlink(fifo);
    unlink(gz);
}

int main(void)
{
    hc_plan(5 + 3); /* 1.x the model reader, 2.x long lines */
    const char *dir = hc_tmpdir("test_bounds");
    if (!dir)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    test_model();
    test_lines(dir);
    return hc_test_exit();
}
