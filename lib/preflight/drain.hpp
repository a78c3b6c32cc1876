// Drain requests for the admins' Epilog (contrib/epilog/gangway-drain.sh):
// which nodes of a report the check asks to drain, and the file that asks.
// Plain data; `gangway run/check` (launcher/cmd_run.cpp) writes the files
// where the drain directory exists.
#pragma once
#include <string>
#include <vector>

#include "../env/step_view.hpp"  // EnvMap
#include "report.hpp"

namespace gangway::preflight {

struct DrainRequest {
    std::string node;
    std::string file;  // its name in the drain directory: gangway-drain.JOB.NODE
    std::string text;  // "node=", "job=" and "reason=" lines, as the Epilog reads them
};

// A request per slow, unreachable, mismatched or faulty node: what the
// checks found on the node itself, judged by the site's thresholds. A user's
// own threshold (`user_thresholds` names them: --expect-gbps, GANGWAY_* of
// the GPU stages) can make any node look bad, so with one there is none. A missing or lost node (its tasks never
// came, or exited) gets none. The reason is the status and the node's first
// reason, cut to 120 characters, with newlines, quotes, '`', '$' and '\' made
// blanks: the Epilog hands it to scontrol.
std::vector<DrainRequest> drain_requests(const Report& r, const std::vector<std::string>& user_thresholds);

// The node whose Epilog decides the job's drains (contrib/epilog/gangway-drain.sh):
// the job's first node, the first name of SLURM_JOB_NODELIST as `scontrol show
// hostnames` lists it. The Epilogs of the job's other nodes remove requests
// unread (a user can write into every node's spool, and node by node the cap
// per job would be a cap per node), so a request written elsewhere is lost.
// Empty for an empty list; throws gangway::Error for a malformed one.
std::string drain_deciding_node(const std::string& job_nodelist);

// The variables of the environment that set a threshold of the GPU and RDMA
// stages (gpu_checks.hpp's Thresholds) or of the bandwidth stage's options,
// set in `env`: the launcher cannot tell a TaskProlog's from the user's, so
// all are the user's.
std::vector<std::string> threshold_vars_set(const EnvMap& env);

}  // namespace gangway::preflight
