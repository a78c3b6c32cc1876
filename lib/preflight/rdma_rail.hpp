// One rail's judgement in the rdma stage: every node's k-th compute port
// wrote to its ring successors, and a node whose writes both ways fail or
// fall below the port rate's share is faulty. The coordinator
// (lib/sys/preflight/coordinator_gpu.cpp) runs the rounds; this is plain
// data in (the rail's links, each node's port) and out (who to blame, the
// findings).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "localize.hpp"
#include "schedule.hpp"
#include "wire.hpp"

namespace gangway::preflight {

// A node's port on the rail, by position in the ring.
struct RailPort {
    std::string node;      // the node's name
    std::string port;      // mlx5_0/1
    double rate_gbps = 0;  // what the port says it runs at
};

// One end of an RDMA write in a round: its answers to the round's phases
// (prep, connect, go: each {ok, error}, go's with the bps the writer
// measured); null where it did not answer that phase.
struct RdmaEnd {
    std::string node;  // its name, for the error
    const Kv* prep = nullptr;
    const Kv* connect = nullptr;
    const Kv* go = nullptr;
};

// The write from `from` to `to`: failed at the first phase, in the order
// they ran, that either end did not pass ("node: error", "node: no
// answer"), else what the writer measured. Throws gangway::Error on a
// malformed answer.
Measurement rdma_link(const Flow& f, const RdmaEnd& from, const RdmaEnd& to);

struct RailBlame {
    double port_rate_gbps = 0;  // the rate the links were held to
    std::vector<std::pair<unsigned, std::string>> faulty;  // position and its reason, ascending
    std::vector<std::string> findings;  // that no link is good (when so), then each link that fails or is slow
    bool failed = false;                // a link failed or was slow
};

// The links are held to `ratio` x the port rate: the site's (GANGWAY_IB_RATE_GBPS)
// when given, else the best port of the rail (a slower port is then itself
// the finding). No good link at all blames no node: the fabric or a setting
// common to all is at fault. Throws gangway::Error when a link's position
// has no port.
RailBlame blame_rail(unsigned rail, const std::vector<RailPort>& ports, const std::vector<Measurement>& ring,
                     std::optional<double> site_rate_gbps, double ratio);

// Confirm before accusing: a rail has no spare peer to confirm a suspect
// against, so a rail whose rounds blamed a node or found a link slow is
// measured again, and only what both measurements say stands: a node
// faulty in both (with the second's reason), the second's findings where
// both failed. What the first alone said becomes notes (a loaded host slows
// one node's writes for a round: seen in CI, a healthy node named at 0.61
// Gb/s against a 1.59 median). `again` absent (no time left): the first stands.
struct ConfirmedRail {
    RailBlame blame;
    std::vector<std::string> notes;
};
ConfirmedRail confirm_rail(const RailBlame& first, const std::optional<RailBlame>& again, const std::vector<RailPort>& ports);

}  // namespace gangway::preflight
