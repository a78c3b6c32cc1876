#include "pci_devices.hpp"

#include <dirent.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>

#include "../../base/text.hpp"
#include "../../pin/topology.hpp"
#include "sysfs.hpp"

namespace gangway::sys {
namespace {

// A hex attribute: the kernel writes "0x10de", parse_uint takes no prefix.
std::optional<unsigned long> read_hex(const std::string& path) {
    const auto s = read_attr(path);
    if (!s) return std::nullopt;
    std::string_view v = trim_right(*s, "\n\r ");
    if (v.starts_with("0x")) v.remove_prefix(2);
    if (v.empty()) return std::nullopt;
    return parse_uint<unsigned long>(v, 16);
}

// A GPU is a display controller (class 0x03), so the class is read first and
// the other functions (bridges, NICs, NVMe: most of a node's) cost one read.
std::optional<PciFunction> gpu_at(const std::string& dir, const char* name) {
    const std::string dev = dir + name;
    const auto cls = read_hex(dev + "/class");
    if (!cls || (*cls >> 16) != 0x03) return std::nullopt;
    const auto vendor = read_hex(dev + "/vendor");
    if (!vendor) return std::nullopt;
    PciFunction f;
    f.bus_id = name;
    f.vendor = static_cast<std::uint16_t>(*vendor);
    f.device = static_cast<std::uint16_t>(read_hex(dev + "/device").value_or(0));
    f.pci_class = static_cast<std::uint32_t>(*cls);
    // The device id tells an onboard ES1000 from an AMD GPU (is_gpu_pci).
    if (!is_gpu_pci(f.vendor, f.device, static_cast<std::uint16_t>(f.pci_class >> 8))) return std::nullopt;
    return f;
}

}  // namespace

std::string pci_devices_dir(const std::string& root) { return sysfs_base(root) + "/sys/bus/pci/devices"; }

void each_pci_gpu(const std::string& root, const std::function<bool(const PciFunction&)>& visit) {
    // readdir, not std::filesystem: this runs in every slurmstepd (pci_has_gpu).
    const std::string dir = pci_devices_dir(root) + "/";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (auto f = gpu_at(dir, e->d_name); f && !visit(*f)) break;
    }
    ::closedir(d);
}

std::vector<PciFunction> pci_gpus(const std::string& root) {
    std::vector<PciFunction> out;
    each_pci_gpu(root, [&](const PciFunction& f) {
        out.push_back(f);
        return true;
    });
    std::sort(out.begin(), out.end(), [](const PciFunction& a, const PciFunction& b) { return natural_less(a.bus_id, b.bus_id); });
    return out;
}

bool pci_has_gpu(const std::string& root) {
    // The first GPU answers: nothing collected, nothing sorted (the plugin links this alone).
    bool found = false;
    each_pci_gpu(root, [&](const PciFunction&) {
        found = true;
        return false;
    });
    return found;
}

}  // namespace gangway::sys
