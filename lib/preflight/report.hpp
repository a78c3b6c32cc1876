// The job check's report (the preflight's results) as plain data, the
// verdict and exit code derived from them, and two of its renderings: a
// table for humans (stderr) and an SVG heatmap of node-to-node bandwidth.
// Its JSON is the fleet's schema's (lib/fleet/report_schema.hpp). What it
// shares with the node check's report (lib/health/report.hpp) is in
// check_records.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check_records.hpp"

namespace gangway::preflight {

// faulty: a GPU or RDMA stage failed on the node (broken or slow GPU, port down or slow).
enum class NodeStatus { ok, slow, mismatch, faulty, unreachable, missing, lost };
const char* to_string(NodeStatus s);
// Whether a node takes part in the stages still to come: a slow or
// mismatched node can still send and receive; a faulty, unreachable,
// missing or lost one is left out, so that it does not spoil its peers' figures.
bool takes_part(NodeStatus s);

struct NodeResult {
    std::string name;                      // SLURM node name
    std::string addr;                      // data address
    NodeStatus status = NodeStatus::ok;
    std::vector<std::string> reasons;
    std::optional<double> tx_bps, rx_bps;  // ring rounds, median
    long nic_mbps = -1;                    // the data NIC's rate from the card
};

struct LinkResult {
    unsigned from = 0, to = 0;             // indices into nodes
    std::string stage;                     // "reach", "bandwidth", "confirm"
    bool ok = true;
    std::optional<double> bps;             // bandwidth stages
    std::optional<double> ms;              // reach: connect time
    std::string error;
};

struct Report {
    std::string id;                        // unique per check when spooled for the fleet ("" otherwise)
    std::int64_t time = 0;                 // its start, seconds since the epoch
    std::string job_id, step_id, mode;     // mode: quick, full
    std::string bootstrap;                 // "tcp", "pmix"
    std::vector<NodeResult> nodes;
    std::vector<LinkResult> links;
    std::vector<StageResult> stages;
    std::vector<std::string> findings;     // card mismatches, failures that survived confirmation: degrade the verdict
    std::vector<std::string> notes;        // suspicions that did not survive confirmation: for the reader, not the verdict
    // rank_order=topology and the nodes computed different orders: what the
    // plugin's tasks are told (lib/env/rank_order.hpp's order_answer); "" when they agree.
    std::string order_answer;
    std::vector<GpuRecord> gpus;
    std::vector<NcclRecord> nccl;          // each node's own all-reduce (the sweep's sizes too, with full)
    std::vector<PortRecord> ports;
    double expected_bps = 0;
    double slow_ratio = 0;
    double seconds = 0;
    double deadline_s = 0;                 // the check's deadline, from its start (--timeout or the default)
};

enum class Verdict { ok, degraded, unreachable };
const char* to_string(Verdict v);
// The word a task reads in node 0's verdict message. A word it does not know
// (another version's, a garbled one) reads as unreachable: a task never
// starts the user's command on a verdict it cannot vouch for.
Verdict parse_verdict(std::string_view word);
// unreachable when a node is unreachable, missing or lost; degraded when a
// node is slow or mismatched or there are findings; else ok. A failed or
// slow link counts only through them: every stage turns a failure that
// survived its confirmation into a node's status or a finding, and one that
// did not into a note.
Verdict verdict(const Report& r);

// Exit codes of `gangway check` and of `gangway run --on-fail=abort`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDegraded = 3;
inline constexpr int kExitUnreachable = 4;
inline constexpr int kExitCannotCheck = 5;
int exit_code(Verdict v);

// Nodes that are not ok, by name.
std::vector<std::string> bad_nodes(const Report& r);

std::string render_table(const Report& r);

// The heatmap (heatmap.cpp): one panel per fabric, a cell per measured pair up
// to kHeatmapFullMax nodes; above, a cell per pair of blocks of nodes (at most
// kHeatmapBlocks a side) showing the block pair's worst figure, and the nodes
// not ok listed by name, so that its size stays O(nodes + links), not O(nodes²).
inline constexpr std::size_t kHeatmapFullMax = 128;
inline constexpr std::size_t kHeatmapBlocks = 64;
std::string render_svg(const Report& r);

}  // namespace gangway::preflight
