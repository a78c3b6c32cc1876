#include "sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "../../base/text.hpp"
#include "../../pin/topology.hpp"
#include "file.hpp"
#include "process_env.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;

std::string sysfs_root() { return env_or("GANGWAY_SYSFS_ROOT", "/"); }

std::string sysfs_base(const std::string& root) { return root == "/" ? std::string() : root; }

std::string first_line(const fs::path& p) {
    const auto text = read_attr(p.string());
    if (!text) return "";
    return std::string(trim_right(std::string_view(*text).substr(0, text->find('\n')), "\n\r "));
}

std::vector<fs::path> entries(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    std::sort(out.begin(), out.end(),
              [](const fs::path& a, const fs::path& b) { return natural_less(a.filename().string(), b.filename().string()); });
    return out;
}

std::optional<std::string> read_attr(const std::string& path) {
    // The kernel's attributes: links followed (sysfs is made of them), and
    // opened as the kernel means them to be. A configuration file a site
    // writes is never read here (a FIFO in its place would block): see
    // file.hpp's read_file.
    ReadOptions o{kMaxAttr};
    o.may_block = true;
    o.regular_only = false;
    auto r = read_file_at(AT_FDCWD, path, o);
    if (!r.ok()) return std::nullopt;
    r.text.erase(trim_right(r.text, "\n\r ").size());
    return std::move(r.text);
}

namespace {

std::optional<unsigned long> read_hex(const std::string& path) {
    auto s = read_attr(path);
    if (!s || s->empty()) return std::nullopt;
    // The kernel writes "0x10de": parse_uint does not take the prefix.
    std::string_view v = *s;
    if (v.starts_with("0x")) v.remove_prefix(2);
    return parse_uint<unsigned long>(v, 16);
}

}  // namespace

bool pci_has_gpu(const std::string& root) {
    const std::string dir = sysfs_base(root) + "/sys/bus/pci/devices/";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return false;
    bool found = false;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        // "0x030200": class, subclass, programming interface; only display controllers go on.
        const std::string dev = dir + e->d_name;
        const auto cls = read_hex(dev + "/class");
        if (!cls || (*cls >> 16) != 0x03) continue;
        const auto vendor = read_hex(dev + "/vendor");
        if (!vendor) continue;
        // The device id tells an onboard ES1000 from an AMD GPU (is_gpu_pci); only AMD's is read.
        const auto device = *vendor == 0x1002 ? read_hex(dev + "/device") : std::nullopt;
        if (is_gpu_pci(static_cast<std::uint16_t>(*vendor), static_cast<std::uint16_t>(device.value_or(0)),
                       static_cast<std::uint16_t>(*cls >> 8))) {
            found = true;
            break;
        }
    }
    ::closedir(d);
    return found;
}

}  // namespace gangway::sys
