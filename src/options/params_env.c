/*
 * nccl-tests' environment variables (nccl-collbench(1), ENVIRONMENT): a job
 * script written for nccl-tests brings them along, and a variable silently
 * ignored would pass a run that nccl-tests fails. Those with a counterpart
 * here are read as it (NCCL_TESTS_DEVICE by the NCCL backend, beside
 * NCCL_COLLBENCH_DEVICE); the preamble notes how each one set is read.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options/params.h"
#include "common/redact.h"

#define ENV_PREFIX "NCCL_TESTS_"

/* NCCL_TESTS_SPLIT's operators, as nccl-tests spells them, and the grouping
 * each gives rank r with operand K. */
static const struct split_op {
    const char *word, *sign;
    cb_split_kind kind;
    const char *ours;    /* the --split form it is ("stride"), or NULL */
} split_ops[] = {
    {"AND", "&", CB_SPLIT_AND, NULL},
    {"OR", "|", CB_SPLIT_OR, NULL},
    {"MOD", "%", CB_SPLIT_STRIDE, "stride"},
    {"DIV", "/", CB_SPLIT_SIZE, "size"},
};

/* An operand as nccl-tests reads one: blanks, then 0b binary, 0x hex, a
 * leading 0 octal, or decimal; here the whole rest must be the number,
 * from 0 to INT_MAX. Returns 0 or -1. */
