/* pipe:[@timeout=S @startup-timeout=S @model=PATH] COMMAND — a tensor backend in any language: halfcheck
 * starts COMMAND (split and $VAR-expanded as gtp: does, no shell), describes the net and the
 * buffer in a versioned header, and then sends batches of input rows and reads back raw heads,
 * so featurization and post-processing stay halfcheck's and only the arithmetic is the
 * program's. docs/PROTOCOL.md is the specification; examples/pipe_client.py a minimal client. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/extproc.h"
#include "backends/pipe.h"
#include "backends/specopts.h"
#include "harness/data/tensorfile.h"

typedef struct pipe_backend {
    char **argv;
    char cmdline[1024];
    double timeout_s, startup_timeout_s;
    const hc_net *net;
    char *model;
    int nx, ny, max_batch;
    hc_extproc proc;
    unsigned char *buf; /* one request or reply */
    size_t cap;
    int version;            /* the program's: 2 sends taps */
    hc_pipe_tapdesc *tapd;  /* the taps it announced */
    int n_taps;
    unsigned char *tapbuf;  /* one tap of a batch */
    char identity[1100];    /* the handshake's message and protocol version, "" before it */
    long rows, calls;       /* what it evaluated, and the time it took (hc_engine_stats) */
    double eval_s;
    int starts;
} pipe_backend;

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* float32 arrays in little-endian order (a no-op copy on little-endian hosts). */
static void put_floats(unsigned char *p, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        put_u32(p + 4 * i, u);
    }
}

static void get_floats(float *v, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = get_u32(p + 4 * i);
        memcpy(&v[i], &u, 4);
    }
}

static void pipe_close(void *inst)
{
    pipe_backend *b = inst;
    if (!b)
        return;
    hc_extproc_finish(&b->proc, 2.0);
    hc_extproc_free_argv(b->argv);
    free(b->model);
    free(b->buf);
    free(b->tapd);
    free(b->tapbuf);
    free(b);
}

/* The program's error text after a nonzero status: u32 length, bytes. */
static int read_message(hc_pipe_read_fn rd, void *ctx, char *msg, size_t cap, hc_err *err)
{
    unsigned char l4[4];
    if (rd(ctx, l4, 4, err))
        return -1;
    uint32_t len = get_u32(l4);
    if (len > HC_PIPE_MAX_MESSAGE)
        return hc_err_set(err, HC_EBACKEND, "malformed reply: a message of %u bytes (at most %d)", len,
                          HC_PIPE_MAX_MESSAGE);
    char *t = malloc(len + 1u);
    if (!t)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    if (rd(ctx, t, len, err)) {
        free(t);
        return -1;
    }
    t[len] = '\0';
    /* Printable text only: the message goes into reports and terminals. */
    for (uint32_t i = 0; i < len; i++)
        if ((unsigned char)t[i] < 0x20 && t[i] != '\0')
            t[i] = ' ';
    snprintf(msg, cap, "%s", t);
    free(t);
    return 0;
}

int hc_pipe_parse_handshake(hc_pipe_read_fn rd, void *ctx, hc_err *err)
{
    int v;
    return hc_pipe_parse_handshake_v(rd, ctx, &v, err);
}

int hc_pipe_parse_handshake_v(hc_pipe_read_fn rd, void *ctx, int *version_out, hc_err *err)
{
    char msg[1024];
    return hc_pipe_parse_handshake_msg(rd, ctx, version_out, msg, sizeof msg, err);
}

int hc_pipe_parse_handshake_msg(hc_pipe_read_fn rd, void *ctx, int *version_out, char *msg_out, size_t cap,
                                hc_err *err)
{
    unsigned char r[12];
    if (rd(ctx, r, 12, err))
        return -1;
    if (memcmp(r, "HCPR", 4) != 0)
        return hc_err_set(err, HC_EBACKEND,
                          "expected magic \"HCPR\", got bytes %02x %02x %02x %02x (is it a halfcheck pipe "
                          "program? it must not print anything else on stdout)", r[0], r[1], r[2], r[3]);
    uint32_t version = get_u32(r + 4), status = get_u32(r + 8);
    char msg[1024];
    if (read_message(rd, ctx, msg, sizeof msg, err))
        return -1;
    /* A refusal in another version than the header's is "I do not speak your version"; an
     * acceptance may come in version 1 or 2 (2: with taps). */
    int known = status == 0 ? version == HC_PIPE_VERSION || version == HC_PIPE_VERSION_TAPS : version == HC_PIPE_VERSION;
    if (!known)
        return hc_err_set(err, HC_EBACKEND, "protocol version mismatch: the program speaks version %u, halfcheck "
                          "speaks versions %d and %d (headers in version %d)%s%s%s", version, HC_PIPE_VERSION,
                          HC_PIPE_VERSION_TAPS, HC_PIPE_VERSION, msg[0] ? " (its message: " : "", msg,
                          msg[0] ? ")" : "");
    if (status != 0) {
        if (msg[0] && strstr(msg, "skip") == msg)
            return hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "the program declined: %s", msg);
        return hc_err_set(err, HC_EBACKEND, "the program refused the net: %s", msg[0] ? msg : "(no message)");
    }
    *version_out = (int)version;
    if (cap)
        snprintf(msg_out, cap, "%s", msg);
    return 0;
}

