// The Epilog's collector's rules (lib/sys/postmortem/collect.cpp reads the
// files, the kernel log, the links and NVML; these decide what of it counts):
// the job's window on this node, when a change the Prolog's snapshot shows is
// said to have happened, when NVML is asked, and how much evidence a record
// keeps. Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

inline constexpr std::int64_t kNoBirthLookbackNs = std::int64_t(600) * 1000000000;  // no birth time: before the first end
inline constexpr std::int64_t kWindowSlackNs = std::int64_t(5) * 1000000000;        // the kernel's lines just before a death

// Where the job's window on this node starts: the job directory's birth (its
// first step's start here), or after this node's record of an earlier run of
// the job (a requeued job: that run's signs are not taken again); with no
// birth time, kNoBirthLookbackNs before the first task end (or now). Always
// kWindowSlackNs earlier.
std::int64_t window_start(std::optional<std::int64_t> birth_ns, std::optional<std::int64_t> earlier_record_ns,
                          const std::vector<TaskEnd>& tasks, std::int64_t now_ns);

// When a change the Prolog's snapshot shows (a carrier lost and back, a
// device gone) is said to have happened: between the job's start and now,
// when is not known, and the Epilog reads it seconds after the ranks failed,
// past the verdict's 2 s of slack. So at this node's first task end (when its
// ranks had felt it), or now where no task ended here or there is no snapshot.
std::int64_t change_time(bool have_snapshot, const std::vector<TaskEnd>& tasks, std::int64_t now_ns);

// NVML is asked only after a task here ended abnormally: its first call can
// take seconds on a GPU node, and a healthy job's Epilog should not pay it.
bool wants_gpu_signs(const std::vector<TaskEnd>& tasks);

// `signs` appended to the record's evidence, up to kMaxEvidence in all.
void add_evidence(NodeRecord& r, std::vector<Evidence> signs);

}  // namespace gangway::postmortem
