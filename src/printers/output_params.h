/*
 * Where the outputs go and what they show (cb_params.out): parsed in
 * src/options/, read by the printers (each format's `destination`, the
 * table's columns, the JSON document's extras). Types only, over nothing
 * above the options, so that params.h can hold it without using the
 * printers.
 */
#ifndef CB_OUTPUT_PARAMS_H
#define CB_OUTPUT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* --prom-sizes: the most sizes a list may give. */
#define CB_MAX_PROM_SIZES 64
/* --output NAME=PATH: the most pairs a command line may give. */
#define CB_MAX_OUTPUTS 8

/* One --output NAME=PATH, pointing into argv: name is the text before the
 * first '=' (name_len bytes, not ended there), path the text after it. */
typedef struct cb_output_spec {
    const char *name;
    size_t name_len;
    const char *path;
} cb_output_spec;

typedef struct cb_output_params {
    const char *csv_path;  /* NULL: no CSV; "-": CSV on stdout, the table on stderr */
    const char *json_path; /* NULL: no JSON document */
    const char *prom_path; /* --prom: NULL: no Prometheus text file */
    int prom_largest;      /* --prom-sizes largest: each series' largest size only */
    uint64_t prom_sizes[CB_MAX_PROM_SIZES]; /* --prom-sizes LIST; nprom_sizes 0: every size */
    int nprom_sizes;
    const char *tests_json_path; /* -J: nccl-tests' JSON document; NULL: none */
    cb_output_spec outputs[CB_MAX_OUTPUTS]; /* --output NAME=PATH, in the order given */
    int noutputs;
    int table_stats;       /* --stats: statistics lines in the table */
    int samples_json;      /* --samples-json: every rank's raw samples in the JSON */
    int progress;          /* 1 --progress (always), -1 --no-progress, 0 when it is seen */
    int timestamps;        /* -S 1: each table row ends with its time stamp */
    int expect_column;     /* --efficiency: each table row's efficiency on a line under it */

    int argc;              /* the command line, for the JSON document */
    char *const *argv;
} cb_output_params;

#endif
