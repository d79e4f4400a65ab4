/* The one copy of the helpers the test programs share (tests/lib/testlib.h). */
#include "testlib.h"
#include "cudalib.h"

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

#include "harness/data/selfplay.h"
#include "harness/model/synth.h"

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

const char *const hc_report_files[HC_N_REPORT_FILES] = {"junit.xml", "results.json", "report.md", "report.csv",
                                                         "report.html"};

int hc_reports_written(const char *dir)
{
    int all = 1;
    for (int i = 0; i < HC_N_REPORT_FILES; i++)
        all &= hc_file_exists(hc_path(dir, hc_report_files[i]));
    return all;
}

/* Whether line[0..n) holds s. */
static int line_has(const char *line, size_t n, const char *s)
{
    const char *p = strstr(line, s);
    return p && p < line + n;
}

char *hc_report_normalized(const char *path)
{
    char *t = hc_slurp(path);
    if (!t)
        return NULL;
    char *o = malloc(strlen(t) + 1), *w = o;
    if (!o) {
        free(t);
        return NULL;
    }
    for (char *line = t; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
        /* Provenance names the job directories and the commands, which differ between sweeps. */
        int drop = line_has(line, n, "\"timestamp\"") || line_has(line, n, "\"seconds\"") ||
                   line_has(line, n, "\"command\"") || line_has(line, n, "\"job\"") ||
                   line_has(line, n, "name=\"command\"") || line_has(line, n, "name=\"job") ||
                   line_has(line, n, "- job `") || line_has(line, n, "- command: `") ||
                   line_has(line, n, "<li>command:") || line_has(line, n, "<h3>job ");
        /* Of the other lines, drop time="..." and timestamp="..." attributes. */
        for (size_t i = 0; !drop && i < n; i++) {
            size_t k = !strncmp(line + i, " time=\"", 7) ? 7 : !strncmp(line + i, " timestamp=\"", 12) ? 12 : 0;
            if (k) {
                char *q = strchr(line + i + k, '"');
                if (q && q < line + n) {
                    i = (size_t)(q - line);
                    continue;
                }
            }
            *w++ = line[i];
        }
        line += n;
    }
    *w = 0;
    free(t);
    return o;
}

int hc_sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* fmt's command into cmd (len bytes): 0, or -1 when it does not fit (a truncated command could run
 * something else than meant: refused). */
