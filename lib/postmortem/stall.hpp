// A hang's rank from root's samples (issue 41, item 7): the rank whose
// processes slurmstepd saw stopped, in uninterruptible sleep or starved of
// CPU up to the end, while the step's other ranks waited. Pure: the samples
// come from the nodes' records (task_samples.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record.hpp"
#include "../stepd/task_samples.hpp"

namespace gangway::postmortem {

struct Stall {
    std::uint32_t rank = 0;
    std::string node;
    TaskState state = TaskState::stopped;  // stopped, disk_wait, or running: starved of CPU
    double for_s = 0;                      // how long root saw it so, at least
    double waited = 0;                     // running: the share of that time it waited for a CPU
};

// The figures of the rule (stall.cpp says why).
inline constexpr double kStarvedShare = 0.5;           // a rank waiting for a CPU at least half of each interval
inline constexpr std::size_t kStarvedIntervals = 2;    // over the last two intervals
inline constexpr std::int64_t kStallSlackNs = 1'000'000'000;

// The step's stalled ranks before t0 (the first task end: SLURM's signal),
// rank order. Empty when no rank was stalled, when every sampled rank was
// (a suspended job, not one rank's hang), or with no samples. O(n log n) in
// the rows.
std::vector<Stall> find_stalls(const std::vector<NodeRecord>& records, std::uint32_t step, std::int64_t t0);

// What root saw of one stalled rank, for the line and the timeline alike:
// "stopped (SIGSTOP or a debugger) for at least 15 s", "in uninterruptible
// sleep (D: I/O or a driver) for at least 10 s", "waited for a CPU 80% of
// its last 10 s".
std::string stall_what(const Stall& s);

// "rank 5 on node10 stopped (SIGSTOP or a debugger) for at least 15 s; ...
// while 7 other ranks waited": the hang's detail, at most about 120 bytes for one rank.
std::string stall_words(const std::vector<Stall>& stalls, std::uint32_t others);

}  // namespace gangway::postmortem