static int split_operand(const char *text, int base, int *out)
{
    while (isspace((unsigned char)*text))
        text++;
    if (base == 0 && strncasecmp(text, "0b", 2) == 0) {
        text += 2;
        base = 2;
    }
    if (*text == '\0' || *text == '-' || *text == '+')
        return -1;
    char *end = NULL;
    unsigned long v = strtoul(text, &end, base);
    if (end == text || *end != '\0' || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* The grouping NCCL_TESTS_SPLIT_MASK (mask != 0) or NCCL_TESTS_SPLIT gives,
 * into spec with its description in text. 0, or -1 with err set. */
static int read_split(const char *name, const char *value, int mask, cb_split_spec *spec,
                      char *text, size_t len, char *err, size_t err_len)
{
    int k = 0;
    if (mask) {
        if (split_operand(value, 16, &k) != 0) {
            snprintf(err, err_len, "%s=%s: not a hexadecimal mask from 0 to 0x%x (nccl-tests' "
                     "colour is rank & mask); --split color:C0,C1,... gives any grouping",
                     name, value, INT_MAX);
            return -1;
        }
        *spec = (cb_split_spec){.kind = CB_SPLIT_AND, .k = k, .text = text};
        snprintf(text, len, "%s=%s (rank & 0x%x)", name, value, (unsigned)k);
        return 0;
    }
    for (size_t i = 0; i < sizeof split_ops / sizeof split_ops[0]; i++) {
        const struct split_op *op = &split_ops[i];
        size_t wl = strlen(op->word), sl = strlen(op->sign);
        const char *operand = strncasecmp(value, op->word, wl) == 0 ? value + wl
                              : strncmp(value, op->sign, sl) == 0   ? value + sl
                                                                    : NULL;
        if (operand == NULL)
            continue;
        int least = op->ours != NULL ? 1 : 0;   /* MOD 0 and DIV 0 divide by zero */
        if (split_operand(operand, 0, &k) != 0 || k < least) {
            snprintf(err, err_len, "%s=%s: '%s' is not a number from %d to %d; --split "
                     "size:K, stride:K or color:C0,C1,... gives the groups here",
                     name, value, operand, least, INT_MAX);
            return -1;
        }
        *spec = (cb_split_spec){.kind = op->kind, .k = k, .text = text};
        if (op->ours != NULL) {
            snprintf(text, len, "%s:%d (%s=%s)", op->ours, k, name, value);
        } else {
            snprintf(text, len, "%s=%s (rank %s %d)", name, value, op->sign, k);
        }
        return 0;
    }
    snprintf(err, err_len, "%s=%s: expected AND, OR, MOD or DIV (or &, |, %%, /) and a "
             "number, as nccl-tests reads it; --split size:K, stride:K or color:C0,C1,... "
             "gives the groups here", name, value);
    return -1;
}

int cb_params_environment(cb_params *p, const char *(*env)(const char *name), char *err,
                          size_t err_len)
{
    const char *min_bw = env("NCCL_TESTS_MIN_BW");
    if (min_bw != NULL && min_bw[0] != '\0') {
        char *end = NULL;
        double gbps = strtod(min_bw, &end);
        if (end == min_bw || *end != '\0' || !isfinite(gbps) || gbps < 0) {
            snprintf(err, err_len, "NCCL_TESTS_MIN_BW=%s: not a bandwidth in GB/s (a number, "
                     "0 or more); --min-busbw gates single rows", min_bw);
            return -1;
        }
        p->expect.tests_min_bw = gbps;
    }
    const char *mask = env("NCCL_TESTS_SPLIT_MASK"), *split = env("NCCL_TESTS_SPLIT");
    int by_mask = mask != NULL && mask[0] != '\0';
    const char *name = by_mask ? "NCCL_TESTS_SPLIT_MASK" : "NCCL_TESTS_SPLIT";
    const char *value = by_mask ? mask : split;
    if (value == NULL || value[0] == '\0')
        return 0;
    if (p->sizes.split.kind != CB_SPLIT_NONE) {
        snprintf(err, err_len, "%s=%s and --split %s both give groups: unset %s or leave out "
                 "--split", name, value, p->sizes.split.text, name);
        return -1;
    }
    return read_split(name, value, by_mask, &p->sizes.split, p->sizes.env_split, sizeof p->sizes.env_split, err,
                      err_len);
}

/* The note for one NCCL_TESTS_ variable, name=value as the environment holds it. */
static void env_note(char *const *envp, const char *entry, char *text, size_t len)
{
    const char *eq = strchr(entry, '=');
    size_t nlen = eq ? (size_t)(eq - entry) : strlen(entry);
    const char *value = cb_env_shown_value(entry);   /* a secret's: set, not shown */
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)nlen, entry);
    if (strcmp(name, "NCCL_TESTS_MIN_BW") == 0) {
        snprintf(text, len, "%s=%s: a collective whose average bus bandwidth is below 0.9 x "
                 "%s GB/s fails the run (status 8), as in nccl-tests", name, value, value);
    } else if (strcmp(name, "NCCL_TESTS_DEVICE") == 0) {
        snprintf(text, len, "%s=%s: read as NCCL_COLLBENCH_DEVICE, the GPU of every rank of "
                 "the nccl backend", name, value);
    } else if (strcmp(name, "NCCL_TESTS_SPLIT") == 0 || strcmp(name, "NCCL_TESTS_SPLIT_MASK") == 0) {
        int mask_set = 0;
        for (char *const *e = envp; *e != NULL; e++)
            if (strncmp(*e, "NCCL_TESTS_SPLIT_MASK=", 22) == 0 && (*e)[22] != '\0')
                mask_set = 1;
        if (strcmp(name, "NCCL_TESTS_SPLIT") == 0 && mask_set)
            snprintf(text, len, "%s=%s: not read, NCCL_TESTS_SPLIT_MASK takes precedence as "
                     "in nccl-tests", name, value);
        else
            snprintf(text, len, "%s=%s: read as --split (the split lines name the groups)",
                     name, value);
    } else {
        snprintf(text, len, "%s is set but nccl-collbench does not read it (nccl-tests' "
                 "variable; see nccl-collbench-nccl-tests(7))", name);
    }
}

int cb_params_env_note(char *const *envp, int index, char *text, size_t len)
{
    for (char *const *e = envp; envp != NULL && *e != NULL; e++) {
        if (strncmp(*e, ENV_PREFIX, strlen(ENV_PREFIX)) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL || eq[1] == '\0')   /* set but empty: read as unset */
            continue;
        if (index-- == 0) {
            env_note(envp, *e, text, len);
            return 1;
        }
    }
    return 0;
}
