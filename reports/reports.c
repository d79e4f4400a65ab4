/* hc_reports_write_dir: the one writer of a results directory, used by `run` and `merge`. */
#include "reports/reports.h"

#include <stdio.h>

#include "harness/base/files.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/summary.h"
#include "reports/table.h"

int hc_reports_write_dir(const hc_results *rs, const char *dir, hc_err *err)
{
    if (hc_mkdir_p(dir, err))
        return -1;
    char path[1200];
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    if (hc_junit_write(rs, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/results.json", dir);
    if (hc_results_write_json(rs, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.md", dir);
    if (hc_table_write_markdown(rs, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    if (hc_summary_write(rs, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.csv", dir);
    if (hc_table_write_csv(rs, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.html", dir);
    return hc_html_write(rs, path, err);
}
