#include "topology_file.hpp"

#include <fcntl.h>

#include <cerrno>

#include "../../base/error.hpp"
#include "file.hpp"

namespace gangway::sys {
namespace {

// ENOENT is "not there" (the caller tries the next place); anything else fails.
Result<std::string> read_config(const std::string& path, bool& absent) {
    // Not blocking: a FIFO put in the file's place is refused at once instead
    // of holding the step's launch. Links are followed: configless SLURM and
    // sites link their configuration files.
    ReadOptions o{kMaxTopologyFileBytes};
    auto r = read_file_at(AT_FDCWD, path, o);
    absent = r.problem == ReadProblem::open && r.err == ENOENT;
    if (r.problem == ReadProblem::too_large)
        return Failure{path + " is larger than " + std::to_string(kMaxTopologyFileBytes >> 20) + " MiB"};
    if (!r.ok()) return Failure{describe(path, r, o)};
    return std::move(r.text);
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