static int command_of(char *cmd, size_t len, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static int command_of(char *cmd, size_t len, const char *fmt, va_list ap)
{
    int n = vsnprintf(cmd, len, fmt, ap);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int hc_shf(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    int rc = command_of(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return rc ? -1 : hc_sh(cmd);
}

long hc_shf_count(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    int rc = command_of(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (rc)
        return -1;
    FILE *p = popen(cmd, "r");
    long v = -1;
    if (p && fscanf(p, "%ld", &v) != 1)
        v = -1;
    if (p)
        pclose(p);
    return v;
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

const char *hc_shared(const char *rel)
{
    static char buf[8][4096];
    static int k;
    const char *root = getenv("HC_SHARED");
    if (!root || !*root)
        root = "../shared";
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    struct stat st;
    if (stat(buf[k], &st) != 0)
        return NULL;
    return buf[k];
}

int hc_shared_net_positions(const char *net_rel, const char *pos_rel, hc_net **net, hc_position **ps, size_t *n,
                            char *why, size_t len)
{
    const char *np = hc_shared(net_rel), *pp = hc_shared(pos_rel);
    *net = NULL, *ps = NULL, *n = 0;
    if (!np || !pp) {
        snprintf(why, len, "../shared/%s absent", np ? pos_rel : net_rel);
        return 1;
    }
    hc_err err = {0};
    if (!(*net = hc_net_load(np, &err)) || hc_positions_load(pp, ps, n, &err)) {
        snprintf(why, len, "%s", err.msg);
        hc_net_free(*net);
        *net = NULL;
        return -1;
    }
    hc_net_reduce_activations(*net);
    return 0;
}

int hc_gpu_shared_net(const char *rel, const char *spec, int nx, int ny, hc_net **net, char *why, size_t len)
{
    *net = NULL;
    const char *path = hc_shared(rel);
    if (!path) {
        snprintf(why, len, "../shared/%s absent", rel);
        return 1;
    }
    hc_err err = {0};
    hc_net *n = hc_net_load(path, &err);
    if (!n) {
        snprintf(why, len, "%s: %s", rel, err.msg);
        return -1;
    }
    hc_net_reduce_activations(n);
    hc_backend b = {0};
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = spec, .net = n, .nx = nx, .ny = ny, .max_batch = 1, .threads = 1},
                             &err)) {
        hc_net_free(n);
        if (strstr(err.msg, "no CUDA device") || strstr(err.msg, "unknown backend") || strstr(err.msg, "not built")) {
            snprintf(why, len, "%s", err.msg);
            return 1;
        }
        snprintf(why, len, "%s: %s: %s", rel, spec, err.msg);
        return -1;
    }
    hc_backend_close(&b);
    *net = n;
    return 0;
}

void hc_random_rows(const hc_net *net, int B, int nx, int ny, const hc_rows_spec *rs, float **sp, float **gl,
                    float **meta)
{
    size_t hw = (size_t)nx * ny, cin = (size_t)net->num_input_c, cg = (size_t)net->num_input_global_c;
    size_t cm = (size_t)net->num_input_meta_c;
    *sp = calloc((size_t)B * cin * hw, sizeof(float));
    *gl = calloc((size_t)B * (cg + 1), sizeof(float));
    *meta = cm ? calloc((size_t)B * cm, sizeof(float)) : NULL;
    unsigned seed = rs->seed;
    for (int b = 0; b < B && *sp; b++)
        for (size_t c = 0; c < cin; c++)
            for (size_t p = 0; p < hw; p++) {
                int on = b % 2 == 0 || ((int)(p % nx) < 13 && (int)(p / nx) < 13);
                seed = seed * 1103515245u + 12345u;
                float v = c == 0 ? 1.0f : (float)((seed >> 16) & 1);
                (*sp)[((size_t)b * cin + c) * hw + p] = on ? v : 0.0f;
            }
    for (size_t i = 0; *gl && i < (size_t)B * cg; i++) {
        seed = seed * 1103515245u + 12345u;
        (*gl)[i] = (float)((seed >> 16) % rs->gl_levels) * rs->gl_step - 0.5f;
    }
    for (size_t i = 0; *meta && i < (size_t)B * cm; i++) {
        seed = seed * 1103515245u + 12345u;
        (*meta)[i] = (float)((seed >> 16) % rs->meta_levels) * rs->meta_step;
    }
}

/* The rows evaluated by specs[0] and specs[1], and with plant (not NULL) by a third instance of
 * specs[1]'s cuda with those faults, into h[k] (new); ok[k] whether it evaluated; the first two
 * record their taps into ts[k]. */
static void eval_rows_each(const hc_net *net, int B, int nx, int ny, const float *sp, const float *gl, const float *meta,
                           const char *const specs[2], const hc_cuda_faults *plant, int threads, hc_tapset *const ts[2],
                           hc_raw_heads **h, int *ok)
{
    hc_err err = {0};
    char planted[400], ftext[300];
    snprintf(planted, sizeof planted, "%s with faults %s", specs[1],
             plant ? hc_test_cuda_faults_text(plant, ftext, sizeof ftext) : "none");
    for (int k = 0; k < (plant ? 3 : 2); k++) {
        hc_backend b = {0};
        const char *name = k < 2 ? specs[k] : planted;
        ok[k] = 0;
        h[k] = hc_raw_heads_new(B, nx, ny, net->num_policy_c, net->num_score_value_c, &err);
        if (!h[k] || !sp || !gl || !ts[0] || !ts[1] ||
            (k < 2 ? hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = specs[k], .net = net, .nx = nx, .ny = ny,
                                                                       .max_batch = B, .threads = k == 0 ? threads : 1},
                                          &err)
                   : hc_test_cuda_open(&b, specs[1] + strlen("cuda:"), plant, net, nx, ny, B, &err))) {
            printf("INFO %s %s: %s\n", net->name, name, err.msg);
            continue;
        }
        h[k]->taps = k < 2 ? ts[k] : NULL;
        ok[k] = hc_backend_eval(&b, B, sp, gl, meta, h[k], &err) == 0;
        if (!ok[k])
            printf("INFO %s %s: %s\n", net->name, name, err.msg);
        h[k]->taps = NULL;
        hc_backend_close(&b);
    }
}

