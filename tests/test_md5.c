/* MD5 against the RFC 1321 test suite (appendix A.5), plus the streaming and word views KataGo's seeding reads. */
#include <stdio.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/md5.h"

static void hex16(const unsigned char d[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void vec(const char *name, const char *msg, const char *want)
{
    hc_md5 s;
    unsigned char d[16];
    char hex[33];
    hc_md5_init(&s);
    hc_md5_update(&s, msg, strlen(msg));
    hc_md5_final(&s, d);
    hex16(d, hex);
    hc_check(name, strcmp(hex, want) == 0, "md5(\"%s\") = %s, want %s", msg, hex, want);
}

int main(void)
{
    hc_plan(7 + 2);
    vec("md5-1.1", "", "d41d8cd98f00b204e9800998ecf8427e");
    vec("md5-1.2", "a", "0cc175b9c0f1b6a831c399e269772661");
    vec("md5-1.3", "abc", "900150983cd24fb0d6963f7d28e17f72");
    vec("md5-1.4", "message digest", "f96b697d7cb7938d525a2f31aaf161d0");
    vec("md5-1.5", "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b");
    vec("md5-1.6", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f");
    vec("md5-1.7", "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a");

    /* Fed one byte at a time across block boundaries, the digest must not change. */
    const char *msg = "12345678901234567890123456789012345678901234567890123456789012345678901234567890";
    hc_md5 s;
    unsigned char d[16];
    char hex[33];
    hc_md5_init(&s);
    for (size_t i = 0; i < strlen(msg); i++)
        hc_md5_update(&s, msg + i, 1);
    hc_md5_final(&s, d);
    hex16(d, hex);
    hc_check("md5-2.1", strcmp(hex, "57edf4a22be3c955ac49da2e2107b67a") == 0, "bytewise: %s", hex);

    /* The words are the digest's bytes read little-endian: "abc" -> 90 01 50 98 ... */
    uint32_t w[4];
    hc_md5_words("abc", 3, w);
    hc_check("md5-2.2", w[0] == 0x98500190u && w[1] == 0xb04fd23cu && w[3] == 0x727fe128u, "words %08x %08x %08x %08x",
             (unsigned)w[0], (unsigned)w[1], (unsigned)w[2], (unsigned)w[3]);
    return hc_test_exit();
}
