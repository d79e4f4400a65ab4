/* Reports: a run of five results (pass, tier failure, backend error, skipped, non-finite)
 * built from handmade outputs through stats and tiers, written as JUnit (validated against
 * reports/junit.xsd with xmlSchemaValidateDoc, and a broken document shown to be rejected),
 * results.json (figures read back exactly), markdown and CSV; atomic writes. */
#include <dirent.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"
#include "reports/junit.h"
#include "harness/data/nnoutput.h"
#include "reports/reports.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"
#include "harness/base/stream.h"
#include "reports/table.h"
#include "harness/metrics/tiers.h"

enum { N = 20 };

static const float mk_pol[5] = {0.5f, 0.25f, 0.125f, -1.0f, 0.125f};

static void mk(hc_nnoutput *o)
{
    hc_test_out2x2(o, mk_pol);
}

static void unmk(hc_nnoutput *o)
{
    hc_test_outs_free(o, N);
}

static hc_nnoutput ref[N], good[N], bad[N], nan_out[N];
static hc_stats st_good, st_bad, st_nan;
static hc_tier tiers[2];
static hc_tier_check ck_good[2], ck_bad[2], ck_nan[2];
static hc_result items[5];
static hc_results rs;

static void build(void)
{
    for (int i = 0; i < N; i++) {
        mk(&ref[i]);
        mk(&good[i]);
        mk(&bad[i]);
        mk(&nan_out[i]);
        good[i].white_lead = 1e-4f * (float)i;
        bad[i].white_lead = i == 13 ? 2.5f : 0.01f;
    }
    nan_out[7].white_lead = NAN;
    hc_err err = {0};
    hc_stats_compute(ref, good, N, &st_good, &err);
    hc_stats_compute(ref, bad, N, &st_bad, &err);
    hc_stats_compute(ref, nan_out, N, &st_nan, &err);
    hc_tier_builtin("fp32", &tiers[0], &err);
    hc_tier_builtin("fp16", &tiers[1], &err);
    for (int t = 0; t < 2; t++) {
        hc_tier_check_stats(&tiers[t], &st_good, &ck_good[t]);
        hc_tier_check_stats(&tiers[t], &st_bad, &ck_bad[t]);
        hc_tier_check_stats(&tiers[t], &st_nan, &ck_nan[t]);
    }
    hc_result base = {.net = "netA", .board = "b9", .backend = "ref32", .mode = "unbatched",
                      .n_tiers = 2, .tiers = tiers, .nn_x_len = 2, .nn_y_len = 2, .max_batch_size = 6,
                      .policy_temperature = 1.0, .seconds = 1.5};
    items[0] = base;
    items[0].stats = &st_good;
    items[0].checks = ck_good;
    items[1] = base;
    items[1].backend = "emulate:fp16";
    items[1].mode = "batched";
    items[1].stats = &st_bad;
    items[1].checks = ck_bad;
    items[2] = base;
    items[2].board = "rect";
    items[2].backend = "cuda";
    items[2].outcome = HC_OUT_ERROR;
    items[2].message = "backend crashed: signal 11 while evaluating batch 3";
    items[3] = base;
    items[3].net = "netB";
    items[3].backend = "cuda";
    items[3].outcome = HC_OUT_SKIPPED;
    items[3].message = "cuda: no GPU on this machine";
    items[4] = base;
    items[4].net = "netB";
    items[4].backend = "emulate:fp16";
    items[4].stats = &st_nan;
    items[4].checks = ck_nan;
    rs.suite = "demo";
    rs.timestamp = "2026-11-22T20:00:00";
    rs.version = "test";
    rs.items = items;
    rs.n = 5;
}

static int count_xpath(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    int n = obj && obj->nodesetval ? obj->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(obj);
    xmlXPathFreeContext(ctx);
    return n;
}

static char *xpath_string(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    char *s = obj ? (char *)xmlXPathCastToString(obj) : NULL;
    xmlXPathFreeObject(obj);
    xmlXPathFreeContext(ctx);
    return s;
}

