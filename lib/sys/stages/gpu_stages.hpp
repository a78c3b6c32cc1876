// One-call entry points of the preflight's GPU and RDMA stages on this node:
// cuda, nccl and verbs. Each returns a StageResult (name, status ok / failed /
// skipped / aborted, detail, seconds) plus its findings, so the preflight
// pipeline can put it in its report. They run on nodes without CUDA, NCCL or
// RDMA devices: the libraries are loaded with dlopen, and a stage without its
// hardware is "skipped: no GPUs" / "skipped: no RDMA devices", or "failed" when
// it is required (GANGWAY_REQUIRE, --require).
//
// Across nodes (the hook for the pipeline's coordinator):
//   nccl: node 0 calls nccl_unique_id() and ships the 128 bytes (hex) to every
//         node's speaker with nranks and its first rank; each calls
//         nccl_allreduce() and returns NcclResult.seconds; the coordinator takes
//         the largest and calls gpu::judge_nccl.
//   verbs: each speaker opens an RdmaEndpoint per (compute HCA, peer) of a ring
//         round, sends local() through the bootstrap (verbs::qp_info_to_kv),
//         connect()s with the peer's QpInfo, then the sender calls write_for().
#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../../preflight/gpu_checks.hpp"
#include "../../preflight/report.hpp"
#include "../../preflight/rdma_checks.hpp"

namespace gangway::sys {

struct StageOutcome {
    preflight::StageResult result;
    std::vector<gpu::Finding> findings;
    // What the pipeline needs besides the verdict, each stage its own: the
    // cross-node NCCL all-reduce, the job-wide GPU comparison, the RDMA rounds.
    std::vector<gpu::GpuResult> gpus;  // cuda: per GPU
    std::string nccl_lib;              // nccl: the library it loaded
    std::vector<gpu::NcclResult> nccl_runs;  // nccl: its all-reduce(s)
    std::vector<verbs::Port> ports;    // verbs: the compute ports it judged
};
StageOutcome to_outcome(const std::string& name, const gpu::StageVerdict& v, double seconds);

// The report's per-device records of one node's stages (its GPUs, its ports).
preflight::GpuRecord gpu_record(unsigned node, const gpu::GpuResult& g);
preflight::NcclRecord nccl_record(unsigned node, const gpu::NcclResult& r);
void add_device_records(const StageOutcome& o, unsigned node, preflight::Report& rep);

// Runs fn in a thread and waits up to `seconds` for its result: nullopt when
// it has not returned by then (a hung CUDA, NCCL or verbs call cannot be
// interrupted: its thread is left behind, detached, owning what it uses). An
// exception from fn comes out of this call.
template <class T>
std::optional<T> within(double seconds, std::function<T()> fn) {
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(fn));
    auto fut = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    if (fut.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) return std::nullopt;
    return fut.get();
}

// A stage under within(): past `seconds` it is "aborted", an exception makes it "failed".
StageOutcome with_deadline(const std::string& name, double seconds, std::function<StageOutcome()> fn);

// ---------------------------------------------------------------- cuda
struct CudaStageOptions {
    bool full = false;
    std::size_t copy_bytes = std::size_t(256) << 20;  // reaches the copy plateau
    int iterations = 5;                               // timed copies per direction (full: 20)
    std::string root = "/";                           // sysfs root for the PCIe links
    EnvMap env;                                       // CUDA_VISIBLE_DEVICES, SLURM_*: the allocation
    gpu::Thresholds t;
};
// Device count against the allocation; per GPU: context, allocation, a
// memset/copy-back check, pinned H2D and D2H bandwidth (event timing).
StageOutcome run_cuda_stage(const CudaStageOptions& o, std::vector<gpu::GpuResult>* per_gpu = nullptr);

// ---------------------------------------------------------------- nccl
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

// ---------------------------------------------------------------- verbs
// /sys/class/infiniband/<hca>/ports/<p>/{state,phys_state,rate,link_layer,
// gids/N,gid_attrs/types/N,gid_attrs/ndevs/N} under `root`, plus the netdev
// MTU of RoCE ports from <root>/sys/class/net/<ndev>/mtu. `hcas` empty: all.
std::vector<verbs::Port> read_ib_ports(const std::string& root, const std::vector<std::string>& hcas = {});

struct VerbsStageOptions {
    std::string root = "/";
    std::vector<std::string> hcas;  // the compute HCAs (placement's compute_nics); empty: every HCA
    bool query_mtu = true;          // ask libibverbs for the active MTU (live system only)
    gpu::Thresholds t;
};
// Ports of the compute HCAs judged from sysfs (verbs::judge_ports).
StageOutcome run_verbs_stage_local(const VerbsStageOptions& o, std::vector<verbs::Port>* ports = nullptr);

// The compute HCAs of this node: placement's compute_nics() over the live
// topology, under the site/user filter GANGWAY_NIC_INCLUDE / _EXCLUDE
// (comma lists); every HCA when the topology cannot be read.
std::vector<std::string> compute_hcas(const EnvMap& env);

// ---------------------------------------------------------------- all three, this node
struct LocalStagesOptions {
    std::vector<std::string> stages;  // of cuda, nccl, verbs; empty: all
    bool full = false;
    double timeout_s = 60;            // per stage
    std::string nccl_lib;
    std::string root = "/";           // sysfs root: the GPUs' PCIe links, the HCA ports
    EnvMap env;                       // the task's environment (allocation, GANGWAY_* thresholds)
};
// What `gangway gpu-check --local` and each node's speaker in `gangway check`
// run. Throws gangway::Error for bad GANGWAY_* thresholds.
std::vector<StageOutcome> run_local_stages(const LocalStagesOptions& o);

// One RC queue pair on one HCA port with a registered buffer, for RDMA write
// bandwidth between two nodes. Not exercised here: no RDMA hardware on the
// development machines.
class RdmaEndpoint {
public:
    // Throws gangway::Error saying why (no libibverbs, no such HCA, ...).
    RdmaEndpoint(const verbs::Port& port, unsigned gid_index, std::size_t buffer_bytes);
    ~RdmaEndpoint();
    RdmaEndpoint(const RdmaEndpoint&) = delete;
    RdmaEndpoint& operator=(const RdmaEndpoint&) = delete;
    const verbs::QpInfo& local() const;
    // INIT -> RTR -> RTS with verbs::choose_qp_attrs; throws gangway::Error.
    void connect(const verbs::QpInfo& remote);
    // RDMA writes of `msg_bytes` into the peer's buffer for `ms`; payload
    // bytes per second as completed (RC: acknowledged by the peer). Throws
    // gangway::Error on a completion error (12: retry exceeded, the peer is
    // unreachable on this path).
    double write_for(long ms, std::size_t msg_bytes = std::size_t(8) << 20);

private:
    struct Impl;
    std::unique_ptr<Impl> p_;
};

}  // namespace gangway::sys
