/* The gzip reader (harness/base/inflate.h, behind hc_istream): zlib-compressed data at every
 * level and strategy decodes to the same bytes, through hc_istream in varied pieces and through
 * tiny input buffers that stop the decoder anywhere; several members and what follows the last
 * one read as zlib's gzread reads them; header flags; every truncation and every bit flip of a
 * small stream is an error or (a flip zlib also accepts) the same bytes; named faults; and random
 * mutations that must never crash and must agree with gzread; the parallel decoder gives the same
 * bytes and the same errors. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/base/inflate.h"
#include "harness/base/stream.h"

static const char *dir;
static unsigned rng_state = 12345;

static unsigned rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

enum { K_RANDOM, K_TEXT, K_RUNS, K_MATCHES, K_FLOATS, K_KINDS };

/* n bytes of one kind: random, text-like, runs and short periods (distances 1-7), long
 * repeats at distances up to 32 KiB, or float32 weights (mostly literals, as a net's are). */
static unsigned char *gen(int kind, size_t n)
{
    unsigned char *d = malloc(n + 64);
    static const char *words[] = {"the ", "policy ", "value ", "0.125 ", "-3.5e-2 ", "\n", "board ", "komi 7.5 "};
    size_t i = 0;
    while (i < n) {
        switch (kind) {
        case K_RANDOM:
            d[i++] = (unsigned char)rnd();
            break;
        case K_TEXT: {
            const char *w = words[rnd() % 8];
            while (*w && i < n)
                d[i++] = (unsigned char)*w++;
            break;
        }
        case K_RUNS: {
            size_t period = 1 + rnd() % 7, len = 1 + rnd() % 300;
            unsigned char pat[8];
            for (size_t k = 0; k < period; k++)
                pat[k] = (unsigned char)rnd();
            for (size_t k = 0; k < len && i < n; k++)
                d[i++] = pat[k % period];
            break;
        }
        case K_MATCHES: {
            size_t back = 1 + rnd() % 32768, len = 3 + rnd() % 600;
            if (i < back || rnd() % 8 == 0) {
                d[i++] = (unsigned char)rnd();
                break;
            }
            for (size_t k = 0; k < len && i < n; k++, i++)
                d[i] = d[i - back];
            break;
        }
        default: {
            float f = (float)((int)(rnd() % 2001) - 1000) / 4096.0f * (float)(1 + rnd() % 3);
            unsigned char b[4];
            memcpy(b, &f, 4);
            for (int k = 0; k < 4 && i < n; k++)
                d[i++] = b[k];
        }
        }
    }
    return d;
}

/* A gzip member of d by zlib's deflate (level, strategy, header fields), appended to *out. */
static void gz_append(unsigned char **out, size_t *len, const unsigned char *d, size_t n, int level, int strategy,
                      gz_header *head)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, strategy);
    if (head)
        deflateSetHeader(&zs, head);
    size_t cap = deflateBound(&zs, (uLong)n) + 1024;
    *out = realloc(*out, *len + cap);
    zs.next_in = (unsigned char *)d;
    zs.avail_in = (uInt)n;
    zs.next_out = *out + *len;
    zs.avail_out = (uInt)cap;
    deflate(&zs, Z_FINISH);
    *len += cap - zs.avail_out;
    deflateEnd(&zs);
}

static unsigned char *gz(const unsigned char *d, size_t n, int level, int strategy, size_t *len)
{
    unsigned char *out = NULL;
    *len = 0;
    gz_append(&out, len, d, n, level, strategy, NULL);
    return out;
}

static const char *put(const char *name, const void *d, size_t n)
{
    const char *p = hc_path(dir, name);
    FILE *f = fopen(p, "wb");
    if (f) {
        if (n)
            fwrite(d, 1, n, f);
        fclose(f);
    }
    return p;
}

/* A decoded file: its bytes, whether reading failed, and the error. */
typedef struct {
    unsigned char *d;
    size_t n;
    int failed;
    hc_err err;
} got_t;

static void got_free(got_t *g) { free(g->d); }

/* path through hc_istream, read in pieces of the sizes in chunks (cycled). */
static got_t via_stream(const char *path, const size_t *chunks, int nchunks)
{
    got_t g = {0};
    size_t cap = 1 << 16;
    g.d = malloc(cap);
    hc_istream *s = hc_istream_open(path, &g.err);
    if (!s) {
        g.failed = 1;
        return g;
    }
    for (int k = 0;; k++) {
        size_t want = chunks[k % nchunks];
        while (g.n + want > cap)
            g.d = realloc(g.d, cap *= 2);
        long r = hc_istream_read_some(s, g.d + g.n, want, &g.err);
        if (r < 0)
            g.failed = 1;
        if (r <= 0)
            break;
        g.n += (size_t)r;
    }
    hc_istream_close(s);
    return g;
}

/* How the parallel decoder went on the last via_par. */
static int par_used, par_redone;

