#include "resume.hpp"

#include "../slurm/drain_rules.hpp"

namespace gangway::postmortem {

bool should_requeue(const Verdict& v, const std::vector<NodeRecord>& records) {
    // The cause itself, not only the flag: an OOM, a signal, an exit, a hang or
    // a user's bug is the job's own whatever node_class says.
    const bool node_cause = v.cause == Cause::node_lost || v.cause == Cause::gpu_xid || v.cause == Cause::gpu_lost ||
                            v.cause == Cause::hca_lost || v.cause == Cause::link_down;
    if (!v.node_class || !node_cause || v.node.empty()) return false;
    for (const auto& r : records)
        for (const auto& t : r.tasks)
            if (t.step == v.step && t.requeue_on_fail) return true;
    return false;
}

std::string stop_drain_reason(const Verdict& v) {
    return slurm::job_drain_reason(std::string("postmortem ") + to_string(v.cause) + (v.detail.empty() ? "" : " " + v.detail),
                                   std::to_string(v.job));
}

}  // namespace gangway::postmortem
