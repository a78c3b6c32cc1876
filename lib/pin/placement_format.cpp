#include "placement_format.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "../base/text.hpp"

namespace gangway {

namespace {

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

}  // namespace

std::string format_placement_json(const Placement& plan) {
    std::string out = "{\"tasks\":[";
    bool first = true;
    for (const auto& t : plan.tasks) {
        out += first ? "" : ",";
        first = false;
        out += "{\"local_rank\":" + std::to_string(t.local_rank);
        out += ",\"gpus\":[" + join(t.gpus, ",", json_string) + "]";
        out += ",\"nics\":[" + join(t.nics, ",", [](const NicChoice& n) { return json_string(n.name); }) + "]";
        out += ",\"cpus\":[" + join(t.cpus, ",", [](unsigned c) { return std::to_string(c); }) + "]";
        out += ",\"numa\":" + (t.numa < 0 ? std::string("null") : std::to_string(t.numa));
        out += ",\"distance\":" + (t.distance ? json_string(to_string(*t.distance)) : std::string("null")) + "}";
    }
    out += "],\"nccl_ib_hca\":" + json_string(plan.nccl_ib_hca) + "}";
    return out;
}

const char* nic_reason(const TaskPlacement& t) {
    if (t.nics.empty() || !t.distance) return "-";
    const bool fallback = std::any_of(t.nics.begin(), t.nics.end(), [](const NicChoice& n) { return n.fallback; });
    if (t.gpus.empty()) return fallback ? "fallback, nearest fabric NIC to its NUMA node" : "nearest to its NUMA node";
    if (fallback) return "fallback: no NIC on any GPU's switch, nearest fabric NIC";
    if (*t.distance == PciDistance::Switch) return "on its GPU's PCIe switch";
    return "none on its GPU's switch, nearest compute NIC";
}

std::string format_placement_table(const Placement& plan) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"task", "GPU", "NIC", "netdev", "NUMA", "cores", "PCIe distance", "why this NIC"});
    for (const auto& t : plan.tasks) {
        auto dash = [](std::string s) { return s.empty() ? std::string("-") : s; };
        rows.push_back({
            std::to_string(t.local_rank),
            dash(join(t.gpus, ",")),
            dash(join(t.nics, ",", [](const NicChoice& n) { return ucx_device(n); })),
            dash(join(t.nics, ",", [](const NicChoice& n) { return n.netdev.empty() ? std::string("-") : n.netdev; })),
            t.numa < 0 ? std::string("-") : std::to_string(t.numa),
            dash(format_cpu_list(t.cpus)),
            t.distance ? to_string(*t.distance) : "-",
            nic_reason(t),
        });
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    out += "NCCL_IB_HCA=" + plan.nccl_ib_hca + "\n";
    return out;
}

std::string format_placement_notes(const Topology& topo, const NicFilter& filter, const Placement& plan) {
    std::string out;
    if (!topo.gpus.empty()) out += std::string("GPU indexes: ") + describe(topo.gpu_order) + "\n";
    std::set<std::string> used;
    for (const auto& t : plan.tasks)
        for (const auto& n : t.nics) used.insert(n.name);
    // A version 1 cache kept no NIC ids: a Slingshot NIC named other than
    // cxiN/hsnN is then no fabric NIC (is_fabric_nic_pci cannot tell).
    if (std::any_of(topo.nics.begin(), topo.nics.end(), [](const Nic& n) { return !n.rdma && n.vendor == 0; }))
        out += "NIC PCI ids unknown (a topology cache written before gangway kept them): a NIC without an RDMA device "
               "counts as a fabric NIC only by its name (cxi*, hsn*); rewrite the cache with `gangway topo "
               "--write-cache FILE`\n";
    for (const auto& v : nic_verdicts(topo, filter)) {
        if (used.count(v.nic->name)) continue;
        const bool compute = v.role == NicRole::Compute || v.role == NicRole::Fallback;
        out += "NIC " + v.nic->name + (v.nic->netdev.empty() || v.nic->netdev == v.nic->name ? "" : " (" + v.nic->netdev + ")") +
               " not used: " +
               (compute ? std::string(to_string(v.role)) + ", but no task here is nearer to it than to another"
                        : std::string(to_string(v.role))) +
               "\n";
    }
    return out;
}

}  // namespace gangway
