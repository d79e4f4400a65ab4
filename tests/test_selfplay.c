/* Self-play positions: they reload through the positions reader, every record rebuilds through
 * hc_history_from_position with the same derived fields, the moves are strictly legal, and the
 * same seed gives the same bytes (library and CLI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/go/history.h"
#include "harness/data/positions.h"
#include "harness/data/selfplay.h"

static char tmpdir[256];

static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = (unsigned char *)hc_slurp_len(a, &na), *y = (unsigned char *)hc_slurp_len(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* Replays p strictly (every move must be legal as played) and checks the derived fields. */
static int check_position(const hc_position *p, char *why, size_t nwhy)
{
    hc_err err = {0};
    hc_history *h = hc_history_from_position(p, &err);
    if (!h) {
        snprintf(why, nwhy, "from_position: %s", err.msg);
        return 0;
    }
    int ok = 1;
    int sym = (int)(hc_history_situation_hash(h, p->next_pla, 0.5).hash0 & 7);
    if (hc_history_next_pla(h) != p->next_pla || sym != p->symmetry ||
        hc_history_white_handicap_bonus_score(h) != p->white_handicap_bonus_score ||
        hc_history_encore_phase(h) != p->encore_phase || hc_history_num_moves(h) != p->n_moves ||
        hc_history_is_game_finished(h)) {
        snprintf(why, nwhy, "derived fields differ (pla %d/%d symmetry %d/%d bonus %g/%g encore %d/%d)",
                 hc_history_next_pla(h), p->next_pla, sym, p->symmetry, (double)hc_history_white_handicap_bonus_score(h),
                 (double)p->white_handicap_bonus_score, hc_history_encore_phase(h), p->encore_phase);
        ok = 0;
    }
    hc_history_free(h);
    if (!ok)
        return 0;
    /* Strict replay from the setup. */
    hc_position setup = *p;
    setup.n_moves = 0;
    setup.next_pla = p->initial_pla;
    h = hc_history_from_position(&setup, &err);
    if (!h) {
        snprintf(why, nwhy, "setup: %s", err.msg);
        return 0;
    }
    for (int i = 0; i < p->n_moves && ok; i++) {
        const hc_move *m = &p->moves[i];
        if (!hc_history_is_legal(h, m->x, m->y, m->pla) || hc_history_play(h, m->x, m->y, m->pla, &err) != 0) {
            snprintf(why, nwhy, "move %d (%d,%d) by %d is not legal", i, m->x, m->y, m->pla);
            ok = 0;
        }
    }
    hc_history_free(h);
    return ok;
}

/* Positions with an encore phase > 0 and with a white handicap bonus, of the last run_case. */
static int n_encore, n_bonus;

static void run_case(const char *id, const hc_selfplay_opts *o, long want_min)
{
    n_encore = n_bonus = 0;
    char a[512], b[512], sub[96];
    snprintf(a, sizeof a, "%s/%s-a.jsonl.gz", tmpdir, id);
    snprintf(b, sizeof b, "%s/%s-b.jsonl.gz", tmpdir, id);
    hc_err err = {0};
    long n1 = 0, n2 = 0;
    int rc = hc_selfplay_write(o, a, &n1, &err);
    snprintf(sub, sizeof sub, "%s.write", id);
    if (!hc_check(sub, rc == 0 && n1 >= want_min, "%ld positions (want >= %ld): %s", n1, want_min, err.msg)) {
        snprintf(sub, sizeof sub, "%s.rest", id);
        hc_fail_n(sub, 4, "not run: nothing written");
        return;
    }
    rc = hc_selfplay_write(o, b, &n2, &err);
    snprintf(sub, sizeof sub, "%s.same-bytes", id);
    hc_check(sub, rc == 0 && n1 == n2 && same_file(a, b), "two runs with seed %llu differ", (unsigned long long)o->seed);
    hc_position *ps = NULL;
    size_t n = 0;
    rc = hc_positions_load(a, &ps, &n, &err);
    snprintf(sub, sizeof sub, "%s.reload", id);
    if (hc_check(sub, rc == 0 && (long)n == n1, "reloaded %zu of %ld: %s", n, n1, err.msg)) {
        int bad = 0, fields = 1;
        char why[1200] = "";
        for (size_t i = 0; i < n && !bad; i++) {
            if (!check_position(&ps[i], why, sizeof why))
                bad = 1;
            n_encore += ps[i].encore_phase > 0;
            n_bonus += ps[i].white_handicap_bonus_score > 0;
            if (ps[i].index != (long)i || ps[i].x_size != o->x_size || ps[i].y_size != o->y_size)
                fields = 0;
        }
        snprintf(sub, sizeof sub, "%s.rebuild", id);
        hc_check(sub, !bad, "%s", why);
        snprintf(sub, sizeof sub, "%s.fields", id);
        hc_check(sub, fields, "index or size fields wrong");
    } else {
        snprintf(sub, sizeof sub, "%s.rebuild", id);
        hc_fail_n(sub, 2, "not run: the file does not reload");
    }
    hc_positions_free(ps, n);
    unlink(a);
    unlink(b);
}

