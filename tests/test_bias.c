/* Bias apart from noise (harness/metrics/bias.h): a constant +0.3% winrate shift is flagged
 * systematic and noise of the same size is not, on seeded synthetic outputs whose absolute
 * errors are the same; the resolution and the sample minimum hold a flag back; top-move
 * agreement on a hand-made example; a tier's maxBias fails the shift and passes the noise
 * (YAML included); results.json keeps the figures and bias limits, and halfcheck merge's reports
 * (results.json, report.md, summary.md, junit.xml) keep them too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness/config/config.h"
#include "hc_test.h"
#include "harness/run/merge.h"
#include "reports/reports.h"
#include "harness/data/nnoutput.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

#define NPOS 200
#define SHIFT 0.003f

/* A 2x2 buffer: policy of 5 (pass last), ownership of 4, winrate and loss 0 (each check sets its own). */
static void mk(hc_nnoutput *o)
{
    static const float pol[5] = {0.5f, 0.2f, 0.2f, -1.0f, 0.1f};
    hc_test_out2x2(o, pol);
    o->white_win_prob = o->white_loss_prob = 0;
}

static void unmk(hc_nnoutput *o, size_t n)
{
    hc_test_outs_free(o, n);
}

/* A seeded generator (64-bit LCG, top bits): the same outputs on every platform. */
static hc_rng rng = {12345};

/* The reference: winrates spread over [0.2, 0.8], leads over [-10, 10]; copies of it for the
 * test sets, winrate moved by +SHIFT everywhere (shift) or by ±SHIFT with a random sign (noise):
 * win +d, loss -d moves 0.5*(win-loss) by d. */
static void make_sets(hc_nnoutput *ref, hc_nnoutput *shift, hc_nnoutput *noise)
{
    for (int i = 0; i < NPOS; i++) {
        mk(&ref[i]);
        mk(&shift[i]);
        mk(&noise[i]);
        float w = (float)(0.2 + 0.6 * hc_rand01(&rng));
        ref[i].white_win_prob = w;
        ref[i].white_loss_prob = 1.0f - w;
        ref[i].white_lead = (float)(20.0 * hc_rand01(&rng) - 10.0);
        ref[i].white_score_mean = ref[i].white_lead;
        ref[i].white_score_mean_sq = ref[i].white_lead * ref[i].white_lead + 16.0f;
        float d = hc_rand01(&rng) < 0.5 ? -SHIFT : SHIFT;
        hc_nnoutput *t[2] = {&shift[i], &noise[i]};
        float dd[2] = {SHIFT, d};
        for (int k = 0; k < 2; k++) {
            float *pp = t[k]->policy_probs, *po = t[k]->white_owner_map;
            *t[k] = ref[i];
            t[k]->policy_probs = pp;
            t[k]->white_owner_map = po;
            t[k]->white_win_prob = w + dd[k];
            t[k]->white_loss_prob = (1.0f - w) - dd[k];
        }
    }
}

