/*
 * Reading nccl-collbench CSV files (RFC 4180: quoted fields, doubled quotes,
 * LF or CRLF line ends). A file may be several runs concatenated: a row that
 * repeats the header is skipped. Columns are found by name, so files of a
 * later schema with extra columns at the end still read.
 */
#ifndef CB_CSVREAD_H
#define CB_CSVREAD_H

#include <stddef.h>

typedef struct cb_csv_table {
    size_t ncols;
    char **header;     /* ncols names */
    size_t nrows;
    char ***rows;      /* nrows rows of ncols fields each */
    size_t *lines;     /* the line of the file each row starts on (1 = header) */
} cb_csv_table;

/*
 * Parse text (len bytes, need not be NUL-terminated) into *out. Returns 0,
 * or -1 with one line in err naming the line number and the problem
 * (unterminated quote, a row whose field count differs from the header,
 * an empty input, a NUL byte).
 */
int cb_csv_parse(const char *text, size_t len, cb_csv_table *out, char *err, size_t err_len);

/* Read and parse a file ("-" for stdin). */
int cb_csv_read_file(const char *path, cb_csv_table *out, char *err, size_t err_len);

/* Index of the column with this name, or -1. */
int cb_csv_column(const cb_csv_table *t, const char *name);

void cb_csv_free(cb_csv_table *t);

/*
 * Strict readers for the numbers nccl-collbench writes, so that a damaged
 * file cannot pass for a good one: a decimal number (digits, an optional
 * point and fraction, an optional exponent; no sign unless allow_negative,
 * no blanks, no hex, no nan or inf, finite), and an unsigned decimal integer
 * that fits. Both return 0, or -1 with a short reason in *why.
 */
int cb_csv_decimal(const char *text, int allow_negative, double *out, const char **why);
int cb_csv_unsigned(const char *text, unsigned long long *out, const char **why);

#endif
