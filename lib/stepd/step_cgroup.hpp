// Where slurmstepd finds its step's OOM-kill count (issue 33). An OOM kill
// looks like a plain SIGKILL in the wait status; only the step's memory
// cgroup counts it. slurmstepd sits in its step's cgroup (cgroup v1:
// memory:/slurm/uid_U/job_J/step_S; v2: .../job_J/step_S/slurm) and its
// tasks below it (v1: step_S/task_N; v2: step_S/user/task_N). v2's count
// (memory.events' `oom_kill`) covers the cgroups below; v1's
// (memory.oom_control's `oom_kill`) does not: the kernel counts a kill in the
// victim's own cgroup only, so the task's cgroup is read too. Pure: the
// plugin reads /proc/self/cgroup and the counter files (spank/task_exit.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway::postmortem {

struct OomFiles {
    std::string step;  // the step's counter file
    std::string task;  // v1: the task's (step_S/task_N/memory.oom_control), read where it exists; v2: empty
};
// /proc/self/cgroup's text and the task's local id -> the counter files
// under `cgroup_root` (v1's memory controller, else v2's unified
// hierarchy): the path cut after its last "step_*" component. nullopt where
// no memory cgroup is a step's (no cgroup plugin: proctrack/linuxproc), or
// a path with "." or "..". O(n) in the text.
std::optional<OomFiles> step_oom_files(std::string_view proc_cgroup, unsigned local_task,
                                       std::string_view cgroup_root = "/sys/fs/cgroup");

// The task's own cgroup's process list (v1: the memory controller's
// step_S/task_N/cgroup.procs; v2: step_S/user/task_N/cgroup.procs), for the
// sampler (task_samples.hpp): every process of the task, its children's
// too. nullopt as above; the file may still be missing (task/cgroup off).
std::optional<std::string> task_procs_file(std::string_view proc_cgroup, unsigned local_task,
                                           std::string_view cgroup_root = "/sys/fs/cgroup");

// The step's cgroup v2 directory (its cpu.pressure, memory.pressure and
// io.pressure); nullopt without a v2 step path (cgroup v1 keeps no pressure a
// cgroup: the sampler reads the node's /proc/pressure then).
std::optional<std::string> step_v2_dir(std::string_view proc_cgroup, std::string_view cgroup_root = "/sys/fs/cgroup");

// The `oom_kill N` line of memory.oom_control or memory.events; 0 where
// there is none (a kernel before 4.13) or it is not a number. O(n).
std::uint64_t parse_oom_kill(std::string_view counters);

}  // namespace gangway::postmortem
