/* Text into JSON: every string the program writes into a JSON document
 * (the run's and the companion tools') goes through here, so the document
 * is valid UTF-8 whatever bytes the command line, the environment
 * (NCCL_HOSTID) or an input file held. */
#ifndef CB_JSON_TEXT_H
#define CB_JSON_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF), or 0 when s starts
 * with a byte that begins none (s is NUL-ended). */
size_t cb_utf8_length(const unsigned char *s);

/* Write text as a JSON string, quotes included: '"' and '\' escaped,
 * control characters and DEL as \uXXXX (\n, \r, \t short), and each byte
 * that is not part of well-formed UTF-8 as U+FFFD (\ufffd). */
void cb_json_write_string(FILE *f, const char *text);

#endif
