// The fleet memory as Prometheus reads it: the latest figure of every node
// and device, the flags, and the ingest's counts, as OpenMetrics text (what
// Prometheus 2.42 asks for first) or the older Prometheus text format (what
// node_exporter's textfile collector and promtool 2.42 parse). Pure: figures
// and flags in, text out; the database (lib/sys/fleet/store.hpp) and the
// HTTP server (lib/sys/fleet/http_serve.hpp) are the callers' business.
//
// Naming follows Prometheus' conventions: a `gangway_` prefix, base units
// as the name's suffix (bytes per second, seconds), `_total` on counters,
// and no sample timestamps (node_exporter's textfile collector rejects a
// whole file that has one). The metric names (openmetrics.cpp, listed in
// gangway-fleet(8)) are an interface: dashboards and alerts name them.
//
// Cardinality: no series per pair of nodes. A link's figures appear only as
// the node's slowest link (gangway_node_link_min_bytes_per_second) and, for
// a flagged link, one series per flagged link, at most one per node
// (the worst first). Devices count at most kMaxDevicesPerNode per node and
// kind. So the number of series is at most series_bound(); what the bounds
// leave out is counted in gangway_fleet_series_dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model.hpp"
#include "stops.hpp"
#include "watch_events.hpp"

namespace gangway::fleet {

enum class Exposition {
    openmetrics,      // application/openmetrics-text; version=1.0.0, ends with "# EOF"
    prometheus_text,  // text/plain; version=0.0.4 (the classic format)
};

// What the ingest has done so far, for its counters.
struct IngestCounts {
    std::uint64_t node_checks = 0;     // checks ingested from root's node checks
    std::uint64_t job_checks = 0;      // checks ingested from users' job checks
    std::uint64_t files_rejected = 0;  // spooled files set aside as invalid
    std::int64_t last_ingest = 0;      // unix seconds when the last ingest ended; 0: none yet (no series)
};

struct MetricsInput {
    // At least the latest figure of every (node, device, peer, metric); older
    // figures may be there too: the latest (by time) of each wins.
    std::vector<Figure> figures;
    std::vector<Flag> flags;
    IngestCounts counts;
    // Jobs stopped, per blamed node and cause (fleet serve --stops-key):
    // gangway_job_stops_total{node,cause}, at most 9 causes per node.
    std::vector<StopCount> stops;
    // The running jobs' (fleet serve's watch, issue 43): root-confirmed
    // stragglers named lately, gangway_job_straggler{job,node} 1, and
    // confirmed hangs, gangway_job_hangs_total{node}.
    std::vector<RunningStraggler> stragglers;
    std::vector<HangCount> hangs;
};

// GPUs, or ports, of one node that get series of their own; more are left
// out (a job check's report is a user's word: it must not grow the series).
inline constexpr std::size_t kMaxDevicesPerNode = 64;

// The most series render_metrics writes for `nodes` nodes (those with a
// figure or a flag), `gpus` GPUs and `ports` ports in all (each counted at
// most kMaxDevicesPerNode per node): 13 per node (5 node gauges, 7
// degrading gauges, 1 flagged link), 2 per GPU, 1 per port, and 6 more.
// 2,048 nodes of 8 GPUs and 8 ports: 26,624 + 32,768 + 16,384 + 6 = 75,782.
std::size_t series_bound(std::size_t nodes, std::size_t gpus, std::size_t ports);

// The exposition text of `in`, families and series in a stable order.
std::string render_metrics(const MetricsInput& in, Exposition format);
// Both formats, the families gathered once (fleet serve keeps both: its
// rebuild gathered them twice).
struct MetricsTexts {
    std::string openmetrics, prometheus_text;
};
MetricsTexts render_metrics_both(const MetricsInput& in);

// A label value as both formats write it: \ " and newline escaped, and any
// byte that is not part of valid UTF-8 replaced by '?'.
std::string escape_label_value(std::string_view v);

// The format to answer an HTTP Accept header with: OpenMetrics when the
// header accepts application/openmetrics-text at least as much as
// text/plain (Prometheus 2.42 asks for it first), the classic format
// otherwise (no header, curl's */*).
Exposition negotiate_exposition(std::string_view accept);

// The Content-Type header that goes with each format.
const char* content_type(Exposition format);

}  // namespace gangway::fleet
