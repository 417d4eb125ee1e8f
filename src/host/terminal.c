/* Whether a descriptor reaches the controlling terminal (terminal.h),
 * read from /proc: a rank's standard error under mpirun is a pipe, yet
 * mpirun writes what comes through it to its own, which may be the
 * terminal the person launched it from. */
#include "host/terminal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

/* Unix 98 pseudo-terminals (devices.txt: majors 136 to 143). */
#define PTY_MAJOR_FIRST 136
#define PTY_MAJOR_LAST 143

/* From /proc/PID/stat: the parent and the controlling terminal's device
 * (0: none); 0, or -1 when it cannot be read. */
static int proc_stat(long pid, long *ppid, unsigned long *tty)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields follow the last ')'. */
    char *end = strrchr(buf, ')');
    char state;
    long pgrp, session, tty_nr;
    if (end == NULL || sscanf(end + 1, " %c %ld %ld %ld %ld", &state, ppid, &pgrp, &session,
                              &tty_nr) != 5)
        return -1;
    *tty = (unsigned long)tty_nr;
    return 0;
}

/* tty_nr packs the device as the kernel does (minor bits 0-7 and 20-31,
 * major 8-19). */
static int is_tty(dev_t dev, unsigned long tty)
{
    unsigned long tmajor = (tty >> 8) & 0xfff, tminor = (tty & 0xff) | ((tty >> 12) & 0xfff00);
    return major(dev) == tmajor && minor(dev) == tminor;
}

/* Whether process pid holds an open descriptor on the file of st. */
static int holds(long pid, const struct stat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return 0;
    int found = 0;
    for (struct dirent *d; !found && (d = readdir(dir)) != NULL;) {
        char fdpath[96];
        struct stat other;
        if (d->d_name[0] == '.' || strlen(d->d_name) > 20)
            continue;   /* a descriptor's name is a number */
        snprintf(fdpath, sizeof fdpath, "%s/%.20s", path, d->d_name);
        found = stat(fdpath, &other) == 0 && other.st_dev == st->st_dev &&
                other.st_ino == st->st_ino;
    }
    closedir(dir);
    return found;
}

int cb_reaches_terminal(int fd)
{
    long pid = (long)getpid(), ppid = 0;
    unsigned long tty = 0;
    if (proc_stat(pid, &ppid, &tty) != 0 || tty == 0)
        return 0;
    for (int depth = 0; depth <= CB_TERMINAL_DEPTH; depth++) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
        if (stat(path, &st) != 0)
            return 0;
        if (S_ISCHR(st.st_mode) && is_tty(st.st_rdev, tty))
            return 1;
        /* Go up only to the process that forwards this output: one that
         * reads the pipe, or a pseudo-terminal's (its master is the
         * launcher's). A pipe to a pager or tee ends here. */
        int pty = S_ISCHR(st.st_mode) && major(st.st_rdev) >= PTY_MAJOR_FIRST &&
                  major(st.st_rdev) <= PTY_MAJOR_LAST;
        if (depth == CB_TERMINAL_DEPTH || ppid <= 1 || !(pty || (S_ISFIFO(st.st_mode) &&
                                                                  holds(ppid, &st))))
            return 0;
        unsigned long parent_tty = 0;
        pid = ppid;
        if (proc_stat(pid, &ppid, &parent_tty) != 0 || parent_tty != tty)
            return 0;   /* a parent on another terminal is not the person's */
    }
    return 0;
}
