// SLURM's topology.conf and topology.yaml (rank_order=topology): written by a
// site, or a copy gone stale, and read by the plugin in every step.
#include "lib/env/switch_topology.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): parse_switch_topology: 14 n + 70 MiB.
    const gangway::fuzz::HeapBudget budget(size, 14, (70u << 20) + (64u << 10));
    const auto in = gangway::fuzz::text(data, size);
    gangway::fuzz::refusable([&] { (void)gangway::parse_topology_conf(in); });
    gangway::fuzz::refusable([&] { (void)gangway::parse_topology_yaml(in); });
    return 0;
}
