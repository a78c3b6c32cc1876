// Root's view of each task while its step runs (issue 41, item 7). A hang's
// dumps are the user's and keep only what the framework saw: a rank stopped
// between collectives, SIGCONTinued by SLURM before the SIGTERM, dumps like
// every other. slurmstepd (root) sees each task's processes all along: it
// samples them every few seconds (spank/sampler.cpp) and keeps the last
// rounds in the job's directory; the Epilog sends them with the node's
// record; the verdict names the rank that was stopped, in uninterruptible
// sleep or waiting for a CPU while the others waited (stall.hpp).
//
// This file is in libgangway_core (the plugin writes the lines): no JSON, no
// engine code. Pure: the plugin reads /proc and the cgroup files and passes
// their text here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::postmortem {

// A task's state in one round: the worst of its processes' main threads, in
// this order (a stopped process stops its task's rank, whatever its parent does).
enum class TaskState : std::uint8_t {
    gone,       // no process of the task could be read (it ended)
    sleeping,   // S, I: waiting for something (a peer, a timer)
    running,    // R: on a CPU or waiting for one
    disk_wait,  // D: uninterruptible sleep (I/O, a driver, a page fault on a dead filesystem)
    stopped,    // T, t: SIGSTOP, SIGTSTP or a debugger
};
// 'X', 'S', 'R', 'D', 'T': the file's letter; parse_state_letter takes
// /proc's letters too (I as S, t as T, Z and X as gone, W/P/K as S).
char state_letter(TaskState s) noexcept;
std::optional<TaskState> parse_state_letter(char c) noexcept;

// /proc/PID/stat -> its state letter (the field after the last ')', since
// the command name may hold blanks and parentheses); nullopt if malformed.
std::optional<char> stat_state(std::string_view stat) noexcept;
// /proc/PID/schedstat ("ON_CPU_NS RUNQUEUE_WAIT_NS SLICES") -> the first two.
struct SchedStat {
    std::uint64_t cpu_ns = 0, wait_ns = 0;
};
std::optional<SchedStat> parse_schedstat(std::string_view text) noexcept;

// The pids of a cgroup.procs file (one a line) or of /proc/P/task/P/children
// (blank-separated) into out[0..max), in order, their count returned; what is
// not a pid is passed over. No allocation (slurmstepd's sampler).
std::size_t parse_pids(std::string_view text, int* out, std::size_t max) noexcept;

// One task in one round.
struct TaskSample {
    std::int64_t t_ns = 0;      // CLOCK_REALTIME of the round (the node's clock, as the task ends')
    std::uint32_t step = 0, rank = 0;
    TaskState state = TaskState::gone;
    std::uint64_t cpu_ns = 0;   // its processes' main threads' time on a CPU, summed (it may fall as processes end)
    std::uint64_t wait_ns = 0;  // and their time runnable but waiting for a CPU
    std::uint32_t procs = 0;    // processes read
};
// The pressure stall information each round: the step cgroup's (cgroup v2's
// cpu.pressure, memory.pressure, io.pressure) where it has them, else the
// node's (/proc/pressure/*; cgroup v1 keeps none a cgroup): the share of the
// last 10 s in which some task waited for a CPU, for memory, for I/O.
enum class PressureScope : std::uint8_t { node, step };
struct PressureSample {
    std::int64_t t_ns = 0;
    std::uint32_t step = 0;
    std::uint32_t cpu = 0, memory = 0, io = 0;  // "some avg10", hundredths of a percent (0-10000)
    PressureScope scope = PressureScope::node;
};
// A pressure file's "some avg10=12.34 ..." -> 1234; nullopt if it has none.
std::optional<std::uint32_t> pressure_some_avg10(std::string_view text) noexcept;

inline constexpr std::size_t kMaxSampleRounds = 24;       // the file keeps the newest rounds (2 minutes at 5 s)
inline constexpr std::size_t kMaxSampledTasks = 512;      // a step's tasks on one node that are sampled
inline constexpr std::size_t kMaxSampleRows = 8192;       // a node record's rows, every step together
inline constexpr std::size_t kMaxProcsPerTask = 64;       // a task's processes read each round
inline constexpr std::int64_t kDefaultSampleNs = 5'000'000'000;

// The file slurmstepd rewrites each round, "<job dir>/samples.<step>":
//   gangway-samples 1 step=S interval_ms=N
//   T_NS RANK STATE CPU_NS WAIT_NS PROCS      (one line a task a round, oldest round first)
//   P T_NS CPU MEMORY IO n|s                  (a round's pressure, node's or step's, after its tasks)
// parse is strict (the header once, six fields a line, a known letter, every
// number whole) and bounded (kMaxSampleRounds x kMaxSampledTasks lines):
// throws gangway::Error otherwise.
struct StepSamples {
    std::uint32_t step = 0;
    std::int64_t interval_ns = 0;
    std::vector<TaskSample> rows;
    std::vector<PressureSample> pressure;
};
// Each line into a fixed buffer, its length returned (the plugin's writer
// allocates nothing per line). Never throws.
inline constexpr std::size_t kMaxSampleLine = 128;
std::size_t format_sample_header(std::uint32_t step, std::int64_t interval_ns, char (&out)[kMaxSampleLine]) noexcept;
std::size_t format_sample_line(const TaskSample& s, char (&out)[kMaxSampleLine]) noexcept;
std::size_t format_pressure_line(const PressureSample& p, char (&out)[kMaxSampleLine]) noexcept;
StepSamples parse_samples(std::string_view text);

}  // namespace gangway::postmortem
