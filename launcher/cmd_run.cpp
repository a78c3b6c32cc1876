// `gangway run` and `gangway check`: the preflight, then (run) the user's
// command in place of this process, or the failure policy.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/fleet/report_schema.hpp"
#include "../lib/preflight/bootstrap.hpp"
#include "../lib/preflight/drain.hpp"  // threshold_vars_set
#include "../lib/preflight/report.hpp"
#include "../lib/sys/fleet/spool.hpp"
#include "../lib/sys/net/sock.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/devices/node_card.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/node/sysfs.hpp"
#include "../lib/sys/preflight/job_check.hpp"
#include "../lib/sys/preflight/on_fail.hpp"
#include "commands.hpp"

namespace gangway::cli {

// The job check's engine (lib/sys/preflight); this file parses its options and prints its outcome.
using sys::default_timeout_s;
using sys::Outcome;
using sys::PreflightOptions;
using sys::run_preflight;
using sys::step_facts_from_env;
using sys::StepFacts;
namespace {

const char* kRunHelp =
    "usage: gangway run [options] -- CMD [ARGS...]\n"
    "       gangway check [options]\n"
    "\n"
    "Checks the job step's nodes before the real work starts, then (run) replaces itself with\n"
    "CMD: same pid, signals and exit code. Start it with srun, any number of tasks per node:\n"
    "    srun gangway run -- python3 -m torch.distributed.run train.py\n"
    "One task per node checks its node; every task waits for the verdict.\n"
    "\n"
    "The check: every task checks in at node 0 (authenticated TCP at PRIMARY_ADDR:PRIMARY_PORT+1);\n"
    "each node publishes a card (NICs, rates, GPUs, versions) and mismatches are reported; TCP\n"
    "reachability over the data network to ring neighbours, node 0 and random peers; TCP bandwidth\n"
    "in ring-shift rounds where all nodes send at once; a node whose links are slow is confirmed\n"
    "against a known-good peer. The verdict table goes to stderr.\n"
    "\n"
    "options (environment fallback in brackets):\n"
    "  --check=none|quick|full    none: check-in and cards only; quick (default): 1 bandwidth round;\n"
    "                             full: more rounds and sizes                         [GANGWAY_CHECK]\n"
    "  --on-fail=abort|warn|requeue  abort (default): do not start CMD, exit with the verdict's code;\n"
    "                             warn: start CMD anyway; requeue: requeue this batch job with the bad\n"
    "                             nodes added to its excluded nodes (check: only requeue acts) [GANGWAY_ON_FAIL]\n"
    "  --report=FILE.json         write the JSON report (node 0 writes it)            [GANGWAY_REPORT]\n"
    "  --heatmap=FILE.svg         write the node-to-node bandwidth heatmap            [GANGWAY_HEATMAP]\n"
    "  --timeout=SEC              the whole check's deadline (default 15, +0.1 a node beyond 32; 60\n"
    "                             when a node of the step has NVIDIA GPUs)  [GANGWAY_CHECK_TIMEOUT]\n"
    "  --join-timeout=SEC         until every task has checked in (default 10)   [GANGWAY_JOIN_TIMEOUT]\n"
    "  --slow-ratio=F             a link below F x expected is slow (default 0.5)  [GANGWAY_SLOW_RATIO]\n"
    "  --max-named=F              more nodes measured slow or unreachable at once than F x the\n"
    "                             nodes: none is named, a finding says why (default 0.25) [GANGWAY_MAX_NAMED]\n"
    "  --expect-gbps=G            expected per-link Gb/s (default: measured)      [GANGWAY_EXPECT_GBPS]\n"
    "  --round-ms=MS              length of a bandwidth round (500 quick, 1000 full) [GANGWAY_ROUND_MS]\n"
    "  --drain-dir=DIR            write a drain request per bad node there if DIR exists, for the\n"
    "                             admins' Epilog; only on the job's first node, whose Epilog decides\n"
    "                             (default /var/spool/gangway/drain)            [GANGWAY_DRAIN_DIR]\n"
    "  --fleet-spool=DIR          node 0 drops its report there for the site's fleet memory if DIR\n"
    "                             exists (default /var/spool/gangway/fleet; \"\" none) [GANGWAY_FLEET_SPOOL]\n"
    "  --nccl-lib=PATH            the libnccl.so.2 the job uses, for the nccl stage (default: PyTorch's\n"
    "                             bundled one, then LD_LIBRARY_PATH, then ldconfig's) [GANGWAY_NCCL_LIB]\n"
    "  --bootstrap=auto|pmix|tcp  how tasks meet: pmix (srun --mpi=pmix): a PMIx fence, then one TCP\n"
    "                             connection per node; tcp: every task connects to node 0; auto\n"
    "                             (default): check: pmix when the step has it; run: tcp, as Open MPI\n"
    "                             fails to start in a process that used PMIx before [GANGWAY_BOOTSTRAP]\n"
    "  --insecure                 no GANGWAY_SECRET: a public key; refused inside a SLURM job\n"
    "                             (SLURM_JOB_ID set), for tests outside SLURM only  [GANGWAY_INSECURE=1]\n"
    "\n"
    "exit codes: 0 healthy, 3 degraded (slow node, mismatched card, failed link, failed GPU or\n"
    "RDMA stage), 4 unreachable\n"
    "(a node unreachable, missing or lost), 5 the check could not run, 2 usage; `run` exits with\n"
    "CMD's code once CMD started. See gangway(1) for the report's schema.\n";

struct Args {
    PreflightOptions opt;
    std::vector<char*> cmd;
};

double to_num(const std::string& what, const std::string& v, double lo, double hi) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(x >= lo && x <= hi))
        throw Error(what + " must be a number from " + std::to_string(lo).substr(0, 5) + " to " +
                    std::to_string(hi).substr(0, 7) + ", not \"" + v + "\"");
    return x;
}