/* The taps of a that g lacks or holds otherwise (each printed), how many; first gets the first's name. */
static int tapsets_diff(const char *label, const hc_tapset *a, const hc_tapset *g, int nx, char *first, size_t len)
{
    int n_bad = 0;
    first[0] = 0;
    for (int i = 0; i < hc_tapset_count(a); i++) {
        const hc_tapset_entry *x = hc_tapset_at(a, i), *y = hc_tapset_find(g, x->name);
        size_t n = (size_t)x->rows * x->channels * x->hw, nd = 0, at = 0;
        if (y && y->rows == x->rows && y->channels == x->channels && y->hw == x->hw && y->fmt == x->fmt) {
            for (size_t j = 0; j < n; j++)
                if (memcmp(&x->data[j], &y->data[j], sizeof(float)) != 0 && nd++ == 0)
                    at = j;
            if (nd == 0)
                continue;
            size_t per = (size_t)x->channels * x->hw;
            int row = (int)(at / per), c = (int)(at % per / x->hw), pt = (int)(at % x->hw);
            int on = x->hw == 1 || row % 2 == 0 || (pt % nx < 13 && pt / nx < 13);
            printf("INFO %s: tap %s: %zu of %zu floats differ, first row %d channel %d point %d (%s the board): "
                   "%.9g vs %.9g\n",
                   label, x->name, nd, n, row, c, pt, on ? "on" : "off", x->data[at], y->data[at]);
        } else {
            printf("INFO %s: tap %s: %s\n", label, x->name, y ? "shape or format differs" : "missing");
        }
        if (n_bad++ == 0)
            snprintf(first, len, "%s", x->name);
    }
    return n_bad;
}

