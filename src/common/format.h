/* Numbers formatted for people, as the command line writes them. */
#ifndef CB_FORMAT_H
#define CB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Format a byte count with the largest exact binary suffix ("64M", "1000"). */
void cb_format_bytes(uint64_t bytes, char *buf, size_t len);

/* "s" unless n is 1: "%d node%s", n, cb_plural(n). */
const char *cb_plural(long long n);

/* Append a formatted piece to the string in text (len bytes of room),
 * cut where the room ends; a full text is left as it is. */
void cb_append(char *text, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* value in width characters as nccl-tests squeezes its table's figures:
 * "%*.2f" if that fits in width, else "%*.1f", else "%*.0f", else an
 * exponent ("%*.1e" from width 7, "%*.0e" below), cut at width. */
void cb_format_squeezed(double value, int width, char *buf, size_t len);

#endif
