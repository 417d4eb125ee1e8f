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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        if (!active) {
            g->nvlinks_down |= 1u << link;
            continue;
        }
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
    /* Outside PCIe's x1 to x32 is no width: unreadable (0). */
    g->pcie_width = api->width_now(dev, &v) == 0 && v >= 1 && v <= CB_EXPECT_MAX_LANES ? (int)v : 0;
    g->pcie_width_max =
        api->width_max(dev, &v) == 0 && v >= 1 && v <= CB_EXPECT_MAX_LANES ? (int)v : 0;
}

/* The first line of root/rel, trimmed; -1 when it cannot be read, -2
 * when it is longer than buf (a line cut short is not the line), -3 when
 * it is no regular file: a FIFO would block open and read forever, and
 * the run would hang at start-up (every sysfs attribute is a regular file). */
static int read_line(const char *root, const char *rel, char *buf, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -3;
    }
    FILE *f = fdopen(fd, "r");
    if (f == NULL) {
        close(fd);
        return -1;
    }
    int ok = fgets(buf, (int)len, f) != NULL;
    int cut = ok && strchr(buf, '\n') == NULL && fgetc(f) != EOF;
    fclose(f);
    if (!ok || cut)
        return cut ? -2 : -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

/* A number that starts text and lies in [lo, hi], else -1 (NaN, inf,
 * 1e308 and digits without end are not rates). *rest: what follows. */
static double in_range(const char *text, double lo, double hi, const char **rest)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !(v >= lo && v <= hi))
        return -1;
    if (rest != NULL)
        *rest = end;
    return v;
}

/* The link of the PCI function at root/dev_rel (sysfs current_link_width,
 * max_link_width, current_link_speed, max_link_speed: "16.0 GT/s PCIe"). */
