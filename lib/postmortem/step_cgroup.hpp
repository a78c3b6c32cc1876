// Where slurmstepd finds its step's OOM-kill count (issue 33). An OOM kill
// looks like a plain SIGKILL in the wait status; only the step's memory
// cgroup counts it. slurmstepd sits in its step's cgroup (cgroup v1:
// memory:/slurm/uid_U/job_J/step_S; v2: .../job_J/step_S/slurm) and its
// tasks below it, and the count (v1 memory.oom_control's `oom_kill`, v2
// memory.events' `oom_kill`) covers the cgroups below it. Pure: the plugin
// reads /proc/self/cgroup and the counter file (spank/task_exit.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway::postmortem {

// /proc/self/cgroup's text -> the step's counter file under `cgroup_root`
// (v1's memory controller, else v2's unified hierarchy): the path cut after
// its last "step_*" component. nullopt where no memory cgroup is a step's
// (no cgroup plugin: proctrack/linuxproc), or a path with "." or "..".
// O(n) in the text.
std::optional<std::string> step_oom_file(std::string_view proc_cgroup, std::string_view cgroup_root = "/sys/fs/cgroup");

// The `oom_kill N` line of memory.oom_control or memory.events; 0 where
// there is none (a kernel before 4.13) or it is not a number. O(n).
std::uint64_t parse_oom_kill(std::string_view counters);

}  // namespace gangway::postmortem
