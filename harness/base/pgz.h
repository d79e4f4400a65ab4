/* A gzip file written by several threads: one gzip member whose deflate stream is cut into
 * blocks compressed side by side (pigz's scheme), so that writing a large outputs file does not
 * hold up the thread that produces it. The bytes depend only on the data: the blocks are cut at
 * fixed offsets, each primed with the 32 KiB before it, whatever the thread count. */
#ifndef HC_PGZ_H
#define HC_PGZ_H

#include <stddef.h>

#include "harness/base/err.h"

typedef struct hc_pgz hc_pgz;

/* Uncompressed bytes per block. */
#define HC_PGZ_BLOCK ((size_t)128 << 10)

/* Starts a gzip stream on fd (borrowed: never closed here); name is for messages. threads: the
 * compressing threads, 0 for the host's processors (at most 4), 1 for none (each block is
 * compressed by the writing thread). Threads start with the second block: a small file never
 * starts one. */
hc_pgz *hc_pgz_open(int fd, const char *name, int threads, hc_err *err);
int hc_pgz_write(hc_pgz *z, const void *buf, size_t n, hc_err *err);
/* Compresses and writes what is left and the gzip trailer, then frees z (on failure too). */
int hc_pgz_finish(hc_pgz *z, hc_err *err);
/* Stops the threads and frees z; what was written stays as it is. */
void hc_pgz_abort(hc_pgz *z);

#endif
