#include "record.hpp"

namespace gangway::health {

const char* to_string(Check c) {
    switch (c) {
        case Check::gpu_count: return "gpu-count";
        case Check::gpu_driver: return "gpu-driver";
        case Check::gpu_model: return "gpu-model";
        case Check::nic_count: return "nic-count";
        case Check::port_count: return "port-count";
        case Check::pcie_speed: return "pcie-speed";
        case Check::pcie_width: return "pcie-width";
        case Check::port_state: return "port-state";
        case Check::port_phys: return "port-phys";
        case Check::port_rate: return "port-rate";
        case Check::port_errors: return "port-errors";
        case Check::gpu_nvml: return "gpu-nvml";
        case Check::gpu_pages: return "gpu-pages";
        case Check::gpu_rows: return "gpu-rows";
        case Check::gpu_ecc: return "gpu-ecc";
        case Check::gpu_nvlink: return "gpu-nvlink";
        case Check::gpu_xid: return "gpu-xid";
        case Check::cuda: return "cuda";
        case Check::nccl: return "nccl";
        case Check::rdma: return "rdma";
    }
    return "?";
}

std::optional<Check> parse_check(std::string_view name) {
    for (int i = 0; i <= static_cast<int>(Check::rdma); ++i)
        if (name == to_string(static_cast<Check>(i))) return static_cast<Check>(i);
    return std::nullopt;
}

bool retestable(Check c) {
    switch (c) {
        case Check::port_errors:
        case Check::gpu_xid:
        case Check::cuda:
        case Check::nccl:
        case Check::rdma: return false;
        default: return true;
    }
}

bool is_event(Check c) { return c == Check::gpu_xid; }

const char* to_string(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::failed: return "failed";
        case Status::skipped: return "skipped";
    }
    return "?";
}

Key key_of(const Record& r) { return {r.check, r.device}; }

bool any_failed(const std::vector<Record>& rs) {
    for (const auto& r : rs)
        if (r.status == Status::failed) return true;
    return false;
}

std::vector<const Record*> failed(const std::vector<Record>& rs, bool confirmed_only) {
    std::vector<const Record*> out;
    for (const auto& r : rs)
        if (r.status == Status::failed && (!confirmed_only || r.confirmed)) out.push_back(&r);
    return out;
}

}  // namespace gangway::health
