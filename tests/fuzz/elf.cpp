// A SLURM plugin file as gangway doctor reads it: any bytes at all.
#include "lib/preflight/elf_plugin.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): plugin_info: nothing beyond the file but the names it keeps.
    const gangway::fuzz::HeapBudget budget(size, 0, 64u << 10);
    // plugin_info never throws: a bad file is its `error`.
    (void)gangway::preflight::plugin_info(gangway::fuzz::text(data, size));
    return 0;
}
