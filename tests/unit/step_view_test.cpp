#include "catch_compat.hpp"

#include "../../lib/env/step_view.hpp"

using namespace gangway;

namespace {

SlurmFacts normal_step() {
    SlurmFacts f;
    f.job_id = 42;
    f.step_id = 3;
    f.nnodes = 4;
    f.node_id = 2;
    f.total_tasks = 7;
    f.local_tasks = 2;
    f.task_rank = 5;
    f.task_local_id = 1;
    f.env = {{"SLURM_STEP_NODELIST", "node[08-11]"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}};
    return f;
}

}  // namespace

TEST_CASE("a normal step with uneven tasks") {
    const StepView v = make_step_view(normal_step());
    CHECK(v.kind == StepKind::Normal);
    CHECK(v.nodes == std::vector<std::string>{"node08", "node09", "node10", "node11"});
    CHECK(v.node_index == 2);
    CHECK(v.tasks_per_node == std::vector<unsigned>{2, 2, 2, 1});
    CHECK(v.total_tasks == 7);
    CHECK(*v.rank == 5);
    CHECK(*v.local_rank == 1);
    CHECK(*v.local_tasks == 2);
    CHECK(v.gpus_on_node == 0);
    CHECK_FALSE(v.reserved_port);
}

TEST_CASE("GPUs and reserved ports are read from the step environment") {
    SlurmFacts f = normal_step();
    f.env["SLURM_GPUS_ON_NODE"] = "8";
    f.env["SLURM_STEP_RESV_PORTS"] = "12000-12001";
    const StepView v = make_step_view(f);
    CHECK(v.gpus_on_node == 8);
    CHECK(*v.reserved_port == 12000);
}

TEST_CASE("the batch script sees the job's allocation") {
    SlurmFacts f;
    f.job_id = 7;
    f.step_id = kBatchStep;
    f.nnodes = 0;  // what SLURM reports for the batch step
    f.env = {{"SLURM_JOB_NODELIST", "node[08-09]"}, {"SLURM_TASKS_PER_NODE", "1(x2)"}, {"SLURM_NTASKS", "2"}};
    const StepView v = make_step_view(f);
    CHECK(v.kind == StepKind::Batch);
    CHECK(v.nodes.size() == 2);
    CHECK(v.node_index == 0);
    CHECK(v.total_tasks == 2);
    CHECK_FALSE(v.rank);
}

TEST_CASE("the batch script without -n: SLURM_TASKS_PER_NODE counts CPUs, srun starts one task per node") {
    SlurmFacts f;
    f.step_id = kBatchStep;
    f.env = {{"SLURM_JOB_NODELIST", "node[08-09]"}, {"SLURM_TASKS_PER_NODE", "4(x2)"}};
    StepView v = make_step_view(f);
    CHECK(v.tasks_per_node == std::vector<unsigned>{1, 1});
    CHECK(v.total_tasks == 2);
    f.env["SLURM_NTASKS"] = "3";
    f.env["SLURM_TASKS_PER_NODE"] = "2,1";
    v = make_step_view(f);
    CHECK(v.tasks_per_node == std::vector<unsigned>{2, 1});
    CHECK(v.total_tasks == 3);
}

TEST_CASE("extern and interactive steps are recognised and need nothing") {
    SlurmFacts f;
    f.step_id = kExternStep;
    CHECK(make_step_view(f).kind == StepKind::Extern);
    f.step_id = kInteractiveStep;
    CHECK(make_step_view(f).kind == StepKind::Interactive);
}

TEST_CASE("heterogeneous steps take the whole step from SLURM's variables, the port from the leader job") {
    // Component 1 of `srun -N1 : -N1`: SPANK items say 1 node, node 0, job 31;
    // SLURM's variables say node 1 of 2, rank 1, and the leader is job 30.
    SlurmFacts f;
    f.job_id = 31;
    f.step_id = 0;
    f.nnodes = 1;
    f.node_id = 0;
    f.total_tasks = 1;
    f.task_rank = 0;
    f.task_local_id = 0;
    f.env = {{"SLURM_HET_SIZE", "2"}, {"SLURM_JOB_ID_PACK_GROUP_0", "30"}, {"SLURM_STEP_NODELIST", "node[08-09]"},
             {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}, {"SLURM_STEP_NUM_NODES", "2"}, {"SLURM_STEP_NUM_TASKS", "2"},
             {"SLURM_NODEID", "1"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"}, {"SLURM_STEP_ID", "0"},
             {"SLURM_JOB_ID", "31"}, {"SLURM_STEP_RESV_PORTS", "12010"}};
    const StepView v = make_step_view(f);
    CHECK(v.heterogeneous);
    CHECK(v.job_id == 30);
    CHECK(v.node_index == 1);
    CHECK(*v.rank == 1);
    CHECK(v.total_tasks == 2);
    CHECK(*v.local_tasks == 1);
    CHECK_FALSE(v.reserved_port);  // each component reserves its own
    f.env.erase("SLURM_NODEID");
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("SLURM_NODEID"));
}

