// What a job step looks like from one node, from the facts SLURM gives a task
// (SPANK items where there are some, the SLURM_* environment otherwise).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gangway {

// Special step ids from slurm.h (unchanged since 20.11); lib does not include slurm.h.
inline constexpr std::uint32_t kBatchStep = 0xfffffffbu;
inline constexpr std::uint32_t kExternStep = 0xfffffffcu;
inline constexpr std::uint32_t kInteractiveStep = 0xfffffffau;

using EnvMap = std::map<std::string, std::string>;

// Raw facts. The plugin fills the numbers from SPANK items; `gangway env`
// fills them from SLURM_* variables. Unknown numbers stay nullopt.
struct SlurmFacts {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::optional<std::uint32_t> nnodes, node_id, total_tasks, local_tasks, task_rank, task_local_id;
    EnvMap env;  // at least the SLURM_* variables named in step_view.cpp
};

enum class StepKind { Normal, Batch, Extern, Interactive };

struct StepView {
    StepKind kind = StepKind::Normal;
    std::uint32_t job_id = 0, step_id = 0;
    std::vector<std::string> nodes;        // the step's nodes (the job's, for the batch script), in order
    unsigned node_index = 0;               // this node's position in `nodes`
    std::vector<unsigned> tasks_per_node;  // one entry per node
    unsigned total_tasks = 0;
    unsigned gpus_on_node = 0;             // 0: no GPUs allocated to the step here
    std::optional<std::uint16_t> reserved_port;
    bool heterogeneous = false;            // srun ... : ... (its values come from SLURM's step variables)
    // Per task (unset for the batch script and in user_init).
    std::optional<unsigned> rank, local_rank, local_tasks;
};

// Throws gangway::Error, saying which variable is wrong, when the facts are
// inconsistent (nodelist shorter than the node count, and so on).
StepView make_step_view(const SlurmFacts& facts);

// The SLURM_* variables make_step_view reads, for callers that copy them.
const std::vector<std::string>& step_env_names();

// SlurmFacts from a task's own SLURM_* environment (what `gangway env` sees).
SlurmFacts facts_from_env(const EnvMap& env);

}  // namespace gangway
