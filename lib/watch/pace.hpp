// While a job runs (issue 43, docs/watch.md): each rank's pace as gangway's
// torch hook reports it, root's view of each task and node, and what the
// judgement (judge.hpp) makes of them. Plain data; pure.
//
// Trust (as the post-mortem's): a Pace is the user's word. The node agent
// (lib/sys/watch) keeps one only for a rank that root's samples place on its
// node, so the ranks' numbers can point only at ranks (and through root's
// mapping, nodes) of the user's own job; they alone never drain, exclude or
// flag a node. Root's TaskView and NodeView are what confirm.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../stepd/task_samples.hpp"

namespace gangway::watch {

// One process group's collectives as one rank saw them (PyTorch's Flight
// Recorder, read by the hook). Each group numbers its collectives on its own
// (collective_seq_id, the same on every member), so groups are kept apart
// by name.
struct GroupPace {
    std::string group;             // the group's name (the same on every member), 1-64 printable bytes
    std::uint64_t entered = 0;     // the newest collective this rank entered (0: none yet)
    std::uint64_t completed = 0;   // the newest it completed (gloo: retired), <= entered
    // (seq, when this rank entered it): time_created_ns on the rank's node's
    // clock; the newest kMaxEnters, oldest first, seqs increasing.
    struct Enter {
        std::uint64_t seq = 0;
        std::int64_t t_ns = 0;
    };
    std::vector<Enter> enters;
};
inline constexpr std::size_t kMaxEnters = 64;
inline constexpr std::size_t kMaxPaceGroups = 8;

// One report of one rank: the hook writes one every interval, at the
// interval's multiples of the node's clock (so that every rank's reports of
// a round cover the same collectives).
struct Pace {
    std::uint32_t rank = 0;
    std::int64_t t_ns = 0;  // when the hook wrote it (the node's CLOCK_REALTIME)
    std::vector<GroupPace> groups;
};

// One of the node's addressed links, root's reading (lib/sys/watch/link_queues):
// cumulative counters since the interface was made.
struct LinkQueue {
    std::string name;                  // eth1, ib0: at most 15 bytes
    std::uint64_t tx_bytes = 0, tx_errors = 0, tx_dropped = 0;  // the interface's (IFLA_STATS64)
    std::uint64_t qdisc_drops = 0, qdisc_overlimits = 0;        // its root qdisc's (TCA_STATS_QUEUE)
    bool operator==(const LinkQueue&) const = default;
};
inline constexpr std::size_t kMaxLinkQueues = 16;

// What the user asked to happen on a hang (--gangway-on-hang=).
enum class OnHang : std::uint8_t { report, cancel, requeue };
const char* on_hang_name(OnHang h) noexcept;                // "report", "cancel", "requeue"
std::optional<OnHang> parse_on_hang(std::string_view s) noexcept;

// What one node's agent sends each interval (root's record): the ranks'
// newest reports it kept, slurmstepd's samples of the step's tasks there
// (task_samples.hpp's rows and pressure, the newest rounds), and the node.
struct NodeProgress {
    std::uint32_t job = 0, step = 0;
    std::string node;
    std::uint32_t uid = 0;                 // the job's owner, as slurmstepd knows it
    std::int64_t t_ns = 0;                 // when the agent read it (the node's clock)
    std::int64_t interval_ns = 0;          // the reports' interval
    OnHang on_hang = OnHang::report;       // the step's --gangway-on-hang
    std::vector<std::uint32_t> ranks;      // the step's ranks root placed on this node
    std::vector<Pace> paces;               // the ranks' reports (only of `ranks`)
    std::vector<postmortem::TaskSample> samples;      // root's: each task's newest rounds
    std::vector<postmortem::PressureSample> pressure; // root's: the node's (or step's) pressure
    std::vector<LinkQueue> links;                     // root's: the node's addressed links at t_ns
};

}  // namespace gangway::watch
