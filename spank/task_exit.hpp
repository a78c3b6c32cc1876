// The post-mortem's evidence from slurmstepd (issue 33): each task's end,
// written as root into the node-local job directory under postmortem_dir=,
// for the Epilog's `gangway postmortem collect`. Off without postmortem_dir=.
#pragma once
#include <cstdint>
#include <string>

#include "spank_api.hpp"

namespace gangway::plugin::task_exit {

// Remote init (slurmstepd, root, the step's start): decides the job's
// directory, makes it (root, 0711) and the user's dump directory in it (the
// job's owner, 0700), and sets GANGWAY_POSTMORTEM_DIR for the tasks. Never
// fails the step: a problem is one line in slurmd's log and no record.
void prepare(spank_t sp);

// slurm_spank_task_exit (slurmstepd, root, once per task that ended): one
// TaskEnd line, task.<step>.<rank>. Bounded: two small reads and one file.
void record(spank_t sp);

// What prepare() decided, for the sampler (sampler.hpp): the job's directory
// (empty: no record for this step) and the step.
const std::string& job_dir() noexcept;
std::uint32_t step_id() noexcept;

}  // namespace gangway::plugin::task_exit
