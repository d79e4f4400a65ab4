/* Byte streams over plain or gzip'd files (stream.h): gzip'd ones decoded by inflate.h. */
#include "harness/base/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/base/inflate.h"
#include "harness/base/pgz.h"
#include "harness/base/thread.h"

enum { HC_STREAM_BUF = 1 << 16 };

/* A large file is read ahead on a thread of its own: decompressing it (inflate and CRC) then
 * overlaps what the reader does with the bytes (a large net's weights: about half of its load).
 * RA_SLOTS buffers of RA_SIZE bytes, filled in order. */
enum { RA_SLOTS = 4, RA_SIZE = 256 << 10, RA_MIN_FILE = 1 << 20 };

/* A large gzip'd file is decoded on up to this many threads (inflate.h's parallel decoder): the
 * one thread that reads the bytes (a net's parse, ~0.2 s for 111 MB) is then the bound, and
 * more threads would only hold more decoded chunks in memory ahead of it. */
enum { PAR_THREADS_MAX = 8 };

typedef struct readahead {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hc_inflate *gz;
    unsigned char *slot[RA_SLOTS];
    size_t len[RA_SLOTS];
    int head, count; /* filled slots head .. head+count-1, the one the reader holds included */
    int holding;     /* the reader is reading slot head */
    int started;     /* a first read has ended (gzip is known) */
    int gzip;        /* the file is gzip'd (not passed through as is) */
    int done, stop;
    hc_err fail;     /* what ended it, when not the end of the data (code HC_OK then) */
} readahead;

struct hc_istream {
    char *name;
    readahead *ra;      /* or NULL: read on the calling thread */
    int fd;             /* -1 for memory streams */
    int own_fd;         /* closed with the stream (not standard input) */
    hc_inflate *gz;     /* NULL for memory streams */
    const unsigned char *mem;
    size_t mem_len;
    unsigned char *buf; /* read buffer for file streams */
    size_t buf_pos, buf_len;
    uint64_t offset;    /* bytes handed to the caller */
    long lineno;
    char *line;
    size_t line_cap;
    int eof;
};

static hc_istream *istream_new(const char *name, hc_err *err)
{
    hc_istream *s = hc_calloc(1, sizeof *s, err, "input stream");
    if (!s)
        return NULL;
    s->fd = -1;
    s->name = strdup(name ? name : "(memory)");
    if (!s->name) {
        free(s);
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return NULL;
    }
    return s;
}

static void *ra_main(void *arg)
{
    readahead *ra = arg;
    pthread_mutex_lock(&ra->mu);
    for (;;) {
        while (ra->count == RA_SLOTS && !ra->stop)
            pthread_cond_wait(&ra->cv, &ra->mu);
        if (ra->stop)
            break;
        int at = (ra->head + ra->count) % RA_SLOTS; /* never the slot being read */
        pthread_mutex_unlock(&ra->mu);
        hc_err fail = {0};
        long n = hc_inflate_read(ra->gz, ra->slot[at], RA_SIZE, &fail);
        int gzip = hc_inflate_is_gzip(ra->gz) == 1;
        pthread_mutex_lock(&ra->mu);
        ra->gzip = gzip;
        ra->started = 1;
        if (n > 0) {
            ra->len[at] = (size_t)n;
            ra->count++;
        } else {
            ra->done = 1;
            if (n < 0)
                ra->fail = fail;
        }
        pthread_cond_broadcast(&ra->cv);
        if (n <= 0)
            break;
    }
    pthread_mutex_unlock(&ra->mu);
    return NULL;
}

static void ra_free(readahead *ra)
{
    if (!ra)
        return;
    pthread_mutex_lock(&ra->mu);
    ra->stop = 1;
    pthread_cond_broadcast(&ra->cv);
    pthread_mutex_unlock(&ra->mu);
    pthread_join(ra->th, NULL);
    for (int i = 0; i < RA_SLOTS; i++)
        free(ra->slot[i]);
    pthread_cond_destroy(&ra->cv);
    pthread_mutex_destroy(&ra->mu);
    free(ra);
}

