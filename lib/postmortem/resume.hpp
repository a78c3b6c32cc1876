// What `fleet serve --stops-key` does about a verdict besides telling it:
// whether gangway requeues the job without the node, and the drain's reason
// (the cap and the reason's job mark are SLURM's rules, lib/slurm/drain_rules,
// which the Epilog's drains share). Pure.
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
// (job J)" (slurm::job_drain_reason, as the Epilog's).
std::string stop_drain_reason(const Verdict& v);

}  // namespace gangway::postmortem
