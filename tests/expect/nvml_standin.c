/*
 * A stand-in for NVML (libnvidia-ml.so.1) for --expect auto's tests: the
 * calls src/expect/facts.c makes, answering from a text file named by
 * CB_STANDIN_NVML, one GPU a line:
 *
 *   BUS_ID NAME ARCH LINKS LINKS_UP VERSION REMOTE GEN GEN_NOW WIDTH WIDTH_MAX
 *
 * NAME with '_' for blanks; REMOTE switch or gpu (what the links up reach).
 * Built as a shared library by make check; a test puts its folder first in
 * LD_LIBRARY_PATH. Without the variable, nvmlInit fails as it does on a
 * machine without a driver (NVML_ERROR_DRIVER_NOT_LOADED).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_GPUS 64

typedef struct gpu {
    char bus[32];
    char name[96];
    unsigned arch, links, up, version, remote, gen, gen_now, width, width_max;
} gpu;

/* Filled by nvmlInit_v2, as the library's own state is. */
static gpu gpus[MAX_GPUS];
static int ngpus = -1;

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int rc);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
int nvmlDeviceGetName(void *dev, char *name, unsigned len);
int nvmlDeviceGetArchitecture(void *dev, unsigned *arch);
int nvmlDeviceGetNvLinkState(void *dev, unsigned link, unsigned *active);
int nvmlDeviceGetNvLinkVersion(void *dev, unsigned link, unsigned *version);
int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, unsigned *type);
int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *v);
int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned *v);
int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned *v);
int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *v);

enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6, DRIVER_NOT_LOADED = 9,
       UNINITIALIZED = 1 };

int nvmlInit_v2(void)
{
    const char *path = getenv("CB_STANDIN_NVML");
    if (path == NULL)
        return DRIVER_NOT_LOADED;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return DRIVER_NOT_LOADED;
    char line[512], remote[16];
    ngpus = 0;
    while (ngpus < MAX_GPUS && fgets(line, sizeof line, f) != NULL) {
        gpu *g = &gpus[ngpus];
        if (line[0] == '#' ||
            sscanf(line, "%31s %95s %u %u %u %u %15s %u %u %u %u", g->bus, g->name, &g->arch,
                   &g->links, &g->up, &g->version, remote, &g->gen, &g->gen_now, &g->width,
                   &g->width_max) != 11)
            continue;
        for (char *c = g->name; *c != '\0'; c++)
            if (*c == '_')
                *c = ' ';
        g->remote = strcmp(remote, "switch") == 0 ? 2 : 0;
        ngpus++;
    }
    fclose(f);
    return OK;
}

int nvmlShutdown(void)
{
    ngpus = -1;
    return OK;
}

const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case OK: return "Success";
    case UNINITIALIZED: return "Uninitialized";
    case INVALID_ARGUMENT: return "Invalid Argument";
    case NOT_SUPPORTED: return "Not Supported";
    case NOT_FOUND: return "Not Found";
    case DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

/* Bus ids compare without the domain's leading zeros, in either case. */
static const char *past_domain_zeros(const char *s)
{
    while (*s == '0' && s[1] != ':')
        s++;
    return s;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    if (ngpus < 0)
        return UNINITIALIZED;
    for (int i = 0; i < ngpus; i++)
        if (strcasecmp(past_domain_zeros(gpus[i].bus), past_domain_zeros(bus)) == 0) {
            *dev = &gpus[i];
            return OK;
        }
    return NOT_FOUND;
}

int nvmlDeviceGetName(void *dev, char *name, unsigned len)
{
    snprintf(name, len, "%s", ((gpu *)dev)->name);
    return OK;
}

int nvmlDeviceGetArchitecture(void *dev, unsigned *arch)
{
    *arch = ((gpu *)dev)->arch;
    return OK;
}

/* Links past the GPU's count do not exist; the first LINKS_UP are up. */
int nvmlDeviceGetNvLinkState(void *dev, unsigned link, unsigned *active)
{
    gpu *g = dev;
    if (link >= g->links)
        return g->links == 0 ? NOT_SUPPORTED : INVALID_ARGUMENT;
    *active = link < g->up;
    return OK;
}

int nvmlDeviceGetNvLinkVersion(void *dev, unsigned link, unsigned *version)
{
    gpu *g = dev;
    if (link >= g->links)
        return INVALID_ARGUMENT;
    *version = g->version;
    return OK;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, unsigned *type)
{
    gpu *g = dev;
    if (link >= g->links)
        return INVALID_ARGUMENT;
    *type = g->remote;
    return OK;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *v)
{
    *v = ((gpu *)dev)->gen;
    return OK;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned *v)
{
    *v = ((gpu *)dev)->gen_now;
    return OK;
}

int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned *v)
{
    *v = ((gpu *)dev)->width;
    return OK;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *v)
{
    *v = ((gpu *)dev)->width_max;
    return OK;
}
