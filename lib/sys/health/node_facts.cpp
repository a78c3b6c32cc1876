#include "node_facts.hpp"

#include <algorithm>
#include <filesystem>

#include "../../base/text.hpp"
#include "../../pin/topology.hpp"
#include "../node/hwloc_topology.hpp"
#include "../devices/ib_ports.hpp"
#include "../node/pci_devices.hpp"
#include "../devices/pci_link.hpp"
#include "../node/sysfs.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;
std::vector<health::GpuFacts> read_pci_gpus(const std::string& root) {
    std::vector<health::GpuFacts> out;
    for (const auto& f : pci_gpus(root)) {
        health::GpuFacts g;
        g.pci = read_pci_link(root, f.bus_id);
        g.vendor = f.vendor;
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<std::string> compute_rdma_nics(const std::string& root, const NicFilter& filter) {
    auto listed = [](const std::vector<std::string>& l, const std::string& n) { return std::find(l.begin(), l.end(), n) != l.end(); };
    std::vector<std::string> out;
    if (root == "/") {
        if (auto t = load_live_topology()) {
            // As if every port were up: a compute NIC whose port is down is what this check is for.
            for (auto& n : t->nics)
                for (auto& p : n.ports) p.state = 4;
            for (const auto& n : compute_nics(*t, filter))
                if (n.rdma && !listed(out, n.name)) out.push_back(n.name);
            return out;
        }
        // no topology: every RDMA device below
    }
    for (const auto& name : ib_devices(root)) {
        if (listed(filter.exclude, name)) continue;
        if (!filter.include.empty() && !listed(filter.include, name)) continue;
        out.push_back(name);
    }
    return out;
}

std::vector<health::NicFacts> read_nic_facts(const std::string& root, const std::vector<std::string>& nics) {
    std::vector<health::NicFacts> out;
    for (const auto& n : nics) {
        out.push_back({n, read_pci_link_at(fs::path(ib_class_dir(root)) / n / "device")});
    }
    return out;
}

std::vector<health::PortFacts> read_ports(const std::string& root, const std::vector<std::string>& nics) {
    std::vector<health::PortFacts> out;
    if (nics.empty()) return out;
    for (auto& p : read_ib_ports(root, nics)) {
        health::PortFacts f;
        const fs::path counters = fs::path(ib_port_dir(root, p.hca, p.port)) / "counters";
        for (const char* k : health::kErrorCounters)
            if (const auto v = parse_uint<std::uint64_t>(first_line(counters / k))) f.counters[k] = *v;
        f.port = std::move(p);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace gangway::sys
