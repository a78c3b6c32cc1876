// The nodes a requeued job is to exclude (gangway run --on-fail=requeue, fleet serve's requeue).
// Plain data; the launcher (launcher/cmd_run.cpp) and fleet serve run scontrol.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gangway::slurm {

// The job's ExcNodeList (slurm::JobView::excluded, squeue's %x: a hostlist;
// empty, or a list that does not expand: none), then each bad node not
// already in it: the user's exclusions are kept, none twice.
// Cost: expand_hostlist's (hostlist.hpp), then O(names + bad) with a hash
// set of views into them (SECURITY.md, "What a parser may spend").
std::vector<std::string> requeue_exclusions(std::string_view excluded, const std::vector<std::string>& bad);

}  // namespace gangway::slurm
