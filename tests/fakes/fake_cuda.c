/* TEST DOUBLE -- not NVIDIA's driver. A fake libcuda.so.1 that lets the real
 * gangway binary run its GPU stages (lib/sys/cuda_stage.cpp, nccl_stage.cpp)
 * end to end on CI machines and the namespace test cluster, which have no GPU.
 *
 * It exports exactly the driver API calls gangway dlsym()s (see
 * lib/sys/cuda_api.hpp), under their versioned names (cuMemAlloc_v2, ...).
 * "Device memory" is host memory, so fake_nccl.c can all-reduce it directly.
 * Each GPU has a clock of its own, as a real one does: an async copy does its
 * memcpy at once and queues its simulated duration on that clock, events
 * stamp the clock, synchronisation sleeps until the clock is reached. So the
 * bandwidth gangway measures between two events is the simulated rate, and
 * a host that is descheduled between two enqueues (the processes of a
 * multi-node test share a few cores) does not show as a slow GPU, just as it
 * would not with real copies queued on a real stream.
 *
 * Environment:
 *   GANGWAY_FAKE_GPUS=N          GPUs on this node (default 0: cuInit says
 *                                CUDA_ERROR_NO_DEVICE, as a node without GPUs)
 *   GANGWAY_FAKE_GPU_NAME=S      device name (default "Gangway Fake GPU", which
 *                                matches no model: no PCIe figure is applied)
 *   GANGWAY_FAKE_COPY_GBPS=R     copies run at R GB/s (simulated; unset: memcpy speed)
 *   GANGWAY_FAKE_SLOW_HOSTS=a,b  on these nodes host<->device copies take 4x as long
 *   GANGWAY_FAKE_BAD_SM_HOSTS=a  on these nodes the computation check gets one wrong element
 *   GANGWAY_FAKE_SLOW_GPU=K      only ordinal K is slow; alone (no SLOW_HOSTS)
 *                                it is slow on every node
 * PCI bus ids are 0000:<0x10 + ordinal>:00.0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_host.h"
#include "fake_time.h"

/* Our own ABI declarations: no CUDA headers on the machines this runs on. */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx *CUcontext;
typedef struct fake_stream *CUstream;
typedef struct fake_event *CUevent;

enum {
    OK = 0,
    ERR_INVALID_VALUE = 1,
    ERR_OUT_OF_MEMORY = 2,
    ERR_NOT_INITIALIZED = 3,
    ERR_NO_DEVICE = 100,
    ERR_INVALID_DEVICE = 101,
    ERR_INVALID_CONTEXT = 201,
    ERR_INVALID_HANDLE = 400,
    ERR_NOT_READY = 600,
};

#define MAX_GPUS 64

struct fake_ctx {
    int ordinal;
    double busy_until; /* the GPU's clock: when its queued work ends (now_s() seconds) */
};
struct fake_stream { int unused; };
struct fake_event { double at; int recorded; };

static struct fake_ctx contexts[MAX_GPUS];  /* one primary context per GPU, never freed */
static int gpu_count;                        /* from GANGWAY_FAKE_GPUS at the first cuInit */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
/* The CUDA model: the calling thread's current context says which GPU a call
 * is on. That is how a copy learns whether it runs on the slow GPU. */
static _Thread_local struct fake_ctx *current;

static void read_env(void) {
    const char *s = getenv("GANGWAY_FAKE_GPUS");
    long n = s ? strtol(s, NULL, 10) : 0;
    gpu_count = n < 0 ? 0 : n > MAX_GPUS ? MAX_GPUS : (int)n;
    for (int i = 0; i < MAX_GPUS; ++i) contexts[i].ordinal = i;
}

static int initialized(void) { return gpu_count > 0; }
static int valid(CUdevice d) { return initialized() && d >= 0 && d < gpu_count; }

/* SLOW_HOSTS narrows the nodes, SLOW_GPU the ordinals; neither set: all fast. */
static int slow_gpu(int ordinal) {
    const char *hosts = getenv("GANGWAY_FAKE_SLOW_HOSTS"), *gpu = getenv("GANGWAY_FAKE_SLOW_GPU");
    const int host_set = hosts && *hosts, gpu_set = gpu && *gpu;
    if (!host_set && !gpu_set) return 0;
    if (host_set && !fake_this_host_listed("GANGWAY_FAKE_SLOW_HOSTS")) return 0;
    return !gpu_set || atoi(gpu) == ordinal;
}

/* When the current GPU's queued work is done: the host waits for it. */
static void drain(void) {
    if (current) sleep_s(current->busy_until - now_s());
}