static int validate(xmlSchemaPtr schema, xmlDocPtr doc)
{
    xmlSchemaValidCtxtPtr v = xmlSchemaNewValidCtxt(schema);
    xmlSchemaSetValidErrors(v, NULL, NULL, NULL);
    int rc = xmlSchemaValidateDoc(v, doc);
    xmlSchemaFreeValidCtxt(v);
    return rc;
}

static void silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void test_junit(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    hc_err err = {0};
    if (!hc_check("reports-1.1", hc_junit_write(&rs, path, &err) == 0, "write: %s", err.msg))
        return;
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt("reports/junit.xsd");
    xmlSchemaPtr schema = xmlSchemaParse(pc);
    xmlSchemaFreeParserCtxt(pc);
    if (!hc_check("reports-1.2", schema != NULL, "reports/junit.xsd does not parse"))
        return;
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    hc_check("reports-1.3", doc && validate(schema, doc) == 0, "junit.xml does not validate against the XSD");
    if (!doc)
        return;
    /* Suites per net x board: netA.b9, netA.rect, netB.b9; a case per result x tier. */
    hc_check("reports-1.4", count_xpath(doc, "/testsuites/testsuite") == 3 &&
             count_xpath(doc, "//testsuite[@name='netA.b9']/testcase") == 4 &&
             count_xpath(doc, "//testcase") == 10, "suite/case counts");
    char *tests = xpath_string(doc, "string(/testsuites/@tests)");
    char *fails = xpath_string(doc, "string(/testsuites/@failures)");
    char *errs = xpath_string(doc, "string(/testsuites/@errors)");
    char *skips = xpath_string(doc, "string(/testsuites/@skipped)");
    /* The lead max of 2.5 fails fp32 (0.9) and fp16 (3.0 passes; 99%: 0.01 passes both). */
    hc_check("reports-1.5", !strcmp(tests, "10") && !strcmp(fails, "1") && !strcmp(errs, "4") && !strcmp(skips, "2"),
             "totals tests %s failures %s errors %s skipped %s", tests, fails, errs, skips);
    xmlFree(tests);
    xmlFree(fails);
    xmlFree(errs);
    xmlFree(skips);
    char *ftext = xpath_string(doc, "string(//testcase[@name='net=netA board=b9 backend=emulate:fp16 mode=batched tier=fp32']/failure)");
    char *fmsg = xpath_string(doc, "string(//testcase[@name='net=netA board=b9 backend=emulate:fp16 mode=batched tier=fp32']/failure/@message)");
    hc_check("reports-1.6", ftext && strstr(ftext, "leadError max: 2.50000 > limit 0.9 (worst position 13)") &&
             !strstr(ftext, "p99") && fmsg && strstr(fmsg, "tier fp32: 1 of 18 limits exceeded; first: leadError max"),
             "failure text \"%s\" message \"%s\"", ftext, fmsg);
    xmlFree(ftext);
    xmlFree(fmsg);
    char *emsg = xpath_string(doc, "string(//testsuite[@name='netB.b9']/testcase[@name='net=netB board=b9 backend=emulate:fp16 mode=unbatched tier=fp16']/error/@message)");
    hc_check("reports-1.7", emsg && strstr(emsg, "non-finite whiteLead = nan at position 7"), "non-finite error \"%s\"", emsg);
    xmlFree(emsg);
    char *crash = xpath_string(doc, "string(//testsuite[@name='netA.rect']/testcase[1]/error/@message)");
    char *skip = xpath_string(doc, "string(//testsuite[@name='netB.b9']/testcase[1]/skipped/@message)");
    hc_check("reports-1.8", crash && strstr(crash, "signal 11") && skip && !strcmp(skip, "cuda: no GPU on this machine"),
             "error \"%s\" skipped \"%s\"", crash, skip);
    xmlFree(crash);
    xmlFree(skip);
    char *prop = xpath_string(doc, "string(//testsuite[@name='netA.b9']/testcase[3]/properties/property[@name='leadError.max']/@value)");
    double v = prop ? strtod(prop, NULL) : -1;
    hc_check("reports-1.9", v == st_bad.m[HC_M_LEAD].v[HC_P_MAX], "property leadError.max %s", prop);
    xmlFree(prop);
    xmlFreeDoc(doc);

    /* The schema rejects what readers would not take: a testcase without classname, and a
     * testsuite without its counts. */
    const char *broken[] = {
        "<testsuites tests='1' failures='0' errors='0' skipped='0' time='0'><testsuite name='a' tests='1' "
        "failures='0' errors='0' skipped='0' time='0'><testcase name='x' time='0'/></testsuite></testsuites>",
        "<testsuites tests='1' failures='0' errors='0' skipped='0' time='0'><testsuite name='a'>"
        "<testcase name='x' classname='c' time='0'/></testsuite></testsuites>",
    };
    xmlSetGenericErrorFunc(NULL, silent);
    for (int i = 0; i < 2; i++) {
        xmlDocPtr b = xmlReadMemory(broken[i], (int)strlen(broken[i]), "broken.xml", NULL, 0);
        char name[32];
        snprintf(name, sizeof name, "reports-1.%d", 10 + i);
        hc_check(name, b && validate(schema, b) != 0, "broken document %d validates", i);
        xmlFreeDoc(b);
    }
    xmlSetGenericErrorFunc(NULL, NULL);
    xmlSchemaFree(schema);
}