static void test_flags(const hc_nnoutput *ref, const hc_nnoutput *shift, const hc_nnoutput *noise, hc_stats *ss,
                       hc_stats *sn)
{
    hc_err err = {0};
    int rc = hc_stats_compute(ref, shift, NPOS, ss, &err) | hc_stats_compute(ref, noise, NPOS, sn, &err);
    hc_check("bias-1.1", rc == 0, "stats: %s", err.msg);
    /* The absolute statistics cannot tell the two apart: every error is 0.3%. */
    double as = ss->m[HC_M_WINRATE].v[HC_P_AVG], an = sn->m[HC_M_WINRATE].v[HC_P_AVG];
    hc_check("bias-1.2", fabs(as - 0.003) < 2e-7 && fabs(an - 0.003) < 2e-7 && fabs(ss->m[HC_M_WINRATE].v[HC_P_MAX] - sn->m[HC_M_WINRATE].v[HC_P_MAX]) < 2e-7,
             "winrate avg %.9g (shift) %.9g (noise), same size", as, an);
    const hc_bias_stats *bs = &ss->bias[HC_M_WINRATE], *bn = &sn->bias[HC_M_WINRATE];
    hc_check("bias-1.3", bs->n == NPOS && fabs(bs->mean - 0.003) < 2e-7 && bs->systematic,
             "shift: n %zu mean %.9g se %.3g systematic %d", bs->n, bs->mean, bs->se, bs->systematic);
    hc_check("bias-1.4", bn->n == NPOS && !bn->systematic && fabs(bn->mean) < 4 * bn->se && bn->se > 1e-4,
             "noise: mean %.9g se %.3g (%.2f s.e.) systematic %d", bn->mean, bn->se, bn->mean / bn->se, bn->systematic);
    hc_check("bias-1.5",
             fabs(bs->p[HC_BP_1] - 0.003) < 2e-7 && fabs(bs->p[HC_BP_99] - 0.003) < 2e-7 &&
                 fabs(bn->p[HC_BP_1] + 0.003) < 2e-7 && fabs(bn->p[HC_BP_99] - 0.003) < 2e-7 &&
                 bn->p[HC_BP_5] <= bn->p[HC_BP_50] && bn->p[HC_BP_50] <= bn->p[HC_BP_95],
             "percentiles: shift p1 %.9g p99 %.9g; noise p1 %.9g p50 %.9g p99 %.9g", bs->p[HC_BP_1], bs->p[HC_BP_99],
             bn->p[HC_BP_1], bn->p[HC_BP_50], bn->p[HC_BP_99]);
    /* Unchanged outputs (lead, score): mean 0, no flag; no signed form for KL and ownership. */
    hc_check("bias-1.6",
             ss->bias[HC_M_LEAD].n == NPOS && ss->bias[HC_M_LEAD].mean == 0 && !ss->bias[HC_M_LEAD].systematic &&
                 !ss->bias[HC_M_SCORE_STDEV].systematic && ss->bias[HC_M_POLICY_KL].n == 0 &&
                 ss->bias[HC_M_OWNERSHIP].n == 0,
             "lead mean %g, KL n %zu, ownership n %zu", ss->bias[HC_M_LEAD].mean, ss->bias[HC_M_POLICY_KL].n,
             ss->bias[HC_M_OWNERSHIP].n);

    /* Outputs printed at 1e-2 cannot resolve a 0.3% shift: no flag. At 1e-6 they can. */
    hc_stats r2;
    hc_resolution coarse = {.winrate = 5e-3, .score = 5e-3, .policy = 5e-3, .ownership = 5e-3};
    hc_resolution fine = {.winrate = 5e-7, .score = 5e-7, .policy = 5e-7, .ownership = 5e-7};
    rc = hc_stats_compute_ex(ref, shift, NPOS, NULL, &coarse, &r2, &err);
    hc_check("bias-1.7", rc == 0 && !r2.bias[HC_M_WINRATE].systematic && r2.res[HC_M_WINRATE] > 0.003,
             "coarse resolution %g: systematic %d", r2.res[HC_M_WINRATE], r2.bias[HC_M_WINRATE].systematic);
    rc = hc_stats_compute_ex(ref, shift, NPOS, NULL, &fine, &r2, &err);
    hc_check("bias-1.8", rc == 0 && r2.bias[HC_M_WINRATE].systematic, "fine resolution %g: systematic %d",
             r2.res[HC_M_WINRATE], r2.bias[HC_M_WINRATE].systematic);
    /* Too few samples for a standard error: no flag. */
    rc = hc_stats_compute(ref, shift, HC_BIAS_MIN_SAMPLES - 1, &r2, &err);
    hc_check("bias-1.9", rc == 0 && !r2.bias[HC_M_WINRATE].systematic && r2.bias[HC_M_WINRATE].n == HC_BIAS_MIN_SAMPLES - 1,
             "%d positions: systematic %d", HC_BIAS_MIN_SAMPLES - 1, r2.bias[HC_M_WINRATE].systematic);
    /* Skipped positions are left out of the signed figures as of the absolute ones. */
    unsigned char skip[NPOS] = {0};
    for (int i = 0; i < NPOS; i += 2)
        skip[i] = 1;
    rc = hc_stats_compute_ex(ref, noise, NPOS, skip, NULL, &r2, &err);
    hc_check("bias-1.10", rc == 0 && r2.bias[HC_M_WINRATE].n == NPOS / 2 && r2.top_agree.n == NPOS / 2,
             "skips: n %zu, top n %zu", r2.bias[HC_M_WINRATE].n, r2.top_agree.n);
}

