/* One backend case in a child process of its own: the fork, the pipes and scratch files the
 * child streams its records, progress and side facts through, and the verdict on how it ended
 * (crash, hang, error, missing outputs). */
#include "harness/run/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "backends/backend.h"
#include "harness/base/stream.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Sent through the progress pipe once the backend is open (done counts are far smaller). */
#define HC_CHILD_OPENED UINT64_MAX

/* The child's side of a backend case: evaluate, stream finished records to records_fd and the
 * done count to progress_fd, and on failure leave the message in err_path. Never returns. */
typedef struct child_ctx {
    int records_fd, progress_fd;
    const char *records_path;
    int side_fd;              /* the case's side file: resolution and skipped positions */
    const size_t *order;
    const hc_nnoutput *outs;
    unsigned char *skipped;   /* positions the backend refused, never sent as records */
    size_t sent;
    int write_errno; /* a failed write of the records file (full disk, file-size limit) */
} child_ctx;

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int child_progress(void *user, size_t done, size_t total)
{
    (void)total;
    child_ctx *cc = user;
    for (; cc->sent < done; cc->sent++) {
        size_t i = cc->order ? cc->order[cc->sent] : cc->sent;
        if (cc->skipped[i])
            continue;
        size_t len;
        void *rec = hc_nnoutput_encode(&cc->outs[i], (long)i, &len, NULL);
        if (!rec || write_all(cc->records_fd, rec, len)) {
            cc->write_errno = rec ? errno : ENOMEM;
            free(rec);
            return 1;
        }
        free(rec);
    }
    uint64_t d = done;
    return write_all(cc->progress_fd, &d, sizeof d) ? 1 : 0;
}

/* The side file, a line per fact: "res W S P O" (the backend's declared resolution) and
 * "skip I REASON" per position the backend could not express (hc_eval_request.skip). */
static int child_skip(void *user, size_t i, const char *reason)
{
    child_ctx *cc = user;
    cc->skipped[i] = 1;
    char line[1200];
    int len = snprintf(line, sizeof line, "skip %zu %s", i, reason);
    if (len < 0)
        return 1;
    if ((size_t)len >= sizeof line - 1)
        len = (int)sizeof line - 2;
    for (int k = 0; k < len; k++)
        if (line[k] == '\n' || line[k] == '\r')
            line[k] = ' ';
    line[len++] = '\n';
    return write_all(cc->side_fd, line, (size_t)len) ? 1 : 0;
}

static void child_fail(const char *err_path, const hc_err *err, const hc_eval_failure *fail)
{
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        char buf[1200];
        int len = snprintf(buf, sizeof buf, "%ld\n%s", fail ? fail->position : -1L, err->msg);
        write_all(fd, buf, (size_t)(len > 0 ? len : 0));
        close(fd);
    }
    _exit(10);
}

/* The child's lifeline: the read end of a pipe whose write end only the parent holds (the child
 * closes its copy at once; close-on-exec keeps both ends out of every program either one starts).
 * However the parent dies, SIGKILL included, the system closes the write end and the read
 * returns: the child kills its own process group, itself and the engines its backend started.
 * Portable (macOS has no PR_SET_PDEATHSIG), and what Linux's parent-death signal does too. */
static void *lifeline_watch(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR)
        ;
    kill(-getpid(), SIGKILL); /* the group this child leads, never the parent's */
    _exit(13);
}

#ifdef __linux__
/* Linux's parent-death signal, caught: the whole group goes, not the child alone (a hung engine
 * of its backend would stay behind). kill() is async-signal-safe. */
static void parent_died(int sig)
{
    (void)sig;
    kill(-getpid(), SIGKILL);
    _exit(13);
}
#endif

/* In the child, once it leads its own process group. */
static void child_follow_parent(int lifeline, int pdeathsig)
{
    pthread_t t;
    pthread_attr_t a;
    /* No watcher, no case: the parent reports "exited with status 12 while opening the backend". */
    if (pthread_attr_init(&a) != 0)
        _exit(12);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    if (pthread_create(&t, &a, lifeline_watch, (void *)(intptr_t)lifeline) != 0)
        _exit(12);
    pthread_attr_destroy(&a);
#ifdef __linux__
    if (pdeathsig) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = parent_died;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGHUP, &sa, NULL);
        prctl(PR_SET_PDEATHSIG, SIGHUP);
        if (getppid() == 1)
            _exit(12);
    }
