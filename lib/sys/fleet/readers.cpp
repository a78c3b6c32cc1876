#include "readers.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gangway::sys::fleet {

using gangway::fleet::Metric;

Result<StoreView> read_store(Store& store, const ReadPlan& plan) {
    const auto& set = plan.settings;
    gangway::fleet::TrendBuilder trends(plan.now, set);
    gangway::fleet::ShowBuilder show;
    StoreView out;

    auto names = store.series_names();
    if (!names) return Failure{names.error()};
    // Each series' trend series (compute_trends' key: a link's two nodes in
    // name order, so that both directions are one), numbered once.
    std::vector<gangway::fleet::SeriesKey> groups;
    std::vector<std::uint32_t> group_of(names->size(), UINT32_MAX);
    std::vector<bool> first_end(names->size(), true);  // the series' node is its trend series' first
    {
        std::map<std::tuple<Metric, std::string_view, std::string_view, std::string_view, std::string_view>, std::uint32_t> index;
        static const std::string none;
        for (std::size_t id = 0; id < names->size(); ++id) {
            const SeriesName& n = (*names)[id];
            if (!n.known) continue;
            const bool link = n.metric == Metric::link_bandwidth;
            const std::string *a = &n.node, *b = link ? &n.peer : &none;
            if (link && *b < *a) std::swap(a, b), first_end[id] = false;
            const auto [it, added] = index.try_emplace({n.metric, n.peer_class, *a, *b, n.device}, std::uint32_t(groups.size()));
            if (added) groups.push_back({n.metric, n.peer_class, *a, *b, n.device});
            group_of[id] = it->second;
        }
    }
    // Per series: its row of the table (null: a node not shown), found once.
    std::vector<gangway::fleet::ShowBuilder::Row> show_row;
    if (plan.show) {
        show_row.resize(names->size());
        for (std::size_t id = 0; id < names->size(); ++id) {
            const SeriesName& n = (*names)[id];
            if (n.known && (plan.show_nodes.empty() ||
                            std::find(plan.show_nodes.begin(), plan.show_nodes.end(), n.node) != plan.show_nodes.end()))
                show_row[id] = show.row(n.node, n.metric);
        }
    }

    const std::int64_t since = plan.now - set.history_s;
    const std::int64_t show_until = plan.now + 1;
    const std::int64_t until = std::max(show_until, plan.latest ? plan.latest_until : show_until);
    auto in = [&](const StoredPoint& p, std::int64_t to) {
        return p.folded ? (p.time < to && p.time > since - 86400) : (p.time >= since && p.time < to);
    };
    std::vector<gangway::fleet::TrendPoint> tp;
    std::map<std::uint32_t, StoredPoint> latest;
    auto scanned = store.scan(since, until, [&](const std::string&, std::vector<StoredPoint>& pts) {
        std::erase_if(pts, [&](const StoredPoint& p) { return p.series >= names->size() || group_of[p.series] == UINT32_MAX; });
        // By trend series, then time; at one time the first node's figures
        // first, as compute_trends saw them (figures by node, then time).
        std::stable_sort(pts.begin(), pts.end(), [&](const StoredPoint& x, const StoredPoint& y) {
            return std::make_tuple(group_of[x.series], x.time, !first_end[x.series]) <
                   std::make_tuple(group_of[y.series], y.time, !first_end[y.series]);
        });
        latest.clear();
        for (std::size_t i = 0; i < pts.size();) {
            const std::uint32_t g = group_of[pts[i].series];
            tp.clear();
            std::size_t j = i;
            for (; j < pts.size() && group_of[pts[j].series] == g; ++j) {
                const StoredPoint& p = pts[j];
                tp.push_back({p.time, p.value, p.uid, p.folded ? 0 : std::uint64_t(p.check)});
                if (plan.show && show_row[p.series] && in(p, show_until))
                    show.add(show_row[p.series], p.time, p.value, p.check, p.folded, p.count);
                if (plan.latest && in(p, plan.latest_until)) {
                    auto [it, added] = latest.try_emplace(p.series, p);
                    if (!added && p.time >= it->second.time) it->second = p;
                }
            }
            trends.add(groups[g], std::vector<gangway::fleet::TrendPoint>(tp));
            i = j;
        }
        for (const auto& [id, p] : latest) {
            const SeriesName& n = (*names)[id];
            gangway::fleet::Figure f;
            f.time = p.time, f.source = p.source, f.uid = p.uid, f.node = n.node, f.device = n.device, f.peer = n.peer;
            f.peer_class = n.peer_class, f.metric = n.metric, f.value = p.value, f.daily = p.folded, f.count = p.count;
            out.latest.push_back(std::move(f));
        }
    });
    if (!scanned) return Failure{scanned.error()};
    std::string failed;
    out.trends = trends.finish([&](std::uint64_t row) -> std::string {
        if (row == 0 || row > std::uint64_t(kMaxCheckRow)) return "";
        auto id = store.check_id(std::uint32_t(row));
        if (!id && failed.empty()) failed = id.error();
        return id ? *id : "";
    });
    if (!failed.empty()) return Failure{failed};
    if (plan.show) out.show = show.rows();
    return out;
}

}  // namespace gangway::sys::fleet
