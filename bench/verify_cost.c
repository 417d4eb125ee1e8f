/* Verification cost: the time to check (and to fill) a 256 MiB all-reduce
 * result, float sum over two ranks, against one memcpy of 256 MiB on the
 * same core. Prints the best of several repetitions of each, and the
 * ratios. Usage: verify_cost [MiB] [repetitions] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_args.h"
#include "collectives/collective.h"
#include "verify/pattern.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *usage = "verify_cost [MiB] [repetitions]";
    long mib_arg, reps_arg;
    if (argc > 3 || bench_arg(argc, argv, 1, 256, 1, 1L << 20, usage, &mib_arg) != 0 ||
        bench_arg(argc, argv, 2, 5, 1, 1000000, usage, &reps_arg) != 0) {
        if (argc > 3)
            fprintf(stderr, "%s: too many arguments\nusage: %s\n", argv[0], usage);
        return 2;
    }
    size_t mib = (size_t)mib_arg;
    int reps = (int)reps_arg;
    size_t bytes = mib << 20, count = bytes / sizeof(float);
    char why[128];
    cb_pattern pat;
    if (cb_pattern_init(&pat, CB_FLOAT, CB_SUM, 2, 0x2545u, why, sizeof why) != 0) {
        fprintf(stderr, "verify_cost: %s\n", why);
        return 1;
    }
    float *a = malloc(bytes), *b = malloc(bytes);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "verify_cost: out of memory\n");
        free(a);
        free(b);
        return 1;
    }
    /* The result every rank must hold. */
    for (size_t i = 0; i < count; i++)
        a[i] = (float)cb_pattern_reduced(&pat, i);
    memset(b, 1, bytes);
    double copy = 1e30, check = 1e30, fill = 1e30;
    size_t wrong = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        memcpy(b, a, bytes);
        double t1 = now();
        cb_pattern_fill(&pat, 0, b, count);
        double t2 = now(), t3 = t2;
        cb_mismatch first;
        wrong += cb_check_reduced(&pat, a, count, &first);
        double t4 = now();
        copy = t1 - t0 < copy ? t1 - t0 : copy;
        fill = t2 - t1 < fill ? t2 - t1 : fill;
        check = t4 - t3 < check ? t4 - t3 : check;
    }
    printf("verify_cost: %zu MiB float sum, best of %d\n", mib, reps);
    printf("  memcpy %.3f s  check %.3f s  fill %.3f s  wrong %zu\n", copy, check, fill, wrong);
    printf("  check/memcpy %.2f (target <= 2.00)  fill/memcpy %.2f\n", check / copy,
           fill / copy);
    free(a);
    free(b);
    return wrong == 0 ? 0 : 1;
}
