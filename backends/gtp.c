/* gtp:[@OPTION=VALUE ...] COMMAND — a GTP engine (a real KataGo build, or any program that
 * speaks KataGo's GTP extensions) as a position backend. docs/GTP.md describes the syntax, the
 * options and which positions GTP can replay exactly.
 *
 * COMMAND is split into words by the backend (quotes and backslashes as in a shell, no other
 * shell syntax) and run with execvp; $VAR and ${VAR} are taken from the environment, and an
 * unset one makes the case skipped. The runner has already expanded {model}, {nnX}, ...
 *
 * Each position is set up from scratch: boardsize, kata-set-rules, komi, clear_board,
 * set_position with the setup stones, play for every move, then kata-raw-nn at the position's
 * symmetry, whose reply is parsed field by field. Before that the position is replayed in
 * halfcheck the way KataGo's GTP engine will replay it (setup stones make turn number = stone
 * count, a move by the player not to move restarts the history, play refuses simple-ko
 * recaptures and suicide, passes never enter the cleanup phase), and the NN inputs and legal
 * moves of that replay are compared with the record's: a position whose inputs would differ is
 * skipped with the reason instead of being evaluated as something else. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/settings.h"
#include "backends/engine_replay.h"
#include "backends/extproc.h"
#include "backends/gtp.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/go/rules.h"
#include "backends/specopts.h"

enum { LINE_MAX_BYTES = 8192, REPLY_MAX = 1 << 16 };

typedef struct gtp_backend {
    char **argv;
    char cmdline[1024]; /* for messages */
    double timeout_s, startup_timeout_s;
    double engine_temperature; /* what the template configured (@temperature) */
    int engine_handicap;       /* assumeMultipleStartingBlackMovesAreHandicap of the engine */
    const hc_net *net;
    int nx, ny;
    hc_eval_settings settings;
    hc_resolution res;
    hc_extproc proc;
    int cur_x, cur_y;      /* board size last set, 0 unknown */
    int opt_arg;           /* kata-raw-nn takes a trailing optimism: 1 yes, 0 no, -1 unknown */
    double pda_sent;       /* playoutDoublingAdvantage last set; NAN unknown */
    char profile_sent[32];
    hc_replay_cmp *cmp;    /* the record's and the replay's NN inputs, with a net */
    char *reply;
    char identity[600];    /* `name` `version` (and KataGo's kata-get-models: model, fp16), "" unknown */
    long answered;   /* positions evaluated, and the time it took (hc_engine_stats) */
    double eval_s;
    int starts;
} gtp_backend;

static void gtp_close(void *inst)
{
    gtp_backend *g = inst;
    if (!g)
        return;
    if (hc_extproc_running(&g->proc)) {
        hc_err e = {0};
        if (hc_extproc_write(&g->proc, "quit\n", 5, hc_extproc_now() + 2.0, &e) == 0)
            hc_extproc_finish(&g->proc, 2.0);
        else
            hc_extproc_stop(&g->proc);
    }
    hc_extproc_free_argv(g->argv);
    hc_replay_cmp_free(g->cmp);
    free(g->reply);
    free(g);
}

/* Sends one command and reads its reply into g->reply (the text after "= " or "? ", lines
 * joined by '\n'). Returns 1 for a success reply, 0 for an error reply, -1 with err on a
 * protocol failure (the engine is stopped then). */
