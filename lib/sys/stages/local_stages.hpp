// This node's three stages (cuda, nccl, verbs), each under its own deadline:
// what `gangway gpu-check --local` and each node's speaker in `gangway check`
// run.
#pragma once
#include <string>
#include <vector>

#include "stage.hpp"

namespace gangway::sys {

struct LocalStagesOptions {
    std::vector<std::string> stages;  // of cuda, nccl, verbs; empty: all
    bool full = false;
    double timeout_s = 60;            // per stage
    std::string nccl_lib;
    std::string root = "/";           // sysfs root: the GPUs' PCIe links, the HCA ports
    EnvMap env;                       // the task's environment (allocation, GANGWAY_* thresholds)
};
// Throws gangway::Error for bad GANGWAY_* thresholds.
std::vector<StageOutcome> run_local_stages(const LocalStagesOptions& o);

}  // namespace gangway::sys
