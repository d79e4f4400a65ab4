/* Parallel decoding of a deflate stream in a mapped file (pinflate.h), written from RFC 1951. The
 * decoding loops follow inflate.c's (one table lookup a symbol, word refills, overlapping word
 * copies); a chunk whose window is unknown decodes into 16-bit values, bytes below 256 and
 * markers (MARK + the index into the unknown window) above, until the last 32 KiB decoded hold
 * no marker, and into bytes after that. */
#include "harness/base/pinflate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/base/huff.h"
#include "harness/base/thread.h"

enum {
    WSIZE = 32768,
    SLACK = 64,          /* word copies write up to 15 bytes past a match's end */
    FAST_IN = 32,        /* input one fast iteration may read */
    FAST_OUT = 2 + 258,  /* output it may write before a copy's overrun */
    CHUNK_MIN = 1 << 20, /* the default chunk: a quarter of a worker's share, within these (each */
    CHUNK_MAX = 2 << 20, /* chunk in flight is memory: its input's pages and its output) */
    LBITS = HC_HUFF_LBITS,
    DBITS = HC_HUFF_DBITS,
    PBITS = HC_HUFF_PBITS,
};

#define MARK 256u /* 16-bit values from MARK on: byte (value - MARK) of the unknown window */

/* A decoder's input position and tables. */
typedef struct dec {
    const unsigned char *in, *ip, *iend;
    uint64_t bb; /* above bc: zero or copies of the next input bytes, never anything else */
    unsigned bc;
    int fixed; /* lt and dt hold the fixed codes */
    uint32_t ltmpl[288], dtmpl[32];
    uint32_t pt[1 << PBITS];
    uint32_t lt[HC_HUFF_LTAB], dt[HC_HUFF_DTAB];
} dec;

/* What one decoding produced: w[0..nw) (16-bit values, while the window was unknown), then
 * b[WSIZE..WSIZE + nb) (bytes; b[WSIZE - avail..WSIZE) the window a distance may reach). */
typedef struct out {
    uint16_t *w;
    size_t nw, capw;
    size_t mark_end; /* w[mark_end..nw) hold no marker */
    unsigned char *b;
    size_t nb, capb, avail;
    int bytes; /* decoding into b */
    uint64_t start, end; /* the bits decoding started at and stopped at */
    int final;           /* the stop is the end of the final block */
} out;

typedef struct chunk {
    int done, ok;
    out o;
} chunk;

struct hc_pinflate {
    const unsigned char *in; /* the file, mapped; [in, in + unmapped) given back as it is read */
    size_t len, unmapped, page;
    uint64_t start_bit;
    size_t first, size; /* chunk i covers bytes first + i*size .. first + (i+1)*size */
    int nchunks, ahead;
    chunk *ch;
    pthread_t *th;
    int nth;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int next, consumed, stop; /* the next chunk to claim; those before consumed are released */
    /* the consumer's side */
    dec *cd;
    out redo;
    unsigned char *res; /* a chunk's 16-bit part resolved */
    size_t res_cap;
    const unsigned char *piece[2];
    size_t piece_n[2];
    int npieces, ipiece;
    uint64_t at; /* the bit the next chunk must start at */
    int final, ended;
    int used, redone; /* chunks taken as a worker decoded them, decoded again here */
    unsigned char win[WSIZE]; /* the last win_len bytes handed out, at its end */
    size_t win_len;
};

static uint64_t bitpos(const dec *d) { return (uint64_t)(d->ip - d->in) * 8 - d->bc; }

static void seek(dec *d, uint64_t bit)
{
    d->ip = d->in + bit / 8;
    d->bb = 0;
    d->bc = 0;
    if (bit & 7) {
        d->bb = (uint64_t)(*d->ip++ >> (bit & 7));
        d->bc = 8 - (unsigned)(bit & 7);
    }
}

static inline int need(dec *d, unsigned n)
{
    while (d->bc < n) {
        if (d->ip == d->iend)
            return 0;
        d->bb |= (uint64_t)*d->ip++ << d->bc;
        d->bc += 8;
    }
    return 1;
}

