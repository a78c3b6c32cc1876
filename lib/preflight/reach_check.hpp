// The reach stage's judgement: every node probed a few peers over TCP on
// the data network (reach_targets); a node that no probe reached, or that
// reached none of its targets, is unreachable, and a failed probe between
// two nodes that are otherwise fine is a finding about that link. Plain data
// in (each node's answer), plain data out; the coordinator
// (launcher/preflight_coordinator.cpp) sends the probes' commands.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"
#include "wire.hpp"

namespace gangway::preflight {

// A node that took part, by its position in the stage.
struct ReachNode {
    unsigned node = 0;              // its index in the report
    std::string name, addr;         // SLURM name, data address
    bool unreachable = false;       // already: it did not answer the stage's command
    std::vector<unsigned> targets;  // the positions it probed, in its answer's order
    const Kv* answer = nullptr;     // its kReachResult (r.K.ok, r.K.ms, r.K.error); null: none came
};

struct ReachCheck {
    std::vector<LinkResult> links;  // stage "reach", each answered probe in order
    std::vector<std::pair<unsigned, std::string>> unreachable;  // report index and reason, in the nodes' order
    unsigned newly_unreachable = 0;     // of those, the ones not unreachable already
    std::vector<std::string> findings;  // failed probes between nodes that are otherwise reachable
};

// A malformed result is that probe's failure (its error the parser's), not
// the stage's. Throws gangway::Error when a target is not a position.
ReachCheck judge_reach(const std::vector<ReachNode>& nodes);

}  // namespace gangway::preflight
