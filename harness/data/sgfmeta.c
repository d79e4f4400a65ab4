/* SGF metadata for human-SL nets: KataGo's metadata input row (sgfmeta.h). */
#include "harness/data/sgfmeta.h"
#include "harness/base/hcmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Days from 1970-01-01 in the proleptic Gregorian calendar (what KataGo's SimpleDate counts). */
static long days_from_epoch(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int inverse_rank(const char *s, size_t len)
{
    char buf[8];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    long n = strtol(buf, &end, 10);
    if (end == buf || n < 1)
        return -1;
    if (strcmp(end, "d") == 0 && n <= 9)
        return (int)(10 - n);
    if (strcmp(end, "k") == 0 && n <= 20)
        return (int)(9 + n);
    return -1;
}

static void basic_rank_profile(hc_sgfmeta *m, int inv_b, int inv_w, int pre_az)
{
    memset(m, 0, sizeof *m);
    m->inverse_b_rank = inv_b;
    m->inverse_w_rank = inv_w;
    m->b_is_human = m->w_is_human = true;
    m->game_ratedness_is_unknown = true;
    m->tc_is_byo_yomi = true;
    m->main_time_seconds = 1200;
    m->period_time_seconds = 30;
    m->byo_yomi_periods = 5;
    m->year = pre_az ? 2016 : 2020;
    m->month = pre_az ? 9 : 3;
    m->day = 1;
    m->source = 2;
}

int hc_sgfmeta_profile(const char *name, hc_sgfmeta *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    if (strncmp(name, "proyear_", 8) == 0) {
        char *end;
        long year = strtol(name + 8, &end, 10);
        if (end != name + 8 && *end == '\0' && year >= 1800 && year <= 2023) {
            out->inverse_b_rank = out->inverse_w_rank = 1;
            out->b_is_human = out->w_is_human = true;
            out->tc_is_unknown = true;
            out->year = (int)year;
            out->month = 6;
            out->day = 1;
            out->source = year <= 2020 ? 5 : 6;
            return 0;
        }
    }
    int pre_az = -1;
    const char *ranks = NULL;
    if (strncmp(name, "rank_", 5) == 0) {
        pre_az = 0;
        ranks = name + 5;
    } else if (strncmp(name, "preaz_", 6) == 0) {
        pre_az = 1;
        ranks = name + 6;
    }
    if (ranks) {
        int r = inverse_rank(ranks, strlen(ranks));
        if (r != -1) {
            basic_rank_profile(out, r, r, pre_az);
            return 0;
        }
        const char *us = strchr(ranks, '_');
        if (us && !strchr(us + 1, '_')) {
            int rb = inverse_rank(ranks, (size_t)(us - ranks));
            int rw = inverse_rank(us + 1, strlen(us + 1));
            if (rb != -1 && rw != -1) {
                basic_rank_profile(out, rb, rw, pre_az);
                return 0;
            }
        }
    }
    return hc_err_set(err, HC_EUSAGE,
                      "unknown human SL profile \"%s\" (want preaz_RANK, rank_RANK, rank_BRANK_WRANK or proyear_YEAR)",
                      name);
}

int hc_sgfmeta_fill_row(const hc_sgfmeta *m, int white, int board_area, float *row, hc_err *err)
{
    for (int i = 0; i < HC_SGFMETA_CHANNELS; i++)
        row[i] = 0.0f;
    row[0] = (white ? m->w_is_human : m->b_is_human) ? 1.0f : 0.0f;
    row[1] = (white ? m->b_is_human : m->w_is_human) ? 1.0f : 0.0f;
    bool pla_unranked = white ? m->w_is_unranked : m->b_is_unranked;
    bool opp_unranked = white ? m->b_is_unranked : m->w_is_unranked;
    row[2] = pla_unranked ? 1.0f : 0.0f;
    row[3] = opp_unranked ? 1.0f : 0.0f;
    row[4] = (white ? m->w_rank_is_unknown : m->b_rank_is_unknown) ? 1.0f : 0.0f;
    row[5] = (white ? m->b_rank_is_unknown : m->w_rank_is_unknown) ? 1.0f : 0.0f;
    const int rank_start = 6, rank_len = 34;
    int inv_pla = white ? m->inverse_w_rank : m->inverse_b_rank;
    int inv_opp = white ? m->inverse_b_rank : m->inverse_w_rank;
    if (!pla_unranked)
        for (int i = 0; i < inv_pla && i < rank_len; i++)
            row[rank_start + i] = 1.0f;
    if (!opp_unranked)
        for (int i = 0; i < inv_opp && i < rank_len; i++)
            row[rank_start + rank_len + i] = 1.0f;
    row[74] = m->game_ratedness_is_unknown ? 0.5f : m->game_is_unrated ? 1.0f : 0.0f;
    row[75] = m->tc_is_unknown;
    row[76] = m->tc_is_none;
    row[77] = m->tc_is_absolute;
    row[78] = m->tc_is_simple;
    row[79] = m->tc_is_byo_yomi;
    row[80] = m->tc_is_canadian;
    row[81] = m->tc_is_fischer;
    if (row[75] + row[76] + row[77] + row[78] + row[79] + row[80] + row[81] != 1.0f)
        return hc_err_set(err, HC_EUSAGE, "SGF metadata: exactly one time-control flag must be set");
    double main_t = fmin(fmax(m->main_time_seconds, 0.0), 3.0 * 86400);
    double period_t = fmin(fmax(m->period_time_seconds, 0.0), 1.0 * 86400);
    row[82] = (float)(0.4 * (hc_log(main_t + 60.0) - 6.5));
    row[83] = (float)(0.3 * (hc_log(period_t + 1.0) - 3.0));
    int periods = m->byo_yomi_periods < 0 ? 0 : m->byo_yomi_periods > 50 ? 50 : m->byo_yomi_periods;
    int moves = m->canadian_moves < 0 ? 0 : m->canadian_moves > 50 ? 50 : m->canadian_moves;
    row[84] = (float)(0.5 * (hc_log(periods + 2.0) - 1.5));
    row[85] = (float)(0.25 * (hc_log(moves + 2.0) - 1.5));
    row[86] = (float)(0.5 * hc_log(board_area / 361.0));
    double days = (double)days_from_epoch(m->year, m->month, m->day);
    double period = 7.0;
    const double factor = hc_pow_pos(80000, 1.0 / (32 - 1));
    const double two_pi = 6.283185307179586476925;
    for (int i = 0; i < 32; i++) {
        double revolutions = days / period;
        row[87 + i * 2] = (float)hc_cos(revolutions * two_pi);
        row[87 + i * 2 + 1] = (float)hc_sin(revolutions * two_pi);
        period *= factor;
    }
    if (m->source < 0 || m->source >= 16)
        return hc_err_set(err, HC_EUSAGE, "SGF metadata: invalid source %d", m->source);
    row[151 + m->source] = 1.0f;
    return 0;
}