static inline void drop(dec *d, unsigned n)
{
    d->bb >>= n;
    d->bc -= n;
}

/* Tops the bit buffer up to 56 bits or the input's end. */
static inline void refill(dec *d)
{
    if (d->iend - d->ip >= 8) {
        d->bb |= hc_huff_load64(d->ip) << d->bc;
        d->ip += (63 - d->bc) >> 3;
        d->bc |= 56;
    } else
        while (d->bc <= 56 && d->ip < d->iend) {
            d->bb |= (uint64_t)*d->ip++ << d->bc;
            d->bc += 8;
        }
}

/* A dynamic block's code lengths and tables, with inflate.c's checks. 0, or -1 when they do not
 * parse. */
static int dyn(dec *d)
{
    static const unsigned char order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    if (!need(d, 14))
        return -1;
    unsigned hlit = 257 + (unsigned)(d->bb & 31), hdist = 1 + (unsigned)(d->bb >> 5 & 31);
    unsigned hclen = 4 + (unsigned)(d->bb >> 10 & 15);
    if (hlit > 286 || hdist > 30)
        return -1;
    drop(d, 14);
    unsigned char plens[19] = {0}, lens[320];
    for (unsigned i = 0; i < hclen; i++) {
        if (!need(d, 3))
            return -1;
        plens[order[i]] = (unsigned char)(d->bb & 7);
        drop(d, 3);
    }
    uint32_t tmpl[19];
    for (unsigned i = 0; i < 19; i++)
        tmpl[i] = i << 16;
    if (hc_huff_build(d->pt, PBITS, plens, 19, tmpl, 0))
        return -1;
    unsigned total = hlit + hdist, idx = 0;
    while (idx < total) {
        need(d, 14);
        uint32_t e = d->pt[d->bb & ((1u << PBITS) - 1)];
        unsigned cl = e & 0xff, sym = e >> 16;
        if (cl > d->bc)
            return -1;
        if (sym < 16) {
            drop(d, cl);
            lens[idx++] = (unsigned char)sym;
            continue;
        }
        unsigned xb = sym == 16 ? 2 : sym == 17 ? 3 : 7;
        if (cl + xb > d->bc)
            return -1;
        unsigned rep = (sym == 18 ? 11 : 3) + (unsigned)(d->bb >> cl & ((1u << xb) - 1));
        if ((sym == 16 && idx == 0) || idx + rep > total)
            return -1;
        drop(d, cl + xb);
        memset(lens + idx, sym == 16 ? lens[idx - 1] : 0, rep);
        idx += rep;
    }
    if (lens[256] == 0)
        return -1;
    d->fixed = 0;
    if (hc_huff_build(d->lt, LBITS, lens, hlit, d->ltmpl, 1) ||
        hc_huff_build(d->dt, DBITS, lens + hlit, hdist, d->dtmpl, 1))
        return -1;
    return 0;
}

/* A block header at the current position: its type (0 stored, with *slen its length and the
 * input at its first byte; 1 fixed; 2 dynamic, the tables built) or -1 when it does not parse. */
static int header(dec *d, int *final, unsigned *slen)
{
    if (!need(d, 3))
        return -1;
    *final = (int)(d->bb & 1);
    unsigned t = (unsigned)(d->bb >> 1) & 3;
    drop(d, 3);
    if (t == 3)
        return -1;
    if (t == 0) {
        const unsigned char *p = d->in + (bitpos(d) + 7) / 8;
        if (d->iend - p < 4)
            return -1;
        unsigned len = p[0] | (unsigned)p[1] << 8, nlen = p[2] | (unsigned)p[3] << 8;
        if (len != (~nlen & 0xffff))
            return -1;
        d->ip = p + 4;
        d->bb = 0;
        d->bc = 0;
        *slen = len;
        return 0;
    }
    if (t == 1) {
        if (!d->fixed)
            hc_huff_fixed(d->lt, d->dt, d->ltmpl, d->dtmpl);
        d->fixed = 1;
        return 1;
    }
    return dyn(d) ? -1 : 2;
}