/* path through hc_inflate with an input buffer of in_size bytes, chunk bytes a read; threads
 * (and pchunk compressed bytes a chunk) for the parallel decoder, 0: sequential. */
static got_t via_par(const char *path, size_t in_size, size_t chunk, int threads, size_t pchunk)
{
    got_t g = {0};
    size_t cap = 1 << 16;
    g.d = malloc(cap);
    int fd = open(path, O_RDONLY);
    hc_inflate *z = fd >= 0 ? hc_inflate_open(fd, path, in_size, &g.err) : NULL;
    if (!z) {
        g.failed = 1;
        if (fd >= 0)
            close(fd);
        return g;
    }
    if (threads)
        hc_inflate_parallel(z, threads, pchunk);
    for (;;) {
        while (g.n + chunk > cap)
            g.d = realloc(g.d, cap *= 2);
        long r = hc_inflate_read(z, g.d + g.n, chunk, &g.err);
        if (r < 0)
            g.failed = 1;
        if (r <= 0)
            break;
        g.n += (size_t)r;
    }
    hc_inflate_par_counts(z, &par_used, &par_redone);
    hc_inflate_close(z);
    close(fd);
    return g;
}

static got_t via_inflate(const char *path, size_t in_size, size_t chunk)
{
    return via_par(path, in_size, chunk, 0, 0);
}

/* path through zlib's gzread: the behaviour to match. */
static got_t via_zlib(const char *path)
{
    got_t g = {0};
    size_t cap = 1 << 16;
    g.d = malloc(cap);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        g.failed = 1;
        return g;
    }
    for (;;) {
        if (g.n + 65536 > cap)
            g.d = realloc(g.d, cap *= 2);
        int r = gzread(f, g.d + g.n, 65536);
        if (r < 0)
            g.failed = 1;
        if (r <= 0) {
            int zerr;
            gzerror(f, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                g.failed = 1;
            break;
        }
        g.n += (size_t)r;
    }
    gzclose(f);
    return g;
}

static int same(const got_t *g, const unsigned char *d, size_t n)
{
    return !g->failed && g->n == n && (n == 0 || memcmp(g->d, d, n) == 0);
}

/* Both succeed with the same bytes, or both fail (ours with a message naming the file). */
static int agree(const got_t *ours, const got_t *ref, const char *name)
{
    if (ref->failed)
        return ours->failed && strstr(ours->err.msg, name) != NULL;
    return same(ours, ref->d, ref->n);
}

/* 1. Every kind of data, size, level and strategy: the same bytes through hc_istream. */
static void roundtrips(void)
{
    static const size_t sizes[] = {0, 1, 2, 100, 4095, 32767, 32768, 32769, 65543, 262143, 262144, 262145};
    static const int levels[] = {0, 1, 6, 9};
    static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
    static const char *sname[] = {"default", "filtered", "huffman-only", "rle", "fixed"};
    static const size_t chunks_a[] = {4096, 7, 65536 + 3, 100000};
    static const size_t chunks_b[] = {1};
    for (int si = 0; si < 5; si++) {
        int bad = 0, tried = 0;
        char first[400] = "";
        for (int kind = 0; kind < K_KINDS; kind++)
            for (size_t zi = 0; zi < sizeof sizes / sizeof sizes[0]; zi++) {
                unsigned char *d = gen(kind, sizes[zi]);
                for (int li = 0; li < 4; li++) {
                    size_t glen;
                    unsigned char *g = gz(d, sizes[zi], levels[li], strategies[si], &glen);
                    const char *p = put("rt.gz", g, glen);
                    int one_byte = sizes[zi] <= 32769 && li == 2;
                    got_t r = one_byte ? via_stream(p, chunks_b, 1) : via_stream(p, chunks_a, 4);
                    tried++;
                    if (!same(&r, d, sizes[zi]) && !bad++)
                        snprintf(first, sizeof first, "kind %d size %zu level %d: got %zu bytes, failed %d: %s", kind,
                                 sizes[zi], levels[li], r.n, r.failed, r.err.msg);
                    got_free(&r);
                    free(g);
                }
                free(d);
            }
        char name[64];
        snprintf(name, sizeof name, "inflate-1.%d", si + 1);
        hc_check(name, bad == 0 && tried == K_KINDS * 12 * 4, "%s: %d of %d streams decoded wrong; first: %s",
                 sname[si], bad, tried, first);
    }
}

/* 2. Input buffers of a few bytes (the decoder stops for input inside headers, symbols, stored
 * blocks and trailers) and small output pieces (it stops when the caller's buffer is full). */
