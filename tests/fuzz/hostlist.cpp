// SLURM's node lists (SLURM_JOB_NODELIST, SLURM_STEP_NODELIST) and per-node
// counts (SLURM_TASKS_PER_NODE, SLURM_JOB_CPUS_PER_NODE): set by the user's
// environment as much as by SLURM.
#include "lib/env/hostlist.hpp"
#include "lib/env/tasks_per_node.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): expand_hostlist: 20 MiB + 12 n; then expand_counts: 512 KiB.
    const gangway::fuzz::HeapBudget budget(size, 12, (20u << 20) + (64u << 10));
    const auto in = gangway::fuzz::text(data, size);
    gangway::fuzz::refusable([&] { (void)gangway::expand_hostlist(in); });
    gangway::fuzz::refusable([&] { (void)gangway::expand_counts(in); });
    return 0;
}
