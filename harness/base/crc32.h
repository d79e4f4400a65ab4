/* CRC-32 (gzip's, zlib's crc32), folded with carry-less multiplies where the CPU has them: the gzip reader's check of every decompressed byte. */
#ifndef HC_CRC32_H
#define HC_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib's crc32(crc, p, n), the same value (and chaining: crc is the value of the bytes before
 * p, 0 for none): on x86 with PCLMULQDQ (SSE4.1) and on ARMv8 with its CRC32 instructions,
 * several times zlib's speed; elsewhere zlib's crc32 itself. */
uint32_t hc_crc32(uint32_t crc, const void *p, size_t n);

/* How hc_crc32 runs in this build: "pclmul", "armv8-crc" or "zlib". */
const char *hc_crc32_isa(void);

#endif