int hc_pipe_parse_taplist(hc_pipe_read_fn rd, void *ctx, size_t area, hc_pipe_tapdesc **d, int *n, hc_err *err)
{
    *d = NULL;
    *n = 0;
    unsigned char r[16];
    if (rd(ctx, r, 4, err))
        return hc_err_prefix(err, "reading the tap list: ");
    uint32_t count = get_u32(r);
    if (count > HC_PIPE_MAX_TAPS)
        return hc_err_set(err, HC_EBACKEND, "malformed tap list: %u taps (at most %d)", count, HC_PIPE_MAX_TAPS);
    hc_pipe_tapdesc *t = count ? calloc(count, sizeof *t) : NULL;
    if (count && !t)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        if (rd(ctx, r, 4, err))
            goto fail;
        uint32_t len = get_u32(r);
        if (len == 0 || len > HC_PIPE_MAX_TAP_NAME) {
            hc_err_set(err, HC_EBACKEND, "malformed tap list: tap %u has a name of %u bytes (1..%d)", i, len,
                       HC_PIPE_MAX_TAP_NAME);
            goto fail;
        }
        if (rd(ctx, t[i].name, len, err) || rd(ctx, r, 16, err))
            goto fail;
        for (uint32_t k = 0; k < len; k++)
            if ((unsigned char)t[i].name[k] <= 0x20 || t[i].name[k] == 0x7f)
                t[i].name[k] = '_'; /* names go into reports and terminals */
        uint32_t fmt = get_u32(r), layout = get_u32(r + 4), c = get_u32(r + 8), hw = get_u32(r + 12);
        if (fmt > HC_TAPFMT_BF16 || layout > 1 || c < 1 || c > 1u << 16 || (hw != 1 && hw != area)) {
            hc_err_set(err, HC_EBACKEND, "malformed tap list: tap %s: format %u (0..2), layout %u (0..1), %u "
                       "channels (1..65536), %u points (1 or nnX*nnY = %zu)", t[i].name, fmt, layout, c, hw, area);
            goto fail;
        }
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(t[k].name, t[i].name) == 0) {
                hc_err_set(err, HC_EBACKEND, "malformed tap list: tap %s announced twice", t[i].name);
                goto fail;
            }
        t[i].fmt = (int)fmt;
        t[i].layout = (int)layout;
        t[i].channels = (int)c;
        t[i].hw = (int)hw;
    }
    *d = t;
    *n = (int)count;
    return 0;
fail:
    free(t);
    return hc_err_prefix(err, "reading the tap list: ");
}

int hc_pipe_parse_taps(hc_pipe_read_fn rd, void *ctx, int batch, const hc_pipe_tapdesc *d, int n,
                       unsigned char *scratch, hc_tapset *ts, hc_err *err)
{
    hc_tapset_reset(ts);
    if (batch > hc_tapset_max_batch(ts))
        return hc_err_set(err, HC_EINTERNAL, "tapset holds %d rows, batch of %d", hc_tapset_max_batch(ts), batch);
    for (int i = 0; i < n; i++) {
        size_t C = (size_t)d[i].channels, hw = (size_t)d[i].hw, per = C * hw, es = d[i].fmt == HC_TAPFMT_F32 ? 4 : 2;
        if (rd(ctx, scratch, es * per * (size_t)batch, err))
            return hc_err_prefix(err, "reading tap %s: ", d[i].name);
        hc_tapset_entry *x = hc_tapset_entry_get(ts, d[i].name, hw == 1 ? HC_TAP_BC : HC_TAP_CBP, d[i].fmt, d[i].channels,
                                                 d[i].hw, err);
        if (!x)
            return -1;
        for (size_t r = 0; r < (size_t)batch; r++)
            for (size_t k = 0; k < per; k++) {
                const unsigned char *p = scratch + es * (r * per + k);
                float v;
                if (es == 4) {
                    uint32_t u = get_u32(p);
                    memcpy(&v, &u, 4);
                } else if (d[i].fmt == HC_TAPFMT_F16)
                    v = hc_f16_to_float((uint16_t)(p[0] | p[1] << 8));
                else {
                    uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16;
                    memcpy(&v, &u, 4);
                }
                /* k is the wire index: [C][HW] or [HW][C]; stored as [C][HW] */
                size_t c = d[i].layout == 0 ? k / hw : k % C, q = d[i].layout == 0 ? k % hw : k / C;
                x->data[r * per + c * hw + q] = v;
            }
        x->rows = batch;
    }
    return 0;
}

