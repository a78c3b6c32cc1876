#include "catch_compat.hpp"

#include <map>

#include "../../lib/env/cluster_env.hpp"
#include "../../lib/env/torch_hook.hpp"

using namespace gangway;

namespace {

IpAddr ip(const char* s) { return *parse_ip(s); }

StepView step(std::vector<unsigned> tpn, unsigned node, unsigned rank, unsigned local) {
    StepView v;
    v.job_id = 42;
    v.step_id = 0;
    for (unsigned i = 0; i < tpn.size(); ++i) v.nodes.push_back("node" + std::to_string(8 + i));
    v.node_index = node;
    v.tasks_per_node = tpn;
    for (unsigned n : tpn) v.total_tasks += n;
    v.rank = rank;
    v.local_rank = local;
    v.local_tasks = tpn[node];
    return v;
}

NodeAddrs addrs(unsigned n, unsigned self) {
    NodeAddrs a;
    for (unsigned i = 0; i < n; ++i) a.every.push_back(ip(("198.19.0." + std::to_string(11 + i)).c_str()));
    a.primary = a.every.at(0);
    a.self = a.every.at(self);
    return a;
}

std::map<std::string, std::string> as_map(const EnvPlan& p) { return {p.set.begin(), p.set.end()}; }

Config eth1() {
    Config c;
    c.iface = "eth1";
    return c;
}

}  // namespace

TEST_CASE("node mode: one task per node, torchrun spawns the trainers") {
    const auto v = step({1, 1, 1, 1}, 2, 2, 0);
    const EnvPlan p = plan_env(eth1(), v, addrs(4, 2), {});
    CHECK(p.mode == Mode::Node);
    auto m = as_map(p);
    const std::string port = std::to_string(hashed_port(42, 0, PortRange{}));
    CHECK(m["PRIMARY_ADDR"] == "198.19.0.11");
    CHECK(m["MASTER_ADDR"] == "198.19.0.11");
    CHECK(m["PRIMARY_PORT"] == port);
    CHECK(m["MASTER_PORT"] == port);
    CHECK(m["HOST_NODE_ADDR"] == "198.19.0.11:" + port);
    CHECK(m["NODE_ADDR"] == "198.19.0.13");
    CHECK(m["NODE_RANK"] == "2");
    CHECK(m["NUM_NODES"] == "4");
    CHECK(m["NUM_TRAINERS"] == "1");
    CHECK(m["WORLD_SIZE"] == "4");
    CHECK(m["PET_NNODES"] == "4");
    CHECK(m["PET_NODE_RANK"] == "2");
    CHECK(m["PET_NPROC_PER_NODE"] == "1");
    CHECK(m["PET_MASTER_ADDR"] == "198.19.0.11");
    CHECK(m["PET_MASTER_PORT"] == port);
    CHECK(m["NCCL_SOCKET_IFNAME"] == "=eth1");
    CHECK(m["GLOO_SOCKET_IFNAME"] == "eth1");
    CHECK(m["NODE_ADDRS"] == "198.19.0.11,198.19.0.12,198.19.0.13,198.19.0.14");
    CHECK(m["GANGWAY_LAYOUT"] == "node");
    CHECK(m.count("RANK") == 0);
    CHECK(m.count("LOCAL_RANK") == 0);
    for (auto& [k, _] : m) {
        CHECK(k.rfind("TORCHELASTIC_", 0) == std::string::npos);
        CHECK(k != "NCCL_COMM_ID");
    }
}

TEST_CASE("node mode with GPUs: NUM_TRAINERS is the GPU count") {
    auto v = step({1, 1}, 0, 0, 0);
    v.gpus_on_node = 8;
    auto m = as_map(plan_env(eth1(), v, addrs(2, 0), {}));
    CHECK(m["NUM_TRAINERS"] == "8");
    CHECK(m["PET_NPROC_PER_NODE"] == "8");
    CHECK(m["WORLD_SIZE"] == "16");
}

TEST_CASE("task mode with uneven tasks 2(x3),1") {
    const auto v = step({2, 2, 2, 1}, 3, 6, 0);
    const EnvPlan p = plan_env(eth1(), v, addrs(4, 3), {});
    CHECK(p.mode == Mode::Task);
    auto m = as_map(p);
    CHECK(m["WORLD_SIZE"] == "7");
    CHECK(m["RANK"] == "6");
    CHECK(m["LOCAL_RANK"] == "0");
    CHECK(m["LOCAL_WORLD_SIZE"] == "1");
    CHECK(m["NUM_TRAINERS"] == "1");
    CHECK(m["NODE_RANK"] == "3");
    CHECK(m["NODE_ADDR"] == "198.19.0.14");
    CHECK(m.count("PET_NNODES") == 0);
    auto m2 = as_map(plan_env(eth1(), step({2, 2, 2, 1}, 1, 3, 1), addrs(4, 1), {}));
    CHECK(m2["LOCAL_WORLD_SIZE"] == "2");
    CHECK(m2["NUM_TRAINERS"] == "2");
    CHECK(m2["RANK"] == "3");
}

