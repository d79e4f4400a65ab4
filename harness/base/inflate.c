/* Streaming gzip decompression (inflate.h), written from RFC 1951 and RFC 1952. The decoder
 * keeps a 64-bit bit buffer refilled with unaligned 8-byte loads; one lookup in an 11-bit table
 * (subtables for longer codes) yields a literal or a length whose entry carries the bits to
 * consume and its extra-bits count; matches are copied in overlapping words. A fast loop runs
 * while the input and the output have room for an iteration's worst case; near either end a
 * careful path decodes one symbol at a time and, when the input runs out, stops before a symbol
 * it cannot finish, to resume when more input comes. Decoded bytes land in a buffer that keeps
 * the 32 KiB window in front of them and are copied out to the caller. */
#include "harness/base/inflate.h"
#include "harness/base/crc32.h"
#include "harness/base/huff.h"
#include "harness/base/pinflate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    WSIZE = 32768,        /* deflate's window */
    OUT_ROOM = 256 << 10, /* decoded bytes between two slides of the window */
    OUT_SLACK = 64,       /* word copies write up to 15 bytes past a match's end */
    IN_DEFAULT = 256 << 10,
    PAR_MIN_FILE = 4 << 20, /* compressed bytes from which the parallel decoder may pay */
    LBITS = HC_HUFF_LBITS,
    DBITS = HC_HUFF_DBITS,
    PBITS = HC_HUFF_PBITS,
    LTAB = HC_HUFF_LTAB,
    DTAB = HC_HUFF_DTAB,
    FAST_IN = 32,      /* input one fast iteration may read: two refills of 8 bytes, with margin */
    FAST_OUT = 2 + 258, /* output it may write (before a copy's overrun): two literals and a match */
    MAX_MATCH = 258,
};

/* huff.h's entry flags, by short names. */
#define E_LIT HC_HUFF_LIT
#define E_EOB HC_HUFF_EOB
#define E_SUB HC_HUFF_SUB
#define E_BAD HC_HUFF_BAD

enum { S_MAGIC, S_HEAD, S_XLEN, S_EXTRA, S_NAME, S_COMMENT, S_HCRC, S_BLOCK, S_STORED_LEN, S_STORED,
       S_DYN, S_DYN_PRE, S_DYN_LENS, S_HUFF, S_TRAILER, S_DONE };
enum { R_FULL = 1, R_INPUT, R_END, R_ERR, R_PAR }; /* 0: go on with the next state; R_PAR: the first
                                                     * block, where the parallel decoder may start */

struct hc_inflate {
    int fd;
    char *name;
    int mode; /* -1 unknown yet, 0 passed through, 1 gzip */
    /* input: [ip, iend) not yet taken; in_base bytes of the file lie before in[0] */
    unsigned char *in;
    size_t in_cap;
    const unsigned char *ip, *iend;
    uint64_t in_base;
    int in_eof;
    /* bits taken from the input and not yet used, lowest first; above bitcnt the buffer may
     * hold copies of the next input bytes (the word refill's), never anything else */
    uint64_t bitbuf;
    unsigned bitcnt;
    /* output: [out, out_end) plus slack; [rd, op) decoded and not yet handed out; [hist, op)
     * this member's bytes a distance may reach; [crcp, op) not yet in the CRC */
    unsigned char *out, *out_end, *op, *rd, *hist, *crcp;
    uint64_t out_total; /* bytes decoded before crcp, all members */
    /* state */
    int st, final, fixed_built;
    unsigned flags, count, left, member;
    uint32_t crc, isize, hcrc;
    unsigned char hbuf[10];
    unsigned hlit, hdist, hclen, idx;
    unsigned char lens[320], plens[19];
    int failed;
    hc_err fail;
    uint32_t ltmpl[288], dtmpl[32]; /* each symbol's entry, less its code length */
    uint32_t pt[1 << PBITS];
    uint32_t lt[LTAB], dt[DTAB];
    /* the parallel decoder (pinflate.h), for the first member's blocks */
    int par_threads; /* 0: never */
    size_t par_chunk;
    int par_tried;
    hc_pinflate *par;
    const unsigned char *pp, *pe; /* its piece being handed out */
    int par_used, par_redone;     /* its counts, once it has ended */
};

static uint64_t decoded(const hc_inflate *z) { return z->out_total + (uint64_t)(z->op - z->crcp); }

