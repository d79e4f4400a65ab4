/* numpy .npy images (hc_npy_parse, harness/data/tensorfile.h): the whole input is the file. A
 * refusal must name the file and the tensor; an accepted array must hold as many values as its
 * shape says, each exactly representable in its stored element type. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "harness/data/tensorfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hc_tensor t;
    hc_err err = {0};
    if (hc_npy_parse(data, size, "fuzz.npy", "x", &t, &err)) {
        if (err.code == HC_OK || !strstr(err.msg, "fuzz.npy") || (err.code == HC_EFORMAT && !strstr(err.msg, "tensor x"))) {
            fprintf(stderr, "npy: refusal without a clear message: %s\n", err.msg);
            abort();
        }
        if (t.data || t.name)
            abort();
        return 0;
    }
    size_t count = 1;
    for (int i = 0; i < t.ndim; i++)
        count *= (size_t)t.shape[i];
    if (count != t.count || strcmp(t.name, "x") != 0)
        abort();
    for (size_t i = 0; i < t.count && t.dtype == HC_DT_F16; i++)
        if (t.data[i] == t.data[i] && hc_f16_to_float(hc_float_to_f16(t.data[i])) != t.data[i])
            abort();
    hc_tensor_clear(&t);
    return 0;
}
