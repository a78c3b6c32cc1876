// Reading the job's environment in slurmstepd.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../lib/env/step_view.hpp"  // EnvMap
#include "spank_api.hpp"

namespace gangway::plugin {

// One variable, whatever its length.
std::optional<std::string> get_env(spank_t sp, const std::string& name);

// The variables of `names` (sorted, unique) that are set, empty ones too, by
// one pass over the job's environment (S_JOB_ENV). slurmstepd's own lookup
// is a linear scan per call and a task start wants some 70 names: one
// spank_getenv each made the environment scans most of task_init's cost.
EnvMap read_env(spank_t sp, const std::vector<std::string>& names);

}  // namespace gangway::plugin
