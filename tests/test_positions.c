/* Positions files: the shared sets read, round trip through the writer, garbled lines refused
 * with the file, line and field named. */
#include <stdio.h>
#include <string.h>

#include "hc_test.h"
#include "harness/data/positions.h"

static int same_position(const hc_position *a, const hc_position *b)
{
    return a->index == b->index && a->sgf_line == b->sgf_line && a->x_size == b->x_size && a->y_size == b->y_size &&
           strcmp(a->rules, b->rules) == 0 && a->komi == b->komi && a->n_initial_black == b->n_initial_black &&
           a->n_initial_white == b->n_initial_white && a->initial_pla == b->initial_pla &&
           a->initial_encore_phase == b->initial_encore_phase && a->initial_turn_number == b->initial_turn_number &&
           a->assume_multiple_starting_black_moves_are_handicap ==
               b->assume_multiple_starting_black_moves_are_handicap &&
           a->n_moves == b->n_moves && a->next_pla == b->next_pla &&
           a->white_handicap_bonus_score == b->white_handicap_bonus_score && a->encore_phase == b->encore_phase &&
           a->symmetry == b->symmetry &&
           memcmp(a->initial_black, b->initial_black, sizeof(hc_xy) * (size_t)a->n_initial_black) == 0 &&
           memcmp(a->initial_white, b->initial_white, sizeof(hc_xy) * (size_t)a->n_initial_white) == 0 &&
           memcmp(a->moves, b->moves, sizeof(hc_move) * (size_t)a->n_moves) == 0;
}

static const char *good =
    "{\"index\":3,\"sgf\":1,\"xSize\":9,\"ySize\":7,\"rules\":\"koSITUATIONALscoreAREAtaxNONEsui1komi7.5\","
    "\"komi\":7.5,\"initialBlack\":[\"1,0\"],\"initialWhite\":[\"8,6\"],\"initialPla\":\"B\",\"initialEncorePhase\":0,"
    "\"initialTurnNumber\":2,\"assumeMultipleStartingBlackMovesAreHandicap\":true,\"whiteHandicapBonusScore\":1.0,"
    "\"encorePhase\":0,\"moves\":[\"B:3,4\",\"W:pass\"],\"nextPla\":\"B\",\"symmetry\":5}";

static void garbled(const char *name, const char *from, const char *to, const char *expect)
{
    char buf[2048];
    const char *p = strstr(good, from);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - good), good, to, p + strlen(from));
    hc_position pos;
    hc_err err = {0};
    int rc = hc_position_parse(buf, "t.jsonl:9", &pos, &err);
    hc_check(name, rc == -1 && err.code == HC_EFORMAT && strstr(err.msg, "t.jsonl:9") && strstr(err.msg, expect),
             "rc=%d msg=%s (want \"%s\")", rc, err.msg, expect);
    if (rc == 0)
        hc_position_free(&pos);
}

/* good with "index":3 replaced by index i and the first move's x by i % 9. */
static void good_line(FILE *f, int i)
{
    const char *p = strstr(good, "\"index\":3"), *m = strstr(good, "\"B:3,4\"");
    fprintf(f, "%.*s\"index\":%d%.*s\"B:%d,4\"%s\n", (int)(p - good), good, i, (int)(m - (p + 9)), p + 9, i % 9,
            m + 7);
}

/* Loading parses its lines on several threads: the same positions in file order as the
 * one-at-a-time reader, the first bad line in file order named whichever thread found it,
 * and a read failure reported only after every line before it parsed. */
