#include "cards_check.hpp"

#include <algorithm>

#include "../base/error.hpp"

namespace gangway::preflight {

std::string data_iface_problem(const Card& c) {
    const Nic* nic = find_nic(c, c.data_iface);
    if (!nic) return "data interface " + c.data_iface + " does not exist";
    if (nic->state != "up" && nic->state != "unknown") return "data interface " + nic->name + " is " + nic->state;
    if (std::find(nic->addrs.begin(), nic->addrs.end(), c.data_addr) == nic->addrs.end())
        return "data interface " + nic->name + " lacks address " + c.data_addr;
    return "";
}

CardsCheck check_cards(std::vector<JoinedNode> nodes) {
    CardsCheck out;
    std::vector<Card> cards;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        // compare_cards names nodes by card.node_rank: it must be the node's place.
        if (nodes[i].card.node_rank != i)
            throw Error("node " + std::to_string(i) + "'s card says node rank " + std::to_string(nodes[i].card.node_rank));
        if (nodes[i].member >= 0) cards.push_back(nodes[i].card);
    }
    for (const auto& mm : compare_cards(cards)) {
        auto& n = nodes[mm.node_rank];
        out.findings.push_back(n.card.node + ": " + mm.what + " is " + mm.value + ", the others have " + mm.expected);
        if (n.status == NodeStatus::ok) n.status = NodeStatus::mismatch;
        n.reasons.push_back(mm.what + " " + mm.value + " (others " + mm.expected + ")");
        out.failed = true;
    }
    for (auto& n : nodes) {
        if (n.member < 0) continue;
        if (auto why = data_iface_problem(n.card); !why.empty()) {
            n.status = NodeStatus::unreachable;
            n.reasons.push_back(std::move(why));
            out.failed = true;
        }
    }
    out.nodes = std::move(nodes);
    return out;
}

}  // namespace gangway::preflight