static void read_pcie_link(const char *root, const char *dev_rel, cb_expect_nic *n)
{
    static const char *const files[] = {"current_link_width", "max_link_width",
                                        "current_link_speed", "max_link_speed"};
    double v[4];
    for (int i = 0; i < 4; i++) {
        char rel[PATH_MAX / 2], line[64];
        snprintf(rel, sizeof rel, "%.200s/%s", dev_rel, files[i]);
        v[i] = read_line(root, rel, line, sizeof line) != 0 ? -1
               : i < 2 ? in_range(line, 1, CB_EXPECT_MAX_LANES, NULL)
                       : in_range(line, 2.5, CB_EXPECT_MAX_GTS, NULL);
    }
    n->pcie_width = v[0] > 0 ? (int)v[0] : 0;
    n->pcie_width_max = v[1] > 0 ? (int)v[1] : 0;
    n->pcie_gts = v[2] > 0 ? v[2] : 0;
    n->pcie_gts_max = v[3] > 0 ? v[3] : 0;
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

/* A port: its state as read, and its rate in Gb/s or the text that is
 * not one (why). */
typedef struct port_facts {
    int up;
    const char *state;
    double gbit;
    const char *why;
} port_facts;

static void add_nic(cb_expect_rank *r, const char *name, const char *root, const char *dev_rel,
                    const port_facts *port, const char *gpu_path)
{
    r->nics_found++;
    if (r->nnics >= CB_EXPECT_MAX_NICS)
        return;
    cb_expect_nic *n = &r->nics[r->nnics++];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    snprintf(n->state, sizeof n->state, "%s", port->state);
    n->up = port->up;
    n->gbit = port->up && port->gbit > 0 ? port->gbit : 0;
    if (port->up && !(port->gbit > 0))
        snprintf(n->rate_why, sizeof n->rate_why, "%s", port->why);
    read_pcie_link(root, dev_rel, n);
    char path[PATH_MAX];
    if (pci_path(root, dev_rel, path, sizeof path) == 0) {
        const char *base = strrchr(path, '/');
        snprintf(n->bus_id, sizeof n->bus_id, "%.15s", base != NULL ? base + 1 : path);
        n->near_gpu = gpu_path != NULL && near(path, gpu_path);
    }
}

/* Whether NCCL would consider the device (and port, -1 for none) under
 * its list variable (NCCL_IB_HCA, NCCL_SOCKET_IFNAME), read as NCCL reads
 * it (src/misc/utils.cc, parseStringList and matchIfList; v2.28.9-1):
 * "^" excludes the list, "=" makes names exact, else each is a prefix;
 * "name:port" names one port. Unset or empty: every device. */
static int nccl_selects(const char *variable, const char *device, int port)
{
    const char *list = getenv(variable);
    if (list == NULL || list[0] == '\0')
        return 1;
    int exclude = list[0] == '^';
    list += exclude;
    int exact = list[0] == '=';
    list += exact;
    int listed = 0;
    while (*list != '\0' && !listed) {
        size_t len = strcspn(list, ",:");
        int want_port = list[len] == ':' ? atoi(list + len + 1) : -1;
        if (len > 0 && (exact ? strlen(device) == len : strlen(device) >= len) &&
            strncmp(device, list, len) == 0 && (want_port < 0 || port < 0 || want_port == port))
            listed = 1;
        list += strcspn(list, ",");
        list += *list == ',';
    }
    return listed != exclude;
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
            if (!nccl_selects("NCCL_IB_HCA", devs[d]->d_name, atoi(ports[p]->d_name))) {
                free(ports[p]);
                continue;
            }
            char rel[PATH_MAX / 2], state[64] = "", line[128], name[40], why[48] = "";
            snprintf(name, sizeof name, "%.24s port %.8s", devs[d]->d_name, ports[p]->d_name);
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/ports/%.16s/state",
                     devs[d]->d_name, ports[p]->d_name);
            /* "4: ACTIVE": the number is the state (2: INIT, 5: ACTIVE_DEFER
             * are not active). */
            if (read_line(root, rel, state, sizeof state) != 0)
                state[0] = '\0';
            const char *after = NULL;
            int up = in_range(state, 4, 4, &after) == 4 && after[0] == ':';
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/ports/%.16s/rate",
                     devs[d]->d_name, ports[p]->d_name);
            double gbit = -1;
            int got = read_line(root, rel, line, sizeof line);
            if (got == -3)
                snprintf(why, sizeof why, "rate file not a regular file");
            else if (got != 0)
                snprintf(why, sizeof why, got == -2 ? "rate longer than %zu characters"
                                                    : "no rate file", sizeof line - 2);
            else if ((gbit = in_range(line, CB_EXPECT_MIN_GBIT, CB_EXPECT_MAX_GBIT, &after)) < 0 ||
                     strncmp(after, " Gb/sec", 7) != 0)
                snprintf(why, sizeof why, "rate '%.24s'", line);
            port_facts port = {up, state, why[0] ? -1 : gbit, why};
            snprintf(rel, sizeof rel, "class/infiniband/%.64s/device", devs[d]->d_name);
            add_nic(r, name, root, rel, &port, gpu_path);
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
        if (realpath(probe, real) == NULL ||
            !nccl_selects("NCCL_SOCKET_IFNAME", ifs[i]->d_name, -1)) {
            free(ifs[i]);
            continue;   /* virtual (no device), or one NCCL is told not to use */
        }
        char state[24] = "", why[48] = "";
        snprintf(probe, sizeof probe, "class/net/%.64s/operstate", ifs[i]->d_name);
        if (read_line(root, probe, state, sizeof state) != 0)
            state[0] = '\0';
        int up = strcmp(state, "up") == 0;
        snprintf(probe, sizeof probe, "class/net/%.64s/speed", ifs[i]->d_name);
        const char *after = NULL;
        double mbit = -1;
        int got = read_line(root, probe, line, sizeof line);
        if (got == -3)
            snprintf(why, sizeof why, "speed file not a regular file");
        else if (got != 0)
            snprintf(why, sizeof why, got == -2 ? "speed longer than %zu characters"
                                                : "no speed file", sizeof line - 2);
        else if ((mbit = in_range(line, CB_EXPECT_MIN_GBIT * 1000, CB_EXPECT_MAX_GBIT * 1000,
                                  &after)) < 0 || after[0] != '\0')
            snprintf(why, sizeof why, "speed '%.24s' Mb/s", line);
        port_facts port = {up, state, why[0] ? -1 : mbit / 1000, why};
        add_nic(r, ifs[i]->d_name, root, rel, &port, gpu_path);
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
