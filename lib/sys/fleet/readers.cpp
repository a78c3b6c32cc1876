#include "readers.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

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
        // Compared name by name, each pair once (a tuple's < compares each
        // field both ways; 65,000 series go through this map).
        using Name = std::tuple<Metric, std::string_view, std::string_view, std::string_view, std::string_view>;
        struct Less {
            bool operator()(const Name& x, const Name& y) const {
                if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) < std::get<0>(y);
                if (const int c = std::get<1>(x).compare(std::get<1>(y))) return c < 0;
                if (const int c = std::get<2>(x).compare(std::get<2>(y))) return c < 0;
                if (const int c = std::get<3>(x).compare(std::get<3>(y))) return c < 0;
                return std::get<4>(x) < std::get<4>(y);
            }
        };
        std::map<Name, std::uint32_t, Less> index;
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
    // Scratch for putting a node's points in order (group_points): per trend
    // series, where its points go (kNone between nodes).
    constexpr std::uint32_t kNone = UINT32_MAX;
    std::vector<std::uint32_t> slot(groups.size(), kNone);
    std::vector<std::uint32_t> here;  // the node's trend series
    std::vector<StoredPoint> sorted;
    // Within a trend series: by time; at one time the first node's figures
    // first, as compute_trends saw them (figures by node, then time).
    const auto by_time = [&](const StoredPoint& x, const StoredPoint& y) {
        return std::make_pair(x.time, !first_end[x.series]) < std::make_pair(y.time, !first_end[y.series]);
    };
    // A stable sort of the node's points by (trend series, time, end), in
    // linear time: a counting sort by trend series (stable), then a sort of
    // each series' run only where it is not in order already (the rows come
    // day by day, each in the order its checks were ingested, so mostly it
    // is). A stable_sort of the whole was a fifth of every reader's time
    // (issue 34).
    const auto group_points = [&](std::vector<StoredPoint>& pts) {
        here.clear();
        for (const StoredPoint& p : pts) {
            std::uint32_t& n = slot[group_of[p.series]];
            if (n == kNone) n = 0, here.push_back(group_of[p.series]);
            ++n;
        }
        std::sort(here.begin(), here.end());
        std::uint32_t at = 0;
        for (const std::uint32_t g : here) {  // counts become each run's start
            const std::uint32_t n = slot[g];
            slot[g] = at;
            at += n;
        }
        sorted.resize(pts.size());
        for (const StoredPoint& p : pts) sorted[slot[group_of[p.series]]++] = p;
        auto b = sorted.begin();
        for (const std::uint32_t g : here) {
            const auto e = sorted.begin() + std::ptrdiff_t(std::exchange(slot[g], kNone));
            if (!std::is_sorted(b, e, by_time)) std::stable_sort(b, e, by_time);
            b = e;
        }
        pts.swap(sorted);
    };
    // The latest point of each series (by id; series 0 is never one: unset),
    // and the node's series that have one.
    std::vector<StoredPoint> last(plan.latest ? names->size() : 0);
    std::vector<std::uint32_t> with_last;
    auto scanned = store.scan(since, until, [&](const std::string&, std::vector<StoredPoint>& pts) {
        std::erase_if(pts, [&](const StoredPoint& p) { return p.series >= names->size() || group_of[p.series] == UINT32_MAX; });
        // The table's rows take the points as stored (ShowBuilder's rows do
        // not depend on the order): a check's points of a node lie together
        // there, so that a row's handles repeat in runs.
        if (plan.show)
            for (const StoredPoint& p : pts)
                if (show_row[p.series] && in(p, show_until))
                    show.add(show_row[p.series], p.time, p.value, p.check, p.folded, p.count);
        group_points(pts);
        with_last.clear();
        for (std::size_t i = 0; i < pts.size();) {
            const std::uint32_t g = group_of[pts[i].series];
            std::size_t j = i;
            while (j < pts.size() && group_of[pts[j].series] == g) ++j;
            // The series' figures, handed over (not copied: a reader's 4.8
            // million), in a vector of their size (the few the trends keep).
            std::vector<gangway::fleet::TrendPoint> tp;
            tp.reserve(j - i);
            for (std::size_t k = i; k < j; ++k) {
                const StoredPoint& p = pts[k];
                tp.push_back({p.time, p.value, p.uid, p.folded ? 0 : std::uint64_t(p.check)});
                if (plan.latest && in(p, plan.latest_until)) {
                    StoredPoint& l = last[p.series];
                    if (l.series == 0) with_last.push_back(p.series), l = p;
                    else if (p.time >= l.time) l = p;
                }
            }
            trends.add(groups[g], std::move(tp));
            i = j;
        }
        std::sort(with_last.begin(), with_last.end());
        for (const std::uint32_t id : with_last) {
            const SeriesName& n = (*names)[id];
            const StoredPoint p = std::exchange(last[id], StoredPoint{});
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
