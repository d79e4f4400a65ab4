/* MD5 (RFC 1321), only to rebuild KataGo's seeded generator (core/rand.cpp) bit for bit: not for integrity. */
#ifndef HC_MD5_H
#define HC_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct hc_md5 {
    uint32_t h[4];
    uint64_t len;
    unsigned char buf[64];
    size_t fill;
} hc_md5;

void hc_md5_init(hc_md5 *s);
void hc_md5_update(hc_md5 *s, const void *data, size_t n);
/* The digest as RFC 1321 prints it (bytes of the four state words, little-endian). */
void hc_md5_final(hc_md5 *s, unsigned char digest[16]);
/* The four state words themselves: what KataGo's seeding reads (its hash[0] is words[0]). */
void hc_md5_words(const void *data, size_t n, uint32_t words[4]);

#endif
