// SLURM's compressed per-node counts: "2(x3),1" -> {2,2,2,1}. The same grammar
// is used by SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE.
#pragma once
#include <string_view>
#include <vector>

namespace gangway {

// Throws gangway::Error on malformed input.
std::vector<unsigned> expand_counts(std::string_view expr);

}  // namespace gangway
