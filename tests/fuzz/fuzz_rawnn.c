/* The reply to GTP `kata-raw-nn` (hc_gtp_parse_raw_nn). The first two bytes give the board
 * (2-19 wide and high), the third the symmetry asked for; the rest is the reply text. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "backends/gtp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int xs = 2 + data[0] % 18, ys = 2 + data[1] % 18, sym = data[2] % 8;
    char *reply = fuzz_strdup(data + 3, size - 3);
    hc_nnoutput o;
    hc_err err = {0};
    if (hc_nnoutput_init(&o, 19, 19, 1, &err))
        abort();
    if (hc_gtp_parse_raw_nn(reply, sym, xs, ys, 1e-4, &o, &err) && (err.code == HC_OK || !strstr(err.msg, "kata-raw-nn"))) {
        fprintf(stderr, "raw-nn: failure without a clear message: %s\n", err.msg);
        abort();
    }
    hc_nnoutput_free(&o);
    free(reply);
    return 0;
}
