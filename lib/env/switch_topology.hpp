// SLURM's description of the network between nodes: topology.conf
// (topology/tree: SwitchName= Switches= Nodes=; topology/block: BlockName=
// Nodes=) and topology.yaml (SLURM 25.05+, the same two shapes). Only what the
// rank order needs is kept: each node's leaf switch (or block), and the leaves
// in the order of a depth-first walk of the switch tree, so that leaves under
// one spine are neighbours (rank_order.hpp). Pure: the caller reads the file
// (lib/sys/node/topology_file.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gangway {

enum class TopologyKind { Tree, Block };
enum class TopologyFormat { Conf, Yaml };

// The most a topology file may hold: names (switches, blocks and nodes, as
// their hostlist expressions expand, over the whole file) and bytes. SLURM
// itself stops at 65,536 nodes; a switch tree adds far fewer switches.
inline constexpr std::size_t kMaxTopologyNames = 131072;
inline constexpr std::size_t kMaxTopologyFileBytes = 16u << 20;

struct SwitchTopology {
    TopologyKind kind = TopologyKind::Tree;
    // Leaf switches (those with Nodes=) or blocks, in the walk's order.
    std::vector<std::string> leaves;
    // Each leaf's parent switch ("" for a root leaf and for blocks): what the
    // explain and the simulation count as a second level of crossings.
    std::vector<std::string> leaf_parent;
    // Node name -> index in `leaves`. A node under two leaves keeps the first
    // the walk reaches.
    std::unordered_map<std::string, std::uint32_t> leaf_of;
};

// Parses topology.conf's text. Throws gangway::Error, one line naming the
// line and what to fix, on anything SLURM's own parser would not take in
// these two shapes (an unknown key, a child switch no line defines, both
// SwitchName and BlockName in one file) and past kMaxTopologyNames.
//
// Cost (SECURITY.md, "What a parser may spend"): O(n + the names'
// characters) to split and expand (each hostlist expression within
// expand_hostlist's own bound, and all of them together within
// kMaxTopologyNames names), then O(names) to walk the tree with an explicit
// stack (no recursion: a chain of 100,000 switches costs no stack). Heap: the
// names and their map (at most kMaxTopologyNames x 400 bytes, 50 MiB), one
// hostlist expansion's bound (20 MiB + 12 n) and the expressions' copies (2 n).
SwitchTopology parse_topology_conf(std::string_view text);

// Parses topology.yaml's text: a list of topologies, each
//   - topology: NAME / cluster_default: BOOL / one of tree:, block:, flat:
//   tree: switches: a list of `- switch: NAME` with `children: EXPR` and/or `nodes: EXPR`
//   block: block_sizes: (ignored) and blocks: a list of `- block: NAME` with `nodes: EXPR`
// The topology used is the first with cluster_default: true, else the first.
// This is a reader for that shape only, not YAML: one mapping key per line,
// plain or quoted scalars, comments; anything else (anchors, flow mappings, a
// key it does not know, tabs for indentation) is one error naming the line.
// Cost: as parse_topology_conf, line by line.
SwitchTopology parse_topology_yaml(std::string_view text);

SwitchTopology parse_switch_topology(std::string_view text, TopologyFormat format);

}  // namespace gangway
