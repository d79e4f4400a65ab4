/* External backends through the runner: a declared output resolution travels from the backend's
 * child process to the stats, the tier checks and every report; positions a GTP engine cannot
 * express are left out one by one, reported as a JUnit <skipped> testcase of their own. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/config/config.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "reports/results.h"
#include "harness/go/rules.h"
#include "harness/run/runner.h"

enum { N = 12, NX = 10, NY = 14 };

static hc_run *run_yaml(const char *yaml, hc_suite **suite_out)
{
    hc_err err = {0};
    hc_suite *s = hc_suite_parse(yaml, strlen(yaml), "t.yaml", &err);
    *suite_out = s;
    if (!s) {
        printf("# suite error: %s\n", err.msg);
        return NULL;
    }
    hc_run_options o = hc_run_options_default();
    o.timeout_s = 60;
    hc_run *r = hc_run_suite(s, &o, &err);
    if (!r)
        printf("# run error: %s\n", err.msg);
    return r;
}

static int write_positions(const char *path, hc_position *ps, size_t n, hc_err *err)
{
    hc_poswriter *w = hc_poswriter_open(path, err);
    if (!w)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (hc_poswriter_write(w, &ps[i], err)) {
            hc_poswriter_abort(w);
            return -1;
        }
    return hc_poswriter_commit(w, err);
}

/* Writes the reports of a run into dir and returns one of them (malloc'd). */
static char *report(hc_run *r, const char *dir, const char *file)
{
    hc_err err = {0};
    char path[1200];
    if (hc_run_write_reports(r, dir, &err))
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return hc_slurp(path);
}

