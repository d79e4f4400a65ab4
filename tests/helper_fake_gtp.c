/* A fake GTP engine for tests/test_gtp.c: KataGo's GTP commands that the gtp: backend sends,
 * answered with halfcheck's own ref32 evaluation printed in kata-raw-nn's exact format, and
 * misbehaviour on demand.
 *
 *   helper_fake_gtp MODEL [-nn X Y] [-temperature T] [-no-optimism-arg]
 *                   [-misbehave garbage|crash|hang|nan|short|noprefix|die-at-start] [-once FILE]
 *
 * -nn: the NN buffer (default: the board's size). -misbehave acts on kata-raw-nn (die-at-start at
 * startup); with -once FILE only while FILE does not exist (it is created then), so a restarted
 * engine behaves. The position is rebuilt from the GTP state as a positions record (setup
 * stones, black first, turn number = stone count, the moves) and evaluated with
 * hc_eval_positions on ref32; a play is checked for legality the way KataGo's play does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "lib/testlib.h"
#include "harness/eval/evaluate.h"
#include "harness/go/history.h"
#include "harness/go/rules.h"

typedef struct fake {
    hc_net *net;
    hc_backend ref;
    int ref_x, ref_y; /* the buffer ref was opened for */
    int nn_x, nn_y, x, y;
    hc_rules rules;
    float komi;
    hc_xy stones[2][400];
    int n_stones[2];
    hc_move moves[2000];
    int n_moves;
    hc_history *h; /* for play's legality */
    double pda, temperature;
    int no_opt_arg;
    const char *misbehave, *once;
} fake;

static void reply(const char *s)
{
    printf("= %s\n\n", s);
    fflush(stdout);
}

static void fail(const char *s)
{
    printf("? %s\n\n", s);
    fflush(stdout);
}

static int rebuild(fake *f)
{
    hc_err err = {0};
    hc_board b;
    if (hc_board_init(&b, f->x, f->y, &err))
        return -1;
    hc_placement pl[800];
    int n = 0;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < f->n_stones[c]; i++)
            pl[n++] = (hc_placement){hc_loc_of(f->stones[c][i].x, f->stones[c][i].y, f->x), c ? HC_WHITE : HC_BLACK};
    if (!hc_board_set_stones_fail_if_no_libs(&b, pl, n))
        return -1;
    hc_history_free(f->h);
    f->h = hc_history_new(&b, HC_BLACK, &f->rules, 0, false, &err);
    if (!f->h)
        return -1;
    for (int i = 0; i < f->n_moves; i++)
        hc_history_play_tolerant(f->h, f->moves[i].x, f->moves[i].y, f->moves[i].pla, &err);
    return 0;
}

static int parse_vertex(const fake *f, const char *s, int *x, int *y)
{
    static const char cols[] = "ABCDEFGHJKLMNOPQRSTUVWXYZ";
    if (strcmp(s, "pass") == 0 || strcmp(s, "PASS") == 0) {
        *x = *y = -1;
        return 0;
    }
    const char *c = strchr(cols, s[0] >= 'a' && s[0] <= 'z' ? s[0] - 32 : s[0]);
    if (!c || !s[0])
        return -1;
    int row = atoi(s + 1);
    *x = (int)(c - cols);
    *y = f->y - row;
    return *x < f->x && row >= 1 && row <= f->y ? 0 : -1;
}

static int parse_color(const char *s)
{
    if (!strcmp(s, "b") || !strcmp(s, "B") || !strcmp(s, "black"))
        return HC_BLACK;
    if (!strcmp(s, "w") || !strcmp(s, "W") || !strcmp(s, "white"))
        return HC_WHITE;
    return 0;
}

