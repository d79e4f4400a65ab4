/* The one copy of the helpers the test programs share (tests/lib/testlib.h). */
#include "testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *hc_slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    /* Read in chunks, not by size: a pipe or a file still being written has no reliable size. */
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap + 1);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *hc_slurp(const char *path)
{
    return hc_slurp_len(path, NULL);
}

const char *hc_text(const char *path)
{
    /* A ring, so that one check may read a few files (and a message still show the first). */
    static char *ring[8];
    static int k;
    k = (k + 1) % 8;
    free(ring[k]);
    ring[k] = hc_slurp(path);
    return ring[k] ? ring[k] : "";
}

int hc_sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int hc_shf(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    /* A truncated command could run something else than meant: refuse it. */
    if (n < 0 || (size_t)n >= sizeof cmd)
        return -1;
    return hc_sh(cmd);
}

void hc_abspath(const char *rel, char *buf, size_t len)
{
    if (rel[0] == '/') {
        snprintf(buf, len, "%s", rel);
        return;
    }
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    snprintf(buf, len, "%s/%s", cwd, rel);
}

const char *hc_halfcheck_bin(void)
{
    static char buf[4096];
    const char *h = getenv("HALFCHECK");
    if (!h || !*h)
        h = "build/halfcheck";
    hc_abspath(h, buf, sizeof buf);
    return buf;
}

const char *hc_test_halfcheck_bin(const char *argv0)
{
    static char buf[4096];
    char rel[4096];
    const char *slash = strrchr(argv0, '/');
    snprintf(rel, sizeof rel, "%.*s/helper_halfcheck", slash ? (int)(slash - argv0) : 1, slash ? argv0 : ".");
    hc_abspath(rel, buf, sizeof buf);
    return buf;
}

const char *hc_path(const char *dir, const char *name)
{
    static char buf[8][2048];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

int hc_file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Calls fn(pid, state) for every process of session sid; returns -1 without /proc. */
static int each_in_session(pid_t sid, void (*fn)(pid_t, char, int *), int *acc)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t p = (pid_t)atoi(e->d_name);
        if (p <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        /* The command name may hold spaces and parentheses: the fields start after the last ')'. */
        char *rp = strrchr(buf, ')');
        char state;
        int ppid, pgrp, sess;
        if (rp && sscanf(rp + 2, "%c %d %d %d", &state, &ppid, &pgrp, &sess) == 4 && sess == sid)
            fn(p, state, acc);
    }
    closedir(d);
    return 0;
}

static void count_live(pid_t p, char state, int *acc)
{
    (void)p;
    *acc += state != 'Z';
}

static void kill_live(pid_t p, char state, int *acc)
{
    if (state != 'Z') {
        kill(p, SIGKILL);
        (*acc)++;
    }
}

int hc_session_count(pid_t sid)
{
    int n = 0;
    return each_in_session(sid, count_live, &n) < 0 ? -1 : n;
}

void hc_session_kill(pid_t sid)
{
    kill(-sid, SIGKILL);
    for (int round = 0; round < 300; round++) {
        int left = 0;
        int have_proc = each_in_session(sid, kill_live, &left) == 0;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!have_proc || !left)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

double hc_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

pid_t hc_start_session(const char *cmd, int default_signals)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (default_signals) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGQUIT, SIG_DFL);
        }
        setsid();
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int hc_wait_for_text(const char *dir, const char *rel, const char *text, double limit)
{
    double t0 = hc_now_s();
    while (hc_now_s() - t0 < limit) {
        char *t = hc_slurp(hc_path(dir, rel));
        int ok = t && strstr(t, text);
        free(t);
        if (ok)
            return 1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return 0;
}

int hc_misbehave_now(const char *misbehave, const char *once)
{
    if (!misbehave)
        return 0;
    if (!once)
        return 1;
    int fd = open(once, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

int hc_env_int(const char *name, int dflt, int lo, int hi)
{
    const char *t = getenv(name);
    int n = t && *t ? atoi(t) : dflt;
    return n >= lo && n <= hi ? n : dflt;
}

int hc_eval_spec(const char *spec, const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                 int batch, int threads, hc_nnoutput **outs, double *secs, hc_err *err)
{
    hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = *s, .batch = batch, .threads = threads};
    *outs = calloc(n ? n : 1, sizeof **outs);
    if (!*outs)
        return hc_err_set(err, HC_ENOMEM, "outputs");
    double t0 = hc_now_s();
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = *outs};
    int rc = ev ? hc_evaluator_run(ev, &req, err) : -1;
    hc_evaluator_close(ev);
    if (secs)
        *secs = hc_now_s() - t0;
    return rc;
}

long hc_outputs_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, size_t n)
{
    char buf[256];
    for (size_t i = 0; i < n; i++)
        if (hc_nnoutput_first_diff(&a[i], &b[i], buf, sizeof buf))
            return (long)i;
    return -1;
}

