// Who stopped the job: a pure judgement over all nodes' records (issue 33).
// The first failure is the earliest abnormal task end that is not teardown;
// its cause comes from that node's root-written evidence in a fixed
// precedence; everything after it is the cascade, summed up in the same line.
// The rules in full, and why, are at the top of verdict.cpp and in
// docs/postmortem.md, "The verdict".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record.hpp"
#include "stall.hpp"

namespace gangway::postmortem {

// In precedence order: the first that the failing node's evidence shows wins.
enum class Cause {
    none,          // a healthy job: nothing to say
    node_lost,     // a node of the job sent no record and SLURM marks it down
    gpu_xid,
    gpu_lost,      // a GPU present at the job's start, gone from the PCI bus at its end
    oom,
    hca_lost,      // an RDMA device present at the job's start, gone at its end
    link_down,     // a data link or HCA port down, or IB errors grew
    fatal_signal,  // SIGSEGV, SIGBUS, SIGKILL, ... with no node evidence
    nonzero_exit,
    hang,          // every rank alive until SLURM's SIGTERM (scancel, time limit)
    user_error,    // every rank failed alike (the same exception, or the same status at once): the job's own bug
};

// How a user_error was seen: every rank's dump the same exception, or (with
// or without dumps) every rank's end the same status within kAlikeWindowNs.
enum class Alike { none, same_exception, same_status };

struct Verdict {
    Cause cause = Cause::none;
    std::uint32_t job = 0, step = 0;
    // Where the first failure happened, as root's records place it (the line
    // names it); empty for a hang, a user's bug and a non-zero exit with no
    // node evidence. Only node_class says the node's hardware is at fault
    // (requeue without it, drain it, count it as a repeat offender).
    std::string node;                 // empty: no node is blamed
    // Where the first failure's rank ran (root's task end), blamed or not:
    // the line always names it. Empty when no rank is named (a hang, a node lost).
    std::string ran_on;
    std::optional<std::uint32_t> rank, local_rank;
    std::int64_t t_ns = 0;
    std::string detail;               // "Xid 79 on 0000:17:00.0", "SIGKILL", "exit 3", ...
    bool node_class = false;          // requeue without `node` (node lost, Xid, a GPU or HCA lost, link down)
    std::vector<std::uint32_t> hang_ranks;  // ranks that did not enter the first collective others did, or entered it late
    Alike alike = Alike::none;        // user_error: how every rank was seen to fail alike
    double alike_within_s = 0;        // Alike::same_status: the first end to the last
    // The cascade: the other ranks' ends after the first failure.
    std::uint32_t cascade_ranks = 0;
    double cascade_from_s = 0, cascade_to_s = 0;
    std::string cascade_how;          // "SIGTERM from SLURM", "exit 1", "mixed"
    // Added with the judgement (verdict.cpp):
    std::string evidence_text;        // root's own words for the cause (a kernel line), printable; may be empty
    std::uint32_t step_ranks = 0;     // the step's ranks that root's records show
    std::vector<std::uint32_t> ranks_without_dump;  // a hang: ranks that left no dump while others did
    // A hang: the ranks slurmstepd saw stopped, in D or starved while the others waited (stall.hpp).
    std::vector<Stall> stalls;
    std::size_t records_ignored = 0;  // task ends and dumps not taken (another node's or job's, a rank twice)
};

// The rules' figures (verdict.cpp says why each is what it is).
inline constexpr std::int64_t kHangWindowNs = 5'000'000'000;         // SLURM's SIGTERM reaches every rank within it
inline constexpr std::int64_t kAlikeWindowNs = 2'000'000'000;        // every rank ending alike, from the first end to the last
inline constexpr std::int64_t kLateMinNs = 1'000'000'000;            // a rank late into a collective: at least this late,
inline constexpr std::int64_t kLateJitterFactor = 5;                 // and this many times the group's usual spread
inline constexpr std::int64_t kEvidenceSlackNs = 2'000'000'000;      // kernel time against slurmstepd's clock
inline constexpr std::int64_t kCauseWindowNs = 40LL * 60'000'000'000; // gloo's 30-minute timeout, and some
inline constexpr std::size_t kMaxLine = 250;                          // AdminComment's share
inline constexpr std::size_t kMaxTimeline = 16u << 10;                // `gangway postmortem`'s text
// SLURM's own steps (batch script, interactive, extern, ...) are numbered from here: a
// job's stop is judged on its regular steps first.
inline constexpr std::uint32_t kFirstSpecialStep = 0xfffffff0u;

// What a hang with no rank evidence says to do.
inline constexpr const char* kNoRankEvidenceHint =
    "no rank evidence was kept (set TORCH_FR_BUFFER_SIZE=2000 for the job to keep the Flight Recorder)";

// "node-lost", "gpu-xid", ...: the spelling of the store and the metrics' label.
const char* to_string(Cause c);

// "rank 3", "ranks 3, 11" (at most 8 named, then "and N more").
std::string rank_list(const std::vector<std::uint32_t>& ranks);

// A raw wait status in words: "exit 3", "SIGKILL", "SIGSEGV (core dumped)", "exit 0".
std::string describe_wait_status(int wait_status);

// `lost`: nodes of the job that sent no record and that SLURM reports down
// (the caller asks SLURM; the judgement does not). Throws gangway::Error when
// the records are of more than one job. Cost: O(n log n) in the records' task
// ends, linear in their evidence and dumps' sequence numbers.
Verdict judge(const std::vector<NodeRecord>& records, const std::vector<std::string>& lost);

// The one line for AdminComment, srun's tail and `gangway postmortem`. It
// always says where the first failure ran, and apart from it whether a node is
// blamed: "gangway: job 1234 step 0 stopped by rank 5 on r1-gpu100 (local 1):
// exit 3 at 12:03:05.210, the program's own exit (no node fault); 7 other
// ranks ended 0.7-1.7 s later (exit 1)"; a node-class cause puts the node
// first: "stopped by r1-gpu100 (rank 5, local 1): GPU Xid 79 on 0000:17:00.0
// at 12:03:05.210 (node fault); ...".
// Empty for Cause::none. At most 250 bytes, printable (AdminComment's field).
std::string render_line(const Verdict& v);

// The timeline for `gangway postmortem`: the line, the first failure, the
// evidence of its node (root's words), the cascade rank by rank, other nodes'
// evidence in the job's window and the ranks' dumps (the user's, marked so).
// Lines end in '\n'; every name and text printable; at most kMaxTimeline
// bytes (long lists cut, saying how many more). Empty for Cause::none.
std::string render_timeline(const Verdict& v, const std::vector<NodeRecord>& records);

}  // namespace gangway::postmortem
