#include "rank_order.hpp"

#include <algorithm>
#include <numeric>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "cluster_env.hpp"

namespace gangway {

RankOrder parse_rank_order(std::string_view t, std::string_view origin) {
    if (t == "slurm") return RankOrder::Slurm;
    if (t == "topology") return RankOrder::Topology;
    throw Error(origin_value(origin, t) +
                " is not a rank order; use slurm (SLURM's order of the node list) or topology (nodes grouped by "
                "leaf switch from SLURM's topology.conf/topology.yaml)");
}

std::string_view to_string(RankOrder o) { return o == RankOrder::Topology ? "topology" : "slurm"; }

NodeOrder slurm_order(std::size_t nodes) {
    NodeOrder o;
    o.order.resize(nodes);
    std::iota(o.order.begin(), o.order.end(), 0u);
    o.leaf.assign(nodes, kNoLeaf);
    return o;
}

NodeOrder topology_order(const SwitchTopology& topo, const std::vector<std::string>& nodes) {
    NodeOrder o = slurm_order(nodes.size());
    std::size_t missing = 0;
    const std::string* first_missing = nullptr;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto it = topo.leaf_of.find(nodes[i]);
        if (it == topo.leaf_of.end()) {
            if (!missing++) first_missing = &nodes[i];
            continue;
        }
        o.leaf[i] = it->second;
    }
    if (missing) {
        o.fallback = "node " + excerpt(*first_missing) +
                     (missing > 1 ? " (and " + std::to_string(missing - 1) + " more)" : std::string()) +
                     " of the step is not in SLURM's topology file: keeping SLURM's rank order";
        return o;
    }
    // Stable: SLURM's order inside a leaf.
    std::stable_sort(o.order.begin(), o.order.end(), [&](unsigned a, unsigned b) { return o.leaf[a] < o.leaf[b]; });
    o.by_topology = true;
    return o;
}

namespace {

unsigned crossings(const std::vector<std::uint32_t>& leaf, const std::vector<unsigned>& order) {
    if (order.size() < 2) return 0;
    unsigned n = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const unsigned a = order[k], b = order[(k + 1) % order.size()];
        // A node without a leaf is its own leaf: a hop to it always crosses.
        if (leaf[a] == kNoLeaf || leaf[b] == kNoLeaf || leaf[a] != leaf[b]) ++n;
    }
    return n;
}

}  // namespace

unsigned ring_crossings(const NodeOrder& o) { return crossings(o.leaf, o.order); }

unsigned ring_crossings_slurm(const NodeOrder& o) {
    std::vector<unsigned> id(o.order.size());
    std::iota(id.begin(), id.end(), 0u);
    return crossings(o.leaf, id);
}

std::string order_tag(const std::vector<std::string>& nodes, const NodeOrder& o) {
    std::string all;
    for (unsigned i : o.order) {
        all += i < nodes.size() ? nodes[i] : std::string();
        all += ',';
    }
    return std::string(o.by_topology ? "topology:" : "slurm:") + value_tag(all);
}

void apply_order(StepView& step, const NodeOrder& o) {
    if (!o.by_topology || o.order.size() != step.nodes.size()) return;
    std::vector<std::string> nodes(step.nodes.size());
    std::vector<unsigned> tpn(step.nodes.size());
    unsigned self = 0;
    for (std::size_t k = 0; k < o.order.size(); ++k) {
        nodes[k] = std::move(step.nodes[o.order[k]]);
        tpn[k] = step.tasks_per_node[o.order[k]];
        if (o.order[k] == step.node_index) self = static_cast<unsigned>(k);
    }
    step.nodes = std::move(nodes);
    step.tasks_per_node = std::move(tpn);
    step.node_index = self;
    // RANK follows NODE_RANK: the tasks of the nodes before this one, then
    // LOCAL_RANK. Each node's ranks stay one block, every rank one number.
    if (step.rank && step.local_rank) {
        const unsigned before = std::accumulate(step.tasks_per_node.begin(), step.tasks_per_node.begin() + self, 0u);
        step.rank = before + *step.local_rank;
    }
}

std::string topology_path_for(std::string_view configured, std::string_view node) {
    std::string name(node);
    std::replace(name.begin(), name.end(), '/', '_');  // a name never leaves the path's directory
    std::string out;
    for (std::size_t i = 0; i < configured.size(); ++i) {
        if (configured[i] == '%' && i + 1 < configured.size() && configured[i + 1] == 'n') {
            out += name;
            ++i;
        } else {
            out += configured[i];
        }
    }
    return out;
}

CheckOrder decide_check_order(const std::vector<std::string>& nodes, const std::vector<std::optional<std::string>>& tags,
                              bool reproduced) {
    CheckOrder d;
    if (tags.empty() || !tags[0]) return d;  // no node 0 card: nothing to compare against
    const std::string& ref = *tags[0];
    for (std::size_t i = 1; i < tags.size(); ++i)
        if (tags[i] && *tags[i] != ref) d.differ.push_back(i);
    const bool topology = ref.starts_with("topology:");
    // Node 0's own file no longer gives its tag: its order cannot be trusted for the ring either.
    if (d.differ.empty() && (reproduced || !topology)) {
        d.topology_ring = topology;
        return d;
    }
    d.fall_back = true;
    const auto name = [&](std::size_t i) { return excerpt(i < nodes.size() ? nodes[i] : "node " + std::to_string(i)); };
    std::string who;
    constexpr std::size_t kShown = 4;  // the line stays one line at any size
    for (std::size_t k = 0; k < d.differ.size() && k < kShown; ++k) who += (k ? ", " : "") + name(d.differ[k]);
    if (d.differ.size() > kShown) who += " and " + std::to_string(d.differ.size() - kShown) + " more";
    d.why = d.differ.empty() ? "the nodes' topology files differ (" + name(0) + "'s file changed since the step started)"
                             : "the nodes' topology files differ (" + who + (d.differ.size() == 1 ? " differs" : " differ") +
                                   " from " + name(0) + ")";
    return d;
}

std::string order_answer(const CheckOrder& d) {
    if (!d.fall_back) return "";
    std::string out = "slurm " + d.why;
    if (out.size() > kOrderAnswerMaxBytes - 1) out.resize(kOrderAnswerMaxBytes - 1);
    return out + "\n";
}

std::optional<std::string> parse_order_answer(std::string_view t) {
    if (t.size() > kOrderAnswerMaxBytes || !t.starts_with("slurm")) return std::nullopt;
    t.remove_prefix(5);
    if (!t.empty() && t[0] != ' ' && t[0] != '\n') return std::nullopt;
    const auto nl = t.find('\n');
    if (nl != std::string_view::npos) t = t.substr(0, nl);
    while (!t.empty() && t[0] == ' ') t.remove_prefix(1);
    std::string why(t);
    for (char& c : why)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // one line in the task's stderr
    return why.empty() ? std::string("the nodes' topology files differ") : why;
}

NodeOrder fallen_back_order(std::size_t nodes, const std::string& why) {
    NodeOrder o = slurm_order(nodes);
    o.fallback = why + "; keeping SLURM's rank order";
    return o;
}

}  // namespace gangway
