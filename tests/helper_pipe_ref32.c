/* A pipe: client (docs/PROTOCOL.md) wrapping ref32's engine, for tests/test_pipe.c and
 * tests/test_taps_pipe.c, with misbehaviour on demand:
 *   helper_pipe_ref32 [-version N] [-misbehave refuse|crash|short|hang|garbage] [-once FILE]
 *                     [-taps 1] [-tapfmt f32|f16|bf16] [-plant LAYER] [-reshape LAYER]
 * -version answers the handshake with that protocol version; -misbehave acts on the first batch
 * (refuse: at the handshake); with -once FILE only while FILE does not exist (created then).
 * -taps 1 speaks version 2: it announces every layer its engine taps and sends them when asked,
 * in -tapfmt (rounded to it), [B][C][HW]; -plant LAYER scales that layer's output by 1.05 inside
 * the engine (a stand-in for a kernel bug: later layers see it); -reshape LAYER announces and
 * sends that tap with one channel fewer (a shape mismatch). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "refs/engine.h"
#include "harness/model/model.h"
#include "refs/round.h"

/* The engine hook: plants the bug, then records for the taps. */
typedef struct hookctx {
    const char *plant;
    hc_tapset *set; /* NULL: no taps wanted */
} hookctx;

static void hook(void *user, const hc_tap *t)
{
    hookctx *h = user;
    if (h->plant && strcmp(t->layer, h->plant) == 0) {
        size_t n = (size_t)t->channels * (size_t)t->rows * (size_t)t->hw;
        for (size_t i = 0; i < n; i++)
            t->data[i] *= 1.05f;
    }
    if (h->set)
        hc_tapset_hook(h->set, t);
}

static float to_fmt(int fmt, float x)
{
    return fmt == HC_TAPFMT_F16 ? hc_round_fp16(x) : fmt == HC_TAPFMT_BF16 ? hc_round_bf16(x) : x;
}

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
    const char *mb = NULL, *once = NULL, *plant = NULL, *reshape = NULL;
    int taps = 0, tapfmt = HC_TAPFMT_F32;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-version"))
            version = (uint32_t)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-misbehave"))
            mb = argv[i + 1];
        else if (!strcmp(argv[i], "-once"))
            once = argv[i + 1];
        else if (!strcmp(argv[i], "-taps"))
            taps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-tapfmt"))
            tapfmt = hc_tap_fmt_parse(argv[i + 1]);
        else if (!strcmp(argv[i], "-plant"))
            plant = argv[i + 1];
        else if (!strcmp(argv[i], "-reshape"))
            reshape = argv[i + 1];
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
    size_t area = (size_t)nx * (size_t)ny;
    size_t cs = (size_t)net->num_input_c * area, cg = (size_t)net->num_input_global_c,
           cm = (size_t)net->num_input_meta_c;
    float *sp = calloc(cs * (size_t)max_batch, sizeof(float));
    float *gl = calloc((cg + 1) * (size_t)max_batch, sizeof(float));
    float *me = calloc((cm + 1) * (size_t)max_batch, sizeof(float));
    hookctx hc = {plant, NULL};
    hc_tapset *set = taps ? hc_tapset_new(max_batch, &err) : NULL;
    if (plant || taps) {
        hc_engine_set_hook(e, hook, &hc);
        hc_engine_set_inner_taps(e, 1); /* and the tensors inside layers, as ref32 taps them */
    }
    if (taps) {
        /* the tap list: what one row of an empty board taps */
        for (size_t p = 0; p < area; p++)
            sp[p] = 1.0f;
        hc.set = set;
        if (!set || hc_engine_eval(e, 1, sp, gl, cm ? me : NULL, out, &err)) {
            handshake(1, 1, err.msg);
            return 0;
        }
        hc.set = NULL;
        handshake(2, 0, "helper_pipe_ref32 (taps)");
        w32((uint32_t)hc_tapset_count(set));
        for (int i = 0; i < hc_tapset_count(set); i++) {
            const hc_tapset_entry *x = hc_tapset_at(set, i);
            w32((uint32_t)strlen(x->name));
            fwrite(x->name, 1, strlen(x->name), stdout);
            w32((uint32_t)tapfmt);
            w32(0);
            w32((uint32_t)(x->channels - (reshape && !strcmp(reshape, x->name))));
            w32((uint32_t)x->hw);
        }
        fflush(stdout);
    } else
        handshake(1, 0, "helper_pipe_ref32");
    for (;;) {
        unsigned char bh[8];
        rd(bh, 8);
        int b = (int)u32(bh + 4);
        if ((memcmp(bh, "HCPB", 4) != 0 && !(taps && memcmp(bh, "HCPT", 4) == 0)) || b < 1 || b > max_batch) {
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
        int want = taps && memcmp(bh, "HCPT", 4) == 0;
        hc.set = want ? set : NULL;
        if (want)
            hc_tapset_reset(set);
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
        for (int i = 0; want && i < hc_tapset_count(set); i++) {
            const hc_tapset_entry *x = hc_tapset_at(set, i);
            size_t per = (size_t)x->channels * (size_t)x->hw;
            size_t send = per - (reshape && !strcmp(reshape, x->name) ? (size_t)x->hw : 0);
            for (size_t r = 0; r < bs; r++)
                for (size_t k = 0; k < send; k++) {
                    float v = to_fmt(tapfmt, x->data[r * per + k]);
                    uint32_t u;
                    memcpy(&u, &v, 4);
                    if (tapfmt == HC_TAPFMT_F32)
                        w32(u);
                    else {
                        /* exact after to_fmt: f16 bits by the conversion below, bf16 the top half */
                        uint16_t hb;
                        if (tapfmt == HC_TAPFMT_BF16)
                            hb = (uint16_t)(u >> 16);
                        else {
                            uint32_t sg = (u >> 16) & 0x8000u, ex = (u >> 23) & 0xffu, m = u & 0x7fffffu;
                            if (ex == 0xff)
                                hb = (uint16_t)(sg | 0x7c00u | (m ? 0x200u : 0));
                            else if (ex > 112)
                                hb = (uint16_t)(sg | ((ex - 112) << 10) | (m >> 13));
                            else if (ex >= 103)
                                hb = (uint16_t)(sg | ((m | 0x800000u) >> (126 - ex)));
                            else
                                hb = (uint16_t)sg;
                        }
                        unsigned char b2[2] = {(unsigned char)hb, (unsigned char)(hb >> 8)};
                        fwrite(b2, 1, 2, stdout);
                    }
                }
        }
        fflush(stdout);
    }
}
