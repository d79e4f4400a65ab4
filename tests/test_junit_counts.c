/* JUnit counts honestly (issue 21 item 7): testcase times add up to their testsuite's and the
 * testsuites' to the total, with a result checked against several tiers counted once; names
 * carry net and board; the shipped suites' ref32 cases check something (batch invariance
 * under the `exact` tier), which fails when one bit of an output differs or when a
 * batch-sensitive backend runs in ref32's place. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <math.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/config/config.h"
#include "hc_test.h"
#include "reports/junit.h"
#include "harness/data/nnoutput.h"
#include "reports/results.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

#define X(s) ((const xmlChar *)(s))

/* "12.345" as integer milliseconds; -1 when it is not of that form. */
static long long ms_of(const xmlChar *s)
{
    long long a = 0, b = 0;
    char tail;
    if (!s || sscanf((const char *)s, "%lld.%3lld%c", &a, &b, &tail) != 2 || strlen(strchr((const char *)s, '.')) != 4)
        return -1;
    return a * 1000 + b;
}

typedef struct tally {
    int cases, bad_time, sums_ok, bad_names, suites;
    long long total_ms, root_ms;
    char first_bad[512];
} tally;

/* Walks a JUnit document: each testsuite's time is the sum of its testcases', the root's the
 * sum of the testsuites'; every testcase name holds net=N board=B for its classname N.B. */
static void walk(xmlDocPtr doc, tally *t)
{
    memset(t, 0, sizeof *t);
    t->sums_ok = 1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlChar *rt = xmlGetProp(root, X("time"));
    t->root_ms = ms_of(rt);
    xmlFree(rt);
    for (xmlNodePtr s = root->children; s; s = s->next) {
        if (s->type != XML_ELEMENT_NODE || xmlStrcmp(s->name, X("testsuite")))
            continue;
        t->suites++;
        xmlChar *st = xmlGetProp(s, X("time"));
        long long suite_ms = ms_of(st), sum = 0;
        xmlFree(st);
        for (xmlNodePtr c = s->children; c; c = c->next) {
            if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, X("testcase")))
                continue;
            t->cases++;
            xmlChar *ct = xmlGetProp(c, X("time")), *nm = xmlGetProp(c, X("name")), *cl = xmlGetProp(c, X("classname"));
            long long ms = ms_of(ct);
            if (ms < 0)
                t->bad_time++;
            sum += ms;
            char want_net[300] = "", want_board[300] = "";
            const char *dot = cl ? strchr((const char *)cl, '.') : NULL;
            if (dot) {
                snprintf(want_net, sizeof want_net, "net=%.*s ", (int)(dot - (const char *)cl), (const char *)cl);
                snprintf(want_board, sizeof want_board, " board=%s ", dot + 1);
            }
            if (!dot || !nm || strncmp((const char *)nm, want_net, strlen(want_net)) ||
                !strstr((const char *)nm, want_board)) {
                if (!t->bad_names++)
                    snprintf(t->first_bad, sizeof t->first_bad, "name \"%s\" class \"%s\"", nm ? (const char *)nm : "",
                             cl ? (const char *)cl : "");
            }
            xmlFree(ct);
            xmlFree(nm);
            xmlFree(cl);
        }
        if (sum != suite_ms)
            t->sums_ok = 0;
        t->total_ms += suite_ms;
    }
}

static int validates(xmlDocPtr doc)
{
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt("reports/junit.xsd");
    xmlSchemaPtr schema = pc ? xmlSchemaParse(pc) : NULL;
    xmlSchemaValidCtxtPtr vc = schema ? xmlSchemaNewValidCtxt(schema) : NULL;
    int ok = vc && xmlSchemaValidateDoc(vc, doc) == 0;
    if (vc)
        xmlSchemaFreeValidCtxt(vc);
    if (schema)
        xmlSchemaFree(schema);
    if (pc)
        xmlSchemaFreeParserCtxt(pc);
    return ok;
}

static void mk(hc_nnoutput *o)
{
    hc_err err = {0};
    hc_nnoutput_init(o, 3, 3, 1, &err);
    o->white_win_prob = 0.6f;
    o->white_loss_prob = 0.375f;
    o->white_no_result_prob = 0.025f;
    o->white_lead = 1.5f;
    o->white_score_mean = 1.25f;
    o->white_score_mean_sq = 30.0f;
    o->shortterm_winloss_error = 0.125f;
    o->shortterm_score_error = 2.5f;
    for (int i = 0; i < 10; i++)
        o->policy_probs[i] = i == 4 ? 0.55f : 0.05f;
    for (int i = 0; i < 9; i++)
        o->white_owner_map[i] = 0.1f * (float)(i - 4);
}

