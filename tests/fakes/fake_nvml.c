/* TEST DOUBLE -- not NVIDIA's NVML. A fake libnvidia-ml.so.1 for machines
 * without NVIDIA GPUs (the development VMs, CI, the namespace test cluster):
 * gangway node-check dlopen()s "libnvidia-ml.so.1", so LD_LIBRARY_PATH=OUTDIR
 * puts this one in its place, beside the fake libcuda.so.1 (whose GPUs it
 * describes: the same count, names and PCI bus ids, 0000:<0x10 + index>:00.0).
 * Only the calls gangway makes are here, with NVML's ABI (nvml.h, NVML 11+).
 *
 * Environment:
 *   GANGWAY_FAKE_GPUS=N               GPUs (as fake_cuda.c)
 *   GANGWAY_FAKE_GPU_NAME=S           their name (default "Gangway Fake GPU")
 *   GANGWAY_FAKE_NVML_INIT=E          nvmlInit_v2 returns E (9: driver not loaded)
 *   GANGWAY_FAKE_NVML_HANG=1          nvmlInit_v2 never returns (a hung driver)
 *   GANGWAY_FAKE_NVML_HIDE=K          GPU K is on the bus but not in NVML's list
 *   GANGWAY_FAKE_NVML_LOST=K          opening GPU K returns 15 (GPU is lost)
 *   GANGWAY_FAKE_NVML_PAGES_PENDING=K GPU K has a page retirement pending
 *   GANGWAY_FAKE_NVML_PAGES=K:N       GPU K has N retired pages (double-bit cause)
 *   GANGWAY_FAKE_NVML_ROWS_FAILED=K   GPU K's row remapping failed
 *   GANGWAY_FAKE_NVML_ECC=K:N         GPU K has N volatile uncorrectable ECC errors
 *   GANGWAY_FAKE_NVML_BUSY=K          a process computes on GPU K (a job)
 *   GANGWAY_FAKE_NVLINKS=N            each GPU has N NVLinks, all up (default 0: none, as a PCIe card)
 *   GANGWAY_FAKE_NVLINK_DOWN=K:N      GPU K has N of them down
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_nvml_dev *nvmlDevice_t;
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

enum { OK = 0, ERR_INVALID_ARGUMENT = 2, ERR_NOT_SUPPORTED = 3, ERR_INSUFFICIENT_SIZE = 7, ERR_GPU_IS_LOST = 15 };

#define MAX_GPUS 64
struct fake_nvml_dev { int index; };
static struct fake_nvml_dev devs[MAX_GPUS];

static int env_int(const char *name, int dflt) {
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}
/* "K:N" for GPU k: N; else 0. */
static unsigned long long env_pair(const char *name, int k) {
    const char *s = getenv(name);
    int at = -1;
    unsigned long long n = 0;
    if (!s || sscanf(s, "%d:%llu", &at, &n) != 2 || at != k) return 0;
    return n;
}
static int gpus(void) {
    int n = env_int("GANGWAY_FAKE_GPUS", 0);
    return n < 0 ? 0 : n > MAX_GPUS ? MAX_GPUS : n;
}
/* The driver's list: the GPUs but the hidden one. */
static int listed(void) {
    int hide = env_int("GANGWAY_FAKE_NVML_HIDE", -1);
    return gpus() - (hide >= 0 && hide < gpus());
}
static int pci_index(int listed_index) {
    int hide = env_int("GANGWAY_FAKE_NVML_HIDE", -1);
    return hide >= 0 && listed_index >= hide ? listed_index + 1 : listed_index;
}

nvmlReturn_t nvmlInit_v2(void) {
    if (env_int("GANGWAY_FAKE_NVML_HANG", 0))
        for (;;) pause();
    return env_int("GANGWAY_FAKE_NVML_INIT", OK);
}
nvmlReturn_t nvmlShutdown(void) { return OK; }
const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
        case OK: return "Success";
        case 9: return "Driver Not Loaded";
        case ERR_GPU_IS_LOST: return "GPU is lost";
        case ERR_NOT_SUPPORTED: return "Not Supported";
        default: return "Unknown Error";
    }
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n) {
    if (!n) return ERR_INVALID_ARGUMENT;
    *n = (unsigned)listed();
    return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d) {
    if (!d || (int)i >= listed()) return ERR_INVALID_ARGUMENT;
    int k = pci_index((int)i);
    if (env_int("GANGWAY_FAKE_NVML_LOST", -1) == k) return ERR_GPU_IS_LOST;
    devs[k].index = k;
    *d = &devs[k];
    return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned len) {
    if (!d || !name || !len) return ERR_INVALID_ARGUMENT;
    const char *s = getenv("GANGWAY_FAKE_GPU_NAME");
    snprintf(name, len, "%s", s && *s ? s : "Gangway Fake GPU");
    return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
    if (!d || !p) return ERR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->bus = 0x10 + (unsigned)d->index;
    /* NVML's spelling: an eight-digit domain, upper-case hex. */
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending) {
    if (!d || !pending) return ERR_INVALID_ARGUMENT;
    *pending = env_int("GANGWAY_FAKE_NVML_PAGES_PENDING", -1) == d->index;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned *count, unsigned long long *addrs) {
    if (!d || !count) return ERR_INVALID_ARGUMENT;
    unsigned n = cause == 1 ? (unsigned)env_pair("GANGWAY_FAKE_NVML_PAGES", d->index) : 0;
    /* As NVML: a count of 0 asks how many; a buffer too small says so. */
    if (*count < n) {
        *count = n;
        return addrs ? ERR_INSUFFICIENT_SIZE : OK;
    }
    for (unsigned i = 0; i < n && addrs; ++i) addrs[i] = 0x1000ull * (i + 1);
    *count = n;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed) {
    if (!d || !corr || !unc || !pending || !failed) return ERR_INVALID_ARGUMENT;
    *corr = *unc = *pending = 0;
    *failed = env_int("GANGWAY_FAKE_NVML_ROWS_FAILED", -1) == d->index;
    return OK;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *n) {
    if (!d || !n) return ERR_INVALID_ARGUMENT;
    *n = type == 1 && counter == 0 ? env_pair("GANGWAY_FAKE_NVML_ECC", d->index) : 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned *count, void *infos) {
    if (!d || !count) return ERR_INVALID_ARGUMENT;
    unsigned n = env_int("GANGWAY_FAKE_NVML_BUSY", -1) == d->index;
    if (*count < n) {
        *count = n;
        return ERR_INSUFFICIENT_SIZE;  /* as NVML: the caller's buffer has no room */
    }
    (void)infos;  /* the fake lists no process details */
    *count = n;
    return OK;
}
/* NVML_ERROR_NOT_SUPPORTED on a GPU without NVLink; INVALID_ARGUMENT past its last link. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active) {
    if (!d || !active) return ERR_INVALID_ARGUMENT;
    int n = env_int("GANGWAY_FAKE_NVLINKS", 0);
    if (n <= 0) return ERR_NOT_SUPPORTED;
    if ((int)link >= n) return ERR_INVALID_ARGUMENT;
    *active = (int)link < n - (int)env_pair("GANGWAY_FAKE_NVLINK_DOWN", d->index);
    return OK;
}
