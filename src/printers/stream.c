/* Opening and closing the printers' output streams. */
#include <errno.h>
#include <string.h>

#include "printers/printer.h"
#include "safety/outfile.h"

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

int cb_printer_open_document(cb_printer *pr, cb_outfile *file, const char *path, char *err,
                             size_t err_len)
{
    if (cb_outfile_open(file, path, err, err_len) != 0)
        return -1;
    pr->out = fdopen(file->fd, "w");
    if (pr->out == NULL) {
        snprintf(err, err_len, "cannot write to the new '%s': %s", path, strerror(errno));
        cb_outfile_close(file);
        return -1;
    }
    pr->owns_out = 1;
    return 0;
}

int cb_printer_close_document(cb_printer *pr, cb_outfile *file, int ended, char *err,
                              size_t err_len)
{
    int rc = -1;
    if (!ended) {
        /* Never name a document that was not finished. */
        snprintf(err, err_len, "the JSON document for '%s' was not finished", file->path);
    } else if (pr->write_failed && pr->failure[0] != '\0') {
        snprintf(err, err_len, "%s", pr->failure);
    } else if (pr->write_failed || fflush(pr->out) != 0 || ferror(pr->out)) {
        snprintf(err, err_len, "writing the JSON file '%s' failed: %s", file->path,
                 strerror(errno));
    } else if (cb_outfile_commit(file, err, err_len) == 0) {
        rc = 0;
    }
    /* fclose closes the descriptor; a file not committed goes with it. */
    if (fclose(pr->out) != 0 && rc == 0) {
        snprintf(err, err_len, "writing the JSON file '%s' failed: %s", file->path,
                 strerror(errno));
        rc = -1;
    }
    file->fd = -1;
    cb_outfile_close(file);
    return rc;
}
