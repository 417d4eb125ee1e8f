/* SHA-256 and HMAC-SHA256 (src/common/hmac.c), which authenticate the
 * side channel's messages, against the published test vectors: FIPS
 * 180-4's examples and RFC 4231's test cases. */
#include <stdio.h>
#include <string.h>

#include "common/hmac.h"
#include "unit.h"

static void hex(const unsigned char *d, char *out)
{
    for (int i = 0; i < CB_SHA256_LEN; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static int sha256_is(const void *data, size_t len, const char *want)
{
    cb_sha256 s;
    unsigned char d[CB_SHA256_LEN];
    char got[2 * CB_SHA256_LEN + 1];
    cb_sha256_init(&s);
    cb_sha256_update(&s, data, len);
    cb_sha256_final(&s, d);
    hex(d, got);
    return strcmp(got, want) == 0;
}

static int hmac_is(const void *key, size_t klen, const void *data, size_t dlen, const char *want)
{
    unsigned char d[CB_SHA256_LEN];
    char got[2 * CB_SHA256_LEN + 1];
    cb_hmac_sha256(key, klen, data, dlen, NULL, 0, d);
    hex(d, got);
    return strcmp(got, want) == 0;
}

int main(void)
{
    unit_state u = {0, 0};
    CHECK(&u, sha256_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    CHECK(&u, sha256_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(&u, sha256_is(two_blocks, strlen(two_blocks),
                        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    /* The same message fed in pieces of every length gives the same hash. */
    for (size_t piece = 1; piece <= strlen(two_blocks); piece++) {
        cb_sha256 s;
        unsigned char d[CB_SHA256_LEN];
        char got[2 * CB_SHA256_LEN + 1];
        cb_sha256_init(&s);
        for (size_t at = 0; at < strlen(two_blocks); at += piece) {
            size_t left = strlen(two_blocks) - at;
            cb_sha256_update(&s, two_blocks + at, left < piece ? left : piece);
        }
        cb_sha256_final(&s, d);
        hex(d, got);
        CHECK(&u, strcmp(got, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    }

    /* RFC 4231, test cases 1, 2, 3 and 6 (a key longer than a block). */
    unsigned char k1[20], k3[20], d3[50], k6[131];
    memset(k1, 0x0b, sizeof k1);
    memset(k3, 0xaa, sizeof k3);
    memset(d3, 0xdd, sizeof d3);
    memset(k6, 0xaa, sizeof k6);
    CHECK(&u, hmac_is(k1, sizeof k1, "Hi There", 8,
                      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"));
    CHECK(&u, hmac_is("Jefe", 4, "what do ya want for nothing?", 28,
                      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    CHECK(&u, hmac_is(k3, sizeof k3, d3, sizeof d3,
                      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"));
    const char *tc6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    CHECK(&u, hmac_is(k6, sizeof k6, tc6, strlen(tc6),
                      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"));
    /* Two parts are the MAC of their concatenation. */
    unsigned char whole[CB_SHA256_LEN], parts[CB_SHA256_LEN];
    cb_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, NULL, 0, whole);
    cb_hmac_sha256("Jefe", 4, "what do ya ", 11, "want for nothing?", 17, parts);
    CHECK(&u, cb_mac_equal(whole, parts, sizeof whole));
    parts[31] ^= 1;
    CHECK(&u, !cb_mac_equal(whole, parts, sizeof whole));
    return unit_done(&u, "unit_hmac");
}
