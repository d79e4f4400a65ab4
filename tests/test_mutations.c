/* The checker's teeth: every mutate:KIND:ref32 (a bug a real backend shipped, planted into the
 * reference engine) must fail the fp16 gate where the real bug showed, while plain ref32
 * passes it (and halfcheck's fp32-strict tier). Two boards of the g170 net: 48 positions of
 * the rectangular set (every 14th: boards of seven sizes, all smaller than the 19x19 buffer)
 * and the first 48 of the 10x14 set (boards filling the buffer); both modes. The reference is cached
 * under build/tmp so it is computed once per board. Prints the figures it sees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/config/config.h"
#include "hc_test.h"
#include "harness/data/positions.h"
#include "reports/results.h"
#include "harness/run/runner.h"

#define N_POSITIONS 48

/* Where each kind must fail: board (0 rect, 1 10x14) x mode (0 unbatched, 1 batched), and
 * where it must pass because the real bug was invisible there (1 fail, 0 pass, -1 either). */
static const struct {
    const char *spec;
    int fails[2][2];
} kinds[] = {
    {"ref32", {{0, 0}, {0, 0}}},
    /* Only batched, only where rows of one batch have different masks: boards smaller than
     * the buffer, of different sizes or placed in different corners by their symmetry. */
    {"mutate:mask-stride:ref32", {{0, 1}, {0, 0}}},
    {"mutate:pass-dropped:ref32", {{1, 1}, {1, 1}}},
    {"mutate:policy-transposed:ref32", {{1, 1}, {1, 1}}},
    {"mutate:symmetry-not-inverted:ref32", {{1, 1}, {1, 1}}},
    /* NaN only where the mask has zeros: boards smaller than the buffer. */
    {"mutate:fp16-overflow:ref32", {{1, 1}, {0, 0}}},
    /* A stale row needs a batch. */
    {"mutate:stale-row:ref32", {{0, 1}, {0, 1}}},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static const char *const boards[2] = {"rect19", "b10x14"};
static const char *const modes[2] = {"unbatched", "batched"};

static const hc_result *find(const hc_results *rs, const char *board, const char *mode)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->items[i].board, board) == 0 && strcmp(rs->items[i].mode, mode) == 0)
            return &rs->items[i];
    return NULL;
}

/* 1: the fp16 gate failed (tier check failed, or an error); 0: passed; -1: no result. */
static int gate_failed(const hc_result *r)
{
    if (!r)
        return -1;
    if (r->outcome == HC_OUT_ERROR || hc_result_is_error(r))
        return 1;
    if (r->outcome != HC_OUT_CHECKED || !r->checks || r->n_tiers < 1)
        return -1;
    return !r->checks[0].pass;
}

static void print_figures(const char *spec, const hc_result *r)
{
    if (!r)
        return;
    if (r->outcome == HC_OUT_ERROR || !r->stats) {
        printf("# %-36s %-6s %-9s ERROR %s\n", spec, r->board, r->mode, r->message ? r->message : "");
        return;
    }
    const hc_stats *s = r->stats;
    printf("# %-36s %-6s %-9s fp16 %s  winrate p99 %.3g%% max %.3g%%  topPolicy max %.3g%%  policyKL max %.3g  "
           "ownership max %.3g  lead max %.3g\n",
           spec, r->board, r->mode, r->checks && r->checks[0].pass ? "pass" : "FAIL",
           100 * s->m[HC_M_WINRATE].v[HC_P_99], 100 * s->m[HC_M_WINRATE].v[HC_P_MAX],
           100 * s->m[HC_M_TOP_POLICY].v[HC_P_MAX], s->m[HC_M_POLICY_KL].v[HC_P_MAX],
           s->m[HC_M_OWNERSHIP].v[HC_P_MAX], s->m[HC_M_LEAD].v[HC_P_MAX]);
}

