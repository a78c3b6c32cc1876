// Per-process plugin state. Each SLURM process (srun, sbatch, slurmstepd)
// loads its own copy of the plugin; in slurmstepd the tasks are forked after
// user_init, so what user_init computed is inherited by every task_init.
#pragma once
#include <memory>
#include <string>

#include "../lib/env/check_marker.hpp"
#include "../lib/env/config.hpp"
#include "../lib/env/rank_order.hpp"
#include "../lib/env/cluster_env.hpp"
#include "../lib/pin/placement.hpp"

namespace gangway::plugin {

struct State {
    Config site;
    UserChoice cli;           // from --gangway* options
    // The first problem found, reported where failing is safe (task_init). A
    // fixed buffer: noting a problem must not allocate, since the problem may
    // be std::bad_alloc.
    char error[1024] = {};
    bool deferred = false;    // heterogeneous step: each task prepares (user_init lacks SLURM_NODEID)
    bool addrs_ready = false;
    NodeAddrs addrs;
    // rank_order=topology with the check: the same addresses as SLURM numbers
    // the nodes, for the check's rendezvous and a re-plan (remote.cpp).
    NodeAddrs slurm_addrs;
    bool pin_ready = false;   // user_init planned this node's placement
    Placement placement;
    std::vector<unsigned> step_gpus;
    // The rank order (rank_order=topology): decided once per step and node,
    // applied to every step view made afterwards (user_init's and each task's).
    bool order_ready = false;
    NodeOrder order;
    std::string order_tag;    // GANGWAY_NODE_ORDER's value; empty: SLURM's order was asked
    std::string order_file;   // the topology file it read, for the check
    std::string order_note;   // the fallback's one line, said by SLURM's node 0's first task
    CheckPlan check;          // user_init decided: the preflight before each task's command
    // The site's check key (check_key=), read as root in init, used once in
    // user_init for this job's mark and dropped (wiped) before any task forks.
    std::unique_ptr<CheckKey> check_key;
    std::string check_mark;   // this job's mark under the key; empty without one
};

State& state();
void note_error(const char* message) noexcept;  // keeps the first one (cut at 1023 bytes)
inline void note_error(const std::string& message) noexcept { note_error(message.c_str()); }
inline bool has_error() noexcept { return state().error[0] != '\0'; }

}  // namespace gangway::plugin