static int grow_w(out *o, size_t more)
{
    if (o->nw + more <= o->capw)
        return 0;
    size_t cap = o->capw ? o->capw : 1 << 16;
    while (cap < o->nw + more)
        cap *= 2;
    uint16_t *w = realloc(o->w, cap * sizeof *w);
    if (!w)
        return -1;
    o->w = w;
    o->capw = cap;
    return 0;
}

/* Room for more bytes after b's output, with the slack word copies overrun into. */
static int grow_b(out *o, size_t more)
{
    size_t want = WSIZE + o->nb + more + SLACK;
    if (want <= o->capb)
        return 0;
    size_t cap = o->capb ? o->capb : 1 << 18;
    while (cap < want)
        cap *= 2;
    unsigned char *b = realloc(o->b, cap);
    if (!b)
        return -1;
    o->b = b;
    o->capb = cap;
    return 0;
}

/* A block's Huffman-coded data into w: 0 at its end-of-block code, -1 on what does not decode
 * (or memory). */
static int huff_w(dec *d, out *o)
{
    for (;;) {
        if (grow_w(o, 258))
            return -1;
        refill(d);
        uint32_t e = hc_huff_lookup(d->lt, LBITS, d->bb);
        unsigned tot = e & 0xff;
        if ((e & HC_HUFF_BAD) || tot > d->bc)
            return -1;
        if (e & HC_HUFF_LIT) {
            o->w[o->nw++] = (uint16_t)(e >> 16);
            drop(d, tot);
            continue;
        }
        if (e & HC_HUFF_EOB) {
            drop(d, tot);
            return 0;
        }
        unsigned len = (e >> 16) + (unsigned)((d->bb & ((1ull << tot) - 1)) >> ((e >> 8) & 0xf));
        drop(d, tot);
        uint32_t dd = hc_huff_lookup(d->dt, DBITS, d->bb);
        unsigned dtot = dd & 0xff;
        if ((dd & HC_HUFF_BAD) || dtot > d->bc)
            return -1;
        size_t dist = (dd >> 16) + (size_t)((d->bb & ((1ull << dtot) - 1)) >> ((dd >> 8) & 0xf));
        drop(d, dtot);
        if (dist > o->nw + WSIZE)
            return -1;
        uint16_t *w = o->w, any = 0;
        size_t at = o->nw;
        for (unsigned i = 0; i < len; i++, at++) {
            uint16_t v = at >= dist ? w[at - dist] : (uint16_t)(MARK + WSIZE + at - dist);
            w[at] = v;
            any |= v;
        }
        if (any >= MARK)
            o->mark_end = at;
        o->nw = at;
    }
}

/* The same into b, inflate.c's fast loop while the input has room for an iteration, one
 * symbol at a time near its end. */