int main(void)
{
    hc_plan(57 + N_KINDS);
    const char *tmp = hc_tmpdir("test_mutations");
    const char *p = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!p || !tmp) {
        hc_skip_rest("mutations-1", "../shared/nets/g170-b6c96-s175395328-d26788732.bin.gz absent");
        return hc_test_exit();
    }
    char net[2048];
    hc_abspath(p, net, sizeof net);
    const char *src[2] = {"positions/sizerect.jsonl.gz", "positions/size10x14.jsonl.gz"};
    const char *dst[2] = {"rect48.jsonl", "b10x14_48.jsonl"};
    /* Every 14th of the rectangular set mixes all its board sizes (13x19 ... 7x11; its first
     * 48 are one 9x9 game); the 10x14 set fills its buffer whichever positions we take. */
    const int stride[2] = {14, 1};
    hc_err err = {0};
    for (int b = 0; b < 2; b++) {
        p = hc_shared(src[b]);
        if (!p) {
            hc_skip_rest("mutations-1", "../shared/%s absent", src[b]);
            return hc_test_exit();
        }
        char in[2048], out[2048], name[32];
        snprintf(in, sizeof in, "%s", p);
        snprintf(out, sizeof out, "%s/%s", tmp, dst[b]);
        snprintf(name, sizeof name, "mutations-1.%d", b + 1);
        if (!hc_check(name, hc_write_positions(in, out, N_POSITIONS, stride[b], &err) == 0, "%s", err.msg))
            return hc_fail_rest("mutations-setup.rest", "not run: %s failed", name), hc_test_exit();
        hc_position *ps = NULL;
        size_t n = 0;
        snprintf(name, sizeof name, "mutations-1.%d.1", b + 1);
        hc_check(name, hc_positions_load(out, &ps, &n, &err) == 0 && n == N_POSITIONS, "%s holds %zu positions: %s", out,
                 n, err.msg);
        hc_positions_free(ps, n);
    }
    char cache[2048];
    snprintf(cache, sizeof cache, "%s/cache", tmp);

    for (size_t k = 0; k < N_KINDS; k++) {
        char yaml[4096], suite_path[2048], name[64];
        int len = snprintf(yaml, sizeof yaml,
                           "name: mutations\n"
                           "nets:\n  - {name: g170, model: \"%s\"}\n"
                           "boards:\n"
                           "  - {name: rect19, positions: %s, nnBuffer: 19x19}\n"
                           "  - {name: b10x14, positions: %s, nnBuffer: 10x14}\n"
                           "backends:\n  - {backend: \"%s\", tiers: [fp16, fp32-strict]}\n",
                           net, dst[0], dst[1], kinds[k].spec);
        snprintf(suite_path, sizeof suite_path, "%s/suite%zu.yaml", tmp, k);
        hc_suite *suite = hc_suite_parse(yaml, (size_t)len, suite_path, &err);
        snprintf(name, sizeof name, "mutations-2.%zu", k + 1);
        if (!hc_check(name, suite != NULL, "%s: %s", kinds[k].spec, err.msg))
            continue;
        hc_run *run = hc_test_run_suite(suite, cache, tmp, &err);
        snprintf(name, sizeof name, "mutations-3.%zu", k + 1);
        if (!hc_check(name, run != NULL, "%s: %s", kinds[k].spec, err.msg)) {
            hc_suite_free(suite);
            continue;
        }
        const hc_results *rs = hc_run_results(run);
        int status = hc_run_status(run);
        int any_fail = 0;
        for (int b = 0; b < 2; b++)
            for (int m = 0; m < 2; m++) {
                const hc_result *r = find(rs, boards[b], modes[m]);
                print_figures(kinds[k].spec, r);
                int got = gate_failed(r);
                int want = kinds[k].fails[b][m];
                any_fail |= got == 1;
                snprintf(name, sizeof name, "mutations-4.%zu.%d.%d", k + 1, b + 1, m + 1);
                hc_check(name, got == want, "%s on %s %s: gate %s, expected it to %s (%s)", kinds[k].spec, boards[b],
                         modes[m], got == 1 ? "failed" : got == 0 ? "passed" : "gave no result",
                         want ? "fail" : "pass", r && r->message ? r->message : "");
            }
        snprintf(name, sizeof name, "mutations-5.%zu", k + 1);
        if (k == 0) {
            hc_check(name, status == 0, "plain ref32: status %d, expected 0", status);
            /* ref32 against the reference (computed at batch 16) also passes halfcheck's own
             * fp32-strict tier in both modes: the engine's rows do not depend on the batch. */
            for (int b = 0; b < 2; b++)
                for (int m = 0; m < 2; m++) {
                    const hc_result *r = find(rs, boards[b], modes[m]);
                    char n2[64];
                    snprintf(n2, sizeof n2, "mutations-6.%d.%d", b + 1, m + 1);
                    hc_check(n2, r && r->checks && r->n_tiers == 2 && r->checks[1].pass,
                             "ref32 %s %s fails fp32-strict", boards[b], modes[m]);
                }
        } else {
            hc_check(name, any_fail && (status == 1 || status == 3), "%s: status %d, expected 1 or 3",
                     kinds[k].spec, status);
        }
        /* Whose outputs: the stale row is named as one, on both boards, and only batched; no
         * other mutation's outputs are taken for another position's. */
        int stale = strcmp(kinds[k].spec, "mutate:stale-row:ref32") == 0, diag_ok = 1;
        char why[600] = "";
        for (int b = 0; b < 2; b++)
            for (int m = 0; m < 2; m++) {
                const hc_result *r = find(rs, boards[b], modes[m]);
                size_t named = 0, st = 0;
                for (size_t i = 0; r && i < r->n_diag; i++) {
                    named += r->diag[i].kind != HC_DIAG_LEGAL;
                    st += r->diag[i].kind == HC_DIAG_STALE;
                }
                int want = stale && m == 1;
                if (want ? !(named > 0 && st == named && r->message && strstr(r->message, "(a stale row"))
                         : named != 0) {
                    diag_ok = 0;
                    snprintf(why, sizeof why, "%s %s: %zu named, %zu stale: %.300s", boards[b], modes[m], named, st,
                             r && r->message ? r->message : "");
                }
            }
        snprintf(name, sizeof name, "mutations-7.%zu", k + 1);
        hc_check(name, diag_ok, "%s: diagnosis %s", kinds[k].spec, why);
        hc_run_free(run);
        hc_suite_free(suite);
    }
    return hc_test_exit();
}
