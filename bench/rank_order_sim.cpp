// Ring crossings with SLURM's order and with rank_order=topology (issue 26),
// for random allocations on a 2,048-node three-level fat tree: a core above
// 8 spines (pods), each above 8 leaf switches of 32 nodes. The topology is
// written as SLURM's topology.conf and read back through the plugin's own
// parser and order (lib/env/switch_topology, rank_order); SLURM's order is
// the nodes sorted by name, as SLURM lists a step's nodes.
//
//   bench/rank_order_sim [--trials N] [--seed S]   the table for BENCHMARKS.md
//   bench/rank_order_sim --write-conf FILE [--extra HOSTLIST]
//        writes the 2,048-node topology.conf (with the names of HOSTLIST, the
//        test cluster's nodes, on a leaf of their own) for bench/launch_overhead.sh
//
// Two namings: "cabled" (gpu0000-0031 on leaf 0, and so on: names follow the
// cabling) and "interleaved" (node i on leaf i mod 64: racks renamed, rows
// named alternately, spares swapped in). A hop crosses a leaf when its two
// nodes sit under different leaf switches, a spine when under different pods.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../lib/env/hostlist.hpp"
#include "../lib/env/rank_order.hpp"
#include "../lib/env/switch_topology.hpp"

using namespace gangway;

namespace {

constexpr unsigned kPods = 8, kLeavesPerPod = 8, kNodesPerLeaf = 32;
constexpr unsigned kLeaves = kPods * kLeavesPerPod, kNodes = kLeaves * kNodesPerLeaf;

std::string node_name(unsigned i) {
    char b[16];
    std::snprintf(b, sizeof b, "gpu%04u", i);
    return b;
}

// The leaf of node number i under each naming.
unsigned leaf_of(unsigned i, bool interleaved) { return interleaved ? i % kLeaves : i / kNodesPerLeaf; }

std::string make_conf(bool interleaved, const std::vector<std::string>& extra) {
    std::string conf = "# 2,048 nodes: core / 8 spines / 64 leaves of 32 (bench/rank_order_sim)\n";
    conf += "SwitchName=core Switches=spine[0-" + std::to_string(kPods - 1) + "]\n";
    for (unsigned p = 0; p < kPods; ++p)
        conf += "SwitchName=spine" + std::to_string(p) + " Switches=leaf[" + std::to_string(p * kLeavesPerPod) + "-" +
                std::to_string(p * kLeavesPerPod + kLeavesPerPod - 1) + "]\n";
    for (unsigned l = 0; l < kLeaves; ++l) {
        std::string nodes;
        for (unsigned i = 0; i < kNodes; ++i)
            if (leaf_of(i, interleaved) == l) nodes += (nodes.empty() ? "" : ",") + node_name(i);
        conf += "SwitchName=leaf" + std::to_string(l) + " Nodes=" + nodes + "\n";
    }
    if (!extra.empty()) {
        std::string list;
        for (const auto& n : extra) list += (list.empty() ? "" : ",") + n;
        conf += "SwitchName=extra Nodes=" + list + "\n";
    }
    return conf;
}

struct Tally {
    double leaf_slurm = 0, leaf_topo = 0, spine_slurm = 0, spine_topo = 0;
};

unsigned spine_crossings(const NodeOrder& o, const std::vector<unsigned>& order) {
    if (order.size() < 2) return 0;
    unsigned n = 0;
    for (std::size_t k = 0; k < order.size(); ++k)
        n += o.leaf[order[k]] / kLeavesPerPod != o.leaf[order[(k + 1) % order.size()]] / kLeavesPerPod;
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned trials = 1000, seed = 26;
    std::string write_conf, extra;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--trials" && i + 1 < argc) trials = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--seed" && i + 1 < argc) seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--write-conf" && i + 1 < argc) write_conf = argv[++i];
        else if (a == "--extra" && i + 1 < argc) extra = argv[++i];
        else {
            std::fprintf(stderr, "usage: rank_order_sim [--trials N] [--seed S] | --write-conf FILE [--extra HOSTLIST]\n");
            return 2;
        }
    }
    if (!write_conf.empty()) {
        std::ofstream(write_conf) << make_conf(true, extra.empty() ? std::vector<std::string>{} : expand_hostlist(extra));
        return 0;
    }
    std::mt19937 rng(seed);
    std::printf("2,048-node fat tree (8 pods x 8 leaves x 32 nodes), %u random allocations a row, seed %u\n", trials,
                seed);
    std::printf("%-12s %6s | %-29s | %-29s\n", "naming", "nodes", "ring hops crossing a leaf", "crossing a spine (pod)");
    std::printf("%-12s %6s | %9s %9s %9s | %9s %9s %9s\n", "", "", "slurm", "topology", "ratio", "slurm", "topology",
                "ratio");
    for (const bool interleaved : {false, true}) {
        const SwitchTopology topo = parse_topology_conf(make_conf(interleaved, {}));
        for (const unsigned size : {16u, 64u, 256u, 1024u}) {
            Tally t;
            std::vector<unsigned> all(kNodes);
            for (unsigned i = 0; i < kNodes; ++i) all[i] = i;
            for (unsigned r = 0; r < trials; ++r) {
                std::shuffle(all.begin(), all.end(), rng);
                std::vector<unsigned> pick(all.begin(), all.begin() + size);
                std::sort(pick.begin(), pick.end());  // SLURM lists a step's nodes by name
                std::vector<std::string> nodes;
                for (unsigned i : pick) nodes.push_back(node_name(i));
                const NodeOrder o = topology_order(topo, nodes);
                std::vector<unsigned> id(size);
                for (unsigned i = 0; i < size; ++i) id[i] = i;
                t.leaf_slurm += ring_crossings_slurm(o);
                t.leaf_topo += ring_crossings(o);
                t.spine_slurm += spine_crossings(o, id);
                t.spine_topo += spine_crossings(o, o.order);
            }
            auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
            std::printf("%-12s %6u | %9.1f %9.1f %8.2fx | %9.1f %9.1f %8.2fx\n", interleaved ? "interleaved" : "cabled",
                        size, t.leaf_slurm / trials, t.leaf_topo / trials, ratio(t.leaf_slurm, t.leaf_topo),
                        t.spine_slurm / trials, t.spine_topo / trials, ratio(t.spine_slurm, t.spine_topo));
        }
    }
    return 0;
}
