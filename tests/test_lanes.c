/* Evaluation on parallel lanes (hc_evaluator with several threads, hc_evaluator_lanes_for,
 * hc_evaluator_lane_batch):
 *  - which specs get lanes (CPU tensor backends with several threads, nothing else) and how a
 *    batch is shared out over them;
 *  - 2 and 3 lanes of ref32 and emulate:fp16, of 1 and 4 rows per call, give the bits of one
 *    instance at batch 1, in the natural and in a shuffled order, with every position marked
 *    done and the progress prefix growing to n;
 *  - a position that fails stops the lanes: the error names it, every position before it in the
 *    order (those sharing its call included) is done and reported through progress, none after
 *    it is reported;
 *  - a progress callback that asks to stop interrupts the evaluation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"

static const char *const net_rel = "nets/g170-b6c96-s175395328-d26788732.bin.gz";
static const char *const positions_rel = "positions/size10x14.jsonl.gz";

enum { NX = 14, NY = 14 };

typedef struct prog {
    size_t calls, last, stop_after;
    int monotonic;
} prog;

static int on_progress(void *user, size_t done, size_t total)
{
    (void)total;
    prog *p = user;
    if (done <= p->last)
        p->monotonic = 0;
    p->last = done;
    p->calls++;
    return p->stop_after && p->calls >= p->stop_after;
}

/* An evaluator of n_lanes lanes of lane_batch rows per call (NULL with err when it opens
 * otherwise). */
static hc_evaluator *open_lanes(const char *spec, const hc_net *net, int n_lanes, int lane_batch, hc_err *err)
{
    hc_evaluator_opts o = {.spec = spec, .net = net, .settings = hc_eval_settings_default(NX, NY),
                           .batch = n_lanes * lane_batch, .threads = n_lanes};
    hc_evaluator *ev = hc_evaluator_open(&o, err);
    if (ev && hc_evaluator_lanes(ev) != n_lanes) {
        hc_err_set(err, HC_EINTERNAL, "%s: %d lanes, not %d", spec, hc_evaluator_lanes(ev), n_lanes);
        hc_evaluator_close(ev);
        return NULL;
    }
    return ev;
}

static void free_outs(hc_nnoutput *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hc_nnoutput_free(&o[i]);
    free(o);
}

static void test_lanes_for(void)
{
    hc_check("lanes-1.1", hc_evaluator_lanes_for("ref32", 1, 3) == 3, "ref32 at batch 1 with 3 threads");
    hc_check("lanes-1.2", hc_evaluator_lanes_for("emulate:fp16", 1, 2) == 2, "emulate at batch 1 with 2 threads");
    hc_check("lanes-1.4", hc_evaluator_lanes_for("ref32", 16, 2) == 2 && hc_evaluator_lane_batch(16, 2) == 8 &&
                              hc_evaluator_lane_batch(6, 4) == 2 && hc_evaluator_lane_batch(6, 16) == 1 &&
                              hc_evaluator_lane_batch(1, 3) == 1,
             "batched: a batch is shared out over the lanes");
    hc_check("lanes-1.3",
             hc_evaluator_lanes_for("ref32", 6, 1) == 0 && hc_evaluator_lanes_for("ref32", 1, 1) == 0 &&
                 hc_evaluator_lanes_for("gtp:katago gtp", 1, 4) == 0 && hc_evaluator_lanes_for("file:x.jsonl", 1, 4) == 0 &&
                 hc_evaluator_lanes_for("nosuch", 1, 4) == 0,
             "batched, single-threaded, position backends and unknown kinds get no lanes");
}

/* One instance at batch 1: the outputs lanes must reproduce. */
static int eval_single(const char *spec, const hc_net *net, const hc_position *ps, size_t n, hc_nnoutput *outs)
{
    hc_err err = {0};
    hc_backend b = {0};
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = NX, .ny = NY,
                                                         .max_batch = 1, .threads = 1}, &err))
        return -1;
    hc_eval_settings s = hc_eval_settings_default(NX, NY);
    int rc = hc_eval_positions(&b, net, ps, n, NULL, 1, &s, outs, NULL, NULL, NULL, NULL, &err);
    hc_backend_close(&b);
    return rc;
}

