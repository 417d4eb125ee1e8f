/*
 * One rank's links, read for --expect auto: its GPU's NVLinks and PCIe link
 * through NVML, loaded at run time (no build dependency: the program runs
 * where the library is absent, and says so), and the node's NICs and their
 * PCI places from sysfs (NCCL_COLLBENCH_SYSFS=DIR reads DIR instead of /sys).
 * Nothing here guesses: a figure that cannot be read is 0 with the reason.
 */
#define _GNU_SOURCE
#include "expect/expect.h"
#include "host/sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVML's ABI as its documentation gives it: an int status (0 success), an
 * opaque device handle, unsigned int outputs. */
typedef int nvml_ret;
typedef void *nvml_device;
#define NVML_MAX_LINKS 18
#define NVML_REMOTE_SWITCH 2

typedef struct nvml_api {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*by_bus_id)(const char *, nvml_device *);
    nvml_ret (*name)(nvml_device, char *, unsigned);
    nvml_ret (*architecture)(nvml_device, unsigned *);
    nvml_ret (*link_state)(nvml_device, unsigned, unsigned *);
    nvml_ret (*link_version)(nvml_device, unsigned, unsigned *);
    nvml_ret (*link_remote)(nvml_device, unsigned, unsigned *);
    nvml_ret (*gen_max)(nvml_device, unsigned *);
    nvml_ret (*gen_now)(nvml_device, unsigned *);
    nvml_ret (*width_now)(nvml_device, unsigned *);
    nvml_ret (*width_max)(nvml_device, unsigned *);
} nvml_api;

/* dlsym into a function pointer without an object-to-function cast. */
static int bind_symbol(void *lib, const char *symbol, void *slot, char *why, size_t len)
{
    void *sym = dlsym(lib, symbol);
    if (sym == NULL) {
        snprintf(why, len, "NVML has no %s", symbol);
        return -1;
    }
    memcpy(slot, &sym, sizeof sym);
    return 0;
}

