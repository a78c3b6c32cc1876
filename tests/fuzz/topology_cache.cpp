// The topology cache file (topology= in plugstack.conf), which a site or a
// stale copy may leave in any state.
#include "lib/pin/topology.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): parse_topology: 48 n + 11 MiB.
    const gangway::fuzz::HeapBudget budget(size, 48, (11u << 20) + (64u << 10));
    gangway::fuzz::refusable([&] { (void)gangway::parse_topology(gangway::fuzz::text(data, size), "fuzz"); });
    return 0;
}
