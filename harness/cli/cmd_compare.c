/* halfcheck compare REF TEST: KataGo's testgpuerror statistics between two outputs files
 * (golden or KataGo reference-file format), checked against tiers, with optional reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/config/config.h"
#include "reports/junit.h"
#include "harness/data/nnoutput.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"
#include "reports/table.h"
#include "harness/metrics/tiers.h"

static const cli_opt opts[] = {
    {"tier", 1, 1, "tier to check: fp32, fp16, fp32-strict, exact (repeatable; default fp16)", "TIER"},
    {"tier-file", 1, 1, "YAML file holding a user tier (repeatable)", "PATH"},
    {"junit", 1, 0, "write JUnit XML here", "PATH"},
    {"json", 1, 0, "write results.json here", "PATH"},
    {"md", 1, 0, "write a markdown table here", "PATH"},
    {"csv", 1, 0, "write a CSV table here", "PATH"},
    {"net", 1, 0, "net name for the reports (default: net)", "NAME"},
    {"board", 1, 0, "board name for the reports (default: board)", "NAME"},
    {"backend", 1, 0, "backend name for the reports (default: test)", "NAME"},
    {"mode", 1, 0, "mode for the reports (default: unbatched)", "NAME"},
    {"help", 0, 0, "show this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

enum { MAX_TIERS = 16 };

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"compare", opts,
        "usage: halfcheck compare REF_OUTPUTS TEST_OUTPUTS [OPTIONS]\n\n",
        2, 2};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    hc_tier tiers[MAX_TIERS];
    size_t n_tiers = 0;
    const char *names[MAX_TIERS], *files[MAX_TIERS];
    int nn = cli_get_all(&a, "tier", names, MAX_TIERS), nf = cli_get_all(&a, "tier-file", files, MAX_TIERS);
    if (nn + nf > MAX_TIERS) {
        hc_err_set(&err, HC_EUSAGE, "at most %d tiers", MAX_TIERS);
        return cli_fail("compare", &err);
    }
    if (nn + nf == 0) {
        names[0] = "fp16";
        nn = 1;
    }
    for (int i = 0; i < nn; i++)
        if (hc_tier_builtin(names[i], &tiers[n_tiers++], &err))
            return cli_fail("compare", &err);
    for (int i = 0; i < nf; i++)
        if (hc_tier_cfg_load(files[i], &tiers[n_tiers++], &err))
            return cli_fail("compare", &err);

    hc_nnoutput *ref = NULL, *test = NULL;
    size_t n_ref = 0, n_test = 0;
    int status = HC_EXIT_OK;
    if (hc_nnoutputs_load(a.pos[0], &ref, &n_ref, &err) || hc_nnoutputs_load(a.pos[1], &test, &n_test, &err)) {
        status = cli_fail("compare", &err);
        goto done;
    }
    if (n_ref != n_test) {
        hc_err_set(&err, HC_EFORMAT, "%s has %zu positions, %s has %zu", a.pos[0], n_ref, a.pos[1], n_test);
        status = cli_fail("compare", &err);
        goto done;
    }
    hc_stats st;
    if (hc_stats_compute(ref, test, n_ref, &st, &err)) {
        status = cli_fail("compare", &err);
        goto done;
    }
    hc_tier_check checks[MAX_TIERS];
    for (size_t t = 0; t < n_tiers; t++)
        hc_tier_check_stats(&tiers[t], &st, &checks[t]);

    hc_result r = {.net = cli_get(&a, "net", "net"), .board = cli_get(&a, "board", "board"),
                   .backend = cli_get(&a, "backend", "test"), .mode = cli_get(&a, "mode", "unbatched"),
                   .outcome = HC_OUT_CHECKED, .stats = &st, .n_tiers = n_tiers, .tiers = tiers, .checks = checks};
    hc_results rs = {.suite = "compare", .items = &r, .n = 1};

    printf("%zu positions; average, 90%%, 99%% and max error of %s against %s\n", st.n_positions, a.pos[1], a.pos[0]);
    for (int m = 0; m < HC_M_COUNT; m++) {
        char v[HC_P_COUNT][64];
        for (int p = 0; p < HC_P_COUNT; p++)
            hc_metric_format(m, st.m[m].v[p], v[p], sizeof v[p]);
        printf("  %-16s %12s %12s %12s %12s   (max at position %zu)\n", hc_metric_infos[m].name, v[0], v[1], v[2], v[3],
               st.m[m].max_pos);
    }
    /* The signed errors after KataGo's table, which stays as testgpuerror prints it. */
    for (int m = 0; m < HC_M_COUNT; m++) {
        char line[512];
        if (*hc_bias_text(&st, m, line, sizeof line))
            printf("  %-16s signed: %s\n", hc_metric_infos[m].name, line);
    }
    if (st.top_agree.n)
        printf("  top move agrees with the reference's: %.2f%% (%zu of %zu positions)\n",
               100.0 * hc_top_agree_rate(&st.top_agree), st.top_agree.agree, st.top_agree.n);
    int any_fail = 0;
    if (hc_result_is_error(&r)) {
        char buf[400];
        printf("ERROR: %s\n", hc_result_nonfinite_text(&r, buf, sizeof buf));
    }
    for (size_t t = 0; t < n_tiers; t++) {
        printf("tier %s: %s", tiers[t].name, checks[t].pass ? "PASS" : "FAIL");
        if (checks[t].worst_all_metric >= 0)
            printf(", closest margin %.3gx of limit (%s %s)", checks[t].worst_all_ratio,
                   hc_metric_infos[checks[t].worst_all_metric].name, hc_pct_names[checks[t].worst_all_pct]);
        printf("\n");
        if (!checks[t].pass) {
            any_fail = 1;
            char *text = hc_result_failure_text(&r, t);
            if (text)
                printf("%s", text);
            free(text);
        }
    }
    const char *p;
    if (((p = cli_get(&a, "junit", NULL)) && hc_junit_write(&rs, p, &err)) ||
        ((p = cli_get(&a, "json", NULL)) && hc_results_write_json(&rs, p, &err)) ||
        ((p = cli_get(&a, "md", NULL)) && hc_table_write_markdown(&rs, p, &err)) ||
        ((p = cli_get(&a, "csv", NULL)) && hc_table_write_csv(&rs, p, &err))) {
        status = cli_fail("compare", &err);
        goto done;
    }
    status = hc_result_is_error(&r) ? HC_EXIT_BACKEND : any_fail ? HC_EXIT_FAIL : HC_EXIT_OK;
done:
    hc_nnoutputs_free(ref, n_ref);
    hc_nnoutputs_free(test, n_test);
    return status;
}
