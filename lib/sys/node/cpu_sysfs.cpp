#include "cpu_sysfs.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "sysfs.hpp"

namespace gangway::sys {
namespace {

// A kernel cpu list ("0-3,8"), empty for an empty file; nullopt when it
// cannot be read or parsed (the caller falls back to hwloc, which may know better).
std::optional<CpuList> read_list(const std::string& path) {
    const auto text = read_attr(path);
    if (!text) return std::nullopt;
    if (text->empty()) return CpuList{};
    try {
        return parse_cpu_list(*text);
    } catch (const Error&) {
        return std::nullopt;
    }
}

struct CoreAt {
    int package;
    CpuList pus;
};

}  // namespace

std::optional<Topology> read_cpu_topology(const std::string& root) {
    const std::string sys = sysfs_base(root) + "/sys/devices/system/";
    const auto online = read_list(sys + "cpu/online");
    if (!online || online->empty()) return std::nullopt;

    // One core_cpus_list per core (its siblings are skipped), and its first
    // PU's package id; offline siblings are dropped, as hwloc drops them.
    std::vector<CoreAt> cores;
    std::map<int, CpuList> package_cpus;
    std::set<unsigned> seen;
    for (unsigned cpu : *online) {
        if (seen.count(cpu)) continue;
        const std::string dir = sys + "cpu/cpu" + std::to_string(cpu) + "/topology/";
        auto siblings = read_list(dir + "core_cpus_list");
        if (!siblings) siblings = read_list(dir + "thread_siblings_list");  // kernels before 5.4
        const auto package_text = read_attr(dir + "physical_package_id");
        const auto package = package_text ? parse_int<int>(*package_text) : std::nullopt;
        if (!siblings || !package || *package < 0) return std::nullopt;
        CpuList pus = intersect(*siblings, *online);
        if (!std::binary_search(pus.begin(), pus.end(), cpu)) return std::nullopt;
        for (unsigned pu : pus)
            if (!seen.insert(pu).second) return std::nullopt;  // two cores claim one PU
        package_cpus[*package] = unite(package_cpus[*package], pus);
        cores.push_back({*package, std::move(pus)});
    }

    Topology topo;
    for (auto& [os, cpus] : package_cpus) topo.packages.push_back({static_cast<unsigned>(os), cpus});

    const auto nodes = read_list(sys + "node/online");
    if (!nodes || nodes->empty()) return std::nullopt;
    std::map<unsigned, std::size_t> node_of;  // PU -> index of its NUMA node in topo.numa_nodes
    for (unsigned n : *nodes) {
        const auto listed = read_list(sys + "node/node" + std::to_string(n) + "/cpulist");
        if (!listed) return std::nullopt;
        CpuList cpus = intersect(*listed, *online);
        if (cpus.empty()) return std::nullopt;  // memory-only node: hwloc's attachment rules
        int package = -1;
        for (const auto& p : topo.packages)
            if (std::includes(p.cpus.begin(), p.cpus.end(), cpus.begin(), cpus.end())) package = static_cast<int>(p.os);
        // A node over some packages but not all sits in a Group of hwloc's
        // above them: its order rules are hwloc's to apply.
        if (package < 0 && cpus.size() != online->size()) return std::nullopt;
        for (unsigned c : cpus)
            if (!node_of.emplace(c, topo.numa_nodes.size()).second) return std::nullopt;  // two nodes claim a CPU
        topo.numa_nodes.push_back({n, package, std::move(cpus)});
    }
    if (node_of.size() != online->size()) return std::nullopt;  // a CPU in no NUMA node

    // SLURM numbers cores in hwloc's logical order: a depth-first walk of
    // hwloc's tree, whose siblings are ordered by their first PU. Here that
    // tree is package, then the Group of a NUMA node smaller than its package
    // (SNC, NPS; no such level otherwise), then core.
    std::map<int, const Package*> package_of;
    for (const auto& p : topo.packages) package_of[static_cast<int>(p.os)] = &p;
    auto key = [&](const CoreAt& c) {
        const Package& p = *package_of.at(c.package);
        const CpuList& node = topo.numa_nodes[node_of.at(c.pus.front())].cpus;
        const unsigned group = node.size() < p.cpus.size() ? node.front() : p.cpus.front();
        return std::tuple(p.cpus.front(), group, c.pus.front());
    };
    std::sort(cores.begin(), cores.end(), [&](const CoreAt& a, const CoreAt& b) { return key(a) < key(b); });

    std::map<unsigned, Pu> pus;
    for (const auto& core : cores) {
        const auto index = static_cast<unsigned>(topo.cores.size());
        for (unsigned pu : core.pus) pus[pu] = Pu{pu, index, -1, -1};
        topo.cores.push_back(Core{core.pus});
    }
    set_pus(topo, std::move(pus));
    return topo;
}

}  // namespace gangway::sys
