// What the stages share: outcomes, the report's device records, their deadline.
#include "stage.hpp"

namespace gangway::sys {

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
        rep.ports.push_back({node, verbs::port_name(p), p.rate_gbps, verbs::port_up(p)});
}

StageOutcome to_outcome(const std::string& name, const gpu::StageVerdict& v, double seconds) {
    StageOutcome o;
    o.result = {name, v.status, v.detail, seconds};
    o.findings = v.findings;
    return o;
}

StageOutcome with_deadline(const std::string& name, double seconds, std::function<StageOutcome()> fn) {
    auto b = run_bounded<StageOutcome>(name, seconds, std::move(fn), " (a GPU, driver or HCA is hung)");
    if (b.value) return std::move(*b.value);
    StageOutcome o;
    o.result = std::move(b.aborted);
    return o;
}

}  // namespace gangway::sys
