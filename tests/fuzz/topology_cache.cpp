// The topology cache file (topology= in plugstack.conf), which a site or a
// stale copy may leave in any state.
#include "lib/pin/topology.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gangway::fuzz::refusable([&] { (void)gangway::parse_topology(gangway::fuzz::text(data, size), "fuzz"); });
    return 0;
}
