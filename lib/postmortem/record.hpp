// The evidence of a job's stop, as its nodes keep it (issue 33). Plain data:
// the plugin (slurmstepd, root) writes a TaskEnd per task; the node's Epilog
// (root) gathers its tasks and its kernel-log, port and GPU signs into a
// NodeRecord; the framework's dumps (the user's processes) become RankDumps.
// The verdict (verdict.hpp) reads all nodes' records; delivery carries them.
//
// Trust is in the type, not in the text: a NodeRecord's `tasks` and
// `evidence` are root's (slurmstepd, Epilog); `dumps` are the user's and may
// only point at a rank of the user's own job, never at a node's hardware.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
std::string format_task_end(const TaskEnd& t);
TaskEnd parse_task_end(std::string_view line);

// What the node's own logs and devices said during the job's window.
enum class Sign {
    gpu_xid,        // NVRM: Xid, device = PCI bus id, code = the Xid
    oom_kill,       // the kernel's OOM killer, pid = the killed process
    link_down,      // a netdev or HCA port went down (device = ifname or mlx5_0/1)
    hung_task,      // "task ... blocked for more than N seconds"
    ib_errors,      // an IB port's error counters grew since the step began (code = the growth)
    retired_pages,  // NVML: retired pages or row remapping pending/failed
};
struct Evidence {
    std::int64_t t_ns = 0;  // when the kernel (or the reader) saw it
    Sign sign = Sign::gpu_xid;
    std::string device;
    std::int64_t code = 0;
    std::int32_t pid = 0;
    std::string text;       // the record's own words, at most 200 bytes, printable
};

// What a rank's framework left (Flight Recorder, Python stack), read by the
// Epilog from the job's directory where the user's processes wrote it.
struct RankDump {
    std::uint32_t rank = 0;
    // The sequence numbers of the collectives this rank entered, oldest first
    // (Flight Recorder's collective_seq_id), and those it completed.
    std::vector<std::uint64_t> entered, completed;
    std::string exception;  // the Python exception's type and first line, if it raised one
};

// One node's record of one job, as its Epilog writes and sends it.
struct NodeRecord {
    std::string node;
    std::uint32_t job = 0;
    std::vector<std::string> job_nodes;  // the job's node list, expanded (who else to wait for)
    std::int64_t window_start_ns = 0, window_end_ns = 0;
    std::vector<TaskEnd> tasks;          // root's: slurmstepd
    std::vector<Evidence> evidence;      // root's: the Epilog's readers
    std::vector<RankDump> dumps;         // the user's: a rank, never a node
};

// JSON, bounded (at most 4,096 tasks, 256 evidence lines, 4,096 dumps of
// 4,096 sequence numbers each); parse throws gangway::Error naming the field.
std::string to_json(const NodeRecord& r);
NodeRecord parse_node_record(std::string_view json);

}  // namespace gangway::postmortem
