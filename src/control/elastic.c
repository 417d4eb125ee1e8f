/* torchrun's error file and restarts (control/elastic.h). */
#include "control/elastic.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/json_text.h"

int cb_elastic_restart_count(const char *(*get)(const char *))
{
    const char *v = get("TORCHELASTIC_RESTART_COUNT");
    if (v == NULL || v[0] < '0' || v[0] > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    return *end != '\0' || errno != 0 || n > INT_MAX ? -1 : (int)n;
}

int cb_elastic_error_file(const char *(*get)(const char *), int code, const char *message,
                          char *err, size_t len)
{
    const char *path = get("TORCHELASTIC_ERROR_FILE");
    if (path == NULL || path[0] == '\0' || code == 0)
        return 0;
    /* O_NOFOLLOW: a link planted at the path does not redirect the write. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        snprintf(err, len, "TORCHELASTIC_ERROR_FILE=%.300s: cannot write it: %s", path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* torchrun's report ("traceback :" of each failure) prints
     * message.extraInfo.py_callstack, and message.message only where
     * py_callstack is missing: torch/distributed/elastic/multiprocessing/
     * errors/__init__.py, ChildFailedError._format_failure (PyTorch 2.15).
     * No Python stack here, so py_callstack carries our message too; the
     * status is in it ("exit status N (meaning)") and in errorCode. */
    fputs("{\"message\": {\"message\": ", f);
    cb_json_write_string(f, message);
    fprintf(f, ", \"errorCode\": %d, \"extraInfo\": {\"py_callstack\": ", code);
    cb_json_write_string(f, message);
    fprintf(f, ", \"timestamp\": \"%lld\"}}}\n", (long long)time(NULL));
    if (fclose(f) != 0) {
        snprintf(err, len, "TORCHELASTIC_ERROR_FILE=%.300s: writing it failed: %s", path,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int cb_elastic_keep_earlier(const char *path, int restart, char *kept, size_t kept_len,
                            char *err, size_t len)
{
    kept[0] = '\0';
    struct stat st;
    if (restart < 1 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;   /* nothing to keep; outfile refuses what is not a file */
    int w = snprintf(kept, kept_len, "%s.before-attempt%d", path, restart);
    if (w < 0 || (size_t)w >= kept_len) {
        snprintf(err, len, "%.300s: the earlier attempt's file cannot be kept: its new name is "
                 "too long", path);
        kept[0] = '\0';
        return -1;
    }
    /* link then unlink: never replaces a file already at the new name. */
    if (link(path, kept) != 0 || unlink(path) != 0) {
        snprintf(err, len, "%.300s: the earlier attempt's file cannot be kept as %.300s (%s); "
                 "refused rather than overwrite it (TORCHELASTIC_RESTART_COUNT=%d)", path, kept,
                 strerror(errno), restart);
        kept[0] = '\0';
        return -1;
    }
    return 0;
}
