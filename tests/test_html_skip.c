/* report.html's summary with skipped results (issue 21 item 2): a backend whose every result is
 * skipped reads "skipped" with its reasons in a neutral colour, never as failing; a partly
 * skipped backend keeps its verdict and shows the skipped count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "reports/html.h"
#include "harness/data/nnoutput.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"
#include "harness/base/stream.h"
#include "harness/metrics/tiers.h"

/* The summary table's row (malloc'd, from "<tr" to "</tr>") of net and backend, or NULL. */
static char *summary_row(const char *page, const char *net, const char *backend)
{
    const char *s = strstr(page, "<h2>Summary across nets</h2>");
    const char *end = s ? strstr(s, "</table>") : NULL;
    char want_net[200], want_be[200];
    snprintf(want_net, sizeof want_net, "\">%s</a>", net);
    snprintf(want_be, sizeof want_be, "<td>%s</td>", backend);
    for (const char *r = s ? strstr(s, "<tr class=") : NULL; r && r < end; r = strstr(r + 1, "<tr class=")) {
        const char *e = strstr(r, "</tr>");
        if (!e || e > end)
            break;
        size_t len = (size_t)(e - r) + 5;
        char *row = malloc(len + 1);
        if (!row)
            return NULL;
        memcpy(row, r, len);
        row[len] = 0;
        if (strstr(row, want_net) && strstr(row, want_be))
            return row;
        free(row);
    }
    return NULL;
}

static void mk(hc_nnoutput *o)
{
    hc_err err = {0};
    hc_nnoutput_init(o, 2, 2, 1, &err);
    o->white_win_prob = 0.5f;
    o->white_loss_prob = 0.5f;
    float pol[5] = {0.5f, 0.25f, 0.125f, -1.0f, 0.125f};
    memcpy(o->policy_probs, pol, sizeof pol);
}

int main(void)
{
    hc_plan(7);
    const char *dir = hc_tmpdir("test_html_skip");
    hc_err err = {0};
    enum { NP = 4 };
    hc_nnoutput ref[NP], out[NP];
    for (int i = 0; i < NP; i++) {
        mk(&ref[i]);
        mk(&out[i]);
        out[i].white_lead = 1e-4f * (float)i;
    }
    static hc_stats st;
    static hc_tier tier;
    static hc_tier_check ck;
    hc_stats_compute(ref, out, NP, &st, &err);
    hc_tier_builtin("fp16", &tier, &err);
    hc_tier_check_stats(&tier, &st, &ck);
    hc_result checked = {.net = "g170", .board = "size9", .backend = "emulate:fp16", .mode = "unbatched",
                         .outcome = HC_OUT_CHECKED, .stats = &st, .n_tiers = 1, .tiers = &tier, .checks = &ck,
                         .seconds = 1.0};
    hc_result skipped = checked;
    skipped.outcome = HC_OUT_SKIPPED;
    skipped.stats = NULL;
    skipped.checks = NULL;
    hc_result items[7];
    /* cuda:fp16: every result skipped, one reason */
    items[0] = skipped;
    items[0].backend = "cuda:fp16";
    items[0].message = "no CUDA device";
    items[1] = items[0];
    items[1].mode = "batched";
    /* emulate:fp16: one of two skipped */
    items[2] = checked;
    items[3] = skipped;
    items[3].mode = "batched";
    items[3].message = "batched mode off for this board";
    /* gtp:katago: every result skipped, two reasons (each shown once) */
    items[4] = skipped;
    items[4].backend = "gtp:katago";
    items[4].message = "KATAGO is not set";
    items[5] = items[4];
    items[5].board = "size13";
    items[6] = items[4];
    items[6].mode = "batched";
    items[6].message = "the engine has no batched mode";
    hc_results rs = {.suite = "skips", .items = items, .n = 7};
    char path[600];
    snprintf(path, sizeof path, "%s/report.html", dir ? dir : ".");
    size_t len = 0;
    char *page = NULL;
    if (!hc_check("htmlskip-1.1", dir && hc_html_write(&rs, path, &err) == 0 &&
                                      (page = hc_read_file(path, 1 << 24, &len, &err)) != NULL,
                  "write %s: %s", path, err.msg)) {
        hc_fail_n("htmlskip-1.2", 6, "not run: no page (htmlskip-1.1 failed)");
        goto out;
    }
    char *a = summary_row(page, "g170", "cuda:fp16");
    hc_check("htmlskip-1.2",
             a && !strncmp(a, "<tr class=skip>", 15) && strstr(a, "<td>skipped: no CUDA device</td>") &&
                 !strstr(a, "fail") && !strstr(a, "error"),
             "all-skipped backend's row: %s", a ? a : "(none)");
    char *b = summary_row(page, "g170", "emulate:fp16");
    hc_check("htmlskip-1.3", b && !strncmp(b, "<tr class=pass>", 15) && strstr(b, "all tiers pass; 1 of 2 skipped"),
             "partly skipped backend's row: %s", b ? b : "(none)");
    char *c = summary_row(page, "g170", "gtp:katago");
    hc_check("htmlskip-1.4",
             c && !strncmp(c, "<tr class=skip>", 15) &&
                 strstr(c, "<td>skipped: KATAGO is not set; the engine has no batched mode</td>"),
             "two reasons, each once: %s", c ? c : "(none)");
    /* the neutral colour: a grey bar for skip rows, the red one only for fail rows */
    hc_check("htmlskip-1.5", strstr(page, "tr.skip td:first-child{border-left:4px solid #bbb}") &&
                                 strstr(page, "tr.fail td:first-child{border-left:4px solid #d62728}"),
             "style sheet lacks a neutral skip row");
    /* nothing anywhere on the page calls a skipped backend failing */
    hc_check("htmlskip-1.6", !strstr(page, "a tier fails") && !strstr(page, "<tr class=fail>"),
             "the page shows a failure although nothing failed");
    hc_check("htmlskip-1.7", strstr(page, "7 results: 1 passed, 0 failed, 0 errors, 6 skipped.") != NULL,
             "header counts");
    free(a);
    free(b);
    free(c);
out:
    free(page);
    for (int i = 0; i < NP; i++) {
        hc_nnoutput_free(&ref[i]);
        hc_nnoutput_free(&out[i]);
    }
    return hc_test_exit();
}