void set_opt(PreflightOptions& o, const std::string& name, const std::string& v) {
    if (name == "check") o.check = parse_check_level(v, "--check");
    else if (name == "on-fail") o.on_fail = parse_on_fail(v, "--on-fail");
    else if (name == "report") o.report = v;
    else if (name == "heatmap") o.heatmap = v;
    else if (name == "timeout") o.timeout_s = to_num("--timeout", v, 1, 3600);
    else if (name == "join-timeout") o.join_timeout_s = to_num("--join-timeout", v, 1, 3600);
    else if (name == "slow-ratio") o.slow_ratio = to_num("--slow-ratio", v, 0.01, 1);
    else if (name == "max-named") o.max_named = to_num("--max-named", v, 0.01, 1);
    else if (name == "expect-gbps") o.expect_gbps = to_num("--expect-gbps", v, 0.001, 1e6);
    else if (name == "round-ms") o.round_ms = static_cast<int>(to_num("--round-ms", v, 50, 60000));
    else if (name == "drain-dir") o.drain_dir = v;
    else if (name == "fleet-spool") o.fleet_spool = v;
    else if (name == "nccl-lib") o.nccl_lib = v;
    else if (name == "bootstrap") o.bootstrap = preflight::parse_bootstrap_mode(v);
    else throw Error("unknown option --" + name);
}

