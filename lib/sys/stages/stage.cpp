// What the stages share: outcomes, the report's device records, deadlines.
#include "stage.hpp"

#include <chrono>
#include <cstdio>
#include <exception>

namespace gangway::sys {
using preflight::StageStatus;

preflight::GpuRecord gpu_record(unsigned node, const gpu::GpuResult& g) {
    return {node, g.index, g.name, g.bus_id, g.error, g.pcie_gen, g.pcie_width, g.h2d_gbps, g.d2h_gbps};
}

preflight::NcclRecord nccl_record(unsigned node, const gpu::NcclResult& r) {
    preflight::NcclRecord n{node, r.nranks, r.bytes, std::nullopt, std::nullopt, r.data_ok, r.error};
    if (r.error.empty() && r.seconds > 0) {
        n.algbw_gbps = gpu::algbw_gbps(r.bytes, r.seconds);
        n.busbw_gbps = gpu::allreduce_busbw_gbps(*n.algbw_gbps, r.nranks);
    }
    return n;
}

void add_device_records(const StageOutcome& o, unsigned node, preflight::Report& rep) {
    for (const auto& g : o.gpus) rep.gpus.push_back(gpu_record(node, g));
    for (const auto& r : o.nccl_runs) rep.nccl.push_back(nccl_record(node, r));
    for (const auto& p : o.ports)
        rep.ports.push_back({node, p.hca + "/" + std::to_string(p.port), p.rate_gbps, verbs::port_up(p)});
}

StageOutcome to_outcome(const std::string& name, const gpu::StageVerdict& v, double seconds) {
    StageOutcome o;
    o.result = {name, v.status, v.detail, seconds};
    o.findings = v.findings;
    return o;
}

StageOutcome with_deadline(const std::string& name, double seconds, std::function<StageOutcome()> fn) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        if (auto o = within<StageOutcome>(seconds, std::move(fn))) return *o;
    } catch (const std::exception& e) {
        // An exception that escaped a stage is gangway's own fault (the stages turn what
        // the hardware says into a verdict themselves), never evidence against the node:
        // aborted, as a deadline is, so that the node check counts it as inconclusive and
        // no number of internal errors drains a node.
        StageOutcome o;
        o.result = {name, StageStatus::aborted, std::string("internal error: ") + e.what(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
        return o;
    }
    StageOutcome o;
    char b[96];
    std::snprintf(b, sizeof b, "did not finish within %.0f s (a GPU, driver or HCA is hung)", seconds);
    o.result = {name, StageStatus::aborted, b, seconds};
    return o;
}

}  // namespace gangway::sys
