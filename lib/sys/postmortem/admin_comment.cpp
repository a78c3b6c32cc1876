#include "admin_comment.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "../../slurm/scontrol_text.hpp"

namespace gangway::sys::postmortem {

namespace {

constexpr const char* kSlurmdbd = "accounting_storage/slurmdbd";

// The line set in slurmdbd's newest record of the job, where the site keeps
// accounting: LinePlace::accounting, or nowhere with why in `why` (empty
// when the site keeps no accounting: then `storage` says what it has).
LinePlace to_accounting(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                        const std::string& line, const AccountingRetry& retry, std::string& storage, std::string& why,
                        int& tries_used) {
    const auto config = show_config(scontrol);
    if (!config) {
        why = config.error();
        return LinePlace::nowhere;
    }
    storage = scontrol_config_field(*config, "AccountingStorageType");
    if (storage != kSlurmdbd) return LinePlace::nowhere;
    Result<void> kept = Failure{std::string()};
    const int tries = retry.tries < 1 ? 1 : retry.tries;
    for (tries_used = 1; tries_used <= tries; ++tries_used) {
        if (tries_used > 1) {
            if (retry.stopping && *retry.stopping) break;
            std::this_thread::sleep_for(std::chrono::duration<double>(retry.interval_s));
        }
        if ((kept = set_accounting_admin_comment(sacctmgr, job, line))) return LinePlace::accounting;
    }
    why = "slurmdbd's record, " + std::to_string(std::min(tries_used, tries)) + " tries: " + kept.error();
    return LinePlace::nowhere;
}

std::string at_try(int n) { return n > 1 ? ", at try " + std::to_string(n) : std::string(); }

}  // namespace

LinePlace set_job_line(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                       const std::string& line, const std::function<void(const std::string&)>& say,
                       const AccountingRetry& retry) {
    const auto live = set_admin_comment(scontrol, job, line);
    if (live) return LinePlace::slurmctld;
    // Refused: the job has finished (or is gone from slurmctld, past
    // MinJobAge). Not told apart by scontrol's words: slurmdbd's record is the
    // one place left in both cases, and a refusal for another cause (serve
    // not root nor SlurmUser) is refused by slurmdbd too, and said.
    std::string storage, why;
    int n = 0;
    if (to_accounting(scontrol, sacctmgr, job, line, retry, storage, why, n) == LinePlace::accounting) {
        say("job " + job + ": the line is the AdminComment of slurmdbd's record of the job (sacct -j " + job +
            " -o AdminComment" + at_try(n) + "): slurmctld takes none for a finished job");
        return LinePlace::accounting;
    }
    if (!why.empty()) say("job " + job + ": AdminComment not set: " + live.error() + "; and " + why);
    else
        say("job " + job + ": the line is only in `gangway postmortem " + job + "` and `gangway fleet stops`: SLURM " +
            "takes no AdminComment for a finished job (" + live.error() + ") and this site keeps no accounting " +
            "(AccountingStorageType=" + (storage.empty() ? std::string("(none)") : storage) + "); with " + kSlurmdbd +
            " slurmdbd's record of the job would keep it (sacct -j " + job + " -o AdminComment)");
    return LinePlace::nowhere;
}

LinePlace set_stopped_run_line(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                               const std::string& line, const std::function<void(const std::string&)>& say,
                               const AccountingRetry& retry) {
    std::string storage, why;
    int n = 0;
    if (to_accounting(scontrol, sacctmgr, job, line, retry, storage, why, n) == LinePlace::accounting) {
        say("job " + job + ": the line is the AdminComment of slurmdbd's record of the run that stopped (sacct -D -j " +
            job + " -o AdminComment" + at_try(n) + ")");
        return LinePlace::accounting;
    }
    if (!why.empty()) say("job " + job + ": the run that stopped keeps no AdminComment in slurmdbd: " + why);
    return LinePlace::nowhere;
}

}  // namespace gangway::sys::postmortem
