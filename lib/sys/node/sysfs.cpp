#include "sysfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "../../base/text.hpp"
#include "../../pin/topology.hpp"  // natural_less
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

}  // namespace gangway::sys