int hc_pipe_parse_reply(hc_pipe_read_fn rd, void *ctx, int batch, size_t area, size_t policy_c, size_t score_c,
                        unsigned char *scratch, hc_raw_heads *out, hc_err *err)
{
    unsigned char r[12];
    if (rd(ctx, r, 8, err))
        return -1;
    if (memcmp(r, "HCPO", 4) != 0)
        return hc_err_set(err, HC_EBACKEND, "malformed reply: magic %02x %02x %02x %02x, not \"HCPO\"", r[0], r[1],
                          r[2], r[3]);
    if (get_u32(r + 4) != 0) {
        char msg[1024];
        if (read_message(rd, ctx, msg, sizeof msg, err))
            return hc_err_prefix(err, "reading an error reply: ");
        hc_err_set(err, HC_EBACKEND, "the program failed the batch: %s", msg[0] ? msg : "(no message)");
        return 1;
    }
    if (rd(ctx, r + 8, 4, err))
        return -1;
    if (get_u32(r + 8) != (uint32_t)batch)
        return hc_err_set(err, HC_EBACKEND, "the reply is for a batch of %u, the request was %d", get_u32(r + 8),
                          batch);
    size_t bs = (size_t)batch;
    size_t counts[5] = {bs * policy_c * area, bs * policy_c, bs * 3, bs * score_c, bs * area};
    float *dst[5] = {out->policy, out->policy_pass, out->value, out->score, out->ownership};
    size_t total = 0;
    for (int i = 0; i < 5; i++)
        total += counts[i];
    if (rd(ctx, scratch, 4 * total, err))
        return hc_err_prefix(err, "reading the heads: ");
    size_t off = 0;
    for (int i = 0; i < 5; i++) {
        get_floats(dst[i], scratch + 4 * off, counts[i]);
        off += counts[i];
    }
    out->batch = batch;
    return 0;
}

typedef struct proc_reader {
    hc_extproc *proc;
    double deadline;
} proc_reader;

static int proc_read(void *ctx, void *buf, size_t n, hc_err *err)
{
    proc_reader *pr = ctx;
    return hc_extproc_read(pr->proc, buf, n, pr->deadline, err);
}

static int start(pipe_backend *b, hc_err *err)
{
    if (hc_extproc_start(&b->proc, b->argv, err))
        return -1;
    b->starts++;
    const hc_net *n = b->net;
    size_t ml = strlen(b->model), nl = n->name ? strlen(n->name) : 0;
    unsigned char h[4 * 13], l4[4];
    memcpy(h, "HCPQ", 4);
    put_u32(h + 4, HC_PIPE_VERSION);
    put_u32(h + 8, (uint32_t)b->nx);
    put_u32(h + 12, (uint32_t)b->ny);
    put_u32(h + 16, (uint32_t)b->max_batch);
    put_u32(h + 20, (uint32_t)n->num_input_c);
    put_u32(h + 24, (uint32_t)n->num_input_global_c);
    put_u32(h + 28, (uint32_t)n->num_input_meta_c);
    put_u32(h + 32, (uint32_t)n->num_policy_c);
    put_u32(h + 36, (uint32_t)n->num_score_value_c);
    put_u32(h + 40, (uint32_t)n->model_version);
    put_u32(h + 44, (uint32_t)n->input_version);
    put_u32(h + 48, (uint32_t)ml);
    double deadline = hc_extproc_now() + b->startup_timeout_s;
    if (hc_extproc_write(&b->proc, h, sizeof h, deadline, err) ||
        hc_extproc_write(&b->proc, b->model, ml, deadline, err) ||
        (put_u32(l4, (uint32_t)nl), hc_extproc_write(&b->proc, l4, 4, deadline, err)) ||
        hc_extproc_write(&b->proc, n->name ? n->name : "", nl, deadline, err))
        return hc_err_prefix(err, "sending the header: ");
    proc_reader pr = {&b->proc, deadline};
    free(b->tapd);
    free(b->tapbuf);
    b->tapd = NULL;
    b->tapbuf = NULL;
    b->n_taps = 0;
    char msg[1024];
    if (hc_pipe_parse_handshake_msg(proc_read, &pr, &b->version, msg, sizeof msg, err)) {
        hc_extproc_stop(&b->proc);
        return hc_err_prefix(err, "handshake: ");
    }
    snprintf(b->identity, sizeof b->identity, "%s%spipe protocol %d", msg, msg[0] ? ", " : "", b->version);
    if (b->version == HC_PIPE_VERSION_TAPS) {
        size_t area = (size_t)b->nx * (size_t)b->ny, big = 1;
        if (hc_pipe_parse_taplist(proc_read, &pr, area, &b->tapd, &b->n_taps, err)) {
            hc_extproc_stop(&b->proc);
            return hc_err_prefix(err, "handshake: ");
        }
        for (int i = 0; i < b->n_taps; i++) {
            size_t t = (size_t)b->tapd[i].channels * (size_t)b->tapd[i].hw * (size_t)b->max_batch * 4;
            big = t > big ? t : big;
        }
        if (!(b->tapbuf = hc_malloc(big, err, "pipe tap buffer"))) {
            hc_extproc_stop(&b->proc);
            return -1;
        }
    }
    return 0;
}

