/* Deflate's Huffman decoding tables (huff.h), written from RFC 1951. */
#include "harness/base/huff.h"

#include <string.h>

void hc_huff_templates(uint32_t ltmpl[288], uint32_t dtmpl[32])
{
    for (unsigned i = 0; i < 256; i++)
        ltmpl[i] = HC_HUFF_LIT | i << 16;
    ltmpl[256] = HC_HUFF_EOB;
    for (unsigned i = 0, base = 3; i < 28; i++) {
        unsigned xb = i < 8 ? 0 : (i - 4) / 4;
        ltmpl[257 + i] = base << 16 | xb;
        base += 1u << xb;
    }
    ltmpl[285] = 258u << 16;
    ltmpl[286] = ltmpl[287] = HC_HUFF_BAD;
    for (unsigned i = 0, base = 1; i < 30; i++) {
        unsigned xb = i < 4 ? 0 : (i - 2) / 2;
        dtmpl[i] = base << 16 | xb;
        base += 1u << xb;
    }
    dtmpl[30] = dtmpl[31] = HC_HUFF_BAD;
}

/* The bit-reversed successor of a bit-reversed code of len bits: deflate's codes go in most
 * significant bit first, the tables are indexed by the bits as they arrive. */
static inline unsigned reversed_next(unsigned rev, unsigned len)
{
    unsigned bit = 1u << (len - 1);
    while (rev & bit)
        bit >>= 1;
    return bit ? (rev & (bit - 1)) | bit : 0;
}

int hc_huff_build(uint32_t *t, unsigned rbits, const unsigned char *lens, unsigned n, const uint32_t *tmpl,
                 int allow_single)
{
    unsigned count[16] = {0}, offs[17];
    unsigned short sorted[320];
    for (unsigned i = 0; i < n; i++)
        count[lens[i]]++;
    count[0] = 0;
    int left = 1;
    unsigned maxlen = 0;
    for (unsigned len = 1; len <= 15; len++) {
        left = 2 * left - (int)count[len];
        if (left < 0)
            return -1;
        if (count[len])
            maxlen = len;
    }
    if (left > 0 && maxlen > 0 && !(allow_single && maxlen == 1))
        return -1;
    if (maxlen == 0 && !allow_single)
        return -1;
    unsigned size = 1u << rbits;
    if (left > 0) /* a complete code fills every entry; blocks are many (one per ~16 KB): skip the rest */
        for (unsigned i = 0; i < size; i++)
            t[i] = HC_HUFF_BAD | (rbits << 8) | rbits;
    offs[1] = 0;
    for (unsigned len = 1; len <= 15; len++)
        offs[len + 1] = offs[len] + count[len];
    for (unsigned i = 0; i < n; i++)
        if (lens[i])
            sorted[offs[lens[i]]++] = (unsigned short)i;
    /* rev: the canonical code (RFC 1951 3.2.2) bit-reversed; going one bit longer appends a 0,
     * which leaves the reversed value as it is */
    unsigned sbits = maxlen > rbits ? maxlen - rbits : 0, next = size, rev = 0, k = 0;
    int prefix = -1;
    unsigned sub = 0;
    for (unsigned len = 1; len <= maxlen; len++)
        for (unsigned c = 0; c < count[len]; c++, rev = reversed_next(rev, len)) {
            unsigned sym = sorted[k++];
            uint32_t e = (tmpl[sym] & ~0xffu) | (len << 8) | (len + (tmpl[sym] & 0xff));
            if (len <= rbits) {
                for (unsigned i = rev; i < size; i += 1u << len)
                    t[i] = e;
                continue;
            }
            /* codes sharing their first rbits bits are consecutive in canonical order */
            if ((int)(rev & (size - 1)) != prefix) {
                prefix = (int)(rev & (size - 1));
                sub = next;
                next += 1u << sbits;
                for (unsigned i = 0; left > 0 && i < 1u << sbits; i++)
                    t[sub + i] = HC_HUFF_BAD | (maxlen << 8) | maxlen;
                t[prefix] = HC_HUFF_SUB | (sub << 16) | sbits;
            }
            for (unsigned i = rev >> rbits; i < 1u << sbits; i += 1u << (len - rbits))
                t[sub + i] = e;
        }
    return 0;
}

void hc_huff_fixed(uint32_t *lt, uint32_t *dt, const uint32_t *ltmpl, const uint32_t *dtmpl)
{
    unsigned char l[288];
    memset(l, 8, 144);
    memset(l + 144, 9, 112);
    memset(l + 256, 7, 24);
    memset(l + 280, 8, 8);
    hc_huff_build(lt, HC_HUFF_LBITS, l, 288, ltmpl, 1);
    memset(l, 5, 32);
    hc_huff_build(dt, HC_HUFF_DBITS, l, 32, dtmpl, 1);
}
