/* The Prometheus text format's pieces; see prom_text.h. */
#include "printers/prom_text.h"

#include <math.h>
#include <stdio.h>

/* The length of the valid UTF-8 character at p, or 0 when it is not one. */
static size_t utf8_length(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    unsigned char lo = 0x80, hi = 0xBF;   /* the second byte's bounds */
    size_t n;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        n = 3;
        lo = p[0] == 0xE0 ? 0xA0 : 0x80;   /* no overlong forms */
        hi = p[0] == 0xED ? 0x9F : 0xBF;   /* no surrogates */
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        n = 4;
        lo = p[0] == 0xF0 ? 0x90 : 0x80;
        hi = p[0] == 0xF4 ? 0x8F : 0xBF;   /* at most U+10FFFF */
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* A label value as the format requires: backslash, double quote and line
 * feed escaped, so that no value ends the label or the line; a byte that
 * is not valid UTF-8 (which Prometheus refuses) becomes the Latin-1
 * character it would be there. */
void cb_prom_put_value_text(FILE *f, const char *value)
{
    const unsigned char *p = (const unsigned char *)value;
    while (*p != '\0') {
        size_t n = utf8_length(p);
        if (n == 0) {
            fputc(0xC0 | (*p >> 6), f);
            fputc(0x80 | (*p & 0x3F), f);
            p++;
        } else if (n > 1) {
            fwrite(p, 1, n, f);
            p += n;
        } else {
            if (*p == '\\')
                fputs("\\\\", f);
            else if (*p == '"')
                fputs("\\\"", f);
            else if (*p == '\n')
                fputs("\\n", f);
            else
                fputc(*p, f);
            p++;
        }
    }
}

/* ,name="value" (no comma before the first label: *first is cleared). */
void cb_prom_put_label(FILE *f, int *first, const char *name, const char *value)
{
    fprintf(f, "%s%s=\"", *first ? "" : ",", name);
    *first = 0;
    cb_prom_put_value_text(f, value);
    fputc('"', f);
}

void cb_prom_put_label_int(FILE *f, int *first, const char *name, long long value)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    cb_prom_put_label(f, first, name, text);
}

/* A figure into text; one that is not finite as the format spells it. */
void cb_prom_number_text(char *text, size_t len, prom_digits digits, double v)
{
    if (isnan(v))
        snprintf(text, len, "NaN");
    else if (isinf(v))
        snprintf(text, len, "%s", v > 0 ? "+Inf" : "-Inf");
    else if (digits == PROM_CSV_FIXED)
        snprintf(text, len, "%.6f", v);
    else
        snprintf(text, len, "%.6g", v);
}

void cb_prom_put_number(FILE *f, prom_digits digits, double v)
{
    char text[64];
    cb_prom_number_text(text, sizeof text, digits, v);
    fputs(text, f);
}

/* name{source="..." with the labels to follow: every series carries the
 * file's name, so that files of several runs in node_exporter's folder
 * never give the same series. */
void cb_prom_open_sample(FILE *f, const char *source, const char *name, int *first)
{
    fprintf(f, "%s{", name);
    *first = 1;
    cb_prom_put_label(f, first, "source", source);
}

void cb_prom_put_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}
