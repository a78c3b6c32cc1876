// Where the nodes' records of a job meet (issue 33): `fleet serve` keeps each
// job's records until every node of the job has sent, or `wait_s` after the
// first came, then hands them over to be judged. Pure: the clock and SLURM's
// answers come in as arguments.
//
// Memory is bounded whatever the senders do: at most max_jobs jobs pending,
// max_job_bytes of records per job and max_bytes in all (a record counts the
// size of its body); one record per node of a job's run (a second, or a
// replay, is refused: a run is the record's window_start_ns, which a
// requeued job's next run on the node moves on). A job judged lately is
// remembered (the last kRecentJobs) with the records it was judged on: a
// replay of one is refused, while a late record (a node whose Epilog could
// not send until serve was back) opens the job again, marked late, to be
// judged again with the records it had (the caller keeps those: the store).
//
// Fair share: the jobs due are handed over round robin by owner (SLURM's
// UserId of the job, set_slurm_job), so that one user's thousand failing
// jobs go at the pace of every other user's one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

struct GatherLimits {
    std::size_t max_jobs = 16384;
    std::size_t max_job_bytes = std::size_t(16) << 20;
    std::size_t max_bytes = std::size_t(128) << 20;
    std::size_t max_nodes = kMaxJobNodes;  // of one job's list
    std::int64_t wait_s = 20;      // after the first record, at most
};

enum class Took {
    accepted,
    duplicate,      // this node of this job has sent already (or a replay)
    not_job_node,   // the node is not in the job's list (SLURM's, or the first record's)
    other_list,     // the record's list of the job's nodes is not the one the job has
    too_many_jobs,  // max_jobs pending: try again later
    too_big,        // the job's or the total bytes would pass the bound
};
const char* to_string(Took t);
// 409 for duplicate, 403 for not_job_node/other_list, 503 for the bounds.
unsigned http_status(Took t);

// A job's records, ready to judge.
inline constexpr std::int64_t kUnknownOwner = -1;

struct GatheredJob {
    std::uint32_t job = 0;
    std::int64_t owner = kUnknownOwner;  // SLURM's UserId of the job
    std::int64_t first_s = 0;            // when its first record came
    bool late = false;                   // opened again by a record after the job was judged
    std::vector<NodeRecord> records;    // one per node that sent, in arrival order
    std::vector<std::string> missing;   // nodes of the job that sent nothing
};

class StopsGather {
public:
    explicit StopsGather(GatherLimits l = {}) : limits_(l) {}

    // Takes a record (already authenticated and checked with record_mismatch)
    // whose body was `bytes` long, at `now_s`.
    Took add(NodeRecord r, std::size_t bytes, std::int64_t now_s);

    // SLURM's node list of the job (squeue's NodeList field, expanded):
    // from then on it decides who belongs to the job. Records already taken
    // from nodes outside it are dropped; their nodes are returned.
    std::vector<std::string> set_slurm_nodes(std::uint32_t job, std::vector<std::string> nodes);
    // The job's owner (SLURM's UserId), for the fair share.
    void set_owner(std::uint32_t job, std::int64_t uid);
    // Jobs whose SLURM list has not been asked for yet.
    std::vector<std::uint32_t> jobs_without_slurm_nodes() const;

    // The jobs that are complete (every node sent) or whose wait has passed,
    // taken out (and remembered as judged): at most `most`, round robin by
    // owner (the first due job of each owner, then the second, ...).
    std::vector<GatheredJob> take_due(std::int64_t now_s, std::size_t most = SIZE_MAX);

    std::size_t pending_jobs() const { return jobs_.size(); }
    std::size_t pending_bytes() const { return bytes_; }

    static constexpr std::size_t kRecentJobs = 4096;

private:
    struct Job {
        std::int64_t first_s = 0;
        std::int64_t owner = kUnknownOwner;
        bool late = false;
        std::vector<std::string> nodes;  // whom to wait for
        bool from_slurm = false;
        std::vector<NodeRecord> records;
        std::vector<std::size_t> sizes;
        std::set<std::string, std::less<>> sent;
        std::size_t bytes = 0;
    };
    GatherLimits limits_;
    std::map<std::uint32_t, Job> jobs_;
    std::size_t bytes_ = 0;
    // The judged jobs' records: node and run (window_start_ns).
    std::map<std::uint32_t, std::set<std::pair<std::string, std::int64_t>>> judged_;
    std::deque<std::uint32_t> judged_order_;
    void remember(std::uint32_t job, const std::vector<NodeRecord>& records);
};

// The order in which to take items of these owners: round robin by owner,
// each owner's in their order (fair share of the pending work per user).
std::vector<std::size_t> fair_order(const std::vector<std::int64_t>& owners);

}  // namespace gangway::postmortem
