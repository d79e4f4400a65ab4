/* A pipe: client (docs/PROTOCOL.md) wrapping ref32's engine, for tests/test_pipe.c, with
 * misbehaviour on demand:
 *   helper_pipe_ref32 [-version N] [-misbehave refuse|crash|short|hang|garbage] [-once FILE]
 * -version answers the handshake with that protocol version; -misbehave acts on the first batch
 * (refuse: at the handshake); with -once FILE only while FILE does not exist (created then). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "model.h"

static void rd(void *p, size_t n)
{
    if (n && fread(p, 1, n, stdin) != n)
        exit(0); /* halfcheck closed our input: done */
}

static uint32_t u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void w32(uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, stdout);
}

static void handshake(uint32_t version, uint32_t status, const char *msg)
{
    fwrite("HCPR", 1, 4, stdout);
    w32(version);
    w32(status);
    w32((uint32_t)strlen(msg));
    fwrite(msg, 1, strlen(msg), stdout);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    uint32_t version = 1;
    const char *mb = NULL, *once = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-version"))
            version = (uint32_t)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-misbehave"))
            mb = argv[i + 1];
        else if (!strcmp(argv[i], "-once"))
            once = argv[i + 1];
    }
    if (mb && once) {
        int fd = open(once, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
            mb = NULL;
        else
            close(fd);
    }
    /* This program assumes a little-endian host, where the wire floats are the memory floats. */
    unsigned char h[52];
    rd(h, sizeof h);
    if (memcmp(h, "HCPQ", 4) != 0) {
        fprintf(stderr, "helper_pipe_ref32: not a halfcheck header\n");
        return 1;
    }
    int nx = (int)u32(h + 8), ny = (int)u32(h + 12), max_batch = (int)u32(h + 16);
    uint32_t ml = u32(h + 48);
    char *path = calloc(ml + 1, 1);
    rd(path, ml);
    unsigned char l4[4];
    rd(l4, 4);
    char *name = calloc(u32(l4) + 1, 1);
    rd(name, u32(l4));
    if (u32(h + 4) != version || version != 1) {
        handshake(version, 1, "unsupported protocol version");
        return 0;
    }
    if (mb && !strcmp(mb, "refuse")) {
        handshake(1, 1, "refusing on purpose");
        return 0;
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(path, &err);
    if (!net) {
        handshake(1, 1, err.msg);
        return 0;
    }
    hc_net_reduce_activations(net);
    hc_engine *e = hc_engine_new(net, max_batch, nx, ny, 1, &err);
    hc_raw_heads *out = e ? hc_raw_heads_new(max_batch, nx, ny, net->num_policy_c, net->num_score_value_c, &err) : NULL;
    if (!out) {
        handshake(1, 1, err.msg);
        return 0;
    }
    if ((int)u32(h + 20) != net->num_input_c || (int)u32(h + 32) != net->num_policy_c) {
        handshake(1, 1, "the header does not describe this net");
        return 0;
    }
    handshake(1, 0, "helper_pipe_ref32");
    size_t area = (size_t)nx * (size_t)ny;
    size_t cs = (size_t)net->num_input_c * area, cg = (size_t)net->num_input_global_c,
           cm = (size_t)net->num_input_meta_c;
    float *sp = malloc(sizeof(float) * cs * (size_t)max_batch);
    float *gl = malloc(sizeof(float) * (cg + 1) * (size_t)max_batch);
    float *me = malloc(sizeof(float) * (cm + 1) * (size_t)max_batch);
    for (;;) {
        unsigned char bh[8];
        rd(bh, 8);
        int b = (int)u32(bh + 4);
        if (memcmp(bh, "HCPB", 4) != 0 || b < 1 || b > max_batch) {
            fprintf(stderr, "helper_pipe_ref32: bad batch header\n");
            return 1;
        }
        rd(sp, sizeof(float) * cs * (size_t)b);
        rd(gl, sizeof(float) * cg * (size_t)b);
        rd(me, sizeof(float) * cm * (size_t)b);
        if (mb && !strcmp(mb, "crash")) {
            fprintf(stderr, "helper_pipe_ref32: crashing on purpose\n");
            abort();
        }
        if (mb && !strcmp(mb, "hang"))
            for (;;)
                pause();
        if (mb && !strcmp(mb, "garbage")) {
            fwrite("oops-not-HCPO", 1, 13, stdout);
            fflush(stdout);
            mb = NULL;
            continue;
        }
        if (hc_engine_eval(e, b, sp, gl, cm ? me : NULL, out, &err)) {
            fwrite("HCPO", 1, 4, stdout);
            w32(1);
            w32((uint32_t)strlen(err.msg));
            fwrite(err.msg, 1, strlen(err.msg), stdout);
            fflush(stdout);
            continue;
        }
        size_t pc = (size_t)net->num_policy_c, sc = (size_t)net->num_score_value_c, bs = (size_t)b;
        fwrite("HCPO", 1, 4, stdout);
        w32(0);
        w32((uint32_t)b);
        size_t n1 = bs * pc * area;
        if (mb && !strcmp(mb, "short")) {
            fwrite(out->policy, sizeof(float), n1 / 2, stdout);
            fflush(stdout);
            return 0;
        }
        fwrite(out->policy, sizeof(float), n1, stdout);
        fwrite(out->policy_pass, sizeof(float), bs * pc, stdout);
        fwrite(out->value, sizeof(float), bs * 3, stdout);
        fwrite(out->score, sizeof(float), bs * sc, stdout);
        fwrite(out->ownership, sizeof(float), bs * area, stdout);
        fflush(stdout);
    }
}