/* The compressed offset of the next bit to decode (the byte holding it). */
static uint64_t in_offset(const hc_inflate *z)
{
    return z->in_base + (uint64_t)(z->ip - z->in) - z->bitcnt / 8;
}

static const char *offset_word(const hc_inflate *z) { return z->mode == 1 ? "uncompressed offset" : "offset"; }

/* Records what ended the data; returns R_ERR. The bytes decoded before it are handed out first. */
static int failf(hc_inflate *z, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(hc_inflate *z, int code, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    z->failed = 1;
    hc_err_set(&z->fail, code, "%s: %s %llu: %s", z->name, offset_word(z), (unsigned long long)decoded(z), what);
    return R_ERR;
}

static int corrupt(hc_inflate *z, const char *what)
{
    return failf(z, HC_EFORMAT, "corrupt gzip data (member %u, compressed offset %llu): %s", z->member,
                 (unsigned long long)in_offset(z), what);
}

/* Tops the bit buffer up a byte at a time to n (<= 56) bits; 0 when the input ran out first. */
static inline int need(hc_inflate *z, unsigned n)
{
    while (z->bitcnt < n) {
        if (z->ip == z->iend)
            return 0;
        z->bitbuf |= (uint64_t)*z->ip++ << z->bitcnt;
        z->bitcnt += 8;
    }
    return 1;
}

static inline void drop(hc_inflate *z, unsigned n)
{
    z->bitbuf >>= n;
    z->bitcnt -= n;
}

/* The next whole byte (the bit buffer is byte-aligned); 0 when the input ran out. */
static inline int get_byte(hc_inflate *z, unsigned *b)
{
    if (!need(z, 8))
        return 0;
    *b = (unsigned)(z->bitbuf & 0xff);
    drop(z, 8);
    return 1;
}

/* A header byte, added to the header's CRC. */
static inline int head_byte(hc_inflate *z, unsigned *b)
{
    if (!get_byte(z, b))
        return 0;
    unsigned char c = (unsigned char)*b;
    z->hcrc = hc_crc32(z->hcrc, &c, 1);
    return 1;
}

static void crc_update(hc_inflate *z)
{
    size_t n = (size_t)(z->op - z->crcp);
    if (n) {
        z->crc = hc_crc32(z->crc, z->crcp, n);
        z->isize += (uint32_t)n;
        z->out_total += n;
        z->crcp = z->op;
    }
}

/* The Huffman-coded data of a block, until its end-of-block code (0, the state set to what
 * follows), the output's room or the input runs out, or a fault. */
static int huff(hc_inflate *z)
{
    const uint32_t *lt = z->lt, *dt = z->dt;
    uint64_t bb = z->bitbuf;
    unsigned bc = z->bitcnt;
    const unsigned char *ip = z->ip, *iend = z->iend;
    unsigned char *op = z->op, *oend = z->out_end, *hist = z->hist;
    unsigned char *ofast = oend - FAST_OUT;
    const char *bad = NULL;
    int r;
#define SAVE() (z->bitbuf = bb, z->bitcnt = bc, z->ip = ip, z->op = op)
    /* Branch-free refill to 56-63 bits: the bytes that fit are counted, the part of one that
     * does not lies above bitcnt and is loaded again, the same, by the next refill. */
#define REFILL() (bb |= hc_huff_load64(ip) << bc, ip += (63 - bc) >> 3, bc |= 56)
    for (;;) {
        if (iend - ip >= FAST_IN && op <= ofast) {
            REFILL();
            uint32_t e = lt[bb & ((1u << LBITS) - 1)];
            if (e & E_LIT) { /* up to three literals on one refill: 3 x 11 bits */
                bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                e = lt[bb & ((1u << LBITS) - 1)];
                if (e & E_LIT) {
                    bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                    e = lt[bb & ((1u << LBITS) - 1)];
                    if (e & E_LIT) {
                        bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                        continue;
                    }
                }
                REFILL(); /* e stays valid: a refill only adds bits above those it was found by */
            }
            if (e & E_SUB) {
                e = lt[(e >> 16) + ((bb >> LBITS) & ((1u << (e & 0xff)) - 1))];
                if (e & E_LIT) {
                    bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
                    continue;
                }
            }
            if (e & (E_EOB | E_BAD)) {
                if (e & E_BAD) {
                    bad = "invalid literal/length code";
                    break;
                }
                bb >>= e & 0xff, bc -= e & 0xff;
                SAVE();
                z->st = z->final ? S_TRAILER : S_BLOCK;
                return 0;
            }
            /* a length and a distance: at most 15 + 5 and 15 + 13 bits of the 56 */
            unsigned tot = e & 0xff;
            unsigned len = (e >> 16) + (unsigned)((bb & ((1ull << tot) - 1)) >> ((e >> 8) & 0xf));
            bb >>= tot, bc -= tot;
            uint32_t d = hc_huff_lookup(dt, DBITS, bb);
            if (d & E_BAD) {
                bad = "invalid distance code";
                break;
            }
            tot = d & 0xff;
            size_t dist = (d >> 16) + (size_t)((bb & ((1ull << tot) - 1)) >> ((d >> 8) & 0xf));
            bb >>= tot, bc -= tot;
            if (dist > (size_t)(op - hist)) {
                bad = "invalid distance too far back";
                break;
            }
            op = hc_huff_copy(op, dist, len);
            continue;
        }
        /* The careful path: one symbol, all of whose bits are there before any is consumed. */
        if (oend - op < MAX_MATCH) {
            r = R_FULL;
            goto out;
        }
        if (!z->in_eof && iend - ip < FAST_IN && z->in_cap >= 4 * FAST_IN) {
            r = R_INPUT; /* more input first, then the fast loop again */
            goto out;
        }
        while (bc <= 48 && ip < iend) {
            bb |= (uint64_t)*ip++ << bc;
            bc += 8;
        }
        uint32_t e = hc_huff_lookup(lt, LBITS, bb);
        if (((e >> 8) & 0xf) > bc) {
            r = R_INPUT;
            goto out;
        }
        if (e & E_BAD) {
            bad = "invalid literal/length code";
            break;
        }
        if (e & E_LIT) {
            bb >>= e & 0xff, bc -= e & 0xff, *op++ = (unsigned char)(e >> 16);
            continue;
        }
        if (e & E_EOB) {
            bb >>= e & 0xff, bc -= e & 0xff;
            SAVE();
            z->st = z->final ? S_TRAILER : S_BLOCK;
            return 0;
        }
        unsigned tot = e & 0xff;
        if (tot > bc) {
            r = R_INPUT;
            goto out;
        }
        uint32_t d = hc_huff_lookup(dt, DBITS, bb >> tot);
        if (tot + ((d >> 8) & 0xf) > bc) {
            r = R_INPUT;
            goto out;
        }
        if (d & E_BAD) {
            bb >>= tot, bc -= tot; /* the offset the message gives is the distance code's */
            bad = "invalid distance code";
            break;
        }
        unsigned dtot = d & 0xff;
        if (tot + dtot > bc) {
            r = R_INPUT;
            goto out;
        }
        unsigned len = (e >> 16) + (unsigned)((bb & ((1ull << tot) - 1)) >> ((e >> 8) & 0xf));
        bb >>= tot, bc -= tot;
        size_t dist = (d >> 16) + (size_t)((bb & ((1ull << dtot) - 1)) >> ((d >> 8) & 0xf));
        bb >>= dtot, bc -= dtot;
        if (dist > (size_t)(op - hist)) {
            bad = "invalid distance too far back";
            break;
        }
        const unsigned char *from = op - dist; /* op[i - dist] would wrap the unsigned index */
        for (unsigned i = 0; i < len; i++)
            op[i] = from[i];
        op += len;
    }
    SAVE();
    return corrupt(z, bad);
out:
    SAVE();
    return r;
#undef SAVE
#undef REFILL
}

static int head_next(hc_inflate *z, int after)
{
    if (after < S_XLEN && (z->flags & 4))
        return S_XLEN;
    if (after < S_NAME && (z->flags & 8))
        return S_NAME;
    if (after < S_COMMENT && (z->flags & 16))
        return S_COMMENT;
    if (after < S_HCRC && (z->flags & 2))
        return S_HCRC;
    return S_BLOCK;
}

/* Runs the decoder until the output has no room left, the input runs out, the data ends or a
 * fault; the CRC then covers all decoded bytes. */
static int run_states(hc_inflate *z)
{
    static const unsigned char order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    unsigned b;
    for (;;)
        switch (z->st) {
        case S_MAGIC:
            if (!need(z, 16))
                return R_INPUT;
            if ((z->bitbuf & 0xffff) != 0x8b1f)
                return R_END; /* not another member: ignored, as zlib's gzread does */
            z->hcrc = hc_crc32(0, "\x1f\x8b", 2);
            drop(z, 16);
            z->count = 2;
            z->crc = 0;
            z->isize = 0;
            z->hist = z->op;
            z->member++;
            z->st = S_HEAD;
            break;
        case S_HEAD:
            while (z->count < 10) {
                if (!head_byte(z, &b))
                    return R_INPUT;
                z->hbuf[z->count++] = (unsigned char)b;
            }
            if (z->hbuf[2] != 8)
                return corrupt(z, "unknown compression method in the gzip header");
            z->flags = z->hbuf[3];
            if (z->flags & 0xe0)
                return corrupt(z, "unknown flags set in the gzip header");
            z->count = 0;
            z->st = head_next(z, S_HEAD);
            break;
        case S_XLEN:
            while (z->count < 2) {
                if (!head_byte(z, &b))
                    return R_INPUT;
                z->left = z->count++ ? z->left | b << 8 : b;
            }
            z->count = 0;
            z->st = S_EXTRA;
            break;
        case S_EXTRA:
            for (; z->left; z->left--)
                if (!head_byte(z, &b))
                    return R_INPUT;
            z->st = head_next(z, S_EXTRA);
            z->count = 0;
            break;
        case S_NAME:
        case S_COMMENT:
            do
                if (!head_byte(z, &b))
                    return R_INPUT;
            while (b);
            z->st = head_next(z, z->st);
            z->count = 0;
            break;
        case S_HCRC:
            while (z->count < 2) {
                if (!get_byte(z, &b))
                    return R_INPUT;
                z->left = z->count++ ? z->left | b << 8 : b;
            }
            if (z->left != (z->hcrc & 0xffff))
                return corrupt(z, "gzip header CRC mismatch");
            z->st = S_BLOCK;
            break;
        case S_BLOCK:
            if (z->par_threads && !z->par_tried && z->member == 1)
                return R_PAR;
            z->count = 0; /* for the trailer, after the last block */
            if (!need(z, 3))
                return R_INPUT;
            z->final = (int)(z->bitbuf & 1);
            b = (unsigned)(z->bitbuf >> 1) & 3;
            if (b == 3)
                return corrupt(z, "invalid block type");
            drop(z, 3);
            if (b == 1) {
                if (!z->fixed_built)
                    hc_huff_fixed(z->lt, z->dt, z->ltmpl, z->dtmpl);
                z->fixed_built = 1;
            }
            z->st = b == 0 ? S_STORED_LEN : b == 1 ? S_HUFF : S_DYN;
            break;
        case S_STORED_LEN:
            drop(z, z->bitcnt & 7);
            if (!need(z, 32))
                return R_INPUT;
            if ((z->bitbuf & 0xffff) != (~z->bitbuf >> 16 & 0xffff))
                return corrupt(z, "invalid stored block lengths");
            z->left = (unsigned)(z->bitbuf & 0xffff);
            drop(z, 32);
            z->st = S_STORED;
            break;
        case S_STORED:
            while (z->left) {
                size_t room = (size_t)(z->out_end - z->op);
                if (!room)
                    return R_FULL;
                if (z->bitcnt) {
                    *z->op++ = (unsigned char)z->bitbuf;
                    drop(z, 8);
                    z->left--;
                    continue;
                }
                z->bitbuf = 0; /* the input is read past it now */
                size_t k = (size_t)(z->iend - z->ip);
                if (!k)
                    return R_INPUT;
                k = k < room ? k : room;
                k = k < z->left ? k : z->left;
                memcpy(z->op, z->ip, k);
                z->op += k;
                z->ip += k;
                z->left -= (unsigned)k;
            }
            z->st = z->final ? S_TRAILER : S_BLOCK;
            break;
        case S_DYN:
            if (!need(z, 14))
                return R_INPUT;
            z->hlit = 257 + (unsigned)(z->bitbuf & 31);
            z->hdist = 1 + (unsigned)(z->bitbuf >> 5 & 31);
            z->hclen = 4 + (unsigned)(z->bitbuf >> 10 & 15);
            if (z->hlit > 286 || z->hdist > 30)
                return corrupt(z, "too many length or distance symbols");
            drop(z, 14);
            memset(z->plens, 0, sizeof z->plens);
            z->idx = 0;
            z->st = S_DYN_PRE;
            break;
        case S_DYN_PRE: {
            for (; z->idx < z->hclen; z->idx++) {
                if (!need(z, 3))
                    return R_INPUT;
                z->plens[order[z->idx]] = (unsigned char)(z->bitbuf & 7);
                drop(z, 3);
            }
            uint32_t tmpl[19];
            for (unsigned i = 0; i < 19; i++)
                tmpl[i] = i << 16;
            if (hc_huff_build(z->pt, PBITS, z->plens, 19, tmpl, 0))
                return corrupt(z, "invalid code lengths set");
            z->idx = 0;
            z->st = S_DYN_LENS;
            break;
        }
        case S_DYN_LENS: {
            unsigned total = z->hlit + z->hdist;
            while (z->idx < total) {
                need(z, 14);
                uint32_t e = z->pt[z->bitbuf & ((1u << PBITS) - 1)];
                unsigned cl = e & 0xff, sym = e >> 16;
                if (cl > z->bitcnt)
                    return R_INPUT;
                if (sym < 16) {
                    drop(z, cl);
                    z->lens[z->idx++] = (unsigned char)sym;
                    continue;
                }
                unsigned xb = sym == 16 ? 2 : sym == 17 ? 3 : 7;
                if (cl + xb > z->bitcnt)
                    return R_INPUT;
                unsigned rep = (sym == 18 ? 11 : 3) + (unsigned)(z->bitbuf >> cl & ((1u << xb) - 1));
                if ((sym == 16 && z->idx == 0) || z->idx + rep > total)
                    return corrupt(z, "invalid bit length repeat");
                drop(z, cl + xb);
                memset(z->lens + z->idx, sym == 16 ? z->lens[z->idx - 1] : 0, rep);
                z->idx += rep;
            }
            if (z->lens[256] == 0)
                return corrupt(z, "invalid code -- missing end-of-block");
            z->fixed_built = 0;
            if (hc_huff_build(z->lt, LBITS, z->lens, z->hlit, z->ltmpl, 1))
                return corrupt(z, "invalid literal/lengths set");
            if (hc_huff_build(z->dt, DBITS, z->lens + z->hlit, z->hdist, z->dtmpl, 1))
                return corrupt(z, "invalid distances set");
            z->st = S_HUFF;
            break;
        }
        case S_HUFF: {
            int r = huff(z);
            if (r != 0)
                return r;
            break;
        }
        case S_TRAILER:
            drop(z, z->bitcnt & 7);
            while (z->count < 8) {
                if (!get_byte(z, &b))
                    return R_INPUT;
                z->hbuf[z->count++] = (unsigned char)b;
            }
            crc_update(z);
            {
                uint32_t crc = (uint32_t)z->hbuf[0] | (uint32_t)z->hbuf[1] << 8 | (uint32_t)z->hbuf[2] << 16 |
                               (uint32_t)z->hbuf[3] << 24;
                uint32_t isize = (uint32_t)z->hbuf[4] | (uint32_t)z->hbuf[5] << 8 | (uint32_t)z->hbuf[6] << 16 |
                                 (uint32_t)z->hbuf[7] << 24;
                if (crc != z->crc)
                    return failf(z, HC_EFORMAT,
                                 "corrupt gzip data: CRC mismatch at the end of member %u (stored 0x%08x, "
                                 "decoded data 0x%08x)",
                                 z->member, (unsigned)crc, (unsigned)z->crc);
                if (isize != z->isize)
                    return failf(z, HC_EFORMAT,
                                 "corrupt gzip data: length mismatch at the end of member %u (stored %u, "
                                 "decoded %u, modulo 2^32)",
                                 z->member, (unsigned)isize, (unsigned)z->isize);
            }
            z->st = S_MAGIC;
            break;
        default:
            return R_END;
        }
}

static int run(hc_inflate *z)
{
    int r = run_states(z);
    crc_update(z);
    return r;
}

/* Moves what is left of the input to the front of its buffer and reads more behind it. 0, or
 * -1 on a read error (recorded). */
static int refill(hc_inflate *z)
{
    size_t rem = (size_t)(z->iend - z->ip);
    memmove(z->in, z->ip, rem);
    z->in_base += (uint64_t)(z->ip - z->in);
    z->ip = z->in;
    z->iend = z->in + rem;
    ssize_t got;
    do
        got = read(z->fd, z->in + rem, z->in_cap - rem);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        failf(z, HC_EIO, "read error: %s", strerror(errno));
        return -1;
    }
    if (got == 0)
        z->in_eof = 1;
    z->iend += got;
    return 0;
}

