/* The suite runner behind `halfcheck run` (runner.h). */
#define _GNU_SOURCE
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "backend.h"
#include "evaluate.h"
#include "html.h"
#include "junit.h"
#include "model.h"
#include "nnoutput.h"
#include "positions.h"
#include "sgfwalk.h"
#include "sgf.h"
#include "sha256.h"
#include "stats.h"
#include "stream.h"
#include "table.h"
#include "tiers.h"
#include "version.h"

/* Storage a result points into, owned by the run. */
typedef struct owned {
    hc_stats *stats;
    hc_tier *tiers;
    hc_tier_check *checks;
    char *message;
    char *skip_message;
} owned;

struct hc_run {
    const hc_suite *suite;
    hc_result *items;
    owned *own;
    size_t n, cap;
    int input_error, backend_error, tier_fail;
    int interrupted;
    unsigned seed;       /* the effective seed of the batched shuffles */
    char rerun_tail[64]; /* what a rerun command needs beyond the case: " --seed N" or "" */
    int cache_hits, cache_misses;
    hc_results results;
    char timestamp[32];
    char scratch[512];
    unsigned n_children; /* names each child's scratch files */
    hc_suite filtered;   /* the suite narrowed by opts->only (cases array owned) */
    int model_version;   /* of the net being run, for its results; 0 while none is loaded */
};

hc_run_options hc_run_options_default(void)
{
    hc_run_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.timeout_s = 600;
    o.seed = 1;
    return o;
}