static void test_parallel_load(const char *dir)
{
    enum { N = 1500 };
    char path[512];
    snprintf(path, sizeof path, "%s/many.jsonl", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < N; i++) {
        good_line(f, i);
        if (i % 97 == 0)
            fputs("  \n", f); /* blank lines shift the line numbers */
    }
    fclose(f);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err = {0};
    int rc = hc_positions_load(path, &ps, &n, &err);
    int same = rc == 0 && n == N;
    hc_posreader *r = hc_posreader_open(path, &err);
    hc_position q;
    size_t k = 0;
    while (same && r && hc_posreader_next(r, &q, &err) == 1) {
        same = k < n && same_position(&ps[k], &q) && ps[k].index == (long)k && ps[k].moves[0].x == (int)(k % 9);
        hc_position_free(&q);
        k++;
    }
    hc_posreader_close(r);
    hc_check("positions-6.1", same && k == N, "rc %d n %zu, %zu read back: %s", rc, n, k, err.msg);
    if (rc == 0)
        hc_positions_free(ps, n);

    /* bad lines at records 1400 and 200 (different threads' ranges): record 200 is named */
    f = fopen(path, "w");
    long line200 = 0;
    for (int i = 0, line = 1; i < N; i++, line++) {
        if (i == 200 || i == 1400) {
            fputs(i == 200 ? "{\"index\":200,\"sgf\":-1}\n" : "{\n", f);
            line200 = i == 200 ? line : line200;
        } else {
            good_line(f, i);
        }
        if (i % 97 == 0)
            fputs("\n", f), line++;
    }
    fclose(f);
    hc_err_clear(&err);
    rc = hc_positions_load(path, &ps, &n, &err);
    char want[64];
    snprintf(want, sizeof want, "many.jsonl:%ld:", line200);
    hc_check("positions-6.2", rc == -1 && err.code == HC_EFORMAT && strstr(err.msg, want) && strstr(err.msg, "sgf"),
             "rc %d (want %s): %s", rc, want, err.msg);

    /* a line over the limit after N good lines: the read failure; after a bad line: the bad line */
    for (int bad_first = 0; bad_first < 2; bad_first++) {
        f = fopen(path, "w");
        for (int i = 0; i < N; i++) {
            if (bad_first && i == 700)
                fputs("{\"index\":\"x\"}\n", f);
            else
                good_line(f, i);
        }
        for (size_t b = 0; b < ((size_t)16 << 20) + 10; b += 64)
            fputs("                                                               x", f);
        fputs("\n", f);
        fclose(f);
        hc_err_clear(&err);
        rc = hc_positions_load(path, &ps, &n, &err);
        if (bad_first)
            hc_check("positions-6.4", rc == -1 && err.code == HC_EFORMAT && strstr(err.msg, "many.jsonl:701:") &&
                     strstr(err.msg, "index"), "rc %d: %s", rc, err.msg);
        else
            hc_check("positions-6.3", rc == -1 && err.code == HC_ELIMIT && strstr(err.msg, "many.jsonl") &&
                     strstr(err.msg, "limit of"), "rc %d: %s", rc, err.msg);
    }
    remove(path);
}

/* Coordinates read as sscanf's "%d,%d" read them, on the board or refused. */
static void test_coords(void)
{
    static const struct {
        const char *stones;
        int ok, x, y;
    } cases[] = {{"\"1,0\"", 1, 1, 0},  {"\"+8,6\"", 1, 8, 6},   {"\" 2, 3\"", 1, 2, 3}, {"\"-0,0\"", 1, 0, 0},
                 {"\"08,06\"", 1, 8, 6}, {"\"9,0\"", 0, 0, 0},    {"\"-1,0\"", 0, 0, 0},  {"\"1,7\"", 0, 0, 0},
                 {"\"1 ,0\"", 0, 0, 0},  {"\"1,0 \"", 0, 0, 0},   {"\"1,\"", 0, 0, 0},    {"\",1\"", 0, 0, 0},
                 {"\"1,0,\"", 0, 0, 0},  {"\"99999999999,0\"", 0, 0, 0}, {"\"1,-\"", 0, 0, 0}, {"\"a,b\"", 0, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[2048], name[64];
        const char *p = strstr(good, "\"1,0\"");
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - good), good, cases[i].stones, p + 5);
        hc_position pos;
        hc_err err = {0};
        int rc = hc_position_parse(buf, "c", &pos, &err);
        snprintf(name, sizeof name, "positions-7.%zu", i + 1);
        if (cases[i].ok) {
            hc_check(name, rc == 0 && pos.initial_black[0].x == cases[i].x && pos.initial_black[0].y == cases[i].y,
                     "%s: rc %d %s", cases[i].stones, rc, err.msg);
            if (rc == 0)
                hc_position_free(&pos);
        } else {
            hc_check(name, rc == -1 && strstr(err.msg, "initialBlack[0]"), "%s: rc %d %s", cases[i].stones, rc,
                     err.msg);
        }
    }
}

