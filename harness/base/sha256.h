/* SHA-256 (FIPS 180-4), for net identity (the sha256 of net configs) and reference-cache keys. */
#ifndef HC_SHA256_H
#define HC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"

typedef struct hc_sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t fill;
} hc_sha256;

void hc_sha256_init(hc_sha256 *s);
void hc_sha256_update(hc_sha256 *s, const void *data, size_t n);
/* Writes the 32-byte digest (big-endian words, as FIPS 180-4 prints it) into digest. */
void hc_sha256_final(hc_sha256 *s, unsigned char digest[32]);
/* Writes 64 lowercase hex digits and a NUL into hex[65]. */
void hc_sha256_final_hex(hc_sha256 *s, char hex[65]);
/* One-shot digest of a buffer. */
void hc_sha256_digest(const void *data, size_t n, unsigned char digest[32]);
/* The digest of a file's raw bytes (not decompressed). */
int hc_sha256_file(const char *path, char hex[65], hc_err *err);

#endif
