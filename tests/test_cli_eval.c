/* halfcheck eval from the command line, as a user runs it: from positions and from golden
 * feature rows, in both output formats, checked against KataGo's golden outputs with
 * halfcheck compare; bad usage exits 2 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hc_test.h"
#include "harness/data/nnoutput.h"

int main(void)
{
    hc_plan(9);
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
    return hc_test_exit();
}