static int command(gtp_backend *g, const char *cmd, double timeout, hc_err *err)
{
    size_t len = strlen(cmd);
    char *line = malloc(len + 2);
    if (!line)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    memcpy(line, cmd, len);
    line[len] = '\n';
    int rc = hc_extproc_write(&g->proc, line, len + 1, hc_extproc_now() + timeout, err);
    free(line);
    if (rc)
        return -1;
    double deadline = hc_extproc_now() + timeout;
    char buf[LINE_MAX_BYTES];
    long n;
    do {
        n = hc_extproc_read_line(&g->proc, buf, sizeof buf, deadline, err);
        if (n < 0)
            return -1;
    } while (n == 0);
    if (buf[0] != '=' && buf[0] != '?') {
        hc_extproc_stop(&g->proc);
        return hc_err_set(err, HC_EBACKEND, "malformed reply: expected a line starting with '=' or '?', got \"%.80s\"",
                          buf);
    }
    int ok = buf[0] == '=';
    const char *body = buf + 1;
    while (*body >= '0' && *body <= '9') /* a command id, if the engine echoes one */
        body++;
    if (*body == ' ')
        body++;
    size_t used = 0;
    for (;;) {
        size_t bl = strlen(body);
        if (used + bl + 2 > REPLY_MAX) {
            hc_extproc_stop(&g->proc);
            return hc_err_set(err, HC_EBACKEND, "reply longer than %d bytes", REPLY_MAX);
        }
        if (used)
            g->reply[used++] = '\n';
        memcpy(g->reply + used, body, bl);
        used += bl;
        g->reply[used] = '\0';
        n = hc_extproc_read_line(&g->proc, buf, sizeof buf, deadline, err);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        body = buf;
    }
    return ok;
}

/* A JSON string field's value in text (KataGo's kata-get-models reply), copied into out. */
static void json_field(const char *text, const char *key, char *out, size_t len)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    size_t n = *p == '"' ? strcspn(++p, "\"") : strcspn(p, ",}");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/* What the engine says it is (provenance): `name` (in g->reply) and `version`, standard GTP,
 * then KataGo's kata-get-models where the engine knows it (the model it loaded and its fp16
 * mode). An engine that answers `version` or kata-get-models with an error keeps what it said. */
static void engine_identity(gtp_backend *g, hc_err *err)
{
    char name[128], version[256] = "", model[200] = "", fp16[64] = "";
    snprintf(name, sizeof name, "%.120s", g->reply);
    hc_err e = {0};
    if (command(g, "version", g->timeout_s, &e) == 1)
        snprintf(version, sizeof version, "%.250s", g->reply);
    if (e.code == HC_OK && command(g, "kata-get-models", g->timeout_s, &e) == 1) {
        json_field(g->reply, "internalName", model, sizeof model);
        json_field(g->reply, "usingFP16", fp16, sizeof fp16);
    }
    (void)err; /* an engine that cannot say is no error: the evaluation will find a dead engine */
    int o = snprintf(g->identity, sizeof g->identity, "%s%s%s", name, *version ? " " : "", version);
    if (*model && o < (int)sizeof g->identity)
        o += snprintf(g->identity + o, sizeof g->identity - (size_t)o, ", model %s", model);
    if (*fp16 && o < (int)sizeof g->identity)
        snprintf(g->identity + o, sizeof g->identity - (size_t)o, ", usingFP16 %s", fp16);
}

static const char *gtp_identity(void *inst)
{
    return ((gtp_backend *)inst)->identity;
}

static int start_engine(gtp_backend *g, hc_err *err)
{
    g->cur_x = g->cur_y = 0;
    g->pda_sent = NAN;
    g->profile_sent[0] = '\0';
    if (hc_extproc_start(&g->proc, g->argv, err))
        return -1;
    g->starts++;
    /* The first reply comes once the engine has loaded its net (and maybe tuned). */
    int r = command(g, "name", g->startup_timeout_s, err);
    if (r < 0)
        return hc_err_prefix(err, "starting the engine (GTP `name`): ");
    if (r == 0) {
        hc_extproc_stop(&g->proc);
        return hc_err_set(err, HC_EBACKEND, "starting the engine: `name` answered an error: %.200s", g->reply);
    }
    engine_identity(g, err);
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && *end == '\0';
}

/* What a gtp: spec says: its @options (with their defaults) and the command. */
typedef struct gtp_opts {
    double timeout_s, startup_timeout_s, temperature;
    int handicap;
    char *cmd;
} gtp_opts;

