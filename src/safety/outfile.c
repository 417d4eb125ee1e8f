/* Output files that do no harm; see outfile.h. */
#define _GNU_SOURCE 1   /* O_TMPFILE and linkat's AT_EMPTY_PATH */
#include "safety/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Tries at a free temporary name before giving up. */
#define CB_OUTFILE_TRIES 100

/* The directory part of path ("." when it has none), in a new string. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t len = (size_t)(slash - path);
    char *dir = malloc(len + 1);
    if (dir != NULL) {
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    return dir;
}

int cb_outfile_check(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        const char *why = NULL;
        if (S_ISLNK(st.st_mode))
            why = "it is a symbolic link (give the path of the file itself)";
        else if (S_ISDIR(st.st_mode))
            why = "it is a directory (give a file name)";
        else if (!S_ISREG(st.st_mode))
            why = "it is not a regular file (a device, pipe or socket)";
        /* Root may write anything: a file without write permission is still
         * one its owner meant to keep. */
        else if (access(path, W_OK) != 0 || (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
            why = "it is not writable";
        if (why != NULL) {
            snprintf(err, err_len, "refusing to replace '%s': %s", path, why);
            return -1;
        }
    } else if (errno != ENOENT) {
        snprintf(err, err_len, "cannot examine '%s': %s", path, strerror(errno));
        return -1;
    }
    char *dir = directory_of(path);
    if (dir == NULL) {
        snprintf(err, err_len, "'%s': out of memory", path);
        return -1;
    }
    int rc = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, err_len, "cannot create '%s': its directory '%s' is not writable: %s",
                 path, dir, strerror(errno));
        rc = -1;
    }
    free(dir);
    return rc;
}

/* path with its directory resolved ("a/./b" and "a//b" are "a/b"), or a
 * copy of path when the directory does not resolve. */
static char *normalised(const char *path)
{
    char *dir = directory_of(path);
    char *real = dir != NULL ? realpath(dir, NULL) : NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *out = NULL;
    if (real != NULL && (out = malloc(strlen(real) + strlen(base) + 2)) != NULL)
        sprintf(out, "%s/%s", real, base);
    free(dir);
    free(real);
    return out != NULL ? out : strdup(path);
}

int cb_outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    int has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a != has_b)
        return 0;
    char *na = normalised(a), *nb = normalised(b);
    int same = na != NULL && nb != NULL && strcmp(na, nb) == 0;
    free(na);
    free(nb);
    return same;
}

/* A free name beside the target: PATH.tmp.PID.N; sets of->tmp_path. */
static char *temp_name(const cb_outfile *of, int attempt)
{
    size_t len = strlen(of->path) + 48;
    char *name = malloc(len);
    if (name != NULL)
        snprintf(name, len, "%s.tmp.%ld.%d", of->path, (long)getpid(), attempt);
    return name;
}

/* FNV-1a of text: the claim's name for a path too long for a socket name. */
static unsigned long long text_hash(const char *text)
{
    unsigned long long h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

/* Claim the resolved path on this machine: an abstract socket bound to a
 * name made of it. 0, 1 when another process holds it, -1 when the claim
 * cannot be made (no such sockets: flock alone then). */
static int claim_path(cb_outfile *of)
{
    char *full = normalised(of->path);
    if (full == NULL)
        return -1;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    /* sun_path[0] = 0: the abstract namespace, nothing on disk. */
    int len = snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "nccl-collbench:%016llx:%s",
                       text_hash(full), full);
    free(full);
    if (len < 0)
        return -1;
    if ((size_t)len >= sizeof addr.sun_path - 1)
        len = (int)sizeof addr.sun_path - 2;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&addr,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) != 0) {
        int taken = errno == EADDRINUSE;
        close(fd);
        return taken ? 1 : -1;
    }
    of->claim_fd = fd;
    return 0;
}

/* Take the locks (outfile.h); 0, or -1 with err set when another run
 * writes path. */
