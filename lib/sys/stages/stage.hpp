// What every GPU and RDMA stage of this node returns, the report's records
// made from it, and the deadline each stage runs under. The stages themselves:
// cuda_stage.hpp, nccl_stage.hpp, verbs_stage.hpp; all three at once:
// local_stages.hpp. Each returns a StageResult (name, status, detail,
// seconds) plus its findings, so the preflight can put it in its report. They
// run on nodes without CUDA, NCCL or RDMA devices: the libraries are loaded
// with dlopen, and a stage without its hardware is "skipped: no GPUs" /
// "skipped: no RDMA devices", or "failed" when it is required
// (GANGWAY_REQUIRE, --require).
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
#include "../../preflight/rdma_checks.hpp"
#include "../../preflight/report.hpp"

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
// exception from fn comes out of this call. Use run_bounded() below, which
// applies the one rule to both.
template <class T>
std::optional<T> within(double seconds, std::function<T()> fn) {
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(fn));
    auto fut = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    if (fut.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) return std::nullopt;
    return fut.get();
}

// What a part run under a deadline gave: its value, or, without one, the
// "aborted" result that says why (the report's stage line).
template <class T>
struct Bounded {
    std::optional<T> value;
    preflight::StageResult aborted;  // when !value
    double took_s = 0;
};

// The one deadline wrapper of the stages and of the node check's parts
// (lib/sys/health/parts.hpp), with one rule: past `seconds`, or when fn
// throws, the part is "aborted" (the node check's inconclusive), never
// "failed": neither a hang we cannot interrupt nor our own internal error is
// evidence that the node is bad, so no number of them drains a node. What the
// hardware reports, the parts turn into a verdict themselves. `hung`: what a
// deadline probably means, after "did not finish within N s".
preflight::StageResult deadline_passed(const std::string& name, double seconds, double took_s, const std::string& hung);
preflight::StageResult internal_error(const std::string& name, const std::string& what, double took_s);
preflight::StageResult not_started(const std::string& name);  // too little of the deadline left to start

template <class T>
Bounded<T> run_bounded(const std::string& name, double seconds, std::function<T()> fn, const std::string& hung = "") {
    const auto t0 = std::chrono::steady_clock::now();
    auto took = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    Bounded<T> b;
    try {
        b.value = within<T>(seconds, std::move(fn));
        if (!b.value) b.aborted = deadline_passed(name, seconds, took(), hung);
    } catch (const std::exception& e) {
        b.aborted = internal_error(name, e.what(), took());
    } catch (...) {
        b.aborted = internal_error(name, "an exception of unknown type", took());
    }
    b.took_s = took();
    return b;
}

// A stage under run_bounded(): its outcome, or one with the aborted result.
StageOutcome with_deadline(const std::string& name, double seconds, std::function<StageOutcome()> fn);

}  // namespace gangway::sys