/* Starts reading gz ahead; NULL (the caller reads on its own thread) when it cannot. */
static readahead *ra_start(hc_inflate *gz)
{
    readahead *ra = calloc(1, sizeof *ra);
    if (!ra)
        return NULL;
    ra->gz = gz;
    for (int i = 0; i < RA_SLOTS; i++)
        if (!(ra->slot[i] = malloc(RA_SIZE))) {
            for (int k = 0; k < i; k++)
                free(ra->slot[k]);
            free(ra);
            return NULL;
        }
    pthread_mutex_init(&ra->mu, NULL);
    pthread_cond_init(&ra->cv, NULL);
    if (hc_thread_start(&ra->th, ra_main, ra) != 0) {
        for (int i = 0; i < RA_SLOTS; i++)
            free(ra->slot[i]);
        pthread_cond_destroy(&ra->cv);
        pthread_mutex_destroy(&ra->mu);
        free(ra);
        return NULL;
    }
    return ra;
}

hc_istream *hc_istream_open(const char *path, hc_err *err)
{
    hc_istream *s = istream_new(path, err);
    if (!s)
        return NULL;
    int is_stdin = strcmp(path, "-") == 0;
    s->fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
        hc_err_set(err, HC_EIO, "%s: cannot open: %s", path, strerror(errno));
        hc_istream_close(s);
        return NULL;
    }
    s->own_fd = !is_stdin;
    s->gz = hc_inflate_open(s->fd, path, 0, err);
    if (!s->gz) {
        hc_istream_close(s);
        return NULL;
    }
    struct stat st;
    if (!is_stdin && fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= RA_MIN_FILE) {
        int threads = hc_processors();
        hc_inflate_parallel(s->gz, threads < PAR_THREADS_MAX ? threads : PAR_THREADS_MAX, 0);
        if ((s->ra = ra_start(s->gz)) != NULL)
            return s; /* s->buf points into the slot being read */
    }
    s->buf = malloc(HC_STREAM_BUF);
    if (!s->buf) {
        hc_err_set(err, HC_ENOMEM, "%s: out of memory for read buffer", path);
        hc_istream_close(s);
        return NULL;
    }
    return s;
}

hc_istream *hc_istream_mem(const void *data, size_t len, const char *name, hc_err *err)
{
    hc_istream *s = istream_new(name, err);
    if (!s)
        return NULL;
    s->mem = data;
    s->mem_len = len;
    return s;
}

void hc_istream_close(hc_istream *s)
{
    if (!s)
        return;
    if (s->ra)
        ra_free(s->ra); /* its thread stopped before the file closes */
    else
        free(s->buf);
    hc_inflate_close(s->gz);
    if (s->own_fd)
        close(s->fd);
    free(s->line);
    free(s->name);
    free(s);
}

/* Makes buffered bytes available; returns the count available, 0 at EOF, -1 on error. */
static long fill(hc_istream *s, hc_err *err)
{
    if (s->mem) {
        return (long)(s->mem_len - s->offset);
    }
    if (s->buf_pos < s->buf_len)
        return (long)(s->buf_len - s->buf_pos);
    if (s->eof || !s->gz)
        return 0;
    if (s->ra) {
        readahead *ra = s->ra;
        pthread_mutex_lock(&ra->mu);
        if (ra->holding) { /* the slot just read is the reader thread's again */
            ra->holding = 0;
            ra->head = (ra->head + 1) % RA_SLOTS;
            ra->count--;
            pthread_cond_broadcast(&ra->cv);
        }
        while (ra->count == 0 && !ra->done)
            pthread_cond_wait(&ra->cv, &ra->mu);
        long got = 0;
        hc_err fail = {0};
        if (ra->count > 0) {
            ra->holding = 1;
            s->buf = ra->slot[ra->head];
            s->buf_pos = 0;
            s->buf_len = ra->len[ra->head];
            got = (long)s->buf_len;
        } else {
            fail = ra->fail;
        }
        pthread_mutex_unlock(&ra->mu);
        if (got > 0)
            return got;
        if (fail.code != HC_OK) { /* the message names the file and the offset (s->offset: all
                                    * bytes before the fault have been read) */
            if (err)
                *err = fail;
            return -1;
        }
        s->eof = 1;
        return 0;
    }
    long n = hc_inflate_read(s->gz, s->buf, HC_STREAM_BUF, err);
    if (n < 0)
        return -1;
    if (n == 0) {
        s->eof = 1;
        return 0;
    }
    s->buf_pos = 0;
    s->buf_len = (size_t)n;
    return n;
}

static const unsigned char *cursor(hc_istream *s)
{
    return s->mem ? s->mem + s->offset : s->buf + s->buf_pos;
}

static void advance(hc_istream *s, size_t n)
{
    if (!s->mem)
        s->buf_pos += n;
    s->offset += n;
}

