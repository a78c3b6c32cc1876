#include "join.hpp"

#include <algorithm>
#include <cstdio>

#include "../base/error.hpp"

namespace gangway::preflight {
namespace {

unsigned tasks_wanted(const JoinShape& s, unsigned node) {
    return node < s.tasks_per_node.size() ? s.tasks_per_node[node] : 1;
}

}  // namespace

std::vector<JoinedNode> account_join(const JoinShape& shape, const std::vector<Arrival>& arrivals) {
    std::vector<JoinedNode> nodes(shape.nnodes);
    // Under PMIx only the speakers came over TCP: the fence has seen every task.
    if (shape.pmix)
        for (unsigned i = 0; i < nodes.size(); ++i) nodes[i].tasks_seen = tasks_wanted(shape, i);
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
        const auto& a = arrivals[i];
        if (a.node_rank >= nodes.size()) continue;
        auto& n = nodes[a.node_rank];
        if (!shape.pmix) n.tasks_seen++;
        if (!a.speaker || n.member >= 0) continue;
        try {
            n.card = card_from_kv(a.hello);
            n.member = static_cast<int>(i);
        } catch (const Error& e) {
            n.reasons.push_back(std::string("bad card: ") + e.what());
        }
    }
    const std::string within = " within " + std::to_string(static_cast<int>(shape.join_timeout_s)) + " s";
    for (unsigned i = 0; i < nodes.size(); ++i) {
        auto& n = nodes[i];
        n.card.node_rank = i;
        if (n.card.node.empty()) n.card.node = i < shape.nodes.size() ? shape.nodes[i] : "node#" + std::to_string(i);
        const unsigned want = tasks_wanted(shape, i);
        std::string why;
        if (n.member < 0 && shape.pmix)
            why = "its tasks passed the PMIx fence but its first task never checked in over TCP" + within;
        else if (n.member < 0)
            why = "never checked in (" + std::to_string(n.tasks_seen) + "/" + std::to_string(want) + " tasks)" + within;
        else if (n.tasks_seen < want)
            why = std::to_string(want - n.tasks_seen) + " of its " + std::to_string(want) + " tasks never checked in";
        if (!why.empty()) {
            n.status = NodeStatus::missing;
            n.reasons.push_back(why);
        }
    }
    return nodes;
}

StageResult join_stage(const JoinShape& shape, const std::vector<JoinedNode>& nodes, std::size_t arrived,
                       double fence_s, const std::string& not_pmix, unsigned rejected) {
    StageResult st{"rendezvous", StageStatus::ok, "", 0};
    if (shape.pmix) {
        char f[32];
        std::snprintf(f, sizeof f, "%.3f", fence_s);
        st.detail = std::to_string(shape.ntasks) + "/" + std::to_string(shape.ntasks) + " tasks in the PMIx fence (" + f +
                    " s), " + std::to_string(arrived) + "/" + std::to_string(shape.nnodes) + " nodes over TCP";
    } else {
        st.detail = std::to_string(arrived) + "/" + std::to_string(shape.ntasks) + " tasks";
        if (!not_pmix.empty()) st.detail += "; not PMIx: " + not_pmix;
    }
    if (rejected) st.detail += ", " + std::to_string(rejected) + " connection(s) rejected";
    if (std::any_of(nodes.begin(), nodes.end(), [](const JoinedNode& n) { return n.status == NodeStatus::missing; }))
        st.status = StageStatus::failed;
    return st;
}

bool mark_lost(JoinedNode& node, unsigned rank, const std::string& stage, const std::string& why) {
    if (node.status == NodeStatus::lost) return false;
    node.status = NodeStatus::lost;
    node.reasons.push_back("task " + std::to_string(rank) + " exited during " + stage + " (" + why + ")");
    return true;
}

}  // namespace gangway::preflight