hc_inflate *hc_inflate_open(int fd, const char *name, size_t in_size, hc_err *err)
{
    hc_inflate *z = hc_calloc(1, sizeof *z, err, "gzip reader");
    if (!z)
        return NULL;
    z->fd = fd;
    z->mode = -1;
    z->in_cap = in_size ? (in_size < 2 ? 2 : in_size) : IN_DEFAULT; /* the magic bytes fit */
    z->name = strdup(name ? name : "(input)");
    z->in = malloc(z->in_cap);
    z->out = malloc(WSIZE + OUT_ROOM + OUT_SLACK);
    if (!z->name || !z->in || !z->out) {
        hc_inflate_close(z);
        hc_err_set(err, HC_ENOMEM, "%s: out of memory for the gzip reader's buffers", name ? name : "(input)");
        return NULL;
    }
    z->ip = z->iend = z->in;
    z->out_end = z->out + WSIZE + OUT_ROOM;
    z->op = z->rd = z->hist = z->crcp = z->out;
    hc_huff_templates(z->ltmpl, z->dtmpl);
    return z;
}

void hc_inflate_parallel(hc_inflate *z, int threads, size_t chunk)
{
    /* the decoder maps the file: its offsets are the file's, so only from its start */
    if (z->mode >= 0 || z->in_base || z->iend != z->in || lseek(z->fd, 0, SEEK_CUR) != 0)
        return;
    z->par_threads = threads >= 2 || chunk ? (threads < 1 ? 1 : threads) : 0;
    z->par_chunk = chunk;
}