TEST_CASE("inconsistent facts are refused with the variable named") {
    SlurmFacts f = normal_step();
    f.env["SLURM_STEP_TASKS_PER_NODE"] = "2(x3)";
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("SLURM_STEP_TASKS_PER_NODE lists 3 nodes"));
    f = normal_step();
    f.nnodes = 5;
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("SLURM_STEP_NODELIST has 4 nodes but the step has 5"));
    f = normal_step();
    f.env.erase("SLURM_STEP_NODELIST");
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("SLURM_STEP_NODELIST is not set"));
    f = normal_step();
    f.total_tasks = 8;
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("adds up to 7"));
    f = normal_step();
    f.env["SLURM_GPUS_ON_NODE"] = "eight";
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("SLURM_GPUS_ON_NODE"));
}

TEST_CASE("facts from a task's environment") {
    EnvMap env = {{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "3"}, {"SLURM_NODEID", "1"}, {"SLURM_PROCID", "4"},
                  {"SLURM_LOCALID", "0"}, {"SLURM_STEP_NUM_NODES", "4"}, {"SLURM_STEP_NUM_TASKS", "7"},
                  {"SLURM_STEP_NODELIST", "node[08-11]"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}};
    const StepView v = make_step_view(facts_from_env(env));
    CHECK(v.job_id == 42);
    CHECK(v.step_id == 3);
    CHECK(v.node_index == 1);
    CHECK(*v.rank == 4);
    CHECK(*v.local_tasks == 2);
    env.erase("SLURM_STEP_ID");
    env["SLURM_JOB_NODELIST"] = "node[08-11]";
    env["SLURM_TASKS_PER_NODE"] = "2(x3),1";
    CHECK(make_step_view(facts_from_env(env)).kind == StepKind::Batch);
}

// Issue 23, item 2: in a heterogeneous step the node's task count comes from
// SLURM_STEP_TASKS_PER_NODE, and the counts were summed in 32 bits: counts
// that wrapped to SLURM_STEP_NUM_TASKS passed, and the node planned 2^32-1
// tasks (std::bad_alloc in user_init); four million took 846 MB.
namespace {

SlurmFacts het_step(const std::string& tasks_per_node, const std::string& num_tasks) {
    SlurmFacts f;
    f.job_id = 31;
    f.step_id = 0;
    f.nnodes = 1;
    f.node_id = 0;
    f.total_tasks = 1;
    f.env = {{"SLURM_HET_SIZE", "2"},         {"SLURM_STEP_NODELIST", "node[08-09]"},
             {"SLURM_STEP_TASKS_PER_NODE", tasks_per_node}, {"SLURM_STEP_NUM_NODES", "2"},
             {"SLURM_STEP_NUM_TASKS", num_tasks}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_ID", "0"},
             {"SLURM_JOB_ID", "31"}};
    return f;
}

}  // namespace

TEST_CASE("a heterogeneous step's counts that wrap around 32 bits are refused, not planned") {
    // 4294967295 + 3 = 2 in 32 bits.
    CHECK_THROWS_WITH(make_step_view(het_step("4294967295,3", "2")),
                      Catch::Matchers::ContainsSubstring("MaxTasksPerNode"));
    CHECK_THROWS_WITH(make_step_view(het_step("4000000,1", "4000001")),
                      Catch::Matchers::ContainsSubstring("MaxTasksPerNode"));
    // The most SLURM allows is kept.
    const StepView v = make_step_view(het_step("65533(x2)", "131066"));
    CHECK(v.total_tasks == 131066);
    CHECK(*v.local_tasks == 65533);
    CHECK_THROWS_WITH(make_step_view(het_step("65533(x2)", "130")), Catch::Matchers::ContainsSubstring("adds up to 131066"));
}

TEST_CASE("the per-node counts are summed in 64 bits: 65,536 nodes of 65,533 tasks") {
    SlurmFacts f = het_step("65533(x65536)", "4294770688");
    f.env["SLURM_STEP_NODELIST"] = "n[0-65535]";
    f.env["SLURM_STEP_NUM_NODES"] = "65536";
    const StepView v = make_step_view(f);
    CHECK(v.total_tasks == 4294770688u);
    // One task less in the total than the counts add up to: caught, whatever the width.
    f.env["SLURM_STEP_NUM_TASKS"] = "4294770687";
    CHECK_THROWS_WITH(make_step_view(f), Catch::Matchers::ContainsSubstring("adds up to 4294770688"));
}
