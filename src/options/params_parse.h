/* The option parser's state, shared by params.c and the options that live
 * in files of their own (params_health.c). Not for use outside them. */
#ifndef CB_PARAMS_PARSE_H
#define CB_PARAMS_PARSE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "options/params.h"

struct cb_option_spec;

typedef struct parse_state {
    cb_params *p;
    char *err;
    size_t err_len;
    const char *option;    /* as the user wrote it, for messages */
    int factor_given;
    int step_given;
    const struct cb_option_spec *spec;  /* the option being parsed */
} parse_state;

/* How the ranks agree on an option (src/options/params_agree.c): its value under
 * cb_params read as text. Every entry of the option table says which, so
 * that a new option is agreed by its table line alone; the kinds that read
 * one field check the field's type at compile time. */
typedef enum cb_agree_kind {
    CB_AGREE_UNSET = 0,  /* the entry says nothing: unit_params_agree fails */
    CB_AGREE_NOTHING,    /* the option changes no run (-g, -t) */
    CB_AGREE_INT,        /* an int, as a number */
    CB_AGREE_FLAG,       /* an int, "given" or "not given" */
    CB_AGREE_BYTES,      /* a uint64_t byte count, as --help writes sizes */
    CB_AGREE_DOUBLE,     /* a double, %g */
    CB_AGREE_STRING,     /* a const char *, "(none)" when NULL */
    CB_AGREE_DESCRIBED   /* a hook writes the text (several fields, names) */
} cb_agree_kind;

typedef void cb_agree_describe(const cb_params *p, char *text, size_t len);

typedef struct cb_agree_value {
    cb_agree_kind kind;
    size_t offset;                 /* of the field in cb_params */
    cb_agree_describe *describe;   /* CB_AGREE_DESCRIBED only */
} cb_agree_value;

#define CB_AGREE_FIELD(kind, field, type)                                          \
    {kind, offsetof(cb_params, field) + _Generic(((cb_params *)0)->field, type: 0), NULL}
#define AGREE_INT(field) CB_AGREE_FIELD(CB_AGREE_INT, field, int)
#define AGREE_FLAG(field) CB_AGREE_FIELD(CB_AGREE_FLAG, field, int)
#define AGREE_BYTES(field) CB_AGREE_FIELD(CB_AGREE_BYTES, field, uint64_t)
#define AGREE_DOUBLE(field) CB_AGREE_FIELD(CB_AGREE_DOUBLE, field, double)
#define AGREE_STRING(field) CB_AGREE_FIELD(CB_AGREE_STRING, field, const char *)
#define AGREE_DESCRIBED(hook) {CB_AGREE_DESCRIBED, 0, hook}
#define AGREE_NOTHING {CB_AGREE_NOTHING, 0, NULL}

/* The hooks for the options whose value is more than one field. */
cb_agree_describe cb_agree_collectives, cb_agree_dtypes, cb_agree_redops, cb_agree_step,
    cb_agree_root, cb_agree_average, cb_agree_split, cb_agree_hier, cb_agree_layouts,
    cb_agree_a2av_matrix, cb_agree_nccl_impls, cb_agree_prom_sizes, cb_agree_outputs;

/* The sections of --help, in their order (src/options/params_help.c);
 * the option table lists its lines in the same order, so that "the first
 * option that differs" between ranks is the first in --help too. */
typedef enum cb_help_section {
    CB_HELP_UNSET = 0,      /* a line that names none: unit_help fails */
    CB_HELP_SIZES,          /* collectives, types and sizes */
    CB_HELP_TIMING,
    CB_HELP_VERIFY,
    CB_HELP_OUTPUTS,
    CB_HELP_RUNS,           /* runs and safety */
    CB_HELP_BACKENDS,
    CB_HELP_NCCL_TESTS,     /* nccl-tests compatibility */
    CB_HELP_SECTION_COUNT
} cb_help_section;

