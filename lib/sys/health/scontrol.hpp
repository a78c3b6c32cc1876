// The node check's three calls to SLURM, each through `scontrol` with a
// deadline: a node that cannot reach slurmctld (slurmd not yet registered,
// the controller down) gets a Failure and tries again on its next run,
// instead of hanging until SLURM kills the health check.
#pragma once
#include <string>

#include "../../base/result.hpp"

namespace gangway::sys {

struct Scontrol {
    std::string path = "scontrol";  // GANGWAY_SCONTROL overrides it (tests), as for the Epilog helper
    double timeout_s = 10;
};

// `scontrol show node NODE`'s text.
Result<std::string> show_node(const Scontrol& s, const std::string& node);
// `scontrol update NodeName=NODE State=DRAIN Reason=REASON`.
Result<void> drain_node(const Scontrol& s, const std::string& node, const std::string& reason);
// `scontrol update NodeName=NODE State=RESUME`.
Result<void> resume_node(const Scontrol& s, const std::string& node);

}  // namespace gangway::sys
