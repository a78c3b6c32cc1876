// The values a user or a site gives gangway's options and variables
// (--gangway-mode, --gangway-pin, --gangway-check, --gangway-on-fail,
// --gangway-iface, addr_template, GANGWAY_SECRET, SLURM_STEP_RESV_PORTS, the
// GPU thresholds' variables...), and what scontrol prints for a requeue.
// The first line is the value; the second, where one is needed, the other
// input (a node name, the variable's name).
#include "lib/env/config.hpp"
#include "lib/env/netaddr.hpp"
#include "lib/env/port.hpp"
#include "lib/env/check_policy.hpp"
#include "lib/preflight/bootstrap.hpp"
#include "lib/preflight/gpu_checks.hpp"
#include "lib/preflight/report.hpp"
#include "lib/slurm/requeue.hpp"
#include "lib/preflight/stage_status.hpp"
#include "lib/preflight/wire.hpp"
#include "tests/fuzz/fuzz.hpp"

using gangway::fuzz::refusable;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): the values: 2 n each; the environment made here: 3 n; thresholds: 32 n; requeue_exclusions: a node list (20 MiB + 12 n) and its set (4 MiB).
    const gangway::fuzz::HeapBudget budget(size, 48, 25u << 20);
    const auto in = gangway::fuzz::text(data, size);
    const auto fields = gangway::fuzz::two_fields(in);
    const auto value = fields.first, other = fields.second;
    refusable([&] { (void)gangway::parse_mode(value, "--gangway-mode"); });
    refusable([&] { (void)gangway::parse_pin(value, "--gangway-pin"); });
    refusable([&] { (void)gangway::parse_check_level(value, "--gangway-check"); });
    refusable([&] { (void)gangway::parse_on_fail(value, "--gangway-on-fail"); });
    refusable([&] { gangway::check_iface_name(value, "--gangway-iface"); });
    refusable([&] { (void)gangway::expand_addr_template(value, other); });
    refusable([&] { (void)gangway::parse_ip(value); });
    refusable([&] { (void)gangway::first_reserved_port(value); });
    refusable([&] { (void)gangway::is_reserved_port(value, 12001); });
    refusable([&] { (void)gangway::preflight::parse_bootstrap_mode(value); });
    refusable([&] { (void)gangway::preflight::parse_stage_status(value); });
    refusable([&] { (void)gangway::preflight::parse_verdict(value); });
    refusable([&] { (void)gangway::preflight::key_from_secret(value); });
    refusable([&] { (void)gangway::slurm::requeue_exclusions(in, {"n1", "n2"}); });
    const gangway::EnvMap env{{std::string(other), std::string(value)},
                              {"SLURM_STEP_GPUS", std::string(value)},
                              {"CUDA_VISIBLE_DEVICES", std::string(value)}};
    refusable([&] { (void)gangway::gpu::thresholds_from_env(env); });
    refusable([&] { (void)gangway::gpu::allocated_gpus(env); });
    return 0;
}
