/* halfcheck katago --path gtp against the fake engine (tests/helper_fake_gtp) behind a stand-in for the
 * katago binary that takes KataGo's command line (gtp -model M -config C -override-config ...),
 * evaluates in the NN buffer the overrides ask for, and writes a gtp_logs/ directory into its
 * working directory as KataGo's relative logDir does. The command must run, pass, write its
 * reports and suite, and leave nothing in the directory it was started in. --model DIR on a
 * directory laid out as KataGo's cpp/tests/models (READMEs, -info.txt notes, findLatestModelTest
 * directories, a net as both .bin.gz and .txt.gz) checks each net once and says what it skipped;
 * mistakes of the command line exit 2 naming the option with --out never created; several --only
 * select the union for katago and run, and the rerun lines carry them. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"

static char dir[1024];

/* `halfcheck katago ARGS` run from DIR/start as a user would (paths relative to it), its stdout and
 * stderr into DIR's stdout.txt and stderr.txt: its exit status; *err the text of its stderr. */
static int katago(const char *args, const char **err)
{
    int rc = hc_shf("cd %s/start && %s katago %s >../stdout.txt 2>../stderr.txt", dir, hc_halfcheck_bin(), args);
    *err = hc_text(hc_path(dir, "stderr.txt"));
    return rc;
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(12 + 6 + 4 + 11 + 4 + 4);
    char cwd[1024], self[1024], helper[2048], hc[2048];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    snprintf(self, sizeof self, "%s", argv[0]);
    const char *h = hc_halfcheck_bin();
    snprintf(hc, sizeof hc, "%s", h); /* absolute already */
    snprintf(helper, sizeof helper, "%s%s%s/helper_fake_gtp", self[0] == '/' ? "" : cwd, self[0] == '/' ? "" : "/",
             dirname(self));
    const char *t = hc_tmpdir("test_katago_cmd");
    snprintf(dir, sizeof dir, "%s/%s", cwd, t ? t : "build/tmp/test_katago_cmd");

    /* The stand-in katago: refuses anything but KataGo's gtp command line. */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd %s && rm -rf start out cache fakekatago && mkdir start && echo 'logDir = gtp_logs' "
             ">gtp.cfg && %s synth-net --arch v17tf --out net.bin.gz 2>/dev/null && "
             "%s synth-net --arch v17tf --seed 9 --out other.bin.gz 2>/dev/null", dir, hc, hc);
    int ok = hc_sh(cmd) == 0;
    char path[1200];
    snprintf(path, sizeof path, "%s/fakekatago", dir);
    ok = ok && hc_write_script(path,
        "[ \"$1\" = gtp ] || { echo \"fakekatago: not a gtp command: $1\" >&2; exit 2; }\n"
        "shift\n"
        "model= cfg= ov=\n"
        "while [ $# -gt 0 ]; do\n"
        "  case $1 in -model) model=$2 ;; -config) cfg=$2 ;; -override-config) ov=$2 ;;\n"
        "  *) echo \"fakekatago: unknown argument $1\" >&2; exit 2 ;; esac\n"
        "  shift 2\n"
        "done\n"
        "[ -f \"$cfg\" ] && [ -f \"$model\" ] || { echo \"fakekatago: no config or model\" >&2; exit 2; }\n"
        "nx=$(echo \"$ov\" | tr , '\\n' | sed -n 's/^maxBoardXSizeForNNBuffer=//p')\n"
        "ny=$(echo \"$ov\" | tr , '\\n' | sed -n 's/^maxBoardYSizeForNNBuffer=//p')\n"
        "echo \"$ov\" | grep -q 'gtpForceMaxNNSize=true' || { echo 'fakekatago: no NN buffer override' >&2; exit 2; }\n"
        "mkdir -p gtp_logs && pwd >gtp_logs/cwd.txt\n"
        "exec '%s' \"$model\" -nn \"$nx\" \"$ny\" $FAKE_KATAGO_EXTRA\n",
        helper) == 0;
    if (!hc_check("katago-cmd-0.1", ok && access(helper, X_OK) == 0, "cannot set up %s (helper %s)", dir, helper)) {
        hc_fail_rest("katago-cmd-1..3", "not run: no stand-in engine (katago-cmd-0.1 failed)");
        return hc_test_exit();
    }

    /* Relative paths, from a start directory that must stay empty. */
    const char *e;
    int rc = katago("--path gtp --katago ../fakekatago --config ../gtp.cfg --model ../net.bin.gz --out ../out "
                    "--cache ../cache --only board=size10x14 --quiet",
                    &e);
    hc_check("katago-cmd-1.1", rc == 0, "halfcheck katago exited %d: %s", rc, e);
    int all = hc_reports_written(hc_path(dir, "out")) && hc_file_exists(hc_path(dir, "out/katago-suite.yaml"));
    hc_check("katago-cmd-1.2", all, "reports or suite missing in %s/out", dir);
    const char *res = hc_text(hc_path(dir, "out/results.json"));
    hc_check("katago-cmd-1.3", strstr(res, "\"board\": \"size10x14\"") && strstr(res, "\"backend\": \"katago-gtp\"") &&
                                   strstr(res, "\"outcome\": \"checked\"") && strstr(res, "\"tier\": \"fp16\"") &&
                                   !strstr(res, "\"tier\": \"fp32\""),
             "results.json is not the engine's checked fp16 case: %.500s", res);
    snprintf(cmd, sizeof cmd, "[ -z \"$(ls -A %s/start)\" ]", dir);
    hc_check("katago-cmd-1.4", hc_sh(cmd) == 0, "the start directory is not empty: the engine or halfcheck left files there");
    char want[1200];
    snprintf(want, sizeof want, "%s/out/katago-engine\n", dir);
    const char *logged = hc_text(hc_path(dir, "out/katago-engine/gtp_logs/cwd.txt"));
    hc_check("katago-cmd-1.5", strcmp(logged, want) == 0 || strstr(logged, "/out/katago-engine\n"),
             "the engine did not run in OUT/katago-engine: %s", logged);
    const char *suite = hc_text(hc_path(dir, "out/katago-suite.yaml"));
    hc_check("katago-cmd-1.6", strstr(suite, "boards/size13-rectbuffer.yaml") && strstr(suite, "boards/rect.yaml") &&
                                   strstr(suite, "maxBoardXSizeForNNBuffer={nnX}") && strstr(suite, "nnMaxBatchSize=1"),
             "the written suite lacks the boards or overrides: %s", suite);

    /* The written suite reruns as it says, and --tier picks the tiers. */
    rc = katago("--path gtp --katago ../fakekatago --config ../gtp.cfg --model ../net.bin.gz --out ../out "
                "--cache ../cache --only board=size10x14 --tier fp32 --tier fp16 --quiet",
                &e);
    res = hc_text(hc_path(dir, "out/results.json"));
    int both = strstr(res, "\"tier\": \"fp32\"") && strstr(res, "\"tier\": \"fp16\"");
    hc_check("katago-cmd-2.1", rc == 0 && both, "--tier fp32 --tier fp16: exit %d, both tiers %d: %.300s", rc, both, e);

    /* Errors: a config that does not exist, an engine that refuses the command line. */
    rc = katago("--katago ../fakekatago --config ../nope.cfg --model ../net.bin.gz --out ../out2 --quiet", &e);
    hc_check("katago-cmd-3.1", rc == 2 && strstr(e, "--config ../nope.cfg"), "a missing config: exit %d: %s", rc, e);
    rc = katago("--katago ../fakekatago --model ../net.bin.gz --quiet", &e);
    hc_check("katago-cmd-3.2", rc == 2 && strstr(e, "--config"), "no --config: exit %d: %s", rc, e);
    rc = hc_write_script(hc_path(dir, "brokenkatago"), "echo broken >&2; exit 7\n") != 0
             ? -1
             : katago("--path gtp --katago ../brokenkatago --config ../gtp.cfg --model ../net.bin.gz --out ../out3 "
                      "--cache ../cache --only board=size10x14 --quiet",
                      &e);
    hc_check("katago-cmd-3.3", rc == 3 && strstr(e, "broken"), "an engine that dies: exit %d (want 3): %s", rc, e);
    snprintf(cmd, sizeof cmd, "[ -z \"$(ls -A %s/start)\" ]", dir);
    hc_check("katago-cmd-3.4", hc_sh(cmd) == 0, "the start directory is not empty after the failures");

    /* 4. The written suite gives KataGo the suite's net through {model}, so that --net OTHER has
     * both sides evaluate OTHER; a failing case's rerun line (an engine told to use another
     * policy temperature) reruns as printed with the same figures, and with --net it carries it. */
    suite = hc_text(hc_path(dir, "out/katago-suite.yaml"));
    hc_check("katago-cmd-4.1", strstr(suite, "-model '{model}'") && !strstr(suite, "-model '/"),
             "the suite's engine does not take the net's file through {model}: %s", suite);
    snprintf(cmd, sizeof cmd, "cd %s && %s run out/katago-suite.yaml --net other.bin.gz --only board=size10x14 --out o4 "
             "--cache cache --quiet >/dev/null 2>e4.txt", dir, hc);
    rc = hc_sh(cmd);
    hc_check("katago-cmd-4.2", rc == 0, "run katago-suite.yaml --net OTHER exited %d (want 0: KataGo and the reference "
             "both evaluate OTHER): %s", rc, hc_text(hc_path(dir, "e4.txt")));
    snprintf(cmd, sizeof cmd,
             "cd %s/start && FAKE_KATAGO_EXTRA='-temperature 1.7' %s katago --path gtp --katago ../fakekatago --config ../gtp.cfg "
             "--model ../net.bin.gz --out ../out5 --cache ../cache --only board=size10x14 --quiet >../stdout.txt "
             "2>../e5.txt",
             dir, hc);
    rc = hc_sh(cmd);
    char *t5 = hc_slurp(hc_path(dir, "e5.txt")), *line = t5 ? strstr(t5, "; rerun: ") : NULL;
    if (line) {
        line += strlen("; rerun: ");
        line[strcspn(line, "\n")] = 0;
    }
    hc_check("katago-cmd-4.3", rc == 1 && line && strstr(line, "katago-suite.yaml --only "),
             "katago, engine at temperature 1.7: exit %d (want 1), rerun line %s", rc, line ? line : "(none)");
    int rc2 = -9;
    if (line) {
        snprintf(cmd, sizeof cmd, "cd %s && rm -rf bin && mkdir bin && ln -s %s bin/halfcheck && cd start && "
                 "FAKE_KATAGO_EXTRA='-temperature 1.7' PATH=%s/bin:$PATH %s --cache ../cache --out ../o5 >/dev/null 2>../e5r.txt", dir, hc, dir, line);
        rc2 = hc_sh(cmd);
    }
    const char *r1 = hc_text(hc_path(dir, "out5/report.csv")), *r2 = hc_text(hc_path(dir, "o5/report.csv"));
    hc_check("katago-cmd-4.4", rc2 == 1 && *r1 && !strcmp(r1, r2),
             "the rerun line exited %d (want 1), report.csv %s: %s", rc2, strcmp(r1, r2) ? "differs" : "same",
             hc_text(hc_path(dir, "e5r.txt")));
    free(t5);
    /* The suite run with --net and tier exact: its rerun line carries the --net. */
    snprintf(cmd, sizeof cmd, "cd %s && FAKE_KATAGO_EXTRA='-temperature 1.7' %s run out5/katago-suite.yaml --net "
             "other.bin.gz --only board=size10x14 --out o6 --cache cache --quiet "
             ">/dev/null 2>e6.txt", dir, hc);
    rc = hc_sh(cmd);
    hc_check("katago-cmd-4.5", rc == 1 && strstr(hc_text(hc_path(dir, "e6.txt")), "--net other.bin.gz"),
             "run katago-suite.yaml --net other.bin.gz (temperature 1.7): exit %d, rerun lines without --net: %s", rc,
             hc_text(hc_path(dir, "e6.txt")));
    /* katago's final line (run's) is the last of its combined output, the table before it. */
    snprintf(cmd, sizeof cmd,
             "cd %s/start && %s katago --path gtp --katago ../fakekatago --config ../gtp.cfg --model ../net.bin.gz --out ../out7 "
             "--cache ../cache --only board=size10x14 2>&1 | cat > ../o7.txt; tail -n 1 ../o7.txt | grep -q '^halfcheck "
             "run: 1 checks: ' && grep -q '^| size10x14 ' ../o7.txt && grep -q '^| net | 17 | katago-gtp ' ../o7.txt", dir, hc);
    hc_check("katago-cmd-4.6", hc_sh(cmd) == 0, "katago's final line is not last in one pipe: %s",
             hc_text(hc_path(dir, "o7.txt")));

    /* 5. --model DIR laid out as KataGo's cpp/tests/models, plus a net without a model's file
     * name (found by content) and a log beside them. */
    rc = hc_shf("cd %s && rm -rf models && mkdir -p models/findLatestModelTest1 models/findLatestModelTest2 "
                "models/findLatestModelTest3/def && : >models/findLatestModelTest1/empty.txt && "
                ": >models/findLatestModelTest2/abc.bin.gz && : >models/findLatestModelTest3/def/model.bin.gz && "
                "printf 'These are small and weak neural net models for testing only.\\n' >models/README.txt && "
                "printf 'Final 6-block selfplay net.\\n\\n{\"version\": 17}\\n' >models/netA-info.txt && "
                "printf 'run 1: ok\\n' >models/notes.log && cp net.bin.gz models/netA.bin.gz && "
                "%s synth-net --arch v17tf --out models/netA.txt.gz 2>/dev/null && "
                "%s synth-net --arch v17tf --seed 9 --out models/netB.txt.gz 2>/dev/null && "
                "%s synth-net --arch v17tf --seed 11 --out models/mystery 2>/dev/null && "
                "printf 'logDir = gtp_logs\\nnumSearchThreads = 6 # as gtp_example.cfg\\n' >gtpfull.cfg && "
                "printf 'logDir = a\\nnumAnalysisThreads = 2\\nnumSearchThreadsPerAnalysisThread = 16\\n' >an.cfg",
                dir, hc, hc, hc);
    rc = rc ? rc : hc_shf("cd %s/start && %s katago --path gtp --katago ../fakekatago --config ../gtp.cfg --model ../models "
                          "--out ../o8 --cache ../cache --only board=size10x14 --quiet >../stdout.txt 2>../e8.txt",
                          dir, hc);
    const char *e8 = hc_text(hc_path(dir, "e8.txt"));
    hc_check("katago-cmd-5.1", rc == 0, "katago --model DIR exited %d: %s", rc, e8);
    res = hc_text(hc_path(dir, "o8/results.json"));
    int once = 1;
    static const char *const dnets[] = {"netA", "netB", "mystery"};
    for (int i = 0; i < 3; i++) {
        char want[64];
        snprintf(want, sizeof want, "\"net\": \"%s\"", dnets[i]);
        const char *p1 = strstr(res, want);
        once &= p1 && !strstr(p1 + 1, want);
    }
    hc_check("katago-cmd-5.2", once && !strstr(res, "netA-2") && !strstr(res, "\"net\": \"README"),
             "not each of netA, netB, mystery checked once: %.600s", res);
    suite = hc_text(hc_path(dir, "o8/katago-suite.yaml"));
    hc_check("katago-cmd-5.3", strstr(suite, "/models/netA.bin.gz") && !strstr(suite, "netA.txt.gz") &&
                                   strstr(suite, "/models/netB.txt.gz") && strstr(suite, "/models/mystery"),
             "the suite's nets: %s", suite);
    hc_check("katago-cmd-5.4", strstr(e8, "skipped README.txt: not a model") && strstr(e8, "skipped notes.log: not a model") &&
                                   strstr(e8, "skipped netA-info.txt: not a model") &&
                                   strstr(e8, "skipped findLatestModelTest1/: a directory (not searched)") &&
                                   strstr(e8, "skipped findLatestModelTest3/: a directory") &&
                                   strstr(e8, "skipped netA.txt.gz: the same net as netA.bin.gz") &&
                                   strstr(e8, "checked once, from netA.bin.gz") && !strstr(e8, "skipped mystery") &&
                                   !strstr(e8, "skipped netB"),
             "the skipped files are not each said: %s", e8);

    /* 6. Mistakes of the command line: exit 2, the option named, --out never created. */
    static const struct {
        const char *args, *want1, *want2;
    } bad[] = {
        {"--config ../gtp.cfg --path gtp --model ../models --tier fp23", "--tier: unknown tier \"fp23\"", "fp32"},
        {"--config ../gtp.cfg --path gtp --model ../models --only board=size99", "--only board=size99",
         "size9, size13"},
        {"--config ../gtp.cfg --path gtp --model ../models --only net=netZ", "--only net=netZ", "the nets: mystery, netA, netB"},
        {"--config ../gtp.cfg --path gtp --model ../models --only colour=black", "unknown key \"colour\"", "board="},
        {"--config ../gtpfull.cfg --model ../models", "--config ../gtpfull.cfg: a GTP config (it sets numSearchThreads)",
         "--path analysis needs an analysis config"},
        {"--config ../an.cfg --path gtp --model ../models", "--config ../an.cfg: an analysis config",
         "--path gtp needs a GTP config"},
        {"--config ../gtpfull.cfg --path both --model ../models", "--config ../gtpfull.cfg: a GTP config",
         "--analysis-config"},
        {"--config ../gtp.cfg --path gtp --model ../models/findLatestModelTest2", "no KataGo model in this directory",
         "abc.bin.gz (not a model)"},
        {"--config ../gtp.cfg --path gtp --model ../models/README.txt", "--model ../models/README.txt: not a model",
         "These are"},
        {"--config ../gtp.cfg --path gtp --model ../models --repeat 1", "--repeat: must be 2..100", "--repeat"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = hc_shf("cd %s/start && %s katago --katago ../fakekatago %s --out ../never --cache ../cache --quiet "
                    ">../stdout.txt 2>../e9.txt", dir, hc, bad[i].args);
        const char *e9 = hc_text(hc_path(dir, "e9.txt"));
        char name[32];
        snprintf(name, sizeof name, "katago-cmd-6.%zu", i + 1);
        hc_check(name, rc == 2 && strstr(e9, bad[i].want1) && strstr(e9, bad[i].want2) && !hc_file_exists(hc_path(dir, "never")),
                 "katago %s: exit %d (want 2), --out %s: %s", bad[i].args, rc,
                 hc_file_exists(hc_path(dir, "never")) ? "created" : "not created", e9);
    }
    snprintf(cmd, sizeof cmd, "[ -z \"$(ls -A %s/start)\" ]", dir);
    hc_check("katago-cmd-6.11", hc_sh(cmd) == 0, "the start directory is not empty after the refusals");

    /* 7. Several --only: the union; the banner's rerun line carries them and reruns the same. */
    rc = hc_shf("cd %s/start && %s katago --path gtp --katago ../fakekatago --config ../gtp.cfg --model ../models "
                "--out ../o10 --cache ../cache --only net=netA,board=size10x14 --only net=netB,board=size9 --quiet "
                ">../stdout.txt 2>../e10.txt", dir, hc);
    res = hc_text(hc_path(dir, "o10/results.json"));
    int n_res = 0;
    for (const char *p1 = strstr(res, "\"outcome\""); p1; p1 = strstr(p1 + 1, "\"outcome\""))
        n_res++;
    hc_check("katago-cmd-7.1", rc == 0 && n_res == 2 && strstr(res, "\"net\": \"netA\"") &&
                                   strstr(res, "\"net\": \"netB\"") && strstr(res, "\"board\": \"size9\"") &&
                                   strstr(res, "\"board\": \"size10x14\"") && !strstr(res, "\"net\": \"mystery\""),
             "two --only: exit %d, %d results: %.600s %s", rc, n_res, res, hc_text(hc_path(dir, "e10.txt")));
    char *t10 = hc_slurp(hc_path(dir, "e10.txt")), *l10 = t10 ? strstr(t10, "(rerun: ") : NULL;
    if (l10) {
        l10 += strlen("(rerun: ");
        l10[strcspn(l10, ")")] = 0;
    }
    hc_check("katago-cmd-7.2", l10 && strstr(l10, "katago-suite.yaml --only net=netA,board=size10x14 --only net=netB,board=size9"),
             "the banner's rerun line lacks the filters: %s", l10 ? l10 : "(none)");
    rc = l10 ? hc_shf("cd %s/start && PATH=%s/bin:$PATH %s --cache ../cache --out ../o10r --quiet >/dev/null 2>../e10r.txt",
                      dir, dir, l10) : -9;
    const char *c1 = hc_text(hc_path(dir, "o10/report.csv")), *c2 = hc_text(hc_path(dir, "o10r/report.csv"));
    hc_check("katago-cmd-7.3", rc == 0 && *c1 && !strcmp(c1, c2), "the banner's rerun line exited %d, report.csv %s: %s",
             rc, strcmp(c1, c2) ? "differs" : "same", hc_text(hc_path(dir, "e10r.txt")));
    free(t10);
    rc = hc_shf("cd %s && %s run o8/katago-suite.yaml --only net=netB,board=size99 --out o11 --cache cache --quiet "
                ">/dev/null 2>e11.txt", dir, hc);
    const char *e11 = hc_text(hc_path(dir, "e11.txt"));
    hc_check("katago-cmd-7.4", rc == 2 && strstr(e11, "--only net=netB,board=size99: no case with board \"size99\"") &&
                                   strstr(e11, "size10x14") && !hc_file_exists(hc_path(dir, "o11")),
             "run --only board=size99: exit %d: %s", rc, e11);

    /* 8. run with several --only: the union; each failing case's rerun line names that case and
     * carries --timeout, and reruns as printed. */
    rc = hc_shf("cd %s && FAKE_KATAGO_EXTRA='-temperature 1.7' %s run o8/katago-suite.yaml --only "
                "net=netB,board=size10x14 --only net=mystery,board=size10x14 --timeout 300 --out o12 --cache cache "
                "--quiet >/dev/null 2>e12.txt", dir, hc);
    const char *e12 = hc_text(hc_path(dir, "e12.txt"));
    res = hc_text(hc_path(dir, "o12/results.json"));
    hc_check("katago-cmd-8.1", rc == 1 && strstr(res, "\"net\": \"netB\"") && strstr(res, "\"net\": \"mystery\"") &&
                                   !strstr(res, "\"net\": \"netA\""),
             "run with two --only: exit %d (want 1): %.400s %s", rc, res, e12);
    hc_check("katago-cmd-8.2", strstr(e12, "--only net=netB,board=size10x14,backend=katago-gtp --timeout 300") &&
                                   strstr(e12, "--only net=mystery,board=size10x14,backend=katago-gtp --timeout 300"),
             "the rerun lines lack the case or --timeout: %s", e12);
    char *t12 = hc_slurp(hc_path(dir, "e12.txt")), *l12 = t12 ? strstr(t12, "; rerun: ") : NULL;
    if (l12) {
        l12 += strlen("; rerun: ");
        l12[strcspn(l12, "\n")] = 0;
    }
    rc = l12 ? hc_shf("cd %s && FAKE_KATAGO_EXTRA='-temperature 1.7' PATH=%s/bin:$PATH %s --cache cache --out o12r "
                      "--quiet >/dev/null 2>e12r.txt", dir, dir, l12) : -9;
    res = hc_text(hc_path(dir, "o12r/results.json"));
    int n12 = 0;
    for (const char *p1 = strstr(res, "\"outcome\""); p1; p1 = strstr(p1 + 1, "\"outcome\""))
        n12++;
    hc_check("katago-cmd-8.3", rc == 1 && n12 == 1, "the rerun line %s exited %d (want 1) with %d results: %s",
             l12 ? l12 : "(none)", rc, n12, hc_text(hc_path(dir, "e12r.txt")));
    free(t12);
    rc = hc_shf("cd %s && %s run --help >h1.txt && %s katago --help >h2.txt", dir, hc, hc);
    hc_check("katago-cmd-8.4", rc == 0 && strstr(hc_text(hc_path(dir, "h1.txt")), "a case runs when it matches any") &&
                                   strstr(hc_text(hc_path(dir, "h2.txt")), "a case runs when it matches any") &&
                                   strstr(hc_text(hc_path(dir, "h2.txt")), "by content"),
             "run --help or katago --help does not say --only is repeatable or how --model DIR picks nets");
    return hc_test_exit();
}
