/* Opening and closing the printers' output streams. */
#include <errno.h>
#include <string.h>

#include "printers/printer.h"

int cb_printer_open_stream(cb_printer *pr, const char *path, char *err, size_t err_len)
{
    if (path == NULL || strcmp(path, "-") == 0 || strcmp(path, CB_PRINTER_STDERR) == 0) {
        pr->out = path != NULL && strcmp(path, CB_PRINTER_STDERR) == 0 ? stderr : stdout;
        pr->owns_out = 0;
        return 0;
    }
    pr->out = fopen(path, "w");
    if (pr->out == NULL) {
        snprintf(err, err_len, "cannot open '%s' for writing: %s", path, strerror(errno));
        return -1;
    }
    pr->owns_out = 1;
    return 0;
}

int cb_printer_close_stream(cb_printer *pr, const char *what, char *err, size_t err_len)
{
    int failed = pr->write_failed || fflush(pr->out) != 0 || ferror(pr->out);
    int saved_errno = errno;
    if (pr->owns_out && fclose(pr->out) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    if (failed) {
        snprintf(err, err_len, "writing the %s failed: %s", what, strerror(saved_errno));
        return -1;
    }
    return 0;
}
