/* --help: every option in a section, the table in --help's order, no line
 * wider than CB_HELP_WIDTH, each section and recipe there; and the fold
 * that keeps lines within the width. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options/params.h"
#include "options/params_parse.h"
#include "unit.h"

/* The text f wrote, NUL-terminated (free it). */
static char *written(FILE *f)
{
    long len = ftell(f);
    char *text = calloc((size_t)(len > 0 ? len : 0) + 1, 1);
    rewind(f);
    if (text != NULL && len > 0 && fread(text, 1, (size_t)len, f) != (size_t)len)
        text[0] = '\0';
    fclose(f);
    return text;
}

static size_t widest_line(const char *text)
{
    size_t widest = 0;
    while (*text != '\0') {
        size_t len = strcspn(text, "\n");
        if (len > widest)
            widest = len;
        text += len + (text[len] == '\n');
    }
    return widest;
}

static char *fold(const char *in, size_t width)
{
    FILE *f = tmpfile();
    if (f == NULL)
        return NULL;
    cb_params_fold(f, in, width);
    return written(f);
}

static void test_table(unit_state *u)
{
    size_t count = 0;
    const cb_option_spec *table = cb_params_options(&count);
    for (size_t i = 0; i < count; i++) {
        int in_section = table[i].section > CB_HELP_UNSET &&
                         table[i].section < CB_HELP_SECTION_COUNT;
        CHECK(u, in_section);
        if (!in_section)
            fprintf(stderr, "--%s has no --help section\n", table[i].long_name);
        /* Agreement names the first option that differs in table order:
         * --help's order only while the table is sorted by section. */
        int in_order = i == 0 || table[i].section >= table[i - 1].section;
        CHECK(u, in_order);
        if (!in_order)
            fprintf(stderr, "--%s is out of its section's place in the table\n",
                    table[i].long_name);
    }
}

static void test_help(unit_state *u)
{
    FILE *f = tmpfile();
    CHECK(u, f != NULL);
    if (f == NULL)
        return;
    cb_params_help(f, "nccl-collbench");
    char *text = written(f);
    CHECK(u, text != NULL);
    if (text == NULL)
        return;
    CHECK(u, widest_line(text) <= CB_HELP_WIDTH);
    static const char *const must[] = {
        "\nCollectives and sizes:\n", "\nTiming:\n", "\nVerification:\n", "\nOutputs:\n",
        "\nRuns and safety:\n", "\nBackends:\n", "\nnccl-tests compatibility:\n",
        "\nExit statuses:\n", "\nRecipes", "Node acceptance", "Nightly regression",
        "Slurm prolog, epilog", "Kubernetes",
    };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        CHECK(u, strstr(text, must[i]) != NULL);
        if (strstr(text, must[i]) == NULL)
            fprintf(stderr, "--help lacks '%s'\n", must[i]);
    }
    CHECK(u, strstr(text, "Other options") == NULL);
    /* Every recipe that qualifies a node runs NCCL, never MPI by default. */
    static const char *const node_checks[] = {"Node acceptance", "Slurm prolog", "Kubernetes"};
    for (size_t i = 0; i < sizeof node_checks / sizeof node_checks[0]; i++) {
        const char *at = strstr(text, node_checks[i]);
        CHECK(u, at != NULL);
        if (at == NULL)
            continue;
        /* The recipe runs to the next title (a line indented by two) or
         * the end of the section. */
        const char *end = at;
        while ((end = strchr(end, '\n')) != NULL && end[1] != '\n' &&
               !(end[1] == ' ' && end[2] == ' ' && end[3] != ' ') )
            end++;
        size_t span = end ? (size_t)(end - at) : strlen(at);
        char *recipe = strndup(at, span);
        CHECK(u, recipe != NULL && strstr(recipe, "--backend nccl") != NULL);
        if (recipe != NULL && strstr(recipe, "--backend nccl") == NULL)
            fprintf(stderr, "recipe without --backend nccl:\n%s\n", recipe);
        free(recipe);
    }
    free(text);
}

static void test_fold(unit_state *u)
{
    char *out = fold("short line\n", 20);
    CHECK(u, out != NULL && strcmp(out, "short line\n") == 0);
    free(out);
    /* An option line: its continuation goes under the description. */
    out = fold("  -x, --example N            one two three four five six seven eight nine\n", 50);
    CHECK(u, out != NULL && widest_line(out) <= 50);
    CHECK(u, out != NULL && strstr(out, "\n                             ") != NULL);
    free(out);
    /* A name and its text: under the text. */
    out = fold("  nccl     GPU buffers and NCCL collectives\n", 30);
    CHECK(u, out != NULL && strcmp(out, "  nccl     GPU buffers and\n           NCCL collectives\n") == 0);
    free(out);
    /* Plain text: two columns in from its own indent. */
    out = fold("  alpha beta gamma delta epsilon\n", 18);
    CHECK(u, out != NULL && strcmp(out, "  alpha beta gamma\n    delta epsilon\n") == 0);
    free(out);
    /* A word wider than the line stays whole, on a line of its own. */
    out = fold("a abcdefghijklmnopqrstuvwxyz b\n", 10);
    CHECK(u, out != NULL && strcmp(out, "a\n  abcdefghijklmnopqrstuvwxyz\n  b\n") == 0);
    free(out);
    /* No text is lost: the words come out in order. */
    out = fold("one two three four five six seven eight nine ten\n", 12);
    char *copy = out ? strdup(out) : NULL;
    size_t words = 0;
    for (char *w = copy ? strtok(copy, " \n") : NULL; w != NULL; w = strtok(NULL, " \n"))
        words++;
    CHECK(u, words == 10);
    free(copy);
    free(out);
}

int main(void)
{
    unit_state u = {0, 0};
    test_table(&u);
    test_help(&u);
    test_fold(&u);
    return unit_done(&u, "unit_help");
}
