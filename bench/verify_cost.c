/* Verification cost: the time to check (and to fill) a 256 MiB all-reduce
 * result, float sum over two ranks, against one memcpy of 256 MiB on the
 * same core. Prints the best of several repetitions of each, and the
 * ratios. Usage: verify_cost [MiB] [repetitions] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collective.h"
#include "pattern.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (mib == 0 || reps < 1) {
        fprintf(stderr, "usage: verify_cost [MiB > 0] [repetitions > 0]\n");
        return 2;
    }
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
