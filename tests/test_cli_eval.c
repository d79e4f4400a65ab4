/* halfcheck eval from the command line, as a user runs it: from positions and from golden
 * feature rows, in both output formats, checked against KataGo's golden outputs with
 * halfcheck compare; bad usage exits 2 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hc_test.h"
#include "harness/data/nnoutput.h"

/* The value after `label` on its line of text, or -1. */
static double after(const char *text, const char *label)
{
    const char *p = strstr(text, label);
    return p ? strtod(p + strlen(label), NULL) : -1.0;
}

/* eval --profile: where the time went, each step named, the work inside the evaluation summed
 * over its lanes and no more than they could do in the evaluation's wall time. */
static void profile_checks(const char *hc, const char *dir, const char *net, const char *pos)
{
    char cmd[4096], path[600];
    snprintf(path, sizeof path, "%s/profile.txt", dir);
    snprintf(cmd, sizeof cmd, "%s eval --net %s --positions %s --nn 10x14 --batch 7 --threads 2 --profile --out %s/prof.jsonl 2>%s",
             hc, net, pos, dir, path);
    int rc = hc_sh(cmd);
    static char text[8192];
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[len] = '\0';
    if (f)
        fclose(f);
    const char *labels[] = {"reading the positions", "loading the net", "opening the backend", "featurizing",
                            "the backend's calls (", "post-processing", "writing the outputs",
                            "finishing the outputs file", "end to end (from main)"};
    int all = 1;
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        if (!strstr(text, labels[i]))
            all = 0;
    hc_check("cli-eval-3.1", rc == 0 && all && strstr(text, "summed over its 2 threads"), "rc %d, profile:\n%s", rc, text);
    /* 140 positions, batch 7 over 2 lanes: 4 rows per call, 35 calls */
    double calls = after(text, "the backend's calls (");
    hc_check("cli-eval-3.2", calls == 35, "%g backend calls, want 35", calls);
    double wall = after(text, "evaluating (and writing as it goes)"), total = after(text, "end to end (from main)");
    double work = after(text, "featurizing") + after(text, "post-processing") + after(text, "backend's calls (35)");
    hc_check("cli-eval-3.3", wall > 0 && total >= wall && work > 0 && work <= 2 * wall + 0.05,
             "evaluation %g s of %g s end to end, %g thread-s of work in it on 2 lanes", wall, total, work);
    snprintf(cmd, sizeof cmd, "%s eval --net %s --positions %s --nn 10x14 --out %s/noprof.jsonl 2>&1 | grep -q 'featurizing'",
             hc, net, pos, dir);
    hc_check("cli-eval-3.4", hc_sh(cmd) != 0, "a profile printed without --profile");
}

int main(void)
{
    hc_plan(9 + 4);
    const char *hc = hc_halfcheck_bin();
    const char *dir = hc_tmpdir("test_cli_eval");
    char cmd[4096], net[512], pos[512], feat[512], gold[512];
    snprintf(cmd, sizeof cmd, "%s eval --net x 2>/dev/null", hc);
    hc_check("cli-eval-1.1", hc_sh(cmd) == 2, "missing options not exit 2");
    snprintf(cmd, sizeof cmd, "%s eval --net /nonexistent.bin.gz --positions p --nn 9x9 --out %s/o.jsonl 2>%s/err.txt",
             hc, dir, dir);
    int rc = hc_sh(cmd);
    snprintf(cmd, sizeof cmd, "grep -q /nonexistent.bin.gz %s/err.txt", dir);
    hc_check("cli-eval-1.2", rc == 2 && hc_sh(cmd) == 0, "bad net: rc %d or message lacks the path", rc);
    snprintf(cmd, sizeof cmd, "%s eval --net n --positions p --nn 9x9 --out o --format nope 2>/dev/null", hc);
    hc_check("cli-eval-1.3", hc_sh(cmd) == 2, "bad format accepted");

    if (!hc_shared("golden/outputs/g170_size10x14.jsonl.gz")) {
        hc_skip_rest("cli-eval-2", "../shared absent");
        return hc_test_exit();
    }
    snprintf(net, sizeof net, "%s", hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz"));
    snprintf(pos, sizeof pos, "%s", hc_shared("positions/size10x14.jsonl.gz"));
    snprintf(feat, sizeof feat, "%s", hc_shared("golden/features/size10x14_10x14.f32.gz"));
    snprintf(gold, sizeof gold, "%s", hc_shared("golden/outputs/g170_size10x14.jsonl.gz"));

    snprintf(cmd, sizeof cmd, "%s eval --net %s --positions %s --nn 10x14 --batch 7 --threads 2 --out %s/pos.jsonl.gz 2>/dev/null",
             hc, net, pos, dir);
    hc_check("cli-eval-2.1", hc_sh(cmd) == 0, "eval from positions failed");
    snprintf(cmd, sizeof cmd, "%s eval --net %s --features %s --positions %s --nn 10x14 --out %s/feat.jsonl --format katago 2>/dev/null",
             hc, net, feat, pos, dir);
    hc_check("cli-eval-2.2", hc_sh(cmd) == 0, "eval from features failed");
    /* Both agree with KataGo within fp32-strict, and with each other exactly (same rows). */
    snprintf(cmd, sizeof cmd, "%s compare %s %s/pos.jsonl.gz --tier fp32-strict >/dev/null 2>&1", hc, gold, dir);
    hc_check("cli-eval-2.3", hc_sh(cmd) == 0, "positions path vs golden failed fp32-strict");
    snprintf(cmd, sizeof cmd, "%s compare %s %s/feat.jsonl --tier fp32-strict >/dev/null 2>&1", hc, gold, dir);
    hc_check("cli-eval-2.4", hc_sh(cmd) == 0, "features path (katago format) vs golden failed fp32-strict");
    hc_nnoutput *a, *b;
    size_t na, nb;
    hc_err err = {0};
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/pos.jsonl.gz", dir);
    snprintf(pb, sizeof pb, "%s/feat.jsonl", dir);
    int same = hc_nnoutputs_load(pa, &a, &na, &err) == 0 && hc_nnoutputs_load(pb, &b, &nb, &err) == 0 && na == nb &&
               na == 140;
    for (size_t i = 0; same && i < na; i++)
        same = memcmp(a[i].policy_probs, b[i].policy_probs, sizeof(float) * 141) == 0 &&
               a[i].white_win_prob == b[i].white_win_prob && a[i].white_lead == b[i].white_lead;
    hc_check("cli-eval-2.5", same, "features and positions paths differ (%s)", err.msg);
    /* KataGo's reference-file format pads the policy to 362 entries and carries nnHash. */
    snprintf(cmd, sizeof cmd, "head -c 100000 %s/feat.jsonl | head -1 | grep -q '\"nnHash\"'", dir);
    hc_check("cli-eval-2.6", hc_sh(cmd) == 0, "nnHash missing in katago format");
    hc_nnoutputs_free(a, na);
    hc_nnoutputs_free(b, nb);
    profile_checks(hc, dir, net, pos);
    return hc_test_exit();
}
