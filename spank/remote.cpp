#include "remote.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/env/data_addr.hpp"
#include "../lib/env/torch_hook.hpp"
#include "env_access.hpp"
#include "log.hpp"
#include "pinning.hpp"
#include "options.hpp"
#include "state.hpp"

namespace gangway::plugin::remote {
namespace {

std::optional<std::uint32_t> item_u32(spank_t sp, spank_item_t item) {
    std::uint32_t v = 0;
    if (spank_get_item(sp, item, &v) != ESPANK_SUCCESS) return std::nullopt;
    return v;
}

// Every variable a step or task start reads, sorted for read_env.
const std::vector<std::string>& wanted_env() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v = step_env_names();
        v.insert(v.end(), contract_names().begin(), contract_names().end());
        v.insert(v.end(), {kSetRecordVar, "CUDA_VISIBLE_DEVICES", "PYTHONPATH"});
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    }();
    return names;
}

void keep_step_env(SlurmFacts& f, const EnvMap& env) {
    f.env.clear();
    for (const auto& name : step_env_names())
        if (auto it = env.find(name); it != env.end()) f.env.insert(*it);
}

SlurmFacts read_facts(spank_t sp, bool per_task, const EnvMap& env) {
    SlurmFacts f;
    f.job_id = item_u32(sp, S_JOB_ID).value_or(0);
    f.step_id = item_u32(sp, S_JOB_STEPID).value_or(0);
    f.nnodes = item_u32(sp, S_JOB_NNODES);
    f.node_id = item_u32(sp, S_JOB_NODEID);
    f.total_tasks = item_u32(sp, S_JOB_TOTAL_TASK_COUNT);
    f.local_tasks = item_u32(sp, S_JOB_LOCAL_TASK_COUNT);
    if (per_task) {
        f.task_rank = item_u32(sp, S_TASK_GLOBAL_ID);
        int local = -1;
        if (spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS && local >= 0)
            f.task_local_id = static_cast<std::uint32_t>(local);
    }
    keep_step_env(f, env);
    return f;
}

Config effective_config() { return apply_user(state().site, state().cli); }

using VarList = std::vector<std::pair<std::string, std::string>>;

// What one task sets: a function of its environment, its facts and the node's
// plan, nothing else (so that user_init can compute it ahead for a task).
VarList plan_task(const Config& cfg, const EnvMap& env, const SlurmFacts& facts) {
    const auto& st = state();
    const StepView step = make_step_view(facts);
    EnvMap current;
    for (const auto& name : contract_names())
        if (auto it = env.find(name); it != env.end()) current.insert(*it);
    if (auto it = env.find(kSetRecordVar); it != env.end()) current.insert(*it);
    // In narrow mode SLURM's CUDA_VISIBLE_DEVICES is the input, not a user's choice to keep.
    if (cfg.pin == PinMode::Narrow) current.erase("CUDA_VISIBLE_DEVICES");
    const VarList pin_vars = st.pin_ready ? pinning::task_vars(env, cfg, step) : VarList{};
    VarList set;
    if (st.addrs_ready) {
        set = plan_env(cfg, step, st.addrs, current, pin_vars).set;
        // The site's torch hook goes with the environment contract: a step
        // with --gangway=off gets neither.
        if (!cfg.torch_hook.empty()) {
            const auto it = env.find("PYTHONPATH");
            if (auto path = pythonpath_with(cfg.torch_hook, it == env.end() ? std::nullopt
                                                                             : std::optional<std::string>(it->second)))
                set.emplace_back("PYTHONPATH", *path);
        }
        return set;
    }
    for (const auto& kv : pin_vars)
        if (!current.count(kv.first)) set.push_back(kv);  // the user's value wins
    return set;
}

void set_vars(spank_t sp, const VarList& set) {
    for (const auto& [name, value] : set) {
        const spank_err_t rc = value.empty() && name != kSetRecordVar ? spank_unsetenv(sp, name.c_str())
                                                                      : spank_setenv(sp, name.c_str(), value.c_str(), 1);
        if (rc != ESPANK_SUCCESS)
            throw Error("cannot set " + name + " in the task's environment: " + spank_strerror(rc));
    }
}

// Above this many tasks per node, planning every task in slurmstepd before
// the first fork would delay the first task more than the memo saves each.
constexpr unsigned kMaxMemoTasks = 16;