/* Hand-made: the first largest probability is the top; illegal (-1) never is. */
static void test_top(void)
{
    hc_nnoutput r[5], t[5];
    float rp[5][5] = {{0.5f, 0.2f, 0.2f, -1, 0.1f}, {0.1f, 0.6f, 0.2f, -1, 0.1f}, {0.1f, 0.1f, 0.7f, -1, 0.1f},
                      {0.1f, 0.1f, 0.1f, -1, 0.7f}, {0.4f, 0.4f, 0.1f, -1, 0.1f}};
    float tp[5][5] = {{0.6f, 0.2f, 0.1f, -1, 0.1f}, {0.1f, 0.3f, 0.5f, -1, 0.1f}, {0.1f, 0.1f, 0.7f, -1, 0.1f},
                      {0.1f, 0.5f, 0.1f, -1, 0.3f}, {0.4f, 0.4f, 0.1f, -1, 0.1f}};
    for (int i = 0; i < 5; i++) {
        mk(&r[i]);
        mk(&t[i]);
        memcpy(r[i].policy_probs, rp[i], sizeof rp[i]);
        memcpy(t[i].policy_probs, tp[i], sizeof tp[i]);
    }
    hc_stats s;
    hc_err err = {0};
    int rc = hc_stats_compute(r, t, 5, &s, &err);
    /* Agree: 0 (0/0), 2 (2/2), 4 (0/0 on a tie, the first); disagree: 1 (1/2), 3 (pass/1). */
    hc_check("bias-2.1", rc == 0 && s.top_agree.n == 5 && s.top_agree.agree == 3 && hc_top_agree_rate(&s.top_agree) == 0.6,
             "agree %zu of %zu", s.top_agree.agree, s.top_agree.n);
    hc_check("bias-2.2", hc_policy_top(&r[3]) == 4 && hc_policy_top(&t[1]) == 2 && hc_policy_top(&r[4]) == 0,
             "tops %d %d %d", hc_policy_top(&r[3]), hc_policy_top(&t[1]), hc_policy_top(&r[4]));
    /* Signed topPolicy: the test's probability of the reference's top minus the reference's; least at position 3 (pass). */
    hc_check("bias-2.3", fabs(s.bias[HC_M_TOP_POLICY].p[HC_BP_1] - (0.3 - 0.7)) < 1e-6,
             "signed topPolicy p1 %g", s.bias[HC_M_TOP_POLICY].p[HC_BP_1]);
    unmk(r, 5);
    unmk(t, 5);
}

static void test_tier(const hc_stats *ss, const hc_stats *sn, hc_tier *tb)
{
    hc_err err = {0};
    hc_tier_check cs, cn;
    hc_tier_init(tb, "bias");
    hc_check("bias-3.1", hc_tier_set_bias(tb, HC_M_WINRATE, 1, 0.002, &err) == 0, "set: %s", err.msg);
    hc_tier_check_stats(tb, ss, &cs);
    hc_tier_check_stats(tb, sn, &cn);
    hc_check("bias-3.2", !cs.pass && cs.bias_verdict[HC_M_WINRATE] == HC_V_FAIL && cs.first_bias_fail == HC_M_WINRATE &&
                             cs.n_checked == 1 && cs.n_failed == 1 && fabs(cs.bias_ratio[HC_M_WINRATE] - 1.5) < 1e-4,
             "shift: pass %d verdict %d ratio %g", cs.pass, cs.bias_verdict[HC_M_WINRATE], cs.bias_ratio[HC_M_WINRATE]);
    hc_check("bias-3.3", cn.pass && cn.bias_verdict[HC_M_WINRATE] == HC_V_PASS && cn.first_bias_fail == -1,
             "noise: pass %d verdict %d", cn.pass, cn.bias_verdict[HC_M_WINRATE]);
    /* A systematic bias within its limit passes. */
    hc_tier t2;
    hc_tier_init(&t2, "loose");
    hc_tier_set_bias(&t2, HC_M_WINRATE, 100, 0.4, &err);
    hc_tier_check_stats(&t2, ss, &cs);
    hc_check("bias-3.4", cs.pass && cs.bias_verdict[HC_M_WINRATE] == HC_V_PASS, "0.4%% limit: pass %d", cs.pass);
    /* No signed form, no bias limit. */
    hc_check("bias-3.5", hc_tier_set_bias(&t2, HC_M_POLICY_KL, 1, 0.1, &err) == -1 && strstr(err.msg, "policyKL"),
             "KL bias limit refused: %s", err.msg);
    /* The built-in tiers set none: their verdicts do not move. */
    hc_tier f;
    hc_tier_builtin("fp16", &f, &err);
    hc_tier_check_stats(&f, ss, &cs);
    int any = 0;
    for (int m = 0; m < HC_M_COUNT; m++)
        any |= f.bias_set[m];
    hc_check("bias-3.6", !any && cs.pass && cs.n_checked == 18, "fp16: bias limits %d, pass %d, %d checked", any, cs.pass,
             cs.n_checked);

    /* The YAML key: "x%" as for the other limits, file:line:col on a bad one. */
    const char *y = "name: fp16-bias\nbase: fp16\nmaxBias: {winrate: 0.2%, lead: 0.05}\n";
    hc_tier ty;
    int rc = hc_tier_cfg_parse(y, strlen(y), "mem/t.yaml", &ty, &err);
    hc_check("bias-3.7", rc == 0 && ty.bias_set[HC_M_WINRATE] && ty.bias_scale[HC_M_WINRATE] == 100 &&
                             ty.bias_limit[HC_M_WINRATE] == 0.2 && ty.bias_set[HC_M_LEAD] && ty.bias_limit[HC_M_LEAD] == 0.05 &&
                             ty.set[HC_M_WINRATE][HC_P_99],
             "parse: %s", err.msg);
    hc_tier_check_stats(&ty, ss, &cs);
    hc_tier_check_stats(&ty, sn, &cn);
    hc_check("bias-3.8", !cs.pass && cn.pass, "fp16-bias: shift pass %d, noise pass %d", cs.pass, cn.pass);
    const char *bad = "name: b\nmaxBias:\n  policyKL: 0.1\n";
    memset(&err, 0, sizeof err);
    rc = hc_tier_cfg_parse(bad, strlen(bad), "mem/b.yaml", &ty, &err);
    hc_check("bias-3.9", rc == -1 && strstr(err.msg, "mem/b.yaml:3:") && strstr(err.msg, "policyKL"), "refused: %s", err.msg);
    const char *neg = "name: b\nmaxBias: {lead: -1}\n";
    memset(&err, 0, sizeof err);
    rc = hc_tier_cfg_parse(neg, strlen(neg), "mem/n.yaml", &ty, &err);
    hc_check("bias-3.10", rc == -1 && strstr(err.msg, "mem/n.yaml:2:") && strstr(err.msg, "lead"), "refused: %s", err.msg);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 22);
    size_t n = buf ? fread(buf, 1, (1 << 22) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

static int same_bias(const hc_stats *a, const hc_stats *b)
{
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_bias_stats *x = &a->bias[m], *y = &b->bias[m];
        if (x->n != y->n || x->mean != y->mean || x->se != y->se || x->systematic != y->systematic)
            return 0;
        for (int p = 0; p < HC_BP_COUNT; p++)
            if (x->p[p] != y->p[p])
                return 0;
    }
    return a->top_agree.n == b->top_agree.n && a->top_agree.agree == b->top_agree.agree;
}