Args parse(int argc, char** argv, bool is_run) {
    Args a;
    a.opt.drain_dir = "/var/spool/gangway/drain";
    a.opt.fleet_spool = sys::fleet::kDefaultSpool;
    a.opt.timeout_s = -1;  // not given: chosen below
    // Environment first, the command line wins.
    const std::pair<const char*, const char*> envs[] = {
        {"GANGWAY_CHECK", "check"},         {"GANGWAY_ON_FAIL", "on-fail"},       {"GANGWAY_REPORT", "report"},
        {"GANGWAY_HEATMAP", "heatmap"},     {"GANGWAY_CHECK_TIMEOUT", "timeout"}, {"GANGWAY_JOIN_TIMEOUT", "join-timeout"},
        {"GANGWAY_SLOW_RATIO", "slow-ratio"}, {"GANGWAY_MAX_NAMED", "max-named"}, {"GANGWAY_EXPECT_GBPS", "expect-gbps"}, {"GANGWAY_ROUND_MS", "round-ms"},
        {"GANGWAY_DRAIN_DIR", "drain-dir"}, {"GANGWAY_FLEET_SPOOL", "fleet-spool"}, {"GANGWAY_NCCL_LIB", "nccl-lib"}, {"GANGWAY_BOOTSTRAP", "bootstrap"}};
    for (const auto& [env, name] : envs)
        if (const char* v = std::getenv(env); v && *v) {
            try {
                set_opt(a.opt, name, v);
            } catch (const Error& e) {
                throw Error(std::string(env) + ": " + e.what());
            }
        }
    if (const char* v = std::getenv("GANGWAY_INSECURE")) a.opt.insecure = std::strcmp(v, "1") == 0;
    bool insecure_from_env = a.opt.insecure;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string s = argv[i];
        if (s == "--") {
            ++i;
            break;
        }
        if (s == "--insecure") {
            a.opt.insecure = true;
            insecure_from_env = false;
            continue;
        }
        if (s.rfind("--", 0) != 0) break;  // the command starts (allowed without "--")
        const auto eq = s.find('=');
        if (const auto name = s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
            name == "expect-gbps" || name == "slow-ratio" || name == "round-ms" || name == "max-named")
            a.opt.user_thresholds.push_back("--" + name);
        if (eq == std::string::npos) {
            if (i + 1 >= argc) throw Error("option " + s + " needs a value (" + s + "=VALUE)");
            set_opt(a.opt, s.substr(2), argv[++i]);
        } else {
            set_opt(a.opt, s.substr(2, eq - 2), s.substr(eq + 1));
        }
    }
    for (; i < argc; ++i) a.cmd.push_back(argv[i]);
    // The insecure key is public: inside a job, any user of the cluster could pose as a task.
    if (a.opt.insecure && std::getenv("SLURM_JOB_ID"))
        throw Error(std::string(insecure_from_env ? "GANGWAY_INSECURE=1" : "--insecure") +
                    " is refused inside a SLURM job (SLURM_JOB_ID is set): its key is public, so any user could pose as a "
                    "task of this step; the gangway plugin's GANGWAY_SECRET authenticates the tasks");
    for (auto& v : preflight::threshold_vars_set(sys::process_env())) a.opt.user_thresholds.push_back(std::move(v));
    if (is_run && a.cmd.empty()) throw Error("no command to run: gangway run [options] -- CMD [ARGS...]");
    a.opt.command_follows = is_run;
    if (!is_run && !a.cmd.empty()) throw Error("gangway check takes no command; did you mean gangway run?");
    if (a.opt.timeout_s < 0) {
        a.opt.timeout_default = true;
        const auto nnodes = parse_uint<unsigned>(sys::env_or("SLURM_STEP_NUM_NODES", sys::env_or("SLURM_NNODES")));
        a.opt.timeout_s = default_timeout_s(nnodes.value_or(1),
                                            a.opt.check != CheckLevel::none && sys::count_gpus(sys::sysfs_root()) > 0);
    }
    if (a.opt.join_timeout_s > a.opt.timeout_s) a.opt.join_timeout_s = a.opt.timeout_s;
    a.cmd.push_back(nullptr);
    return a;
}

// The report and the heatmap: the user's own files (0666 less the umask, as
// a shell's `>` makes them), through the one writer that never follows a
// planted link and leaves the whole file or none (lib/sys/node/file.hpp).
bool write_file(const std::string& path, const std::string& text, std::string_view what) {
    if (auto w = sys::write_file_atomic(path, text, 0666, what); !w) {
        std::fprintf(stderr, "gangway: %s\n", w.error().c_str());
        return false;
    }
    return true;
}

