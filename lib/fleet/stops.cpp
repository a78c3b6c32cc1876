#include "stops.hpp"

#include <algorithm>
#include <map>

#include "../base/text.hpp"
#include "trend_text.hpp"

namespace gangway::fleet {

std::vector<RepeatOffender> repeat_offenders(const std::vector<StopRow>& rows, std::int64_t now,
                                             const std::vector<std::string>& nodes) {
    std::map<std::string, RepeatOffender> by_node;
    for (const auto& r : rows) {
        if (!r.node_class || r.node.empty() || r.time <= now - kRepeatWindowS || r.time > now) continue;
        if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), r.node) == nodes.end()) continue;
        auto& o = by_node[r.node];
        o.node = r.node;
        // A requeued job keeps its id: the same job stopped twice on one node is two stops.
        ++o.stops;
        o.since = o.since ? std::min(o.since, r.time) : r.time;
        o.last = std::max(o.last, r.time);
        o.jobs.push_back(r.job);
    }
    std::vector<RepeatOffender> out;
    for (auto& [_, o] : by_node)
        if (o.stops >= kRepeatStops) out.push_back(std::move(o));
    return out;
}

std::string render_repeat_offenders(const std::vector<RepeatOffender>& r) {
    std::string out;
    for (const auto& o : r)
        out += printable_name(o.node) + " job_stops - " + std::to_string(o.stops) + " - - " + utc_text(o.since) + "\n";
    return out;
}

std::string stop_text(const StopRow& r) {
    if (r.timeline.empty()) return r.line + "\n";
    return r.timeline.ends_with('\n') ? r.timeline : r.timeline + "\n";
}

std::string render_stops(const std::vector<StopRow>& rows, bool timelines) {
    std::vector<const StopRow*> order;
    for (const auto& r : rows) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const StopRow* a, const StopRow* b) { return a->time > b->time; });
    std::string out;
    std::size_t shown = 0;
    for (const StopRow* r : order) {
        if (shown++ == kStopsMaxRows) {
            out += "... " + std::to_string(order.size() - kStopsMaxRows) + " older stops left out (name nodes to see theirs)\n";
            break;
        }
        out += utc_text(r->time) + " job " + std::to_string(r->job) + " step " + std::to_string(r->step) + " " +
               (r->node.empty() ? std::string("-") : printable_name(r->node)) + " " + printable_name(r->cause) +
               (r->node_class ? " node" : "") + (r->requeued ? " requeued" : "") + "\n";
        // The timeline starts with the line: with timelines, the timeline alone.
        if (timelines && !r->timeline.empty())
            for_each_line(r->timeline, [&](std::string_view l, std::size_t) { out += "  " + printable_name(l, 300) + "\n"; });
        else out += "  " + printable_name(r->line, 300) + "\n";
    }
    return out;
}

}  // namespace gangway::fleet
