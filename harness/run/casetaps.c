/* Taps of a failing case, computed in a child process and read back as text lines. */
#include "harness/run/casetaps.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/model/heads.h"
#include "harness/metrics/stats.h"
#include "harness/run/taps.h"

int hc_casetaps_wanted(const hc_result *r)
{
    if (r->outcome != HC_OUT_CHECKED || !r->stats)
        return 0;
    if (hc_result_is_error(r))
        return 1;
    for (size_t t = 0; t < r->n_tiers; t++)
        if (r->checks && !r->checks[t].pass)
            return 1;
    return 0;
}

/* The positions to tap: the worst of the first failing metric, then of every other metric. */
static size_t pick(const hc_result *r, size_t n, int max, size_t *out)
{
    size_t k = 0;
    int first = -1;
    for (size_t t = 0; t < r->n_tiers && first < 0; t++)
        if (r->checks && !r->checks[t].pass)
            first = r->checks[t].first_fail_metric;
    for (int i = -1; i < HC_M_COUNT && k < (size_t)max; i++) {
        int m = i < 0 ? first : i;
        if (m < 0 || r->stats->m[m].n == 0)
            continue;
        size_t p = r->stats->m[m].max_pos;
        int dup = p >= n;
        for (size_t j = 0; j < k && !dup; j++)
            dup = out[j] == p;
        if (!dup)
            out[k++] = p;
    }
    for (size_t p = 0; k < (size_t)max && k < n && p < n; p++) { /* none known: the first ones */
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = out[j] == p;
        if (!dup)
            out[k++] = p;
    }
    return k;
}

