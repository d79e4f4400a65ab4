/* Deflate's Huffman decoding tables (RFC 1951 3.2.2, 3.2.5-3.2.7): built from code lengths,
 * looked up by the bits as they arrive. Shared by the streaming reader (inflate.c) and the
 * parallel chunk decoder (pinflate.c), so that both accept and refuse exactly the same codes. */
#ifndef HC_HUFF_H
#define HC_HUFF_H

#include <stdint.h>
#include <string.h>

/* Table entries. Bits 0-7: the bits to consume (the code's length plus its extra bits; for a
 * subtable pointer, the subtable's index bits); 8-11: the code's length; 12-15: flags; 16-31:
 * the literal, the length or distance base, or the subtable's first index. No flag: a length or
 * a distance. */
#define HC_HUFF_LIT 0x1000u
#define HC_HUFF_EOB 0x2000u
#define HC_HUFF_SUB 0x4000u
#define HC_HUFF_BAD 0x8000u

enum {
    HC_HUFF_LBITS = 11, /* index bits of the literal/length table */
    HC_HUFF_DBITS = 8,  /* of the distance table */
    HC_HUFF_PBITS = 7,  /* of the code-length code's table (its codes are at most 7 bits) */
    /* Subtables: at most one per symbol longer than the index bits, 2^(15 - index bits) entries. */
    HC_HUFF_LTAB = (1 << HC_HUFF_LBITS) + 288 * (1 << (15 - HC_HUFF_LBITS)),
    HC_HUFF_DTAB = (1 << HC_HUFF_DBITS) + 32 * (1 << (15 - HC_HUFF_DBITS)),
};

/* Each symbol's entry less its code length: literals, end of block and lengths 3-258 from codes
 * 257-285; distances 1-32768 from codes 0-29; 286, 287, 30 and 31 decode as invalid. */
void hc_huff_templates(uint32_t ltmpl[288], uint32_t dtmpl[32]);

/* Builds the decoding table of the canonical code whose lengths are lens[0..n) into t (rbits
 * index bits). tmpl: each symbol's entry less its length. An over-subscribed code is refused, and
 * so is an incomplete one unless allow_single and it is one code of one bit (as zlib accepts);
 * unused entries decode as HC_HUFF_BAD. Returns 0 or -1. */
int hc_huff_build(uint32_t *t, unsigned rbits, const unsigned char *lens, unsigned n, const uint32_t *tmpl,
                  int allow_single);

/* The fixed codes' tables (block type 1). */
void hc_huff_fixed(uint32_t *lt, uint32_t *dt, const uint32_t *ltmpl, const uint32_t *dtmpl);

/* The entry for the code at the start of bb (a subtable's entry where the main one points to
 * one). */
static inline uint32_t hc_huff_lookup(const uint32_t *t, unsigned rbits, uint64_t bb)
{
    uint32_t e = t[bb & ((1u << rbits) - 1)];
    if (e & HC_HUFF_SUB)
        e = t[(e >> 16) + ((bb >> rbits) & ((1u << (e & 0xff)) - 1))];
    return e;
}

/* 8 input bytes, the first lowest (the bit buffer's refill). */
static inline uint64_t hc_huff_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* A match: len (3-258) bytes from dist back, in overlapping words: writes up to 15 bytes past
 * op + len (the caller's slack). Returns op + len. */
static inline unsigned char *hc_huff_copy(unsigned char *op, size_t dist, unsigned len)
{
    const unsigned char *src = op - dist;
    unsigned char *end = op + len;
    if (dist >= 16)
        do {
            memcpy(op, src, 16);
            op += 16, src += 16;
        } while (op < end);
    else if (dist >= 8)
        do {
            memcpy(op, src, 8);
            op += 8, src += 8;
        } while (op < end);
    else if (dist == 1) {
        uint64_t v = 0x0101010101010101ull * *src;
        do {
            memcpy(op, &v, 8);
            op += 8;
        } while (op < end);
    } else
        do
            *op++ = *src++;
        while (op < end);
    return end;
}

#endif