static void tiny_buffers(void)
{
    static const size_t in_sizes[] = {1, 2, 3, 13, 64, 200, 4096};
    static const size_t outs[] = {1, 5, 333, 70000};
    unsigned char *src = NULL;
    size_t slen = 0, total = 0;
    unsigned char *all = malloc(200000);
    /* members of every block type and a header with every optional field */
    static const int kinds[] = {K_TEXT, K_MATCHES, K_RANDOM, K_RUNS};
    static const int lv[] = {6, 1, 0, 9};
    static const int st[] = {Z_DEFAULT_STRATEGY, Z_FIXED, Z_DEFAULT_STRATEGY, Z_RLE};
    for (int m = 0; m < 4; m++) {
        size_t n = 20000 + 3000 * (size_t)m;
        unsigned char *d = gen(kinds[m], n);
        gz_header h;
        memset(&h, 0, sizeof h);
        unsigned char extra[] = "AB\x04\x00xyzw";
        h.text = 1;
        h.extra = extra;
        h.extra_len = 8;
        h.name = (Bytef *)"member.bin";
        h.comment = (Bytef *)"a comment";
        h.hcrc = 1;
        gz_append(&src, &slen, d, n, lv[m], st[m], m == 1 ? &h : NULL);
        memcpy(all + total, d, n);
        total += n;
        free(d);
    }
    const char *p = put("tiny.gz", src, slen);
    int bad = 0, tried = 0;
    char first[400] = "";
    for (size_t i = 0; i < sizeof in_sizes / sizeof in_sizes[0]; i++)
        for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++) {
            if (in_sizes[i] < 13 && outs[o] < 5)
                continue; /* a 1-byte input buffer and 1-byte reads: covered by the others, slow */
            got_t r = via_inflate(p, in_sizes[i], outs[o]);
            tried++;
            if (!same(&r, all, total) && !bad++)
                snprintf(first, sizeof first, "in %zu out %zu: %zu bytes, failed %d: %s", in_sizes[i], outs[o], r.n,
                         r.failed, r.err.msg);
            got_free(&r);
        }
    hc_check("inflate-2.1", bad == 0 && tried > 20, "%d of %d decodes wrong; first: %s", bad, tried, first);
    got_t z = via_zlib(p);
    hc_check("inflate-2.2", same(&z, all, total), "zlib reads the test file differently (%zu bytes)", z.n);
    got_free(&z);
    free(src);
    free(all);
}

/* 3. Several megabytes: read ahead on a thread (a file over 1 MiB) and on the calling thread. */
static void large(void)
{
    size_t n = 6 << 20;
    static const size_t chunks[] = {65536, 1000, 300000};
    for (int k = 0; k < 2; k++) {
        unsigned char *d = gen(k ? K_TEXT : K_FLOATS, n);
        size_t glen;
        unsigned char *g = gz(d, n, k ? 9 : 6, Z_DEFAULT_STRATEGY, &glen);
        const char *p = put(k ? "large-text.gz" : "large-floats.gz", g, glen);
        got_t r = via_stream(p, chunks, 3);
        hc_check(k ? "inflate-3.2" : "inflate-3.1", same(&r, d, n) && (k || glen >= (1 << 20)),
                 "%s: %zu of %zu bytes (file %zu), failed %d: %s", p, r.n, n, glen, r.failed, r.err.msg);
        got_free(&r);
        free(g);
        free(d);
    }
}

/* 4. Members concatenated, and what may follow the last one: as gzread reads them. */
static void members(void)
{
    unsigned char *a = gen(K_TEXT, 5000), *b = gen(K_FLOATS, 70000);
    static const struct {
        const char *what, *tail;
        size_t tail_len;
    } cases[] = {
        {"three members, one empty", "", 0},
        {"trailing zero bytes", "\0\0\0\0\0\0\0\0", 8},
        {"trailing garbage", "garbage after the data", 22},
        {"one trailing 0x1f", "\x1f", 1},
        {"a trailing magic alone", "\x1f\x8b", 2},
        {"a trailing header cut short", "\x1f\x8b\x08\x00\x00\x00", 6},
        {"a trailing magic with a bad method", "\x1f\x8b\x07\x00\x00\x00\x00\x00\x00\x03\x01\x00", 12},
    };
    int bad = 0;
    char first[600] = "";
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char *s = NULL;
        size_t len = 0;
        gz_append(&s, &len, a, 5000, 6, Z_DEFAULT_STRATEGY, NULL);
        gz_append(&s, &len, a, 0, 6, Z_DEFAULT_STRATEGY, NULL);
        gz_append(&s, &len, b, 70000, 1, Z_HUFFMAN_ONLY, NULL);
        s = realloc(s, len + cases[c].tail_len);
        memcpy(s + len, cases[c].tail, cases[c].tail_len);
        len += cases[c].tail_len;
        const char *p = put("members.gz", s, len);
        static const size_t chunks[] = {999};
        got_t ours = via_stream(p, chunks, 1), ref = via_zlib(p);
        int want_ok = c < 4;
        if ((!agree(&ours, &ref, "members.gz") || ref.failed == want_ok || (want_ok && ours.n != 75000)) && !bad++)
            snprintf(first, sizeof first, "%s: ours %zu bytes failed %d (%s), zlib %zu bytes failed %d", cases[c].what,
                     ours.n, ours.failed, ours.err.msg, ref.n, ref.failed);
        got_free(&ours);
        got_free(&ref);
        free(s);
    }
    hc_check("inflate-4.1", bad == 0, "%s", first);
    free(a);
    free(b);
}