static void test_json(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/results.json", dir);
    hc_err err = {0};
    if (!hc_check("reports-2.1", hc_results_write_json(&rs, path, &err) == 0, "write: %s", err.msg))
        return;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!hc_check("reports-2.2", root != NULL, "results.json does not parse: %s", je.text))
        return;
    json_t *sum = json_object_get(root, "summary");
    hc_check("reports-2.3", json_integer_value(json_object_get(sum, "passed")) == 1 &&
             json_integer_value(json_object_get(sum, "failed")) == 1 &&
             json_integer_value(json_object_get(sum, "errors")) == 2 &&
             json_integer_value(json_object_get(sum, "skipped")) == 1, "summary");
    json_t *r1 = json_array_get(json_object_get(root, "results"), 1);
    json_t *lead = json_object_get(json_object_get(json_object_get(r1, "stats"), "metrics"), "leadError");
    int ok = 1;
    const char *keys[] = {"avg", "p90", "p99", "max"};
    for (int p = 0; p < HC_P_COUNT; p++)
        ok = ok && json_real_value(json_object_get(lead, keys[p])) == st_bad.m[HC_M_LEAD].v[p];
    hc_check("reports-2.4", ok && json_integer_value(json_object_get(lead, "maxPosition")) == 13,
             "leadError figures do not round-trip exactly");
    json_t *t0 = json_array_get(json_object_get(r1, "tiers"), 0);
    hc_check("reports-2.5", !strcmp(json_string_value(json_object_get(t0, "tier")), "fp32") &&
             json_is_false(json_object_get(t0, "pass")) && json_array_size(json_object_get(t0, "limits")) == 18,
             "tier entry");
    json_t *r4 = json_array_get(json_object_get(root, "results"), 4);
    json_t *lead4 = json_object_get(json_object_get(json_object_get(r4, "stats"), "metrics"), "leadError");
    const char *mx = json_string_value(json_object_get(lead4, "max"));
    const char *e4 = json_string_value(json_object_get(r4, "error"));
    hc_check("reports-2.6", mx && !strcmp(mx, "nan") && e4 && strstr(e4, "whiteLead"), "nan encoding \"%s\" error \"%s\"",
             mx ? mx : "(null)", e4 ? e4 : "(null)");
    hc_check("reports-2.7", !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(root, "results"), 3),
                                                                        "outcome")), "skipped"), "skipped outcome");
    json_decref(root);
}

