// The cards stage: what the nodes' cards say before any traffic is sent. A
// card that differs from the majority (compare_cards) makes its node a
// mismatch and a finding; a data interface that cannot carry the node's
// traffic (absent, down, without the node's data address) makes it
// unreachable, since every later stage sends through it. Plain data in and
// out; the coordinator (lib/sys/preflight/coordinator.cpp) keeps the result.
#pragma once
#include <string>
#include <vector>

#include "card.hpp"
#include "join.hpp"

namespace gangway::preflight {

// Why the card's data interface cannot carry the node's traffic, or "" when
// it can: it exists, is "up" (or "unknown", as virtual interfaces say) and
// holds the card's data address.
std::string data_iface_problem(const Card& card);

struct CardsCheck {
    std::vector<JoinedNode> nodes;      // the nodes given, their statuses and reasons updated
    std::vector<std::string> findings;  // one per mismatch, "node: what is X, the others have Y"
    bool failed = false;                // a mismatch or an interface problem
};

// nodes[i].card.node_rank must be i (account_join sees to it); throws
// gangway::Error otherwise. Only the nodes whose card arrived (member >= 0) are compared and checked.
// A mismatch does not hide what the rendezvous found (a missing node stays
// missing); an interface problem makes the node unreachable whatever it was.
CardsCheck check_cards(std::vector<JoinedNode> nodes);

}  // namespace gangway::preflight
