/* External programs driven over pipes for the gtp: and pipe: backends (extproc.h). */
#include "backends/extproc.h"

#include "backends/backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double hc_extproc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hc_extproc_free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

/* A growable string for the word being built. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static int sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 64) + n;
        char *t = realloc(b->s, cap);
        if (!t)
            return -1;
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

char **hc_extproc_split(const char *cmd, hc_err *err)
{
    size_t nw = 0, capw = 8;
    char **argv = calloc(capw, sizeof *argv);
    sbuf w = {0};
    if (!argv) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        return NULL;
    }
    const char *p = cmd;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        int quote = 0, in_word = 0;
        w.n = 0;
        if (sb_add(&w, "", 0))
            goto nomem;
        while (*p && (quote || !(*p == ' ' || *p == '\t' || *p == '\n'))) {
            in_word = 1;
            if (!quote && (*p == '\'' || *p == '"')) {
                quote = *p++;
                continue;
            }
            if (quote && *p == quote) {
                quote = 0;
                p++;
                continue;
            }
            if (*p == '\\' && quote != '\'' && p[1]) {
                if (sb_add(&w, p + 1, 1))
                    goto nomem;
                p += 2;
                continue;
            }
            if (*p == '$' && quote != '\'' && (p[1] == '{' || p[1] == '_' || (p[1] >= 'A' && p[1] <= 'Z') ||
                                                (p[1] >= 'a' && p[1] <= 'z'))) {
                const char *s = p + 1, *e;
                int braced = *s == '{';
                if (braced) {
                    s++;
                    e = strchr(s, '}');
                    if (!e) {
                        hc_err_set(err, HC_ECONFIG, "unterminated ${ in \"%s\"", cmd);
                        goto fail;
                    }
                } else {
                    for (e = s; *e == '_' || (*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') ||
                                (*e >= '0' && *e <= '9');
                         e++)
                        ;
                }
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(e - s), s);
                const char *v = getenv(name);
                if (!v || !*v) {
                    hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "environment variable %s is not set", name);
                    goto fail;
                }
                if (sb_add(&w, v, strlen(v)))
                    goto nomem;
                p = braced ? e + 1 : e;
                continue;
            }
            if (sb_add(&w, p, 1))
                goto nomem;
            p++;
        }
        if (quote) {
            hc_err_set(err, HC_ECONFIG, "unterminated quote in \"%s\"", cmd);
            goto fail;
        }
        if (!in_word)
            break;
        if (nw + 2 > capw) {
            capw *= 2;
            char **t = realloc(argv, capw * sizeof *argv);
            if (!t)
                goto nomem;
            argv = t;
        }
        argv[nw] = strdup(w.s);
        if (!argv[nw])
            goto nomem;
        argv[++nw] = NULL;
    }
    free(w.s);
    if (nw == 0) {
        hc_err_set(err, HC_ECONFIG, "empty command");
        hc_extproc_free_argv(argv);
        return NULL;
    }
    return argv;
nomem:
    hc_err_set(err, HC_ENOMEM, "out of memory");
fail:
    free(w.s);
    hc_extproc_free_argv(argv);
    return NULL;
}

static void set_cloexec(int fd)
{
    int f = fcntl(fd, F_GETFD);
    if (f >= 0)
        fcntl(fd, F_SETFD, f | FD_CLOEXEC);
}

/* The highest descriptor the child of the next fork may have to close. Where /dev/fd lists this
 * process's descriptors (Linux, macOS, the BSDs with fdescfs; trusted only if it lists the one
 * reading it) the highest listed, plus room for what other threads open meanwhile: a new
 * descriptor takes the lowest free number, so none lands far above. Else the descriptor limit.
 * Read before the fork: a child of a threaded process may only make async-signal-safe calls. */