int main(int argc, char **argv)
{
    hc_plan(27); /* a fixed sequence of checks */
    (void)argc;
    char self[4096], helper[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(helper, sizeof helper, "%s/helper_fake_gtp", dirname(self));
    char model[4096], pp[4096];
    const char *m = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    snprintf(model, sizeof model, "%s", m ? m : "");
    const char *p10 = hc_shared("positions/size10x14.jsonl.gz");
    snprintf(pp, sizeof pp, "%s", p10 ? p10 : "");
    if (!m || !p10) {
        hc_skip_rest("extrun-1", "../shared absent: needs the g170 net and the 10x14 positions");
        return hc_test_exit();
    }
    const char *dir = hc_tmpdir("test_extrun");
    char pos[600], pos_skip[600], pos_all[600], outs_path[600], rep[600], yaml[16384];
    snprintf(pos, sizeof pos, "%s/pos.jsonl", dir);
    snprintf(pos_skip, sizeof pos_skip, "%s/pos_skip.jsonl", dir);
    snprintf(pos_all, sizeof pos_all, "%s/pos_all.jsonl", dir);
    snprintf(outs_path, sizeof outs_path, "%s/outs.jsonl", dir);
    snprintf(rep, sizeof rep, "%s/reports", dir);

    hc_err err = {0};
    hc_position *ps = NULL;
    size_t nps = 0;
    hc_net *net = hc_net_load(model, &err);
    if (!hc_check("extrun-1.1", net && hc_positions_load(pp, &ps, &nps, &err) == 0 && nps >= N, "%s", err.msg)) {
        hc_fail_rest("extrun-1.rest", "not run: the g170 net or the positions did not load");
        return hc_test_exit();
    }
    hc_net_reduce_activations(net);
    for (size_t i = 0; i < N; i++)
        ps[i].index = (long)i;
    hc_check("extrun-1.2", write_positions(pos, ps, N, &err) == 0, "%s", err.msg);

    /* Recorded outputs: ref32's, moved by more than the fp32 tier allows (winrate 0.009 each way,
     * lead and score +0.9) but by less than the resolution the file will declare. */
    hc_nnoutput ref[N];
    memset(ref, 0, sizeof ref);
    hc_backend rb = {0};
    hc_eval_settings es = hc_eval_settings_default(NX, NY);
    int ok = hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = NX, .ny = NY,
                                                               .max_batch = 4, .threads = 1}, &err) == 0 &&
             hc_eval_positions(&rb, net, ps, N, NULL, 4, &es, ref, NULL, NULL, NULL, NULL, &err) == 0;
    hc_backend_close(&rb);
    hc_nnoutwriter *w = ok ? hc_nnoutwriter_open(outs_path, HC_NNOUT_GOLDEN, &err) : NULL;
    for (size_t i = 0; w && i < N; i++) {
        hc_nnoutput o = ref[i];
        o.white_win_prob += 0.009f;
        o.white_loss_prob -= 0.009f;
        o.white_lead += 0.9f;
        o.white_score_mean += 0.9f;
        ok &= hc_nnoutwriter_write(w, &o, NULL, &err) == 0;
    }
    ok = ok && w && hc_nnoutwriter_commit(w, &err) == 0;
    if (!hc_check("extrun-1.3", ok, "recorded outputs: %s", err.msg)) {
        hc_fail_rest("extrun-1.rest", "not run: no recorded outputs");
        return hc_test_exit();
    }

    /* 0. The metric resolutions bound what printing does: round a test output as kata-raw-nn
     * prints it, and no metric moves by more than its resolution (the KL only upwards). The test
     * outputs are the reference with a deterministic perturbation, so that no error is zero. */
    {
        const hc_resolution kr = {.winrate = 5e-7, .score = 5e-4, .policy = 5e-7, .ownership = 5e-8};
        int within = 1, moved = 0;
        double worst = 0;
        char what[200] = "";
        for (size_t i = 0; i < N; i++) {
            hc_nnoutput t = {0}, q = {0};
            hc_nnoutput_init(&t, NX, NY, 1, &err);
            hc_nnoutput_init(&q, NX, NY, 1, &err);
            float *tf[9] = {&t.white_win_prob, &t.white_loss_prob, &t.white_no_result_prob, &t.white_lead,
                            &t.white_score_mean, &t.white_score_mean_sq, &t.var_time_left,
                            &t.shortterm_winloss_error, &t.shortterm_score_error};
            float *qf[9] = {&q.white_win_prob, &q.white_loss_prob, &q.white_no_result_prob, &q.white_lead,
                            &q.white_score_mean, &q.white_score_mean_sq, &q.var_time_left,
                            &q.shortterm_winloss_error, &q.shortterm_score_error};
            const float *rf[9] = {&ref[i].white_win_prob, &ref[i].white_loss_prob, &ref[i].white_no_result_prob,
                                  &ref[i].white_lead, &ref[i].white_score_mean, &ref[i].white_score_mean_sq,
                                  &ref[i].var_time_left, &ref[i].shortterm_winloss_error,
                                  &ref[i].shortterm_score_error};
            for (int k = 0; k < 9; k++) {
                double unit = k < 3 ? 1e-6 : 1e-3;
                *tf[k] = *rf[k] * (1.0f + 3e-6f * (float)((k + (int)i) % 5 - 2)) + (float)(unit * 0.37 * (double)((k * 7 + (int)i) % 3 - 1));
                *qf[k] = (float)(round((double)*tf[k] / unit) * unit);
            }
            for (int c = 0; c <= NX * NY; c++) {
                float p = ref[i].policy_probs[c];
                t.policy_probs[c] = p < 0 ? p : p * (1.0f + 1e-5f * (float)(c % 7 - 3));
                double pr = round((double)t.policy_probs[c] * 1e6) * 1e-6;
                q.policy_probs[c] = p < 0 ? p : (float)(pr == 0 ? 2.5e-7 : pr);
            }
            for (int c = 0; c < NX * NY; c++) {
                t.white_owner_map[c] = ref[i].white_owner_map[c] + 3e-7f * (float)(c % 5 - 2);
                q.white_owner_map[c] = (float)(round((double)t.white_owner_map[c] * 1e7) * 1e-7);
            }
            double et[HC_M_COUNT], eq[HC_M_COUNT], rr[HC_M_COUNT];
            hc_stats_position(&ref[i], &t, et);
            hc_stats_position(&ref[i], &q, eq);
            hc_stats_position_resolution(&ref[i], &q, &kr, rr);
            double ot = 0, oq = 0;
            for (int c = 0; c < NX * NY; c++) {
                ot = hc_max_nan(ot, fabsf(ref[i].white_owner_map[c] - t.white_owner_map[c]));
                oq = hc_max_nan(oq, fabsf(ref[i].white_owner_map[c] - q.white_owner_map[c]));
            }
            et[HC_M_OWNERSHIP] = ot;
            eq[HC_M_OWNERSHIP] = oq;
            for (int mm = 0; mm < HC_M_COUNT; mm++) {
                double d = mm == HC_M_POLICY_KL ? eq[mm] - et[mm] : fabs(eq[mm] - et[mm]);
                moved |= eq[mm] != et[mm];
                if (rr[mm] > 0)
                    worst = hc_max_nan(worst, d / rr[mm]);
                if (!(d <= rr[mm] * (1 + 1e-9) + 1e-12)) { /* a NaN moved it out of range too */
                    within = 0;
                    snprintf(what, sizeof what, "position %zu %s: moved %g, resolution %g", i,
                             hc_metric_infos[mm].name, d, rr[mm]);
                }
            }
            hc_nnoutput_free(&t);
            hc_nnoutput_free(&q);
        }
        printf("# printing moved each metric by at most %.3g of its resolution\n", worst);
        hc_check("extrun-1.4", within && moved && worst > 0.05, "%s (worst ratio %g)", what, worst);
    }

    /* 1. The same errors with and without a declared resolution. */
    const char *fmt = "name: t\n"
                      "nets:\n  - {name: g170, model: %s}\n"
                      "boards:\n  - {name: b, positions: %s, nnBuffer: 10x14, maxBatchSize: 4}\n"
                      "backends:\n  - {name: rec, backend: \"%s\", tiers: [fp32]}\n"
                      "modes: [unbatched]\n";
    char spec[1200];
    snprintf(spec, sizeof spec, "file:@resolution=0.01,1,0.01,0.05 %s", outs_path);
    snprintf(yaml, sizeof yaml, fmt, model, pos, spec);
    hc_suite *s;
    hc_run *r = run_yaml(yaml, &s);
    const hc_results *rs = r ? hc_run_results(r) : NULL;
    const hc_result *it = rs && rs->n == 1 ? &rs->items[0] : NULL;
    const hc_stats *st = it ? it->stats : NULL;
    if (hc_check("extrun-2.1", it && it->outcome == HC_OUT_CHECKED && st, "%s", it && it->message ? it->message : "no result")) {
        double wr = st->m[HC_M_WINRATE].v[HC_P_MAX], lead = st->m[HC_M_LEAD].v[HC_P_MAX];
        printf("# errors: winrate max %.4g (resolution %.4g), lead max %.4g (resolution %.4g)\n", wr,
               st->res[HC_M_WINRATE], lead, st->res[HC_M_LEAD]);
        hc_check("extrun-2.2", wr > 0.0045 && lead > 0.34, "the errors exceed fp32's 99%% limits: %g %g", wr, lead);
        hc_check("extrun-2.3", fabs(st->res[HC_M_WINRATE] - 0.02) < 1e-6 && fabs(st->res[HC_M_LEAD] - 1) < 1e-5 &&
                                   st->res[HC_M_OWNERSHIP] >= 0.05 && st->res[HC_M_POLICY_KL] > 0 &&
                                   st->out_res.score == 1,
                 "metric resolutions derived from the declared one: winrate %g lead %g own %g kl %g",
                 st->res[HC_M_WINRATE], st->res[HC_M_LEAD], st->res[HC_M_OWNERSHIP], st->res[HC_M_POLICY_KL]);
        hc_check("extrun-2.4", it->checks && it->checks[0].pass && hc_run_status(r) == 0,
                 "within limit + resolution: the fp32 tier passes");
        char *junit = report(r, rep, "junit.xml");
        hc_check("extrun-2.5", junit && strstr(junit, "name=\"winrateError.resolution\"") &&
                                   strstr(junit, "name=\"outputResolution.score\" value=\"1\"") && !strstr(junit, "<failure"),
                 "JUnit shows the resolution");
        free(junit);
        char *md = report(r, rep, "report.md");
        hc_check("extrun-2.6", md && strstr(md, "| resolution |") && strstr(md, "declared resolution"), "markdown");
        free(md);
        char *csv = report(r, rep, "report.csv");
        hc_check("extrun-2.7", csv && strstr(csv, ",resolution,skipped_positions,") && strstr(csv, ",0.02"), "csv");
        free(csv);
        char *html = report(r, rep, "report.html");
        hc_check("extrun-2.8", html && strstr(html, ">resolution</th>"), "html");
        free(html);
        /* results.json keeps the resolution: the verdict recomputed on reading agrees. */
        char jpath[700];
        snprintf(jpath, sizeof jpath, "%s/results.json", rep);
        hc_results_doc *d = hc_results_read_json(jpath, &err);
        const hc_results *dr = d ? hc_results_doc_results(d) : NULL;
        hc_check("extrun-2.9", dr && dr->n == 1 && dr->items[0].checks && dr->items[0].checks[0].pass &&
                                   dr->items[0].stats->res[HC_M_WINRATE] == st->res[HC_M_WINRATE],
                 "results.json round trip: %s", err.msg);
        hc_results_doc_free(d);
    } else {
        hc_fail_n("extrun-2.2", 8, "not run: no checked result"); /* 2.2-2.9 */
    }
    hc_run_free(r);
    hc_suite_free(s);

    snprintf(spec, sizeof spec, "file:%s", outs_path);
    snprintf(yaml, sizeof yaml, fmt, model, pos, spec);
    r = run_yaml(yaml, &s);
    rs = r ? hc_run_results(r) : NULL;
    it = rs && rs->n == 1 ? &rs->items[0] : NULL;
    hc_check("extrun-2.10", it && it->outcome == HC_OUT_CHECKED && it->checks && !it->checks[0].pass &&
                                it->stats->res[HC_M_WINRATE] == 0 && hc_run_status(r) == 1,
             "the same errors without a declared resolution fail the fp32 tier");
    if (r) {
        char *junit = report(r, rep, "junit.xml");
        hc_check("extrun-2.11", junit && strstr(junit, "<failure") && !strstr(junit, ".resolution\""),
                 "no resolution shown for exact outputs");
        free(junit);
    }
    hc_run_free(r);
    hc_suite_free(s);

    /* 2. Positions a GTP engine cannot express: three in an encore phase. */
    hc_position sk[N];
    for (size_t i = 0; i < N; i++)
        hc_position_copy(&sk[i], &ps[i], &err);
    /* The encore needs territory scoring. */
    hc_rules jr;
    hc_rules_parse("Japanese", &jr, &err);
    for (size_t i = 0; i < N; i++) {
        jr.komi = sk[i].komi;
        hc_rules_format(&jr, sk[i].rules, sizeof sk[i].rules);
    }
    sk[3].initial_encore_phase = 1;
    sk[7].initial_encore_phase = 2;
    sk[9].initial_encore_phase = 1;
    hc_check("extrun-3.1", write_positions(pos_skip, sk, N, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < N; i++)
        sk[i].initial_encore_phase = 1;
    hc_check("extrun-3.2", write_positions(pos_all, sk, N, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < N; i++)
        hc_position_free(&sk[i]);
    const char *gfmt = "name: t\n"
                       "nets:\n  - {name: g170, model: %s}\n"
                       "boards:\n  - {name: b, positions: %s, nnBuffer: 10x14, maxBatchSize: 4}\n"
                       "backends:\n  - {name: fake, backend: \"gtp:@timeout=30 %s {model} -nn {nnX} {nnY}\", "
                       "tiers: [fp32]}\n"
                       "modes: [unbatched, batched]\n";
    snprintf(yaml, sizeof yaml, gfmt, model, pos_skip, helper);
    r = run_yaml(yaml, &s);
    rs = r ? hc_run_results(r) : NULL;
    int good = rs && rs->n == 2;
    /* GTP evaluates one position per kata-raw-nn: the batched case is no batched check and is
     * skipped as such (never a pass); the unbatched one compares. */
    if (good) {
        it = &rs->items[1];
        hc_check("extrun-3.3.1", it->outcome == HC_OUT_SKIPPED && it->message &&
                                     strstr(it->message, "not a batched check") && !it->has_engine,
                 "gtp batched: outcome %d, %s", it->outcome, it->message ? it->message : "-");
        it = &rs->items[0];
        hc_check("extrun-3.3.2", it->has_engine && it->engine.avg_batch == 1.0 && it->engine.nn_rows == (long)(N - 3) &&
                                     it->engine.positions == (long)(N - 3) && it->engine.eval_seconds > 0 &&
                                     it->engine.peak_rss_kib > 0 && it->engine.engines >= 1,
                 "gtp unbatched: the engine's cost: %ld positions in %g s, peak RSS %g KiB, %d processes",
                 it->engine.positions, it->engine.eval_seconds, it->engine.peak_rss_kib, it->engine.engines);
    }
    for (size_t k = 0; good && k < 1; k++) {
        it = &rs->items[k];
        good = it->outcome == HC_OUT_CHECKED && it->stats && it->stats->n_positions == N - 3 && it->n_skipped == 3 &&
               it->skip_message && strstr(it->skip_message, "encore") && it->checks && it->checks[0].pass;
        if (!good)
            printf("# %s: outcome %d, %zu skipped, message %s / %s\n", it->mode, it->outcome, it->n_skipped,
                   it->message ? it->message : "-", it->skip_message ? it->skip_message : "-");
    }
    hc_check("extrun-3.3", good, "3 of 12 positions skipped, the other 9 compared and passing (unbatched)");
    if (good) {
        const hc_stats *g = rs->items[0].stats;
        printf("# fake GTP engine: %zu positions, %zu skipped: %s\n", g->n_positions, rs->items[0].n_skipped,
               rs->items[0].skip_message);
        hc_check("extrun-3.4", g->out_res.winrate == 5e-7 && g->res[HC_M_WINRATE] > 1e-6 && g->res[HC_M_WINRATE] < 2e-6,
                 "gtp's resolution travels from the child: winrate %g", g->res[HC_M_WINRATE]);
        hc_check("extrun-3.5", strstr(rs->items[0].skip_message, "position 3 (index 3)") &&
                                   strstr(rs->items[0].skip_message, "initial encore phase 2") &&
                                   strstr(rs->items[0].skip_message, "position 9 (index 9)"),
                 "%s", rs->items[0].skip_message);
        char *junit = report(r, rep, "junit.xml");
        hc_check("extrun-3.6", junit && strstr(junit, "mode=unbatched/unexpressible") &&
                                   strstr(junit, "<skipped message=\"3 of 12 positions skipped") &&
                                   strstr(junit, "<skipped message=\"not a batched check") &&
                                   strstr(junit, "skipped=\"2\"") && strstr(junit, "engine.positionsPerSecond"),
                 "JUnit: a skipped testcase for the left-out positions, the batched case skipped, the engine's cost");
        free(junit);
        char *md = report(r, rep, "report.md");
        hc_check("extrun-3.7", md && strstr(md, "(3 positions skipped)") && strstr(md, "- skipped positions: 3 of 12"),
                 "markdown shows the count");
        free(md);
        char *html = report(r, rep, "report.html");
        hc_check("extrun-3.8", html && strstr(html, "9 (3 skipped)"), "html shows the count");
        free(html);
        /* results.json keeps the skipped positions and the resolution: read and written again,
         * byte for byte. */
        char j1[700], j2[700];
        snprintf(j1, sizeof j1, "%s/results.json", rep);
        snprintf(j2, sizeof j2, "%s/again.json", dir);
        hc_results_doc *d = hc_results_read_json(j1, &err);
        const hc_results *dr = d ? hc_results_doc_results(d) : NULL;
        int same = dr && dr->n == 2 && dr->items[0].n_skipped == 3 && hc_results_write_json(dr, j2, &err) == 0;
        char *a = same ? hc_slurp(j1) : NULL, *b2 = same ? hc_slurp(j2) : NULL;
        hc_check("extrun-3.10", a && b2 && strcmp(a, b2) == 0 && strstr(a, "\"skippedPositions\"") &&
                                    strstr(a, "\"resolution\""),
                 "results.json round trip: %s", err.msg);
        free(a);
        free(b2);
        hc_results_doc_free(d);
    } else {
        hc_fail_n("extrun-3.4", 6, "not run: the run with skipped positions failed"); /* 3.4-3.8, 3.10 */
    }
    hc_run_free(r);
    hc_suite_free(s);

    /* Every position unexpressible: the case is skipped with the reasons, not an error. */
    snprintf(yaml, sizeof yaml, gfmt, model, pos_all, helper);
    r = run_yaml(yaml, &s);
    rs = r ? hc_run_results(r) : NULL;
    hc_check("extrun-3.9", rs && rs->n == 2 && rs->items[0].outcome == HC_OUT_SKIPPED && rs->items[0].message &&
                               strstr(rs->items[0].message, "12 of 12 positions skipped") &&
                               hc_run_status(r) == 4 /* nothing checked: a skip is not a pass */,
             "%s", rs && rs->n ? (rs->items[0].message ? rs->items[0].message : "no message") : "no result");
    hc_run_free(r);
    hc_suite_free(s);

    for (size_t i = 0; i < N; i++)
        hc_nnoutput_free(&ref[i]);
    hc_positions_free(ps, nps);
    hc_net_free(net);
    return hc_test_exit();
}
