/* The Prometheus text format's pieces, escaped as the format requires, for
 * src/printers/prom.c. */
#ifndef CB_PROM_TEXT_H
#define CB_PROM_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* How a sample's figure is written: as the CSV writes it, so that the two
 * read the same, or to 6 significant digits for a ratio. */
typedef enum prom_digits { PROM_CSV_FIXED, PROM_SIGNIFICANT } prom_digits;

/* A figure into text; one that is not finite as the format spells it. */
void cb_prom_number_text(char *text, size_t len, prom_digits digits, double v);
void cb_prom_put_number(FILE *f, prom_digits digits, double v);

/* A label value as the format requires: backslash, double quote and line
 * feed escaped, so that no value ends the label or the line; a byte that
 * is not valid UTF-8 (which Prometheus refuses) becomes the Latin-1
 * character it would be there. */
void cb_prom_put_value_text(FILE *f, const char *value);

/* ,name="value" (no comma before the first label: *first is cleared). */
void cb_prom_put_label(FILE *f, int *first, const char *name, const char *value);
void cb_prom_put_label_int(FILE *f, int *first, const char *name, long long value);

/* name{source="..." with the labels to follow: every series carries the
 * file's name, so that files of several runs in node_exporter's folder
 * never give the same series. */
void cb_prom_open_sample(FILE *f, const char *source, const char *name, int *first);

/* A family's HELP and TYPE lines. */
void cb_prom_put_family(FILE *f, const char *name, const char *type, const char *help);

#endif
