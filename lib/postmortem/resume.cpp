#include "resume.hpp"

#include <algorithm>

#include "../base/text.hpp"

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
    std::string why = std::string("postmortem ") + to_string(v.cause) + (v.detail.empty() ? "" : " " + v.detail);
    return "gangway: " + quiet_text(why, 120) + " (job " + std::to_string(v.job) + ")";
}

std::vector<std::string> drained_for_job(std::string_view show_nodes, std::uint32_t job) {
    const std::string mark = "(job " + std::to_string(job) + ")";
    std::vector<std::string> out;
    for_each_line(show_nodes, [&](std::string_view line, std::size_t) {
        if (!line.starts_with("NodeName=")) return;
        const auto r = line.find(" Reason=gangway: ");
        if (r == std::string_view::npos) return;
        // Ours is the reason's last "(job N)", followed by slurmctld's " [user@time]" or the end.
        std::string_view reason = line.substr(r);
        if (const auto b = reason.find(" ["); b != std::string_view::npos) reason = reason.substr(0, b);
        reason = trim_right(reason);
        if (!reason.ends_with(mark)) return;
        const auto e = line.find(' ');
        out.emplace_back(line.substr(9, e - 9));
    });
    return out;
}

bool drain_within_cap(const std::vector<std::string>& drained_before, const std::string& node, std::size_t max) {
    const bool again = std::find(drained_before.begin(), drained_before.end(), node) != drained_before.end();
    return drained_before.size() + (again ? 0 : 1) <= max;
}

}  // namespace gangway::postmortem
