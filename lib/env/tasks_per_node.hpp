// SLURM's compressed per-node counts: "2(x3),1" -> {2,2,2,1}. The same grammar
// is used by SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE.
#pragma once
#include <string_view>
#include <vector>

namespace gangway {

// The most tasks SLURM starts on one node: slurm.conf's MaxTasksPerNode "may
// not exceed 65533". A larger count is not SLURM's, and in a heterogeneous
// step it would be the node's own task count (issue 23, item 2: four million
// took 846 MB to plan, 2^32 - 1 ended in std::bad_alloc).
inline constexpr unsigned kMaxTasksPerNode = 65533;

// Throws gangway::Error on malformed input, on a count above
// kMaxTasksPerNode, and on more than kMaxHostlistHosts nodes.
//
// Cost (SECURITY.md, "What a parser may spend"): one pass over the text,
// O(n); memory the counts, at most 65,536 x 4 bytes (twice that while the
// vector grows), and nothing per item.
std::vector<unsigned> expand_counts(std::string_view expr);

}  // namespace gangway
