// Reading the job's environment in slurmstepd.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../lib/env/step_view.hpp"  // EnvMap
#include "spank_api.hpp"

namespace gangway::plugin {

// One variable, whatever its length.
std::optional<std::string> get_env(spank_t sp, const std::string& name);

// The order read_env's names are sorted in: by length, then by bytes. Any
// strict order would do; most names differ in length, so this one seldom
// compares bytes (sorting the ~70 names was a fifth of user_init's own work).
inline bool env_name_less(std::string_view a, std::string_view b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// The variables of `names` (sorted by env_name_less, unique) that are set, empty ones too, by
// one pass over the job's environment (S_JOB_ENV). slurmstepd's own lookup
// is a linear scan per call and a task start wants some 70 names: one
// spank_getenv each made the environment scans most of task_init's cost.
EnvMap read_env(spank_t sp, const std::vector<std::string_view>& names);

}  // namespace gangway::plugin
