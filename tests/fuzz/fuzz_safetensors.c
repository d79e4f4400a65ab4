/* safetensors images (hc_safetensors_parse, harness/data/tensorfile.h): the whole input is the
 * file. A refusal must name the file; an accepted set must hold, per tensor, as many values as
 * its shape says, under distinct names, found by name, in the order of their data. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "harness/data/tensorfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hc_tensorset s;
    hc_err err = {0};
    if (hc_safetensors_parse(data, size, "fuzz.safetensors", &s, &err)) {
        if (err.code == HC_OK || !strstr(err.msg, "fuzz.safetensors")) {
            fprintf(stderr, "safetensors: refusal without a clear message: %s\n", err.msg);
            abort();
        }
        if (s.t || s.n || s.meta)
            abort();
        return 0;
    }
    for (int i = 0; i < s.n; i++) {
        const hc_tensor *t = &s.t[i];
        size_t count = 1;
        for (int d = 0; d < t->ndim; d++)
            count *= (size_t)t->shape[d];
        if (count != t->count || hc_tensorset_find(&s, t->name) != t)
            abort();
    }
    for (int i = 0; i < s.n_meta; i++)
        if (hc_tensorset_meta(&s, s.meta[2 * i]) == NULL)
            abort();
    hc_tensorset_free(&s);
    return 0;
}
