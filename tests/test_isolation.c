/* The runner's isolation: a suite with fault: backends that crash, hang, exit, fail or return
 * NaN next to plain ref32 cases. Every faulty case must become an error result that names the
 * backend, what happened and (where the runner knows it) the position; every other case must
 * still run and pass; the run's status is 3 and the JUnit report carries an <error> per faulty
 * case. Uses the g170 net and the first 20 positions of the 10x14 set. fault: is a test kind: the
 * library runs get the test registry, the CLI run is tests/helper_halfcheck. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/config/config.h"
#include "hc_test.h"
#include "harness/data/positions.h"
#include "reports/results.h"
#include "harness/run/runner.h"
#include "harness/base/stream.h"
#include "tests/lib/testkinds.h"

#define N_POSITIONS 20

static const hc_result *find(const hc_results *rs, const char *backend, const char *mode)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->items[i].backend, backend) == 0 && strcmp(rs->items[i].mode, mode) == 0)
            return &rs->items[i];
    return NULL;
}

static int has(const hc_result *r, const char *needle)
{
    return r && r->message && strstr(r->message, needle) != NULL;
}

static const char *msg_of(const hc_result *r)
{
    return r ? (r->message ? r->message : "(no message)") : "(no result)";
}

/* The faulty backends and what their error message must say besides the backend's name. */
static const struct {
    const char *spec;
    const char *what[3];
    int names_position; /* the runner knows the position for this kind of failure */
} faults[] = {
    {"fault:segv@5", {"crashed with SIGSEGV", NULL, NULL}, 1},
    {"fault:hang@3", {"hung", "killed", NULL}, 1},
    {"fault:nan-value@2", {"non-finite", "value", NULL}, 1},
    {"fault:nan-score@6", {"non-finite", "score", NULL}, 1},
    {"fault:nan-pass@9", {"non-finite", "pass logit", NULL}, 1},
    {"fault:nan-policy@11", {"non-finite", "policy", NULL}, 1},
    {"fault:nan-ownership@7", {"non-finite", "ownership", NULL}, 1},
    {"fault:exit@4", {"exited with status 7", NULL, NULL}, 1},
    {"fault:error@1", {"injected failure", NULL, NULL}, 1},
    /* As a runtime that aborts at model load: no position is involved, and none is claimed. */
    {"fault:abort@open", {"crashed with SIGABRT", "while opening the backend", NULL}, 0},
};
#define N_FAULTS (sizeof faults / sizeof faults[0])

static const char *const modes[] = {"unbatched", "batched"};

static void check_junit(const char *path)
{
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    if (!hc_check("isolation-4.1", doc != NULL, "%s does not parse as XML", path))
        return;
    int errors_of_faults = 0, ref_clean = 0, ref_cases = 0, other_errors = 0;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    for (xmlNodePtr s = root ? root->children : NULL; s; s = s->next) {
        if (s->type != XML_ELEMENT_NODE || xmlStrcmp(s->name, (const xmlChar *)"testsuite") != 0)
            continue;
        for (xmlNodePtr tc = s->children; tc; tc = tc->next) {
            if (tc->type != XML_ELEMENT_NODE || xmlStrcmp(tc->name, (const xmlChar *)"testcase") != 0)
                continue;
            xmlChar *name = xmlGetProp(tc, (const xmlChar *)"name");
            int is_fault = name && strstr((const char *)name, "backend=fault:") != NULL;
            int is_ref = name && strstr((const char *)name, "backend=ref32") != NULL;
            int n_error = 0, n_failure = 0;
            for (xmlNodePtr c = tc->children; c; c = c->next) {
                if (c->type != XML_ELEMENT_NODE)
                    continue;
                if (xmlStrcmp(c->name, (const xmlChar *)"error") == 0) {
                    n_error++;
                    xmlChar *m = xmlGetProp(c, (const xmlChar *)"message");
                    if (is_fault && m && strstr((const char *)m, "backend fault:"))
                        errors_of_faults++;
                    xmlFree(m);
                }
                if (xmlStrcmp(c->name, (const xmlChar *)"failure") == 0)
                    n_failure++;
            }
            if (is_ref) {
                ref_cases++;
                ref_clean += n_error == 0 && n_failure == 0;
            }
            if (!is_fault && n_error)
                other_errors++;
            xmlFree(name);
        }
    }
    xmlFreeDoc(doc);
    hc_check("isolation-4.2", errors_of_faults == (int)(N_FAULTS * 2),
             "%d <error> elements naming a fault backend, expected %d", errors_of_faults, (int)(N_FAULTS * 2));
    hc_check("isolation-4.3", ref_cases == 4 && ref_clean == 4, "%d of %d ref32 test cases clean, expected 4 of 4",
             ref_clean, ref_cases);
    hc_check("isolation-4.4", other_errors == 0, "%d <error> elements outside the fault cases", other_errors);
}

