/* Pipe-protocol replies (hc_pipe_parse_handshake, hc_pipe_parse_reply) from memory. The first
 * byte picks the batch (1-4), the buffer area (1-361) and the policy/score channel counts; the
 * rest is what the program sent: a handshake, then replies until the input ends or one fails. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "backends/pipe.h"

typedef struct mem_reader {
    const uint8_t *p;
    size_t left;
} mem_reader;

static int mem_read(void *ctx, void *buf, size_t n, hc_err *err)
{
    mem_reader *m = ctx;
    if (n > m->left)
        return hc_err_set(err, HC_EBACKEND, "short read: %zu of %zu bytes", m->left, n);
    memcpy(buf, m->p, n);
    m->p += n;
    m->left -= n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int batch = 1 + data[0] % 4;
    size_t area = (data[1] & 1) ? 361 : 1 + data[1] % 50;
    size_t policy_c = 1 + (data[0] >> 2) % 2, score_c = 1 + (data[0] >> 3) % 6;
    mem_reader m = {data + 2, size - 2};
    hc_err err = {0};
    if (hc_pipe_parse_handshake(mem_read, &m, &err)) {
        if (err.code == HC_OK || !err.msg[0])
            abort();
        return 0;
    }
    size_t per = policy_c * area + policy_c + 3 + score_c + area;
    float *heads = malloc(4 * per * (size_t)batch);
    unsigned char *scratch = malloc(4 * per * (size_t)batch);
    if (!heads || !scratch)
        abort();
    hc_raw_heads out;
    memset(&out, 0, sizeof out);
    out.max_batch = batch;
    out.policy = heads;
    out.policy_pass = out.policy + (size_t)batch * policy_c * area;
    out.value = out.policy_pass + (size_t)batch * policy_c;
    out.score = out.value + (size_t)batch * 3;
    out.ownership = out.score + (size_t)batch * score_c;
    for (int i = 0; i < 64; i++) {
        int rc = hc_pipe_parse_reply(mem_read, &m, batch, area, policy_c, score_c, scratch, &out, &err);
        if (rc && (err.code == HC_OK || !err.msg[0]))
            abort();
        if (rc < 0)
            break;
    }
    free(heads);
    free(scratch);
    return 0;
}