static void gtp_free_opts(void *opts)
{
    gtp_opts *go = opts;
    if (go)
        free(go->cmd);
    free(go);
}

/* The spec's @options and command, without starting the engine. */
static void *gtp_parse(const char *params, hc_err *err)
{
    gtp_opts *go = hc_calloc(1, sizeof *go, err, "gtp options");
    if (!go)
        return NULL;
    go->timeout_s = 60;
    go->startup_timeout_s = 600;
    go->temperature = 1;
    go->handicap = 1;
    const hc_specopt opts[] = {
        {.name = "timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &go->timeout_s},
        {.name = "startup-timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &go->startup_timeout_s},
        {.name = "temperature", .hint = "T", .kind = HC_SPECOPT_POSITIVE, .num = &go->temperature},
        {.name = "handicap", .hint = "0|1", .kind = HC_SPECOPT_01, .flag = &go->handicap},
    };
    if (!(go->cmd = hc_specopts_command("gtp", params, opts, sizeof opts / sizeof opts[0], err))) {
        gtp_free_opts(go);
        return NULL;
    }
    return go;
}

static void *gtp_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const gtp_opts *go = opts;
    const hc_net *net = o->net;
    int nx = o->nx, ny = o->ny;
    gtp_backend *g = hc_calloc(1, sizeof *g, err, "gtp backend");
    if (!g)
        return NULL;
    g->proc.pid = -1;
    g->proc.to_fd = g->proc.from_fd = g->proc.err_fd = -1;
    g->timeout_s = go->timeout_s;
    g->startup_timeout_s = go->startup_timeout_s;
    g->engine_temperature = go->temperature;
    g->engine_handicap = go->handicap;
    g->net = net;
    g->nx = nx;
    g->ny = ny;
    g->settings = hc_eval_settings_default(nx, ny);
    g->opt_arg = -1;
    g->res = (hc_resolution){.winrate = 5e-7, .score = 5e-4, .policy = 5e-7, .ownership = 5e-8};
    snprintf(g->cmdline, sizeof g->cmdline, "%s", go->cmd);
    g->argv = hc_extproc_split(go->cmd, err);
    if (!g->argv)
        goto fail;
    g->reply = hc_malloc(REPLY_MAX, err, "GTP reply");
    if (!g->reply)
        goto fail;
    if (net && !(g->cmp = hc_replay_cmp_new(net, nx, ny, err)))
        goto fail;
    if (start_engine(g, err))
        goto fail;
    return g;
fail:
    gtp_close(g);
    return NULL;
}

static int gtp_configure(void *inst, const hc_eval_settings *s, hc_err *err)
{
    gtp_backend *g = inst;
    if (fabs((double)s->policy_temperature - g->engine_temperature) > 1e-6)
        return hc_err_set(err, HC_EBACKEND,
                          HC_BACKEND_SKIP "policy temperature %g: GTP cannot set nnPolicyTemperature; pass "
                          "-override-config nnPolicyTemperature=%g in the command and declare it with @temperature=%g",
                          (double)s->policy_temperature, (double)s->policy_temperature,
                          (double)s->policy_temperature);
    g->settings = *s;
    return 0;
}

static const hc_resolution *gtp_resolution(void *inst)
{
    return &((gtp_backend *)inst)->res;
}

/* --- the replay KataGo's GTP engine will do ------------------------------------------------- */

static const hc_replay_words GTP_WORDS = {
    .encore = "GTP has no command that starts a game in the cleanup phase",
    .board = "GTP boardsize takes",
    .komi = "GTP's komi takes",
    .stones = ": GTP set_position refuses them",
};

/* Why the position cannot be replayed exactly (into why), or "" when it can; *color_arg says
 * whether kata-raw-nn needs the player argument. -1 with err on an internal failure. */
static int check_replay(gtp_backend *g, const hc_position *p, int *color_arg, char *why, size_t len, hc_err *err)
{
    *color_arg = 0;
    hc_rules rules;
    hc_board b;
    if (hc_replay_start(p, &GTP_WORDS, &rules, &b, why, len, err))
        return -1;
    if (why[0])
        return 0;
    int nst = p->n_initial_black + p->n_initial_white;
    hc_history *gh = hc_history_new(&b, HC_BLACK, &rules, 0, false, err);
    if (!gh)
        return -1;
    hc_history_set_initial_turn_number(gh, nst);
    hc_history_set_assume_multiple_starting_black_moves_are_handicap(gh, g->engine_handicap);
    int rc = 0, pla = HC_BLACK;
    for (int i = 0; i < p->n_moves && rc == 0 && !why[0]; i++) {
        const hc_move *m = &p->moves[i];
        int pass = m->x < 0;
        hc_loc loc = pass ? HC_PASS_LOC : hc_loc_of(m->x, m->y, p->x_size);
        char v[8];
        hc_replay_vertex(m->x, m->y, p->y_size, v, sizeof v);
        if (!pass && !hc_board_is_legal(hc_history_board(gh), loc, m->pla, rules.multi_stone_suicide_legal)) {
            snprintf(why, len, "move %d (%s %s) is a ko recapture, a suicide or on a stone: GTP play refuses it",
                     i + 1, m->pla == HC_BLACK ? "B" : "W", v);
            break;
        }
        if (m->pla != pla && hc_replay_restart_history(gh, m->pla, g->engine_handicap, err)) {
            rc = -1;
            break;
        }
        if (pass && rules.scoring_rule == HC_SCORING_TERRITORY && hc_history_pass_would_end_phase(gh, m->pla)) {
            snprintf(why, len, "move %d (%s pass) ends the play phase under territory scoring: GTP play prevents "
                     "the cleanup phase (preventCleanupPhase)", i + 1, m->pla == HC_BLACK ? "B" : "W");
            break;
        }
        if (hc_history_play_tolerant(gh, m->x, m->y, m->pla, err))
            rc = -1;
        pla = hc_opp(m->pla);
    }
    if (rc == 0 && !why[0] && p->next_pla != pla) {
        *color_arg = 1;
        rc = hc_replay_restart_history(gh, p->next_pla, g->engine_handicap, err);
    }
    hc_replay_diff d;
    if (rc == 0 && !why[0] && g->cmp && (rc = hc_replay_compare(g->cmp, &g->settings, p, gh, &d, err)) == 0) {
        if (d.kind == HC_REPLAY_SPATIAL)
            snprintf(why, len, "GTP's replay gives different NN inputs (spatial channel %zu differs: "
                     "%s) than the record", d.channel,
                     p->n_moves && p->initial_pla != HC_BLACK ? "the record starts with white to move"
                     : *color_arg ? "kata-raw-nn with a colour restarts the move history"
                     : "ko, pass or move history state");
        else if (d.kind == HC_REPLAY_GLOBAL)
            snprintf(why, len, "GTP's replay gives different NN inputs (global channel %zu: %g in the "
                     "record, %g after GTP; komi, handicap bonus, pass or encore state)",
                     d.channel, d.record, d.replay);
        else if (d.kind == HC_REPLAY_LEGAL)
            snprintf(why, len, "GTP's replay gives different legal moves (superko state) than the record");
    }
    hc_history_free(gh);
    return rc;
}

/* --- the kata-raw-nn reply -------------------------------------------------------------------- */

static int parse_num(const char *tok, double *v)
{
    return parse_double(tok, v);
}

/* Next line of the reply (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **cur)
{
    if (!*cur)
        return NULL;
    char *s = *cur, *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *cur = nl + 1;
    } else {
        *cur = NULL;
    }
    return s;
}

static int malformed(hc_err *err, int line, const char *text, const char *what)
{
    return hc_err_set(err, HC_EBACKEND, "malformed kata-raw-nn reply, line %d \"%.60s\": %s", line, text ? text : "",
                      what);
}

int hc_gtp_parse_raw_nn(char *reply, int symmetry, int x_size, int y_size, double policy_res, hc_nnoutput *o,
                        hc_err *err)
{
    static const char *keys[] = {"whiteWin", "whiteLoss", "noResult", "whiteLead", "whiteScoreSelfplay",
                                 "whiteScoreSelfplaySq", "varTimeLeft", "shorttermWinlossError",
                                 "shorttermScoreError"};
    enum { NKEYS = 9 };
    double vals[NKEYS];
    int have[NKEYS] = {0};
    if (x_size < 1 || y_size < 1 || x_size > o->nn_x_len || y_size > o->nn_y_len || !o->policy_probs)
        return hc_err_set(err, HC_EINTERNAL, "kata-raw-nn: a %dx%d board in a %dx%d buffer", x_size, y_size,
                          o->nn_x_len, o->nn_y_len);
    char *cur = reply, *line;
    int ln = 1;
    line = next_line(&cur);
    double sym;
    if (!line || strncmp(line, "symmetry ", 9) != 0 || !parse_num(line + 9, &sym) || sym != symmetry)
        return malformed(err, ln, line, "expected \"symmetry N\" with the symmetry asked for");
    for (;;) {
        line = next_line(&cur);
        ln++;
        if (!line)
            return malformed(err, ln, "", "ended before \"policy\"");
        if (strcmp(line, "policy") == 0)
            break;
        char *sp = strchr(line, ' ');
        int k = -1;
        for (int i = 0; sp && i < NKEYS; i++)
            if ((size_t)(sp - line) == strlen(keys[i]) && strncmp(line, keys[i], (size_t)(sp - line)) == 0)
                k = i;
        if (k < 0)
            return malformed(err, ln, line, "unknown field");
        if (have[k])
            return malformed(err, ln, line, "field given twice");
        if (!parse_num(sp + 1, &vals[k]))
            return malformed(err, ln, line, "not a number");
        have[k] = 1;
    }
    for (int i = 0; i < NKEYS; i++)
        if (!have[i]) {
            char what[80];
            snprintf(what, sizeof what, "field %s missing before \"policy\"", keys[i]);
            return malformed(err, ln, line, what);
        }
    const int nx = o->nn_x_len, ny = o->nn_y_len;
    for (int i = 0; i < nx * ny; i++) {
        o->policy_probs[i] = -1.0f;
        if (o->white_owner_map)
            o->white_owner_map[i] = 0.0f;
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            line = next_line(&cur);
            ln++;
            if (!line || strncmp(line, "policyPass ", 11) != 0)
                return malformed(err, ln, line, "expected \"policyPass P\"");
            char *t = strtok(line + 11, " ");
            double v;
            if (!t)
                return malformed(err, ln, line, "no pass value");
            if (strcmp(t, "NAN") == 0)
                v = -1;
            else if (!parse_num(t, &v))
                return malformed(err, ln, t, "not a number");
            if (strtok(NULL, " "))
                return malformed(err, ln, line, "more than one pass value");
            if (v == 0.0)
                v = 0.5 * policy_res;
            o->policy_probs[nx * ny] = (float)v;
            line = next_line(&cur);
            ln++;
            if (!line || strcmp(line, "whiteOwnership") != 0)
                return malformed(err, ln, line, "expected \"whiteOwnership\"");
        }
        for (int y = 0; y < y_size; y++) {
            line = next_line(&cur);
            ln++;
            if (!line)
                return malformed(err, ln, "", pass ? "ownership grid cut short" : "policy grid cut short");
            char *save = NULL, *t = strtok_r(line, " ", &save);
            for (int x = 0; x < x_size; x++, t = strtok_r(NULL, " ", &save)) {
                double v;
                if (!t)
                    return malformed(err, ln, "", "row has fewer values than the board's width");
                if (pass == 0 && strcmp(t, "NAN") == 0)
                    v = -1; /* KataGo prints illegal moves so */
                else if (!parse_num(t, &v))
                    return malformed(err, ln, t, "not a number");
                /* A legal move printed as 0 had a probability below the print resolution:
                 * take the middle of that interval, so that KL stays finite and within it. */
                if (pass == 0 && v == 0.0)
                    v = 0.5 * policy_res;
                if (pass == 0)
                    o->policy_probs[y * nx + x] = (float)v;
                else if (o->white_owner_map)
                    o->white_owner_map[y * nx + x] = (float)v;
            }
            if (t)
                return malformed(err, ln, t, "row has more values than the board's width");
        }
    }
    line = next_line(&cur);
    if (line && *line)
        return malformed(err, ln + 1, line, "unexpected text after the ownership grid");
    o->white_win_prob = (float)vals[0];
    o->white_loss_prob = (float)vals[1];
    o->white_no_result_prob = (float)vals[2];
    o->white_lead = (float)vals[3];
    o->white_score_mean = (float)vals[4];
    o->white_score_mean_sq = (float)vals[5];
    o->var_time_left = (float)vals[6];
    o->shortterm_winloss_error = (float)vals[7];
    o->shortterm_score_error = (float)vals[8];
    return 0;
}

