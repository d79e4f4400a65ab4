/* Faults injected into runs: `halfcheck run` and `ci/sweep` killed (SIGKILL, whole session) at
 * random moments, many times: every report on disk is then absent or complete and valid (JUnit
 * against reports/junit.xsd, results.json through its reader, CSV/markdown/HTML whole), every
 * reference cache entry holds every record (byte-equal to the one an undisturbed run writes), and
 * a rerun gives the same results. Then writes made to fail part-way (RLIMIT_FSIZE in the child):
 * a clear error naming the file, no partial report, no temporary file left behind.
 * Data made by halfcheck (synth-net, selfplay); about 30 s in all. */
#define _GNU_SOURCE /* setsid */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

#include "hc_test.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "reports/results.h"
#include "harness/base/stream.h"

enum { N_POSITIONS_MAX = 4096 };

static char hc[1024], dir[1024], root[1024];
static xmlSchemaPtr schema;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One report file: 1 absent, 2 present and valid, 0 present and broken (why says how). */
static int check_report(const char *d, const char *name, char *why, size_t len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", d, name);
    struct stat st;
    if (stat(path, &st) != 0)
        return 1;
    size_t n = 0;
    char *t = hc_slurp_len(path, &n);
    int ok = 0;
    if (!t) {
        snprintf(why, len, "%s: unreadable", path);
    } else if (!strcmp(name, "junit.xml")) {
        xmlDocPtr doc = xmlReadMemory(t, (int)n, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        xmlSchemaValidCtxtPtr v = doc ? xmlSchemaNewValidCtxt(schema) : NULL;
        ok = doc && v && xmlSchemaValidateDoc(v, doc) == 0;
        if (!ok)
            snprintf(why, len, "%s: %s", path, doc ? "not valid against reports/junit.xsd" : "not well-formed XML");
        if (v)
            xmlSchemaFreeValidCtxt(v);
        if (doc)
            xmlFreeDoc(doc);
    } else if (!strcmp(name, "results.json")) {
        hc_err err = {0};
        hc_results_doc *r = hc_results_read_json(path, &err);
        ok = r != NULL && hc_results_doc_results(r)->n > 0;
        if (!ok)
            snprintf(why, len, "%s: %s", path, err.msg);
        hc_results_doc_free(r);
    } else if (!strcmp(name, "report.html")) {
        ok = n > 8 && strstr(t, "</html>") != NULL && t[n - 1] == '\n';
        if (!ok)
            snprintf(why, len, "%s: cut short (%zu bytes)", path, n);
    } else if (!strcmp(name, "report.md")) {
        /* The writer ends every report with the figures' <details> block (none when every result
         * is a reference self-check), then the provenance (a list, closed by an empty line). */
        ok = n >= 12 && (!strcmp(t + n - 12, "</details>\n\n") ||
                         (strstr(t, "\n\n### Provenance\n\n- ") && !strcmp(t + n - 2, "\n\n")));
        if (!ok)
            snprintf(why, len, "%s: cut short (%zu bytes, no closing </details> or provenance)", path, n);
    } else {
        /* Every line has as many fields as the header, the last line included. */
        long want = -1, lineno = 0;
        ok = n > 0 && t[n - 1] == '\n';
        for (char *line = t; ok && *line; lineno++) {
            long fields = 1;
            int quoted = 0;
            char *c = line;
            for (; *c && *c != '\n'; c++) {
                if (*c == '"')
                    quoted = !quoted;
                else if (*c == ',' && !quoted)
                    fields++;
            }
            if (want < 0)
                want = fields;
            ok = fields == want && fields > 10;
            line = *c ? c + 1 : c;
        }
        if (!ok)
            snprintf(why, len, "%s: line %ld has another field count than the header, or the file is cut short", path,
                     lineno);
    }    free(t);
    return ok ? 2 : 0;
}

/* Every report of d absent or valid; *present counts those present. */
static int check_reports(const char *d, int *present, char *why, size_t len)
{
    for (size_t i = 0; i < HC_N_REPORT_FILES; i++) {
        int r = check_report(d, hc_report_files[i], why, len);
        if (r == 0)
            return 0;
        if (present && r == 2)
            (*present)++;
    }
    return 1;
}

static long n_positions;

/* Every ref-*.bin of the cache directory holds all n_positions records and equals the entry of
 * the same name that an undisturbed run wrote into ref_cache. */
static int check_cache(const char *cache, const char *ref_cache, int *entries, char *why, size_t len)
{
    DIR *d = opendir(cache);
    if (!d)
        return 1; /* not created yet */
    struct dirent *e;
    int ok = 1;
    static hc_nnoutput outs[N_POSITIONS_MAX];
    static unsigned char got[N_POSITIONS_MAX];
    while (ok && (e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (strncmp(e->d_name, "ref-", 4) != 0 || nl < 8 || strcmp(e->d_name + nl - 4, ".bin") != 0)
            continue; /* temporary files (NAME.tmp.XXXXXX) are never read as entries */
        char path[2048], rpath[2048];
        snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
        snprintf(rpath, sizeof rpath, "%s/%s", ref_cache, e->d_name);
        memset(got, 0, sizeof got);
        hc_err err = {0};
        long k = hc_nnoutput_read_records(path, outs, got, (size_t)n_positions, &err);
        for (long i = 0; i < n_positions; i++)
            if (got[i])
                hc_nnoutput_free(&outs[i]);
        size_t la = 0, lb = 0;
        char *a = hc_slurp_len(path, &la), *b = hc_slurp_len(rpath, &lb);
        if (k != n_positions) {
            ok = 0;
            snprintf(why, len, "%s: %ld of %ld records %s", path, k, n_positions, err.msg);
        } else if (!a || !b || la != lb || memcmp(a, b, la) != 0) {
            ok = 0;
            snprintf(why, len, "%s: differs from the undisturbed run's entry (%zu vs %zu bytes)", path, la, lb);
        }
        free(a);
        free(b);
        (*entries)++;
    }
    closedir(d);
    return ok;
}

/* Starts argv in a new session, output to /dev/null; returns its pid. */
static pid_t start(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int fd = open("/dev/null", O_RDWR);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Starts argv and kills its session after delay seconds (or lets it finish first). Returns 1
 * when it was killed, 0 when it had finished. */
static int run_and_kill(char *const argv[], double delay)
{
    pid_t pid = start(argv);
    double end = now_s() + delay;
    int st;
    while (now_s() < end) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return 0;
        usleep(2000);
    }
    hc_session_kill(pid);
    waitpid(pid, &st, 0);
    return 1;
}

/* xorshift: the delays are reproducible from the seed printed. */
static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int count_tmp(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(dd);
    return n;
}

static void test_run_kills(void)
{
    char out[2048], cache[2048], suite[2048], why[2048] = "";
    snprintf(out, sizeof out, "%s/kill-out", dir);
    snprintf(cache, sizeof cache, "%s/kill-cache", dir);
    snprintf(suite, sizeof suite, "%s/suite.yaml", dir);
    char *argv[] = {hc, "run", suite, "--out", out, "--cache", cache, "--threads", "1", "--quiet", NULL};
    /* How long an undisturbed run takes: the kills fall anywhere in it, cache write included. */
    double t0 = now_s();
    int rc = hc_shf("%s run %s --out %s/ref-out --cache %s/ref-cache --threads 1 --quiet >/dev/null 2>&1", hc, suite, dir, dir);
    double full = now_s() - t0;
    t0 = now_s();
    hc_shf("%s run %s --out %s/ref-out2 --cache %s/ref-cache --threads 1 --quiet >/dev/null 2>&1", hc, suite, dir, dir);
    double cached = now_s() - t0;
    char p[2048];
    snprintf(p, sizeof p, "%s/ref-out", dir);
    int present = 0;
    if (!hc_check("faults-1.0", (rc == 0 || rc == 1) && check_reports(p, &present, why, sizeof why) && present == 5,
                  "undisturbed run: status %d, %d of 5 reports, %s", rc, present, why))
        return (void)hc_fail_n("faults-1.1", 4, "not run: no undisturbed run to compare with");
    printf("  undisturbed run %.2f s (%.2f s with the cache)\n", full, cached);

    /* The kills fall anywhere in a run, half of them late (while the reports are written). */
    hc_shf("rm -rf %s", cache);
    t0 = now_s();
    run_and_kill(argv, 1e9);
    full = now_s() - t0;
    t0 = now_s();
    run_and_kill(argv, 1e9);
    cached = now_s() - t0;
    printf("  the same as the test runs it: %.2f s (%.2f s with the cache)\n", full, cached);
    enum { KILLS = 24 };
    int killed = 0, bad_reports = 0, bad_cache = 0, entries_seen = 0, reports_seen = 0;
    char first_bad[2048] = "";
    char refcache[2048];
    snprintf(refcache, sizeof refcache, "%s/ref-cache", dir);
    /* Runs go on until KILLS of them were killed (at most 3 * KILLS runs): a run that finished
     * before its kill says the machine got faster than when the spans were timed (the load of
     * the machine changes them), so that span shrinks. */
    int runs = 0;
    for (int i = 0; killed < KILLS && runs < 3 * KILLS; i++, runs++) {
        /* Every third kill starts without the cache entry, so that kills land while it is
         * computed and written; the others while reports are written. */
        if (i % 3 == 0)
            hc_shf("rm -rf %s", cache);
        double *span = i % 3 == 0 ? &full : &cached, u = uniform();
        int k = run_and_kill(argv, *span * (i % 2 ? 0.6 + 0.5 * u : 1.1 * u));
        killed += k;
        if (!k)
            *span *= 0.8;
        int pr = 0;
        if (!check_reports(out, &pr, why, sizeof why)) {
            if (!bad_reports++)
                snprintf(first_bad, sizeof first_bad, "kill %d: %s", i, why);
        }
        reports_seen += pr;
        if (!check_cache(cache, refcache, &entries_seen, why, sizeof why)) {
            if (!bad_cache++)
                snprintf(first_bad, sizeof first_bad, "kill %d: %s", i, why);
        }
    }
    printf("  %d of %d runs killed; %d reports and %d cache entries found on disk after the kills\n", killed, runs,
           reports_seen, entries_seen);
    hc_check("faults-1.1", bad_reports == 0, "%d kills left a broken report; first: %s", bad_reports, first_bad);
    hc_check("faults-1.2", bad_cache == 0, "%d kills left a broken cache entry; first: %s", bad_cache, first_bad);
    hc_check("faults-1.3", killed == KILLS, "only %d of %d runs were killed before finishing", killed, runs);
    /* The rerun over what the kills left: same results as the undisturbed run. */
    rc = hc_shf("%s run %s --out %s --cache %s --threads 1 --quiet >/dev/null 2>&1", hc, suite, out, cache);
    snprintf(p, sizeof p, "%s/results.json", out);
    char *a = hc_report_normalized(p);
    snprintf(p, sizeof p, "%s/ref-out/results.json", dir);
    char *b = hc_report_normalized(p);
    present = 0;
    hc_check("faults-1.4", (rc == 0 || rc == 1) && a && b && !strcmp(a, b) && check_reports(out, &present, why, sizeof why) &&
             present == 5, "rerun: status %d, results %s, %s", rc, a && b && !strcmp(a, b) ? "equal" : "differ", why);
    free(a);
    free(b);
}

/* A cache entry cut short (as a writer without the atomic rename would leave it) is not served:
 * the run recomputes the reference, gives the same results, and rewrites the entry whole. */
static void test_truncated_entry(void)
{
    char why[2048] = "", p[2048];
    int rc = hc_shf("cd %s && rm -rf trunc-cache trunc-out && mkdir trunc-cache && for f in ref-cache/ref-*.bin; do "
                "head -c $(( $(wc -c < $f) / 2 + 3 )) $f > trunc-cache/$(basename $f); done", dir);
    rc = rc || hc_shf("%s run %s/suite.yaml --out %s/trunc-out --cache %s/trunc-cache --threads 1 --quiet >/dev/null 2>&1",
                  hc, dir, dir, dir) > 1;
    snprintf(p, sizeof p, "%s/trunc-out/results.json", dir);
    char *a = hc_report_normalized(p);
    snprintf(p, sizeof p, "%s/ref-out/results.json", dir);
    char *b = hc_report_normalized(p);
    char cache[2048], refcache[2048];
    snprintf(cache, sizeof cache, "%s/trunc-cache", dir);
    snprintf(refcache, sizeof refcache, "%s/ref-cache", dir);
    int entries = 0;
    int ok = check_cache(cache, refcache, &entries, why, sizeof why);
    hc_check("faults-1.5", rc == 0 && a && b && !strcmp(a, b) && ok && entries > 0,
             "status %d, results %s, cache %s (%d entries)", rc, a && b && !strcmp(a, b) ? "equal" : "differ",
             ok ? "whole" : why, entries);
    free(a);
    free(b);
}

static void test_sweep_kills(void)
{
    char sw[2048], suite[2048], tool[2048], why[2048] = "", p[2048];
    snprintf(sw, sizeof sw, "%s/kill-sweep", dir);
    snprintf(suite, sizeof suite, "%s/suite.yaml", dir);
    snprintf(tool, sizeof tool, "%s/ci/sweep", root);
    if (hc_shf("command -v parallel >/dev/null 2>&1") != 0) {
        hc_skip_n("faults-2", 4, "GNU parallel is not installed (ci/sweep needs it)");
        return;
    }
    double t0 = now_s();
    int rc = hc_shf("%s -j 2 --out %s/ref-sweep --halfcheck %s %s >/dev/null 2>&1", tool, dir, hc, suite);
    double full = now_s() - t0;
    snprintf(p, sizeof p, "%s/ref-sweep/merged", dir);
    int present = 0;
    if (!hc_check("faults-2.0", (rc == 0 || rc == 1) && check_reports(p, &present, why, sizeof why) && present == 5,
                  "undisturbed sweep: status %d, %d of 5 reports, %s", rc, present, why))
        return (void)hc_fail_n("faults-2.1", 3, "not run: no undisturbed sweep to compare with");
    printf("  undisturbed sweep %.2f s\n", full);
    /* --resume once the sweep has written its cases file (before that there is nothing to go on
     * with, and ci/sweep says so). */
    char *argv_new[] = {tool, "-j", "2", "--out", sw, "--halfcheck", hc, suite, NULL};
    char *argv_resume[] = {tool, "-j", "2", "--out", sw, "--halfcheck", hc, "--resume", suite, NULL};
    char cases[2048];
    snprintf(cases, sizeof cases, "%s/cases", sw);
    enum { KILLS = 12 };
    int killed = 0, bad = 0, jobs_seen = 0;
    char first_bad[2048] = "";
    hc_shf("rm -rf %s", sw);
    int runs = 0;
    /* As for the runs above: go on until KILLS sweeps were killed, shrinking the span when one
     * finished first (the machine's load changes how long a sweep takes). */
    for (int i = 0; killed < KILLS && runs < 3 * KILLS; i++, runs++) {
        if (i % 4 == 0)
            hc_shf("rm -rf %s", sw);
        int k = run_and_kill(access(cases, F_OK) == 0 ? argv_resume : argv_new, uniform() * full * 1.1);
        killed += k;
        if (!k)
            full *= 0.8;
        snprintf(p, sizeof p, "%s/merged", sw);
        int ok = check_reports(p, NULL, why, sizeof why);
        char cache[2048];
        snprintf(cache, sizeof cache, "%s/cache", sw);
        snprintf(p, sizeof p, "%s/ref-sweep/cache", dir);
        int entries = 0;
        ok = ok && check_cache(cache, p, &entries, why, sizeof why);
        /* Finished jobs are whole; unfinished ones live only under job-NNNN.tmp.PID. */
        snprintf(p, sizeof p, "%s/jobs", sw);
        DIR *d = opendir(p);
        struct dirent *e;
        while (ok && d && (e = readdir(d))) {
            if (strncmp(e->d_name, "job-", 4) != 0 || strchr(e->d_name, '.'))
                continue;
            char jd[2048];
            snprintf(jd, sizeof jd, "%s/%s", p, e->d_name);
            int pr = 0;
            ok = check_reports(jd, &pr, why, sizeof why) && pr > 0;
            if (ok)
                jobs_seen++;
            else if (!why[0])
                snprintf(why, sizeof why, "%s: a finished job without reports", jd);
        }
        if (d)
            closedir(d);
        if (!ok && !bad++)
            snprintf(first_bad, sizeof first_bad, "kill %d: %s", i, why);
    }
    printf("  %d of %d sweeps killed; %d finished jobs found on disk after the kills\n", killed, runs, jobs_seen);
    hc_check("faults-2.1", bad == 0, "%d kills left a broken report, job or cache entry; first: %s", bad, first_bad);
    hc_check("faults-2.2", killed == KILLS, "only %d of %d sweeps were killed before finishing", killed, runs);
    rc = hc_shf("%s -j 2 --out %s --halfcheck %s %s %s >/dev/null 2>&1", tool, sw, hc,
            access(cases, F_OK) == 0 ? "--resume" : "", suite);
    snprintf(p, sizeof p, "%s/merged/results.json", sw);
    char *a = hc_report_normalized(p);
    snprintf(p, sizeof p, "%s/ref-sweep/merged/results.json", dir);
    char *b = hc_report_normalized(p);
    hc_check("faults-2.3", (rc == 0 || rc == 1) && a && b && !strcmp(a, b), "resumed sweep: status %d, results %s", rc,
             a && b ? (!strcmp(a, b) ? "equal" : "differ") : "missing");
    free(a);
    free(b);
}

/* Runs halfcheck with a file-size limit; returns its wait status, stderr in msg. */
static int run_limited(rlim_t limit, const char *out, char *msg, size_t cap)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    char suite[2048];
    snprintf(suite, sizeof suite, "%s/suite.yaml", dir);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {limit, limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execl(hc, hc, "run", suite, "--out", out, "--no-cache", "--threads", "1", "--quiet", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], msg + n, cap - 1 - n)) > 0 && n + (size_t)r < cap - 1)
        n += (size_t)r;
    if (r > 0)
        n += (size_t)r;
    msg[n] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return st;
}

