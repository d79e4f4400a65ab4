/* The pipe protocol's replies (docs/PROTOCOL.md) parsed from any byte source: the pipe: backend
 * reads them from its program, tests and fuzz targets from memory. Internal to backends/. */
#ifndef HC_PIPE_H
#define HC_PIPE_H

#include <stddef.h>

#include "refs/engine.h"
#include "harness/base/err.h"

/* HC_PIPE_VERSION: the header's version (its layout has not changed since version 1);
 * HC_PIPE_VERSION_TAPS: the version a program answers to send taps (docs/PROTOCOL.md). */
enum { HC_PIPE_VERSION = 1, HC_PIPE_VERSION_TAPS = 2, HC_PIPE_MAX_MESSAGE = 65536, HC_PIPE_MAX_TAPS = 4096,
       HC_PIPE_MAX_TAP_NAME = 255 };

/* One tap a version-2 program announced after its handshake. */
typedef struct hc_pipe_tapdesc {
    char name[HC_PIPE_MAX_TAP_NAME + 1];
    int fmt;    /* enum hc_tap_fmt */
    int layout; /* 0: [B][C][HW]; 1: [B][HW][C] (wire layouts, docs/PROTOCOL.md) */
    int channels, hw;
} hc_pipe_tapdesc;

/* Reads exactly n bytes into buf, or returns -1 with err (short read, timeout, ...). */
typedef int (*hc_pipe_read_fn)(void *ctx, void *buf, size_t n, hc_err *err);

/* The handshake reply: "HCPR", u32 version, u32 status, u32 length, message. Returns 0 when the
 * program accepted the net, -1 with err otherwise (malformed reply, another version, a refusal;
 * a refusal whose message starts with "skip" is an HC_BACKEND_SKIP message). After -1 the
 * program must be stopped. */
int hc_pipe_parse_handshake(hc_pipe_read_fn rd, void *ctx, hc_err *err);
/* The same, also giving the version the program accepted with (1, or 2: its tap list follows). */
int hc_pipe_parse_handshake_v(hc_pipe_read_fn rd, void *ctx, int *version, hc_err *err);
/* The same, also giving an accepting program's message (what it says it is: a name, a version)
 * into msg (cap bytes, printable text; "" when none). */
int hc_pipe_parse_handshake_msg(hc_pipe_read_fn rd, void *ctx, int *version, char *msg, size_t cap, hc_err *err);

/* A version-2 program's tap list (u32 count, then each tap's name, format, layout, channels,
 * hw) for a buffer of `area` points and batches of max_batch rows. *d is malloc'd (NULL when
 * n is 0). -1 with err on a malformed list (stop the program). */
int hc_pipe_parse_taplist(hc_pipe_read_fn rd, void *ctx, size_t area, hc_pipe_tapdesc **d, int *n, hc_err *err);

/* The taps after a reply's heads (to an "HCPT" request): every announced tap's [batch] rows, in
 * the list's order, into ts (reset first). scratch holds the largest tap's bytes. -1 with err
 * on a malformed or failed read. */
int hc_pipe_parse_taps(hc_pipe_read_fn rd, void *ctx, int batch, const hc_pipe_tapdesc *d, int n,
                       unsigned char *scratch, hc_tapset *ts, hc_err *err);

/* The reply to a batch of `batch` rows over `area` points with policy_c policy and score_c
 * score channels: "HCPO", u32 status, then either u32 batch and the heads (written into out,
 * which holds at least batch rows) or an error message. scratch holds 4 bytes per float of the
 * heads. Returns 0 with out->batch set; 1 when the program reported a failure (err carries its
 * message; the stream stays in sync); -1 with err on a malformed reply (stop the program). */
int hc_pipe_parse_reply(hc_pipe_read_fn rd, void *ctx, int batch, size_t area, size_t policy_c, size_t score_c,
                        unsigned char *scratch, hc_raw_heads *out, hc_err *err);

#endif
