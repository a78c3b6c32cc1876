// What `gangway node-check --slurm` does after a run: asks SLURM about this
// node only when it may have to act (a confirmed failure, or a drain of its
// own to lift), then drains, resumes or leaves the node as
// health::decide says, and says so in the log. A node that cannot reach
// slurmctld says that and acts on a later run; the state keeps what it needs.
#pragma once
#include <string>

#include "../../health/report.hpp"
#include "../../health/state.hpp"
#include "../slurm/scontrol.hpp"

namespace gangway::sys {

struct SlurmActOptions {
    std::string node;
    Scontrol scontrol;            // its timeout applies to each call
    unsigned resume_after = 2;
    double jitter_s = 1;          // a random wait before asking: spreads a fleet that fails at once
};

// Updates state.drained (the reason written, or "" once resumed or gone).
void act_on_slurm(const health::Report& run, health::State& state, const SlurmActOptions& o);

}  // namespace gangway::sys
