/*
 * nccl-tests' short options (and rccl-tests') that have no line of their
 * own in the option table: each stands for one of ours, changes nothing at
 * the value a script usually passes, or is refused with a message that
 * names what this program has instead (nccl-collbench(1), Option map). A
 * script written for nccl-tests then either runs as it meant or stops at
 * once, never silently measuring something else.
 */
#include <stdio.h>
#include <string.h>

#include "options/params_parse.h"

typedef struct foreign_option {
    char letter;
    const char *theirs;     /* their long name, for messages */
    const char *ours;       /* our long option it stands for, or NULL */
    const char *flag_on;    /* ours is a flag: the value that sets it */
    const char *accepted;   /* values that change nothing here, "|" between */
    const char *instead;    /* other values: why not, and what we have */
} foreign_option;

static const foreign_option foreign[] = {
    {'J', "output_file", "json", NULL, NULL, NULL},
    {'I', "per_iter_timing", "stats", "1", "0",
     "takes 0 or 1; per-iteration statistics are always taken, --stats shows them"},
    {'S', "report_timestamps", NULL, NULL, "0",
     "each result's time stamp is the timestamp_utc of --csv and --json, not a table column"},
    {'p', "parallel_init", NULL, NULL, "0|1", "takes 0 or 1 (one thread per rank: nothing to "
     "initialise in parallel)"},
    {'D', "device_implementation", NULL, NULL, "0",
     "there is no device-API implementation here: NCCL's host calls are measured "
     "(--nccl-impl chooses for alltoall, gather and scatter)"},
    {'x', "cta_policy", NULL, NULL, NULL,
     "no option sets the CTA policy here; NCCL reads NCCL_CTA_POLICY from the environment"},
    {'y', "stream_null", NULL, NULL, "0",
     "the nccl backend launches on a stream of its own; there is no NULL-stream mode"},
    {'K', "per_iter_skip", NULL, NULL, "0",
     "no sample is skipped from the statistics; -w/--warmup N runs untimed iterations first"},
    {'O', "out_of_place (rccl-tests)", NULL, NULL, NULL,
     "both placements are measured at every size; the CSV's placement column tells them apart"},
    {'E', "rotating_tensor (rccl-tests)", NULL, NULL, "0",
     "there are no rotating buffers: every iteration uses the same send and receive buffers"},
    {'F', "cache_flush (rccl-tests)", NULL, NULL, "0", "nothing flushes caches between iterations"},
    {'Y', "memory_type (rccl-tests)", NULL, NULL, NULL,
     "buffers are device memory on --backend nccl and host memory on --backend mpi"},
    {'A', "algorithm and protocol (rccl-tests)", NULL, NULL, NULL,
     "no option chooses them here; NCCL reads NCCL_ALGO and NCCL_PROTO from the environment"},
};

#define FOREIGN_COUNT (sizeof foreign / sizeof foreign[0])

/* Whether value is one of the "|"-separated words of list. */
static int listed(const char *list, const char *value)
{
    size_t len = strlen(value);
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '|');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);
        if (wlen == len && strncmp(p, value, len) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int cb_params_is_nccl_tests_option(char letter)
{
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].letter == letter)
            return 1;
    return 0;
}

int cb_params_nccl_tests_option(parse_state *s, char letter, const char *value)
{
    const foreign_option *f = NULL;
    for (size_t i = 0; i < FOREIGN_COUNT && f == NULL; i++)
        if (foreign[i].letter == letter)
            f = &foreign[i];
    if (f == NULL)
        return cb_params_fail(s, "unknown option");
    if (f->accepted != NULL && listed(f->accepted, value))
        return 0;
    if (f->ours != NULL && (f->flag_on == NULL || strcmp(value, f->flag_on) == 0)) {
        size_t count = 0;
        const cb_option_spec *table = cb_params_options(&count);
        for (size_t i = 0; i < count; i++)
            if (strcmp(table[i].long_name, f->ours) == 0) {
                s->spec = &table[i];
                return table[i].set(s, f->flag_on != NULL ? NULL : value);
            }
    }
    if (f->ours != NULL)
        return cb_params_fail(s, "'%s': nccl-tests' --%s here is --%s: %s", value, f->theirs,
                              f->ours, f->instead);
    return cb_params_fail(s, "'%s': nccl-tests' --%s has no counterpart: %s", value, f->theirs,
                          f->instead);
}

void cb_params_nccl_tests_help(FILE *out)
{
    fprintf(out, "\nnccl-tests' short options:");
    for (size_t i = 0; i < FOREIGN_COUNT; i++) {
        const foreign_option *f = &foreign[i];
        if (f->ours != NULL && f->flag_on != NULL)
            fprintf(out, " -%c %s is --%s;", f->letter, f->flag_on, f->ours);
        else if (f->ours != NULL)
            fprintf(out, " -%c is --%s;", f->letter, f->ours);
    }
    fprintf(out, "\n  accepted where they change nothing:");
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].accepted != NULL)
            fprintf(out, " -%c %s;", foreign[i].letter, foreign[i].accepted);
    fprintf(out, "\n  refused with what to use instead (status 2): other values,");
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].ours == NULL && foreign[i].accepted == NULL)
            fprintf(out, " -%c", foreign[i].letter);
    fputc('\n', out);
}
