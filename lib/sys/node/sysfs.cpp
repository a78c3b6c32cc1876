#include "sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

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

namespace {

// A short sysfs attribute by plain POSIX calls: this runs in every
// slurmstepd, where an ifstream's first use (locale set-up) and
// std::filesystem cost about a millisecond, the scan itself microseconds.
bool read_hex(const std::string& path, unsigned long& out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[32];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    char* end = nullptr;
    out = std::strtoul(buf, &end, 16);
    return end != buf && (*end == '\0' || *end == '\n');
}

}  // namespace

bool pci_has_gpu(const std::string& root) {
    const std::string dir = sysfs_base(root) + "/sys/bus/pci/devices/";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return false;
    bool found = false;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        // "0x030200": class, subclass, programming interface; "0x10de".
        unsigned long cls = 0, vendor = 0;
        const std::string dev = dir + e->d_name;
        if (!read_hex(dev + "/class", cls) || (cls >> 16) != 0x03) continue;  // only display controllers
        if (!read_hex(dev + "/vendor", vendor)) continue;
        if (is_gpu_pci(static_cast<std::uint16_t>(vendor), static_cast<std::uint16_t>(cls >> 8))) {
            found = true;
            break;
        }
    }
    ::closedir(d);
    return found;
}

}  // namespace gangway::sys
