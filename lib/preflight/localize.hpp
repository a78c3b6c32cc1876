// Finding the slow node from bandwidth measurements. Pure: input is a list of
// directed measurements between node positions, output is which links are
// slow, which nodes are suspects, and (after a confirmation round against
// known-good peers) which nodes are slow.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gangway::preflight {

struct Measurement {
    unsigned from = 0, to = 0;
    double bps = 0;         // payload bytes per second as the receiver counted them
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
// while fewer than a quarter of the links are bad), or `expected` when given
// and larger. A link is slow below ratio * expected_bps.
BwAnalysis analyse_rounds(unsigned n, const std::vector<Measurement>& ring, double ratio,
                          std::optional<double> expected = std::nullopt);

struct NodeBw {
    bool slow = false;
    std::string reason;                     // "" when fine
    std::optional<double> tx_bps, rx_bps;   // median of what it sent / received in the ring rounds
};

// A suspect is slow when one of its confirmation links (either direction) is
// slow against the same expected rate; a suspect whose confirmation is fine
// stays ok (the slow link is reported, the node is not blamed). Without
// confirmation data for a suspect (no good peer to test against) it is slow
// only when both its sending and its receiving links were slow.
std::vector<NodeBw> decide_nodes(unsigned n, const std::vector<Measurement>& ring, const BwAnalysis& a,
                                 const std::vector<Measurement>& confirm, double ratio);

double median(std::vector<double> v);  // 0 for an empty list

}  // namespace gangway::preflight
