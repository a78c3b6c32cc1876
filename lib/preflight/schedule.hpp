// Who talks to whom: the sparse reachability graph and the ring-shift
// bandwidth rounds. Indices are positions in a list of participating nodes.
#pragma once
#include <cstdint>
#include <vector>

namespace gangway::preflight {

struct Flow {
    unsigned from = 0, to = 0;
    bool operator==(const Flow&) const = default;
};
using Round = std::vector<Flow>;  // every node sends at most once and receives at most once

// For each of n nodes, the peers it probes: ring neighbours (i-1, i+1), node 0,
// and `random_peers` others drawn from `seed` (the same on every node).
// Every node is probed by at least its two ring neighbours when n >= 3.
std::vector<std::vector<unsigned>> reach_targets(unsigned n, unsigned random_peers, std::uint64_t seed);

// Ring shifts: quick uses {1}; full uses 1, 2, n/2 and n-1 (distinct, in 1..n-1),
// capped at `max_rounds`. Empty for n < 2.
std::vector<unsigned> ring_shifts(unsigned n, bool full, unsigned max_rounds = 4);
// Round for shift s: i sends to (i+s) mod n, for all i at once.
Round ring_round(unsigned n, unsigned shift);

// The ring's links (i, i+1 mod n) as two-node pairs, in rounds where each
// node is in at most one pair: even links, then odd links, then (n odd) the
// closing link. For collectives that need both ends at once (NCCL between two
// nodes): a node in two bad pairs is the bad one. n = 2: one pair; n < 2: none.
std::vector<Round> pair_rounds(unsigned n);

// Flows packed into as few rounds as they fit, in order: in each round a node
// sends at most once and receives at most once, and at most max_flows flow.
std::vector<Round> disjoint_rounds(const std::vector<Flow>& flows, unsigned max_flows);

}  // namespace gangway::preflight
