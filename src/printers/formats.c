/* The output formats: one line per format, FORMAT(x) for the ops table
 * cb_printer_x in x.c. The table comes first, so that its rows appear as
 * soon as measured; JSON last, so that its document carries the status a
 * failed close of another output gives (--prom's file carries a failed
 * CSV's). */
#include <string.h>

#include "printers/printer.h"

#define CB_OUTPUT_FORMATS(FORMAT) \
    FORMAT(table)                 \
    FORMAT(csv)                   \
    FORMAT(prom)                  \
    FORMAT(tests_json)            \
    FORMAT(json)

#define CB_DECLARE_FORMAT(x) extern const cb_printer_ops cb_printer_##x;
CB_OUTPUT_FORMATS(CB_DECLARE_FORMAT)

#define CB_LIST_FORMAT(x) &cb_printer_##x,
const cb_printer_ops *const cb_output_formats[] = {CB_OUTPUT_FORMATS(CB_LIST_FORMAT) NULL};

const cb_printer_ops *cb_output_format(const char *name, size_t len)
{
    for (const cb_printer_ops *const *f = cb_output_formats; *f != NULL; f++)
        if (strlen((*f)->name) == len && strncmp((*f)->name, name, len) == 0)
            return *f;
    return NULL;
}

int cb_printer_csv_on_stdout(const cb_params *p)
{
    const char *path = cb_printer_csv.destination(p);
    return path != NULL && strcmp(path, "-") == 0;
}