static int nvml_open(nvml_api *api, char *why, size_t len)
{
    memset(api, 0, sizeof *api);
    api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (api->lib == NULL) {
        snprintf(why, len, "NVML (libnvidia-ml.so.1) cannot be loaded: %s", dlerror());
        return -1;
    }
    struct {
        const char *symbol;
        void *slot;
    } syms[] = {
        {"nvmlInit_v2", &api->init},
        {"nvmlShutdown", &api->shutdown},
        {"nvmlErrorString", &api->error_string},
        {"nvmlDeviceGetHandleByPciBusId_v2", &api->by_bus_id},
        {"nvmlDeviceGetName", &api->name},
        {"nvmlDeviceGetArchitecture", &api->architecture},
        {"nvmlDeviceGetNvLinkState", &api->link_state},
        {"nvmlDeviceGetNvLinkVersion", &api->link_version},
        {"nvmlDeviceGetNvLinkRemoteDeviceType", &api->link_remote},
        {"nvmlDeviceGetMaxPcieLinkGeneration", &api->gen_max},
        {"nvmlDeviceGetCurrPcieLinkGeneration", &api->gen_now},
        {"nvmlDeviceGetCurrPcieLinkWidth", &api->width_now},
        {"nvmlDeviceGetMaxPcieLinkWidth", &api->width_max},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (bind_symbol(api->lib, syms[i].symbol, syms[i].slot, why, len) != 0) {
            dlclose(api->lib);
            api->lib = NULL;
            return -1;
        }
    nvml_ret rc = api->init();
    if (rc != 0) {
        snprintf(why, len, "nvmlInit failed: %s", api->error_string(rc));
        dlclose(api->lib);
        api->lib = NULL;
        return -1;
    }
    return 0;
}

static void nvml_close(nvml_api *api)
{
    if (api->lib == NULL)
        return;
    api->shutdown();
    dlclose(api->lib);
}

static void read_gpu(nvml_api *api, cb_expect_gpu *g)
{
    nvml_device dev = NULL;
    nvml_ret rc = api->by_bus_id(g->bus_id, &dev);
    if (rc != 0) {
        snprintf(g->why, sizeof g->why, "NVML does not find GPU %s: %s", g->bus_id,
                 api->error_string(rc));
        return;
    }
    if (api->name(dev, g->name, sizeof g->name) != 0)
        snprintf(g->name, sizeof g->name, "?");
    unsigned arch = 0;
    g->arch = api->architecture(dev, &arch) == 0 ? (int)arch : -1;
    g->nvlink_to_switch = -1;
    int to_switch = 1;
    for (unsigned link = 0; link < NVML_MAX_LINKS; link++) {
        unsigned active = 0, version = 0, remote = 0;
        if (api->link_state(dev, link, &active) != 0)
            continue;   /* no such link */
        g->nvlinks++;
        if (!active)
            continue;
        g->nvlinks_up++;
        if (g->nvlink_code == 0 && api->link_version(dev, link, &version) == 0)
            g->nvlink_code = (int)version;
        if (api->link_remote(dev, link, &remote) != 0)
            to_switch = -1;
        else if (to_switch == 1 && remote != NVML_REMOTE_SWITCH)
            to_switch = 0;
    }
    if (g->nvlinks_up > 0)
        g->nvlink_to_switch = to_switch;
    unsigned v = 0;
    g->pcie_gen = api->gen_max(dev, &v) == 0 ? (int)v : 0;
    g->pcie_gen_now = api->gen_now(dev, &v) == 0 ? (int)v : 0;
    g->pcie_width = api->width_now(dev, &v) == 0 ? (int)v : 0;
    g->pcie_width_max = api->width_max(dev, &v) == 0 ? (int)v : 0;
}

/* The first line of root/rel, trimmed; -1 when it cannot be read. */
static int read_line(const char *root, const char *rel, char *buf, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

/* The PCI function a sysfs link leads to (its real path), or -1. */
static int pci_path(const char *root, const char *rel, char *out, size_t len)
{
    char path[PATH_MAX], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (realpath(path, real) == NULL)
        return -1;
    snprintf(out, len, "%s", real);
    return 0;
}

static int is_pci_function(const char *s, size_t n)
{
    /* dddd:bb:dd.f */
    if (n != 12)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int sep = i == 4 || i == 7 ? ':' : i == 10 ? '.' : 0;
        if (sep ? s[i] != sep : !isxdigit((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

/* Near: the two paths share a PCI function above both (a bridge or
 * switch port), not only the host bridge: NCCL's PIX and PXB. */
static int near(const char *a, const char *b)
{
    const char *shared = NULL;
    size_t shared_len = 0;
    size_t i = 0;
    while (a[i] != '\0' && a[i] == b[i]) {
        if (a[i] == '/' && i > 0) {
            size_t start = i;
            while (start > 0 && a[start - 1] != '/')
                start--;
            shared = a + start;
            shared_len = i - start;
        }
        i++;
    }
    /* The component both go on below must have ended at the same '/'. */
    return shared != NULL && is_pci_function(shared, shared_len);
}

static void add_nic(cb_expect_rank *r, const char *name, const char *root, const char *dev_rel,
                    int up, double gbit, const char *gpu_path)
{
    if (r->nnics >= CB_EXPECT_MAX_NICS)
        return;
    cb_expect_nic *n = &r->nics[r->nnics++];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->up = up;
    n->gbit = up ? gbit : 0;
    char path[PATH_MAX];
    if (pci_path(root, dev_rel, path, sizeof path) == 0) {
        const char *base = strrchr(path, '/');
        snprintf(n->bus_id, sizeof n->bus_id, "%.15s", base != NULL ? base + 1 : path);
        n->near_gpu = gpu_path != NULL && near(path, gpu_path);
    }
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int visible(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* InfiniBand (and RoCE) ports: state "4: ACTIVE", rate "400 Gb/sec (4X NDR)". */
static void read_infiniband(cb_expect_rank *r, const char *root, const char *gpu_path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/class/infiniband", root);
    struct dirent **devs = NULL;
    int ndevs = scandir(dir, &devs, visible, by_name);
    for (int d = 0; d < ndevs; d++) {
        char ports_dir[PATH_MAX + 300];
        snprintf(ports_dir, sizeof ports_dir, "%s/%s/ports", dir, devs[d]->d_name);
        struct dirent **ports = NULL;
        int nports = scandir(ports_dir, &ports, visible, by_name);
        for (int p = 0; p < nports; p++) {
            char rel[PATH_MAX / 2], line[128], name[40];
            snprintf(name, sizeof name, "%.24s port %.8s", devs[d]->d_name, ports[p]->d_name);
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/ports/%.16s/state",
                     devs[d]->d_name, ports[p]->d_name);
            int up = read_line(root, rel, line, sizeof line) == 0 && strstr(line, "ACTIVE");
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/ports/%.16s/rate",
                     devs[d]->d_name, ports[p]->d_name);
            double gbit = 0;
            if (read_line(root, rel, line, sizeof line) != 0 || sscanf(line, "%lf", &gbit) != 1 ||
                !(gbit > 0))
                gbit = 0;
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/device", devs[d]->d_name);
            add_nic(r, name, root, rel, up, gbit, gpu_path);
            free(ports[p]);
        }
        free(ports);
        free(devs[d]);
    }
    free(devs);
}

/* Ethernet interfaces with a device behind them (not lo, bridges, tunnels):
 * operstate "up", speed in Mb/s (-1 or unreadable when down). */
static void read_ethernet(cb_expect_rank *r, const char *root, const char *gpu_path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/class/net", root);
    struct dirent **ifs = NULL;
    int nifs = scandir(dir, &ifs, visible, by_name);
    for (int i = 0; i < nifs; i++) {
        char rel[PATH_MAX / 2], line[64], probe[PATH_MAX], real[PATH_MAX];
        snprintf(rel, sizeof rel, "class/net/%.64s/device", ifs[i]->d_name);
        snprintf(probe, sizeof probe, "%s/%s", root, rel);
        if (realpath(probe, real) == NULL) {
            free(ifs[i]);
            continue;   /* virtual: no device */
        }
        snprintf(probe, sizeof probe, "class/net/%.64s/operstate", ifs[i]->d_name);
        int up = read_line(root, probe, line, sizeof line) == 0 && strcmp(line, "up") == 0;
        snprintf(probe, sizeof probe, "class/net/%.64s/speed", ifs[i]->d_name);
        double mbit = 0;
        if (read_line(root, probe, line, sizeof line) != 0 || sscanf(line, "%lf", &mbit) != 1 ||
            !(mbit > 0))
            mbit = 0;
        add_nic(r, ifs[i]->d_name, root, rel, up, mbit / 1000, gpu_path);
        free(ifs[i]);
    }
    free(ifs);
}

void cb_expect_read_rank(const char *bus_id, const char *host, int group, cb_expect_rank *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->host, sizeof out->host, "%s", host);
    out->group = group;
    out->gpu.arch = -1;
    out->gpu.nvlink_to_switch = -1;
    const char *root = cb_sysfs_root();

    char gpu_path[PATH_MAX];
    int have_gpu_path = 0;
    if (bus_id != NULL) {
        cb_expect_gpu *g = &out->gpu;
        g->present = 1;
        snprintf(g->bus_id, sizeof g->bus_id, "%s", bus_id);
        for (char *c = g->bus_id; *c != '\0'; c++)
            *c = (char)tolower((unsigned char)*c);
        nvml_api api;
        if (nvml_open(&api, g->why, sizeof g->why) == 0)
            read_gpu(&api, g);
        nvml_close(&api);
        char rel[96];
        snprintf(rel, sizeof rel, "bus/pci/devices/%s", g->bus_id);
        have_gpu_path = pci_path(root, rel, gpu_path, sizeof gpu_path) == 0;
    }
    read_infiniband(out, root, have_gpu_path ? gpu_path : NULL);
    if (out->nnics == 0)
        read_ethernet(out, root, have_gpu_path ? gpu_path : NULL);
    if (out->nnics == 0)
        snprintf(out->nic_why, sizeof out->nic_why,
                 "no NIC under %s/class/infiniband or %s/class/net", root, root);
}
