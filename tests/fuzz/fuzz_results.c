/* results.json (hc_results_parse_json: what `halfcheck merge` and ci/sweep read back from the
 * jobs), then what the reports derive from each result: failure texts, non-finite summaries,
 * the formatted figures and limits. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "reports/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hc_err err = {0};
    hc_results_doc *d = hc_results_parse_json((const char *)data, size, "fuzz-results.json", &err);
    if (!d) {
        if (err.code == HC_OK || !strstr(err.msg, "fuzz-results.json")) {
            fprintf(stderr, "results: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        return 0;
    }
    const hc_results *rs = hc_results_doc_results(d);
    char buf[512];
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        hc_result_is_error(r);
        hc_result_nonfinite_text(r, buf, sizeof buf);
        for (size_t t = 0; t < r->n_tiers; t++) {
            free(hc_result_failure_text(r, t));
            for (int m = 0; m < HC_M_COUNT; m++)
                for (int p = 0; p < HC_P_COUNT; p++)
                    hc_limit_format(&r->tiers[t], m, p, buf, sizeof buf);
        }
        if (r->stats)
            for (int m = 0; m < HC_M_COUNT; m++)
                hc_metric_format(m, r->stats->m[m].v[0], buf, sizeof buf);
    }
    hc_results_doc_free(d);
    return 0;
}
