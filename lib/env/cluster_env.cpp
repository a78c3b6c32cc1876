#include "cluster_env.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "../base/text.hpp"
#include "port.hpp"

namespace gangway {

std::string value_tag(std::string_view value) {
    std::uint32_t h = 2166136261u;  // FNV-1a: short, stable, and no secret is at stake
    for (unsigned char c : value) h = (h ^ c) * 16777619u;
    // Eight lower-case hex digits, as "%08x" (snprintf was a tenth of a task's start).
    std::string out(8, '0');
    for (int i = 7; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = "0123456789abcdef"[h & 0xf];
    return out;
}

std::vector<std::string> inherited_names(const EnvMap& current) {
    std::vector<std::string> out;
    auto rec = current.find(kSetRecordVar);
    if (rec == current.end()) return out;
    for (const std::string& item : split_nonempty(rec->second, ',')) {
        const auto colon = item.find(':');
        if (colon == std::string::npos) continue;
        const std::string name = item.substr(0, colon);
        auto it = current.find(name);
        if (it != current.end() && value_tag(it->second) == item.substr(colon + 1)) out.push_back(name);
    }
    return out;
}

const std::vector<std::string>& contract_names() {
    static const std::vector<std::string> names = {
        "PRIMARY_ADDR", "MASTER_ADDR", "PRIMARY_PORT", "MASTER_PORT", "HOST_NODE_ADDR", "NODE_ADDR",
        "NODE_RANK", "NUM_NODES", "NUM_TRAINERS", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
        "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT",
        "JAX_COORDINATOR_ADDRESS", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NODE_ADDRS", "GANGWAY_LAYOUT",
        "CUDA_DEVICE_ORDER", "NCCL_IB_HCA", "UCX_NET_DEVICES", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
        "GANGWAY_GPUS", "GANGWAY_NICS", "GANGWAY_CPUS", "GANGWAY_NODE_ORDER"};
    return names;
}

Mode resolve_mode(Mode requested, const StepView& step) {
    if (requested != Mode::Auto) return requested;
    const bool one_per_node = std::all_of(step.tasks_per_node.begin(), step.tasks_per_node.end(),
                                          [](unsigned n) { return n == 1; });
    return one_per_node ? Mode::Node : Mode::Task;
}

EnvPlan plan_env(const Config& cfg, const StepView& step, const NodeAddrs& addrs, const EnvMap& current,
                 const VarList& extra) {
    EnvPlan plan;
    if (cfg.mode == Mode::Off) {
        plan.skip_reason = "turned off (--gangway=off, GANGWAY_MODE=off or mode=off)";
        return plan;
    }
    switch (step.kind) {
        case StepKind::Extern: plan.skip_reason = "extern step: no user task runs in it"; return plan;
        case StepKind::Interactive: plan.skip_reason = "interactive step: the shell is not a rank; srun inside it is"; return plan;
        case StepKind::Batch:
            if (!cfg.batch) {
                plan.skip_reason = "batch script (batch=no in plugstack.conf)";
                return plan;
            }
            break;
        case StepKind::Normal: break;
    }
    const bool batch = step.kind == StepKind::Batch;
    plan.mode = resolve_mode(cfg.mode, step);

    const std::vector<std::string> inherited = inherited_names(current);
    // The user's own value of `name`, if any (a gangway value inherited from an earlier step is not the user's).
    auto user = [&](const std::string& name) -> const std::string* {
        auto it = current.find(name);
        if (it == current.end()) return nullptr;
        if (std::find(inherited.begin(), inherited.end(), name) != inherited.end()) return nullptr;
        return &it->second;
    };
    auto first_user = [&](std::initializer_list<const char*> names) -> const std::string* {
        for (const char* n : names)
            if (const std::string* v = user(n)) return v;
        return nullptr;
    };

    // Base values, each overridable by the user; the rest derives from them.
    const std::string* u_addr = first_user({"MASTER_ADDR", "PRIMARY_ADDR"});
    const std::string addr = u_addr ? *u_addr : to_string(addrs.primary);
    const std::string* u_port = first_user({"MASTER_PORT", "PRIMARY_PORT"});
    const std::string port = u_port ? *u_port
                                    : std::to_string(step.reserved_port
                                                         ? *step.reserved_port
                                                         : hashed_port(step.job_id, step.step_id, cfg.ports));
    const std::string* u_nodes = user("NUM_NODES");
    const std::string num_nodes = u_nodes ? *u_nodes : std::to_string(step.nodes.size());
    const std::string* u_rank = user("NODE_RANK");
    const std::string node_rank = u_rank ? *u_rank : std::to_string(step.node_index);
    const unsigned local_tasks = step.local_tasks.value_or(step.tasks_per_node.at(step.node_index));
    const unsigned per_node = plan.mode == Mode::Node ? 1 : local_tasks;
    const std::string* u_trainers = user("NUM_TRAINERS");
    const std::string trainers = u_trainers ? *u_trainers
                                            : std::to_string(step.gpus_on_node ? step.gpus_on_node : per_node);
    std::string world;
    if (const std::string* u_world = user("WORLD_SIZE")) world = *u_world;
    else if (plan.mode == Mode::Node) {
        // torchrun spawns NUM_TRAINERS processes on each node. A user's value
        // counts as far as it is a number: strtoul, not the whole-string parse_uint.
        unsigned long nn = std::strtoul(num_nodes.c_str(), nullptr, 10), tr = std::strtoul(trainers.c_str(), nullptr, 10);
        world = std::to_string(nn * tr);
    } else world = std::to_string(step.total_tasks);

    std::string host_node_addr;
    if (auto ip = parse_ip(addr); ip) host_node_addr = host_port(*ip, std::strtoul(port.c_str(), nullptr, 10));
    else host_node_addr = addr + ":" + port;  // the user gave a name: keep it as given

    VarList want = {
        {"PRIMARY_ADDR", addr}, {"MASTER_ADDR", addr}, {"PRIMARY_PORT", port}, {"MASTER_PORT", port},
        {"HOST_NODE_ADDR", host_node_addr}, {"NODE_ADDR", to_string(addrs.self)},
        {"NODE_RANK", node_rank}, {"NUM_NODES", num_nodes}, {"NUM_TRAINERS", trainers}, {"WORLD_SIZE", world}};
    if (plan.mode == Mode::Task && !batch && step.rank && step.local_rank) {
        add_var(want, "RANK", std::to_string(*step.rank));
        add_var(want, "LOCAL_RANK", std::to_string(*step.local_rank));
        add_var(want, "LOCAL_WORLD_SIZE", std::to_string(local_tasks));
    }
    if (plan.mode == Mode::Node && !batch) {
        add_var(want, "PET_NNODES", num_nodes);
        add_var(want, "PET_NODE_RANK", node_rank);
        add_var(want, "PET_NPROC_PER_NODE", trainers);
        add_var(want, "PET_MASTER_ADDR", addr);
        add_var(want, "PET_MASTER_PORT", port);
    }
    add_var(want, "JAX_COORDINATOR_ADDRESS", host_node_addr);
    if (!cfg.iface.empty()) {
        // NCCL's '=' prefix means "exactly this name", not a prefix; Gloo takes plain names only.
        add_var(want, "NCCL_SOCKET_IFNAME", "=" + cfg.iface);
        add_var(want, "GLOO_SOCKET_IFNAME", cfg.iface);
    }
    // Not set above node_addrs_max: an inherited one is then cleared below, a user's own kept.
    if (!addrs.every.empty())
        add_var(want, "NODE_ADDRS", join(addrs.every, ",", [](const IpAddr& a) { return to_string(a); }));
    add_var(want, "GANGWAY_LAYOUT", std::string(to_string(plan.mode)));
    want.insert(want.end(), extra.begin(), extra.end());

    std::vector<std::string> record;
    for (auto& [name, value] : want) {
        if (user(name)) continue;  // the user's value stays untouched
        record.push_back(name + ":" + value_tag(value));
        plan.set.emplace_back(name, value);
    }
    // Variables gangway set in an earlier step that this step's mode does not
    // set (PET_* from a node-mode batch, RANK from a task-mode step) are stale: clear them.
    for (const auto& name : inherited)
        if (std::none_of(want.begin(), want.end(), [&](auto& p) { return p.first == name; }))
            plan.set.emplace_back(name, "");
    plan.set.emplace_back(kSetRecordVar, join(record, ","));
    return plan;
}

}  // namespace gangway
