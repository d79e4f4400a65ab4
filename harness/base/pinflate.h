/* Parallel decoding of one deflate stream (RFC 1951) in a file mapped into memory, as the gzip
 * reader (inflate.h) uses it for large files. The compressed bytes are cut into chunks; a worker
 * looks for the first position at or after its chunk's start where a dynamic or stored block
 * header parses, and decodes from there, with the 32 KiB before it unknown (what refers back
 * into them is recorded as markers), to the first block boundary at or after the next chunk's
 * start. In order, a chunk's output is used only where it starts where the previous one's
 * decoding stopped, its markers replaced from the output before it; any other chunk is decoded
 * again in order with the window known, and where that fails too the stream is handed back
 * (where()) so that the caller's sequential decoder continues there and reports the fault
 * itself. Decoding from a true block boundary does not depend on the window's bytes, so what is
 * handed out is exactly the sequential decoder's output. Memory: the chunks in flight (a worker
 * each, one ahead) and their input's pages. */
#ifndef HC_PINFLATE_H
#define HC_PINFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"

typedef struct hc_pinflate hc_pinflate;

typedef struct hc_pinflate_opts {
    int threads;  /* workers, >= 1 */
    size_t chunk; /* compressed bytes a chunk (0: from the length and the threads) */
} hc_pinflate_opts;

/* Starts decoding the regular file fd (borrowed; len bytes long), mapped into memory, at bit
 * start_bit, the first block header of a stream whose output so far is empty. The mapping's
 * pages are given back as the output passes them. NULL with err when it cannot map the file,
 * allocate or start a thread. */
hc_pinflate *hc_pinflate_start(int fd, size_t len, uint64_t start_bit, const hc_pinflate_opts *o, hc_err *err);

/* The next piece of the output in order: 1 with *buf and *n (valid until the next call), or 0
 * when the parallel part is over (the final block decoded, or a point the sequential decoder
 * must take from). */
int hc_pinflate_next(hc_pinflate *p, const unsigned char **buf, size_t *n);

/* After next returned 0: the bit where decoding goes on (the next block header, or after the
 * final block's end), whether the final block was decoded, and the last (up to 32 KiB) bytes
 * handed out (the window). */
void hc_pinflate_where(const hc_pinflate *p, uint64_t *bit, int *final, const unsigned char **win, size_t *win_len);

/* Chunks whose output was taken as a worker decoded it, and chunks decoded again in order. */
void hc_pinflate_counts(const hc_pinflate *p, int *used, int *redone);

/* Stops the workers (joined before it returns) and frees everything. */
void hc_pinflate_free(hc_pinflate *p);

#endif
