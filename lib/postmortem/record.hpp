// The evidence of a job's stop, as its nodes keep it (issue 33). Plain data:
// the plugin (slurmstepd, root) writes a TaskEnd per task (lib/stepd, in the
// plugin's library, as are the samples' rows); the node's Epilog
// (root) gathers its tasks and its kernel-log, port and GPU signs into a
// NodeRecord; the framework's dumps (the user's processes) become RankDumps.
// The verdict (verdict.hpp) reads all nodes' records; delivery carries them.
//
// Trust is in the type, not in the text: a NodeRecord's `tasks` and
// `evidence` are root's (slurmstepd, Epilog); `dumps` are the user's and may
// only point at a rank of the user's own job, never at a node's hardware.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../stepd/task_end.hpp"
#include "../stepd/task_samples.hpp"

namespace gangway::postmortem {

// What the node's own logs and devices said during the job's window.
enum class Sign {
    gpu_xid,        // NVRM: Xid, device = PCI bus id, code = the Xid
    oom_kill,       // the kernel's OOM killer, pid = the killed process
    link_down,      // a netdev or HCA port went down (device = ifname or mlx5_0/1)
    hung_task,      // "task ... blocked for more than N seconds"
    ib_errors,      // an IB port's error counters grew since the step began (code = the growth)
    retired_pages,  // NVML: retired pages or row remapping pending/failed
    hca_lost,       // an RDMA device present at the job's start, gone at its end (device = mlx5_0)
    gpu_lost,       // a GPU present at the job's start, gone from the PCI bus at its end (device = bus id)
};
// "gpu_xid", "oom_kill", ...: the JSON's spelling; parse_sign: nullopt for any other.
const char* to_string(Sign s);
std::optional<Sign> parse_sign(std::string_view name);
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
    // The process group these numbers count in (Flight Recorder's
    // process_group name, the same on every member): each group numbers its
    // collectives from its own start, so they compare only within one group.
    // A rank of several groups has a dump per group; "" a schema-1 dump.
    std::string group;
    // When this rank entered, started and completed its newest collectives
    // of the group (at most kMaxTimed, oldest first), on its node's
    // CLOCK_REALTIME: Flight Recorder's time_created_ns (the call, on the
    // rank's own thread), time_discovered_started_ns and
    // time_discovered_completed_ns (NCCL's watchdog; gloo records neither).
    // 0: not recorded. Empty from a hook before rank-dump schema 3.
    struct Timed {
        std::uint64_t seq = 0;
        std::int64_t entered_ns = 0, started_ns = 0, completed_ns = 0;
    };
    std::vector<Timed> timed;
};
inline constexpr std::size_t kMaxGroupName = 64;
inline constexpr std::size_t kMaxTimed = 32;  // a dump's timed collectives, per group

// One node's record of one job, as its Epilog writes and sends it.
struct NodeRecord {
    std::string node;
    std::uint32_t job = 0;
    std::vector<std::string> job_nodes;  // the job's node list, expanded (who else to wait for)
    std::int64_t window_start_ns = 0, window_end_ns = 0;
    std::vector<TaskEnd> tasks;          // root's: slurmstepd
    std::vector<Evidence> evidence;      // root's: the Epilog's readers
    std::vector<RankDump> dumps;         // the user's: a rank, never a node
    // Root's collector's own lines about what the record lacks: the kernel
    // log's records lost in the window, the rank dumps cut to fit. Shown in
    // the timeline; never a sign of a fault. At most kMaxNotes of kMaxNoteText.
    std::vector<std::string> notes;
    // Root's: slurmstepd's rounds of the job's tasks on this node while they
    // ran (task_samples.hpp), the newest rounds, at most kMaxSampleRows.
    std::vector<TaskSample> samples;
    std::vector<PressureSample> pressure;  // root's: each round's pressure, at most kMaxPressureRows
};
inline constexpr std::size_t kMaxPressureRows = kMaxSampleRounds * 64;
inline constexpr std::size_t kMaxNotes = 8;
inline constexpr std::size_t kMaxNoteText = 300;

// JSON, bounded (at most 4,096 tasks, 256 evidence lines, 4,096 dumps of
// 4,096 sequence numbers each); parse throws gangway::Error naming the field.
//
// node_record.cpp: {"kind":"gangway-node-record","schema":1,"node":...,
// "job":...,"job_nodes":[...],"window_start_ns":...,"window_end_ns":...,
// "tasks":[{TaskEnd's fields by name, "requeue_on_fail":bool}],
// "evidence":[{"t_ns","sign":to_string(Sign),"device","code","pid","text"}],
// "dumps":[{"rank","entered":[...],"completed":[...],"exception","group",
// "timed":[[seq,entered_ns,started_ns,completed_ns],...]}],"notes":[...],
// "samples":[[step,t_ns,rank,"S",cpu_ns,wait_ns,procs],...],
// "pressure":[[step,t_ns,cpu,memory,io,"n"|"s"],...]}.
// "group", "timed", "notes", "samples" and "pressure" are optional (an earlier collector wrote
// none; an earlier reader passes "timed" over), each row of "timed" exactly
// 4 whole numbers, and every row's 4 count among kMaxSeqsTotal.
// The parse builds the record as the text comes (a SAX handler, no JSON
// tree), so its memory is the record's own: it refuses a text over
// kMaxRecordBytes, a string over kMaxRecordString, a list over its limit, a
// key twice in one object, a missing key, a value of the wrong type or range,
// at the value that crosses the line. Unknown keys are passed over (a newer
// Epilog's additions), their values still within the limits. to_json cuts
// nothing: the collector keeps within the limits (the evidence's text at
// kMaxEvidenceText) and parse refuses what does not.
inline constexpr std::size_t kMaxRecordBytes = 16u << 20;
inline constexpr std::size_t kMaxRecordString = 4096;   // a name, an exception's line
inline constexpr std::size_t kMaxEvidenceText = 200;
inline constexpr std::size_t kMaxJobNodes = 65'536;
inline constexpr std::size_t kMaxTasks = 4096;
inline constexpr std::size_t kMaxEvidence = 256;
inline constexpr std::size_t kMaxDumps = 4096;
inline constexpr std::size_t kMaxSeqs = 4096;           // each of a dump's entered and completed
inline constexpr std::size_t kMaxSeqsTotal = 1u << 20;  // all dumps' sequence numbers together (8 MiB)
std::string to_json(const NodeRecord& r);
NodeRecord parse_node_record(std::string_view json);

}  // namespace gangway::postmortem