TEST_CASE("forced modes") {
    Config c = eth1();
    c.mode = Mode::Task;
    CHECK(plan_env(c, step({1, 1}, 0, 0, 0), addrs(2, 0), {}).mode == Mode::Task);
    c.mode = Mode::Node;
    CHECK(plan_env(c, step({2, 2}, 0, 0, 0), addrs(2, 0), {}).mode == Mode::Node);
    c.mode = Mode::Off;
    const EnvPlan off = plan_env(c, step({2, 2}, 0, 0, 0), addrs(2, 0), {});
    CHECK(off.set.empty());
    CHECK_FALSE(off.skip_reason.empty());
}

TEST_CASE("a reserved port wins over the hash, IPv6 is bracketed") {
    auto v = step({1, 1}, 0, 0, 0);
    v.reserved_port = 12000;
    NodeAddrs a;
    a.primary = ip("fd00::11");
    a.self = a.primary;
    a.every = {ip("fd00::11"), ip("fd00::12")};
    auto m = as_map(plan_env(Config{}, v, a, {}));
    CHECK(m["MASTER_PORT"] == "12000");
    CHECK(m["MASTER_ADDR"] == "fd00::11");
    CHECK(m["HOST_NODE_ADDR"] == "[fd00::11]:12000");
    CHECK(m["JAX_COORDINATOR_ADDRESS"] == "[fd00::11]:12000");
    CHECK(m.count("NCCL_SOCKET_IFNAME") == 0);  // no iface configured: NCCL keeps its own choice
}

TEST_CASE("two steps of one job get different ports") {
    auto a = step({1, 1}, 0, 0, 0), b = a;
    b.step_id = 1;
    CHECK(as_map(plan_env(Config{}, a, addrs(2, 0), {}))["MASTER_PORT"] !=
          as_map(plan_env(Config{}, b, addrs(2, 0), {}))["MASTER_PORT"]);
}

TEST_CASE("a value the user set wins and derived values follow it") {
    const auto v = step({1, 1, 1, 1}, 1, 1, 0);
    const EnvMap user = {{"MASTER_PORT", "29500"}, {"NUM_TRAINERS", "2"}, {"PRIMARY_ADDR", "10.0.0.1"}};
    const EnvPlan p = plan_env(eth1(), v, addrs(4, 1), user);
    auto m = as_map(p);
    CHECK(m.count("MASTER_PORT") == 0);  // untouched
    CHECK(m.count("NUM_TRAINERS") == 0);
    CHECK(m.count("PRIMARY_ADDR") == 0);
    CHECK(m["PRIMARY_PORT"] == "29500");
    CHECK(m["PET_MASTER_PORT"] == "29500");
    CHECK(m["MASTER_ADDR"] == "10.0.0.1");
    CHECK(m["HOST_NODE_ADDR"] == "10.0.0.1:29500");
    CHECK(m["PET_NPROC_PER_NODE"] == "2");
    CHECK(m["WORLD_SIZE"] == "8");
}

TEST_CASE("values inherited from gangway in an earlier step are recomputed, changed ones are the user's") {
    // The batch script got gangway's values; srun inside it must not take them for the user's.
    StepView batch = step({1, 1, 1, 1}, 0, 0, 0);
    batch.kind = StepKind::Batch;
    batch.step_id = kBatchStep;
    batch.rank.reset();
    batch.local_rank.reset();
    const EnvPlan bp = plan_env(eth1(), batch, addrs(4, 0), {});
    EnvMap inherited(bp.set.begin(), bp.set.end());
    CHECK(inherited.count("PET_NNODES") == 0);  // batch script: no torchrun knobs
    CHECK(inherited.count("RANK") == 0);

    inherited["NUM_TRAINERS"] = "2";  // the user changed one after the batch step set it
    const auto v = step({2, 2, 2, 2}, 1, 3, 1);
    auto m = as_map(plan_env(eth1(), v, addrs(4, 1), inherited));
    CHECK(m["MASTER_PORT"] == std::to_string(hashed_port(42, 0, PortRange{})));
    CHECK(m["MASTER_PORT"] != inherited["MASTER_PORT"]);
    CHECK(m["NODE_RANK"] == "1");
    CHECK(m["WORLD_SIZE"] == "8");
    CHECK(m.count("NUM_TRAINERS") == 0);  // the user's change is kept
    CHECK(inherited_names(inherited).size() + 1 == bp.set.size() - 1);  // all but NUM_TRAINERS and the record
}