static int lock_target(cb_outfile *of, char *err, size_t err_len)
{
    int busy = claim_path(of) == 1;
    if (!busy) {
        of->old_fd = open(of->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (of->old_fd >= 0 && flock(of->old_fd, LOCK_EX | LOCK_NB) != 0) {
            busy = errno == EWOULDBLOCK;
            close(of->old_fd);
            of->old_fd = -1;
        }
    }
    if (busy)
        snprintf(err, err_len, "'%s' is being written by another run at this moment (it holds "
                 "the file's lock): give another file name, or wait for that run to end",
                 of->path);
    return busy ? -1 : 0;
}

int cb_outfile_open(cb_outfile *of, const char *path, char *err, size_t err_len)
{
    memset(of, 0, sizeof *of);
    of->fd = of->old_fd = of->claim_fd = -1;
    if (cb_outfile_check(path, err, err_len) != 0)
        return -1;
    of->path = strdup(path);
    char *dir = directory_of(path);
    if (of->path == NULL || dir == NULL) {
        free(dir);
        cb_outfile_close(of);
        snprintf(err, err_len, "'%s': out of memory", path);
        return -1;
    }
    if (lock_target(of, err, err_len) != 0) {
        free(dir);
        cb_outfile_close(of);
        return -1;
    }
    /* A file without a name first: nothing to clean up if the process dies. */
    of->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    free(dir);
    for (int attempt = 0; of->fd < 0 && attempt < CB_OUTFILE_TRIES; attempt++) {
        free(of->tmp_path);
        of->tmp_path = temp_name(of, attempt);
        if (of->tmp_path == NULL)
            break;
        of->fd = open(of->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (of->fd < 0 && errno != EEXIST)
            break;
    }
    if (of->fd < 0) {
        snprintf(err, err_len, "cannot create a file beside '%s': %s", path, strerror(errno));
        free(of->tmp_path);
        of->tmp_path = NULL;   /* nothing was created */
        cb_outfile_close(of);
        return -1;
    }
    /* A file replaced keeps its permissions. */
    struct stat st;
    if (stat(path, &st) == 0)
        (void)fchmod(of->fd, st.st_mode & 07777);
    /* Locked before it takes the name, so the target is never unlocked. */
    (void)flock(of->fd, LOCK_EX | LOCK_NB);
    return 0;
}

/* Give the unnamed file a temporary name, exclusively. */
static int name_unnamed(cb_outfile *of)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", of->fd);
    for (int attempt = 0; attempt < CB_OUTFILE_TRIES; attempt++) {
        char *name = temp_name(of, attempt);
        if (name == NULL)
            return -1;
        int rc = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
        if (rc != 0 && errno == ENOENT)   /* no /proc: the privileged form */
            rc = linkat(of->fd, "", AT_FDCWD, name, AT_EMPTY_PATH);
        if (rc == 0) {
            of->tmp_path = name;
            return 0;
        }
        free(name);
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

int cb_outfile_commit(cb_outfile *of, char *err, size_t err_len)
{
    if (of->committed)
        return 0;
    if (of->tmp_path == NULL && name_unnamed(of) != 0) {
        snprintf(err, err_len, "cannot give the new '%s' a name: %s", of->path, strerror(errno));
        return -1;
    }
    if (rename(of->tmp_path, of->path) != 0) {
        snprintf(err, err_len, "cannot rename '%s' to '%s': %s", of->tmp_path, of->path,
                 strerror(errno));
        return -1;
    }
    of->committed = 1;
    free(of->tmp_path);
    of->tmp_path = NULL;
    /* The target is now this file, locked: the one it replaced is not. */
    if (of->old_fd >= 0)
        close(of->old_fd);
    of->old_fd = -1;
    return 0;
}

void cb_outfile_close(cb_outfile *of)
{
    if (of->fd >= 0)
        close(of->fd);
    of->fd = -1;
    if (of->tmp_path != NULL && !of->committed)
        unlink(of->tmp_path);
    /* The locks last until the new file is whole and named (or removed);
     * a struct never opened (path NULL, maybe zeroed) holds none. */
    if (of->path != NULL && of->old_fd >= 0)
        close(of->old_fd);
    if (of->path != NULL && of->claim_fd >= 0)
        close(of->claim_fd);
    of->old_fd = of->claim_fd = -1;
    free(of->tmp_path);
    free(of->path);
    of->tmp_path = of->path = NULL;
}

int cb_outfile_write_whole(cb_outfile *of, const void *buf, size_t len)
{
    off_t before = lseek(of->fd, 0, SEEK_CUR);
    const char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(of->fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : ENOSPC;
            /* Cut a partial record off, so the file keeps whole ones. */
            if (before >= 0 && ftruncate(of->fd, before) == 0)
                (void)lseek(of->fd, before, SEEK_SET);
            errno = saved;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}
