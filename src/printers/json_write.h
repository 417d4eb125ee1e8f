/* The JSON printer's value writers (json.c), apart so that json.c stays
 * under the size rule: each writes one JSON value to f. */
#ifndef CB_JSON_WRITE_H
#define CB_JSON_WRITE_H

#include <math.h>
#include <stdio.h>

#include "common/json_text.h"

/* Whether the environment entry NAME=VALUE is one the JSON documents keep:
 * what shapes NCCL, CUDA and MPI, not what the launcher sets for itself
 * (json.c). */
int cb_json_env_kept(const char *entry);

/* Every string: escaped, and valid UTF-8 whatever its bytes (common/json_text.h). */
static inline void json_string(FILE *f, const char *s)
{
    cb_json_write_string(f, s);
}

/* A measured number to the 6 significant digits a measurement has (not
 * the binary noise of %.17g), or null when it is not finite. */
static inline void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

/* An element's value, exactly: an integer element may need all its digits. */
static inline void json_exact(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

/* An unknown string (NULL or empty) is null, never "". */
static inline void json_string_or_null(FILE *f, const char *s)
{
    if (s == NULL || s[0] == '\0')
        fputs("null", f);
    else
        json_string(f, s);
}

static inline void json_micros(FILE *f, double seconds)
{
    json_number(f, seconds * 1e6);
}

/* A list of figures, each written by put (json_number, json_micros: null
 * where absent). */
static inline void json_list(FILE *f, const double *v, int n, void (*put)(FILE *f, double v))
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        put(f, v[i]);
    }
    fputc(']', f);
}

static inline void json_bool(FILE *f, int v)
{
    fputs(v ? "true" : "false", f);
}

/* ", \"key\": " then the value: one member after the first of an object
 * (keys are the printer's own identifiers: nothing to escape). */
static inline void json_key(FILE *f, const char *key)
{
    fprintf(f, ", \"%s\": ", key);
}

#define CB_JSON_FIELD(kind, type)                                              \
    static inline void json_field_##kind(FILE *f, const char *key, type value) \
    {                                                                          \
        json_key(f, key);                                                      \
        json_##kind(f, value);                                                 \
    }
CB_JSON_FIELD(string, const char *)
CB_JSON_FIELD(string_or_null, const char *)
CB_JSON_FIELD(number, double)
CB_JSON_FIELD(exact, double)
CB_JSON_FIELD(micros, double)
CB_JSON_FIELD(bool, int)
#undef CB_JSON_FIELD

#endif
