/*
 * The closing verdict every output carries: PASS, FAIL or UNCHECKED and why, from the
 * run's summary alone, so that the table's "# Result:" line and the JSON
 * summary cannot disagree. A pure function: no I/O.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "result.h"
#include "safety/agreement.h"

/* Appends "; " and one reason to out (used of len), cut at len. */
static void add_reason(char *out, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_reason(char *out, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= len)
        return;
    if (*used > 0)
        *used += (size_t)snprintf(out + *used, len - *used, "; ");
    if (*used + 1 >= len) {
        *used = len - 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *used, len - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 ? *used : *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

static const char *plural(long long n)
{
    return n == 1 ? "" : "s";
}

/* Nothing measured, or rows that could not be judged: not a pass, and not
 * a fault found either. */
static const char *verdict_word(int status)
{
    return status == CB_EXIT_OK                                           ? "PASS"
           : status == CB_EXIT_NOTHING || status == CB_EXIT_UNCHECKED ? "UNCHECKED"
                                                                          : "FAIL";
}

const char *cb_verdict(const cb_summary *sum, char *reasons, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return sum->exit_status == CB_EXIT_OK && sum->unverified > 0
                   ? "UNCHECKED"
                   : verdict_word(sum->exit_status);
    reasons[0] = '\0';
    if (sum->error[0] != '\0')
        add_reason(reasons, len, &used, "stopped early, status %d", sum->exit_status);
    if (sum->wrong > 0 && sum->first_wrong_rank >= 0)
        add_reason(reasons, len, &used, "%llu wrong element%s %son rank %d host %s",
                   (unsigned long long)sum->wrong, plural((long long)sum->wrong),
                   sum->wrong_ranks_differ ? "first " : "", sum->first_wrong_rank,
                   sum->first_wrong_host);
    else if (sum->wrong > 0)
        add_reason(reasons, len, &used, "%llu wrong element%s", (unsigned long long)sum->wrong,
                   plural((long long)sum->wrong));
    if (sum->unrepeatable > 0)
        add_reason(reasons, len, &used, "%llu unrepeatable launch%s first on rank %d host %s",
                   (unsigned long long)sum->unrepeatable,
                   sum->unrepeatable == 1 ? "" : "es", sum->first_unrepeatable_rank,
                   sum->first_unrepeatable_host);
    if (sum->link_faults > 0)
        add_reason(reasons, len, &used, "%d link fault%s", sum->link_faults,
                   plural(sum->link_faults));
    if (sum->below_expectation > 0)
        add_reason(reasons, len, &used, "%d row%s below expectation", sum->below_expectation,
                   plural(sum->below_expectation));
    if (sum->below_min_busbw > 0)
        add_reason(reasons, len, &used, "%d figure%s below --min-busbw", sum->below_min_busbw,
                   plural(sum->below_min_busbw));
    for (int i = 0; i < sum->naverages; i++) {
        const cb_busbw_average *a = &sum->averages[i];
        if (a->min_bw_failed)
            add_reason(reasons, len, &used,
                       "%s average busbw %.2f GB/s below 0.9 x NCCL_TESTS_MIN_BW %g",
                       a->collective != NULL ? a->collective->name : "?",
                       a->cells ? a->sum / a->cells : 0.0, sum->min_bw);
    }
    if (sum->scan_suspects > 0)
        add_reason(reasons, len, &used, "%d scan suspect%s", sum->scan_suspects,
                   plural(sum->scan_suspects));
    if (sum->unchecked > 0)
        add_reason(reasons, len, &used, "%d row%s with no expectation", sum->unchecked,
                   plural(sum->unchecked));
    if (sum->exit_status == CB_EXIT_NOTHING)
        add_reason(reasons, len, &used, "nothing measured");
    /* -c 0: bandwidth only; the status stays 0, as nccl-tests', but the
     * verdict never reads PASS for output no one checked. */
    int unverified = sum->exit_status == CB_EXIT_OK && sum->unverified > 0;
    if (unverified)
        add_reason(reasons, len, &used, "nothing verified (-c 0): %d result%s not checked",
                   sum->unverified, plural(sum->unverified));
    /* A failed status with no figure to show for it: a failed close or write. */
    if (sum->exit_status != CB_EXIT_OK && used == 0)
        add_reason(reasons, len, &used, "status %d", sum->exit_status);
    /* Last, so that the reasons above read the same with or without them. */
    if (sum->auto_host_backend != NULL)
        add_reason(reasons, len, &used, "%s backend, host memory", sum->auto_host_backend);
    if (sum->unauthenticated)
        add_reason(reasons, len, &used, "not authenticated: no NCCL_COLLBENCH_KEY");
    return unverified ? "UNCHECKED" : verdict_word(sum->exit_status);
}
