// The trends as text: see trend_text.hpp.
#include "trend_text.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>


namespace gangway::fleet {
namespace {

bool named(const std::vector<std::string>& nodes, const std::string& a, const std::string& b) {
    return std::find(nodes.begin(), nodes.end(), a) != nodes.end() ||
           (!b.empty() && std::find(nodes.begin(), nodes.end(), b) != nodes.end());
}

std::string percent(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%+.1f %%", x * 100);
    return b;
}

}  // namespace

std::string utc_text(std::int64_t unix_seconds) {
    char b[32] = "-";
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (gmtime_r(&t, &tm)) std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

std::string render_trend_table(const std::vector<ShowRow>& rows, const TrendResult& r, bool fleet_footer) {
    // The series of each (node, metric): a link under both its ends.
    std::map<std::pair<std::string, Metric>, std::vector<const SeriesTrend*>> of;
    for (const SeriesTrend& t : r.series) {
        of[{t.node, t.metric}].push_back(&t);
        if (!t.peer.empty()) of[{t.peer, t.metric}].push_back(&t);
    }
    std::string out;
    char b[768];
    std::snprintf(b, sizeof b, "%-20s %-15s %14s %5s %-20s %14s %9s %-26s %7s\n", "NODE", "METRIC", "LAST", "OF", "WHEN (UTC)",
                  "BASELINE", "TREND", "FLAG", "CHECKS");
    out += b;
    for (const ShowRow& row : rows) {
        char when[32] = "-";
        const std::time_t tt = row.last_time;
        std::tm tm{};
        if (gmtime_r(&tt, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        std::vector<double> baselines;
        std::optional<double> worst;
        std::string flag;
        std::size_t more = 0;
        const auto it = of.find({row.node, row.metric});
        if (it != of.end())
            for (const SeriesTrend* t : it->second) {
                if (t->baseline) baselines.push_back(*t->baseline);
                if (const auto c = t->change(); c && (!worst || *c < *worst)) worst = c;
                if (!t->degrading) continue;
                if (!flag.empty()) {
                    ++more;
                    continue;
                }
                const std::string& other = t->node == row.node ? t->peer : t->node;
                flag = "degrading" + (!other.empty() ? " -> " + other : t->device.empty() ? "" : " " + t->device);
            }
        if (more) flag += " +" + std::to_string(more);
        std::string base = "-";
        if (!baselines.empty()) {
            std::sort(baselines.begin(), baselines.end());
            const std::size_t n = baselines.size();
            base = human_rate(row.metric, n % 2 ? baselines[n / 2] : (baselines[n / 2 - 1] + baselines[n / 2]) / 2);
        }
        std::snprintf(b, sizeof b, "%-20s %-15s %14s %5zu %-20s %14s %9s %-26s %7zu\n", row.node.c_str(), to_string(row.metric),
                      human_rate(row.metric, row.last).c_str(), row.last_figures, when, base.c_str(),
                      worst ? percent(*worst).c_str() : "-", flag.empty() ? "-" : flag.c_str(), row.checks);
        out += b;
    }
    if (fleet_footer)
        for (const ClassNoise& c : r.classes) {
            if (!c.series) continue;
            std::snprintf(b, sizeof b, "noise %s%s%s: %zu series, %.1f %% against their own history, %.1f %% against peers\n",
                          to_string(c.metric), c.peer_class.empty() ? "" : " ", c.peer_class.c_str(), c.series,
                          c.noise_own * 100, c.noise_peers * 100);
            out += b;
        }
    return out;
}

std::vector<const Flag*> flags_for(const TrendResult& r, const std::vector<std::string>& nodes) {
    std::vector<const Flag*> out;
    for (const Flag& f : r.flags)
        if (nodes.empty() || named(nodes, f.node, f.peer)) out.push_back(&f);
    return out;
}

std::string render_flagged(const TrendResult& r, const std::vector<std::string>& nodes) {
    std::string out;
    char b[768];
    for (const Flag* f : flags_for(r, nodes)) {
        const std::string who = f->peer.empty() ? f->node : f->node + "->" + f->peer;
        std::snprintf(b, sizeof b, "%s %s %s %.0f %.0f %.0f %s\n", who.c_str(), to_string(f->metric),
                      f->device.empty() ? "-" : f->device.c_str(), f->recent, f->baseline, f->peers, utc_text(f->since).c_str());
        out += b;
    }
    return out;
}

}  // namespace gangway::fleet
