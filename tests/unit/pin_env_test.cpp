#include "catch_compat.hpp"

#include <map>

#include "../../lib/pin/pin_env.hpp"

using namespace gangway;

namespace {

// Two GPUs, each with its own compute NIC and two cores of its own.
Placement two_gpu_plan() {
    Placement p;
    p.nccl_ib_hca = "=mlx5_0:1,mlx5_3:1";
    TaskPlacement a, b;
    a.local_rank = 0;
    a.gpu_indexes = {2};
    a.gpus = {"0000:1b:00.0"};
    a.nics = {NicChoice{"mlx5_0", 1, "ibp24s0", "0000:18:00.0", true}};
    a.cpus = {0, 1, 16, 17};
    b.local_rank = 1;
    b.gpu_indexes = {3};
    b.gpus = {"0000:43:00.0"};
    b.nics = {NicChoice{"mlx5_3", 1, "ibp64s0", "0000:40:00.0", true}};
    b.cpus = {2, 3, 18, 19};
    p.tasks = {a, b};
    return p;
}

std::map<std::string, std::string> as_map(const std::vector<std::pair<std::string, std::string>>& v) {
    return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("default pinning: every GPU stays visible, NIC and cores follow the task's GPU") {
    const Placement p = two_gpu_plan();
    PinInput in{&p, 1, PinMode::On, Mode::Task, {2, 3}, {"0", "1"}};
    auto m = as_map(pin_env(in));
    CHECK(m["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID");
    CHECK(m["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_3:1");
    CHECK(m["UCX_NET_DEVICES"] == "mlx5_3:1");
    CHECK(m["OMP_NUM_THREADS"] == "4");
    CHECK(m["GANGWAY_GPUS"] == "0000:43:00.0");
    CHECK(m["GANGWAY_NICS"] == "mlx5_3:1");
    CHECK(m["GANGWAY_CPUS"] == "2-3,18-19");
    CHECK(m.count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("narrow mode keeps SLURM's spelling of the task's GPU") {
    const Placement p = two_gpu_plan();
    PinInput in{&p, 1, PinMode::Narrow, Mode::Task, {2, 3}, {"0", "1"}};  // cgroup-local indexes
    CHECK(as_map(pin_env(in))["CUDA_VISIBLE_DEVICES"] == "1");
    in.cuda_visible.clear();  // SLURM set none: the global index
    CHECK(as_map(pin_env(in))["CUDA_VISIBLE_DEVICES"] == "3");
    in.step_gpus = {7};
    CHECK_THROWS_WITH(pin_env(in), Catch::Matchers::ContainsSubstring("GPU 3 planned for local task 1 is not one of the step's GPUs"));
}

TEST_CASE("node layout leaves OMP_NUM_THREADS to torchrun; off sets nothing") {
    const Placement p = two_gpu_plan();
    PinInput in{&p, 0, PinMode::On, Mode::Node, {2, 3}, {}};
    CHECK(as_map(pin_env(in)).count("OMP_NUM_THREADS") == 0);
    in.pin = PinMode::Off;
    CHECK(pin_env(in).empty());
}

TEST_CASE("GPU-less plans set no CUDA or NCCL variables") {
    Placement p;
    TaskPlacement t;
    t.cpus = {0, 1};
    p.tasks = {t};
    auto m = as_map(pin_env(PinInput{&p, 0, PinMode::On, Mode::Task, {}, {}}));
    CHECK(m.count("CUDA_DEVICE_ORDER") == 0);
    CHECK(m.count("NCCL_IB_HCA") == 0);
    CHECK(m.count("UCX_NET_DEVICES") == 0);
    CHECK(m["GANGWAY_CPUS"] == "0-1");
    CHECK_THROWS_WITH(pin_env(PinInput{&p, 3, PinMode::On, Mode::Task, {}, {}}), Catch::Matchers::ContainsSubstring("local task 3 has no placement"));
}

TEST_CASE("a NIC without an RDMA device is UCX's tcp device: its interface, no port (issue 23 item 10)") {
    // El Capitan class: the Cassini NIC's only OS device is the interface hsi2.
    Placement p;
    TaskPlacement t;
    t.gpu_indexes = {2};
    t.gpus = {"0002:02:00.0"};
    t.nics = {NicChoice{"hsi2", 1, "hsi2", "0002:01:00.0", false, true}};
    t.cpus = {8, 9};
    p.tasks = {t};
    auto m = as_map(pin_env(PinInput{&p, 0, PinMode::On, Mode::Task, {2}, {}}));
    CHECK(m["UCX_NET_DEVICES"] == "hsi2");
    CHECK(m["GANGWAY_NICS"] == "hsi2");
    CHECK(m.count("NCCL_IB_HCA") == 0);
}
