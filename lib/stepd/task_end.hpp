// A task's end, as the plugin writes it in slurmstepd (spank/task_exit.cpp)
// and the node's Epilog reads it into its NodeRecord (lib/postmortem/record.hpp).
// In libgangway_core, which the plugin links: plain data and one line of
// key=value text, no JSON library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gangway::postmortem {

// One task's end, from slurm_spank_task_exit in slurmstepd.
struct TaskEnd {
    std::int64_t t_ns = 0;       // CLOCK_REALTIME when slurmstepd collected the status
    std::string node;            // this node's SLURM name
    std::uint32_t job = 0, step = 0;
    std::uint32_t rank = 0;      // S_TASK_GLOBAL_ID
    std::uint32_t local_rank = 0;
    std::int32_t pid = 0;        // S_TASK_PID: maps an OOM killer's line to the rank
    int wait_status = 0;         // raw, as waitpid(2) gives it (S_TASK_EXIT_STATUS)
    std::uint64_t oom_kills = 0; // the step cgroup's oom_kill count then (0: none, or no memory cgroup)
    bool requeue_on_fail = false;  // the step ran with --gangway-on-fail=requeue
};

// One line, key=value, versioned ("gangway-task 1 t_ns=... node=..."): the
// plugin's writer carries no JSON library. parse throws gangway::Error on
// anything else (a missing or repeated key, a value out of range).
//
// The line (task_end.cpp): "gangway-task 1" then, in this order and each
// once, t_ns= node= job= step= rank= local_rank= pid= wait_status=
// oom_kills= requeue= (0 or 1), separated by one blank, ending in '\n'
// (parse takes it with or without). A node name is 1 to kMaxNodeName bytes
// of printable ASCII without blank or '=': format writes any other byte as
// '?', so what it writes always parses. At most kMaxTaskLine bytes.
inline constexpr std::size_t kMaxNodeName = 255;
inline constexpr std::size_t kMaxTaskLine = 512;
std::string format_task_end(const TaskEnd& t);
// The same line into `out`, its length returned: no allocation (the plugin's
// task_exit, in slurmstepd for every task). Never throws.
std::size_t format_task_end(const TaskEnd& t, char (&out)[kMaxTaskLine]) noexcept;
TaskEnd parse_task_end(std::string_view line);

}  // namespace gangway::postmortem
