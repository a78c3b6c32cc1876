// The rank order: a step's nodes grouped by leaf switch (or block) so that
// NCCL's ring neighbours (node n and n+1) share a switch, instead of SLURM's
// order by name (issue 26). Pure: plain data in, plain data out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "step_view.hpp"
#include "switch_topology.hpp"

namespace gangway {

// rank_order= (site key), --gangway-rank-order / GANGWAY_RANK_ORDER (user).
enum class RankOrder { Slurm, Topology };
RankOrder parse_rank_order(std::string_view text, std::string_view origin);
std::string_view to_string(RankOrder o);

// No leaf: a node the topology does not name.
inline constexpr std::uint32_t kNoLeaf = UINT32_MAX;

struct NodeOrder {
    // order[k] is the SLURM index (position in SLURM_STEP_NODELIST) of the
    // node that gets NODE_RANK k. SLURM's own order is 0, 1, 2, ...
    std::vector<unsigned> order;
    // Per SLURM index: the node's leaf (index in SwitchTopology::leaves) or kNoLeaf.
    std::vector<std::uint32_t> leaf;
    bool by_topology = false;  // false: SLURM's order (asked for, or fallen back to)
    std::string fallback;      // why SLURM's order was kept although topology was asked; one line
};

// SLURM's order, leaves unknown.
NodeOrder slurm_order(std::size_t nodes);

// The step's nodes grouped by leaf, leaves in the topology's walk order, each
// leaf's nodes in SLURM's order. A step node the topology does not name: SLURM's
// order, with `fallback` naming it (every node computes the same, so all fall
// back together when their files agree). O(nodes log nodes).
NodeOrder topology_order(const SwitchTopology& topo, const std::vector<std::string>& nodes);

// Ring hops (node k to k+1, and the last back to the first) whose two nodes sit
// under different leaves, with the nodes in `order`; a node without a leaf
// counts as its own leaf. 0 for one node.
unsigned ring_crossings(const NodeOrder& o);
// The same for SLURM's order of the same nodes.
unsigned ring_crossings_slurm(const NodeOrder& o);

// A short tag of the order (the node names in NODE_RANK order), the same on
// every node that computed the same order: what GANGWAY_NODE_ORDER carries
// and what nodes compare.
std::string order_tag(const std::vector<std::string>& nodes, const NodeOrder& o);

// The step as the order numbers it: nodes and tasks per node permuted,
// node_index this node's NODE_RANK, and in a task the rank RANK gets (the
// tasks of the nodes before it in the order, plus LOCAL_RANK). SLURM_PROCID
// stays SLURM's. No-op for SLURM's order.
void apply_order(StepView& step, const NodeOrder& o);

// topology_file= with every "%n" replaced by this node's SLURM name (a '/' in
// it made '_'), so that a site (or a test) can give nodes their own copies.
std::string topology_path_for(std::string_view configured, std::string_view node);

// ---- Agreement (issue 26 item 3). The plugin's check meets at SLURM's node 0
// (numbered as SLURM numbers the nodes, whatever each node computed), and
// node 0's coordinator compares every node's tag with its own.

// tags[i]: the tag SLURM node i's speaker brought (GANGWAY_NODE_ORDER), or
// nullopt where it did not check in (named by the check's join stage instead).
// `reproduced`: node 0's check computed node 0's tag again from the file the
// plugin read (false when it could not: changed or unreadable since).
struct CheckOrder {
    // The check's ring follows the topology order: every tag is node 0's and names it.
    bool topology_ring = false;
    // The nodes computed different orders: every task keeps SLURM's order.
    bool fall_back = false;
    std::vector<std::size_t> differ;  // SLURM indexes of the nodes whose tag is not node 0's
    std::string why;                  // when fall_back: "the nodes' topology files differ (...)"; one line
};
CheckOrder decide_check_order(const std::vector<std::string>& nodes, const std::vector<std::optional<std::string>>& tags,
                              bool reproduced);

// The answer a task's check gives the plugin that started it (one short line
// on a pipe): "slurm WHY" when the tasks must keep SLURM's order. At most
// kOrderAnswerMaxBytes; anything else (empty, cut, foreign) is no answer.
inline constexpr std::size_t kOrderAnswerMaxBytes = 1024;
std::string order_answer(const CheckOrder& d);
std::optional<std::string> parse_order_answer(std::string_view text);  // WHY, or nullopt

// SLURM's order after a disagreement, with the line node 0 says.
NodeOrder fallen_back_order(std::size_t nodes, const std::string& why);

}  // namespace gangway