static int parse_raw_nn(gtp_backend *g, const hc_position *p, hc_nnoutput *o, hc_err *err)
{
    if (hc_gtp_parse_raw_nn(g->reply, p->symmetry, p->x_size, p->y_size, g->res.policy, o, err))
        return -1;
    o->policy_optimism_used = (float)g->settings.policy_optimism;
    return 0;
}

/* --- evaluation ------------------------------------------------------------------------------- */

/* A setup command: an error reply means the engine cannot take this position (skip). */
static int setup(gtp_backend *g, const char *cmd, const char *why_prefix, hc_err *err)
{
    int r = command(g, cmd, g->timeout_s, err);
    if (r < 0)
        return hc_err_prefix(err, "GTP `%.100s`: ", cmd);
    if (r == 0)
        return hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "%sthe engine answered `%.100s` with \"%.200s\"",
                          why_prefix, cmd, g->reply);
    return 0;
}

static int eval_one(gtp_backend *g, const hc_position *p, hc_nnoutput *o, hc_err *err)
{
    char why[400], cmd[8192];
    int color_arg;
    if (check_replay(g, p, &color_arg, why, sizeof why, err))
        return -1;
    if (why[0])
        return hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "%s", why);
    if (!hc_extproc_running(&g->proc) && start_engine(g, err))
        return hc_err_prefix(err, "restarting the engine: ");
    if (p->x_size != g->cur_x || p->y_size != g->cur_y) {
        if (p->x_size == p->y_size)
            snprintf(cmd, sizeof cmd, "boardsize %d", p->x_size);
        else
            snprintf(cmd, sizeof cmd, "rectangular_boardsize %d %d", p->x_size, p->y_size);
        if (setup(g, cmd, "board size: ", err))
            return -1;
        g->cur_x = p->x_size;
        g->cur_y = p->y_size;
    }
    if (g->settings.playout_doubling_advantage != g->pda_sent) {
        snprintf(cmd, sizeof cmd, "kata-set-param playoutDoublingAdvantage %.17g", g->settings.playout_doubling_advantage);
        int r = command(g, cmd, g->timeout_s, err);
        if (r < 0)
            return hc_err_prefix(err, "GTP `%s`: ", cmd);
        /* An engine without kata-set-param runs at its config's PDA, 0 unless the config sets it. */
        if (r == 0 && g->settings.playout_doubling_advantage != 0)
            return hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "playout doubling advantage %g: the engine answered "
                              "`%s` with \"%.200s\"", g->settings.playout_doubling_advantage, cmd, g->reply);
        g->pda_sent = g->settings.playout_doubling_advantage;
    }
    if (g->net && g->net->num_input_meta_c > 0 && strcmp(g->profile_sent, g->settings.meta_profile) != 0) {
        snprintf(cmd, sizeof cmd, "kata-set-param humanSLProfile %s", g->settings.meta_profile);
        if (setup(g, cmd, "human-SL profile: ", err))
            return -1;
        snprintf(g->profile_sent, sizeof g->profile_sent, "%s", g->settings.meta_profile);
    }
    hc_rules rules;
    char rs[HC_RULES_STR_MAX];
    if (hc_rules_parse(p->rules, &rules, err) || hc_rules_format_no_komi(&rules, rs, sizeof rs) < 0)
        return -1;
    snprintf(cmd, sizeof cmd, "kata-set-rules %s", rs);
    if (setup(g, cmd, "rules: ", err))
        return -1;
    snprintf(cmd, sizeof cmd, "komi %g", (double)p->komi);
    if (setup(g, cmd, "komi: ", err))
        return -1;
    if (setup(g, "clear_board", "", err))
        return -1;
    if (p->n_initial_black + p->n_initial_white > 0) {
        size_t o2 = (size_t)snprintf(cmd, sizeof cmd, "set_position");
        for (int c = 0; c < 2; c++) {
            const hc_xy *st = c ? p->initial_white : p->initial_black;
            int n = c ? p->n_initial_white : p->n_initial_black;
            for (int i = 0; i < n && o2 < sizeof cmd - 16; i++) {
                char v[8];
                hc_replay_vertex(st[i].x, st[i].y, p->y_size, v, sizeof v);
                o2 += (size_t)snprintf(cmd + o2, sizeof cmd - o2, " %c %s", c ? 'W' : 'B', v);
            }
        }
        if (setup(g, cmd, "setup stones: ", err))
            return -1;
    }
    for (int i = 0; i < p->n_moves; i++) {
        char v[8];
        hc_replay_vertex(p->moves[i].x, p->moves[i].y, p->y_size, v, sizeof v);
        snprintf(cmd, sizeof cmd, "play %c %s", p->moves[i].pla == HC_BLACK ? 'B' : 'W', v);
        char pre[64];
        snprintf(pre, sizeof pre, "move %d: ", i + 1);
        if (setup(g, cmd, pre, err))
            return -1;
    }
    const char *color = color_arg ? (p->next_pla == HC_BLACK ? "b " : "w ") : "";
    if (g->opt_arg == 0 && g->settings.policy_optimism != 0)
        return hc_err_set(err, HC_EBACKEND,
                          HC_BACKEND_SKIP "policy optimism %g: the engine's kata-raw-nn takes no policy optimism "
                          "argument (a KataGo older than that argument)", g->settings.policy_optimism);
    for (;;) {
        if (g->opt_arg != 0)
            snprintf(cmd, sizeof cmd, "kata-raw-nn %s%d %.17g", color, p->symmetry, g->settings.policy_optimism);
        else
            snprintf(cmd, sizeof cmd, "kata-raw-nn %s%d", color, p->symmetry);
        int r = command(g, cmd, g->timeout_s, err);
        if (r < 0)
            return hc_err_prefix(err, "GTP `%s`: ", cmd);
        if (r == 0) {
            if (g->opt_arg == -1 && g->settings.policy_optimism == 0) {
                g->opt_arg = 0; /* an engine older than kata-raw-nn's optimism argument */
                continue;
            }
            if (color_arg || g->settings.policy_optimism != 0)
                return hc_err_set(err, HC_EBACKEND,
                                  HC_BACKEND_SKIP "the engine refused `%s` (%.200s): it needs a kata-raw-nn that "
                                  "takes %s", cmd, g->reply,
                                  color_arg ? "a player to move" : "a policy optimism argument");
            hc_extproc_stop(&g->proc);
            return hc_err_set(err, HC_EBACKEND, "GTP `%s` answered an error: %.200s", cmd, g->reply);
        }
        if (g->opt_arg == -1)
            g->opt_arg = 1;
        break;
    }
    if (parse_raw_nn(g, p, o, err)) {
        hc_extproc_stop(&g->proc);
        return hc_err_prefix(err, "GTP `%s`: ", cmd);
    }
    return 0;
}