static int fd_ceiling(void)
{
    int hi = -1, seen_self = 0;
    DIR *d = opendir("/dev/fd");
    if (d) {
        int self = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            char *end;
            long v = strtol(e->d_name, &end, 10);
            if (end == e->d_name || *end || v < 0 || v > 1 << 24)
                continue;
            seen_self |= v == self;
            if (v > hi)
                hi = (int)v;
        }
        closedir(d);
    }
    if (seen_self)
        return hi + 256;
    long m = sysconf(_SC_OPEN_MAX);
    return m > 0 && m <= 1 << 20 ? (int)m - 1 : (1 << 20) - 1;
}

int hc_extproc_start(hc_extproc *p, char *const argv[], hc_err *err)
{
    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->to_fd = p->from_fd = p->err_fd = -1;
    snprintf(p->name, sizeof p->name, "%s", argv[0]);
    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, ex[2] = {-1, -1};
    if (pipe(in) || pipe(out) || pipe(er) || pipe(ex)) {
        hc_err_set(err, HC_EBACKEND, "cannot create pipes for %s: %s", argv[0], strerror(errno));
        goto fail;
    }
    set_cloexec(in[1]);
    set_cloexec(out[0]);
    set_cloexec(er[0]);
    set_cloexec(ex[0]);
    set_cloexec(ex[1]);
    int ceiling = fd_ceiling();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        hc_err_set(err, HC_EBACKEND, "cannot start %s: %s", argv[0], strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(er[1], 2);
        /* The program gets its stdin, stdout and stderr and nothing else of halfcheck's (a case's
         * records and side files, its progress pipe, other engines' pipes): an engine, or a
         * daemon it leaves behind, holding one would keep halfcheck waiting for an EOF. ex[1]
         * closes itself at exec (FD_CLOEXEC) and says why if exec fails. Not every descriptor
         * is marked close-on-exec where it is opened (libraries, the embedding program), so
         * the child closes them all. */
        for (int fd = 3; fd <= ceiling; fd++)
            if (fd != ex[1])
                close(fd);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(ex[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(er[1]);
    close(ex[1]);
    int e = 0;
    ssize_t r;
    while ((r = read(ex[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(ex[0]);
    if (r == (ssize_t)sizeof e) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(in[1]);
        close(out[0]);
        close(er[0]);
        return hc_err_set(err, HC_EBACKEND, "cannot execute %s: %s", argv[0], strerror(e));
    }
    p->pid = pid;
    p->to_fd = in[1];
    p->from_fd = out[0];
    p->err_fd = er[0];
    fcntl(p->err_fd, F_SETFL, fcntl(p->err_fd, F_GETFL) | O_NONBLOCK);
    fcntl(p->to_fd, F_SETFL, fcntl(p->to_fd, F_GETFL) | O_NONBLOCK);
#ifdef F_SETNOSIGPIPE
    /* macOS raises a pipe write's SIGPIPE on the process, not on the writing thread, so the
     * writer's blocked mask (hc_extproc_write) would not keep it off the other threads: the
     * descriptor is told never to raise it (the write still fails with EPIPE). */
    fcntl(p->to_fd, F_SETNOSIGPIPE, 1);
#endif
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) close(in[i]);
        if (out[i] >= 0) close(out[i]);
        if (er[i] >= 0) close(er[i]);
        if (ex[i] >= 0) close(ex[i]);
    }
    return -1;
}

static void drain_stderr(hc_extproc *p);

int hc_extproc_running(const hc_extproc *p)
{
    return p->pid > 0;
}

static void drain_stderr(hc_extproc *p)
{
    if (p->err_fd < 0)
        return;
    char buf[4096];
    for (;;) {
        ssize_t r = read(p->err_fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0) {
                close(p->err_fd);
                p->err_fd = -1;
            }
            return;
        }
        size_t n = (size_t)r, cap = sizeof p->tail - 1;
        if (n >= cap) {
            memcpy(p->tail, buf + n - cap, cap);
            p->tail_len = cap;
        } else {
            if (p->tail_len + n > cap) {
                size_t drop = p->tail_len + n - cap;
                memmove(p->tail, p->tail + drop, p->tail_len - drop);
                p->tail_len -= drop;
            }
            memcpy(p->tail + p->tail_len, buf, n);
            p->tail_len += n;
        }
        p->tail[p->tail_len] = '\0';
    }
}

/* "exited with status 3" / "was killed by SIGSEGV" after the program closed its output. */
static int gone(hc_extproc *p, const char *what, hc_err *err)
{
    int status = 0;
    pid_t r = 0;
    for (int i = 0; i < 200 && p->pid > 0; i++) { /* up to 2 s for it to finish dying */
        r = waitpid(p->pid, &status, WNOHANG);
        if (r != 0)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    drain_stderr(p);
    char how[128];
    if (r == p->pid) {
        p->pid = -1;
        if (WIFEXITED(status))
            snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
        else
            snprintf(how, sizeof how, "stopped");
    } else {
        snprintf(how, sizeof how, "closed its output");
    }
    /* The last line or two of stderr usually says why. */
    const char *t = p->tail;
    size_t n = p->tail_len;
    while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r'))
        n--;
    const char *start = t;
    int lines = 0;
    for (size_t i = n; i > 0; i--)
        if (t[i - 1] == '\n' && ++lines == 2) {
            start = t + i;
            break;
        }
    hc_extproc_stop(p);
    if (n > 0)
        return hc_err_set(err, HC_EBACKEND, "%s %s %s; its stderr ended with: %.*s", p->name, how, what,
                          (int)(t + n - start), start);
    return hc_err_set(err, HC_EBACKEND, "%s %s %s (nothing on stderr)", p->name, how, what);
}

/* Writes buf; with nowait, only what the program's input takes now (*done: the bytes written), else
 * all of it by the deadline. */
static int write_impl(hc_extproc *p, const void *buf, size_t n, double deadline, int nowait, size_t *done, hc_err *err)
{
    if (p->to_fd < 0)
        return hc_err_set(err, HC_EBACKEND, "%s is not running", p->name);
    /* Block SIGPIPE for this thread and swallow a pending one: a dead program must not kill us. */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    const char *c = buf;
    int rc = 0, saved = 0;
    while (n > 0) {
        ssize_t w = write(p->to_fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && nowait)
                break;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* The program is not reading: wait for room, draining its stderr meanwhile. */
                double left = deadline - hc_extproc_now();
                if (left <= 0) {
                    saved = ETIMEDOUT;
                    rc = -1;
                    break;
                }
                struct pollfd fds[2] = {{.fd = p->to_fd, .events = POLLOUT}, {.fd = p->err_fd, .events = POLLIN}};
                int nf = p->err_fd >= 0 ? 2 : 1;
                if (poll(fds, (nfds_t)nf, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1) > 0 && nf == 2 &&
                    fds[1].revents)
                    drain_stderr(p);
                continue;
            }
            saved = errno;
            rc = -1;
            break;
        }
        c += w;
        n -= (size_t)w;
        if (done)
            *done += (size_t)w;
    }
    if (rc && saved == EPIPE) {
        /* sigwait, not sigtimedwait (macOS lacks it): the SIGPIPE of a failed write is directed
         * at this thread, which blocks it, so once sigpending shows it sigwait takes it at once. */
        sigset_t pending;
        sigpending(&pending);
        int sig;
        if (sigismember(&pending, SIGPIPE))
            sigwait(&pipe_set, &sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        if (saved == EPIPE)
            return gone(p, "(its input was closed while writing to it)", err);
    {
        if (saved == ETIMEDOUT) {
            hc_extproc_stop(p);
            return hc_err_set(err, HC_EBACKEND, "%s: timed out writing to it (it stopped reading its input)", p->name);
        }
        return hc_err_set(err, HC_EBACKEND, "writing to %s: %s", p->name, strerror(saved));
    }
    }
    return 0;
}

int hc_extproc_write(hc_extproc *p, const void *buf, size_t n, double deadline, hc_err *err)
{
    return write_impl(p, buf, n, deadline, 0, NULL, err);
}

long hc_extproc_write_some(hc_extproc *p, const void *buf, size_t n, hc_err *err)
{
    size_t done = 0;
    return write_impl(p, buf, n, 0, 1, &done, err) ? -1 : (long)done;
}

/* Waits for output by the deadline, draining stderr meanwhile. 1: readable, 0: timeout. */
static int wait_readable(hc_extproc *p, double deadline)
{
    for (;;) {
        double left = deadline - hc_extproc_now();
        if (left <= 0)
            return 0;
        struct pollfd fds[2] = {{.fd = p->from_fd, .events = POLLIN}, {.fd = p->err_fd, .events = POLLIN}};
        int nf = p->err_fd >= 0 ? 2 : 1;
        int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
        int r = poll(fds, (nfds_t)nf, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return 1; /* let read report it */
        if (nf == 2 && fds[1].revents)
            drain_stderr(p);
        if (fds[0].revents)
            return 1;
    }
}

/* Reads more bytes into rbuf; 1 got some, 0 EOF, -1 timeout/error (err set). */
static int fill(hc_extproc *p, double deadline, const char *what, hc_err *err)
{
    if (p->from_fd < 0)
        return hc_err_set(err, HC_EBACKEND, "%s is not running", p->name);
    if (p->rstart > 0) {
        memmove(p->rbuf, p->rbuf + p->rstart, p->rlen);
        p->rstart = 0;
    }
    if (p->rlen >= sizeof p->rbuf)
        return hc_err_set(err, HC_EBACKEND, "%s: a line of more than %zu bytes %s", p->name, sizeof p->rbuf, what);
    if (!wait_readable(p, deadline))
        return hc_err_set(err, HC_EBACKEND, "%s: timed out %s", p->name, what);
    for (;;) {
        ssize_t r = read(p->from_fd, p->rbuf + p->rlen, sizeof p->rbuf - p->rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return hc_err_set(err, HC_EBACKEND, "reading from %s: %s", p->name, strerror(errno));
        if (r == 0)
            return 0;
        p->rlen += (size_t)r;
        return 1;
    }
}

/* A complete line from rbuf into line: its length, -1 with err (too long), HC_EXTPROC_NO_LINE
 * when rbuf holds none. */
static long take_line(hc_extproc *p, char *line, size_t cap, hc_err *err)
{
    char *nl = p->rlen ? memchr(p->rbuf + p->rstart, '\n', p->rlen) : NULL;
    if (!nl)
        return HC_EXTPROC_NO_LINE;
    size_t n = (size_t)(nl - (p->rbuf + p->rstart));
    size_t keep = n;
    if (keep > 0 && p->rbuf[p->rstart + keep - 1] == '\r')
        keep--;
    if (keep + 1 > cap)
        return hc_err_set(err, HC_EBACKEND, "%s: a reply line of %zu bytes (at most %zu expected)", p->name, keep,
                          cap - 1);
    memcpy(line, p->rbuf + p->rstart, keep);
    line[keep] = '\0';
    p->rstart += n + 1;
    p->rlen -= n + 1;
    return (long)keep;
}

long hc_extproc_try_read_line(hc_extproc *p, char *line, size_t cap, hc_err *err)
{
    for (;;) {
        long k = take_line(p, line, cap, err);
        if (k != HC_EXTPROC_NO_LINE)
            return k;
        if (p->from_fd < 0)
            return hc_err_set(err, HC_EBACKEND, "%s is not running", p->name);
        struct pollfd fd = {.fd = p->from_fd, .events = POLLIN};
        int r = poll(&fd, 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return HC_EXTPROC_NO_LINE;
        /* Readable (or an error that read reports): fill does not wait. */
        r = fill(p, hc_extproc_now() + 1, "waiting for a reply line", err);
        if (r < 0) {
            hc_extproc_stop(p);
            return -1;
        }
        if (r == 0)
            return gone(p, "before finishing its reply", err);
    }
}

void hc_extproc_wait_any(hc_extproc *const *ps, const int *want_write, const int *want_read, int n, double deadline)
{
    for (;;) {
        double left = deadline - hc_extproc_now();
        if (left <= 0)
            return;
        struct pollfd fds[3 * 16];
        int nf = 0, any = 0;
        for (int i = 0; i < n && nf + 3 <= (int)(sizeof fds / sizeof fds[0]); i++) {
            if (want_write[i] && ps[i]->to_fd >= 0)
                fds[nf++] = (struct pollfd){.fd = ps[i]->to_fd, .events = POLLOUT}, any = 1;
            if (want_read[i] && ps[i]->from_fd >= 0)
                fds[nf++] = (struct pollfd){.fd = ps[i]->from_fd, .events = POLLIN}, any = 1;
            if (ps[i]->err_fd >= 0)
                fds[nf++] = (struct pollfd){.fd = ps[i]->err_fd, .events = POLLIN};
        }
        if (!any)
            return;
        int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
        int r = poll(fds, (nfds_t)nf, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        int ready = 0;
        for (int k = 0; k < nf; k++) {
            if (!fds[k].revents)
                continue;
            int is_err = 0;
            for (int i = 0; i < n; i++)
                if (ps[i]->err_fd == fds[k].fd) {
                    drain_stderr(ps[i]);
                    is_err = 1;
                }
            ready |= !is_err;
        }
        if (ready)
            return;
    }
}

long hc_extproc_read_line(hc_extproc *p, char *line, size_t cap, double deadline, hc_err *err)
{
    for (;;) {
        long k = take_line(p, line, cap, err);
        if (k != HC_EXTPROC_NO_LINE)
            return k;
        int r = fill(p, deadline, "waiting for a reply line", err);
        if (r < 0) {
            hc_extproc_stop(p);
            return -1;
        }
        if (r == 0)
            return gone(p, "before finishing its reply", err);
    }
}

int hc_extproc_read(hc_extproc *p, void *buf, size_t n, double deadline, hc_err *err)
{
    char *out = buf;
    size_t got = 0;
    while (got < n) {
        if (p->rlen) {
            size_t k = p->rlen < n - got ? p->rlen : n - got;
            memcpy(out + got, p->rbuf + p->rstart, k);
            p->rstart += k;
            p->rlen -= k;
            got += k;
            continue;
        }
        char what[128];
        snprintf(what, sizeof what, "after %zu of %zu bytes", got, n);
        int r = fill(p, deadline, what, err);
        if (r < 0) {
            hc_extproc_stop(p);
            return -1;
        }
        if (r == 0) {
            snprintf(what, sizeof what, "after sending %zu of the %zu bytes expected (short read)", got, n);
            return gone(p, what, err);
        }
    }
    return 0;
}

void hc_extproc_stop(hc_extproc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        p->pid = -1;
    }
    if (p->to_fd >= 0) close(p->to_fd);
    if (p->from_fd >= 0) close(p->from_fd);
    if (p->err_fd >= 0) close(p->err_fd);
    p->to_fd = p->from_fd = p->err_fd = -1;
    p->rstart = p->rlen = 0;
}

void hc_extproc_finish(hc_extproc *p, double grace)
{
    if (p->to_fd >= 0) {
        close(p->to_fd);
        p->to_fd = -1;
    }
    double end = hc_extproc_now() + grace;
    while (p->pid > 0 && hc_extproc_now() < end) {
        int status;
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR)) {
            p->pid = -1;
            drain_stderr(p); /* what it wrote last (an engine's exit statistics) is kept in the tail */
            break;
        }
        drain_stderr(p);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    hc_extproc_stop(p);
}

double hc_extproc_children_peak_rss_kib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0 || ru.ru_maxrss <= 0)
        return -1;
#ifdef __APPLE__
    return (double)ru.ru_maxrss / 1024.0; /* bytes on macOS */
#else
    return (double)ru.ru_maxrss; /* KiB on Linux and the BSDs */
#endif
}
