#include "delivery_plan.hpp"

#include <utility>

#include "../slurm/requeue.hpp"
#include "../slurm/drain_rules.hpp"

namespace gangway::postmortem {

DeliveryPlan::DeliveryPlan(DeliveryTask t) : t_(std::move(t)) {
    call_ = t_.requeue ? DeliveryCall::stopped_run_line : DeliveryCall::job_line;
}

bool DeliveryPlan::may_stop() const {
    return call_ != DeliveryCall::exclude && call_ != DeliveryCall::release && call_ != DeliveryCall::mark_requeued;
}

std::vector<std::string> DeliveryPlan::take_log() { return std::exchange(log_, {}); }

void DeliveryPlan::stopped_run_line(bool in_accounting) {
    in_accounting_ = in_accounting;
    call_ = DeliveryCall::show_job;
}

void DeliveryPlan::shown_job(const std::optional<std::string>& excluded, const std::string& error) {
    if (!excluded) {
        log_.push_back("not requeued: " + error);
        after_requeue();
        return;
    }
    exclusions_ = slurm::requeue_exclusions(*excluded, {t_.node});
    call_ = DeliveryCall::requeue_hold;
}

void DeliveryPlan::requeue_held(const std::string& error) {
    wait_s_ = 0;
    if (error.empty()) {
        call_ = DeliveryCall::exclude;
        return;
    }
    if (++tries_ < kRequeueTries) {  // refused while the job completes: again in a second
        wait_s_ = 1;
        return;
    }
    log_.push_back("not requeued: " + error);
    after_requeue();
}

void DeliveryPlan::excluded(const std::string& error) {
    if (!error.empty()) {
        log_.push_back("requeued but held, not released: " + error);
        after_requeue();
        return;
    }
    call_ = DeliveryCall::release;
}

void DeliveryPlan::released(const std::string& error) {
    if (!error.empty()) {
        log_.push_back("requeued without " + t_.node + " but held: " + error);
        after_requeue();
        return;
    }
    requeued_ = true;
    log_.push_back("requeued without " + t_.node);
    call_ = DeliveryCall::mark_requeued;
}

void DeliveryPlan::marked() { after_requeue(); }

// A job requeued is pending: slurmctld takes its line (and writes it to the
// new run's record when that run ends). Any other has finished: slurmdbd's
// record takes it where the site keeps one (done already when a requeue was
// tried and the stopped run's record took it).
void DeliveryPlan::after_requeue() {
    if (requeued_ || !in_accounting_) call_ = DeliveryCall::job_line;
    else to_drain();
}

void DeliveryPlan::line_set() { to_drain(); }

void DeliveryPlan::to_drain() {
    call_ = t_.requeue && t_.drain_max > 0 ? DeliveryCall::show_nodes : DeliveryCall::done;
}

void DeliveryPlan::shown_nodes(const std::vector<std::string>& drained_before, bool node_drained, const std::string& error) {
    call_ = DeliveryCall::done;
    if (!error.empty()) log_.push_back(t_.node + " not drained: " + error);
    else if (node_drained) log_.push_back(t_.node + " is drained already; left as it is");
    else if (!slurm::drain_within_cap(drained_before, t_.node, t_.drain_max))
        log_.push_back(t_.node + " not drained: more than " + std::to_string(t_.drain_max) + " nodes drained for this job (--drain-max)");
    else call_ = DeliveryCall::drain;
}

void DeliveryPlan::drained(const std::string& error) {
    if (!error.empty()) log_.push_back(error);
    call_ = DeliveryCall::done;
}

}  // namespace gangway::postmortem
