// Per-process plugin state. Each SLURM process (srun, sbatch, slurmstepd)
// loads its own copy of the plugin; in slurmstepd the tasks are forked after
// user_init, so what user_init computed is inherited by every task_init.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../lib/env/config.hpp"
#include "../lib/env/cluster_env.hpp"
#include "../lib/pin/placement.hpp"

namespace gangway::plugin {

// One local task's variables, computed in user_init from the inputs the task
// is expected to see. A forked task faults in every page of code and data it
// touches (13-50 us each on a VM): comparing its inputs and setting the
// variables touches few, planning them touches many.
struct TaskMemo {
    std::uint32_t global_id = 0;
    std::vector<std::optional<std::string>> inputs;  // per name of the task's wanted variables, absent or value
    std::vector<std::pair<std::string, std::string>> set;
};

struct State {
    Config site;
    UserChoice cli;           // from --gangway* options
    std::string error;        // first problem found; reported where failing is safe
    bool deferred = false;    // heterogeneous step: each task prepares (user_init lacks SLURM_NODEID)
    bool addrs_ready = false;
    NodeAddrs addrs;
    bool pin_ready = false;   // user_init planned this node's placement
    Placement placement;
    std::vector<unsigned> step_gpus;
    std::vector<TaskMemo> memo;  // by local task id; empty: each task plans itself
};

State& state();
void note_error(const std::string& message);  // keeps the first one

}  // namespace gangway::plugin
