// Finding the slow node from bandwidth measurements. Pure: input is a list of
// directed measurements between node positions, output is which links are
// slow, which nodes are suspects, and (without a confirmation round:
// blame_ring; with one: confirm.hpp) which nodes are slow.
#pragma once
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../base/stats.hpp"  // median

namespace gangway::preflight {

struct Measurement {
    unsigned from = 0, to = 0;
    double bps = 0;         // bytes per second: the payload as the receiver counted it (TCP, RDMA),
                            // or a collective's bus bandwidth (nccl_job.hpp: pair_link)
    bool ok = true;         // false: the transfer failed (connect refused, reset, timeout)
    std::string error;      // why, when !ok
};

struct BwAnalysis {
    double expected_bps = 0;            // the reference a link is compared with
    std::vector<bool> slow;             // per measurement: failed or below ratio * expected
    std::vector<unsigned> suspects;     // nodes on a slow link, worst first (slow out and in before one-sided)
    std::vector<unsigned> good;         // nodes on no slow link
};

// expected_bps: the 75th percentile of the successful measurements (robust
// while fewer than a quarter of the links are bad), at most the lower median
// of each node's best successful link (robust while fewer than half the
// nodes have a fast outlier), or `expected` when given and larger. A link is
// slow below ratio * expected_bps.
BwAnalysis analyse_rounds(unsigned n, const std::vector<Measurement>& ring, double ratio,
                          std::optional<double> expected = std::nullopt);

struct NodeBw {
    bool slow = false;
    std::string reason;                     // "" when fine
    std::optional<double> tx_bps, rx_bps;   // median of what it sent / received in the ring rounds
};

// Per node, the medians of what it sent and received in the ring (slow: false).
std::vector<NodeBw> ring_figures(unsigned n, const std::vector<Measurement>& ring);

// Without a second measurement: a suspect is slow when its links both ways
// were slow. For blame_ring; the TCP bandwidth stage measures again instead
// (confirm.hpp).
std::vector<NodeBw> decide_nodes(unsigned n, const std::vector<Measurement>& ring, const BwAnalysis& a);

// Whether suspect s need not be confirmed: every slow link of it in `ring`
// (slow: analyse_rounds' flags) has at its other end a node already
// confirmed slow, which explains it. False while none is confirmed.
bool explained_by(unsigned s, const std::vector<Measurement>& ring, const std::vector<bool>& slow,
                  const std::set<unsigned>& confirmed);

// Without a confirmation round (a collective needs both ends at once; an
// RDMA rail has no spare peer) decide_nodes' rule alone: a node is blamed
// when its links both ways are slow. When no link is good at all, the cause
// is common to all of them (the network, a site-wide setting, the expected
// figure), so no node is blamed.
struct RingBlame {
    BwAnalysis analysis;
    bool some_good = false;         // at least one link was not slow
    std::vector<unsigned> blamed;   // positions, ascending; empty unless some_good
};
RingBlame blame_ring(unsigned n, const std::vector<Measurement>& ring, double ratio, std::optional<double> expected);

// Position k's links in `ring`, for a node's reason: "to node09: 3.95 Gb/s;
// from node11: <error>" (names by position, each rate through `rate`).
// Throws gangway::Error when a peer's position has no name.
std::string describe_links(unsigned k, const std::vector<Measurement>& ring, const std::vector<std::string>& names,
                           const std::function<std::string(double)>& rate);


// Bytes per second as bits: "9.41 Gb/s".
std::string fmt_gbit(double bps);

}  // namespace gangway::preflight
