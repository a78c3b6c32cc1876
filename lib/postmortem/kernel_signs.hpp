// The kernel log's signs of a job's stop (issue 33): what the Epilog's
// `gangway postmortem collect` takes from the node's /dev/kmsg records of
// the job's window. Only records kmsg_record.hpp takes for the kernel's own
// (facility 0, the message starting with the driver's tag: users can put
// any text into the log, never that), each read strictly:
//   - GPU Xids: health::parse_kmsg_xids, the node check's reader; only the
//     site's list of a GPU's faults (node-check.conf's xids=, by default
//     health::kDefaultXids): an Xid a user's program causes (13, 31, 43: an
//     illegal address, an MMU fault, a kernel stopped) names no hardware;
//   - the OOM killer: "Out of memory: Killed process PID (COMM) ..." and
//     "Memory cgroup out of memory: Killed process PID (COMM) ...", else its
//     "oom-kill:...,task=COMM,pid=PID,uid=..." summary: one sign per pid,
//     which the verdict maps to the task that had that pid;
//   - a netdev link down: "DRIVER BUSID [IFNAME]: Link down" (mlx5_core), "...:
//     NIC Link is Down" (e1000e, ixgbe, ice, bnxt_en), "...: Link is Down";
//   - hung tasks: "INFO: task COMM:PID blocked for more than N seconds."
// On a node other jobs share, the OOM killer's and hung tasks' lines are
// the job's only when they name its processes (KmsgWindow::job): a task's
// pid (root's task lines), or, for an OOM kill, a process of the job's own
// memory cgroup (the first "/job_N" of the summary's task_memcg=, SLURM's
// cgroup above anything a user can name) run by the job's owner (uid=, the
// summary's last field, which no process name can reach): a child of a task
// too. Other users' lines are left out.
// Pure: the caller reads the log (lib/sys/health/kmsg) and the clocks.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../health/site_conf.hpp"
#include "record.hpp"

namespace gangway::postmortem {

struct KmsgWindow {
    std::uint64_t from_usec = 0, to_usec = UINT64_MAX;  // the window, in the log's clock (usec since boot)
    std::int64_t boot_ns = 0;  // CLOCK_REALTIME at the log's zero: a record's t_ns is boot_ns + usec * 1000
    std::vector<unsigned> fatal_xids = health::kDefaultXids;  // the Xids that are a GPU's fault
    // Set: OOM-killer and hung-task lines only of the job's processes (above).
    std::optional<std::uint32_t> job;
    std::vector<std::int32_t> job_pids;   // its tasks' pids here
    std::optional<std::uint32_t> job_uid; // its owner; unset: the cgroup rule is not used
};

// The signs of the records in the window, in the log's order; at most
// kMaxEvidence (the first ones: the earliest are the cause, the rest its
// echo). O(n) in the text. The window's other Xids are passed over, each
// added to `other_xids` (when given) for the collector's note.
std::vector<Evidence> kernel_signs(std::string_view records, const KmsgWindow& w, std::vector<unsigned>* other_xids = nullptr);

// Records the kernel log lost in the window: health::kmsg_lost's rule (the
// node check's). With `after`, the last record's number at the job's start
// (the Prolog's mark), every record after it that is missing: exact. Without,
// over the window's records, counted from the last record before it; and,
// when the oldest record left is already in the window and is not the log's
// first (a flood wrapped the buffer during the job), the records before it,
// how many of them in the window unknown.
struct WindowLoss {
    std::uint64_t records = 0, first = 0, last = 0;  // health::KmsgLoss's
    bool before_oldest = false;                      // the records before the oldest left
    std::uint64_t oldest_seq = 0, oldest_usec = 0;   // that record's
    bool any() const { return records || before_oldest; }
};
WindowLoss kmsg_lost_in_window(std::string_view records, const KmsgWindow& w, std::optional<std::uint64_t> after = {});
// The record's note: "the kernel log lost 1200 record(s) in the job window
// (numbers 4000 to 5199): ..." (no quote: the timeline shows it as it is);
// empty when nothing was lost.
std::string describe(const WindowLoss& l, const KmsgWindow& w);

}  // namespace gangway::postmortem
