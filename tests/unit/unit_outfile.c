/* src/safety/outfile.c: which targets are refused, which paths are one file,
 * that a write cut short by a file size limit leaves whole records only, and
 * that a target being written is refused to a second writer. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safety/outfile.h"
#include "unit.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_check(unit_state *u)
{
    char err[512];
    write_text("plain", "x");
    CHECK(u, cb_outfile_check("plain", err, sizeof err) == 0);
    CHECK(u, cb_outfile_check("absent", err, sizeof err) == 0);
    CHECK(u, symlink("plain", "link") == 0);
    CHECK(u, cb_outfile_check("link", err, sizeof err) == -1 && strstr(err, "symbolic link"));
    CHECK(u, strstr(err, "link") != NULL);
    CHECK(u, mkdir("sub", 0755) == 0);
    CHECK(u, cb_outfile_check("sub", err, sizeof err) == -1 && strstr(err, "directory"));
    CHECK(u, cb_outfile_check("/dev/null", err, sizeof err) == -1 && strstr(err, "regular"));
    write_text("ro", "x");
    chmod("ro", 0444);
    CHECK(u, cb_outfile_check("ro", err, sizeof err) == -1 && strstr(err, "not writable"));
    CHECK(u, cb_outfile_check("none/x", err, sizeof err) == -1 && strstr(err, "directory"));
}

static void test_same(unit_state *u)
{
    write_text("a", "x");
    CHECK(u, link("a", "b") == 0);
    CHECK(u, cb_outfile_same("a", "b") == 1);
    CHECK(u, cb_outfile_same("a", "plain") == 0);
    CHECK(u, cb_outfile_same("new", "sub/../new") == 1);
    CHECK(u, cb_outfile_same("new", ".//new") == 1);
    CHECK(u, cb_outfile_same("new", "new2") == 0);
    CHECK(u, cb_outfile_same("a", "new") == 0);
}

/* Commit replaces the target; close without commit leaves it alone and
 * no temporary file. */
static void test_commit(unit_state *u)
{
    char err[512];
    cb_outfile of;
    write_text("target", "old");
    CHECK(u, cb_outfile_open(&of, "target", err, sizeof err) == 0);
    CHECK(u, write(of.fd, "new!", 4) == 4);
    cb_outfile_close(&of);
    CHECK(u, file_size("target") == 3);
    CHECK(u, cb_outfile_open(&of, "target", err, sizeof err) == 0);
    CHECK(u, write(of.fd, "new!", 4) == 4);
    CHECK(u, cb_outfile_commit(&of, err, sizeof err) == 0);
    cb_outfile_close(&of);
    CHECK(u, file_size("target") == 4);
    CHECK(u, system("ls -a . | grep -q tmp") != 0);
}

/* One writer per target: a second open of a target being written is
 * refused naming it (before the first commits: the path's claim; after:
 * also the lock on the file), by any spelling of the path; once the first
 * closes, the target is free again. A file at the target that a third
 * party holds locked (another run, on another machine) is refused too. */
static void test_one_writer(unit_state *u)
{
    char err[512];
    cb_outfile first, second;
    CHECK(u, cb_outfile_open(&first, "shared.json", err, sizeof err) == 0);
    err[0] = '\0';
    CHECK(u, cb_outfile_open(&second, "shared.json", err, sizeof err) == -1);
    CHECK(u, strstr(err, "'shared.json' is being written by another run") != NULL);
    CHECK(u, cb_outfile_open(&second, "./shared.json", err, sizeof err) == -1);
    CHECK(u, cb_outfile_commit(&first, err, sizeof err) == 0);
    CHECK(u, cb_outfile_open(&second, "shared.json", err, sizeof err) == -1);
    cb_outfile_close(&first);
    CHECK(u, cb_outfile_open(&second, "shared.json", err, sizeof err) == 0);
    cb_outfile_close(&second);

    write_text("held.csv", "header\n");
    int held = open("held.csv", O_RDONLY);
    CHECK(u, held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0);
    CHECK(u, cb_outfile_open(&second, "held.csv", err, sizeof err) == -1);
    CHECK(u, strstr(err, "'held.csv' is being written by another run") != NULL);
    close(held);
    CHECK(u, cb_outfile_open(&second, "held.csv", err, sizeof err) == 0);
    cb_outfile_close(&second);
    CHECK(u, system("ls -a . | grep -q tmp") != 0);
}

/* A limit of 1000 bytes: the third 400-byte record does not fit, is cut
 * off, and the file keeps the first two. */
static void test_whole_records(unit_state *u)
{
    char err[512], record[400];
    memset(record, 'r', sizeof record);
    record[sizeof record - 1] = '\n';
    cb_outfile of;
    CHECK(u, cb_outfile_open(&of, "limited", err, sizeof err) == 0);
    CHECK(u, cb_outfile_commit(&of, err, sizeof err) == 0);
    struct rlimit old, small = {1000, 1000};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(u, setrlimit(RLIMIT_FSIZE, &small) == 0);
    CHECK(u, cb_outfile_write_whole(&of, record, sizeof record) == 0);
    CHECK(u, cb_outfile_write_whole(&of, record, sizeof record) == 0);
    CHECK(u, cb_outfile_write_whole(&of, record, sizeof record) == -1);
    CHECK(u, cb_outfile_write_whole(&of, record, sizeof record) == -1);
    setrlimit(RLIMIT_FSIZE, &old);
    cb_outfile_close(&of);
    CHECK(u, file_size("limited") == 800);
}

int main(void)
{
    unit_state u = {0, 0};
    /* Every path is relative to a scratch directory of our own. */
    char dir[] = "/tmp/cb-unit-outfile.XXXXXX";
    if (mkdtemp(dir) == NULL || chdir(dir) != 0) {
        perror(dir);
        return 99;
    }
    test_check(&u);
    test_same(&u);
    test_commit(&u);
    test_whole_records(&u);
    test_one_writer(&u);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd / && chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return unit_done(&u, "unit_outfile");
}
