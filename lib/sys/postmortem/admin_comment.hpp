// Where a stopped job's line reaches its user in SLURM (issue 33,
// docs/postmortem.md "Delivery"): the job's AdminComment, which the user
// reads with `scontrol show job` and `sacct`. slurmctld takes it only while
// the job is not finished (SLURM refuses any update of a finished job, and a
// job has finished when its Epilogs send): a job gangway requeued, pending
// again. Every other job's line goes to slurmdbd's record of the job, where
// the site keeps accounting: `sacct -j JOB -o AdminComment` shows it. A job
// gangway requeues gets it in both: slurmdbd's record of the run that
// stopped (before the requeue, which starts a new record of the job), and
// slurmctld's job after it.
#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "../slurm/scontrol.hpp"

namespace gangway::sys::postmortem {

enum class LinePlace {
    slurmctld,   // scontrol update (and slurmdbd's record at the job's end, from slurmctld)
    accounting,  // sacctmgr modify job: slurmdbd's record
    nowhere,     // only `gangway postmortem JOB` and `fleet stops` (said in one line)
};

// slurmdbd may not have the job's record yet when serve asks (slurmctld
// queues what it sends while slurmdbd is away): asked again, `tries` times
// in all, `interval_s` apart. 8 x 2 s keeps the line within a minute of the
// job's end after serve's 20 s wait for the nodes' records.
struct AccountingRetry {
    int tries = 8;
    double interval_s = 2;
    const std::atomic<bool>* stopping = nullptr;  // when set and true: no more tries (serve is stopping)
};

// JOB's AdminComment set to LINE: through slurmctld where it takes it; where
// it refuses (the job has finished, or slurmctld forgot it), through slurmdbd
// when `scontrol show config` says AccountingStorageType=
// accounting_storage/slurmdbd; else nowhere. `say` gets serve's log lines:
// one when the line went to slurmdbd, one when it went nowhere and why (a
// site without slurmdbd: the line is only in `gangway postmortem JOB` and
// `fleet stops`).
LinePlace set_job_line(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                       const std::string& line, const std::function<void(const std::string&)>& say,
                       const AccountingRetry& retry = {});

// Before gangway requeues JOB (finished): LINE in slurmdbd's record of the
// run that stopped (`sacct -D -j JOB` shows it once the requeue has started a
// new record), where the site keeps accounting; one line says it was set, or
// why not. Without slurmdbd, nothing and nothing said: the requeued job
// takes the line through slurmctld (set_job_line).
LinePlace set_stopped_run_line(const Scontrol& scontrol, const Sacctmgr& sacctmgr, const std::string& job,
                               const std::string& line, const std::function<void(const std::string&)>& say,
                               const AccountingRetry& retry = {});

}  // namespace gangway::sys::postmortem
