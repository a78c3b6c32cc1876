// Drain requests for the admins' Epilog (contrib/epilog/gangway-drain.sh):
// which nodes of a report the check asks to drain, and the file that asks.
// Plain data; `gangway run/check` (launcher/cmd_run.cpp) writes the files
// where the drain directory exists.
#pragma once
#include <string>
#include <vector>

#include "report.hpp"

namespace gangway::preflight {

struct DrainRequest {
    std::string node;
    std::string file;  // its name in the drain directory: gangway-drain.JOB.NODE
    std::string text;  // "node=", "job=" and "reason=" lines, as the Epilog reads them
};

// A request per slow, unreachable, mismatched or faulty node: what the
// checks found on the node itself. A missing or lost node (its tasks never
// came, or exited) gets none. The reason is the status and the node's first
// reason, cut to 120 characters, with newlines, quotes, '`', '$' and '\' made
// blanks: the Epilog hands it to scontrol.
std::vector<DrainRequest> drain_requests(const Report& r);

}  // namespace gangway::preflight