/* 5. Header flags: every optional field, a header CRC (right and wrong), reserved flags. */
static void headers(void)
{
    unsigned char *d = gen(K_TEXT, 3000);
    gz_header h;
    memset(&h, 0, sizeof h);
    unsigned char extra[300];
    memset(extra, 'x', sizeof extra);
    h.text = 1;
    h.extra = extra;
    h.extra_len = sizeof extra;
    h.name = (Bytef *)"a-name.bin";
    h.comment = (Bytef *)"a comment";
    h.hcrc = 1;
    unsigned char *s = NULL;
    size_t len = 0;
    gz_append(&s, &len, d, 3000, 6, Z_DEFAULT_STRATEGY, &h);
    static const size_t chunks[] = {4096};
    const char *p = put("head.gz", s, len);
    got_t r = via_stream(p, chunks, 1);
    hc_check("inflate-5.1", same(&r, d, 3000), "every header field: %zu bytes, %s", r.n, r.err.msg);
    got_free(&r);
    s[20] ^= 1; /* inside FEXTRA: only the header CRC sees it */
    p = put("head.gz", s, len);
    r = via_stream(p, chunks, 1);
    hc_check("inflate-5.2", r.failed && strstr(r.err.msg, "header CRC mismatch") && strstr(r.err.msg, "head.gz"),
             "a changed extra field: %s", r.err.msg);
    got_free(&r);
    s[20] ^= 1;
    s[3] |= 0x20; /* a reserved flag */
    p = put("head.gz", s, len);
    r = via_stream(p, chunks, 1);
    got_t z = via_zlib(p);
    hc_check("inflate-5.3", r.failed && z.failed && strstr(r.err.msg, "flags"), "a reserved flag: %s", r.err.msg);
    got_free(&r);
    got_free(&z);
    free(s);
    free(d);
}

/* 6. Plain files are read as they are: text, empty, one 0x1f byte, standard input. */
static void plain(void)
{
    static const size_t chunks[] = {3, 4096};
    const char *text = "not gzip\n\x1f\x8b inside is fine\n";
    const char *p = put("plain.txt", text, strlen(text));
    got_t r = via_stream(p, chunks, 2);
    hc_istream *s = hc_istream_open(p, &r.err);
    const char *word = s ? hc_istream_offset_word(s) : "";
    hc_check("inflate-6.1", same(&r, (const unsigned char *)text, strlen(text)) && strcmp(word, "offset") == 0,
             "plain text: %zu bytes, word %s", r.n, word);
    hc_istream_close(s);
    got_free(&r);
    p = put("empty.gz", "", 0);
    got_t e = via_stream(p, chunks, 2);
    p = put("one.gz", "\x1f", 1);
    got_t o = via_stream(p, chunks, 2);
    hc_check("inflate-6.2", same(&e, NULL, 0) && same(&o, (const unsigned char *)"\x1f", 1),
             "empty: %zu bytes %s; one byte: %zu %s", e.n, e.err.msg, o.n, o.err.msg);
    got_free(&e);
    got_free(&o);
    /* standard input, gzip'd */
    unsigned char *d = gen(K_MATCHES, 100000);
    size_t glen;
    unsigned char *g = gz(d, 100000, 6, Z_DEFAULT_STRATEGY, &glen);
    p = put("stdin.gz", g, glen);
    int saved = dup(0), fd = open(p, O_RDONLY);
    dup2(fd, 0);
    close(fd);
    got_t in = via_stream("-", chunks, 2);
    dup2(saved, 0);
    close(saved);
    hc_check("inflate-6.3", same(&in, d, 100000), "standard input: %zu bytes, %s", in.n, in.err.msg);
    got_free(&in);
    free(g);
    free(d);
}

/* 7. Every truncation of a small stream is an error naming the file, the uncompressed offset and
 * "truncated", after a correct prefix; never fewer bytes as a success. */