static void raw_nn(fake *f, char **tok, int nt)
{
    int i = 0, pla = f->n_moves ? hc_opp(f->moves[f->n_moves - 1].pla) : HC_BLACK, color_given = 0;
    if (i < nt && parse_color(tok[i])) {
        pla = parse_color(tok[i++]);
        color_given = 1;
    }
    if (i >= nt) {
        fail("Expected a symmetry argument 'all' or index [0-7]");
        return;
    }
    int sym = atoi(tok[i++]);
    double opt = 0;
    if (i < nt) {
        if (f->no_opt_arg) {
            fail("Unexpected extra argument");
            return;
        }
        opt = atof(tok[i++]);
    }
    if (color_given && f->n_moves > 0) {
        fail("fake engine: a colour after moves is not supported");
        return;
    }
    hc_position p;
    memset(&p, 0, sizeof p);
    p.x_size = f->x;
    p.y_size = f->y;
    hc_rules r = f->rules;
    r.komi = f->komi;
    hc_rules_format(&r, p.rules, sizeof p.rules);
    p.komi = f->komi;
    p.initial_black = f->stones[0];
    p.n_initial_black = f->n_stones[0];
    p.initial_white = f->stones[1];
    p.n_initial_white = f->n_stones[1];
    p.initial_pla = color_given ? pla : HC_BLACK;
    p.initial_turn_number = f->n_stones[0] + f->n_stones[1];
    p.assume_multiple_starting_black_moves_are_handicap = true;
    p.moves = f->moves;
    p.n_moves = f->n_moves;
    p.next_pla = pla;
    p.symmetry = sym;
    int nx = f->nn_x ? f->nn_x : f->x, ny = f->nn_y ? f->nn_y : f->y;
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    s.policy_optimism = opt;
    s.playout_doubling_advantage = f->pda;
    s.policy_temperature = (float)f->temperature;
    hc_nnoutput o;
    memset(&o, 0, sizeof o);
    hc_err err = {0};
    if (f->ref.kind && (f->ref_x != nx || f->ref_y != ny))
        hc_backend_close(&f->ref);
    if ((!f->ref.kind && hc_backend_open_with(&f->ref, &(hc_backend_open_opts){.spec = "ref32", .net = f->net,
                                                                               .nx = nx, .ny = ny, .max_batch = 1,
                                                                               .threads = 1}, &err)) ||
        hc_eval_positions(&f->ref, f->net, &p, 1, NULL, 1, &s, &o, NULL, NULL, NULL, NULL, &err)) {
        fail(err.msg);
        return;
    }
    f->ref_x = nx;
    f->ref_y = ny;
    const char *mb = hc_misbehave_now(f->misbehave, f->once) ? f->misbehave : "";
    static char out[1 << 16];
    size_t n = 0;
#define OUT(...) n += (size_t)snprintf(out + n, sizeof out - n, __VA_ARGS__)
    OUT("symmetry %d\n", sym);
    if (!strcmp(mb, "garbage"))
        OUT("this line is not a field\n");
    if (!strcmp(mb, "nan"))
        OUT("whiteWin %.6f\n", (double)NAN);
    else
        OUT("whiteWin %.6f\n", (double)o.white_win_prob);
    OUT("whiteLoss %.6f\n", (double)o.white_loss_prob);
    OUT("noResult %.6f\n", (double)o.white_no_result_prob);
    OUT("whiteLead %.3f\n", (double)o.white_lead);
    OUT("whiteScoreSelfplay %.3f\n", (double)o.white_score_mean);
    OUT("whiteScoreSelfplaySq %.3f\n", (double)o.white_score_mean_sq);
    OUT("varTimeLeft %.3f\n", (double)o.var_time_left);
    OUT("shorttermWinlossError %.3f\n", (double)o.shortterm_winloss_error);
    OUT("shorttermScoreError %.3f\n", (double)o.shortterm_score_error);
    size_t half = n;
    OUT("policy\n");
    for (int y = 0; y < f->y; y++) {
        for (int x = 0; x < f->x; x++) {
            float pr = o.policy_probs[y * nx + x];
            if (pr < 0)
                OUT("    NAN ");
            else
                OUT("%8.6f ", (double)pr);
        }
        OUT("\n");
    }
    float pp = o.policy_probs[nx * ny];
    if (pp < 0)
        OUT("policyPass     NAN \n");
    else
        OUT("policyPass %8.6f \n", (double)pp);
    if (strcmp(mb, "short") != 0) {
        OUT("whiteOwnership\n");
        for (int y = 0; y < f->y; y++) {
            for (int x = 0; x < f->x; x++)
                OUT("%9.7f ", (double)o.white_owner_map[y * nx + x]);
            OUT("\n");
        }
    }
    while (n > 0 && out[n - 1] == '\n') /* KataGo trims the reply */
        out[--n] = '\0';
    hc_nnoutput_free(&o);
    if (!strcmp(mb, "crash") || !strcmp(mb, "hang")) {
        printf("= %.*s", (int)half, out);
        fflush(stdout);
        if (!strcmp(mb, "crash")) {
            fprintf(stderr, "fake engine: crashing on purpose\n");
            abort();
        }
        for (;;)
            pause();
    }
    if (!strcmp(mb, "noprefix")) {
        printf("%s\n\n", out);
        fflush(stdout);
        return;
    }
    reply(out);
}

