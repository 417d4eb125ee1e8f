#include "sysinfo.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

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

void cb_sysinfo_mpi_library(char *buf, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(version, &n) != MPI_SUCCESS) {
        snprintf(buf, len, "MPI (unknown version)");
        return;
    }
    version[strcspn(version, ",\n")] = '\0';
    snprintf(buf, len, "%s", version);
    trim(buf);
}

int cb_sysinfo_local_ranks(MPI_Comm comm)
{
    MPI_Comm local;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        return 1;
    MPI_Comm_size(local, &n);
    MPI_Comm_free(&local);
    return n;
}
