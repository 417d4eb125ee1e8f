#include "csvread.h"
#include "common/format.h"
#include "common/grow.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable array of pointers. */
typedef struct ptr_vec {
    void **items;
    size_t len;
    size_t cap;
} ptr_vec;

static int vec_push(ptr_vec *v, void *item)
{
    void **grown = cb_grow(v->items, &v->cap, v->len, sizeof *grown, 16);
    if (grown == NULL)
        return -1;
    v->items = grown;
    v->items[v->len++] = item;
    return 0;
}

static void free_fields(char **fields, size_t n)
{
    if (fields == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(fields[i]);
    free(fields);
}

/*
 * Parse one record starting at *pos. Returns 1 with the fields in *fields
 * and their number in *nfields, 0 at the end of input, -1 on error.
 */
static int parse_record(const char *text, size_t len, size_t *pos, size_t line, char *field,
                        char ***fields, size_t *nfields, char *err, size_t err_len)
{
    if (*pos >= len)
        return 0;
    ptr_vec out = {NULL, 0, 0};
    size_t i = *pos;
    for (;;) {
        size_t flen = 0;
        if (i < len && text[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    snprintf(err, err_len, "line %zu: unterminated quoted field", line);
                    goto fail;
                }
                if (text[i] == '"') {
                    if (i + 1 < len && text[i + 1] == '"') {
                        field[flen++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (text[i] == '\0')
                    goto nul;
                field[flen++] = text[i++];
            }
            if (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
                snprintf(err, err_len, "line %zu: characters after a closing quote", line);
                goto fail;
            }
        } else {
            while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
                if (text[i] == '\0')
                    goto nul;
                if (text[i] == '"') {
                    snprintf(err, err_len, "line %zu: a quote inside an unquoted field", line);
                    goto fail;
                }
                field[flen++] = text[i++];
            }
        }
        field[flen] = '\0';
        char *copy = strdup(field);
        if (copy == NULL || vec_push(&out, copy) != 0) {
            free(copy);
            snprintf(err, err_len, "out of memory");
            goto fail;
        }
        if (i < len && text[i] == ',') {
            i++;
            continue;
        }
        /* End of record: LF, CRLF, a lone CR, or end of input. */
        if (i < len && text[i] == '\r')
            i++;
        if (i < len && text[i] == '\n')
            i++;
        break;
    }
    *pos = i;
    *fields = (char **)out.items;
    *nfields = out.len;
    return 1;
nul:
    snprintf(err, err_len, "line %zu: NUL byte in the input", line);
fail:
    free_fields((char **)out.items, out.len);
    return -1;
}

static int same_as_header(char **fields, const cb_csv_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(fields[i], t->header[i]) != 0)
            return 0;
    return 1;
}

/* Line breaks (LF, or a CR not followed by LF) in text[from, to). */
static size_t count_breaks(const char *text, size_t len, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n')))
            n++;
    return n;
}

int cb_csv_parse(const char *text, size_t len, cb_csv_table *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    size_t pos = 0, line = 1;
    char **fields = NULL;
    size_t n = 0;
    /* Scratch for one field: no field is longer than the input. */
    char *field = malloc(len + 1);
    if (field == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int rc = parse_record(text, len, &pos, line, field, &fields, &n, err, err_len);
    if (rc <= 0) {
        if (rc == 0)
            snprintf(err, err_len, "empty input: no header row");
        free(field);
        return -1;
    }
    line += count_breaks(text, len, 0, pos);
    out->header = fields;
    out->ncols = n;
    ptr_vec rows = {NULL, 0, 0};
    size_t lines_cap = 0;
    for (;;) {
        size_t start = pos, row_line = line;
        rc = parse_record(text, len, &pos, row_line, field, &fields, &n, err, err_len);
        if (rc == 0)
            break;
        if (rc < 0)
            goto fail;
        /* Quoted fields may hold line breaks: the next record starts after them all. */
        line += count_breaks(text, len, start, pos);
        if (n == 1 && fields[0][0] == '\0') {   /* blank line */
            free_fields(fields, n);
            continue;
        }
        if (n != out->ncols) {
            snprintf(err, err_len, "line %zu: %zu field%s, the header has %zu", row_line, n,
                     cb_plural((long long)n), out->ncols);
            free_fields(fields, n);
            goto fail;
        }
        if (same_as_header(fields, out)) {      /* another run's header */
            free_fields(fields, n);
            continue;
        }
        size_t *grown = cb_grow(out->lines, &lines_cap, rows.len, sizeof *grown, 16);
        if (grown == NULL) {
            free_fields(fields, n);
            snprintf(err, err_len, "out of memory");
            goto fail;
        }
        out->lines = grown;
        out->lines[rows.len] = row_line;
        if (vec_push(&rows, fields) != 0) {
            free_fields(fields, n);
            snprintf(err, err_len, "out of memory");
            goto fail;
        }
    }
    out->rows = (char ***)rows.items;
    out->nrows = rows.len;
    free(field);
    return 0;
fail:
    out->rows = (char ***)rows.items;
    out->nrows = rows.len;
    cb_csv_free(out);
    free(field);
    return -1;
}

int cb_csv_read_file(const char *path, cb_csv_table *out, char *err, size_t err_len)
{
    int use_stdin = strcmp(path, "-") == 0;
    FILE *f = use_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_len, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    int rc = -1;
    while (text != NULL) {
        if (len == cap) {
            char *grown = realloc(text, cap * 2);
            if (grown == NULL)
                break;
            text = grown;
            cap *= 2;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (text == NULL || ferror(f))
        snprintf(err, err_len, "cannot read '%s': %s", path, text ? strerror(errno) : "out of memory");
    else {
        char inner[256];
        rc = cb_csv_parse(text, len, out, inner, sizeof inner);
        if (rc != 0)
            snprintf(err, err_len, "'%s': %s", path, inner);
    }
    free(text);
    if (!use_stdin)
        fclose(f);
    return rc;
}

int cb_csv_column(const cb_csv_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->header[i], name) == 0)
            return (int)i;
    return -1;
}

void cb_csv_free(cb_csv_table *t)
{
    for (size_t r = 0; r < t->nrows; r++)
        free_fields(t->rows[r], t->ncols);
    free(t->rows);
    free(t->lines);
    free_fields(t->header, t->ncols);
    memset(t, 0, sizeof *t);
}

int cb_csv_decimal(const char *text, int allow_negative, double *out, const char **why)
{
    const char *p = text;
    if (*p == '-' && allow_negative)
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits > 0 && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        size_t exp_digits = 0;
        while (*p >= '0' && *p <= '9')
            p++, exp_digits++;
        if (exp_digits == 0)
            digits = 0;
    }
    if (digits == 0 || *p != '\0') {
        *why = allow_negative ? "is not a decimal number" : "is not a non-negative decimal number";
        return -1;
    }
    double v = strtod(text, NULL);
    if (!isfinite(v)) {
        *why = "is out of range";
        return -1;
    }
    *out = v;
    return 0;
}

int cb_csv_unsigned(const char *text, unsigned long long *out, const char **why)
{
    unsigned long long v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) {
            *why = "is out of range";
            return -1;
        }
        v = 10 * v + d;
    }
    if (p == text || *p != '\0') {
        *why = "is not a non-negative integer";
        return -1;
    }
    *out = v;
    return 0;
}
