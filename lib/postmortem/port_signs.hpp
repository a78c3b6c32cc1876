// The RDMA ports' signs of a job's stop (issue 33): what grew or went down
// between the job's start and its end on one node. The Prolog's `gangway
// postmortem snapshot` keeps each port's error counters and whether it was
// ACTIVE (PortSnapshot, a root file in the job's directory); the Epilog's
// collector reads the ports again and compares:
//   - an error counter grown past the site's allowance (node-check.conf's
//     symbol_error_max, link_downed_max, link_error_recovery_max: the node
//     check's own rule, health::judge_counters) is an ib_errors sign;
//   - a port ACTIVE at the start and not at the end is a link_down sign.
// Their time is the Epilog's reading (the counters do not say when they
// grew), so the verdict names them in the timeline; it takes them as a
// cause only where they fall in its window (verdict.cpp, rule 6), as a
// timed kernel line does. Pure: the caller reads sysfs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "../health/facts.hpp"
#include "../health/site_conf.hpp"
#include "record.hpp"

namespace gangway::postmortem {

// "mlx5_0/1 symbol_error" -> value (the node check's keys, health::counter_values),
// and "mlx5_0/1 active" -> 1 or 0.
using PortSnapshot = std::map<std::string, std::uint64_t>;
inline constexpr std::size_t kMaxSnapshotLines = 4096;

PortSnapshot port_snapshot(const std::vector<health::PortFacts>& ports);

// One "KEY VALUE" line per entry. parse_port_snapshot throws gangway::Error
// naming the line for anything else, or past kMaxSnapshotLines lines.
std::string render_port_snapshot(const PortSnapshot& s);
PortSnapshot parse_port_snapshot(std::string_view text);

// The signs, t_ns the reading's time; at most kMaxEvidence.
std::vector<Evidence> port_signs(const PortSnapshot& start, const std::vector<health::PortFacts>& now,
                                 const health::SiteConf& site, std::int64_t t_ns);

}  // namespace gangway::postmortem
