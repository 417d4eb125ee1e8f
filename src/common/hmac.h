/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the side channel's
 * message authentication (safety/sidechannel.h): small, dependency-free,
 * and checked against the published test vectors by tests/unit/unit_hmac.c.
 * Not constant-time beyond cb_mac_equal; the side channel needs no more.
 */
#ifndef CB_HMAC_H
#define CB_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define CB_SHA256_LEN 32
#define CB_SHA256_BLOCK 64

typedef struct cb_sha256 {
    uint32_t h[8];
    uint64_t bytes;                  /* hashed so far */
    unsigned char buf[CB_SHA256_BLOCK];
    size_t have;                     /* bytes in buf */
} cb_sha256;

void cb_sha256_init(cb_sha256 *s);
void cb_sha256_update(cb_sha256 *s, const void *data, size_t len);
void cb_sha256_final(cb_sha256 *s, unsigned char out[CB_SHA256_LEN]);

/* HMAC-SHA256 of the concatenation of two parts (b may be NULL, blen 0). */
void cb_hmac_sha256(const void *key, size_t key_len, const void *a, size_t alen, const void *b,
                    size_t blen, unsigned char out[CB_SHA256_LEN]);

/* len random bytes from the kernel (getrandom) for keys and nonces; 0, or
 * -1 when none can be had. */
int cb_random_bytes(unsigned char *buf, size_t len);

/* 1 when the len bytes of x and y are equal, in time that does not depend
 * on where they differ. */
int cb_mac_equal(const unsigned char *x, const unsigned char *y, size_t len);

#endif
