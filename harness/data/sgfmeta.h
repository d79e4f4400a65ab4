/* SGF metadata for human-SL nets (model versions with a metadata encoder): KataGo's named
 * profiles (humanSLProfile: "preaz_5k", "rank_3d", "rank_1k_9d", "proyear_1990", ...) and the
 * 192-float input row it builds from them (SGFMetadata::fillMetadataRow). testgpuerror
 * evaluates such nets with "preaz_5k". */
#ifndef HC_SGFMETA_H
#define HC_SGFMETA_H

#include <stdbool.h>

#include "harness/base/err.h"

enum { HC_SGFMETA_CHANNELS = 192 };

typedef struct hc_sgfmeta {
    int inverse_b_rank, inverse_w_rank; /* 9d = 1 ... 1d = 9, 1k = 10, ... 20k = 29 */
    bool b_is_unranked, w_is_unranked, b_rank_is_unknown, w_rank_is_unknown, b_is_human, w_is_human;
    bool game_is_unrated, game_ratedness_is_unknown;
    bool tc_is_unknown, tc_is_none, tc_is_absolute, tc_is_simple, tc_is_byo_yomi, tc_is_canadian, tc_is_fischer;
    double main_time_seconds, period_time_seconds;
    int byo_yomi_periods, canadian_moves;
    int year, month, day;
    int source; /* 1 OGS, 2 KGS, 3 FOX, 4 TYGEM, 5 GOGOD, 6 GO4GO */
} hc_sgfmeta;

/* Parses a profile name as KataGo's SGFMetadata::getProfile does; unknown names are errors. */
int hc_sgfmeta_profile(const char *name, hc_sgfmeta *out, hc_err *err);

/* Fills row[HC_SGFMETA_CHANNELS] for the player to move (white or not) on a board of board_area points. */
int hc_sgfmeta_fill_row(const hc_sgfmeta *m, int next_pla_white, int board_area, float *row, hc_err *err);

#endif
