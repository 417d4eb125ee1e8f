/* Shared by the unit tests of the command line: parse an argument list as
 * the program would, from the defaults. */
#ifndef CB_UNIT_PARAMS_H
#define CB_UNIT_PARAMS_H

#include <stddef.h>

#include "options/params.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* args: NULL-terminated, without the program name; at most 30 of them;
 * program: argv[0] (an nccl-tests name chooses their grammar). */
static inline int parse_as(const char *program, cb_params *p, char *err, size_t len,
                           const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)program;
    for (int i = 0; args[i] != NULL && argc < 31; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    cb_params_defaults(p);
    err[0] = '\0';
    return cb_params_parse(p, argc, argv, err, len);
}

static inline int parse(cb_params *p, char *err, size_t len, const char *const *args)
{
    return parse_as("nccl-collbench", p, err, len, args);
}

#endif