int main(void)
{
    hc_plan(3 * 5 + 2 + 6 + 1); /* three run_case; the rect and territory extras; opts; cli */
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hc_test_selfplay_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        hc_fail_rest("selfplay-tmp", "mkdtemp failed");
        return hc_test_exit();
    }
    hc_selfplay_opts o;
    hc_selfplay_opts_default(&o);
    o.games = 4;
    o.max_moves = 120;
    o.stride = 3;
    run_case("selfplay-9", &o, 100);

    hc_selfplay_opts_default(&o);
    o.x_size = 7;
    o.y_size = 12;
    o.games = 3;
    o.seed = 99;
    o.pass_prob = 0.2;
    o.handicap_prob = 0.7;
    snprintf(o.rules, sizeof o.rules, "koPOSITIONALscoreAREAtaxNONEsui0whbNkomi6.5");
    run_case("selfplay-rect", &o, 10);
    hc_check("selfplay-rect.bonus", n_bonus > 0, "no position with a white handicap bonus (whbN rules, handicap games)");

    /* Territory rules: encore phases after two passes (the game goes on). */
    hc_selfplay_opts_default(&o);
    o.x_size = o.y_size = 5;
    o.games = 4;
    o.seed = 5;
    o.pass_prob = 0.3;
    o.max_moves = 80;
    snprintf(o.rules, sizeof o.rules, "japanese");
    run_case("selfplay-territory", &o, 10);
    hc_check("selfplay-territory.encore", n_encore > 0, "no position in an encore phase");

    /* Content checks: handicap games start from setup stones with white to move; the limit on
     * positions holds; a different seed gives different games; the stride thins the games. */
    hc_selfplay_opts_default(&o);
    o.games = 6;
    o.handicap_prob = 1.0;
    o.max_positions = 37;
    o.stride = 5;
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/h.jsonl", tmpdir);
    snprintf(p2, sizeof p2, "%s/h2.jsonl", tmpdir);
    hc_err err = {0};
    long n = 0;
    hc_position *ps = NULL;
    size_t np = 0;
    if (hc_check("selfplay-opts.1", hc_selfplay_write(&o, p1, &n, &err) == 0 && n == 37, "%ld positions: %s", n, err.msg) &&
        hc_positions_load(p1, &ps, &np, &err) == 0) {
        int hcap = 1, strided = 1;
        for (size_t i = 0; i < np; i++) {
            hcap &= ps[i].n_initial_black >= 2 && ps[i].n_initial_black <= 4 && ps[i].initial_pla == HC_WHITE;
            if (i > 0 && ps[i].sgf_line == ps[i - 1].sgf_line)
                strided &= ps[i].n_moves - ps[i - 1].n_moves == 5;
        }
        hc_check("selfplay-opts.2", hcap, "handicap setup missing");
        hc_check("selfplay-opts.3", strided, "positions of a game are not 5 moves apart");
    } else {
        hc_fail_n("selfplay-opts.2", 2, "not run: no positions");
    }
    hc_positions_free(ps, np);
    o.seed = 2;
    hc_check("selfplay-opts.4", hc_selfplay_write(&o, p2, &n, &err) == 0 && !same_file(p1, p2),
             "seed 2 gives the same file as seed 1");
    hc_selfplay_opts_default(&o);
    o.x_size = 20;
    hc_check("selfplay-opts.5", hc_selfplay_write(&o, p2, &n, &err) != 0 && err.code == HC_EUSAGE, "20x9 accepted");
    hc_selfplay_opts_default(&o);
    snprintf(o.rules, sizeof o.rules, "nonsense-rules");
    hc_check("selfplay-opts.6", hc_selfplay_write(&o, p2, &n, &err) != 0, "bad rules accepted");
    unlink(p1);
    unlink(p2);

    /* The CLI writes what the library writes. */
    const char *hc = getenv("HALFCHECK");
    if (hc && access(hc, X_OK) == 0) {
        hc_selfplay_opts_default(&o);
        o.x_size = 13;
        o.y_size = 13;
        o.games = 2;
        o.seed = 42;
        o.max_moves = 60;
        o.stride = 4;
        snprintf(p1, sizeof p1, "%s/cli.jsonl.gz", tmpdir);
        snprintf(p2, sizeof p2, "%s/lib.jsonl.gz", tmpdir);
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "%s selfplay --size 13 --games 2 --seed 42 --moves 60 --stride 4 --out %s 2>/dev/null",
                 hc, p1);
        int rc = system(cmd);
        hc_check("selfplay-cli.1", rc == 0 && hc_selfplay_write(&o, p2, &n, &err) == 0 && same_file(p1, p2),
                 "CLI (rc %d) and library outputs differ", rc);
        unlink(p1);
        unlink(p2);
    } else {
        hc_skip("selfplay-cli.1", "HALFCHECK not set (run through make test)");
    }
    rmdir(tmpdir);
    return hc_test_exit();
}