void hc_inflate_par_counts(const hc_inflate *z, int *used, int *redone)
{
    *used = z->par_used;
    *redone = z->par_redone;
    if (z->par)
        hc_pinflate_counts(z->par, used, redone);
}

void hc_inflate_close(hc_inflate *z)
{
    if (!z)
        return;
    hc_pinflate_free(z->par);
    free(z->in);
    free(z->out);
    free(z->name);
    free(z);
}

/* Reads until the first two bytes are there (or the file ends) and decides gzip or not (not,
 * after a read error, which the next read reports). */
static void detect(hc_inflate *z)
{
    while (z->iend - z->ip < 2 && !z->in_eof && !z->failed)
        refill(z);
    z->mode = z->iend - z->ip >= 2 && z->ip[0] == 0x1f && z->ip[1] == 0x8b;
    z->st = S_MAGIC;
}

int hc_inflate_is_gzip(hc_inflate *z)
{
    if (z->mode < 0)
        detect(z);
    return z->mode;
}

static long read_direct(hc_inflate *z, unsigned char *buf, size_t n, hc_err *err)
{
    size_t got = (size_t)(z->iend - z->ip);
    got = got < n ? got : n;
    memcpy(buf, z->ip, got);
    z->ip += got;
    while (got < n && !z->in_eof) {
        ssize_t k = read(z->fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            z->out_total += got;
            failf(z, HC_EIO, "read error: %s", strerror(errno));
            z->out_total -= got;
            if (got)
                break;
            *err = z->fail;
            return -1;
        }
        if (k == 0)
            z->in_eof = 1;
        got += (size_t)k;
    }
    z->out_total += got;
    if (!got && z->failed) {
        *err = z->fail;
        return -1;
    }
    return (long)got;
}

