/* SHA-256 against FIPS 180-4 test vectors and the shared nets' published digests. */
#include <string.h>

#include "hc_test.h"
#include "harness/base/sha256.h"

static void vec(const char *name, const char *msg, size_t repeat, const char *want)
{
    hc_sha256 s;
    char hex[65];
    hc_sha256_init(&s);
    for (size_t i = 0; i < repeat; i++)
        hc_sha256_update(&s, msg, strlen(msg));
    hc_sha256_final_hex(&s, hex);
    hc_check(name, strcmp(hex, want) == 0, "got %s", hex);
}

int main(void)
{
    hc_plan(4 + 1); /* 1.x test vectors, 2.1 a shared net */
    vec("sha256-1.1", "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    vec("sha256-1.2", "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    vec("sha256-1.3", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    vec("sha256-1.4", "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    const char *net = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    if (!net) {
        hc_skip_rest("sha256-2.1", "../shared/nets absent");
        return hc_test_exit();
    }
    char hex[65];
    hc_err err = {0};
    hc_check("sha256-2.1",
             hc_sha256_file(net, hex, &err) == 0 &&
                 strcmp(hex, "f5d32604e3675c480c7c8f6aa579a1ea857135628a0afccc8fa56330fbacd38d") == 0,
             "%s %s", hex, err.msg);
    return hc_test_exit();
}
