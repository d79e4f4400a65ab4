/* Model files: the streaming reader (hc_net_load) over a file, so gzip'd and plain inputs,
 * binary and text floats, all take the real path; what loads is folded as KataGo folds it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "harness/model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    hc_err err = {0};
    hc_net *net = hc_net_load(path, &err);
    close(fd);
    if (!net) {
        if (err.code == HC_OK || !strstr(err.msg, path)) {
            fprintf(stderr, "model: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        return 0;
    }
    hc_net_reduce_activations(net);
    hc_net_free(net);
    return 0;
}