void hc_compare_rows(const hc_net *net, const hc_rows_spec *rs, int B, int nx, int ny, const char *const specs[2],
                     const hc_cuda_faults *plant, int threads, const char *label, hc_rows_cmp *c)
{
    hc_err err = {0};
    float *sp, *gl, *meta;
    hc_random_rows(net, B, nx, ny, rs, &sp, &gl, &meta);
    hc_raw_heads *h[3] = {NULL, NULL, NULL};
    hc_tapset *ts[2] = {hc_tapset_new(B, &err), hc_tapset_new(B, &err)};
    memset(c, 0, sizeof *c);
    eval_rows_each(net, B, nx, ny, sp, gl, meta, specs, plant, threads, ts, h, c->ok);
    for (int k = 0; k < 3; k++)
        c->same[k] = c->ok[0] && c->ok[k] && hc_raw_heads_equal(h[0], h[k], B);
    if (c->ok[0] && c->ok[1]) {
        c->n_taps = hc_tapset_count(ts[0]);
        c->n_bad = tapsets_diff(label, ts[0], ts[1], nx, c->first, sizeof c->first);
        if (c->n_bad == 0)
            printf("INFO %s: %d taps equal\n", label, c->n_taps);
    }
    for (int k = 0; k < 3; k++)
        hc_raw_heads_free(h[k]);
    hc_tapset_free(ts[0]);
    hc_tapset_free(ts[1]);
    free(sp);
    free(gl);
    free(meta);
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

int hc_write_script(const char *path, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int bad = fputs("#!/bin/sh\n", f) < 0 || vfprintf(f, fmt, ap) < 0;
    va_end(ap);
    bad |= fclose(f) != 0;
    return bad || chmod(path, 0755) != 0 ? -1 : 0;
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

void hc_misbehave_args(const char *tag, const char *mode, char *args, size_t len, char *once, size_t cap)
{
    snprintf(once, cap, "/tmp/hc_%s_once_%d_%s", tag, (int)getpid(), mode);
    unlink(once);
    snprintf(args, len, "-misbehave %s -once %s", mode, once);
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

int hc_outputs_same(const hc_nnoutput *a, const hc_nnoutput *b)
{
    char buf[256];
    return hc_nnoutput_first_diff(a, b, buf, sizeof buf) == NULL;
}

long hc_outputs_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!hc_outputs_same(&a[i], &b[i]))
            return (long)i;
    return -1;
}

int hc_write_positions(const char *src, const char *dst, int n, int stride, hc_err *err)
{
    hc_posreader *r = hc_posreader_open(src, err);
    if (!r)
        return -1;
    hc_poswriter *w = hc_poswriter_open(dst, err);
    if (!w) {
        hc_posreader_close(r);
        return -1;
    }
    hc_position p;
    int rc = 0, k = 0, seen = 0;
    while (k < n && (rc = hc_posreader_next(r, &p, err)) == 1) {
        int wrc = 0;
        if (seen++ % stride == 0) {
            wrc = hc_poswriter_write(w, &p, err);
            k++;
        }
        hc_position_free(&p);
        if (wrc) {
            rc = -1;
            break;
        }
    }
    hc_posreader_close(r);
    if (rc < 0) {
        hc_poswriter_abort(w);
        return -1;
    }
    return hc_poswriter_commit(w, err);
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

hc_run *hc_test_run_suite(const hc_suite *suite, const char *cache, const char *tmp, hc_err *err)
{
    hc_run_options o = hc_run_options_default();
    o.cache_dir = cache;
    o.tmp_dir = tmp;
    o.threads = 2;
    o.timeout_s = 120;
    return hc_run_suite(suite, &o, err);
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

int hc_errors_vs_ref32(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s, const char *spec,
                       hc_stats *st, hc_err *err)
{
    hc_backend rb = {0}, tb = {0};
    hc_nnoutput *ref = calloc(n, sizeof *ref), *out = calloc(n, sizeof *out);
    hc_eval_failure fail;
    int rc = -1;
    hc_backend_open_opts o = {.spec = "ref32", .net = net, .nx = s->nn_x, .ny = s->nn_y, .max_batch = 4, .threads = 1};
    hc_backend_open_opts to = o;
    to.spec = spec;
    if (ref && out && hc_backend_open_with(&rb, &o, err) == 0 && hc_backend_open_with(&tb, &to, err) == 0 &&
        hc_eval_positions(&rb, net, ps, n, NULL, 4, s, ref, NULL, &fail, NULL, NULL, err) == 0 &&
        hc_eval_positions(&tb, net, ps, n, NULL, 4, s, out, NULL, &fail, NULL, NULL, err) == 0)
        rc = hc_stats_compute(ref, out, n, st, err);
    hc_backend_close(&rb);
    hc_backend_close(&tb);
    if (ref)
        hc_nnoutputs_free(ref, n);
    if (out)
        hc_nnoutputs_free(out, n);
    return rc;
}

hc_position hc_test_position9(hc_move *moves, int n)
{
    hc_position p;
    memset(&p, 0, sizeof p);
    p.x_size = p.y_size = 9;
    snprintf(p.rules, sizeof p.rules, "koSITUATIONALscoreAREAtaxNONEsui1komi7.5");
    p.komi = 7.5f;
    p.initial_pla = HC_BLACK;
    p.moves = moves;
    p.n_moves = n;
    p.next_pla = n % 2 ? HC_WHITE : HC_BLACK;
    return p;
}

char *hc_hostile_model_text(int k, size_t *len)
{
    size_t n = 0;
    char *t = malloc(4u << 20);
    if (!t)
        return NULL;
    n += (size_t)sprintf(t + n, "hostile\n8\n22\n19\ntrunk\n1\n8192\n8192\n8192\n0\n8192\nconv\n1\n1\n22\n8192\n1\n1\n");
    for (int i = 0; i < 22 * 8192; i++)
        n += (size_t)sprintf(t + n, "0 ");
    n += (size_t)sprintf(t + n, "\nmm\n19\n8192\n");
    for (int i = 0; i < 19 * 8192; i++)
        n += (size_t)sprintf(t + n, "0 ");
    n += (size_t)sprintf(t + n, "\nordinary_block\nb\nbn\n8192\n0.001\n0\n0\n");
    for (int i = 0; i < 2 * 8192; i++)
        n += (size_t)sprintf(t + n, "1 ");
    n += (size_t)sprintf(t + n, "\nact\nrc\n%d\n%d\n8192\n8192\n1\n1\n0 0 0\n", k, k);
    *len = n;
    return t;
}

int hc_write_small_net(const char *path, hc_err *err)
{
    hc_synth_spec spec;
    hc_synth_spec_default(&spec);
    spec.trunk_c = 16;
    snprintf(spec.blocks, sizeof spec.blocks, "res,gpool,res");
    return hc_synth_write(&spec, path, 1, err);
}

int hc_write_small_selfplay(const char *path, uint64_t seed, int max_moves, hc_err *err)
{
    hc_selfplay_opts so;
    hc_selfplay_opts_default(&so);
    so.games = 2;
    so.seed = seed;
    so.max_moves = max_moves;
    so.stride = 5;
    so.max_positions = 16;
    return hc_selfplay_write(&so, path, NULL, err);
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

uint64_t hc_rng_next(hc_rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return r->s;
}

double hc_rand01(hc_rng *r)
{
    return (double)(hc_rng_next(r) >> 11) / (double)(1ull << 53);
}

double hc_urand(hc_rng *r)
{
    return hc_rand01(r) * 2.0 - 1.0;
}

float *hc_rvec(hc_rng *r, size_t n, double scale)
{
    float *v = malloc(n * sizeof(float) + 1);
    for (size_t i = 0; v && i < n; i++)
        v[i] = (float)(hc_urand(r) * scale);
    return v;
}

float *hc_board_mask(int batch, int nx, int ny, float *mask_sum)
{
    float *m = calloc((size_t)batch * nx * ny, sizeof(float));
    for (int b = 0; m && b < batch; b++) {
        int bx = nx - (b % 3), by = ny - ((b + 1) % 3);
        if (bx < 1)
            bx = 1;
        if (by < 1)
            by = 1;
        float s = 0;
        for (int y = 0; y < by; y++)
            for (int x = 0; x < bx; x++) {
                m[(size_t)b * nx * ny + y * nx + x] = 1.0f;
                s += 1.0f;
            }
        mask_sum[b] = s;
    }
    return m;
}
