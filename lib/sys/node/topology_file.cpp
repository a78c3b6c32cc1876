#include "topology_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../../base/error.hpp"
#include "../fd.hpp"

namespace gangway::sys {
namespace {

// ENOENT is "not there" (the caller tries the next place); anything else fails.
Result<std::string> read_config(const std::string& path, bool& absent) {
    absent = false;
    // O_NONBLOCK: a FIFO put in the file's place returns at once instead of
    // holding the step's launch. Links are followed: configless SLURM and
    // sites link their configuration files.
    Fd f(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (f.get() < 0) {
        absent = errno == ENOENT;
        return Failure{path + ": " + std::strerror(errno)};
    }
    struct stat st{};
    if (::fstat(f.get(), &st) != 0) return Failure{path + ": " + std::strerror(errno)};
    if (!S_ISREG(st.st_mode)) return Failure{path + " is not a regular file"};
    if (static_cast<unsigned long long>(st.st_size) > kMaxTopologyFileBytes)
        return Failure{path + " is larger than " + std::to_string(kMaxTopologyFileBytes >> 20) + " MiB"};
    // The file's size and one byte (to see it grew), not the limit: 16 MiB
    // zeroed in every step cost each node's slurmstepd some 60 ms.
    std::string out(static_cast<std::size_t>(st.st_size) + 1, '\0');
    std::size_t got = 0;
    while (got < out.size()) {
        const ssize_t n = ::read(f.get(), out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Failure{path + ": " + std::strerror(errno)};
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        // Grown since fstat: read on, up to the limit.
        if (got == out.size() && out.size() <= kMaxTopologyFileBytes)
            out.resize(std::min(out.size() * 2, kMaxTopologyFileBytes + 1));
    }
    if (got > kMaxTopologyFileBytes)
        return Failure{path + " is larger than " + std::to_string(kMaxTopologyFileBytes >> 20) + " MiB"};
    out.resize(got);
    return out;
}

bool yaml_name(const std::string& p) {
    return p.size() >= 5 && (p.ends_with(".yaml") || p.ends_with(".yml"));
}

Result<LoadedTopology> parse_file(const std::string& path, const std::string& text) {
    try {
        return LoadedTopology{path, parse_switch_topology(text, yaml_name(path) ? TopologyFormat::Yaml : TopologyFormat::Conf)};
    } catch (const Error& e) {
        return Failure{path + ": " + e.what()};
    }
}

}  // namespace

Result<LoadedTopology> load_switch_topology(const std::string& configured, const std::string& slurm_conf) {
    bool absent = false;
    if (!configured.empty()) {
        auto text = read_config(configured, absent);
        if (!text) return Failure{"topology_file=" + text.error() + "; ask your SLURM administrator"};
        return parse_file(configured, *text);
    }
    const std::string conf = slurm_conf.empty() ? "/etc/slurm/slurm.conf" : slurm_conf;
    const auto slash = conf.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "" : conf.substr(0, slash);
    // SLURM's own rule: topology.yaml wins where both exist.
    for (const char* name : {"topology.yaml", "topology.conf"}) {
        const std::string path = dir + "/" + name;
        auto text = read_config(path, absent);
        if (absent) continue;
        if (!text) return Failure{text.error()};
        return parse_file(path, *text);
    }
    return Failure{"no topology.yaml or topology.conf in " + (dir.empty() ? std::string("/") : dir) +
                   " (next to slurm.conf): rank_order=topology needs SLURM's topology/tree or topology/block "
                   "description, or topology_file= naming one"};
}

}  // namespace gangway::sys