#else
    (void)pdeathsig;
#endif
}

static void child_main(const char *spec, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                       int batch, const hc_isolate_case *c, int records_fd, int progress_fd,
                       const char *records_path, int side_fd, const char *err_path)
{
    hc_err err = {0};
    hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = *c->settings, .batch = batch, .threads = c->threads,
                            .registry = c->registry};
    hc_evaluator *ev = hc_evaluator_open(&eo, &err);
    if (!ev)
        child_fail(err_path, &err, NULL);
    const hc_resolution *res = hc_evaluator_resolution(ev);
    if (res) {
        char line[200];
        int len = snprintf(line, sizeof line, "res %.17g %.17g %.17g %.17g\n", res->winrate, res->score, res->policy,
                           res->ownership);
        if (write_all(side_fd, line, (size_t)len))
            _exit(11);
    }
    uint64_t opened = HC_CHILD_OPENED;
    if (write_all(progress_fd, &opened, sizeof opened))
        _exit(11);
    hc_nnoutput *outs = calloc(n ? n : 1, sizeof *outs);
    unsigned char *skipped = calloc(n ? n : 1, 1);
    if (!outs || !skipped) {
        hc_err_set(&err, HC_ENOMEM, "out of memory for outputs");
        child_fail(err_path, &err, NULL);
    }
    child_ctx cc = {.records_fd = records_fd, .progress_fd = progress_fd, .records_path = records_path,
                    .side_fd = side_fd, .order = order, .outs = outs, .skipped = skipped};
    hc_eval_failure fail = {.position = -1};
    /* Only a position backend refuses single positions; a tensor backend never calls child_skip. */
    hc_eval_request req = {.ps = ps, .n = n, .order = order, .outs = outs, .fail = &fail, .progress = child_progress,
                           .skip = child_skip, .user = &cc};
    int rc = hc_evaluator_run(ev, &req, &err);
    if (rc) {
        if (cc.write_errno) {
            /* Not the backend's fault: say which file could not be written, and why. */
            hc_err_set(&err, HC_EIO, "%s: cannot write the backend's outputs: %s", records_path,
                       strerror(cc.write_errno));
            child_fail(err_path, &err, NULL);
        }
        child_fail(err_path, &err, &fail);
    }
    /* The engine's identity, known once it has started (a GTP engine starts at its first position). */
    const char *id = hc_evaluator_identity(ev);
    if (id) {
        char line[1100];
        int len = snprintf(line, sizeof line, "engine %.1000s\n", id);
        for (char *q = line + 7; q < line + len - 1; q++)
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        if (write_all(side_fd, line, (size_t)len))
            _exit(11);
    }
    /* An external engine's cost, once it has exited: "cost POS SECS RSS PROCS ROWS BATCHES AVG
     * BATCHING VERSION ENGINE_BATCHES MAXBATCH" (VERSION "-" when unknown). */
    hc_engine_stats es;
    if (hc_evaluator_finish(ev, &es, &err))
        child_fail(err_path, &err, NULL);
    if (es.engines > 0 || es.positions >= 0) {
        char line[400];
        int len = snprintf(line, sizeof line, "cost %ld %.17g %.17g %d %ld %ld %.17g %d %s %d %ld\n", es.positions,
                           es.eval_seconds, es.peak_rss_kib, es.engines, es.nn_rows, es.nn_batches, es.avg_batch,
                           es.batching, es.version[0] && !strpbrk(es.version, " \t\n") ? es.version : "-",
                           es.engine_batches, es.max_batch);
        if (len < 0 || (size_t)len >= sizeof line || write_all(side_fd, line, (size_t)len))
            _exit(11);
    }
    _exit(0);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    }
    return "signal";
}

static void describe_position(const hc_position *ps, size_t i, char *buf, size_t len)
{
    const hc_position *p = &ps[i];
    snprintf(buf, len, "position %zu (index %ld, SGF line %ld, move %d)", i, p->index, p->sgf_line,
             p->initial_turn_number + p->n_moves);
}


/* The skipped positions, for the report: the count, then the first few with their reasons, then
 * the first indices. */
