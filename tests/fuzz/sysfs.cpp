// sysfs files the node card and the GPU checks read: an InfiniBand port's
// state and rate, a PCIe link's speed, a GPU's name.
#include "lib/preflight/gpu_checks.hpp"
#include "lib/preflight/rdma_checks.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): the copy made here: n; each reader: 3 n.
    const gangway::fuzz::HeapBudget budget(size, 8, 64u << 10);
    const std::string in(gangway::fuzz::text(data, size));
    gangway::fuzz::refusable([&] { (void)gangway::verbs::parse_state(in); });
    gangway::fuzz::refusable([&] { (void)gangway::verbs::parse_rate(in); });
    gangway::fuzz::refusable([&] { (void)gangway::gpu::pcie_gen_from_speed(in); });
    gangway::fuzz::refusable([&] { (void)gangway::gpu::gpu_model(in); });
    return 0;
}