long hc_istream_read_some(hc_istream *s, void *buf, size_t n, hc_err *err)
{
    size_t got = 0;
    while (got < n) {
        long avail = fill(s, err);
        if (avail < 0)
            return -1;
        if (avail == 0)
            break;
        size_t take = (size_t)avail < n - got ? (size_t)avail : n - got;
        memcpy((char *)buf + got, cursor(s), take);
        advance(s, take);
        got += take;
    }
    return (long)got;
}

int hc_istream_read(hc_istream *s, void *buf, size_t n, hc_err *err)
{
    uint64_t start = s->offset;
    long got = hc_istream_read_some(s, buf, n, err);
    if (got < 0)
        return -1;
    if ((size_t)got < n)
        return hc_err_set(err, HC_EFORMAT, "%s: %s %llu: unexpected end of file (%zu bytes wanted, %ld there)",
                          s->name, hc_istream_offset_word(s), (unsigned long long)start, n, got);
    return 0;
}

long hc_istream_getline(hc_istream *s, char **line, size_t max_len, hc_err *err)
{
    size_t len = 0;
    int any = 0;
    for (;;) {
        long avail = fill(s, err);
        if (avail < 0)
            return -1;
        if (avail == 0)
            break;
        any = 1;
        const unsigned char *p = cursor(s);
        const unsigned char *nl = memchr(p, '\n', (size_t)avail);
        size_t take = nl ? (size_t)(nl - p) : (size_t)avail;
        if (len + take > max_len)
            return hc_err_set(err, HC_ELIMIT, "%s: line %ld: longer than the limit of %zu bytes", s->name,
                              s->lineno + 1, max_len);
        if (len + take + 1 > s->line_cap) {
            size_t cap = s->line_cap ? s->line_cap : 256;
            while (cap < len + take + 1)
                cap *= 2;
            char *nb = realloc(s->line, cap);
            if (!nb)
                return hc_err_set(err, HC_ENOMEM, "%s: line %ld: out of memory", s->name, s->lineno + 1);
            s->line = nb;
            s->line_cap = cap;
        }
        memcpy(s->line + len, p, take);
        len += take;
        advance(s, take + (nl ? 1 : 0));
        if (nl)
            goto done;
    }
    if (!any && len == 0)
        return -1; /* clean EOF */
done:
    if (!s->line) {
        s->line = malloc(1);
        if (!s->line)
            return hc_err_set(err, HC_ENOMEM, "out of memory");
        s->line_cap = 1;
    }
    if (len > 0 && s->line[len - 1] == '\r')
        len--;
    s->line[len] = '\0';
    s->lineno++;
    *line = s->line;
    return (long)len;
}

uint64_t hc_istream_offset(const hc_istream *s) { return s->offset; }

const char *hc_istream_offset_word(const hc_istream *s)
{
    /* gzip or not is known once reading has begun (on the reader thread, when there is one:
     * asked of it once its first read ended). */
    if (s->ra) {
        readahead *ra = s->ra;
        pthread_mutex_lock(&ra->mu);
        while (!ra->started)
            pthread_cond_wait(&ra->cv, &ra->mu);
        int gzip = ra->gzip;
        pthread_mutex_unlock(&ra->mu);
        return gzip ? "uncompressed offset" : "offset";
    }
    return s->gz && hc_inflate_is_gzip(s->gz) == 1 ? "uncompressed offset" : "offset";
}
long hc_istream_lineno(const hc_istream *s) { return s->lineno; }
const char *hc_istream_name(const hc_istream *s) { return s->name; }

struct hc_ostream {
    char *path;
    char *tmp;
    int fd;
    hc_pgz *gz; /* compressed on several threads: a large outputs file costs its writer little */
    FILE *fp;
    int is_stdout;
};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

