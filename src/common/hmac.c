#include "common/hmac.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t round_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the state. */
static void compress(uint32_t h[8], const unsigned char *block)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
               (uint32_t)block[4 * i + 2] << 8 | (uint32_t)block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t v[8];
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) +
                      round_k[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                      ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof *v);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

void cb_sha256_init(cb_sha256 *s)
{
    /* The fractional parts of the square roots of the first 8 primes. */
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, initial, sizeof s->h);
    s->bytes = 0;
    s->have = 0;
}

void cb_sha256_update(cb_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->bytes += len;
    while (len > 0) {
        size_t take = CB_SHA256_BLOCK - s->have < len ? CB_SHA256_BLOCK - s->have : len;
        memcpy(s->buf + s->have, p, take);
        s->have += take;
        p += take;
        len -= take;
        if (s->have == CB_SHA256_BLOCK) {
            compress(s->h, s->buf);
            s->have = 0;
        }
    }
}

void cb_sha256_final(cb_sha256 *s, unsigned char out[CB_SHA256_LEN])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[CB_SHA256_BLOCK + 8] = {0x80};
    /* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
    size_t padlen = s->have < 56 ? 56 - s->have : 120 - s->have;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    cb_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(s->h[i] >> (24 - 8 * j));
}

void cb_hmac_sha256(const void *key, size_t key_len, const void *a, size_t alen, const void *b,
                    size_t blen, unsigned char out[CB_SHA256_LEN])
{
    unsigned char k[CB_SHA256_BLOCK] = {0}, pad[CB_SHA256_BLOCK], inner[CB_SHA256_LEN];
    cb_sha256 s;
    if (key_len > CB_SHA256_BLOCK) {   /* a long key is hashed first */
        cb_sha256_init(&s);
        cb_sha256_update(&s, key, key_len);
        cb_sha256_final(&s, k);
    } else if (key_len > 0) {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < CB_SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x36;
    cb_sha256_init(&s);
    cb_sha256_update(&s, pad, sizeof pad);
    cb_sha256_update(&s, a, alen);
    if (blen > 0)
        cb_sha256_update(&s, b, blen);
    cb_sha256_final(&s, inner);
    for (int i = 0; i < CB_SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x5c;
    cb_sha256_init(&s);
    cb_sha256_update(&s, pad, sizeof pad);
    cb_sha256_update(&s, inner, sizeof inner);
    cb_sha256_final(&s, out);
}

int cb_mac_equal(const unsigned char *x, const unsigned char *y, size_t len)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= x[i] ^ y[i];
    return diff == 0;
}

int cb_random_bytes(unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}
