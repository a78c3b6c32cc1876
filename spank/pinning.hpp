// Pinning in slurmstepd: plan this node's placement once per step
// (user_init), then bind each task and give it its variables (task_init).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "../lib/env/config.hpp"
#include "../lib/env/step_view.hpp"
#include "../lib/env/var_list.hpp"
#include "spank_api.hpp"

namespace gangway::plugin::pinning {

// Loads the topology (the site's cache or XML, else live discovery) and
// plans the step's local tasks. Throws gangway::Error.
void plan_node(spank_t sp, const Config& cfg, const StepView& step);

// The task's pinning variables (lib/pin/pin_env), for plan_env to merge;
// `env` holds the task's CUDA_VISIBLE_DEVICES if set.
VarList task_vars(const EnvMap& env, const Config& cfg, const StepView& step);

// sched_setaffinity to the task's planned CPUs. Throws gangway::Error.
void bind_task(const StepView& step);

}  // namespace gangway::plugin::pinning