static void test_same_bits(const char *id, const char *spec, const hc_net *net, const hc_position *ps, size_t n)
{
    hc_nnoutput *ref = calloc(n, sizeof *ref);
    if (!hc_check(id, ref && eval_single(spec, net, ps, n, ref) == 0, "%s single instance", spec)) {
        free(ref);
        return;
    }
    size_t *order = malloc(sizeof(size_t) * n);
    for (size_t i = 0; i < n; i++)
        order[i] = (i * 7 + 3) % n; /* n is not a multiple of 7 (checked by the caller) */
    for (int lanes_n = 2; lanes_n <= 3; lanes_n++)
        for (int shuffled = 0; shuffled <= 1; shuffled++)
            for (int lane_batch = 1; lane_batch <= 4; lane_batch += 3) {
            hc_err err = {0};
            hc_evaluator *lanes = open_lanes(spec, net, lanes_n, lane_batch, &err);
            hc_nnoutput *outs = calloc(n, sizeof *outs);
            unsigned char *done = calloc(n, 1);
            prog p = {.monotonic = 1};
            hc_eval_request req = {.ps = ps, .n = n, .order = shuffled ? order : NULL, .outs = outs, .done_mask = done,
                                   .progress = on_progress, .user = &p};
            int rc = lanes ? hc_evaluator_run(lanes, &req, &err) : -1;
            size_t same = 0, marked = 0;
            for (size_t i = 0; rc == 0 && i < n; i++) {
                same += hc_outputs_same(&ref[i], &outs[i]);
                marked += done[i];
            }
            char name[64];
            snprintf(name, sizeof name, "%s.%d%s%s", id, lanes_n, shuffled ? "s" : "", lane_batch > 1 ? "b" : "");
            hc_check(name, rc == 0 && same == n && marked == n && p.last == n && p.monotonic,
                     "%s, %d lanes of %d rows%s: rc %d (%s), %zu of %zu identical, %zu marked done, last progress %zu%s",
                     spec, lanes_n, lane_batch, shuffled ? ", shuffled order" : "", rc, err.msg, same, n, marked, p.last,
                     p.monotonic ? "" : ", progress went backwards");
            hc_evaluator_close(lanes);
            free_outs(outs, n);
            free(done);
        }
    free(order);
    free_outs(ref, n);
}

static void test_failure(const hc_net *net, hc_position *ps, size_t n)
{
    /* Position 5 cannot fit the buffer: it fails in featurization, on whichever lane takes it;
     * with runs of 4 rows per call, position 4 shares its call and is still evaluated. */
    const size_t bad = 5;
    int saved = ps[bad].x_size;
    ps[bad].x_size = NX + 1;
    hc_err err = {0};
    hc_eval_failure fail;
    hc_evaluator *lanes = NULL;
    hc_nnoutput *outs = NULL;
    for (int lane_batch = 1; lane_batch <= 4; lane_batch += 3) {
        lanes = open_lanes("ref32", net, 3, lane_batch, &err);
        outs = calloc(n, sizeof *outs);
        unsigned char *done = calloc(n, 1);
        prog p = {.monotonic = 1};
        hc_eval_request req = {.ps = ps, .n = n, .outs = outs, .done_mask = done, .fail = &fail,
                               .progress = on_progress, .user = &p};
        int rc = lanes ? hc_evaluator_run(lanes, &req, &err) : 0;
        size_t before = 0;
        for (size_t i = 0; i < bad; i++)
            before += done[i] && outs[i].policy_probs;
        char name[32];
        snprintf(name, sizeof name, "lanes-3.1%s", lane_batch > 1 ? "b" : "");
        hc_check(name, rc == -1 && fail.position == (long)bad && strstr(err.msg, "position 5 ") &&
                           strstr(err.msg, "does not fit"),
                 "%d rows per call: rc %d, failed position %ld: %s", lane_batch, rc, fail.position, err.msg);
        snprintf(name, sizeof name, "lanes-3.2%s", lane_batch > 1 ? "b" : "");
        hc_check(name, before == bad && !done[bad] && p.last == bad,
                 "%d rows per call: %zu of the %zu positions before the failure done, last progress %zu", lane_batch,
                 before, bad, p.last);
        hc_evaluator_close(lanes);
        free_outs(outs, n);
        free(done);
    }
    ps[bad].x_size = saved;

    lanes = open_lanes("ref32", net, 2, 1, &err);
    outs = calloc(n, sizeof *outs);
    prog q = {.monotonic = 1, .stop_after = 1};
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs, .progress = on_progress, .user = &q};
    int rc = lanes ? hc_evaluator_run(lanes, &req, &err) : 0;
    hc_check("lanes-3.3", rc == -1 && err.code == HC_EINTERRUPTED && strstr(err.msg, "interrupted") && q.last < n,
             "rc %d: %s (stopped at %zu of %zu)", rc, err.msg, q.last, n);
    hc_evaluator_close(lanes);
    free_outs(outs, n);
}

int main(void)
{
    hc_plan(28);
    test_lanes_for();
    hc_net *net;
    hc_position *ps;
    size_t n;
    char why[1200];
    int st = hc_shared_net_positions(net_rel, positions_rel, &net, &ps, &n, why, sizeof why);
    if (st > 0) {
        hc_skip_rest("lanes-2", "%s: no net to evaluate", why);
        return hc_test_exit();
    }
    if (!hc_check("lanes-2.0", st == 0 && n > 20, "%s", st ? why : "too few positions")) {
        hc_net_free(net);
        hc_positions_free(ps, n);
        return hc_fail_rest("lanes-2.0.rest", "not run: lanes-2.0 failed"), hc_test_exit();
    }
    size_t n_all = n;
    n = n > 24 ? 24 : n;
    if (n % 7 == 0)
        n--;
    test_same_bits("lanes-2.1", "ref32", net, ps, n);
    test_same_bits("lanes-2.2", "emulate:fp16", net, ps, n);
    test_failure(net, ps, n);
    hc_positions_free(ps, n_all);
    hc_net_free(net);
    return hc_test_exit();
}