// Replaces this process with the user's command; returns only when that fails.
// The step's secret stays here: the command (and whatever it starts) has no
// use for it, and a process of the job that can read another's environment
// could otherwise join a later check of this step.
// The plugin's check (spank/check.cpp) hands a pipe's write end to the check
// in GANGWAY_CHECK_ORDER_FD: the answer goes there ("" says nothing: the
// tasks keep the order they were given), and the end is closed, so that a
// command `gangway run` starts does not inherit it. Only a pipe is written to.
void tell_plugin_order(const std::string& answer) {
    const auto fd = parse_uint<unsigned>(sys::env_or("GANGWAY_CHECK_ORDER_FD"));
    if (!fd || *fd <= 2 || *fd > 65535) return;
    struct stat st{};
    if (::fstat(static_cast<int>(*fd), &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    // Under the pipe's buffer (kOrderAnswerMaxBytes): one write, never blocked.
    if (!answer.empty()) (void)!::write(static_cast<int>(*fd), answer.data(), answer.size());
    ::close(static_cast<int>(*fd));
}

// A line of the check's actions, on stderr.
void say(const std::string& line) { std::fprintf(stderr, "gangway: %s\n", line.c_str()); }

void exec_command(std::vector<char*>& cmd) {
    ::unsetenv("GANGWAY_SECRET");
    std::fflush(nullptr);
    ::execvp(cmd[0], cmd.data());
}

int preflight_main(int argc, char** argv, bool is_run) {
    const char* name = is_run ? "run" : "check";
    for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kRunHelp, stdout);
            return 0;
        }
    Args a;
    try {
        a = parse(argc, argv, is_run);
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway %s: %s; see `gangway %s --help`\n", name, e.what(), name);
        return preflight::kExitUsage;
    }
    StepFacts step;
    try {
        step = step_facts_from_env(a.opt.insecure);
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway %s: %s\n", name, e.what());
        if (is_run && a.opt.on_fail == OnFail::warn) {
            std::fprintf(stderr, "gangway run: --on-fail=warn: starting %s without a check\n", a.cmd[0]);
            exec_command(a.cmd);
            std::fprintf(stderr, "gangway run: cannot start %s: %s\n", a.cmd[0], std::strerror(errno));
            return 127;
        }
        return preflight::kExitCannotCheck;
    }
    const Outcome out = run_preflight(a.opt, step);
    if (step.order_agreement) tell_plugin_order(out.order_answer);
    if (out.coordinator && out.report) {
        std::fputs(render_table(*out.report).c_str(), stderr);
        // The site's fleet memory gets every check's report, under an id of its own.
        if (sys::fleet::spool_exists(a.opt.fleet_spool)) {
            auto id = sys::fleet::new_check_id("job-" + out.report->job_id + "." + out.report->step_id, out.report->time);
            preflight::Report spooled = *out.report;
            if (id) spooled.id = *id;
            auto w = id ? sys::fleet::spool_report(a.opt.fleet_spool, *id, fleet::render_job_check(spooled)) : Result<std::string>(Failure{id.error()});
            if (!w) std::fprintf(stderr, "gangway: no report for the fleet memory: %s\n", w.error().c_str());
        }
        if (!a.opt.report.empty()) write_file(a.opt.report, fleet::render_job_check(*out.report), "the report (--report)");
        if (!a.opt.heatmap.empty()) write_file(a.opt.heatmap, render_svg(*out.report), "the heatmap (--heatmap)");
        if (out.exit_code != 0)
            sys::write_drain_requests(a.opt, *out.report, step.node_rank < step.nodes.size() ? step.nodes[step.node_rank] : "", say);
    } else if (out.exit_code != 0 && (step.local == 0 || out.message.find("coordinator") != std::string::npos)) {
        std::fprintf(stderr, "gangway %s on %s (task %u): %s\n", name,
                     step.node_rank < step.nodes.size() ? step.nodes[step.node_rank].c_str() : "?", step.rank,
                     out.message.c_str());
    }
    // Node 0 requeues; `check` too, for the plugin's check of a batch job (sbatch --gangway-on-fail=requeue).
    const bool wants_requeue = out.exit_code != 0 && a.opt.on_fail == OnFail::requeue && out.coordinator;
    const bool requeues = wants_requeue && !out.bad_nodes.empty();
    // A failed check that names no node (a link, or the check itself) leaves
    // nothing to exclude: a requeue could land on the same nodes and fail the
    // same way, so the job ends; say so, or the user waits for a requeue.
    if (wants_requeue && !requeues)
        std::fprintf(stderr,
                     "gangway: --on-fail=requeue: the check named no node to exclude (%s), so a requeue could "
                     "land on the same nodes; not requeueing: see the findings above, then resubmit\n",
                     out.message.empty() ? "no verdict" : out.message.c_str());
    if (!is_run) {
        if (requeues) sys::requeue_without(out.bad_nodes, say);
        return out.exit_code;
    }
    if (out.exit_code != 0) {
        if (a.opt.on_fail == OnFail::warn) {
            if (out.coordinator) std::fprintf(stderr, "gangway run: --on-fail=warn: starting %s anyway\n", a.cmd[0]);
        } else if (requeues) {
            return sys::requeue_without(out.bad_nodes, say);
        } else {
            if (out.coordinator)
                std::fprintf(stderr, "gangway run: not starting %s (--on-fail=%s); exit %d\n", a.cmd[0],
                             std::string(to_string(a.opt.on_fail)).c_str(), out.exit_code);
            return out.exit_code;
        }
    }
    exec_command(a.cmd);
    std::fprintf(stderr, "gangway run: cannot start %s: %s\n", a.cmd[0], std::strerror(errno));
    return 127;
}

}  // namespace

int cmd_run(int argc, char** argv) { return preflight_main(argc, argv, true); }
int cmd_check(int argc, char** argv) { return preflight_main(argc, argv, false); }

}  // namespace gangway::cli