/* What a pipe: spec says: its @options (with their defaults) and the command. */
typedef struct pipe_opts {
    double timeout_s, startup_timeout_s;
    char *model;
    char *cmd;
} pipe_opts;

static void pipe_free_opts(void *opts)
{
    pipe_opts *po = opts;
    if (po) {
        free(po->model);
        free(po->cmd);
    }
    free(po);
}

/* The spec's @options and command, without starting the program. */
static void *pipe_parse(const char *params, hc_err *err)
{
    pipe_opts *po = hc_calloc(1, sizeof *po, err, "pipe options");
    if (!po)
        return NULL;
    po->timeout_s = 60;
    po->startup_timeout_s = 600;
    const hc_specopt opts[] = {
        {.name = "timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &po->timeout_s},
        {.name = "startup-timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &po->startup_timeout_s},
        {.name = "model", .hint = "PATH", .kind = HC_SPECOPT_STRING, .str = &po->model},
    };
    if (!(po->cmd = hc_specopts_command("pipe", params, opts, sizeof opts / sizeof opts[0], err))) {
        pipe_free_opts(po);
        return NULL;
    }
    return po;
}

static const char *pipe_identity(void *inst)
{
    return ((pipe_backend *)inst)->identity;
}

static void *pipe_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const pipe_opts *po = opts;
    const hc_net *net = o->net;
    int nx = o->nx, ny = o->ny, max_batch = o->max_batch;
    if (!net) {
        hc_err_set(err, HC_EUSAGE, "pipe: needs the net");
        return NULL;
    }
    pipe_backend *b = hc_calloc(1, sizeof *b, err, "pipe backend");
    if (!b)
        return NULL;
    b->proc.pid = -1;
    b->proc.to_fd = b->proc.from_fd = b->proc.err_fd = -1;
    b->timeout_s = po->timeout_s;
    b->startup_timeout_s = po->startup_timeout_s;
    b->net = net;
    b->nx = nx;
    b->ny = ny;
    b->max_batch = max_batch;
    snprintf(b->cmdline, sizeof b->cmdline, "%s", po->cmd);
    b->argv = hc_extproc_split(po->cmd, err);
    if (!b->argv)
        goto fail;
    b->model = strdup(po->model ? po->model : "");
    size_t area = (size_t)nx * (size_t)ny, mb = (size_t)max_batch;
    size_t in = 8 + 4 * mb * ((size_t)net->num_input_c * area + (size_t)net->num_input_global_c +
                              (size_t)net->num_input_meta_c);
    size_t out = 12 + 4 * mb * ((size_t)net->num_policy_c * (area + 1) + 3 + (size_t)net->num_score_value_c + area);
    b->cap = in > out ? in : out;
    b->buf = hc_malloc(b->cap, err, "pipe buffer");
    if (!b->model || !b->buf)
        goto fail;
    if (start(b, err))
        goto fail;
    return b;
fail:
    pipe_close(b);
    return NULL;
}

static int pipe_eval_call(pipe_backend *b, int batch, const float *spatial, const float *global, const float *meta,
                          hc_raw_heads *out, hc_err *err);

static int pipe_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                     hc_raw_heads *out, hc_err *err)
{
    pipe_backend *b = inst;
    double t0 = hc_extproc_now();
    int rc = pipe_eval_call(b, batch, spatial, global, meta, out, err);
    b->eval_s += hc_extproc_now() - t0;
    if (rc == 0) {
        b->rows += batch;
        b->calls++;
    }
    return rc;
}