/* One line of the option table (src/options/params.c): parsing, --help, agreement. */
typedef struct cb_option_spec {
    char short_name;        /* '\0' when there is none */
    const char *long_name;
    const char *arg;        /* NULL for flags */
    const char *help;
    int (*set)(parse_state *s, const char *value);
    cb_agree_value agree;
    cb_help_section section;
} cb_option_spec;

/* The option table, count entries (at most CB_MAX_OPTIONS). */
#define CB_MAX_OPTIONS 128
const cb_option_spec *cb_params_options(size_t *count);

/* params_timing.c: -z, --clock, --rotate, and their checks after parsing. */
int cb_params_opt_blocking(parse_state *s, const char *v);
int cb_params_opt_clock(parse_state *s, const char *v);
int cb_params_opt_rotate(parse_state *s, const char *v);
int cb_params_check_timing(parse_state *s);

/* params_values.c: one line into s->err naming the option; returns -1. */
int cb_params_fail(parse_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A byte count (K, M, G, T suffixes) or an integer in [min, max] into *out;
 * 0, or -1 after cb_params_fail. */
int cb_params_set_bytes(parse_state *s, const char *v, uint64_t *out);
int cb_params_set_int(parse_state *s, const char *v, long min, long max, int *out);

/* params_lists.c: the list and grouping options. */
int cb_params_opt_op(parse_state *s, const char *v);
int cb_params_opt_datatype(parse_state *s, const char *v);
int cb_params_opt_redop(parse_state *s, const char *v);
int cb_params_opt_layout(parse_state *s, const char *v);
int cb_params_opt_split(parse_state *s, const char *v);
int cb_params_opt_hier_split(parse_state *s, const char *v);
/* params_health.c: -o's scan words (1 when name is one, 0 when not, -1
 * after an error), --suspect-ratio, --min-busbw and -N. */
int cb_params_scan_part(parse_state *s, const char *name);
int cb_params_opt_suspect_ratio(parse_state *s, const char *v);
int cb_params_opt_min_busbw(parse_state *s, const char *v);
int cb_params_opt_cycles(parse_state *s, const char *v);
/* params_native.c: --nccl-impl and -R. */
int cb_params_opt_nccl_impl(parse_state *s, const char *v);
int cb_params_opt_register(parse_state *s, const char *v);
/* params_prom.c: --prom and --prom-sizes. */
int cb_params_opt_prom(parse_state *s, const char *v);
int cb_params_opt_prom_sizes(parse_state *s, const char *v);
/* params_output.c: --output NAME=PATH. */
int cb_params_opt_output(parse_state *s, const char *v);
/* params_nccltests.c: nccl-tests' options. Whether letter is one of
 * theirs without a line in our table; the letter a long name of theirs
 * stands for ('\0' when none); whether a letter is one of theirs; parse one of their letters with its value
 * (dropin: under one of their program names, where -o is the reduction),
 * 0 or -1 after cb_params_fail; their defaults under their program names;
 * and the lines our --help gives them. */
int cb_params_is_nccl_tests_option(char letter);
char cb_params_nccl_tests_long(const char *name, size_t len);
int cb_params_nccl_tests_letter(char letter);
int cb_params_nccl_tests_option(parse_state *s, char letter, const char *value, int dropin);
void cb_params_nccl_tests_defaults(cb_params *p, const char *collective);
void cb_params_nccl_tests_help(FILE *out);
/* A long option's name of which name (len characters) is a prefix, as
 * getopt_long accepts it: 1 with the whole name in *full when one option
 * (ours or theirs, alike in meaning) has it, 0 when none has, -1 after
 * cb_params_fail naming the candidates when several have. */
int cb_params_long_prefix(parse_state *s, const char *name, size_t len, int dropin,
                          const char **full);
/* Their defaults, and their checks after every option is read. */
void cb_params_health_defaults(cb_params *p);
int cb_params_check_health(parse_state *s);
#endif