static int huff_b(dec *d, out *o)
{
    const uint32_t *lt = d->lt, *dt = d->dt;
    uint64_t bb = d->bb;
    unsigned bc = d->bc;
    const unsigned char *ip = d->ip, *iend = d->iend;
    unsigned char *base = o->b + WSIZE, *op = base + o->nb, *hist = base - o->avail;
    unsigned char *ofast = o->b + o->capb - SLACK - FAST_OUT;
#define SAVE() (d->bb = bb, d->bc = bc, d->ip = ip, o->nb = (size_t)(op - base))
#define REFILL() (bb |= hc_huff_load64(ip) << bc, ip += (63 - bc) >> 3, bc |= 56)
    for (;;) {
        if (op > ofast) {
            SAVE();
            if (grow_b(o, (size_t)1 << 20))
                return -1;
            base = o->b + WSIZE, op = base + o->nb, hist = base - o->avail;
            ofast = o->b + o->capb - SLACK - FAST_OUT;
        }
        uint32_t e;
        if (iend - ip >= FAST_IN) {
            REFILL();
            e = lt[bb & ((1u << LBITS) - 1)];
            if (e & HC_HUFF_LIT) {
                bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                e = lt[bb & ((1u << LBITS) - 1)];
                if (e & HC_HUFF_LIT) {
                    bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                    e = lt[bb & ((1u << LBITS) - 1)];
                    if (e & HC_HUFF_LIT) {
                        bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                        continue;
                    }
                }
                REFILL();
            }
            if (e & HC_HUFF_SUB) {
                e = lt[(e >> 16) + ((bb >> LBITS) & ((1u << (e & 0xff)) - 1))];
                if (e & HC_HUFF_LIT) {
                    bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                    continue;
                }
            }
        } else {
            SAVE();
            refill(d);
            bb = d->bb, bc = d->bc, ip = d->ip;
            e = hc_huff_lookup(lt, LBITS, bb);
            if ((e & 0xff) > bc && !(e & HC_HUFF_BAD))
                return -1; /* the input ends inside the code */
            if (e & HC_HUFF_LIT) {
                bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                continue;
            }
        }
        if (e & (HC_HUFF_EOB | HC_HUFF_BAD)) {
            if (e & HC_HUFF_BAD)
                return -1;
            bb >>= e & 0xff, bc -= e & 0xff;
            SAVE();
            return 0;
        }
        /* a length and a distance: at most 15 + 5 and 15 + 13 bits of the 56 (fewer only at the
         * input's end: the length's were checked with its code, the distance's are here) */
        unsigned tot = e & 0xff;
        unsigned len = (e >> 16) + (unsigned)((bb & ((1ull << tot) - 1)) >> ((e >> 8) & 0xf));
        bb >>= tot, bc -= tot;
        uint32_t dd = hc_huff_lookup(dt, DBITS, bb);
        if (dd & HC_HUFF_BAD)
            return -1;
        tot = dd & 0xff;
        if (tot > bc)
            return -1;
        size_t dist = (dd >> 16) + (size_t)((bb & ((1ull << tot) - 1)) >> ((dd >> 8) & 0xf));
        bb >>= tot, bc -= tot;
        if (dist > (size_t)(op - hist))
            return -1;
        op = hc_huff_copy(op, dist, len);
    }
#undef SAVE
#undef REFILL
}

/* From the w part to bytes: the last 32 KiB of w hold no marker. */
static int to_bytes(out *o)
{
    if (grow_b(o, (size_t)1 << 20))
        return -1;
    for (size_t i = 0; i < WSIZE; i++)
        o->b[i] = (unsigned char)o->w[o->nw - WSIZE + i];
    o->avail = WSIZE;
    o->bytes = 1;
    return 0;
}

/* Decodes from bit start to the first block boundary at or after stop (start itself aside), or
 * through a final block; o's mode and window set by the caller. 0 (o->end, o->final set) or
 * -1. */
static int decode(dec *d, out *o, uint64_t start, uint64_t stop)
{
    seek(d, start);
    o->start = start;
    for (;;) {
        uint64_t at = bitpos(d);
        if (at >= stop && at != start) {
            o->end = at;
            o->final = 0;
            return 0;
        }
        int final;
        unsigned slen = 0;
        int t = header(d, &final, &slen);
        if (t < 0)
            return -1;
        if (t == 0) {
            if ((size_t)(d->iend - d->ip) < slen)
                return -1;
            if (o->bytes) {
                if (grow_b(o, slen))
                    return -1;
                memcpy(o->b + WSIZE + o->nb, d->ip, slen);
                o->nb += slen;
            } else {
                if (grow_w(o, slen))
                    return -1;
                for (unsigned i = 0; i < slen; i++)
                    o->w[o->nw++] = d->ip[i];
            }
            d->ip += slen;
        } else if ((o->bytes ? huff_b(d, o) : huff_w(d, o)) != 0)
            return -1;
        if (final) {
            o->end = bitpos(d);
            o->final = 1;
            return 0;
        }
        if (!o->bytes && o->nw >= WSIZE + o->mark_end && to_bytes(o))
            return -1;
    }
}

