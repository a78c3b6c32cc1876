// The CUDA driver API loader: libcuda.so.1 with dlopen, once per process.
#include "cuda_api.hpp"

#include <dlfcn.h>

#include <initializer_list>
#include <mutex>

namespace gangway::sys::cu {

std::string Api::err(Result r) const {
    const char* s = nullptr;
    if (error_string) error_string(r, &s);
    return "CUDA error " + std::to_string(static_cast<int>(r)) + (s ? std::string(" (") + s + ")" : "");
}

namespace {
template <class F>
bool sym(void* h, F& f, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (void* p = ::dlsym(h, n)) {
            f = reinterpret_cast<F>(p);
            return true;
        }
    return false;
}
}  // namespace

const Api* api(std::string& why) {
    static std::once_flag once;
    static Api a{};
    static bool ok = false;
    static std::string error;
    std::call_once(once, [] {
        void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            error = "libcuda.so.1 not found: no NVIDIA driver on this node";
            return;
        }
        bool all = sym(h, a.init, {"cuInit"}) && sym(h, a.driver_version, {"cuDriverGetVersion"}) &&
                   sym(h, a.device_count, {"cuDeviceGetCount"}) && sym(h, a.device_get, {"cuDeviceGet"}) &&
                   sym(h, a.device_name, {"cuDeviceGetName"}) && sym(h, a.device_bus_id, {"cuDeviceGetPCIBusId"}) &&
                   sym(h, a.primary_retain, {"cuDevicePrimaryCtxRetain"}) &&
                   sym(h, a.primary_release, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}) &&
                   sym(h, a.ctx_set_current, {"cuCtxSetCurrent"}) && sym(h, a.mem_alloc, {"cuMemAlloc_v2"}) &&
                   sym(h, a.mem_free, {"cuMemFree_v2"}) && sym(h, a.host_alloc, {"cuMemAllocHost_v2"}) &&
                   sym(h, a.host_free, {"cuMemFreeHost"}) && sym(h, a.memset_d32, {"cuMemsetD32_v2"}) &&
                   sym(h, a.copy_dtoh, {"cuMemcpyDtoH_v2"}) && sym(h, a.copy_htod_async, {"cuMemcpyHtoDAsync_v2"}) &&
                   sym(h, a.copy_dtoh_async, {"cuMemcpyDtoHAsync_v2"}) && sym(h, a.stream_create, {"cuStreamCreate"}) &&
                   sym(h, a.stream_destroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}) &&
                   sym(h, a.stream_sync, {"cuStreamSynchronize"}) && sym(h, a.stream_query, {"cuStreamQuery"}) &&
                   sym(h, a.event_create, {"cuEventCreate"}) && sym(h, a.event_record, {"cuEventRecord"}) &&
                   sym(h, a.event_sync, {"cuEventSynchronize"}) &&
                   sym(h, a.event_elapsed, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}) &&
                   sym(h, a.event_destroy, {"cuEventDestroy_v2", "cuEventDestroy"});
        sym(h, a.error_string, {"cuGetErrorString"});
        if (!(sym(h, a.module_load_data, {"cuModuleLoadData"}) && sym(h, a.module_get_function, {"cuModuleGetFunction"}) &&
              sym(h, a.module_unload, {"cuModuleUnload"}) && sym(h, a.launch_kernel, {"cuLaunchKernel"})))
            a.module_load_data = nullptr;
        if (!all) {
            error = "libcuda.so.1 lacks a driver API call gangway needs: the NVIDIA driver is too old";
            return;
        }
        ok = true;
    });
    if (!ok) why = error;
    return ok ? &a : nullptr;
}

}  // namespace gangway::sys::cu
