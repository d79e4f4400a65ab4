/* hc_crc32 (harness/base/crc32.h) against zlib's crc32: every length 0..1100 at every alignment
 * 0..15, large buffers, chaining across arbitrary splits, and gzip's check value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hc_test.h"
#include "harness/base/crc32.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned char rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned char)(rng >> 24);
}

int main(void)
{
    hc_plan(6);
    printf("# hc_crc32 runs as %s\n", hc_crc32_isa());
    enum { BIG = 3 << 20 };
    unsigned char *buf = malloc(BIG + 64);
    if (!buf)
        return 1;
    for (size_t i = 0; i < BIG + 64; i++)
        buf[i] = rnd();

    /* the standard check value: CRC-32 of "123456789" */
    hc_check("crc32-1.1", hc_crc32(0, "123456789", 9) == 0xcbf43926u, "crc of \"123456789\" = %08x",
             hc_crc32(0, "123456789", 9));

    int bad = 0;
    size_t bad_len = 0, bad_off = 0;
    for (size_t len = 0; len <= 1100 && !bad; len++)
        for (size_t off = 0; off < 16; off++) {
            uint32_t seed = (uint32_t)(len * 2654435761u);
            if (hc_crc32(seed, buf + off, len) != (uint32_t)crc32(seed, buf + off, (uInt)len)) {
                bad = 1, bad_len = len, bad_off = off;
                break;
            }
        }
    hc_check("crc32-1.2", !bad, "differs from zlib at length %zu, offset %zu", bad_len, bad_off);

    uint32_t z = (uint32_t)crc32(0, buf + 3, BIG - 5), h = hc_crc32(0, buf + 3, BIG - 5);
    hc_check("crc32-1.3", z == h, "%d bytes: %08x, zlib %08x", BIG - 5, h, z);

    /* chained over random splits: the same as one call */
    uint32_t c = 0;
    size_t at = 0;
    while (at < BIG) {
        size_t m = (size_t)rnd() * (rnd() & 1 ? 97 : 1) + (rnd() & 15);
        if (m > BIG - at)
            m = BIG - at;
        c = hc_crc32(c, buf + at, m);
        at += m;
    }
    hc_check("crc32-1.4", c == (uint32_t)crc32(0, buf, BIG), "chained %08x, whole %08x", c,
             (uint32_t)crc32(0, buf, BIG));

    /* all zeros and all ones (no cancellation by luck of random data) */
    memset(buf, 0, 4096);
    hc_check("crc32-1.5", hc_crc32(0, buf, 4096) == (uint32_t)crc32(0, buf, 4096), "zeros");
    memset(buf, 0xff, 4096);
    hc_check("crc32-1.6", hc_crc32(0xdeadbeefu, buf, 4096) == (uint32_t)crc32(0xdeadbeefu, buf, 4096), "ones");
    free(buf);
    return hc_test_exit();
}
