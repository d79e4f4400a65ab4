/* gtp: backend against tests/helper_fake_gtp (ref32 behind KataGo's GTP replies): agreement
 * with ref32 within the printed resolution, every misbehaviour giving its error with the engine
 * restarted for the next position, skips for what GTP cannot express. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/go/rules.h"

static char helper[4096], model[4096];
static hc_net *net;
static hc_position *ps;
static size_t nps;
static hc_nnoutput ref[20];
enum { NX = 10, NY = 14, N = 20 };

static double tol(double res, double v)
{
    return res * 1.0001 + fabs(v) * 1.2e-7 + 1e-12;
}

/* Max |a-b| per kind, and whether all are within the resolution. */
static int compare(const hc_resolution *r, const hc_nnoutput *a, const hc_nnoutput *b, double mx[4])
{
    int ok = 1;
    const float wa[3] = {a->white_win_prob, a->white_loss_prob, a->white_no_result_prob};
    const float wb[3] = {b->white_win_prob, b->white_loss_prob, b->white_no_result_prob};
    for (int i = 0; i < 3; i++) {
        double d = fabs((double)wa[i] - wb[i]);
        mx[0] = hc_max_nan(mx[0], d);
        ok &= d <= tol(r->winrate, wa[i]);
    }
    const float sa[6] = {a->white_lead, a->white_score_mean, a->white_score_mean_sq, a->var_time_left,
                         a->shortterm_winloss_error, a->shortterm_score_error};
    const float sb[6] = {b->white_lead, b->white_score_mean, b->white_score_mean_sq, b->var_time_left,
                         b->shortterm_winloss_error, b->shortterm_score_error};
    for (int i = 0; i < 6; i++) {
        double d = fabs((double)sa[i] - sb[i]);
        mx[1] = hc_max_nan(mx[1], d);
        ok &= d <= tol(r->score, sa[i]);
    }
    for (int i = 0; i <= NX * NY; i++) {
        double d = fabs((double)a->policy_probs[i] - b->policy_probs[i]);
        mx[2] = hc_max_nan(mx[2], d);
        ok &= d <= tol(r->policy, a->policy_probs[i]);
    }
    for (int i = 0; i < NX * NY; i++) {
        double d = fabs((double)a->white_owner_map[i] - b->white_owner_map[i]);
        mx[3] = hc_max_nan(mx[3], d);
        ok &= d <= tol(r->ownership, a->white_owner_map[i]);
    }
    return ok;
}

static int open_gtp(hc_backend *b, const char *extra_opts, const char *extra_args, hc_err *err)
{
    char spec[12000];
    snprintf(spec, sizeof spec, "gtp:@timeout=20 %s %s %s -nn %d %d %s", extra_opts, helper, model, NX, NY,
             extra_args);
    return hc_backend_open_with(b, &(hc_backend_open_opts){.spec = spec, .net = net, .nx = NX, .ny = NY,
                                                           .max_batch = 1, .threads = 1}, err);
}

static int eval1(hc_backend *b, const hc_position *p, hc_nnoutput *o, hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(NX, NY);
    return hc_eval_positions(b, net, p, 1, NULL, 1, &s, o, NULL, NULL, NULL, NULL, err);
}

static void misbehaviour(const char *name, const char *mode, const char *expect)
{
    char once[256], extra[512], cname[64];
    hc_misbehave_args("fake_gtp", mode, extra, sizeof extra, once, sizeof once);
    hc_backend b = {0};
    hc_err err = {0};
    const char *opts = strcmp(mode, "hang") == 0 ? "@timeout=1" : "";
    if (!hc_check(name, open_gtp(&b, opts, extra, &err) == 0, "open: %s", err.msg)) {
        snprintf(cname, sizeof cname, "%s.1", name);
        hc_fail_n(cname, 2, "not run: the fake engine did not open"); /* .1, .2 */
        return;
    }
    hc_nnoutput o = {0}, o2 = {0};
    int rc = eval1(&b, &ps[0], &o, &err);
    snprintf(cname, sizeof cname, "%s.1", name);
    if (strcmp(mode, "nan") == 0) {
        hc_check(cname, rc == 0 && isnan(o.white_win_prob), "NaN passes through for the runner to flag: rc %d %s",
                 rc, err.msg);
    } else {
        hc_check(cname, rc == -1 && strstr(err.msg, expect) && strstr(err.msg, "kata-raw-nn") &&
                            strstr(err.msg, "position index 0") && !strstr(err.msg, HC_BACKEND_SKIP),
                 "expected an error with \"%s\", naming the command and position: rc %d \"%s\"", expect, rc, err.msg);
    }
    hc_nnoutput_free(&o);
    hc_err_clear(&err);
    rc = eval1(&b, &ps[1], &o2, &err);
    double mx[4] = {0};
    const hc_resolution *res = hc_backend_resolution(&b);
    snprintf(cname, sizeof cname, "%s.2", name);
    hc_check(cname, rc == 0 && compare(res, &ref[1], &o2, mx), "next position after the restart: rc %d %s", rc,
             err.msg);
    hc_nnoutput_free(&o2);
    hc_backend_close(&b);
    unlink(once);
}

