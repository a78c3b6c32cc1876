// The preflight engine behind `gangway run` and `gangway check`: bootstrap,
// cards, stages, verdict. Every task of the step calls run_preflight; node 0's
// first task coordinates, each node's first task (the speaker) runs its
// node's share of the checks, the other tasks only wait for the verdict.
// Bootstrap: under srun --mpi=pmix a PMIx fence proves every task alive, then
// only the speakers join node 0 over TCP and the verdict reaches the other
// tasks through a second fence; without PMIx (or when the first fence fails)
// every task joins node 0 over TCP.
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../env/check_policy.hpp"
#include "../../preflight/bootstrap.hpp"
#include "../../preflight/mass_accusation.hpp"
#include "../../preflight/report.hpp"

namespace gangway::sys {

// The check's deadline when --timeout is not given: 15 s, or 60 s when a node
// of the step has NVIDIA GPUs (NCCL's communicator setup across nodes alone
// takes seconds). Each task starts with its own node's default; node 0 sets
// the step's once the cards are in, and tells every task (run_preflight).
inline constexpr double kDefaultTimeoutS = 15, kDefaultGpuTimeoutS = 60;
// Without GPUs the default grows with the step beyond 32 nodes, 0.1 s a node
// (up to the GPU default): the ring and its confirmation rounds take longer
// when many nodes share a loaded fabric, and a check cut short names nobody.
inline double default_timeout_s(unsigned nnodes, bool gpus) {
    if (gpus) return kDefaultGpuTimeoutS;
    return std::min(kDefaultGpuTimeoutS, kDefaultTimeoutS + 0.1 * (nnodes > 32 ? nnodes - 32 : 0));
}

// CheckLevel and OnFail, with their parsers, are lib/env/check_policy's: the
// plugin's --gangway-check and --gangway-on-fail take the same words.

struct PreflightOptions {
    CheckLevel check = CheckLevel::quick;
    OnFail on_fail = OnFail::abort;
    std::string report, heatmap;   // files the coordinator writes
    double timeout_s = kDefaultTimeoutS;  // the whole check, bootstrap included
    bool timeout_default = false;  // timeout_s is this node's default, not the user's
    double join_timeout_s = 10;    // until every task has checked in
    double slow_ratio = 0.5;       // a link below this fraction of the expected rate is slow
    double max_named = preflight::kDefaultMaxNamedShare;  // more nodes named at once than this share: none (mass_accusation.hpp)
    std::optional<double> expect_gbps;  // the expected per-link rate; default: measured (75th percentile)
    int round_ms = 0;              // bandwidth round length; 0: 500 (quick) or 1000 (full)
    bool insecure = false;
    std::string drain_dir;         // where drain requests go ("" = none)
    std::string fleet_spool;       // where node 0 drops its report for the fleet memory, if it exists ("" = none)
    std::vector<std::string> user_thresholds;  // the user's options and GANGWAY_* that judge nodes: no drain then
    std::string nccl_lib;          // --nccl-lib: the libnccl the job uses ("" = find it as the framework would)
    preflight::BootstrapMode bootstrap = preflight::BootstrapMode::automatic;
    bool command_follows = false;  // gangway run: the command becomes this process (see choose_bootstrap)
};

struct StepFacts {
    unsigned rank = 0, ntasks = 1, node_rank = 0, nnodes = 1, local = 0;
    std::vector<std::string> nodes;         // SLURM node names in step order
    std::vector<unsigned> tasks_per_node;
    std::string primary_addr;               // node 0's data address
    unsigned port = 0;                      // PRIMARY_PORT: PORT+1 rendezvous (lib/env/port.hpp)
    std::string resv_ports;                 // SLURM_STEP_RESV_PORTS, "" when none or a heterogeneous step
    std::string node_addr, data_iface;
    std::string job_id, step_id;
    std::string key;                        // HMAC key
    // The plugin's check with rank_order=topology (GANGWAY_CHECK_ORDER_FD set):
    // the step is numbered as SLURM numbers it, so that every node meets at
    // SLURM's node 0 whatever order it computed; node 0 compares the tags.
    bool order_agreement = false;
    // On node 0's first task: the topology order (SLURM indexes in NODE_RANK
    // order) that node 0's file gives again, for the ring when every node agrees.
    std::vector<unsigned> ring_order;
};

// From the environment of a task; throws gangway::Error naming what is missing.
StepFacts step_facts_from_env(bool insecure);

struct Outcome {
    preflight::Verdict verdict = preflight::Verdict::ok;
    int exit_code = 0;                      // the verdict's exit code, or kExitCannotCheck
    bool coordinator = false;
    std::vector<std::string> bad_nodes;
    std::string message;                    // one line for a task's stderr
    std::optional<preflight::Report> report; // coordinator only
    std::string order_answer;               // for the plugin (rank_order.hpp's order_answer); "" when none
};

Outcome run_preflight(const PreflightOptions& opt, const StepFacts& step);

}  // namespace gangway::sys