static void test_fsize(void)
{
    const rlim_t limits[] = {100, 1500, 6000, 20000, 50000, 85000};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        char out[2048], name[64], msg[4096], why[2048] = "";
        snprintf(out, sizeof out, "%s/fsize-%lu", dir, (unsigned long)limits[i]);
        hc_shf("rm -rf %s", out);
        int st = run_limited(limits[i], out, msg, sizeof msg);
        int present = 0;
        int valid = check_reports(out, &present, why, sizeof why);
        int tmp = count_tmp(out);
        snprintf(name, sizeof name, "faults-3.%zu", i + 1);
        int exited = WIFEXITED(st), code = exited ? WEXITSTATUS(st) : -1;
        /* Failed: an exit status of 2 (a report could not be written: the message names it) or
         * 3 (the backends' scratch files could not be written: errors in the reports), and the
         * cause said. */
        int clear = (code == 2 || code == 3) && strstr(msg, "File too large") && (code == 3 || strstr(msg, out));
        int passed = (code == 0 || code == 1) && present == 5;
        hc_check(name, exited && (clear || passed) && valid && tmp == 0,
                 "limit %lu bytes: %s, %d reports present%s%s, %d temporary files left; stderr: %.300s",
                 (unsigned long)limits[i], exited ? "exited" : "killed by a signal", present, valid ? "" : ", broken: ",
                 valid ? "" : why, tmp, msg);
        if (limits[i] == 100)
            hc_check("faults-3.0", code == 2 && present == 0, "a 100-byte limit must fail every report: status %d, %d present",
                     code, present);
    }
}

