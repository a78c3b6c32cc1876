#include "sysfs.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "../../pin/topology.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;

std::string sysfs_root() {
    const char* r = std::getenv("GANGWAY_SYSFS_ROOT");
    return r && *r ? r : "/";
}

std::string sysfs_base(const std::string& root) { return root == "/" ? std::string() : root; }

std::string first_line(const fs::path& p) {
    std::ifstream in(p);
    std::string s;
    if (!in || !std::getline(in, s)) return "";
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

std::vector<fs::path> entries(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    std::sort(out.begin(), out.end(),
              [](const fs::path& a, const fs::path& b) { return natural_less(a.filename().string(), b.filename().string()); });
    return out;
}

bool pci_has_gpu(const std::string& root) {
    for (const auto& dev : entries(sysfs_base(root) + "/sys/bus/pci/devices")) {
        // "0x10de", "0x030200" (class, subclass, programming interface).
        const std::string vendor = first_line(dev / "vendor"), cls = first_line(dev / "class");
        char* end = nullptr;
        const unsigned long v = std::strtoul(vendor.c_str(), &end, 16);
        if (vendor.empty() || *end) continue;
        const unsigned long c = std::strtoul(cls.c_str(), &end, 16);
        if (cls.empty() || *end) continue;
        if (is_gpu_pci(static_cast<std::uint16_t>(v), static_cast<std::uint16_t>(c >> 8))) return true;
    }
    return false;
}

}  // namespace gangway::sys