TEST_CASE("stale variables of another layout are cleared") {
    const EnvPlan node_step = plan_env(eth1(), step({1, 1}, 0, 0, 0), addrs(2, 0), {});
    EnvMap env(node_step.set.begin(), node_step.set.end());
    auto m = as_map(plan_env(eth1(), step({2, 2}, 0, 1, 1), addrs(2, 0), env));
    CHECK(m.count("PET_NNODES") == 1);
    CHECK(m["PET_NNODES"].empty());  // empty = unset
    CHECK(m["RANK"] == "1");
}

TEST_CASE("above node_addrs_max: no NODE_ADDRS, and one inherited from gangway is cleared") {
    NodeAddrs big;  // as find_node_addrs leaves it above the limit: node 0's and this node's only
    big.primary = ip("198.19.0.11");
    big.self = ip("198.19.0.13");
    auto m = as_map(plan_env(eth1(), step({1, 1, 1, 1}, 2, 2, 0), big, {}));
    CHECK(m["PRIMARY_ADDR"] == "198.19.0.11");
    CHECK(m["NODE_ADDR"] == "198.19.0.13");
    CHECK(m.count("NODE_ADDRS") == 0);
    // A batch script of a small job set it; a step above the limit must not pass it on as its own.
    const EnvPlan small = plan_env(eth1(), step({1, 1}, 0, 0, 0), addrs(2, 0), {});
    EnvMap env(small.set.begin(), small.set.end());
    REQUIRE(env.count("NODE_ADDRS") == 1);
    m = as_map(plan_env(eth1(), step({1, 1, 1, 1}, 2, 2, 0), big, env));
    CHECK(m.count("NODE_ADDRS") == 1);
    CHECK(m["NODE_ADDRS"].empty());  // empty = unset
    // The user's own value stays.
    m = as_map(plan_env(eth1(), step({1, 1, 1, 1}, 2, 2, 0), big, {{"NODE_ADDRS", "a,b,c,d"}}));
    CHECK(m.count("NODE_ADDRS") == 0);
}

TEST_CASE("steps left alone on purpose") {
    auto v = step({1, 1}, 0, 0, 0);
    v.kind = StepKind::Extern;
    CHECK(plan_env(eth1(), v, addrs(2, 0), {}).set.empty());
    v.kind = StepKind::Interactive;
    CHECK(plan_env(eth1(), v, addrs(2, 0), {}).set.empty());
    v.kind = StepKind::Normal;
    v.kind = StepKind::Batch;
    Config c = eth1();
    c.batch = false;
    CHECK(plan_env(c, v, addrs(2, 0), {}).set.empty());
}

TEST_CASE("torch hook: first on PYTHONPATH, once, the task's entries kept") {
    CHECK(pythonpath_with("/h", std::nullopt) == "/h");
    CHECK(pythonpath_with("/h", std::string()) == "/h");
    CHECK(pythonpath_with("/h", std::string("/a:/b")) == "/h:/a:/b");
    CHECK(pythonpath_with("/h", std::string("/a::/b")) == "/h:/a::/b");  // an empty entry (the cwd) stays
    CHECK_FALSE(pythonpath_with("/h", std::string("/h:/a")));            // an srun inside a step that had it
    CHECK_FALSE(pythonpath_with("/h", std::string("/a:/h")));            // placed elsewhere on purpose
    CHECK(pythonpath_with("/h", std::string("/h2")) == "/h:/h2");        // whole entries, not prefixes
}

TEST_CASE("torch hook: bound read-only into apptainer, once, the task's binds kept") {
    CHECK(apptainer_bindpath_with("/h", std::nullopt) == "/h:/h:ro");
    CHECK(apptainer_bindpath_with("/h", std::string()) == "/h:/h:ro");
    CHECK(apptainer_bindpath_with("/h", std::string("/data,/scratch:/s")) == "/data,/scratch:/s,/h:/h:ro");
    CHECK_FALSE(apptainer_bindpath_with("/h", std::string("/h:/h:ro")));       // an srun inside a step that had it
    CHECK_FALSE(apptainer_bindpath_with("/h", std::string("/a,/h:/elsewhere")));  // the user's own bind of it
    CHECK_FALSE(apptainer_bindpath_with("/h", std::string("/h")));
    CHECK(apptainer_bindpath_with("/h", std::string("/h2")) == "/h2,/h:/h:ro");  // whole sources, not prefixes
}