/* A host<->device copy at a simulated link rate: GANGWAY_FAKE_COPY_GBPS
 * (GB/s), a quarter of it on a slow GPU; without the variable it takes what
 * the memcpy took, 4x that on a slow GPU. The data moves at once; the copy
 * occupies the GPU's clock from when it was queued or the GPU became free. */
static CUresult copy(void *dst, const void *src, size_t bytes, int synchronous) {
    if (!current) return ERR_INVALID_CONTEXT;
    const double t0 = now_s();
    memcpy(dst, src, bytes);
    const int slow = slow_gpu(current->ordinal);
    const char *rate = getenv("GANGWAY_FAKE_COPY_GBPS");
    const double took = rate && atof(rate) > 0 ? (double)bytes / (atof(rate) * 1e9) : now_s() - t0;
    const double start = t0 > current->busy_until ? t0 : current->busy_until;
    current->busy_until = start + took * (slow ? 4 : 1);
    if (synchronous) drain();
    return OK;
}

CUresult cuInit(unsigned flags) {
    (void)flags;
    pthread_once(&init_once, read_env);
    return gpu_count > 0 ? OK : ERR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *version) {
    if (!version) return ERR_INVALID_VALUE;
    *version = 12040; /* CUDA 12.4 */
    return OK;
}

CUresult cuDeviceGetCount(int *count) {
    if (!count) return ERR_INVALID_VALUE;
    if (!initialized()) return ERR_NOT_INITIALIZED;
    *count = gpu_count;
    return OK;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
    if (!dev) return ERR_INVALID_VALUE;
    if (!initialized()) return ERR_NOT_INITIALIZED;
    if (!valid(ordinal)) return ERR_INVALID_DEVICE;
    *dev = ordinal;
    return OK;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (!name || len <= 0) return ERR_INVALID_VALUE;
    if (!valid(dev)) return ERR_INVALID_DEVICE;
    const char *s = getenv("GANGWAY_FAKE_GPU_NAME");
    snprintf(name, (size_t)len, "%s", s && *s ? s : "Gangway Fake GPU");
    return OK;
}

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev) {
    if (!bus || len <= 0) return ERR_INVALID_VALUE;
    if (!valid(dev)) return ERR_INVALID_DEVICE;
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + dev);
    return OK;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
    if (!ctx) return ERR_INVALID_VALUE;
    if (!valid(dev)) return ERR_INVALID_DEVICE;
    *ctx = &contexts[dev];
    return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return valid(dev) ? OK : ERR_INVALID_DEVICE; }
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

CUresult cuCtxSetCurrent(CUcontext ctx) {
    if (ctx && (ctx < contexts || ctx >= contexts + MAX_GPUS)) return ERR_INVALID_CONTEXT;
    current = ctx;
    return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
    if (!ptr || bytes == 0) return ERR_INVALID_VALUE;
    if (!current) return ERR_INVALID_CONTEXT;
    void *p = NULL;
    if (posix_memalign(&p, 256, bytes) != 0) return ERR_OUT_OF_MEMORY; /* cudaMalloc's alignment */
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
    free((void *)(uintptr_t)ptr);
    return OK;
}

CUresult cuMemAllocHost_v2(void **ptr, size_t bytes) {
    if (!ptr || bytes == 0) return ERR_INVALID_VALUE;
    if (!current) return ERR_INVALID_CONTEXT;
    return (*ptr = malloc(bytes)) ? OK : ERR_OUT_OF_MEMORY;
}

CUresult cuMemFreeHost(void *ptr) {
    free(ptr);
    return OK;
}

CUresult cuMemsetD32_v2(CUdeviceptr ptr, unsigned value, size_t words) {
    if (!current) return ERR_INVALID_CONTEXT;
    unsigned *p = (unsigned *)(uintptr_t)ptr;
    for (size_t i = 0; i < words; ++i) p[i] = value;
    return OK;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
    return copy(dst, (const void *)(uintptr_t)src, bytes, 1);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
    (void)s;
    return copy((void *)(uintptr_t)dst, src, bytes, 0);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
    (void)s;
    return copy(dst, (const void *)(uintptr_t)src, bytes, 0);
}

/* Streams: one queue per GPU (its clock), whatever the stream. */
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    if (!s) return ERR_INVALID_VALUE;
    if (!current) return ERR_INVALID_CONTEXT;
    return (*s = calloc(1, sizeof **s)) ? OK : ERR_OUT_OF_MEMORY;
}

CUresult cuStreamDestroy_v2(CUstream s) {
    free(s);
    return OK;
}
CUresult cuStreamDestroy(CUstream s) { return cuStreamDestroy_v2(s); }
CUresult cuStreamSynchronize(CUstream s) {
    if (!s) return ERR_INVALID_HANDLE;
    drain();
    return OK;
}
CUresult cuStreamQuery(CUstream s) {
    if (!s) return ERR_INVALID_HANDLE;
    return !current || current->busy_until <= now_s() ? OK : ERR_NOT_READY;
}