static char *describe_skips(const hc_position *ps, size_t n, const hc_isolate_side *cs, char **reasons)
{
    size_t cap = 4096, o = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    o += (size_t)snprintf(t + o, cap - o, "%zu of %zu positions skipped (the backend cannot express them)",
                          cs->n_skipped, n);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 3; i++) {
        if (!cs->skipped[i])
            continue;
        o += (size_t)snprintf(t + o, cap - o, "%s position %zu (index %ld): %.300s", shown ? ";" : ":", i, ps[i].index,
                              reasons[i] ? reasons[i] : "no reason given");
        shown++;
    }
    if (cs->n_skipped > shown) {
        o += (size_t)snprintf(t + o, cap - o, "; skipped positions:");
        size_t listed = 0;
        for (size_t i = 0; i < n && listed < 20 && o < cap - 32; i++)
            if (cs->skipped[i])
                o += (size_t)snprintf(t + o, cap - o, "%s %zu", listed++ ? "," : "", i);
        if (cs->n_skipped > listed)
            snprintf(t + o, cap - o, ", ...");
    }
    return t;
}

/* Reads the child's side file into cs. */
static void read_side(const char *path, const hc_position *ps, size_t n, hc_isolate_side *cs)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char **reasons = calloc(n ? n : 1, sizeof *reasons);
    char line[1400];
    while (reasons && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        hc_resolution r;
        size_t i;
        int off = 0;
        if (sscanf(line, "res %lf %lf %lf %lf", &r.winrate, &r.score, &r.policy, &r.ownership) == 4) {
            cs->res = r;
            cs->has_res = 1;
        } else if (strncmp(line, "engine ", 7) == 0 && !cs->engine) {
            cs->engine = strdup(line + 7);
        } else if (strncmp(line, "cost ", 5) == 0) {
            hc_engine_stats e = hc_engine_stats_unknown();
            char ver[64];
            if (sscanf(line, "cost %ld %lf %lf %d %ld %ld %lf %d %63s %d %ld", &e.positions, &e.eval_seconds,
                       &e.peak_rss_kib, &e.engines, &e.nn_rows, &e.nn_batches, &e.avg_batch, &e.batching, ver,
                       &e.engine_batches, &e.max_batch) == 11) {
                snprintf(e.version, sizeof e.version, "%s", strcmp(ver, "-") ? ver : "");
                cs->cost = e;
                cs->has_cost = 1;
            }
        } else if (sscanf(line, "skip %zu %n", &i, &off) == 1 && off > 0 && i < n && !cs->skipped[i]) {
            cs->skipped[i] = 1;
            cs->n_skipped++;
            reasons[i] = strdup(line + off);
        }
    }
    fclose(f);
    if (reasons && cs->n_skipped)
        cs->skip_text = describe_skips(ps, n, cs, reasons);
    for (size_t i = 0; reasons && i < n; i++)
        free(reasons[i]);
    free(reasons);
}

