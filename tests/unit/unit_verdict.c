/* The closing verdict (src/printers/closing.c): PASS, FAIL or UNCHECKED and every
 * reason, in order, from the summary alone. */
#include <math.h>
#include <string.h>

#include "result.h"
#include "safety/agreement.h"
#include "unit.h"

static cb_summary clean(void)
{
    cb_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.first_wrong_rank = -1;
    sum.min_bw = NAN;
    return sum;
}

int main(void)
{
    unit_state u = {0, 0};
    char why[512];
    cb_summary sum = clean();
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "PASS") == 0 && why[0] == '\0');

    /* Wrong elements: the rank and host, "first" when others saw some too. */
    sum = clean();
    sum.exit_status = CB_EXIT_WRONG;
    sum.wrong = 3;
    sum.first_wrong_rank = 5;
    snprintf(sum.first_wrong_host, sizeof sum.first_wrong_host, "h2");
    sum.below_expectation = 2;
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "FAIL") == 0);
    CHECK(&u, strcmp(why, "3 wrong elements on rank 5 host h2; 2 rows below expectation") == 0);
    sum.wrong_ranks_differ = 1;
    sum.wrong = 1;
    sum.below_expectation = 1;
    cb_verdict(&sum, why, sizeof why);
    CHECK(&u, strcmp(why, "1 wrong element first on rank 5 host h2; 1 row below expectation") == 0);

    /* -B's unrepeatable launches: after the wrong elements, before the
     * rows below expectation. */
    sum = clean();
    sum.exit_status = CB_EXIT_WRONG;
    sum.unrepeatable = 2;
    sum.first_unrepeatable_rank = 3;
    snprintf(sum.first_unrepeatable_host, sizeof sum.first_unrepeatable_host, "h1");
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "FAIL") == 0);
    CHECK(&u, strcmp(why, "2 unrepeatable launches first on rank 3 host h1") == 0);
    sum.wrong = 1;
    sum.first_wrong_rank = 0;
    snprintf(sum.first_wrong_host, sizeof sum.first_wrong_host, "h0");
    sum.unrepeatable = 1;
    sum.below_expectation = 1;
    cb_verdict(&sum, why, sizeof why);
    CHECK(&u, strcmp(why, "1 wrong element on rank 0 host h0; 1 unrepeatable launch first on "
                          "rank 3 host h1; 1 row below expectation") == 0);

    /* Every reason, in the documented order. */
    const cb_collective bcast = {.name = "broadcast"};
    sum = clean();
    sum.exit_status = CB_EXIT_SIGINT;
    snprintf(sum.error, sizeof sum.error, "interrupted by SIGINT");
    sum.wrong = 2;   /* the health scan's: no rank */
    sum.below_min_busbw = 4;
    sum.min_bw = 100;
    sum.averages[0] = (cb_busbw_average){.collective = &bcast, .sum = 30, .cells = 2,
                                         .min_bw_failed = 1};
    sum.naverages = 1;
    sum.scan_suspects = 1;
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "FAIL") == 0);
    CHECK(&u, strcmp(why, "stopped early, status 130; 2 wrong elements; 4 figures below "
                          "--min-busbw; broadcast average busbw 15.00 GB/s below 0.9 x "
                          "NCCL_TESTS_MIN_BW 100; 1 scan suspect") == 0);

    /* A failed status with no figure behind it still says why; a short
     * buffer is cut, never overrun. */
    sum = clean();
    sum.exit_status = CB_EXIT_RUNTIME;
    cb_verdict(&sum, why, sizeof why);
    CHECK(&u, strcmp(why, "status 1") == 0);
    char tiny[8];
    sum.wrong = 12345;
    sum.first_wrong_rank = 1;
    CHECK(&u, strcmp(cb_verdict(&sum, tiny, sizeof tiny), "FAIL") == 0 && strlen(tiny) < 8);
    CHECK(&u, strcmp(cb_verdict(&sum, NULL, 0), "FAIL") == 0);

    /* Nothing measured, and rows --expect could not judge: UNCHECKED,
     * never PASS (issue 36). */
    sum = clean();
    sum.exit_status = CB_EXIT_NOTHING;
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "UNCHECKED") == 0);
    CHECK(&u, strcmp(why, "nothing measured") == 0);
    sum = clean();
    sum.exit_status = CB_EXIT_UNCHECKED;
    sum.unchecked = 2;
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "UNCHECKED") == 0);
    CHECK(&u, strcmp(why, "2 rows with no expectation") == 0);
    /* Rows below expectation outrank those with none: FAIL, both named. */
    sum.exit_status = CB_EXIT_SLOW;
    sum.below_expectation = 1;
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "FAIL") == 0);
    CHECK(&u, strcmp(why, "1 row below expectation; 2 rows with no expectation") == 0);

    /* auto's host memory is named last, on a pass as on a failure. */
    sum = clean();
    sum.auto_host_backend = "mpi";
    CHECK(&u, strcmp(cb_verdict(&sum, why, sizeof why), "PASS") == 0);
    CHECK(&u, strcmp(why, "mpi backend, host memory") == 0);
    sum.exit_status = CB_EXIT_RUNTIME;
    cb_verdict(&sum, why, sizeof why);
    CHECK(&u, strcmp(why, "status 1; mpi backend, host memory") == 0);
    return unit_done(&u, "unit_verdict");
}