hc_ostream *hc_ostream_open(const char *path, hc_err *err)
{
    hc_ostream *s = hc_calloc(1, sizeof *s, err, "output stream");
    if (!s)
        return NULL;
    s->fd = -1;
    s->path = strdup(path);
    if (!s->path)
        goto oom;
    if (strcmp(path, "-") == 0) {
        s->is_stdout = 1;
        s->fp = stdout;
        return s;
    }
    size_t n = strlen(path) + 16;
    s->tmp = malloc(n);
    if (!s->tmp)
        goto oom;
    snprintf(s->tmp, n, "%s.tmp.XXXXXX", path);
    s->fd = mkstemp(s->tmp);
    if (s->fd >= 0) /* no program halfcheck starts inherits it */
        fcntl(s->fd, F_SETFD, fcntl(s->fd, F_GETFD) | FD_CLOEXEC);
    if (s->fd < 0) {
        hc_err_set(err, HC_EIO, "%s: cannot create temporary file %s: %s", path, s->tmp, strerror(errno));
        free(s->tmp);
        s->tmp = NULL;
        hc_ostream_abort(s);
        return NULL;
    }
    fchmod(s->fd, 0644);
    if (ends_with(path, ".gz")) {
        s->gz = hc_pgz_open(s->fd, path, 0, err);
        if (!s->gz) {
            hc_ostream_abort(s);
            return NULL;
        }
    } else {
        s->fp = fdopen(dup(s->fd), "wb");
        if (!s->fp) {
            hc_err_set(err, HC_EIO, "%s: cannot open: %s", path, strerror(errno));
            hc_ostream_abort(s);
            return NULL;
        }
    }
    return s;
oom:
    hc_err_set(err, HC_ENOMEM, "out of memory");
    hc_ostream_abort(s);
    return NULL;
}

int hc_ostream_write(hc_ostream *s, const void *buf, size_t n, hc_err *err)
{
    if (n == 0)
        return 0;
    if (s->gz)
        return hc_pgz_write(s->gz, buf, n, err);
    if (fwrite(buf, 1, n, s->fp) != n)
        return hc_err_set(err, HC_EIO, "%s: write failed: %s", s->path, strerror(errno));
    return 0;
}

int hc_ostream_write_line(hc_ostream *s, const char *text, hc_err *err)
{
    if (hc_ostream_write(s, text, strlen(text), err))
        return -1;
    return hc_ostream_write(s, "\n", 1, err);
}

int hc_ostream_printf(hc_ostream *s, hc_err *err, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return hc_err_set(err, HC_EINTERNAL, "%s: formatting failed", s->path);
    if ((size_t)n < sizeof small)
        return hc_ostream_write(s, small, (size_t)n, err);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = hc_ostream_write(s, big, (size_t)n, err);
    free(big);
    return rc;
}

int hc_ostream_commit(hc_ostream *s, hc_err *err)
{
    int rc = 0;
    if (s->is_stdout) {
        if (fflush(stdout) != 0)
            rc = hc_err_set(err, HC_EIO, "standard output: write failed: %s", strerror(errno));
        free(s->path);
        free(s);
        return rc;
    }
    if (s->gz) {
        rc = hc_pgz_finish(s->gz, err);
        s->gz = NULL;
    }
    if (s->fp) {
        if (fclose(s->fp) != 0 && rc == 0)
            rc = hc_err_set(err, HC_EIO, "%s: write failed: %s", s->path, strerror(errno));
        s->fp = NULL;
    }
    if (rc == 0 && fsync(s->fd) != 0 && errno != EINVAL)
        rc = hc_err_set(err, HC_EIO, "%s: fsync failed: %s", s->path, strerror(errno));
    if (rc == 0 && rename(s->tmp, s->path) != 0)
        rc = hc_err_set(err, HC_EIO, "%s: cannot rename %s into place: %s", s->path, s->tmp, strerror(errno));
    if (rc == 0) {
        free(s->tmp);
        s->tmp = NULL;
    }
    hc_ostream_abort(s);
    return rc;
}

void hc_ostream_abort(hc_ostream *s)
{
    if (!s)
        return;
    hc_pgz_abort(s->gz);
    if (s->fp && !s->is_stdout)
        fclose(s->fp);
    if (s->fd >= 0)
        close(s->fd);
    if (s->tmp) {
        unlink(s->tmp);
        free(s->tmp);
    }
    free(s->path);
    free(s);
}

char *hc_read_file(const char *path, size_t max_len, size_t *len_out, hc_err *err)
{
    hc_istream *s = hc_istream_open(path, err);
    if (!s)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        hc_istream_close(s);
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > max_len + 1) {
                free(buf);
                hc_istream_close(s);
                hc_err_set(err, HC_ELIMIT, "%s: larger than the limit of %zu bytes", path, max_len);
                return NULL;
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                hc_istream_close(s);
                hc_err_set(err, HC_ENOMEM, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        long got = hc_istream_read_some(s, buf + len, cap - 1 - len, err);
        if (got < 0) {
            free(buf);
            hc_istream_close(s);
            return NULL;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len > max_len) {
            free(buf);
            hc_istream_close(s);
            hc_err_set(err, HC_ELIMIT, "%s: larger than the limit of %zu bytes", path, max_len);
            return NULL;
        }
    }
    hc_istream_close(s);
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}