/* Part 1: handmade results, several tiers each, times that do not add up to whole
 * milliseconds; the document's sums. */
static void test_sums(const char *dir)
{
    hc_err err = {0};
    static hc_tier tiers[3];
    hc_tier_builtin("fp32", &tiers[0], &err);
    hc_tier_builtin("fp16", &tiers[1], &err);
    hc_tier_builtin("fp32-strict", &tiers[2], &err);
    hc_nnoutput ref[4], out[4];
    for (int i = 0; i < 4; i++) {
        mk(&ref[i]);
        mk(&out[i]);
        out[i].white_lead += 1e-3f * (float)i;
    }
    static hc_stats st;
    static hc_tier_check ck[3];
    hc_stats_compute(ref, out, 4, &st, &err);
    for (int t = 0; t < 3; t++)
        hc_tier_check_stats(&tiers[t], &st, ck + t);
    hc_result base = {.net = "g170", .board = "size19", .backend = "emulate:fp16", .mode = "batched",
                      .outcome = HC_OUT_CHECKED, .stats = &st, .n_tiers = 3, .tiers = tiers, .checks = ck,
                      .nn_x_len = 3, .nn_y_len = 3, .max_batch_size = 6, .policy_temperature = 1.0};
    hc_result items[6];
    const double secs[6] = {1.2345, 0.0004, 2.0006, 7.25, 0.3335, 3.0};
    for (int i = 0; i < 6; i++) {
        items[i] = base;
        items[i].seconds = secs[i];
    }
    items[1].mode = "unbatched";
    items[2].board = "size9";
    items[3].net = "tfrs";
    items[3].n_tiers = 2; /* failing or not, every result is one time */
    items[4].outcome = HC_OUT_SKIPPED;
    items[4].message = "no CUDA device";
    items[4].stats = NULL;
    items[4].checks = NULL;
    items[5].n_skipped = 2;
    items[5].skip_message = "2 positions: 3 (encore), 5 (encore)";
    hc_results rs = {.suite = "counts", .timestamp = "2024-01-02T03:04:05", .items = items, .n = 6};
    char path[600];
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    hc_plan(6);
    int wrote = hc_junit_write(&rs, path, &err) == 0;
    xmlDocPtr doc = wrote ? xmlReadFile(path, NULL, XML_PARSE_NONET) : NULL;
    if (!hc_check("junitcount-1.1", doc != NULL, "write/read %s: %s", path, err.msg)) {
        hc_fail_n("junitcount-1.2", 5, "not run: no document (junitcount-1.1 failed)");
        goto out;
    }
    hc_check("junitcount-1.2", validates(doc), "junit.xml does not validate against reports/junit.xsd");
    tally t;
    walk(doc, &t);
    /* each result's seconds rounded once to milliseconds, whatever its number of tiers */
    long long want = 0;
    for (int i = 0; i < 6; i++)
        want += llround(secs[i] * 1000);
    /* 3 tiers x 5 results, 2 tiers x 1, and 1 unexpressible case */
    hc_check("junitcount-1.3", t.cases == 3 * 5 + 2 + 1 && t.bad_time == 0 && t.suites == 3,
             "%d testcases (%d times not of the form S.mmm), %d testsuites", t.cases, t.bad_time, t.suites);
    hc_check("junitcount-1.4", t.sums_ok && t.total_ms == t.root_ms,
             "a testsuite's time is not the sum of its testcases' (%d), or the root's %lld ms is not the sum %lld",
             t.sums_ok, t.root_ms, t.total_ms);
    hc_check("junitcount-1.5", t.root_ms == want, "total %lld ms, want %lld (each result once)", t.root_ms, want);
    hc_check("junitcount-1.6", t.bad_names == 0, "%d testcase names lack net= and board=; first %s", t.bad_names,
             t.first_bad);
    xmlFreeDoc(doc);
out:
    for (int i = 0; i < 4; i++) {
        hc_nnoutput_free(&ref[i]);
        hc_nnoutput_free(&out[i]);
    }
}

