/* The one supported range of board and NN buffer sizes, and the one check every reader and command uses. */
#ifndef HC_SIZES_H
#define HC_SIZES_H

#include "harness/base/err.h"

/* Boards and NN buffers are 1..19 on each side: 19 is KataGo's default NNPos::MAX_BOARD_LEN, to
 * which halfcheck's board (Zobrist tables, arrays) is compiled, and 1x1 is the smallest board the
 * reference evaluates (tests/test_refusals.c runs both ends). A buffer must also hold its board.
 * Two readers keep their own bounds on purpose: SGF sizes start at 2 as in KataGo's SGF reader,
 * and outputs files (written by other programs, e.g. KataGo builds with a larger MAX_BOARD_LEN)
 * are read up to 64x64 by `compare`. */
enum { HC_MIN_BOARD_LEN = 1, HC_MAX_BOARD_LEN = 19 };

/* 0 when both sides are within HC_MIN_BOARD_LEN..HC_MAX_BOARD_LEN; else -1 with err (HC_EUSAGE)
 * "WHAT WxH is outside the supported sizes 1x1..19x19". Callers that know the file prefix it. */
int hc_check_board_size(int x, int y, const char *what, hc_err *err);

#endif