int main(int argc, char **argv)
{
    hc_plan(37); /* a fixed sequence of checks */
    (void)argc;
    char self[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(helper, sizeof helper, "%s/helper_fake_gtp", dirname(self));
    hc_err err = {0};

    /* Spec handling that needs no engine. */
    {
        hc_backend b = {0};
        unsetenv("HC_TEST_GTP_UNSET");
        int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "gtp:$HC_TEST_GTP_UNSET gtp -model m",
                                                                  .net = NULL, .nx = 9, .ny = 9, .max_batch = 1,
                                                                  .threads = 1}, &err);
        hc_check("gtp-1.1", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "HC_TEST_GTP_UNSET"),
                 "unset variable: skipped, naming it: %s", err.msg);
        rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "gtp:/nonexistent/katago gtp", .net = NULL,
                                                              .nx = 9, .ny = 9, .max_batch = 1, .threads = 1}, &err);
        hc_check("gtp-1.2", rc == -1 && strstr(err.msg, "cannot execute /nonexistent/katago"), "%s", err.msg);
        rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "gtp:@bogus=1 x", .net = NULL, .nx = 9,
                                                              .ny = 9, .max_batch = 1, .threads = 1}, &err);
        hc_check("gtp-1.3", rc == -1 && strstr(err.msg, "unknown option"), "%s", err.msg);
        rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "gtp:'unterminated", .net = NULL, .nx = 9,
                                                              .ny = 9, .max_batch = 1, .threads = 1}, &err);
        hc_check("gtp-1.4", rc == -1 && strstr(err.msg, "quote"), "%s", err.msg);
    }

    const char *m = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!m || access(m, R_OK) != 0) {
        hc_skip_rest("gtp-2", "../shared absent: no net for the fake engine");
        return hc_test_exit();
    }
    snprintf(model, sizeof model, "%s", m);
    net = hc_net_load(model, &err);
    const char *pp = hc_shared("positions/size10x14.jsonl.gz");
    if (!net || !pp || hc_positions_load(pp, &ps, &nps, &err) || nps < N) {
        hc_check("gtp-2.0", 0, "loading shared data: %s", err.msg);
        return hc_test_exit();
    }
    hc_net_reduce_activations(net);
    hc_backend rb = {0};
    hc_eval_settings s = hc_eval_settings_default(NX, NY);
    if (!hc_check("gtp-2.1", hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = NX,
                                                                               .ny = NY, .max_batch = 4,
                                                                               .threads = 1}, &err) == 0 &&
                                 hc_eval_positions(&rb, net, ps, N, NULL, 4, &s, ref, NULL, NULL, NULL, NULL, &err) == 0,
                  "ref32: %s", err.msg)) {
        hc_fail_rest("gtp-2.rest", "not run: no ref32 outputs to compare with");
        return hc_test_exit();
    }
    hc_backend_close(&rb);

    /* Agreement on the first positions of the 10x14 set. */
    hc_backend b = {0};
    if (hc_check("gtp-2.2", open_gtp(&b, "", "", &err) == 0, "open: %s", err.msg)) {
        const hc_resolution *res = hc_backend_resolution(&b);
        hc_check("gtp-2.3", res && res->winrate == 5e-7 && res->score == 5e-4 && res->ownership == 5e-8,
                 "resolution of kata-raw-nn's printing");
        double mx[4] = {0};
        int agree = 0, evaluated = 0, skipped = 0;
        int failed = 0; /* positions that failed other than by a skip */
        char first_fail[600] = "";
        for (int i = 0; i < N; i++) {
            hc_nnoutput o = {0};
            hc_err_clear(&err);
            if (eval1(&b, &ps[i], &o, &err)) {
                if (strstr(err.msg, HC_BACKEND_SKIP)) {
                    skipped++;
                    printf("  position %d skipped: %s\n", i, err.msg);
                } else if (!failed++) {
                    snprintf(first_fail, sizeof first_fail, "position %d: %s", i, err.msg);
                }
                continue;
            }
            evaluated++;
            agree += compare(res, &ref[i], &o, mx);
            hc_nnoutput_free(&o);
        }
        printf("  fake engine vs ref32, %d positions (%d skipped): max |diff| winrate %.3g, score %.3g, policy %.3g, "
               "ownership %.3g\n", evaluated, skipped, mx[0], mx[1], mx[2], mx[3]);
        hc_check("gtp-2.4", failed == 0, "%d positions failed; first %s", failed, first_fail);
        hc_check("gtp-2.5", evaluated >= N - 2 && agree == evaluated,
                 "%d of %d evaluated positions within the printed resolution", agree, evaluated);
        hc_check("gtp-2.6", mx[0] > 0 && mx[3] > 0, "printing loses bits (the comparison is not of a value with itself)");

        /* Positions GTP cannot express are skipped with the reason. */
        hc_position q;
        hc_position_copy(&q, &ps[2], &err);
        q.initial_encore_phase = 1;
        hc_nnoutput o = {0};
        int rc = eval1(&b, &q, &o, &err);
        hc_check("gtp-3.1", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "encore"), "%s", err.msg);
        hc_nnoutput_free(&o);
        hc_position_free(&q);
        hc_position_copy(&q, &ps[2], &err);
        q.komi = 7.25f;
        snprintf(q.rules, sizeof q.rules, "%s", ps[2].rules);
        rc = eval1(&b, &q, &o, &err);
        hc_check("gtp-3.2", rc == -1 && (strstr(err.msg, HC_BACKEND_SKIP) || strstr(err.msg, "komi")),
                 "komi 7.25: %s", err.msg);
        hc_nnoutput_free(&o);
        hc_position_free(&q);

        /* White to move on a position without moves: kata-raw-nn takes the colour. */
        hc_position_copy(&q, &ps[2], &err);
        q.n_moves = 0;
        q.initial_pla = q.next_pla = HC_WHITE;
        hc_nnoutput rq = {0}, gq = {0};
        hc_eval_settings ds = hc_eval_settings_default(NX, NY);
        rc = hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = NX, .ny = NY,
                                                               .max_batch = 1, .threads = 1}, &err);
        rc = rc ? rc : hc_eval_positions(&rb, net, &q, 1, NULL, 1, &ds, &rq, NULL, NULL, NULL, NULL, &err);
        hc_backend_close(&rb);
        rc = rc ? rc : eval1(&b, &q, &gq, &err);
        double mq[4] = {0};
        hc_check("gtp-3.3", rc == 0 && compare(res, &rq, &gq, mq), "white to move, no moves: %s", err.msg);
        hc_nnoutput_free(&rq);
        hc_nnoutput_free(&gq);
        hc_position_free(&q);
        /* Two passes under territory scoring: the record enters the cleanup phase, GTP's play
           prevents it (preventCleanupPhase), so the position is skipped with the reason. */
        hc_position_copy(&q, &ps[5], &err);
        hc_rules jr;
        hc_rules_parse("Japanese", &jr, &err);
        jr.komi = q.komi;
        hc_rules_format(&jr, q.rules, sizeof q.rules);
        q.moves = realloc(q.moves, sizeof(hc_move) * (size_t)(q.n_moves + 2));
        q.moves[q.n_moves++] = (hc_move){q.next_pla, -1, -1};
        q.moves[q.n_moves++] = (hc_move){3 - q.next_pla, -1, -1};
        rc = eval1(&b, &q, &o, &err);
        hc_check("gtp-3.4", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "cleanup phase"),
                 "two passes under Japanese rules: rc %d %s", rc, err.msg);
        hc_nnoutput_free(&o);
        hc_position_free(&q);

        /* Settings: temperature only through the command line, declared. */
        hc_eval_settings t = hc_eval_settings_default(NX, NY);
        t.policy_temperature = 0.5f;
        rc = hc_backend_configure(&b, &t, &err);
        hc_check("gtp-4.1", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "nnPolicyTemperature"),
                 "%s", err.msg);
        hc_backend_close(&b);
    } else {
        hc_fail_n("gtp-2.3", 9, "not run: the fake engine did not open"); /* 2.3-2.6, 3.1-3.4, 4.1 */
    }

    /* Declared temperature and optimism/PDA through the engine agree with ref32 at those settings. */
    {
        hc_eval_settings t = hc_eval_settings_default(NX, NY);
        t.policy_temperature = 0.5f;
        t.playout_doubling_advantage = 0.5;
        hc_nnoutput r2[3] = {{0}}, o2[3] = {{0}};
        hc_backend b2 = {0};
        int ok = hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = NX, .ny = NY,
                                                                   .max_batch = 1, .threads = 1}, &err) == 0 &&
                 hc_eval_positions(&rb, net, ps + 3, 3, NULL, 1, &t, r2, NULL, NULL, NULL, NULL, &err) == 0;
        hc_backend_close(&rb);
        ok = ok && open_gtp(&b2, "@temperature=0.5", "-temperature 0.5", &err) == 0 &&
             hc_backend_configure(&b2, &t, &err) == 0 &&
             hc_eval_positions(&b2, net, ps + 3, 3, NULL, 1, &t, o2, NULL, NULL, NULL, NULL, &err) == 0;
        double mx[4] = {0};
        int agree = 1;
        for (int i = 0; ok && i < 3; i++)
            agree &= compare(hc_backend_resolution(&b2), &r2[i], &o2[i], mx);
        hc_check("gtp-4.2", ok && agree, "temperature 0.5, PDA 0.5: %s (max policy diff %.3g)", err.msg, mx[2]);
        for (int i = 0; i < 3; i++)
            hc_nnoutput_free(&r2[i]), hc_nnoutput_free(&o2[i]);
        hc_backend_close(&b2);
    }

    /* An engine whose kata-raw-nn takes no optimism: fine at optimism 0, skipped otherwise. */
    {
        hc_backend b3 = {0};
        hc_nnoutput o = {0};
        int rc = open_gtp(&b3, "", "-no-optimism-arg", &err);
        rc = rc ? rc : eval1(&b3, &ps[0], &o, &err);
        double mx[4] = {0};
        hc_check("gtp-4.3", rc == 0 && compare(hc_backend_resolution(&b3), &ref[0], &o, mx), "%s", err.msg);
        hc_nnoutput_free(&o);
        hc_eval_settings t = hc_eval_settings_default(NX, NY);
        t.policy_optimism = 1.0;
        if (rc == 0) {
            hc_backend_configure(&b3, &t, &err);
            rc = hc_eval_positions(&b3, net, ps + 1, 1, NULL, 1, &t, &o, NULL, NULL, NULL, NULL, &err);
            hc_check("gtp-4.4", rc == -1 && strstr(err.msg, HC_BACKEND_SKIP) && strstr(err.msg, "optimism"), "%s",
                     err.msg);
            hc_nnoutput_free(&o);
        } else {
            hc_check("gtp-4.4", 0, "not run: the engine without optimism failed at optimism 0");
        }
        hc_backend_close(&b3);
    }

    /* Misbehaviours: each an error naming the command and position, then a restart that works. */
    misbehaviour("gtp-5.1", "garbage", "malformed kata-raw-nn reply");
    misbehaviour("gtp-5.2", "crash", "killed by signal 6");
    misbehaviour("gtp-5.3", "hang", "timed out");
    misbehaviour("gtp-5.4", "short", "whiteOwnership");
    misbehaviour("gtp-5.5", "noprefix", "malformed reply");
    misbehaviour("gtp-5.6", "nan", "");
    {
        hc_backend b4 = {0};
        int rc = open_gtp(&b4, "", "-misbehave die-at-start", &err);
        hc_check("gtp-5.7", rc == -1 && strstr(err.msg, "exited with status 3") && strstr(err.msg, "dying at start"),
                 "dead at start: %s", err.msg);
    }

    for (int i = 0; i < N; i++)
        hc_nnoutput_free(&ref[i]);
    hc_positions_free(ps, nps);
    hc_net_free(net);
    return hc_test_exit();
}