static void out_reset(out *o)
{
    o->nw = o->nb = o->avail = 0;
    o->mark_end = 0;
    o->bytes = 0;
    o->final = 0;
}

static void out_free(out *o)
{
    free(o->w);
    free(o->b);
    memset(o, 0, sizeof *o);
}

/* Whether a block header that is not the final one can start at bit p: a dynamic block's (its
 * first 13 bits), or a stored block's (three zero bits, zero bits to the byte's end, and the
 * length and its complement). */
static inline int maybe_header(const dec *d, uint64_t p)
{
    const unsigned char *q = d->in + p / 8;
    uint64_t v = 0;
    if (d->iend - q >= 8)
        v = hc_huff_load64(q);
    else
        for (unsigned i = 0; q + i < d->iend; i++)
            v |= (uint64_t)q[i] << (8 * i);
    unsigned r = (unsigned)(p & 7);
    v >>= r;
    if ((v & 7) == 4)
        return (v >> 3 & 31) < 30 && (v >> 8 & 31) < 30;
    if (r > 5 ? (v & 7) != 0 || ((v >> 3) & ((1u << (13 - r)) - 1)) != 0 : (v & ((1u << (8 - r)) - 1)) != 0)
        return 0;
    const unsigned char *a = q + (r > 5 ? 2 : 1); /* the length's first byte */
    return d->iend - a >= 4 && (a[0] ^ a[2]) == 0xff && (a[1] ^ a[3]) == 0xff;
}

/* A stored block's header at bit p: where its length lies (the byte after the header bits),
 * 0 for any other block type or a final block. */
static uint64_t stored_at(const dec *d, uint64_t p)
{
    if (p / 8 >= (uint64_t)(d->iend - d->in))
        return 0;
    const unsigned char *q = d->in + p / 8;
    unsigned v = q[0] >> (p & 7);
    if ((p & 7) > 5 && q + 1 < d->iend)
        v |= (unsigned)q[1] << (8 - (p & 7));
    return (v & 7) == 0 ? (p + 3 + 7) / 8 : 0;
}

/* A chunk after the first: the first position in [from, to) where a dynamic or stored block
 * header parses and decoding from it reaches the stop. */
static int find_and_decode(dec *d, out *o, uint64_t from, uint64_t to, uint64_t stop)
{
    for (uint64_t p = from; p < to; p++) {
        if (!maybe_header(d, p))
            continue;
        seek(d, p);
        int final;
        unsigned slen;
        int t = header(d, &final, &slen);
        if (t != 2 && t != 0)
            continue;
        out_reset(o);
        if (decode(d, o, p, stop) == 0)
            return 0;
    }
    return -1;
}

static uint64_t chunk_start_bit(const hc_pinflate *p, int i)
{
    return i == 0 ? p->start_bit : (uint64_t)(p->first + (size_t)i * p->size) * 8;
}

static uint64_t chunk_end_bit(const hc_pinflate *p, int i)
{
    return i + 1 >= p->nchunks ? (uint64_t)p->len * 8 : chunk_start_bit(p, i + 1);
}

static dec *dec_new(const hc_pinflate *p)
{
    dec *d = malloc(sizeof *d);
    if (!d)
        return NULL;
    d->in = d->ip = p->in;
    d->iend = p->in + p->len;
    d->bb = 0;
    d->bc = 0;
    d->fixed = 0;
    hc_huff_templates(d->ltmpl, d->dtmpl);
    return d;
}

