// What `fleet serve --stops-key` does about a verdict besides telling it
// (issue 33, item 4): whether gangway requeues the job without the node,
// and the drain it asks for under today's caps (the Epilog's
// GANGWAY_DRAIN_MAX rule, contrib/epilog/gangway-drain.sh). Pure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "record.hpp"
#include "verdict.hpp"

namespace gangway::postmortem {

// Requeue without verdict.node: only a node-class cause (node lost, GPU Xid,
// link down: root's evidence) that names a node, and only when root's task
// lines say the stopped step ran with --gangway-on-fail=requeue. A user's
// bug, an OOM, a signal or an exit with no node evidence: never.
bool should_requeue(const Verdict& v, const std::vector<NodeRecord>& records);

// The drain's reason, one line for scontrol: "gangway: postmortem CAUSE DETAIL
// (job J)", cut and quieted as the Epilog's are (120 characters of reason).
std::string stop_drain_reason(const Verdict& v);

// The nodes `scontrol -o show node`'s text shows drained by gangway for job
// `job` (a reason whose last "(job J)" is this job's, as the Epilog counts).
std::vector<std::string> drained_for_job(std::string_view show_nodes, std::uint32_t job);

// Whether draining `node` for the job keeps within `max` nodes per job,
// counting those drained for it before (a requeued job keeps its id).
bool drain_within_cap(const std::vector<std::string>& drained_before, const std::string& node, std::size_t max);

}  // namespace gangway::postmortem
