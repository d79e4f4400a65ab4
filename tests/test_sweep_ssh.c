/* ci/sweep across hosts that share no filesystem: two sshd instances on loopback, each in mount,
 * PID and UTS namespaces of its own where the repository, /work, /tmp, /run and root's home
 * directory are empty tmpfs (so nothing of this machine's files is visible to the jobs but
 * what the sweep sends), key-only logins with keys made here. A sweep over them (with a third
 * host that is down) merges to the same figures and report rows as a local sweep, names the
 * host of every job and leaves nothing on the hosts; a host killed mid-job loses nothing (its
 * jobs run again on the other); a suite naming a file that cannot be sent is refused before any
 * job starts; a sweep (with --net DIR) killed once a job has come back is finished by --resume,
 * the same. Linux, as root, with sshd, ssh, unshare, rsync and GNU parallel; skipped otherwise. */
#define _GNU_SOURCE /* prctl, kill of a process group */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "hc_test.h"
#include "reports/results.h"

#define N_CHECKS (1 + 6 + 6 + 1 + 3)

#if !defined(__linux__)
int main(void)
{
    hc_plan(N_CHECKS);
    hc_skip_rest("ssh-0", "mount namespaces (unshare) are Linux's; the loopback hosts need them");
    return hc_test_exit();
}
#else

static char hc[1024], root[1024], dir[1200];
static pid_t hosts[2]; /* the unshare processes of hosts a and b */
static int port[3];

/* Kills a host: its namespace's first process (every process of a PID namespace dies with it),
 * then reaps its unshare. */
static void host_kill(int i)
{
    if (hosts[i] <= 0)
        return;
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)hosts[i], (int)hosts[i]);
    FILE *f = fopen(path, "r");
    int child;
    while (f && fscanf(f, "%d", &child) == 1)
        kill(child, SIGKILL);
    if (f)
        fclose(f);
    for (int t = 0; t < 300 && waitpid(hosts[i], NULL, WNOHANG) == 0; t++)
        usleep(10000);
    if (kill(hosts[i], 0) == 0) {
        kill(hosts[i], SIGKILL);
        waitpid(hosts[i], NULL, 0);
    }
    hosts[i] = 0;
}

static void hosts_kill(void)
{
    host_kill(0);
    host_kill(1);
}

