/*
 * Secrets in the environment: what every printer of an environment
 * variable asks before it writes a value (issue 44). A variable whose name
 * contains KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL, in any case, is
 * written as set, never with its value. Pure: no I/O, no state.
 */
#ifndef CB_COMMON_REDACT_H
#define CB_COMMON_REDACT_H

#include <stddef.h>

/* What is written instead of a secret's value. */
#define CB_REDACTED "set, not shown"

/* Whether the name (its first len bytes) says the variable holds a secret. */
int cb_env_name_secret(const char *name, size_t len);

/* The value to write for the entry NAME=VALUE: VALUE, or CB_REDACTED when
 * NAME says it is a secret; "" for an entry with no '='. */
const char *cb_env_shown_value(const char *entry);

#endif