static void test_tables(const char *dir)
{
    char path[600];
    hc_err err = {0};
    snprintf(path, sizeof path, "%s/report.md", dir);
    hc_check("reports-3.1", hc_table_write_markdown(&rs, path, &err) == 0, "write: %s", err.msg);
    char *md = hc_slurp(path);
    hc_check("reports-3.2", md && strstr(md, "### netA\n") && strstr(md, "### netB\n") &&
             strstr(md, "#### b9 · emulate:fp16 · batched") && strstr(md, "- tier fp32: **FAIL**") &&
             strstr(md, "- tier fp16: **PASS**") && strstr(md, "| leadError | 0.13450 | 0.01000 | 0.01000 | 2.50000 | 13 |") &&
             strstr(md, "**ERROR**: backend crashed") && strstr(md, "skipped: cuda: no GPU"), "markdown:\n%s", md ? md : "(none)");
    /* netA's sections come before netB's even though results interleave nets. */
    hc_check("reports-3.3", md && strstr(md, "### netA") < strstr(md, "### netB") &&
             strstr(md, "#### rect") < strstr(md, "### netB"), "markdown grouping");
    hc_check("reports-3.8", md && strstr(md, "| b9 | emulate:fp16 | batched | fp32 **FAIL**, fp16 pass | leadError max: 2.50000 of 0.9 = 2.78x (fp32) |"
                                        " 0.00000% | 0.00000% | 0.01000 | 2.50000 |") &&
             strstr(md, "| rect | cuda | unbatched | **ERROR** |"), "summary rows");
    free(md);

    snprintf(path, sizeof path, "%s/report.csv", dir);
    hc_check("reports-3.4", hc_table_write_csv(&rs, path, &err) == 0, "write: %s", err.msg);
    char *csv = hc_slurp(path);
    int lines = 0;
    for (char *c = csv; c && *c; c++)
        lines += *c == '\n';
    /* header + 3 checked results x 2 tiers x 9 metrics + error x 2 + skipped x 2 */
    hc_check("reports-3.5", lines == 1 + 54 + 2 + 2, "csv lines %d", lines);
    char want[300];
    snprintf(want, sizeof want, "netA,b9,emulate:fp16,batched,checked,fp32,leadError,20,%.17g,%.17g,%.17g,%.17g,13,,,,0.34000000000000002,0.90000000000000002,fail,,,\n",
             st_bad.m[HC_M_LEAD].v[0], st_bad.m[HC_M_LEAD].v[1], st_bad.m[HC_M_LEAD].v[2], st_bad.m[HC_M_LEAD].v[3]);
    hc_check("reports-3.6", csv && strstr(csv, want), "csv row missing: %s", want);
    hc_check("reports-3.7", csv && strstr(csv, "netA,rect,cuda,unbatched,error,fp32,,,,,,,,,,,,,,,,backend crashed: signal 11 while evaluating batch 3\n"),
             "csv error row");
    free(csv);
}

static void test_atomic(const char *dir)
{
    /* Every report leaves only its final file: no temporary beside it. */
    DIR *d = opendir(dir);
    int stray = 0, files = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        files++;
        if (strcmp(e->d_name, "junit.xml") && strcmp(e->d_name, "results.json") && strcmp(e->d_name, "report.md") &&
            strcmp(e->d_name, "report.csv"))
            stray++;
    }
    if (d)
        closedir(d);
    hc_check("reports-4.1", files == 4 && stray == 0, "%d files, %d stray", files, stray);
    /* An unwritable destination fails cleanly and creates nothing. */
    hc_err err = {0};
    char path[600];
    snprintf(path, sizeof path, "%s/no-such-dir/junit.xml", dir);
    hc_check("reports-4.2", hc_junit_write(&rs, path, &err) == -1 && err.code == HC_EIO && access(path, F_OK) != 0,
             "junit to a missing dir: %s", err.msg);
    snprintf(path, sizeof path, "%s/no-such-dir/r.json", dir);
    hc_check("reports-4.3", hc_results_write_json(&rs, path, &err) == -1 && hc_table_write_csv(&rs, path, &err) == -1 &&
             hc_table_write_markdown(&rs, path, &err) == -1, "writes to a missing dir succeed");
}

/* No report prints a negative zero: a figure that rounds to zero (a policyKLDiv average of
 * -1e-12, which KataGo's sum of p log(p/q) gives by rounding) or is -0 prints unsigned. */
