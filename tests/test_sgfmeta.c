/* SGF-metadata profiles and rows, checked against values worked out by hand from KataGo's rules. */
#include <math.h>
#include <string.h>

#include "hc_test.h"
#include "harness/data/sgfmeta.h"

int main(void)
{
    hc_plan(3 + 7 + 4); /* 1.x profiles, 2.x one per bad profile, 3.x the metadata row */
    hc_sgfmeta m;
    hc_err err = {0};
    hc_check("sgfmeta-1.1", hc_sgfmeta_profile("preaz_5k", &m, &err) == 0 && m.inverse_b_rank == 14 &&
                                m.inverse_w_rank == 14 && m.year == 2016 && m.month == 9 && m.source == 2,
             "preaz_5k: %s", err.msg);
    hc_check("sgfmeta-1.2", hc_sgfmeta_profile("rank_9d_20k", &m, &err) == 0 && m.inverse_b_rank == 1 &&
                                m.inverse_w_rank == 29 && m.year == 2020,
             "rank_9d_20k");
    hc_check("sgfmeta-1.3", hc_sgfmeta_profile("proyear_2022", &m, &err) == 0 && m.source == 6 && m.tc_is_unknown,
             "proyear_2022");
    const char *bad[] = {"preaz_10d", "rank_21k", "rank_5k_", "proyear_1700", "preaz", "", "rank_1d_2d_3d"};
    for (int i = 0; i < 7; i++) {
        char name[32];
        snprintf(name, sizeof name, "sgfmeta-2.%d", i + 1);
        hc_err_clear(&err);
        hc_check(name, hc_sgfmeta_profile(bad[i], &m, &err) == -1 && strstr(err.msg, "profile"), "\"%s\" accepted",
                 bad[i]);
    }
    float row[HC_SGFMETA_CHANNELS];
    hc_sgfmeta_profile("preaz_2k_5k", &m, &err); /* black 2k = 11, white 5k = 14 */
    hc_sgfmeta_fill_row(&m, 1, 81, row, &err);
    int ranks_ok = 1;
    for (int i = 0; i < 34; i++) {
        ranks_ok &= row[6 + i] == (i < 14 ? 1.0f : 0.0f);      /* white to move: its own rank first */
        ranks_ok &= row[6 + 34 + i] == (i < 11 ? 1.0f : 0.0f);
    }
    hc_check("sgfmeta-3.1", ranks_ok, "rank one-hot bands wrong");
    hc_check("sgfmeta-3.2", row[0] == 1 && row[1] == 1 && row[74] == 0.5f && row[79] == 1 && row[151 + 2] == 1,
             "flags wrong");
    hc_check("sgfmeta-3.3", fabsf(row[86] - (float)(0.5 * log(81 / 361.0))) == 0 &&
                                fabsf(row[82] - (float)(0.4 * (log(1260.0) - 6.5))) == 0,
             "board area or time features wrong");
    /* 2016-09-01 is day 17045 after 1970-01-01: the first date pair is cos/sin(17045/7 * 2pi). */
    double rev = 17045.0 / 7.0;
    hc_check("sgfmeta-3.4", row[87] == (float)cos(rev * 6.283185307179586476925) &&
                                row[88] == (float)sin(rev * 6.283185307179586476925),
             "date features wrong: %g %g", row[87], row[88]);
    return hc_test_exit();
}
