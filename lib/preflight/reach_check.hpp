// The reach stage's judgement: every node probed a few peers over TCP on
// the data network (reach_targets), then, in a second pass, every failed
// probe was tried again, with a longer timeout, and a node whose probes all
// failed was probed by (and probed) other peers too (retry_targets). A link
// fails only when every attempt at it failed; a node is unreachable when
// every link to it, or every link from it, failed, each attempted twice.
// A failure seen once (fine when tried again, or no time to try again) is a
// note, never a finding. Plain data in (each node's answers), plain data out;
// the coordinator (lib/sys/preflight/coordinator.cpp) sends the commands.
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
    std::vector<unsigned> retry;    // second pass: the positions it probed again
    const Kv* retry_answer = nullptr;
};

// The second pass, per position: each failed probe again, and for a node
// whose probes all failed (to it, or from it) up to two more peers that
// reached others, in each direction, so that its verdict rests on more than
// its first peers. Empty lists when every probe succeeded.
std::vector<std::vector<unsigned>> retry_targets(const std::vector<ReachNode>& nodes);

struct ReachCheck {
    std::vector<LinkResult> links;  // stage "reach", each answered probe in order
    std::vector<std::pair<unsigned, std::string>> unreachable;  // report index and reason, in the nodes' order
    unsigned newly_unreachable = 0;     // of those, the ones not unreachable already
    std::vector<std::string> findings;  // links that failed twice between nodes that are otherwise reachable
    std::vector<std::pair<unsigned, unsigned>> dead;  // those links, report indices (from, to), in findings' order
    std::vector<std::string> notes;     // failures seen once: nodes and links not counted
    unsigned recovered = 0;             // links that failed once and were fine when tried again
};

// A malformed result is that probe's failure (its error the parser's), not
// the stage's. Throws gangway::Error when a target is not a position.
ReachCheck judge_reach(const std::vector<ReachNode>& nodes);

}  // namespace gangway::preflight