int main(void)
{
    hc_plan(46);
    hc_position p, q;
    hc_err err = {0};
    hc_check("positions-1.1", hc_position_parse(good, "t", &p, &err) == 0, "%s", err.msg);
    hc_check("positions-1.2",
             p.x_size == 9 && p.y_size == 7 && p.n_moves == 2 && p.moves[1].x == -1 && p.moves[1].pla == HC_WHITE &&
                 p.initial_white[0].x == 8 && p.initial_white[0].y == 6 && p.symmetry == 5 &&
                 p.assume_multiple_starting_black_moves_are_handicap && p.white_handicap_bonus_score == 1.0f,
             "fields misread");
    char *s = hc_position_format(&p, &err);
    hc_check("positions-1.3", s && strcmp(s, good) == 0, "format differs:\n%s\n%s", s ? s : "(null)", good);
    hc_check("positions-1.4", s && hc_position_parse(s, "t", &q, &err) == 0 && same_position(&p, &q), "round trip");
    free(s);
    hc_position_free(&q);
    hc_position_free(&p);

    garbled("positions-2.1", "\"xSize\":9", "\"xSize\":0", "xSize");
    garbled("positions-2.2", "\"B:3,4\"", "\"B:9,4\"", "moves[0]");
    garbled("positions-2.3", "\"W:pass\"", "\"X:pass\"", "moves[1]");
    garbled("positions-2.4", "\"1,0\"", "\"1;0\"", "initialBlack[0]");
    garbled("positions-2.5", "\"nextPla\":\"B\"", "\"nextPla\":3", "nextPla");
    garbled("positions-2.6", ",\"komi\":7.5", "", "komi");
    garbled("positions-2.7", "\"symmetry\":5}", "\"symmetry\":8}", "symmetry");
    garbled("positions-2.8", "\"B:3,4\"", "[3]", "moves[0]");
    garbled("positions-2.9", "}", "", "invalid JSON");
    garbled("positions-2.10", "\"index\":3", "\"index\":3,\"index\":4", "invalid JSON");
    garbled("positions-2.11", "\"komi\":7.5", "\"komi\":\"7.5\"", "komi");

    const char *sets[] = {"positions/size9.jsonl.gz", "positions/size13.jsonl.gz", "positions/size19.jsonl.gz",
                          "positions/size10x14.jsonl.gz", "positions/sizerect.jsonl.gz"};
    const size_t counts[] = {2179, 2146, 2247, 140, 693};
    const char *dir = hc_tmpdir("test_positions");
    for (int i = 0; i < 5; i++) {
        char name[64], path[512];
        snprintf(name, sizeof name, "positions-3.%d", i + 1);
        const char *src = hc_shared(sets[i]);
        if (!src) {
            hc_skip_n(name, 2, "../shared/%s absent", sets[i]);
            continue;
        }
        snprintf(path, sizeof path, "%s", src);
        hc_position *ps, *qs;
        size_t n, m;
        if (!hc_check(name, hc_positions_load(path, &ps, &n, &err) == 0 && n == counts[i], "load %s: %s (n=%zu)",
                      path, err.msg, n))
            continue;
        char out[512];
        snprintf(out, sizeof out, "%s/rt%d.jsonl.gz", dir, i);
        hc_poswriter *w = hc_poswriter_open(out, &err);
        for (size_t k = 0; w && k < n; k++)
            hc_poswriter_write(w, &ps[k], &err);
        hc_poswriter_commit(w, &err);
        int same = hc_positions_load(out, &qs, &m, &err) == 0 && m == n;
        for (size_t k = 0; same && k < n; k++)
            same = same_position(&ps[k], &qs[k]);
        snprintf(name, sizeof name, "positions-4.%d", i + 1);
        hc_check(name, same, "round trip of %s differs", sets[i]);
        hc_positions_free(ps, n);
        hc_positions_free(qs, m);
    }

    /* The reader names the file and line of a bad line. */
    char bad[512];
    snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
    FILE *f = fopen(bad, "w");
    fprintf(f, "%s\n\n%s\n{\"index\":1}\n", good, good);
    fclose(f);
    hc_position *ps;
    size_t n;
    hc_err_clear(&err);
    int rc = hc_positions_load(bad, &ps, &n, &err);
    hc_check("positions-5.1", rc == -1 && strstr(err.msg, "bad.jsonl:4") && strstr(err.msg, "sgf"), "%s", err.msg);

    test_parallel_load(dir);
    test_coords();
    return hc_test_exit();
}