/* The CLI as CI runs it: `halfcheck run` on a suite file with a crashing and an exiting
 * backend exits with status 3 and still writes a JUnit report with their <error>s. */
static void check_cli(const char *tmp, const char *net, const char *bin)
{
    if (access(bin, X_OK) != 0) {
        hc_skip_n("isolation-5", 3, "%s (halfcheck with the test kinds) not built", bin);
        return;
    }
    char path[2300], cmd[8192];
    snprintf(path, sizeof path, "%s/cli.yaml", tmp);
    FILE *f = fopen(path, "w");
    if (!hc_check("isolation-5.1", f != NULL, "cannot write %s", path))
        return;
    fprintf(f,
            "name: cli\n"
            "nets: [{name: g170, model: \"%s\"}]\n"
            "boards: [{name: b10x14, positions: first20.jsonl, nnBuffer: 10x14}]\n"
            "backends: [ref32, \"fault:segv@2\", \"fault:exit@1\"]\n"
            "modes: [batched]\n"
            "defaultTiers: [fp32]\n",
            net);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s --out %s/cli-out --no-cache --quiet --threads 1 --timeout 30 2>%s/cli.stderr",
             bin, path, tmp, tmp);
    int st = system(cmd);
    int code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    hc_check("isolation-5.2", code == 3, "halfcheck run exited with %d, expected 3 (see %s/cli.stderr)", code, tmp);
    snprintf(path, sizeof path, "%s/cli-out/junit.xml", tmp);
    size_t len = 0;
    hc_err err = {0};
    char *xml = hc_read_file(path, 1 << 24, &len, &err);
    int n_err = 0;
    for (const char *q = xml; q && (q = strstr(q, "<error ")) != NULL; q++)
        n_err++;
    hc_check("isolation-5.3", xml && n_err == 2 && strstr(xml, "crashed with SIGSEGV") && strstr(xml, "status 7"),
             "%s: %d <error> elements: %s", path, n_err, xml ? "" : err.msg);
    free(xml);
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(64);
    const char *tmp = hc_tmpdir("test_isolation");
    const char *netp = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char net[2048], posdst[2048];
    if (!netp) {
        hc_skip_rest("isolation-1", "../shared/nets/g170-b6c96-s175395328-d26788732.bin.gz absent");
        return hc_test_exit();
    }
    hc_abspath(netp, net, sizeof net);
    const char *posp = hc_shared("positions/size10x14.jsonl.gz");
    if (!posp || !tmp) {
        hc_skip_rest("isolation-1", "../shared/positions/size10x14.jsonl.gz absent (or no scratch directory)");
        return hc_test_exit();
    }
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", posp);
    snprintf(posdst, sizeof posdst, "%s/first20.jsonl", tmp);
    hc_err err = {0};
    if (!hc_check("isolation-1.1", hc_write_positions(pos, posdst, N_POSITIONS, 1, &err) == 0, "%s", err.msg))
        return hc_fail_rest("isolation-1.1.rest", "not run: %s failed", "isolation-1.1"), hc_test_exit();

    /* ref32 first and last, the faults in between. */
    char yaml[8192];
    int len = snprintf(yaml, sizeof yaml,
                       "name: isolation\n"
                       "nets:\n  - {name: g170, model: \"%s\"}\n"
                       "boards:\n  - {name: b10x14, positions: first20.jsonl, nnBuffer: 10x14}\n"
                       "defaultTiers: [fp32]\n"
                       "backends:\n  - ref32\n",
                       net);
    for (size_t i = 0; i < N_FAULTS; i++)
        len += snprintf(yaml + len, sizeof yaml - (size_t)len, "  - \"%s\"\n", faults[i].spec);
    len += snprintf(yaml + len, sizeof yaml - (size_t)len, "  - {name: ref32-last, backend: ref32}\n");
    char suite_path[2048];
    snprintf(suite_path, sizeof suite_path, "%s/isolation.yaml", tmp);
    hc_suite *suite = hc_suite_parse(yaml, (size_t)len, suite_path, &err);
    if (!hc_check("isolation-1.2", suite != NULL, "suite: %s", err.msg))
        return hc_fail_rest("isolation-1.2.rest", "not run: %s failed", "isolation-1.2"), hc_test_exit();

    hc_run_options o = hc_run_options_default();
    o.timeout_s = 2.5;
    o.threads = 1;
    o.tmp_dir = tmp;
    o.registry = hc_test_registry();
    hc_run *run = hc_run_suite(suite, &o, &err);
    if (!hc_check("isolation-1.3", run != NULL, "run: %s", err.msg)) {
        hc_suite_free(suite);
        return hc_fail_rest("isolation-1.3.rest", "not run: isolation-1.3 failed"), hc_test_exit();
    }
    const hc_results *rs = hc_run_results(run);
    hc_check("isolation-1.4", rs->n == (N_FAULTS + 2) * 2, "%zu results, expected %zu", rs->n, (N_FAULTS + 2) * 2);
    hc_check("isolation-1.5", hc_run_status(run) == 3, "status %d, expected 3", hc_run_status(run));

    /* The healthy backends ran and passed, before and after the faulty ones. */
    const char *refs[2] = {"ref32", "ref32-last"};
    for (int b = 0; b < 2; b++)
        for (int m = 0; m < 2; m++) {
            char name[64];
            snprintf(name, sizeof name, "isolation-2.%d", b * 2 + m + 1);
            const hc_result *r = find(rs, refs[b], modes[m]);
            hc_check(name,
                     r && r->outcome == HC_OUT_CHECKED && !hc_result_is_error(r) && r->n_tiers == 1 && r->checks &&
                         r->checks[0].pass && r->stats && r->stats->n_positions == N_POSITIONS,
                     "%s %s: outcome %d, %s", refs[b], modes[m], r ? r->outcome : -1, msg_of(r));
        }

    /* Every fault is an error naming the backend, what happened and the position. */
    for (size_t i = 0; i < N_FAULTS; i++)
        for (int m = 0; m < 2; m++) {
            const hc_result *r = find(rs, faults[i].spec, modes[m]);
            char name[64], backend[128];
            snprintf(backend, sizeof backend, "backend %s:", faults[i].spec);
            snprintf(name, sizeof name, "isolation-3.%zu.%d", i + 1, m + 1);
            int ok = r && r->outcome == HC_OUT_ERROR && has(r, backend);
            for (int w = 0; w < 3 && faults[i].what[w]; w++)
                ok = ok && has(r, faults[i].what[w]);
            hc_check(name, ok, "%s %s: %s", faults[i].spec, modes[m], msg_of(r));
            snprintf(name, sizeof name, "isolation-3.%zu.%d.pos", i + 1, m + 1);
            int names_pos = has(r, "index ") && has(r, "SGF line ") && has(r, "move ");
            if (faults[i].names_position)
                hc_check(name, names_pos, "%s %s does not name the position (index, SGF line, move): %s",
                         faults[i].spec, modes[m], msg_of(r));
            else
                hc_check(name, !names_pos, "%s %s names a position for a failure at open: %s", faults[i].spec,
                         modes[m], msg_of(r));
        }

    /* Unbatched, the crashing position is exactly the one the fault was planted at. */
    const hc_result *segv = find(rs, "fault:segv@5", "unbatched");
    hc_check("isolation-3.20", has(segv, "position 5 (index 5,"), "%s", msg_of(segv));
    const hc_result *nan = find(rs, "fault:nan-value@2", "unbatched");
    hc_check("isolation-3.21", has(nan, "position 2 (index 2,"), "%s", msg_of(nan));
    /* A hang is cut at the timeout, not waited for. */
    const hc_result *hang = find(rs, "fault:hang@3", "batched");
    hc_check("isolation-3.22", hang && hang->seconds >= 2.4 && hang->seconds < 30,
             "hung case took %.1f s with a 2.5 s timeout", hang ? hang->seconds : -1.0);

    /* The reports. */
    char outdir[2048], path[2300];
    snprintf(outdir, sizeof outdir, "%s/reports", tmp);
    int wrc = hc_run_write_reports(run, outdir, &err);
    hc_check("isolation-4.0", wrc == 0, "reports: %s", err.msg);
    const char *files[] = {"junit.xml", "results.json", "report.md", "report.csv"};
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s/%s", outdir, files[f]);
        char name[64];
        snprintf(name, sizeof name, "isolation-4.0.%d", f + 1);
        hc_check(name, access(path, R_OK) == 0, "%s missing", path);
    }
    snprintf(path, sizeof path, "%s/junit.xml", outdir);
    if (wrc == 0)
        check_junit(path);

    hc_run_free(run);
    hc_suite_free(suite);
    check_cli(tmp, net, hc_test_halfcheck_bin(argv[0]));
    xmlCleanupParser();
    return hc_test_exit();
}