CUresult cuEventCreate(CUevent *e, unsigned flags) {
    (void)flags;
    if (!e) return ERR_INVALID_VALUE;
    if (!current) return ERR_INVALID_CONTEXT;
    return (*e = calloc(1, sizeof **e)) ? OK : ERR_OUT_OF_MEMORY;
}

CUresult cuEventRecord(CUevent e, CUstream s) {
    (void)s;
    if (!e) return ERR_INVALID_HANDLE;
    if (!current) return ERR_INVALID_CONTEXT;
    const double now = now_s();
    e->at = now > current->busy_until ? now : current->busy_until; /* when the GPU reaches it */
    e->recorded = 1;
    return OK;
}

CUresult cuEventSynchronize(CUevent e) {
    if (!e) return ERR_INVALID_HANDLE;
    sleep_s(e->at - now_s());
    return OK;
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
    if (!ms) return ERR_INVALID_VALUE;
    if (!start || !end || !start->recorded || !end->recorded) return ERR_INVALID_HANDLE;
    *ms = (float)((end->at - start->at) * 1e3);
    return OK;
}
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return cuEventElapsedTime_v2(ms, start, end); }

CUresult cuEventDestroy_v2(CUevent e) {
    free(e);
    return OK;
}
CUresult cuEventDestroy(CUevent e) { return cuEventDestroy_v2(e); }

CUresult cuGetErrorString(CUresult r, const char **text) {
    if (!text) return ERR_INVALID_VALUE;
    switch (r) {
        case OK: *text = "no error"; break;
        case ERR_INVALID_VALUE: *text = "invalid argument"; break;
        case ERR_OUT_OF_MEMORY: *text = "out of memory"; break;
        case ERR_NOT_INITIALIZED: *text = "initialization error"; break;
        case ERR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
        case ERR_INVALID_DEVICE: *text = "invalid device ordinal"; break;
        case ERR_INVALID_CONTEXT: *text = "invalid device context"; break;
        case ERR_INVALID_HANDLE: *text = "invalid resource handle"; break;
        default: *text = NULL; return ERR_INVALID_VALUE;
    }
    return OK;
}

/* ------------------------------------------------------------ the computation check
 * gangway's cuda stage loads PTX text (lib/sys/cuda_kernel.cpp) and launches
 * gangway_axpb(x, n, a, b): x[i] = i * a + b. The fake "compiles" only that
 * kernel (recognised by its .entry line) and computes it on the host.
 * GANGWAY_FAKE_BAD_SM_HOSTS=a,b: on these nodes one element comes out wrong,
 * as from a faulty SM. */
struct CUmod_st { int axpb; };
struct CUfunc_st { int axpb; };
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
static struct CUfunc_st axpb_fn = {1};

CUresult cuModuleLoadData(CUmodule *mod, const void *image) {
    if (!mod || !image) return ERR_INVALID_VALUE;
    if (!current) return ERR_INVALID_CONTEXT;
    if (!strstr((const char *)image, ".version") || !strstr((const char *)image, ".entry gangway_axpb("))
        return 218; /* CUDA_ERROR_INVALID_PTX */
    *mod = calloc(1, sizeof **mod);
    if (!*mod) return ERR_OUT_OF_MEMORY;
    (*mod)->axpb = 1;
    return OK;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name) {
    if (!fn || !mod || !name) return ERR_INVALID_VALUE;
    if (strcmp(name, "gangway_axpb") != 0) return 500; /* CUDA_ERROR_NOT_FOUND */
    *fn = &axpb_fn;
    return OK;
}

CUresult cuModuleUnload(CUmodule mod) {
    free(mod);
    return OK;
}

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void **params, void **extra) {
    (void)shmem;
    (void)extra;
    if (!current) return ERR_INVALID_CONTEXT;
    if (fn != &axpb_fn || !params || !s) return ERR_INVALID_VALUE;
    float *x = (float *)(uintptr_t) * (CUdeviceptr *)params[0];
    const unsigned n = *(unsigned *)params[1];
    const float a = *(float *)params[2], b = *(float *)params[3];
    const unsigned long long threads = (unsigned long long)gx * gy * gz * bx * by * bz;
    for (unsigned i = 0; i < n && i < threads; ++i) x[i] = (float)i * a + b;
    if (n > 12345 && fake_this_host_listed("GANGWAY_FAKE_BAD_SM_HOSTS")) x[12345] += 1.0f;
    return OK;
}
