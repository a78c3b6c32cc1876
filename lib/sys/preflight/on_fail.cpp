#include "on_fail.hpp"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../preflight/drain.hpp"
#include "../../slurm/requeue.hpp"
#include "../node/process_env.hpp"
#include "../run/deadline.hpp"
#include "../slurm/drain_spool.hpp"
#include "../slurm/scontrol.hpp"

namespace gangway::sys {

namespace {

// Each scontrol call of the requeue under its own deadline (sys::Scontrol): a
// slurmctld that does not answer must not hold the job's step forever.
constexpr double kScontrolTimeoutS = 15;

}  // namespace

void write_drain_requests(const PreflightOptions& opt, const preflight::Report& r, std::string here, const Say& say) {
    if (!drain_spool_exists(opt.drain_dir)) return;
    if (!opt.user_thresholds.empty() && !preflight::bad_nodes(r).empty())
        say("no drain request: the check used your own thresholds (" + join(opt.user_thresholds, ", ") +
            "); only the site's drain nodes");
    const auto requests = preflight::drain_requests(r, opt.user_thresholds);
    if (requests.empty()) return;
    // slurmd's name for this node, as the Epilog compares it; the step's list otherwise.
    if (const auto name = env_or("SLURMD_NODENAME"); !name.empty()) here = name;
    std::string first;
    try {
        first = preflight::drain_deciding_node(env_or("SLURM_JOB_NODELIST"));
    } catch (const Error&) {
        // Unknown: write them; the Epilog, which has slurmd's list, decides.
    }
    if (!first.empty() && !here.empty() && first != here) {
        say("no drain request: only the Epilog on the job's first node (" + first + ") decides drains, and this check ran on " +
            here + "; run the check in a step that includes " + first);
        return;
    }
    for (const auto& d : requests) {
        if (const auto w = write_drain_request(opt.drain_dir, d); !w) say(w.error());
        else say("drain request for " + d.node + " written to " + opt.drain_dir + "/" + *w);
    }
}

int requeue_without(const std::vector<std::string>& bad, const Say& say) {
    const std::string job = env_or("SLURM_JOB_ID");
    if (job.empty()) {
        say("--on-fail=requeue needs SLURM_JOB_ID; not starting the command");
        return preflight::kExitUnreachable;
    }
    const long restarts = std::atol(env_or("SLURM_RESTART_COUNT", "0").c_str());
    const long max = std::atol(env_or("GANGWAY_REQUEUE_MAX", "3").c_str());
    if (restarts >= max) {
        say("job " + job + " was already requeued " + std::to_string(restarts) + " times (GANGWAY_REQUEUE_MAX=" +
            std::to_string(max) + "); aborting instead");
        return preflight::kExitUnreachable;
    }
    const Scontrol scontrol = scontrol_client(kScontrolTimeoutS);
    // ExcNodeList from SLURM's own fields (squeue's), never from scontrol's
    // text of the job, where its name could hold another (lib/slurm/job_view.hpp).
    const auto shown = job_view(scontrol, job);
    const std::string list = join(slurm::requeue_exclusions(shown ? shown->excluded : std::string(), bad), ",");
    // The requeue ends this step: finish the update before SIGTERM stops us.
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, nullptr);
    if (const auto r = requeue_job(scontrol, job); !r) {
        say(r.error() + " (only batch jobs can be requeued)");
        return preflight::kExitUnreachable;
    }
    // slurmctld may refuse the update while the requeue is under way: retried
    // for 10 s in all (each try under its own deadline too).
    Result<void> updated = Failure{"not tried"};
    const Deadline until = after_s(10);
    while (!updated && Clock::now() < until) {
        updated = exclude_nodes(scontrol, job, list);
        if (!updated) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!updated) say("job " + job + " requeued, but excluding " + list + " failed: " + updated.error());
    else say("job " + job + " requeued, excluding " + list);
    return preflight::kExitUnreachable;
}

}  // namespace gangway::sys
