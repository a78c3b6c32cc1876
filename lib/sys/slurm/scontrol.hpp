// gangway's one SLURM client: every call to slurmctld goes through `scontrol`
// here, and every call to slurmdbd through `sacctmgr`, as argv (never a shell, so a reason or a node list is one argument
// whatever it holds), with the client's deadline (sys::run_command: TERM,
// then KILL, to scontrol's process group). A node or a job step that cannot
// reach slurmctld (slurmd not yet registered, the controller down) gets a
// Failure naming the call, instead of hanging until SLURM kills it: the node
// check tries again on its next run, `--on-fail=requeue` aborts the job.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../slurm/job_view.hpp"

namespace gangway::sys {

struct Scontrol {
    std::string path = "scontrol";
    double timeout_s = 10;  // each call's
    std::string squeue = "squeue";  // a job's fields: job_view.hpp says why not scontrol's
    std::string scancel = "scancel";  // a hung job's end (issue 43: --gangway-on-hang=cancel)
};

// The client every caller uses: GANGWAY_SCONTROL names the program when set
// (the tests' stand-in, as for the Epilog helper contrib/epilog/gangway-drain.sh),
// else `scontrol` from PATH; GANGWAY_SQUEUE likewise names squeue.
Scontrol scontrol_client(double timeout_s);

// `scontrol ARGS...`: its output (stdout and stderr) when it exits 0; else a
// Failure that names the call, with its exit status and its first words.
Result<std::string> scontrol_call(const Scontrol& s, const std::vector<std::string>& args);

// `scontrol show node NODE`'s text.
Result<std::string> show_node(const Scontrol& s, const std::string& node);
// `scontrol update NodeName=NODE State=DRAIN Reason=REASON`. The reason is
// passed as it is: callers make it one line (health::drain reasons, quiet_text).
Result<void> drain_node(const Scontrol& s, const std::string& node, const std::string& reason);
// `scontrol update NodeName=NODE State=RESUME`.
Result<void> resume_node(const Scontrol& s, const std::string& node);

// `squeue ARGS...`, as scontrol_call.
Result<std::string> squeue_call(const Scontrol& s, const std::vector<std::string>& args);
// Job JOB's view: `squeue --noheader --states=all --jobs=JOB
// --format=slurm::kJobFormat` (each option with its '=': squeue's -j takes its
// list only when joined to it, "-j42", and reads "-j 42" as every job; SLURM's own
// fields only: lib/slurm/job_view.hpp). A Failure when squeue fails (a job
// slurmctld no longer knows), prints what is not the format, or no line of
// the job.
Result<slurm::JobView> job_view(const Scontrol& s, const std::string& job);
// Every job of `uid` that slurmctld knows: `squeue ... --user=UID --format=slurm::kJobFormat`.
Result<std::vector<slurm::JobView>> jobs_of_user(const Scontrol& s, std::uint32_t uid);
// Job JOB's AdminComment, "" none: `squeue ... --jobs=JOB
// --Format=admin_comment:W`, a field that only root, SlurmUser or an operator sets.
Result<std::string> job_admin_comment(const Scontrol& s, const std::string& job);
// `scontrol requeue JOB`.
Result<void> requeue_job(const Scontrol& s, const std::string& job);
// `scancel JOB`: scontrol has no cancel. GANGWAY_SCANCEL names the program.
Result<void> cancel_job(const Scontrol& s, const std::string& job);
// `scontrol requeuehold JOB` and `scontrol release JOB`: a finished batch
// job back to pending but held, so that it takes updates (SLURM 22.05
// refuses any update of a finished job) and cannot start before them.
Result<void> requeue_hold_job(const Scontrol& s, const std::string& job);
Result<void> release_job(const Scontrol& s, const std::string& job);
// `scontrol update JobId=JOB ExcNodeList=LIST` (LIST a hostlist; users may
// change it only while the job is pending).
Result<void> exclude_nodes(const Scontrol& s, const std::string& job, const std::string& list);

// `scontrol update JobId=JOB AdminComment=TEXT` (root or SlurmUser only;
// the job's user reads it with scontrol show job and sacct). TEXT is passed
// as one argument: callers make it one printable line. A Failure shows TEXT
// as "..." (serve logs the line on its own).
Result<void> set_admin_comment(const Scontrol& s, const std::string& job, const std::string& text);
// `scontrol -o show node`'s text: every node, one a line (at most
// kListingBytes: 2,048 nodes take about 1 MiB).
inline constexpr std::size_t kListingBytes = std::size_t(64) << 20;
Result<std::string> show_nodes(const Scontrol& s);
// Every job slurmctld knows, as job_view reads one (squeue's fixed fields,
// at most kListingBytes of them): one call for many jobs (fleet serve's rounds).
Result<std::vector<slurm::JobView>> all_job_views(const Scontrol& s);
// `scontrol show config`'s text (`Key = Value` lines).
Result<std::string> show_config(const Scontrol& s);

// slurmdbd's client, for what slurmctld no longer holds: a finished job.
struct Sacctmgr {
    std::string path = "sacctmgr";
    double timeout_s = 10;  // each call's
};

// GANGWAY_SACCTMGR names the program when set (the tests' stand-in), else
// `sacctmgr` from PATH.
Sacctmgr sacctmgr_client(double timeout_s);

// `sacctmgr ARGS...`, as scontrol_call: its output when it exits 0, else a
// Failure naming the call.
Result<std::string> sacctmgr_call(const Sacctmgr& s, const std::vector<std::string>& args);

// `sacctmgr -i modify job where jobid=JOB set AdminComment=TEXT`: the
// AdminComment of the job's newest record in slurmdbd (the site's accounting),
// which `sacct -j JOB -o AdminComment` shows. SLURM takes it for a job that
// has finished, which `scontrol update` refuses (since SLURM 22.05; root,
// SlurmUser or an AdminLevel=Operator account only). TEXT is one argument,
// which sacctmgr takes whole (blanks, ',', '=', '(' included) but for a
// quote, ' or ", which it turns into '`'; SLURM 22.05's sacctmgr also
// lowercases it (SchedMD bug 14338, fixed in 23.02). It fails when slurmdbd
// has no record of the job (yet): slurmctld sends it while the job runs,
// queued while slurmdbd is away. A Failure shows TEXT as "...".
Result<void> set_accounting_admin_comment(const Sacctmgr& s, const std::string& job, const std::string& text);

}  // namespace gangway::sys
