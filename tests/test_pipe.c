/* pipe: backend (docs/PROTOCOL.md) against tests/helper_pipe_ref32 (ref32's engine behind the
 * protocol): bit-exact agreement with ref32, version mismatch, refusal, crash, short read,
 * hang, garbage, each with a restart that works; and the Python example client. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"

enum { NX = 10, NY = 14, N = 20, B = 4 };
static char helper[4096], model[4096];
static hc_net *net;
static hc_position *ps;
static size_t nps;
static hc_nnoutput ref[N];

static int same(const hc_nnoutput *a, const hc_nnoutput *b)
{
    const float fa[10] = {a->white_win_prob, a->white_loss_prob, a->white_no_result_prob, a->white_score_mean,
                          a->white_score_mean_sq, a->white_lead, a->var_time_left, a->shortterm_winloss_error,
                          a->shortterm_score_error, a->policy_optimism_used};
    const float fb[10] = {b->white_win_prob, b->white_loss_prob, b->white_no_result_prob, b->white_score_mean,
                          b->white_score_mean_sq, b->white_lead, b->var_time_left, b->shortterm_winloss_error,
                          b->shortterm_score_error, b->policy_optimism_used};
    return memcmp(fa, fb, sizeof fa) == 0 &&
           memcmp(a->policy_probs, b->policy_probs, sizeof(float) * (NX * NY + 1)) == 0 &&
           memcmp(a->white_owner_map, b->white_owner_map, sizeof(float) * NX * NY) == 0;
}

static int open_pipe(hc_backend *b, const char *opts, const char *args, hc_err *err)
{
    char spec[12000];
    snprintf(spec, sizeof spec, "pipe:@model=%s %s %s %s", model, opts, helper, args);
    return hc_backend_open_with(b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = NX, .ny = NY,
                                                           .max_batch = B, .threads = 1}, err);
}

static int run(hc_backend *b, size_t first, size_t n, int batch, hc_nnoutput *outs, hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(NX, NY);
    return hc_eval_positions(b, net, ps + first, n, NULL, batch, &s, outs, NULL, NULL, NULL, NULL, err);
}

static void misbehaviour(const char *name, const char *mode, const char *expect)
{
    char once[256], args[512], cname[64];
    hc_misbehave_args("pipe", mode, args, sizeof args, once, sizeof once);
    hc_backend b = {0};
    hc_err err = {0};
    if (!hc_check(name, open_pipe(&b, strcmp(mode, "hang") == 0 ? "@timeout=1" : "", args, &err) == 0, "open: %s",
                  err.msg))
        return;
    hc_nnoutput o[B] = {{0}};
    int rc = run(&b, 0, B, B, o, &err);
    snprintf(cname, sizeof cname, "%s.1", name);
    hc_check(cname, rc == -1 && strstr(err.msg, expect) && strstr(err.msg, "position 0"),
             "expected \"%s\" naming the batch's position: rc %d \"%s\"", expect, rc, err.msg);
    for (int i = 0; i < B; i++)
        hc_nnoutput_free(&o[i]);
    rc = run(&b, 4, B, B, o, &err);
    int ok = rc == 0;
    for (int i = 0; i < B; i++) {
        ok &= rc == 0 && same(&ref[4 + i], &o[i]);
        hc_nnoutput_free(&o[i]);
    }
    snprintf(cname, sizeof cname, "%s.2", name);
    hc_check(cname, ok, "the next batch after a restart: rc %d %s", rc, err.msg);
    hc_backend_close(&b);
    unlink(once);
}

int main(int argc, char **argv)
{
    hc_plan(22);
    (void)argc;
    char self[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(helper, sizeof helper, "%s/helper_pipe_ref32", dirname(self));
    hc_err err = {0};
    const char *m = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!m || access(m, R_OK) != 0) {
        hc_skip_rest("pipe-1", "../shared absent: no net");
        return hc_test_exit();
    }
    snprintf(model, sizeof model, "%s", m);
    net = hc_net_load(model, &err);
    if (!hc_check("pipe-1.0", net && hc_positions_load(hc_shared("positions/size10x14.jsonl.gz"), &ps, &nps, &err) == 0 &&
                                  nps >= N, "%s", err.msg))
        return hc_fail_rest("pipe-1.0.rest", "not run: %s failed", "pipe-1.0"), hc_test_exit();
    hc_net_reduce_activations(net);
    hc_backend rb = {0};
    hc_eval_settings s = hc_eval_settings_default(NX, NY);
    if (!hc_check("pipe-1.1", hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net,
                                                                                .nx = NX, .ny = NY, .max_batch = B,
                                                                                .threads = 1}, &err) == 0 &&
                                  hc_eval_positions(&rb, net, ps, N, NULL, B, &s, ref, NULL, NULL, NULL, NULL, &err) == 0,
                  "ref32: %s", err.msg))
        return hc_fail_rest("pipe-1.1.rest", "not run: %s failed", "pipe-1.1"), hc_test_exit();
    hc_backend_close(&rb);

    {
        hc_backend b = {0};
        unsetenv("HC_TEST_PIPE_UNSET");
        int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "pipe:$HC_TEST_PIPE_UNSET/client",
                                                                  .net = net, .nx = NX, .ny = NY, .max_batch = B,
                                                                  .threads = 1}, &err);
        hc_check("pipe-1.2", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "HC_TEST_PIPE_UNSET"),
                 "%s", err.msg);
    }

    /* Same arithmetic behind the protocol: the same bits, batched and unbatched. */
    hc_backend b = {0};
    if (hc_check("pipe-2.1", open_pipe(&b, "", "", &err) == 0, "open: %s", err.msg)) {
        for (int batch = 1; batch <= B; batch += B - 1) {
            hc_nnoutput o[N] = {{0}};
            int rc = run(&b, 0, N, batch, o, &err), agree = 0;
            for (int i = 0; i < N; i++) {
                agree += rc == 0 && same(&ref[i], &o[i]);
                hc_nnoutput_free(&o[i]);
            }
            printf("  pipe:helper_pipe_ref32 vs ref32, batch %d: %d of %d positions bit-identical\n", batch, agree, N);
            hc_check(batch == 1 ? "pipe-2.2" : "pipe-2.3", rc == 0 && agree == N, "rc %d %s: %d of %d bit-exact", rc,
                     err.msg, agree, N);
        }
        hc_backend_close(&b);
    } else {
        hc_fail_n("pipe-2.2", 2, "not run: the pipe backend did not open (pipe-2.1)");
    }

    {
        hc_backend b2 = {0};
        int rc = open_pipe(&b2, "", "-version 2", &err);
        hc_check("pipe-3.1", rc == -1 && strstr(err.msg, "version mismatch") && strstr(err.msg, "version 2"), "%s",
                 err.msg);
        rc = open_pipe(&b2, "", "-misbehave refuse", &err);
        hc_check("pipe-3.2", rc == -1 && strstr(err.msg, "refusing on purpose"), "%s", err.msg);
        rc = hc_backend_open_with(&b2, &(hc_backend_open_opts){.spec = "pipe:/nonexistent/client", .net = net,
                                                               .nx = NX, .ny = NY, .max_batch = B, .threads = 1}, &err);
        hc_check("pipe-3.3", rc == -1 && strstr(err.msg, "cannot execute"), "%s", err.msg);
    }
    misbehaviour("pipe-4.1", "crash", "killed by signal 6");
    misbehaviour("pipe-4.2", "short", "short read");
    misbehaviour("pipe-4.3", "hang", "timed out");
    misbehaviour("pipe-4.4", "garbage", "malformed reply");

    /* The Python example: uniform logits give a uniform policy over the legal moves. */
    if (access("/usr/bin/python3", X_OK) == 0 && access("examples/pipe_client.py", R_OK) == 0) {
        hc_backend b3 = {0};
        char spec[8192];
        snprintf(spec, sizeof spec, "pipe:@model=%s /usr/bin/python3 examples/pipe_client.py", model);
        hc_nnoutput o[2] = {{0}};
        int rc = hc_backend_open_with(&b3, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = NX, .ny = NY,
                                                                   .max_batch = B, .threads = 1}, &err);
        rc = rc ? rc : run(&b3, 0, 2, 2, o, &err);
        int uniform = rc == 0;
        for (int i = 0; uniform && i < 2; i++) {
            float p0 = -1;
            for (int k = 0; k <= NX * NY; k++)
                if (o[i].policy_probs[k] >= 0) {
                    if (p0 < 0)
                        p0 = o[i].policy_probs[k];
                    uniform &= fabsf(o[i].policy_probs[k] - p0) < 1e-7f;
                }
            uniform &= o[i].white_win_prob == o[i].white_loss_prob; /* zero value logits */
        }
        hc_check("pipe-5.1", uniform, "examples/pipe_client.py: rc %d %s (win %g, policy[0] %g, pass %g)", rc,
                 rc ? err.msg : "", (double)o[0].white_win_prob, o[0].policy_probs ? (double)o[0].policy_probs[0] : 0.0,
                 o[0].policy_probs ? (double)o[0].policy_probs[NX * NY] : 0.0);
        for (int i = 0; i < 2; i++)
            hc_nnoutput_free(&o[i]);
        hc_backend_close(&b3);
    } else {
        hc_skip("pipe-5.1", "no /usr/bin/python3 (or not run from the repository root)");
    }

    for (int i = 0; i < N; i++)
        hc_nnoutput_free(&ref[i]);
    hc_positions_free(ps, nps);
    hc_net_free(net);
    return hc_test_exit();
}
