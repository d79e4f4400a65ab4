/* Streaming gzip decompression for reading inputs: RFC 1952 members holding RFC 1951 deflate
 * data, decoded from a file descriptor through a bounded input buffer into the caller's buffer
 * in pieces (the 32 KiB window kept between calls), several members concatenated, each one's
 * CRC-32 and length checked at its end. A file that does not start with the gzip magic bytes is
 * passed through as is; after a member, bytes that do not start another one are ignored (zlib's
 * gzread does the same). */
#ifndef HC_INFLATE_H
#define HC_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"

typedef struct hc_inflate hc_inflate;

/* A reader over fd (borrowed: the caller closes it after hc_inflate_close). name is for
 * messages. in_size: the compressed read buffer's size in bytes (0: 256 KiB; tests give tiny
 * ones so that the decoder stops for input anywhere). */
hc_inflate *hc_inflate_open(int fd, const char *name, size_t in_size, hc_err *err);
void hc_inflate_close(hc_inflate *z);

/* Lets the first member's deflate data be decoded on threads threads (harness/base/pinflate.h)
 * when fd is a regular file, read from its start, with at least 4 MiB (or two chunks) of it
 * left at the first block; chunk: compressed bytes a chunk (0: chosen from the size and the
 * threads; tests give small ones). What is read, and every error, is the sequential
 * decoder's. Call before the first read; threads < 2 with chunk 0 leaves it sequential. */
void hc_inflate_parallel(hc_inflate *z, int threads, size_t chunk);

/* How the parallel decoder went: chunks whose output it took as its threads decoded them, and
 * chunks it decoded again in order (a false start, the final block); 0 and 0 where it did not
 * run. */
void hc_inflate_par_counts(const hc_inflate *z, int *used, int *redone);

/* Reads up to n decompressed bytes (fewer only at the end of the data or before an error): the
 * count, 0 at the end, or -1 with err naming the file, the uncompressed offset and what is
 * wrong (truncated, an invalid code, a CRC mismatch) or the read error. Bytes decoded before
 * a fault are returned first; the error comes with the next call. */
long hc_inflate_read(hc_inflate *z, void *buf, size_t n, hc_err *err);

/* 1 when the file is gzip'd, 0 when it is passed through (decided on the first two bytes: this
 * reads them when no read has yet). */
int hc_inflate_is_gzip(hc_inflate *z);

#endif
