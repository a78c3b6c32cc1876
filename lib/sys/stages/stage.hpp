// What every GPU and RDMA stage of this node returns, and the report's
// records made from it. The stages themselves: cuda_stage.hpp,
// nccl_stage.hpp, verbs_stage.hpp; all three at once: local_stages.hpp. Each returns a StageResult (name, status, detail,
// seconds) plus its findings, so the preflight can put it in its report. They
// run on nodes without CUDA, NCCL or RDMA devices: the libraries are loaded
// with dlopen, and a stage without its hardware is "skipped: no GPUs" /
// "skipped: no RDMA devices", or "failed" when it is required
// (GANGWAY_REQUIRE, --require). Each runs under the one deadline wrapper,
// run_bounded (lib/sys/run/deadline.hpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../../preflight/gpu_checks.hpp"
#include "../../preflight/rdma_checks.hpp"
#include "../../preflight/report.hpp"
#include "../run/deadline.hpp"

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

// A stage under run_bounded(): its outcome, or one with the aborted result.
StageOutcome with_deadline(const std::string& name, double seconds, std::function<StageOutcome()> fn);

}  // namespace gangway::sys
