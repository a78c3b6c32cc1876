// The running job's node agent (issue 43, docs/watch.md): where the site
// turned watching on (plugstack.conf watch=, watch_to=) and the job did not
// opt out (--gangway-on-hang=off), the tasks get GANGWAY_WATCH_INTERVAL (the
// torch hook's pace reports), and slurmstepd starts one `gangway watch-node`
// a step (root, its own session, every signal at its default, no fd but a
// pipe as stdin and /dev/null): the pipe's end, when slurm_spank_exit closes
// it or slurmstepd ends, ends the agent. Nothing of it can fail a task.
#pragma once
#include <cstdint>
#include <string>

#include "spank_api.hpp"

namespace gangway::plugin::watch {

// init_post_opt (slurmstepd): whether this step is watched; sets the tasks' variable.
void prepare(spank_t sp);

// The sampler's first task (slurmstepd, root): starts the agent once.
void start_agent(const std::string& job_dir, std::uint32_t step);

// slurm_spank_exit: its stdin closed; reaped if it has ended.
void stop() noexcept;

}  // namespace gangway::plugin::watch
