#include "sysfs.hpp"

#include <algorithm>
#include <fstream>

#include "../../base/text.hpp"
#include "../../pin/topology.hpp"
#include "process_env.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;

std::string sysfs_root() { return env_or("GANGWAY_SYSFS_ROOT", "/"); }

std::string sysfs_base(const std::string& root) { return root == "/" ? std::string() : root; }

std::string first_line(const fs::path& p) {
    std::ifstream in(p);
    std::string s;
    if (!in || !std::getline(in, s)) return "";
    s.erase(trim_right(s, "\n\r ").size());
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
    // The kernel writes both in hex with a "0x" prefix, which parse_uint does not take.
    auto hex = [](std::string_view s) {
        if (s.starts_with("0x")) s.remove_prefix(2);
        return parse_uint<unsigned long>(s, 16);
    };
    for (const auto& dev : entries(sysfs_base(root) + "/sys/bus/pci/devices")) {
        // "0x10de", "0x030200" (class, subclass, programming interface).
        const auto v = hex(first_line(dev / "vendor"));
        if (!v) continue;
        const auto c = hex(first_line(dev / "class"));
        if (!c) continue;
        if (is_gpu_pci(static_cast<std::uint16_t>(*v), static_cast<std::uint16_t>(*c >> 8))) return true;
    }
    return false;
}

}  // namespace gangway::sys
