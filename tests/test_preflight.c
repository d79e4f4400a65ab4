/* Everything checkable is checked before the work starts (issue 29): a backend spec's kind and
 * params (profile names and files), an unknown YAML key, a net that does not load, a positions
 * file that does not load or does not fit its NN buffer: each is one error with the suite's
 * FILE:LINE:COL (and "did you mean" for a near name), exit status 2, and no reference computed
 * (the cache stays empty) nor reports written. eval names the positions file and line of a
 * record that does not fit --nn. Data made by halfcheck (synth-net, selfplay). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"

static char hc[1024], root[1024], dir[1024];

/* A suite of one net (model), boards b7 (p7) and a second (second, "" none) and one backend. */
static void write_suite_t(const char *name, const char *model, const char *spec, const char *second, const char *tiers,
                          const char *extra)
{
    FILE *f = fopen(hc_path(dir, name), "w");
    if (!f)
        return;
    fprintf(f, "name: t\nnets: [{name: n, model: %s}]\nboards:\n  - {name: b7, positions: p7.jsonl.gz, nnBuffer: 7x7}\n%s"
               "backends:\n  - {name: x, backend: \"%s\", tiers: %s%s}\n",
            model, second, spec, tiers, extra);
    fclose(f);
}

static void write_suite(const char *name, const char *model, const char *spec, const char *second, const char *extra)
{
    write_suite_t(name, model, spec, second, "[fp16]", extra);
}

/* Runs the suite; checks exit 2, the message holds want1 and want2, one error line, and that
 * nothing was computed (empty cache, no reports). */
static void refused(const char *name, const char *suite, const char *want1, const char *want2)
{
    int rc = hc_shf("cd %s && rm -rf cache out && mkdir cache && %s run %s --cache cache --out out >/dev/null 2>err.txt",
                    dir, hc, suite);
    const char *e = hc_text(hc_path(dir, "err.txt"));
    int lines = 0;
    for (const char *p = e; (p = strchr(p, '\n')); p++)
        lines++;
    int clean = hc_shf("cd %s && [ -z \"$(ls -A cache)\" ] && [ ! -e out ]", dir) == 0;
    hc_check(name, rc == 2 && strstr(e, want1) && strstr(e, want2) && lines == 1 && clean,
             "%s: exit %d (want 2), %d lines (want 1), nothing computed %d; want \"%s\" and \"%s\" in: %s", suite, rc,
             lines, clean, want1, want2, e);
}

int main(void)
{
    hc_plan(1 + 12);
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_preflight"));
    int rc = hc_shf("cd %s && %s synth-net --arch v7 --seed 3 --out n.bin.gz 2>/dev/null && head -c 3000 n.bin.gz > "
                    "cut.bin.gz && %s selfplay --size 7 --games 2 --seed 3 --moves 20 --out p7.jsonl.gz 2>/dev/null && "
                    "%s selfplay --size 9 --games 1 --seed 4 --moves 10 --out p9.jsonl.gz 2>/dev/null",
                    dir, hc, hc, hc);
    if (!hc_check("preflight-0.1", rc == 0, "could not make the test data in %s", dir))
        return hc_fail_rest("preflight-1", "not run: no test data"), hc_test_exit();

    /* 1. Backend specs: an unknown kind, an unknown profile, a profile file that is not there. */
    write_suite("kind.yaml", "n.bin.gz", "emulat:fp16", "", "");
    refused("preflight-1.1", "kind.yaml", "kind.yaml:6:24", "did you mean \"emulate\"");
    write_suite("prof.yaml", "n.bin.gz", "emulate:fp61", "", "");
    refused("preflight-1.2", "prof.yaml", "prof.yaml:6:24", "did you mean \"fp16\"");
    write_suite("pfile.yaml", "n.bin.gz", "emulate:profiles/none.yaml", "", "");
    refused("preflight-1.3", "pfile.yaml", "pfile.yaml:6:24", "profiles/none.yaml");
    write_suite("fault.yaml", "n.bin.gz", "mutate:pass-droped:ref32", "", "");
    refused("preflight-1.4", "fault.yaml", "fault.yaml:6:24", "did you mean \"pass-dropped\"");
    write_suite("file.yaml", "n.bin.gz", "file:recorded/none.jsonl.gz", "", "");
    refused("preflight-1.5", "file.yaml", "file.yaml:6:24", "recorded/none.jsonl.gz: No such file");
    /* cuda's params are checked without a GPU (a build without the backend says it lacks it). */
    write_suite("cuda.yaml", "n.bin.gz", "cuda:fp61", "", "");
    refused("preflight-1.6", "cuda.yaml", "cuda.yaml:6:24", "cuda");
    /* 2. An unknown key. */
    write_suite("key.yaml", "n.bin.gz", "ref32", "", ", tier: [fp32]");
    refused("preflight-2.1", "key.yaml", "key.yaml:6:", "unknown key \"tier\" (did you mean \"tiers\"?)");
    write_suite_t("tier.yaml", "n.bin.gz", "ref32", "", "[fp61]", "");
    refused("preflight-2.2", "tier.yaml", "tier.yaml:6:", "unknown tier \"fp61\" (did you mean \"fp16\"?)");
    /* 3. A truncated net: one error, its offset said to be the uncompressed one. */
    write_suite("cut.yaml", "cut.bin.gz", "emulate:fp16", "  - {name: b7b, positions: p7.jsonl.gz, nnBuffer: 7x7}\n", "");
    refused("preflight-3.1", "cut.yaml", "cut.yaml:2:", "cut.bin.gz: uncompressed offset");
    /* 4. Positions: a second board's file is missing (the first board's reference must not be
     * computed first), a board whose records do not fit its buffer. */
    write_suite("pmiss.yaml", "n.bin.gz", "emulate:fp16", "  - {name: gone, positions: nope.jsonl.gz, nnBuffer: 7x7}\n", "");
    refused("preflight-4.1", "pmiss.yaml", "pmiss.yaml:5:5", "nope.jsonl.gz");
    write_suite("fit.yaml", "n.bin.gz", "emulate:fp16", "  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 7x7}\n", "");
    refused("preflight-4.2", "fit.yaml", "p9.jsonl.gz:1: position 0 is 9x9", "fit.yaml:5:5");

    /* 5. eval: a record that does not fit --nn is named by its file and line. */
    rc = hc_shf("cd %s && %s eval --net n.bin.gz --positions p9.jsonl.gz --nn 7x7 --out e.jsonl >/dev/null 2>err.txt",
                dir, hc);
    const char *e = hc_text(hc_path(dir, "err.txt"));
    hc_check("preflight-5.1", rc == 2 && strstr(e, "p9.jsonl.gz:1: position 0 is 9x9") && !hc_file_exists(hc_path(dir, "e.jsonl")),
             "eval of a 9x9 record in a 7x7 buffer: exit %d: %s", rc, e);
    return hc_test_exit();
}
