/*
 * --help: the option table's lines by section, the names the options take,
 * the exit statuses and a few recipes. Everything is written to memory
 * first and folded to CB_HELP_WIDTH columns on the way out, so that a long
 * help text, ours or a new option's, never makes a line wider than a
 * terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "collectives/collective.h"
#include "options/params.h"
#include "options/params_parse.h"
#include "safety/agreement.h"
#include "verify/dtype.h"
#include "verify/redop.h"

/* Where an option's description starts: two spaces, 26 for the names. */
#define OPTION_COLUMN 29

static const char *const section_titles[CB_HELP_SECTION_COUNT] = {
    [CB_HELP_UNSET] = "Other options",
    [CB_HELP_SIZES] = "Collectives and sizes",
    [CB_HELP_TIMING] = "Timing",
    [CB_HELP_VERIFY] = "Verification",
    [CB_HELP_OUTPUTS] = "Outputs",
    [CB_HELP_RUNS] = "Runs and safety",
    [CB_HELP_BACKENDS] = "Backends",
    [CB_HELP_NCCL_TESTS] = "nccl-tests compatibility",
};

/* Short on purpose: nccl-collbench(1), RECIPES, has the same four with
 * what each status means. */
static const char recipes[] =
    "Recipes (a node check names --backend nccl: without a working NCCL it\n"
    "fails instead of measuring MPI):\n"
    "  Node acceptance, one node of 8 GPUs (0 passed, 7 wrong results, 8 slow):\n"
    "    mpirun -np 8 nccl-collbench --backend nccl -o all -e 1G -c 1 \\\n"
    "        --expect auto -T 120\n"
    "  Nightly regression: keep each night's CSV, gate on the last ones:\n"
    "    mpirun -np 16 nccl-collbench --backend nccl -e 1G --csv new.csv\n"
    "    nccl-collbench-compare --quiet mon.csv tue.csv new.csv\n"
    "  Slurm prolog, epilog or HealthCheckProgram: drain the node if it fails:\n"
    "    nccl-collbench-health --expect auto -- --backend nccl -b 64M -e 64M\n"
    "  Kubernetes, one pod per node, no mpirun (deploy/kubernetes/indexed-job.yaml):\n"
    "    nccl-collbench -g 8 --backend nccl -o allreduce -b 8 -e 1G -T 300 \\\n"
    "        --csv /results/allreduce.csv\n";

/* One option's line: names, then its description at OPTION_COLUMN (on a
 * line of its own when the names are wider). */
static void option_line(FILE *out, const cb_option_spec *o)
{
    char left[64];
    if (o->short_name)
        snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->long_name,
                 o->arg ? " " : "", o->arg ? o->arg : "");
    else
        snprintf(left, sizeof left, "    --%s%s%s", o->long_name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    if (strlen(left) >= OPTION_COLUMN - 3)
        fprintf(out, "  %s\n%*s%s\n", left, OPTION_COLUMN, "", o->help);
    else
        fprintf(out, "  %-*s %s\n", OPTION_COLUMN - 3, left, o->help);
}

/* What follows a section's options: the names they take. */
static void section_tail(FILE *out, cb_help_section section)
{
    if (section == CB_HELP_SIZES) {
        fprintf(out, "  Collectives:");
        for (const cb_collective *const *c = cb_collective_list(); *c != NULL; c++)
            fprintf(out, " %s", (*c)->name);
        fprintf(out, " scan (scan_nodes scan_pairs scan_rails)\n  Datatypes:");
        for (int t = 0; t < CB_DTYPE_COUNT; t++)
            fprintf(out, " %s", cb_dtype_info_of((cb_dtype)t)->name);
        fprintf(out, "\n  Reductions:");
        for (int op = 0; op < CB_REDOP_COUNT; op++)
            fprintf(out, " %s", cb_redop_name((cb_redop)op));
        fputc('\n', out);
    } else if (section == CB_HELP_BACKENDS) {
        for (const cb_backend_ops *const *b = cb_backend_list(); *b != NULL; b++)
            fprintf(out, "  %-8s %s\n", (*b)->name, (*b)->summary);
        for (const char *const *n = cb_backend_not_built(); *n != NULL; n += 2)
            fprintf(out, "  %-8s not built: %s\n", n[0], n[1]);
    } else if (section == CB_HELP_NCCL_TESTS) {
        cb_params_nccl_tests_help(out);
    }
}

