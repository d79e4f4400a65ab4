/* Reference outputs: JSON Lines in the golden and KataGo testgpuerror formats (hc_nnoutputs_load),
 * re-formatted in both formats and parsed back; an input starting with "HCO1" goes to the
 * binary record reader of the reference cache (hc_nnoutput_read_records) instead. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "harness/data/nnoutput.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    hc_err err = {0};
    if (size >= 4 && memcmp(data, "HCO1", 4) == 0) {
        enum { N = 8 };
        hc_nnoutput outs[N];
        unsigned char got[N] = {0};
        memset(outs, 0, sizeof outs);
        long r = hc_nnoutput_read_records(path, outs, got, N, &err);
        if (r < 0 && (err.code == HC_OK || !strstr(err.msg, path))) {
            fprintf(stderr, "records: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        for (int i = 0; i < N; i++)
            if (got[i])
                hc_nnoutput_free(&outs[i]);
        close(fd);
        return 0;
    }
    hc_nnoutput *os = NULL;
    size_t n = 0;
    int rc = hc_nnoutputs_load(path, &os, &n, &err);
    close(fd);
    if (rc) {
        if (err.code == HC_OK || !strstr(err.msg, path)) {
            fprintf(stderr, "nnoutput: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        return 0;
    }
    for (size_t i = 0; i < n && i < 16; i++)
        for (int f = HC_NNOUT_GOLDEN; f <= HC_NNOUT_KATAGO; f++) {
            hc_err e = {0};
            char *t = hc_nnoutput_format(&os[i], f, NULL, &e);
            if (!t)
                continue;
            hc_nnoutput back;
            memset(&back, 0, sizeof back);
            if (hc_nnoutput_parse(t, "fuzz-roundtrip", &back, &e)) {
                fprintf(stderr, "nnoutput: the writer's line does not parse back: %s\n%s\n", e.msg, t);
                abort();
            }
            hc_nnoutput_free(&back);
            free(t);
        }
    hc_nnoutputs_free(os, n);
    return 0;
}
