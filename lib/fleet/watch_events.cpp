// The fleet's memory of running jobs' stragglers and hangs (watch_events.hpp).
#include "watch_events.hpp"

#include <algorithm>
#include <map>

#include "../base/text.hpp"
#include "trend_text.hpp"

namespace gangway::fleet {

const char* watch_kind_name(WatchKind k) noexcept { return k == WatchKind::hang ? "hang" : "straggler"; }

std::vector<RepeatOffender> repeat_stragglers(const std::vector<WatchEvent>& rows, std::int64_t now,
                                              const std::vector<std::string>& nodes) {
    std::map<std::string, RepeatOffender> by_node;
    for (const auto& r : rows) {
        if (r.kind != WatchKind::straggler || !r.confirmed || r.node.empty() || r.last <= now - kRepeatWindowS || r.last > now) continue;
        if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), r.node) == nodes.end()) continue;
        auto& o = by_node[r.node];
        o.node = r.node;
        // Jobs, not steps: a job of many steps that straggled on one node is one.
        if (std::find(o.jobs.begin(), o.jobs.end(), r.job) == o.jobs.end()) o.jobs.push_back(r.job);
        o.stops = o.jobs.size();
        o.since = o.since ? std::min(o.since, r.first) : r.first;
        o.last = std::max(o.last, r.last);
    }
    std::vector<RepeatOffender> out;
    for (auto& [_, o] : by_node)
        if (o.stops >= kRepeatStops) out.push_back(std::move(o));
    return out;
}

std::string render_repeat_stragglers(const std::vector<RepeatOffender>& r) {
    std::string out;
    for (const auto& o : r)
        out += printable_name(o.node) + " job_straggler - " + std::to_string(o.stops) + " - - " + utc_text(o.since) + "\n";
    return out;
}

}  // namespace gangway::fleet
