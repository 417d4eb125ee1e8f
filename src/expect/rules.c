/*
 * --expect FILE: a site's own floors, one rule a line:
 *
 *     MATCH  COLLECTIVE  FROM  GBPS
 *
 * MATCH is gpu:PATTERN (the GPU model, as the preamble's "Using devices"
 * shows it) or host:PATTERN (the host name), shell wildcards; COLLECTIVE a
 * collective's name or *; FROM the smallest size (bytes, K M G T suffixes)
 * the floor applies to; GBPS the expected bus bandwidth. '#' starts a
 * comment. nccl-collbench(1) documents it with an example.
 */
#include "expect/expect.h"
#include "common/format.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"
#include "common/parse.h"

/* A file larger than this is not a list of floors. */
#define RULES_MAX_BYTES (1 << 20)

static int bad(char *err, size_t len, const char *name, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int bad(char *err, size_t len, const char *name, int line, const char *fmt, ...)
{
    int used = line > 0 ? snprintf(err, len, "%s:%d: ", name, line) : snprintf(err, len, "%s: ",
                                                                                name);
    if (used >= 0 && (size_t)used < len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + used, len - (size_t)used, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One line's fields into rule; 0, -1 with err. */
static int parse_rule(char *text, const char *name, int line, cb_expect_rule *rule, char *err,
                      size_t len)
{
    char *field[5];
    int n = 0;
    for (char *c = text; *c != '\0';) {
        c += strspn(c, " \t");
        if (*c == '\0')
            break;
        if (n < 5)
            field[n] = c;
        n++;
        c += strcspn(c, " \t");
        if (*c != '\0')
            *c++ = '\0';
    }
    if (n != 4)
        return bad(err, len, name, line, "%d field%s, expected 4: MATCH COLLECTIVE FROM GBPS",
                   n, cb_plural(n));
    memset(rule, 0, sizeof *rule);
    rule->line = line;
    if (strncmp(field[0], "gpu:", 4) == 0)
        rule->by_gpu = 1;
    else if (strncmp(field[0], "host:", 5) != 0)
        return bad(err, len, name, line, "'%s': MATCH is gpu:PATTERN or host:PATTERN", field[0]);
    const char *pattern = field[0] + (rule->by_gpu ? 4 : 5);
    if (pattern[0] == '\0' || strlen(pattern) >= sizeof rule->pattern)
        return bad(err, len, name, line, "'%s': the pattern is empty or longer than %zu "
                   "characters", field[0], sizeof rule->pattern - 1);
    /* The GPU model may hold blanks; a pattern writes them as '_'. */
    snprintf(rule->pattern, sizeof rule->pattern, "%s", pattern);
    for (char *c = rule->pattern; rule->by_gpu && *c != '\0'; c++)
        if (*c == '_')
            *c = ' ';
    if (strcmp(field[1], "*") != 0 && cb_collective_lookup(field[1]) == NULL)
        return bad(err, len, name, line, "'%s' is not a collective (a name as -o takes it, or *)",
                   field[1]);
    snprintf(rule->collective, sizeof rule->collective, "%s", field[1]);
    if (cb_parse_bytes(field[2], &rule->from_bytes) != 0)
        return bad(err, len, name, line, "'%s' is not a size in bytes (K, M, G, T suffixes)",
                   field[2]);
    char *end = NULL;
    errno = 0;
    rule->gbps = strtod(field[3], &end);
    if (end == field[3] || *end != '\0' || errno != 0 || !(rule->gbps > 0) ||
        !isfinite(rule->gbps))
        return bad(err, len, name, line, "'%s' is not a positive number of GB/s", field[3]);
    return 0;
}

int cb_expect_rules_parse(const char *text, const char *name, cb_expect_rules *out, char *err,
                          size_t err_len)
{
    out->rules = NULL;
    out->n = 0;
    int room = 0, line = 0;
    const char *p = text;
    while (*p != '\0') {
        line++;
        size_t span = strcspn(p, "\n");
        char buf[512];
        if (span >= sizeof buf) {
            cb_expect_rules_free(out);
            return bad(err, err_len, name, line, "longer than %zu characters", sizeof buf - 1);
        }
        memcpy(buf, p, span);
        buf[span] = '\0';
        p += span + (p[span] == '\n');
        buf[strcspn(buf, "#\r")] = '\0';
        if (strspn(buf, " \t") == strlen(buf))
            continue;
        if (out->n == room) {
            room = room ? 2 * room : 16;
            cb_expect_rule *grown = realloc(out->rules, (size_t)room * sizeof *grown);
            if (grown == NULL) {
                cb_expect_rules_free(out);
                return bad(err, err_len, name, line, "out of memory");
            }
            out->rules = grown;
        }
        if (parse_rule(buf, name, line, &out->rules[out->n], err, err_len) != 0) {
            cb_expect_rules_free(out);
            return -1;
        }
        out->n++;
    }
    if (out->n == 0)
        return bad(err, err_len, name, 0, "no rule (MATCH COLLECTIVE FROM GBPS) in the file");
    return 0;
}

int cb_expect_rules_load(const char *path, cb_expect_rules *out, char *err, size_t err_len)
{
    out->rules = NULL;
    out->n = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return bad(err, err_len, path, 0, "cannot be read: %s", strerror(errno));
    char *text = malloc(RULES_MAX_BYTES + 1);
    if (text == NULL) {
        fclose(f);
        return bad(err, err_len, path, 0, "out of memory");
    }
    size_t got = fread(text, 1, RULES_MAX_BYTES + 1, f);
    int failed = ferror(f);
    fclose(f);
    int rc;
    if (failed)
        rc = bad(err, err_len, path, 0, "cannot be read");
    else if (got > RULES_MAX_BYTES)
        rc = bad(err, err_len, path, 0, "larger than %d bytes", RULES_MAX_BYTES);
    else if (memchr(text, '\0', got) != NULL)
        rc = bad(err, err_len, path, 0, "not text (holds a NUL byte)");
    else {
        text[got] = '\0';
        rc = cb_expect_rules_parse(text, path, out, err, err_len);
    }
    free(text);
    return rc;
}

void cb_expect_rules_free(cb_expect_rules *rules)
{
    free(rules->rules);
    rules->rules = NULL;
    rules->n = 0;
}

const cb_expect_rule *cb_expect_rules_find(const cb_expect_rules *rules,
                                           const char *const *models, const char *const *hosts,
                                           int n, const char *collective, uint64_t bytes)
{
    const cb_expect_rule *best = NULL;
    for (int i = 0; i < rules->n; i++) {
        const cb_expect_rule *r = &rules->rules[i];
        if (r->from_bytes > bytes ||
            (strcmp(r->collective, "*") != 0 && strcmp(r->collective, collective) != 0))
            continue;
        int all = n > 0;
        for (int k = 0; k < n && all; k++)
            all = fnmatch(r->pattern, r->by_gpu ? models[k] : hosts[k], 0) == 0;
        if (all && (best == NULL || r->from_bytes >= best->from_bytes))
            best = r;
    }
    return best;
}
