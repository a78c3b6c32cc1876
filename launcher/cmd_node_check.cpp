// `gangway node-check`: this node's health between jobs (lib/sys/health).
// By hand it prints a table (or JSON); as SLURM's HealthCheckProgram
// (--slurm) it is silent when healthy and drains or resumes the node itself;
// for NHC (--nhc, contrib/nhc/gangway.nhc) it prints the one line NHC drains with.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/fleet/report_schema.hpp"
#include "../lib/health/check_mode.hpp"
#include "../lib/health/render.hpp"
#include "../lib/sys/health/site_file.hpp"
#include "../lib/sys/fleet/spool.hpp"
#include "../lib/sys/health/log.hpp"
#include "../lib/sys/health/node_check.hpp"
#include "../lib/sys/health/slurm_mode.hpp"
#include "../lib/sys/health/state_file.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/node/sysfs.hpp"
#include "../lib/env/config.hpp"
#include "../lib/sys/postmortem/outbox.hpp"
#include "commands.hpp"

namespace gangway::cli {
namespace {

const char* kUsage =
    "usage: gangway node-check [--level=quick|full] [--slurm | --nhc] [--json[=FILE]] [--config=FILE]\n"
    "                          [--state=FILE] [--sysfs-root=DIR] [--timeout=SEC] [--nccl-lib=PATH] [--node=NAME]\n"
    "                          [--fleet-spool=DIR] [--postmortem-dir=DIR]\n"
    "This node's health between jobs: GPUs and NICs against what SLURM and the site expect, each PCIe\n"
    "link against its maximum, each RDMA port's state, rate and error counters, NVML's memory health\n"
    "and the kernel log's Xids, and the CUDA stage; at --level=full also copy bandwidth, the local NCCL\n"
    "all-reduce and an RDMA loopback write per port. A failure counts once it repeats (measured again\n"
    "at once, or on the next run).\n"
    "  --level=LEVEL    quick (default, a few seconds) or full (copies, NCCL, RDMA: up to a minute)\n"
    "  --slurm          as SLURM's HealthCheckProgram: silent when healthy; drains this node on a\n"
    "                   confirmed failure (reason \"gangway: ...\"), resumes only its own drains\n"
    "  --nhc            for NHC's check_gangway: one line on stdout and exit 3 on a confirmed failure\n"
    "  --json[=FILE]    the records as JSON, on stdout or into FILE\n"
    "  --config=FILE    the site's expectations (default /etc/gangway/node-check.conf, if present)\n"
    "  --state=FILE     what runs leave for the next (default: the config's state_file,\n"
    "                   /var/lib/gangway/node-check.state; written by --slurm, --nhc or when named)\n"
    "  --sysfs-root=DIR read /sys under DIR (a copy from a node, tests)              [GANGWAY_SYSFS_ROOT]\n"
    "  --timeout=SEC    the run's deadline (default 10 quick, 40 full; at most 40 with --slurm)\n"
    "  --nccl-lib=PATH  the libnccl.so.2 of the full level's all-reduce             [GANGWAY_NCCL_LIB]\n"
    "  --node=NAME      this node's SLURM name (default SLURMD_NODENAME, else the short hostname)\n"
    "  --fleet-spool=DIR  with --json or --slurm, drop the run's JSON there for the site's fleet memory\n"
    "                   when DIR exists (default /var/spool/gangway/fleet; \"\" none)\n"
    "  --postmortem-dir=DIR  with --slurm, as root: after the check, send again the post-mortem's records\n"
    "                   waiting in DIR/outbox (the plugin's postmortem_dir=, %n: the short host name; default\n"
    "                   /var/spool/gangway/postmortem; \"\" none), 5 s at most\n"
    "exit codes: 0 healthy, 3 a check failed (--slurm, --nhc: a confirmed failure), 5 a part could not finish\n"
    "(--slurm, --nhc: 0), 2 usage";

constexpr const char* kDefaultConfig = "/etc/gangway/node-check.conf";

using health::Mode;
using health::NotChecked;

struct Args {
    bool full = false, json = false;
    std::string json_file, config, state, root, nccl_lib, node;
    std::string fleet_spool = sys::fleet::kDefaultSpool;
    std::string postmortem_dir = "/var/spool/gangway/postmortem";
    bool config_named = false;
    Mode mode = Mode::plain;
    std::optional<double> timeout;
};

std::string short_hostname() {
    char h[256] = {};
    ::gethostname(h, sizeof h - 1);
    std::string s = h;
    return s.substr(0, s.find('.'));
}

// One line per problem, on stderr and, as SLURM's or NHC's, in syslog too.
void complain(Mode m, const std::string& text) {
    for (const auto& line : split_nonempty(text, '\n')) {
        if (m == Mode::plain) std::fprintf(stderr, "gangway node-check: %s\n", line.c_str());
        else sys::tell(sys::LogLevel::error, line);
    }
}

// Sends the post-mortem's outbox again (sys/postmortem/outbox); its lines in syslog.
void resend_postmortem(const std::string& dir_template, double within_s) {
    if (within_s < 1) return;
    sys::postmortem::ResendOptions o;
    o.within_s = within_s;
    o.now_s = static_cast<std::int64_t>(std::time(nullptr));
    std::string dir;
    try {
        dir = expand_node_dir(dir_template, short_hostname());
    } catch (const Error& e) {
        sys::tell(sys::LogLevel::warning, std::string("--postmortem-dir: ") + e.what());
        return;
    }
    const auto r = sys::postmortem::resend_outbox(dir, o);
    if (!r) sys::tell(sys::LogLevel::warning, "the post-mortem's outbox: " + r.error());
    else
        for (const auto& l : r->lines) sys::tell(r->left ? sys::LogLevel::warning : sys::LogLevel::info, "post-mortem: " + l);
}

}  // namespace

int cmd_node_check(int argc, char** argv) {
    Args a;
    a.config = kDefaultConfig;
    a.root = sys::sysfs_root();
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        auto val = [&](const char* name) { return option_value(argc, argv, i, name); };
        if (s == "--help" || s == "-h") {
            std::puts(kUsage);
            return 0;
        } else if (s == "--slurm") a.mode = Mode::slurm;
        else if (s == "--nhc") a.mode = Mode::nhc;
        else if (s == "--json") a.json = true;
        else if (s.rfind("--json=", 0) == 0) {
            a.json = true;
            a.json_file = s.substr(7);
        } else if (auto v = val("--level")) {
            if (*v != "quick" && *v != "full") {
                std::fprintf(stderr, "gangway node-check: --level is quick or full, not \"%s\"\n", v->c_str());
                return 2;
            }
            a.full = *v == "full";
        } else if (auto v = val("--config")) {
            a.config = *v;
            a.config_named = true;
        } else if (auto v = val("--state")) a.state = *v;
        else if (auto v = val("--sysfs-root")) a.root = *v;
        else if (auto v = val("--nccl-lib")) a.nccl_lib = *v;
        else if (auto v = val("--node")) a.node = *v;
        else if (auto v = val("--fleet-spool")) a.fleet_spool = *v;
        else if (auto v = val("--postmortem-dir")) a.postmortem_dir = *v;
        else if (auto v = val("--timeout")) {
            const auto t = parse_double(*v);
            if (!t || !(*t > 0 && *t <= 3600)) {
                std::fprintf(stderr, "gangway node-check: --timeout wants seconds from 0 to 3600, not \"%s\"\n", v->c_str());
                return 2;
            }
            a.timeout = *t;
        } else {
            std::fprintf(stderr, "gangway node-check: unknown option \"%s\"; see gangway node-check --help\n", s.c_str());
            return 2;
        }
    }
    const auto started = std::chrono::steady_clock::now();
    // The site file: a missing default is no site file; a named one must be there.
    const auto site = sys::read_site_file(a.config, a.config_named);
    if (site.problem == sys::SiteFileProblem::invalid) {
        complain(a.mode, site.why);
        complain(a.mode, "not checking: fix " + a.config + " (node-check.conf(5) lists its keys)");
        return health::exit_code(a.mode, NotChecked::bad_site_file);
    }
    if (site.problem == sys::SiteFileProblem::unreadable) {
        complain(a.mode, "cannot read " + a.config + "; not checking");
        return health::exit_code(a.mode, NotChecked::bad_site_file);
    }
    const health::SiteConf& conf = site.conf;
    const std::string state_path = a.state.empty() ? conf.state_file : a.state;
    const bool writes_state = health::writes_state(a.mode, !a.state.empty());