// Plans each local task in user_init, from the step's environment plus the
// variables SLURM sets per task (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID). A task
// uses its memo only when its environment turns out exactly as predicted
// (SLURM may also set CUDA_VISIBLE_DEVICES per task, for one): anything else
// plans from what the task sees, as without a memo.
void memoize_tasks(spank_t sp, const Config& cfg, const EnvMap& env, const SlurmFacts& facts) {
    auto& memo = state().memo;
    memo.clear();
    if (!state().addrs_ready && !state().pin_ready) return;
    const unsigned n = facts.local_tasks.value_or(0);
    if (n == 0 || n > kMaxMemoTasks) return;
    const auto& names = wanted_env();
    for (unsigned local = 0; local < n; ++local) {
        std::uint32_t global = 0;
        if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, local, &global) != ESPANK_SUCCESS) return memo.clear();
        EnvMap task_env = env;
        task_env["SLURM_PROCID"] = std::to_string(global);
        task_env["SLURM_LOCALID"] = std::to_string(local);
        if (facts.node_id) task_env["SLURM_NODEID"] = std::to_string(*facts.node_id);
        SlurmFacts task_facts = facts;
        task_facts.task_rank = global;
        task_facts.task_local_id = local;
        keep_step_env(task_facts, task_env);
        TaskMemo m;
        m.global_id = global;
        for (const auto& name : names) {
            const auto it = task_env.find(name);
            m.inputs.push_back(it == task_env.end() ? std::nullopt : std::optional<std::string>(it->second));
        }
        try {
            m.set = plan_task(cfg, task_env, task_facts);
        } catch (const Error&) {
            return memo.clear();  // the task plans itself and reports the problem
        }
        memo.push_back(std::move(m));
    }
}

// The memo of this task, if its identity and environment are the predicted ones.
const TaskMemo* memo_for(spank_t sp) {
    const auto& memo = state().memo;
    if (memo.empty()) return nullptr;
    int local = -1;
    std::uint32_t global = 0;
    if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        static_cast<std::size_t>(local) >= memo.size() ||
        spank_get_item(sp, S_TASK_GLOBAL_ID, &global) != ESPANK_SUCCESS)
        return nullptr;
    const TaskMemo& m = memo[static_cast<std::size_t>(local)];
    if (global != m.global_id || !env_equals(sp, wanted_env(), m.inputs)) return nullptr;
    return &m;
}

}  // namespace

int init(spank_t sp, int ac, char** av) {
    try {
        state().site = parse_site_args(std::vector<std::string>(av, av + ac));
    } catch (const Error& e) {
        note_error(std::string(e.what()) + "; ask your SLURM administrator to fix the gangway line");
    }
    // Without registration the options srun forwarded would not be parsed here.
    if (register_options(sp) != 0) note_error("could not register gangway's options in slurmstepd");
    return 0;
}

int init_post_opt(spank_t sp) {
    try {
        apply_env_fallbacks(sp);
    } catch (const Error& e) {
        note_error(e.what());
    }
    return 0;
}

// The work done once per step and node: data addresses and the pinning plan.
void prepare_node(spank_t sp, const Config& cfg, const StepView& step) {
    if (step.kind == StepKind::Extern || step.kind == StepKind::Interactive) return;
    if (cfg.mode != Mode::Off && (step.kind != StepKind::Batch || cfg.batch)) {
        const auto nets = cfg.iface.empty() ? std::vector<IfaceAddr>{} : sys::iface_addrs(cfg.iface);
        state().addrs = find_node_addrs(cfg, step.nodes, step.node_index, nets, sys::resolve_host);
        state().addrs_ready = true;
    }
    // The batch script is one process on one node: SLURM's binding is right for it.
    if (cfg.pin != PinMode::Off && step.kind == StepKind::Normal) pinning::plan_node(sp, cfg, step);
}

int user_init(spank_t sp) {
    if (!state().error.empty()) return 0;
    try {
        const Config cfg = effective_config();
        if (cfg.mode == Mode::Off && cfg.pin == PinMode::Off) return 0;
        const EnvMap env = read_env(sp, wanted_env());
        SlurmFacts facts = read_facts(sp, false, env);
        // A heterogeneous step is described by per-task variables (SLURM_NODEID)
        // that do not exist yet: its tasks prepare the node themselves.
        if (facts.env.count("SLURM_HET_SIZE") && !facts.env.count("SLURM_NODEID")) {
            state().deferred = true;
            return 0;
        }
        // Once per step and node: task_init of every task inherits the results.
        prepare_node(sp, cfg, make_step_view(facts));
        memoize_tasks(sp, cfg, env, facts);
    } catch (const Error& e) {
        note_error(e.what());
    }
    return 0;
}

int task_init(spank_t sp) {
    auto& st = state();
    if (!st.error.empty()) {
        log_error(st.error);
        return -1;
    }
    try {
        // Off, or a step left alone on purpose: nothing to read.
        if (!st.deferred && !st.addrs_ready && !st.pin_ready) return 0;
        if (const TaskMemo* m = memo_for(sp)) {
            set_vars(sp, m->set);
            if (st.pin_ready) pinning::bind_task(static_cast<unsigned>(m - st.memo.data()));
            return 0;
        }
        const Config cfg = effective_config();
        const EnvMap env = read_env(sp, wanted_env());
        if (st.deferred) prepare_node(sp, cfg, make_step_view(read_facts(sp, true, env)));
        if (!st.addrs_ready && !st.pin_ready) return 0;
        const SlurmFacts facts = read_facts(sp, true, env);
        set_vars(sp, plan_task(cfg, env, facts));
        if (st.pin_ready) pinning::bind_task(make_step_view(facts).local_rank.value_or(0));
    } catch (const Error& e) {
        log_error(e.what());
        return -1;
    }
    return 0;
}

}  // namespace gangway::plugin::remote
