/* The output formats: one line per format. The table comes first, so that
 * its rows appear as soon as measured; JSON last, so that its document
 * carries the status a failed close of another output gives (--prom's file
 * carries a failed CSV's). */
#include "printers/printer.h"

const cb_printer_ops *const cb_output_formats[] = {
    &cb_printer_table,
    &cb_printer_csv,
    &cb_printer_prom,
    &cb_printer_tests_json,
    &cb_printer_json,
    NULL,
};
