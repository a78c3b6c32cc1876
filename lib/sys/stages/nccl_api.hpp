// The NCCL calls the nccl stage makes, loaded at run time from the job's
// libnccl (nccl_stage.hpp: find_nccl) so that the gangway binary starts on
// nodes without NCCL. Configured --with-cuda, the real nccl.h checks our
// declarations. Internal to lib/sys/stages (nccl_stage.cpp, nccl_allreduce.cpp).
#pragma once
#include <climits>
#include <cstddef>
#include <string>

#include "cuda_api.hpp"

#ifdef HAVE_CUDA
#include <nccl.h>
#endif

namespace gangway::sys::nccl {

// Our own declarations of the NCCL ABI we use (stable since 2.14).
using Result = int;
using Comm = struct ncclComm_gw*;
struct UniqueId {
    char internal[128];
};
constexpr int kSuccess = 0, kInProgress = 7, kFloat32 = 7, kSum = 0;
constexpr int kUndefInt = INT_MIN;
// The leading fields of ncclConfig_t as of NCCL 2.18; NCCL reads `size`
// bytes and defaults the rest, so an older or newer library accepts it.
struct Config {
    std::size_t size;
    unsigned magic;
    unsigned version;
    int blocking, cga_cluster_size, min_ctas, max_ctas;
    const char* net_name;
    int split_share;
};
#ifdef HAVE_CUDA
static_assert(sizeof(ncclUniqueId) == sizeof(UniqueId));
static_assert(ncclSuccess == kSuccess && ncclInProgress == kInProgress && ncclFloat32 == kFloat32 && ncclSum == kSum);
static_assert(offsetof(ncclConfig_t, blocking) == offsetof(Config, blocking));
static_assert(offsetof(ncclConfig_t, netName) == offsetof(Config, net_name));
static_assert(offsetof(ncclConfig_t, splitShare) == offsetof(Config, split_share));
#endif

struct Api {
    void* h = nullptr;  // never closed: see load()
    Result (*get_version)(int*) = nullptr;
    Result (*get_unique_id)(UniqueId*) = nullptr;
    Result (*init_rank)(Comm*, int, UniqueId, int) = nullptr;
    Result (*init_rank_config)(Comm*, int, UniqueId, int, Config*) = nullptr;  // 2.14+
    Result (*group_start)() = nullptr;
    Result (*group_end)() = nullptr;
    Result (*all_reduce)(const void*, void*, std::size_t, int, int, Comm, cu::Stream) = nullptr;
    Result (*async_error)(Comm, Result*) = nullptr;
    Result (*abort)(Comm) = nullptr;
    Result (*destroy)(Comm) = nullptr;
    const char* (*error_string)(Result) = nullptr;

    std::string err(Result r) const;  // "NCCL error 3 (internal error)"
};

// The library at `path`, loaded once per process; nullptr with `err` when it
// cannot be loaded or lacks a call.
const Api* load(const std::string& path, std::string& err);

}  // namespace gangway::sys::nccl
