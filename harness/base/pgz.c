/* The parallel gzip writer (pgz.h): blocks of raw deflate, each ended on a byte boundary by a
 * sync flush (the last by the final block), behind one gzip header, with one trailer whose CRC
 * is the blocks' CRCs combined. */
#include "harness/base/pgz.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness/base/crc32.h"
#include "harness/base/thread.h"

enum {
    PGZ_DICT = 32 << 10, /* deflate's window: what a block may refer back to */
    PGZ_MAX_THREADS = 4,
    /* Level 1: the outputs are numbers as text, which level 6 makes 9% smaller for 4.5 times
     * the CPU time. */
    PGZ_LEVEL = 1,
};

enum { JOB_FREE, JOB_QUEUED, JOB_RUNNING, JOB_DONE };

typedef struct pgz_job {
    unsigned char *in;
    size_t in_len;
    unsigned char *dict; /* [PGZ_DICT] */
    size_t dict_len;
    unsigned char *out;
    size_t out_len, out_cap;
    uLong crc;
    int last, state, failed;
} pgz_job;

struct hc_pgz {
    int fd;
    char *name;
    int want_threads, n_threads;
    pthread_t th[PGZ_MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    int stop;
    pgz_job *ring;
    int n_ring;
    long submitted, taken, written; /* block sequence numbers: ring slot = seq % n_ring */
    unsigned char *tail;            /* the last PGZ_DICT bytes submitted, the next block's dictionary */
    size_t tail_len;
    uLong crc;
    uint64_t total;
};

/* Deflates job j (raw, primed with its dictionary); 0, or -1 (out of memory or zlib refused). */
static int compress_job(pgz_job *j)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, PGZ_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    int rc = 0;
    if (j->dict_len > 0 && deflateSetDictionary(&zs, j->dict, (uInt)j->dict_len) != Z_OK)
        rc = -1;
    size_t need = deflateBound(&zs, (uLong)j->in_len) + 64;
    if (rc == 0 && j->out_cap < need) {
        unsigned char *o = realloc(j->out, need);
        if (!o)
            rc = -1;
        else
            j->out = o, j->out_cap = need;
    }
    zs.next_in = j->in;
    zs.avail_in = (uInt)j->in_len;
    j->out_len = 0;
    while (rc == 0) {
        zs.next_out = j->out + j->out_len;
        zs.avail_out = (uInt)(j->out_cap - j->out_len);
        int zr = deflate(&zs, j->last ? Z_FINISH : Z_SYNC_FLUSH);
        j->out_len = j->out_cap - zs.avail_out;
        if (zr == Z_STREAM_ERROR) {
            rc = -1;
            break;
        }
        /* done: the final block's end, or a flush that left room (so nothing is pending) */
        if (j->last ? zr == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out > 0))
            break;
        if (zs.avail_out == 0) {
            unsigned char *o = realloc(j->out, j->out_cap * 2);
            if (!o) {
                rc = -1;
                break;
            }
            j->out = o;
            j->out_cap *= 2;
        }
    }
    deflateEnd(&zs);
    j->crc = hc_crc32(0, j->in, j->in_len);
    return rc;
}