static void on_signal(int sig)
{
    hosts_kill();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Starts host a or b: sshd on 127.0.0.1:port[i] in its namespaces, with an empty home for
 * root (passwd's, where ssh logins start); it dies with this program (PR_SET_PDEATHSIG on
 * unshare, --kill-child on its child). 0 when it answers within 10 s. */
static int host_start(int i)
{
    char cmd[4096];
    /* The files sshd needs go to /run/hchost first (/run is the namespace's own), before the
     * paths that may hold them are hidden. */
    snprintf(cmd, sizeof cmd,
             "set -e; hostname hc-host-%c; mount -t tmpfs hc-run /run; mkdir -p /run/sshd /run/hchost; "
             "cp %s/ssh/host_%c /run/hchost/host_key; cp %s/ssh/authorized_keys /run/hchost/; "
             "sed 's|@DIR@|/run/hchost|' %s/ssh/sshd_config > /run/hchost/sshd_config; "
             "for d in %s /work /tmp ~root; do if [ -d \"$d\" ]; then mount -t tmpfs hc-hide \"$d\"; fi; done; "
             "exec /usr/sbin/sshd -D -e -f /run/hchost/sshd_config -p %d 2>/run/hchost/log",
             'a' + i, dir, 'a' + i, dir, dir, root, port[i]);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char log[1300];
        snprintf(log, sizeof log, "%s/ssh/unshare_%c.log", dir, 'a' + i);
        if (!freopen(log, "w", stderr))
            _exit(127);
        execlp("unshare", "unshare", "-m", "-p", "-u", "-f", "--kill-child", "--mount-proc", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    hosts[i] = pid;
    for (int t = 0; t < 100; t++) {
        if (hc_shf("ssh -F %s/ssh/config hc-%c true 2>/dev/null", dir, 'a' + i) == 0)
            return 0;
        usleep(100000);
    }
    return -1;
}

static hc_results_doc *readr(const char *sub)
{
    return hc_results_in(dir, sub);
}

/* report.md up to its provenance (the rows; provenance names hosts, paths and commands), with
 * every `strip` (NULL: none) removed from b's. */
static int same_rows(const char *a, const char *b, const char *strip)
{
    char pa[2048], pb[2048];
    snprintf(pa, sizeof pa, "%s/%s/merged/report.md", dir, a);
    snprintf(pb, sizeof pb, "%s/%s/merged/report.md", dir, b);
    char *x = hc_slurp(pa), *y = hc_slurp(pb);
    int ok = 0;
    if (x && y) {
        char *cx = strstr(x, "### Provenance"), *cy = strstr(y, "### Provenance");
        if (cx && cy) {
            *cx = *cy = 0;
            for (char *p; strip && (p = strstr(y, strip));)
                memmove(p, p + strlen(strip), strlen(p + strlen(strip)) + 1);
            ok = strlen(x) > 200 && !strcmp(x, y);
        }
    }
    free(x);
    free(y);
    return ok;
}

/* Jobs 1..n of sweep sw: how many have a `host` file naming host a, b or another; and whether
 * job k's names host b. */
static void job_hosts(const char *sw, int n, int count[3], int k, int *k_on_b)
{
    count[0] = count[1] = count[2] = 0;
    *k_on_b = 0;
    for (int i = 1; i <= n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/jobs/job-%04d/host", dir, sw, i);
        char *t = hc_slurp(path);
        int h = t && !strncmp(t, "hc-host-a\ncpu\n", 14) ? 0 : t && !strncmp(t, "hc-host-b\ncpu\n", 14) ? 1 : 2;
        count[h]++;
        if (i == k && h == 1)
            *k_on_b = 1;
        free(t);
    }
}

static size_t count_of(const char *text, const char *s)
{
    size_t n = 0;
    for (const char *p = text ? strstr(text, s) : NULL; p; p = strstr(p + 1, s))
        n++;
    return n;
}

int main(void)
{
    hc_plan(N_CHECKS);
    if (geteuid() != 0)
        return hc_skip_rest("ssh-0", "not root: the loopback hosts need mount namespaces"), hc_test_exit();
    const char *need[] = {"/usr/sbin/sshd", "ssh", "ssh-keygen", "unshare", "rsync", "parallel", "perl"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (hc_shf("command -v %s >/dev/null 2>&1", need[i]) != 0)
            return hc_skip_rest("ssh-0", "%s is not installed (openssh-server, openssh-client, util-linux, rsync, parallel)",
                                need[i]),
                   hc_test_exit();
    if (hc_sh("unshare -m -p -f --mount-proc sh -c 'mount -t tmpfs x /mnt' 2>/dev/null") != 0)
        return hc_skip_rest("ssh-0", "unshare -m -p cannot make a mount and PID namespace here"), hc_test_exit();
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_sweep_ssh"));
    atexit(hosts_kill);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int base = 21000 + (int)(getpid() % 1500) * 3;
    for (int i = 0; i < 3; i++)
        port[i] = base + i;

    /* Keys, configs and the data: a synthetic net named by an absolute path (rewritten in the
     * bundle), a board included from a file of its own, positions beside it. */
    int rc = hc_shf(
        "cd %s && rm -rf ssh sw-* loc* bad* *.txt && mkdir ssh && "
        "ssh-keygen -q -t ed25519 -N '' -f ssh/client_key && cp ssh/client_key.pub ssh/authorized_keys && "
        "ssh-keygen -q -t ed25519 -N '' -f ssh/host_a && ssh-keygen -q -t ed25519 -N '' -f ssh/host_b && "
        "printf '%%s\\n' 'ListenAddress 127.0.0.1' 'HostKey @DIR@/host_key' "
        "'AuthorizedKeysFile @DIR@/authorized_keys' 'PasswordAuthentication no' "
        "'KbdInteractiveAuthentication no' 'PubkeyAuthentication yes' 'PermitRootLogin prohibit-password' "
        "'StrictModes no' 'UsePAM no' 'PidFile @DIR@/sshd.pid' 'LogLevel ERROR' > ssh/sshd_config && "
        "printf '%%s\\n' 'Host hc-a' '  HostName 127.0.0.1' '  Port %d' 'Host hc-b' '  HostName 127.0.0.1' '  Port %d' "
        "'Host hc-c' '  HostName 127.0.0.1' '  Port %d' 'Host *' '  User root' '  IdentityFile %s/ssh/client_key' "
        "'  IdentitiesOnly yes' '  StrictHostKeyChecking no' '  UserKnownHostsFile /dev/null' '  LogLevel ERROR' "
        "'  ConnectTimeout 5' '  ServerAliveInterval 2' '  ServerAliveCountMax 3' '  BatchMode yes' > ssh/config && "
        "%s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
        "%s selfplay --size 9 --games 6 --seed 5 --moves 80 --stride 1 --out p9.jsonl.gz 2>/dev/null && "
        "%s selfplay --size 7 --games 6 --seed 6 --moves 60 --stride 1 --out p7.jsonl.gz 2>/dev/null && "
        "mkdir -p boards && printf '%%s\\n' 'name: b7' 'positions: ../p7.jsonl.gz' 'nnBuffer: 9x9' 'maxBatchSize: 4' > boards/b7.yaml && "
        "printf '%%s\\n' 'name: sweep-ssh' 'nets: [{name: synth, model: \"%s/net.bin.gz\"}]' 'boards:' "
        "'  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' '  - boards/b7.yaml' 'backends:' "
        "'  - {name: ref32, backend: ref32, tiers: [fp32]}' '  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
        "'  - {name: strict, backend: \"emulate:fp16\", tiers: [fp32-strict]}' > suite.yaml && "
        "sed 's|p9.jsonl.gz|missing.jsonl.gz|' suite.yaml > bad.yaml && mkdir -p nets && cp net.bin.gz nets/",
        dir, port[0], port[1], port[2], dir, hc, hc, hc, dir);
    if (!hc_check("ssh-0.1", rc == 0, "could not make the keys and the test data in %s", dir))
        return hc_fail_rest("ssh-1", "not run: no test data"), hc_test_exit();
    if (host_start(0) || host_start(1)) {
        hc_fail_rest("ssh-1", "the loopback sshd on port %d or %d does not answer (its log: /run/hchost/log in its namespace)",
                     port[0], port[1]);
        return hc_test_exit();
    }
    char sweep[3000];
    snprintf(sweep, sizeof sweep, "cd %s && timeout 300 %s/ci/sweep suite.yaml --halfcheck %s --ssh 'ssh -F %s/ssh/config'", dir,
             root, hc, dir);

    /* 1. Local, then over the two hosts with a third that is down: the strict backend's tier
     * fails (exit 1), a result: not run again. */
    rc = hc_shf("cd %s && timeout 300 %s/ci/sweep suite.yaml -j 2 --out loc --halfcheck %s >loc.txt 2>&1", dir, root, hc);
    int rc2 = hc_shf("%s -j 2 --sshlogin 1/hc-a,1/hc-b,1/hc-c --out sw-1 >sw-1.txt 2>&1", sweep);
    hc_check("ssh-1.1", rc == 1 && rc2 == 1, "the local sweep exited %d, the one over loopback hosts %d (want 1 and 1: a tier "
             "fails; see %s/sw-1.txt)", rc, rc2, dir);
    hc_results_doc *a = readr("loc/merged"), *b = readr("sw-1/merged");
    char why[512] = "unreadable";
    hc_check("ssh-1.2", a && b && hc_results_doc_results(a)->n == 12 &&
                            hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why),
             "the sweep over hosts and the local one differ: %s", why);
    hc_results_doc_free(b);
    hc_check("ssh-1.3", same_rows("loc", "sw-1", NULL), "report.md's rows differ between the local sweep and the one over hosts");
    int count[3], on_b;
    job_hosts("sw-1", 6, count, 0, &on_b);
    char mpath[2048];
    snprintf(mpath, sizeof mpath, "%s/sw-1/merged/report.md", dir);
    char *md = hc_slurp(mpath);
    snprintf(mpath, sizeof mpath, "%s/sw-1/merged/results.json", dir);
    char *js = hc_slurp(mpath);
    snprintf(mpath, sizeof mpath, "%s/sw-1/merged/report.html", dir);
    char *html = hc_slurp(mpath);
    snprintf(mpath, sizeof mpath, "%s/sw-1/merged/junit.xml", dir);
    char *xml = hc_slurp(mpath);
    size_t n_md = count_of(md, "- host `hc-host-"), n_js = count_of(js, "\"host\": \"hc-host-"),
           n_html = count_of(html, "<li>host <code>hc-host-"), n_xml = count_of(xml, ".host\" value=\"hc-host-");
    /* JUnit: one testsuite per net, each with every job's properties. */
    hc_check("ssh-1.4", count[0] > 0 && count[1] > 0 && count[2] == 0 && n_md == 6 && n_js == 6 &&
                            count_of(js, "\"device\": \"cpu\"") == 6 && n_html == 6 && n_xml >= 6 && n_xml % 6 == 0,
             "jobs on a/b/other: %d/%d/%d; the merged report.md names %zu hosts, results.json %zu, report.html %zu, "
             "junit.xml %zu (want 6 each, a multiple of 6 for JUnit)", count[0], count[1], count[2], n_md, n_js, n_html, n_xml);
    free(md);
    free(js);
    free(html);
    free(xml);
    /* Each job ran once (the failing tier's too), and exited 0 on its host. */
    snprintf(mpath, sizeof mpath, "%s/sw-1/joblog", dir);
    char *jl = hc_slurp(mpath);
    hc_check("ssh-1.5", jl && count_of(jl, "\n") == 7 && count_of(jl, "\t0\t0\tbash sweep --rjob") == 6,
             "the joblog does not hold six jobs that each ran once and exited 0:\n%s", jl ? jl : "");
    free(jl);
    rc = hc_shf("cd %s && ls -A sw-1/xfer | grep -v '^files$' && exit 1; "
                "for h in a b; do test \"$(ssh -F ssh/config hc-$h 'echo $(ls -A ~)end')\" = end || exit 1; done",
                dir);
    hc_check("ssh-1.6", rc == 0, "the sweep left files on a host or in sw-1/xfer");

    /* 2. Host a killed (sshd, its jobs, everything in its namespaces) while one of its jobs
     * runs: that job and the ones after run on b; the results are the same. */
    snprintf(mpath, sizeof mpath, "%s -j 2 --sshlogin 1/hc-a,1/hc-b --out sw-2 >sw-2.txt 2>&1", sweep);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        execl("/bin/sh", "sh", "-c", mpath, (char *)NULL);
        _exit(127);
    }
    int killed = 0;
    char running[256] = "";
    /* host a is watched from one ssh session at a time, polling every 50 ms there: a new
     * connection for each look (0.1-0.3 s on a loaded machine) could miss every short job */
    for (time_t end = time(NULL) + 60; !killed && time(NULL) < end;) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd,
                 "ssh -F %s/ssh/config hc-a 'for i in $(seq 60); do r=$(pgrep -a -x halfcheck | grep -o \"net=[^ ]*\" | "
                 "head -n 1); if [ -n \"$r\" ]; then echo \"$r\"; exit 0; fi; sleep 0.05; done' 2>/dev/null > %s/running.txt",
                 dir, dir);
        if (hc_sh(cmd) == 0) {
            snprintf(cmd, sizeof cmd, "%s/running.txt", dir);
            char *r = hc_slurp(cmd);
            if (r && *r) {
                snprintf(running, sizeof running, "%.*s", (int)strcspn(r, "\n"), r);
                host_kill(0);
                killed = 1;
            }
            free(r);
        } else
            usleep(100000); /* ssh itself failed: again shortly */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    hc_check("ssh-2.1", killed, "no job was seen running on host a within 60 s");
    hc_check("ssh-2.2", rc == 1, "the sweep that lost host a exited %d, want 1 (see %s/sw-2.txt)", rc, dir);
    b = readr("sw-2/merged");
    hc_check("ssh-2.3", a && b && hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why),
             "the sweep that lost a host and the local one differ: %s", why);
    hc_results_doc_free(b);
    hc_check("ssh-2.4", same_rows("loc", "sw-2", NULL), "report.md's rows differ after a host was lost");
    /* The job that ran on a when it died: its number, from the case list. */
    int k = 0;
    {
        char path[2048];
        snprintf(path, sizeof path, "%s/sw-2/cases", dir);
        char *cases = hc_slurp(path);
        int line = 1;
        for (char *p = cases; p && *p && !k; line++) {
            size_t n = strcspn(p, "\n");
            if (*running && n == strlen(running) && !strncmp(p, running, n))
                k = line;
            p += n + (p[n] == '\n');
        }
        free(cases);
    }
    job_hosts("sw-2", 6, count, k, &on_b);
    hc_check("ssh-2.5", k > 0 && on_b && count[0] + count[1] == 6,
             "the job running on host a when it died (%s, job %d) did not finish on host b (jobs on a/b: %d/%d)", running, k,
             count[0], count[1]);
    rc = hc_shf("test \"$(ssh -F %s/ssh/config hc-b 'echo $(ls -A ~)end')\" = end", dir);
    hc_check("ssh-2.6", rc == 0, "the sweep left files on host b");

    /* 3. A file that cannot be sent: refused by name before any job starts. */
    rc = hc_shf("cd %s && timeout 60 %s/ci/sweep bad.yaml --halfcheck %s --ssh 'ssh -F %s/ssh/config' --sshlogin hc-b "
                "--out sw-3 >sw-3.txt 2>&1; test $? = 2 && grep -q 'missing.jsonl.gz cannot be sent' sw-3.txt && "
                "! ls sw-3/jobs/job-* >/dev/null 2>&1 && test \"$(ssh -F ssh/config hc-b 'echo $(ls -A ~)end')\" = end",
                dir, root, hc, dir);
    hc_check("ssh-3.1", rc == 0, "a suite naming a missing positions file was not refused before the start (see %s/sw-3.txt)",
             dir);

    /* 4. The sweep killed outright (its whole session) once a job's results have come back,
     * then resumed: the same results, and the killed run's work directories removed. */
    rc = host_start(0);
    snprintf(mpath, sizeof mpath, "%s -j 2 --sshlogin 1/hc-a,1/hc-b --out sw-4 -- --net %s/nets/ >sw-4.txt 2>&1", sweep, dir);
    pid = rc ? -1 : fork();
    if (pid == 0) {
        setsid();
        execl("/bin/sh", "sh", "-c", mpath, (char *)NULL);
        _exit(127);
    }
    int back = 0;
    for (int t = 0; pid > 0 && t < 1200 && !back; t++) {
        back = hc_shf("ls %s/sw-4/xfer/job-*.tar >/dev/null 2>&1", dir) == 0;
        if (!back)
            usleep(100000);
    }
    if (pid > 0) {
        hc_session_kill(pid);
        waitpid(pid, NULL, 0);
    }
    hc_check("ssh-4.1", back && hc_shf("test ! -e %s/sw-4/merged", dir) == 0,
             "no job came back within 120 s (host a restarted: %s), or the killed sweep merged", rc ? "no" : "yes");
    rc = hc_shf("%s -j 2 --sshlogin 1/hc-a,1/hc-b --out sw-4 --resume -- --net %s/nets/ >sw-4b.txt 2>&1", sweep, dir);
    b = readr("sw-4/merged");
    /* --net's directory was sent, and the reports name this machine's copy of the net (and
     * their rerun commands, --net DIR). */
    char strip[1300];
    snprintf(strip, sizeof strip, " --net %s/nets", dir);
    int named = hc_shf("grep -q '\"file\": \"%s/nets/net.bin.gz\"' %s/sw-4/merged/results.json", dir, dir) == 0;
    hc_check("ssh-4.2", rc == 1 && a && b && hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why) &&
                            same_rows("loc", "sw-4", strip) && named,
             "the resumed sweep (-- --net DIR) exited %d (want 1; see %s/sw-4b.txt), names its net file %s, or differs from "
             "the local one: %s", rc, dir, named ? "as here" : "otherwise", why);
    hc_results_doc_free(b);
    hc_results_doc_free(a);
    rc = hc_shf("cd %s && for h in a b; do test \"$(ssh -F ssh/config hc-$h 'echo $(ls -A ~)end')\" = end || exit 1; done", dir);
    hc_check("ssh-4.3", rc == 0, "the killed sweep's work directories were left on the hosts after the resume");
    hosts_kill();
    if (!hc_test_failed_count)
        hc_shf("rm -rf %s", dir); /* kept when a check failed, to look into */
    return hc_test_exit();
}
#endif
