// The nccl-job stage's judgement: the all-reduce the job will run, over every
// node that passed its own nccl stage, from each node's answer; and, when it
// fails or is slow, its localisation by two-node all-reduces along the ring
// (pair_rounds), in which a node whose pairs with both ring neighbours fail
// or are slow is the one to blame. Plain data: a pair's time is kept as
// seconds, and becomes a bus bandwidth in bytes per second only as a link
// (pair_link). Sending the commands is the coordinator's
// (lib/sys/preflight/coordinator_gpu.cpp).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gpu_checks.hpp"
#include "localize.hpp"
#include "schedule.hpp"
#include "wire.hpp"

namespace gangway::preflight {

// A node's part in one all-reduce across nodes.
struct NcclAnswer {
    std::string node;            // its name, for messages
    unsigned gpus = 0;           // its ranks in the communicator, one per GPU
    const Kv* answer = nullptr;  // its answer to the run phase ({ok, error, seconds, data_ok}); null: none came
};

// The job's all-reduce (scope "job") over `bytes`: the slowest node's time,
// wrong sums anywhere, and the errors of the nodes that failed, by name; with
// no error but a node that did not answer, "not every node answered". Model
// and expected figure are the caller's. Throws gangway::Error on a malformed answer.
gpu::NcclResult job_allreduce(const std::vector<NcclAnswer>& nodes, double bytes);

// One two-node all-reduce of the localisation.
struct NcclPair {
    unsigned from = 0, to = 0;  // positions in the list of nodes (a pair_rounds flow)
    unsigned nranks = 0;        // both nodes' GPUs
    bool ok = true;             // both ends ran it and got the right sums
    double seconds = 0;         // the slower end's time for one all-reduce; 0: none measured
    std::string error;          // why not, when !ok (the second end's, when both failed)
};
// Throws gangway::Error on a malformed answer.
NcclPair nccl_pair(const Flow& flow, const NcclAnswer& from, const NcclAnswer& to);

// The pair as a link: bps its busbw (nccl-tests' definition, for its ranks)
// over `bytes` in bytes per second; 0 when it failed or has no time.
Measurement pair_link(const NcclPair& p, double bytes);

struct PairsBlame {
    std::vector<std::pair<unsigned, std::string>> faulty;  // position and its reason, ascending
    std::vector<std::string> findings;  // that no pair is good (when so), then each pair that fails or is slow
};

// Every pair of pair_rounds(n) measured, names by position. A job all-reduce
// that failed or summed wrong (`job`) is localised by the pairs that fail,
// whatever the others' speed; a slow one by the pairs that are slow: below
// busbw_ratio x job.expected_busbw when there is a figure, else below
// slow_ratio x the pairs' own 75th percentile (the TCP stage's looser ratio:
// short runs are noisy). No good pair at all blames no node. Throws
// gangway::Error when a pair's position is n or more, or a node has no name.
PairsBlame blame_pairs(unsigned n, const std::vector<NcclPair>& pairs, const std::vector<std::string>& names,
                       const gpu::NcclResult& job, double busbw_ratio, double slow_ratio);

}  // namespace gangway::preflight
