/*
 * The regression gate of nccl-collbench-compare: reading baseline and new
 * CSV files into measurements grouped by key, and judging each key.
 */
#ifndef CB_GATE_H
#define CB_GATE_H

#include <stddef.h>

#include "csvread.h"

/* Columns that identify a measurement, when every file has them. */
#define GATE_MAX_KEYS 16
extern const char *const gate_key_columns[GATE_MAX_KEYS];

/* AUTO: the median where both sides have samples, else busbw. */
typedef enum gate_metric { METRIC_BUSBW, METRIC_TIME, METRIC_MEDIAN, METRIC_AUTO } gate_metric;

/* One CSV row's figures, checked. */
typedef struct gate_row {
    const char *key;          /* key fields joined by '\x1f' (owned by the file) */
    size_t file, row;         /* where it was read: file index, data row index */
    double busbw, time_us;
    int has_iter;             /* iter_samples > 0: the two below are known */
    double iter_median_us, iter_p99_us;
    unsigned long long wrong;
} gate_row;

/* One key's rows in one side (baseline or new), in file order. */
typedef struct gate_entry {
    const gate_row **rows;
    size_t nrows;
} gate_entry;

/* A side of the comparison: one or more files read together. */
typedef struct gate_side {
    size_t nfiles;
    const char **paths;
    cb_csv_table *tables;
    char **keys;              /* one per row of every file, for freeing */
    gate_row *rows;
    size_t nrows;
    const gate_row **by_key;  /* rows sorted by key, then file and row */
    gate_entry *entries;      /* sorted by key */
    size_t nentries;
} gate_side;

typedef struct gate_keys {
    int use[GATE_MAX_KEYS];   /* the column is in every file */
} gate_keys;

/* Read the files of one side; 0, or -1 with a message naming file and line. */
int gate_read(gate_side *s, const char **paths, size_t nfiles, char *err, size_t err_len);

/* Which key columns every file of both sides has; 0 when none. */
int gate_common_keys(const gate_side *a, const gate_side *b, gate_keys *k);

/*
 * Check every row's numbers and group rows by key: O(n log n). Returns 0,
 * or -1 with a message naming file, line and column of the first bad value.
 */
int gate_index(gate_side *s, const gate_keys *k, char *err, size_t err_len);

/* The entry with this key, or NULL (binary search). */
const gate_entry *gate_find(const gate_side *s, const char *key);

/* The fields of the key columns, each followed by '\x1f', those whose
 * value is NULL left out, in a new string (NULL when out of memory). */
char *gate_join_key(const char *const values[GATE_MAX_KEYS]);

/* A field of the first row of an entry, by column name ("" when absent). */
const char *gate_field(const gate_side *s, const gate_entry *e, const char *column);

/* How one key compares. */
typedef struct gate_judgement {
    gate_metric metric;       /* what was compared (busbw falls back to time) */
    double base, fresh;       /* baseline centre and new value, metric units */
    double ratio;             /* fresh / base */
    double change;            /* the worsening as a fraction: drop or rise */
    double noise;             /* the worsening the baseline's spread explains */
    int has_busbw;            /* the baseline has a bandwidth (not one rank, barrier) */
    double fresh_busbw;       /* mean new bandwidth, for the floor */
    unsigned long long wrong; /* wrong elements in the new rows */
} gate_judgement;

/* 0, or -1 when out of memory. */
int gate_judge(const gate_entry *base, const gate_entry *fresh, gate_metric metric,
               gate_judgement *j);

void gate_free(gate_side *s);

#endif