static size_t leading_spaces(const char *line)
{
    size_t n = 0;
    while (line[n] == ' ')
        n++;
    return n;
}

/* Where a line's second column starts: after the first gap of two spaces
 * or more past its first word, within the first HANG_MAX columns; 0 when
 * there is none. */
#define HANG_MAX 40
static size_t second_column(const char *line, size_t len, size_t lead)
{
    for (size_t i = lead + 1; i + 2 < len && i < HANG_MAX; i++)
        if (line[i] == ' ' && line[i + 1] == ' ') {
            while (i < len && line[i] == ' ')
                i++;
            return i < HANG_MAX && i < len ? i : 0;
        }
    return 0;
}

/* Write one line (without its newline) folded at spaces to width columns.
 * Continuation lines line up under the line's second column (an option's
 * description, a backend's summary), under a continued description, or
 * two columns in from the line's own indent. */
static void fold_line(FILE *out, const char *line, size_t len, size_t width)
{
    size_t lead = leading_spaces(line);
    size_t hang = lead + 2, column = second_column(line, len, lead);
    if (lead >= OPTION_COLUMN)
        hang = lead;
    else if (column > 0)
        hang = column;
    size_t indent = 0;  /* of the piece being written */
    while (indent + len > width) {
        size_t room = width - indent, cut = 0;
        for (size_t i = room; i > 0 && cut == 0; i--)
            if (line[i] == ' ' && i > (indent ? 0 : lead))
                cut = i;
        if (cut == 0) {  /* one word wider than the line: break after it */
            cut = room;
            while (cut < len && line[cut] != ' ')
                cut++;
            if (cut >= len)
                break;
        }
        size_t end = cut;
        while (end > 0 && line[end - 1] == ' ')
            end--;
        fprintf(out, "%*s%.*s\n", (int)indent, "", (int)end, line);
        while (cut < len && line[cut] == ' ')
            cut++;
        line += cut;
        len -= cut;
        indent = hang;
    }
    fprintf(out, "%*s%.*s\n", (int)indent, "", (int)len, line);
}

void cb_params_fold(FILE *out, const char *text, size_t width)
{
    while (*text != '\0') {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        fold_line(out, text, len, width);
        text += len + (nl != NULL);
    }
}

static void help_text(FILE *out, const char *prog)
{
    size_t count = 0;
    const cb_option_spec *table = cb_params_options(&count);
    fprintf(out, "Usage: mpirun -np N %s [OPTION]...\n"
                 "Measure and verify collective operations, one MPI rank per GPU.\n"
                 "Defaults are in brackets.\n", prog);
    for (int section = 0; section < CB_HELP_SECTION_COUNT; section++) {
        int listed = 0;
        for (size_t i = 0; i < count; i++) {
            if (table[i].section != (cb_help_section)section)
                continue;
            if (!listed++)
                fprintf(out, "\n%s:\n", section_titles[section]);
            option_line(out, &table[i]);
        }
        if (listed || section != CB_HELP_UNSET)
            section_tail(out, (cb_help_section)section);
    }
    fprintf(out, "\nExit statuses:\n");
    for (const cb_exit_meaning *x = cb_exit_meanings; x->meaning != NULL; x++)
        fprintf(out, "  %-3d %s\n", x->code, x->meaning);
    fprintf(out, "\n%s\nSee nccl-collbench(1) for every option, "
                 "nccl-collbench-output(5) for the output\ncolumns and the CSV schema.\n",
            recipes);
}

void cb_params_help(FILE *out, const char *prog)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL) {  /* no memory to fold in: unfolded is better than nothing */
        help_text(out, prog);
        return;
    }
    help_text(mem, prog);
    if (fclose(mem) == 0 && text != NULL)
        cb_params_fold(out, text, CB_HELP_WIDTH);
    free(text);
}
