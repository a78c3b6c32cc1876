// Who stopped the job: a pure judgement over all nodes' records (issue 33).
// The first failure is the earliest abnormal task end that is not teardown;
// its cause comes from that node's root-written evidence in a fixed
// precedence; everything after it is the cascade, summed up in the same line.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

// In precedence order: the first that the failing node's evidence shows wins.
enum class Cause {
    none,          // a healthy job: nothing to say
    node_lost,     // a node of the job sent no record and SLURM marks it down
    gpu_xid,
    oom,
    link_down,     // a data link or HCA port down, or IB errors grew
    fatal_signal,  // SIGSEGV, SIGBUS, SIGKILL, ... with no node evidence
    nonzero_exit,
    hang,          // every rank alive until SLURM's SIGTERM (scancel, time limit)
    user_error,    // every rank raised the same exception: the job's own bug
};

struct Verdict {
    Cause cause = Cause::none;
    std::uint32_t job = 0, step = 0;
    std::string node;                 // empty: no node is blamed
    std::optional<std::uint32_t> rank, local_rank;
    std::int64_t t_ns = 0;
    std::string detail;               // "Xid 79 on 0000:17:00.0", "SIGKILL", "exit 3", ...
    bool node_class = false;          // requeue without `node` (node lost, Xid, link down)
    std::vector<std::uint32_t> hang_ranks;  // ranks that did not enter the first collective others did
    // The cascade: the other ranks' ends after the first failure.
    std::uint32_t cascade_ranks = 0;
    double cascade_from_s = 0, cascade_to_s = 0;
    std::string cascade_how;          // "SIGTERM from SLURM", "exit 1", "mixed"
};

// `lost`: nodes of the job that sent no record and that SLURM reports down
// (the caller asks SLURM; the judgement does not).
Verdict judge(const std::vector<NodeRecord>& records, const std::vector<std::string>& lost);

// The one line for AdminComment, srun's tail and `gangway postmortem`:
// "gangway: job 1234 step 0 stopped by r1-gpu100 (rank 5, local 1): killed by
// the OOM killer at 12:03:05.210; 7 other ranks ended 0.4-9.1 s later (SIGTERM from SLURM)".
// Empty for Cause::none. At most 250 bytes, printable (AdminComment's field).
std::string render_line(const Verdict& v);

}  // namespace gangway::postmortem
