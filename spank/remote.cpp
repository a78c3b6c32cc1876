#include "remote.hpp"

#include <string.h>  // explicit_bzero
#include <sys/prctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/node/topology_file.hpp"
#include "../lib/env/data_addr.hpp"
#include "../lib/env/torch_hook.hpp"
#include "check.hpp"
#include "env_access.hpp"
#include "log.hpp"
#include "pinning.hpp"
#include "options.hpp"
#include "state.hpp"
#include "watch.hpp"
#include "task_exit.hpp"

namespace gangway::plugin::remote {
namespace {

// From how many tasks on a node user_init sets their shared variables: each
// spank_setenv in slurmstepd clears a 256 KiB buffer (SLURM's setenvf), so a
// variable set once for the node rather than once per task saves that for
// every task but one (bench/stepd_sim, BENCHMARKS.md).
constexpr unsigned kShareFromTasks = 2;

std::optional<std::uint32_t> item_u32(spank_t sp, spank_item_t item) {
    std::uint32_t v = 0;
    if (spank_get_item(sp, item, &v) != ESPANK_SUCCESS) return std::nullopt;
    return v;
}

// Every variable a step or task start reads, sorted for read_env: views of
// the static lists' names, so that building it copies no string.
const std::vector<std::string_view>& wanted_env() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v(step_env_names().begin(), step_env_names().end());
        v.insert(v.end(), contract_names().begin(), contract_names().end());
        v.insert(v.end(), {kSetRecordVar, kCheckedVar, "CUDA_VISIBLE_DEVICES", "PYTHONPATH", "APPTAINER_BINDPATH", "PATH"});
        std::sort(v.begin(), v.end(), env_name_less);
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    }();
    return names;
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
    for (const auto& name : step_env_names())
        if (auto it = env.find(name); it != env.end()) f.env.insert(*it);
    return f;
}

Config effective_config() { return apply_user(state().site, state().cli); }

// The step as the rank order numbers it. The first call of a step decides the
// order (reading SLURM's topology file: once per step and node, in user_init);
// later ones apply the same. A file that cannot be read, or a step node it
// does not name, keeps SLURM's order with one line (from SLURM's node 0 only:
// every node falls back alike when their files agree).
StepView ordered(const Config& cfg, StepView step) {
    auto& st = state();
    if (cfg.rank_order != RankOrder::Topology || (step.kind != StepKind::Normal && step.kind != StepKind::Batch))
        return step;
    // Nothing numbers the nodes in a step with neither variables nor a check.
    if (cfg.mode == Mode::Off && cfg.check.level == CheckLevel::none && !st.cli.check.level) return step;
    if (!st.order_ready) {
        st.order_ready = true;
        // Before apply_order below: node_index is still SLURM's.
        const std::string self = step.node_index < step.nodes.size() ? step.nodes[step.node_index] : "";
        auto loaded = sys::load_switch_topology(topology_path_for(cfg.topology_file, self), sys::env_or("SLURM_CONF"));
        if (loaded) {
            st.order = topology_order(loaded->topo, step.nodes);
            st.order_file = loaded->path;
        } else {
            st.order = slurm_order(step.nodes.size());
            st.order.fallback = loaded.error() + "; keeping SLURM's rank order";
        }
        st.order_tag = order_tag(step.nodes, st.order);
        // Said by the first task of SLURM's node 0 (task_init): a line from
        // user_init may reach slurmd's log only.
        if (!st.order.fallback.empty() && step.node_index == 0) st.order_note = "rank_order=topology: " + st.order.fallback;
    }
    apply_order(step, st.order);
    return step;
}

using VarList = VarList;

// The contract's variables the task's environment already holds, with the
// record of those gangway set (GANGWAY_SET: by user_init, or by an earlier
// step), so that gangway's own values are recomputed, not kept as the user's.
EnvMap contract_values(const EnvMap& env) {
    EnvMap current;
    for (const auto& name : contract_names())
        if (auto it = env.find(name); it != env.end()) current.insert(*it);
    if (auto it = env.find(kSetRecordVar); it != env.end()) current.insert(*it);
    return current;
}

