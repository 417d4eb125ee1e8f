/*
 * Output formats: one ops table per format, each reading the records of
 * result.h and the parameters the run record points to (never changing
 * them), all listed in cb_output_formats (src/printers/formats.c): a new
 * format is one file and one line there, its destination asking
 * cb_params_output for its name (--output NAME=PATH; HACKING.md, "Adding
 * an output format"). Printers live on rank 0 only.
 */
#ifndef CB_PRINTER_H
#define CB_PRINTER_H

#include <stdio.h>

#include "options/params.h"
#include "result.h"

typedef struct cb_printer cb_printer;

/* A path no file can have: the printer writes to stderr. */
#define CB_PRINTER_STDERR ""


typedef struct cb_printer_ops {
    const char *name;
    /* How messages name this output: its own option ("--csv"; main.c
     * refuses it given with --output NAME=), or "--output NAME" for a
     * format that has none. */
    const char *option;
    /* Where this format goes under the command line p: a path, "-" for
     * stdout, CB_PRINTER_STDERR, or NULL when p does not ask for it. Its
     * own option's path comes first, else the one cb_params_output gives
     * (the same pointer): main.c tells by it a format asked for both ways. */
    const char *(*destination)(const cb_params *p);
    /* Why the format needs a file, refusing "-" (--output NAME=-); NULL
     * where "-" writes it to stdout. */
    const char *needs_file;
    /* Open on path ("-" for stdout, CB_PRINTER_STDERR for stderr). Returns
     * NULL with err set on failure. */
    cb_printer *(*open)(const char *path, char *err, size_t err_len);
    /* The hooks below but result may be NULL: the format ignores the event. */
    void (*begin)(cb_printer *pr, const cb_run_info *run);
    /* A new table: coll measured in layout (--layout). */
    void (*table_begin)(cb_printer *pr, const cb_collective *coll, cb_block_layout layout);
    /* A line the reader should see: a skipped size or combination. */
    void (*note)(cb_printer *pr, const char *text);
    void (*result)(cb_printer *pr, const cb_row *row);
    /* Optional: the health scan's figures and suspects (-o scan). */
    void (*scan)(cb_printer *pr, const cb_scan_report *rep);
    /* Optional: cycle (-N, from 1) ran whole, its results and scan all
     * given; a format that shows the latest cycle (--prom) writes it now. */
    void (*cycle_end)(cb_printer *pr, int cycle);
    void (*end)(cb_printer *pr, const cb_summary *sum);
    /* Flush and close; returns -1 with err set when anything failed to write. */
    int (*close)(cb_printer *pr, char *err, size_t err_len);
} cb_printer_ops;

/* Every printer starts with this header. */
struct cb_printer {
    const cb_printer_ops *ops;
    FILE *out;
    int owns_out;     /* close out at the end */
    int write_failed;
    char failure[256];   /* why writing failed, naming the file; may be empty */
};

/* Every output format, in the order they are opened and ended, NULL-ended
 * (src/printers/formats.c: a format's ops table is named only there). */
extern const cb_printer_ops *const cb_output_formats[];

/* The format named name (len bytes, not ended there), or NULL. */
const cb_printer_ops *cb_output_format(const char *name, size_t len);

/* Whether the CSV goes to stdout (--csv - or --output csv=-): the table
 * then goes to stderr. */
int cb_printer_csv_on_stdout(const cb_params *p);

/* The human table, the one format the engine names: the health scan's
 * figures go to every other format as rows, and to the table as its own
 * report. */
extern const cb_printer_ops cb_printer_table;

/* Shared by the printers: open path (or stdout), and close checking errors. */
int cb_printer_open_stream(cb_printer *pr, const char *path, char *err, size_t err_len);
int cb_printer_close_stream(cb_printer *pr, const char *what, char *err, size_t err_len);

/* The JSON documents (--json, -J): written to a new file beside path
 * (safety/outfile.h) and named path only when finished. Open: 0, or -1
 * with err set. Close: commit the file when ended and every write
 * succeeded, else remove it; 0, or -1 with err set. */
struct cb_outfile;
int cb_printer_open_document(cb_printer *pr, struct cb_outfile *file, const char *path,
                             char *err, size_t err_len);
int cb_printer_close_document(cb_printer *pr, struct cb_outfile *file, int ended, char *err,
                              size_t err_len);

#endif