int hc_isolate_run(const hc_isolate_case *c, hc_nnoutput *outs, hc_isolate_side *cs, char **message)
{
    const char *spec = c->spec;
    const hc_net *net = c->net;
    const hc_position *ps = c->ps;
    size_t n = c->n;
    const size_t *order = c->order;
    int batch = c->batch;
    char records[700], errfile[700], sidefile[700], text[2048];
    snprintf(records, sizeof records, "%s.records", c->scratch_prefix);
    snprintf(errfile, sizeof errfile, "%s.err", c->scratch_prefix);
    snprintf(sidefile, sizeof sidefile, "%s.side", c->scratch_prefix);
    unlink(records);
    unlink(errfile);
    unlink(sidefile);
    /* Close-on-exec, as every descriptor here: the engines a backend starts get none of them
     * (backends/extproc.c closes the rest in its child too). */
    int rfd = open(records, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int sfd = open(sidefile, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    int pfd[2] = {-1, -1}, life[2] = {-1, -1};
    if (rfd < 0 || sfd < 0 || pipe(pfd) != 0 || pipe(life) != 0) {
        snprintf(text, sizeof text, "cannot set up the backend process: %s", strerror(errno));
        if (rfd >= 0)
            close(rfd);
        if (sfd >= 0)
            close(sfd);
        for (int i = 0; i < 2; i++) {
            if (pfd[i] >= 0)
                close(pfd[i]);
            if (life[i] >= 0)
                close(life[i]);
        }
        unlink(sidefile);
        *message = strdup(text);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(life[i], F_SETFD, fcntl(life[i], F_GETFD) | FD_CLOEXEC);
        fcntl(pfd[i], F_SETFD, fcntl(pfd[i], F_GETFD) | FD_CLOEXEC);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(text, sizeof text, "cannot start the backend process: %s", strerror(errno));
        close(rfd);
        close(sfd);
        unlink(sidefile);
        close(pfd[0]);
        close(pfd[1]);
        close(life[0]);
        close(life[1]);
        *message = strdup(text);
        return -1;
    }
    if (pid == 0) {
        /* Its own process group, so that a hang or an interrupt kills whatever the backend
         * started (an engine) with it; the parent's signal handlers are the CLI's, not its. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        /* A parent killed outright (SIGKILL) cannot kill the group: the child follows it. */
        close(life[1]);
        child_follow_parent(life[0], !c->no_pdeathsig);
        close(pfd[0]);
        child_main(spec, net, ps, n, order, batch, c, rfd, pfd[1], records, sfd, errfile);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    close(life[0]); /* life[1] stays open until the child is reaped */
    close(rfd);
    close(sfd);
    close(pfd[1]);
    size_t done = 0;
    int hung = 0, opened = 0, stop = 0;
    double last = now_s();
    for (;;) {
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        double left = c->timeout_s - (now_s() - last);
        if (c->stopped && c->stopped(c->user)) {
            stop = 1;
            break;
        }
        if (left <= 0) {
            hung = 1;
            break;
        }
        /* A signal interrupts poll (EINTR); the short timeout covers one that lands just
         * before it. */
        int pr = poll(&p, 1, left > 0.2 ? 200 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            continue; /* re-checks the clock */
        uint64_t d;
        ssize_t r = read(pfd[0], &d, sizeof d);
        if (r == (ssize_t)sizeof d) {
            if (d == HC_CHILD_OPENED) {
                opened = 1;
                last = now_s();
                continue;
            }
            done = (size_t)d;
            last = now_s();
            if (c->progress)
                c->progress(c->user, done, n);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        break; /* EOF: the child is gone or going */
    }
    if (hung || stop)
        kill(-pid, SIGKILL);
    close(pfd[0]);
    int status = 0;
    /* Wait for the child without reaping it, so that its process group id cannot have been
     * reused, then kill what it left behind (an engine of a backend that crashed). */
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(life[1]);
    if (stop) {
        unlink(records);
        unlink(sidefile);
        unlink(errfile);
        return -2;
    }
    unsigned char *got = calloc(n ? n : 1, 1);
    hc_err err = {0};
    long k = got ? hc_nnoutput_read_records(records, outs, got, n, &err) : -1;
    free(got);
    unlink(records);
    read_side(sidefile, ps, n, cs);
    unlink(sidefile);
    char where[300] = "", pos_text[256] = "";
    size_t next = order && done < n ? order[done] : done;
    if (done < n)
        describe_position(ps, next, pos_text, sizeof pos_text);
    if (!opened)
        snprintf(where, sizeof where, "while opening the backend");
    else
        snprintf(where, sizeof where, "while evaluating the batch of %d from %s", batch, pos_text);
    int rc = 0;
    if (hung) {
        snprintf(text, sizeof text, "hung: no progress for %.0f s; killed %s", c->timeout_s, where);
        rc = -1;
    } else if (WIFSIGNALED(status)) {
        snprintf(text, sizeof text, "crashed with %s (signal %d) %s", signal_name(WTERMSIG(status)),
                 WTERMSIG(status), where);
        rc = -1;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 10) {
        size_t len = 0;
        char *e = hc_read_file(errfile, 1 << 16, &len, &err);
        const char *msg = e ? strchr(e, '\n') : NULL;
        snprintf(text, sizeof text, "%s", msg ? msg + 1 : "failed (no message)");
        free(e);
        rc = -1;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(text, sizeof text, "exited with status %d %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, where);
        rc = -1;
    } else if (k < 0 || (size_t)k + cs->n_skipped != n) {
        snprintf(text, sizeof text, "returned %ld of %zu outputs%s%s", k < 0 ? 0L : k, n - cs->n_skipped,
                 k < 0 ? ": " : "", k < 0 ? err.msg : "");
        rc = -1;
    }
    unlink(errfile);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            hc_nnoutput_free(&outs[i]);
        *message = strdup(text);
    }
    return rc;
}
