// The rendezvous' accounting: from the tasks that checked in at node 0 (and,
// under PMIx, the fence that already proved every task alive), whose card
// stands for each node, how many of its tasks came, which nodes are missing
// and why, and the rendezvous stage's line. Plain data in and out: the
// sockets and the waiting are lib/sys/net/rendezvous's, and the coordinator
// (lib/sys/preflight/coordinator.cpp) keeps what this returns.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "card.hpp"
#include "report.hpp"
#include "wire.hpp"

namespace gangway::preflight {

// What the step says it is, and how its tasks met.
struct JoinShape {
    unsigned nnodes = 1, ntasks = 1;
    std::vector<unsigned> tasks_per_node;   // a node past its end expects 1 task
    std::vector<std::string> nodes;         // SLURM node names, step order
    bool pmix = false;                      // every task passed PMIx fence #1: only speakers join over TCP
    double join_timeout_s = 10;             // for the reasons ("within 10 s")
};

// One task that checked in over TCP, in the order of arrival.
struct Arrival {
    unsigned node_rank = 0;
    bool speaker = false;   // its node's first task: its hello carries the node's card (card_to_kv)
    Kv hello;
};

// A node as the rendezvous leaves it; the later stages change its status
// and add reasons.
struct JoinedNode {
    int member = -1;                     // the arrival whose card stands for the node; -1: none
    Card card;                           // node_rank, node and data_addr always set
    NodeStatus status = NodeStatus::ok;  // ok or missing
    std::vector<std::string> reasons;
    unsigned tasks_seen = 0;
};

// One node per node of the shape. A node's card is the first speaker's whose
// card reads (a card that does not is a reason, and a later speaker of the
// node may still stand for it); arrivals with a node rank past the step are
// ignored. Where a card lacks the node's name, the step's stands in, so that
// every reason and finding can name the node; a node's data address comes
// from its card alone (empty without one: no node resolves the others' names,
// and NODE_ADDRS is not set for large steps). Missing: no
// card arrived, or (TCP) fewer of its tasks than the step has on it; under
// PMIx the fence counted its tasks, so only the card is waited for.
std::vector<JoinedNode> account_join(const JoinShape& shape, const std::vector<Arrival>& arrivals);

// The rendezvous stage: failed when a node is missing; the detail counts the
// tasks (TCP) or the fence and the nodes (PMIx), why PMIx was not used
// (`not_pmix`, TCP only) and the connections the coordinator rejected. The
// caller times it.
StageResult join_stage(const JoinShape& shape, const std::vector<JoinedNode>& nodes, std::size_t arrived,
                       double fence_s, const std::string& not_pmix, unsigned rejected);

// A task of the node exited during `stage`: the node is lost, with the first
// such task as its reason (later ones add nothing). False when it already was.
bool mark_lost(JoinedNode& node, unsigned rank, const std::string& stage, const std::string& why);

}  // namespace gangway::preflight
