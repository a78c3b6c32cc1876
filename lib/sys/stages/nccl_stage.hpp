// The nccl stage: the job's libnccl, one all-reduce of this node's GPUs; and
// the calls the coordinator's cross-node all-reduce is made of
// (lib/sys/preflight/coordinator_gpu.cpp): the first node of each group of
// nodes makes the unique id (nccl_unique_id), the coordinator ships its 128
// bytes (hex) to every node of the group with nranks and the node's first
// rank, each node's speaker calls nccl_allreduce() and answers
// NcclResult.seconds; the coordinator takes the largest and calls
// gpu::judge_nccl.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "stage.hpp"

namespace gangway::sys {

struct NcclLib {
    std::string path;      // what was loaded
    int version = 0;       // ncclGetVersion: 22105 for 2.21.5
    std::string error;     // not found / not loadable: why
    std::vector<std::string> tried;
};
// The job's libnccl (see gpu::nccl_candidates for the order).
NcclLib find_nccl(const std::string& explicit_path, const EnvMap& env);

// 128 bytes from ncclGetUniqueId (starts NCCL's bootstrap root thread in this process).
std::optional<std::string> nccl_unique_id(const std::string& lib_path, std::string& err);

struct NcclJob {
    std::string lib_path;
    std::string unique_id;      // 128 bytes
    unsigned nranks = 1, first_rank = 0;
    unsigned devices = 1;       // this process drives CUDA devices 0..devices-1 as ranks first_rank..
    double bytes = double(1u << 30);
    int iterations = 5;
    double deadline_s = 60;     // init + warm-up + timed loop; a hung communicator is aborted
    std::string scope = "node";
};
// One in-place float sum all-reduce at `bytes` with NCCL_ALGO=Ring: a warm-up
// whose result is checked (every element == nranks), then `iterations` timed
// with CUDA events; NcclResult.seconds is the slowest local rank per iteration.
gpu::NcclResult nccl_allreduce(const NcclJob& job);

struct NcclStageOptions {
    std::string nccl_lib;       // --nccl-lib, else GANGWAY_NCCL_LIB
    bool full = false;          // full: also 64 MiB and 256 MiB (a small sweep)
    double deadline_s = 60;
    EnvMap env;
    gpu::Thresholds t;
};
// This node alone: all visible GPUs in one communicator.
StageOutcome run_nccl_stage_local(const NcclStageOptions& o);

}  // namespace gangway::sys