// The variables for `step` with `pin_vars` (a task's placement; none for the
// node's share): its environment and step view, and the node's plan.
VarList plan_vars(const Config& cfg, const EnvMap& env, const StepView& step, VarList pin_vars) {
    const auto& st = state();
    EnvMap current = contract_values(env);
    // In narrow mode SLURM's CUDA_VISIBLE_DEVICES is the input, not a user's choice to keep.
    if (cfg.pin == PinMode::Narrow) current.erase("CUDA_VISIBLE_DEVICES");
    // Which order NODE_RANK follows, so that a program (and `gangway env`) can tell.
    if (!st.order_tag.empty()) add_var(pin_vars, "GANGWAY_NODE_ORDER", st.order_tag);
    VarList set;
    // Addresses found only for the check (--gangway=off) are not the task's.
    if (st.addrs_ready && cfg.mode != Mode::Off) {
        set = plan_env(cfg, step, st.addrs, current, pin_vars).set;
        // The site's torch hook goes with the environment contract: a step
        // with --gangway=off gets neither.
        if (!cfg.torch_hook.empty()) {
            const auto value = [&env](const char* name) {
                const auto it = env.find(name);
                return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
            };
            if (auto path = pythonpath_with(cfg.torch_hook, value("PYTHONPATH"))) add_var(set, "PYTHONPATH", *path);
            // Apptainer passes PYTHONPATH into the container but binds only
            // $HOME, /tmp and the cwd: the hook's directory goes with it. Set
            // for any command (a batch script or a shell may run apptainer
            // later); other programs ignore the variable.
            if (auto binds = apptainer_bindpath_with(cfg.torch_hook, value("APPTAINER_BINDPATH")))
                add_var(set, "APPTAINER_BINDPATH", *binds);
        }
        return set;
    }
    for (const auto& kv : pin_vars)
        if (!current.count(kv.first)) set.push_back(kv);  // the user's value wins
    return set;
}

// What one task sets.
VarList plan_task(const Config& cfg, const EnvMap& env, const StepView& step) {
    return plan_vars(cfg, env, step, state().pin_ready ? pinning::task_vars(env, cfg, step) : VarList{});
}

// The share of every task's variables that does not depend on the task (all
// but its rank and placement), set once in user_init where the node starts
// kShareFromTasks or more: each task then sets only what differs (set_vars'
// `have`). Recorded in GANGWAY_SET, so that a task recomputes them as
// gangway's own, not as the user's.
VarList plan_node_share(const Config& cfg, const EnvMap& env, StepView step) {
    if (!state().addrs_ready || cfg.mode == Mode::Off) return {};
    step.rank.reset();
    step.local_rank.reset();
    return plan_vars(cfg, env, step, {});
}

// What the check needs that the task does not get: the contract as mode auto
// would set it, where --gangway=off sets none, or (`slurm_numbered`) for the
// step as SLURM numbers it, where the task's follow the topology order.
VarList check_vars(const Config& cfg, const EnvMap& env, const StepView& step, bool slurm_numbered) {
    if ((cfg.mode != Mode::Off && !slurm_numbered) || !state().addrs_ready) return {};
    Config as_auto = cfg;
    if (as_auto.mode == Mode::Off) as_auto.mode = Mode::Auto;
    return plan_env(as_auto, step, slurm_numbered ? state().slurm_addrs : state().addrs, contract_values(env)).set;
}

// Whether the step's command is the site's gangway (the very file the check
// runs, compared by device and inode: a command merely named gangway is not
// it) and which of its checking subcommands it runs. A bare name is looked up
// in the task's PATH, as the exec will.
GangwayCommand gangway_command(spank_t sp, const Config& cfg, const EnvMap& env) {
    int argc = 0;
    char** argv = nullptr;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 2 || !argv || !argv[0] || !argv[1])
        return GangwayCommand::None;
    const std::string_view a0 = argv[0], sub = argv[1];
    const GangwayCommand cmd = sub == "check" ? GangwayCommand::Check : sub == "run" ? GangwayCommand::Run
                                                                                       : GangwayCommand::None;
    if (cmd == GangwayCommand::None) return cmd;
    const auto path = env.find("PATH");
    const std::string exe = a0.find('/') != std::string_view::npos ? std::string(a0)
                            : path != env.end()                    ? check::find_in_path(path->second, a0)
                                                                   : "";
    struct stat want{}, got{};
    const bool same = !exe.empty() && ::stat(check::launcher_path(cfg).c_str(), &want) == 0 &&
                      ::stat(exe.c_str(), &got) == 0 && got.st_dev == want.st_dev && got.st_ino == want.st_ino;
    return same ? cmd : GangwayCommand::None;
}

// The site's check key, where the site's check is mandatory: then only a mark
// made with it lets a step skip the check. Read here, as root, before
// user_init runs with the user's identity.
void load_check_key(const Config& site) {
    if (site.check_key.empty() || site.check.level == CheckLevel::none || site.check.optout) return;
    auto bytes = sys::read_owned_file(site.check_key, 0, kCheckKeyMaxBytes, sys::FileAccess::Private);
    if (!bytes) {
        note_error("plugstack.conf: check_key=: " + bytes.error() +
                   "; ask your SLURM administrator (every node needs the same root-only key file)");
        return;
    }
    try {
        state().check_key = std::make_unique<CheckKey>(*bytes);
    } catch (const Error& e) {
        note_error(e.what());
    }
    explicit_bzero(bytes->data(), bytes->size());
}

