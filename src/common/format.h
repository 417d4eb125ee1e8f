/* Numbers formatted for people, as the command line writes them. */
#ifndef CB_FORMAT_H
#define CB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Format a byte count with the largest exact binary suffix ("64M", "1000"). */
void cb_format_bytes(uint64_t bytes, char *buf, size_t len);

/* "s" unless n is 1: "%d node%s", n, cb_plural(n). */
const char *cb_plural(long long n);

#endif
