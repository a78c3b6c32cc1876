#include "step_view.hpp"

#include <cstdint>
#include <numeric>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"
#include "port.hpp"
#include "tasks_per_node.hpp"

namespace gangway {
namespace {

const std::string* get(const EnvMap& env, const std::string& name) {
    auto it = env.find(name);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::optional<std::uint32_t> number(const EnvMap& env, const std::string& name) {
    const std::string* v = get(env, name);
    if (!v) return std::nullopt;
    const auto n = parse_uint<std::uint32_t>(*v);
    if (!n) throw Error(name + "=\"" + excerpt(*v) + "\" is not a number; was it overwritten by the job script?");
    return n;
}

const std::string& required(const EnvMap& env, const std::string& name) {
    const std::string* v = get(env, name);
    if (!v) throw Error(name + " is not set; gangway needs SLURM's step environment (was it removed with --export?)");
    return *v;
}

}  // namespace

const std::vector<std::string>& step_env_names() {
    static const std::vector<std::string> names = {
        "SLURM_STEP_NODELIST",  "SLURM_STEP_TASKS_PER_NODE", "SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE",
        "SLURM_NTASKS",         "SLURM_GPUS_ON_NODE",        "SLURM_STEP_RESV_PORTS", "SLURM_HET_SIZE",
        "SLURM_JOB_ID",         "SLURM_STEP_ID",             "SLURM_NODEID",        "SLURM_PROCID",
        "SLURM_STEP_NUM_NODES",      "SLURM_STEP_NUM_TASKS", "SLURM_JOB_NUM_NODES",
        "SLURM_STEPID",         "SLURM_LOCALID",             "SLURM_JOB_ID_PACK_GROUP_0", "SLURM_JOB_ID_HET_GROUP_0"};
    return names;
}

SlurmFacts facts_from_env(const EnvMap& env) {
    SlurmFacts f;
    f.env = env;
    f.job_id = number(env, "SLURM_JOB_ID").value_or(0);
    auto step = number(env, "SLURM_STEP_ID");
    if (!step) step = number(env, "SLURM_STEPID");
    // The batch script has no SLURM_STEP_ID; srun always sets it.
    f.step_id = step.value_or(kBatchStep);
    if (f.step_id != kBatchStep) {
        f.nnodes = number(env, "SLURM_STEP_NUM_NODES");
        f.node_id = number(env, "SLURM_NODEID");
        f.total_tasks = number(env, "SLURM_STEP_NUM_TASKS");
        f.task_rank = number(env, "SLURM_PROCID");
        f.task_local_id = number(env, "SLURM_LOCALID");
    }
    return f;
}

StepView make_step_view(const SlurmFacts& f) {
    StepView v;
    v.job_id = f.job_id;
    v.step_id = f.step_id;
    v.kind = f.step_id == kBatchStep        ? StepKind::Batch
             : f.step_id == kExternStep      ? StepKind::Extern
             : f.step_id == kInteractiveStep ? StepKind::Interactive
                                             : StepKind::Normal;
    v.heterogeneous = get(f.env, "SLURM_HET_SIZE") != nullptr;
    if (v.kind == StepKind::Extern || v.kind == StepKind::Interactive) return v;
    SlurmFacts het;
    if (v.heterogeneous && v.kind == StepKind::Normal) {
        // In a heterogeneous step (srun ... : ...) the SPANK items describe this
        // component only, while SLURM's variables describe the whole step, which
        // is what the ranks join: take those, and the leader's job id, so that
        // every component computes the same port.
        het = facts_from_env(f.env);
        het.local_tasks.reset();
        if (!het.node_id) throw Error("this node's index in the heterogeneous step is unknown (SLURM_NODEID is not set)");
        auto leader = number(f.env, "SLURM_JOB_ID_HET_GROUP_0");
        if (!leader) leader = number(f.env, "SLURM_JOB_ID_PACK_GROUP_0");
        het.job_id = leader.value_or(f.job_id);
        het.step_id = f.step_id;
    }
    const SlurmFacts& src = v.heterogeneous && v.kind == StepKind::Normal ? het : f;
    v.job_id = src.job_id;

    if (v.kind == StepKind::Batch) {
        // The batch step's SPANK node count is 0: SLURM never fills it in, so
        // the job's own variables describe the allocation.
        v.nodes = expand_hostlist(required(f.env, "SLURM_JOB_NODELIST"));
        v.node_index = 0;
        // Without -n/--ntasks-per-node SLURM_TASKS_PER_NODE counts CPUs, not
        // tasks; a plain srun in the script then starts one task per node.
        const std::string* tpn = get(f.env, "SLURM_TASKS_PER_NODE");
        if (tpn && get(f.env, "SLURM_NTASKS")) v.tasks_per_node = expand_counts(*tpn);
        else v.tasks_per_node.assign(v.nodes.size(), 1);
    } else {
        v.nodes = expand_hostlist(required(f.env, "SLURM_STEP_NODELIST"));
        v.tasks_per_node = expand_counts(required(f.env, "SLURM_STEP_TASKS_PER_NODE"));
        if (!src.node_id) throw Error("this node's index in the step is unknown (SLURM_NODEID is not set)");
        v.node_index = *src.node_id;
        if (src.nnodes && *src.nnodes != v.nodes.size())
            throw Error("SLURM_STEP_NODELIST has " + std::to_string(v.nodes.size()) + " nodes but the step has " +
                        std::to_string(*src.nnodes) + "; was SLURM_STEP_NODELIST overwritten?");
    }
    if (v.tasks_per_node.size() != v.nodes.size())
        throw Error(std::string(v.kind == StepKind::Batch ? "SLURM_TASKS_PER_NODE" : "SLURM_STEP_TASKS_PER_NODE") +
                    " lists " + std::to_string(v.tasks_per_node.size()) + " nodes but the node list has " +
                    std::to_string(v.nodes.size()));
    if (v.nodes.empty()) throw Error("the step's node list is empty");
    if (v.node_index >= v.nodes.size())
        throw Error("SLURM_NODEID=" + std::to_string(v.node_index) + " is outside the step's " +
                    std::to_string(v.nodes.size()) + " nodes");
    // In 64 bits: counts that wrapped 32 bits to the step's total passed this
    // check once (issue 23, item 2). Each count is at most kMaxTasksPerNode
    // (expand_counts) and there are at most kMaxHostlistHosts, so the sum,
    // at most 4,294,770,688, fits the 32 bits SLURM counts a step's tasks in.
    const std::uint64_t sum = std::accumulate(v.tasks_per_node.begin(), v.tasks_per_node.end(), std::uint64_t{0});
    static_assert(std::uint64_t{kMaxHostlistHosts} * kMaxTasksPerNode <= UINT32_MAX);
    if (v.kind == StepKind::Batch) v.total_tasks = number(f.env, "SLURM_NTASKS").value_or(static_cast<unsigned>(sum));
    else v.total_tasks = src.total_tasks.value_or(static_cast<unsigned>(sum));
    if (v.kind == StepKind::Normal && v.total_tasks != sum)
        throw Error("the step has " + std::to_string(v.total_tasks) + " tasks but SLURM_STEP_TASKS_PER_NODE adds up to " +
                    std::to_string(sum));
    v.gpus_on_node = number(f.env, "SLURM_GPUS_ON_NODE").value_or(0);
    // Each component of a heterogeneous step reserves its own ports: the hash is what they share.
    if (const std::string* rp = get(f.env, "SLURM_STEP_RESV_PORTS"); rp && !v.heterogeneous)
        v.reserved_port = first_reserved_port(*rp);
    if (v.kind == StepKind::Normal) {
        v.rank = src.task_rank;
        v.local_rank = src.task_local_id;
        v.local_tasks = src.local_tasks ? src.local_tasks : std::optional<unsigned>(v.tasks_per_node[v.node_index]);
    }
    return v;
}

}  // namespace gangway