    // The whole node: CUDA must see every GPU, whatever job's environment this runs in (a Prolog's).
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    sys::NodeCheckOptions o;
    o.env = health::trusted_env(a.mode, sys::process_env());
    o.node = !a.node.empty() ? a.node : sys::env_or("SLURMD_NODENAME", short_hostname());
    o.root = a.root;
    o.full = a.full;
    o.timeout_s = health::run_timeout(a.mode, a.full, a.timeout);
    o.conf = conf;
    o.nccl_lib = a.nccl_lib;
    o.now = static_cast<std::int64_t>(std::time(nullptr));
    // One run at a time (HealthCheckProgram, a Prolog, an Epilog): a second one waits, then gives up.
    std::optional<sys::StateLock> lock;
    if (writes_state) {
        auto l = sys::lock_state(state_path, health::lock_wait_s(a.mode, a.full));
        if (!l) {
            complain(a.mode, l.error() + "; not checking this time");
            return health::exit_code(a.mode, NotChecked::no_lock);
        }
        lock.emplace(std::move(*l));
    }
    o.timeout_s = health::timeout_after_wait(a.mode, o.timeout_s,
                                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (auto st = sys::load_state(state_path)) o.previous = *st;
    else if (writes_state) complain(a.mode, "the state file is unusable (" + st.error() + "); starting afresh");

    sys::NodeCheckResult res;
    try {
        res = sys::run_node_check(o);
    } catch (const std::exception& e) {
        // Never a drain for a fault of the check itself.
        complain(a.mode, std::string("could not check: ") + e.what());
        std::fflush(stderr);
        std::_Exit(health::exit_code(a.mode, NotChecked::internal_error));
    }
    health::State next = health::next_state(o.previous, res.run.records, res.run.verdict, o.now, res.counters);
    if (res.kmsg_seq) next.kmsg_seq = res.kmsg_seq;

    auto& run = res.run;  // its id is set when it goes to the fleet spool
    const std::string unfinished = health::unfinished_line(run.stages);
    const std::string unjudged = health::unjudged_line(run.records);
    const int code = health::exit_code(a.mode, run.verdict);
    switch (a.mode) {
        case Mode::slurm: {
            sys::SlurmActOptions so;
            so.node = o.node;
            const auto budget = health::scontrol_budget(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), conf.scontrol_timeout_s);
            so.scontrol = sys::scontrol_client(budget.timeout_s);
            so.resume_after = conf.resume_after;
            so.jitter_s = budget.jitter_s;
            if (run.verdict == health::Verdict::pending)
                sys::tell(sys::LogLevel::warning, o.node + ": failed once, drains if it repeats: " + health::failure_line(run.records, false));
            if (!unfinished.empty())
                sys::tell(sys::LogLevel::warning, o.node + ": no verdict on what did not finish (not a reason to drain): " + unfinished);
            if (!unjudged.empty()) sys::tell(sys::LogLevel::warning, o.node + ": " + unjudged);
            sys::act_on_slurm(run, next, so);
            break;
        }
        case Mode::nhc:
            if (run.verdict == health::Verdict::failed) {
                std::printf("%s\n", health::failure_line(run.records, true).c_str());
            } else if (run.verdict == health::Verdict::pending) {
                std::fprintf(stderr, "gangway node-check: failed once, fails if it repeats: %s\n", health::failure_line(run.records, false).c_str());
            } else if (!unfinished.empty()) {
                std::fprintf(stderr, "gangway node-check: did not finish (not a failure): %s\n", unfinished.c_str());
            }
            if (!unjudged.empty()) std::fprintf(stderr, "gangway node-check: %s\n", unjudged.c_str());
            break;
        case Mode::plain:
            if (!a.json || !a.json_file.empty()) std::fputs(health::render_table(run).c_str(), stdout);
            break;
    }
    // The site's fleet memory: the run under an id of its own, in the spool when there is one.
    if ((a.json || a.mode == Mode::slurm) && sys::fleet::spool_exists(a.fleet_spool)) {
        auto id = sys::fleet::new_check_id("node-" + run.node, run.time);
        if (id) run.id = *id;
        auto w = id ? sys::fleet::spool_report(a.fleet_spool, *id, fleet::render_node_check(run)) : Result<std::string>(Failure{id.error()});
        if (!w) complain(a.mode, "no report for the fleet memory: " + w.error());
    }
    if (a.json) {
        const std::string js = fleet::render_node_check(run);
        if (a.json_file.empty()) std::fputs(js.c_str(), stdout);
        else if (auto w = sys::write_file_atomic(a.json_file, js, 0644); !w) complain(a.mode, w.error());
    }
    if (writes_state)
        if (auto w = sys::save_state(state_path, next); !w) complain(a.mode, w.error());
    // The post-mortem's records that fleet serve did not take: this node's
    // outbox, sent again within what is left of SLURM's 60 s.
    if (a.mode == Mode::slurm && ::geteuid() == 0 && !a.postmortem_dir.empty()) {
        const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        resend_postmortem(a.postmortem_dir, std::min(sys::postmortem::kResendWithinS, 55 - spent));
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // A part left behind by its deadline may still hold a CUDA, NVML or verbs call: do not wait for it.
    std::_Exit(code);
}

}  // namespace gangway::cli
