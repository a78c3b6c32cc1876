// Root's view of each task while the step runs (issue 41, item 7): a thread
// of slurmstepd reads each task's processes every postmortem_sample= seconds
// (state, CPU time, run-queue wait) and rewrites <job dir>/samples.<step>
// with the newest rounds, for the Epilog's record and the hang's verdict
// (lib/stepd/task_samples.hpp, stall.hpp). Off without postmortem_dir=
// or with postmortem_sample=0.
//
// The thread touches no SPANK handle and no slurmstepd state: it reads
// /proc and one cgroup file a task, writes one root-only file, and sleeps on
// an eventfd that stop() signals. It blocks every signal (slurmstepd's own
// threads take them). Its objects are never freed: a slurmstepd that exits
// without slurm_spank_exit leaves nothing for the thread to touch freed.
#pragma once
#include "spank_api.hpp"

namespace gangway::plugin::sampler {

// slurm_spank_task_post_fork (slurmstepd, root): the task to sample; the
// first one starts the thread. Never fails the task.
void add_task(spank_t sp);

// slurm_spank_task_exit: the task's processes are no longer read.
void end_task(spank_t sp);

// slurm_spank_exit (slurmstepd): the thread stops and is joined (at most one
// round's reads: a few files a task); a write it could not make is one line.
void stop() noexcept;

}  // namespace gangway::plugin::sampler
