/* bisect-precision verifies what it writes (issue 21 item 6): the result is checked on
 * positions the search did not use (every 4th held out, or --verify-positions), the counts are
 * reported, and a result that fails there (NOT VERIFIED) exits non-zero without writing --out,
 * leaving a file already there as it was. The failing case is forced: a tier whose winrate
 * limit lies between fp16's worst error on the search set and on the verification set, so the
 * whole profile passes the search and fails the verification. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "harness/run/precbisect.h"
#include "harness/data/selfplay.h"
#include "harness/metrics/stats.h"
#include "harness/model/synth.h"
#include "harness/metrics/tiers.h"

/* emulate:fp16's errors against ref32 over ps: 0 or -1 */
static int fp16_errors(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s, hc_stats *st,
                       hc_err *err)
{
    hc_backend rb = {0}, tb = {0};
    hc_nnoutput *ref = calloc(n, sizeof *ref), *out = calloc(n, sizeof *out);
    hc_eval_failure fail;
    int rc = -1;
    if (ref && out && hc_backend_open_with(&rb, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = s->nn_x,
                                                                        .ny = s->nn_y, .max_batch = 4,
                                                                        .threads = 1}, err) == 0 &&
        hc_backend_open_with(&tb, &(hc_backend_open_opts){.spec = "emulate:fp16", .net = net, .nx = s->nn_x,
                                                          .ny = s->nn_y, .max_batch = 4, .threads = 1}, err) == 0 &&
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

static int run_cmd(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether file holds exactly text. */
static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strcmp(buf, text) == 0;
}

/* Whether the file's text contains s. */
static int has(const char *path, const char *s)
{
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    int found = 0;
    if (f && (buf = calloc(1, 1 << 16)) != NULL) {
        size_t n = fread(buf, 1, (1 << 16) - 1, f);
        buf[n] = 0;
        found = strstr(buf, s) != NULL;
    }
    if (f)
        fclose(f);
    free(buf);
    return found;
}

/* Files in dir whose name starts with prefix (hc_ostream's temporaries are PATH.tmp.XXXXXX). */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    hc_plan(12);
    hc_err err = {0};
    char dir[512], net_path[600], pa[600], pb[600], out_path[600], fresh_path[600], tier_path[600], cmd[6000];
    const char *d0 = hc_tmpdir("test_pbisect_verify");
    snprintf(dir, sizeof dir, "%s", d0 ? d0 : ".");
    snprintf(net_path, sizeof net_path, "%s/net.bin", dir);
    snprintf(pa, sizeof pa, "%s/a.jsonl.gz", dir);
    snprintf(pb, sizeof pb, "%s/b.jsonl.gz", dir);
    snprintf(out_path, sizeof out_path, "%s/result.yaml", dir);
    snprintf(fresh_path, sizeof fresh_path, "%s/fresh.yaml", dir);
    snprintf(tier_path, sizeof tier_path, "%s/tier.yaml", dir);

    hc_synth_spec spec;
    hc_synth_spec_default(&spec);
    spec.trunk_c = 16;
    snprintf(spec.blocks, sizeof spec.blocks, "res,gpool,res");
    hc_selfplay_opts so;
    hc_selfplay_opts_default(&so);
    so.games = 2;
    so.max_moves = 60;
    so.stride = 5;
    so.max_positions = 16;
    hc_position *psa = NULL, *psb = NULL;
    size_t na = 0, nb = 0;
    hc_net *net = NULL;
    int ok = d0 && hc_synth_write(&spec, net_path, 1, &err) == 0 && hc_selfplay_write(&so, pa, NULL, &err) == 0;
    so.seed = 77;
    so.max_moves = 120;
    ok = ok && hc_selfplay_write(&so, pb, NULL, &err) == 0 && (net = hc_net_load(net_path, &err)) &&
         hc_positions_load(pa, &psa, &na, &err) == 0 && hc_positions_load(pb, &psb, &nb, &err) == 0 && na == 16 &&
         nb >= 8;
    if (!hc_check("pbverify-0.1", ok, "setup: %s (%zu and %zu positions)", err.msg, na, nb)) {
        hc_fail_rest("pbverify-1.1", "not run: no test data (pbverify-0.1 failed)");
        goto end;
    }
    hc_net_reduce_activations(net);
    hc_eval_settings s = hc_eval_settings_default(9, 9);

    /* 1. The split: every 4th position held out, none in both sets; too few refused. */
    hc_pbisect_split sp;
    int split_ok = hc_pbisect_split_positions(psa, na, &sp, &err) == 0;
    int disjoint = split_ok && sp.n_search == 12 && sp.n_verify == 4;
    for (size_t i = 0; disjoint && i < sp.n_verify; i++) {
        disjoint &= sp.verify[i].moves == psa[4 * i + 3].moves;
        for (size_t j = 0; j < sp.n_search; j++)
            disjoint &= sp.search[j].moves != sp.verify[i].moves;
    }
    hc_check("pbverify-1.1", disjoint, "split of 16: %zu searched, %zu held out, or not every 4th / not disjoint (%s)",
             sp.n_search, sp.n_verify, split_ok ? "" : err.msg);
    hc_pbisect_split small;
    hc_err e2 = {0};
    hc_check("pbverify-1.2", hc_pbisect_split_positions(psa, 7, &small, &e2) != 0 && e2.code == HC_EUSAGE,
             "7 positions must be refused (2 held out at least): code %d", e2.code);

    /* 2. The library reports what each side used, and the statistics are over those. */
    hc_tier loose;
    hc_tier_init(&loose, "loose");
    hc_tier_set(&loose, HC_M_WINRATE, HC_P_MAX, 1.0, 0.5, &err);
    hc_pbisect_opts o = {.search = sp.search, .n_search = sp.n_search, .verify = sp.verify, .n_verify = sp.n_verify,
                         .settings = &s, .profile = "fp16", .tier = &loose, .batch = 4, .threads = 1};
    hc_pbisect *r = NULL;
    if (split_ok && hc_pbisect_run(net, &o, &r, &err) == 0)
        hc_check("pbverify-2.1",
                 r->outcome == HC_PB_PASSES && r->n_search == 12 && r->n_verify == 4 &&
                     r->full_stats.n_positions == 12 && r->result_stats.n_positions == 4 && r->result_check.pass,
                 "outcome %d; searched %zu (stats over %zu), verified %zu (stats over %zu)", r->outcome, r->n_search,
                 r->full_stats.n_positions, r->n_verify, r->result_stats.n_positions);
    else
        hc_check("pbverify-2.1", 0, "run: %s", err.msg);
    hc_pbisect_free(r);
    r = NULL;
    if (split_ok)
        hc_pbisect_split_free(&sp);

    /* 3. Forced NOT VERIFIED: search on the set where fp16's worst winrate error is smaller. */
    hc_stats sa, sb;
    double lim = 0;
    const char *search_path = pa, *verify_path = pb;
    const hc_position *ps_s = psa, *ps_v = psb;
    size_t n_s = na, n_v = nb;
    if (fp16_errors(net, psa, na, &s, &sa, &err) == 0 && fp16_errors(net, psb, nb, &s, &sb, &err) == 0) {
        double ma = sa.m[HC_M_WINRATE].v[HC_P_MAX], mb = sb.m[HC_M_WINRATE].v[HC_P_MAX];
        if (mb < ma) {
            search_path = pb, verify_path = pa, ps_s = psb, ps_v = psa, n_s = nb, n_v = na;
            double t = ma;
            ma = mb;
            mb = t;
        }
        lim = ma < mb ? 0.5 * (ma + mb) : 0;
    }
    hc_tier mid;
    hc_tier_init(&mid, "between");
    if (!hc_check("pbverify-3.1", lim > 0 && hc_tier_set(&mid, HC_M_WINRATE, HC_P_MAX, 1.0, lim, &err) == 0,
                  "no limit between the two sets' worst errors (%s)", err.msg)) {
        hc_fail_n("pbverify-3.2", 7, "not run: no forcing tier (pbverify-3.1 failed)");
        goto end;
    }
    o = (hc_pbisect_opts){.search = ps_s, .n_search = n_s, .verify = ps_v, .n_verify = n_v, .settings = &s,
                          .profile = "fp16", .tier = &mid, .batch = 4, .threads = 1};
    if (hc_pbisect_run(net, &o, &r, &err) == 0)
        hc_check("pbverify-3.2",
                 r->outcome == HC_PB_UNVERIFIED && r->full_check.pass && !r->result_check.pass &&
                     r->result_stats.n_positions == n_v,
                 "outcome %d (want %d), search %d, verification %d over %zu", r->outcome, HC_PB_UNVERIFIED,
                 r->full_check.pass, r->result_check.pass, r->result_stats.n_positions);
    else
        hc_check("pbverify-3.2", 0, "run: %s", err.msg);
    hc_pbisect_free(r);
    r = NULL;

    /* 4. The command line: exit 1, a clear message, --out untouched (an existing file) or
     * absent (a fresh path), no temporary left beside it. */
    const char *bin = hc_halfcheck_bin();
    FILE *tf = fopen(tier_path, "w");
    if (tf) {
        fprintf(tf, "name: between\nlimits:\n  winrate: {max: %.17g}\n", lim);
        fclose(tf);
    }
    const char *sentinel = "name: an earlier verified profile\n";
    FILE *of = fopen(out_path, "w");
    if (of) {
        fputs(sentinel, of);
        fclose(of);
    }
    remove(fresh_path);
    snprintf(cmd, sizeof cmd,
             "%s bisect-precision --net %s --positions %s --verify-positions %s --nn 9x9 --profile fp16 "
             "--tier-file %s --out %s --batch 4 > %s/nv.txt 2> %s/nv.err",
             bin, net_path, search_path, verify_path, tier_path, out_path, dir, dir);
    int rc = run_cmd(cmd);
    char want[200], nv_txt[700], nv_err[700];
    snprintf(nv_txt, sizeof nv_txt, "%s/nv.txt", dir);
    snprintf(nv_err, sizeof nv_err, "%s/nv.err", dir);
    snprintf(want, sizeof want, "positions: search on %zu from %s, verification on %zu from %s",
             n_s, search_path, n_v, verify_path);
    hc_check("pbverify-4.1", rc == 1 && has(nv_txt, "NOT VERIFIED") && has(nv_txt, "not written") &&
                                 has(nv_err, "NOT VERIFIED"),
             "exit %d; want 1 and NOT VERIFIED on stdout and stderr (%s)", rc, nv_txt);
    hc_check("pbverify-4.2", has(nv_txt, want), "the counts line \"%s\" missing from %s", want, nv_txt);
    hc_check("pbverify-4.3", holds(out_path, sentinel) && count_prefixed(dir, "result.yaml.tmp") == 0,
             "the existing --out file was changed, or a temporary was left beside it");
    snprintf(cmd, sizeof cmd,
             "%s bisect-precision --net %s --positions %s --verify-positions %s --nn 9x9 --profile fp16 "
             "--tier-file %s --out %s --batch 4 > /dev/null 2>&1",
             bin, net_path, search_path, verify_path, tier_path, fresh_path);
    rc = run_cmd(cmd);
    struct stat st;
    hc_check("pbverify-4.4", rc == 1 && stat(fresh_path, &st) != 0 && count_prefixed(dir, "fresh.yaml") == 0,
             "exit %d; a NOT VERIFIED run left a file at a fresh --out path", rc);

    /* 5. The default split on the command line: counts reported; the verified profile written. */
    remove(fresh_path);
    snprintf(cmd, sizeof cmd,
             "%s bisect-precision --net %s --positions %s --nn 9x9 --profile fp16 --tier fp16 --out %s "
             "> %s/split.txt 2>&1",
             bin, net_path, pa, fresh_path, dir);
    rc = run_cmd(cmd);
    char split_txt[700];
    snprintf(split_txt, sizeof split_txt, "%s/split.txt", dir);
    snprintf(want, sizeof want, "positions: search on 12, verification on 4 held out (every 4th of the first 16 of %s)",
             pa);
    hc_check("pbverify-5.1",
             rc == 1 && has(split_txt, want) && has(split_txt, "on the 4 verification positions: tier fp16 PASS") &&
                 stat(fresh_path, &st) == 0,
             "exit %d (want 1: passes already), counts line \"%s\", the verified profile written (%s)", rc, want,
             split_txt);
    snprintf(cmd, sizeof cmd,
             "%s bisect-precision --net %s --positions %s --nn 9x9 --profile fp16 --tier fp16 --max-positions 7 "
             "> %s/few.txt 2>&1",
             bin, net_path, pa, dir);
    rc = run_cmd(cmd);
    snprintf(split_txt, sizeof split_txt, "%s/few.txt", dir);
    hc_check("pbverify-5.2", rc == 2 && has(split_txt, "--verify-positions") && has(split_txt, "at least 8"),
             "7 positions without --verify-positions: exit %d (want 2, saying at least 8 are needed)", rc);
end:
    hc_positions_free(psa, na);
    hc_positions_free(psb, nb);
    hc_net_free(net);
    return hc_test_exit();
}
