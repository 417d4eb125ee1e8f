/* The option parser's state, shared by params.c and the options that live
 * in files of their own (params_health.c). Not for use outside them. */
#ifndef CB_PARAMS_PARSE_H
#define CB_PARAMS_PARSE_H
#include <stddef.h>
#include "params.h"

typedef struct parse_state {
    cb_params *p;
    char *err;
    size_t err_len;
    const char *option;    /* as the user wrote it, for messages */
    int factor_given;
    int step_given;
} parse_state;

/* One line into s->err naming the option; returns -1. */
int cb_params_fail(parse_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* params_health.c: -o's scan words (1 when name is one, 0 when not, -1
 * after an error), --suspect-ratio, --min-busbw and -N. */
int cb_params_scan_part(parse_state *s, const char *name);
int cb_params_opt_suspect_ratio(parse_state *s, const char *v);
int cb_params_opt_min_busbw(parse_state *s, const char *v);
int cb_params_opt_cycles(parse_state *s, const char *v);
/* params_native.c: --nccl-impl and -R. */
int cb_params_opt_nccl_impl(parse_state *s, const char *v);
int cb_params_opt_register(parse_state *s, const char *v);
/* Their defaults, and their checks after every option is read. */
void cb_params_health_defaults(cb_params *p);
int cb_params_check_health(parse_state *s);
#endif
