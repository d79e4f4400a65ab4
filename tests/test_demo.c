/* The README's first command works on its own: halfcheck demo needs nothing outside the
 * repository, passes, and leaves valid reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hc_test.h"

int main(void)
{
    const char *hc = getenv("HALFCHECK") ? getenv("HALFCHECK") : "build/halfcheck";
    const char *dir = hc_tmpdir("test_demo");
    char cmd[2048];
    /* No shared data may be needed: point HC_SHARED somewhere empty. */
    snprintf(cmd, sizeof cmd, "rm -rf %s/demo && HC_SHARED=/nonexistent %s demo --quiet --out %s/demo 2>%s/stderr.txt",
             dir, hc, dir, dir);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    hc_check("demo-1.1", rc == 0, "halfcheck demo exited %d (see %s/stderr.txt)", rc, dir);
    const char *files[9] = {"net.bin.gz", "selfplay9.jsonl.gz", "selfplay13.jsonl.gz", "demo.yaml",
                           "reports/junit.xml", "reports/results.json", "reports/report.md", "reports/report.csv",
                           "reports/report.html"};
    for (int i = 0; i < 9; i++) {
        char path[1024], name[32];
        snprintf(path, sizeof path, "%s/demo/%s", dir, files[i]);
        snprintf(name, sizeof name, "demo-2.%d", i + 1);
        FILE *f = fopen(path, "rb");
        hc_check(name, f != NULL, "%s missing", path);
        if (f)
            fclose(f);
    }
    /* Both backends were checked in both modes, and the fp16 emulation really differs. */
    snprintf(cmd, sizeof cmd, "grep -c '<testcase' %s/demo/reports/junit.xml", dir);
    FILE *p = popen(cmd, "r");
    int cases = 0;
    if (p) {
        if (fscanf(p, "%d", &cases) != 1)
            cases = 0;
        pclose(p);
    }
    hc_check("demo-3.1", cases == 16, "%d testcases (want 2 boards x 2 backends x 2 modes x 2 tiers)", cases);
    snprintf(cmd, sizeof cmd, "grep -q '<error' %s/demo/reports/junit.xml", dir);
    hc_check("demo-3.2", system(cmd) != 0, "the demo's JUnit holds errors");
    return hc_test_exit();
}
