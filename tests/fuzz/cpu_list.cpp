// CPU and GPU index lists ("0-3,8,10-11"): SLURM_STEP_GPUS, cpusets, sysfs
// cpulist files, and `gangway topo --gpus` (order and repeats kept).
#include "lib/pin/topology.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): parse_cpu_list: 4 n + 4 MiB; then parse_index_list: 4 MiB.
    const gangway::fuzz::HeapBudget budget(size, 4, (4u << 20) + (64u << 10));
    gangway::fuzz::refusable([&] { (void)gangway::parse_cpu_list(gangway::fuzz::text(data, size)); });
    gangway::fuzz::refusable([&] { (void)gangway::parse_index_list(gangway::fuzz::text(data, size)); });
    return 0;
}