int main(void)
{
    /* setup; 1.0-1.5 killed runs and a truncated entry; 2.0-2.3 killed sweeps; 3.0 and one per file-size limit */
    hc_plan(1 + 6 + 4 + 1 + 6);
    const char *h = getenv("HALFCHECK");
    if (!getcwd(root, sizeof root))
        return 1;
    snprintf(hc, sizeof hc, "%s/%s", root, h && *h ? h : "build/halfcheck");
    if (access(hc, X_OK) != 0) {
        hc_skip_rest("faults", "%s not built", hc);
        return hc_test_exit();
    }
    const char *t = hc_tmpdir("test_faults");
    if (!t)
        return 1;
    snprintf(dir, sizeof dir, "%s/%s", root, t);
    /* The runs this test kills outright (SIGKILL) cannot remove their scratch: it goes to a
     * directory of the test's own, emptied here, not to the machine's TMPDIR. */
    {
        char scratch[1200];
        snprintf(scratch, sizeof scratch, "%s/scratch", dir);
        hc_shf("rm -rf %s && mkdir -p %s", scratch, scratch);
        setenv("TMPDIR", scratch, 1);
    }
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt("reports/junit.xsd");
    schema = pc ? xmlSchemaParse(pc) : NULL;
    if (pc)
        xmlSchemaFreeParserCtxt(pc);
    int rc = hc_shf("cd %s && rm -rf kill-* ref-* fsize-* && "
                "%s synth-net --arch res,gpool --channels 16 --seed 5 --out net.bin.gz >/dev/null 2>&1 && "
                "%s selfplay --size 9 --games 4 --seed 7 --moves 60 --stride 2 --out p9.jsonl.gz >/dev/null 2>&1 && "
                "printf '%%s\\n' 'name: faults' 'nets:' '  - {name: n, model: net.bin.gz}' "
                "'boards:' '  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9}' "
                "'backends:' '  - {name: ref, backend: ref32, tiers: [fp32]}' "
                "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' 'modes: [unbatched]' > suite.yaml",
                dir, hc, hc);
    char path[2048];
    snprintf(path, sizeof path, "%s/p9.jsonl.gz", dir);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    if (!hc_check("faults-0", rc == 0 && schema && hc_positions_load(path, &ps, &n, &err) == 0 && n > 0 &&
                  n < N_POSITIONS_MAX, "setup: status %d, schema %s, %s", rc, schema ? "read" : "unreadable", err.msg))
        return hc_fail_rest("faults-1", "not run: no test data"), hc_test_exit();
    hc_positions_free(ps, n);
    n_positions = (long)n;
    double t0 = now_s();
    test_run_kills();
    test_truncated_entry();
    test_sweep_kills();
    test_fsize();
    printf("  fault injection took %.1f s\n", now_s() - t0);
    xmlSchemaFree(schema);
    xmlCleanupParser();
    return hc_test_exit();
}