/* At the first member's first block: starts the parallel decoder there when
 * the file is regular and holds at least two chunks' worth after this point; otherwise the
 * sequential decoder goes on alone. */
static void par_begin(hc_inflate *z)
{
    z->par_tried = 1;
    struct stat st;
    if (fstat(z->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SIZE_MAX)
        return;
    size_t len = (size_t)st.st_size;
    uint64_t bit = (z->in_base + (uint64_t)(z->ip - z->in)) * 8 - z->bitcnt;
    size_t least = z->par_chunk ? 2 * z->par_chunk : PAR_MIN_FILE;
    if (len < bit / 8 + least)
        return;
    hc_pinflate_opts o = {.threads = z->par_threads, .chunk = z->par_chunk};
    hc_err e = {0};
    z->par = hc_pinflate_start(z->fd, len, bit, &o, &e); /* NULL: the sequential decoder goes on */
}

/* The parallel decoder's next piece, taken into the CRC; when it has none left, the sequential
 * decoder takes over where it stopped (with its window), which reads on from there, checks the
 * trailer and reports any fault as if it had decoded everything itself. */
static void par_next(hc_inflate *z)
{
    const unsigned char *b;
    size_t n;
    if (hc_pinflate_next(z->par, &b, &n)) {
        z->crc = hc_crc32(z->crc, b, n);
        z->isize += (uint32_t)n;
        z->out_total += n;
        z->pp = b;
        z->pe = b + n;
        return;
    }
    uint64_t bit;
    int final;
    const unsigned char *win;
    size_t wl;
    hc_pinflate_where(z->par, &bit, &final, &win, &wl);
    memcpy(z->out, win, wl);
    z->hist = z->out;
    z->op = z->rd = z->crcp = z->out + wl;
    z->final = final;
    z->st = final ? S_TRAILER : S_BLOCK;
    z->count = 0;
    z->fixed_built = 0;
    z->in_base = bit / 8;
    z->ip = z->iend = z->in;
    z->in_eof = 0;
    z->bitbuf = 0;
    z->bitcnt = 0;
    z->pp = z->pe = NULL;
    hc_pinflate_counts(z->par, &z->par_used, &z->par_redone);
    hc_pinflate_free(z->par);
    z->par = NULL;
    if (lseek(z->fd, (off_t)(bit / 8), SEEK_SET) < 0) {
        failf(z, HC_EIO, "seek error: %s", strerror(errno));
        return;
    }
    if ((bit & 7) && refill(z) == 0) {
        if (!need(z, 8))
            failf(z, HC_EIO, "the file shrank while it was read");
        else
            drop(z, bit & 7);
    }
}

/* Copies up to n bytes of [from, end) to dst; the count. */
static size_t take(const unsigned char *from, const unsigned char *end, unsigned char *dst, size_t n)
{
    size_t k = (size_t)(end - from);
    k = k < n ? k : n;
    memcpy(dst, from, k);
    return k;
}

long hc_inflate_read(hc_inflate *z, void *buf, size_t n, hc_err *err)
{
    if (z->mode < 0)
        detect(z);
    if (z->mode == 0) {
        if (z->failed && z->ip == z->iend) {
            if (err)
                *err = z->fail;
            return -1;
        }
        return read_direct(z, buf, n, err);
    }
    unsigned char *dst = buf;
    size_t got = 0;
    while (got < n) {
        if (z->pp < z->pe) {
            size_t k = take(z->pp, z->pe, dst + got, n - got);
            z->pp += k, got += k;
            continue;
        }
        if (z->par) {
            par_next(z);
            continue;
        }
        if (z->rd < z->op) {
            size_t k = take(z->rd, z->op, dst + got, n - got);
            z->rd += k, got += k;
            continue;
        }
        if (z->failed || z->st == S_DONE)
            break;
        if (z->out_end - z->op < OUT_ROOM / 4) { /* keep the window, make room behind it */
            size_t shift = (size_t)(z->op - WSIZE - z->out);
            memmove(z->out, z->op - WSIZE, WSIZE);
            z->hist = (size_t)(z->hist - z->out) < shift ? z->out : z->hist - shift;
            z->op -= shift;
            z->rd = z->crcp = z->op;
        }
        int r = run(z);
        if (r == R_PAR)
            par_begin(z);
        else if (r == R_END)
            z->st = S_DONE;
        else if (r == R_INPUT) {
            if (!z->in_eof)
                refill(z);
            else if (z->st == S_MAGIC)
                z->st = S_DONE; /* the end of the file, or one stray byte after a member */
            else
                failf(z, HC_EFORMAT, "truncated gzip data: the file ends inside %s of member %u (after compressed byte %llu)",
                      z->st < S_BLOCK ? "the gzip header" : z->st == S_TRAILER ? "the gzip trailer" : "the deflate data",
                      z->member, (unsigned long long)in_offset(z));
        }
    }
    if (got)
        return (long)got;
    if (z->failed) {
        if (err)
            *err = z->fail;
        return -1;
    }
    return 0;
}
