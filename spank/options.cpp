#include "options.hpp"

#include <string>

#include "../lib/base/error.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "env_access.hpp"
#include "guard.hpp"
#include "log.hpp"
#include "state.hpp"

namespace gangway::plugin {
namespace {

enum OptVal { kMode = 1, kIface = 2, kPin = 3, kCheck = 4, kOnFail = 5, kRankOrder = 6, kOnHang = 7 };

// The option callback runs in srun/sbatch to validate (remote == 0) and again
// in slurmstepd (remote == 1), where a failure must not abort the daemon's
// callback chain: it is kept and reported at task start.
int apply_option(int val, const char* optarg, int remote) {
    try {
        std::string arg = optarg ? optarg : "";
        // sbatch/salloc hand their options to the job's sruns as
        // SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option>, printing a missing
        // argument as "(null)" (seen on 22.05): that is no argument.
        if (arg == "(null)") arg.clear();
        if (val == kMode) state().cli.mode = parse_mode(arg, "--gangway");
        if (val == kPin) state().cli.pin = parse_pin(arg, "--gangway-pin");
        if (val == kRankOrder) state().cli.rank_order = parse_rank_order(arg, "--gangway-rank-order");
        if (val == kCheck) {
            // The argument is optional: --gangway-check alone means quick (srun
            // passes no argument, slurmstepd an empty one).
            state().cli.check.level = arg.empty() ? CheckLevel::quick : parse_check_level(arg, "--gangway-check");
            state().cli.check.level_from_cli = true;
        }
        if (val == kOnFail) state().cli.check.on_fail = parse_on_fail(arg, "--gangway-on-fail");
        if (val == kOnHang) state().cli.on_hang = parse_hang_policy(arg, "--gangway-on-hang");
        if (val == kIface) {
            check_iface_name(arg, "--gangway-iface");
            state().cli.iface = arg;
        }
        return 0;
    } catch (const Error& e) {
        if (remote) {
            note_error(e.what());
            return 0;
        }
        log_error(e.what());
        return -1;
    }
}

// What SLURM calls: anything but gangway's own Error (std::bad_alloc) goes to
// the guard, one line and never an abort.
int on_option(int val, const char* optarg, int remote) noexcept {
    return guarded("the option callback", remote ? 0 : -1, [&] { return apply_option(val, optarg, remote); });
}

char kModeName[] = "gangway";
char kModeArg[] = "MODE";
char kModeUsage[] =
    "[gangway] instant-cluster variables: auto (default), node (one task per node: torchrun), task (one task per "
    "GPU/rank), off. Env: GANGWAY_MODE";
char kIfaceName[] = "gangway-iface";
char kIfaceArg[] = "IFACE";
char kIfaceUsage[] = "[gangway] data network interface for addresses, NCCL and Gloo (default: site iface=). Env: GANGWAY_IFACE";

char kPinName[] = "gangway-pin";
char kPinArg[] = "PIN";
char kPinUsage[] =
    "[gangway] pinning: on (default: cores and NIC follow the GPU of LOCAL_RANK, all GPUs visible), narrow "
    "(also CUDA_VISIBLE_DEVICES), off. Env: GANGWAY_PIN";

char kCheckName[] = "gangway-check";
char kCheckArg[] = "LEVEL";
char kCheckUsage[] =
    "[gangway] check the step's nodes and network before the command starts (the batch script: the whole "
    "allocation, once): quick (the default with no LEVEL), full, none. Env: GANGWAY_CHECK";
char kOnFailName[] = "gangway-on-fail";
char kOnFailArg[] = "POLICY";
char kOnFailUsage[] =
    "[gangway] when the check fails: abort (default: do not start the command), warn (start it anyway), requeue "
    "(requeue the batch job without the bad nodes). Env: GANGWAY_ON_FAIL";

char kRankOrderName[] = "gangway-rank-order";
char kRankOrderArg[] = "ORDER";
char kRankOrderUsage[] =
    "[gangway] NODE_RANK order: slurm (SLURM's node list order) or topology (nodes grouped by leaf switch from "
    "SLURM's topology.conf/topology.yaml, so ring neighbours share a switch); default: site rank_order=. Env: "
    "GANGWAY_RANK_ORDER";

char kOnHangName[] = "gangway-on-hang";
char kOnHangArg[] = "POLICY";
char kOnHangUsage[] =
    "[gangway] where the site watches running jobs (watch=): on a hang, report (default: the line in gangway status "
    "and AdminComment), cancel or requeue the job; off: no watching of this job. Env: GANGWAY_ON_HANG";

struct spank_option kOptions[] = {
    {kModeName, kModeArg, kModeUsage, 1, kMode, on_option},
    {kIfaceName, kIfaceArg, kIfaceUsage, 1, kIface, on_option},
    {kPinName, kPinArg, kPinUsage, 1, kPin, on_option},
    {kCheckName, kCheckArg, kCheckUsage, 2, kCheck, on_option},
    {kOnFailName, kOnFailArg, kOnFailUsage, 1, kOnFail, on_option},
    {kRankOrderName, kRankOrderArg, kRankOrderUsage, 1, kRankOrder, on_option},
    {kOnHangName, kOnHangArg, kOnHangUsage, 1, kOnHang, on_option},
    SPANK_OPTIONS_TABLE_END,
};

// The job's environment in slurmstepd, the process's own in srun and sbatch.
std::string context_getenv(spank_t sp, const char* name) {
    return spank_remote(sp) ? get_env(sp, name).value_or("") : sys::env_or(name);
}

}  // namespace

int register_options(spank_t sp) {
    for (auto* o = kOptions; o->name; ++o) {
        const spank_err_t rc = spank_option_register(sp, o);
        if (rc != ESPANK_SUCCESS) {
            log_error(std::string("cannot register option --") + o->name + ": " + spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

void apply_env_fallbacks(spank_t sp) {
    auto& cli = state().cli;
    if (!cli.mode)
        if (auto v = context_getenv(sp, "GANGWAY_MODE"); !v.empty()) cli.mode = parse_mode(v, "GANGWAY_MODE");
    if (!cli.pin)
        if (auto v = context_getenv(sp, "GANGWAY_PIN"); !v.empty()) cli.pin = parse_pin(v, "GANGWAY_PIN");
    if (!cli.check.level)
        if (auto v = context_getenv(sp, "GANGWAY_CHECK"); !v.empty()) cli.check.level = parse_check_level(v, "GANGWAY_CHECK");
    if (!cli.check.on_fail)
        if (auto v = context_getenv(sp, "GANGWAY_ON_FAIL"); !v.empty())
            cli.check.on_fail = parse_on_fail(v, "GANGWAY_ON_FAIL");
    if (!cli.rank_order)
        if (auto v = context_getenv(sp, "GANGWAY_RANK_ORDER"); !v.empty())
            cli.rank_order = parse_rank_order(v, "GANGWAY_RANK_ORDER");
    if (!cli.on_hang)
        if (auto v = context_getenv(sp, "GANGWAY_ON_HANG"); !v.empty()) cli.on_hang = parse_hang_policy(v, "GANGWAY_ON_HANG");
    check_user_allowed(state().site.check, cli.check);
    if (!cli.iface)
        if (auto v = context_getenv(sp, "GANGWAY_IFACE"); !v.empty()) {
            check_iface_name(v, "GANGWAY_IFACE");
            cli.iface = v;
        }
}

}  // namespace gangway::plugin