static void *worker(void *arg)
{
    hc_pinflate *p = arg;
    dec *d = dec_new(p); /* without it, every chunk it claims fails: the consumer decodes them */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next < p->nchunks && p->next >= p->consumed + p->ahead)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop || p->next >= p->nchunks)
            break;
        int i = p->next++;
        chunk *c = &p->ch[i];
        pthread_mutex_unlock(&p->mu);
        int ok = 0;
        if (d) {
            if (i == 0) { /* the stream's start: the window is empty, not unknown */
                c->o.bytes = 1;
                ok = grow_b(&c->o, 0) == 0 && decode(d, &c->o, p->start_bit, chunk_end_bit(p, 0)) == 0;
            } else
                ok = find_and_decode(d, &c->o, chunk_start_bit(p, i), chunk_end_bit(p, i), chunk_end_bit(p, i)) == 0;
        }
        pthread_mutex_lock(&p->mu);
        c->ok = ok;
        c->done = 1;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    free(d);
    return NULL;
}

hc_pinflate *hc_pinflate_start(int fd, size_t len, uint64_t start_bit, const hc_pinflate_opts *o, hc_err *err)
{
    void *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (m == MAP_FAILED) {
        hc_err_set(err, HC_EIO, "cannot map the file for the parallel gzip reader");
        return NULL;
    }
    hc_pinflate *p = hc_calloc(1, sizeof *p, err, "parallel gzip reader");
    if (!p) {
        munmap(m, len);
        return NULL;
    }
    int threads = o->threads < 1 ? 1 : o->threads;
    long page = sysconf(_SC_PAGESIZE);
    p->page = page > 0 ? (size_t)page : 4096;
    p->in = m;
    p->len = len;
    p->start_bit = start_bit;
    p->first = (size_t)(start_bit / 8);
    size_t rest = len > p->first ? len - p->first : 1;
    p->size = o->chunk;
    if (!p->size) {
        p->size = rest / (4 * (size_t)threads);
        p->size = p->size < CHUNK_MIN ? CHUNK_MIN : p->size > CHUNK_MAX ? CHUNK_MAX : p->size;
    }
    p->nchunks = (int)((rest + p->size - 1) / p->size);
    p->ahead = threads + 1; /* each worker a chunk ahead of the one awaited */
    p->at = start_bit;
    p->ch = calloc((size_t)p->nchunks, sizeof *p->ch);
    p->th = calloc((size_t)threads, sizeof *p->th);
    p->cd = dec_new(p);
    if (!p->ch || !p->th || !p->cd) {
        free(p->ch);
        free(p->th);
        free(p->cd);
        munmap(m, len);
        free(p);
        hc_err_set(err, HC_ENOMEM, "out of memory for the parallel gzip reader");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (; p->nth < threads; p->nth++)
        if (hc_thread_start(&p->th[p->nth], worker, p) != 0)
            break;
    if (p->nth == 0) {
        hc_pinflate_free(p);
        hc_err_set(err, HC_EIO, "cannot start the parallel gzip reader's threads");
        return NULL;
    }
    return p;
}

void hc_pinflate_free(hc_pinflate *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nth; i++)
        pthread_join(p->th[i], NULL);
    for (int i = 0; i < p->nchunks; i++)
        out_free(&p->ch[i].o);
    out_free(&p->redo);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->ch);
    free(p->th);
    free(p->cd);
    free(p->res);
    munmap((unsigned char *)p->in + p->unmapped, p->len - p->unmapped);
    free(p);
}

/* The chunk's 16-bit part with its markers replaced from the window: 0, or -1 where a marker
 * reaches before the stream's start. */
static int resolve(hc_pinflate *p, const out *o)
{
    if (o->nw > p->res_cap) {
        unsigned char *r = realloc(p->res, o->nw);
        if (!r)
            return -1;
        p->res = r;
        p->res_cap = o->nw;
    }
    size_t lo = WSIZE - p->win_len;
    for (size_t i = 0; i < o->nw; i++) {
        unsigned v = o->w[i];
        if (v >= MARK) {
            v -= MARK;
            if (v < lo)
                return -1;
            v = p->win[v];
        }
        p->res[i] = (unsigned char)v;
    }
    return 0;
}