// Sets `set` in the task's environment (in user_init: every task's). With
// `have` (the environment as the task started), a variable that already has
// its value there is left alone (an srun in a batch script inherits many):
// each spank_setenv costs 10-16 us in slurmstepd, which zeroes a 256 KiB
// buffer for it (SLURM's setenvf, 22.05 to 26.05), and the setenvs are most
// of a task's start.
void set_vars(spank_t sp, const VarList& set, const EnvMap* have = nullptr) {
    for (const auto& [name, value] : set) {
        const bool unset = value.empty() && name != kSetRecordVar;  // an empty value unsets, but the record's
        if (have) {
            const auto it = have->find(name);
            if (unset ? it == have->end() : it != have->end() && it->second == value) continue;
        }
        const spank_err_t rc = unset ? spank_unsetenv(sp, name.c_str()) : spank_setenv(sp, name.c_str(), value.c_str(), 1);
        if (rc != ESPANK_SUCCESS)
            throw Error("cannot set " + name + " in the task's environment: " + spank_strerror(rc));
    }
}

// The nodes computed different rank orders (the check said so): this task's
// variables again, as SLURM numbers the step, before its command starts. The
// order is the node's from now on (a later task_init of the step applies it
// too); SLURM's node 0's first task says so in one line.
void replan_in_slurm_order(spank_t sp, const Config& cfg, const EnvMap& env, const StepView& slurm_step, const std::string& why) {
    auto& st = state();
    st.order = fallen_back_order(slurm_step.nodes.size(), why);
    st.order_tag = order_tag(slurm_step.nodes, st.order);
    st.order_note = "rank_order=topology: " + st.order.fallback;
    st.addrs = st.slurm_addrs;
    set_vars(sp, plan_task(cfg, env, slurm_step));
    if (slurm_step.node_index == 0 && slurm_step.local_rank.value_or(0) == 0) log_error(st.order_note);
}

}  // namespace

int init(spank_t sp, int ac, char** av) {
    try {
        state().site = parse_site_args(std::vector<std::string>(av, av + ac));
        load_check_key(state().site);
    } catch (const Error& e) {
        note_error(std::string(e.what()) + "; ask your SLURM administrator to fix the gangway line");
    }
    // Without registration the options srun forwarded would not be parsed here.
    if (register_options(sp) != 0) note_error("could not register gangway's options in slurmstepd");
    // Root's part of the post-mortem, before user_init drops to the job's user.
    task_exit::prepare(sp);
    return 0;
}

int init_post_opt(spank_t sp) {
    try {
        apply_env_fallbacks(sp);
    } catch (const Error& e) {
        note_error(e.what());
    }
    watch::prepare(sp);
    return 0;
}

// The work done once per step and node: data addresses and the pinning plan.
void prepare_node(spank_t sp, const Config& cfg, const StepView& step) {
    if (step.kind == StepKind::Extern || step.kind == StepKind::Interactive) return;
    const bool for_check = state().check.checked() && step.kind == StepKind::Normal;
    if ((cfg.mode != Mode::Off && (step.kind != StepKind::Batch || cfg.batch)) || for_check) {
        const auto nets = cfg.iface.empty() ? std::vector<IfaceAddr>{} : sys::iface_addrs(cfg.iface);
        auto& st = state();
        st.addrs = find_node_addrs(cfg, step.nodes, step.node_index, nets, sys::resolve_host);
        st.slurm_addrs = st.addrs;
        if (for_check && st.order.by_topology && st.order.order.size() == step.nodes.size()) {
            // The nodes as SLURM numbers them: NODE_ADDRS permuted back, or
            // SLURM's node 0 resolved where NODE_ADDRS is not set.
            const auto& o = st.order.order;
            std::vector<std::string> slurm_nodes(step.nodes.size());
            for (std::size_t k = 0; k < o.size(); ++k) slurm_nodes[o[k]] = step.nodes[k];
            if (!st.addrs.every.empty()) {
                std::vector<IpAddr> every(st.addrs.every.size());
                for (std::size_t k = 0; k < o.size(); ++k) every[o[k]] = st.addrs.every[k];
                st.slurm_addrs.every = std::move(every);
                st.slurm_addrs.primary = st.slurm_addrs.every.front();
            } else {
                st.slurm_addrs = find_node_addrs(cfg, slurm_nodes, o[step.node_index], nets, sys::resolve_host);
            }
        }
        st.addrs_ready = true;
    }
    // The batch script is one process on one node: SLURM's binding is right for it.
    if (cfg.pin != PinMode::Off && step.kind == StepKind::Normal) pinning::plan_node(sp, cfg, step);
}

