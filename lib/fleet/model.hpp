// The fleet memory's rows as plain data: what a check measured on a node or
// a link, who measured it, and when. The ingest (lib/sys/fleet) turns each
// spooled report into these rows; the trends (trend.hpp), the table, the
// plots and the OpenMetrics text are pure functions of them. Nothing here
// knows SQLite, HTTP or the spool.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::fleet {

// What a report is: a node check (`gangway node-check`) or a job check
// (`gangway check`/`run`), from the report's own `kind`. It says nothing
// about trust: who vouches for a report is its spooled file's owner (a
// figure's uid, never the content's), and by_root below is the one rule.
// An admin's burn-in job is a job check that root vouches for; a user's
// `node-check --json` dropped in the spool is a node check that only that
// user vouches for (issue 34, item 4).
enum class Source { node_check, job_check };

// Root's word: the file's owner was root (uid 0). Anyone else's numbers are
// that user's word only: a flag never rests on one user's numbers alone
// (SECURITY.md).
inline bool by_root(std::uint32_t uid) { return uid == 0; }
const char* to_string(Source s);
std::optional<Source> parse_source(std::string_view s);

// Each kind of figure the fleet keeps. Every value is in base units, bytes
// per second, as Prometheus' conventions ask. The names are stored in the
// database and become metric names: a name never changes meaning.
enum class Metric {
    tcp_send,        // a node's send bandwidth in the check's ring rounds (median)
    tcp_recv,        // its receive bandwidth
    link_bandwidth,  // one measured pair, node -> peer (the check's bandwidth and confirm stages)
    gpu_h2d,         // one GPU's host-to-device copy bandwidth
    gpu_d2h,         // its device-to-host copy bandwidth
    nccl_busbw,      // the node's own NCCL all-reduce bus bandwidth (nccl-tests' definition)
    port_rate,       // an IB/RoCE port's rate
};
const char* to_string(Metric m);
std::optional<Metric> parse_metric(std::string_view s);
inline constexpr Metric kAllMetrics[] = {Metric::tcp_send,  Metric::tcp_recv, Metric::link_bandwidth,
                                         Metric::gpu_h2d,   Metric::gpu_d2h,  Metric::nccl_busbw,
                                         Metric::port_rate};

// One check, as the ingest stored it.
struct CheckRow {
    std::string id;            // unique and stable: the same report ingested twice is one check
    Source source = Source::node_check;
    std::uint32_t uid = 0;     // the spooled file's owner
    std::int64_t time = 0;     // unix seconds, when the check ran
    std::string job_id;        // "" for a node check
    std::string verdict;       // the report's verdict: a job check's "ok", "degraded", "unreachable";
                               // a node check's "healthy", "pending", "failed", "inconclusive"
    std::vector<std::string> nodes;
};

// One figure of one check.
struct Figure {
    std::string check_id;
    std::int64_t time = 0;     // unix seconds (the check's)
    Source source = Source::node_check;
    std::uint32_t uid = 0;
    std::string node;          // SLURM node name
    std::string device;        // "" node-wide; a GPU's PCI bus id; a port "mlx5_0/1"
    std::string peer;          // link_bandwidth: the other node; "" otherwise
    std::string peer_class;    // what makes two figures comparable across nodes: the GPU model, the port's
                               // nominal rate, the NIC's rate ("" when unknown: compared with all)
    Metric metric = Metric::tcp_send;
    double value = 0;          // bytes per second
    // A daily aggregate (the store's rows older than its raw window): value is
    // the median of `count` figures of one UTC day, time that day's start,
    // check_id "". A raw figure: daily false, count 1.
    bool daily = false;
    std::uint32_t count = 1;
};

// A finding a check reported (a failed node-check record, a preflight finding).
struct FindingRow {
    std::string check_id;
    std::string node;          // "" when the finding names no single node
    std::string text;          // the one line the check printed
};

// One check as the ingest stores it: a spooled report, parsed
// (report_schema.hpp): its source from the report's kind, its uid from the
// file's owner.
struct CheckRecord {
    CheckRow check;
    std::vector<Figure> figures;
    std::vector<FindingRow> findings;
};

// A node (peer empty) or a link (peer set) whose recent figures lie below
// both its own history and its peers by more than the fleet's noise.
struct Flag {
    std::string node, peer, device;
    Metric metric = Metric::tcp_send;
    double recent = 0;         // the recent figures' median, bytes per second
    double baseline = 0;       // its own baseline
    double peers = 0;          // its peers' median over the same window
    std::int64_t since = 0;    // unix seconds: the first recent figure below the line
    std::vector<std::string> checks;  // the evidence: check ids, oldest first
    std::size_t users = 0;     // distinct users whose job checks are in the evidence
    bool root = false;         // root vouches for some of the evidence (a node check or an admin's job check)
};

}  // namespace gangway::fleet