/* The child: the comparison as lines "L compared fmt 6 figures name", "F name" or "E message". */
static void child(int fd, const hc_casetaps_opts *o, const hc_position *sel, size_t k)
{
    FILE *f = fdopen(fd, "w");
    if (!f)
        _exit(1);
    hc_err err = {0};
    hc_tapcmp *c = hc_taps_compare(o->net, sel, k, o->settings, "ref32", o->spec, 1, &err);
    if (!c) {
        for (char *p = err.msg; *p; p++)
            if (*p == '\n')
                *p = ' ';
        fprintf(f, "E %s\n", err.msg);
    } else {
        for (int i = 0; i < hc_tapcmp_count(c); i++) {
            const hc_tapdiff *d = hc_tapcmp_at(c, i);
            int cmp = !d->missing && !d->mismatch && d->n > 0;
            fprintf(f, "L %d %s %.17g %.17g %.17g %.17g %.17g %.17g %s\n", cmp, hc_tap_fmt_str(d->fmt), d->max_abs,
                    hc_tapdiff_mean_abs(d), hc_tapdiff_max_rel(d), hc_tapdiff_mean_rel(d), hc_tapdiff_stor_rel(d),
                    hc_tapcmp_explained(c, i, HC_TAPS_FACTOR), d->name);
        }
        int why = -1, first = hc_tapcmp_first_unexplained_by(c, HC_TAPS_FACTOR, &why);
        if (first >= 0) {
            const hc_tapdiff *d = hc_tapcmp_at(c, first);
            if (d->nonfinite)
                fprintf(f, "W a non-finite value\n");
            else
                fprintf(f, "W %s %.3g, allowed %.3g\n", hc_tapstat_str(why), hc_tapdiff_rel(d, why),
                        hc_tapcmp_allowed(c, first, why, HC_TAPS_FACTOR));
            fprintf(f, "F %s\n", d->name);
        }
    }
    fflush(f);
    _exit(0);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Everything the child writes until it closes the pipe or the deadline passes (*late set). */
static char *slurp(int fd, double deadline, int *late)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    *late = 0;
    while (buf) {
        double left = deadline - mono();
        if (left <= 0) {
            *late = 1;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        if (len + 1024 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    if (buf)
        buf[len] = 0;
    return buf;
}

/* The child's lines into t; why (size 128) gets the statistic that named the first layer. */
static int parse(char *text, hc_result_taps *t, char *why)
{
    size_t lines = 1;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    t->layers = calloc(lines, sizeof *t->layers);
    if (!t->layers)
        return -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == 'E' && line[1] == ' ' && !t->error) {
            if (!(t->error = strdup(line + 2)))
                return -1;
        } else if (line[0] == 'W' && line[1] == ' ') {
            snprintf(why, 128, "%s", line + 2);
        } else if (line[0] == 'F' && line[1] == ' ' && !t->first) {
            if (!(t->first = strdup(line + 2)))
                return -1;
        } else if (line[0] == 'L') {
            hc_result_taplayer *l = &t->layers[t->n_layers];
            int off = 0;
            if (sscanf(line, "L %d %7s %lf %lf %lf %lf %lf %lf %n", &l->compared, l->fmt, &l->max_abs, &l->mean_abs,
                       &l->max_rel, &l->mean_rel, &l->stor_rel, &l->explained, &off) < 8 || !off)
                continue;
            if (!(l->name = strdup(line + off)))
                return -1;
            t->n_layers++;
        }
    }
    return 0;
}

int hc_casetaps_attach(hc_result *r, char **message, hc_result_taps **taps, const hc_casetaps_opts *o, hc_err *err)
{
    *taps = NULL;
    hc_result_taps *t = calloc(1, sizeof *t);
    size_t *pos = t ? calloc((size_t)(o->max_positions > 0 ? o->max_positions : 1), sizeof *pos) : NULL;
    hc_position *sel = pos ? calloc((size_t)(o->max_positions > 0 ? o->max_positions : 1), sizeof *sel) : NULL;
    if (!sel) {
        free(pos);
        free(t);
        return hc_err_set(err, HC_ENOMEM, "out of memory for taps");
    }
    size_t k = pick(r, o->n, o->max_positions, pos);
    for (size_t i = 0; i < k; i++)
        sel[i] = o->ps[pos[i]]; /* shallow: the child only reads them */
    t->positions = pos;
    t->n_positions = k;
    int fds[2];
    pid_t pid = -1;
    char *text = NULL;
    int late = 0, status = 0;
    char why[128] = "";
    if (k == 0)
        t->error = strdup("no positions to tap");
    else if (pipe(fds) != 0)
        t->error = strdup("cannot create a pipe");
    else if ((pid = fork()) < 0) {
        close(fds[0]);
        close(fds[1]);
        t->error = strdup("cannot fork");
    } else if (pid == 0) {
        close(fds[0]);
        child(fds[1], o, sel, k);
    } else {
        close(fds[1]);
        text = slurp(fds[0], mono() + (o->timeout_s > 0 ? o->timeout_s : 600), &late);
        close(fds[0]);
        if (late)
            kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    free(sel);
    if (pid > 0) {
        if (!text || parse(text, t, why)) {
            free(text);
            hc_result_taps_free(t);
            return hc_err_set(err, HC_ENOMEM, "out of memory reading taps");
        }
        free(text);
        if (!t->error && late)
            t->error = strdup("timed out");
        else if (!t->error && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
            t->error = strdup("the comparison's process failed");
    }
    char head[600];
    size_t n_cmp = 0;
    for (size_t i = 0; i < t->n_layers; i++)
        n_cmp += t->layers[i].compared != 0;
    if (t->first)
        snprintf(head, sizeof head, "first divergent layer: %s (%s%staps of %zu positions against ref32; %zu of %zu "
                 "layers compared)", t->first, why, why[0] ? "; " : "", t->n_positions, n_cmp, t->n_layers);
    else if (t->error)
        snprintf(head, sizeof head, "taps: %s", t->error + (strncmp(t->error, "taps: ", 6) == 0 ? 6 : 0));
    else
        snprintf(head, sizeof head, "no divergent layer (taps of %zu positions against ref32; %zu of %zu layers "
                 "compared)", t->n_positions, n_cmp, t->n_layers);
    size_t ml = *message ? strlen(*message) : 0;
    char *nm = malloc(strlen(head) + ml + 3);
    if (!nm) {
        hc_result_taps_free(t);
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    }
    sprintf(nm, "%s%s%s", head, ml ? "; " : "", ml ? *message : "");
    free(*message);
    *message = nm;
    r->message = nm;
    r->taps = t;
    *taps = t;
    return 0;
}