int user_init(spank_t sp) {
    // The tasks fork after this returns: the key leaves the state here, and is
    // wiped when this returns by whatever path (a refusal, a deferred
    // heterogeneous step, an error), so that none of them holds it.
    const std::unique_ptr<CheckKey> key = std::move(state().check_key);
    if (has_error()) return 0;
    try {
        const Config cfg = effective_config();
        const bool may_check = cfg.check.level != CheckLevel::none || state().cli.check.level;
        if (cfg.mode == Mode::Off && cfg.pin == PinMode::Off && !may_check) return 0;
        const EnvMap env = read_env(sp, wanted_env());
        SlurmFacts facts = read_facts(sp, false, env);
        // A heterogeneous step is described by per-task variables (SLURM_NODEID)
        // that do not exist yet: its tasks prepare the node themselves.
        if (facts.env.count("SLURM_HET_SIZE") && !facts.env.count("SLURM_NODEID")) {
            state().deferred = true;
            return 0;
        }
        const StepView step = ordered(cfg, make_step_view(facts));
        if (may_check) {
            auto& st = state();
            if (key) {
                std::uint32_t uid = 0;
                spank_get_item(sp, S_JOB_UID, &uid);
                st.check_mark = key->mark(step.job_id, uid);
            }
            const auto marker = env.find(kCheckedVar);
            const CheckContext ctx{
                marker != env.end() && mark_proves_check(marker->second, step.job_id, st.check_mark, cfg.check.optout),
                gangway_command(sp, cfg, env)};
            st.check = plan_check(cfg.check, st.cli.check, step, ctx);
        }
        // Once per step and node: task_init of every task inherits the results.
        prepare_node(sp, cfg, step);
        if (step.local_tasks.value_or(1) >= kShareFromTasks) set_vars(sp, plan_node_share(cfg, env, step), &env);
    } catch (const Error& e) {
        note_error(e.what());
    }
    return 0;
}

int task_init(spank_t sp) {
    auto& st = state();
    if (has_error()) {
        log_error(st.error);
        return -1;
    }
    try {
        // Off, or a step left alone on purpose: nothing to read.
        if (!st.deferred && !st.addrs_ready && !st.pin_ready && !st.check.checked()) return 0;
        const Config cfg = effective_config();
        const EnvMap env = read_env(sp, wanted_env());
        if (st.deferred) prepare_node(sp, cfg, ordered(cfg, make_step_view(read_facts(sp, true, env))));
        if (!st.addrs_ready && !st.pin_ready && !st.check.checked()) return 0;
        const StepView step = ordered(cfg, make_step_view(read_facts(sp, true, env)));
        set_vars(sp, plan_task(cfg, env, step), &env);
        if (!st.order_note.empty() && step.local_rank.value_or(0) == 0) log_error(st.order_note);
        if (st.pin_ready) pinning::bind_task(step);
        // Last: the check sees the task as its command will (variables, binding).
        if (st.check.checked()) {
            // The job's mark is in this process until the exec: no other process
            // of the user may read it (a ptrace attach or /proc/PID/mem) meanwhile.
            // The exec makes the user's command dumpable again.
            if (!st.check_mark.empty()) ::prctl(PR_SET_DUMPABLE, 0);
            // rank_order=topology in a step's task: the check meets in SLURM's
            // numbering (at SLURM's node 0, which every node agrees on whatever
            // its file says), and node 0 compares the orders (lib/sys/preflight/job_check.cpp).
            // A batch script's check runs through srun: it numbers the nodes as
            // the script's variables do, as before.
            const bool agree = !st.order_tag.empty() && step.kind == StepKind::Normal;
            const StepView slurm_step = make_step_view(read_facts(sp, true, env));
            VarList extra = check_vars(cfg, env, agree ? slurm_step : step, agree);
            if (!st.order_tag.empty()) {
                add_var(extra, "GANGWAY_NODE_ORDER", st.order_tag);
                add_var(extra, "GANGWAY_TOPOLOGY_FILE", st.order_file);
            }
            const std::string answer = check::before_command(sp, cfg, step, st.check, extra, agree);
            if (agree) {
                if (const auto why = parse_order_answer(answer); why && st.order.by_topology) replan_in_slurm_order(sp, cfg, env, slurm_step, *why);
            }
        }
    } catch (const Error& e) {
        log_error(e.what());
        return -1;
    }
    return 0;
}

}  // namespace gangway::plugin::remote
