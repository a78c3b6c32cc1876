// What a failed job check does besides its verdict: the drain requests for
// the admins' Epilog, and `--on-fail=requeue`'s requeue of the batch job
// without the bad nodes. `gangway run` and `gangway check` call these on
// node 0's first task; each line for the user goes through `say`.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../../preflight/report.hpp"
#include "job_check.hpp"

namespace gangway::sys {

using Say = std::function<void(const std::string&)>;

// One request file per bad node in opt.drain_dir, only where that directory
// exists, only on the job's first node (`here`: this node's name, unless
// SLURMD_NODENAME gives slurmd's), whose Epilog alone decides
// (slurm::deciding_node); none when the check used the user's own thresholds.
void write_drain_requests(const PreflightOptions& opt, const preflight::Report& r, std::string here, const Say& say);

// Requeues this batch job (SLURM_JOB_ID) with `bad` added to its
// ExcNodeList: requeue first (users may change ExcNodeList only while the
// job is pending), then the update, retried for 10 s; SIGTERM, SIGINT and
// SIGHUP blocked meanwhile (the requeue ends this step). Not after
// GANGWAY_REQUEUE_MAX (default 3) requeues. Returns the exit code the
// command ends with (kExitUnreachable).
int requeue_without(const std::vector<std::string>& bad, const Say& say);

}  // namespace gangway::sys
