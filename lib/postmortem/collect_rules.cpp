#include "collect_rules.hpp"

#include <algorithm>
#include <utility>

namespace gangway::postmortem {

std::int64_t window_start(std::optional<std::int64_t> birth_ns, std::optional<std::int64_t> earlier_record_ns,
                          const std::vector<TaskEnd>& tasks, std::int64_t now_ns) {
    std::int64_t start = birth_ns.value_or(0);
    if (start != 0 && earlier_record_ns) start = std::max(start, *earlier_record_ns);
    if (start == 0) {
        start = now_ns;
        for (const auto& t : tasks) start = std::min(start, t.t_ns);
        start -= kNoBirthLookbackNs;
    }
    return start - kWindowSlackNs;
}

std::int64_t change_time(bool have_snapshot, const std::vector<TaskEnd>& tasks, std::int64_t now_ns) {
    std::int64_t at = now_ns;
    if (have_snapshot)
        for (const auto& t : tasks) at = std::min<std::int64_t>(at, t.t_ns);
    return at;
}

bool wants_gpu_signs(const std::vector<TaskEnd>& tasks) {
    return std::any_of(tasks.begin(), tasks.end(), [](const TaskEnd& t) { return t.wait_status != 0; });
}

void add_evidence(NodeRecord& r, std::vector<Evidence> signs) {
    for (auto& e : signs) {
        if (r.evidence.size() >= kMaxEvidence) break;
        r.evidence.push_back(std::move(e));
    }
}

}  // namespace gangway::postmortem