static void truncations(void)
{
    unsigned char *d = gen(K_TEXT, 6000);
    gz_header h;
    memset(&h, 0, sizeof h);
    h.name = (Bytef *)"cut.bin";
    h.hcrc = 1;
    unsigned char *s = NULL;
    size_t len = 0;
    gz_append(&s, &len, d, 6000, 6, Z_DEFAULT_STRATEGY, &h);
    unsigned char *s2 = NULL;
    size_t len2 = 0;
    gz_append(&s2, &len2, d, 3000, 0, Z_DEFAULT_STRATEGY, NULL); /* stored blocks */
    int bad = 0, tried = 0;
    char first[600] = "";
    for (int which = 0; which < 2; which++) {
        unsigned char *src = which ? s2 : s;
        size_t n = which ? len2 : len;
        for (size_t cut = 2; cut < n; cut++) {
            const char *p = put("cut.gz", src, cut);
            got_t r = via_inflate(p, (cut % 3) ? 4096 : 5, cut % 2 ? 4096 : 77);
            tried++;
            int ok = r.failed && r.err.code == HC_EFORMAT && strstr(r.err.msg, "cut.gz") &&
                     strstr(r.err.msg, "uncompressed offset") && strstr(r.err.msg, "truncated") &&
                     (r.n == 0 || memcmp(r.d, d, r.n) == 0);
            if (!ok && !bad++)
                snprintf(first, sizeof first, "stream %d cut at %zu of %zu: %zu bytes, failed %d: %s", which, cut, n,
                         r.n, r.failed, r.err.msg);
            got_free(&r);
        }
    }
    hc_check("inflate-7.1", bad == 0 && tried > 1000, "%d of %d truncations misreported; first: %s", bad, tried, first);
    /* the offset named is where the good bytes end, through hc_istream too */
    const char *p = put("cut.gz", s, len - 4);
    static const size_t chunks[] = {4096};
    got_t r = via_stream(p, chunks, 1);
    hc_check("inflate-7.2", r.failed && strstr(r.err.msg, "uncompressed offset 6000:") && strstr(r.err.msg, "trailer"),
             "cut inside the trailer: %zu bytes, %s", r.n, r.err.msg);
    got_free(&r);
    free(s);
    free(s2);
    free(d);
}

/* 8. Every bit flip of a small stream: an error, or the same bytes where zlib too reads them
 * (a flip in the header's time or OS byte, or in padding bits; one in the magic bytes makes a
 * plain file); the trailer's fields named. */
