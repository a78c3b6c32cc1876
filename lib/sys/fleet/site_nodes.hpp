// The site's node names for `gangway fleet ingest`'s check of users'
// reports, read once per ingest (and only when a user's report is there to
// check): `scontrol -o show node` first (slurmctld's list, dynamic and cloud
// nodes included), else slurm.conf's NodeName lines (SLURM_CONF, else
// /etc/slurm/slurm.conf, its Include lines followed). --nodes-from FILE
// reads that slurm.conf only; --nodes-from none checks no name. When no list
// can be read the ingest stores users' reports unchecked, with one NOTE
// line: a list that is not there never refuses a report.
#pragma once
#include <string>
#include <vector>

namespace gangway::sys::fleet {

enum class NodesFrom {
    automatic,   // scontrol, else slurm.conf
    slurm_conf,  // the file SiteNodesOptions::slurm_conf
    none,        // no check
};

struct SiteNodesOptions {
    NodesFrom from = NodesFrom::automatic;
    std::string slurm_conf;  // slurm_conf: the file; automatic: "" is SLURM_CONF, else /etc/slurm/slurm.conf
    double timeout_s = 10;   // scontrol's
};

struct SiteNodes {
    bool known = false;              // false: no list, names are not checked
    std::vector<std::string> names;  // sorted, unique
    std::string source;              // where they are from: "scontrol -o show node", or the file
    std::string why_not;             // known false (and not `none`): why, one line
};

SiteNodes read_site_nodes(const SiteNodesOptions& o);

}  // namespace gangway::sys::fleet