static int same_bytes(const void *a, const void *b, size_t bytes)
{
    return (a == NULL && b == NULL) || (a && b && memcmp(a, b, bytes) == 0);
}

int hc_raw_heads_equal(const hc_raw_heads *a, const hc_raw_heads *b, int B)
{
    size_t hw = (size_t)a->nx * a->ny, pc = (size_t)a->policy_channels, sc = (size_t)a->score_channels;
    return same_bytes(a->policy, b->policy, B * pc * hw * sizeof(float)) &&
           same_bytes(a->policy_pass, b->policy_pass, B * pc * sizeof(float)) &&
           same_bytes(a->value, b->value, B * 3 * sizeof(float)) &&
           same_bytes(a->score, b->score, B * sc * sizeof(float)) &&
           same_bytes(a->ownership, b->ownership, B * hw * sizeof(float));
}

hc_results_doc *hc_results_in(const char *dir, const char *sub)
{
    char path[2048];
    hc_err err = {0};
    snprintf(path, sizeof path, "%s/%s/results.json", dir, sub);
    hc_results_doc *d = hc_results_read_json(path, &err);
    if (!d)
        printf("  (%s)\n", err.msg);
    return d;
}

static const hc_result *find_result(const hc_results *rs, const hc_result *x)
{
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *y = &rs->items[i];
        if (!strcmp(x->net, y->net) && !strcmp(x->board, y->board) && !strcmp(x->backend, y->backend) &&
            !strcmp(x->mode, y->mode))
            return y;
    }
    return NULL;
}

/* Every figure of a and b equal (bitwise), whatever the order of the results. */
int hc_same_figures(const hc_results *a, const hc_results *b, char *why, size_t len)
{
    if (a->n != b->n)
        return snprintf(why, len, "%zu results vs %zu", a->n, b->n), 0;
    for (size_t i = 0; i < a->n; i++) {
        const hc_result *x = &a->items[i], *y = find_result(b, x);
        if (!y)
            return snprintf(why, len, "%s %s %s %s missing", x->net, x->board, x->backend, x->mode), 0;
        if (x->outcome != y->outcome || !x->stats != !y->stats || x->n_tiers != y->n_tiers)
            return snprintf(why, len, "%s %s %s: outcome or shape differs", x->board, x->backend, x->mode), 0;
        if (x->stats) {
            if (x->stats->n_positions != y->stats->n_positions)
                return snprintf(why, len, "%s %s: positions differ", x->board, x->backend), 0;
            for (int m = 0; m < HC_M_COUNT; m++) {
                const hc_metric_stats *p = &x->stats->m[m], *q = &y->stats->m[m];
                if (p->n != q->n || memcmp(p->v, q->v, sizeof p->v) || p->max_pos != q->max_pos ||
                    p->max_cell != q->max_cell || p->nonfinite != q->nonfinite || memcmp(p->q, q->q, sizeof p->q))
                    return snprintf(why, len, "%s %s %s: %s differs", x->board, x->backend, x->mode,
                                    hc_metric_infos[m].name), 0;
            }
        }
        for (size_t t = 0; t < x->n_tiers; t++)
            if (strcmp(x->tiers[t].name, y->tiers[t].name) ||
                (x->checks && (x->checks[t].pass != y->checks[t].pass ||
                               memcmp(x->checks[t].ratio, y->checks[t].ratio, sizeof x->checks[t].ratio))))
                return snprintf(why, len, "%s %s: tier %s differs", x->board, x->backend, x->tiers[t].name), 0;
    }
    return 1;
}

void hc_test_out2x2(hc_nnoutput *o, const float pol[5])
{
    memset(o, 0, sizeof *o);
    o->nn_x_len = 2;
    o->nn_y_len = 2;
    o->policy_probs = calloc(5, sizeof(float));
    o->white_owner_map = calloc(4, sizeof(float));
    if (o->policy_probs)
        memcpy(o->policy_probs, pol, 5 * sizeof(float));
    o->white_win_prob = 0.5f;
    o->white_loss_prob = 0.5f;
}

void hc_test_outs_free(hc_nnoutput *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(o[i].policy_probs);
        free(o[i].white_owner_map);
    }
}