static void bit_flips(void)
{
    unsigned char *d = gen(K_TEXT, 1500);
    unsigned char *s = NULL;
    size_t len = 0;
    gz_append(&s, &len, d, 1500, 9, Z_DEFAULT_STRATEGY, NULL);
    int bad = 0, errors = 0, tried = 0;
    char first[600] = "";
    for (size_t bit = 0; bit < len * 8; bit++) {
        s[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        const char *p = put("flip.gz", s, len);
        got_t r = via_inflate(p, bit % 5 ? 4096 : 3, 512);
        tried++;
        /* a flip in the magic bytes makes a plain file, read as it is */
        int ok = r.failed ? strstr(r.err.msg, "flip.gz") != NULL : bit < 16 || same(&r, d, 1500);
        if (!r.failed) { /* must be a flip zlib accepts too, read the same */
            got_t z = via_zlib(p);
            ok = ok && same(&z, r.d, r.n);
            got_free(&z);
        }
        errors += r.failed;
        if (!ok && !bad++)
            snprintf(first, sizeof first, "bit %zu of %zu: %zu bytes, failed %d: %s", bit, len * 8, r.n, r.failed,
                     r.err.msg);
        got_free(&r);
        s[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    hc_check("inflate-8.1", bad == 0 && errors > tried * 8 / 10, "%d of %d flips misread (%d errors); first: %s", bad,
             tried, errors, first);
    s[len - 6] ^= 4; /* the CRC */
    got_t c = via_inflate(put("flip.gz", s, len), 0, 4096);
    s[len - 6] ^= 4;
    s[len - 2] ^= 1; /* ISIZE */
    got_t l = via_inflate(put("flip.gz", s, len), 0, 4096);
    hc_check("inflate-8.2",
             c.failed && strstr(c.err.msg, "CRC mismatch") && strstr(c.err.msg, "uncompressed offset 1500") &&
                 l.failed && strstr(l.err.msg, "length mismatch"),
             "CRC: %s; length: %s", c.err.msg, l.err.msg);
    got_free(&c);
    got_free(&l);
    free(s);
    free(d);
}

/* Bits written lowest first, for hand-made deflate data. */
typedef struct {
    unsigned char b[64];
    size_t n;
    unsigned acc, cnt;
} bits_t;

static void put_bits(bits_t *w, unsigned v, unsigned n)
{
    w->acc |= v << w->cnt;
    w->cnt += n;
    while (w->cnt >= 8) {
        w->b[w->n++] = (unsigned char)w->acc;
        w->acc >>= 8;
        w->cnt -= 8;
    }
}

/* A fixed-code symbol: its code goes in most significant bit first. */
static void put_code(bits_t *w, unsigned code, unsigned len)
{
    for (unsigned i = len; i-- > 0;)
        put_bits(w, (code >> i) & 1, 1);
}

static got_t hand_made(const bits_t *w)
{
    unsigned char s[128] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(s + 10, w->b, w->n);
    s[10 + w->n] = (unsigned char)w->acc;
    memset(s + 11 + w->n, 0, 8);
    return via_inflate(put("hand.gz", s, 19 + w->n), 0, 4096);
}

/* 9. Faults named as such: block type 3, stored lengths that disagree, a distance before the
 * data, the fixed code's literal/length 286 and distance 30. */
static void named_faults(void)
{
    bits_t w = {0};
    put_bits(&w, 1, 1);
    put_bits(&w, 3, 2);
    got_t a = hand_made(&w);
    memset(&w, 0, sizeof w);
    put_bits(&w, 1, 3);
    put_bits(&w, 0, 5);
    put_bits(&w, 0x1234, 16);
    put_bits(&w, 0x1234, 16);
    got_t b = hand_made(&w);
    memset(&w, 0, sizeof w);
    put_bits(&w, 1, 1);
    put_bits(&w, 1, 2);         /* fixed */
    put_code(&w, 0x30 + 'a', 8); /* literal 'a' */
    put_code(&w, 1, 7);          /* length 3 (257) */
    put_code(&w, 1, 5);          /* distance 2: one byte too far */
    put_code(&w, 0, 7);          /* end of block */
    got_t c = hand_made(&w);
    memset(&w, 0, sizeof w);
    put_bits(&w, 1, 1);
    put_bits(&w, 1, 2);
    put_code(&w, 0xc6, 8); /* 286 */
    got_t e = hand_made(&w);
    memset(&w, 0, sizeof w);
    put_bits(&w, 1, 1);
    put_bits(&w, 1, 2);
    put_code(&w, 0x30 + 'a', 8);
    put_code(&w, 1, 7);
    put_code(&w, 30, 5);
    got_t f = hand_made(&w);
    hc_check("inflate-9.1",
             a.failed && strstr(a.err.msg, "invalid block type") && b.failed &&
                 strstr(b.err.msg, "invalid stored block lengths") && c.failed && c.n == 1 &&
                 strstr(c.err.msg, "uncompressed offset 1:") && strstr(c.err.msg, "too far back") && e.failed &&
                 strstr(e.err.msg, "invalid literal/length code") && f.failed &&
                 strstr(f.err.msg, "invalid distance code"),
             "type 3: %s; stored: %s; too far: %s; 286: %s; distance 30: %s", a.err.msg, b.err.msg, c.err.msg,
             e.err.msg, f.err.msg);
    got_free(&a);
    got_free(&b);
    got_free(&c);
    got_free(&e);
    got_free(&f);
}

/* 10. Random mutations of a few streams: never a crash (SAN=1), and the same outcome and bytes
 * as zlib's gzread. */
static void fuzz(void)
{
    int n_iter = hc_env_int("HC_INFLATE_FUZZ", 3000, 1, 10000000);
    unsigned char *bases[4];
    size_t blen[4];
    for (int k = 0; k < 4; k++) {
        unsigned char *d = gen(k == 3 ? K_RANDOM : k, 4000);
        bases[k] = NULL;
        blen[k] = 0;
        gz_append(&bases[k], &blen[k], d, 4000, k == 2 ? 1 : 6, k == 1 ? Z_FIXED : Z_DEFAULT_STRATEGY, NULL);
        if (k == 0)
            gz_append(&bases[k], &blen[k], d, 100, 0, Z_DEFAULT_STRATEGY, NULL);
        free(d);
    }
    int bad = 0;
    char first[600] = "";
    unsigned char *m = malloc(8192);
    for (int it = 0; it < n_iter; it++) {
        int k = (int)(rnd() % 4);
        size_t n = blen[k];
        memcpy(m, bases[k], n);
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd() % n;
            switch (rnd() % 5) {
            case 0:
                m[at] ^= (unsigned char)(1u << (rnd() % 8));
                break;
            case 1:
                m[at] = (unsigned char)rnd();
                break;
            case 2: /* delete a few bytes */
                if (n > 20) {
                    size_t k2 = 1 + rnd() % 8;
                    k2 = at + k2 > n ? n - at : k2;
                    memmove(m + at, m + at + k2, n - at - k2);
                    n -= k2;
                }
                break;
            case 3: /* insert a few */
                if (n < 8000) {
                    size_t k2 = 1 + rnd() % 8;
                    memmove(m + at + k2, m + at, n - at);
                    for (size_t i = 0; i < k2; i++)
                        m[at + i] = (unsigned char)rnd();
                    n += k2;
                }
                break;
            default:
                if (at > 2)
                    n = at;
            }
        }
        const char *p = put("fuzz.gz", m, n);
        got_t ours = via_inflate(p, rnd() % 3 ? 0 : 1 + rnd() % 40, 1 + rnd() % 5000), ref = via_zlib(p);
        if (!agree(&ours, &ref, "fuzz.gz") && !bad++) {
            snprintf(first, sizeof first, "mutation %d (base %d): ours %zu bytes failed %d (%s), zlib %zu failed %d",
                     it, k, ours.n, ours.failed, ours.err.msg, ref.n, ref.failed);
            put("fuzz-first-disagreement.gz", m, n);
        }
        got_free(&ours);
        got_free(&ref);
    }
    hc_check("inflate-10.1", bad == 0, "%d of %d mutations read otherwise than by zlib; first: %s", bad, n_iter, first);
    free(m);
    for (int k = 0; k < 4; k++)
        free(bases[k]);
}

/* Data of every kind in segments, each compressed its own way in one deflate stream (levels 0-9,
 * every strategy, flushes that end blocks or add empty stored ones): one gzip member. */
static unsigned char *mixed_member(size_t n, unsigned char **data, size_t *glen)
{
    unsigned char *d = malloc(n + 64);
    size_t at = 0;
    while (at < n) {
        size_t len = 1000 + rnd() % 60000;
        len = at + len > n ? n - at : len;
        unsigned char *seg = gen((int)(rnd() % K_KINDS), len);
        memcpy(d + at, seg, len);
        free(seg);
        at += len;
    }
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    size_t cap = 2 * n + 100000;
    unsigned char *g = malloc(cap);
    zs.next_out = g;
    zs.avail_out = (uInt)cap;
    static const int levels[] = {0, 1, 6, 9};
    static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
    static const int flushes[] = {Z_NO_FLUSH, Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_PARTIAL_FLUSH, Z_BLOCK};
    for (at = 0; at < n;) {
        size_t len = 500 + rnd() % 40000;
        len = at + len > n ? n - at : len;
        deflateParams(&zs, levels[rnd() % 4], strategies[rnd() % 5]);
        zs.next_in = d + at;
        zs.avail_in = (uInt)len;
        deflate(&zs, flushes[rnd() % 6]);
        at += len;
    }
    deflate(&zs, Z_FINISH);
    *glen = cap - zs.avail_out;
    deflateEnd(&zs);
    *data = d;
    return g;
}

/* 11. The parallel decoder (harness/base/pinflate.h): the same bytes as the data over streams of
 * every block type, chunk size and thread count, its chunks used (not everything decoded again
 * in order); with members after the first and what follows them, what gzread reads; and on
 * corrupted and truncated streams exactly the sequential decoder's bytes and message. */
static void parallel(void)
{
    static const size_t pchunks[] = {1024, 4096, 65536};
    static const int threads[] = {1, 2, 5};
    int bad = 0, tried = 0, used = 0, redone = 0;
    char first[600] = "";
    for (int m = 0; m < 6; m++) {
        unsigned char *d;
        size_t n = (size_t)(300000 + 200000 * m), glen;
        unsigned char *g = mixed_member(n, &d, &glen);
        const char *p = put("par.gz", g, glen);
        for (int c = 0; c < 3; c++)
            for (int t = 0; t < 3; t++) {
                got_t r = via_par(p, 0, 1000 + rnd() % 100000, threads[t], pchunks[c]);
                tried++;
                used += par_used;
                redone += par_redone;
                if (!same(&r, d, n) && !bad++)
                    snprintf(first, sizeof first, "stream %d (%zu bytes) chunk %zu threads %d: %zu bytes, failed %d: %s",
                             m, glen, pchunks[c], threads[t], r.n, r.failed, r.err.msg);
                got_free(&r);
            }
        free(g);
        free(d);
    }
    hc_check("inflate-11.1", bad == 0 && tried == 54, "%d of %d mixed streams read wrong; first: %s", bad, tried, first);
    hc_check("inflate-11.2", used > 4 * redone && used > 1000, "chunks used as decoded %d, decoded again %d", used,
             redone);

    /* a large float stream (a net's weights) through hc_istream: parallel on this host's cores */
    size_t n = 12 << 20, glen;
    unsigned char *d = gen(K_FLOATS, n), *g = gz(d, n, 6, Z_DEFAULT_STRATEGY, &glen);
    const char *p = put("par-floats.gz", g, glen);
    static const size_t pieces[] = {65536, 1000, 300000};
    got_t r = via_stream(p, pieces, 3);
    got_t q = via_par(p, 0, 77777, 3, 0);
    hc_check("inflate-11.3", same(&r, d, n) && same(&q, d, n) && glen >= (4 << 20) && par_used >= 2,
             "%zu-byte file: through hc_istream %zu bytes (%s), with 3 threads %zu bytes, %d chunks used", glen, r.n,
             r.err.msg, q.n, par_used);
    got_free(&r);
    got_free(&q);
    free(g);
    free(d);

    /* members after the first, and what follows the last: read on by the sequential decoder */
    unsigned char *a = gen(K_FLOATS, 400000), *b = gen(K_TEXT, 50000);
    bad = 0;
    static const char *tails[] = {"", "garbage after the data", "\x1f\x8b\x08\x01\x01\x01"};
    for (int k = 0; k < 3; k++) {
        unsigned char *s = NULL;
        size_t len = 0;
        gz_append(&s, &len, a, 400000, 6, Z_DEFAULT_STRATEGY, NULL);
        gz_append(&s, &len, b, 50000, 9, Z_DEFAULT_STRATEGY, NULL);
        size_t tl = strlen(tails[k]);
        s = realloc(s, len + tl + 1);
        memcpy(s + len, tails[k], tl);
        len += tl;
        p = put("par-members.gz", s, len);
        got_t ours = via_par(p, 0, 4096, 3, 4096), ref = via_zlib(p);
        if ((!agree(&ours, &ref, "par-members.gz") || par_used < 4 || (k < 2 && ours.n != 450000)) && !bad++)
            snprintf(first, sizeof first, "tail %d: ours %zu bytes failed %d (%s), zlib %zu failed %d, %d chunks used, %d decoded again",
                     k, ours.n, ours.failed, ours.err.msg, ref.n, ref.failed, par_used, par_redone);
        got_free(&ours);
        got_free(&ref);
        free(s);
    }
    hc_check("inflate-11.4", bad == 0, "%s", first);
    free(a);
    free(b);

    /* corruption: bit flips, byte edits and truncations anywhere; parallel reads must give what
     * the sequential reader gives, bytes and message */
    unsigned char *base;
    size_t blen;
    unsigned char *gb = mixed_member(400000, &base, &blen);
    unsigned char *m = malloc(blen);
    bad = 0;
    int errors = 0, iters = hc_env_int("HC_INFLATE_PAR_FUZZ", 300, 1, 1000000);
    for (int it = 0; it < iters; it++) {
        memcpy(m, gb, blen);
        size_t len = blen;
        int what = (int)(rnd() % 3);
        size_t at = 20 + rnd() % (blen - 30);
        if (what == 0)
            m[at] ^= (unsigned char)(1u << (rnd() % 8));
        else if (what == 1)
            m[at] = (unsigned char)rnd();
        else
            len = at;
        p = put("par-bad.gz", m, len);
        size_t pc = 2048 + rnd() % 20000;
        got_t seq = via_inflate(p, 0, 9999), par = via_par(p, 0, 9999, 1 + (int)(rnd() % 4), pc);
        errors += seq.failed;
        int ok = par.failed == seq.failed && par.n == seq.n && (!par.n || memcmp(par.d, seq.d, par.n) == 0) &&
                 (!par.failed || strcmp(par.err.msg, seq.err.msg) == 0);
        if (!ok && !bad++)
            snprintf(first, sizeof first, "edit %d at %zu (chunk %zu): sequential %zu bytes failed %d (%s); parallel %zu failed %d (%s)",
                     what, at, pc, seq.n, seq.failed, seq.err.msg, par.n, par.failed, par.err.msg);
        got_free(&seq);
        got_free(&par);
    }
    hc_check("inflate-11.5", bad == 0 && errors > iters / 2, "%d of %d corrupted streams read otherwise (%d errors); first: %s",
             bad, iters, errors, first);
    free(m);
    free(gb);
    free(base);

    /* real nets as their trainers gzip'd them (the shared ones): the same bytes as zlib's, in
     * chunks of 4 KiB (most chunks passed over inside a block, the last holding the final block)
     * and of 64 KiB */
    static const char *nets[] = {"nets/g170-b6c96-s175395328-d26788732.bin.gz", "nets/b7c96h3tfrs-test5-cnorm.bin.gz",
                                 "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"};
    if (!hc_shared(nets[0])) {
        hc_skip("inflate-11.6", "../shared is absent (the shared nets)");
        return;
    }
    bad = 0;
    int used_all = 0, reads = 0;
    for (int k = 0; k < 3; k++) {
        const char *path = hc_shared(nets[k]);
        if (!path)
            continue;
        got_t ref = via_zlib(path);
        for (int c = 0; c < 2; c++) {
            got_t r = via_par(path, 0, 65536, 3, c ? 65536 : 4096);
            reads++;
            used_all += par_used;
            if (!same(&r, ref.d, ref.n) && !bad++)
                snprintf(first, sizeof first, "%s, chunk %d: %zu bytes of %zu, failed %d: %s", nets[k], c ? 65536 : 4096,
                         r.n, ref.n, r.failed, r.err.msg);
            got_free(&r);
        }
        got_free(&ref);
    }
    hc_check("inflate-11.6", bad == 0 && reads == 6 && used_all > 100, "%d of %d reads wrong (%d chunks used); first: %s",
             bad, reads, used_all, first);
}

int main(void)
{
    hc_plan(5 + 2 + 2 + 1 + 3 + 3 + 2 + 2 + 1 + 1 + 6);
    dir = hc_tmpdir("test_inflate");
    roundtrips();
    tiny_buffers();
    large();
    members();
    headers();
    plain();
    truncations();
    bit_flips();
    named_faults();
    fuzz();
    parallel();
    return hc_test_exit();
}
