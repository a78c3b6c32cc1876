#include "admin_comment.hpp"

#include <chrono>
#include <thread>

#include "../../env/scontrol_text.hpp"

namespace gangway::sys::postmortem {

namespace {
constexpr const char* kSlurmdbd = "accounting_storage/slurmdbd";
}

LinePlace set_job_line(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                       const std::string& line, const std::function<void(const std::string&)>& say,
                       const AccountingRetry& retry) {
    const auto live = set_admin_comment(scontrol, job, line);
    if (live) return LinePlace::slurmctld;
    // Refused: the job has finished (or is gone from slurmctld, past
    // MinJobAge). Not told apart by scontrol's words: slurmdbd's record is the
    // one place left in both cases, and a refusal for another cause (serve
    // not root nor SlurmUser) is refused by slurmdbd too, and said.
    const auto config = show_config(scontrol);
    if (!config) {
        say("job " + job + ": AdminComment not set: " + live.error() + "; and " + config.error());
        return LinePlace::nowhere;
    }
    const std::string storage = scontrol_config_field(*config, "AccountingStorageType");
    if (storage != kSlurmdbd) {
        say("job " + job + ": the line is only in `gangway postmortem " + job + "` and `gangway fleet stops`: SLURM " +
            "takes no AdminComment for a finished job (" + live.error() + ") and this site keeps no accounting " +
            "(AccountingStorageType=" + (storage.empty() ? std::string("(none)") : storage) + "); with " + kSlurmdbd +
            " slurmdbd's record of the job would keep it (sacct -j " + job + " -o AdminComment)");
        return LinePlace::nowhere;
    }
    Result<void> kept = Failure{std::string()};
    const int tries = retry.tries < 1 ? 1 : retry.tries;
    int n = 0;
    for (; n < tries; ++n) {
        if (n) std::this_thread::sleep_for(std::chrono::duration<double>(retry.interval_s));
        if ((kept = set_accounting_admin_comment(sacctmgr, job, line))) break;
    }
    if (!kept) {
        say("job " + job + ": AdminComment not set: " + live.error() + "; and slurmdbd's record, " +
            std::to_string(tries) + " tries: " + kept.error());
        return LinePlace::nowhere;
    }
    say("job " + job + ": the line is the AdminComment of slurmdbd's record of the job (sacct -j " + job +
        " -o AdminComment" + (n ? ", at try " + std::to_string(n + 1) : std::string()) +
        "): slurmctld takes none for a finished job");
    return LinePlace::accounting;
}

}  // namespace gangway::sys::postmortem
