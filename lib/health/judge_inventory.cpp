// What the node has against what it should have: GPUs, their models, compute
// NICs and ports.
#include "judge.hpp"

namespace gangway::health {

Expected expected_from(const SiteConf& c, const GresGpus& slurm_conf, const GresGpus& gres_conf) {
    Expected e;
    if (c.gpus) {
        e.gpus = c.gpus;
        e.gpus_source = "node-check.conf";
    } else if (slurm_conf.count) {
        e.gpus = slurm_conf.count;
        e.gpus_source = slurm_conf.source;
    } else if (gres_conf.count) {
        e.gpus = gres_conf.count;
        e.gpus_source = gres_conf.source;
    }
    if (!c.gpu_model.empty()) {
        e.model = c.gpu_model;
        e.model_source = "node-check.conf";
    } else if (slurm_conf.count && !slurm_conf.type.empty()) {
        e.model = slurm_conf.type;
        e.model_source = slurm_conf.source;
    } else if (gres_conf.count && !gres_conf.type.empty()) {
        e.model = gres_conf.type;
        e.model_source = gres_conf.source + " Type=";
    }
    e.nics = c.nics;
    e.ports = c.ports;
    return e;
}

namespace {

Record count_record(Check c, const char* what, std::size_t have, std::optional<unsigned> want, const std::string& source) {
    Record r{c, "node", std::to_string(have), what, want ? std::to_string(*want) : "", Status::ok, "", false};
    if (want && have < *want) {
        r.status = Status::failed;
        r.reason = std::string(what) + " " + std::to_string(have) + " of " + std::to_string(*want) + " (" + source + ")";
    }
    return r;
}

}  // namespace

std::vector<Record> judge_inventory(const std::vector<GpuFacts>& gpus, const std::vector<NicFacts>& nics,
                                    const std::vector<PortFacts>& ports, const Expected& e) {
    std::vector<Record> out;
    out.push_back(count_record(Check::gpu_count, "gpus", gpus.size(), e.gpus, e.gpus_source));
    if (!e.model.empty()) {
        bool any = false;
        for (const auto& g : gpus) {
            if (g.model.empty()) continue;
            any = true;
            Record r{Check::gpu_model, "gpu " + g.pci.bus_id, g.model, "", e.model, Status::ok, "", false};
            if (!model_matches(g.model, e.model)) {
                r.status = Status::failed;
                r.reason = "gpu " + g.pci.bus_id + " is a " + g.model + ", not " + e.model + " (" + e.model_source + ")";
            }
            out.push_back(std::move(r));
        }
        if (!any && !gpus.empty())
            out.push_back({Check::gpu_model, "node", "", "", e.model, Status::skipped,
                           "the GPUs' models are unknown: neither NVML nor CUDA could be asked", false});
    }
    if (e.nics) out.push_back(count_record(Check::nic_count, "nics", nics.size(), e.nics, "node-check.conf"));
    if (e.ports) out.push_back(count_record(Check::port_count, "ports", ports.size(), e.ports, "node-check.conf"));
    return out;
}

}  // namespace gangway::health
