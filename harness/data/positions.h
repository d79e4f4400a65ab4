/* Positions files: one JSON object per line (gzip'd when the name ends in .gz), the format of
 * ../shared/golden/README.md. One reader and one writer, side by side. */
#ifndef HC_POSITIONS_H
#define HC_POSITIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/base/err.h"
#include "harness/go/position.h"

/* Parses one JSON line. where names the place for errors ("file.jsonl:12"). Besides the fields'
 * types, what needs no game replay is checked here, where the file and line are known: the
 * board size (sizes.h's range), that the rules string parses, that komi agrees with it, and
 * that an initial encore phase comes with territory scoring. */
int hc_position_parse(const char *json, const char *where, hc_position *out, hc_err *err);
/* Formats one position as a JSON line (without '\n'); returns a malloc'd string. */
char *hc_position_format(const hc_position *p, hc_err *err);

typedef struct hc_posreader hc_posreader;
hc_posreader *hc_posreader_open(const char *path, hc_err *err);
/* Returns 1 with *out filled (caller frees with hc_position_free), 0 at EOF, -1 on error
 * (err names the file and line). */
int hc_posreader_next(hc_posreader *r, hc_position *out, hc_err *err);
void hc_posreader_close(hc_posreader *r);

/* Reads a whole positions file. *out is a malloc'd array the caller frees with
 * hc_positions_free. */
int hc_positions_load(const char *path, hc_position **out, size_t *n, hc_err *err);
void hc_positions_free(hc_position *ps, size_t n);

typedef struct hc_poswriter hc_poswriter;
hc_poswriter *hc_poswriter_open(const char *path, hc_err *err);
int hc_poswriter_write(hc_poswriter *w, const hc_position *p, hc_err *err);
/* Atomically puts the file in place and frees w. */
int hc_poswriter_commit(hc_poswriter *w, hc_err *err);
void hc_poswriter_abort(hc_poswriter *w);

#endif
