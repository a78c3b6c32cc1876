// `gangway topo`: the pinning plan the plugin would apply on this node (or on
// a saved topology), and writing the node-local topology cache.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/pin/placement.hpp"
#include "../lib/pin/placement_format.hpp"
#include "../lib/sys/node/hwloc_topology.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

const char* kUsage =
    "usage: gangway topo [--topology FILE] [--tasks N] [--gpus LIST|none] [--cpus LIST]\n"
    "                    [--include NICS] [--exclude NICS] [--json]\n"
    "       gangway topo [--topology FILE] --write-cache FILE\n"
    "Prints which GPU(s), NIC and cores each local task gets: the NIC on its GPU's PCIe\n"
    "switch (else the nearest by host bridge, NUMA node, socket; with no NIC on any GPU's\n"
    "switch, the nearest fabric NIC) and the cores of its GPU's NUMA node inside the\n"
    "cpuset, plus the node-wide NCCL_IB_HCA, SLURM's GPU order here and why each unused\n"
    "NIC is not used.\n"
    "  --topology FILE  an hwloc XML (lstopo --of xml) or a gangway cache; default: this machine\n"
    "  --tasks N        local tasks (default: one per GPU, 1 without GPUs)\n"
    "  --gpus LIST      the step's GPUs as SLURM indexes (default: all); NVIDIA in PCI bus id\n"
    "                   order, AMD in RSMI order where the topology records it\n"
    "  --cpus LIST      the step's cpuset, PU OS indexes like 0-13,112-125 (default: all)\n"
    "  --include NICS   site list: only these are compute NICs (mlx5_0,mlx5_3)\n"
    "  --exclude NICS   site list: never these\n"
    "  --json           one line of JSON instead of the table\n"
    "  --write-cache F  write the topology to the cache file F and exit";

}  // namespace

int cmd_topo(int argc, char** argv) {
    std::string topology, write_cache, gpus, cpus;
    long tasks = -1;
    bool json = false;
    NicFilter filter;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "gangway topo: %s needs a value; see `gangway topo --help`\n", a.c_str());
                return nullptr;
            }
            return argv[++i];
        };
        const char* v = nullptr;
        if (a == "--help" || a == "-h") {
            std::puts(kUsage);
            return 0;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--topology" || a == "--write-cache" || a == "--tasks" || a == "--gpus" || a == "--cpus" ||
                   a == "--include" || a == "--exclude") {
            if (!(v = value())) return 2;
            if (a == "--topology") topology = v;
            else if (a == "--write-cache") write_cache = v;
            else if (a == "--gpus") gpus = v;
            else if (a == "--cpus") cpus = v;
            else if (a == "--include") filter.include = split_nonempty(v, ',');
            else if (a == "--exclude") filter.exclude = split_nonempty(v, ',');
            else {
                char* end = nullptr;
                tasks = std::strtol(v, &end, 10);
                if (!*v || *end || tasks < 0 || tasks > 100000) {
                    std::fprintf(stderr, "gangway topo: --tasks \"%s\" is not a task count; give a number like 8\n", v);
                    return 2;
                }
            }
        } else {
            std::fprintf(stderr, "gangway topo: unknown option \"%s\"; see `gangway topo --help`\n", a.c_str());
            return 2;
        }
    }
    try {
        const Topology topo = sys::load_topology(topology);
        if (!write_cache.empty()) {
            sys::write_topology_cache(topo, write_cache);
            std::printf("wrote %s: %zu CPUs, %zu NUMA nodes, %zu GPUs, %zu NICs\n", write_cache.c_str(),
                        topo.pus.size(), topo.numa_nodes.size(), topo.gpus.size(), topo.nics.size());
            return 0;
        }
        PlacementRequest req;
        if (gpus.empty()) {
            for (unsigned i = 0; i < topo.gpus.size(); ++i) req.gpus.push_back(i);
        } else if (gpus != "none") {
            // In the user's order with repeats kept (parse_cpu_list merges them):
            // a GPU listed twice must reach the planner's "listed twice" refusal.
            try {
                req.gpus = parse_index_list(gpus);
            } catch (const Error&) {
                throw Error("bad GPU list \"" + excerpt(gpus) +
                            "\"; write SLURM GPU indexes like 0-3,6 (or none), at most " +
                            std::to_string(kMaxCpuListEntries) + " in all");
            }
        }
        req.cpus = cpus.empty() ? all_cpus(topo) : parse_cpu_list(cpus);
        req.local_tasks = tasks >= 0 ? static_cast<unsigned>(tasks)
                                     : (req.gpus.empty() ? 1u : static_cast<unsigned>(req.gpus.size()));
        req.nics = filter;
        const Placement plan = plan_placement(topo, req);
        if (json) std::printf("%s\n", format_placement_json(plan).c_str());
        else std::fputs((format_placement_table(plan) + format_placement_notes(topo, filter, plan)).c_str(), stdout);
        return 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway topo: %s\n", e.what());
        return 1;
    }
}

}  // namespace gangway::cli
