#include "host/sysinfo.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

size_t cb_sysinfo_memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (size_t)kib * 1024u;
}

void cb_sysinfo_cpu_model(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[512];
        while (fgets(line, sizeof line, f) != NULL) {
            char *colon = strchr(line, ':');
            if (colon != NULL && strncmp(line, "model name", 10) == 0) {
                const char *value = colon + 1;
                while (*value == ' ')
                    value++;
                snprintf(buf, len, "%s", value);
                trim(buf);
                break;
            }
        }
        fclose(f);
    }
    if (buf[0] == '\0') {
        struct utsname u;
        snprintf(buf, len, "%s CPU", uname(&u) == 0 ? u.machine : "unknown");
    }
}

int cb_sysinfo_local_ranks(cb_ctl *comm)
{
    cb_ctl *local = NULL;
    if (cb_ctl_split_node(comm, 0, &local) != 0 || local == NULL)
        return 1;
    int n = local->size;
    cb_ctl_free(&local);
    return n;
}

int cb_sysinfo_same_text_comm(cb_ctl *comm, int key, const char *text, cb_ctl **out)
{
    cb_ctl *machine = NULL;
    *out = NULL;
    if (cb_ctl_split_node(comm, key, &machine) != 0 || machine == NULL)
        return -1;
    /* The colour: the lowest rank on this machine with the same text, found
     * by comparing the texts in full (length -1: NULL). */
    int my_len = text != NULL ? (int)strlen(text) : -1;
    int nlocal = machine->size, local = machine->rank;
    int *lens = malloc((size_t)nlocal * sizeof *lens);
    int *offsets = malloc((size_t)nlocal * sizeof *offsets);
    int *counts = malloc((size_t)nlocal * sizeof *counts);
    int all_ok = lens != NULL && offsets != NULL && counts != NULL;
    cb_ctl_allreduce(machine, CB_CTL_IN_PLACE, &all_ok, 1, CB_CTL_INT, CB_CTL_LAND);
    int color = 0;
    if (all_ok) {
        cb_ctl_allgather(machine, &my_len, sizeof(int), lens);
        int total = 0;
        for (int i = 0; i < nlocal; i++) {
            offsets[i] = total;
            counts[i] = lens[i] > 0 ? lens[i] : 0;
            total += counts[i];
        }
        char *texts = malloc((size_t)total + 1);
        all_ok = texts != NULL;
        cb_ctl_allreduce(machine, CB_CTL_IN_PLACE, &all_ok, 1, CB_CTL_INT, CB_CTL_LAND);
        if (all_ok) {
            /* Each rank's text in turn: they are short (bus id lists, labels). */
            for (int i = 0; i < nlocal; i++) {
                if (i == local)
                    memcpy(texts + offsets[i], text != NULL ? text : "", (size_t)counts[i]);
                cb_ctl_bcast(machine, texts + offsets[i], (size_t)counts[i], i);
            }
            color = local;
            for (int i = 0; i < local; i++)
                if (lens[i] == my_len &&
                    memcmp(texts + offsets[i], texts + offsets[local], (size_t)counts[i]) == 0) {
                    color = i;
                    break;
                }
        }
        free(texts);
    }
    free(lens);
    free(offsets);
    free(counts);
    *out = NULL;
    if (all_ok)
        all_ok = cb_ctl_split(machine, color, key, out) == 0;
    cb_ctl_free(&machine);
    return all_ok ? 0 : -1;
}

int cb_sysinfo_host_comm(cb_ctl *comm, int key, cb_ctl **host)
{
    return cb_sysinfo_same_text_comm(comm, key, getenv(CB_HOSTID_ENV), host);
}

int cb_sysinfo_flagged_ranks(cb_ctl *comm, int flagged, char *buf, size_t len)
{
    int size = comm->size, count = 0;
    flagged = flagged != 0;
    cb_ctl_allreduce(comm, &flagged, &count, 1, CB_CTL_INT, CB_CTL_SUM);
    int *flags = malloc((size_t)size * sizeof *flags);
    char *names = malloc((size_t)size * CB_CTL_HOSTLEN);
    int ok = flags != NULL && names != NULL;
    cb_ctl_allreduce(comm, CB_CTL_IN_PLACE, &ok, 1, CB_CTL_INT, CB_CTL_LAND);
    buf[0] = '\0';
    if (ok) {
        char mine[CB_CTL_HOSTLEN] = "";
        cb_sysinfo_host_label(mine, sizeof mine);
        cb_ctl_allgather(comm, &flagged, sizeof(int), flags);
        cb_ctl_allgather(comm, mine, (size_t)CB_CTL_HOSTLEN, names);
        size_t used = 0;
        for (int r = 0; r < size; r++) {
            if (!flags[r])
                continue;
            const char *name = names + (size_t)r * CB_CTL_HOSTLEN;
            int n_written = snprintf(buf + used, len - used, "%srank %d (%.*s)",
                                     used > 0 ? ", " : "", r, CB_CTL_HOSTLEN - 1, name);
            if (n_written < 0 || (size_t)n_written >= len - used) {
                if (len > 4)
                    memcpy(buf + len - 4, "...", 4);
                break;
            }
            used += (size_t)n_written;
        }
    }
    free(flags);
    free(names);
    return ok ? count : -1;
}

void cb_sysinfo_host_label(char *buf, size_t len)
{
    const char *id = getenv(CB_HOSTID_ENV);
    char name[CB_CTL_HOSTLEN] = "";
    if (id != NULL && id[0] != '\0')
        snprintf(name, sizeof name, "%s", id);
    else if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown host");
    snprintf(buf, len, "%s", name);
}

const char *cb_sysfs_root(void)
{
    const char *root = getenv(CB_SYSFS_ENV);
    return root != NULL && root[0] != '\0' ? root : "/sys";
}

/* The hexadecimal number in the first line of dir/name/file, or -1. */
static long read_hex(const char *dir, const char *name, const char *file)
{
    char path[PATH_MAX], line[64];
    snprintf(path, sizeof path, "%s/%s/%s", dir, name, file);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    char *end = NULL;
    long v = ok ? strtol(line, &end, 16) : -1;
    return ok && end != line && v >= 0 ? v : -1;
}

int cb_sysinfo_nvidia_gpus(char *buf, size_t len)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/bus/pci/devices", cb_sysfs_root());
    if (len > 0)
        buf[0] = '\0';
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int found = 0;
    char first[64] = "", lowest[32] = "";
    for (struct dirent *ent; (ent = readdir(d)) != NULL;) {
        if (ent->d_name[0] == '.' || read_hex(dir, ent->d_name, "vendor") != 0x10de ||
            (read_hex(dir, ent->d_name, "class") >> 16) != 0x03)
            continue;
        /* readdir's order is the file system's: name the lowest bus id. */
        if (found++ == 0 || strcmp(ent->d_name, lowest) < 0) {
            snprintf(lowest, sizeof lowest, "%.20s", ent->d_name);
            snprintf(first, sizeof first, "%.20s (10de:%04lx)", ent->d_name,
                     read_hex(dir, ent->d_name, "device") & 0xffff);
        }
    }
    closedir(d);
    if (len > 0)
        snprintf(buf, len, "%s", first);
    return found;
}
