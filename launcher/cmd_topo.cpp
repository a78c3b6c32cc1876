// `gangway topo`: the pinning plan the plugin would apply on this node (or on
// a saved topology), and writing the node-local topology cache.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/env/hostlist.hpp"
#include "../lib/env/rank_order.hpp"
#include "../lib/pin/placement.hpp"
#include "../lib/pin/placement_format.hpp"
#include "../lib/sys/node/hwloc_topology.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/node/topology_file.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

const char* kUsage =
    "usage: gangway topo [--topology FILE] [--tasks N] [--gpus LIST|none] [--cpus LIST]\n"
    "                    [--include NICS] [--exclude NICS] [--json]\n"
    "       gangway topo [--topology FILE] --write-cache FILE\n"
    "       gangway topo --ranks [--nodes HOSTLIST] [--topology-file FILE]\n"
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
    "  --write-cache F  write the topology to the cache file F and exit\n"
    "  --ranks          the rank order rank_order=topology gives the step's nodes: each node's\n"
    "                   NODE_RANK, SLURM index and leaf switch (or block), and how many ring hops\n"
    "                   cross a leaf with SLURM's order and with this one\n"
    "  --nodes LIST     the nodes (default: SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST)\n"
    "  --topology-file F  SLURM's topology.conf or topology.yaml (default: next to SLURM_CONF,\n"
    "                   else /etc/slurm; what the plugin's topology_file= names)";

// `gangway topo --ranks`: the order, and the crossings it saves.
int show_ranks(const std::string& nodelist, const std::string& file) {
    std::string list = nodelist;
    if (list.empty()) list = sys::env_or("SLURM_STEP_NODELIST", sys::env_or("SLURM_JOB_NODELIST"));
    if (list.empty()) {
        std::fprintf(stderr, "gangway topo: --ranks needs the nodes: run it in a job (srun -N1 gangway topo --ranks) "
                             "or give --nodes HOSTLIST\n");
        return 2;
    }
    const std::vector<std::string> nodes = expand_hostlist(list);
    auto loaded = sys::load_switch_topology(file, sys::env_or("SLURM_CONF"));
    if (!loaded) {
        std::fprintf(stderr, "gangway topo: %s\n", loaded.error().c_str());
        return 1;
    }
    const NodeOrder o = topology_order(loaded->topo, nodes);
    std::printf("topology: %s (%s, %zu leaves)\n", loaded->path.c_str(),
                loaded->topo.kind == TopologyKind::Block ? "blocks" : "switch tree", loaded->topo.leaves.size());
    std::printf("%-9s %-11s %-24s %s\n", "NODE_RANK", "SLURM index", "node", "leaf");
    for (std::size_t k = 0; k < o.order.size(); ++k) {
        const unsigned i = o.order[k];
        const std::string leaf = o.leaf[i] == kNoLeaf ? "(not in the file)" : loaded->topo.leaves[o.leaf[i]];
        std::printf("%-9zu %-11u %-24s %s\n", k, i, nodes[i].c_str(), leaf.c_str());
    }
    const unsigned hops = nodes.size() < 2 ? 0 : static_cast<unsigned>(nodes.size());
    std::printf("ring hops crossing a leaf: SLURM's order %u of %u, rank_order=topology %u of %u\n",
                ring_crossings_slurm(o), hops, ring_crossings(o), hops);
    if (!o.fallback.empty()) std::printf("note: %s\n", o.fallback.c_str());
    std::printf("order tag (GANGWAY_NODE_ORDER): %s\n", order_tag(nodes, o).c_str());
    return 0;
}

}  // namespace

int cmd_topo(int argc, char** argv) {
    std::string topology, write_cache, gpus, cpus, rank_nodes, topology_file;
    long tasks = -1;
    bool json = false, ranks = false;
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
        } else if (a == "--ranks") {
            ranks = true;
        } else if (a == "--nodes" || a == "--topology-file") {
            if (!(v = value())) return 2;
            (a == "--nodes" ? rank_nodes : topology_file) = v;
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
        if (ranks) return show_ranks(rank_nodes, topology_file);
        auto loaded = sys::load_topology(topology);
        if (!loaded) throw Error(loaded.error());
        const Topology& topo = *loaded;
        if (!write_cache.empty()) {
            if (auto w = sys::write_topology_cache(topo, write_cache); !w) throw Error(w.error());
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
