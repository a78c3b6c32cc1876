// Finding and reading SLURM's topology file for the rank order (issue 26):
// topology.yaml, else topology.conf, where SLURM keeps them (the directory of
// SLURM_CONF, else /etc/slurm), or the file a site names with topology_file=.
#pragma once
#include <string>

#include "../../base/result.hpp"
#include "../../env/switch_topology.hpp"

namespace gangway::sys {

struct LoadedTopology {
    std::string path;
    SwitchTopology topo;
};

// `configured`: topology_file= (empty: SLURM's place). `slurm_conf`: the
// SLURM_CONF the process sees (empty: /etc/slurm/slurm.conf). A file named
// *.yaml or *.yml is read as topology.yaml, any other as topology.conf. At
// most kMaxTopologyFileBytes read; a FIFO or device is refused, not waited on.
// The failure is one line: which file, what is wrong, and what to do.
Result<LoadedTopology> load_switch_topology(const std::string& configured, const std::string& slurm_conf);

}  // namespace gangway::sys
