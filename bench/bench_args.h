/* The bench programs' positional arguments, parsed strictly: a decimal
 * integer in a range, or the default when the argument is absent. A bad
 * argument prints the usage with the value and returns -1. Header-only so
 * that the bare loops link nothing of the tool. */
#ifndef CB_BENCH_ARGS_H
#define CB_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline int bench_arg(int argc, char **argv, int i, long dflt, long min, long max,
                     const char *usage, long *out)
{
    if (i >= argc) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(argv[i], &end, 10);
    if (errno != 0 || end == argv[i] || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "%s: argument %d '%s' is not an integer from %ld to %ld\nusage: %s\n",
                argv[0], i, argv[i], min, max, usage);
        return -1;
    }
    *out = v;
    return 0;
}

/* The bare loops' four arguments: iterations, warmup, smallest and largest
 * size in bytes (at least one float, largest not below smallest). */
typedef struct bench_loop_args {
    long iters, warmup, min_bytes, max_bytes;
} bench_loop_args;

static inline int bench_loop_args_parse(int argc, char **argv, const char *usage, bench_loop_args *a)
{
    if (argc > 5) {
        fprintf(stderr, "%s: too many arguments\nusage: %s\n", argv[0], usage);
        return -1;
    }
    if (bench_arg(argc, argv, 1, 100, 1, 1L << 30, usage, &a->iters) != 0 ||
        bench_arg(argc, argv, 2, 5, 0, 1L << 30, usage, &a->warmup) != 0 ||
        bench_arg(argc, argv, 3, 8, 4, 1L << 40, usage, &a->min_bytes) != 0 ||
        bench_arg(argc, argv, 4, 4L << 20, 4, 1L << 40, usage, &a->max_bytes) != 0)
        return -1;
    if (a->max_bytes < a->min_bytes) {
        fprintf(stderr, "%s: MAX_BYTES %ld is below MIN_BYTES %ld\nusage: %s\n", argv[0],
                a->max_bytes, a->min_bytes, usage);
        return -1;
    }
    return 0;
}

#endif