/* Whether every limit of every metric is set and 0. */
static int all_zero(const hc_tier *t)
{
    for (int m = 0; m < HC_M_COUNT; m++)
        for (int p = 0; p < HC_P_COUNT; p++)
            if (!t->set[m][p] || t->limit[m][p] != 0)
                return 0;
    return 1;
}

/* Part 2: the shipped suites hold no ref32 case that can only pass, and the `exact` tier
 * fails on one bit of difference in any compared output. */
static void test_exact(void)
{
    /* Every suite shipped in suites/, so that a suite added later is held to it too. */
    char shipped[32][300];
    int NS = 0;
    DIR *d = opendir("suites");
    for (struct dirent *e; d && NS < 32 && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
            snprintf(shipped[NS++], sizeof shipped[0], "suites/%s", e->d_name);
    }
    if (d)
        closedir(d);
    hc_plan((unsigned)NS + 3);
    hc_check("junitcount-2.0", NS >= 5, "found %d suites in suites/ (want the 5 shipped at least)", NS);
    for (int i = 0; i < NS; i++) {
        hc_err err = {0};
        char name[64];
        snprintf(name, sizeof name, "junitcount-2.1.%d", i + 1);
        hc_suite *s = hc_suite_load(shipped[i], &err);
        int ref_cases = 0, bad = 0;
        const char *bad_tier = "";
        for (size_t c = 0; s && c < s->n_cases; c++) {
            if (strcmp(s->backends[s->cases[c].backend].spec, "ref32") != 0)
                continue;
            ref_cases++;
            for (size_t k = 0; k < s->cases[c].n_tiers; k++)
                if (!all_zero(&s->tiers[s->cases[c].tiers[k]])) {
                    bad++;
                    bad_tier = s->tiers[s->cases[c].tiers[k]].name;
                }
        }
        hc_check(name, s && bad == 0,
                 "%s: %d of %d ref32 cases compare the reference with itself under a tier with a non-zero limit "
                 "(%s): they can only pass%s%s",
                 shipped[i], bad, ref_cases, bad_tier, s ? "" : "; load: ", s ? "" : err.msg);
        hc_suite_free(s);
    }
    hc_err err = {0};
    hc_tier exact;
    int loaded = hc_tier_builtin("exact", &exact, &err) == 0;
    hc_check("junitcount-2.2", loaded && all_zero(&exact) && !strcmp(exact.name, "exact"), "the built-in tier exact: %s",
             loaded ? "not every limit 0" : err.msg);
    /* one ulp in each compared output, one at a time. A probability other than the top move's
     * is moved down: moved up alone, it makes KataGo's policyKL slightly negative (the test's
     * probabilities then sum past 1) and no metric sees it; a real batch dependence moves the
     * softmax's outputs both ways, and the top move's probability (topPolicy) either way. */
    enum { NP = 3, NFIELD = 10 };
    hc_nnoutput ref[NP], out[NP];
    for (int i = 0; i < NP; i++) {
        mk(&ref[i]);
        mk(&out[i]);
    }
    hc_stats st;
    hc_tier_check ck;
    int same_pass = hc_stats_compute(ref, out, NP, &st, &err) == 0 && (hc_tier_check_stats(&exact, &st, &ck), ck.pass);
    int caught = 0;
    char missed[200] = "";
    for (int f = 0; f < NFIELD; f++) {
        float *v = f == 0 ? &out[1].white_win_prob : f == 1 ? &out[1].white_loss_prob : f == 2 ? &out[1].white_lead
                 : f == 3 ? &out[1].white_score_mean : f == 4 ? &out[1].white_score_mean_sq
                 : f == 5 ? &out[1].shortterm_winloss_error : f == 6 ? &out[1].shortterm_score_error
                 : f == 7 ? &out[1].policy_probs[2] : f == 8 ? &out[1].policy_probs[4] : &out[1].white_owner_map[7];
        float keep = *v;
        *v = nextafterf(keep, f == 7 ? 0.0f : f == 8 ? (float)-INFINITY : INFINITY);
        if (hc_stats_compute(ref, out, NP, &st, &err) == 0) {
            hc_tier_check_stats(&exact, &st, &ck);
            if (!ck.pass)
                caught++;
            else
                snprintf(missed + strlen(missed), sizeof missed - strlen(missed), " field %d", f);
        }
        *v = keep;
    }
    hc_check("junitcount-2.3", loaded && same_pass && caught == NFIELD,
             "identical outputs %s the exact tier; one-ulp changes caught in %d of %d fields (missed:%s)",
             same_pass ? "pass" : "fail", caught, NFIELD, missed);
    for (int i = 0; i < NP; i++) {
        hc_nnoutput_free(&ref[i]);
        hc_nnoutput_free(&out[i]);
    }
}