static void test_negzero(const char *dir)
{
    char cmp[600], nz[600];
    hc_stats st = st_good;
    st.m[HC_M_POLICY_KL].v[HC_P_AVG] = -1e-12;
    st.m[HC_M_POLICY_KL].v[HC_P_90] = -0.0;
    st.m[HC_M_WINRATE].v[HC_P_AVG] = -0.0;
    st.m[HC_M_LEAD].v[HC_P_AVG] = -1e-9;
    hc_tier_check ck[2];
    for (int t = 0; t < 2; t++)
        hc_tier_check_stats(&tiers[t], &st, &ck[t]);
    hc_result r = items[0];
    r.stats = &st;
    r.checks = ck;
    hc_results one = rs;
    one.items = &r;
    one.n = 1;
    char buf[64];
    hc_check("reports-6.1", !strcmp(hc_num_format(buf, sizeof buf, "%.6f", -1e-12), "0.000000") &&
                                !strcmp(hc_num_format(cmp, sizeof cmp, "%.3gx", -0.0), "0x") &&
                                !strcmp(hc_num_format(nz, sizeof nz, "%.2f", -0.004), "0.00") &&
                                !strcmp(hc_num_format(buf, sizeof buf, "%.2f", -0.006), "-0.01"),
             "hc_num_format: \"%s\" \"%s\" \"%s\"", hc_num_format(buf, sizeof buf, "%.6f", -1e-12), cmp, nz);
    snprintf(nz, sizeof nz, "%s/negzero", dir);
    hc_err err = {0};
    int ok = hc_reports_write_dir(&one, nz, &err) == 0;
    static const char *const files[] = {"report.md", "report.csv", "report.html", "results.json", "summary.md", "junit.xml"};
    char where[200] = "";
    for (size_t i = 0; ok && i < sizeof files / sizeof *files; i++) {
        const char *t = hc_text(hc_path(nz, files[i]));
        /* "-0" followed by anything but a non-zero digit path: -0, -0.0..., -0e... */
        for (const char *q = strstr(t, "-0"); q; q = strstr(q + 1, "-0")) {
            const char *d = q + 2;
            if (*d == '.')
                d++;
            while (*d == '0')
                d++;
            if (!(*d >= '1' && *d <= '9') && !where[0])
                snprintf(where, sizeof where, "%s: \"%.30s\"", files[i], q > t + 10 ? q - 10 : t);
        }
        if (!*t)
            snprintf(where, sizeof where, "%s: missing", files[i]);
    }
    hc_check("reports-6.2", ok && !where[0], "a negative zero in the reports: %s %s", where, err.msg);
}

/* An engine that formed its own batches (KataGo's analysis engine: by timing) gets the note
 * that its batched figures may differ on a rerun, beside its batch counts in report.md,
 * report.html, results.json and summary.md; an engine given its batches by halfcheck (pipe:)
 * does not: its figures are the same bits on a rerun. */
static void test_batches_note(const char *dir)
{
    hc_result r[2] = {items[0], items[0]};
    for (int k = 0; k < 2; k++) {
        r[k].mode = "batched";
        r[k].has_engine = 1;
        r[k].engine = hc_engine_stats_unknown();
        r[k].engine.positions = 20;
        r[k].engine.eval_seconds = 2;
        r[k].engine.batching = 1;
        r[k].engine.nn_rows = 2493 * 4;
        r[k].engine.nn_batches = 2493;
        r[k].engine.avg_batch = 4;
        r[k].max_batch_size = 6;
    }
    r[0].backend = "analysis";
    r[0].engine.engine_batches = 1;
    r[1].backend = "pipe";
    hc_results two = rs;
    two.items = r;
    two.n = 2;
    char out[600];
    snprintf(out, sizeof out, "%s/batches", dir);
    hc_err err = {0};
    int ok = hc_reports_write_dir(&two, out, &err) == 0;
    static const char *const note =
        "batched figures depend on how the engine formed its batches (2493 batches of at most 6 rows this run); "
        "a rerun may differ slightly";
    const char *md = hc_text(hc_path(out, "report.md")), *html = hc_text(hc_path(out, "report.html"));
    const char *js = hc_text(hc_path(out, "results.json")), *sum = hc_text(hc_path(out, "summary.md"));
    const char *first = strstr(md, note);
    hc_check("reports-7.1", ok && first && !strstr(first + 1, note) && strstr(html, note) && strstr(js, note) &&
                                strstr(js, "\"batchesFormedByEngine\": true") && strstr(sum, "| 4.00 † |") &&
                                strstr(sum, note) && strstr(sum, "| 4.00 |"),
             "the note is missing or doubled: report.md %d, report.html %d, results.json %d, summary.md %d (%s)",
             first != NULL, strstr(html, note) != NULL, strstr(js, note) != NULL, strstr(sum, note) != NULL, err.msg);
    /* read back (merge): the flag survives */
    char path[700];
    snprintf(path, sizeof path, "%s/results.json", out);
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *back = d ? hc_results_doc_results(d) : NULL;
    hc_check("reports-7.2", back && back->n == 2 && back->items[0].engine.engine_batches && !back->items[1].engine.engine_batches,
             "results.json read back: %s", back ? "the flag is lost" : err.msg);
    hc_results_doc_free(d);
}

