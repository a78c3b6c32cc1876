#include "pci_link.hpp"

#include "../../base/pci_bus_id.hpp"
#include "../../base/text.hpp"
#include "../../preflight/gpu_checks.hpp"  // pcie_gen_from_speed
#include "../node/pci_devices.hpp"
#include "../node/sysfs.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;
namespace {

int width_attr(const fs::path& p) {
    const auto v = parse_uint<unsigned>(first_line(p));
    return v ? static_cast<int>(*v) : -1;
}

LinkEnd link_end(const fs::path& dev) {
    LinkEnd l;
    l.cur_gen = gpu::pcie_gen_from_speed(first_line(dev / "current_link_speed"));
    l.max_gen = gpu::pcie_gen_from_speed(first_line(dev / "max_link_speed"));
    l.cur_width = width_attr(dev / "current_link_width");
    l.max_width = width_attr(dev / "max_link_width");
    return l;
}

// A sysfs PCI device name ("0000:17:00.0"): what the one bus-id parser
// (pci_bus_id) writes back unchanged.
bool is_bus_id(const std::string& s) {
    const auto b = pci_bus_id(s);
    return b && *b == s;
}

PciDevice device_at(const fs::path& dev_dir, const std::string& bus_id) {
    PciDevice d;
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

PciDevice read_pci_link(const std::string& root, const std::string& bus_id) {
    return device_at(fs::path(pci_devices_dir(root)) / bus_id, bus_id);
}

PciDevice read_pci_link_at(const fs::path& device_link) {
    std::error_code ec;
    const fs::path real = fs::canonical(device_link, ec);
    const std::string bus = !ec && is_bus_id(real.filename().string()) ? real.filename().string() : "";
    return device_at(device_link, bus);
}

}  // namespace gangway::sys
