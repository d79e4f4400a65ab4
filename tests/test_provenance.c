/* Provenance in every report (issue 29): results.json, report.md, report.html and junit.xml say
 * what produced the figures: halfcheck's version, engine version, kernel forms and CUDA or not,
 * the command line, per net the file actually evaluated (after --net), its sha256 and model
 * version, per external backend the engine's identity as it reports it (a GTP engine's name and
 * version); merge keeps them per job. And report.md for a pull request: units explained once,
 * limits shown beside the ratios, the reference's self-checks in their own section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "reports/results.h"
#include "harness/base/sha256.h"
#include "harness/base/version.h"

static char hc[1024], root[1024], dir[1024];

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(1 + 8 + 3 + 4);
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_provenance"));
    char helper[2048];
    snprintf(helper, sizeof helper, "%s%s%s", argv[0][0] == '/' ? "" : root, argv[0][0] == '/' ? "" : "/", argv[0]);
    char *slash = strrchr(helper, '/');
    char pipehelper[2100];
    snprintf(slash + 1, sizeof helper - (size_t)(slash + 1 - helper), "helper_pipe_ref32");
    snprintf(pipehelper, sizeof pipehelper, "%s", helper);
    snprintf(slash + 1, sizeof helper - (size_t)(slash + 1 - helper), "helper_fake_gtp");
    int rc = hc_shf("cd %s && rm -rf o* m* && mkdir -p mine && %s synth-net --arch v7 --seed 5 --out mine/small.bin.gz "
                    "2>/dev/null && %s selfplay --size 7 --games 2 --seed 3 --moves 30 --stride 3 --out p7.jsonl.gz "
                    "2>/dev/null && printf '%%s\\n' 'name: prov' 'nets: [{name: small, model: nets/small.bin.gz}]' "
                    "'boards: [{name: b7, positions: p7.jsonl.gz, nnBuffer: 7x7, maxBatchSize: 3}]' 'backends:' "
                    "'  - {name: ref32-batch-invariance, backend: ref32, tiers: [exact]}' "
                    "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
                    "'  - {name: engine, backend: \"gtp:%s {model} -nn {nnX} {nnY}\", tiers: [fp32]}' "
                    "'  - {name: program, backend: \"pipe:@model={model} %s\", tiers: [fp32]}' "
                    "'modes: [unbatched]' > suite.yaml",
                    dir, hc, hc, helper, pipehelper);
    if (!hc_check("prov-0.1", rc == 0 && access(helper, X_OK) == 0, "could not make the test data in %s", dir))
        return hc_fail_rest("prov-1", "not run: no test data"), hc_test_exit();

    /* 1. One run with --net NAME=PATH. */
    rc = hc_shf("cd %s && %s run suite.yaml --net small=mine/small.bin.gz --out o1 --cache cache --quiet >/dev/null "
                "2>o1.err", dir, hc);
    char path[2048], digest[65] = "";
    hc_err err = {0};
    snprintf(path, sizeof path, "%s/mine/small.bin.gz", dir);
    hc_sha256_file(path, digest, &err);
    snprintf(path, sizeof path, "%s/o1/results.json", dir);
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *rs = d ? hc_results_doc_results(d) : NULL;
    const hc_provenance *p = rs && rs->n_prov == 1 ? &rs->prov[0] : NULL;
    hc_check("prov-1.1", rc == 0 && p, "run exited %d, results.json without one provenance: %s %s", rc, err.msg,
             hc_text(hc_path(dir, "o1.err")));
    hc_check("prov-1.2", p && p->halfcheck && !strcmp(p->halfcheck, HC_VERSION) && p->engine_version == HC_ENGINE_VERSION &&
                             p->kernels && strstr(p->kernels, "gemm ") && p->command &&
                             strstr(p->command, "--net small=mine/small.bin.gz"),
             "halfcheck's version, engine, kernels or the command missing");
    hc_check("prov-1.3", p && p->n_nets == 1 && !strcmp(p->nets[0].name, "small") &&
                             !strcmp(p->nets[0].file, "mine/small.bin.gz") && !strcmp(p->nets[0].sha256, digest) &&
                             p->nets[0].model_version == 7,
             "the net's file, sha256 (want %s) or model version", digest);
    const char *engine = NULL;
    for (size_t i = 0; p && i < p->n_backends; i++)
        if (!strcmp(p->backends[i].name, "engine"))
            engine = p->backends[i].engine;
    hc_check("prov-1.4", engine && !strcmp(engine, "fake_gtp 0"), "the GTP engine's identity: %s", engine ? engine : "(none)");
    const char *prog = NULL;
    for (size_t i = 0; p && i < p->n_backends; i++)
        if (!strcmp(p->backends[i].name, "program"))
            prog = p->backends[i].engine;
    hc_check("prov-1.8", prog && !strcmp(prog, "helper_pipe_ref32, pipe protocol 1"), "the pipe program's identity: %s",
             prog ? prog : "(none)");
    const char *md = hc_text(hc_path(dir, "o1/report.md"));
    hc_check("prov-1.5", strstr(md, "### Provenance") && strstr(md, digest) && strstr(md, "`mine/small.bin.gz`") &&
                             strstr(md, "engine fake_gtp 0") && strstr(md, "halfcheck " HC_VERSION),
             "report.md's provenance: %s", md);
    const char *ht = hc_text(hc_path(dir, "o1/report.html"));
    hc_check("prov-1.6", strstr(ht, "id=\"provenance\"") && strstr(ht, digest) && strstr(ht, "fake_gtp 0"),
             "report.html's provenance");
    const char *ju = hc_text(hc_path(dir, "o1/junit.xml"));
    hc_check("prov-1.7", strstr(ju, "name=\"net.sha256\"") && strstr(ju, digest) && strstr(ju, "name=\"halfcheck.cuda\"") &&
                             strstr(ju, "name=\"backend.engine.engine\" value=\"fake_gtp 0\"") &&
                             strstr(ju, "name=\"command\""),
             "junit.xml's properties: %s", ju);
    hc_results_doc_free(d);

    /* 2. A merge keeps each job's provenance, named by the job. */
    rc = hc_shf("cd %s && %s run suite.yaml --net small=mine/small.bin.gz --only backend=fp16 --out oa --cache cache "
                "--quiet 2>/dev/null && %s run suite.yaml --net mine --only backend=engine --out ob --cache cache --quiet "
                "2>/dev/null && %s merge oa ob --out m >/dev/null 2>m.err",
                dir, hc, hc, hc);
    snprintf(path, sizeof path, "%s/m/results.json", dir);
    d = hc_results_read_json(path, &err);
    rs = d ? hc_results_doc_results(d) : NULL;
    hc_check("prov-2.1", rc == 0 && rs && rs->n_prov == 2 && rs->prov[0].job && strstr(rs->prov[0].job, "oa") &&
                             rs->prov[1].job && strstr(rs->prov[1].job, "ob") && strstr(rs->prov[1].command, "--net mine"),
             "merge exited %d; provenance per job: %zu entries", rc, rs ? rs->n_prov : 0);
    hc_check("prov-2.2", rs && rs->n_prov == 2 && rs->prov[1].n_backends == 1 && rs->prov[1].backends[0].engine &&
                             !strcmp(rs->prov[1].backends[0].engine, "fake_gtp 0"),
             "the second job's engine");
    const char *mmd = hc_text(hc_path(dir, "m/report.md"));
    hc_check("prov-2.3", strstr(mmd, "- job `") && strstr(mmd, "--net mine"), "merged report.md's provenance: %s", mmd);
    hc_results_doc_free(d);

    /* 3. report.md for a pull request. */
    hc_check("prov-3.1", strstr(md, "`c` centi-ownership") && strstr(md, "`%` percentage points"),
             "report.md does not explain its units");
    hc_check("prov-3.2", strstr(md, "### Reference self-checks\n\n- small · b7 · ref32-batch-invariance · unbatched: "
                                    "bit-identical (exact)\n") && !strstr(md, "| b7 | ref32-batch-invariance |"),
             "the reference's self-check is not in a section of its own: %s", md);
    hc_check("prov-3.3", strstr(md, " of 3.5c = ") && strstr(md, "x (fp16) |"), "report.md shows no limit beside a ratio");
    hc_check("prov-3.4", strstr(ht, "<td>bit-identical (exact)</td>") && strstr(ht, " of 3.5c = "),
             "report.html's closest-to-limit cells: no bit-identical for exact, or no limit beside a ratio");
    return hc_test_exit();
}