/* Part 3: a real run of a suite shaped like testgpuerror's on a synthetic net, with the
 * shipped exact tier: ref32 passes batched and unbatched; a backend that lets one batch row
 * leak into the next (mutate:stale-row) in its place fails batched; the run's junit.xml
 * sums. */
static void test_run(const char *dir)
{
    hc_plan(5);
    const char *h = hc_halfcheck_bin();
    char root[1024], hc[1400], cmd[6000];
    if (!getcwd(root, sizeof root)) {
        hc_skip_n("junitcount-3.1", 5, "getcwd failed");
        return;
    }
    snprintf(hc, sizeof hc, "%s%s%s", h[0] == '/' ? "" : root, h[0] == '/' ? "" : "/", h);
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -rf run && %s synth-net --arch v7 --seed 5 --out net.bin.gz >/dev/null 2>&1 && "
             "%s selfplay --size 9 --games 2 --seed 9 --moves 50 --stride 4 --out p9.jsonl.gz >/dev/null 2>&1 && "
             "printf '%%s\\n' 'name: exact-test' 'nets: [{name: synth, model: net.bin.gz}]' "
             "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' "
             "'backends:' "
             "'  - {name: ref32-batch-invariance, backend: ref32, tiers: [exact, fp32]}' "
             "'  - {name: stale, backend: \"mutate:stale-row:ref32\", tiers: [exact]}' "
             "'modes: [unbatched, batched]' > suite.yaml",
             dir, hc, hc);
    if (!hc_check("junitcount-3.1", hc_sh(cmd) == 0, "could not make the test data in %s", dir)) {
        hc_fail_n("junitcount-3.2", 4, "not run: no test data (junitcount-3.1 failed)");
        return;
    }
    snprintf(cmd, sizeof cmd, "cd %s && %s run suite.yaml --out run --no-cache --quiet > run.txt 2>&1", dir, hc);
    int rc = hc_sh(cmd);
    char path[1200];
    snprintf(path, sizeof path, "%s/run/results.json", dir);
    hc_err err = {0};
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *rs = d ? hc_results_doc_results(d) : NULL;
    int ref_pass = 0, stale_batched_fail = 0, n = rs ? (int)rs->n : 0;
    for (int i = 0; i < n; i++) {
        const hc_result *r = &rs->items[i];
        int pass = r->outcome == HC_OUT_CHECKED && r->checks && r->checks[0].pass;
        if (!strcmp(r->backend, "ref32-batch-invariance"))
            ref_pass += pass;
        else if (!strcmp(r->mode, "batched"))
            stale_batched_fail += r->outcome == HC_OUT_CHECKED && !pass;
    }
    hc_check("junitcount-3.2", rc == 1 && n == 4, "run exited %d with %d results (want 1: a tier fails; 4): %s", rc, n,
             d ? "" : err.msg);
    hc_check("junitcount-3.3", ref_pass == 2, "ref32 passes the exact tier in %d of 2 modes", ref_pass);
    hc_check("junitcount-3.4", stale_batched_fail == 1,
             "mutate:stale-row batched in ref32's place does not fail the exact tier");
    hc_results_doc_free(d);
    snprintf(path, sizeof path, "%s/run/junit.xml", dir);
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    tally t = {0};
    if (doc)
        walk(doc, &t);
    /* 2 modes x (ref32: 2 tiers, stale: 1 tier) */
    hc_check("junitcount-3.5", doc && t.cases == 6 && t.sums_ok && t.total_ms == t.root_ms && t.bad_names == 0,
             "run's junit.xml: %d testcases, sums %d, total %lld vs root %lld, %d bad names (%s)", t.cases, t.sums_ok,
             t.total_ms, t.root_ms, t.bad_names, t.first_bad);
    if (doc)
        xmlFreeDoc(doc);
}

int main(void)
{
    const char *dir = hc_tmpdir("test_junit_counts");
    if (!dir)
        return 1;
    char d[512];
    snprintf(d, sizeof d, "%s", dir);
    test_sums(d);
    test_exact();
    test_run(d);
    xmlCleanupParser();
    return hc_test_exit();
}