static void test_files(const hc_stats *ss, const hc_stats *sn, const hc_tier *tb)
{
    const char *dir = hc_tmpdir("test_bias");
    char jobs[2][600], merged[600], path[700];
    hc_tier_check cs, cn;
    hc_tier_check_stats(tb, ss, &cs);
    hc_tier_check_stats(tb, sn, &cn);
    hc_result items[2] = {
        {.net = "n", .board = "b", .backend = "shifted", .mode = "unbatched", .stats = ss, .n_tiers = 1, .tiers = tb, .checks = &cs},
        {.net = "n", .board = "b", .backend = "noisy", .mode = "unbatched", .stats = sn, .n_tiers = 1, .tiers = tb, .checks = &cn}};
    hc_err err = {0};
    int rc = 0;
    for (int j = 0; j < 2; j++) {
        snprintf(jobs[j], sizeof jobs[j], "%s/job%d", dir, j);
        hc_results rs = {.suite = "bias", .timestamp = "2026-01-01T00:00:00", .version = "test", .items = &items[j], .n = 1};
        rc |= hc_reports_write_dir(&rs, jobs[j], &err);
    }
    hc_check("bias-4.1", rc == 0, "write: %s", err.msg);
    snprintf(path, sizeof path, "%s/results.json", jobs[0]);
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *back = d ? hc_results_doc_results(d) : NULL;
    int ok = back && back->n == 1 && back->items[0].stats && same_bias(back->items[0].stats, ss) &&
             back->items[0].tiers[0].bias_set[HC_M_WINRATE] && back->items[0].tiers[0].bias_limit[HC_M_WINRATE] == 0.002 &&
             back->items[0].checks[0].bias_verdict[HC_M_WINRATE] == HC_V_FAIL && !back->items[0].checks[0].pass;
    hc_check("bias-4.2", ok, "results.json round trip: %s", d ? "figures differ" : err.msg);
    hc_results_doc_free(d);

    /* A stored bias verdict that the figures contradict is refused. */
    char *txt = slurp(path);
    char *v = txt ? strstr(txt, "\"biasLimits\"") : NULL;
    v = v ? strstr(v, "\"fail\"") : NULL;
    if (v)
        memcpy(v, "\"pass\"", 6);
    d = v ? hc_results_parse_json(txt, strlen(txt), "edited.json", &err) : NULL;
    hc_check("bias-4.3", v && !d && strstr(err.msg, "biasLimits"), "edited verdict: %s", err.msg);
    hc_results_doc_free(d);
    free(txt);

    /* halfcheck merge reads both jobs back and writes every report with the figures. */
    const char *in[2] = {jobs[0], jobs[1]};
    hc_merge *m = hc_merge_read(in, 2, &err);
    snprintf(merged, sizeof merged, "%s/merged", dir);
    rc = m ? hc_merge_write_reports(m, merged, &err) : -1;
    hc_merge_free(m);
    snprintf(path, sizeof path, "%s/results.json", merged);
    d = rc == 0 ? hc_results_read_json(path, &err) : NULL;
    back = d ? hc_results_doc_results(d) : NULL;
    ok = back && back->n == 2 && same_bias(back->items[0].stats, ss) && same_bias(back->items[1].stats, sn) &&
         back->items[0].checks[0].bias_verdict[HC_M_WINRATE] == HC_V_FAIL &&
         back->items[1].checks[0].bias_verdict[HC_M_WINRATE] == HC_V_PASS;
    hc_check("bias-4.4", ok, "merged results.json: %s", d ? "figures differ" : err.msg);
    hc_results_doc_free(d);
    snprintf(path, sizeof path, "%s/report.md", merged);
    char *md = slurp(path);
    hc_check("bias-4.5",
             md && strstr(md, "| signed error (test - ref) | mean |") && strstr(md, "| winrateError | +0.30000% |") &&
                 strstr(md, "**yes**") && strstr(md, "first winrateError bias: mean +0.30000% > limit 0.2%") &&
                 strstr(md, "top move agrees with the reference's: 100.00% (200 of 200 positions)"),
             "report.md: %.300s", md ? md : "(missing)");
    free(md);
    snprintf(path, sizeof path, "%s/summary.md", merged);
    md = slurp(path);
    hc_check("bias-4.6", md && strstr(md, "| top move agrees, unbatched / batched |") && strstr(md, "| 100.0% / - |"),
             "summary.md: %.400s", md ? md : "(missing)");
    free(md);
    snprintf(path, sizeof path, "%s/junit.xml", merged);
    md = slurp(path);
    hc_check("bias-4.7",
             md && strstr(md, "name=\"winrateError.bias.mean\"") && strstr(md, "name=\"winrateError.bias.p99\"") &&
                 strstr(md, "name=\"winrateError.bias.systematic\" value=\"true\"") &&
                 strstr(md, "name=\"topMoveAgreement\" value=\"1\"") && strstr(md, "first: winrateError bias: mean +0.30000%"),
             "junit.xml");
    free(md);
    snprintf(path, sizeof path, "%s/report.html", merged);
    md = slurp(path);
    hc_check("bias-4.8", md && strstr(md, "<th>signed error (test - ref)</th>") && strstr(md, "Top move agrees with the reference's: 100.00%"),
             "report.html");
    free(md);

    /* The command itself: halfcheck merge of the two jobs (exit 1: the shifted case fails its tier). */
    const char *bin = getenv("HALFCHECK");
    if (!bin || !*bin) {
        hc_skip("bias-4.9", "HALFCHECK is not set (make test sets it): halfcheck merge not run");
        return;
    }
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "%s merge %s %s --out %s/cli --quiet >/dev/null 2>&1", bin, jobs[0], jobs[1], dir);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/cli/results.json", dir);
    d = hc_results_read_json(path, &err);
    back = d ? hc_results_doc_results(d) : NULL;
    ok = WIFEXITED(st) && WEXITSTATUS(st) == 1 && back && back->n == 2 && same_bias(back->items[0].stats, ss) &&
         same_bias(back->items[1].stats, sn) && back->items[0].checks[0].bias_verdict[HC_M_WINRATE] == HC_V_FAIL;
    hc_check("bias-4.9", ok, "halfcheck merge: status %d, %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
             d ? "figures differ" : err.msg);
    hc_results_doc_free(d);
}

int main(void)
{
    hc_plan(10 + 3 + 10 + 9);
    static hc_nnoutput ref[NPOS], shift[NPOS], noise[NPOS];
    make_sets(ref, shift, noise);
    hc_stats ss, sn;
    test_flags(ref, shift, noise, &ss, &sn);
    test_top();
    hc_tier tb;
    test_tier(&ss, &sn, &tb);
    test_files(&ss, &sn, &tb);
    unmk(ref, NPOS);
    unmk(shift, NPOS);
    unmk(noise, NPOS);
    return hc_test_exit();
}