static void *worker(void *arg)
{
    hc_pgz *z = arg;
    pthread_mutex_lock(&z->mu);
    for (;;) {
        while (!z->stop && z->taken >= z->submitted)
            pthread_cond_wait(&z->work_cv, &z->mu);
        if (z->stop)
            break;
        pgz_job *j = &z->ring[z->taken % z->n_ring];
        z->taken++;
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&z->mu);
        int failed = compress_job(j) != 0;
        pthread_mutex_lock(&z->mu);
        j->failed = failed;
        j->state = JOB_DONE;
        pthread_cond_broadcast(&z->done_cv);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

static int write_all(hc_pgz *z, const unsigned char *p, size_t n, hc_err *err)
{
    while (n > 0) {
        ssize_t w = write(z->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return hc_err_set(err, HC_EIO, "%s: write failed: %s", z->name, w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void stop_threads(hc_pgz *z)
{
    pthread_mutex_lock(&z->mu);
    z->stop = 1;
    pthread_cond_broadcast(&z->work_cv);
    pthread_mutex_unlock(&z->mu);
    for (int t = 0; t < z->n_threads; t++)
        pthread_join(z->th[t], NULL);
    z->n_threads = 0;
}

static void pgz_free(hc_pgz *z)
{
    stop_threads(z);
    for (int i = 0; z->ring && i < z->n_ring; i++) {
        free(z->ring[i].in);
        free(z->ring[i].dict);
        free(z->ring[i].out);
    }
    free(z->ring);
    free(z->tail);
    free(z->name);
    pthread_cond_destroy(&z->work_cv);
    pthread_cond_destroy(&z->done_cv);
    pthread_mutex_destroy(&z->mu);
    free(z);
}

hc_pgz *hc_pgz_open(int fd, const char *name, int threads, hc_err *err)
{
    hc_pgz *z = hc_calloc(1, sizeof *z, err, "gzip writer");
    if (!z)
        return NULL;
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->work_cv, NULL);
    pthread_cond_init(&z->done_cv, NULL);
    z->fd = fd;
    z->name = strdup(name ? name : "(gzip)");
    if (threads <= 0)
        threads = hc_processors();
    z->want_threads = threads > PGZ_MAX_THREADS ? PGZ_MAX_THREADS : threads;
    if (z->want_threads == 1)
        z->want_threads = 0;
    /* a block being filled, one per thread at work and one finished waiting to be written */
    z->n_ring = z->want_threads + 2;
    z->ring = calloc((size_t)z->n_ring, sizeof *z->ring);
    z->tail = malloc(PGZ_DICT);
    int ok = z->name && z->ring && z->tail;
    for (int i = 0; ok && i < z->n_ring; i++)
        ok = (z->ring[i].in = malloc(HC_PGZ_BLOCK)) && (z->ring[i].dict = malloc(PGZ_DICT));
    z->crc = crc32(0L, Z_NULL, 0);
    /* the header: deflate, no name, no time (the bytes depend on the data only), XFL 4 (the
     * fastest level), OS 3 (Unix) */
    static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3};
    if (!ok) {
        hc_err_set(err, HC_ENOMEM, "%s: out of memory for the gzip writer", name ? name : "(gzip)");
        pgz_free(z);
        return NULL;
    }
    if (write_all(z, header, sizeof header, err)) {
        pgz_free(z);
        return NULL;
    }
    return z;
}

/* Writes the oldest block once it is compressed and frees its slot. */
static int write_oldest(hc_pgz *z, hc_err *err)
{
    pgz_job *j = &z->ring[z->written % z->n_ring];
    pthread_mutex_lock(&z->mu);
    while (j->state != JOB_DONE)
        pthread_cond_wait(&z->done_cv, &z->mu);
    pthread_mutex_unlock(&z->mu);
    if (j->failed)
        return hc_err_set(err, HC_ENOMEM, "%s: compressing a block failed (out of memory)", z->name);
    if (write_all(z, j->out, j->out_len, err))
        return -1;
    z->crc = crc32_combine(z->crc, j->crc, (z_off_t)j->in_len);
    z->total += j->in_len;
    j->state = JOB_FREE;
    j->in_len = 0;
    z->written++;
    return 0;
}

/* Hands the block being filled to the compressing threads (or compresses it here). */
static int submit(hc_pgz *z, int last, hc_err *err)
{
    pgz_job *j = &z->ring[z->submitted % z->n_ring];
    memcpy(j->dict, z->tail, z->tail_len);
    j->dict_len = z->tail_len;
    j->last = last;
    /* the next block's dictionary: the last 32 KiB of the data so far */
    if (j->in_len >= PGZ_DICT) {
        memcpy(z->tail, j->in + j->in_len - PGZ_DICT, PGZ_DICT);
        z->tail_len = PGZ_DICT;
    } else {
        size_t keep = z->tail_len + j->in_len > PGZ_DICT ? PGZ_DICT - j->in_len : z->tail_len;
        memmove(z->tail, z->tail + z->tail_len - keep, keep);
        memcpy(z->tail + keep, j->in, j->in_len);
        z->tail_len = keep + j->in_len;
    }
    if (!last && z->n_threads < z->want_threads) {
        for (int t = z->n_threads; t < z->want_threads; t++) {
            if (hc_thread_start(&z->th[t], worker, z) != 0)
                break;
            z->n_threads++;
        }
    }
    if (z->n_threads == 0) {
        j->failed = compress_job(j) != 0;
        j->state = JOB_DONE;
        z->submitted++;
        z->taken++;
    } else {
        pthread_mutex_lock(&z->mu);
        j->state = JOB_QUEUED;
        z->submitted++;
        pthread_cond_signal(&z->work_cv);
        pthread_mutex_unlock(&z->mu);
    }
    /* the next slot free before anything is copied into it */
    while (z->submitted - z->written >= z->n_ring)
        if (write_oldest(z, err))
            return -1;
    return 0;
}

int hc_pgz_write(hc_pgz *z, const void *buf, size_t n, hc_err *err)
{
    const unsigned char *p = buf;
    while (n > 0) {
        pgz_job *j = &z->ring[z->submitted % z->n_ring];
        size_t take = HC_PGZ_BLOCK - j->in_len;
        if (take > n)
            take = n;
        memcpy(j->in + j->in_len, p, take);
        j->in_len += take;
        p += take;
        n -= take;
        if (j->in_len == HC_PGZ_BLOCK && submit(z, 0, err))
            return -1;
    }
    return 0;
}

int hc_pgz_finish(hc_pgz *z, hc_err *err)
{
    int rc = submit(z, 1, err);
    while (rc == 0 && z->written < z->submitted)
        rc = write_oldest(z, err);
    if (rc == 0) {
        unsigned char trailer[8];
        put_le32(trailer, (uint32_t)z->crc);
        put_le32(trailer + 4, (uint32_t)(z->total & 0xffffffffu));
        rc = write_all(z, trailer, sizeof trailer, err);
    }
    pgz_free(z);
    return rc;
}

void hc_pgz_abort(hc_pgz *z)
{
    if (z)
        pgz_free(z);
}