static int gtp_eval_one_call(gtp_backend *g, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err);

static int gtp_eval_positions(void *inst, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err)
{
    gtp_backend *g = inst;
    double t0 = hc_extproc_now();
    int rc = gtp_eval_one_call(g, n, pos, outs, err);
    g->eval_s += hc_extproc_now() - t0;
    if (rc == 0)
        g->answered += n;
    return rc;
}

/* Quits the engine as close does, then reports what it cost. */
static int gtp_finish(void *inst, hc_engine_stats *st, hc_err *err)
{
    (void)err;
    gtp_backend *g = inst;
    if (hc_extproc_running(&g->proc)) {
        hc_err e = {0};
        if (hc_extproc_write(&g->proc, "quit\n", 5, hc_extproc_now() + 2.0, &e) == 0)
            hc_extproc_finish(&g->proc, 10.0);
        else
            hc_extproc_stop(&g->proc);
    }
    *st = hc_engine_stats_unknown();
    st->positions = g->answered;
    st->eval_seconds = g->eval_s;
    st->engines = g->starts;
    if (g->starts)
        st->peak_rss_kib = hc_extproc_children_peak_rss_kib();
    /* kata-raw-nn evaluates one position per command: never a batch. */
    st->nn_rows = st->nn_batches = g->answered;
    st->avg_batch = g->answered > 0 ? 1.0 : -1;
    st->max_batch = 1;
    return 0;
}

