/* Strict parsing of command-line numbers: no atoi, no silent truncation. */
#ifndef CB_PARSE_H
#define CB_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A byte count: decimal digits with an optional K, M, G or T suffix (either
 * case) meaning 2^10, 2^20, 2^30, 2^40. Returns 0 and sets *out, or -1 when
 * the text is empty, has a sign, other characters, or overflows 64 bits.
 */
int cb_parse_bytes(const char *text, uint64_t *out);

/* A decimal integer in [min, max]. Returns 0, or -1 when malformed or out of range. */
int cb_parse_long(const char *text, long min, long max, long *out);

#endif
