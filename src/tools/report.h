/*
 * The verdicts of nccl-collbench-compare: one per baseline key, summaries per
 * collective and in all, and the same as a JSON document.
 */
#ifndef CB_REPORT_H
#define CB_REPORT_H

#include <stddef.h>

#include "gate.h"

typedef enum verdict {
    VERDICT_OK, VERDICT_REGRESSED, VERDICT_WRONG, VERDICT_BELOW_FLOOR, VERDICT_MISSING,
    VERDICT_MISSING_ALLOWED, VERDICT_COUNT
} verdict;
extern const char *const verdict_names[VERDICT_COUNT];

typedef struct report_row {
    const gate_entry *entry;  /* the baseline key */
    int matched;              /* the new file has it: j is filled */
    gate_judgement j;
    verdict verdict;
} report_row;

typedef struct report_tally {
    const char *collective;   /* NULL for the total */
    size_t compared;
    size_t count[VERDICT_COUNT];
    size_t failed;            /* rows that fail the gate */
    double worst_change;      /* the largest worsening, a fraction; compared rows only */
} report_tally;

typedef struct report {
    report_row *rows;
    size_t nrows, cap;
    report_tally *tallies;    /* one per collective, by name */
    size_t ntallies;
    report_tally total;
    size_t only_new;
} report;

void report_init(report *r);
/* A new zeroed row, or NULL out of memory. */
report_row *report_add(report *r);
/* Count the verdicts per collective and in all; 0, or -1 out of memory. */
int report_summarise(report *r, const gate_side *base);
void report_print_summary(const report *r, int allow_missing);
/* Write the JSON report; 0, or -1 with a message. */
int report_write_json(const report *r, const char *path, const gate_side *base,
                      const gate_keys *k, const char *const *metric_names, double threshold,
                      int exit_status, char *err, size_t err_len);
void report_free(report *r);

#endif