static int gtp_eval_one_call(gtp_backend *g, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err)
{
    for (int i = 0; i < n; i++) {
        if (outs[i].nn_x_len != g->nx || outs[i].nn_y_len != g->ny || !outs[i].policy_probs)
            return hc_err_set(err, HC_EINTERNAL, "gtp: output %d was not initialised for the %dx%d buffer", i, g->nx,
                              g->ny);
        if (pos[i].x_size > g->nx || pos[i].y_size > g->ny)
            return hc_err_set(err, HC_EUSAGE, "board %dx%d does not fit the %dx%d NN buffer", pos[i].x_size,
                              pos[i].y_size, g->nx, g->ny);
        if (eval_one(g, &pos[i], &outs[i], err)) {
            /* Any failure but a skip leaves the engine in an unknown state: restart it next time. */
            if (!strstr(err->msg, HC_BACKEND_SKIP))
                hc_extproc_stop(&g->proc);
            return hc_err_prefix(err, "gtp (position index %ld): ", pos[i].index);
        }
    }
    return 0;
}

static const hc_backend_ops gtp_ops = {
    .eval_positions = gtp_eval_positions,
    .resolution = gtp_resolution,
    .configure = gtp_configure,
    .identity = gtp_identity,
    .finish = gtp_finish,
    .close = gtp_close,
};

const hc_backend_kind hc_backend_gtp = {
    .name = "gtp",
    .syntax = "gtp:[@timeout=S @startup-timeout=S @temperature=T @handicap=0|1] CMD",
    .summary = "runs a GTP engine (e.g. KataGo) and reads kata-raw-nn; $VAR from the environment, unset means skipped",
    .caps = {.shape = HC_BACKEND_POSITION, .never_batches = 1, .resolution = 1, .engine = 1},
    .parse = gtp_parse,
    .free_opts = gtp_free_opts,
    .open = gtp_open,
    .ops = &gtp_ops,
};
