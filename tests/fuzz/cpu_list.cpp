// CPU and GPU index lists ("0-3,8,10-11"): SLURM_STEP_GPUS, cpusets, sysfs
// cpulist files, and `gangway topo --gpus` (order and repeats kept).
#include "lib/pin/topology.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gangway::fuzz::refusable([&] { (void)gangway::parse_cpu_list(gangway::fuzz::text(data, size)); });
    gangway::fuzz::refusable([&] { (void)gangway::parse_index_list(gangway::fuzz::text(data, size)); });
    return 0;
}