static int stopped(const hc_run_options *opts)
{
    return opts->stop && *opts->stop;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* s as one shell word: as it is when it holds only characters no shell treats specially,
 * else single-quoted. Returns the bytes written (truncated to len). */
static size_t shell_word(char *out, size_t len, const char *s)
{
    size_t o = 0;
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        plain = plain && (strchr("_-./:=,@+%", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                          (*p >= '0' && *p <= '9'));
    for (const char *p = plain ? s : "'"; *p && o + 1 < len; p++)
        out[o++] = *p;
    for (const char *p = s; !plain && *p && o + 5 < len; p++) {
        if (*p == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *p;
        }
    }
    if (!plain && o + 1 < len)
        out[o++] = '\'';
    out[o < len ? o : len - 1] = '\0';
    return o < len ? o : len - 1;
}

/* message, then the command that reruns just case c ("rerun: halfcheck run SUITE --only
 * net=N,board=B,backend=K"), malloc'd. The suite's path is as it was given. */
static char *with_rerun(const hc_run *run, const hc_case *c, const char *message)
{
    const hc_suite *s = run->suite;
    char only[1200], cmd[4096];
    snprintf(only, sizeof only, "net=%s,board=%s,backend=%s", s->nets[c->net].name, s->boards[c->board].name,
             s->backends[c->backend].name);
    size_t o = (size_t)snprintf(cmd, sizeof cmd, "%s%srerun: halfcheck run ", message ? message : "",
                                message && *message ? "; " : "");
    if (o < sizeof cmd)
        o += shell_word(cmd + o, sizeof cmd - o, s->path ? s->path : "SUITE");
    if (o < sizeof cmd)
        o += (size_t)snprintf(cmd + o, sizeof cmd - o, " --only ");
    if (o < sizeof cmd)
        o += shell_word(cmd + o, sizeof cmd - o, only);
    if (o < sizeof cmd)
        snprintf(cmd + o, sizeof cmd - o, "%s", run->rerun_tail);
    return strdup(cmd);
}

/* Appends a result; the strings and arrays given are adopted by the run. */
static int add_result(hc_run *run, const hc_case *c, const char *mode, int outcome, char *message, hc_stats *stats,
                      double seconds, hc_err *err)
{
    if (run->n == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 32;
        hc_result *ni = realloc(run->items, cap * sizeof *ni);
        if (ni)
            run->items = ni;
        owned *no = realloc(run->own, cap * sizeof *no);
        if (no)
            run->own = no;
        if (!ni || !no) {
            free(message);
            free(stats);
            return hc_err_set(err, HC_ENOMEM, "out of memory for results");
        }
        run->cap = cap;
    }
    const hc_suite *s = run->suite;
    owned *o = &run->own[run->n];
    memset(o, 0, sizeof *o);
    o->message = message;
    o->stats = stats;
    o->tiers = calloc(c->n_tiers ? c->n_tiers : 1, sizeof(hc_tier));
    o->checks = calloc(c->n_tiers ? c->n_tiers : 1, sizeof(hc_tier_check));
    if (!o->tiers || !o->checks) {
        free(o->tiers);
        free(o->checks);
        free(message);
        free(stats);
        return hc_err_set(err, HC_ENOMEM, "out of memory for results");
    }
    for (size_t t = 0; t < c->n_tiers; t++) {
        o->tiers[t] = s->tiers[c->tiers[t]];
        if (outcome == HC_OUT_CHECKED && stats) {
            hc_tier_check_stats(&o->tiers[t], stats, &o->checks[t]);
            if (!o->checks[t].pass)
                run->tier_fail = 1;
        }
    }
    hc_result *r = &run->items[run->n];
    memset(r, 0, sizeof *r);
    r->net = s->nets[c->net].name;
    r->board = s->boards[c->board].name;
    r->backend = s->backends[c->backend].name;
    r->mode = mode;
    r->outcome = outcome;
    r->message = message;
    r->stats = stats;
    r->n_tiers = c->n_tiers;
    r->tiers = o->tiers;
    r->checks = outcome == HC_OUT_CHECKED ? o->checks : NULL;
    r->nn_x_len = c->settings.nn_x_len;
    r->nn_y_len = c->settings.nn_y_len;
    r->max_batch_size = c->settings.max_batch_size;
    r->policy_optimism = c->settings.policy_optimism;
    r->pda = c->settings.pda;
    r->policy_temperature = c->settings.policy_temperature;
    r->seconds = seconds;
    r->model_version = run->model_version;
    if (outcome == HC_OUT_CHECKED && stats && hc_stats_any_nonfinite(stats))
        run->backend_error = 1;
    int bad = outcome == HC_OUT_ERROR || (outcome == HC_OUT_CHECKED && stats && hc_stats_any_nonfinite(stats));
    for (size_t t = 0; outcome == HC_OUT_CHECKED && t < c->n_tiers; t++)
        bad |= !o->checks[t].pass;
    if (bad) {
        /* Every failure and error names the one command that reruns just this case. */
        char *full = with_rerun(run, c, message);
        if (full) { /* out of memory: the message without it */
            free(message);
            o->message = full;
            r->message = full;
        }
    }
    run->n++;
    return 0;
}

static const char *mode_name(int mode)
{
    return mode == HC_MODE_BATCHED ? "batched" : "unbatched";
}

/* An error result for every mode of a case. */
static int add_case_errors(hc_run *run, const hc_case *c, const char *msg, hc_err *err)
{
    for (int mode = HC_MODE_UNBATCHED; mode <= HC_MODE_BATCHED; mode <<= 1) {
        if (!(run->suite->modes & mode))
            continue;
        char *m = strdup(msg);
        if (add_result(run, c, mode_name(mode), HC_OUT_ERROR, m, NULL, 0, err))
            return -1;
    }
    return 0;
}

typedef struct collect_ctx {
    hc_position *ps;
    size_t n, cap;
} collect_ctx;

static int collect_position(const hc_position *p, const hc_history *h, void *user, hc_err *err)
{
    (void)h;
    collect_ctx *cc = user;
    if (cc->n == cc->cap) {
        size_t cap = cc->cap ? cc->cap * 2 : 256;
        hc_position *np = realloc(cc->ps, cap * sizeof *np);
        if (!np)
            return hc_err_set(err, HC_ENOMEM, "out of memory recording positions");
        cc->ps = np;
        cc->cap = cap;
    }
    if (hc_position_copy(&cc->ps[cc->n], p, err))
        return -1;
    cc->n++;
    return 0;
}

/* The positions of a board config, and a digest of their source for the cache key. */
static int load_positions(const hc_board_cfg *b, hc_position **ps, size_t *n, char digest[65], hc_err *err)
{
    const char *src = b->positions ? b->positions : b->sgf;
    if (hc_sha256_file(src, digest, err))
        return -1;
    if (b->positions)
        return hc_positions_load(b->positions, ps, n, err);
    hc_sgf_collection *c = hc_sgf_load(b->sgf, err);
    if (!c)
        return -1;
    collect_ctx cc = {0};
    int rc = hc_record_collection(c, collect_position, &cc, err);
    hc_sgf_free(c);
    if (rc) {
        hc_positions_free(cc.ps, cc.n);
        return -1;
    }
    *ps = cc.ps;
    *n = cc.n;
    return 0;
}

static hc_eval_settings settings_of(const hc_board_cfg *b)
{
    hc_eval_settings s = hc_eval_settings_default(b->nn_x_len, b->nn_y_len);
    s.policy_optimism = b->policy_optimism;
    s.playout_doubling_advantage = b->pda;
    s.policy_temperature = (float)b->policy_temperature;
    return s;
}

static void cache_key(const char *net_digest, const char *pos_digest, const hc_eval_settings *s, char hex[65])
{
    char text[1024];
    snprintf(text, sizeof text, "halfcheck-ref v1|engine %d|net %s|positions %s|nn %dx%d|opt %.17g|pda %.17g|temp %.9g|meta %s",
             HC_ENGINE_VERSION, net_digest, pos_digest, s->nn_x, s->nn_y, s->policy_optimism,
             s->playout_doubling_advantage, (double)s->policy_temperature, s->meta_profile);
    hc_sha256 h;
    hc_sha256_init(&h);
    hc_sha256_update(&h, text, strlen(text));
    hc_sha256_final_hex(&h, hex);
}

static int mkdir_p(const char *dir, hc_err *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return hc_err_set(err, HC_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return hc_err_set(err, HC_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
    return 0;
}

/* A cached reference is used only when every record is there and fits the buffer. */
static int cache_read(const char *path, hc_nnoutput *outs, size_t n, const hc_eval_settings *s)
{
    if (access(path, R_OK) != 0)
        return 0;
    unsigned char *got = calloc(n ? n : 1, 1);
    hc_err err = {0};
    long k = got ? hc_nnoutput_read_records(path, outs, got, n, &err) : -1;
    int ok = k == (long)n;
    for (size_t i = 0; ok && i < n; i++)
        ok = got[i] && outs[i].nn_x_len == s->nn_x && outs[i].nn_y_len == s->nn_y && outs[i].white_owner_map;
    if (!ok)
        for (size_t i = 0; i < n; i++)
            if (got && got[i])
                hc_nnoutput_free(&outs[i]);
    free(got);
    return ok;
}

static int cache_write(const char *path, const hc_nnoutput *outs, size_t n, hc_err *err)
{
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        void *rec = hc_nnoutput_encode(&outs[i], (long)i, &len, err);
        if (!rec || hc_ostream_write(o, rec, len, err)) {
            free(rec);
            hc_ostream_abort(o);
            return -1;
        }
        free(rec);
    }
    return hc_ostream_commit(o, err);
}

typedef struct progress_ctx {
    const hc_run_options *opts;
    const char *what;
} progress_ctx;

static int report_progress(void *user, size_t done, size_t total)
{
    progress_ctx *pc = user;
    if (pc->opts->progress)
        pc->opts->progress(pc->opts->progress_user, pc->what, done, total);
    return stopped(pc->opts); /* non-zero stops the evaluation */
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
 * "skip I REASON" per position the backend could not express (hc_eval_positions_skip). */
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

static void child_main(const char *spec, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                       int batch, const hc_eval_settings *s, int threads, int records_fd, int progress_fd,
                       const char *records_path, int side_fd, const char *err_path)
{
    hc_err err = {0};
    hc_backend b = {0};
    /* A CPU backend uses its threads as lanes, each taking its share of a batch per call. */
    int n_lanes = hc_backend_lanes_for(spec, batch, threads);
    int lane_batch = hc_backend_lane_batch(batch, n_lanes);
    hc_backend *lanes = NULL;
    if (n_lanes > 0) {
        lanes = hc_backend_open_lanes(spec, net, s->nn_x, s->nn_y, n_lanes, lane_batch, &err);
        if (!lanes)
            child_fail(err_path, &err, NULL);
        b = lanes[0];
    } else if (hc_backend_open(&b, spec, net, s->nn_x, s->nn_y, batch, threads, &err))
        child_fail(err_path, &err, NULL);
    const hc_resolution *res = b.vt->resolution ? b.vt->resolution(b.inst) : NULL;
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
    hc_eval_failure fail;
    /* Only a position backend refuses single positions; a tensor backend never calls child_skip. */
    int rc = lanes ? hc_eval_positions_lanes(lanes, n_lanes, lane_batch, net, ps, n, order, s, outs, NULL, &fail,
                                             child_progress,
                                             &cc, &err)
                   : hc_eval_positions_skip(&b, net, ps, n, order, batch, s, outs, NULL, &fail, child_progress,
                                            child_skip, &cc, &err);
    if (rc) {
        if (cc.write_errno) {
            /* Not the backend's fault: say which file could not be written, and why. */
            hc_err_set(&err, HC_EIO, "%s: cannot write the backend's outputs: %s", records_path,
                       strerror(cc.write_errno));
            child_fail(err_path, &err, NULL);
        }
        child_fail(err_path, &err, &fail);
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

/* What a backend case brings back besides its outputs (the child's side file). */
typedef struct case_side {
    int has_res;
    hc_resolution res;
    unsigned char *skipped; /* n flags, the positions the backend could not express */
    size_t n_skipped;
    char *skip_text;        /* malloc'd description of the skipped positions, or NULL */
} case_side;

/* The skipped positions, for the report: the count, then the first few with their reasons, then
 * the first indices. */
static char *describe_skips(const hc_position *ps, size_t n, const case_side *cs, char **reasons)
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
static void read_side(const char *path, const hc_position *ps, size_t n, case_side *cs)
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

/* Runs one backend over the positions in a child process. Returns 0 with outs filled (but
 * for the positions cs->skipped flags) and cs's resolution, or -1 with *message (malloc'd)
 * saying what went wrong. cs->skipped must hold n zeroed flags. */
static int run_isolated(hc_run *run, const hc_run_options *opts, const char *spec, const hc_net *net,
                        const hc_position *ps, size_t n, const size_t *order, int batch, const hc_eval_settings *s,
                        const char *what, hc_nnoutput *outs, case_side *cs, char **message)
{
    char records[700], errfile[700], sidefile[700], text[2048];
    unsigned id = run->n_children++;
    snprintf(records, sizeof records, "%s/case%u.records", run->scratch, id);
    snprintf(errfile, sizeof errfile, "%s/case%u.err", run->scratch, id);
    snprintf(sidefile, sizeof sidefile, "%s/case%u.side", run->scratch, id);
    unlink(records);
    unlink(errfile);
    unlink(sidefile);
    int rfd = open(records, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int sfd = open(sidefile, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    int pfd[2];
    if (rfd < 0 || sfd < 0 || pipe(pfd) != 0) {
        snprintf(text, sizeof text, "cannot set up the backend process: %s", strerror(errno));
        if (rfd >= 0)
            close(rfd);
        if (sfd >= 0)
            close(sfd);
        unlink(sidefile);
        *message = strdup(text);
        return -1;
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
        *message = strdup(text);
        return -1;
    }
    if (pid == 0) {
        /* Its own process group, so that a hang or an interrupt kills whatever the backend
         * started (an engine) with it; the parent's signal handlers are the CLI's, not its. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
#ifdef __linux__
        /* A parent killed outright (SIGKILL) cannot kill the group: the child follows it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(12);
#endif
        close(pfd[0]);
        child_main(spec, net, ps, n, order, batch, s, opts->threads, rfd, pfd[1], records, sfd, errfile);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    close(rfd);
    close(sfd);
    close(pfd[1]);
    size_t done = 0;
    int hung = 0, opened = 0, stop = 0;
    double last = now_s();
    for (;;) {
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        double left = opts->timeout_s - (now_s() - last);
        if (stopped(opts)) {
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
            progress_ctx pc = {opts, what};
            report_progress(&pc, done, n);
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
    if (stop) {
        unlink(records);
        unlink(sidefile);
        unlink(errfile);
        run->interrupted = 1;
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
        snprintf(text, sizeof text, "hung: no progress for %.0f s; killed %s", opts->timeout_s, where);
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

static void free_outs(hc_nnoutput *o, size_t n)
{
    if (!o)
        return;
    for (size_t i = 0; i < n; i++)
        hc_nnoutput_free(&o[i]);
    free(o);
}

/* The reference outputs of one net x board x settings: from the cache, or ref32 in this
 * process (the reference is halfcheck's own code, not a backend under test). */
/* A board config's positions as the reference needs them: the records, the digest of their
 * source (the cache key) and the positions file's path (NULL for an SGF collection). */
typedef struct pos_set {
    const hc_position *ps;
    size_t n;
    const char *digest;
    const char *path;
} pos_set;

static int reference(hc_run *run, const hc_run_options *opts, const hc_net *net, const char *net_digest,
                     const pos_set *set, const hc_eval_settings *s, const char *what, hc_nnoutput *outs, hc_err *err)
{
    const hc_position *ps = set->ps;
    size_t n = set->n;
    const char *pos_digest = set->digest, *pos_path = set->path;
    char key[65], path[1200];
    path[0] = '\0';
    if (opts->cache_dir) {
        cache_key(net_digest, pos_digest, s, key);
        snprintf(path, sizeof path, "%s/ref-%s.bin", opts->cache_dir, key);
        if (cache_read(path, outs, n, s)) {
            run->cache_hits++;
            return 0;
        }
    }
    run->cache_misses++;
    hc_backend b = {0};
    int batch = 16;
    if (hc_backend_open(&b, "ref32", net, s->nn_x, s->nn_y, batch, opts->threads, err))
        return -1;
    progress_ctx pc = {opts, what};
    hc_eval_failure fail;
    int rc = hc_eval_positions(&b, net, ps, n, NULL, batch, s, outs, NULL, &fail, report_progress, &pc, err);
    /* A record the game replay refused (an illegal move, a wrong nextPla): name its file and line. */
    if (rc && pos_path && err->code == HC_EFORMAT && fail.position >= 0 && (size_t)fail.position < n &&
        ps[fail.position].file_line > 0)
        hc_err_prefix(err, "%s:%ld: ", pos_path, ps[fail.position].file_line);
    hc_backend_close(&b);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            hc_nnoutput_free(&outs[i]);
        return -1;
    }
    if (path[0]) {
        hc_err cerr = {0};
        if (mkdir_p(opts->cache_dir, &cerr) == 0)
            cache_write(path, outs, n, &cerr); /* a cache that cannot be written only costs time */
    }
    return 0;
}

/* Deterministic shuffle (xorshift64*), so a failing batched case can be rerun exactly. */
static void shuffled_order(size_t *order, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = n; i > 1; i--) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        size_t j = (size_t)((x * 0x2545F4914F6CDD1Dull) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Backend specs may name the case: {net_name}, {board_name}, {model} (the net's file),
 * {suite_dir}, {nnX}, {nnY}; e.g. file:{suite_dir}/out/{net_name}_{board_name}.jsonl.gz. */
static int expand_spec(const hc_suite *s, const hc_case *c, const char *spec, char *out, size_t len, hc_err *err)
{
    char suite_dir[1024];
    snprintf(suite_dir, sizeof suite_dir, "%s", s->path ? s->path : ".");
    char *slash = strrchr(suite_dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(suite_dir, sizeof suite_dir, ".");
    char nx[16], ny[16];
    snprintf(nx, sizeof nx, "%d", c->settings.nn_x_len);
    snprintf(ny, sizeof ny, "%d", c->settings.nn_y_len);
    const char *keys[] = {"{net_name}", "{board_name}", "{model}", "{suite_dir}", "{nnX}", "{nnY}"};
    const char *vals[] = {s->nets[c->net].name, s->boards[c->board].name, s->nets[c->net].model, suite_dir, nx, ny};
    size_t o = 0;
    for (const char *p = spec; *p;) {
        int matched = 0;
        for (int k = 0; k < 6 && !matched; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(p, keys[k], kl) == 0) {
                size_t vl = strlen(vals[k]);
                if (o + vl >= len)
                    return hc_err_set(err, HC_ECONFIG, "backend spec too long after expansion: %s", spec);
                memcpy(out + o, vals[k], vl);
                o += vl;
                p += kl;
                matched = 1;
            }
        }
        if (!matched) {
            if (o + 1 >= len)
                return hc_err_set(err, HC_ECONFIG, "backend spec too long after expansion: %s", spec);
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    return 0;
}

/* The seed of a batched case's shuffle: FNV-1a 64 over the run's seed and the case's names,
 * so that a case deals the same batches whichever cases run beside it. */
static uint64_t case_seed(unsigned seed, const char *net, const char *board, const char *backend, const char *mode)
{
    char text[64];
    snprintf(text, sizeof text, "halfcheck-batches v1 seed %u", seed);
    const char *parts[5] = {text, net, board, backend, mode};
    uint64_t h = 0xcbf29ce484222325ull;
    for (int k = 0; k < 5; k++) {
        for (const unsigned char *p = (const unsigned char *)parts[k]; *p; p++) {
            h ^= *p;
            h *= 0x100000001b3ull;
        }
        h ^= 0xff; /* a separator no name holds as a byte of UTF-8 */
        h *= 0x100000001b3ull;
    }
    return h;
}

static int case_outcome(hc_run *run, const hc_case *c, int mode, size_t n, const hc_nnoutput *ref,
                        hc_nnoutput *outs, case_side *side, int rc, char *message, const char *spec, double secs,
                        hc_err *err);

static int run_case(hc_run *run, const hc_run_options *opts, const hc_case *c, const hc_net *net, const hc_position *ps,
                    size_t n, const hc_nnoutput *ref, hc_err *err)
{
    const hc_suite *s = run->suite;
    const hc_backend_cfg *bc = &s->backends[c->backend];
    hc_eval_settings es = settings_of(&c->settings);
    char spec[2048];
    hc_err xerr = {0};
    if (expand_spec(s, c, bc->spec, spec, sizeof spec, &xerr)) {
        run->input_error = 1;
        return add_case_errors(run, c, xerr.msg, err);
    }
    for (int mode = HC_MODE_UNBATCHED; mode <= HC_MODE_BATCHED; mode <<= 1) {
        if (!(s->modes & mode))
            continue;
        int batch = mode == HC_MODE_BATCHED ? c->settings.max_batch_size : 1;
        size_t *order = NULL;
        if (mode == HC_MODE_BATCHED) {
            order = malloc(sizeof(size_t) * (n ? n : 1));
            if (!order)
                return hc_err_set(err, HC_ENOMEM, "out of memory");
            shuffled_order(order, n, case_seed(run->seed, s->nets[c->net].name, s->boards[c->board].name, bc->name,
                                               mode_name(mode)));
        }
        char what[512];
        snprintf(what, sizeof what, "%s %s %s %s", s->nets[c->net].name, s->boards[c->board].name, bc->name,
                 mode_name(mode));
        if (opts->progress)
            opts->progress(opts->progress_user, what, 0, n);
        hc_nnoutput *outs = calloc(n ? n : 1, sizeof *outs);
        case_side cs = {0};
        cs.skipped = calloc(n ? n : 1, 1);
        char *message = NULL;
        double t0 = now_s();
        int rc = outs && cs.skipped ? run_isolated(run, opts, spec, net, ps, n, order, batch, &es, what, outs, &cs,
                                                   &message)
                                    : -1;
        double secs = now_s() - t0;
        free(order);
        if (rc == -2) {
            /* Stopped: the case has no result, and no further case starts. */
            free(outs);
            free(cs.skipped);
            free(cs.skip_text);
            return 0;
        }
        size_t before = run->n;
        if (case_outcome(run, c, mode, n, ref, outs, &cs, rc, message, spec, secs, err))
            return -1;
        if (opts->case_end && run->n > before)
            opts->case_end(opts->progress_user, what, n, secs, &run->items[run->n - 1]);
    }
    return 0;
}

/* Turns what run_isolated brought back into the case's result (adopting outs, cs's
 * buffers and message). */
static int case_outcome(hc_run *run, const hc_case *c, int mode, size_t n, const hc_nnoutput *ref,
                        hc_nnoutput *outs, case_side *side, int rc, char *message, const char *spec, double secs,
                        hc_err *err)
{
    case_side cs = *side; /* its buffers are adopted */
    if (rc == 0 && cs.n_skipped == n) {
        /* Every position refused: the case is skipped, with the reasons. */
        free(outs);
        free(cs.skipped);
        char *reason = cs.skip_text ? cs.skip_text : strdup("every position skipped");
        return add_result(run, c, mode_name(mode), HC_OUT_SKIPPED, reason, NULL, secs, err);
    }
    const char *skip = message ? strstr(message, HC_BACKEND_SKIP) : NULL;
    if (rc && skip) {
        /* The backend cannot take this case (a setting, an unset engine path): not an error. */
        char *reason = strdup(skip + strlen(HC_BACKEND_SKIP));
        free(message);
        free(outs);
        free(cs.skipped);
        free(cs.skip_text);
        return add_result(run, c, mode_name(mode), HC_OUT_SKIPPED, reason, NULL, secs, err);
    }
    if (rc) {
        if (!message)
            message = strdup("out of memory");
        char *full = NULL;
        /* Open errors already carry "backend SPEC: " from the registry. */
        if (message && strncmp(message, "backend ", 8) == 0)
            full = strdup(message);
        else if (message && (full = malloc(strlen(spec) + strlen(message) + 16)) != NULL)
            sprintf(full, "backend %s: %s", spec, message);
        free(message);
        run->backend_error = 1;
        free(outs);
        free(cs.skipped);
        free(cs.skip_text);
        return add_result(run, c, mode_name(mode), HC_OUT_ERROR, full, NULL, secs, err);
    }
    hc_stats *st = calloc(1, sizeof *st);
    hc_err serr = {0};
    if (!st || hc_stats_compute_ex(ref, outs, n, cs.skipped, cs.has_res ? &cs.res : NULL, st, &serr)) {
        free(st);
        free_outs(outs, n);
        free(cs.skipped);
        free(cs.skip_text);
        char *m = strdup(serr.msg[0] ? serr.msg : "out of memory computing statistics");
        run->backend_error = 1;
        return add_result(run, c, mode_name(mode), HC_OUT_ERROR, m, NULL, secs, err);
    }
    free_outs(outs, n);
    free(cs.skipped);
    if (add_result(run, c, mode_name(mode), HC_OUT_CHECKED, NULL, st, secs, err)) {
        free(cs.skip_text);
        return -1;
    }
    run->items[run->n - 1].n_skipped = cs.n_skipped;
    run->items[run->n - 1].skip_message = cs.skip_text;
    run->own[run->n - 1].skip_message = cs.skip_text;
    return 0;
}

static int settings_equal(const hc_board_cfg *a, const hc_board_cfg *b)
{
    return a->nn_x_len == b->nn_x_len && a->nn_y_len == b->nn_y_len && a->policy_optimism == b->policy_optimism &&
           a->pda == b->pda && a->policy_temperature == b->policy_temperature;
}

/* Checks a loaded net against its config: digest and expected version. */
static int check_net(const hc_net_cfg *nc, const hc_net *net, const char *digest, hc_err *err)
{
    if (nc->sha256 && strcmp(nc->sha256, digest) != 0)
        return hc_err_set(err, HC_ECONFIG, "%s: %s has sha256 %s, the config says %s", nc->where, nc->model, digest,
                          nc->sha256);
    if (nc->model_version >= 0 && nc->model_version != net->model_version)
        return hc_err_set(err, HC_ECONFIG, "%s: %s is model version %d, the config says %d", nc->where, nc->model,
                          net->model_version, nc->model_version);
    return 0;
}

static int run_net_board(hc_run *run, const hc_run_options *opts, size_t ni, size_t bi, const hc_net *net,
                         const char *net_digest, hc_err *err)
{
    const hc_suite *s = run->suite;
    const hc_board_cfg *board = &s->boards[bi];
    hc_position *ps = NULL;
    size_t n = 0;
    char pos_digest[65];
    hc_err lerr = {0};
    if (load_positions(board, &ps, &n, pos_digest, &lerr) || (n == 0 && hc_err_set(&lerr, HC_EFORMAT, "%s: no positions",
                                                                                      board->positions ? board->positions : board->sgf))) {
        run->input_error = 1;
        for (size_t k = 0; k < s->n_cases; k++)
            if (s->cases[k].net == ni && s->cases[k].board == bi && add_case_errors(run, &s->cases[k], lerr.msg, err))
                return -1;
        return 0;
    }
    const pos_set set = {ps, n, pos_digest, board->positions};
    /* Cases of this net x board, grouped by the settings that change the reference. */
    hc_nnoutput *ref = NULL;
    const hc_board_cfg *ref_settings = NULL;
    int rc = 0;
    for (size_t k = 0; rc == 0 && !run->interrupted && k < s->n_cases; k++) {
        const hc_case *c = &s->cases[k];
        if (c->net != ni || c->board != bi)
            continue;
        hc_err cerr = {0};
        const hc_board_cfg *cs = &c->settings;
        int bad = 0;
        for (size_t i = 0; i < n && !bad; i++) {
            if (ps[i].x_size > cs->nn_x_len || ps[i].y_size > cs->nn_y_len ||
                (cs->require_exact_nn_len && (ps[i].x_size != cs->nn_x_len || ps[i].y_size != cs->nn_y_len))) {
                hc_err_set(&cerr, HC_ECONFIG, "%s: position %zu is %dx%d, which %s the %dx%d NN buffer", cs->where, i,
                           ps[i].x_size, ps[i].y_size, cs->require_exact_nn_len ? "must exactly fill" : "does not fit",
                           cs->nn_x_len, cs->nn_y_len);
                bad = 1;
            }
        }
        if (!bad && (!ref || !settings_equal(ref_settings, cs))) {
            free_outs(ref, n);
            ref = calloc(n, sizeof *ref);
            hc_eval_settings es = settings_of(cs);
            char what[512];
            snprintf(what, sizeof what, "%s %s reference", s->nets[ni].name, board->name);
            if (opts->progress)
                opts->progress(opts->progress_user, what, 0, n);
            double t0 = now_s();
            if (!ref || reference(run, opts, net, net_digest, &set, &es, what, ref, &cerr)) {
                free(ref);
                ref = NULL;
                if (stopped(opts)) {
                    run->interrupted = 1;
                    break;
                }
                hc_err_prefix(&cerr, "fp32 reference: ");
                bad = 1;
            } else {
                ref_settings = cs;
                if (opts->case_end)
                    opts->case_end(opts->progress_user, what, n, now_s() - t0, NULL);
            }
        }
        if (bad) {
            run->input_error = 1;
            rc = add_case_errors(run, c, cerr.msg, err);
            continue;
        }
        rc = run_case(run, opts, c, net, ps, n, ref, err);
        if (run->interrupted || stopped(opts)) {
            run->interrupted = 1;
            break;
        }
    }
    free_outs(ref, n);
    hc_positions_free(ps, n);
    return rc;
}

/* opts->only: a shallow copy of the suite whose cases array holds the selected cases. */
static int filter_cases(hc_run *run, const hc_suite *suite, const char *only, hc_err *err)
{
    const char *want[3] = {NULL, NULL, NULL};
    static const char *const keys[3] = {"net", "board", "backend"};
    char buf[1024];
    if (strlen(only) >= sizeof buf)
        return hc_err_set(err, HC_EUSAGE, "--only: filter too long");
    strcpy(buf, only);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (int i = 0; i < 3; i++)
                if (strcmp(tok, keys[i]) == 0)
                    k = i;
        }
        if (k < 0 || want[k])
            return hc_err_set(err, HC_EUSAGE, "--only \"%s\": expected net=NAME,board=NAME,backend=NAME (each at most once)",
                              only);
        want[k] = only + (eq + 1 - buf); /* the value inside only, up to the next , or the end */
    }
    size_t len[3];
    for (int k = 0; k < 3; k++)
        len[k] = want[k] ? strcspn(want[k], ",") : 0;
    run->filtered = *suite;
    run->filtered.cases = hc_calloc(suite->n_cases ? suite->n_cases : 1, sizeof(hc_case), err, "cases");
    if (!run->filtered.cases)
        return -1;
    run->filtered.n_cases = 0;
    int seen[3] = {0, 0, 0};
    for (size_t i = 0; i < suite->n_cases; i++) {
        const hc_case *c = &suite->cases[i];
        const char *names[3] = {suite->nets[c->net].name, suite->boards[c->board].name, suite->backends[c->backend].name};
        int ok = 1;
        for (int k = 0; k < 3; k++) {
            int match = !want[k] || (strlen(names[k]) == len[k] && strncmp(names[k], want[k], len[k]) == 0);
            seen[k] |= want[k] && match;
            ok = ok && match;
        }
        if (ok)
            run->filtered.cases[run->filtered.n_cases++] = *c;
    }
    for (int k = 0; k < 3; k++)
        if (want[k] && !seen[k])
            return hc_err_set(err, HC_EUSAGE, "--only: the suite has no case with %s \"%.*s\"", keys[k], (int)len[k],
                              want[k]);
    if (run->filtered.n_cases == 0)
        return hc_err_set(err, HC_EUSAGE, "--only \"%s\" selects no case of the suite", only);
    return 0;
}

hc_run *hc_run_suite(const hc_suite *suite, const hc_run_options *opts, hc_err *err)
{
    hc_run *run = hc_calloc(1, sizeof *run, err, "run");
    if (!run)
        return NULL;
    if (opts->only && *opts->only) {
        if (filter_cases(run, suite, opts->only, err)) {
            free(run->filtered.cases);
            free(run);
            return NULL;
        }
        suite = &run->filtered;
    }
    run->suite = suite;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(run->timestamp, sizeof run->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *tmp = opts->tmp_dir ? opts->tmp_dir : getenv("TMPDIR");
    snprintf(run->scratch, sizeof run->scratch, "%s/halfcheck-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(run->scratch)) {
        hc_err_set(err, HC_EIO, "%s: cannot create a scratch directory: %s", run->scratch, strerror(errno));
        free(run->filtered.cases);
        free(run);
        return NULL;
    }
    run->seed = opts->seed_given ? opts->seed : suite->has_seed ? (unsigned)suite->seed : 1u;
    unsigned suite_seed = suite->has_seed ? (unsigned)suite->seed : 1u;
    if (run->seed != suite_seed)
        snprintf(run->rerun_tail, sizeof run->rerun_tail, " --seed %u", run->seed);
    int rc = 0;
    for (size_t ni = 0; rc == 0 && ni < suite->n_nets; ni++) {
        if (stopped(opts))
            run->interrupted = 1;
        if (run->interrupted)
            break;
        int used = 0;
        for (size_t k = 0; k < suite->n_cases; k++)
            used |= suite->cases[k].net == ni;
        if (!used)
            continue;
        const hc_net_cfg *nc = &suite->nets[ni];
        hc_err lerr = {0};
        char digest[65];
        hc_net *net = NULL;
        if (hc_sha256_file(nc->model, digest, &lerr) == 0 && (net = hc_net_load(nc->model, &lerr)) != NULL &&
            check_net(nc, net, digest, &lerr) == 0) {
            hc_net_reduce_activations(net);
            run->model_version = net->model_version;
            for (size_t bi = 0; rc == 0 && !run->interrupted && bi < suite->n_boards; bi++) {
                int pair = 0;
                for (size_t k = 0; k < suite->n_cases; k++)
                    pair |= suite->cases[k].net == ni && suite->cases[k].board == bi;
                if (pair)
                    rc = run_net_board(run, opts, ni, bi, net, digest, err);
            }
        } else {
            run->input_error = 1;
            for (size_t k = 0; rc == 0 && k < suite->n_cases; k++)
                if (suite->cases[k].net == ni)
                    rc = add_case_errors(run, &suite->cases[k], lerr.msg, err);
        }
        hc_net_free(net);
        run->model_version = 0;
    }
    rmdir(run->scratch);
    run->results.suite = suite->name;
    run->results.timestamp = run->timestamp;
    run->results.version = HC_VERSION;
    run->results.items = run->items;
    run->results.n = run->n;
    run->results.interrupted = run->interrupted;
    run->results.allow_skips = opts->allow_skips || suite->allow_skips;
    if (rc) {
        hc_run_free(run);
        return NULL;
    }
    return run;
}

const hc_results *hc_run_results(const hc_run *run)
{
    return &run->results;
}

int hc_run_status(const hc_run *run)
{
    if (run->input_error)
        return 2;
    if (run->backend_error)
        return 3;
    return hc_results_status(&run->results);
}

int hc_run_interrupted(const hc_run *run)
{
    return run->interrupted;
}

int hc_run_write_reports(const hc_run *run, const char *dir, hc_err *err)
{
    if (mkdir_p(dir, err))
        return -1;
    char path[1200];
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    if (hc_junit_write(&run->results, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/results.json", dir);
    if (hc_results_write_json(&run->results, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.md", dir);
    if (hc_table_write_markdown(&run->results, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.csv", dir);
    if (hc_table_write_csv(&run->results, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/report.html", dir);
    return hc_html_write(&run->results, path, err);
}

int hc_run_cache_hits(const hc_run *run)
{
    return run->cache_hits;
}

int hc_run_cache_misses(const hc_run *run)
{
    return run->cache_misses;
}

void hc_run_free(hc_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->n; i++) {
        free(run->own[i].stats);
        free(run->own[i].tiers);
        free(run->own[i].checks);
        free(run->own[i].message);
        free(run->own[i].skip_message);
    }
    free(run->items);
    free(run->own);
    free(run->filtered.cases);
    free(run);
}
