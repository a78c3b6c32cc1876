// The few CUDA driver API calls the GPU stages make, loaded at run time from
// libcuda.so.1 (the driver's library: present on every GPU node, absent
// elsewhere) so that the gangway binary starts on nodes without CUDA.
// Configured --with-cuda, the real cuda.h supplies the types and the
// declarations below are checked against it; without it, they are our own.
// Internal to lib/sys/stages; cuda_handles.hpp owns the objects it makes.
#pragma once
#include <cstddef>
#include <string>

#include "config.h"

#ifdef HAVE_CUDA
#include <cuda.h>
#endif

namespace gangway::sys::cu {

#ifdef HAVE_CUDA
using Result = CUresult;
using Device = CUdevice;
using Context = CUcontext;
using Stream = CUstream;
using Event = CUevent;
using Ptr = CUdeviceptr;
using Module = CUmodule;
using Function = CUfunction;
static_assert(CUDA_SUCCESS == 0 && CUDA_ERROR_NOT_READY == 600 && CUDA_ERROR_NO_DEVICE == 100);
static_assert(sizeof(CUdeviceptr) == 8 && sizeof(CUdevice) == sizeof(int));
#else
using Result = int;
using Device = int;
using Context = struct CUctx_st*;
using Stream = struct CUstream_st*;
using Event = struct CUevent_st*;
using Ptr = unsigned long long;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
#endif
inline constexpr int kSuccess = 0, kNotReady = 600, kNoDevice = 100;

// Function pointers, by the versioned symbol names libcuda exports (cuda.h
// maps cuMemAlloc to cuMemAlloc_v2 and so on).
struct Api {
    Result (*init)(unsigned);
    Result (*driver_version)(int*);
    Result (*device_count)(int*);
    Result (*device_get)(Device*, int);
    Result (*device_name)(char*, int, Device);
    Result (*device_bus_id)(char*, int, Device);
    Result (*primary_retain)(Context*, Device);
    Result (*primary_release)(Device);
    Result (*ctx_set_current)(Context);
    Result (*mem_alloc)(Ptr*, std::size_t);
    Result (*mem_free)(Ptr);
    Result (*host_alloc)(void**, std::size_t);
    Result (*host_free)(void*);
    Result (*memset_d32)(Ptr, unsigned, std::size_t);
    Result (*copy_dtoh)(void*, Ptr, std::size_t);
    Result (*copy_htod_async)(Ptr, const void*, std::size_t, Stream);
    Result (*copy_dtoh_async)(void*, Ptr, std::size_t, Stream);
    Result (*stream_create)(Stream*, unsigned);
    Result (*stream_destroy)(Stream);
    Result (*stream_sync)(Stream);
    Result (*stream_query)(Stream);
    Result (*event_create)(Event*, unsigned);
    Result (*event_record)(Event, Stream);
    Result (*event_sync)(Event);
    Result (*event_elapsed)(float*, Event, Event);
    Result (*event_destroy)(Event);
    Result (*error_string)(Result, const char**);  // may be null
    // The computation check (cuda_kernel.hpp); null when the driver lacks them.
    Result (*module_load_data)(Module*, const void*);
    Result (*module_get_function)(Function*, Module, const char*);
    Result (*module_unload)(Module);
    Result (*launch_kernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**,
                            void**);

    std::string err(Result r) const;  // "CUDA error 2 (out of memory)"
};

// The process-wide API, loaded once; nullptr with `why` ("libcuda.so.1 not
// found: no NVIDIA driver on this node") when it cannot be loaded.
const Api* api(std::string& why);

}  // namespace gangway::sys::cu
