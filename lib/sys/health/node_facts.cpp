#include "node_facts.hpp"

#include <algorithm>
#include <filesystem>

#include "../../base/text.hpp"
#include "../../health/xid.hpp"  // pci_bus_id
#include "../../pin/topology.hpp"
#include "../../preflight/gpu_checks.hpp"
#include "../node/hwloc_topology.hpp"
#include "../node/ib_ports.hpp"
#include "../node/pci_devices.hpp"
#include "../node/sysfs.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;
namespace {

int width_attr(const fs::path& p) {
    const auto v = parse_uint<unsigned>(first_line(p));
    return v ? static_cast<int>(*v) : -1;
}

health::LinkEnd link_end(const fs::path& dev) {
    health::LinkEnd l;
    l.cur_gen = gpu::pcie_gen_from_speed(first_line(dev / "current_link_speed"));
    l.max_gen = gpu::pcie_gen_from_speed(first_line(dev / "max_link_speed"));
    l.cur_width = width_attr(dev / "current_link_width");
    l.max_width = width_attr(dev / "max_link_width");
    return l;
}

// A sysfs PCI device name ("0000:17:00.0"): what the one bus-id parser
// (health::pci_bus_id) writes back unchanged.
bool is_bus_id(const std::string& s) {
    const auto b = health::pci_bus_id(s);
    return b && *b == s;
}

health::PciDevice device_at(const fs::path& dev_dir, const std::string& bus_id) {
    health::PciDevice d;
    d.bus_id = bus_id;
    d.link = link_end(dev_dir);
    // The bridge port above the device is its parent in /sys/devices; the
    // devices/ entries are links to there. A fixture may hold plain directories.
    std::error_code ec;
    const fs::path real = fs::canonical(dev_dir, ec);
    if (!ec) {
        const fs::path parent = real.parent_path();
        if (is_bus_id(parent.filename().string()) && !first_line(parent / "max_link_width").empty())
            d.upstream = link_end(parent);
    }
    return d;
}

}  // namespace

std::vector<health::GpuFacts> read_pci_gpus(const std::string& root) {
    std::vector<health::GpuFacts> out;
    const fs::path dir = pci_devices_dir(root);
    for (const auto& f : pci_gpus(root)) {
        health::GpuFacts g;
        g.pci = device_at(dir / f.bus_id, f.bus_id);
        g.vendor = f.vendor;
        out.push_back(std::move(g));
    }
    return out;
}

health::PciDevice read_pci_link(const std::string& root, const std::string& bus_id) {
    return device_at(fs::path(pci_devices_dir(root)) / bus_id, bus_id);
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
        const fs::path dev = fs::path(ib_class_dir(root)) / n / "device";
        std::error_code ec;
        const fs::path real = fs::canonical(dev, ec);
        const std::string bus = !ec && is_bus_id(real.filename().string()) ? real.filename().string() : "";
        out.push_back({n, device_at(dev, bus)});
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
