// One run of the node check on this node: reads (sysfs, NVML, the kernel
// log), runs the preflight's local stages (cuda; at the full level also
// nccl and an RDMA loopback), judges (lib/health/judge.hpp), measures again
// at once what failed and can be re-read, and applies the repeat rule. Each
// part runs under its own deadline within the run's; one that runs out is
// named and makes the run inconclusive, never failed. What to do about the
// verdict (print, tell NHC, drain or resume) is the caller's.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "../../env/step_view.hpp"  // EnvMap
#include "../../health/report.hpp"
#include "../../health/site_conf.hpp"
#include "../../health/state.hpp"

namespace gangway::sys {

struct NodeCheckOptions {
    std::string node;               // the SLURM node name (records, gres.conf)
    std::string root = "/";         // sysfs root: a fixture tree in tests
    bool full = false;              // the full level: copies, NCCL, RDMA loopback
    double timeout_s = 10;          // the whole run's deadline
    health::SiteConf conf;
    EnvMap env;                     // SLURM_CONF, GANGWAY_NCCL_LIB ...; GPU allocation variables are ignored
    std::string nccl_lib;
    health::State previous;         // what the last run left; State{} for none
    std::int64_t now = 0;           // this run's start, seconds since the epoch
};

struct NodeCheckResult {
    health::Report run;                // records confirmed, verdict set
    std::optional<std::map<std::string, std::uint64_t>> counters;  // when the ports were read
    std::optional<std::uint64_t> kmsg_seq;                         // the newest kernel log record seen
};

NodeCheckResult run_node_check(const NodeCheckOptions& o);

}  // namespace gangway::sys
