/*
 * Output files that do no harm: the target is checked before anything is
 * measured (no symlink, directory, device or read-only file is replaced),
 * the content is written to a new file created beside it, and that file
 * takes the target's name only when the caller commits it. Where the system
 * allows, the new file has no name at all until then (O_TMPFILE), so a
 * process killed part way leaves nothing behind.
 */
#ifndef CB_OUTFILE_H
#define CB_OUTFILE_H

#include <stddef.h>

typedef struct cb_outfile {
    char *path;        /* the target, as given */
    char *tmp_path;    /* the named temporary file, or NULL while it has no name */
    int fd;            /* -1 once closed */
    int committed;     /* the content is at path */
    int old_fd;        /* the file at path when opened, locked until the commit; -1 */
    int claim_fd;      /* this machine's claim on the path (a socket); -1 */
} cb_outfile;

/*
 * Whether path may be replaced: it does not exist, or is a regular file (not
 * a symlink) that the user may write, and its directory is writable.
 * Returns 0, or -1 with one line in err naming path and the reason.
 */
int cb_outfile_check(const char *path, char *err, size_t err_len);

/* 1 when a and b name the same file: the same device and inode where both
 * exist, else the same normalised path; 0 otherwise. */
int cb_outfile_same(const char *a, const char *b);

/* Check path, then create the new file beside it. Returns 0, or -1 with one
 * line in err naming path.
 *
 * One writer per target at a time: the file at path (where there is one)
 * and the new file are locked (flock) while open, and the path is claimed
 * on this machine (an abstract socket named after the resolved path), so
 * a second run writing the same target while this one runs is refused
 * ("... is being written by another run"), on this machine whether or not
 * the target exists yet, and from another machine where the file exists
 * and the file system carries flock. The locks go with the process. */
int cb_outfile_open(cb_outfile *of, const char *path, char *err, size_t err_len);

/*
 * Give the new file the target's name (atomically replacing what was there).
 * The descriptor stays open: writes after a commit go to the file at path.
 * Returns 0, or -1 with err set naming path.
 */
int cb_outfile_commit(cb_outfile *of, char *err, size_t err_len);

/* Close the descriptor; remove the new file unless committed. Frees all. */
void cb_outfile_close(cb_outfile *of);

/*
 * Write all of len bytes at the end of the file, or none: after a short or
 * failed write (disk full) the file is cut back to its length before, so it
 * keeps whole records only. Returns 0, or -1 with errno set.
 */
int cb_outfile_write_whole(cb_outfile *of, const void *buf, size_t len);

#endif
