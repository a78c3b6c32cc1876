// What the node check reads from files others write or that come from
// outside: the site file, slurm.conf's and gres.conf's GPU lines, its own
// state file, the kernel log's records and scontrol's answer.
#include "lib/health/gres.hpp"
#include "lib/health/site_conf.hpp"
#include "lib/health/slurm_action.hpp"
#include "lib/health/state.hpp"
#include "lib/health/kmsg_record.hpp"
#include "lib/health/xid.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace gangway;
    // The readers' bounds (SECURITY.md): 64 n and one node list's expansion
    // (20 MiB) at most, and this target's copy of the input.
    const fuzz::HeapBudget budget(size, 72, (20u << 20) + (64u << 10));
    const std::string in(fuzz::text(data, size));
    fuzz::refusable([&] { (void)health::parse_site_conf(in, "node-check.conf"); });
    fuzz::refusable([&] { (void)health::gres_from_slurm_conf(in, "node08"); });
    fuzz::refusable([&] { (void)health::gres_from_gres_conf(in, "node08"); });
    fuzz::refusable([&] {
        const auto s = health::parse_state(in);
        (void)health::parse_state(health::render_state(s));  // what it writes it reads back
    });
    fuzz::refusable([&] { (void)health::parse_kmsg_xids(in); });
    fuzz::refusable([&] { (void)health::last_kmsg_seq(in); });
    fuzz::refusable([&] { (void)health::kmsg_lost(in, 1000u); });
    fuzz::refusable([&] { (void)health::parse_show_node(in); });
    return 0;
}