int main(int argc, char **argv)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.temperature = 1;
    f.x = f.y = 19;
    f.komi = 7.5f;
    f.rules = hc_rules_default();
    const char *model = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-nn") && i + 2 < argc) {
            f.nn_x = atoi(argv[++i]);
            f.nn_y = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-temperature") && i + 1 < argc)
            f.temperature = atof(argv[++i]);
        else if (!strcmp(argv[i], "-no-optimism-arg"))
            f.no_opt_arg = 1;
        else if (!strcmp(argv[i], "-misbehave") && i + 1 < argc)
            f.misbehave = argv[++i];
        else if (!strcmp(argv[i], "-once") && i + 1 < argc)
            f.once = argv[++i];
        else if (!model)
            model = argv[i];
        else {
            fprintf(stderr, "usage: helper_fake_gtp MODEL [options]\n");
            return 2;
        }
    }
    if (f.misbehave && !strcmp(f.misbehave, "die-at-start") && hc_misbehave_now(f.misbehave, f.once)) {
        fprintf(stderr, "fake engine: cannot load the model (dying at start on purpose)\n");
        return 3;
    }
    hc_err err = {0};
    f.net = model ? hc_net_load(model, &err) : NULL;
    if (!f.net) {
        fprintf(stderr, "fake engine: %s\n", model ? err.msg : "no model given");
        return 1;
    }
    hc_net_reduce_activations(f.net);
    if (rebuild(&f))
        return 1;
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        char *tok[1000];
        int nt = 0;
        for (char *t = strtok(line, " \t\r\n"); t && nt < 1000; t = strtok(NULL, " \t\r\n"))
            tok[nt++] = t;
        if (nt == 0)
            continue;
        const char *c = tok[0];
        char **a = tok + 1;
        int na = nt - 1;
        if (!strcmp(c, "name"))
            reply("fake_gtp");
        else if (!strcmp(c, "version"))
            reply("0");
        else if (!strcmp(c, "protocol_version"))
            reply("2");
        else if (!strcmp(c, "quit")) {
            reply("");
            break;
        } else if (!strcmp(c, "boardsize") || !strcmp(c, "rectangular_boardsize")) {
            int x = na >= 1 ? atoi(a[0]) : 0, y = na >= 2 ? atoi(a[1]) : x;
            if (x < 2 || y < 2 || x > 19 || y > 19)
                fail("unacceptable size");
            else {
                f.x = x, f.y = y, f.n_stones[0] = f.n_stones[1] = f.n_moves = 0;
                rebuild(&f);
                reply("");
            }
        } else if (!strcmp(c, "kata-set-rules")) {
            hc_rules r;
            if (na != 1 || hc_rules_parse_without_komi(a[0], f.komi, &r, &err))
                fail("Unknown rules");
            else {
                f.rules = r;
                rebuild(&f);
                reply("");
            }
        } else if (!strcmp(c, "komi")) {
            f.komi = na == 1 ? (float)atof(a[0]) : 7.5f;
            f.rules.komi = f.komi;
            rebuild(&f);
            reply("");
        } else if (!strcmp(c, "clear_board")) {
            f.n_stones[0] = f.n_stones[1] = f.n_moves = 0;
            rebuild(&f);
            reply("");
        } else if (!strcmp(c, "set_position")) {
            f.n_stones[0] = f.n_stones[1] = f.n_moves = 0;
            int ok = na % 2 == 0;
            for (int i = 0; ok && i < na; i += 2) {
                int col = parse_color(a[i]), x, y;
                ok = col && parse_vertex(&f, a[i + 1], &x, &y) == 0 && x >= 0;
                if (ok)
                    f.stones[col - 1][f.n_stones[col - 1]++] = (hc_xy){x, y};
            }
            if (!ok || rebuild(&f)) {
                f.n_stones[0] = f.n_stones[1] = 0;
                rebuild(&f);
                fail("Illegal stone placements");
            } else
                reply("");
        } else if (!strcmp(c, "play")) {
            int col = na == 2 ? parse_color(a[0]) : 0, x, y;
            if (!col || parse_vertex(&f, a[1], &x, &y))
                fail("Could not parse vertex");
            else if (x >= 0 && !hc_board_is_legal(hc_history_board(f.h), hc_loc_of(x, y, f.x), col,
                                                  f.rules.multi_stone_suicide_legal))
                fail("illegal move");
            else {
                f.moves[f.n_moves++] = (hc_move){col, x, y};
                hc_history_play_tolerant(f.h, x, y, col, &err);
                reply("");
            }
        } else if (!strcmp(c, "kata-set-param")) {
            if (na == 2 && !strcmp(a[0], "playoutDoublingAdvantage")) {
                f.pda = atof(a[1]);
                reply("");
            } else
                fail("Unrecognized or non-overridable parameter");
        } else if (!strcmp(c, "kata-raw-nn"))
            raw_nn(&f, a, na);
        else
            fail("unknown command");
    }
    hc_backend_close(&f.ref);
    hc_history_free(f.h);
    hc_net_free(f.net);
    return 0;
}
