/* The supported range of board and NN buffer sizes (sizes.h). */
#include "harness/base/sizes.h"

int hc_check_board_size(int x, int y, const char *what, hc_err *err)
{
    if (x >= HC_MIN_BOARD_LEN && y >= HC_MIN_BOARD_LEN && x <= HC_MAX_BOARD_LEN && y <= HC_MAX_BOARD_LEN)
        return 0;
    return hc_err_set(err, HC_EUSAGE, "%s %dx%d is outside the supported sizes %dx%d..%dx%d", what, x, y,
                      HC_MIN_BOARD_LEN, HC_MIN_BOARD_LEN, HC_MAX_BOARD_LEN, HC_MAX_BOARD_LEN);
}