/* Ends the program as close does, then reports what it cost; its rows per batch are the
 * batches halfcheck sent (the protocol evaluates each request as one batch). */
static int pipe_finish(void *inst, hc_engine_stats *st, hc_err *err)
{
    (void)err;
    pipe_backend *b = inst;
    hc_extproc_finish(&b->proc, 10.0);
    *st = hc_engine_stats_unknown();
    st->positions = b->rows;
    st->eval_seconds = b->eval_s;
    st->engines = b->starts;
    if (b->starts)
        st->peak_rss_kib = hc_extproc_children_peak_rss_kib();
    st->nn_rows = b->rows;
    st->nn_batches = b->calls;
    st->avg_batch = b->calls > 0 ? (double)b->rows / (double)b->calls : -1;
    st->batching = b->max_batch > 1;
    st->max_batch = b->max_batch;
    return 0;
}

static int pipe_eval_call(pipe_backend *b, int batch, const float *spatial, const float *global, const float *meta,
                          hc_raw_heads *out, hc_err *err)
{
    const hc_net *n = b->net;
    if (batch < 1 || batch > b->max_batch || batch > out->max_batch)
        return hc_err_set(err, HC_EUSAGE, "pipe: batch of %d (1..%d)", batch, b->max_batch);
    if (!hc_extproc_running(&b->proc) && start(b, err))
        return hc_err_prefix(err, "pipe: restarting %s: ", b->proc.name);
    size_t area = (size_t)b->nx * (size_t)b->ny, bs = (size_t)batch;
    size_t ns = bs * (size_t)n->num_input_c * area, ng = bs * (size_t)n->num_input_global_c,
           nm = meta ? bs * (size_t)n->num_input_meta_c : 0;
    int want = out->taps && b->n_taps > 0;
    memcpy(b->buf, want ? "HCPT" : "HCPB", 4);
    put_u32(b->buf + 4, (uint32_t)batch);
    put_floats(b->buf + 8, spatial, ns);
    put_floats(b->buf + 8 + 4 * ns, global, ng);
    if (nm)
        put_floats(b->buf + 8 + 4 * (ns + ng), meta, nm);
    double deadline = hc_extproc_now() + b->timeout_s;
    if (hc_extproc_write(&b->proc, b->buf, 8 + 4 * (ns + ng + nm), deadline, err))
        return hc_err_prefix(err, "pipe: sending a batch of %d: ", batch);
    proc_reader pr = {&b->proc, deadline};
    int rc = hc_pipe_parse_reply(proc_read, &pr, batch, area, (size_t)n->num_policy_c, (size_t)n->num_score_value_c,
                                 b->buf, out, err);
    if (rc > 0)
        return hc_err_prefix(err, "pipe: batch of %d: ", batch);
    if (rc < 0) {
        hc_extproc_stop(&b->proc);
        return hc_err_prefix(err, "pipe: reading the reply to a batch of %d: ", batch);
    }
    if (want && hc_pipe_parse_taps(proc_read, &pr, batch, b->tapd, b->n_taps, b->tapbuf, out->taps, err)) {
        hc_extproc_stop(&b->proc);
        return hc_err_prefix(err, "pipe: reading the taps of a batch of %d: ", batch);
    }
    return 0;
}

static int pipe_taps(void *inst)
{
    const pipe_backend *b = inst;
    return b->n_taps > 0;
}

static const hc_backend_ops pipe_ops = {
    .eval = pipe_eval,
    .taps = pipe_taps,
    .identity = pipe_identity,
    .finish = pipe_finish,
    .close = pipe_close,
};

const hc_backend_kind hc_backend_pipe = {
    .name = "pipe",
    .syntax = "pipe:[@timeout=S @startup-timeout=S @model=PATH] CMD",
    .summary = "runs a program speaking docs/PROTOCOL.md (input rows in, raw heads out); $VAR unset means skipped",
    .caps = {.shape = HC_BACKEND_TENSOR, .taps = HC_TAPS_RETURNED, .engine = 1},
    .parse = pipe_parse,
    .free_opts = pipe_free_opts,
    .open = pipe_open,
    .ops = &pipe_ops,
};
