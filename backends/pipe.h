/* The pipe protocol's replies (docs/PROTOCOL.md) parsed from any byte source: the pipe: backend
 * reads them from its program, tests and fuzz targets from memory. Internal to backends/. */
#ifndef HC_PIPE_H
#define HC_PIPE_H

#include <stddef.h>

#include "engine.h"
#include "err.h"

enum { HC_PIPE_VERSION = 1, HC_PIPE_MAX_MESSAGE = 65536 };

/* Reads exactly n bytes into buf, or returns -1 with err (short read, timeout, ...). */
typedef int (*hc_pipe_read_fn)(void *ctx, void *buf, size_t n, hc_err *err);

/* The handshake reply: "HCPR", u32 version, u32 status, u32 length, message. Returns 0 when the
 * program accepted the net, -1 with err otherwise (malformed reply, another version, a refusal;
 * a refusal whose message starts with "skip" is an HC_BACKEND_SKIP message). After -1 the
 * program must be stopped. */
int hc_pipe_parse_handshake(hc_pipe_read_fn rd, void *ctx, hc_err *err);

/* The reply to a batch of `batch` rows over `area` points with policy_c policy and score_c
 * score channels: "HCPO", u32 status, then either u32 batch and the heads (written into out,
 * which holds at least batch rows) or an error message. scratch holds 4 bytes per float of the
 * heads. Returns 0 with out->batch set; 1 when the program reported a failure (err carries its
 * message; the stream stays in sync); -1 with err on a malformed reply (stop the program). */
int hc_pipe_parse_reply(hc_pipe_read_fn rd, void *ctx, int batch, size_t area, size_t policy_c, size_t score_c,
                        unsigned char *scratch, hc_raw_heads *out, hc_err *err);

#endif
