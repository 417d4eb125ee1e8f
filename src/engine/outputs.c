/* The printers (rank 0 only) and the progress line. */
#include "engine_int.h"

/* Rank 0 opens the outputs the command line asks for before anything is
 * measured, in the order of cb_output_formats. */
void open_printers(engine *e)
{
    if (e->rank != 0)
        return;
    int nformats = 0;
    while (cb_output_formats[nformats] != NULL)
        nformats++;
    e->printers = calloc((size_t)nformats, sizeof *e->printers);
    if (e->printers == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d outputs", nformats);
        return;
    }
    char err[CB_MSGLEN] = "";
    for (int f = 0; f < nformats; f++) {
        const cb_printer_ops *format = cb_output_formats[f];
        const char *path = format->destination(e->p);
        if (path == NULL)
            continue;
        cb_printer *pr = format->open(path, err, sizeof err);
        if (pr == NULL) {
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s: %s", format->option, err);
            return;
        }
        e->printers[e->nprinters++] = pr;
    }
}

/* The run described, before the first table. */
void printers_begin(engine *e)
{
    for (int i = 0; i < e->nprinters; i++)
        if (e->printers[i]->ops->begin != NULL)
            e->printers[i]->ops->begin(e->printers[i], &e->run);
}

/* A new table: coll measured in layout. */
void printers_table_begin(engine *e, const cb_collective *coll, cb_layout_kind layout)
{
    for (int i = 0; i < e->nprinters; i++)
        if (e->printers[i]->ops->table_begin != NULL)
            e->printers[i]->ops->table_begin(e->printers[i], coll, layout);
}

void printers_note(engine *e, const char *text)
{
    for (int i = 0; i < e->nprinters; i++)
        if (e->printers[i]->ops->note != NULL)
            e->printers[i]->ops->note(e->printers[i], text);
}

/* Progress on stderr: by default only when stderr is a terminal and the
 * table goes elsewhere (stdout redirected); --progress forces it. */
void choose_progress(engine *e)
{
    const cb_params *p = e->p;
    int table_on_stderr = p->csv_path != NULL && strcmp(p->csv_path, "-") == 0;
    /* One line rewritten in place only where no table shares the terminal;
     * otherwise whole lines, between the table's. */
    int own_line = isatty(STDERR_FILENO) && !isatty(STDOUT_FILENO) && !table_on_stderr;
    if (e->rank != 0)
        e->progress = 0;
    else if (own_line)
        e->progress = 1;
    else
        e->progress = p->progress ? 2 : 0;
}

void report_progress(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop,
                     int done, int total)
{
    if (e->progress == 0)
        return;
    fprintf(stderr, "%s# progress: %s %s %s: %d of %d sizes%s", e->progress == 1 ? "\r\033[K" : "",
            coll->name, cb_dtype_info_of(dtype)->name, cb_redop_name(redop), done, total,
            e->progress == 1 ? "" : "\n");
    fflush(stderr);
}

/* Every printer ends, also after a failure: footers, and a JSON document
 * that says how the run ended. */
void end_printers(engine *e)
{
    /* In the order opened, each ended and closed before the next ends, so
     * the JSON document, last, carries the status a failed close gives. */
    cb_summary *sum = &e->sum;
    char err[CB_MSGLEN];
    for (int i = 0; i < e->nprinters; i++) {
        sum->exit_status = e->st.code != CB_EXIT_OK ? e->st.code
                           : sum->wrong > 0         ? CB_EXIT_WRONG
                                                    : CB_EXIT_OK;
        snprintf(sum->error, sizeof sum->error, "%s", e->st.code != CB_EXIT_OK ? e->st.msg : "");
        if (e->printers[i]->ops->end != NULL)
            e->printers[i]->ops->end(e->printers[i], sum);
        if (e->printers[i]->ops->close(e->printers[i], err, sizeof err) != 0)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", err);
    }
    e->nprinters = 0;
    free(e->printers);
    e->printers = NULL;
}

static void check_printers(engine *e)
{
    for (int i = 0; i < e->nprinters; i++)
        if (e->printers[i]->write_failed)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "writing the %s output failed",
                          e->printers[i]->ops->name);
}

void emit_result(engine *e, const cb_result *res)
{
    if (e->rank != 0)
        return;
    for (int i = 0; i < e->nprinters; i++)
        e->printers[i]->ops->result(e->printers[i], res);
    check_printers(e);
}

/* Rank 0 prints a result of a group and counts it. */
void emit_counted(engine *e, const cb_result *res)
{
    e->sum.results++;
    if (!(res->collective->flags & CB_COLL_NO_DATA)) {
        e->sum.busbw_sum += res->busbw;
        e->sum.busbw_results++;
    }
    emit_result(e, res);
}
