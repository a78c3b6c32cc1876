// What fleet serve does for a judged job, as a plan of SLURM calls: which
// call comes next, on which answers. The driver (lib/sys/postmortem/
// stops_service.cpp, StopsService::deliver) makes each call and gives its
// answer back; every decision is here. Pure.
//
// The job has finished when its Epilogs send, and SLURM 22.05 refuses any
// update of a finished job ("Job has already finished"), the exclusion's and
// AdminComment's too. So a job to requeue is first requeued held (a pending
// job takes updates; a held one cannot start on the node before its
// exclusion), then excluded from the node, then released; its line is set
// after, while it is pending. The requeue is refused while the job is still
// completing (the last Epilogs): tried up to kRequeueTries times, a second
// apart. The run that stopped keeps its line in slurmdbd's record, set before
// the requeue starts a new record of the job. Then the node is drained, under
// the cap per job (lib/slurm/drain_rules), unless SLURM shows it drained.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gangway::postmortem {

enum class DeliveryCall : unsigned char {
    stopped_run_line,  // the line in slurmdbd's record of the run that stopped; answer: whether it took it
    show_job,          // the job's view (squeue): the nodes it already excludes
    requeue_hold,      // scontrol requeuehold JOB (after wait_s() seconds)
    exclude,           // scontrol update JobId=JOB ExcNodeList=exclusions()
    release,           // scontrol release JOB
    mark_requeued,     // the store: the stop's row requeued
    job_line,          // the job's line (slurmctld, else slurmdbd's record)
    show_nodes,        // scontrol -o show node, and show node NODE
    drain,             // scontrol update NodeName=NODE State=DRAIN
    done,
};

struct DeliveryTask {
    bool requeue = false;       // the verdict asks for the requeue without `node`
    std::string node;           // the node the verdict names
    std::size_t drain_max = 0;  // the site's cap per job; 0: no drains
};

class DeliveryPlan {
public:
    static constexpr int kRequeueTries = 20;

    explicit DeliveryPlan(DeliveryTask t);

    DeliveryCall next() const { return call_; }
    // Whether serve may stop before the next call: not between holding the
    // job and releasing it (a held job would never run again).
    bool may_stop() const;
    double wait_s() const { return wait_s_; }               // before the next call
    const std::vector<std::string>& exclusions() const { return exclusions_; }  // for exclude
    // What the plan says, one line each, since the last call (without "job J: ").
    std::vector<std::string> take_log();
    bool requeued() const { return requeued_; }

    // The answers, one for each call; `error` "" for success.
    void stopped_run_line(bool in_accounting);
    void shown_job(const std::optional<std::string>& excluded, const std::string& error);  // its ExcNodeList
    void requeue_held(const std::string& error);
    void excluded(const std::string& error);
    void released(const std::string& error);
    void marked();
    void line_set();
    // `drained_before`: the nodes drained for this job (slurm::drained_for_job);
    // `node_drained`: the node's state shows it drained.
    void shown_nodes(const std::vector<std::string>& drained_before, bool node_drained, const std::string& error);
    void drained(const std::string& error);

private:
    void after_requeue();  // the line, then the drain
    void to_drain();

    DeliveryTask t_;
    DeliveryCall call_ = DeliveryCall::done;
    double wait_s_ = 0;
    int tries_ = 0;
    bool requeued_ = false;
    bool in_accounting_ = false;
    std::vector<std::string> exclusions_;
    std::vector<std::string> log_;
};

}  // namespace gangway::postmortem
