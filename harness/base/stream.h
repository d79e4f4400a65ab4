/* Byte streams over plain or gzip'd files (gzip told by its magic bytes on read; a large one
 * decoded on several threads), read through bounded buffers so no file is ever decompressed
 * whole into memory, and output files
 * written atomically (temporary file in the same directory, renamed on commit), gzip'd
 * when the name ends in ".gz". */
#ifndef HC_STREAM_H
#define HC_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"

typedef struct hc_istream hc_istream;

/* Opens path for reading ("-" is standard input). Returns NULL and fills err on failure. */
hc_istream *hc_istream_open(const char *path, hc_err *err);
/* A stream over memory the caller owns and keeps alive until hc_istream_close. */
hc_istream *hc_istream_mem(const void *data, size_t len, const char *name, hc_err *err);
void hc_istream_close(hc_istream *s);

/* Reads exactly n bytes. Returns 0, or -1 on EOF before n bytes or a read error (err names
 * the file and the offset). */
int hc_istream_read(hc_istream *s, void *buf, size_t n, hc_err *err);
/* Reads up to n bytes; returns the count (0 at EOF) or -1 on a read error. */
long hc_istream_read_some(hc_istream *s, void *buf, size_t n, hc_err *err);

/* Reads one line (without its '\n' or '\r\n') into a buffer the stream owns and that stays
 * valid until the next call. Returns the length, -1 at clean EOF (err untouched: err->code
 * stays HC_OK), or -1 with err set on a read error or a line longer than max_len (HC_ELIMIT). */
long hc_istream_getline(hc_istream *s, char **line, size_t max_len, hc_err *err);

/* Decompressed bytes consumed so far, and the 1-based number of the line last returned. */
uint64_t hc_istream_offset(const hc_istream *s);
long hc_istream_lineno(const hc_istream *s);
/* How messages name hc_istream_offset: "uncompressed offset" in a gzip'd file (the offset is in
 * the decompressed bytes, not the file's), "offset" in a plain file or memory. */
const char *hc_istream_offset_word(const hc_istream *s);
const char *hc_istream_name(const hc_istream *s);

typedef struct hc_ostream hc_ostream;

/* Creates a temporary file beside path ("-" is standard output, not atomic). Nothing appears
 * at path until hc_ostream_commit. */
hc_ostream *hc_ostream_open(const char *path, hc_err *err);
int hc_ostream_write(hc_ostream *s, const void *buf, size_t n, hc_err *err);
/* Writes text and a '\n' (a JSON Lines record). */
int hc_ostream_write_line(hc_ostream *s, const char *text, hc_err *err);
int hc_ostream_printf(hc_ostream *s, hc_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Flushes, fsyncs and renames into place, then frees s. On failure the temporary file is
 * removed, path is untouched, and s is freed all the same. */
int hc_ostream_commit(hc_ostream *s, hc_err *err);
/* Removes the temporary file and frees s. */
void hc_ostream_abort(hc_ostream *s);

/* Reads a whole (small) file into a NUL-terminated malloc'd buffer, refusing more than max_len. */
char *hc_read_file(const char *path, size_t max_len, size_t *len_out, hc_err *err);

#endif
