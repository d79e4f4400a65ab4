/* halfcheck features: KataGo's input rows (fillRowV3..V7, before symmetry) for every position of a
 * positions file, as little-endian float32 records: the spatial planes, then the globals. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/go/history.h"
#include "harness/model/model.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/positions.h"
#include "harness/base/stream.h"

static const cli_opt opts[] = {
    {"positions", 1, 0, "positions file (.jsonl or .jsonl.gz)", "PATH"},
    {"nn", 1, 0, "NN buffer WxH (or N), at least the board size, at most 19x19", "WxH"},
    {"inputs-version", 1, 0, "KataGo input features version 3..7 (default: the --net's, else 7)", "N"},
    {"net", 1, 0, "model file whose input version and pass-alive preference to use", "PATH"},
    {"pda", 1, 0, "playoutDoublingAdvantage (default 0)", "X"},
    {"pass-alive-suicide", 1, 0,
     "passAliveSuicideRulesOverride: -1 history's flag, 0 or 1 the model's (default: the --net's, else -1)", "-1|0|1"},
    {"out", 1, 0, "output file; gzip'd when it ends in .gz; '-' for standard output", "PATH|-"},
    {"help", 0, 0, "print this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

static void to_le(float *v, size_t n)
{
    const uint16_t one = 1;
    if (*(const uint8_t *)&one == 1)
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        u = (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
        memcpy(&v[i], &u, 4);
    }
}

int cmd_features(int argc, char **argv)
{
    hc_err err = {0};
    cli_args a;
    static const cli_cmd usage = {"features", opts,
        "usage: halfcheck features --positions POS --nn WxH [--inputs-version N | --net MODEL] [--pda X] "
        "--out F.f32[.gz]\n\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *pos_path = cli_require(&a, "positions", &err);
    const char *nn = pos_path ? cli_require(&a, "nn", &err) : NULL;
    const char *out_path = nn ? cli_require(&a, "out", &err) : NULL;
    if (!out_path)
        return cli_fail("features", &err);
    int nn_x, nn_y, pa, version, def_version = 7, def_pa = -1;
    double pda;
    if (cli_has(&a, "net")) {
        /* The net decides what KataGo would feed it: its input version, and (as testgpuerror does)
         * its pass-alive preference. */
        hc_net *net = hc_net_load(cli_get(&a, "net", NULL), &err);
        if (!net)
            return cli_fail("features", &err);
        def_version = net->input_version;
        def_pa = net->prefer_pass_alive_under_suicide ? 1 : 0;
        hc_net_free(net);
    }
    if (cli_parse_size(nn, &nn_x, &nn_y, &err) || cli_get_double(&a, "pda", 0.0, &pda, &err) ||
        cli_get_int(&a, "pass-alive-suicide", def_pa, &pa, &err) ||
        cli_get_int(&a, "inputs-version", def_version, &version, &err))
        return cli_fail("features", &err);
    if (pa < -1 || pa > 1 || hc_features_num_spatial(version) == 0) {
        hc_err_set(&err, HC_EUSAGE, "--pass-alive-suicide must be -1, 0 or 1 and --inputs-version 3 to 7");
        return cli_fail("features", &err);
    }
    hc_nninput_params params = hc_nninput_params_default();
    params.playout_doubling_advantage = pda;
    params.pass_alive_suicide_rules_override = pa;

    hc_posreader *r = hc_posreader_open(pos_path, &err);
    if (!r)
        return cli_fail("features", &err);
    hc_ostream *o = hc_ostream_open(out_path, &err);
    if (!o) {
        hc_posreader_close(r);
        return cli_fail("features", &err);
    }
    size_t ns = (size_t)hc_features_num_spatial(version) * nn_x * nn_y, rec = ns + hc_features_num_global(version);
    float *row = malloc(rec * sizeof(float));
    hc_history_cache *histories = hc_history_cache_new(&err);
    int rc = row && histories ? 0 : hc_err_set(&err, HC_ENOMEM, "out of memory");
    long count = 0;
    hc_position p;
    while (rc == 0) {
        int got = hc_posreader_next(r, &p, &err);
        if (got < 0)
            rc = -1;
        if (got <= 0)
            break;
        const hc_history *h = hc_history_cache_get(histories, &p, &err);
        if (!h)
            rc = hc_err_prefix(&err, "%s:%ld: ", pos_path, p.file_line); /* the replay refused the record */
        else if (hc_features_fill(version, h, hc_history_next_pla(h), &params, nn_x, nn_y, row, row + ns, &err))
            rc = hc_err_prefix(&err, "position %ld: ", p.index);
        if (rc == 0) {
            to_le(row, rec);
            rc = hc_ostream_write(o, row, rec * sizeof(float), &err);
            count++;
        }
        hc_position_free(&p);
    }
    free(row);
    hc_history_cache_free(histories);
    hc_posreader_close(r);
    if (rc) {
        hc_ostream_abort(o);
        return cli_fail("features", &err);
    }
    if (hc_ostream_commit(o, &err))
        return cli_fail("features", &err);
    fprintf(stderr, "halfcheck features: %ld positions, %zu floats each, to %s\n", count, rec, out_path);
    return HC_EXIT_OK;
}