/* The compare command end to end on a shared golden file and a perturbed copy: exit status
 * 1 for a tier failure, 3 for a non-finite output, and the reports it writes. */
static void test_compare_cli(const char *dir)
{
    const char *bin = getenv("HALFCHECK");
    const char *gold = hc_shared("golden/outputs/g170_size10x14.jsonl.gz");
    if (!bin || !gold) {
        hc_skip_n("reports-5", 5, "needs $HALFCHECK (make test sets it) and the shared golden outputs");
        return;
    }
    char ref[600], pert[600], json[600], cmd[2400];
    snprintf(ref, sizeof ref, "%s", gold);
    snprintf(pert, sizeof pert, "%s/pert.jsonl", dir);
    snprintf(json, sizeof json, "%s/compare.json", dir);
    hc_nnoutput *o = NULL;
    size_t n = 0;
    hc_err err = {0};
    if (!hc_check("reports-5.1", hc_nnoutputs_load(ref, &o, &n, &err) == 0 && n == 140, "load: %s", err.msg))
        return;
    for (int round = 0; round < 2; round++) {
        if (round == 0)
            o[42].white_lead += 1.25f; /* fp32 max lead limit 0.9 */
        else {
            /* A finite output whose KL is infinite: the top move of position 99 gets
             * probability 0, outputs that disagree (a tier failure), not a broken backend. (A NaN
             * cannot travel through an outputs file: JSON has none.) */
            int top = 0, cells = o[99].nn_x_len * o[99].nn_y_len + 1;
            for (int i = 1; i < cells; i++)
                if (o[99].policy_probs[i] > o[99].policy_probs[top])
                    top = i;
            o[99].policy_probs[top] = 0.0f;
        }
        hc_nnoutwriter *w = hc_nnoutwriter_open(pert, HC_NNOUT_GOLDEN, &err);
        int ok = w != NULL;
        for (size_t i = 0; ok && i < n; i++)
            ok = hc_nnoutwriter_write(w, &o[i], NULL, &err) == 0;
        ok = ok && hc_nnoutwriter_commit(w, &err) == 0;
        if (!hc_check(round ? "reports-5.4" : "reports-5.2", ok, "writing the perturbed copy: %s", err.msg))
            break;
        snprintf(cmd, sizeof cmd, "%s compare '%s' '%s' --tier fp32 --json '%s' >/dev/null 2>&1", bin, ref, pert, json);
        int st = system(cmd);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        char *text = hc_slurp(json);
        if (round == 0)
            hc_check("reports-5.3", code == 1 && text && strstr(text, "\"maxPosition\": 42"), "exit %d", code);
        else
            hc_check("reports-5.5", code == 1 && text && strstr(text, "\"infinite\": 1") &&
                         strstr(text, "\"firstInfinitePosition\": 99") && !strstr(text, "non-finite"),
                     "an infinite KL of finite outputs is a tier failure: exit %d", code);
        free(text);
    }
    hc_nnoutputs_free(o, n);
}

int main(void)
{
    hc_plan(11 + 7 + 8 + 3 + 5 + 2 + 2);
    const char *dir = hc_tmpdir("test_reports");
    if (!dir) {
        hc_check("reports-0", 0, "no scratch dir");
        return hc_test_exit();
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s/*", dir);
    if (system(cmd) != 0)
        return 1;
    build();
    test_junit(dir);
    test_json(dir);
    test_tables(dir);
    test_atomic(dir);
    test_compare_cli(dir);
    test_negzero(dir);
    test_batches_note(dir);
    unmk(ref);
    unmk(good);
    unmk(bad);
    unmk(nan_out);
    xmlCleanupParser();
    return hc_test_exit();
}