static void window_add(hc_pinflate *p, const unsigned char *b, size_t n)
{
    if (n >= WSIZE) {
        memcpy(p->win, b + n - WSIZE, WSIZE);
        p->win_len = WSIZE;
        return;
    }
    memmove(p->win, p->win + n, WSIZE - n);
    memcpy(p->win + WSIZE - n, b, n);
    p->win_len = p->win_len + n < WSIZE ? p->win_len + n : WSIZE;
}

/* Finds the chunk holding bit p->at, waits for it, and sets the pieces: its output where it
 * starts there, else that range decoded here with the window known. 0, or -1 where the
 * sequential decoder must take over at p->at. */
static int advance(hc_pinflate *p)
{
    if (p->final || p->at >= (uint64_t)p->len * 8)
        return -1;
    uint64_t byte = p->at / 8;
    int k = byte < p->first ? 0 : (int)((byte - p->first) / p->size);
    if (k >= p->nchunks)
        k = p->nchunks - 1;
    if (k < p->consumed)
        k = p->consumed; /* never: the stop is at or after the next chunk's start */
    pthread_mutex_lock(&p->mu);
    int from = p->consumed;
    p->consumed = k; /* first: a stop far ahead (a long block) lets the workers reach chunk k */
    pthread_cond_broadcast(&p->work);
    for (int j = from; j < k; j++) { /* claimed in order, so done or about to be */
        while (!p->ch[j].done)
            pthread_cond_wait(&p->done, &p->mu);
        out_free(&p->ch[j].o);
    }
    while (!p->ch[k].done)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    /* the input before chunk k is read by no one any more (workers read from their chunk's start
     * on, this thread from p->at): its pages leave the process (mapped, they count in it) */
    size_t upto = (size_t)(chunk_start_bit(p, k) / 8) / p->page * p->page;
    if (upto > p->unmapped && munmap((unsigned char *)p->in + p->unmapped, upto - p->unmapped) == 0)
        p->unmapped = upto;
    chunk *c = &p->ch[k];
    const out *o = &c->o;
    p->npieces = p->ipiece = 0;
    /* A stored block's header bits may be found early (zero bits before them look the same):
     * what decodes from it is the same where the length lies at the same byte. */
    uint64_t stored = c->ok && o->start != p->at ? stored_at(p->cd, o->start) : 0;
    int same_start = c->ok && (o->start == p->at || (stored && stored == stored_at(p->cd, p->at)));
    if (!(same_start && resolve(p, o) == 0)) {
        out *r = &p->redo;
        out_reset(r);
        r->bytes = 1;
        r->avail = p->win_len;
        if (grow_b(r, 0))
            return -1;
        memcpy(r->b + WSIZE - p->win_len, p->win + WSIZE - p->win_len, p->win_len);
        if (decode(p->cd, r, p->at, chunk_end_bit(p, k)) != 0)
            return -1;
        o = r;
        p->redone++;
    } else {
        p->used++;
        if (o->nw) {
            p->piece[p->npieces] = p->res;
            p->piece_n[p->npieces++] = o->nw;
        }
    }
    if (o->nb) {
        p->piece[p->npieces] = o->b + WSIZE;
        p->piece_n[p->npieces++] = o->nb;
    }
    p->at = o->end;
    p->final = o->final;
    return 0;
}

int hc_pinflate_next(hc_pinflate *p, const unsigned char **buf, size_t *n)
{
    while (!p->ended) {
        if (p->ipiece < p->npieces) {
            int i = p->ipiece++;
            *buf = p->piece[i];
            *n = p->piece_n[i];
            window_add(p, *buf, *n);
            return 1;
        }
        if (advance(p) != 0)
            p->ended = 1;
    }
    return 0;
}

void hc_pinflate_where(const hc_pinflate *p, uint64_t *bit, int *final, const unsigned char **win, size_t *win_len)
{
    *bit = p->at;
    *final = p->final;
    *win = p->win + WSIZE - p->win_len;
    *win_len = p->win_len;
}

void hc_pinflate_counts(const hc_pinflate *p, int *used, int *redone)
{
    *used = p->used;
    *redone = p->redone;
}
